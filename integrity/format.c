/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the kernel writes when a table is loaded over a zeroed
 * superblock (dm_integrity_ctr: initialize_superblock, init_journal,
 * sync_rw_sb; Linux 6.1), as integritysetup format has it done; and
 * its wipe, every block zeros with a valid tag. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "internal.h"

#define DEFAULT_INTERLEAVE_SECTORS  32768
#define DEFAULT_MAX_JOURNAL_SECTORS 131072
#define DEFAULT_JOURNAL_SIZE_FACTOR 7

static int
check_format_options (const struct integrity_format_options *fo,
                      uint32_t tag_size, char *err, size_t errlen)
{
  uint32_t bb = fo->block_bytes ? fo->block_bytes : 512;

  if (bb < 512 || bb > 4096 || (bb & (bb - 1))) {
    snprintf (err, errlen, "dm-integrity: invalid block size %u", bb);
    return -1;
  }
  if (tag_size == 0 || tag_size > INTEGRITY_MAX_TAG_SIZE) {
    snprintf (err, errlen, "dm-integrity: invalid tag size %u", tag_size);
    return -1;
  }
  if (fo->device_bytes == 0 || fo->device_bytes % 512
      || fo->offset_bytes % 512
      || fo->device_bytes > (UINT64_MAX >> 10) - fo->offset_bytes) {
    snprintf (err, errlen, "dm-integrity: invalid offset or length");
    return -1;
  }
  return 0;
}

/* initialize_superblock, without a metadata device. */
static int
make_superblock (struct integrity_dev *d,
                 const struct integrity_format_options *fo,
                 uint32_t tag_size, char *err, size_t errlen)
{
  uint64_t start = fo->offset_bytes / 512;
  uint64_t device = start + fo->device_bytes / 512;
  uint32_t bb = fo->block_bytes ? fo->block_bytes : 512;
  uint64_t journal = fo->journal_sectors ? fo->journal_sectors
    : device >> DEFAULT_JOURNAL_SIZE_FACTOR;
  uint32_t interleave = fo->interleave_sectors ? fo->interleave_sectors
    : DEFAULT_INTERLEAVE_SECTORS;
  uint32_t li = 31 - __builtin_clz (interleave);
  struct integrity_geom probe;

  if (!fo->journal_sectors && journal > DEFAULT_MAX_JOURNAL_SECTORS)
    journal = DEFAULT_MAX_JOURNAL_SECTORS;
  d->sb.tag_size = tag_size;
  d->sb.log2_sectors_per_block = __builtin_ctz (bb / 512);
  d->sb.log2_interleave_sectors = li < 3 ? 3 : li;
  d->sb.journal_sections = 1;
  d->sb.flags = fo->fix_padding ? INTEGRITY_SB_FIXED_PADDING : 0;
  if (fo->fix_hmac && fo->internal_hash) {
    d->sb.flags |= INTEGRITY_SB_FIXED_HMAC;
    if (RAND_bytes (d->sb.salt, sizeof d->sb.salt) != 1) {
      snprintf (err, errlen, "dm-integrity: no random salt");
      return -1;
    }
  }
  /* calculate_journal_section_size, for the sections' count. */
  if (integrity_geom_init (&probe, &d->sb, start, device, err, errlen) == -1)
    return -1;
  if (journal / probe.journal_section_sectors > 1)
    d->sb.journal_sections = journal / probe.journal_section_sectors;
  if (integrity_geom_init (&d->g, &d->sb, start, device, err, errlen) == -1)
    return -1;
  d->sb.provided_data_sectors = d->g.provided_data_sectors;
  d->sb.log2_blocks_per_bitmap_bit =
    integrity_bitmap_log2_sectors_per_bit (&d->g)
    - d->sb.log2_sectors_per_block;
  return 0;
}

/* integritysetup's wipe: zeros and their tags, area by area. */
static int
wipe (struct integrity_dev *d)
{
  uint32_t l = d->g.log2_sectors_per_block, ts = d->g.tag_size;
  uint64_t blocks = d->g.provided_data_sectors >> l;
  uint64_t per_run = 256;
  uint8_t *zeros = calloc (per_run, d->block_bytes);
  uint8_t *tags = calloc (per_run, ts);
  int r = zeros && tags ? 0 : -ENOMEM;

  for (uint64_t b = 0; r == 0 && b < blocks;) {
    uint64_t s = b << l, n = integrity_geom_blocks_to_area_end (&d->g, s);

    n = n < per_run ? n : per_run;
    n = n < blocks - b ? n : blocks - b;
    for (uint64_t k = 0; r == 0 && k < n && d->hash; k++)
      r = integrity_hash_tag (d->hash, d->salt, s + (k << l), zeros,
                              d->block_bytes, tags + k * ts, ts);
    if (r == 0)
      r = integrity_dev_pwrite (d, zeros, n * d->block_bytes,
                                integrity_geom_data_byte (&d->g, s));
    if (r == 0)
      r = integrity_dev_pwrite (d, tags, n * ts,
                                integrity_geom_tag_byte (&d->g, s));
    b += n;
  }
  free (zeros);
  free (tags);
  return r < 0 ? r : integrity_dev_flush (d);
}

static int
format_steps (struct integrity_dev *d,
              const struct integrity_format_options *fo, char *err,
              size_t errlen)
{
  uint32_t tag_size = fo->tag_size;
  int r;

  if (fo->internal_hash) {
    d->hash = integrity_hash_new (fo->internal_hash, fo->internal_hash_key,
                                  fo->internal_hash_key_bytes, err, errlen);
    if (d->hash == NULL)
      return -1;
    if (tag_size == 0)
      tag_size = integrity_hash_digest_size (d->hash);
  }
  if (check_format_options (fo, tag_size, err, errlen) == -1
      || make_superblock (d, fo, tag_size, err, errlen) == -1
      || integrity_journal_alloc (d, err, errlen) == -1)
    return -1;
  d->block_bytes = 512u << d->g.log2_sectors_per_block;
  d->salt = d->sb.flags & INTEGRITY_SB_FIXED_HMAC ? d->sb.salt : NULL;
  r = integrity_journal_init (d, 0, d->g.journal_sections, 0);
  if (r == 0)
    r = integrity_dev_write_sb (d);
  if (r == 0 && fo->wipe)
    r = wipe (d);
  if (r < 0) {
    snprintf (err, errlen, "dm-integrity: cannot format: %s",
              strerror (-r));
    return -1;
  }
  return 0;
}

int
integrity_format (const struct integrity_io *io,
                  const struct integrity_format_options *fo, char *err,
                  size_t errlen)
{
  struct integrity_dev *d;
  int r;

  if (io == NULL || io->pwrite == NULL || fo == NULL) {
    snprintf (err, errlen, "dm-integrity: no device to format");
    return -1;
  }
  d = calloc (1, sizeof *d);
  if (d == NULL) {
    snprintf (err, errlen, "dm-integrity: out of memory");
    return -1;
  }
  d->io = *io;
  d->mode = fo->bitmap ? 'B' : 'J';
  r = format_steps (d, fo, err, errlen);
  integrity_journal_free (&d->j);
  integrity_hash_free (d->hash);
  free (d);
  return r;
}
