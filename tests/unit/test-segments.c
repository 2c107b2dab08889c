/* SPDX-License-Identifier: GPL-2.0-or-later */
/* table/segments.c and luks/bitlk-*.c: segment lists checked, walked
 * and printed as dmsetup prints them; the BitLocker layout built as
 * cryptsetup 2.6's _activate builds it; the BitLocker metadata reader on
 * a small image made here and on hostile changes of it, which must end
 * in a refusal with a reason, never in a read outside a buffer (run
 * under ASan by make check-asan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../crypto/secmem.h"
#include "../../luks/bitlk.h"
#include "../../table/segments.h"
#include "check.h"

#define MiB (1024 * 1024)

/* The layout of cryptsetup's bitlk-aes-xts-128.img (bitlkDump). */
static const struct bitlk_metadata xts128 = {
  .sector_size = 512, .kind = BITLK_NORMAL, .state_normal = true,
  .metadata_offset = { 35213312, 46256128, 57909248 },
  .volume_header_offset = 35278848, .volume_header_size = 8192,
  .protections = BITLK_PROT_PASSPHRASE,
};

static uint8_t key[32];

static struct crypt_table
shared_table (uint64_t sectors, unsigned sector_size)
{
  return (struct crypt_table) {
    .length = sectors, .cipher = (char *) "aes-xts-plain64", .key = key,
    .key_size = sizeof key, .device = (char *) "/dev/x",
    .sector_size = sector_size,
  };
}

static void
test_bitlk_layout (void)
{
  static const char want[] =
    "0 16 crypt aes-xts-plain64 KEY 68904 /dev/x 68904\n"
    "16 68760 crypt aes-xts-plain64 KEY 16 /dev/x 16\n"
    "68776 128 zero \n"
    "68904 16 zero \n"
    "68920 21424 crypt aes-xts-plain64 KEY 68920 /dev/x 68920\n"
    "90344 128 zero \n"
    "90472 22632 crypt aes-xts-plain64 KEY 90472 /dev/x 90472\n"
    "113104 128 zero \n"
    "113232 91568 crypt aes-xts-plain64 KEY 113232 /dev/x 113232";
  struct crypt_table t = shared_table (100 * MiB / 512, 512);
  struct segment_list l;
  char why[200], *got, expect[sizeof want + 64 * 9], *p;

  REQUIRE (bitlk_segments (&xts128, 100 * MiB, &l, why, sizeof why) == 0,
           "%s", why);
  CHECK (l.count == 9);
  CHECK (segment_list_check (&l, &t, 100 * MiB, why, sizeof why) == 0);
  got = segment_list_format (&l, &t, false, NULL);
  REQUIRE (got != NULL, "segment_list_format");
  /* KEY stands for the 64 zero digits of a hidden key. */
  expect[0] = '\0';
  for (p = strtok (strcpy (malloc (sizeof want), want), "\n"); p;
       p = strtok (NULL, "\n")) {
    char line[200], *k = strstr (p, "KEY");
    if (k) {
      snprintf (line, sizeof line, "%.*s%064d%s", (int) (k - p), p, 0,
                k + 3);
      p = line;
    }
    strcat (strcat (expect, *expect ? "\n" : ""), p);
  }
  CHECK_MSG (strcmp (got, expect) == 0, "layout:\n%s\nwanted:\n%s", got,
             expect);
  crypt_table_free_line (got);

  /* 4096-byte sectors: the same, with the options cryptsetup adds. */
  t = shared_table (100 * MiB / 512, 4096);
  t.flags = CT_IV_LARGE_SECTORS;
  got = segment_list_format (&l, &t, false, "254:0");
  REQUIRE (got != NULL, "segment_list_format");
  CHECK (strstr (got, "68904 254:0 68904 2 sector_size:4096 "
                 "iv_large_sectors\n16 68760") != NULL);
  crypt_table_free_line (got);
}

static void
test_bitlk_layout_refused (void)
{
  struct bitlk_metadata m = xts128;
  struct segment_list l;
  char why[200];

  m.metadata_offset[1] = m.metadata_offset[0] + 4096;     /* overlap */
  CHECK (bitlk_segments (&m, 100 * MiB, &l, why, sizeof why) == -1);
  m = xts128;
  m.metadata_offset[2] = 100 * MiB - 4096;                /* past the end */
  CHECK (bitlk_segments (&m, 100 * MiB, &l, why, sizeof why) == -1);
  m = xts128;
  m.metadata_offset[0] = 4096;                  /* inside the moved header */
  CHECK (bitlk_segments (&m, 100 * MiB, &l, why, sizeof why) == -1);
  m = xts128;
  m.volume_header_offset += 100;                /* not a whole sector */
  CHECK (bitlk_segments (&m, 100 * MiB, &l, why, sizeof why) == -1);
  m = xts128;
  m.volume_header_size = 0;
  CHECK (bitlk_segments (&m, 100 * MiB, &l, why, sizeof why) == -1);
}

/* A request split at every border, each piece where the table has it. */
static void
test_pieces (void)
{
  struct crypt_table t = shared_table (64, 512);
  struct segment_list l = { .count = 3, .seg = {
    { SEGMENT_CRYPT, 0, 8, 40, 40 },
    { SEGMENT_ZERO, 8, 8, 0, 0 },
    { SEGMENT_CRYPT, 16, 48, 16, 16 } } };
  struct segment_piece p;
  char why[200];

  CHECK (segment_list_check (&l, &t, 64 * 512, why, sizeof why) == 0);
  segment_list_piece (&l, &t, 1000, 100000, &p);
  CHECK (p.type == SEGMENT_CRYPT && p.count == 8 * 512 - 1000
         && p.table_offset == 40 * 512 + 1000);
  segment_list_piece (&l, &t, 8 * 512, 100000, &p);
  CHECK (p.type == SEGMENT_ZERO && p.count == 8 * 512);
  segment_list_piece (&l, &t, 16 * 512 + 7, 10, &p);
  CHECK (p.type == SEGMENT_CRYPT && p.count == 10
         && p.table_offset == 16 * 512 + 7);

  /* Gaps, misplaced segments and a device too small are refused. */
  l.seg[1].start = 9;
  CHECK (segment_list_check (&l, &t, 64 * 512, why, sizeof why) == -1);
  l.seg[1].start = 8;
  l.seg[0].iv_offset = 41;
  CHECK (segment_list_check (&l, &t, 64 * 512, why, sizeof why) == -1);
  l.seg[0].iv_offset = 40;
  CHECK (segment_list_check (&l, &t, 47 * 512, why, sizeof why) == -1);
  t.length = 65;
  CHECK (segment_list_check (&l, &t, 64 * 512, why, sizeof why) == -1);
  /* Whole 512-byte sectors, but not whole 4096-byte ones. */
  t = shared_table (64, 512);
  l.seg[1].length = 4;
  l.seg[2] = (struct segment) { SEGMENT_CRYPT, 12, 52, 12, 12, 0 };
  CHECK (segment_list_check (&l, &t, 64 * 512, why, sizeof why) == 0);
  t = shared_table (64, 4096);
  CHECK (segment_list_check (&l, &t, 64 * 512, why, sizeof why) == -1);
}

/* ---- The metadata reader on an image made here ---- */

#define IMAGE_BYTES (256 * 1024)
#define FVE_AT      (64 * 1024)
static uint8_t image[IMAGE_BYTES];
static size_t image_size;

static int
mem_read (void *opaque, void *buf, size_t len, uint64_t offset)
{
  (void) opaque;
  if (offset > image_size || len > image_size - offset)
    return -1;
  memcpy (buf, image + offset, len);
  return 0;
}

static void
put_le (uint8_t *p, uint64_t v, unsigned n)
{
  while (n--) {
    *p++ = v & 0xff;
    v >>= 8;
  }
}

/* A BitLocker volume header, a superblock pointing at three areas, and
 * in the first one a VMK with PROTECTION and a volume header entry. */
static void
make_image (uint16_t protection)
{
  static const uint8_t guid_normal[16] = {
    0x3b, 0xd6, 0x67, 0x49, 0x29, 0x2e, 0xd8, 0x4a,
    0x83, 0x99, 0xf6, 0xa3, 0x39, 0xe3, 0xd0, 0x01 };
  uint8_t *fve = image + FVE_AT, *e = fve + 112;
  int i;

  memset (image, 0, sizeof image);
  image_size = sizeof image;
  memcpy (image, "\xeb\x58\x90-FVE-FS-", 11);
  put_le (image + 11, 512, 2);
  memcpy (image + 160, guid_normal, 16);
  for (i = 0; i < 3; i++)
    put_le (image + 176 + 8 * i, FVE_AT + i * 0x10000, 8);
  memcpy (fve, "-FVE-FS-", 8);
  put_le (fve + 10, 2, 2);                   /* version */
  put_le (fve + 12, 4, 2);                   /* states: normal */
  put_le (fve + 14, 4, 2);
  put_le (fve + 16, IMAGE_BYTES, 8);
  put_le (fve + 64, 48 + 36 + 24, 4);        /* metadata size */
  put_le (fve + 100, 0x8004, 2);             /* AES-XTS-128 */
  put_le (e, 36, 2);                         /* VMK entry */
  put_le (e + 2, 0x0002, 2);
  put_le (e + 8 + 26, protection, 2);
  e += 36;
  put_le (e, 24, 2);                         /* volume header entry */
  put_le (e + 2, 0x000f, 2);
  put_le (e + 8, 0x38000, 8);
  put_le (e + 16, 8192, 8);
}

static int
read_image (struct bitlk_metadata *m, char *why, size_t size)
{
  return bitlk_read_metadata (mem_read, NULL, m, why, size);
}

static void
test_reader (void)
{
  struct bitlk_metadata m;
  char why[200];

  make_image (0x2000);
  REQUIRE (read_image (&m, why, sizeof why) == 0, "%s", why);
  CHECK (!m.togo && m.sector_size == 512 && m.kind == BITLK_NORMAL
         && m.state_normal && m.encryption == 0x8004);
  CHECK (m.metadata_offset[2] == FVE_AT + 0x20000);
  CHECK (m.volume_header_offset == 0x38000 && m.volume_header_size == 8192);
  CHECK (m.protections == BITLK_PROT_PASSPHRASE);
  CHECK (bitlk_has_magic (image, 512));
  CHECK (bitlk_has_magic (image, 11));          /* a header cut short */
  CHECK (!bitlk_has_magic (image, 10));

  make_image (0x0000);
  REQUIRE (read_image (&m, why, sizeof why) == 0, "%s", why);
  CHECK (m.protections == BITLK_PROT_CLEAR_KEY);

  /* FAT's "MSWIN4.1" alone is not BitLocker To Go. */
  make_image (0x2000);
  memcpy (image + 3, "MSWIN4.1", 8);
  CHECK (!bitlk_has_magic (image, 512));
}

/* Damage that must be refused with a reason. */
static void
test_reader_refuses (void)
{
  static const struct { size_t at; uint64_t value; unsigned n; } cases[] = {
    { 0, 0x52, 1 },                       /* version 1 boot code */
    { 11, 1024, 2 },                      /* sector size */
    { 176, IMAGE_BYTES - 8, 8 },          /* FVE area past the end */
    { FVE_AT + 10, 1, 2 },                /* FVE version */
    { FVE_AT + 64, 20, 4 },               /* metadata size too small */
    { FVE_AT + 64, 0x10000, 4 },          /* ... too large */
    { FVE_AT + 112, 37, 2 },              /* entry overruns */
    { FVE_AT + 112, 30, 2 },              /* VMK entry too short */
    { FVE_AT + 112 + 36, 0, 2 },          /* no volume header entry */
  };
  struct bitlk_metadata m;
  char why[200];
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    make_image (0x2000);
    put_le (image + cases[i].at, cases[i].value, cases[i].n);
    why[0] = '\0';
    CHECK_MSG (read_image (&m, why, sizeof why) == -1 && why[0],
               "case %zu was not refused", i);
  }
  /* Cut anywhere: never a read beyond the end. */
  for (i = 0; i < FVE_AT + 112 + 60; i += 7) {
    make_image (0x2000);
    image_size = i;
    CHECK_MSG (read_image (&m, why, sizeof why) == -1,
               "cut at %zu was not refused", i);
  }
}

int
main (void)
{
  test_bitlk_layout ();
  test_bitlk_layout_refused ();
  test_pieces ();
  test_reader ();
  test_reader_refuses ();
  if (failures == 0)
    printf ("test-segments: %u checks passed\n", checks);
  return failures != 0;
}
