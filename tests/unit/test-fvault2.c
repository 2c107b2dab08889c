/* SPDX-License-Identifier: GPL-2.0-or-later */
/* luks/fvault2-*.c: the FileVault2 metadata reader on cryptsetup's
 * test image (tests/data/testdata/cryptsetup/fvault2-images.tar.xz,
 * its first 9 MiB, which hold all its metadata) and on hostile changes
 * of it: offsets and lengths that point outside the block, past 1 GiB
 * or past the image, checksums that do not match, property lists cut
 * anywhere.  Every case must end in a refusal with a reason or in the
 * right layout, never in a read outside a buffer (run under ASan by
 * make check-asan).  Exit 0 pass, 77 skip (no image), 1 fail. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../luks/fvault2.h"
#include "check.h"

#define IMAGE_BYTES (9u << 20)
#define DISKLABEL   4096u           /* the test image's disk label */
#define ENCRYPTED   8392704u        /* its first encrypted block */

static uint8_t *image;              /* the real image's first 9 MiB */
static uint8_t *work;               /* a copy to damage */
static size_t work_size;            /* bytes of WORK readable */

/* fvault2_read_fn over WORK: nothing beyond WORK_SIZE. */
static int
mem_read (void *opaque, void *buf, size_t len, uint64_t offset)
{
  (void) opaque;
  if (offset > work_size || len > work_size - offset)
    return -1;
  memcpy (buf, work + offset, len);
  return 0;
}

/* CRC-32C, table-driven (the reader computes it bit by bit). */
static uint32_t
crc32c (uint32_t crc, const uint8_t *p, size_t len)
{
  static uint32_t table[256];
  uint32_t c;
  int i, k;

  if (table[1] == 0)
    for (i = 0; i < 256; i++) {
      for (c = i, k = 0; k < 8; k++)
        c = c & 1 ? c >> 1 ^ 0x82f63b78u : c >> 1;
      table[i] = c;
    }
  while (len--)
    crc = table[(crc ^ *p++) & 0xff] ^ crc >> 8;
  return crc;
}

static void
put_le (uint8_t *p, uint64_t v, unsigned n)
{
  while (n--) {
    *p++ = v;
    v >>= 8;
  }
}

/* Signs the block of SIZE bytes at P again after a change. */
static void
resign (uint8_t *p, size_t size)
{
  put_le (p, crc32c (0xffffffffu, p + 8, size - 8), 4);
}

static void
reset (void)
{
  memcpy (work, image, IMAGE_BYTES);
  work_size = IMAGE_BYTES;
}

/* The layout of WORK must be refused with a reason holding WANT. */
static void
expect_refused (const char *what, const char *want)
{
  struct fvault2_layout l;
  char why[256] = "";

  if (check_that (fvault2_read_layout (mem_read, NULL, &l, why,
                                       sizeof why) == -1,
                  "%s: accepted", what))
    CHECK_MSG (strstr (why, want) != NULL, "%s: reason '%s', wanted '%s'",
               what, why, want);
  printf ("refused: %s: %s\n", what, why);
}

static void
test_real_image (void)
{
  struct fvault2_layout l;
  char why[256] = "";

  reset ();
  REQUIRE (fvault2_read_layout (mem_read, NULL, &l, why, sizeof why) == 0,
           "the test image: %s", why);
  CHECK (l.block_size == 4096);
  CHECK (l.volume_offset == 67108864);    /* cryptsetup fvault2Dump */
  CHECK (l.volume_size == 167772160);
  CHECK (fvault2_has_magic (image, FVAULT2_HEADER_BYTES));
  CHECK (!fvault2_has_magic (image, FVAULT2_HEADER_BYTES - 1));
}

static void
test_header (void)
{
  reset ();
  memset (work, 0, FVAULT2_HEADER_BYTES);
  expect_refused ("zeros", "no Core Storage");
  reset ();
  work[200] ^= 1;
  expect_refused ("a bit flipped", "checksum");
  reset ();
  put_le (work + 168, 32, 4);
  resign (work, FVAULT2_HEADER_BYTES);
  expect_refused ("a 32-byte metadata key", "key size");
  reset ();
  put_le (work + 96, 0, 4);
  resign (work, FVAULT2_HEADER_BYTES);
  expect_refused ("block size 0", "block size");
}

static void
test_offsets (void)
{
  uint64_t vgd;
  static const uint64_t huge[] = {
    UINT64_MAX, UINT64_MAX / 4096, (1u << 30) / 4096 + 1,
  };
  size_t i;

  for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    reset ();
    put_le (work + 104, huge[i], 8);
    resign (work, FVAULT2_HEADER_BYTES);
    expect_refused ("disk label far away", "beyond 1 GiB");
  }
  reset ();
  put_le (work + DISKLABEL + 220, UINT32_MAX, 4);
  resign (work + DISKLABEL, FVAULT2_BLOCK_BYTES);
  expect_refused ("descriptor 4 GiB into the disk label", "beyond 1 GiB");
  reset ();
  vgd = DISKLABEL + (image[DISKLABEL + 220] | image[DISKLABEL + 221] << 8);
  for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    reset ();
    put_le (work + vgd + 32, huge[i], 8);
    expect_refused ("encrypted metadata far away", "beyond 1 GiB");
  }
  reset ();
  put_le (work + vgd + 32, (1u << 30) / 4096 - 1, 8);
  put_le (work + vgd + 8, UINT64_MAX, 8);
  expect_refused ("encrypted metadata past the image", "cannot read");
  reset ();
  put_le (work + vgd + 8, UINT64_MAX, 8);   /* stops at a zero block */
  CHECK (fvault2_read_layout (mem_read, NULL, &(struct fvault2_layout) {0},
                              (char[256]) {0}, 256) == 0);
  reset ();
  put_le (work + vgd + 8, 0, 8);
  expect_refused ("no encrypted blocks", "no logical volume");
}

static void
test_truncated (void)
{
  static const size_t sizes[] = {
    0, 1, 511, 512, DISKLABEL, DISKLABEL + 8191, ENCRYPTED,
    ENCRYPTED + 100, ENCRYPTED + 8192,
  };
  size_t i;

  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    reset ();
    work_size = sizes[i];
    expect_refused ("truncated", "cannot read");
  }
}

/* A decrypted block of type 0x001a whose property list is XML, placed
 * at OFF with XML_SIZE bytes claimed: the size it gives, or 0. */
static uint64_t
size_from (const char *xml, uint32_t off, uint32_t xml_size)
{
  uint8_t block[FVAULT2_BLOCK_BYTES] = { 0 };
  struct fvault2_layout l = { .block_size = 4096 };
  unsigned found = 0;
  char why[256] = "";
  size_t n = strlen (xml);

  put_le (block + 10, 0x001a, 2);
  put_le (block + 128, off, 4);
  put_le (block + 132, xml_size, 4);
  if (off < sizeof block)
    memcpy (block + off, xml, n < sizeof block - off ? n : sizeof block - off);
  if (fvault2_parse_block (block, &l, &found, why, sizeof why) == -1) {
    CHECK_MSG (why[0] != '\0' && found == 0, "refused without a reason");
    return 0;
  }
  CHECK (found == FVAULT2_FOUND_SIZE);
  return l.volume_size;
}

#define KEY "<key>com.apple.corestorage.lv.size</key>"

/* A key block (type 0x0019) whose property list is at OFF, SIZE bytes:
 * whether it passes. */
static bool
keys_pass (uint32_t off, uint32_t size)
{
  uint8_t block[FVAULT2_BLOCK_BYTES] = { 0 };
  struct fvault2_layout l = { .block_size = 4096 };
  unsigned found = 0;
  char why[256] = "";

  put_le (block + 10, 0x0019, 2);
  put_le (block + 112, off, 4);
  put_le (block + 116, size, 4);
  return fvault2_parse_block (block, &l, &found, why, sizeof why) == 0;
}

static void
test_plist (void)
{
  const char *ok = KEY "<integer size=\"64\">0xa000000</integer>";
  uint32_t n = strlen (ok);

  CHECK (size_from (ok, 512, n) == 0xa000000);
  CHECK (size_from (ok, 8192 - n, n) == 0xa000000);
  CHECK (size_from (ok, 8192 - n + 1, n) == 0);       /* past the end */
  CHECK (size_from (ok, 512, n - 1) == 0);            /* tag cut off */
  CHECK (size_from (ok, 512, UINT32_MAX) == 0);
  CHECK (size_from (ok, UINT32_MAX, 2) == 0);         /* wraps in 32 bits */
  CHECK (size_from (ok, 8192, 0) == 0);
  CHECK (size_from (ok, 8193, 0) == 0);
  CHECK (size_from (KEY "<integer>0</integer>", 512, 64) == 0);
  CHECK (size_from (KEY "<integer>ffffffffffffffffff</integer>", 512, 80)
         == 0);
  CHECK (size_from (KEY "<integer></integer>", 512, 64) == 0);
  CHECK (size_from (KEY "<integer", 512, 64) == 0);
  CHECK (size_from (KEY "<integer>10", 512, 64) == 0);
  CHECK (size_from (KEY "<string>10</string>", 512, 64) == 0);
  CHECK (size_from (KEY "<integer>1<x/>0</integer>" KEY "<integer>20"
                    "</integer>", 512, 200) == 0x20);
  CHECK (size_from ("<a/>" KEY "<integer>10</integer>", 512, 200) == 0x10);
  /* Sums that wrap in 32 bits, which cryptsetup 2.6 lets through. */
  CHECK (size_from (ok, 0xfffff000u, 0x2000) == 0);
  CHECK (keys_pass (512, 1024));
  CHECK (keys_pass (0, 8192));
  CHECK (!keys_pass (0xfffff000u, 0x2000));
  CHECK (!keys_pass (4096, 4097));
}

static bool
load_image (const char *top)
{
  char tarball[PATH_MAX + 64], cmd[2 * PATH_MAX + 200];
  FILE *fp;
  size_t n;

  snprintf (tarball, sizeof tarball, "%s/tests/data/testdata/cryptsetup/"
            "fvault2-images.tar.xz", top);
  if (access (tarball, R_OK) != 0)
    snprintf (tarball, sizeof tarball, "%s/../shared/testdata/cryptsetup/"
              "fvault2-images.tar.xz", top);
  if (access (tarball, R_OK) != 0)
    return false;
  snprintf (cmd, sizeof cmd, "tar -xJOf '%s' fvault2-images/small "
            "2>/dev/null | head -c %u", tarball, IMAGE_BYTES);
  image = malloc (IMAGE_BYTES);
  work = malloc (IMAGE_BYTES);
  REQUIRE (image && work && (fp = popen (cmd, "r")) != NULL, "%s", cmd);
  n = fread (image, 1, IMAGE_BYTES, fp);
  pclose (fp);
  REQUIRE (n == IMAGE_BYTES, "%s: %zu bytes", tarball, n);
  return true;
}

int
main (void)
{
  char top[PATH_MAX];

  REQUIRE (check_topdir (top, sizeof top), "readlink /proc/self/exe");
  test_plist ();
  if (!load_image (top)) {
    printf ("SKIP: fvault2-images.tar.xz is in neither tests/data nor "
            "../shared\n");
    return failures ? 1 : 77;
  }
  test_real_image ();
  test_header ();
  test_offsets ();
  test_truncated ();
  free (image);
  free (work);
  printf ("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
