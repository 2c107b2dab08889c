/* The suspend gate that every request passes (see live.h), and the
 * live table's geometry as connection-time callbacks read it.
 *
 * The gate is a count of requests inside and a "closed" flag, both
 * sequentially consistent: a request raises the count before it reads
 * the flag, suspend raises the flag before it reads the count, so one of
 * the two always sees the other and no request slips past a suspend.
 * An open gate costs a request two atomic operations. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "live.h"

#define HOLD_POLL_NS   5000000       /* a held request looks every 5 ms */
#define DRAIN_POLL_US  200
#define DRAIN_LIMIT_S  60            /* suspend gives up after a minute */

static atomic_uint inflight;
static atomic_bool closed;
static _Atomic uint64_t size;        /* bytes */
static atomic_uint flags;            /* enum crypt_table_flag */
static atomic_uint sector_size;      /* bytes */

/* Waits for the gate to open; fails the request if the server shuts
 * down or the client goes away meanwhile (nbdkit_nanosleep notices
 * both), so a suspended volume never blocks nbdkit's exit. */
static int
hold (void)
{
  while (atomic_load (&closed))
    if (nbdkit_nanosleep (0, HOLD_POLL_NS) == -1) {
      nbdkit_set_error (ESHUTDOWN);
      return -1;
    }
  return 0;
}

int
live_enter (uint64_t offset, uint64_t count, bool write)
{
  int err = 0;

  for (;;) {
    atomic_fetch_add (&inflight, 1);
    if (!atomic_load (&closed))
      break;
    atomic_fetch_sub (&inflight, 1);
    if (hold () == -1)
      return -1;
  }
  if (write && atomic_load (&live_readonly))
    err = EROFS;
  /* A connection opened before a --force reload that shrank the
   * volume still believes in the old size. */
  else if (offset + count > atomic_load (&size))
    err = write ? ENOSPC : EIO;
  if (err) {
    atomic_fetch_sub (&inflight, 1);
    nbdkit_set_error (err);
    return -1;
  }
  return 0;
}

void
live_leave (void)
{
  atomic_fetch_sub (&inflight, 1);
}

uint64_t
live_size (void)
{
  return atomic_load (&size);
}

unsigned
live_flags (void)
{
  return atomic_load (&flags);
}

unsigned
live_sector_size (void)
{
  return atomic_load (&sector_size);
}

void
gate_publish (const struct crypt_table *t)
{
  atomic_store (&size, t->length * 512);
  atomic_store (&flags, t->flags);
  atomic_store (&sector_size, t->sector_size);
}

int
gate_close (void)
{
  time_t deadline = time (NULL) + DRAIN_LIMIT_S;

  atomic_store (&closed, true);
  while (atomic_load (&inflight) > 0) {
    if (time (NULL) > deadline) {
      atomic_store (&closed, false);
      errno = ETIMEDOUT;
      return -1;
    }
    usleep (DRAIN_POLL_US);
  }
  return 0;
}

void
gate_open (void)
{
  atomic_store (&closed, false);
}

bool
gate_is_closed (void)
{
  return atomic_load (&closed);
}

unsigned
gate_inflight (void)
{
  return atomic_load (&inflight);
}
