/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Elephant diffuser.  A sector is N little-endian 32-bit words;
 * diffuser A mixes each word with the words 2 and 5 before it, diffuser
 * B with the words 2 and 5 after it, both cyclically.  The paper defines
 * the decrypting direction as the forward loop; encryption runs the
 * same steps backwards, subtracting. */
#include <endian.h>
#include <string.h>

#include "elephant.h"

#define A_CYCLES 5
#define B_CYCLES 3

/* Left rotations by word index modulo 4. */
static const unsigned a_rot[4] = { 9, 0, 13, 0 };
static const unsigned b_rot[4] = { 0, 10, 0, 25 };

static inline uint32_t
rotl (uint32_t x, unsigned r)
{
  return r == 0 ? x : (x << r) | (x >> (32 - r));
}

/* One mixing term: word I takes d[I + DA] ^ rotl (d[I + DB]), indices
 * modulo N. */
static inline uint32_t
term (const uint32_t *d, size_t n, size_t i, size_t da, size_t db,
      unsigned r)
{
  return d[(i + da) % n] ^ rotl (d[(i + db) % n], r);
}

static void
diffuse (uint32_t *d, size_t n, int cycles, size_t da, size_t db,
         const unsigned rot[4], int encrypt)
{
  int c;
  size_t i;

  for (c = 0; c < cycles; c++) {
    if (encrypt)
      for (i = n; i-- > 0;)
        d[i] -= term (d, n, i, da, db, rot[i % 4]);
    else
      for (i = 0; i < n; i++)
        d[i] += term (d, n, i, da, db, rot[i % 4]);
  }
}

/* Diffuser A looks back: i - 2 and i - 5 are i + n - 2, i + n - 5. */
static void
diffuser_a (uint32_t *d, size_t n, int encrypt)
{
  diffuse (d, n, A_CYCLES, n - 2, n - 5, a_rot, encrypt);
}

static void
diffuser_b (uint32_t *d, size_t n, int encrypt)
{
  diffuse (d, n, B_CYCLES, 2, 5, b_rot, encrypt);
}

static void
xor_key (uint8_t *sector, size_t bytes,
         const uint8_t ks[ELEPHANT_SECTOR_KEY_BYTES])
{
  size_t i;

  for (i = 0; i < bytes; i++)
    sector[i] ^= ks[i % ELEPHANT_SECTOR_KEY_BYTES];
}

/* Words in host order and back: the kernel's diffuser_disk_to_cpu. */
static void
load_words (uint32_t *w, const uint8_t *p, size_t n)
{
  size_t i;

  memcpy (w, p, n * 4);
  for (i = 0; i < n; i++)
    w[i] = le32toh (w[i]);
}

static void
store_words (uint8_t *p, uint32_t *w, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    w[i] = htole32 (w[i]);
  memcpy (p, w, n * 4);
}

void
elephant_key_input (uint64_t offset_bytes, uint8_t in[32])
{
  uint64_t le = htole64 (offset_bytes);

  memset (in, 0, 32);
  memcpy (in, &le, sizeof le);
  memcpy (in + 16, &le, sizeof le);
  in[31] = 0x80;
}

void
elephant_encrypt (uint8_t *sector, size_t bytes,
                  const uint8_t ks[ELEPHANT_SECTOR_KEY_BYTES])
{
  uint32_t w[4096 / 4];
  size_t n = bytes / 4;

  xor_key (sector, bytes, ks);
  load_words (w, sector, n);
  diffuser_a (w, n, 1);
  diffuser_b (w, n, 1);
  store_words (sector, w, n);
  explicit_bzero (w, bytes);
}

void
elephant_decrypt (uint8_t *sector, size_t bytes,
                  const uint8_t ks[ELEPHANT_SECTOR_KEY_BYTES])
{
  uint32_t w[4096 / 4];
  size_t n = bytes / 4;

  load_words (w, sector, n);
  diffuser_b (w, n, 0);
  diffuser_a (w, n, 0);
  store_words (sector, w, n);
  explicit_bzero (w, bytes);
  xor_key (sector, bytes, ks);
}
