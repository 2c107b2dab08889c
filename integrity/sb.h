/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity's superblock: the first 512 bytes of its 8-sector area
 * (struct superblock of drivers/md/dm-integrity.c, Linux 6.1), all
 * fields little-endian.  Parsing refuses what the kernel's
 * dm_integrity_ctr refuses, and what this implementation does not do
 * (an inline or recalculating volume, a journal MAC). */
#ifndef DMCRYPT_INTEGRITY_SB_H
#define DMCRYPT_INTEGRITY_SB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INTEGRITY_SB_SECTORS      8      /* SB_SECTORS */
#define INTEGRITY_SB_BYTES        512    /* what is parsed */
#define INTEGRITY_SALT_BYTES      16     /* SALT_SIZE */

#define INTEGRITY_SB_HAVE_JOURNAL_MAC  0x1
#define INTEGRITY_SB_RECALCULATING     0x2
#define INTEGRITY_SB_DIRTY_BITMAP      0x4
#define INTEGRITY_SB_FIXED_PADDING     0x8
#define INTEGRITY_SB_FIXED_HMAC        0x10
#define INTEGRITY_SB_INLINE            0x20   /* 6.11's version 6 */
#define INTEGRITY_SB_KNOWN_FLAGS       0x1f   /* what 6.1 knows */

/* MAX_TAG_SIZE: a journal sector's 504 bytes less the MAC's 8, less an
 * entry's sector and the 8 saved last_bytes of an 8-sector block. */
#define INTEGRITY_MAX_TAG_SIZE    (504 - 8 - (8 + 8 * 8))

struct integrity_sb {
  uint8_t version;                   /* 1 .. 5 */
  uint8_t log2_interleave_sectors;
  uint16_t tag_size;                 /* bytes */
  uint32_t journal_sections;
  uint64_t provided_data_sectors;    /* 512-byte sectors */
  uint32_t flags;                    /* INTEGRITY_SB_* */
  uint8_t log2_sectors_per_block;    /* 0 .. 3 */
  uint8_t log2_blocks_per_bitmap_bit;
  uint64_t recalc_sector;
  uint8_t salt[INTEGRITY_SALT_BYTES];
};

/* True when BUF (at least 8 bytes) starts with the magic "integrt". */
bool integrity_sb_has_magic (const uint8_t *buf, size_t len);

/* Parses the superblock in BUF (LEN >= INTEGRITY_SB_BYTES) into SB.
 * Returns 0, or -1 with a one-line reason in ERR. */
int integrity_sb_parse (const uint8_t *buf, size_t len,
                        struct integrity_sb *sb, char *err, size_t errlen);

/* Writes SB into the first 64 bytes of BUF (struct superblock), the
 * rest of its sector kept as it is. */
void integrity_sb_encode (const struct integrity_sb *sb, uint8_t *buf);

/* The version the kernel's sb_set_version gives these flags, for mode
 * MODE ('B' is version 3 at least). */
uint8_t integrity_sb_version_for (uint32_t flags, char mode);

#endif /* DMCRYPT_INTEGRITY_SB_H */
