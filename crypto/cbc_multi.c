/* CBC over many sectors.  Encryption is interleaved: a column holds
 * each sector's last ciphertext block (its IV at first); for block j,
 * every chain is XORed with its sector's plaintext block j, the whole
 * column encrypted in one ECB call, and each result is both the
 * ciphertext block and the chain for block j + 1.  Decryption (at the
 * end) needs no interleaving: a run is one ECB call. */
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "block_cipher.h"
#include "cbc_multi.h"

/* Sectors per group: enough blocks per ECB call (2 KiB of 16-byte
 * blocks) that the library's per-call cost is small, and a tile of
 * TILE_BLOCKS columns (16 KiB) that stays in the L1 cache.  With
 * libgcrypt's ECB, 128 KiB of 512-byte sectors at a time, 128 and 8
 * measured 4970-5230 MB/s against 4610-4720 for 64 and 16 and
 * 4850-5140 for 256 and 4; with OpenSSL's, 4120-4300 for both of the
 * first two and 3870-4040 for the third. */
#define GROUP_UNITS 128
#define TILE_BLOCKS 8

/* One 8- or 16-byte block, with sizes the compiler can inline. */
static inline void
copy_block (uint8_t *dst, const uint8_t *src, unsigned block_bytes)
{
  if (block_bytes == 16)
    memcpy (dst, src, 16);
  else
    memcpy (dst, src, 8);
}

/* Copies an N by BLOCKS matrix of blocks: block (i, k) from SRC +
 * i * SRC_I + k * SRC_K to DST + i * DST_I + k * DST_K.  Between a
 * group's units (UNIT_BYTES apart) and a tile, where block k of unit i
 * sits at block k * N + i, so that each block column is one contiguous
 * ECB input. */
static void
transpose (uint8_t *dst, size_t dst_i, size_t dst_k, const uint8_t *src,
           size_t src_i, size_t src_k, size_t n, size_t blocks,
           unsigned block_bytes)
{
  size_t i, k;

  for (i = 0; i < n; i++)
    for (k = 0; k < blocks; k++)
      copy_block (dst + i * dst_i + k * dst_k, src + i * src_i + k * src_k,
                  block_bytes);
}

/* DST ^= SRC over LEN bytes, a multiple of 8; 16 bytes at a time where
 * there is SSE2 (every x86-64): the XORs of a group's columns are a pass
 * over all its data. */
static void
xor_into (uint8_t *dst, const uint8_t *src, size_t len)
{
  uint64_t d, s;
  size_t off = 0;

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

/* One group of N units, a tile of TILE_BLOCKS block columns at a time:
 * each unit's slice of a tile is read and written whole, so that the
 * units' stride (often 4096 bytes, which maps them all to one cache
 * set) costs one miss per slice, not per block. */
static int
encrypt_group (const struct cbc_multi *m, uint8_t *dst, const uint8_t *src,
               size_t n, uint64_t iv_sector, uint64_t iv_step)
{
  uint8_t tile[TILE_BLOCKS * GROUP_UNITS * IV_MAX_BYTES];
  uint8_t ivs[GROUP_UNITS * IV_MAX_BYTES];
  unsigned bb = m->block_bytes;
  size_t column = n * bb;
  size_t blocks = TILE_BLOCKS < m->unit_bytes / bb ? TILE_BLOCKS
    : m->unit_bytes / bb;
  size_t tile_bytes = blocks * bb, at, k;
  const uint8_t *chain = ivs;
  EVP_CIPHER_CTX *ecb = m->ecb_short != NULL &&
    column < CBC_MULTI_SHORT_COLUMN ? m->ecb_short : m->ecb;

  iv_generate_run (m->iv, iv_sector, iv_step, n, ivs);
  if (m->essiv != NULL &&
      block_cipher_update (m->essiv, ivs, ivs, column) == -1)
    return -1;
  for (at = 0; at < m->unit_bytes; at += tile_bytes) {
    transpose (tile, bb, column, src + at, m->unit_bytes, bb, n, blocks, bb);
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
    transpose (dst + at, m->unit_bytes, bb, tile, bb, column, n, blocks, bb);
  }
  return 0;
}

int
cbc_multi_encrypt (const struct cbc_multi *m, uint8_t *dst,
                   const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                   uint64_t iv_step)
{
  size_t units = nbytes / m->unit_bytes, done, n;

  for (done = 0; done < units; done += n) {
    n = units - done < GROUP_UNITS ? units - done : GROUP_UNITS;
    if (encrypt_group (m, dst + done * m->unit_bytes,
                       src + done * m->unit_bytes, n,
                       iv_sector + done * iv_step, iv_step) == -1)
      return -1;
  }
  return 0;
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

static int
decrypt_run (const struct cbc_multi *m, uint8_t *dst, const uint8_t *src,
             size_t len, uint64_t iv_sector, uint64_t iv_step)
{
  uint8_t plain[RUN_BYTES], ivs[RUN_BYTES / 512 * IV_MAX_BYTES];
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

int
cbc_multi_decrypt (const struct cbc_multi *m, uint8_t *dst,
                   const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                   uint64_t iv_step)
{
  size_t off, len;

  for (off = 0; off < nbytes; off += len) {
    len = nbytes - off < RUN_BYTES ? nbytes - off : RUN_BYTES;
    if (decrypt_run (m, dst + off, src + off, len, iv_sector, iv_step) == -1)
      return -1;
    iv_sector += len / m->unit_bytes * iv_step;
  }
  return 0;
}
