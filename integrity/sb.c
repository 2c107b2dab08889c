/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsing and writing dm-integrity's superblock.  The checks are
 * dm_integrity_ctr's (Linux 6.1): version 1 .. 5, the tag size and
 * block size the table gives, a journal of at least one section, a
 * log2 interleave of 3 .. 31; and the flags 6.1 does not know. */
#include <stdio.h>
#include <string.h>

#include "sb.h"

static const char sb_magic[8] = "integrt";   /* with its NUL: 8 bytes */

static uint16_t
get_le16 (const uint8_t *p)
{
  return p[0] | (uint16_t) p[1] << 8;
}

static uint32_t
get_le32 (const uint8_t *p)
{
  return p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
    | (uint32_t) p[3] << 24;
}

static uint64_t
get_le64 (const uint8_t *p)
{
  return get_le32 (p) | (uint64_t) get_le32 (p + 4) << 32;
}

static void
put_le16 (uint8_t *p, uint16_t v)
{
  p[0] = v;
  p[1] = v >> 8;
}

static void
put_le32 (uint8_t *p, uint32_t v)
{
  put_le16 (p, v);
  put_le16 (p + 2, v >> 16);
}

static void
put_le64 (uint8_t *p, uint64_t v)
{
  put_le32 (p, v);
  put_le32 (p + 4, v >> 32);
}

bool
integrity_sb_has_magic (const uint8_t *buf, size_t len)
{
  return len >= sizeof sb_magic && memcmp (buf, sb_magic, 8) == 0;
}

/* Field offsets of struct superblock. */
enum {
  SB_OFF_VERSION = 8, SB_OFF_LOG2_INTERLEAVE = 9, SB_OFF_TAG_SIZE = 10,
  SB_OFF_JOURNAL_SECTIONS = 12, SB_OFF_PROVIDED = 16, SB_OFF_FLAGS = 24,
  SB_OFF_LOG2_SPB = 28, SB_OFF_LOG2_BPB = 29, SB_OFF_RECALC = 32,
  SB_OFF_SALT = 48,
};

static void
decode (const uint8_t *buf, struct integrity_sb *sb)
{
  memset (sb, 0, sizeof *sb);
  sb->version = buf[SB_OFF_VERSION];
  sb->log2_interleave_sectors = buf[SB_OFF_LOG2_INTERLEAVE];
  sb->tag_size = get_le16 (buf + SB_OFF_TAG_SIZE);
  sb->journal_sections = get_le32 (buf + SB_OFF_JOURNAL_SECTIONS);
  sb->provided_data_sectors = get_le64 (buf + SB_OFF_PROVIDED);
  sb->flags = get_le32 (buf + SB_OFF_FLAGS);
  sb->log2_sectors_per_block = buf[SB_OFF_LOG2_SPB];
  sb->log2_blocks_per_bitmap_bit = buf[SB_OFF_LOG2_BPB];
  sb->recalc_sector = get_le64 (buf + SB_OFF_RECALC);
  memcpy (sb->salt, buf + SB_OFF_SALT, INTEGRITY_SALT_BYTES);
}

/* The flags: those 6.1 does not know, and those whose volumes this
 * implementation cannot serve, each refused by name. */
static int
check_flags (const struct integrity_sb *sb, char *err, size_t errlen)
{
  if (sb->flags & INTEGRITY_SB_INLINE) {
    snprintf (err, errlen, "dm-integrity: inline mode (flag 0x20) is "
              "not supported");
    return -1;
  }
  if (sb->flags & ~INTEGRITY_SB_KNOWN_FLAGS) {
    snprintf (err, errlen, "dm-integrity: unknown superblock flags 0x%x",
              sb->flags & ~INTEGRITY_SB_KNOWN_FLAGS);
    return -1;
  }
  if (sb->flags & INTEGRITY_SB_RECALCULATING) {
    snprintf (err, errlen, "dm-integrity: the volume is recalculating "
              "its tags (SB_FLAG_RECALCULATING, at sector %llu): not "
              "supported", (unsigned long long) sb->recalc_sector);
    return -1;
  }
  if (sb->flags & INTEGRITY_SB_HAVE_JOURNAL_MAC) {
    snprintf (err, errlen, "dm-integrity: a journal MAC "
              "(SB_FLAG_HAVE_JOURNAL_MAC) is not supported");
    return -1;
  }
  return 0;
}

/* dm_integrity_ctr's checks of the fields, and an integer size that
 * must not overflow. */
static int
check_fields (const struct integrity_sb *sb, char *err, size_t errlen)
{
  if (sb->version < 1 || sb->version > 5) {
    snprintf (err, errlen, "dm-integrity: unknown superblock version %u",
              sb->version);
    return -1;
  }
  if (sb->tag_size == 0 || sb->tag_size > INTEGRITY_MAX_TAG_SIZE) {
    snprintf (err, errlen, "dm-integrity: impossible tag size %u (1 .. %u)",
              sb->tag_size, INTEGRITY_MAX_TAG_SIZE);
    return -1;
  }
  if (sb->log2_sectors_per_block > 3) {
    snprintf (err, errlen, "dm-integrity: impossible block size 2^%u "
              "sectors", sb->log2_sectors_per_block);
    return -1;
  }
  if (sb->journal_sections == 0) {
    snprintf (err, errlen, "dm-integrity: corrupted superblock, "
              "journal_sections is 0");
    return -1;
  }
  if (sb->log2_interleave_sectors < 3 || sb->log2_interleave_sectors > 31) {
    snprintf (err, errlen, "dm-integrity: invalid interleave_sectors 2^%u "
              "in the superblock", sb->log2_interleave_sectors);
    return -1;
  }
  if (sb->provided_data_sectors > UINT64_MAX / 512) {
    snprintf (err, errlen, "dm-integrity: provided_data_sectors %llu "
              "overflows", (unsigned long long) sb->provided_data_sectors);
    return -1;
  }
  return 0;
}

int
integrity_sb_parse (const uint8_t *buf, size_t len,
                    struct integrity_sb *sb, char *err, size_t errlen)
{
  if (len < INTEGRITY_SB_BYTES || !integrity_sb_has_magic (buf, len)) {
    snprintf (err, errlen, "dm-integrity: no superblock (magic "
              "\"integrt\") at the start of the device");
    return -1;
  }
  decode (buf, sb);
  if (check_fields (sb, err, errlen) == -1)
    return -1;
  return check_flags (sb, err, errlen);
}

void
integrity_sb_encode (const struct integrity_sb *sb, uint8_t *buf)
{
  memset (buf, 0, SB_OFF_SALT + INTEGRITY_SALT_BYTES);
  memcpy (buf, sb_magic, 8);
  buf[SB_OFF_VERSION] = sb->version;
  buf[SB_OFF_LOG2_INTERLEAVE] = sb->log2_interleave_sectors;
  put_le16 (buf + SB_OFF_TAG_SIZE, sb->tag_size);
  put_le32 (buf + SB_OFF_JOURNAL_SECTIONS, sb->journal_sections);
  put_le64 (buf + SB_OFF_PROVIDED, sb->provided_data_sectors);
  put_le32 (buf + SB_OFF_FLAGS, sb->flags);
  buf[SB_OFF_LOG2_SPB] = sb->log2_sectors_per_block;
  buf[SB_OFF_LOG2_BPB] = sb->log2_blocks_per_bitmap_bit;
  put_le64 (buf + SB_OFF_RECALC, sb->recalc_sector);
  memcpy (buf + SB_OFF_SALT, sb->salt, INTEGRITY_SALT_BYTES);
}

/* sb_set_version (6.1), without a metadata device. */
uint8_t
integrity_sb_version_for (uint32_t flags, char mode)
{
  if (flags & INTEGRITY_SB_FIXED_HMAC)
    return 5;
  if (flags & INTEGRITY_SB_FIXED_PADDING)
    return 4;
  if (mode == 'B' || (flags & INTEGRITY_SB_DIRTY_BITMAP))
    return 3;
  if (flags & INTEGRITY_SB_RECALCULATING)
    return 2;
  return 1;
}
