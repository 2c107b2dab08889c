/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk and tcw over cbc-null sector ciphers (iv_legacy.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "../common/log.h"
#include "iv.h"
#include "iv_legacy.h"
#include "lmk.h"
#include "secmem.h"
#include "tcw.h"

#define SECTOR_BYTES 512        /* lmk's and tcw's only sector size */

struct iv_legacy
{
  enum iv_mode mode;            /* IV_LMK or IV_TCW */
  unsigned iv_bytes;            /* the cipher block, at least 8 */
  uint64_t iv_offset;           /* 512-byte sectors */
  unsigned key_count;
  struct sector_cipher **data;  /* key_count cbc-null ciphers */
  /* secmem, IV_KEY_BYTES: tcw's IV seed then whitening key; lmk's
   * 64-byte seed, or nothing (has_seed false). */
  uint8_t *iv_key;
  bool has_seed;
};

#define IV_KEY_BYTES LMK_SEED_BYTES     /* tcw's: at most 16 + 16 */

bool
iv_legacy_mode (const struct cipher_spec *s)
{
  return s->iv == IV_LMK || s->iv == IV_TCW;
}

/* The single-key spec of the data ciphers: "aes-cbc-null". */
static int
data_spec (const struct cipher_spec *s, char *buf, size_t size)
{
  int n = snprintf (buf, size, "%s-cbc-null", s->cipher->name);

  if (n < 0 || (size_t) n >= size) {
    nbdkit_error ("cipher name too long: %s", s->cipher->name);
    return -1;
  }
  return 0;
}

int
iv_legacy_check (const struct cipher_spec *s, size_t key_bytes)
{
  struct cipher_key_layout l;
  char spec[64];

  cipher_spec_key_layout (s, key_bytes, &l);
  if (data_spec (s, spec, sizeof spec) == -1)
    return -1;
  return sector_cipher_check_spec (spec, l.data_key_bytes);
}

/* The IV mode's own key bytes from KEY, after the data keys
 * (crypt_iv_tcw_init, crypt_iv_lmk_init). */
static int
take_iv_key (struct iv_legacy *l, const struct cipher_key_layout *kl,
             const uint8_t *key)
{
  const uint8_t *extra = key + kl->key_count * kl->data_key_bytes;

  l->iv_key = secmem_alloc (IV_KEY_BYTES);
  if (l->iv_key == NULL) {
    nbdkit_error ("secmem_alloc: %m");
    return -1;
  }
  memset (l->iv_key, 0, IV_KEY_BYTES);
  if (l->mode == IV_TCW)
    memcpy (l->iv_key, extra, l->iv_bytes + TCW_WHITENING_BYTES);
  else if (kl->extra_bytes) {
    memcpy (l->iv_key, extra, LMK_SEED_KEY_BYTES);
    l->has_seed = true;
  }
  return 0;
}

struct iv_legacy *
iv_legacy_new (const struct cipher_spec *s,
               const struct sector_cipher_params *p)
{
  struct sector_cipher_params dp = *p;
  struct cipher_key_layout kl;
  struct iv_legacy *l;
  char spec[64];
  unsigned i;

  if (p->sector_size != SECTOR_BYTES) {
    nbdkit_error ("cipher spec %s: %s works only with 512-byte sectors, "
                  "not %u", p->spec, s->iv == IV_LMK ? "lmk" : "tcw",
                  p->sector_size);
    return NULL;
  }
  cipher_spec_key_layout (s, p->key_size, &kl);
  if (data_spec (s, spec, sizeof spec) == -1)
    return NULL;
  l = calloc (1, sizeof *l);
  if (l == NULL
      || (l->data = calloc (kl.key_count, sizeof *l->data)) == NULL) {
    nbdkit_error ("calloc: %m");
    free (l);
    return NULL;
  }
  l->mode = s->iv;
  l->iv_bytes = s->cipher->block_bytes < 8 ? 8 : s->cipher->block_bytes;
  l->iv_offset = p->iv_offset;
  l->key_count = kl.key_count;
  dp.spec = spec;
  dp.key_size = kl.data_key_bytes;
  dp.iv_offset = 0;             /* a null IV: the sector plays no part */
  dp.iv_large_sectors = false;
  for (i = 0; i < kl.key_count; i++) {
    dp.key = p->key + i * kl.data_key_bytes;
    if ((l->data[i] = sector_cipher_new (&dp)) == NULL)
      goto fail;
  }
  if (take_iv_key (l, &kl, p->key) == 0)
    return l;
 fail:
  iv_legacy_free (l);
  return NULL;
}

void
iv_legacy_free (struct iv_legacy *l)
{
  unsigned i;

  if (l == NULL)
    return;
  for (i = 0; l->data && i < l->key_count; i++)
    sector_cipher_free (l->data[i]);
  free (l->data);
  secmem_free (l->iv_key, IV_KEY_BYTES);
  free (l);
}

const char *
iv_legacy_library (const struct iv_legacy *l)
{
  return sector_cipher_library (l->data[0]);
}

static void
xor_iv (uint8_t *block, const uint8_t *iv, unsigned bytes)
{
  unsigned i;

  for (i = 0; i < bytes; i++)
    block[i] ^= iv[i];
}

/* tcw over a run: one data key, so the CBC of the whole run is one
 * call (cbc_multi.c) between the per-sector IVs and whitening. */
static int
tcw_convert (struct iv_legacy *l, uint8_t *dst, const uint8_t *src,
             size_t nbytes, uint64_t sector, bool encrypt)
{
  const uint8_t *seed = l->iv_key, *whitening = l->iv_key + l->iv_bytes;
  uint64_t first = sector + l->iv_offset;
  uint8_t iv[IV_MAX_BYTES];
  size_t off;
  int r;

  if (dst != src)
    memmove (dst, src, nbytes);
  for (off = 0; off < nbytes; off += SECTOR_BYTES) {
    uint64_t iv_sector = first + off / SECTOR_BYTES;

    if (encrypt) {
      tcw_iv (seed, l->iv_bytes, iv_sector, iv);
      xor_iv (dst + off, iv, l->iv_bytes);
    }
    else                        /* crypt_iv_tcw_gen: before the CBC */
      tcw_whiten (whitening, iv_sector, dst + off);
  }
  r = (encrypt ? sector_cipher_encrypt : sector_cipher_decrypt)
    (l->data[0], dst, dst, nbytes, sector);
  for (off = 0; r == 0 && off < nbytes; off += SECTOR_BYTES) {
    uint64_t iv_sector = first + off / SECTOR_BYTES;

    if (encrypt)                /* crypt_iv_tcw_post: after the CBC */
      tcw_whiten (whitening, iv_sector, dst + off);
    else {
      tcw_iv (seed, l->iv_bytes, iv_sector, iv);
      xor_iv (dst + off, iv, l->iv_bytes);
    }
  }
  OPENSSL_cleanse (iv, sizeof iv);
  return r;
}

/* One lmk sector with its data key.  A write's IV is made from the
 * plaintext (crypt_iv_lmk_gen); a read decrypts with a zero IV and
 * XORs in the IV made from what that gives (crypt_iv_lmk_post). */
static int
lmk_sector (struct iv_legacy *l, uint8_t *dst, const uint8_t *src,
            uint64_t sector, bool encrypt)
{
  uint64_t iv_sector = sector + l->iv_offset;
  struct sector_cipher *c = l->data[iv_sector & (l->key_count - 1)];
  const uint8_t *seed = l->has_seed ? l->iv_key : NULL;
  uint8_t iv[IV_MAX_BYTES];
  int r;

  if (encrypt) {
    lmk_iv (seed, src, iv_sector, iv, l->iv_bytes);
    if (dst != src)
      memmove (dst, src, SECTOR_BYTES);
    xor_iv (dst, iv, l->iv_bytes);
    r = sector_cipher_encrypt (c, dst, dst, SECTOR_BYTES, sector);
  }
  else if ((r = sector_cipher_decrypt (c, dst, src, SECTOR_BYTES,
                                       sector)) == 0) {
    lmk_iv (seed, dst, iv_sector, iv, l->iv_bytes);
    xor_iv (dst, iv, l->iv_bytes);
  }
  OPENSSL_cleanse (iv, sizeof iv);
  return r;
}

int
iv_legacy_convert (struct iv_legacy *l, uint8_t *dst, const uint8_t *src,
                   size_t nbytes, uint64_t sector, bool encrypt)
{
  size_t off;

  if (nbytes % SECTOR_BYTES != 0) {
    nbdkit_error ("sector_cipher: %zu bytes at sector %" PRIu64 " are not "
                  "whole 512-byte sectors", nbytes, sector);
    errno = EINVAL;
    return -1;
  }
  if (l->mode == IV_TCW)
    return tcw_convert (l, dst, src, nbytes, sector, encrypt);
  for (off = 0; off < nbytes; off += SECTOR_BYTES, sector++)
    if (lmk_sector (l, dst + off, src + off, sector, encrypt) == -1)
      return -1;
  return 0;
}
