/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The IV modes that touch the data: loop-AES's lmk (lmk.h) and
 * TrueCrypt's tcw (tcw.h), both CBC on 512-byte sectors.  Each is built
 * on sector ciphers of the same block cipher in cbc-null (CBC with a
 * zero IV): CBC with IV V is CBC with a zero IV over a first block
 * XORed with V, so the IV goes into the plaintext's first block before
 * encryption and comes out of it after decryption, where the kernel
 * puts it (crypt_iv_lmk_post XORs it in just so).  lmk keys sector S
 * with data key S % key count (crypt_alloc_req_skcipher: the sector
 * iv_offset included).  Internal to crypto/; cipher.c dispatches to it,
 * as to cascade.c. */
#ifndef DMCRYPT_IV_LEGACY_H
#define DMCRYPT_IV_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cipher.h"
#include "cipher_spec.h"

struct iv_legacy;

/* Whether S's IV mode is one of these. */
bool iv_legacy_mode (const struct cipher_spec *s);

/* Checks that the library has what P's key would need, for S (whose
 * key cipher_spec_check_key accepted).  Returns 0 or -1. */
int iv_legacy_check (const struct cipher_spec *s, size_t key_bytes);

/* Keys every data key of P for S.  NULL after nbdkit_error (a sector
 * size other than 512 bytes, as the kernel's constructors refuse). */
struct iv_legacy *iv_legacy_new (const struct cipher_spec *s,
                                 const struct sector_cipher_params *p);
void iv_legacy_free (struct iv_legacy *l);

/* sector_cipher_library of its sector ciphers. */
const char *iv_legacy_library (const struct iv_legacy *l);

/* NBYTES of whole 512-byte sectors, the first at 512-byte SECTOR of
 * the mapping, as sector_cipher_encrypt or _decrypt.  Returns 0, or
 * -1 with errno set. */
int iv_legacy_convert (struct iv_legacy *l, uint8_t *dst,
                       const uint8_t *src, size_t nbytes, uint64_t sector,
                       bool encrypt);

#endif /* DMCRYPT_IV_LEGACY_H */
