/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The slow, obvious way to dm-crypt sectors: one OpenSSL init and one
 * update per encryption sector, with the IV written out as dm-crypt
 * does.  The bulk paths of crypto/ (xts_bulk.c, cbc_multi.c) must give
 * the same bytes: tests/unit/test-cipher-bulk.c and the cipher-bulk
 * fuzzer compare them.  Header only, for both. */
#ifndef DMCRYPT_CIPHER_REFERENCE_H
#define DMCRYPT_CIPHER_REFERENCE_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

struct mode_case
{
  const char *spec;
  size_t key_bytes;
};

static const struct mode_case reference_cases[] = {
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
  if (EVP_EncryptUpdate (ctx, iv, &n, iv, 16) != 1 || n != 16)
    abort ();
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
static void __attribute__ ((unused))
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
    if (EVP_CipherInit_ex (ctx, cipher, NULL, key, iv, encrypt) != 1 ||
        EVP_CIPHER_CTX_set_padding (ctx, 0) != 1 ||
        EVP_CipherUpdate (ctx, out + off, &n, in + off,
                          (int) sector_size) != 1 || n != (int) sector_size)
      abort ();                 /* OpenSSL itself failed: not our bug */
  }
  EVP_CIPHER_CTX_free (ctx);
}

#endif /* DMCRYPT_CIPHER_REFERENCE_H */
