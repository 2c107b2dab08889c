/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The private library context of legacy_libctx.h, made once. */
#include <pthread.h>

#include <openssl/err.h>
#include <openssl/provider.h>

#include "legacy_libctx.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static OSSL_LIB_CTX *legacy_libctx;

static void
load (void)
{
  OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new ();

  if (libctx == NULL)
    return;
  if (OSSL_PROVIDER_load (libctx, "default") == NULL ||
      OSSL_PROVIDER_load (libctx, "legacy") == NULL) {
    OSSL_LIB_CTX_free (libctx);
    ERR_clear_error ();
    return;
  }
  legacy_libctx = libctx;
}

OSSL_LIB_CTX *
legacy_libctx_get (void)
{
  pthread_once (&once, load);
  return legacy_libctx;
}
