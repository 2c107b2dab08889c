/* SPDX-License-Identifier: GPL-2.0-or-later */
/* BitLocker's Elephant diffuser (Niels Ferguson, "AES-CBC + Elephant
 * diffuser", 2006) as dm-crypt's elephant IV mode applies it around
 * AES-CBC (drivers/md/dm-crypt.c, crypt_iv_elephant).  Internal to
 * crypto/. */
#ifndef DMCRYPT_ELEPHANT_H
#define DMCRYPT_ELEPHANT_H

#include <stddef.h>
#include <stdint.h>

/* The per-sector key: two cipher blocks, E(Ks, e(s)) and E(Ks, e'(s)). */
#define ELEPHANT_SECTOR_KEY_BYTES 32

/* The largest sector key (Ks) the kernel accepts, in bytes
 * (ELEPHANT_MAX_KEY_SIZE). */
#define ELEPHANT_MAX_KEY_BYTES 32

/* The two plaintext blocks that the sector key encrypts into the
 * per-sector key of the sector at byte offset OFFSET_BYTES: the
 * little-endian offset, zero padded, and the same with 0x80 in its last
 * byte.  IN holds 32 bytes. */
void elephant_key_input (uint64_t offset_bytes, uint8_t in[32]);

/* Before CBC encryption, in place on one sector of BYTES (a multiple of
 * 32, at least 32): XOR with the per-sector key KS, then diffuser A and
 * diffuser B in their encrypting direction, as the kernel does on a
 * write. */
void elephant_encrypt (uint8_t *sector, size_t bytes,
                       const uint8_t ks[ELEPHANT_SECTOR_KEY_BYTES]);

/* After CBC decryption: the exact inverse (B, then A, then the XOR). */
void elephant_decrypt (uint8_t *sector, size_t bytes,
                       const uint8_t ks[ELEPHANT_SECTOR_KEY_BYTES]);

#endif /* DMCRYPT_ELEPHANT_H */
