/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An OpenSSL provider over libgcrypt's Serpent and Twofish (ECB, CBC),
 * its AES-XTS, and AES-ECB on its XTS code (zero_tweak_ecb).
 *
 * Each algorithm context owns one libgcrypt handle and a copy of its
 * key in secmem: libgcrypt cannot duplicate a handle, so a copy
 * (EVP_CIPHER_CTX_copy, once per worker thread) opens a new one and
 * keys it again.  A copy takes the IV set last, not a CBC chaining
 * value reached since: crypto/ sets the IV before every sector.  The handles live on
 * libgcrypt's ordinary heap (guard_handle), which gcry_cipher_close
 * wipes; its own secure pool is process-wide state that another library
 * in nbdkit (libssh-gcrypt under the ssh plugin, libcryptsetup) may
 * already have set up or turned off, so it is left alone. */
#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gcrypt.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "gcrypt_provider.h"
#include "secmem.h"

#define PROVIDER_NAME "dmcrypt-gcrypt"
#define MAX_KEY_BYTES 64         /* AES-256-XTS: two 32-byte keys */

struct gc_alg
{
  int algo;                  /* GCRY_CIPHER_* */
  int mode;                  /* GCRY_CIPHER_MODE_ECB, _CBC or _XTS */
  unsigned ossl_mode;        /* EVP_CIPH_ECB_MODE, _CBC_MODE or _XTS_MODE */
  size_t default_key_bytes;
};

struct gc_ctx
{
  const struct gc_alg *alg;
  gcry_cipher_hd_t hd;       /* NULL until keyed */
  bool encrypt;              /* the last init's direction */
  size_t key_bytes;
  uint8_t key[MAX_KEY_BYTES];
  /* XTS over many data units per update (GCRYPT_PROVIDER_UNIT_BYTES):
   * 0 for one unit.  IV: the tweak set last, or for ECB on XTS the IV
   * whose tweak is zero. */
  size_t unit_bytes;
  uint64_t unit_step;
  uint8_t iv[16];
};

/* libgcrypt 1.10 runs AES on 256-bit VAES vectors in XTS (and CTR, OCB,
 * CBC decryption) but not in ECB.  XTS whose tweak is zero is ECB:
 * each block is encrypted under the data key and XORed with 0 * alpha^j
 * = 0 before and after.  So an ECB algorithm here is an XTS handle
 * keyed with the ECB key and a second key, whose IV is the decryption
 * of the zero block under that second key (XTS encrypts the IV into
 * the tweak).  The second key is the first one's complement: never
 * equal to it, which FIPS mode would refuse. */
static bool
zero_tweak_ecb (const struct gc_alg *alg)
{
  return alg->mode == GCRY_CIPHER_MODE_XTS &&
    alg->ossl_mode == EVP_CIPH_ECB_MODE;
}

static void *
gc_newctx (const struct gc_alg *alg)
{
  struct gc_ctx *c = secmem_alloc (sizeof *c);

  if (c != NULL) {
    c->alg = alg;
    c->key_bytes = alg->default_key_bytes;
  }
  return c;
}

static void
gc_freectx (void *vctx)
{
  struct gc_ctx *c = vctx;

  if (c == NULL)
    return;
  gcry_cipher_close (c->hd);
  secmem_free (c, sizeof *c);
}

/* Bytes from a handle's address that cover all of it: the structure,
 * the key schedule and the reset copy of it, and XTS's tweak schedule
 * (about 3 KiB for AES-XTS in libgcrypt 1.10). */
#define HANDLE_SPAN_BYTES (16 << 10)

/* libgcrypt allocates a handle on its ordinary heap (its secure pool is
 * off: libcryptsetup disables it), and the first round key of an AES
 * schedule is the raw key.  So the pages around the handle are kept
 * out of core dumps and locked where RLIMIT_MEMLOCK allows, as secmem's
 * are; neighbours on those pages lose nothing but their place in a
 * dump.  gcry_cipher_close wipes the handle. */
static void
guard_handle (const void *hd)
{
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t) hd - 64) & ~(page - 1);
  uintptr_t end = ((uintptr_t) hd + HANDLE_SPAN_BYTES + page - 1)
    & ~(page - 1);

  /* The span may reach past the heap's end: the mapped part is done. */
  (void) madvise ((void *) start, end - start, MADV_DONTDUMP);
  (void) mlock ((void *) start, end - start);
}

/* Opens a handle of ALGO in MODE keyed with KEY, or NULL. */
static gcry_cipher_hd_t
open_keyed (int algo, int mode, const uint8_t *key, size_t key_bytes)
{
  gcry_cipher_hd_t hd;

  if (gcry_cipher_open (&hd, algo, mode, 0) != 0)
    return NULL;
  guard_handle (hd);
  if (gcry_cipher_setkey (hd, key, key_bytes) != 0) {
    gcry_cipher_close (hd);
    return NULL;
  }
  return hd;
}

/* ECB on XTS: the handle, keyed with KEY and its complement, and in
 * C->iv the IV that makes the tweak zero. */
static gcry_cipher_hd_t
open_zero_tweak (struct gc_ctx *c)
{
  static const uint8_t zero[16];
  size_t n = c->key_bytes, i;
  uint8_t *both = secmem_alloc (2 * MAX_KEY_BYTES);
  gcry_cipher_hd_t hd = NULL, tweak;

  if (both == NULL || n > MAX_KEY_BYTES)
    goto out;
  memcpy (both, c->key, n);
  for (i = 0; i < n; i++)
    both[n + i] = (uint8_t) ~c->key[i];
  tweak = open_keyed (c->alg->algo, GCRY_CIPHER_MODE_ECB, both + n, n);
  if (tweak == NULL)
    goto out;
  if (gcry_cipher_decrypt (tweak, c->iv, sizeof c->iv, zero,
                           sizeof zero) == 0)
    hd = open_keyed (c->alg->algo, GCRY_CIPHER_MODE_XTS, both, 2 * n);
  gcry_cipher_close (tweak);
 out:
  secmem_free (both, 2 * MAX_KEY_BYTES);
  return hd;
}

/* Opens and keys C's handle with C->key. */
static int
gc_key (struct gc_ctx *c)
{
  gcry_cipher_hd_t hd = zero_tweak_ecb (c->alg) ? open_zero_tweak (c)
    : open_keyed (c->alg->algo, c->alg->mode, c->key, c->key_bytes);

  if (hd == NULL)
    return 0;
  gcry_cipher_close (c->hd);
  c->hd = hd;
  return 1;
}

static size_t iv_bytes_of (const struct gc_alg *alg);

static void *
gc_dupctx (void *vctx)
{
  struct gc_ctx *src = vctx, *c = gc_newctx (src->alg);

  if (c == NULL)
    return NULL;
  c->key_bytes = src->key_bytes;
  c->encrypt = src->encrypt;
  c->unit_bytes = src->unit_bytes;
  c->unit_step = src->unit_step;
  memcpy (c->key, src->key, sizeof c->key);
  memcpy (c->iv, src->iv, sizeof c->iv);
  if (src->hd != NULL &&
      (!gc_key (c) ||
       (iv_bytes_of (c->alg) > 0 &&
        gcry_cipher_setiv (c->hd, c->iv, sizeof c->iv) != 0))) {
    gc_freectx (c);
    return NULL;
  }
  return c;
}

static int gc_set_ctx_params (void *vctx, const OSSL_PARAM params[]);

/* One handle serves both directions: libgcrypt's direction is per
 * call, OpenSSL's per init. */
static int
gc_init (struct gc_ctx *c, bool encrypt, const unsigned char *key,
         size_t key_bytes, const unsigned char *iv, size_t iv_bytes,
         const OSSL_PARAM params[])
{
  c->encrypt = encrypt;
  if (!gc_set_ctx_params (c, params))
    return 0;
  if (key != NULL) {
    if (key_bytes > MAX_KEY_BYTES)
      return 0;
    memcpy (c->key, key, key_bytes);
    c->key_bytes = key_bytes;
    if (!gc_key (c))
      return 0;
  }
  if (iv != NULL && c->alg->ossl_mode != EVP_CIPH_ECB_MODE) {
    if (iv_bytes != sizeof c->iv)
      return 0;
    memcpy (c->iv, iv, sizeof c->iv);
    return c->hd != NULL && gcry_cipher_setiv (c->hd, iv, iv_bytes) == 0;
  }
  return 1;
}

static int
gc_encrypt_init (void *vctx, const unsigned char *key, size_t key_bytes,
                 const unsigned char *iv, size_t iv_bytes,
                 const OSSL_PARAM params[])
{
  return gc_init (vctx, true, key, key_bytes, iv, iv_bytes, params);
}

static int
gc_decrypt_init (void *vctx, const unsigned char *key, size_t key_bytes,
                 const unsigned char *iv, size_t iv_bytes,
                 const OSSL_PARAM params[])
{
  return gc_init (vctx, false, key, key_bytes, iv, iv_bytes, params);
}

static gcry_error_t
gc_crypt (struct gc_ctx *c, unsigned char *out, size_t out_size,
          const unsigned char *in, size_t in_bytes)
{
  return c->encrypt ? gcry_cipher_encrypt (c->hd, out, out_size, in, in_bytes)
    : gcry_cipher_decrypt (c->hd, out, out_size, in, in_bytes);
}

/* Each unit with its own tweak, the IV's first 8 bytes a little-endian
 * counter: dm-crypt's plain64 IV, one EVP call for a run of sectors. */
static gcry_error_t
gc_crypt_units (struct gc_ctx *c, unsigned char *out,
                const unsigned char *in, size_t in_bytes)
{
  gcry_error_t e = 0;
  uint64_t counter;
  size_t off;

  memcpy (&counter, c->iv, sizeof counter);
  counter = le64toh (counter);
  for (off = 0; e == 0 && off < in_bytes; off += c->unit_bytes) {
    uint64_t le = htole64 (counter);

    memcpy (c->iv, &le, sizeof le);
    e = gcry_cipher_setiv (c->hd, c->iv, sizeof c->iv);
    if (e == 0)
      e = gc_crypt (c, out + off, c->unit_bytes, in + off, c->unit_bytes);
    counter += c->unit_step;
  }
  return e;
}

/* ECB on XTS, a MiB at a time (libgcrypt's XTS takes up to 16 MiB per
 * call), each from the IV of the zero tweak. */
static gcry_error_t
gc_crypt_zero_tweak (struct gc_ctx *c, unsigned char *out,
                     const unsigned char *in, size_t in_bytes)
{
  const size_t max_call_bytes = 1 << 20;
  gcry_error_t e = 0;
  size_t off, len;

  for (off = 0; e == 0 && off < in_bytes; off += len) {
    len = in_bytes - off < max_call_bytes ? in_bytes - off : max_call_bytes;
    e = gcry_cipher_setiv (c->hd, c->iv, sizeof c->iv);
    if (e == 0)
      e = gc_crypt (c, out + off, len, in + off, len);
  }
  return e;
}

/* Whole blocks only: crypto/ never asks for more (padding is never
 * used, EVP_CipherFinal never called). */
static int
gc_update (void *vctx, unsigned char *out, size_t *out_bytes,
           size_t out_size, const unsigned char *in, size_t in_bytes)
{
  struct gc_ctx *c = vctx;
  gcry_error_t e;

  if (c->hd == NULL || out_size < in_bytes || in_bytes % 16 != 0)
    return 0;
  if (zero_tweak_ecb (c->alg))
    e = gc_crypt_zero_tweak (c, out, in, in_bytes);
  else if (c->unit_bytes == 0)
    e = gc_crypt (c, out, out_size, in, in_bytes);
  else if (in_bytes % c->unit_bytes == 0)
    e = gc_crypt_units (c, out, in, in_bytes);
  else
    return 0;
  *out_bytes = in_bytes;
  return e == 0;
}

static int
gc_final (void *vctx, unsigned char *out, size_t *out_bytes,
          size_t out_size)
{
  (void) vctx; (void) out; (void) out_size;
  *out_bytes = 0;
  return 1;
}

/* Key length, and XTS's data units; "padding" is accepted and ignored,
 * since whole blocks are all there is. */
static int
gc_set_ctx_params (void *vctx, const OSSL_PARAM params[])
{
  struct gc_ctx *c = vctx;
  const OSSL_PARAM *p;
  size_t bytes;

  if (params == NULL)
    return 1;
  p = OSSL_PARAM_locate_const (params, OSSL_CIPHER_PARAM_KEYLEN);
  if (p != NULL) {
    if (!OSSL_PARAM_get_size_t (p, &bytes) || bytes > MAX_KEY_BYTES)
      return 0;
    c->key_bytes = bytes;
  }
  p = OSSL_PARAM_locate_const (params, GCRYPT_PROVIDER_UNIT_BYTES);
  if (p != NULL) {
    if (c->alg->ossl_mode != EVP_CIPH_XTS_MODE ||
        !OSSL_PARAM_get_size_t (p, &bytes) || bytes % 16 != 0)
      return 0;
    c->unit_bytes = bytes;
  }
  p = OSSL_PARAM_locate_const (params, GCRYPT_PROVIDER_UNIT_STEP);
  if (p != NULL && !OSSL_PARAM_get_uint64 (p, &c->unit_step))
    return 0;
  return 1;
}

static size_t
iv_bytes_of (const struct gc_alg *alg)
{
  return alg->ossl_mode == EVP_CIPH_ECB_MODE ? 0 : 16;
}

static int
gc_get_ctx_params (void *vctx, OSSL_PARAM params[])
{
  struct gc_ctx *c = vctx;
  OSSL_PARAM *p;

  p = OSSL_PARAM_locate (params, OSSL_CIPHER_PARAM_KEYLEN);
  if (p != NULL && !OSSL_PARAM_set_size_t (p, c->key_bytes))
    return 0;
  p = OSSL_PARAM_locate (params, OSSL_CIPHER_PARAM_IVLEN);
  if (p != NULL && !OSSL_PARAM_set_size_t (p, iv_bytes_of (c->alg)))
    return 0;
  return 1;
}

static int
gc_get_params (const struct gc_alg *alg, OSSL_PARAM params[])
{
  OSSL_PARAM *p;

  if ((p = OSSL_PARAM_locate (params, OSSL_CIPHER_PARAM_MODE)) != NULL &&
      !OSSL_PARAM_set_uint (p, alg->ossl_mode))
    return 0;
  if ((p = OSSL_PARAM_locate (params, OSSL_CIPHER_PARAM_KEYLEN)) != NULL &&
      !OSSL_PARAM_set_size_t (p, alg->default_key_bytes))
    return 0;
  if ((p = OSSL_PARAM_locate (params, OSSL_CIPHER_PARAM_IVLEN)) != NULL &&
      !OSSL_PARAM_set_size_t (p, iv_bytes_of (alg)))
    return 0;
  if ((p = OSSL_PARAM_locate (params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) != NULL
      && !OSSL_PARAM_set_size_t (p, 16))
    return 0;
  return 1;
}

static const OSSL_PARAM *
gc_settable_ctx_params (void *cctx, void *provctx)
{
  static const OSSL_PARAM settable[] = {
    OSSL_PARAM_size_t (OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_uint (OSSL_CIPHER_PARAM_PADDING, NULL),
    OSSL_PARAM_size_t (GCRYPT_PROVIDER_UNIT_BYTES, NULL),
    OSSL_PARAM_uint64 (GCRYPT_PROVIDER_UNIT_STEP, NULL),
    OSSL_PARAM_END
  };
  (void) cctx; (void) provctx;
  return settable;
}

static const OSSL_PARAM *
gc_gettable_ctx_params (void *cctx, void *provctx)
{
  static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_size_t (OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t (OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_END
  };
  (void) cctx; (void) provctx;
  return gettable;
}

static const OSSL_PARAM *
gc_gettable_params (void *provctx)
{
  static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_uint (OSSL_CIPHER_PARAM_MODE, NULL),
    OSSL_PARAM_size_t (OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t (OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t (OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
    OSSL_PARAM_END
  };
  (void) provctx;
  return gettable;
}

#define FN(id, f) { id, (void (*) (void)) (f) }

/* One algorithm: its description, and the two entry points that cannot
 * tell algorithms apart by their arguments. */
#define GC_ALGORITHM(id, gcry_algo, gcry_mode, ossl_mode, key_bytes)       \
  static const struct gc_alg alg_##id =                                   \
    { gcry_algo, gcry_mode, ossl_mode, key_bytes };                       \
  static void *newctx_##id (void *provctx)                                \
  { (void) provctx; return gc_newctx (&alg_##id); }                       \
  static int get_params_##id (OSSL_PARAM params[])                        \
  { return gc_get_params (&alg_##id, params); }                           \
  static const OSSL_DISPATCH fns_##id[] = {                               \
    FN (OSSL_FUNC_CIPHER_NEWCTX, newctx_##id),                            \
    FN (OSSL_FUNC_CIPHER_GET_PARAMS, get_params_##id),                    \
    FN (OSSL_FUNC_CIPHER_FREECTX, gc_freectx),                            \
    FN (OSSL_FUNC_CIPHER_DUPCTX, gc_dupctx),                              \
    FN (OSSL_FUNC_CIPHER_ENCRYPT_INIT, gc_encrypt_init),                  \
    FN (OSSL_FUNC_CIPHER_DECRYPT_INIT, gc_decrypt_init),                  \
    FN (OSSL_FUNC_CIPHER_UPDATE, gc_update),                              \
    FN (OSSL_FUNC_CIPHER_FINAL, gc_final),                                \
    FN (OSSL_FUNC_CIPHER_CIPHER, gc_update),                              \
    FN (OSSL_FUNC_CIPHER_GET_CTX_PARAMS, gc_get_ctx_params),              \
    FN (OSSL_FUNC_CIPHER_SET_CTX_PARAMS, gc_set_ctx_params),              \
    FN (OSSL_FUNC_CIPHER_GETTABLE_PARAMS, gc_gettable_params),            \
    FN (OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, gc_gettable_ctx_params),    \
    FN (OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, gc_settable_ctx_params),    \
    { 0, NULL }                                                           \
  };

/* GCRY_CIPHER_SERPENT256 and GCRY_CIPHER_TWOFISH take shorter keys too
 * (Serpent any up to 32 bytes, Twofish 16 or 32). */
GC_ALGORITHM (serpent_ecb, GCRY_CIPHER_SERPENT256, GCRY_CIPHER_MODE_ECB,
              EVP_CIPH_ECB_MODE, 32)
GC_ALGORITHM (serpent_cbc, GCRY_CIPHER_SERPENT256, GCRY_CIPHER_MODE_CBC,
              EVP_CIPH_CBC_MODE, 32)
GC_ALGORITHM (twofish_ecb, GCRY_CIPHER_TWOFISH, GCRY_CIPHER_MODE_ECB,
              EVP_CIPH_ECB_MODE, 32)
GC_ALGORITHM (twofish_cbc, GCRY_CIPHER_TWOFISH, GCRY_CIPHER_MODE_CBC,
              EVP_CIPH_CBC_MODE, 32)
/* The IV is XTS's tweak, the whole key both halves. */
GC_ALGORITHM (aes128_xts, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_XTS,
              EVP_CIPH_XTS_MODE, 32)
GC_ALGORITHM (aes256_xts, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_XTS,
              EVP_CIPH_XTS_MODE, 64)
/* ECB on XTS (zero_tweak_ecb): the key is the ECB key alone. */
GC_ALGORITHM (aes128_ecb, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_XTS,
              EVP_CIPH_ECB_MODE, 16)
GC_ALGORITHM (aes192_ecb, GCRY_CIPHER_AES192, GCRY_CIPHER_MODE_XTS,
              EVP_CIPH_ECB_MODE, 24)
GC_ALGORITHM (aes256_ecb, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_XTS,
              EVP_CIPH_ECB_MODE, 32)

#define PROPS "provider=" PROVIDER_NAME
static const OSSL_ALGORITHM ciphers[] = {
  { "SERPENT-ECB", PROPS, fns_serpent_ecb, "Serpent ECB (libgcrypt)" },
  { "SERPENT-CBC", PROPS, fns_serpent_cbc, "Serpent CBC (libgcrypt)" },
  { "TWOFISH-ECB", PROPS, fns_twofish_ecb, "Twofish ECB (libgcrypt)" },
  { "TWOFISH-CBC", PROPS, fns_twofish_cbc, "Twofish CBC (libgcrypt)" },
  { "AES-128-XTS", PROPS, fns_aes128_xts, "AES-128-XTS (libgcrypt)" },
  { "AES-256-XTS", PROPS, fns_aes256_xts, "AES-256-XTS (libgcrypt)" },
  { "AES-128-ECB", PROPS, fns_aes128_ecb, "AES-128-ECB (libgcrypt XTS)" },
  { "AES-192-ECB", PROPS, fns_aes192_ecb, "AES-192-ECB (libgcrypt XTS)" },
  { "AES-256-ECB", PROPS, fns_aes256_ecb, "AES-256-ECB (libgcrypt XTS)" },
  { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *
query (void *provctx, int operation_id, int *no_cache)
{
  (void) provctx;
  *no_cache = 0;
  return operation_id == OSSL_OP_CIPHER ? ciphers : NULL;
}

static void
teardown (void *provctx)
{
  (void) provctx;
}

static int
provider_init (const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
               const OSSL_DISPATCH **out, void **provctx)
{
  static const OSSL_DISPATCH dispatch[] = {
    FN (OSSL_FUNC_PROVIDER_QUERY_OPERATION, query),
    FN (OSSL_FUNC_PROVIDER_TEARDOWN, teardown),
    { 0, NULL }
  };
  (void) handle; (void) in;
  *out = dispatch;
  *provctx = (void *) dispatch;         /* any non-NULL value */
  return 1;
}

static pthread_once_t libctx_once = PTHREAD_ONCE_INIT;
static OSSL_LIB_CTX *gcrypt_libctx;

/* gcry_check_version is libgcrypt's one required initialisation, and
 * harmless when another library in the process has done it already. */
static void
make_libctx (void)
{
  OSSL_LIB_CTX *libctx;

  if (gcry_check_version (GCRYPT_VERSION) == NULL)
    return;
  libctx = OSSL_LIB_CTX_new ();
  if (libctx == NULL)
    return;
  if (OSSL_PROVIDER_add_builtin (libctx, PROVIDER_NAME,
                                 provider_init) != 1 ||
      OSSL_PROVIDER_load (libctx, PROVIDER_NAME) == NULL) {
    OSSL_LIB_CTX_free (libctx);
    ERR_clear_error ();
    return;
  }
  gcrypt_libctx = libctx;
}

OSSL_LIB_CTX *
gcrypt_provider_libctx (void)
{
  pthread_once (&libctx_once, make_libctx);
  return gcrypt_libctx;
}

/* libgcrypt lists its CPU paths in "hwflist"; "intel-vaes-vpclmul" is
 * its VAES code, which runs XTS on 256-bit vectors (any vendor's CPU). */
bool
gcrypt_provider_has_vaes (void)
{
  char *flags;
  bool vaes;

  if (gcrypt_provider_libctx () == NULL)
    return false;
  flags = gcry_get_config (0, "hwflist");
  vaes = flags != NULL && strstr (flags, ":intel-vaes-vpclmul:") != NULL;
  gcry_free (flags);
  return vaes;
}
