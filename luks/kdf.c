/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Key derivation for our own keyslot unlock (keyslot.c): PBKDF2 from
 * OpenSSL and Argon2 from libargon2, the two that LUKS uses.  PBKDF2
 * runs in the library context of crypto/legacy_libctx.h, since LUKS1
 * headers name Whirlpool and RIPEMD-160, which only the legacy provider
 * has. */
#include <string.h>
#include <strings.h>

#include <argon2.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "../common/log.h"
#include "../crypto/legacy_libctx.h"
#include "internal.h"

/* Without the legacy provider only its hashes are missing: the
 * process's default context still has PBKDF2 and the SHA family. */
static OSSL_LIB_CTX *
kdf_libctx (void)
{
  return legacy_libctx_get ();
}

EVP_MD *
luks_kdf_fetch_hash (const char *name)
{
  EVP_MD *md = EVP_MD_fetch (kdf_libctx (), name, NULL);

  ERR_clear_error ();
  return md;
}

int
luks_pbkdf2 (const char *hash, const void *secret, size_t secret_bytes,
             const uint8_t *salt, size_t salt_bytes, uint32_t iterations,
             uint8_t *out, size_t out_bytes)
{
  EVP_KDF *kdf = NULL;
  EVP_KDF_CTX *kctx = NULL;
  OSSL_PARAM params[6];
  int pkcs5 = 1;
  int r = -1;

  kdf = EVP_KDF_fetch (kdf_libctx (), OSSL_KDF_NAME_PBKDF2, NULL);
  if (kdf != NULL)
    kctx = EVP_KDF_CTX_new (kdf);
  if (kctx == NULL) {
    nbdkit_error ("PBKDF2 is not available from OpenSSL");
    goto out;
  }
  params[0] = OSSL_PARAM_construct_utf8_string (OSSL_KDF_PARAM_DIGEST,
                                                (char *) hash, 0);
  params[1] = OSSL_PARAM_construct_octet_string (OSSL_KDF_PARAM_PASSWORD,
                                                 (void *) secret,
                                                 secret_bytes);
  params[2] = OSSL_PARAM_construct_octet_string (OSSL_KDF_PARAM_SALT,
                                                 (void *) salt, salt_bytes);
  params[3] = OSSL_PARAM_construct_uint32 (OSSL_KDF_PARAM_ITER, &iterations);
  /* SP 800-132's lower bounds are for new keys, not for reading the
   * headers of old ones: PKCS#5 mode lifts them. */
  params[4] = OSSL_PARAM_construct_int (OSSL_KDF_PARAM_PKCS5, &pkcs5);
  params[5] = OSSL_PARAM_construct_end ();
  if (EVP_KDF_derive (kctx, out, out_bytes, params) != 1) {
    nbdkit_error ("PBKDF2 with hash %s failed (unknown hash?)", hash);
    goto out;
  }
  r = 0;
 out:
  ERR_clear_error ();
  EVP_KDF_CTX_free (kctx);
  EVP_KDF_free (kdf);
  return r;
}

int
luks_argon2 (const char *type, const void *secret, size_t secret_bytes,
             const uint8_t *salt, size_t salt_bytes, uint32_t time_cost,
             uint32_t memory_kib, uint32_t threads, uint8_t *out,
             size_t out_bytes)
{
  argon2_type t;
  int e;

  if (strcasecmp (type, CRYPT_KDF_ARGON2I) == 0)
    t = Argon2_i;
  else if (strcasecmp (type, CRYPT_KDF_ARGON2ID) == 0)
    t = Argon2_id;
  else {
    nbdkit_error ("unsupported key derivation: %s", type);
    return -1;
  }
  e = argon2_hash (time_cost, memory_kib, threads, secret, secret_bytes,
                   salt, salt_bytes, out, out_bytes, NULL, 0, t,
                   ARGON2_VERSION_13);
  if (e != ARGON2_OK) {
    nbdkit_error ("%s: %s", type, argon2_error_message (e));
    return -1;
  }
  return 0;
}
