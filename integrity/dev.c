/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opening and closing a dm-integrity device: dm_integrity_ctr's
 * checks and defaults, then dm_integrity_resume's journal replay or
 * bitmap recovery (Linux 6.1); at close dm_integrity_postsuspend's
 * commit and clean journal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_BUFFER_SECTORS    128
#define DEFAULT_JOURNAL_WATERMARK 50
#define DEFAULT_SYNC_MSEC         10000

static int
check_options (const struct integrity_options *opt, char *err,
               size_t errlen)
{
  char mode = opt->mode ? opt->mode : 'J';

  if (mode != 'J' && mode != 'B' && mode != 'D' && mode != 'R') {
    snprintf (err, errlen, "dm-integrity: invalid mode '%c' (expecting J, "
              "B, D, R)", mode);
    return -1;
  }
  if (opt->offset_bytes % 512 || opt->device_bytes % 512) {
    snprintf (err, errlen, "dm-integrity: offset and length must be "
              "multiples of 512 bytes");
    return -1;
  }
  if (opt->offset_bytes > (UINT64_MAX >> 10)
      || opt->device_bytes > (UINT64_MAX >> 10) - opt->offset_bytes) {
    snprintf (err, errlen, "dm-integrity: offset and length overflow");
    return -1;
  }
  if (opt->journal_watermark > 100) {
    snprintf (err, errlen, "dm-integrity: journal_watermark %u is over 100",
              opt->journal_watermark);
    return -1;
  }
  return 0;
}

static int
read_superblock (struct integrity_dev *d, const struct integrity_options *opt,
                 char *err, size_t errlen)
{
  int r = d->io.pread (d->io.opaque, d->sb_raw, sizeof d->sb_raw,
                       opt->offset_bytes);

  if (r < 0) {
    snprintf (err, errlen, "dm-integrity: cannot read the superblock: %s",
              strerror (-r));
    return -1;
  }
  if (integrity_sb_parse (d->sb_raw, sizeof d->sb_raw, &d->sb, err,
                          errlen) == -1)
    return -1;
  if (opt->tag_size && opt->tag_size != d->sb.tag_size) {
    snprintf (err, errlen, "dm-integrity: tag size %u doesn't match the "
              "superblock's %u", opt->tag_size, d->sb.tag_size);
    return -1;
  }
  return 0;
}

static int
setup_hash (struct integrity_dev *d, const struct integrity_options *opt,
            char *err, size_t errlen)
{
  if (opt->internal_hash) {
    d->hash = integrity_hash_new (opt->internal_hash, opt->internal_hash_key,
                                  opt->internal_hash_key_bytes, err, errlen);
    if (d->hash == NULL)
      return -1;
  }
  if (d->mode == 'B' && d->hash == NULL) {
    snprintf (err, errlen, "dm-integrity: bitmap mode can be only used "
              "with internal hash");
    return -1;
  }
  if (d->sb.flags & INTEGRITY_SB_FIXED_HMAC)
    d->salt = d->sb.salt;
  return 0;
}

/* dm_integrity_ctr's defaults and derived values. */
static void
setup_tunables (struct integrity_dev *d, const struct integrity_options *opt)
{
  uint32_t buffer = opt->buffer_sectors ? opt->buffer_sectors
    : DEFAULT_BUFFER_SECTORS;
  uint32_t log2_buffer = 31 - __builtin_clz (buffer);
  uint32_t log2_run = __builtin_ctzll (d->g.metadata_run);
  uint64_t threshold;

  d->journal_watermark = opt->journal_watermark ? opt->journal_watermark
    : DEFAULT_JOURNAL_WATERMARK;
  d->commit_time_ms = opt->commit_time_ms ? opt->commit_time_ms
    : DEFAULT_SYNC_MSEC;
  log2_buffer = log2_buffer < 31 - 9 ? log2_buffer : 31 - 9;
  d->log2_buffer_sectors = log2_buffer < log2_run ? log2_buffer : log2_run;
  threshold = (uint64_t) d->g.journal_entries * (100 - d->journal_watermark)
    + 50;
  d->free_entries_threshold = threshold / 100;
}

/* dm_integrity_resume: the superblock's size brought up to date, then
 * the bitmap left dirty recovered, or the journal replayed. */
static int
resume (struct integrity_dev *d, char *err, size_t errlen)
{
  bool dirty = d->sb.flags & INTEGRITY_SB_DIRTY_BITMAP;

  if (!d->readonly
      && d->sb.provided_data_sectors != d->g.provided_data_sectors) {
    d->sb.provided_data_sectors = d->g.provided_data_sectors;
    if (integrity_dev_write_sb (d) < 0) {
      snprintf (err, errlen, "dm-integrity: cannot write the superblock");
      return -1;
    }
  }
  if (d->mode == 'R')
    return 0;
  if (integrity_journal_alloc (d, err, errlen) == -1)
    return -1;
  if (!dirty && integrity_journal_replay (d, err, errlen) == -1)
    return -1;
  if (dirty || d->mode == 'B')
    return integrity_bitmap_open (d, err, errlen);
  return 0;
}

static void
dev_free (struct integrity_dev *d)
{
  integrity_journal_free (&d->j);
  integrity_bitmap_free (&d->bm);
  integrity_hash_free (d->hash);
  pthread_mutex_destroy (&d->lock);
  explicit_bzero (d, sizeof *d);
  free (d);
}

static int
open_steps (struct integrity_dev *d, const struct integrity_options *opt,
            char *err, size_t errlen)
{
  uint64_t start = opt->offset_bytes / 512;
  uint64_t end = opt->device_bytes ? start + opt->device_bytes / 512 : 0;

  if (read_superblock (d, opt, err, errlen) == -1
      || setup_hash (d, opt, err, errlen) == -1
      || integrity_geom_init (&d->g, &d->sb, start, end, err, errlen) == -1)
    return -1;
  d->block_bytes = 512u << d->g.log2_sectors_per_block;
  setup_tunables (d, opt);
  return resume (d, err, errlen);
}

struct integrity_dev *
integrity_open (const struct integrity_io *io,
                const struct integrity_options *opt, char *err,
                size_t errlen)
{
  struct integrity_dev *d;

  if (io == NULL || io->pread == NULL || opt == NULL) {
    snprintf (err, errlen, "dm-integrity: no device");
    return NULL;
  }
  if (check_options (opt, err, errlen) == -1)
    return NULL;
  d = calloc (1, sizeof *d);
  if (d == NULL) {
    snprintf (err, errlen, "dm-integrity: out of memory");
    return NULL;
  }
  pthread_mutex_init (&d->lock, NULL);
  d->io = *io;
  d->mode = opt->mode ? opt->mode : 'J';
  d->readonly = opt->readonly || d->mode == 'R' || io->pwrite == NULL;
  if (open_steps (d, opt, err, errlen) == -1) {
    dev_free (d);
    return NULL;
  }
  return d;
}

int
integrity_close (struct integrity_dev *d)
{
  int r = 0;

  if (d == NULL)
    return 0;
  pthread_mutex_lock (&d->lock);
  if (!d->readonly && !d->failed) {
    if (d->mode == 'J')
      r = integrity_journal_close (d);
    else if (d->mode == 'B')
      r = integrity_bitmap_close (d);
    else
      r = integrity_dev_flush (d);
  }
  if (d->failed && r == 0)
    r = d->failed;
  pthread_mutex_unlock (&d->lock);
  dev_free (d);
  return r;
}

uint64_t
integrity_data_sectors (const struct integrity_dev *d)
{
  return d->g.provided_data_sectors;
}

uint32_t
integrity_block_bytes (const struct integrity_dev *d)
{
  return d->block_bytes;
}

uint32_t
integrity_tag_size (const struct integrity_dev *d)
{
  return d->g.tag_size;
}

uint64_t
integrity_mismatches (const struct integrity_dev *d)
{
  struct integrity_dev *m = (struct integrity_dev *) d;
  uint64_t n;

  pthread_mutex_lock (&m->lock);
  n = d->mismatches;
  pthread_mutex_unlock (&m->lock);
  return n;
}
