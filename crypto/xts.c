/* XTS tweaks on two 64-bit halves: the tweak is a little-endian 128-bit
 * number, and multiplying it by alpha in GF(2^128) is a left shift that
 * folds the carry back in as x^7 + x^2 + x + 1.  The table is made once
 * per data unit so that both whitening passes are plain XORs. */
#include <endian.h>
#include <string.h>

#include "xts.h"

#define GF128_FEEDBACK 0x87

void
xts_tweak_table (uint8_t *table, size_t len,
                 const uint8_t tweak[XTS_BLOCK_BYTES])
{
  uint64_t lo, hi, carry, out[2];
  size_t off;

  memcpy (&lo, tweak, 8);
  memcpy (&hi, tweak + 8, 8);
  lo = le64toh (lo);
  hi = le64toh (hi);
  for (off = 0; off + XTS_BLOCK_BYTES <= len; off += XTS_BLOCK_BYTES) {
    out[0] = htole64 (lo);
    out[1] = htole64 (hi);
    memcpy (table + off, out, XTS_BLOCK_BYTES);
    carry = hi >> 63;
    hi = (hi << 1) | (lo >> 63);
    lo = (lo << 1) ^ (carry * GF128_FEEDBACK);
  }
}

void
xts_whiten (uint8_t *dst, const uint8_t *src, const uint8_t *table,
            size_t len)
{
  uint64_t d[2], t[2];
  size_t off;

  for (off = 0; off + XTS_BLOCK_BYTES <= len; off += XTS_BLOCK_BYTES) {
    memcpy (d, src + off, XTS_BLOCK_BYTES);
    memcpy (t, table + off, XTS_BLOCK_BYTES);
    d[0] ^= t[0];
    d[1] ^= t[1];
    memcpy (dst + off, d, XTS_BLOCK_BYTES);
  }
}
