/* The request path between the plugin and the backend.  Reads are
 * decrypted in place after the backend returns them; writes are encrypted
 * into a fresh buffer (never the caller's), as dm-crypt does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "engine.h"
#include "rangelock.h"

struct engine
{
  struct engine_config cfg;
  struct sector_cipher *cipher;
  struct backend *backend;
  struct rangelock writes;       /* sector-aligned ranges being written */
};

struct engine *
engine_new (const struct engine_config *cfg, struct sector_cipher *cipher,
            struct backend *backend)
{
  struct engine *e = calloc (1, sizeof *e);

  if (e == NULL) {
    nbdkit_error ("calloc: %m");
    return NULL;
  }
  e->cfg = *cfg;
  e->cipher = cipher;
  e->backend = backend;
  rangelock_init (&e->writes);
  return e;
}

int
engine_start (struct engine *e)
{
  (void) e;
  return 0;
}

void
engine_free (struct engine *e)
{
  if (e == NULL)
    return;
  rangelock_destroy (&e->writes);
  free (e);
}

/* OFFSET and COUNT are multiples of the encryption sector size. */
static int
read_sectors (struct engine *e, uint8_t *buf, uint64_t count,
              uint64_t offset)
{
  if (backend_pread (e->backend, buf, count,
                     e->cfg.data_offset + offset) == -1)
    return -1;
  return sector_cipher_decrypt (e->cipher, buf, buf, count, offset / 512);
}

int
engine_read (struct engine *e, void *buf, uint32_t count, uint64_t offset)
{
  const uint64_t ss = e->cfg.sector_size;
  uint64_t start = offset & ~(ss - 1);
  uint64_t end = (offset + count + ss - 1) & ~(ss - 1);
  uint8_t *bounce;
  int r;

  if (start == offset && end == offset + count)
    return read_sectors (e, buf, count, offset);

  bounce = malloc (end - start);
  if (bounce == NULL)
    return -1;
  r = read_sectors (e, bounce, end - start, start);
  if (r == 0)
    memcpy (buf, bounce + (offset - start), count);
  free (bounce);
  return r;
}

/* Fills the partial head and tail sectors of [START, END) in BOUNCE with
 * their current plaintext, so the write can replace only its own bytes. */
static int
read_partial_edges (struct engine *e, uint8_t *bounce, uint64_t start,
                    uint64_t end, uint64_t offset, uint64_t count)
{
  const uint64_t ss = e->cfg.sector_size;

  if (offset != start && read_sectors (e, bounce, ss, start) == -1)
    return -1;
  if (offset + count != end && (end - ss > start || offset == start)
      && read_sectors (e, bounce + (end - ss - start), ss, end - ss) == -1)
    return -1;
  return 0;
}

/* Writes BUF (or zeros when BUF is NULL) over [OFFSET, OFFSET+COUNT). */
static int
write_common (struct engine *e, const void *buf, uint64_t count,
              uint64_t offset, bool fua)
{
  const uint64_t ss = e->cfg.sector_size;
  uint64_t start = offset & ~(ss - 1);
  uint64_t end = (offset + count + ss - 1) & ~(ss - 1);
  struct range_held held;
  uint8_t *bounce;
  int r = -1;

  bounce = malloc (end - start);
  if (bounce == NULL)
    return -1;
  rangelock_lock (&e->writes, &held, start, end);
  if (read_partial_edges (e, bounce, start, end, offset, count) == -1)
    goto out;
  if (buf)
    memcpy (bounce + (offset - start), buf, count);
  else
    memset (bounce + (offset - start), 0, count);
  if (sector_cipher_encrypt (e->cipher, bounce, bounce, end - start,
                             start / 512) == -1)
    goto out;
  r = backend_pwrite (e->backend, bounce, end - start,
                      e->cfg.data_offset + start);
 out:
  rangelock_unlock (&e->writes, &held);
  free (bounce);
  if (r == 0 && fua)
    r = backend_sync (e->backend);
  return r;
}

int
engine_write (struct engine *e, const void *buf, uint32_t count,
              uint64_t offset, bool fua)
{
  return write_common (e, buf, count, offset, fua);
}

int
engine_zero (struct engine *e, uint32_t count, uint64_t offset, bool fua)
{
  return write_common (e, NULL, count, offset, fua);
}

int
engine_trim (struct engine *e, uint32_t count, uint64_t offset, bool fua)
{
  const uint64_t ss = e->cfg.sector_size;
  uint64_t start = (offset + ss - 1) & ~(ss - 1);
  uint64_t end = (offset + count) & ~(ss - 1);
  struct range_held held;
  int r = 0;

  /* Only whole encryption sectors can be discarded; a trim is advisory,
   * so the partial edges are simply left alone. */
  if (end <= start)
    return 0;
  rangelock_lock (&e->writes, &held, start, end);
  r = backend_discard (e->backend, end - start, e->cfg.data_offset + start);
  rangelock_unlock (&e->writes, &held);
  if (r == 0 && fua)
    r = backend_sync (e->backend);
  return r;
}

int
engine_flush (struct engine *e)
{
  return backend_sync (e->backend);
}
