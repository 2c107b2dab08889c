/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loop-AES's IV, as dm-crypt's lmk IV mode computes it
 * (drivers/md/dm-crypt.c, crypt_iv_lmk_one, Linux 2.6.33 to 6.x): the
 * MD5 state, unpadded, over an optional 64-byte seed, blocks 1 to 31 of
 * the sector's plaintext and a block that holds the sector number.  A
 * write takes the IV from the plaintext before CBC; a read decrypts
 * with a zero IV and XORs the IV, made from the plaintext's blocks 1 to
 * 31 (which CBC decrypts without the IV), into block 0.  Internal to
 * crypto/. */
#ifndef DMCRYPT_LMK_H
#define DMCRYPT_LMK_H

#include <stdint.h>

/* lmk works on 512-byte sectors only (crypt_iv_lmk_ctr). */
#define LMK_SECTOR_BYTES 512

/* The seed the hash starts with (LMK_SEED_SIZE): the first
 * LMK_SEED_KEY_BYTES of the extra key (MD5's digest size,
 * crypt_iv_lmk_init), then zeros. */
#define LMK_SEED_BYTES 64
#define LMK_SEED_KEY_BYTES 16

/* The IV of the 512-byte plaintext sector PLAIN at IV_SECTOR (its
 * 512-byte sector number, iv_offset included) into IV (IV_BYTES, at
 * most 16).  SEED is NULL (loop-AES version 2) or LMK_SEED_BYTES
 * (version 3). */
void lmk_iv (const uint8_t *seed, const uint8_t *plain, uint64_t iv_sector,
             uint8_t *iv, unsigned iv_bytes);

#endif /* DMCRYPT_LMK_H */
