/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel cipher names → OpenSSL ciphers, with the kernel's key size rules
 * (crypto/aes_generic.c, camellia_generic.c, blowfish_common.c,
 * serpent_generic.c, twofish_common.c, …).  Serpent and Twofish come
 * from libgcrypt: OpenSSL 3.0 has neither. */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "../common/cleanup.h"
#include "../common/log.h"
#include "block_cipher.h"
#include "gcrypt_provider.h"
#include "legacy_libctx.h"

#define KEY_BIT(n) (UINT64_C (1) << (n))
/* Every size from LO to HI bytes inclusive, HI < 63. */
#define KEY_RANGE(lo, hi) ((KEY_BIT ((hi) + 1) - 1) & ~(KEY_BIT (lo) - 1))
#define KEYS_AES (KEY_BIT (16) | KEY_BIT (24) | KEY_BIT (32))

#define STD LIB_OPENSSL
#define LEGACY LIB_OPENSSL_LEGACY
#define GCRYPT LIB_GCRYPT
static const struct block_cipher ciphers[] = {
  { "aes",         "AES",      true,  STD,    16, KEYS_AES, 0 },
  { "camellia",    "CAMELLIA", true,  STD,    16, KEYS_AES, 0 },
  { "aria",        "ARIA",     true,  STD,    16, KEYS_AES, 0 },
  { "sm4",         "SM4",      false, STD,    16, KEY_BIT (16), 0 },
  { "des3_ede",    "DES-EDE3", false, STD,     8, KEY_BIT (24), 0 },
  { "des",         "DES",      false, LEGACY,  8, KEY_BIT (8), 0 },
  { "blowfish",    "BF",       false, LEGACY,  8, KEY_RANGE (4, 56), 0 },
  { "cast5",       "CAST5",    false, LEGACY,  8, KEY_RANGE (5, 16), 0 },
  { "seed",        "SEED",     false, LEGACY, 16, KEY_BIT (16), 0 },
  /* The kernel pads a short Serpent key as the cipher's authors say
   * (a 1 bit, then zeros), and so does libgcrypt; an empty key is left
   * out, as it would mean "no key" to EVP. */
  { "serpent",     "SERPENT",  false, GCRYPT, 16, KEY_RANGE (1, 32), 0 },
  /* libgcrypt has no 192-bit Twofish. */
  { "twofish",     "TWOFISH",  false, GCRYPT, 16, KEYS_AES,
    KEY_BIT (16) | KEY_BIT (32) },
  { "cipher_null", NULL,       false, STD,     1, KEY_BIT (0), 0 },
};

const struct block_cipher *
block_cipher_lookup (const char *name)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (ciphers); i++)
    if (strcmp (ciphers[i].name, name) == 0)
      return &ciphers[i];
  return NULL;
}

bool
block_cipher_key_ok (const struct block_cipher *bc, size_t key_bytes)
{
  return key_bytes < 64 && (bc->key_sizes & KEY_BIT (key_bytes)) != 0;
}

void
block_cipher_key_sizes_text (const struct block_cipher *bc, unsigned factor,
                             char *buf, size_t len)
{
  unsigned sizes[64], n = 0, bytes, i;
  size_t used = 0;

  for (bytes = 0; bytes < 64; bytes++)
    if (bc->key_sizes & KEY_BIT (bytes))
      sizes[n++] = bytes * factor;
  if (n > 3) {                  /* a range: every size in between */
    snprintf (buf, len, "%u to %u", sizes[0], sizes[n - 1]);
    return;
  }
  buf[0] = '\0';
  for (i = 0; i < n && used < len; i++)
    used += snprintf (buf + used, len - used, "%s%u",
                      i == 0 ? "" : i + 1 == n ? " or " : ", ", sizes[i]);
}

EVP_CIPHER *
block_cipher_fetch (const struct block_cipher *bc, const char *mode,
                    size_t key_bytes)
{
  return block_cipher_fetch_from (bc, bc->lib, mode, key_bytes);
}

EVP_CIPHER *
block_cipher_fetch_from (const struct block_cipher *bc,
                         enum block_cipher_lib lib, const char *mode,
                         size_t key_bytes)
{
  OSSL_LIB_CTX *libctx = NULL;
  EVP_CIPHER *cipher;
  char name[64];

  if (bc->stem_takes_bits)
    snprintf (name, sizeof name, "%s-%zu-%s", bc->ossl_stem, key_bytes * 8,
              mode);
  else
    snprintf (name, sizeof name, "%s-%s", bc->ossl_stem, mode);

  if (bc->lib_key_sizes != 0 &&
      (key_bytes >= 64 || !(bc->lib_key_sizes & KEY_BIT (key_bytes)))) {
    nbdkit_error ("unsupported cipher: %s with a %zu-bit key (libgcrypt "
                  "has no such key size)", bc->name, key_bytes * 8);
    return NULL;
  }
  if (lib == LIB_OPENSSL_LEGACY) {
    libctx = legacy_libctx_get ();
    if (libctx == NULL) {
      nbdkit_error ("unsupported cipher: %s (OpenSSL's legacy provider "
                    "does not load)", bc->name);
      return NULL;
    }
  }
  else if (lib == LIB_GCRYPT) {
    libctx = gcrypt_provider_libctx ();
    if (libctx == NULL) {
      nbdkit_error ("unsupported cipher: %s (libgcrypt does not load)",
                    bc->name);
      return NULL;
    }
  }
  cipher = EVP_CIPHER_fetch (libctx, name, NULL);
  if (cipher == NULL) {
    ERR_clear_error ();
    nbdkit_error ("unsupported cipher: %s (%s has no %s)", bc->name,
                  lib == LIB_GCRYPT ? "libgcrypt" : "OpenSSL", name);
  }
  return cipher;
}

EVP_CIPHER_CTX *
block_cipher_keyed_ctx (const EVP_CIPHER *cipher, const uint8_t *key,
                        size_t key_bytes, bool encrypt)
{
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  int enc = encrypt ? 1 : 0;
  const char *reason;

  if (ctx == NULL)
    goto fail;
  /* Cipher first, then the key length (Blowfish and CAST5 take any
   * length), then the key. */
  if (EVP_CipherInit_ex (ctx, cipher, NULL, NULL, NULL, enc) != 1)
    goto fail;
  if ((size_t) EVP_CIPHER_CTX_get_key_length (ctx) != key_bytes &&
      EVP_CIPHER_CTX_set_key_length (ctx, (int) key_bytes) != 1)
    goto fail;
  if (EVP_CipherInit_ex (ctx, NULL, NULL, key, NULL, enc) != 1)
    goto fail;
  /* Padding matters only to block-mode decryption, which would hold a
   * last block back for EVP_DecryptFinal (never called here).  Leaving it
   * on elsewhere spares OpenSSL 3.0 a parameter round trip on every
   * later IV reset (EVP_CipherInit_ex re-sends "no padding"). */
  if (!encrypt && EVP_CIPHER_get_mode (cipher) != EVP_CIPH_XTS_MODE)
    EVP_CIPHER_CTX_set_padding (ctx, 0);
  return ctx;

 fail:
  reason = ERR_reason_error_string (ERR_get_error ());
  nbdkit_error ("cannot key OpenSSL cipher %s: %s",
                EVP_CIPHER_get0_name (cipher),
                reason != NULL ? reason : "unknown error");
  ERR_clear_error ();
  EVP_CIPHER_CTX_free (ctx);
  return NULL;
}

int
block_cipher_update (EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in,
                     size_t len)
{
  int out_len;

  return EVP_CipherUpdate (ctx, out, &out_len, in, (int) len) == 1 &&
    (size_t) out_len == len ? 0 : -1;
}

EVP_MD *
block_cipher_fetch_digest (const char *name)
{
  OSSL_LIB_CTX *libctx;
  EVP_MD *md = EVP_MD_fetch (NULL, name, NULL);

  if (md == NULL && (libctx = legacy_libctx_get ()) != NULL)
    md = EVP_MD_fetch (libctx, name, NULL);
  ERR_clear_error ();
  return md;
}
