/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What an authenticated dm-crypt mapping is made of: a LUKS2 segment's
 * "encryption" and "integrity" (or a table's capi: cipher string),
 * resolved as cryptsetup 2.6 and Linux 6.1's dm-crypt resolve them into
 * an AEAD, its IV generator, its key split and the bytes of each
 * sector's tag.  Internal to crypto/. */
#ifndef DMCRYPT_AEAD_SPEC_H
#define DMCRYPT_AEAD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block_cipher.h"
#include "cipher_spec.h"
#include "iv.h"

enum aead_kind
{
  AEAD_AUTHENC,     /* authenc(hmac(H),MODE(CIPHER)): encrypt, then MAC */
  AEAD_GCM,         /* gcm(aes) */
  AEAD_CHACHAPOLY,  /* rfc7539(chacha20,poly1305) */
  AEAD_IV_ONLY,     /* integrity:N:none: no tag, a random IV stored */
};

#define AEAD_SPEC_TEXT_MAX 128   /* CRYPTO_MAX_ALG_NAME */
#define AEAD_MAX_IV_BYTES 16
#define AEAD_MAX_MAC_BYTES 64

struct aead_spec
{
  enum aead_kind kind;
  const struct block_cipher *cipher;   /* AUTHENC, IV_ONLY; aes for GCM */
  enum chain_mode chain;               /* AUTHENC, IV_ONLY: CBC or XTS */
  enum iv_mode iv;                     /* unless iv_random */
  bool iv_random;                      /* "-random": drawn, then stored */
  char essiv_hash[CIPHER_SPEC_HASH_MAX];   /* kernel name, for IV_ESSIV */
  const char *mac_digest;              /* OpenSSL's name, for AUTHENC */
  unsigned iv_bytes;                   /* the AEAD's IV (dm-crypt iv_size) */
  unsigned auth_tag_bytes;             /* integrity_tag_size */
  unsigned iv_tag_bytes;               /* integrity_iv_size */
  unsigned tag_bytes;                  /* on_disk_tag_size */
  size_t mac_key_bytes;                /* key_mac_size: the MAC's digest */
  char kernel_cipher[AEAD_SPEC_TEXT_MAX];   /* "capi:gcm(aes)-random" */
  char kernel_integrity[32];                /* "integrity:28:aead" */
};

/* Resolves CIPHER (a LUKS2 "encryption" such as "aes-xts-plain64", or a
 * table's "capi:..." string) with INTEGRITY ("hmac(sha256)", "aead",
 * "poly1305", "none"; for a capi: string also NULL, meaning "aead").
 * TAG_BYTES is the table's integrity:N, or 0 for cryptsetup's size for
 * the pair.  Returns 0, or -1 with a one-line reason in ERR. */
int aead_spec_parse (const char *cipher, const char *integrity,
                     uint32_t tag_bytes, struct aead_spec *s,
                     char *err, size_t errlen);

/* Checks KEY_BYTES (the whole table key: cipher key, then MAC key) as
 * crypt_setkey and the AEAD's setkey would.  Returns 0, or -1 with a
 * reason in ERR. */
int aead_spec_check_key (const struct aead_spec *s, size_t key_bytes,
                         char *err, size_t errlen);

/* The bytes of KEY_BYTES that key the cipher (the rest keys the MAC). */
size_t aead_spec_cipher_key_bytes (const struct aead_spec *s,
                                   size_t key_bytes);

#endif /* DMCRYPT_AEAD_SPEC_H */
