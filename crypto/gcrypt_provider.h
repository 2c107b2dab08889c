/* libgcrypt's Serpent and Twofish as an OpenSSL provider, so that the
 * rest of crypto/ (ECB, CBC, the XTS construction, ESSIV, per-thread
 * context copies) uses them through EVP like any other cipher.
 *
 * Why libgcrypt: OpenSSL 3.0 has neither cipher; libgcrypt 1.10 (Debian
 * 12) has both, and Whirlpool and Streebog besides, where nettle lacks
 * Whirlpool.  Only the block cipher comes from libgcrypt: modes and IVs
 * stay ours.  Internal to crypto/. */
#ifndef DMCRYPT_GCRYPT_PROVIDER_H
#define DMCRYPT_GCRYPT_PROVIDER_H

#include <openssl/crypto.h>

/* A private library context holding only this provider (loaded on the
 * first call), with "SERPENT-ECB", "SERPENT-CBC", "TWOFISH-ECB" and
 * "TWOFISH-CBC" of variable key length.  NULL if it cannot be made. */
OSSL_LIB_CTX *gcrypt_provider_libctx (void);

#endif /* DMCRYPT_GCRYPT_PROVIDER_H */
