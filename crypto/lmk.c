/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loop-AES's lmk IV (lmk.h).  The IV is MD5's chaining state after
 * whole 64-byte blocks, without MD5's padding and length: no EVP call
 * gives that, so this file uses OpenSSL's MD5_CTX, whose words A to D
 * are that state (deprecated in OpenSSL 3.0, still built in Debian's). */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <endian.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/md5.h>

#include "lmk.h"

#define LMK_BLOCK_BYTES 16      /* the sector's blocks, as loop-AES's AES */

void
lmk_iv (const uint8_t *seed, const uint8_t *plain, uint64_t iv_sector,
        uint8_t *iv, unsigned iv_bytes)
{
  uint32_t tail[4], state[4];
  MD5_CTX md5;

  MD5_Init (&md5);
  if (seed != NULL)
    MD5_Update (&md5, seed, LMK_SEED_BYTES);
  MD5_Update (&md5, plain + LMK_BLOCK_BYTES,
              LMK_SECTOR_BYTES - LMK_BLOCK_BYTES);
  /* crypt_iv_lmk_one: the sector cut to 56 bits, its top bit set, and
   * loop-AES's constant 4024; with it the input is whole MD5 blocks
   * (512 or 576 bytes), so the state below is the one after them. */
  tail[0] = htole32 ((uint32_t) iv_sector);
  tail[1] = htole32 (((uint32_t) (iv_sector >> 32) & 0x00ffffff)
                     | 0x80000000u);
  tail[2] = htole32 (4024);
  tail[3] = 0;
  MD5_Update (&md5, tail, sizeof tail);

  state[0] = htole32 (md5.A);
  state[1] = htole32 (md5.B);
  state[2] = htole32 (md5.C);
  state[3] = htole32 (md5.D);
  memcpy (iv, state, iv_bytes < sizeof state ? iv_bytes : sizeof state);
  OPENSSL_cleanse (&md5, sizeof md5);
  OPENSSL_cleanse (state, sizeof state);
}
