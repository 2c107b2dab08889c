/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sector_cipher: a parsed spec, keyed OpenSSL templates and the per-sector
 * loop of dm-crypt's crypt_convert_block_skcipher. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "../common/log.h"
#include "block_cipher.h"
#include "cascade.h"
#include "cbc_multi.h"
#include "cipher.h"
#include "cipher_spec.h"
#include "ctx_pool.h"
#include "elephant.h"
#include "gcrypt_provider.h"
#include "iv.h"
#include "iv_legacy.h"
#include "lrw.h"
#include "ossl_heap.h"
#include "secmem.h"
#include "xts.h"
#include "xts_bulk.h"

#define SECTOR_SHIFT 9          /* 512-byte sectors */

/* Below this sector size, the per-sector IV reset of OpenSSL's own XTS
 * costs more than the two whitening passes of the ECB construction
 * (xts_bulk.c); with AVX-512 whitening, below 4096 bytes. */
#define XTS_NATIVE_MIN_SECTOR 1024
#define XTS_NATIVE_MIN_SECTOR_VECTOR 4096
/* libgcrypt's XTS with an IV reset through EVP per sector, from 2048
 * bytes: below, that reset costs what its VAES saves
 * (tests/unit/test-cipher --bench, aes-xts-essiv:sha256: 4100-4700
 * MB/s against OpenSSL's 4650-5130 at 1024 bytes, 5500-6300 against
 * 4700-4900 at 2048), and the ECB construction on libgcrypt's AES-ECB
 * is quicker.  With plain64 IVs a run of sectors is one EVP call
 * (gcrypt_xts_run) from 1024 bytes; at 512, where libgcrypt is entered
 * once per sector, the construction with AVX-512 whitening is quicker
 * (tests/unit/test-cipher --bench: 7000-7100 MB/s against 5600-5800
 * with a 512-bit key, in place). */
#define XTS_GCRYPT_MIN_SECTOR 2048
#define XTS_GCRYPT_RUN_MIN_SECTOR 1024

/* How the bulk transform is made from OpenSSL primitives. */
enum transform
{
  XF_NATIVE,      /* OpenSSL's own ECB, CBC or XTS of the cipher */
  XF_XTS_ECB,     /* XTS built on ECB: whiten, ECB, whiten */
  XF_LRW,         /* LRW built on ECB the same way (lrw.c) */
  XF_IDENTITY,    /* cipher_null */
};

/* Template slots in the context pool.  Elephant has no ESSIV: its
 * sector key's AES-ECB takes that slot.  CBC has no tweak: OpenSSL's
 * ECB for cbc_multi's short columns takes that one, made only where the
 * long columns are libgcrypt's (empty, it leaves them all to SLOT_ECB_*). */
enum { SLOT_ENC, SLOT_DEC, SLOT_TWEAK, SLOT_ESSIV, SLOT_ECB_ENC,
       SLOT_ECB_DEC, SLOT_ELEPHANT = SLOT_ESSIV,
       SLOT_ECB_SHORT = SLOT_TWEAK };

struct sector_cipher
{
  struct cipher_spec spec;
  enum transform xf;
  struct iv_gen iv;
  unsigned sector_bytes;
  unsigned sector_shift;        /* log2 (sector_bytes / 512) */
  uint64_t iv_offset;           /* 512-byte sectors */
  bool iv_large_sectors;
  bool cbc_multi;               /* CBC encryption through cbc_multi.c */
  bool gcrypt_xts;              /* XF_NATIVE AES-XTS from libgcrypt */
  bool gcrypt_ecb;              /* the data's AES-ECB from libgcrypt */
  struct lrw_key *lrw;          /* secmem, for XF_LRW */
  struct ctx_pool *pool;
  struct cascade *cascade;      /* a chain of ciphers: all else unused */
  struct iv_legacy *legacy;     /* lmk or tcw: all else unused */
};

/* Whether SPEC chains several ciphers (cascade.h); -1 after
 * nbdkit_error for a chain too long. */
static int
is_cascade (const char *spec)
{
  char layer[CASCADE_MAX_LAYERS][CASCADE_LAYER_SPEC_MAX];
  int n = cascade_split (spec, layer);

  return n > 0 ? 1 : n;
}

static const char *const chain_modes[] = {
  [CHAIN_ECB] = "ECB", [CHAIN_CBC] = "CBC", [CHAIN_XTS] = "XTS",
  [CHAIN_LRW] = "ECB",
};

/* OpenSSL has XTS only for AES-128 and AES-256, and refuses to encrypt
 * with two equal key halves, which the kernel (outside FIPS mode)
 * accepts: those cases take the ECB construction, as do small sectors
 * (see XTS_NATIVE_MIN_SECTOR); libgcrypt's XTS (GCRYPT_XTS) has its
 * own smallest sector. */
static enum transform
pick_transform (const struct cipher_spec *s, const uint8_t *key,
                size_t key_bytes, unsigned sector_bytes, bool gcrypt_xts)
{
  size_t half = key_bytes / 2;

  if (s->cipher->ossl_stem == NULL)
    return XF_IDENTITY;
  if (s->chain == CHAIN_LRW)
    return XF_LRW;
  if (s->chain != CHAIN_XTS)
    return XF_NATIVE;
  if (strcmp (s->cipher->name, "aes") != 0 || (half != 16 && half != 32))
    return XF_XTS_ECB;
  if (key != NULL && CRYPTO_memcmp (key, key + half, half) == 0)
    return XF_XTS_ECB;
  if (gcrypt_xts && s->iv == IV_PLAIN64)
    return sector_bytes >= XTS_GCRYPT_RUN_MIN_SECTOR ||
      !xts_use_vector (true) ? XF_NATIVE : XF_XTS_ECB;
  if (gcrypt_xts)
    return sector_bytes >= XTS_GCRYPT_MIN_SECTOR ? XF_NATIVE : XF_XTS_ECB;
  if (sector_bytes < (xts_use_vector (true) ? XTS_NATIVE_MIN_SECTOR_VECTOR
                      : XTS_NATIVE_MIN_SECTOR))
    return XF_XTS_ECB;
  return XF_NATIVE;
}

int
sector_cipher_parse_library (const char *name,
                             enum sector_cipher_library *lib)
{
  if (strcmp (name, "auto") == 0)
    *lib = SECTOR_CIPHER_LIB_AUTO;
  else if (strcmp (name, "openssl") == 0)
    *lib = SECTOR_CIPHER_LIB_OPENSSL;
  else if (strcmp (name, "libgcrypt") == 0)
    *lib = SECTOR_CIPHER_LIB_LIBGCRYPT;
  else
    return -1;
  return 0;
}

/* Whether AES-XTS should come from libgcrypt. */
static bool
wants_gcrypt_xts (enum sector_cipher_library lib)
{
  return lib == SECTOR_CIPHER_LIB_LIBGCRYPT ||
    (lib == SECTOR_CIPHER_LIB_AUTO && gcrypt_provider_has_vaes ());
}

const char *
sector_cipher_auto_library (void)
{
  return wants_gcrypt_xts (SECTOR_CIPHER_LIB_AUTO) ? "libgcrypt" : "openssl";
}

/* Whether CBC goes through cbc_multi.c: every IV generator but eboiv,
 * whose IV is itself a CBC encryption (make_iv), and elephant, whose
 * diffuser works on each whole sector around its CBC. */
static bool
uses_cbc_multi (const struct cipher_spec *s)
{
  return s->cipher->ossl_stem != NULL && s->chain == CHAIN_CBC &&
    s->iv != IV_NONE && s->iv != IV_EBOIV && s->iv != IV_ELEPHANT;
}

/* Fetch from LIB and key one context. */
static EVP_CIPHER_CTX *
keyed_ctx_from (const struct block_cipher *bc, enum block_cipher_lib lib,
                const char *mode, const uint8_t *key, size_t key_bytes,
                bool encrypt)
{
  size_t cipher_key_bytes = strcmp (mode, "XTS") == 0 ?
    key_bytes / 2 : key_bytes;
  EVP_CIPHER *cipher = block_cipher_fetch_from (bc, lib, mode,
                                                cipher_key_bytes);
  EVP_CIPHER_CTX *ctx;

  if (cipher == NULL)
    return NULL;
  ctx = block_cipher_keyed_ctx (cipher, key, key_bytes, encrypt);
  EVP_CIPHER_free (cipher);
  return ctx;
}

static EVP_CIPHER_CTX *
keyed_ctx (const struct block_cipher *bc, const char *mode,
           const uint8_t *key, size_t key_bytes, bool encrypt)
{
  return keyed_ctx_from (bc, bc->lib, mode, key, key_bytes, encrypt);
}

/* Whether OpenSSL has BC in MODE for KEY_BYTES keys (nbdkit_error if
 * not), e.g. when the legacy provider is missing. */
static bool
available (const struct block_cipher *bc, const char *mode,
           size_t key_bytes)
{
  EVP_CIPHER *cipher = block_cipher_fetch (bc, mode, key_bytes);

  EVP_CIPHER_free (cipher);
  return cipher != NULL;
}

int
sector_cipher_check_spec (const char *spec, size_t key_size)
{
  struct cipher_spec s;
  enum transform xf;
  size_t cipher_key_bytes;
  int cascade = is_cascade (spec);

  if (cascade != 0)
    return cascade == 1 ? cascade_check_spec (spec, key_size) : -1;
  if (cipher_spec_parse (spec, &s) == -1 ||
      cipher_spec_check_key (&s, spec, key_size) == -1)
    return -1;
  if (iv_legacy_mode (&s))
    return iv_legacy_check (&s, key_size);
  /* The smallest sector: the transform that fetches least. */
  xf = pick_transform (&s, NULL, key_size, 512, false);
  if (xf == XF_IDENTITY)
    return 0;

  /* What sector_cipher_new will fetch, without keying anything. */
  cipher_key_bytes = s.chain == CHAIN_XTS || s.iv == IV_ELEPHANT ?
    key_size / 2
    : s.chain == CHAIN_LRW ? key_size - LRW_BLOCK_BYTES : key_size;
  if (!available (s.cipher, xf == XF_XTS_ECB ? "ECB" : chain_modes[s.chain],
                  cipher_key_bytes))
    return -1;
  if (s.iv == IV_ESSIV &&
      !available (s.cipher, "ECB", iv_essiv_salt_bytes (s.essiv_hash)))
    return -1;
  if (uses_cbc_multi (&s) && !available (s.cipher, "ECB", cipher_key_bytes))
    return -1;
  if (s.iv == IV_ELEPHANT &&
      !available (block_cipher_lookup ("aes"), "ECB", key_size / 2))
    return -1;
  return 0;
}

/* Checks the geometry as dm-crypt's constructor does. */
static int
check_params (const struct sector_cipher_params *p)
{
  unsigned ss = p->sector_size;

  if (ss < 512 || ss > 4096 || (ss & (ss - 1)) != 0) {
    nbdkit_error ("invalid sector size %u: it must be a power of two "
                  "from 512 to 4096 bytes", ss);
    return -1;
  }
  if ((p->iv_offset & ((ss >> SECTOR_SHIFT) - 1)) != 0) {
    nbdkit_error ("invalid iv_offset %" PRIu64 ": it must be a multiple "
                  "of %u sectors (sector size %u)", p->iv_offset,
                  ss >> SECTOR_SHIFT, ss);
    return -1;
  }
  if (p->key == NULL && p->key_size > 0) {
    nbdkit_error ("sector_cipher_new: no key");
    return -1;
  }
  return 0;
}

/* The ESSIV IV cipher: the bulk cipher keyed with HASH (volume key). */
static EVP_CIPHER_CTX *
essiv_ctx (const struct cipher_spec *s, const uint8_t *key, size_t key_bytes)
{
  size_t salt_bytes = iv_essiv_salt_bytes (s->essiv_hash);
  uint8_t *salt = secmem_alloc (EVP_MAX_MD_SIZE);
  EVP_CIPHER_CTX *ctx = NULL;

  if (salt == NULL) {
    nbdkit_error ("secmem_alloc: %m");
    return NULL;
  }
  if (iv_essiv_salt (s->essiv_hash, key, key_bytes, salt) == 0)
    ctx = keyed_ctx (s->cipher, "ECB", salt, salt_bytes, true);
  secmem_free (salt, EVP_MAX_MD_SIZE);
  return ctx;
}

static uint64_t iv_step (const struct sector_cipher *c);

/* A run of sectors as one update of libgcrypt's XTS: plain64 IVs,
 * sector_bytes each, stepping as the sectors do. */
static int
set_units (const struct sector_cipher *c, EVP_CIPHER_CTX *ctx)
{
  size_t unit_bytes = c->sector_bytes;
  uint64_t step = iv_step (c);
  const OSSL_PARAM params[] = {
    OSSL_PARAM_size_t (GCRYPT_PROVIDER_UNIT_BYTES, &unit_bytes),
    OSSL_PARAM_uint64 (GCRYPT_PROVIDER_UNIT_STEP, &step),
    OSSL_PARAM_END
  };

  if (EVP_CIPHER_CTX_set_params (ctx, params) != 1) {
    ERR_clear_error ();
    nbdkit_error ("libgcrypt's AES-XTS takes no run of sectors");
    return -1;
  }
  return 0;
}

/* The library of C's data contexts in MODE. */
static enum block_cipher_lib
lib_for (const struct sector_cipher *c, const char *mode)
{
  if ((c->gcrypt_xts && strcmp (mode, "XTS") == 0) ||
      (c->gcrypt_ecb && strcmp (mode, "ECB") == 0))
    return LIB_GCRYPT;
  return c->spec.cipher->lib;
}

/* A data context of C: from the library lib_for picks. */
static EVP_CIPHER_CTX *
data_ctx (const struct sector_cipher *c, const char *mode,
          const uint8_t *key, size_t key_bytes, bool encrypt)
{
  return keyed_ctx_from (c->spec.cipher, lib_for (c, mode), mode, key,
                         key_bytes, encrypt);
}

/* Keys every template context C needs, stopping at the first failure so
 * that there is one error line.  Returns 0 or -1. */
static int
make_templates (const struct sector_cipher *c, const uint8_t *key,
                size_t key_bytes, EVP_CIPHER_CTX *t[CTX_POOL_SLOTS])
{
  const struct block_cipher *bc = c->spec.cipher;
  const char *mode = chain_modes[c->spec.chain];
  size_t half = key_bytes / 2;

  /* The tweak's, ESSIV's and elephant's ECB calls are a block or a
   * column of IVs each: OpenSSL's, whose calls cost less. */
  if (c->xf == XF_XTS_ECB) {   /* key 1 encrypts data, key 2 the tweak */
    if ((t[SLOT_ENC] = data_ctx (c, "ECB", key, half, true)) == NULL ||
        (t[SLOT_DEC] = data_ctx (c, "ECB", key, half, false)) == NULL ||
        (t[SLOT_TWEAK] = keyed_ctx (bc, "ECB", key + half, half,
                                    true)) == NULL)
      return -1;
  }
  else if (c->xf == XF_LRW) {  /* the tweak key is lrw.c's */
    if ((t[SLOT_ENC] = data_ctx (c, "ECB", key, key_bytes - LRW_BLOCK_BYTES,
                                 true)) == NULL ||
        (t[SLOT_DEC] = data_ctx (c, "ECB", key, key_bytes - LRW_BLOCK_BYTES,
                                 false)) == NULL)
      return -1;
  }
  else if (c->spec.iv == IV_ELEPHANT) {
    /* crypt_iv_elephant_init: CBC key, then the sector key for AES. */
    if ((t[SLOT_ENC] = keyed_ctx (bc, mode, key, half, true)) == NULL ||
        (t[SLOT_DEC] = keyed_ctx (bc, mode, key, half, false)) == NULL ||
        (t[SLOT_ELEPHANT] = keyed_ctx (block_cipher_lookup ("aes"), "ECB",
                                       key + half, half, true)) == NULL)
      return -1;
  }
  else if ((t[SLOT_ENC] = data_ctx (c, mode, key, key_bytes, true)) == NULL ||
           (t[SLOT_DEC] = data_ctx (c, mode, key, key_bytes, false)) == NULL)
    return -1;
  if (c->gcrypt_xts && c->iv.mode == IV_PLAIN64 &&
      (set_units (c, t[SLOT_ENC]) == -1 || set_units (c, t[SLOT_DEC]) == -1))
    return -1;
  if (c->spec.iv == IV_ESSIV &&
      (t[SLOT_ESSIV] = essiv_ctx (&c->spec, key, key_bytes)) == NULL)
    return -1;
  if (c->cbc_multi &&
      ((t[SLOT_ECB_ENC] = data_ctx (c, "ECB", key, key_bytes,
                                    true)) == NULL ||
       (t[SLOT_ECB_DEC] = data_ctx (c, "ECB", key, key_bytes,
                                    false)) == NULL))
    return -1;
  if (c->cbc_multi && c->gcrypt_ecb &&
      (t[SLOT_ECB_SHORT] = keyed_ctx (bc, "ECB", key, key_bytes,
                                      true)) == NULL)
    return -1;
  return 0;
}

/* Whether C's data goes through AES-ECB: the XTS and LRW constructions,
 * CBC across sectors, and ECB itself. */
static bool
data_on_ecb (const struct sector_cipher *c)
{
  return c->xf == XF_XTS_ECB || c->xf == XF_LRW || c->cbc_multi ||
    (c->xf == XF_NATIVE && c->spec.chain == CHAIN_ECB);
}

struct sector_cipher *
sector_cipher_new (const struct sector_cipher_params *p)
{
  EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS] = { NULL };
  struct sector_cipher *c;
  bool gcrypt_xts;
  size_t i;

  if (check_params (p) == -1)
    return NULL;
  ossl_heap_report ();          /* where the key schedules will live */
  c = calloc (1, sizeof *c);
  if (c == NULL) {
    nbdkit_error ("calloc: %m");
    return NULL;
  }
  c->sector_bytes = p->sector_size;
  switch (is_cascade (p->spec)) {
  case 1:
    c->cascade = cascade_new (p);
    if (c->cascade == NULL)
      goto fail;
    return c;
  case -1:
    goto fail;
  }
  if (cipher_spec_parse (p->spec, &c->spec) == -1 ||
      cipher_spec_check_key (&c->spec, p->spec, p->key_size) == -1)
    goto fail;
  if (iv_legacy_mode (&c->spec)) {
    c->legacy = iv_legacy_new (&c->spec, p);
    if (c->legacy == NULL)
      goto fail;
    return c;
  }
  gcrypt_xts = wants_gcrypt_xts (p->library);
  c->xf = pick_transform (&c->spec, p->key, p->key_size, p->sector_size,
                          gcrypt_xts);
  c->gcrypt_xts = gcrypt_xts && c->xf == XF_NATIVE &&
    c->spec.chain == CHAIN_XTS;
  c->cbc_multi = uses_cbc_multi (&c->spec);
  c->gcrypt_ecb = gcrypt_xts && strcmp (c->spec.cipher->name, "aes") == 0 &&
    data_on_ecb (c);
  c->sector_bytes = p->sector_size;
  while ((512u << c->sector_shift) < p->sector_size)
    c->sector_shift++;
  c->iv_offset = p->iv_offset;
  c->iv_large_sectors = p->iv_large_sectors;
  iv_gen_init (&c->iv, c->spec.iv, c->spec.cipher->block_bytes,
               p->sector_size);

  if (c->xf == XF_LRW) {
    c->lrw = secmem_alloc (sizeof *c->lrw);
    if (c->lrw == NULL) {
      nbdkit_error ("secmem_alloc: %m");
      goto fail;
    }
    lrw_key_init (c->lrw, p->key + p->key_size - LRW_BLOCK_BYTES);
  }
  if (c->xf != XF_IDENTITY &&
      make_templates (c, p->key, p->key_size, templates) == -1) {
    for (i = 0; i < CTX_POOL_SLOTS; i++)
      EVP_CIPHER_CTX_free (templates[i]);
    goto fail;
  }
  c->pool = ctx_pool_new (templates);
  if (c->pool == NULL)
    goto fail;
  return c;

 fail:
  secmem_free (c->lrw, sizeof *c->lrw);
  free (c);
  return NULL;
}

void
sector_cipher_free (struct sector_cipher *c)
{
  if (c == NULL)
    return;
  ctx_pool_free (c->pool);
  cascade_free (c->cascade);
  iv_legacy_free (c->legacy);
  secmem_free (c->lrw, sizeof *c->lrw);
  free (c);
}

unsigned
sector_cipher_sector_size (const struct sector_cipher *c)
{
  return c->sector_bytes;
}

const char *
sector_cipher_library (const struct sector_cipher *c)
{
  if (c->cascade)
    return cascade_library (c->cascade);
  if (c->legacy)
    return iv_legacy_library (c->legacy);
  if (c->xf == XF_IDENTITY)
    return "none";
  return c->gcrypt_xts || c->gcrypt_ecb || c->spec.cipher->lib == LIB_GCRYPT
    ? "libgcrypt" : "openssl";
}

bool
sector_cipher_is_identity (const struct sector_cipher *c)
{
  return c->xf == XF_IDENTITY;
}

/* The bulk transform of LEN bytes with IV, as one skcipher request. */
static int
transform (const struct sector_cipher *c, EVP_CIPHER_CTX *const *ctx,
           bool encrypt, const uint8_t *iv, uint8_t *dst,
           const uint8_t *src, size_t len)
{
  EVP_CIPHER_CTX *bulk = ctx[encrypt ? SLOT_ENC : SLOT_DEC];
  uint8_t tweak[XTS_BLOCK_BYTES], table[4096];   /* LEN <= sector size */

  if (c->xf == XF_NATIVE) {
    /* Only the IV changes: the key schedule stays expanded. */
    if (c->iv.mode != IV_NONE &&
        EVP_CipherInit_ex (bulk, NULL, NULL, NULL, iv, -1) != 1)
      return -1;
    return block_cipher_update (bulk, dst, src, len);
  }
  if (c->xf == XF_LRW) {
    lrw_tweaks (c->lrw, iv, table, len);
    xts_whiten (dst, src, table, len);
  }
  else if (block_cipher_update (ctx[SLOT_TWEAK], tweak, iv,
                                XTS_BLOCK_BYTES) == -1)
    return -1;
  else
    xts_whiten_first (dst, src, table, len, tweak);
  if (block_cipher_update (bulk, dst, dst, len) == -1)
    return -1;
  xts_whiten (dst, dst, table, len);
  return 0;
}

/* The IV of the encryption sector at 512-byte SECTOR (crypt_convert_
 * block_skcipher: iv_sector = sector + iv_offset, >> sector_shift with
 * iv_large_sectors). */
static uint64_t
iv_sector_of (const struct sector_cipher *c, uint64_t sector)
{
  uint64_t iv_sector = sector + c->iv_offset;

  return c->iv_large_sectors ? iv_sector >> c->sector_shift : iv_sector;
}

static int
make_iv (const struct sector_cipher *c, EVP_CIPHER_CTX *const *ctx,
         uint64_t sector, uint8_t *iv)
{
  static const uint8_t zero_block[IV_MAX_BYTES];
  uint64_t iv_sector = iv_sector_of (c, sector);
  uint8_t seed[IV_MAX_BYTES];

  if (c->iv.mode == IV_NONE)
    return 0;
  switch (c->iv.mode) {
  case IV_ESSIV:
    iv_generate (&c->iv, iv_sector, iv);
    return block_cipher_update (ctx[SLOT_ESSIV], iv, iv, c->iv.iv_bytes);
  case IV_EBOIV:
  case IV_ELEPHANT:
    /* The kernel encrypts one zero block with the bulk cipher, taking
     * the byte offset as its IV. */
    iv_generate (&c->iv, iv_sector, seed);
    return transform (c, ctx, true, seed, iv, zero_block, c->iv.iv_bytes);
  default:
    iv_generate (&c->iv, iv_sector, iv);
    return 0;
  }
}

/* One sector of elephant (crypt_iv_elephant_gen and _post): a write
 * diffuses the plaintext into DST, then CBC-encrypts it in place; a read
 * CBC-decrypts into DST, then undoes the diffuser there. */
static int
convert_elephant (const struct sector_cipher *c, EVP_CIPHER_CTX *const *ctx,
                  bool encrypt, uint64_t sector, uint8_t *dst,
                  const uint8_t *src)
{
  uint8_t in[ELEPHANT_SECTOR_KEY_BYTES], ks[ELEPHANT_SECTOR_KEY_BYTES];
  uint8_t iv[IV_MAX_BYTES];
  uint64_t iv_sector = iv_sector_of (c, sector);
  int r = -1;

  /* The kernel's product, whatever unit iv_sector counts. */
  elephant_key_input (iv_sector * c->sector_bytes, in);
  if (block_cipher_update (ctx[SLOT_ELEPHANT], ks, in, sizeof in) == -1 ||
      make_iv (c, ctx, sector, iv) == -1)
    goto out;
  if (encrypt) {
    if (dst != src)
      memmove (dst, src, c->sector_bytes);
    elephant_encrypt (dst, c->sector_bytes, ks);
    r = transform (c, ctx, true, iv, dst, dst, c->sector_bytes);
  }
  else if (transform (c, ctx, false, iv, dst, src, c->sector_bytes) == 0) {
    elephant_decrypt (dst, c->sector_bytes, ks);
    r = 0;
  }
 out:
  explicit_bzero (ks, sizeof ks);
  return r;
}

static int
convert_ecb (EVP_CIPHER_CTX *ctx, uint8_t *dst, const uint8_t *src,
             size_t nbytes)
{
  const size_t max_call_bytes = 1 << 30;       /* EVP lengths are ints */
  size_t off, len;

  for (off = 0; off < nbytes; off += len) {
    len = nbytes - off < max_call_bytes ? nbytes - off : max_call_bytes;
    if (block_cipher_update (ctx, dst + off, src + off, len) == -1) {
      ERR_clear_error ();
      nbdkit_error ("sector_cipher: OpenSSL failed");
      errno = EIO;
      return -1;
    }
  }
  return 0;
}

/* The IV sector step from one encryption sector to the next. */
static uint64_t
iv_step (const struct sector_cipher *c)
{
  return c->iv_large_sectors ? 1 : c->sector_bytes >> SECTOR_SHIFT;
}

/* NBYTES of sectors from FIRST_IV on, through a context set_units
 * made: one IV reset and one update per GiB at most (EVP lengths are
 * ints). */
static int
gcrypt_xts_run (const struct sector_cipher *c, EVP_CIPHER_CTX *ctx,
                uint8_t *dst, const uint8_t *src, size_t nbytes,
                uint64_t first_iv)
{
  const size_t max_call_bytes = 1 << 30;
  uint8_t iv[IV_MAX_BYTES];
  size_t off, len;

  for (off = 0; off < nbytes; off += len) {
    len = nbytes - off < max_call_bytes ? nbytes - off : max_call_bytes;
    iv_generate (&c->iv, first_iv + off / c->sector_bytes * iv_step (c), iv);
    if (EVP_CipherInit_ex (ctx, NULL, NULL, NULL, iv, -1) != 1 ||
        block_cipher_update (ctx, dst + off, src + off, len) == -1)
      return -1;
  }
  return 0;
}

/* CBC across sectors (cbc_multi.c) over this thread's contexts. */
static struct cbc_multi
cbc_multi_of (const struct sector_cipher *c, EVP_CIPHER_CTX *const *ctx,
              bool encrypt)
{
  return (struct cbc_multi) {
    .ecb = ctx[encrypt ? SLOT_ECB_ENC : SLOT_ECB_DEC],
    .ecb_short = ctx[SLOT_ECB_SHORT],
    .essiv = ctx[SLOT_ESSIV], .iv = &c->iv,
    .block_bytes = c->spec.cipher->block_bytes,
    .unit_bytes = c->sector_bytes,
  };
}

/* The bulk paths, many sectors per OpenSSL call: XTS on ECB
 * (xts_bulk.c), libgcrypt's XTS with plain64 IVs and CBC encryption
 * (cbc_multi.c).  Returns 1 if neither
 * applies, else 0 or -1. */
static int
convert_bulk (const struct sector_cipher *c, EVP_CIPHER_CTX *const *ctx,
              bool encrypt, uint8_t *dst, const uint8_t *src, size_t nbytes,
              uint64_t sector)
{
  uint64_t first_iv = iv_sector_of (c, sector);

  if (c->gcrypt_xts && c->iv.mode == IV_PLAIN64)
    return gcrypt_xts_run (c, ctx[encrypt ? SLOT_ENC : SLOT_DEC], dst, src,
                           nbytes, first_iv);
  if (c->xf == XF_XTS_ECB && c->iv.mode != IV_EBOIV) {
    const struct xts_bulk x = {
      .data = ctx[encrypt ? SLOT_ENC : SLOT_DEC], .tweak = ctx[SLOT_TWEAK],
      .essiv = ctx[SLOT_ESSIV], .iv = &c->iv, .unit_bytes = c->sector_bytes,
    };
    return xts_bulk_convert (&x, dst, src, nbytes, first_iv, iv_step (c));
  }
  if (c->cbc_multi) {
    const struct cbc_multi m = cbc_multi_of (c, ctx, encrypt);

    return (encrypt ? cbc_multi_encrypt : cbc_multi_decrypt)
      (&m, dst, src, nbytes, first_iv, iv_step (c));
  }
  return 1;
}

/* The bytes of a run from SECTOR before its IV sector wraps.  The
 * kernel adds iv_offset modulo 2^64 and then shifts for
 * iv_large_sectors (crypt_convert_init, crypt_convert_block_skcipher);
 * the bulk paths step the shifted IV, which is the same only while the
 * sum does not wrap. */
static size_t
bytes_before_iv_wrap (const struct sector_cipher *c, uint64_t sector,
                      size_t nbytes)
{
  uint64_t sectors_left = 0 - (sector + c->iv_offset);

  if (!c->iv_large_sectors || sectors_left == 0 ||
      nbytes >> SECTOR_SHIFT <= sectors_left)
    return nbytes;
  return sectors_left << SECTOR_SHIFT;
}

static int
convert (struct sector_cipher *c, uint8_t *dst, const uint8_t *src,
         size_t nbytes, uint64_t sector, bool encrypt)
{
  unsigned sectors_per_unit = c->sector_bytes >> SECTOR_SHIFT;
  EVP_CIPHER_CTX *const *ctx;
  uint8_t iv[IV_MAX_BYTES];
  size_t off, wrap;

  if (c->cascade)
    return cascade_convert (c->cascade, dst, src, nbytes, sector, encrypt);
  if (c->legacy)
    return iv_legacy_convert (c->legacy, dst, src, nbytes, sector, encrypt);
  if (nbytes % c->sector_bytes != 0 || sector % sectors_per_unit != 0) {
    nbdkit_error ("sector_cipher: %zu bytes at sector %" PRIu64 " are not "
                  "whole %u-byte sectors", nbytes, sector, c->sector_bytes);
    errno = EINVAL;
    return -1;
  }
  if (c->xf == XF_IDENTITY) {
    if (dst != src)
      memmove (dst, src, nbytes);
    return 0;
  }
  wrap = bytes_before_iv_wrap (c, sector, nbytes);
  if (wrap < nbytes)
    return convert (c, dst, src, wrap, sector, encrypt) == -1 ? -1 :
      convert (c, dst + wrap, src + wrap, nbytes - wrap,
               sector + (wrap >> SECTOR_SHIFT), encrypt);
  ctx = ctx_pool_get (c->pool);
  if (ctx == NULL) {
    int saved_errno = errno;
    nbdkit_error ("sector_cipher: cannot make this thread's contexts: %m");
    errno = saved_errno;
    return -1;
  }
  if (c->iv.mode == IV_NONE)    /* ecb: sectors need no boundaries */
    return convert_ecb (ctx[encrypt ? SLOT_ENC : SLOT_DEC], dst, src,
                        nbytes);
  switch (convert_bulk (c, ctx, encrypt, dst, src, nbytes, sector)) {
  case 0:
    return 0;
  case -1:
    ERR_clear_error ();
    nbdkit_error ("sector_cipher: OpenSSL failed");
    errno = EIO;
    return -1;
  }
  for (off = 0; off < nbytes;
       off += c->sector_bytes, sector += sectors_per_unit) {
    if (c->iv.mode == IV_ELEPHANT ?
        convert_elephant (c, ctx, encrypt, sector, dst + off,
                          src + off) == -1 :
        make_iv (c, ctx, sector, iv) == -1 ||
        transform (c, ctx, encrypt, iv, dst + off, src + off,
                   c->sector_bytes) == -1) {
      ERR_clear_error ();
      nbdkit_error ("sector_cipher: OpenSSL failed at sector %" PRIu64,
                    sector);
      errno = EIO;
      return -1;
    }
  }
  return 0;
}

int
sector_cipher_encrypt (struct sector_cipher *c, uint8_t *dst,
                       const uint8_t *src, size_t nbytes, uint64_t sector)
{
  return convert (c, dst, src, nbytes, sector, true);
}

/* The CBC encryption of pieces in one call: 1 where it does not apply
 * (another cipher, pieces not of whole sectors, an IV wrap inside),
 * else 0 or -1 as convert. */
static int
encrypt_pieces_cbc (struct sector_cipher *c, uint8_t *const *dsts,
                    const size_t *lens, size_t npieces, const uint8_t *src,
                    size_t nbytes, uint64_t sector)
{
  EVP_CIPHER_CTX *const *ctx;
  struct cbc_multi m;
  size_t i;

  if (!c->cbc_multi || c->cascade ||
      sector % (c->sector_bytes >> SECTOR_SHIFT) != 0 ||
      bytes_before_iv_wrap (c, sector, nbytes) < nbytes)
    return 1;
  for (i = 0; i < npieces; i++)
    if (lens[i] % c->sector_bytes != 0)
      return 1;
  ctx = ctx_pool_get (c->pool);
  if (ctx == NULL)
    return 1;                   /* convert reports it */
  m = cbc_multi_of (c, ctx, true);
  if (cbc_multi_encrypt_pieces (&m, dsts, lens, npieces, src,
                                iv_sector_of (c, sector), iv_step (c)) == 0)
    return 0;
  ERR_clear_error ();
  nbdkit_error ("sector_cipher: OpenSSL failed");
  errno = EIO;
  return -1;
}

int
sector_cipher_encrypt_pieces (struct sector_cipher *c, uint8_t *const *dsts,
                              const size_t *lens, size_t npieces,
                              const uint8_t *src, uint64_t sector)
{
  size_t nbytes = 0, i;
  int r;

  for (i = 0; i < npieces; i++)
    nbytes += lens[i];
  if (npieces > 1 &&
      (r = encrypt_pieces_cbc (c, dsts, lens, npieces, src, nbytes,
                               sector)) != 1)
    return r;
  for (i = 0; i < npieces; i++) {
    if (convert (c, dsts[i], src, lens[i], sector, true) == -1)
      return -1;
    src += lens[i];
    sector += lens[i] >> SECTOR_SHIFT;
  }
  return 0;
}

size_t
sector_cipher_batch_bytes (const struct sector_cipher *c)
{
  return c->cbc_multi && c->cascade == NULL ?
    cbc_multi_group_bytes (c->sector_bytes) : 0;
}

int
sector_cipher_decrypt (struct sector_cipher *c, uint8_t *dst,
                       const uint8_t *src, size_t nbytes, uint64_t sector)
{
  return convert (c, dst, src, nbytes, sector, false);
}
