/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TrueCrypt's tcw IV and whitening (tcw.h). */
#include <endian.h>
#include <string.h>

#include <openssl/crypto.h>

#include "crc32.h"
#include "tcw.h"

void
tcw_iv (const uint8_t *iv_seed, unsigned iv_bytes, uint64_t iv_sector,
        uint8_t *iv)
{
  uint64_t le = htole64 (iv_sector);
  uint8_t sector[8];
  unsigned i;

  /* crypt_iv_tcw_gen: the seed's first 8 bytes and its next ones are
   * each XORed with the same 8 bytes of the sector number. */
  memcpy (sector, &le, sizeof sector);
  for (i = 0; i < iv_bytes; i++)
    iv[i] = iv_seed[i] ^ sector[i % 8];
}

void
tcw_whiten (const uint8_t *whitening, uint64_t iv_sector, uint8_t *sector)
{
  uint64_t le = htole64 (iv_sector);
  uint8_t buf[TCW_WHITENING_BYTES], num[8];
  uint32_t crc;
  unsigned i;

  /* crypt_iv_tcw_whitening: both halves of the key XORed with the
   * sector number, a CRC-32 of each 4 bytes in their place, then the
   * four folded into 8 bytes. */
  memcpy (num, &le, sizeof num);
  for (i = 0; i < TCW_WHITENING_BYTES; i++)
    buf[i] = whitening[i] ^ num[i % 8];
  for (i = 0; i < TCW_WHITENING_BYTES; i += 4) {
    /* The kernel's "crc32" (crypto/crc32_generic.c): seeded with 0,
     * not inverted, written little-endian. */
    crc = htole32 (crc32_le (0, buf + i, 4));
    memcpy (buf + i, &crc, 4);
  }
  for (i = 0; i < 4; i++) {
    buf[i] ^= buf[12 + i];
    buf[4 + i] ^= buf[8 + i];
  }
  for (i = 0; i < TCW_SECTOR_BYTES; i++)
    sector[i] ^= buf[i % 8];
  OPENSSL_cleanse (buf, sizeof buf);
}
