/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where dm-integrity keeps things (Linux 6.1's calculate_device_limits,
 * calculate_journal_section_size, get_provided_data_sectors,
 * get_area_and_offset, get_data_sector,
 * get_metadata_sector_and_offset), without a separate metadata device:
 *
 *   superblock (8 sectors) | journal | area 0: tags (metadata_run
 *   sectors) then data (interleave sectors) | area 1: ... */
#ifndef DMCRYPT_INTEGRITY_GEOM_H
#define DMCRYPT_INTEGRITY_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sb.h"

#define INTEGRITY_JOURNAL_BLOCK_SECTORS 8   /* JOURNAL_BLOCK_SECTORS */
#define INTEGRITY_COMMIT_ID_BYTES       8   /* sizeof (commit_id_t) */
#define INTEGRITY_JOURNAL_SECTOR_DATA   (512 - INTEGRITY_COMMIT_ID_BYTES)
#define INTEGRITY_METADATA_PADDING_SECTORS 8

/* Journals larger than this (sectors) are refused: the journal is kept
 * in memory whole, as the kernel keeps it. */
#define INTEGRITY_MAX_JOURNAL_SECTORS   (1u << 21)

struct integrity_geom {
  uint64_t start_sectors;        /* the table's offset (ic->start) */
  uint64_t device_sectors;       /* the device's size, start included */
  uint32_t tag_size;             /* bytes */
  uint32_t log2_sectors_per_block;
  uint32_t sectors_per_block;
  uint32_t log2_interleave_sectors;
  bool fix_padding;
  bool journal_mac;
  /* The journal. */
  uint32_t journal_entry_size;          /* bytes */
  uint32_t journal_entries_per_sector;
  uint32_t journal_section_entries;
  uint32_t journal_section_sectors;
  uint32_t journal_sections;
  uint32_t journal_entries;
  /* The areas. */
  uint64_t initial_sectors;      /* superblock and journal */
  uint64_t metadata_run;         /* sectors of tags before each area */
  uint64_t provided_data_sectors;
};

/* Fills G from SB for a device of DEVICE_SECTORS sectors (the table's
 * START_SECTORS included), computing provided_data_sectors as the
 * kernel does.  DEVICE_SECTORS 0: the superblock's
 * provided_data_sectors is taken, and the device as long as it needs.
 * Returns 0, or -1 with a one-line reason in ERR. */
int integrity_geom_init (struct integrity_geom *g,
                         const struct integrity_sb *sb,
                         uint64_t start_sectors, uint64_t device_sectors,
                         char *err, size_t errlen);

/* Byte offsets on the device (start included) of the data and of the
 * tag of the block at LOGICAL_SECTOR (a multiple of the block). */
uint64_t integrity_geom_data_byte (const struct integrity_geom *g,
                                   uint64_t logical_sector);
uint64_t integrity_geom_tag_byte (const struct integrity_geom *g,
                                  uint64_t logical_sector);
/* Blocks from LOGICAL_SECTOR to the end of its area: data and tags are
 * contiguous up to there. */
uint64_t integrity_geom_blocks_to_area_end (const struct integrity_geom *g,
                                            uint64_t logical_sector);
/* Byte offset on the device of journal sector JOURNAL_SECTOR. */
uint64_t integrity_geom_journal_byte (const struct integrity_geom *g,
                                      uint64_t journal_sector);
/* The journal's size in sectors. */
uint64_t integrity_geom_journal_sectors (const struct integrity_geom *g);

#endif /* DMCRYPT_INTEGRITY_GEOM_H */
