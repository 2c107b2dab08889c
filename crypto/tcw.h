/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TrueCrypt's CBC mode before 4.1, as dm-crypt's tcw IV mode does it
 * (drivers/md/dm-crypt.c, crypt_iv_tcw_*, Linux 3.13 to 6.x): the IV is
 * an IV seed XORed with the sector number, and the CBC ciphertext is
 * whitened: every 8 bytes of the sector XORed with 8 bytes made from a
 * 16-byte whitening key, the sector number and CRC-32.  The key ends in
 * the IV seed (one cipher block) and the whitening key.  Internal to
 * crypto/. */
#ifndef DMCRYPT_TCW_H
#define DMCRYPT_TCW_H

#include <stdint.h>

/* tcw works on 512-byte sectors only (crypt_iv_tcw_ctr). */
#define TCW_SECTOR_BYTES 512
#define TCW_WHITENING_BYTES 16

/* The IV (IV_BYTES, 8 or 16) of the sector at IV_SECTOR: IV_SEED XORed
 * with the little-endian sector number, in each 8 bytes. */
void tcw_iv (const uint8_t *iv_seed, unsigned iv_bytes, uint64_t iv_sector,
             uint8_t *iv);

/* Whitens the 512-byte ciphertext SECTOR in place, or undoes it (the
 * same XOR), with WHITENING (TCW_WHITENING_BYTES) at IV_SECTOR. */
void tcw_whiten (const uint8_t *whitening, uint64_t iv_sector,
                 uint8_t *sector);

#endif /* DMCRYPT_TCW_H */
