/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CBC over many sectors.  Encryption is interleaved: a column holds
 * each sector's last ciphertext block (its IV at first); for block j,
 * every chain is XORed with its sector's plaintext block j, the whole
 * column encrypted in one ECB call, and each result is both the
 * ciphertext block and the chain for block j + 1.  Decryption (at the
 * end) needs no interleaving: a run is one ECB call. */
#include <stdbool.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined (__x86_64__) && defined (__GNUC__)
#include <immintrin.h>
#define CBC_HAVE_AVX512 1
#endif

#include "block_cipher.h"
#include "cbc_multi.h"
#include "cpu_scratch.h"

/* Sectors per group: enough blocks per ECB call (2 KiB of 16-byte
 * blocks) that the library's per-call cost is small, and tiles of
 * TILE_BYTES that stay in the L1 cache.  With libgcrypt's ECB, 128 KiB
 * of 512-byte sectors at a time, 128 sectors and 8 columns measured
 * 4970-5230 MB/s against 4610-4720 for 64 and 16 and 4850-5140 for 256
 * and 4; with OpenSSL's, 4120-4300 for both of the first two and
 * 3870-4040 for the third. */
#define GROUP_UNITS 128
#define TILE_BYTES 16384
/* A tile's columns: a power of two from TILE_STEP, the unrolled copies'
 * step, to MAX_TILE_BLOCKS, as many as TILE_BYTES holds.  Fewer sectors
 * make shorter columns and so more of them per tile, and fewer tiles
 * per sector: 32 sectors of 4096 bytes take 32 columns, not 8
 * (tests/unit/test-cipher --bench-out-of-place, libgcrypt: 5310-5380
 * MB/s against 4750-5000; the 64 sectors of a 256 KiB write, in one
 * call as two chunks, take 16). */
#define TILE_STEP 8
#define MAX_TILE_BLOCKS 32
_Static_assert (TILE_STEP * GROUP_UNITS * IV_MAX_BYTES <= TILE_BYTES,
                "the shortest tile of the longest columns fits");

/* One 8- or 16-byte block, with sizes the compiler can inline. */
static inline void
copy_block (uint8_t *dst, const uint8_t *src, unsigned block_bytes)
{
  if (block_bytes == 16)
    memcpy (dst, src, 16);
  else
    memcpy (dst, src, 8);
}

/* Gathers block k of unit i (units UNIT_BYTES apart at SRC) to block
 * k * N + i of TILE, for k below BLOCKS: each block column is then one
 * contiguous ECB input.  16-byte blocks and whole tiles, the usual
 * case, go unrolled: the loop's own work was as much as the copies. */
static void
gather (uint8_t *tile, size_t column, const uint8_t *src, size_t unit_bytes,
        size_t n, size_t blocks, unsigned block_bytes)
{
  size_t i, k, step;

  if (block_bytes == 16 && blocks % TILE_STEP == 0) {
    for (i = 0; i < n; i++)
      for (step = 0; step < blocks; step += TILE_STEP) {
#pragma GCC unroll 16
        for (k = step; k < step + TILE_STEP; k++)
          memcpy (tile + k * column + i * 16, src + i * unit_bytes + k * 16,
                  16);
      }
    return;
  }
  for (i = 0; i < n; i++)
    for (k = 0; k < blocks; k++)
      copy_block (tile + k * column + i * block_bytes,
                  src + i * unit_bytes + k * block_bytes, block_bytes);
}

#ifdef CBC_HAVE_AVX512
static bool use_avx512;

/* nbdkit may start threads before any request: decide once, at load. */
__attribute__ ((constructor)) static void
pick_avx512 (void)
{
  __builtin_cpu_init ();
  use_avx512 = __builtin_cpu_supports ("avx512f");
}

/* 64 bytes at a time: a column of 1 KiB is 16 XORs, not 64. */
__attribute__ ((target ("avx512f"))) static void
xor_into_avx512 (uint8_t *dst, const uint8_t *src, size_t len)
{
  size_t off;

  for (off = 0; off < len; off += 64)
    _mm512_storeu_si512 (dst + off,
                         _mm512_xor_si512 (_mm512_loadu_si512 (dst + off),
                                           _mm512_loadu_si512 (src + off)));
}
#endif

/* DST ^= SRC over LEN bytes, a multiple of 8; 64 bytes at a time with
 * AVX-512, else 16 where there is SSE2 (every x86-64): the XORs of a
 * group's columns are a pass over all its data. */
static void
xor_into (uint8_t *dst, const uint8_t *src, size_t len)
{
  uint64_t d, s;
  size_t off = 0;

#ifdef CBC_HAVE_AVX512
  if (use_avx512 && len % 64 == 0) {
    xor_into_avx512 (dst, src, len);
    return;
  }
#endif
#ifdef __SSE2__
  for (; off + 16 <= len; off += 16) {
    __m128i a = _mm_loadu_si128 ((const __m128i *) (dst + off));
    __m128i b = _mm_loadu_si128 ((const __m128i *) (src + off));
    _mm_storeu_si128 ((__m128i *) (dst + off), _mm_xor_si128 (a, b));
  }
#endif
  for (; off < len; off += 8) {
    memcpy (&d, dst + off, 8);
    memcpy (&s, src + off, 8);
    d ^= s;
    memcpy (dst + off, &d, 8);
  }
}

/* Asks for the next tile's plaintext, BYTES of each of N units
 * UNIT_BYTES apart, while this tile's ECB calls keep the CPU busy: the
 * hardware's prefetcher follows one stream within a page, not N in N
 * pages, and a source just received from a socket is seldom in cache. */
static void
prefetch_tile (const uint8_t *src, size_t unit_bytes, size_t n, size_t bytes)
{
  size_t i, off;

  for (i = 0; i < n; i++)
    for (off = 0; off < bytes; off += 64)
      __builtin_prefetch (src + i * unit_bytes + off, 0, 3);
}

/* Copies a tile's columns out to the N units, unit i's blocks from
 * block AT / BB of the unit on: the units may lie in different buffers
 * (cbc_multi_encrypt_pieces).  Unrolled as gather. */
static void
scatter (uint8_t *const *dst_unit, size_t at, const uint8_t *tile,
         size_t column, size_t n, size_t blocks, unsigned block_bytes)
{
  size_t i, k, step;

  if (block_bytes == 16 && blocks % TILE_STEP == 0) {
    for (i = 0; i < n; i++)
      for (step = 0; step < blocks; step += TILE_STEP) {
#pragma GCC unroll 16
        for (k = step; k < step + TILE_STEP; k++)
          memcpy (dst_unit[i] + at + k * 16, tile + k * column + i * 16, 16);
      }
    return;
  }
  for (i = 0; i < n; i++)
    for (k = 0; k < blocks; k++)
      copy_block (dst_unit[i] + at + k * block_bytes,
                  tile + k * column + i * block_bytes, block_bytes);
}

/* The columns of a tile of N units of UNIT_BLOCKS blocks of BB bytes. */
static size_t
tile_blocks (size_t n, unsigned bb, size_t unit_blocks)
{
  size_t blocks = TILE_STEP;

  while (blocks < MAX_TILE_BLOCKS && 2 * blocks * n * bb <= TILE_BYTES)
    blocks *= 2;
  return blocks < unit_blocks ? blocks : unit_blocks;
}

/* What a group needs beside its source and destinations: the tile and
 * the chains. */
struct group_scratch
{
  uint8_t tile[TILE_BYTES] __attribute__ ((aligned (64)));
  uint8_t ivs[GROUP_UNITS * IV_MAX_BYTES];
};
_Static_assert (sizeof (struct group_scratch) <= CPU_SCRATCH_BYTES,
                "a group's scratch fits a CPU's area");

/* One group of N units, a tile of block columns at a time:
 * each unit's slice of a tile is read and written whole, so that the
 * units' stride (often 4096 bytes, which maps them all to one cache
 * set) costs one miss per slice, not per block. */
static int
encrypt_group (const struct cbc_multi *m, struct group_scratch *s,
               uint8_t *const *dst_unit, const uint8_t *src, size_t n,
               uint64_t iv_sector, uint64_t iv_step)
{
  uint8_t *tile = s->tile, *ivs = s->ivs;
  unsigned bb = m->block_bytes;
  size_t column = n * bb;
  size_t blocks = tile_blocks (n, bb, m->unit_bytes / bb);
  size_t tile_bytes = blocks * bb, at, k;
  const uint8_t *chain = ivs;
  EVP_CIPHER_CTX *ecb = m->ecb_short != NULL &&
    column < CBC_MULTI_SHORT_COLUMN ? m->ecb_short : m->ecb;

  iv_generate_run (m->iv, iv_sector, iv_step, n, ivs);
  if (m->essiv != NULL &&
      block_cipher_update (m->essiv, ivs, ivs, column) == -1)
    return -1;
  for (at = 0; at < m->unit_bytes; at += tile_bytes) {
    gather (tile, column, src + at, m->unit_bytes, n, blocks, bb);
    if (at + tile_bytes < m->unit_bytes)
      prefetch_tile (src + at + tile_bytes, m->unit_bytes, n, tile_bytes);
    for (k = 0; k < blocks; k++) {
      xor_into (tile + k * column, chain, column);
      if (block_cipher_update (ecb, tile + k * column, tile + k * column,
                               column) == -1)
        return -1;
      chain = tile + k * column;
    }
    /* The tile's last column is the next tile's chain: keep it. */
    memcpy (ivs, chain, column);
    chain = ivs;
    scatter (dst_unit, at, tile, column, n, blocks, bb);
  }
  return 0;
}

size_t
cbc_multi_group_bytes (unsigned unit_bytes)
{
  return (size_t) GROUP_UNITS * unit_bytes;
}

static int
encrypt_pieces (const struct cbc_multi *m, struct group_scratch *s,
                uint8_t *const *dsts, const size_t *lens, size_t npieces,
                const uint8_t *src, uint64_t iv_sector, uint64_t iv_step)
{
  uint8_t *dst_unit[GROUP_UNITS];
  size_t piece = 0, at = 0, n;

  while (piece < npieces) {
    for (n = 0; n < GROUP_UNITS && piece < npieces;) {
      if (at >= lens[piece]) {
        piece++;
        at = 0;
        continue;
      }
      dst_unit[n++] = dsts[piece] + at;
      at += m->unit_bytes;
    }
    if (n == 0)
      break;
    if (encrypt_group (m, s, dst_unit, src, n, iv_sector, iv_step) == -1)
      return -1;
    src += n * m->unit_bytes;
    iv_sector += n * iv_step;
  }
  return 0;
}

int
cbc_multi_encrypt_pieces (const struct cbc_multi *m, uint8_t *const *dsts,
                          const size_t *lens, size_t npieces,
                          const uint8_t *src, uint64_t iv_sector,
                          uint64_t iv_step)
{
  struct group_scratch on_stack, *cpu_area;
  int slot, r;

  cpu_area = cpu_scratch_claim (&slot);
  r = encrypt_pieces (m, cpu_area ? cpu_area : &on_stack, dsts, lens,
                      npieces, src, iv_sector, iv_step);
  cpu_scratch_release (slot);
  return r;
}

int
cbc_multi_encrypt (const struct cbc_multi *m, uint8_t *dst,
                   const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                   uint64_t iv_step)
{
  return cbc_multi_encrypt_pieces (m, &dst, &nbytes, 1, src, iv_sector,
                                   iv_step);
}

/* Decryption a run at a time: the run's plaintext XOR its chains comes
 * out of one ECB call into PLAIN; the chains are the ciphertext, read
 * from SRC before DST (which may be SRC) is written. */
#define RUN_BYTES 16384
_Static_assert (RUN_BYTES % 4096 == 0, "a run holds whole sectors");

/* DST = PLAIN xor (the ciphertext block before, or IV) over one unit of
 * UNIT_BYTES: the chain stays in registers, one 64-bit word or two. */
static void
unchain (uint8_t *dst, const uint8_t *src, const uint8_t *plain,
         const uint8_t *iv, size_t unit_bytes, unsigned block_bytes)
{
  uint64_t prev[2] = { 0, 0 }, c[2] = { 0, 0 }, p[2] = { 0, 0 };
  size_t at;

  copy_block ((uint8_t *) prev, iv, block_bytes);
  for (at = 0; at < unit_bytes; at += block_bytes) {
    copy_block ((uint8_t *) c, src + at, block_bytes);
    copy_block ((uint8_t *) p, plain + at, block_bytes);
    p[0] ^= prev[0];
    p[1] ^= prev[1];
    copy_block (dst + at, (const uint8_t *) p, block_bytes);
    prev[0] = c[0];
    prev[1] = c[1];
  }
}

/* A decryption run's plaintext before unchaining, and its IVs. */
struct run_scratch
{
  uint8_t plain[RUN_BYTES] __attribute__ ((aligned (64)));
  uint8_t ivs[RUN_BYTES / 512 * IV_MAX_BYTES];
};
_Static_assert (sizeof (struct run_scratch) <= CPU_SCRATCH_BYTES,
                "a run's scratch fits a CPU's area");

static int
decrypt_run (const struct cbc_multi *m, struct run_scratch *s, uint8_t *dst,
             const uint8_t *src, size_t len, uint64_t iv_sector,
             uint64_t iv_step)
{
  uint8_t *plain = s->plain, *ivs = s->ivs;
  unsigned bb = m->block_bytes;
  size_t units = len / m->unit_bytes, u, at;

  iv_generate_run (m->iv, iv_sector, iv_step, units, ivs);
  if ((m->essiv != NULL &&
       block_cipher_update (m->essiv, ivs, ivs, units * bb) == -1) ||
      block_cipher_update (m->ecb, plain, src, len) == -1)
    return -1;
  for (u = 0; u < units; u++) {
    at = u * m->unit_bytes;
    unchain (dst + at, src + at, plain + at, ivs + u * bb, m->unit_bytes,
             bb);
  }
  return 0;
}

static int
decrypt_runs (const struct cbc_multi *m, struct run_scratch *s, uint8_t *dst,
              const uint8_t *src, size_t nbytes, uint64_t iv_sector,
              uint64_t iv_step)
{
  size_t off, len;

  for (off = 0; off < nbytes; off += len) {
    len = nbytes - off < RUN_BYTES ? nbytes - off : RUN_BYTES;
    if (decrypt_run (m, s, dst + off, src + off, len, iv_sector,
                     iv_step) == -1)
      return -1;
    iv_sector += len / m->unit_bytes * iv_step;
  }
  return 0;
}

int
cbc_multi_decrypt (const struct cbc_multi *m, uint8_t *dst,
                   const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                   uint64_t iv_step)
{
  struct run_scratch on_stack, *cpu_area;
  int slot, r;

  cpu_area = cpu_scratch_claim (&slot);
  r = decrypt_runs (m, cpu_area ? cpu_area : &on_stack, dst, src, nbytes,
                    iv_sector, iv_step);
  cpu_scratch_release (slot);
  return r;
}
