/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libgcrypt's Serpent, Twofish and AES as an OpenSSL provider, so
 * that the rest of crypto/ (ECB, CBC, the XTS construction, ESSIV,
 * per-thread context copies) uses them through EVP like any other
 * cipher.
 *
 * Why libgcrypt: OpenSSL 3.0 has neither Serpent nor Twofish; libgcrypt
 * 1.10 (Debian 12) has both, and Whirlpool and Streebog besides, where
 * nettle lacks Whirlpool.  Its AES-XTS has a VAES path (and so has its
 * AES-ECB here, which is that XTS with a zero tweak), which OpenSSL
 * 3.0's lacks (cipher.h, enum sector_cipher_library).  Only the block
 * cipher (and XTS's own tweak chain) comes from libgcrypt: the sector
 * loop and IVs stay ours.  Internal to crypto/. */
#ifndef DMCRYPT_GCRYPT_PROVIDER_H
#define DMCRYPT_GCRYPT_PROVIDER_H

#include <stdbool.h>

#include <openssl/crypto.h>

/* A private library context holding only this provider (loaded on the
 * first call), with "SERPENT-ECB", "SERPENT-CBC", "TWOFISH-ECB" and
 * "TWOFISH-CBC" of variable key length, "AES-128-XTS" and
 * "AES-256-XTS", and "AES-128-ECB", "AES-192-ECB" and "AES-256-ECB".
 * NULL if it cannot be made. */
OSSL_LIB_CTX *gcrypt_provider_libctx (void);

/* Settable on an AES-XTS context: with UNIT_BYTES (size_t, a multiple
 * of 16) set, an update is a run of data units of that size, each with
 * its own tweak: the IV given at init for the first, its first 8 bytes
 * read as a little-endian counter and increased by UNIT_STEP (uint64_t,
 * modulo 2^64) from one unit to the next.  That is dm-crypt's plain64
 * IV over a run of sectors.  0 (the default): an update is one unit. */
#define GCRYPT_PROVIDER_UNIT_BYTES "dmcrypt-unit-bytes"
#define GCRYPT_PROVIDER_UNIT_STEP "dmcrypt-unit-step"

/* Whether libgcrypt runs AES on this CPU with VAES (256-bit vectors),
 * which OpenSSL 3.0 does not: its AES-XTS is then about twice as fast. */
bool gcrypt_provider_has_vaes (void);

#endif /* DMCRYPT_GCRYPT_PROVIDER_H */
