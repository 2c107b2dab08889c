/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The block ciphers that dm-crypt names (the kernel crypto API's cipher
 * names), mapped to OpenSSL's implementations of them, or to
 * libgcrypt's through our provider (gcrypt_provider.h) where OpenSSL
 * has none.  Internal to crypto/. */
#ifndef DMCRYPT_BLOCK_CIPHER_H
#define DMCRYPT_BLOCK_CIPHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

struct block_cipher
{
  const char *name;          /* kernel name: "aes", "des3_ede" */
  const char *ossl_stem;     /* OpenSSL name before "-<MODE>": "AES", "BF";
                                NULL for the identity cipher_null */
  bool stem_takes_bits;      /* stem is followed by "-<key bits>" */
  enum block_cipher_lib
  {
    LIB_OPENSSL,             /* OpenSSL's default provider */
    LIB_OPENSSL_LEGACY,      /* OpenSSL's legacy provider */
    LIB_GCRYPT,              /* libgcrypt, through gcrypt_provider.c */
  } lib;
  unsigned block_bytes;      /* cipher block size */
  uint64_t key_sizes;        /* bit N set: an N-byte key is valid */
  uint64_t lib_key_sizes;    /* those the library has, if fewer; or 0 */
};

/* The cipher called NAME by the kernel, or NULL. */
const struct block_cipher *block_cipher_lookup (const char *name);

/* Whether a KEY_BYTES-byte key is one the kernel accepts for BC. */
bool block_cipher_key_ok (const struct block_cipher *bc, size_t key_bytes);

/* Writes the valid key sizes times FACTOR as words ("16, 24 or 32",
 * "4 to 56") into BUF of LEN bytes. */
void block_cipher_key_sizes_text (const struct block_cipher *bc,
                                  unsigned factor, char *buf, size_t len);

/* The OpenSSL cipher for MODE ("ECB", "CBC", "XTS") with a KEY_BYTES-byte
 * key (per half for XTS).  Returns NULL after nbdkit_error. */
EVP_CIPHER *block_cipher_fetch (const struct block_cipher *bc,
                                const char *mode, size_t key_bytes);
/* The same from LIB rather than BC's own library (libgcrypt's AES-XTS). */
EVP_CIPHER *block_cipher_fetch_from (const struct block_cipher *bc,
                                     enum block_cipher_lib lib,
                                     const char *mode, size_t key_bytes);

/* A context of CIPHER keyed with KEY for encryption (ENCRYPT true) or
 * decryption.  EVP_CipherUpdate on it returns every byte at once (no
 * block is held back for padding); EVP_CipherFinal must not be used.
 * Returns NULL after nbdkit_error. */
EVP_CIPHER_CTX *block_cipher_keyed_ctx (const EVP_CIPHER *cipher,
                                        const uint8_t *key,
                                        size_t key_bytes, bool encrypt);

/* One EVP_CipherUpdate of LEN bytes (under 2 GiB) on a context from
 * block_cipher_keyed_ctx, which returns them all at once.  Returns 0, or
 * -1 if OpenSSL failed (its error queue left for the caller). */
int block_cipher_update (EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in,
                         size_t len);

/* The digest OpenSSL calls NAME, from the default provider or else the
 * legacy one; NULL if neither has it. */
EVP_MD *block_cipher_fetch_digest (const char *name);

#endif /* DMCRYPT_BLOCK_CIPHER_H */
