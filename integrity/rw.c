/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads and writes of blocks (dm_integrity_map_continue, Linux 6.1).
 * A read takes each block the journal holds from the journal, the
 * others from their area with their tags, which the internal hash
 * checks (integrity_metadata; not in mode R).  A write goes through
 * the journal in mode J, in place in modes D and B (B setting its
 * bitmap's bits first). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RUN_BLOCKS 256     /* blocks read or written in place at once */

static int
check_range (const struct integrity_dev *d, uint64_t block, uint32_t nblocks)
{
  uint64_t blocks = d->g.provided_data_sectors >> d->g.log2_sectors_per_block;

  if (block > blocks || nblocks > blocks - block)
    return -ERANGE;
  return d->failed;
}

/* Checks the stored TAGS of N blocks at SECTOR against their data. */
static int
verify_run (struct integrity_dev *d, uint64_t sector, uint64_t n,
            const uint8_t *data, const uint8_t *tags, uint64_t *bad_block)
{
  uint8_t want[INTEGRITY_MAX_TAG_SIZE];

  if (d->hash == NULL || d->mode == 'R')
    return 0;
  for (uint64_t b = 0; b < n; b++) {
    uint64_t s = sector + (b << d->g.log2_sectors_per_block);
    int r;

    if (integrity_bitmap_unchecked (d, s))
      continue;
    r = integrity_hash_tag (d->hash, d->salt, s, data + b * d->block_bytes,
                            d->block_bytes, want, d->g.tag_size);
    if (r < 0)
      return r;
    if (memcmp (want, tags + b * d->g.tag_size, d->g.tag_size)) {
      d->mismatches++;
      if (bad_block)
        *bad_block = s >> d->g.log2_sectors_per_block;
      return -EILSEQ;
    }
  }
  return 0;
}

/* N blocks from their area: data, tags, the check. */
static int
read_run (struct integrity_dev *d, uint64_t sector, uint64_t n,
          uint8_t *data, uint8_t *tags, uint8_t *tag_buf,
          uint64_t *bad_block)
{
  uint8_t *t = tags ? tags : tag_buf;
  int r = integrity_dev_pread (d, data, n * d->block_bytes,
                               integrity_geom_data_byte (&d->g, sector));

  if (r == 0)
    r = integrity_dev_pread (d, t, n * d->g.tag_size,
                             integrity_geom_tag_byte (&d->g, sector));
  return r < 0 ? r : verify_run (d, sector, n, data, t, bad_block);
}

static int
read_blocks (struct integrity_dev *d, uint64_t block, uint32_t nblocks,
             uint8_t *data, uint8_t *tags, uint8_t *tag_buf,
             uint64_t *bad_block)
{
  uint32_t ts = d->g.tag_size, l = d->g.log2_sectors_per_block;
  uint64_t b = 0;

  while (b < nblocks) {
    uint64_t sector = (block + b) << l, run = 0, max;

    if (integrity_journal_lookup (d, sector, data + b * d->block_bytes,
                                  tags ? tags + b * ts : NULL)) {
      b++;
      continue;
    }
    max = integrity_geom_blocks_to_area_end (&d->g, sector);
    max = max < RUN_BLOCKS ? max : RUN_BLOCKS;
    while (b + run < nblocks && run < max
           && (run == 0 || !integrity_journal_lookup
               (d, sector + (run << l), data + (b + run) * d->block_bytes,
                tags ? tags + (b + run) * ts : NULL)))
      run++;
    int r = read_run (d, sector, run, data + b * d->block_bytes,
                      tags ? tags + b * ts : NULL, tag_buf, bad_block);
    if (r < 0)
      return r;
    b += run;
  }
  return 0;
}

int
integrity_read (struct integrity_dev *d, uint64_t block, uint32_t nblocks,
                void *data, uint8_t *tags, uint64_t *bad_block)
{
  uint8_t *tag_buf = malloc ((size_t) RUN_BLOCKS * d->g.tag_size);
  int r;

  if (tag_buf == NULL)
    return -ENOMEM;
  pthread_mutex_lock (&d->lock);
  r = check_range (d, block, nblocks);
  if (r == 0)
    r = read_blocks (d, block, nblocks, data, tags, tag_buf, bad_block);
  pthread_mutex_unlock (&d->lock);
  free (tag_buf);
  return r;
}

/* The tags of N blocks at SECTOR: the internal hash's, or those given
 * (zeros when none are, as the kernel's journal stores them). */
static int
make_tags (struct integrity_dev *d, uint64_t sector, uint64_t n,
           const uint8_t *data, const uint8_t *given, uint8_t *tags)
{
  for (uint64_t b = 0; b < n; b++) {
    uint8_t *t = tags + b * d->g.tag_size;
    int r;

    if (d->hash) {
      r = integrity_hash_tag (d->hash, d->salt,
                              sector + (b << d->g.log2_sectors_per_block),
                              data + b * d->block_bytes, d->block_bytes, t,
                              d->g.tag_size);
      if (r < 0)
        return r;
    }
    else if (given)
      memcpy (t, given + b * d->g.tag_size, d->g.tag_size);
    else
      memset (t, 0, d->g.tag_size);
  }
  return 0;
}

static int
write_journal (struct integrity_dev *d, uint64_t sector, uint64_t n,
               const uint8_t *data, const uint8_t *tags)
{
  for (uint64_t b = 0; b < n; b++) {
    int r = integrity_journal_add (d, sector
                                   + (b << d->g.log2_sectors_per_block),
                                   data + b * d->block_bytes,
                                   tags + b * d->g.tag_size);
    if (r < 0)
      return r;
  }
  return 0;
}

/* Modes D and B: data and tags in place, one run within an area. */
static int
write_in_place (struct integrity_dev *d, uint64_t sector, uint64_t n,
                const uint8_t *data, const uint8_t *tags)
{
  int r = 0;

  if (d->mode == 'B')
    r = integrity_bitmap_mark (d, sector, n << d->g.log2_sectors_per_block);
  if (r == 0)
    r = integrity_dev_pwrite (d, data, n * d->block_bytes,
                              integrity_geom_data_byte (&d->g, sector));
  if (r == 0)
    r = integrity_dev_pwrite (d, tags, n * d->g.tag_size,
                              integrity_geom_tag_byte (&d->g, sector));
  return r;
}

static int
write_blocks (struct integrity_dev *d, uint64_t block, uint32_t nblocks,
              const uint8_t *data, const uint8_t *given, uint8_t *tag_buf)
{
  uint32_t l = d->g.log2_sectors_per_block, ts = d->g.tag_size;
  uint64_t b = 0;

  while (b < nblocks) {
    uint64_t sector = (block + b) << l;
    uint64_t run = integrity_geom_blocks_to_area_end (&d->g, sector);
    const uint8_t *p = data + b * d->block_bytes;
    int r;

    run = run < RUN_BLOCKS ? run : RUN_BLOCKS;
    run = run < nblocks - b ? run : nblocks - b;
    r = make_tags (d, sector, run, p, given ? given + b * ts : NULL,
                   tag_buf);
    if (r == 0)
      r = d->mode == 'J' ? write_journal (d, sector, run, p, tag_buf)
        : write_in_place (d, sector, run, p, tag_buf);
    if (r < 0)
      return r;
    b += run;
  }
  return 0;
}

/* After a write: in mode J a FUA write, or a journal filled past its
 * watermark, commits; in D and B a FUA write flushes. */
static int
after_write (struct integrity_dev *d, bool fua)
{
  if (d->mode == 'J'
      && (fua || d->j.free_entries <= d->free_entries_threshold))
    return integrity_journal_commit (d);
  return fua ? integrity_dev_flush (d) : 0;
}

int
integrity_write (struct integrity_dev *d, uint64_t block, uint32_t nblocks,
                 const void *data, const uint8_t *tags, bool fua)
{
  uint8_t *tag_buf;
  int r;

  if (d->readonly)
    return -EROFS;
  tag_buf = malloc ((size_t) RUN_BLOCKS * d->g.tag_size);
  if (tag_buf == NULL)
    return -ENOMEM;
  pthread_mutex_lock (&d->lock);
  r = check_range (d, block, nblocks);
  if (r == 0)
    r = write_blocks (d, block, nblocks, data, tags, tag_buf);
  if (r == 0)
    r = after_write (d, fua);
  pthread_mutex_unlock (&d->lock);
  free (tag_buf);
  return r;
}

int
integrity_flush (struct integrity_dev *d)
{
  int r;

  pthread_mutex_lock (&d->lock);
  if (d->failed)
    r = d->failed;
  else if (d->readonly)
    r = 0;
  else if (d->mode == 'J')
    r = integrity_journal_commit (d);
  else if (d->mode == 'B')
    r = integrity_bitmap_flush (d);
  else
    r = integrity_dev_flush (d);
  pthread_mutex_unlock (&d->lock);
  return r;
}
