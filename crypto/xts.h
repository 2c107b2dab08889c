/* The XTS whitening step (IEEE 1619-2007, section 5.3), for ciphers that
 * OpenSSL has no XTS mode of: encrypting a data unit is
 * whiten, ECB, whiten.  Internal to crypto/. */
#ifndef DMCRYPT_XTS_H
#define DMCRYPT_XTS_H

#include <stddef.h>
#include <stdint.h>

#define XTS_BLOCK_BYTES 16

/* Fills LEN bytes (a multiple of 16) of TABLE with T * alpha^j for block
 * j = 0, 1, …, where T is the encrypted tweak. */
void xts_tweak_table (uint8_t *table, size_t len,
                      const uint8_t tweak[XTS_BLOCK_BYTES]);

/* DST = SRC xor TABLE over LEN bytes (a multiple of 16).  DST may equal
 * SRC. */
void xts_whiten (uint8_t *dst, const uint8_t *src, const uint8_t *table,
                 size_t len);

#endif /* DMCRYPT_XTS_H */
