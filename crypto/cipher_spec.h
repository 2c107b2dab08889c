/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A dm-crypt cipher spec, parsed as the kernel's crypt_ctr_cipher_old and
 * crypt_ctr_cipher_new parse it:
 *
 *   cipher[:keycount][-chainmode[-ivmode[:ivopts]]]   "aes-cbc-essiv:sha256"
 *   capi:chainmode(cipher)[-ivmode[:ivopts]]          "capi:xts(aes)-plain64"
 *
 * Internal to crypto/. */
#ifndef DMCRYPT_CIPHER_SPEC_H
#define DMCRYPT_CIPHER_SPEC_H

#include <stddef.h>

#include "block_cipher.h"
#include "iv.h"

enum chain_mode { CHAIN_ECB, CHAIN_CBC, CHAIN_XTS, CHAIN_LRW };

#define CIPHER_SPEC_HASH_MAX 32

struct cipher_spec
{
  const struct block_cipher *cipher;
  enum chain_mode chain;
  enum iv_mode iv;
  char essiv_hash[CIPHER_SPEC_HASH_MAX];   /* kernel name, for IV_ESSIV */
  unsigned key_count;        /* data keys: "aes:64-cbc-lmk" 64, else 1 */
};

/* How a volume key splits, as the kernel splits it (crypt_ctr_ivmode,
 * crypt_subkey_size): KEY_COUNT data keys of DATA_KEY_BYTES each, the
 * key of sector S being number S % KEY_COUNT; then EXTRA_BYTES for the
 * IV mode (tcw: the IV seed and the whitening key; lmk: the seed key of
 * loop-AES version 3, or none). */
struct cipher_key_layout
{
  unsigned key_count;
  size_t data_key_bytes;
  size_t extra_bytes;
};

/* Parses SPEC into OUT, refusing what the kernel refuses and what we do
 * not implement (multi-key modes, unknown ciphers).  Returns 0, or -1
 * after one nbdkit_error line. */
int cipher_spec_parse (const char *spec, struct cipher_spec *out);

/* Checks KEY_BYTES against the spec as the kernel's setkey would (an
 * XTS key is two keys of the cipher, an LRW key one and a 16-byte tweak
 * key, an ESSIV digest must be a key of the cipher).  Returns 0, or -1
 * after nbdkit_error. */
int cipher_spec_check_key (const struct cipher_spec *s, const char *spec,
                           size_t key_bytes);

/* The split of a KEY_BYTES key for S (see struct cipher_key_layout);
 * valid once cipher_spec_check_key accepted KEY_BYTES. */
void cipher_spec_key_layout (const struct cipher_spec *s, size_t key_bytes,
                             struct cipher_key_layout *out);

#endif /* DMCRYPT_CIPHER_SPEC_H */
