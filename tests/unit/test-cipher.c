/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sector_cipher: known answers (IEEE 1619-2007 XTS vectors, digests that
 * tests/cipher-vectors.py makes with the oracle), the kernel's IV
 * arithmetic read back from real ciphertext, round trips, in-place use,
 * encryption into pieces, threads, and every refusal with its message;
 * all of it once with
 * AES from OpenSSL and once from libgcrypt (its XTS, and its ECB under
 * the XTS construction and CBC), and which library each cipher uses.
 *
 *   test-cipher                  run the tests
 *   test-cipher --bench          MB/s of AES-XTS and CBC-ESSIV on one
 *                                core, in place and as the engine's
 *                                writes use it, with each library's AES
 *   test-cipher --bench-out-of-place  only the latter (a few seconds)
 *   test-cipher --print-digests  our digests, for cipher-vectors.py */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gcrypt.h>
#include <openssl/evp.h>

#include "../../common/cleanup.h"
#include "../../crypto/cipher.h"
#include "cipher-vectors.h"


#include "check.h"

/* The fixed inputs that tests/cipher-vectors.py uses too. */
#define PLAIN_BYTES 16384
#define START_SECTOR UINT64_C (0xfffffff0)
/* The largest key of a vector: a cascade of three 64-byte XTS keys. */
#define VECTOR_KEY_MAX 192

static uint8_t plain[PLAIN_BYTES];
/* Whose AES-XTS every cipher of the tests uses. */
static enum sector_cipher_library library = SECTOR_CIPHER_LIB_OPENSSL;

static void
make_plain (void)
{
  size_t i;

  for (i = 0; i < PLAIN_BYTES; i++)
    plain[i] = (uint8_t) (i * 7 + (i >> 9));
}

static void
make_key (uint8_t *key, size_t len, enum key_style style)
{
  size_t i, n = style == KEY_DUP ? len / 2 : len;

  for (i = 0; i < len; i++)
    key[i] = (uint8_t) (0x11 + (i % n) * 0x3b);
}

static size_t
unhex (const char *hex, uint8_t *out)
{
  size_t n = strlen (hex) / 2, i;
  unsigned byte;

  for (i = 0; i < n; i++) {
    if (sscanf (hex + 2 * i, "%2x", &byte) != 1)
      abort ();
    out[i] = (uint8_t) byte;
  }
  return n;
}

static void
sha256_hex (const void *data, size_t len, char out[65])
{
  uint8_t md[32];
  unsigned md_len;
  size_t i;

  EVP_Digest (data, len, md, &md_len, EVP_sha256 (), NULL);
  for (i = 0; i < 32; i++)
    sprintf (out + 2 * i, "%02x", md[i]);
}

static struct sector_cipher *
new_cipher (const char *spec, const uint8_t *key, size_t key_bytes,
            unsigned sector_size, uint64_t iv_offset, bool large)
{
  struct sector_cipher_params p = {
    .spec = spec, .key = key, .key_size = key_bytes,
    .sector_size = sector_size, .iv_offset = iv_offset,
    .iv_large_sectors = large, .library = library,
  };
  return sector_cipher_new (&p);
}

/* ---- IEEE 1619-2007 XTS-AES ------------------------------------------ */

static void
check_ieee_vector (const struct ieee_vector *v, const char *spec)
{
  uint8_t key[VECTOR_KEY_MAX], want[512], got[512], pt[512] = { 0 };
  size_t key_bytes = unhex (v->key, key), len, i;
  struct sector_cipher *c = new_cipher (spec, key, key_bytes, 512, 0,
                                        false);

  CHECK (c != NULL);
  if (c == NULL)
    return;
  if (v->plaintext != NULL)
    len = unhex (v->plaintext, pt);
  else
    for (len = 512, i = 0; i < len; i++)
      pt[i] = (uint8_t) i;
  CHECK (unhex (v->ciphertext, want) == len);

  CHECK (sector_cipher_encrypt (c, got, pt, 512, v->sequence) == 0);
  if (memcmp (got, want, len) != 0) {
    fprintf (stderr, "IEEE 1619 vector %d (%s): wrong ciphertext\n",
             v->number, spec);
    failures++;
  }
  memcpy (got, want, len);     /* and back, from the published bytes */
  CHECK (sector_cipher_decrypt (c, got, got, 512, v->sequence) == 0);
  CHECK (memcmp (got, pt, len) == 0);
  sector_cipher_free (c);
}

static void
test_ieee_vectors (void)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (ieee_vectors); i++) {
    check_ieee_vector (&ieee_vectors[i], "aes-xts-plain64");
    check_ieee_vector (&ieee_vectors[i], "capi:xts(aes)-plain64");
  }
}

/* Published block cipher and LRW vectors: the first bytes of sector 0,
 * both ways. */
static void
test_block_vectors (void)
{
  uint8_t key[VECTOR_KEY_MAX], pt[512] = { 0 }, want[16], got[512];
  const struct block_vector *v;
  struct sector_cipher *c;
  size_t i, key_bytes, len;

  for (i = 0; i < ARRAY_SIZE (block_vectors); i++) {
    v = &block_vectors[i];
    key_bytes = unhex (v->key, key);
    len = unhex (v->plaintext, pt);
    CHECK (unhex (v->ciphertext, want) == len);
    c = new_cipher (v->spec, key, key_bytes, 512, 0, false);
    CHECK (c != NULL);
    if (c == NULL)
      continue;
    CHECK (sector_cipher_encrypt (c, got, pt, 512, 0) == 0);
    CHECK_MSG (memcmp (got, want, len) == 0, "%s: wrong ciphertext",
               v->spec);
    CHECK (sector_cipher_decrypt (c, got, got, 512, 0) == 0);
    CHECK_MSG (memcmp (got, pt, len) == 0, "%s: wrong plaintext", v->spec);
    sector_cipher_free (c);
  }
}

/* ---- digests from the Python model ------------------------------------ */

/* SHA-256 over the encryption (or decryption) of the plaintext pattern
 * under every sector size × iv_offset × iv_large_sectors, in the order
 * of tests/cipher-vectors.py; false if a cipher cannot be made. */
static bool
sweep_digest (const struct digest_vector *v, bool encrypt, char out[65])
{
  static const unsigned sizes[] = { 512, 1024, 2048, 4096 };
  static const uint64_t offsets[] = { 0, 24 };
  uint8_t key[VECTOR_KEY_MAX], *all = malloc (16 * PLAIN_BYTES), *dst = all;
  size_t s, o, l;

  make_key (key, v->key_bytes, v->key_style);
  for (s = 0; s < 4; s++)
    for (o = 0; o < 2; o++)
      for (l = 0; l < 2; l++, dst += PLAIN_BYTES) {
        struct sector_cipher *c = new_cipher (v->spec, key, v->key_bytes,
                                              sizes[s], offsets[o], l);
        int r = -1;
        if (c != NULL)
          r = (encrypt ? sector_cipher_encrypt : sector_cipher_decrypt)
            (c, dst, plain, PLAIN_BYTES, START_SECTOR);
        sector_cipher_free (c);
        if (r == -1) {
          free (all);
          return false;
        }
      }
  sha256_hex (all, 16 * PLAIN_BYTES, out);
  free (all);
  return true;
}

static void
test_digests (void)
{
  char got[65];
  size_t i;

  for (i = 0; i < ARRAY_SIZE (digest_vectors); i++) {
    const struct digest_vector *v = &digest_vectors[i];
    bool ok = sweep_digest (v, true, got);
    CHECK (ok);
    if (ok && strcmp (got, v->encrypt_sha256) != 0) {
      fprintf (stderr, "%s (%u-byte key): encryption digest %s\n",
               v->spec, v->key_bytes, got);
      failures++;
    }
    ok = sweep_digest (v, false, got);
    CHECK (ok);
    if (ok && strcmp (got, v->decrypt_sha256) != 0) {
      fprintf (stderr, "%s (%u-byte key): decryption digest %s\n",
               v->spec, v->key_bytes, got);
      failures++;
    }
  }
}

static void
print_digests (void)
{
  char enc[65], dec[65];
  size_t i;

  make_plain ();
  for (i = 0; i < ARRAY_SIZE (digest_vectors); i++) {
    const struct digest_vector *v = &digest_vectors[i];
    if (sweep_digest (v, true, enc) && sweep_digest (v, false, dec))
      printf ("%s %u %s %s %s\n", v->spec, v->key_bytes,
              v->key_style == KEY_DUP ? "dup" : "pattern", enc, dec);
  }
}

/* ---- IVs read back from ciphertext ------------------------------------ */

/* With a zero plaintext, CBC's first ciphertext block is E_K(IV), so
 * decrypting it with the raw cipher gives back the IV the kernel would
 * have used.  The IV sectors below are written out by hand from
 * crypt_convert_block_skcipher: (sector + iv_offset), shifted right by
 * log2 (sector_size / 512) only with iv_large_sectors. */
struct iv_case
{
  unsigned sector_size;
  uint64_t iv_offset;
  bool large;
  uint64_t sector;           /* 512-byte sector of the request */
  uint64_t iv_sector;        /* what the kernel puts into the IV */
};

static const struct iv_case iv_cases[] = {
  { 512, 0, false, 0, 0 },
  { 512, 7, false, 100, 107 },
  { 512, 0, false, UINT64_C (0x100000005), UINT64_C (0x100000005) },
  { 4096, 0, false, 8, 8 },          /* LUKS2 default: 512-byte count */
  { 4096, 0, true, 8, 1 },
  { 4096, 24, true, 8, 4 },          /* (8 + 24) >> 3 */
  { 4096, 24, false, 8, 32 },
  { 1024, 8, true, 6, 7 },           /* (6 + 8) >> 1 */
  { 2048, 0, true, UINT64_C (0x400000000), UINT64_C (0x100000000) },
};

static void
raw_ecb (const char *name, const uint8_t *key, const uint8_t *in,
         uint8_t *out, bool encrypt)
{
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  int len;

  EVP_CipherInit_ex (ctx, EVP_get_cipherbyname (name), NULL, key, NULL,
                     encrypt);
  EVP_CIPHER_CTX_set_padding (ctx, 0);
  EVP_CipherUpdate (ctx, out, &len, in, 16);
  EVP_CIPHER_CTX_free (ctx);
}

/* The IV we expect for MODE at IV_SECTOR, computed here from dm-crypt's
 * description of each generator. */
static void
expected_iv (const char *mode, const uint8_t key[16], uint64_t iv_sector,
             unsigned sector_size, uint8_t iv[16])
{
  uint8_t salt[32], seed[16] = { 0 };
  unsigned i;

  memset (iv, 0, 16);
  if (strcmp (mode, "plain") == 0)
    for (i = 0; i < 4; i++)
      iv[i] = (uint8_t) (iv_sector >> (8 * i));
  else if (strcmp (mode, "plain64") == 0)
    for (i = 0; i < 8; i++)
      iv[i] = (uint8_t) (iv_sector >> (8 * i));
  else if (strcmp (mode, "plain64be") == 0)
    for (i = 0; i < 8; i++)
      iv[15 - i] = (uint8_t) (iv_sector >> (8 * i));
  else if (strcmp (mode, "benbi") == 0)   /* AES: 32 blocks per 512 */
    for (i = 0; i < 8; i++)
      iv[15 - i] = (uint8_t) (((iv_sector << 5) + 1) >> (8 * i));
  else if (strcmp (mode, "essiv:sha256") == 0) {
    for (i = 0; i < 8; i++)
      seed[i] = (uint8_t) (iv_sector >> (8 * i));
    EVP_Digest (key, 16, salt, NULL, EVP_sha256 (), NULL);
    raw_ecb ("AES-256-ECB", salt, seed, iv, true);
  }
  else if (strcmp (mode, "eboiv") == 0) {
    for (i = 0; i < 8; i++)
      seed[i] = (uint8_t) ((iv_sector * sector_size) >> (8 * i));
    raw_ecb ("AES-128-ECB", key, seed, iv, true);
  }
}

static void
check_iv_case (const char *mode, const struct iv_case *t)
{
  static const uint8_t zero[4096];
  uint8_t key[16], out[4096], iv[16], want[16];
  char spec[64];
  struct sector_cipher *c;

  make_key (key, 16, KEY_PATTERN);
  snprintf (spec, sizeof spec, "aes-cbc-%s", mode);
  c = new_cipher (spec, key, 16, t->sector_size, t->iv_offset, t->large);
  CHECK (c != NULL);
  if (c == NULL)
    return;
  CHECK (sector_cipher_encrypt (c, out, zero, t->sector_size,
                                t->sector) == 0);
  raw_ecb ("AES-128-ECB", key, out, iv, false);
  expected_iv (mode, key, t->iv_sector, t->sector_size, want);
  if (memcmp (iv, want, 16) != 0) {
    fprintf (stderr, "%s: wrong IV for sector %" PRIu64 " (size %u, "
             "iv_offset %" PRIu64 "%s)\n", spec, t->sector,
             t->sector_size, t->iv_offset, t->large ? ", large" : "");
    failures++;
  }
  sector_cipher_free (c);
}

/* sector_cipher_encrypt_pieces: pieces of 1 to 130 sectors, each into
 * its own buffer, give what one sector_cipher_encrypt of the whole
 * gives, for every cipher, with the CBC groups (128 sectors) crossing
 * pieces, and across an IV wrap (large sectors, an offset near 2^64). */
static void
check_pieces (const char *spec, const uint8_t *key, size_t key_bytes,
              unsigned sector_size, uint64_t iv_offset, bool large,
              const uint8_t *src, uint8_t *whole, size_t nbytes)
{
  static const unsigned cycle[] = { 3, 1, 40, 130, 7, 64 };
  uint8_t *dsts[256];
  size_t lens[256], off = 0, n = 0, i;
  struct sector_cipher *c = new_cipher (spec, key, key_bytes, sector_size,
                                        iv_offset, large);

  CHECK (c != NULL);
  if (c == NULL)
    return;
  CHECK (sector_cipher_encrypt (c, whole, src, nbytes, 0) == 0);
  for (; off < nbytes && n < ARRAY_SIZE (dsts); n++) {
    lens[n] = (size_t) cycle[n % ARRAY_SIZE (cycle)] * sector_size;
    if (lens[n] > nbytes - off)
      lens[n] = nbytes - off;
    dsts[n] = malloc (lens[n]);
    CHECK (dsts[n] != NULL);
    off += lens[n];
  }
  CHECK (off == nbytes);
  CHECK (sector_cipher_encrypt_pieces (c, dsts, lens, n, src, 0) == 0);
  for (i = 0, off = 0; i < n; off += lens[i++]) {
    CHECK_MSG (memcmp (dsts[i], whole + off, lens[i]) == 0,
               "%s, %u-byte sectors: piece %zu of %zu differs", spec,
               sector_size, i, n);
    free (dsts[i]);
  }
  sector_cipher_free (c);
}

static void
test_pieces (void)
{
  static const unsigned sizes[] = { 512, 4096 };
  const size_t nbytes = 1 << 20;
  uint8_t key[VECTOR_KEY_MAX], *src = malloc (nbytes);
  uint8_t *whole = malloc (nbytes);
  size_t i, s;

  CHECK (src && whole);
  for (i = 0; i < nbytes; i++)
    src[i] = (uint8_t) (i * 131 + (i >> 12));
  for (i = 0; i < ARRAY_SIZE (digest_vectors); i++)
    for (s = 0; s < ARRAY_SIZE (sizes); s++) {
      make_key (key, digest_vectors[i].key_bytes,
                digest_vectors[i].key_style);
      check_pieces (digest_vectors[i].spec, key, digest_vectors[i].key_bytes,
                    sizes[s], 0, false, src, whole, nbytes);
    }
  make_key (key, 32, KEY_PATTERN);
  check_pieces ("aes-cbc-essiv:sha256", key, 32, 4096, UINT64_MAX - 1023,
                true, src, whole, nbytes);
  free (src);
  free (whole);
}

static void
test_iv_arithmetic (void)
{
  static const char *const modes[] = {
    "null", "plain", "plain64", "plain64be", "benbi", "essiv:sha256",
    "eboiv",
  };
  size_t m, i;

  for (m = 0; m < ARRAY_SIZE (modes); m++)
    for (i = 0; i < ARRAY_SIZE (iv_cases); i++)
      check_iv_case (modes[m], &iv_cases[i]);
}

/* ---- round trips, in place, spellings --------------------------------- */

static void
test_round_trips (void)
{
  uint8_t key[VECTOR_KEY_MAX], *enc = malloc (PLAIN_BYTES), *buf = malloc (PLAIN_BYTES);
  size_t i;

  for (i = 0; i < ARRAY_SIZE (digest_vectors); i++) {
    const struct digest_vector *v = &digest_vectors[i];
    struct sector_cipher *c;

    make_key (key, v->key_bytes, v->key_style);
    c = new_cipher (v->spec, key, v->key_bytes, 4096, 0, false);
    CHECK (c != NULL);
    if (c == NULL)
      continue;
    CHECK (sector_cipher_encrypt (c, enc, plain, PLAIN_BYTES, 64) == 0);
    CHECK (memcmp (enc, plain, PLAIN_BYTES) != 0);
    memcpy (buf, plain, PLAIN_BYTES);         /* in place == out of place */
    CHECK (sector_cipher_encrypt (c, buf, buf, PLAIN_BYTES, 64) == 0);
    CHECK (memcmp (buf, enc, PLAIN_BYTES) == 0);
    CHECK (sector_cipher_decrypt (c, buf, buf, PLAIN_BYTES, 64) == 0);
    CHECK (memcmp (buf, plain, PLAIN_BYTES) == 0);
    CHECK (sector_cipher_decrypt (c, buf, enc, PLAIN_BYTES, 64) == 0);
    CHECK (memcmp (buf, plain, PLAIN_BYTES) == 0);
    CHECK (sector_cipher_sector_size (c) == 4096);
    sector_cipher_free (c);
  }
  free (enc);
  free (buf);
}

/* One call over the whole buffer equals calls over pieces of 3 sectors,
 * whose edges fall anywhere inside the runs the XTS code batches. */
static void
test_split_calls (void)
{
  static const unsigned sizes[] = { 512, 1024 };
  uint8_t key[VECTOR_KEY_MAX], *whole = malloc (PLAIN_BYTES);
  uint8_t *split = malloc (PLAIN_BYTES);
  size_t i, s, off, piece;

  for (i = 0; i < ARRAY_SIZE (digest_vectors); i++)
    for (s = 0; s < ARRAY_SIZE (sizes); s++) {
      const struct digest_vector *v = &digest_vectors[i];
      struct sector_cipher *c;

      make_key (key, v->key_bytes, v->key_style);
      c = new_cipher (v->spec, key, v->key_bytes, sizes[s], 8, false);
      CHECK (c != NULL);
      if (c == NULL)
        continue;
      piece = 3 * sizes[s];
      CHECK (sector_cipher_encrypt (c, whole, plain, PLAIN_BYTES, 16) == 0);
      for (off = 0; off < PLAIN_BYTES; off += piece) {
        size_t len = PLAIN_BYTES - off < piece ? PLAIN_BYTES - off : piece;
        CHECK (sector_cipher_encrypt (c, split + off, plain + off, len,
                                      16 + off / 512) == 0);
      }
      CHECK (memcmp (whole, split, PLAIN_BYTES) == 0);
      for (off = 0; off < PLAIN_BYTES; off += piece) {
        size_t len = PLAIN_BYTES - off < piece ? PLAIN_BYTES - off : piece;
        CHECK (sector_cipher_decrypt (c, split + off, split + off, len,
                                      16 + off / 512) == 0);
      }
      CHECK (memcmp (split, plain, PLAIN_BYTES) == 0);
      sector_cipher_free (c);
    }
  free (whole);
  free (split);
}

/* Encrypts the pattern with SPEC and a KEY_BYTES pattern key. */
static bool
encrypt_with (const char *spec, size_t key_bytes, uint8_t *out)
{
  uint8_t key[VECTOR_KEY_MAX];
  struct sector_cipher *c;
  int r;

  make_key (key, key_bytes, KEY_PATTERN);
  c = new_cipher (spec, key, key_bytes, 512, 0, false);
  if (c == NULL)
    return false;
  r = sector_cipher_encrypt (c, out, plain, PLAIN_BYTES, 2048);
  sector_cipher_free (c);
  return r == 0;
}

/* Spellings the kernel treats as the same mapping. */
static void
test_equivalent_specs (void)
{
  static const struct { const char *a, *b; size_t key_bytes; } pairs[] = {
    { "aes-xts-plain64", "capi:xts(aes)-plain64", 64 },
    { "aes-cbc-essiv:sha256", "capi:cbc(aes)-essiv:sha256", 32 },
    { "aes-ecb", "capi:ecb(aes)", 16 },
    { "aes-ecb", "aes-ecb-plain64", 16 },    /* ecb: IV mode ignored */
    { "aes", "aes-cbc-plain", 32 },          /* the original format */
    { "aes-plain", "aes-cbc-plain", 32 },
    { "aes:1-xts-plain64", "aes-xts-plain64", 32 },
    { "aes-xts-plain64:x", "aes-xts-plain64", 32 },  /* opts ignored */
    { "cipher_null-ecb", "capi:ecb(cipher_null)", 0 },
  };
  uint8_t *a = malloc (PLAIN_BYTES), *b = malloc (PLAIN_BYTES);
  size_t i;

  for (i = 0; i < ARRAY_SIZE (pairs); i++) {
    bool ok = encrypt_with (pairs[i].a, pairs[i].key_bytes, a) &&
      encrypt_with (pairs[i].b, pairs[i].key_bytes, b);
    CHECK (ok);
    if (ok && memcmp (a, b, PLAIN_BYTES) != 0) {
      fprintf (stderr, "%s and %s differ\n", pairs[i].a, pairs[i].b);
      failures++;
    }
  }
  CHECK (encrypt_with ("cipher_null-ecb", 0, a));
  CHECK (memcmp (a, plain, PLAIN_BYTES) == 0);
  free (a);
  free (b);
}

/* The specs in the kernel transcripts (shared/reference/kernel-dmsetup)
 * with the key sizes shown there. */
static void
test_reference_specs (void)
{
  static const struct { const char *spec; size_t key_bytes; } refs[] = {
    { "aes-cbc-essiv:sha256", 32 }, { "aes-xts-plain64", 64 },
    { "aes-cbc-plain64", 32 }, { "capi:xts(aes)-plain64", 64 },
  };
  uint8_t *out = malloc (PLAIN_BYTES);
  size_t i;

  for (i = 0; i < ARRAY_SIZE (refs); i++) {
    CHECK (sector_cipher_check_spec (refs[i].spec, refs[i].key_bytes) == 0);
    CHECK (encrypt_with (refs[i].spec, refs[i].key_bytes, out));
  }
  free (out);
}

/* ---- ciphertext made by other software -------------------------------- */

/* LUKS1 images from the cryptsetup project (../shared/testdata/cryptsetup/
 * luks1-images.tar.xz), written by the kernel's dm-crypt in 2011.  Their
 * volume keys come from "cryptsetup luksDump --dump-volume-key --key-file
 * keyfile1"; the payload starts at sector 4096.  The plaintext is a FAT12
 * file system: serial DEAD-BABE in sector 0, sector 1 zero, the two FAT
 * copies (sectors 2 and 3) starting f8 ff ff. */
static const struct { const char *image, *spec, *key; } luks1_images[] = {
  { "luks1_aes-xts-plain64-sha256.img", "aes-xts-plain64",
    "b1c4a7c0f69cbfd1ef32ec65ada15a0aa41fa940ade5289911a64d31bcd07b30" },
  { "luks1_aes-cbc-essiv-sha256-sha1.img", "aes-cbc-essiv:sha256",
    "582a935a5bc5418a481a08644784206398846696680b8edfa55826b969bb4438" },
};

#define LUKS1_PAYLOAD_BYTES (4096 * 512)

/* tests/data/testdata/cryptsetup (or ../shared's), found from this
 * binary's own path. */
static bool
find_testdata (char *dir, size_t len)
{
  char top[4096];

  if (!check_topdir (top, sizeof top))
    return false;
  snprintf (dir, len, "%s/tests/data/testdata/cryptsetup", top);
  if (access (dir, R_OK) == 0)
    return true;
  snprintf (dir, len, "%s/../shared/testdata/cryptsetup", top);
  return access (dir, R_OK) == 0;
}

static bool
read_image_head (const char *archive, const char *image, uint8_t *buf,
                 size_t len)
{
  char cmd[8192];
  FILE *fp;
  size_t n;

  snprintf (cmd, sizeof cmd, "tar xJOf '%s' 'luks1-images/%s'",
            archive, image);
  fp = popen (cmd, "r");
  if (fp == NULL)
    return false;
  n = fread (buf, 1, len, fp);
  pclose (fp);
  return n == len;
}

static void
test_luks1_images (void)
{
  static const uint8_t zero[512], fat[3] = { 0xf8, 0xff, 0xff };
  static const uint8_t serial[4] = { 0xbe, 0xba, 0xad, 0xde };
  const size_t len = LUKS1_PAYLOAD_BYTES + 4 * 512;
  char dir[4200], archive[4300];
  uint8_t key[32], *buf;
  size_t i;

  if (!find_testdata (dir, sizeof dir)) {
    printf ("note: ../shared/testdata is absent: LUKS1 image check "
            "skipped\n");
    return;
  }
  snprintf (archive, sizeof archive, "%s/luks1-images.tar.xz", dir);
  buf = malloc (len);
  for (i = 0; i < ARRAY_SIZE (luks1_images); i++) {
    uint8_t *p = buf + LUKS1_PAYLOAD_BYTES;
    struct sector_cipher *c;
    CHECK (read_image_head (archive, luks1_images[i].image, buf, len));
    unhex (luks1_images[i].key, key);
    c = new_cipher (luks1_images[i].spec, key, 32, 512, 0, false);
    CHECK (c != NULL);
    if (c == NULL)
      continue;
    CHECK (sector_cipher_decrypt (c, p, p, 4 * 512, 0) == 0);
    if (memcmp (p + 39, serial, 4) != 0 || memcmp (p + 54, "FAT12", 5) ||
        p[510] != 0x55 || p[511] != 0xaa || memcmp (p + 512, zero, 512) ||
        memcmp (p + 1024, fat, 3) != 0 || memcmp (p + 1536, fat, 3) != 0) {
      fprintf (stderr, "%s: wrong plaintext\n", luks1_images[i].image);
      failures++;
    }
    sector_cipher_free (c);
  }
  free (buf);
}

/* ---- refusals ---------------------------------------------------------- */

/* Runs a refusal with stderr (where the nbdkit_error stub writes)
 * captured into MSG. */
static int
capture_check_spec (const char *spec, size_t key_bytes, char *msg,
                    size_t len)
{
  FILE *tmp = tmpfile ();
  int saved = dup (STDERR_FILENO), r;
  size_t n;

  fflush (stderr);
  dup2 (fileno (tmp), STDERR_FILENO);
  r = sector_cipher_check_spec (spec, key_bytes);
  fflush (stderr);
  dup2 (saved, STDERR_FILENO);
  close (saved);
  rewind (tmp);
  n = fread (msg, 1, len - 1, tmp);
  msg[n] = '\0';
  fclose (tmp);
  return r;
}

static void
test_refusals (void)
{
  static const struct {
    const char *spec;
    size_t key_bytes;
    const char *message;
  } bad[] = {
    { "kuznyechik-xts-plain64", 64, "unsupported cipher: kuznyechik" },
    { "frobfish-cbc-essiv:sha256", 32, "unsupported cipher: frobfish" },
    { "capi:xts(kuznyechik)-plain64", 64, "unsupported cipher: kuznyechik" },
    /* The kernel takes 192-bit Twofish keys, libgcrypt does not. */
    { "twofish-cbc-plain64", 24, "unsupported cipher: twofish with a "
      "192-bit key" },
    { "twofish-xts-plain64", 48, "twofish with a 192-bit key" },
    { "serpent-xts-plain64", 66, "serpent-xts needs a 2 to 64 byte key" },
    { "AES-xts-plain64", 64, "unsupported cipher: AES" },
    { "aes-xts-plain64", 20, "aes-xts needs a 32, 48 or 64 byte key, "
      "not 20" },
    { "aes-xts-plain64", 33, "not 33" },
    { "aes-cbc-plain64", 20, "aes-cbc needs a 16, 24 or 32 byte key" },
    { "sm4-xts-plain64", 64, "sm4-xts needs a 32 byte key, not 64" },
    { "blowfish-cbc-plain", 60, "needs a 4 to 56 byte key" },
    { "cipher_null-ecb", 16, "cipher_null takes no key" },
    { "aes-cbc", 32, "an IV mode is required" },
    { "aes-cbc-essiv", 32, "essiv needs a hash" },
    { "aes-cbc-essiv:sha1", 32, "essiv:sha1 makes a 20-byte key" },
    { "aes-cbc-essiv:nohash", 32, "unsupported ESSIV hash: nohash" },
    { "aes-cbc-foo", 32, "invalid IV mode: foo" },
    /* tcw: the key ends in an IV seed and a 16-byte whitening key;
     * lmk: 64 keys in the capi form, and a seed key if one more. */
    { "aes-cbc-tcw", 32, "aes-cbc-tcw needs a key of 16, 24 or 32 bytes, "
      "then a 16-byte IV seed and a 16-byte whitening key, not 32" },
    { "aes-cbc-tcw", 65, "needs a key of 16, 24 or 32 bytes plus 32, "
      "not 65" },
    { "cast5-cbc-tcw", 24, "then a 8-byte IV seed" },
    { "aes-xts-tcw", 64, "tcw works only with cbc" },
    { "aes:2-cbc-tcw", 96, "multi-key mappings with 2 keys, other than "
      "lmk's" },
    { "capi:cbc(aes)-lmk", 32, "aes-cbc-lmk needs 64 keys" },
    /* 1039 bytes: a 15-byte seed key (1039 / 65), 64 16-byte keys. */
    { "aes:64-cbc-lmk", 1039, "the seed key after the 64 keys must "
      "hold at least 16 bytes, not 15" },
    { "aes:64-cbc-lmk", 64 * 20, "needs 64 keys of 16, 24 or 32 bytes" },
    { "aes:64-xts-lmk", 64 * 64, "lmk works only with cbc" },
    /* Cascades: equal key shares, every layer checked, at most 4. */
    { "serpent-twofish-aes-xts-plain64", 190, "needs a key of 3 equal "
      "parts, not 190 bytes" },
    { "serpent-twofish-aes-xts-plain64", 144, "twofish with a 192-bit" },
    { "aes-kuznyechik-xts-plain64", 128, "unsupported chain mode: "
      "kuznyechik" },
    { "aes-blowfish-xts-plain64", 128, "xts needs a cipher with 16-byte "
      "blocks" },
    { "aes-aes-aes-aes-aes-xts-plain64", 320, "a cascade of 5 ciphers" },
    { "aes-xts-random", 64, "unsupported IV mode: random" },
    { "aes-cbc-elephant", 16, "aes-cbc-elephant needs a key of two" },
    { "aes-cbc-elephant", 33, "not 33" },
    { "aes-cbc-elephant", 80, "not 80" },
    { "aes-xts-elephant", 64, "elephant works only with cbc" },
    { "des3_ede-cbc-elephant", 48, "16-byte block cipher" },
    { "aes:2-cbc-plain64", 64, "multi-key mappings with 2 keys" },
    { "aes:3-cbc-plain", 32, "bad key count" },
    { "aes:x-cbc-plain", 32, "bad key count" },
    { "aes-lrw-benbi", 16, "aes-lrw needs a key of 16, 24 or 32 bytes "
      "plus 16, not 16" },
    { "des3_ede-lrw-plain64", 40, "lrw needs a cipher with 16-byte blocks" },
    { "capi:gcm(aes)-random", 32, "unsupported chain mode: gcm" },
    { "des3_ede-xts-plain64", 48, "xts needs a cipher with 16-byte blocks" },
    { "aes-ecb-essiv:sha256", 32, "ecb takes no IV" },
    { "cipher_null-cbc-plain", 0, "works only with ecb" },
    { "xts(aes)-plain64", 64, "need the capi: prefix" },
    { "capi:xts(aes", 64, "bad cipher spec" },
    { "capi:xts(ecb(aes))-plain64", 64, "nested" },
    { "capi:authenc(hmac(sha256),xts(aes))-random", 96, "nested" },
    { "-cbc-plain", 32, "bad cipher spec" },
    { "aes--plain", 32, "bad cipher spec" },
    { "", 32, "cipher spec is empty" },
  };
  char msg[1024];
  size_t i;

  for (i = 0; i < ARRAY_SIZE (bad); i++) {
    int r = capture_check_spec (bad[i].spec, bad[i].key_bytes, msg,
                                sizeof msg);
    char *nl = strchr (msg, '\n');
    if (r != -1 || strstr (msg, bad[i].message) == NULL ||
        nl == NULL || nl[1] != '\0') {
      fprintf (stderr, "spec \"%s\" (%zu-byte key): got %d, \"%s\", "
               "wanted one line with \"%s\"\n", bad[i].spec,
               bad[i].key_bytes, r, msg, bad[i].message);
      failures++;
    }
  }
}

static void
test_bad_params (void)
{
  uint8_t key[VECTOR_KEY_MAX] = { 1 }, buf[8192] = { 0 };
  struct sector_cipher *c;

  CHECK (new_cipher ("aes-xts-plain64", key, 64, 768, 0, false) == NULL);
  CHECK (new_cipher ("aes-xts-plain64", key, 64, 256, 0, false) == NULL);
  CHECK (new_cipher ("aes-xts-plain64", key, 64, 8192, 0, false) == NULL);
  /* dm-crypt: "Invalid iv_offset sector" unless a whole sector */
  CHECK (new_cipher ("aes-xts-plain64", key, 64, 4096, 3, false) == NULL);
  CHECK (new_cipher ("aes-xts-plain64", key, 64, 4096, 3, true) == NULL);
  CHECK (new_cipher ("aes-xts-plain64", key, 63, 512, 0, false) == NULL);

  c = new_cipher ("aes-xts-plain64", key, 64, 4096, 16, true);
  CHECK (c != NULL);
  if (c == NULL)
    return;
  errno = 0;                           /* not a whole sector */
  CHECK (sector_cipher_encrypt (c, buf, buf, 512, 0) == -1);
  CHECK (errno == EINVAL);
  errno = 0;                           /* not on a sector boundary */
  CHECK (sector_cipher_decrypt (c, buf, buf, 4096, 4) == -1);
  CHECK (errno == EINVAL);
  CHECK (sector_cipher_encrypt (c, buf, buf, 0, 8) == 0);
  sector_cipher_free (c);
}

/* ---- threads ----------------------------------------------------------- */

#define THREADS 4
#define THREAD_ROUNDS 25

struct thread_job
{
  struct sector_cipher *a, *b, **c;   /* *c is made between barriers */
  const uint8_t *want_a, *want_b, *want_c;
  pthread_barrier_t *barrier;
  int mismatches;
};

static void
run_rounds (struct thread_job *job, struct sector_cipher *c,
            const uint8_t *want)
{
  uint8_t *out = malloc (PLAIN_BYTES);
  int round;

  for (round = 0; round < THREAD_ROUNDS; round++) {
    if (sector_cipher_encrypt (c, out, plain, PLAIN_BYTES, 1024) != 0 ||
        memcmp (out, want, PLAIN_BYTES) != 0)
      job->mismatches++;
    if (sector_cipher_decrypt (c, out, out, PLAIN_BYTES, 1024) != 0 ||
        memcmp (out, plain, PLAIN_BYTES) != 0)
      job->mismatches++;
  }
  free (out);
}

static void *
thread_main (void *arg)
{
  struct thread_job *job = arg;
  int i;

  for (i = 0; i < 4; i++) {          /* two pools in turn per thread */
    run_rounds (job, job->a, job->want_a);
    run_rounds (job, job->b, job->want_b);
  }
  /* The main thread frees A and makes C, maybe at A's address: this
   * thread's cached contexts of A must never be taken for C's. */
  pthread_barrier_wait (job->barrier);
  pthread_barrier_wait (job->barrier);
  run_rounds (job, *job->c, job->want_c);
  run_rounds (job, job->b, job->want_b);
  return NULL;
}

static struct sector_cipher *
thread_cipher (const char *spec, size_t key_bytes, uint8_t key_seed,
               uint8_t *want)
{
  uint8_t key[VECTOR_KEY_MAX];
  struct sector_cipher *c;

  memset (key, key_seed, key_bytes);
  key[key_bytes - 1] ^= 1;           /* XTS halves differ: native XTS */
  c = new_cipher (spec, key, key_bytes, 4096, 0, false);
  if (c != NULL)
    sector_cipher_encrypt (c, want, plain, PLAIN_BYTES, 1024);
  return c;
}

static void
test_threads (void)
{
  static uint8_t want_a[PLAIN_BYTES], want_b[PLAIN_BYTES];
  static uint8_t want_c[PLAIN_BYTES];
  struct sector_cipher *a = thread_cipher ("aes-xts-plain64", 64, 1,
                                           want_a);
  struct sector_cipher *b = thread_cipher ("aes-cbc-essiv:sha256", 32,
                                           2, want_b);
  struct sector_cipher *c = NULL;
  struct thread_job jobs[THREADS];
  pthread_t tids[THREADS];
  pthread_barrier_t barrier;
  int i;

  CHECK (a != NULL && b != NULL);
  if (a == NULL || b == NULL)
    return;
  pthread_barrier_init (&barrier, NULL, THREADS + 1);
  for (i = 0; i < THREADS; i++) {
    jobs[i] = (struct thread_job) {
      .a = a, .b = b, .c = &c, .want_a = want_a, .want_b = want_b,
      .want_c = want_c, .barrier = &barrier,
    };
    CHECK (pthread_create (&tids[i], NULL, thread_main, &jobs[i]) == 0);
  }
  pthread_barrier_wait (&barrier);
  sector_cipher_free (a);
  /* libgcrypt's, through our provider: each thread's copy is a handle
   * of its own. */
  c = thread_cipher ("serpent-cbc-essiv:sha256", 32, 3, want_c);
  CHECK (c != NULL);
  pthread_barrier_wait (&barrier);
  for (i = 0; i < THREADS; i++) {
    pthread_join (tids[i], NULL);
    CHECK (jobs[i].mismatches == 0);
  }
  pthread_barrier_destroy (&barrier);
  sector_cipher_free (b);
  sector_cipher_free (c);
}

/* More live ciphers in one thread than its context cache holds. */
static void
test_many_ciphers (void)
{
  enum { N = 9 };
  static uint8_t want[N][PLAIN_BYTES];
  uint8_t *out = malloc (PLAIN_BYTES);
  struct sector_cipher *c[N];
  int i, round;

  for (i = 0; i < N; i++) {
    c[i] = thread_cipher (i % 3 == 0 ? "aes-xts-plain64"
                          : i % 3 == 1 ? "twofish-xts-plain64"
                          : "aes-lrw-benbi", i % 3 == 2 ? 48 : 64,
                          (uint8_t) (10 + i), want[i]);
    CHECK (c[i] != NULL);
    if (c[i] == NULL)
      return;
  }
  for (round = 0; round < 3; round++)
    for (i = 0; i < N; i++) {
      CHECK (sector_cipher_encrypt (c[i], out, plain, PLAIN_BYTES,
                                    1024) == 0);
      CHECK (memcmp (out, want[i], PLAIN_BYTES) == 0);
    }
  for (i = 0; i < N; i++)
    sector_cipher_free (c[i]);
  free (out);
}

/* ---- benchmark --------------------------------------------------------- */

/* CPU seconds of this thread: the per-core rate, whatever else the
 * machine is running. */
static double
cpu_seconds (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
bench_one (const char *spec, size_t key_bytes, unsigned sector_size)
{
  const size_t buf_bytes = 1 << 20;
  uint8_t key[VECTOR_KEY_MAX], *buf = malloc (buf_bytes);
  struct sector_cipher *c;
  double start, secs[2];
  int dir, rounds[2];

  make_key (key, key_bytes, KEY_PATTERN);
  memset (buf, 0x5a, buf_bytes);
  c = new_cipher (spec, key, key_bytes, sector_size, 0, false);
  if (c == NULL)
    exit (EXIT_FAILURE);
  for (dir = 0; dir < 2; dir++) {
    rounds[dir] = 0;
    start = cpu_seconds ();
    do {
      (dir == 0 ? sector_cipher_encrypt : sector_cipher_decrypt)
        (c, buf, buf, buf_bytes, (uint64_t) rounds[dir] * 2048);
      rounds[dir]++;
    } while ((secs[dir] = cpu_seconds () - start) < 1.0);
  }
  printf ("%-22s %3zu-byte key, %4u-byte sectors: encrypt %6.0f MB/s, "
          "decrypt %6.0f MB/s (%s)\n", spec, key_bytes, sector_size,
          rounds[0] * (buf_bytes / 1e6) / secs[0],
          rounds[1] * (buf_bytes / 1e6) / secs[1],
          sector_cipher_library (c));
  sector_cipher_free (c);
  free (buf);
}

#define COLD_BYTES (64 << 20)   /* a source larger than the caches */
#define CHUNK_BYTES (128 << 10) /* the engine's default chunk */

/* Encryption as the engine's writes use it: out of place, 128 KiB at a
 * time into one reused buffer, from a source that is (COLD) or is not
 * (one 1 MiB piece over again) beyond the caches. */
static void
bench_out_of_place (const char *spec, size_t key_bytes, unsigned sector_size,
                    bool cold)
{
  uint8_t key[VECTOR_KEY_MAX], *src = malloc (COLD_BYTES);
  uint8_t *dst = malloc (CHUNK_BYTES);
  struct sector_cipher *c;
  double start, secs;
  size_t from, k;
  int rounds = 0;

  CHECK (src && dst);
  make_key (key, key_bytes, KEY_PATTERN);
  memset (src, 0x5a, COLD_BYTES);
  memset (dst, 0, CHUNK_BYTES);
  c = new_cipher (spec, key, key_bytes, sector_size, 0, false);
  CHECK (c != NULL);
  start = cpu_seconds ();
  do {
    from = cold ? ((size_t) rounds << 20) % COLD_BYTES : 0;
    for (k = 0; k < (1 << 20); k += CHUNK_BYTES)
      CHECK (sector_cipher_encrypt (c, dst, src + from + k, CHUNK_BYTES,
                                    (from + k) >> 9) == 0);
    rounds++;
  } while ((secs = cpu_seconds () - start) < 1.0);
  printf ("%-22s %3zu-byte key, %4u-byte sectors: encrypt "
          "%6.0f MB/s, out of place from %s (%s)\n", spec, key_bytes,
          sector_size,
          rounds * ((1 << 20) / 1e6) / secs,
          cold ? "64 MiB (beyond the caches)" : "1 MiB (in cache)",
          sector_cipher_library (c));
  sector_cipher_free (c);
  free (src);
  free (dst);
}

struct bench_case
{
  const char *spec;
  size_t key_bytes;
  unsigned sector_size;
};

/* The in-place cases, each once per library. */
static const struct bench_case bench_cases[] = {
  { "aes-xts-plain64", 64, 4096 }, { "aes-xts-plain64", 64, 2048 },
  { "aes-xts-plain64", 64, 1024 }, { "aes-xts-plain64", 64, 512 },
  { "aes-xts-plain64", 32, 4096 }, { "aes-xts-plain64", 32, 512 },
  { "aes-xts-essiv:sha256", 64, 1024 }, { "aes-xts-essiv:sha256", 64, 2048 },
  { "aes-xts-plain64", 48, 4096 }, { "aes-xts-plain64", 48, 512 },
  { "aes-cbc-essiv:sha256", 32, 4096 }, { "aes-cbc-essiv:sha256", 32, 512 },
  { "aes-cbc-essiv:sha256", 16, 4096 },
};

static void
bench_out_of_place_all (void)
{
  static const enum sector_cipher_library libs[] = {
    SECTOR_CIPHER_LIB_OPENSSL, SECTOR_CIPHER_LIB_LIBGCRYPT,
  };
  static const struct bench_case cases[] = {
    { "aes-xts-plain64", 64, 4096 }, { "aes-xts-plain64", 64, 512 },
    { "aes-xts-plain64", 32, 512 },
    { "aes-cbc-essiv:sha256", 32, 4096 }, { "aes-cbc-essiv:sha256", 32, 512 },
  };
  size_t l, k;

  printf ("one thread, 128 KiB at a time into one buffer, MB per CPU "
          "second:\n");
  for (l = 0; l < ARRAY_SIZE (libs); l++)
    for (k = 0; k < ARRAY_SIZE (cases); k++) {
      library = libs[l];
      bench_out_of_place (cases[k].spec, cases[k].key_bytes,
                          cases[k].sector_size, false);
      bench_out_of_place (cases[k].spec, cases[k].key_bytes,
                          cases[k].sector_size, true);
    }
}

static void
bench (void)
{
  static const enum sector_cipher_library libs[] = {
    SECTOR_CIPHER_LIB_OPENSSL, SECTOR_CIPHER_LIB_LIBGCRYPT,
  };
  size_t i, l;

  printf ("one thread, 1 MiB buffer, in place, MB per CPU second:\n");
  for (l = 0; l < ARRAY_SIZE (libs); l++)
    for (i = 0; i < ARRAY_SIZE (bench_cases); i++) {
      library = libs[l];
      bench_one (bench_cases[i].spec, bench_cases[i].key_bytes,
                 bench_cases[i].sector_size);
    }
  bench_out_of_place_all ();
}

/* Real BitLocker sectors (elephant), decrypted in place and re-encrypted
 * to the same ciphertext. */
static void
test_bitlk_sectors (void)
{
  uint8_t key[64], cipher[512], buf[512];
  char digest[65];
  size_t i, key_bytes;

  for (i = 0; i < ARRAY_SIZE (bitlk_vectors); i++) {
    const struct bitlk_vector *v = &bitlk_vectors[i];
    struct sector_cipher *c;

    key_bytes = unhex (v->key_hex, key);
    CHECK (unhex (v->cipher_hex, cipher) == sizeof cipher);
    c = new_cipher ("aes-cbc-elephant", key, key_bytes, 512, 0, false);
    CHECK (c != NULL);
    if (c == NULL)
      continue;
    memcpy (buf, cipher, sizeof buf);
    CHECK (sector_cipher_decrypt (c, buf, buf, sizeof buf,
                                  v->iv_sector) == 0);
    sha256_hex (buf, sizeof buf, digest);
    if (strcmp (digest, v->plain_sha256) != 0 ||
        memcmp (buf + 3, "NTFS    ", 8) != 0) {
      fprintf (stderr, "%s: wrong plaintext of sector %" PRIu64 "\n",
               v->image, v->iv_sector);
      failures++;
    }
    CHECK (sector_cipher_encrypt (c, buf, buf, sizeof buf,
                                  v->iv_sector) == 0);
    CHECK (memcmp (buf, cipher, sizeof buf) == 0);
    sector_cipher_free (c);
  }
}

/* LIB's name for SPEC with KEY_BYTES of pattern key and SECTOR_SIZE. */
static void
check_library (enum sector_cipher_library lib, const char *spec,
               size_t key_bytes, unsigned sector_size, const char *want)
{
  uint8_t key[VECTOR_KEY_MAX];
  struct sector_cipher *c;

  make_key (key, key_bytes, KEY_PATTERN);
  library = lib;
  c = new_cipher (spec, key, key_bytes, sector_size, 0, false);
  CHECK (c != NULL);
  if (c != NULL)
    CHECK_MSG (strcmp (sector_cipher_library (c), want) == 0,
               "%s, %u-byte sectors, library %d: %s, not %s", spec,
               sector_size, (int) lib, sector_cipher_library (c), want);
  sector_cipher_free (c);
}

/* The choice of library, its names, and what "auto" means here. */
static void
test_library (void)
{
  const enum sector_cipher_library ossl = SECTOR_CIPHER_LIB_OPENSSL;
  const enum sector_cipher_library gc = SECTOR_CIPHER_LIB_LIBGCRYPT;
  enum sector_cipher_library lib;
  uint8_t same_halves[64];
  char *flags = gcry_get_config (0, "hwflist");
  bool vaes = flags && strstr (flags, ":intel-vaes-vpclmul:") != NULL;
  struct sector_cipher *c;

  gcry_free (flags);
  CHECK (sector_cipher_parse_library ("auto", &lib) == 0 &&
         lib == SECTOR_CIPHER_LIB_AUTO);
  CHECK (sector_cipher_parse_library ("openssl", &lib) == 0 && lib == ossl);
  CHECK (sector_cipher_parse_library ("libgcrypt", &lib) == 0 && lib == gc);
  CHECK (sector_cipher_parse_library ("gcrypt", &lib) == -1);
  CHECK (sector_cipher_parse_library ("", &lib) == -1);
  CHECK (strcmp (sector_cipher_auto_library (),
                 vaes ? "libgcrypt" : "openssl") == 0);
  check_library (SECTOR_CIPHER_LIB_AUTO, "aes-xts-plain64", 64, 4096,
                 vaes ? "libgcrypt" : "openssl");
  check_library (ossl, "aes-xts-plain64", 64, 4096, "openssl");
  check_library (gc, "aes-xts-plain64", 64, 4096, "libgcrypt");
  check_library (gc, "aes-xts-plain64", 32, 512, "libgcrypt");
  /* Below 2048 bytes a per-sector IV reset costs what VAES saves: the
   * ECB construction, on libgcrypt's AES-ECB. */
  check_library (gc, "aes-xts-essiv:sha256", 64, 1024, "libgcrypt");
  check_library (gc, "aes-xts-essiv:sha256", 64, 2048, "libgcrypt");
  /* AES-192-XTS is the construction too; CBC across sectors is on ECB;
   * CBC a sector at a time (eboiv) and elephant keep OpenSSL's CBC. */
  check_library (gc, "aes-xts-plain64", 48, 4096, "libgcrypt");
  check_library (gc, "aes-cbc-essiv:sha256", 32, 4096, "libgcrypt");
  check_library (gc, "aes-cbc-essiv:sha256", 16, 512, "libgcrypt");
  check_library (gc, "aes-ecb", 32, 512, "libgcrypt");
  check_library (gc, "aes-cbc-eboiv", 32, 4096, "openssl");
  check_library (ossl, "aes-cbc-essiv:sha256", 32, 4096, "openssl");
  check_library (ossl, "aes-xts-plain64", 64, 512, "openssl");
  check_library (ossl, "serpent-xts-plain64", 64, 4096, "libgcrypt");
  check_library (gc, "cipher_null-ecb", 0, 512, "none");
  check_library (ossl, "serpent-twofish-aes-xts-plain64", 192, 512,
                 "openssl+libgcrypt");
  check_library (gc, "serpent-twofish-aes-xts-plain64", 192, 512,
                 "libgcrypt");
  /* Equal halves: the ECB construction, as with OpenSSL, on
   * libgcrypt's ECB (whose second key is never equal to the first). */
  memset (same_halves, 0x11, sizeof same_halves);
  library = gc;
  c = new_cipher ("aes-xts-plain64", same_halves, 64, 4096, 0, false);
  CHECK (c != NULL && strcmp (sector_cipher_library (c), "libgcrypt") == 0);
  sector_cipher_free (c);
}

/* Everything that checks bytes, with LIB's AES-XTS. */
static void
test_bytes_with (enum sector_cipher_library lib)
{
  library = lib;
  test_ieee_vectors ();
  test_block_vectors ();
  test_digests ();
  test_split_calls ();
  test_pieces ();
  test_iv_arithmetic ();
  test_round_trips ();
  test_equivalent_specs ();
  test_reference_specs ();
  test_luks1_images ();
  test_bitlk_sectors ();
  test_threads ();
  test_many_ciphers ();
}

int
main (int argc, char *argv[])
{
  if (argc == 2 && strcmp (argv[1], "--bench") == 0) {
    bench ();
    return 0;
  }
  if (argc == 2 && strcmp (argv[1], "--bench-out-of-place") == 0) {
    bench_out_of_place_all ();
    return 0;
  }
  if (argc == 2 && strcmp (argv[1], "--print-digests") == 0) {
    print_digests ();
    return 0;
  }
  make_plain ();
  test_bytes_with (SECTOR_CIPHER_LIB_OPENSSL);
  test_bytes_with (SECTOR_CIPHER_LIB_LIBGCRYPT);
  test_refusals ();
  test_bad_params ();
  test_library ();
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("cipher: all checks passed, AES from OpenSSL and from "
          "libgcrypt\n");
  return 0;
}
