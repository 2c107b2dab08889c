/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LRW tweaks.  GF(2^128) here is the kernel's "bbe" representation
 * (crypto/gf128mul.c): the 16 bytes are a big-endian number whose bit i
 * is the coefficient of x^i, reduced by x^128 + x^7 + x^2 + x + 1. */
#include <endian.h>
#include <string.h>

#include "lrw.h"

struct u128
{
  uint64_t hi, lo;
};

static struct u128
load_be (const uint8_t *p)
{
  struct u128 v;

  memcpy (&v.hi, p, 8);
  memcpy (&v.lo, p + 8, 8);
  v.hi = be64toh (v.hi);
  v.lo = be64toh (v.lo);
  return v;
}

static void
store_be (uint8_t *p, struct u128 v)
{
  uint64_t hi = htobe64 (v.hi), lo = htobe64 (v.lo);

  memcpy (p, &hi, 8);
  memcpy (p + 8, &lo, 8);
}

/* A * B, bit by bit from B's top: used only for the 128 table entries
 * and once per sector. */
static struct u128
gf128_mul (struct u128 a, struct u128 b)
{
  struct u128 r = { 0, 0 };
  uint64_t carry;
  int bit;

  for (bit = 127; bit >= 0; bit--) {
    carry = r.hi >> 63;                  /* r = r * x */
    r.hi = (r.hi << 1) | (r.lo >> 63);
    r.lo = (r.lo << 1) ^ (carry * 0x87);
    if ((bit >= 64 ? b.hi >> (bit - 64) : b.lo >> bit) & 1) {
      r.hi ^= a.hi;
      r.lo ^= a.lo;
    }
  }
  return r;
}

void
lrw_key_init (struct lrw_key *k, const uint8_t k2[LRW_BLOCK_BYTES])
{
  struct u128 key = load_be (k2), ones = { 0, 0 };
  int i;

  memcpy (k->k2, k2, LRW_BLOCK_BYTES);
  for (i = 0; i < 128; i++) {
    if (i < 64)
      ones.lo |= UINT64_C (1) << i;
    else
      ones.hi |= UINT64_C (1) << (i - 64);
    store_be (k->mulinc[i], gf128_mul (key, ones));
  }
}

/* How many one bits I ends in (0..127; 127 for all ones, whose
 * successor 0 differs in all 128 bits, as the kernel's next_index). */
static int
trailing_ones (struct u128 i)
{
  if (~i.lo != 0)
    return __builtin_ctzll (~i.lo);
  if (~i.hi != 0)
    return 64 + __builtin_ctzll (~i.hi);
  return 127;
}

void
lrw_tweaks (const struct lrw_key *k, const uint8_t iv[LRW_BLOCK_BYTES],
            uint8_t *table, size_t len)
{
  struct u128 index = load_be (iv), t, step;
  size_t off;

  t = gf128_mul (load_be (k->k2), index);
  for (off = 0; off + LRW_BLOCK_BYTES <= len; off += LRW_BLOCK_BYTES) {
    store_be (table + off, t);
    step = load_be (k->mulinc[trailing_ones (index)]);
    t.hi ^= step.hi;
    t.lo ^= step.lo;
    if (++index.lo == 0)
      index.hi++;
  }
  explicit_bzero (&t, sizeof t);       /* K2 * I gives K2 away */
}
