/* SPDX-License-Identifier: GPL-2.0-or-later */
/* OpenSSL's legacy provider (Blowfish, CAST5, DES, SEED; Whirlpool and
 * RIPEMD-160, which LUKS1 headers name) in a private library context,
 * with the default provider beside it for what is built over those
 * (PBKDF2 with Whirlpool).  Loaded privately, it leaves the process's
 * default context, and whoever else uses it, untouched. */
#ifndef DMCRYPT_LEGACY_LIBCTX_H
#define DMCRYPT_LEGACY_LIBCTX_H

#include <openssl/crypto.h>

/* The context, made on the first call; NULL if either provider does
 * not load. */
OSSL_LIB_CTX *legacy_libctx_get (void);

#endif /* DMCRYPT_LEGACY_LIBCTX_H */
