/* SPDX-License-Identifier: GPL-2.0-or-later */
/* xorshift64* (Vigna, 2016): plenty for the tools' draws of offsets and
 * CPUs, and the same sequence on every system for one seed.  The state
 * must not be 0. */
#ifndef DMCRYPT_COMMON_XORSHIFT_H
#define DMCRYPT_COMMON_XORSHIFT_H

#include <stdint.h>

static inline uint64_t
xorshift64s_next (uint64_t *state)
{
  uint64_t x = *state;

  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C (0x2545F4914F6CDD1D);
}

#endif
