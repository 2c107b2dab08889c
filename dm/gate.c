/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The suspend gate that every request passes (dmint.h), suspend
 * itself, and the live table's geometry as connection-time callbacks
 * read it.  An open gate costs a request two atomic operations. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dmint.h"

#define DRAIN_POLL_US  200
#define DRAIN_LIMIT_S  60            /* suspend gives up after a minute */
#define HOLD_POLL_US   5000          /* without a host hold: 5 ms naps */

/* Waits for the gate to open.  The host's hold notices a server going
 * away, so a suspended mapping never blocks its exit. */
static int
hold (struct dm_mapping *m)
{
  while (atomic_load (&m->gate.closed)) {
    if (m->host.hold == NULL)
      usleep (HOLD_POLL_US);
    else if (m->host.hold (m->host.arg) == -1)
      return -1;
  }
  return 0;
}

int
dm_enter (struct dm_mapping *m, uint64_t offset, uint64_t count, bool write)
{
  int err = 0;

  for (;;) {
    atomic_fetch_add (&m->gate.inflight, 1);
    if (!atomic_load (&m->gate.closed))
      break;
    atomic_fetch_sub (&m->gate.inflight, 1);
    if (hold (m) == -1)
      return ESHUTDOWN;
  }
  if (write && atomic_load (&m->readonly))
    err = EROFS;
  /* A connection opened before a --force reload that shrank the
   * volume still believes in the old size. */
  else if (offset + count > atomic_load (&m->gate.size))
    err = write ? ENOSPC : EIO;
  if (err)
    atomic_fetch_sub (&m->gate.inflight, 1);
  return err;
}

void
dm_leave (struct dm_mapping *m)
{
  atomic_fetch_sub (&m->gate.inflight, 1);
}

struct engine *
dm_engine (struct dm_mapping *m)
{
  return m->live.engine;
}

uint64_t
dm_size (const struct dm_mapping *m)
{
  return atomic_load (&m->gate.size);
}

unsigned
dm_flags (const struct dm_mapping *m)
{
  return atomic_load (&m->gate.flags);
}

unsigned
dm_sector_size (const struct dm_mapping *m)
{
  return atomic_load (&m->gate.sector_size);
}

bool
dm_readonly (const struct dm_mapping *m)
{
  return atomic_load (&m->readonly);
}

void
dm_opened (struct dm_mapping *m)
{
  atomic_fetch_add (&m->open, 1);
}

void
dm_closed (struct dm_mapping *m)
{
  atomic_fetch_sub (&m->open, 1);
}

/* The live table's geometry for new connections; the backend's discard
 * switch follows allow_discards (the backend is opened before any
 * table exists). */
void
gate_publish (struct dm_mapping *m)
{
  const struct crypt_table *t = &m->live.table;
  struct backend *b = m->host.backend;

  atomic_store (&m->gate.size, t->length * 512);
  atomic_store (&m->gate.flags, t->flags);
  atomic_store (&m->gate.sector_size, t->sector_size);
  b->can_discard = !b->readonly && (t->flags & CT_ALLOW_DISCARDS);
}

int
gate_close (struct dm_mapping *m)
{
  time_t deadline = time (NULL) + DRAIN_LIMIT_S;

  atomic_store (&m->gate.closed, true);
  while (atomic_load (&m->gate.inflight) > 0) {
    if (time (NULL) > deadline) {
      atomic_store (&m->gate.closed, false);
      errno = ETIMEDOUT;
      return -1;
    }
    usleep (DRAIN_POLL_US);
  }
  return 0;
}

void
gate_open (struct dm_mapping *m)
{
  atomic_store (&m->gate.closed, false);
}

bool
gate_is_closed (const struct dm_mapping *m)
{
  return atomic_load (&m->gate.closed);
}

int
dm_suspend (struct dm_mapping *m, bool noflush, struct dm_err *err)
{
  if (gate_is_closed (m))
    return 0;
  if (gate_close (m) == -1) {
    dm_fail (err, ETIMEDOUT, "requests still in flight after a minute");
    return -1;
  }
  /* --noflush: once drained nothing is queued inside dmcrypt (every
   * write returned after reaching the backend), so it only skips the
   * backend's sync. */
  if (!noflush && m->live.engine && engine_flush (m->live.engine) == -1) {
    int e = errno;
    gate_open (m);
    dm_fail (err, e, "flush before suspend failed: %s", strerror (e));
    return -1;
  }
  return 0;
}
