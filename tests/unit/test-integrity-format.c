/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity's on-disk format: the superblock parsed from hand-made
 * ones and hostile ones refused, the geometry against figures worked
 * out by hand from Linux 6.1's formulas (calculate_device_limits,
 * get_provided_data_sectors), the internal hashes against Python's
 * zlib, hashlib and hmac (values computed outside), and the table line
 * the kernel prints for a 968-sector journal. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "integrity-memdev.h"
#include "../../integrity/geom.h"
#include "../../integrity/sb.h"
#include "../../integrity/tag.h"

static void
make_sb (uint8_t *buf, uint8_t version, uint8_t log2_interleave,
         uint16_t tag, uint32_t sections, uint32_t flags, uint8_t log2_spb)
{
  memset (buf, 0, 512);
  memcpy (buf, "integrt", 8);
  buf[8] = version;
  buf[9] = log2_interleave;
  buf[10] = tag;
  buf[11] = tag >> 8;
  for (int i = 0; i < 4; i++) {
    buf[12 + i] = sections >> (8 * i);
    buf[24 + i] = flags >> (8 * i);
  }
  buf[28] = log2_spb;
}

static bool
refused (const uint8_t *buf, const char *why_has)
{
  struct integrity_sb sb;
  char err[256] = "";

  if (integrity_sb_parse (buf, 512, &sb, err, sizeof err) == 0)
    return false;
  if (strchr (err, '\n') || strstr (err, why_has) == NULL) {
    fprintf (stderr, "reason \"%s\" lacks \"%s\"\n", err, why_has);
    return false;
  }
  return true;
}

static void
test_sb_parse (void)
{
  uint8_t buf[512], back[512];
  struct integrity_sb sb;
  char err[256];

  make_sb (buf, 4, 15, 32, 11, INTEGRITY_SB_FIXED_PADDING, 0);
  buf[16] = 0x30; buf[17] = 0x74;       /* provided 29744 */
  buf[29] = 15;
  REQUIRE (integrity_sb_parse (buf, 512, &sb, err, sizeof err) == 0, "%s",
           err);
  CHECK (sb.version == 4 && sb.tag_size == 32 && sb.journal_sections == 11);
  CHECK (sb.provided_data_sectors == 29744);
  CHECK (sb.log2_interleave_sectors == 15);
  CHECK (sb.log2_blocks_per_bitmap_bit == 15);
  CHECK (sb.flags == INTEGRITY_SB_FIXED_PADDING);
  memcpy (back, buf, 512);
  integrity_sb_encode (&sb, back);
  CHECK (memcmp (back, buf, 512) == 0);

  make_sb (buf, 0, 15, 32, 11, 0, 0);
  CHECK (refused (buf, "version"));
  make_sb (buf, 6, 15, 32, 11, 0, 0);
  CHECK (refused (buf, "version"));
  make_sb (buf, 1, 15, 0, 11, 0, 0);
  CHECK (refused (buf, "tag size"));
  make_sb (buf, 1, 15, INTEGRITY_MAX_TAG_SIZE + 1, 11, 0, 0);
  CHECK (refused (buf, "tag size"));
  make_sb (buf, 1, 15, 32, 0, 0, 0);
  CHECK (refused (buf, "journal_sections"));
  make_sb (buf, 1, 2, 32, 1, 0, 0);
  CHECK (refused (buf, "interleave"));
  make_sb (buf, 1, 32, 32, 1, 0, 0);
  CHECK (refused (buf, "interleave"));
  make_sb (buf, 1, 15, 32, 1, 0, 4);
  CHECK (refused (buf, "block size"));
  make_sb (buf, 2, 15, 32, 1, INTEGRITY_SB_RECALCULATING, 0);
  CHECK (refused (buf, "SB_FLAG_RECALCULATING"));
  make_sb (buf, 5, 15, 32, 1, 0x40, 0);
  CHECK (refused (buf, "unknown superblock flags 0x40"));
  make_sb (buf, 1, 15, 32, 1, INTEGRITY_SB_HAVE_JOURNAL_MAC, 0);
  CHECK (refused (buf, "journal MAC"));
  make_sb (buf, 1, 15, 32, 1, 0, 0);
  buf[0] = 'X';
  CHECK (refused (buf, "no superblock"));
  make_sb (buf, 1, 15, 32, 1, 0, 0);
  buf[23] = 0xff;                        /* provided near 2^64 */
  CHECK (refused (buf, "overflows"));
}

static struct integrity_sb
sb_of (uint16_t tag, uint32_t sections, uint32_t flags, uint8_t log2_spb,
       uint8_t log2_interleave)
{
  struct integrity_sb sb = {
    .version = 1, .tag_size = tag, .journal_sections = sections,
    .flags = flags, .log2_sectors_per_block = log2_spb,
    .log2_interleave_sectors = log2_interleave,
  };
  return sb;
}

/* 16 MiB, 32-byte tags, fix_padding, 11 sections: journal entries of
 * 48 bytes, 10 a sector, 80 a section of 88 sectors, 968 sectors in
 * all; tags of an area 32 << 15 bytes = 2048 sectors; the last data
 * sector 8 + 968 + 2048 + (P - 1) < 32768 gives P = 29744. */
static void
test_geom_16mib (void)
{
  struct integrity_sb sb = sb_of (32, 11, INTEGRITY_SB_FIXED_PADDING, 0, 15);
  struct integrity_geom g;
  char err[256];

  REQUIRE (integrity_geom_init (&g, &sb, 0, 32768, err, sizeof err) == 0,
           "%s", err);
  CHECK (g.journal_entry_size == 48);
  CHECK (g.journal_section_entries == 80);
  CHECK (g.journal_section_sectors == 88);
  CHECK (integrity_geom_journal_sectors (&g) == 968);
  CHECK (g.metadata_run == 2048);
  CHECK (g.provided_data_sectors == 29744);
  CHECK (integrity_geom_tag_byte (&g, 0) == 976 * 512);
  CHECK (integrity_geom_tag_byte (&g, 100) == 976 * 512 + 100 * 32);
  CHECK (integrity_geom_data_byte (&g, 0) == (976 + 2048) * 512ull);
  CHECK (integrity_geom_data_byte (&g, 29743) == 32767 * 512ull);
}

/* 32 MiB, crc32c (4 bytes), no fix_padding, 2 sections: entries of 24
 * bytes, 21 a sector, 168 a section of 176 sectors; 128 KiB of padding
 * makes each area's tags 256 sectors; area 1's data starts at 8 + 352
 * + 32768 + 2 * 256 = 33640, so P - 32768 <= 65536 - 33640 and the
 * largest multiple of 8 is 64664. */
static void
test_geom_two_areas (void)
{
  struct integrity_sb sb = sb_of (4, 2, 0, 0, 15);
  struct integrity_geom g;
  char err[256];

  REQUIRE (integrity_geom_init (&g, &sb, 0, 65536, err, sizeof err) == 0,
           "%s", err);
  CHECK (g.journal_section_sectors == 176 && g.journal_section_entries == 168);
  CHECK (g.metadata_run == 256);
  CHECK (g.provided_data_sectors == 64664);
  CHECK (integrity_geom_data_byte (&g, 32768) == 33640 * 512ull);
  CHECK (integrity_geom_tag_byte (&g, 32768) == 33384 * 512ull);
  CHECK (integrity_geom_tag_byte (&g, 5) == 360 * 512 + 20);
  CHECK (integrity_geom_blocks_to_area_end (&g, 32760) == 8);
  /* The same with the table's offset of 2048 sectors: every place
   * moves by it, and the device is that much longer. */
  REQUIRE (integrity_geom_init (&g, &sb, 2048, 65536 + 2048, err,
                                sizeof err) == 0, "%s", err);
  CHECK (g.provided_data_sectors == 64664);
  CHECK (integrity_geom_data_byte (&g, 32768) == (33640 + 2048) * 512ull);
}

/* 4 KiB blocks, 16-byte tags: entries 8 + 8 * 8 + 16 = 88 bytes, 5 a
 * sector, 40 a section of 40 * 8 + 8 = 328 sectors. */
static void
test_geom_4k (void)
{
  struct integrity_sb sb = sb_of (16, 3, INTEGRITY_SB_FIXED_PADDING, 3, 15);
  struct integrity_geom g;
  char err[256];

  REQUIRE (integrity_geom_init (&g, &sb, 0, 1 << 20, err, sizeof err) == 0,
           "%s", err);
  CHECK (g.journal_entry_size == 88 && g.journal_section_entries == 40);
  CHECK (g.journal_section_sectors == 328);
  CHECK (g.metadata_run == 128);   /* 16 << 12 bytes */
  CHECK (g.provided_data_sectors % 8 == 0);
  CHECK (integrity_geom_tag_byte (&g, 16) == (8 + 984) * 512ull + 2 * 16);
}

static void
test_geom_hostile (void)
{
  struct integrity_sb sb = sb_of (32, 11, 0, 0, 15);
  struct integrity_geom g;
  char err[256] = "";

  /* A journal of 968 sectors on a device of 900. */
  CHECK (integrity_geom_init (&g, &sb, 0, 900, err, sizeof err) == -1
         && strstr (err, "does not fit"));
  sb.journal_sections = UINT32_MAX;
  CHECK (integrity_geom_init (&g, &sb, 0, 1ull << 40, err, sizeof err) == -1
         && strstr (err, "journal"));
  /* Provided sectors taken from a superblock that overflows. */
  sb = sb_of (424, 1, 0, 0, 31);
  sb.provided_data_sectors = 1ull << 62;
  CHECK (integrity_geom_init (&g, &sb, 0, 0, err, sizeof err) == -1);
  /* A device too small for any data. */
  sb = sb_of (4, 1, 0, 0, 15);
  CHECK (integrity_geom_init (&g, &sb, 0, 176 + 8 + 9, err, sizeof err)
         == -1);
}

static void
check_tag (const char *name, const uint8_t *key, size_t key_bytes,
           const uint8_t *salt, const char *want_hex, uint32_t tag_size)
{
  uint8_t data[512], tag[64], want[64];
  char err[256];
  struct integrity_hash *h = integrity_hash_new (name, key, key_bytes, err,
                                                 sizeof err);

  if (!check_that (h != NULL, "%s: %s", name, err))
    return;
  for (int i = 0; i < 512; i++)
    data[i] = i * 7 + 3;
  for (uint32_t i = 0; i < tag_size; i++)
    sscanf (want_hex + 2 * i, "%2hhx", &want[i]);
  CHECK (integrity_hash_tag (h, salt, 12345, data, 512, tag, tag_size) == 0);
  CHECK_MSG (memcmp (tag, want, tag_size) == 0, "%s tag", name);
  integrity_hash_free (h);
}

static void
test_tags (void)
{
  uint8_t key[32], salt[16];
  char err[256];

  for (int i = 0; i < 32; i++)
    key[i] = i;
  for (int i = 0; i < 16; i++)
    salt[i] = 100 + i;
  check_tag ("crc32c", NULL, 0, NULL, "0bb2f568", 4);
  check_tag ("crc32", NULL, 0, NULL, "8ee97143", 4);
  check_tag ("sha256", NULL, 0, NULL, "79edc1161e2099b5cd974677e838aa6b"
             "de40ddb835747c2bb957207ee24ac902", 32);
  check_tag ("sha256", NULL, 0, NULL, "79edc1161e2099b5", 8);
  check_tag ("hmac(sha256)", key, 32, NULL, "307de0ab12facf320a172d78c07"
             "9a54b40e0c2b878f95c8621e71aaa1518a17d", 32);
  check_tag ("hmac(sha256)", key, 32, salt, "a8ae5668292938de9e63744e7e3"
             "8e5202421738cedced5fc13540b444e1843dd", 32);
  /* A tag longer than the digest: zeros after it. */
  check_tag ("crc32c", NULL, 0, NULL, "0bb2f56800000000", 8);
  CHECK (integrity_hash_new ("hmac(sha256)", NULL, 0, err, sizeof err)
         == NULL);
  CHECK (integrity_hash_new ("nosuchhash", NULL, 0, err, sizeof err)
         == NULL);
  CHECK (integrity_hash_new ("sha256", key, 32, err, sizeof err) == NULL);
}

/* The table line of a device opened on a hand-made 16 MiB volume. */
static void
test_table_line (void)
{
  struct memdev m;
  struct integrity_io io;
  struct integrity_options opt = { .device_bytes = 16 << 20,
                                   .readonly = true };
  struct integrity_dev *d;
  char err[256], line[512];

  memdev_init (&m, 16 << 20);
  make_sb (m.buf, 4, 15, 32, 11, INTEGRITY_SB_FIXED_PADDING, 0);
  io = memdev_io (&m);
  /* An empty journal: every sector's commit id of seq 0. */
  for (uint32_t s = 0; s < 11; s++)
    for (uint32_t j = 0; j < 88; j++) {
      uint8_t *p = m.buf + (8 + s * 88 + j) * 512;
      uint64_t id = 0x1111111111111111ull ^ ((uint64_t) s << 32 ^ j);

      for (int i = 0; i < 8; i++)
        p[504 + i] = id >> (8 * i);
      for (int e = 0; j < 8 && e < 10; e++)
        memset (p + e * 48 + 4, 0xff, 4);
    }
  d = integrity_open (&io, &opt, err, sizeof err);
  REQUIRE (d != NULL, "%s", err);
  integrity_table (d, line, sizeof line);
  CHECK_MSG (strcmp (line, "0 32 J 6 journal_sectors:968 "
                     "interleave_sectors:32768 buffer_sectors:128 "
                     "journal_watermark:50 commit_time:10000 fix_padding")
             == 0, "table %s", line);
  integrity_status (d, line, sizeof line);
  CHECK_MSG (strcmp (line, "0 29744 -") == 0, "status %s", line);
  CHECK (integrity_data_sectors (d) == 29744);
  CHECK (m.writes == 0);
  integrity_close (d);
  free (m.buf);
}

int
main (void)
{
  test_sb_parse ();
  test_geom_16mib ();
  test_geom_two_areas ();
  test_geom_4k ();
  test_geom_hostile ();
  test_tags ();
  test_table_line ();
  if (failures)
    fprintf (stderr, "%d failures\n", failures);
  return failures != 0;
}
