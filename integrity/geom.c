/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity's layout, computed as Linux 6.1's dm-integrity.c does
 * (function names in the comments).  Every product is checked for
 * overflow: a hostile superblock gives an error, never a wrapped
 * offset. */
#include <stdio.h>

#include "geom.h"

/* calculate_journal_section_size: an entry is the block's sector, the
 * last 8 bytes of each of its sectors and the tag, rounded up to 8
 * bytes (JOURNAL_ENTRY_ROUNDUP); the 8 first sectors of a section hold
 * the entries, the others the blocks. */
static void
journal_section_size (struct integrity_geom *g)
{
  uint32_t sector_space = INTEGRITY_JOURNAL_SECTOR_DATA;

  g->journal_entry_size = (8 + 8 * g->sectors_per_block + g->tag_size + 7)
    & ~7u;
  if (g->journal_mac)
    sector_space -= 8;           /* JOURNAL_MAC_PER_SECTOR */
  g->journal_entries_per_sector = sector_space / g->journal_entry_size;
  g->journal_section_entries =
    g->journal_entries_per_sector * INTEGRITY_JOURNAL_BLOCK_SECTORS;
  g->journal_section_sectors =
    (g->journal_section_entries << g->log2_sectors_per_block)
    + INTEGRITY_JOURNAL_BLOCK_SECTORS;
}

/* calculate_device_limits' metadata_run: the tags of one area rounded
 * up to 4 KiB with fix_padding, to 128 KiB (512 << 8: "excessive
 * padding for compatibility") without. */
static uint64_t
metadata_run_sectors (const struct integrity_geom *g)
{
  uint64_t pad = g->fix_padding ? 8 * 512 : (uint64_t) 512 << 8;
  uint64_t bytes = (uint64_t) g->tag_size
    << (g->log2_interleave_sectors - g->log2_sectors_per_block);

  return ((bytes + pad - 1) / pad * pad) >> 9;
}

/* The device sector (start included) of the data at LOGICAL_SECTOR, or
 * UINT64_MAX when it overflows (get_data_sector). */
static uint64_t
data_sector_checked (const struct integrity_geom *g, uint64_t logical)
{
  uint64_t area = logical >> g->log2_interleave_sectors;
  uint64_t offset = logical & ((1ull << g->log2_interleave_sectors) - 1);
  uint64_t runs, s;

  if (__builtin_mul_overflow (area + 1, g->metadata_run, &runs)
      || __builtin_add_overflow (runs, area << g->log2_interleave_sectors,
                                 &s)
      || __builtin_add_overflow (s, g->initial_sectors + offset, &s)
      || __builtin_add_overflow (s, g->start_sectors, &s))
    return UINT64_MAX;
  return s;
}

/* calculate_device_limits: whether PROVIDED data sectors fit. */
static bool
limits_ok (const struct integrity_geom *g, uint64_t provided)
{
  uint64_t last;

  if (g->initial_sectors + INTEGRITY_METADATA_PADDING_SECTORS
      >= g->device_sectors)
    return false;
  last = data_sector_checked (g, provided - 1);
  return last != UINT64_MAX && last >= g->start_sectors
    && last < g->device_sectors;
}

/* get_provided_data_sectors: the largest multiple of 8 sectors that
 * fits, found bit by bit from the device size's highest bit. */
static uint64_t
provided_sectors (const struct integrity_geom *g)
{
  uint64_t provided = 0;
  int bit;

  for (bit = 63 - __builtin_clzll (g->device_sectors); bit >= 3; bit--) {
    uint64_t test = provided | 1ull << bit;

    if (limits_ok (g, test))
      provided = test;
  }
  return provided;
}

static int
init_journal_geometry (struct integrity_geom *g,
                       const struct integrity_sb *sb, char *err,
                       size_t errlen)
{
  uint64_t journal;

  journal_section_size (g);
  if (g->journal_entries_per_sector == 0) {
    snprintf (err, errlen, "dm-integrity: tag size %u leaves no room for "
              "a journal entry", g->tag_size);
    return -1;
  }
  g->journal_sections = sb->journal_sections;
  journal = (uint64_t) g->journal_section_sectors * g->journal_sections;
  if (journal > INTEGRITY_MAX_JOURNAL_SECTORS) {
    snprintf (err, errlen, "dm-integrity: journal of %llu sectors is "
              "larger than %u", (unsigned long long) journal,
              INTEGRITY_MAX_JOURNAL_SECTORS);
    return -1;
  }
  g->initial_sectors = INTEGRITY_SB_SECTORS + journal;
  g->journal_entries = g->journal_section_entries * g->journal_sections;
  return 0;
}

/* DEVICE_SECTORS 0: the device is as long as the superblock's
 * provided_data_sectors needs. */
static int
size_from_superblock (struct integrity_geom *g,
                      const struct integrity_sb *sb, char *err,
                      size_t errlen)
{
  uint64_t last;

  g->provided_data_sectors = sb->provided_data_sectors;
  if (g->provided_data_sectors == 0
      || g->provided_data_sectors & (g->sectors_per_block - 1)) {
    snprintf (err, errlen, "dm-integrity: the superblock provides %llu "
              "sectors", (unsigned long long) g->provided_data_sectors);
    return -1;
  }
  last = data_sector_checked (g, g->provided_data_sectors - 1);
  if (last == UINT64_MAX || last >= UINT64_MAX / 512) {
    snprintf (err, errlen, "dm-integrity: provided_data_sectors %llu "
              "overflows", (unsigned long long) g->provided_data_sectors);
    return -1;
  }
  g->device_sectors = last + 1;
  if (g->device_sectors <= g->initial_sectors
      + INTEGRITY_METADATA_PADDING_SECTORS)
    g->device_sectors = g->initial_sectors
      + INTEGRITY_METADATA_PADDING_SECTORS + 1;
  return 0;
}

int
integrity_geom_init (struct integrity_geom *g, const struct integrity_sb *sb,
                     uint64_t start_sectors, uint64_t device_sectors,
                     char *err, size_t errlen)
{
  *g = (struct integrity_geom) {
    .start_sectors = start_sectors, .device_sectors = device_sectors,
    .tag_size = sb->tag_size,
    .log2_sectors_per_block = sb->log2_sectors_per_block,
    .sectors_per_block = 1u << sb->log2_sectors_per_block,
    .log2_interleave_sectors = sb->log2_interleave_sectors,
    .fix_padding = sb->flags & INTEGRITY_SB_FIXED_PADDING,
    .journal_mac = sb->flags & INTEGRITY_SB_HAVE_JOURNAL_MAC,
  };
  if (init_journal_geometry (g, sb, err, errlen) == -1)
    return -1;
  g->metadata_run = metadata_run_sectors (g);
  if (device_sectors == 0)
    return size_from_superblock (g, sb, err, errlen);
  if (start_sectors >= device_sectors
      || g->initial_sectors + INTEGRITY_METADATA_PADDING_SECTORS
         >= device_sectors) {
    snprintf (err, errlen, "dm-integrity: the journal (%llu sectors) does "
              "not fit the device of %llu sectors",
              (unsigned long long) g->initial_sectors,
              (unsigned long long) device_sectors);
    return -1;
  }
  g->provided_data_sectors = provided_sectors (g);
  if (g->provided_data_sectors == 0) {
    snprintf (err, errlen, "dm-integrity: the device is too small");
    return -1;
  }
  return 0;
}

uint64_t
integrity_geom_data_byte (const struct integrity_geom *g,
                          uint64_t logical_sector)
{
  return data_sector_checked (g, logical_sector) * 512;
}

/* get_metadata_sector_and_offset, in bytes: the area's tags start
 * after the journal and the areas before it; the block's tag is at its
 * index in the area times the tag size. */
uint64_t
integrity_geom_tag_byte (const struct integrity_geom *g,
                         uint64_t logical_sector)
{
  uint64_t area = logical_sector >> g->log2_interleave_sectors;
  uint64_t offset = logical_sector
    & ((1ull << g->log2_interleave_sectors) - 1);
  uint64_t area_start = g->start_sectors + g->initial_sectors
    + (area << g->log2_interleave_sectors) + area * g->metadata_run;

  return area_start * 512
    + (offset >> g->log2_sectors_per_block) * g->tag_size;
}

uint64_t
integrity_geom_blocks_to_area_end (const struct integrity_geom *g,
                                   uint64_t logical_sector)
{
  uint64_t interleave = 1ull << g->log2_interleave_sectors;
  uint64_t offset = logical_sector & (interleave - 1);

  return (interleave - offset) >> g->log2_sectors_per_block;
}

uint64_t
integrity_geom_journal_byte (const struct integrity_geom *g,
                             uint64_t journal_sector)
{
  return (g->start_sectors + INTEGRITY_SB_SECTORS + journal_sector) * 512;
}

uint64_t
integrity_geom_journal_sectors (const struct integrity_geom *g)
{
  return g->initial_sectors - INTEGRITY_SB_SECTORS;
}
