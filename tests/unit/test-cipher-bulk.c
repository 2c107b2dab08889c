/* The bulk paths against OpenSSL's own modes, one sector and one EVP
 * call at a time: XTS built on ECB (crypto/xts_bulk.c), with and
 * without the AVX-512 whitening, and interleaved CBC encryption
 * (crypto/cbc_multi.c), at every sector size, key size and IV generator
 * they serve, with iv_offset and iv_large_sectors, over random keys,
 * data, start sectors and lengths. */
#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "../../crypto/cipher.h"
#include "../../crypto/xts.h"

#include "check.h"

#define MAX_BYTES (64 * 1024)
#define ROUNDS 40

struct mode_case
{
  const char *spec;
  size_t key_bytes;
};

static const struct mode_case cases[] = {
  { "aes-xts-plain64", 32 }, { "aes-xts-plain64", 64 },
  { "aes-xts-plain", 64 }, { "aes-xts-plain64be", 32 },
  { "aes-xts-essiv:sha256", 64 },
  { "aes-cbc-plain64", 16 }, { "aes-cbc-essiv:sha256", 32 },
  { "aes-cbc-essiv:sha256", 16 }, { "aes-cbc-benbi", 24 },
  { "aes-cbc-plain64be", 32 }, { "aes-cbc-null", 16 },
  { "des3_ede-cbc-plain64", 24 },
};

/* The IV of IV_SECTOR as dm-crypt makes it, before any encryption. */
static void
reference_iv (const char *ivmode, uint64_t iv_sector, unsigned iv_bytes,
              uint8_t *iv)
{
  uint64_t v;
  uint32_t v32;

  memset (iv, 0, iv_bytes);
  if (strcmp (ivmode, "plain") == 0) {
    v32 = htole32 ((uint32_t) iv_sector);
    memcpy (iv, &v32, 4);
  }
  else if (strcmp (ivmode, "plain64") == 0 ||
           strncmp (ivmode, "essiv", 5) == 0) {
    v = htole64 (iv_sector);
    memcpy (iv, &v, 8);
  }
  else if (strcmp (ivmode, "plain64be") == 0) {
    v = htobe64 (iv_sector);
    memcpy (iv + iv_bytes - 8, &v, 8);
  }
  else if (strcmp (ivmode, "benbi") == 0) {
    v = htobe64 ((iv_sector << 5) + 1);     /* 16-byte blocks */
    memcpy (iv + iv_bytes - 8, &v, 8);
  }
}

/* ESSIV: the IV encrypted with AES-ECB keyed by SHA-256 (KEY). */
static void
essiv (const uint8_t *key, size_t key_bytes, uint8_t iv[16])
{
  uint8_t salt[32];
  unsigned salt_bytes;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  int n;

  EVP_Digest (key, key_bytes, salt, &salt_bytes, EVP_sha256 (), NULL);
  EVP_EncryptInit_ex (ctx, EVP_aes_256_ecb (), NULL, salt, NULL);
  EVP_CIPHER_CTX_set_padding (ctx, 0);
  CHECK (EVP_EncryptUpdate (ctx, iv, &n, iv, 16) == 1 && n == 16);
  EVP_CIPHER_CTX_free (ctx);
}

static const EVP_CIPHER *
reference_cipher (const char *spec, size_t key_bytes)
{
  if (strncmp (spec, "des3_ede-", 9) == 0)
    return EVP_des_ede3_cbc ();
  if (strncmp (spec, "aes-xts-", 8) == 0)
    return key_bytes == 32 ? EVP_aes_128_xts () : EVP_aes_256_xts ();
  return key_bytes == 16 ? EVP_aes_128_cbc ()
    : key_bytes == 24 ? EVP_aes_192_cbc () : EVP_aes_256_cbc ();
}

/* NBYTES from sector SECTOR the slow way: one EVP init and update per
 * encryption sector. */
static void
reference (const struct mode_case *mc, const uint8_t *key, bool encrypt,
           unsigned sector_size, uint64_t iv_offset, bool large,
           uint8_t *out, const uint8_t *in, size_t nbytes, uint64_t sector)
{
  const char *ivmode = strchr (strchr (mc->spec, '-') + 1, '-') + 1;
  const EVP_CIPHER *cipher = reference_cipher (mc->spec, mc->key_bytes);
  unsigned iv_bytes = EVP_CIPHER_get_iv_length (cipher);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  uint64_t iv_sector;
  uint8_t iv[16];
  size_t off;
  int n;

  for (off = 0; off < nbytes; off += sector_size, sector += sector_size / 512) {
    iv_sector = sector + iv_offset;
    if (large)
      iv_sector /= sector_size / 512;
    reference_iv (ivmode, iv_sector, iv_bytes, iv);
    if (strncmp (ivmode, "essiv", 5) == 0)
      essiv (key, mc->key_bytes, iv);
    CHECK (EVP_CipherInit_ex (ctx, cipher, NULL, key, iv, encrypt) == 1);
    EVP_CIPHER_CTX_set_padding (ctx, 0);
    CHECK (EVP_CipherUpdate (ctx, out + off, &n, in + off,
                             (int) sector_size) == 1 &&
           n == (int) sector_size);
  }
  EVP_CIPHER_CTX_free (ctx);
}

static unsigned
random_below (unsigned n)
{
  unsigned r;

  RAND_bytes ((unsigned char *) &r, sizeof r);
  return r % n;
}

/* One random run of MC in both directions, in place and not. */
static void
check_round (const struct mode_case *mc, uint8_t *in, uint8_t *got,
             uint8_t *want)
{
  unsigned sector_size = 512u << random_below (4), spu = sector_size / 512;
  bool large = random_below (2) == 1;
  uint64_t iv_offset = (uint64_t) random_below (1000) * spu;
  uint64_t sector = ((uint64_t) random_below (1u << 30) << 4) * spu;
  size_t nbytes = (1 + random_below (MAX_BYTES / sector_size)) *
    (size_t) sector_size;
  struct sector_cipher_params p = {
    .spec = mc->spec, .key_size = mc->key_bytes, .sector_size = sector_size,
    .iv_offset = iv_offset, .iv_large_sectors = large,
  };
  uint8_t key[64];
  struct sector_cipher *c;
  int dir;

  RAND_bytes (key, sizeof key);
  RAND_bytes (in, nbytes);
  p.key = key;
  c = sector_cipher_new (&p);
  if (!check_that (c != NULL, "%s: no cipher", mc->spec))
    return;
  for (dir = 0; dir < 2; dir++) {
    reference (mc, key, dir == 0, sector_size, iv_offset, large, want, in,
               nbytes, sector);
    CHECK ((dir == 0 ? sector_cipher_encrypt : sector_cipher_decrypt)
           (c, got, in, nbytes, sector) == 0);
    CHECK_MSG (memcmp (got, want, nbytes) == 0,
               "%s %zu-byte key, %s %zu bytes at sector %" PRIu64 ", %u-byte "
               "sectors, iv_offset %" PRIu64 "%s: differs from OpenSSL's %s",
               mc->spec, mc->key_bytes, dir == 0 ? "encrypt" : "decrypt",
               nbytes, sector, sector_size, iv_offset,
               large ? ", iv_large_sectors" : "", mc->spec);
    memcpy (got, in, nbytes);               /* in place */
    CHECK ((dir == 0 ? sector_cipher_encrypt : sector_cipher_decrypt)
           (c, got, got, nbytes, sector) == 0);
    CHECK (memcmp (got, want, nbytes) == 0);
  }
  sector_cipher_free (c);
}

static void
check_all (void)
{
  uint8_t *in = malloc (MAX_BYTES), *got = malloc (MAX_BYTES);
  uint8_t *want = malloc (MAX_BYTES);
  size_t i;
  int round;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (round = 0; round < ROUNDS; round++)
      check_round (&cases[i], in, got, want);
  free (in);
  free (got);
  free (want);
}

int
main (void)
{
  bool vector = xts_use_vector (true);

  check_all ();
  if (vector) {
    xts_use_vector (false);
    check_all ();
  }
  printf ("XTS whitening: %s\n", vector ? "AVX-512 and portable"
          : "portable only (no AVX-512 with VPCLMULQDQ here)");
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("cipher-bulk: %u checks passed\n", checks);
  return 0;
}
