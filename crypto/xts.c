/* XTS tweaks on two 64-bit halves: the tweak is a little-endian 128-bit
 * number, and multiplying it by alpha in GF(2^128) is a left shift that
 * folds the carry back in as x^7 + x^2 + x + 1.  The first whitening
 * pass records each block's tweak so that the second is a plain XOR. */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#else
#include <endian.h>
#endif

#include "xts.h"

#define GF128_FEEDBACK 0x87

#ifdef __SSE2__
/* Doubling in vector registers: compilers otherwise keep the tweak in
 * vector registers for the XORs and move it to general registers and
 * back for every doubling, which puts both moves on the chain.  Each
 * 32-bit lane's feedback when the bit below it overflows: lane 0 takes
 * 0x87 from bit 127, lane 2 takes bit 63 as its new bit 64. */
static inline __m128i
double_sse2 (__m128i t)
{
  const __m128i feedback = _mm_set_epi32 (0, 1, 0, GF128_FEEDBACK);
  /* Lanes 3 and 1 (the top of each half) into lanes 0 and 2, their sign
   * spread over the lane, masked to the feedback. */
  __m128i carries = _mm_srai_epi32 (_mm_shuffle_epi32 (t, 0x13), 31);

  return _mm_xor_si128 (_mm_add_epi64 (t, t),
                        _mm_and_si128 (carries, feedback));
}

static inline void
whiten_block (uint8_t *dst, const uint8_t *src, uint8_t *table, __m128i t)
{
  __m128i d = _mm_loadu_si128 ((const __m128i *) src);

  _mm_storeu_si128 ((__m128i *) table, t);
  _mm_storeu_si128 ((__m128i *) dst, _mm_xor_si128 (d, t));
}

void
xts_whiten_first (uint8_t *dst, const uint8_t *src, uint8_t *table,
                  size_t len, const uint8_t tweak[XTS_BLOCK_BYTES])
{
  __m128i t = _mm_loadu_si128 ((const __m128i *) tweak);
  size_t off;

  for (off = 0; off + XTS_BLOCK_BYTES <= len; off += XTS_BLOCK_BYTES) {
    whiten_block (dst + off, src + off, table + off, t);
    t = double_sse2 (t);
  }
}

#else
static inline void
gf128_double (uint64_t *lo, uint64_t *hi)
{
  uint64_t carry = *hi >> 63;

  *hi = (*hi << 1) | (*lo >> 63);
  *lo = (*lo << 1) ^ (carry * GF128_FEEDBACK);
}

static inline void
load_tweak (const uint8_t tweak[XTS_BLOCK_BYTES], uint64_t *lo, uint64_t *hi)
{
  memcpy (lo, tweak, 8);
  memcpy (hi, tweak + 8, 8);
  *lo = le64toh (*lo);
  *hi = le64toh (*hi);
}

void
xts_whiten_first (uint8_t *dst, const uint8_t *src, uint8_t *table,
                  size_t len, const uint8_t tweak[XTS_BLOCK_BYTES])
{
  uint64_t lo, hi, d[2], t[2];
  size_t off;

  load_tweak (tweak, &lo, &hi);
  for (off = 0; off + XTS_BLOCK_BYTES <= len; off += XTS_BLOCK_BYTES) {
    memcpy (d, src + off, XTS_BLOCK_BYTES);
    t[0] = htole64 (lo);
    t[1] = htole64 (hi);
    memcpy (table + off, t, XTS_BLOCK_BYTES);
    d[0] ^= t[0];
    d[1] ^= t[1];
    memcpy (dst + off, d, XTS_BLOCK_BYTES);
    gf128_double (&lo, &hi);
  }
}
#endif

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
