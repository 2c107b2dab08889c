/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sealing and opening sectors below the engine (integrity.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../crypto/secmem.h"
#include "integrity.h"

/* The sectors already named in the log, so that each is named once, as
 * the kernel's rate limit keeps a bad region from flooding it. */
#define LOGGED_MAX 1024

struct sealed
{
  struct backend *lower;
  struct integrity_dev *dev;
  struct aead_sector *aead;      /* NULL: the device's own tags */
  uint32_t sector_bytes;
  uint32_t tag_bytes;
  atomic_uint_fast64_t failures;
  pthread_mutex_t log_lock;
  uint64_t logged[LOGGED_MAX];
  unsigned nlogged;
};

static int
io_pread (void *opaque, void *buf, uint32_t count, uint64_t offset)
{
  return backend_pread (opaque, buf, count, offset) == -1 ? -errno : 0;
}

static int
io_pwrite (void *opaque, const void *buf, uint32_t count, uint64_t offset)
{
  return backend_pwrite (opaque, buf, count, offset) == -1 ? -errno : 0;
}

static int
io_flush (void *opaque)
{
  return backend_sync (opaque) == -1 ? -errno : 0;
}

struct integrity_io
backend_integrity_io (struct backend *lower)
{
  struct integrity_io io = {
    .opaque = lower, .pread = io_pread, .pwrite = io_pwrite,
    .flush = io_flush,
  };
  return io;
}

/* SECTOR (512-byte units) failed its check: counted, and named once. */
static void
note_failure (struct sealed *s, uint64_t sector)
{
  bool first = true;
  unsigned i;

  atomic_fetch_add (&s->failures, 1);
  pthread_mutex_lock (&s->log_lock);
  for (i = 0; i < s->nlogged; i++)
    if (s->logged[i] == sector)
      first = false;
  if (first && s->nlogged < LOGGED_MAX)
    s->logged[s->nlogged++] = sector;
  else if (first && s->nlogged == LOGGED_MAX)
    first = false;
  pthread_mutex_unlock (&s->log_lock);
  /* The kernel's words: dm-crypt's "INTEGRITY AEAD ERROR, sector N"
   * (kcryptd_async_done, 6.1), dm-integrity's "Checksum failed at
   * sector 0x..." (integrity_metadata). */
  if (first && s->aead)
    nbdkit_error ("INTEGRITY AEAD ERROR, sector %" PRIu64, sector);
  else if (first)
    nbdkit_error ("Checksum failed at sector 0x%" PRIx64, sector);
}

static int
check_range (const struct sealed *s, size_t count, uint64_t offset)
{
  if (count % s->sector_bytes || offset % s->sector_bytes) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

/* Opens each sealed sector of DATA in place, all of them checked
 * even after a failure so that each bad sector is counted. */
static int
open_sectors (struct sealed *s, uint8_t *data, const uint8_t *tags,
              size_t nsectors, uint64_t first)
{
  uint64_t sector;
  size_t i;
  int r = 0;

  for (i = 0; i < nsectors; i++) {
    uint8_t *p = data + i * s->sector_bytes;

    sector = (first + i) * (s->sector_bytes / 512);
    if (aead_sector_decrypt (s->aead, sector, p, p,
                             tags + i * s->tag_bytes) == 0)
      continue;
    note_failure (s, sector);
    r = -1;
  }
  return r;
}

/* The ciphertext is read into BUF and opened there, in place. */
static int
sealed_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  struct sealed *s = b->priv;
  size_t n = count / s->sector_bytes;
  uint64_t first = offset / s->sector_bytes, bad = 0;
  uint8_t *tags = NULL;
  int r;

  if (check_range (s, count, offset) == -1)
    return -1;
  if (s->aead && (tags = malloc (n * s->tag_bytes)) == NULL)
    return -1;
  r = integrity_read (s->dev, first, n, buf, tags, &bad);
  if (r == -EILSEQ && s->aead == NULL)
    note_failure (s, bad * (s->sector_bytes / 512));
  else if (r == 0 && s->aead && open_sectors (s, buf, tags, n, first) == -1)
    r = -EILSEQ;
  free (tags);
  if (r == -EILSEQ)
    memset (buf, 0, count);
  if (r != 0)
    errno = -r;
  return r == 0 ? 0 : -1;
}

static int
sealed_pwrite (struct backend *b, const void *buf, size_t count,
               uint64_t offset)
{
  struct sealed *s = b->priv;
  size_t n = count / s->sector_bytes, i;
  uint64_t first = offset / s->sector_bytes;
  uint8_t *tags = NULL, *cipher = NULL;
  const uint8_t *plain = buf;
  int r = 0;

  if (check_range (s, count, offset) == -1)
    return -1;
  if (s->aead == NULL)
    r = integrity_write (s->dev, first, n, buf, NULL, false);
  else if ((tags = malloc (n * s->tag_bytes)) == NULL
           || (cipher = malloc (count)) == NULL)
    r = -ENOMEM;
  for (i = 0; s->aead && r == 0 && i < n; i++)
    r = aead_sector_encrypt (s->aead, (first + i) * (s->sector_bytes / 512),
                             plain + i * s->sector_bytes,
                             cipher + i * s->sector_bytes,
                             tags + i * s->tag_bytes);
  if (s->aead && r == 0)
    r = integrity_write (s->dev, first, n, cipher, tags, false);
  free (cipher);
  free (tags);
  if (r != 0)
    errno = r < 0 ? -r : EIO;
  return r == 0 ? 0 : -1;
}

static int
sealed_sync (struct backend *b)
{
  struct sealed *s = b->priv;
  int r = integrity_flush (s->dev);

  if (r != 0)
    errno = -r;
  return r == 0 ? 0 : -1;
}

/* dm-crypt refuses discards on an authenticated mapping (the tags would
 * no longer match): the engine never sends one (can_discard false). */
static int
sealed_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  (void) b; (void) count; (void) offset;
  errno = EOPNOTSUPP;
  return -1;
}

int
backend_integrity_finish (struct backend *b)
{
  struct sealed *s = b->priv;
  int r = 0;

  if (s->dev != NULL && integrity_close (s->dev) != 0) {
    nbdkit_error ("integrity: the journal could not be written back");
    r = -1;
  }
  s->dev = NULL;
  return r;
}

static void
sealed_close (struct backend *b)
{
  struct sealed *s = b->priv;

  backend_integrity_finish (b);
  if (s->aead)
    aead_sector_free (s->aead);
  backend_close (s->lower);
  pthread_mutex_destroy (&s->log_lock);
  free (s);
  free (b);
}

static const struct backend_ops sealed_ops = {
  .name = "integrity",
  .pread = sealed_pread,
  .pwrite = sealed_pwrite,
  .sync = sealed_sync,
  .discard = sealed_discard,
  .close = sealed_close,
};

struct backend *
backend_integrity_wrap (struct backend *lower, struct integrity_dev *dev,
                        struct aead_sector *aead)
{
  struct backend *b = calloc (1, sizeof *b);
  struct sealed *s = calloc (1, sizeof *s);

  if (b == NULL || s == NULL) {
    nbdkit_error ("calloc: %m");
    free (b);
    free (s);
    return NULL;
  }
  s->lower = lower;
  s->dev = dev;
  s->aead = aead;
  s->sector_bytes = integrity_block_bytes (dev);
  s->tag_bytes = aead ? aead_tag_size (aead) : integrity_tag_size (dev);
  pthread_mutex_init (&s->log_lock, NULL);
  b->ops = &sealed_ops;
  b->priv = s;
  b->size = integrity_data_sectors (dev) * 512;
  b->readonly = lower->readonly;
  b->can_discard = false;
  b->is_blockdev = lower->is_blockdev;
  b->dev_major = lower->dev_major;
  b->dev_minor = lower->dev_minor;
  /* The trace shows what reaches the image: the journal's and the tag
   * areas' writes through LOWER, not this layer's calls as well. */
  b->trace = NULL;
  return b;
}

const struct integrity_dev *
backend_integrity_dev (const struct backend *b)
{
  return ((const struct sealed *) b->priv)->dev;
}

uint64_t
backend_integrity_failures (const struct backend *b)
{
  const struct sealed *s = b->priv;

  return s->aead ? atomic_load (&s->failures)
    : integrity_mismatches (s->dev);
}
