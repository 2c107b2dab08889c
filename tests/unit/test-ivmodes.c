/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's last IV modes without the kernel: lmk (loop-AES) and tcw
 * (TrueCrypt CBC before 4.1).
 *   - lmk_iv, tcw_iv and tcw_whiten against tests/ivmodes-vectors.py,
 *     which computes them apart from the C code (MD5 from RFC 1321,
 *     CRC-32 from zlib);
 *   - the sector cipher against tests/data/kernel-ivmodes.kat, what the
 *     Linux 6.1 kernel wrote (tests/test-kernel-ivmodes.sh): encryption
 *     gives the kernel's ciphertext, decryption the pattern, in place
 *     and not, a sector at a time and both at once;
 *   - loop-AES key files (luks/loopaes.c): their parsing, cryptsetup's
 *     refusals, and keys against Python's hashlib. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../crypto/cipher.h"
#include "../../crypto/lmk.h"
#include "../../crypto/secmem.h"
#include "../../crypto/tcw.h"
#include "../../luks/loopaes.h"
#include "check.h"

#define SECTOR 512

static void
unhex (const char *hex, uint8_t *out, size_t n)
{
  size_t i;
  unsigned v;

  for (i = 0; i < n; i++) {
    sscanf (hex + 2 * i, "%2x", &v);
    out[i] = v;
  }
}

/* The KAT pattern: byte I of sector S is (7 I + 13 S + 1) mod 256. */
static void
pattern (uint8_t *buf, uint64_t sector, size_t sectors)
{
  size_t i;

  for (i = 0; i < sectors * SECTOR; i++)
    buf[i] = (7 * (i % SECTOR) + 13 * (sector + i / SECTOR) + 1) % 256;
}

/* ---- The IV functions, against tests/ivmodes-vectors.py ------------- */

static const char lmk_seed_hex[] = "716dc7f3806874893f16b6c57756e5dc";
static const char whitening_hex[] = "5c2bfff1a2554f9eb54c1afdf55596a7";
static const char iv_seed_hex[] = "521cdedcd6efc7258efeb8889cd6212f";

static const struct
{
  const char *what;
  int seeded;
  uint64_t sector;
  const char *hex;
} iv_vectors[] = {
  { "lmk", 0, 0x0ull, "f614b6d98180a6ff6b724b069de5610c" },
  { "lmk", 1, 0x0ull, "a3c3480970d2b458cf0c4bd56fc98bda" },
  { "lmk", 0, 0x46ull, "46bbd4e5370d829c23afdf25789bb494" },
  { "lmk", 1, 0x46ull, "009ffbf4c7bacb0fb3696cc756fa2345" },
  /* Above 2^56: the sector is cut to 56 bits, the top bit set. */
  { "lmk", 0, 0x123456789abcdefull, "22d91ae29b7922ddfc3cd0ad8555c8bd" },
  { "lmk", 1, 0x123456789abcdefull, "c45c35df4280cad7e2d81e0c2674d7ff" },
  { "tcw-iv", 0, 0x0ull, "521cdedcd6efc7258efeb8889cd6212f" },
  { "tcw-whitening", 0, 0x0ull, "fa373b582a6e4ecd" },
  { "tcw-iv", 0, 0x46ull, "141cdedcd6efc725c8feb8889cd6212f" },
  { "tcw-whitening", 0, 0x46ull, "1b3044e6cb693173" },
  { "tcw-iv", 0, 0x123456789abcdefull, "bdd17555b1aae42461331301fb93022e" },
  { "tcw-whitening", 0, 0x123456789abcdefull, "47fac98f97a3bc1a" },
};

static void
test_iv_functions (void)
{
  uint8_t seed[LMK_SEED_BYTES] = { 0 }, whitening[TCW_WHITENING_BYTES];
  uint8_t iv_seed[16], plain[SECTOR], want[16], got[16], sector[SECTOR];
  size_t i, j, n;

  unhex (lmk_seed_hex, seed, LMK_SEED_KEY_BYTES);
  unhex (whitening_hex, whitening, sizeof whitening);
  unhex (iv_seed_hex, iv_seed, sizeof iv_seed);
  for (i = 0; i < sizeof iv_vectors / sizeof iv_vectors[0]; i++) {
    uint64_t s = iv_vectors[i].sector;

    n = strlen (iv_vectors[i].hex) / 2;
    unhex (iv_vectors[i].hex, want, n);
    if (strcmp (iv_vectors[i].what, "lmk") == 0) {
      pattern (plain, s & 0xff, 1);
      lmk_iv (iv_vectors[i].seeded ? seed : NULL, plain, s, got, 16);
      /* An 8-byte block's IV is the state's first 8 bytes. */
      CHECK_MSG (memcmp (got, want, n) == 0, "lmk_iv, sector %#llx%s",
                 (unsigned long long) s,
                 iv_vectors[i].seeded ? ", seeded" : "");
    }
    else if (strcmp (iv_vectors[i].what, "tcw-iv") == 0) {
      tcw_iv (iv_seed, 16, s, got);
      CHECK_MSG (memcmp (got, want, 16) == 0, "tcw_iv, sector %#llx",
                 (unsigned long long) s);
      tcw_iv (iv_seed, 8, s, got);
      CHECK_MSG (memcmp (got, want, 8) == 0, "tcw_iv of 8 bytes");
    }
    else {
      /* Whitening a zero sector leaves the 8 bytes, again and again. */
      memset (sector, 0, sizeof sector);
      tcw_whiten (whitening, s, sector);
      for (j = 0; j < SECTOR; j += 8)
        if (memcmp (sector + j, want, 8) != 0)
          break;
      CHECK_MSG (j == SECTOR, "tcw_whiten, sector %#llx, at byte %zu",
                 (unsigned long long) s, j);
      tcw_whiten (whitening, s, sector);
      for (j = 0; j < SECTOR && sector[j] == 0; j++)
        ;
      CHECK_MSG (j == SECTOR, "tcw_whiten twice is no whitening");
    }
  }
}

/* ---- The kernel's known answers --------------------------------------- */

/* tests/data/kernel-ivmodes.kat, found from this binary's path
 * (TOP/tests/unit/test-ivmodes). */
static FILE *
open_kat (void)
{
  char top[4096], path[4096 + 64];

  if (!check_topdir (top, sizeof top))
    return NULL;
  snprintf (path, sizeof path, "%s/tests/data/kernel-ivmodes.kat", top);
  return fopen (path, "r");
}

static struct sector_cipher *
new_cipher (const char *spec, const uint8_t *key, size_t key_bytes,
            uint64_t iv_offset)
{
  struct sector_cipher_params p = {
    .spec = spec, .key = key, .key_size = key_bytes, .sector_size = SECTOR,
    .iv_offset = iv_offset,
  };

  return sector_cipher_new (&p);
}

/* One KAT: both ways, in place and not, each sector and both. */
static void
check_kat (const char *name, const char *spec, uint64_t iv_offset,
           uint64_t sector, const uint8_t *key, size_t key_bytes,
           const uint8_t *ct)
{
  uint8_t plain[2 * SECTOR], buf[2 * SECTOR];
  struct sector_cipher *c = new_cipher (spec, key, key_bytes, iv_offset);
  unsigned k;

  if (!check_that (c != NULL, "%s: %s did not key", name, spec))
    return;
  pattern (plain, sector, 2);
  CHECK_MSG (sector_cipher_encrypt (c, buf, plain, sizeof buf, sector) == 0
             && memcmp (buf, ct, sizeof buf) == 0,
             "%s: encryption is the kernel's", name);
  CHECK_MSG (sector_cipher_decrypt (c, buf, ct, sizeof buf, sector) == 0
             && memcmp (buf, plain, sizeof buf) == 0,
             "%s: decryption gives the pattern", name);
  for (k = 0; k < 2; k++) {
    memcpy (buf, plain + k * SECTOR, SECTOR);
    CHECK_MSG (sector_cipher_encrypt (c, buf, buf, SECTOR, sector + k) == 0
               && memcmp (buf, ct + k * SECTOR, SECTOR) == 0,
               "%s: sector %u alone, in place", name, k);
    CHECK_MSG (sector_cipher_decrypt (c, buf, buf, SECTOR, sector + k) == 0
               && memcmp (buf, plain + k * SECTOR, SECTOR) == 0,
               "%s: sector %u decrypted in place", name, k);
  }
  /* Another sector's IV (and lmk's key) gives other bytes. */
  CHECK_MSG (sector_cipher_encrypt (c, buf, plain, SECTOR, sector + 1) == 0
             && memcmp (buf, ct, SECTOR) != 0, "%s: the sector counts",
             name);
  sector_cipher_free (c);
}

static void
test_kernel_kats (void)
{
  FILE *f = open_kat ();
  char *line = NULL, name[64], spec[64], *key_hex, *ct_hex;
  unsigned long long iv_offset, sector;
  uint8_t key[4096], ct[2 * SECTOR];
  size_t cap = 0, key_bytes;
  unsigned cases = 0;

  REQUIRE (f != NULL, "tests/data/kernel-ivmodes.kat cannot be read");
  key_hex = malloc (2 * sizeof key + 1);
  ct_hex = malloc (4 * SECTOR + 1);
  REQUIRE (key_hex && ct_hex, "malloc");
  while (getline (&line, &cap, f) > 0) {
    if (line[0] == '#' || line[0] == '\n')
      continue;
    if (!check_that (sscanf (line, "%63s %63s %llu %llu %8192s %2048s",
                             name, spec, &iv_offset, &sector, key_hex,
                             ct_hex) == 6
                     && strlen (ct_hex) == 4 * SECTOR
                     && strlen (key_hex) % 2 == 0,
                     "a bad line in kernel-ivmodes.kat: %.40s", line))
      continue;
    key_bytes = strlen (key_hex) / 2;
    unhex (key_hex, key, key_bytes);
    unhex (ct_hex, ct, sizeof ct);
    check_kat (name, spec, iv_offset, sector, key, key_bytes, ct);
    cases++;
  }
  /* tcw with 16- and 8-byte blocks, lmk v2, v3, capi. */
  CHECK_MSG (cases >= 5, "%u known answers, not 5", cases);
  printf ("kernel known answers: %u cases\n", cases);
  free (line);
  free (key_hex);
  free (ct_hex);
  fclose (f);
}

/* ---- loop-AES key files ----------------------------------------------- */

static char *
keyfile_with (const char *text, size_t len)
{
  static char path[] = "/tmp/test-ivmodes-XXXXXX";
  int fd;

  strcpy (path, "/tmp/test-ivmodes-XXXXXX");
  fd = mkstemp (path);
  REQUIRE (fd != -1, "mkstemp");
  REQUIRE (write (fd, text, len) == (ssize_t) len, "write");
  close (fd);
  return path;
}

/* KEYS lines of "key-NN-abcdefghijklmnopqrstuvwxyz", each ended by EOL. */
static char *
key_lines (unsigned keys, const char *eol, size_t *len)
{
  char *text = malloc (keys * 40 + 1);
  size_t n = 0;
  unsigned i;

  REQUIRE (text != NULL, "malloc");
  for (i = 0; i < keys; i++)
    n += sprintf (text + n, "key-%02u-abcdefghijklmnopqrstuvwxyz%s", i,
                  eol);
  *len = n;
  return text;
}

/* loopaes_key of TEXT: 0 with the spec and key, or -1. */
static int
loopaes_of (const char *text, size_t len, unsigned key_bits,
            const char *hash, char **spec, uint8_t **key, size_t *key_size,
            unsigned *count)
{
  struct loopaes_params p = { .keyfile = keyfile_with (text, len),
                              .key_bits = key_bits, .hash = hash };
  int r = loopaes_key (&p, spec, key, key_size, count);

  unlink (p.keyfile);
  return r;
}

static void
check_loopaes_key (unsigned keys, unsigned key_bits, const char *eol,
                   const char *want_spec, size_t at, const char *want_hex)
{
  uint8_t want[32], *key = NULL;
  size_t len, key_size = 0;
  char *text = key_lines (keys, eol, &len), *spec = NULL;
  unsigned count = 0;

  unhex (want_hex, want, strlen (want_hex) / 2);
  if (check_that (loopaes_of (text, len, key_bits, NULL, &spec, &key,
                              &key_size, &count) == 0,
                  "loop-AES: %u keys of %u bits", keys, key_bits)) {
    CHECK_MSG (count == keys && key_size == keys * key_bits / 8,
               "loop-AES: %u keys, %zu bytes", count, key_size);
    CHECK_MSG (strcmp (spec, want_spec) == 0, "loop-AES spec %s", spec);
    CHECK_MSG (memcmp (key + at, want, strlen (want_hex) / 2) == 0,
               "loop-AES: %u keys: the key at %zu is hashlib's", keys, at);
    CHECK (sector_cipher_check_spec (spec, key_size) == 0);
  }
  secmem_free (key, key_size);
  free (spec);
  free (text);
}

static void
test_loopaes (void)
{
  static const struct { const char *text; const char *why; } bad[] = {
    { "", "empty" },
    { "abcdefghijklmnopqrst", "no end of line" },
    { "abcdefghijklmnopqrst\nabcdefghijklmnopqrst\n", "two keys" },
    { "-----BEGIN PGP MESSAGE-----\nabc\n", "GPG" },
  };
  const char *keys[LOOPAES_MAX_KEYS];
  uint8_t *key = NULL;
  size_t len, key_len, key_size = 0, i;
  char *text, *spec = NULL, buf[64];
  unsigned count;

  /* sha512 (line 0) cut to 256 bits; sha384 for 192; sha256 for 128,
   * each key's first byte XORed with 0x55 (64 keys) or 0xf4 (65). */
  check_loopaes_key (1, 256, "\n", "aes-cbc-plain64", 0,
                     "aba1e3d40d11a43c419a5d1457992c1f"
                     "2e65f192ca5da5a06d9964f4a50a7fda");
  check_loopaes_key (1, 192, "\r\n", "aes-cbc-plain64", 0,
                     "dd0d541fb8781f2136861b8011ac96aae0a882f60a0511be");
  check_loopaes_key (64, 128, "\n\n", "aes:64-cbc-lmk", 63 * 16,
                     "b9746fb5c47b3b0c2c30b59f0b316f4a");
  check_loopaes_key (65, 256, "\r", "aes:64-cbc-lmk", 64 * 32,
                     "1e8ca34b5e58c647e7417411ba2429ca"
                     "a55b62a5c5385d918dc61d09c289751e");

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK_MSG (loopaes_of (bad[i].text, strlen (bad[i].text), 0, NULL,
                           &spec, &key, &key_size, &count) == -1,
               "loop-AES refuses a key file: %s", bad[i].why);
  /* Keys of different lengths; 66 keys. */
  text = key_lines (64, "\n", &len);
  text[5] = '\n';
  CHECK (loopaes_parse (text, len, keys, &key_len) == -1);
  free (text);
  text = key_lines (66, "\n", &len);
  CHECK (loopaes_parse (text, len, keys, &key_len) == -1);
  free (text);
  text = key_lines (64, "\n", &len);
  CHECK (loopaes_parse (text, len, keys, &key_len) == 64 && key_len == 33
         && strcmp (keys[63], "key-63-abcdefghijklmnopqrstuvwxyz") == 0);
  /* A hash shorter than the key, an unknown hash, a bad key size. */
  CHECK (loopaes_of (text, len, 256, "sha1", &spec, &key, &key_size,
                     &count) == -1);
  CHECK (loopaes_of (text, len, 256, "nohash", &spec, &key, &key_size,
                     &count) == -1);
  CHECK (loopaes_of (text, len, 100, NULL, &spec, &key, &key_size,
                     &count) == -1);
  CHECK (loopaes_of (text, len, 512, NULL, &spec, &key, &key_size,
                     &count) == -1);
  free (text);
  snprintf (buf, sizeof buf, "x\n");
  CHECK (loopaes_of (buf, strlen (buf), 256, "sha512", &spec, &key,
                     &key_size, &count) == 0 && key_size == 32);
  secmem_free (key, key_size);
  free (spec);
}

int
main (void)
{
  test_iv_functions ();
  test_kernel_kats ();
  test_loopaes ();
  if (failures) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("ivmodes: all %u checks passed\n", checks);
  return 0;
}
