/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Big-endian integers of on-disk formats, read byte by byte (no
 * alignment or host byte order assumed). */
#ifndef DMCRYPT_ENDIAN_H
#define DMCRYPT_ENDIAN_H

#include <stdint.h>

/* The N-byte (at most 8) big-endian number at P. */
static inline uint64_t
get_be (const uint8_t *p, unsigned n)
{
  uint64_t v = 0;

  while (n--)
    v = v << 8 | *p++;
  return v;
}

#endif /* DMCRYPT_ENDIAN_H */
