/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The internal hashes through OpenSSL's EVP (digests, HMAC by EVP_MAC)
 * and the two CRCs of crc.c with the seeds and final steps of the
 * kernel's crypto/crc32c_generic.c (seed ~0, digest ~crc) and
 * crypto/crc32_generic.c (seed 0, digest crc as it is), both stored
 * little-endian. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "../crypto/crc32.h"
#include "tag.h"

enum hash_kind { HASH_CRC32C, HASH_CRC32, HASH_DIGEST, HASH_HMAC };

struct integrity_hash {
  enum hash_kind kind;
  char name[64];
  uint32_t digest_size;
  uint32_t crc_seed;
  size_t key_bytes;            /* 0: not keyed */
  EVP_MD *md;
  EVP_MAC_CTX *mac_template;   /* keyed; duplicated for each tag */
};

static int
set_crc (struct integrity_hash *h, const uint8_t *key, size_t key_bytes,
         char *err, size_t errlen)
{
  h->digest_size = 4;
  h->crc_seed = h->kind == HASH_CRC32C ? 0xffffffff : 0;
  if (key == NULL)
    return 0;
  if (key_bytes != 4) {
    snprintf (err, errlen, "dm-integrity: %s takes a 4-byte key, not %zu",
              h->name, key_bytes);
    return -1;
  }
  h->crc_seed = key[0] | key[1] << 8 | key[2] << 16 | (uint32_t) key[3] << 24;
  return 0;
}

static int
set_digest (struct integrity_hash *h, const char *digest, char *err,
            size_t errlen)
{
  h->md = EVP_MD_fetch (NULL, digest, NULL);
  if (h->md == NULL || EVP_MD_get_size (h->md) <= 0) {
    snprintf (err, errlen, "dm-integrity: unknown internal hash %s",
              h->name);
    return -1;
  }
  h->digest_size = EVP_MD_get_size (h->md);
  return 0;
}

static int
set_hmac (struct integrity_hash *h, const char *digest, const uint8_t *key,
          size_t key_bytes, char *err, size_t errlen)
{
  EVP_MAC *mac;
  OSSL_PARAM params[2];

  if (set_digest (h, digest, err, errlen) == -1)
    return -1;
  if (key == NULL) {
    snprintf (err, errlen, "dm-integrity: %s needs a key", h->name);
    return -1;
  }
  mac = EVP_MAC_fetch (NULL, "HMAC", NULL);
  h->mac_template = mac ? EVP_MAC_CTX_new (mac) : NULL;
  EVP_MAC_free (mac);
  params[0] = OSSL_PARAM_construct_utf8_string (OSSL_MAC_PARAM_DIGEST,
                                                (char *) digest, 0);
  params[1] = OSSL_PARAM_construct_end ();
  if (h->mac_template == NULL
      || !EVP_MAC_init (h->mac_template, key, key_bytes, params)) {
    snprintf (err, errlen, "dm-integrity: cannot key %s", h->name);
    return -1;
  }
  return 0;
}

static int
setup (struct integrity_hash *h, const char *name, const uint8_t *key,
       size_t key_bytes, char *err, size_t errlen)
{
  char inner[64];
  size_t n = strlen (name);

  if (strcmp (name, "crc32c") == 0 || strcmp (name, "crc32") == 0) {
    h->kind = name[5] == 'c' ? HASH_CRC32C : HASH_CRC32;
    return set_crc (h, key, key_bytes, err, errlen);
  }
  if (strncmp (name, "hmac(", 5) == 0 && n > 6 && name[n - 1] == ')') {
    h->kind = HASH_HMAC;
    snprintf (inner, sizeof inner, "%.*s", (int) (n - 6), name + 5);
    return set_hmac (h, inner, key, key_bytes, err, errlen);
  }
  h->kind = HASH_DIGEST;
  if (key != NULL) {
    snprintf (err, errlen, "dm-integrity: %s takes no key", name);
    return -1;
  }
  return set_digest (h, name, err, errlen);
}

struct integrity_hash *
integrity_hash_new (const char *name, const uint8_t *key, size_t key_bytes,
                    char *err, size_t errlen)
{
  struct integrity_hash *h;

  if (name == NULL || strlen (name) >= sizeof h->name || name[0] == '\0') {
    snprintf (err, errlen, "dm-integrity: invalid internal hash name");
    return NULL;
  }
  h = calloc (1, sizeof *h);
  if (h == NULL) {
    snprintf (err, errlen, "dm-integrity: out of memory");
    return NULL;
  }
  strcpy (h->name, name);
  h->key_bytes = key ? key_bytes : 0;
  if (setup (h, name, key, key_bytes, err, errlen) == -1) {
    integrity_hash_free (h);
    return NULL;
  }
  return h;
}

size_t
integrity_hash_key_bytes (const struct integrity_hash *h)
{
  return h->key_bytes;
}

uint32_t
integrity_hash_digest_size (const struct integrity_hash *h)
{
  return h->digest_size;
}

const char *
integrity_hash_name (const struct integrity_hash *h)
{
  return h->name;
}

static void
put_le32 (uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = v >> (8 * i);
}

static int
crc_tag (const struct integrity_hash *h, const uint8_t *salt,
         const uint8_t sector_le[8], const void *data, size_t data_bytes,
         uint8_t *digest)
{
  uint32_t (*fn) (uint32_t, const void *, size_t) =
    h->kind == HASH_CRC32C ? crc32c_le : crc32_le;
  uint32_t crc = h->crc_seed;

  if (salt != NULL)
    crc = fn (crc, salt, 16);
  crc = fn (crc, sector_le, 8);
  crc = fn (crc, data, data_bytes);
  put_le32 (digest, h->kind == HASH_CRC32C ? ~crc : crc);
  return 0;
}

static int
digest_tag (const struct integrity_hash *h, const uint8_t *salt,
            const uint8_t sector_le[8], const void *data,
            size_t data_bytes, uint8_t *digest)
{
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  int ok = ctx != NULL && EVP_DigestInit_ex (ctx, h->md, NULL)
    && (salt == NULL || EVP_DigestUpdate (ctx, salt, 16))
    && EVP_DigestUpdate (ctx, sector_le, 8)
    && EVP_DigestUpdate (ctx, data, data_bytes)
    && EVP_DigestFinal_ex (ctx, digest, NULL);

  EVP_MD_CTX_free (ctx);
  return ok ? 0 : -EIO;
}

static int
hmac_tag (const struct integrity_hash *h, const uint8_t *salt,
          const uint8_t sector_le[8], const void *data, size_t data_bytes,
          uint8_t *digest)
{
  EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup (h->mac_template);
  size_t out;
  int ok = ctx != NULL
    && (salt == NULL || EVP_MAC_update (ctx, salt, 16))
    && EVP_MAC_update (ctx, sector_le, 8)
    && EVP_MAC_update (ctx, data, data_bytes)
    && EVP_MAC_final (ctx, digest, &out, EVP_MAX_MD_SIZE);

  EVP_MAC_CTX_free (ctx);
  return ok ? 0 : -EIO;
}

int
integrity_hash_tag (const struct integrity_hash *h, const uint8_t *salt,
                    uint64_t sector, const void *data, size_t data_bytes,
                    uint8_t *tag, uint32_t tag_size)
{
  uint8_t digest[EVP_MAX_MD_SIZE], sector_le[8];
  int r;

  for (int i = 0; i < 8; i++)
    sector_le[i] = sector >> (8 * i);
  switch (h->kind) {
  case HASH_CRC32C: case HASH_CRC32:
    r = crc_tag (h, salt, sector_le, data, data_bytes, digest);
    break;
  case HASH_DIGEST:
    r = digest_tag (h, salt, sector_le, data, data_bytes, digest);
    break;
  default:
    r = hmac_tag (h, salt, sector_le, data, data_bytes, digest);
    break;
  }
  if (r < 0)
    return r;
  if (tag_size <= h->digest_size)
    memcpy (tag, digest, tag_size);
  else {
    memcpy (tag, digest, h->digest_size);
    memset (tag + h->digest_size, 0, tag_size - h->digest_size);
  }
  explicit_bzero (digest, sizeof digest);
  return 0;
}

void
integrity_hash_free (struct integrity_hash *h)
{
  if (h == NULL)
    return;
  EVP_MAC_CTX_free (h->mac_template);
  EVP_MD_free (h->md);
  explicit_bzero (h, sizeof *h);
  free (h);
}
