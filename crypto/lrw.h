/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LRW (Liskov, Rivest, Wagner; IEEE P1619 draft, the kernel's
 * crypto/lrw.c) over a 16-byte block cipher: block j of a sector is
 * E(K1, P ^ Tj) ^ Tj with Tj = K2 * (I + j) in GF(2^128), I the sector's
 * IV read as a big-endian number.  OpenSSL and libgcrypt have no LRW;
 * the block cipher stays theirs, only the tweak is computed here.
 * Internal to crypto/. */
#ifndef DMCRYPT_LRW_H
#define DMCRYPT_LRW_H

#include <stddef.h>
#include <stdint.h>

#define LRW_BLOCK_BYTES 16

/* K2 and K2 * (2^(k+1) - 1) for k = 0..127: the step from Tj to Tj+1
 * when I + j ends in k one bits (the kernel's mulinc table).  Key
 * material: keep it in secmem. */
struct lrw_key
{
  uint8_t k2[LRW_BLOCK_BYTES];
  uint8_t mulinc[128][LRW_BLOCK_BYTES];
};

void lrw_key_init (struct lrw_key *k, const uint8_t k2[LRW_BLOCK_BYTES]);

/* Tj for each 16-byte block of LEN bytes into TABLE, starting from IV. */
void lrw_tweaks (const struct lrw_key *k, const uint8_t iv[LRW_BLOCK_BYTES],
                 uint8_t *table, size_t len);

#endif /* DMCRYPT_LRW_H */
