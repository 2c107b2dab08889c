/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mode B (Linux 6.1's dm-integrity.c, bitmap mode): blocks and tags
 * are written in place, and before a write reaches a region its bit is
 * set on disk, in a bitmap kept where the journal is; the superblock
 * says SB_FLAG_DIRTY_BITMAP while the device is open.  After a crash
 * the regions whose bits are set have their tags recalculated from
 * their data (dm_integrity_resume, integrity_recalc).  A bit covers
 * 2^log2_sectors_per_bit sectors, as dm_integrity_ctr sizes it: 32768
 * sectors, or more until the bitmap fits the journal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RECALC_BLOCKS 256   /* blocks read at once when recalculating */

uint32_t
integrity_bitmap_log2_sectors_per_bit (const struct integrity_geom *g)
{
  uint32_t l = 15;   /* __fls (DEFAULT_SECTORS_PER_BITMAP_BIT) */
  uint64_t bits_in_journal = integrity_geom_journal_sectors (g) << 12;
  uint64_t provided = g->provided_data_sectors;

  if (l < g->log2_sectors_per_block)
    l = g->log2_sectors_per_block;
  if (bits_in_journal > UINT32_MAX)
    bits_in_journal = UINT32_MAX;
  while (bits_in_journal < (provided + (1ull << l) - 1) >> l)
    l++;
  return l;
}

static void
bitmap_geometry (struct integrity_dev *d)
{
  uint32_t l = integrity_bitmap_log2_sectors_per_bit (&d->g);
  uint64_t provided = d->g.provided_data_sectors, n_bits;

  d->bm.log2_sectors_per_bit = l;
  n_bits = (provided + (1ull << l) - 1) >> l;
  d->bm.bytes = (n_bits + INTEGRITY_BITMAP_BLOCK_BYTES * 8 - 1)
    / (INTEGRITY_BITMAP_BLOCK_BYTES * 8) * INTEGRITY_BITMAP_BLOCK_BYTES;
}

static uint32_t
blocks_per_bit_log2 (const struct integrity_dev *d)
{
  return d->bm.log2_sectors_per_bit - d->g.log2_sectors_per_block;
}

static bool
bit_set (const struct integrity_bitmap *bm, uint64_t bit)
{
  return bm->bits[bit / 8] >> (bit % 8) & 1;
}

static uint64_t
n_bits (const struct integrity_dev *d)
{
  uint32_t l = d->bm.log2_sectors_per_bit;

  return (d->g.provided_data_sectors + (1ull << l) - 1) >> l;
}

/* integrity_recalc for [SECTOR, SECTOR + N_SECTORS): the tags made
 * again from the data. */
static int
recalc (struct integrity_dev *d, uint64_t sector, uint64_t n_sectors)
{
  uint8_t *data = malloc ((size_t) RECALC_BLOCKS * d->block_bytes);
  uint8_t tag[INTEGRITY_MAX_TAG_SIZE];
  int r = data ? 0 : -ENOMEM;

  while (r == 0 && n_sectors) {
    uint64_t blocks = n_sectors >> d->g.log2_sectors_per_block;
    uint64_t to_end = integrity_geom_blocks_to_area_end (&d->g, sector);

    blocks = blocks < to_end ? blocks : to_end;
    blocks = blocks < RECALC_BLOCKS ? blocks : RECALC_BLOCKS;
    r = integrity_dev_pread (d, data, blocks * d->block_bytes,
                             integrity_geom_data_byte (&d->g, sector));
    for (uint64_t b = 0; r == 0 && b < blocks; b++) {
      uint64_t s = sector + (b << d->g.log2_sectors_per_block);

      r = integrity_hash_tag (d->hash, d->salt, s, data + b * d->block_bytes,
                              d->block_bytes, tag, d->g.tag_size);
      if (r == 0)
        r = integrity_dev_pwrite (d, tag, d->g.tag_size,
                                  integrity_geom_tag_byte (&d->g, s));
    }
    sector += blocks << d->g.log2_sectors_per_block;
    n_sectors -= blocks << d->g.log2_sectors_per_block;
  }
  free (data);
  return r;
}

/* The regions a dirty bitmap names (all, when it was made with another
 * bit size) recalculated, then flushed. */
static int
recalc_dirty (struct integrity_dev *d, bool all)
{
  uint32_t l = d->bm.log2_sectors_per_bit;
  int r = 0;

  for (uint64_t bit = 0; r == 0 && bit < n_bits (d); bit++) {
    uint64_t start = bit << l, n = 1ull << l;

    if (!all && !bit_set (&d->bm, bit))
      continue;
    if (start + n > d->g.provided_data_sectors)
      n = d->g.provided_data_sectors - start;
    r = recalc (d, start, n);
  }
  return r < 0 ? r : integrity_dev_flush (d);
}

static int
write_bitmap (struct integrity_dev *d, uint64_t offset, uint64_t len)
{
  int r = integrity_dev_pwrite (d, d->bm.bits + offset, len,
                                integrity_geom_journal_byte (&d->g, 0)
                                + offset);

  return r < 0 ? r : integrity_dev_flush (d);
}

/* Readonly: the regions stay unchecked, as the kernel skips the check
 * of a region still to recalculate. */
static int
keep_dirty_regions (struct integrity_dev *d, bool all)
{
  d->bm.dirty = calloc (n_bits (d) ? n_bits (d) : 1, sizeof *d->bm.dirty);
  if (d->bm.dirty == NULL)
    return -ENOMEM;
  for (uint64_t bit = 0; bit < n_bits (d); bit++)
    d->bm.dirty[bit] = all || bit_set (&d->bm, bit);
  return 0;
}

/* dm_integrity_resume with SB_FLAG_DIRTY_BITMAP. */
static int
open_dirty (struct integrity_dev *d)
{
  bool all = d->sb.log2_blocks_per_bitmap_bit != blocks_per_bit_log2 (d);
  int r;

  r = integrity_dev_pread (d, d->bm.bits, d->bm.bytes,
                           integrity_geom_journal_byte (&d->g, 0));
  if (r < 0)
    return r;
  if (d->readonly)
    return keep_dirty_regions (d, all);
  r = recalc_dirty (d, all);
  if (r < 0 || d->mode == 'B')
    return r;
  r = integrity_journal_init (d, 0, d->g.journal_sections, 0);
  d->j.free_section = d->j.uncommitted_section = 0;
  d->j.commit_seq = 0;
  d->sb.flags &= ~INTEGRITY_SB_DIRTY_BITMAP;
  return r < 0 ? r : integrity_dev_write_sb (d);
}

/* Mode B starting: the superblock marked dirty, the bitmap clear. */
static int
start_bitmap_mode (struct integrity_dev *d)
{
  int r;

  d->sb.flags |= INTEGRITY_SB_DIRTY_BITMAP;
  d->sb.log2_blocks_per_bitmap_bit = blocks_per_bit_log2 (d);
  r = integrity_dev_write_sb (d);
  if (r < 0)
    return r;
  memset (d->bm.bits, 0, d->bm.bytes);
  return write_bitmap (d, 0, d->bm.bytes);
}

int
integrity_bitmap_open (struct integrity_dev *d, char *err, size_t errlen)
{
  bool dirty = d->sb.flags & INTEGRITY_SB_DIRTY_BITMAP;
  int r = 0;

  bitmap_geometry (d);
  d->bm.bits = calloc (1, d->bm.bytes);
  if (d->bm.bits == NULL) {
    snprintf (err, errlen, "dm-integrity: no memory for the bitmap");
    return -1;
  }
  if (dirty && d->hash == NULL && !d->readonly) {
    snprintf (err, errlen, "dm-integrity: a dirty bitmap needs the "
              "internal hash to recalculate the tags");
    return -1;
  }
  if (dirty)
    r = open_dirty (d);
  if (r == 0 && d->mode == 'B' && !d->readonly)
    r = start_bitmap_mode (d);
  if (r < 0) {
    snprintf (err, errlen, "dm-integrity: cannot open the bitmap: %s",
              strerror (-r));
    return -1;
  }
  return 0;
}

int
integrity_bitmap_mark (struct integrity_dev *d, uint64_t sector,
                       uint64_t n_sectors)
{
  uint32_t l = d->bm.log2_sectors_per_bit;
  uint64_t first = sector >> l, last = (sector + n_sectors - 1) >> l;
  uint64_t lo = UINT64_MAX, hi = 0;

  for (uint64_t bit = first; bit <= last; bit++) {
    if (bit_set (&d->bm, bit))
      continue;
    d->bm.bits[bit / 8] |= 1 << (bit % 8);
    lo = lo < bit / 8 ? lo : bit / 8;
    hi = bit / 8;
  }
  if (lo == UINT64_MAX)
    return 0;
  lo -= lo % INTEGRITY_BITMAP_BLOCK_BYTES;
  hi += INTEGRITY_BITMAP_BLOCK_BYTES - hi % INTEGRITY_BITMAP_BLOCK_BYTES;
  return write_bitmap (d, lo, hi - lo);
}

/* bitmap_flush_work: once what was written is on disk, the bitmap is
 * cleared. */
int
integrity_bitmap_flush (struct integrity_dev *d)
{
  int r = integrity_dev_flush (d);
  bool any = false;

  for (size_t i = 0; i < d->bm.bytes && !any; i++)
    any = d->bm.bits[i] != 0;
  if (r < 0 || !any)
    return r;
  memset (d->bm.bits, 0, d->bm.bytes);
  return write_bitmap (d, 0, d->bm.bytes);
}

/* dm_integrity_postsuspend in mode B: the journal written empty over
 * the bitmap, the superblock clean. */
int
integrity_bitmap_close (struct integrity_dev *d)
{
  int r = integrity_dev_flush (d);

  if (r == 0)
    r = integrity_journal_init (d, 0, d->g.journal_sections, 0);
  if (r < 0)
    return r;
  d->sb.flags &= ~INTEGRITY_SB_DIRTY_BITMAP;
  return integrity_dev_write_sb (d);
}

bool
integrity_bitmap_unchecked (const struct integrity_dev *d, uint64_t sector)
{
  return d->bm.dirty != NULL
    && d->bm.dirty[sector >> d->bm.log2_sectors_per_bit];
}

void
integrity_bitmap_free (struct integrity_bitmap *bm)
{
  free (bm->bits);
  free (bm->dirty);
  memset (bm, 0, sizeof *bm);
}
