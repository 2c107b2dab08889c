/* SPDX-License-Identifier: GPL-2.0-or-later */
/* aead_sector: one authenticated dm-crypt sector at a time, as Linux
 * 6.1's crypt_convert_block_aead lays out the request (AAD = le64 sector
 * and IV; then the sector; then the tag) and as crypto/authenc.c,
 * crypto/essiv.c, crypto/gcm.c and crypto/chacha20poly1305.c compute
 * it.  The ciphers and the HMAC are OpenSSL's, keyed once, copied per
 * thread (ctx_pool.c). */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include "aead.h"
#include "aead_spec.h"
#include "block_cipher.h"
#include "ctx_pool.h"
#include "iv.h"
#include "secmem.h"
#include "xts.h"

#define SECTOR_SHIFT 9               /* 512-byte sectors */
#define MAX_SECTOR_BYTES 4096
#define AAD_MAX_BYTES (8 + AEAD_MAX_IV_BYTES)

/* Pool slots.  authenc's XTS is the ECB construction (xts.h) on any
 * 16-byte cipher and any key, equal halves included, as the kernel's. */
enum { SLOT_ENC, SLOT_DEC, SLOT_TWEAK, SLOT_ESSIV };

struct aead_sector
{
  struct aead_spec spec;
  struct iv_gen iv;              /* unless spec.iv_random */
  uint32_t sector_bytes;
  unsigned sector_shift;         /* log2 (sector_bytes / 512) */
  bool iv_large_sectors;
  uint64_t iv_offset;            /* 512-byte sectors */
  struct ctx_pool *pool;         /* and the keyed HMAC of AEAD_AUTHENC */
};

static int
check_geometry (const struct aead_sector_params *p, char *err,
                size_t errlen)
{
  uint32_t ss = p->sector_bytes;

  if (ss < 512 || ss > MAX_SECTOR_BYTES || (ss & (ss - 1)) != 0) {
    snprintf (err, errlen, "invalid sector size %u: it must be a power "
              "of two from 512 to 4096 bytes", ss);
    return -1;
  }
  /* crypt_ctr: "Invalid iv_offset sector" */
  if ((p->iv_offset & ((ss >> SECTOR_SHIFT) - 1)) != 0) {
    snprintf (err, errlen, "invalid iv_offset %llu: not a multiple of "
              "%u sectors", (unsigned long long) p->iv_offset,
              ss >> SECTOR_SHIFT);
    return -1;
  }
  if (p->key == NULL) {
    snprintf (err, errlen, "no key");
    return -1;
  }
  return 0;
}

static EVP_CIPHER_CTX *
keyed (const struct block_cipher *bc, const char *mode, const uint8_t *key,
       size_t key_bytes, bool encrypt)
{
  EVP_CIPHER *cipher = block_cipher_fetch (bc, mode, key_bytes);
  EVP_CIPHER_CTX *ctx;

  if (cipher == NULL)
    return NULL;
  ctx = block_cipher_keyed_ctx (cipher, key, key_bytes, encrypt);
  EVP_CIPHER_free (cipher);
  return ctx;
}

/* crypto/essiv.c's essiv_aead_setkey: the salt is HASH (enckey ||
 * authkey), which is the whole table key in its order; it keys the
 * innermost cipher in ECB. */
static EVP_CIPHER_CTX *
essiv_ctx (const struct aead_spec *s, const uint8_t *key, size_t key_bytes)
{
  size_t salt_bytes = iv_essiv_salt_bytes (s->essiv_hash);
  uint8_t *salt = secmem_alloc (EVP_MAX_MD_SIZE);
  EVP_CIPHER_CTX *ctx = NULL;

  if (salt == NULL)
    return NULL;
  if (iv_essiv_salt (s->essiv_hash, key, key_bytes, salt) == 0)
    ctx = keyed (s->cipher, "ECB", salt, salt_bytes, true);
  secmem_free (salt, EVP_MAX_MD_SIZE);
  return ctx;
}

/* The block cipher of authenc and integrity:N:none, keyed with the
 * first CIPHER_BYTES of the key (crypt_copy_authenckey: the table key is
 * the cipher key, then the MAC key). */
static int
key_block (const struct aead_spec *s, const uint8_t *key,
           size_t cipher_bytes, EVP_CIPHER_CTX *t[CTX_POOL_SLOTS])
{
  size_t half = cipher_bytes / 2;

  if (s->chain == CHAIN_XTS)
    return (t[SLOT_ENC] = keyed (s->cipher, "ECB", key, half, true)) &&
      (t[SLOT_DEC] = keyed (s->cipher, "ECB", key, half, false)) &&
      (t[SLOT_TWEAK] = keyed (s->cipher, "ECB", key + half, half, true))
      ? 0 : -1;
  return (t[SLOT_ENC] = keyed (s->cipher, "CBC", key, cipher_bytes, true)) &&
    (t[SLOT_DEC] = keyed (s->cipher, "CBC", key, cipher_bytes, false))
    ? 0 : -1;
}

static EVP_CIPHER_CTX *
chachapoly_ctx (const uint8_t *key, bool encrypt)
{
  EVP_CIPHER *cipher = EVP_CIPHER_fetch (NULL, "ChaCha20-Poly1305", NULL);
  EVP_CIPHER_CTX *ctx = NULL;

  if (cipher != NULL)
    ctx = block_cipher_keyed_ctx (cipher, key, 32, encrypt);
  EVP_CIPHER_free (cipher);
  return ctx;
}

static int
make_templates (const struct aead_spec *s, const uint8_t *key,
                size_t key_bytes, EVP_CIPHER_CTX *t[CTX_POOL_SLOTS])
{
  switch (s->kind) {
  case AEAD_GCM:
    return (t[SLOT_ENC] = keyed (s->cipher, "GCM", key, key_bytes, true)) &&
      (t[SLOT_DEC] = keyed (s->cipher, "GCM", key, key_bytes, false))
      ? 0 : -1;
  case AEAD_CHACHAPOLY:
    return (t[SLOT_ENC] = chachapoly_ctx (key, true)) &&
      (t[SLOT_DEC] = chachapoly_ctx (key, false)) ? 0 : -1;
  case AEAD_AUTHENC:
  case AEAD_IV_ONLY:
    if (key_block (s, key, aead_spec_cipher_key_bytes (s, key_bytes),
                   t) == -1)
      return -1;
    if (s->iv == IV_ESSIV &&
        (t[SLOT_ESSIV] = essiv_ctx (s, key, key_bytes)) == NULL)
      return -1;
    return 0;
  }
  return -1;
}

/* HMAC keyed with the last mac_key_bytes of the key. */
static EVP_MAC_CTX *
mac_template (const struct aead_spec *s, const uint8_t *key,
              size_t key_bytes)
{
  EVP_MAC *mac = EVP_MAC_fetch (NULL, "HMAC", NULL);
  EVP_MAC_CTX *ctx = mac != NULL ? EVP_MAC_CTX_new (mac) : NULL;
  OSSL_PARAM params[] = {
    OSSL_PARAM_utf8_string (OSSL_MAC_PARAM_DIGEST,
                            (char *) s->mac_digest, 0),
    OSSL_PARAM_END
  };

  EVP_MAC_free (mac);
  if (ctx != NULL &&
      EVP_MAC_init (ctx, key + key_bytes - s->mac_key_bytes,
                    s->mac_key_bytes, params) != 1) {
    EVP_MAC_CTX_free (ctx);
    ctx = NULL;
  }
  return ctx;
}

static int
key_all (struct aead_sector *a, const uint8_t *key, size_t key_bytes)
{
  EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS] = { NULL };
  EVP_MAC_CTX *mac = NULL;
  size_t i;

  if (make_templates (&a->spec, key, key_bytes, templates) == -1 ||
      (a->spec.kind == AEAD_AUTHENC &&
       (mac = mac_template (&a->spec, key, key_bytes)) == NULL)) {
    for (i = 0; i < CTX_POOL_SLOTS; i++)
      EVP_CIPHER_CTX_free (templates[i]);
    return -1;
  }
  a->pool = ctx_pool_new_mac (templates, mac);
  return a->pool != NULL ? 0 : -1;
}

struct aead_sector *
aead_sector_new_params (const struct aead_sector_params *p, char *err,
                        size_t errlen)
{
  struct aead_sector *a;

  if (check_geometry (p, err, errlen) == -1)
    return NULL;
  a = calloc (1, sizeof *a);
  if (a == NULL) {
    snprintf (err, errlen, "out of memory");
    return NULL;
  }
  if (aead_spec_parse (p->cipher, p->integrity, p->tag_bytes, &a->spec,
                       err, errlen) == -1 ||
      aead_spec_check_key (&a->spec, p->key_bytes, err, errlen) == -1)
    goto fail;
  a->sector_bytes = p->sector_bytes;
  while ((512u << a->sector_shift) < p->sector_bytes)
    a->sector_shift++;
  a->iv_large_sectors = p->iv_large_sectors;
  a->iv_offset = p->iv_offset;
  iv_gen_init (&a->iv, a->spec.iv, a->spec.iv_bytes, p->sector_bytes);
  if (key_all (a, p->key, p->key_bytes) == -1) {
    ERR_clear_error ();
    snprintf (err, errlen, "cannot key %s (the library refused it)",
              a->spec.kernel_cipher);
    goto fail;
  }
  return a;

 fail:
  aead_sector_free (a);
  return NULL;
}

struct aead_sector *
aead_sector_new (const char *cipher, const char *integrity,
                 const uint8_t *key, size_t key_bytes, uint32_t sector_bytes,
                 bool iv_large_sectors, char *err, size_t errlen)
{
  const struct aead_sector_params p = {
    .cipher = cipher, .integrity = integrity, .key = key,
    .key_bytes = key_bytes, .sector_bytes = sector_bytes,
    .iv_large_sectors = iv_large_sectors,
  };

  return aead_sector_new_params (&p, err, errlen);
}

void
aead_sector_free (struct aead_sector *a)
{
  if (a == NULL)
    return;
  ctx_pool_free (a->pool);       /* the contexts cleanse their keys */
  explicit_bzero (a, sizeof *a);
  free (a);
}

uint32_t
aead_tag_size (const struct aead_sector *a)
{
  return a->spec.tag_bytes;
}

uint32_t
aead_auth_tag_size (const struct aead_sector *a)
{
  return a->spec.auth_tag_bytes;
}

uint32_t
aead_stored_iv_size (const struct aead_sector *a)
{
  return a->spec.iv_tag_bytes;
}

uint32_t
aead_iv_size (const struct aead_sector *a)
{
  return a->spec.iv_bytes;
}

const char *
aead_kernel_cipher (const struct aead_sector *a)
{
  return a->spec.kernel_cipher;
}

const char *
aead_kernel_integrity (const struct aead_sector *a)
{
  return a->spec.kernel_integrity;
}

/* The generated IV of a sector (crypt_convert_block_aead: iv_sector is
 * cc_sector, shifted down with iv_large_sectors). */
static void
generated_iv (const struct aead_sector *a, uint64_t sector, uint8_t *iv)
{
  iv_generate (&a->iv, a->iv_large_sectors ? sector >> a->sector_shift
               : sector, iv);
}

/* The AAD: le64 (cc_sector - iv_offset) in 512-byte sectors whatever
 * the sector size, then the IV as the AEAD sees it. */
static size_t
make_aad (const struct aead_sector *a, uint64_t sector, const uint8_t *iv,
          uint8_t *aad)
{
  uint64_t le = htole64 (sector - a->iv_offset);

  memcpy (aad, &le, sizeof le);
  memcpy (aad + sizeof le, iv, a->spec.iv_bytes);
  return sizeof le + a->spec.iv_bytes;
}

/* The skcipher under authenc: CBC, or XTS as whiten, ECB, whiten. */
static int
block_crypt (const struct aead_sector *a, EVP_CIPHER_CTX *const *ctx,
             bool encrypt, const uint8_t *iv, uint8_t *dst,
             const uint8_t *src)
{
  EVP_CIPHER_CTX *bulk = ctx[encrypt ? SLOT_ENC : SLOT_DEC];
  uint8_t tweak[XTS_BLOCK_BYTES], table[MAX_SECTOR_BYTES];
  size_t len = a->sector_bytes;

  if (a->spec.chain == CHAIN_CBC)
    return EVP_CipherInit_ex (bulk, NULL, NULL, NULL, iv, -1) == 1 ?
      block_cipher_update (bulk, dst, src, len) : -1;
  if (block_cipher_update (ctx[SLOT_TWEAK], tweak, iv, XTS_BLOCK_BYTES) == -1)
    return -1;
  xts_whiten_first (dst, src, table, len, tweak);
  if (block_cipher_update (bulk, dst, dst, len) == -1)
    return -1;
  xts_whiten (dst, dst, table, len);
  return 0;
}

/* HMAC over AAD, then the ciphertext (crypto_authenc_genicv), on the
 * thread's copy of the keyed template, started over. */
static int
mac_sector (const struct aead_sector *a, const uint8_t *aad,
            size_t aad_bytes, const uint8_t *data,
            uint8_t mac[AEAD_MAX_MAC_BYTES])
{
  EVP_MAC_CTX *ctx = ctx_pool_get_mac (a->pool);
  size_t mac_bytes;

  return ctx != NULL && EVP_MAC_init (ctx, NULL, 0, NULL) == 1 &&
    EVP_MAC_update (ctx, aad, aad_bytes) == 1 &&
    EVP_MAC_update (ctx, data, a->sector_bytes) == 1 &&
    EVP_MAC_final (ctx, mac, &mac_bytes, AEAD_MAX_MAC_BYTES) == 1 ? 0 : -1;
}

/* The IV the cipher takes, which essiv also writes into the AAD
 * (essiv_aead_crypt). */
static int
cipher_iv (const struct aead_sector *a, EVP_CIPHER_CTX *const *ctx,
           const uint8_t *iv, uint8_t *out)
{
  if (a->spec.iv != IV_ESSIV || a->spec.iv_random) {
    memcpy (out, iv, a->spec.iv_bytes);
    return 0;
  }
  return block_cipher_update (ctx[SLOT_ESSIV], out, iv, a->spec.iv_bytes);
}

static int
authenc_encrypt (const struct aead_sector *a, EVP_CIPHER_CTX *const *ctx,
                 uint64_t sector, const uint8_t *iv, const uint8_t *in,
                 uint8_t *out, uint8_t *tag)
{
  uint8_t civ[AEAD_MAX_IV_BYTES], aad[AAD_MAX_BYTES];
  uint8_t mac[AEAD_MAX_MAC_BYTES];
  size_t aad_bytes;

  if (cipher_iv (a, ctx, iv, civ) == -1)
    return -EIO;
  aad_bytes = make_aad (a, sector, civ, aad);
  if (block_crypt (a, ctx, true, civ, out, in) == -1 ||
      (a->spec.kind == AEAD_AUTHENC &&
       mac_sector (a, aad, aad_bytes, out, mac) == -1))
    return -EIO;
  if (a->spec.kind == AEAD_AUTHENC)
    memcpy (tag, mac, a->spec.auth_tag_bytes);   /* truncated as authsize */
  return 0;
}

/* crypto_authenc_decrypt: the MAC is checked before anything is
 * decrypted. */
static int
authenc_decrypt (const struct aead_sector *a, EVP_CIPHER_CTX *const *ctx,
                 uint64_t sector, const uint8_t *iv, const uint8_t *in,
                 uint8_t *out, const uint8_t *tag)
{
  uint8_t civ[AEAD_MAX_IV_BYTES], aad[AAD_MAX_BYTES];
  uint8_t mac[AEAD_MAX_MAC_BYTES];
  size_t aad_bytes;

  if (cipher_iv (a, ctx, iv, civ) == -1)
    return -EIO;
  aad_bytes = make_aad (a, sector, civ, aad);
  if (a->spec.kind == AEAD_AUTHENC) {
    if (mac_sector (a, aad, aad_bytes, in, mac) == -1)
      return -EIO;
    if (CRYPTO_memcmp (mac, tag, a->spec.auth_tag_bytes) != 0)
      return -EILSEQ;
  }
  return block_crypt (a, ctx, false, civ, out, in) == -1 ? -EIO : 0;
}

/* gcm(aes) and rfc7539(chacha20,poly1305): OpenSSL's AEAD over the same
 * AAD; the tag is the first auth_tag_bytes of the AEAD's. */
static int
aead_encrypt (const struct aead_sector *a, EVP_CIPHER_CTX *const *ctx,
              uint64_t sector, const uint8_t *iv, const uint8_t *in,
              uint8_t *out, uint8_t *tag)
{
  EVP_CIPHER_CTX *c = ctx[SLOT_ENC];
  uint8_t aad[AAD_MAX_BYTES];
  int aad_bytes = (int) make_aad (a, sector, iv, aad), n, last;

  if (EVP_CipherInit_ex (c, NULL, NULL, NULL, iv, -1) != 1 ||
      EVP_CipherUpdate (c, NULL, &n, aad, aad_bytes) != 1 ||
      EVP_CipherUpdate (c, out, &n, in, (int) a->sector_bytes) != 1 ||
      EVP_CipherFinal_ex (c, out + n, &last) != 1 ||
      EVP_CIPHER_CTX_ctrl (c, EVP_CTRL_AEAD_GET_TAG,
                           (int) a->spec.auth_tag_bytes, tag) != 1)
    return -EIO;
  return 0;
}

static int
aead_decrypt (const struct aead_sector *a, EVP_CIPHER_CTX *const *ctx,
              uint64_t sector, const uint8_t *iv, const uint8_t *in,
              uint8_t *out, const uint8_t *tag)
{
  EVP_CIPHER_CTX *c = ctx[SLOT_DEC];
  uint8_t aad[AAD_MAX_BYTES];
  int aad_bytes = (int) make_aad (a, sector, iv, aad), n, last;

  if (EVP_CipherInit_ex (c, NULL, NULL, NULL, iv, -1) != 1 ||
      EVP_CIPHER_CTX_ctrl (c, EVP_CTRL_AEAD_SET_TAG,
                           (int) a->spec.auth_tag_bytes,
                           (void *) tag) != 1 ||
      EVP_CipherUpdate (c, NULL, &n, aad, aad_bytes) != 1 ||
      EVP_CipherUpdate (c, out, &n, in, (int) a->sector_bytes) != 1)
    return -EIO;
  return EVP_CipherFinal_ex (c, out + n, &last) == 1 ? 0 : -EILSEQ;
}

static int
check_sector (const struct aead_sector *a, uint64_t sector)
{
  return (sector & ((a->sector_bytes >> SECTOR_SHIFT) - 1)) == 0 &&
    sector >= a->iv_offset ? 0 : -EINVAL;
}

static int
encrypt_with_iv (const struct aead_sector *a, uint64_t sector,
                 const uint8_t *in, uint8_t *out, uint8_t *tag,
                 const uint8_t *iv)
{
  EVP_CIPHER_CTX *const *ctx;
  int r;

  if (check_sector (a, sector) != 0)
    return -EINVAL;
  ctx = ctx_pool_get (a->pool);
  if (ctx == NULL)
    return -ENOMEM;
  if (a->spec.kind == AEAD_GCM || a->spec.kind == AEAD_CHACHAPOLY)
    r = aead_encrypt (a, ctx, sector, iv, in, out, tag);
  else
    r = authenc_encrypt (a, ctx, sector, iv, in, out, tag);
  if (r == 0 && a->spec.iv_random)   /* after the auth tag */
    memcpy (tag + a->spec.auth_tag_bytes, iv, a->spec.iv_tag_bytes);
  ERR_clear_error ();
  return r;
}

int
aead_sector_encrypt (const struct aead_sector *a, uint64_t sector,
                     const uint8_t *in, uint8_t *out, uint8_t *tag)
{
  uint8_t iv[AEAD_MAX_IV_BYTES];

  /* crypt_iv_random_gen: fresh bytes for every write. */
  if (a->spec.iv_random) {
    if (RAND_bytes (iv, (int) a->spec.iv_bytes) != 1) {
      ERR_clear_error ();
      return -EIO;
    }
  }
  else
    generated_iv (a, sector, iv);
  return encrypt_with_iv (a, sector, in, out, tag, iv);
}

int
aead_sector_encrypt_iv (const struct aead_sector *a, uint64_t sector,
                        const uint8_t *in, uint8_t *out, uint8_t *tag,
                        const uint8_t *iv)
{
  if (!a->spec.iv_random)
    return -EINVAL;
  return encrypt_with_iv (a, sector, in, out, tag, iv);
}

int
aead_sector_decrypt (const struct aead_sector *a, uint64_t sector,
                     const uint8_t *in, uint8_t *out, const uint8_t *tag)
{
  uint8_t iv[AEAD_MAX_IV_BYTES];
  EVP_CIPHER_CTX *const *ctx;
  int r;

  if (check_sector (a, sector) != 0)
    return -EINVAL;
  ctx = ctx_pool_get (a->pool);
  if (ctx == NULL)
    return -ENOMEM;
  /* For reads the IV of a -random mode is the stored one. */
  if (a->spec.iv_random)
    memcpy (iv, tag + a->spec.auth_tag_bytes, a->spec.iv_bytes);
  else
    generated_iv (a, sector, iv);
  if (a->spec.kind == AEAD_GCM || a->spec.kind == AEAD_CHACHAPOLY)
    r = aead_decrypt (a, ctx, sector, iv, in, out, tag);
  else
    r = authenc_decrypt (a, ctx, sector, iv, in, out, tag);
  if (r != 0)
    explicit_bzero (out, a->sector_bytes);
  ERR_clear_error ();
  return r;
}
