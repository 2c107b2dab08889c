/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The XTS whitening step (IEEE 1619-2007, section 5.3), for ciphers that
 * OpenSSL has no XTS mode of: encrypting a data unit is
 * whiten, ECB, whiten.  Internal to crypto/. */
#ifndef DMCRYPT_XTS_H
#define DMCRYPT_XTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XTS_BLOCK_BYTES 16

/* The first whitening pass fused with making the table: DST = SRC xor
 * T * alpha^j block by block, each T * alpha^j also stored in TABLE for
 * the second pass.  LEN is a multiple of 16; DST may equal SRC. */
void xts_whiten_first (uint8_t *dst, const uint8_t *src, uint8_t *table,
                       size_t len, const uint8_t tweak[XTS_BLOCK_BYTES]);

/* xts_whiten_first over UNITS consecutive data units of UNIT_BYTES
 * each, the Ith starting from the tweak at TWEAKS + 16 * I. */
void xts_whiten_first_units (uint8_t *dst, const uint8_t *src,
                             uint8_t *table, size_t unit_bytes,
                             size_t units, const uint8_t *tweaks);

/* DST = SRC xor TABLE over LEN bytes (a multiple of 16).  DST may equal
 * SRC. */
void xts_whiten (uint8_t *dst, const uint8_t *src, const uint8_t *table,
                 size_t len);

/* Whether the whitening uses AVX-512 (with VPCLMULQDQ), as it does
 * wherever the CPU has it.  ENABLE false turns it off for the rest of
 * the process, so that tests can compare it with the portable code. */
bool xts_use_vector (bool enable);

#endif /* DMCRYPT_XTS_H */
