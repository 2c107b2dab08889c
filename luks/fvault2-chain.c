/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chain of FileVault2 metadata, read as cryptsetup 2.6 reads it
 * (lib/fvault2/fvault2.c): volume header at byte 0 → disk label block
 * → volume groups descriptor → encrypted metadata blocks, each 8 KiB,
 * AES-128-XTS with the block's index as tweak, read up to the first
 * all-zero block.  Checksums are CRC-32C with the seed stored beside
 * them.  Offsets are checked in 64 bits and, as cryptsetup does, held
 * within the first 1 GiB, so a hostile image reads at most that. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "fvault2.h"

/* Volume header fields (little-endian unless said). */
#define VH_VERSION       8       /* le16, 1 */
#define VH_SIGNATURE     88      /* "CS" */
#define VH_BLOCK_SIZE    96      /* le32, bytes */
#define VH_DISKLABEL     104     /* le64, blocks */
#define VH_KEY_DATA_SIZE 168     /* le32, 16 */
#define VH_KEY_DATA      176     /* 16 bytes */
#define VH_PV_UUID       304     /* 16 bytes */
/* Disk label block: where the volume groups descriptor is. */
#define DL_VGD_OFFSET    220     /* le32, bytes from the block */
/* Volume groups descriptor. */
#define VGD_BLOCKS       8       /* le64: encrypted metadata blocks */
#define VGD_START        32      /* le64: their first block */
#define VGD_BYTES        40

#define MAX_METADATA_END (UINT64_C (1) << 30)   /* cryptsetup's limit */
#define CRC_SEED         0xffffffffu

static uint64_t
le (const uint8_t *p, unsigned n)
{
  uint64_t v = 0;

  while (n--)
    v = v << 8 | p[n];
  return v;
}

/* CRC-32C (Castagnoli, reflected) from SEED, without a final xor. */
static uint32_t
crc32c (uint32_t crc, const uint8_t *p, size_t len)
{
  int k;

  while (len--) {
    crc ^= *p++;
    for (k = 0; k < 8; k++)
      crc = crc >> 1 ^ (0x82f63b78u & -(crc & 1));
  }
  return crc;
}

/* A block starts with its checksum: the value, then the seed. */
static bool
checksum_ok (const uint8_t *block, size_t size)
{
  return le (block + 4, 4) == CRC_SEED
    && crc32c (CRC_SEED, block + 8, size - 8) == le (block, 4);
}

bool
fvault2_has_magic (const void *head, size_t size)
{
  const uint8_t *h = head;

  return size >= FVAULT2_HEADER_BYTES && le (h + VH_VERSION, 2) == 1
    && memcmp (h + VH_SIGNATURE, "CS", 2) == 0;
}

int
fvault2_parse_header (const uint8_t *head, struct fvault2_header *h,
                      char *why, size_t why_size)
{
  memset (h, 0, sizeof *h);
  if (!fvault2_has_magic (head, FVAULT2_HEADER_BYTES))
    snprintf (why, why_size, "no Core Storage volume header");
  else if (!checksum_ok (head, FVAULT2_HEADER_BYTES))
    snprintf (why, why_size, "the volume header's checksum does not match");
  else if (le (head + VH_KEY_DATA_SIZE, 4) != 16)
    snprintf (why, why_size, "unsupported metadata key size %" PRIu64,
              le (head + VH_KEY_DATA_SIZE, 4));
  else if (le (head + VH_BLOCK_SIZE, 4) == 0)
    snprintf (why, why_size, "the volume header gives no block size");
  else {
    h->block_size = le (head + VH_BLOCK_SIZE, 4);
    h->disklabel_block = le (head + VH_DISKLABEL, 8);
    memcpy (h->metadata_key, head + VH_KEY_DATA, 16);
    memcpy (h->metadata_key + 16, head + VH_PV_UUID, 16);
    return 0;
  }
  return -1;
}

/* BLOCKS * BLOCK_SIZE + EXTRA bytes into *OFF, if that is within the
 * first 1 GiB: cryptsetup holds where each read starts to that.  EXTRA
 * is at most 32 bits, so the sum cannot overflow. */
static bool
offset_of (uint64_t blocks, uint32_t block_size, uint64_t extra,
           uint64_t *off)
{
  if (blocks > MAX_METADATA_END / block_size)
    return false;
  *off = blocks * block_size + extra;
  return *off <= MAX_METADATA_END;
}

/* The disk label and the volume groups descriptor it points at: where
 * the encrypted metadata starts (*START, in blocks) and how many blocks
 * it claims (*COUNT). */
static int
read_disklabel (fvault2_read_fn *read, void *opaque,
                const struct fvault2_header *h, uint8_t *block,
                uint64_t *start, uint64_t *count, char *why, size_t why_size)
{
  uint8_t vgd[VGD_BYTES];
  uint64_t off, vgd_off;

  if (!offset_of (h->disklabel_block, h->block_size, 0, &off))
    snprintf (why, why_size, "the disk label lies beyond 1 GiB");
  else if (read (opaque, block, FVAULT2_BLOCK_BYTES, off) == -1)
    snprintf (why, why_size, "cannot read the disk label at byte %" PRIu64,
              off);
  else if (!checksum_ok (block, FVAULT2_BLOCK_BYTES))
    snprintf (why, why_size, "the disk label's checksum does not match");
  else if (!offset_of (h->disklabel_block, h->block_size,
                       le (block + DL_VGD_OFFSET, 4), &vgd_off))
    snprintf (why, why_size, "the volume groups descriptor lies beyond "
              "1 GiB");
  else if (read (opaque, vgd, VGD_BYTES, vgd_off) == -1)
    snprintf (why, why_size, "cannot read the volume groups descriptor at "
              "byte %" PRIu64, vgd_off);
  else {
    *start = le (vgd + VGD_START, 8);
    *count = le (vgd + VGD_BLOCKS, 8);
    return 0;
  }
  return -1;
}

static bool
all_zero (const uint8_t *p, size_t len)
{
  return len == 0 || (p[0] == 0 && memcmp (p, p + 1, len - 1) == 0);
}

/* Block I of the encrypted metadata, decrypted from IN into OUT. */
static bool
decrypt_block (EVP_CIPHER_CTX *ctx, uint64_t i, const uint8_t *in,
               uint8_t *out)
{
  uint8_t tweak[16] = { 0 };
  int n, k;

  for (k = 0; k < 8; k++)
    tweak[k] = i >> (8 * k);
  return EVP_DecryptInit_ex (ctx, NULL, NULL, NULL, tweak) == 1
    && EVP_DecryptUpdate (ctx, out, &n, in, FVAULT2_BLOCK_BYTES) == 1
    && n == FVAULT2_BLOCK_BYTES;
}

/* Every encrypted block from START (in blocks) on, COUNT at most. */
static int
read_encrypted (fvault2_read_fn *read, void *opaque, EVP_CIPHER_CTX *ctx,
                uint64_t start, uint64_t count, uint8_t *buf,
                struct fvault2_layout *l, unsigned *found,
                char *why, size_t why_size)
{
  uint8_t *plain = buf + FVAULT2_BLOCK_BYTES;
  uint64_t i, off;

  for (i = 0; i < count; i++) {
    if (!offset_of (start, l->block_size, 0, &off)
        || i > (MAX_METADATA_END - off) / FVAULT2_BLOCK_BYTES) {
      snprintf (why, why_size, "the encrypted metadata runs beyond 1 GiB");
      return -1;
    }
    off += i * FVAULT2_BLOCK_BYTES;
    if (read (opaque, buf, FVAULT2_BLOCK_BYTES, off) == -1) {
      snprintf (why, why_size, "cannot read metadata block %" PRIu64
                " at byte %" PRIu64, i, off);
      return -1;
    }
    if (all_zero (buf, FVAULT2_BLOCK_BYTES))
      break;
    if (!decrypt_block (ctx, i, buf, plain)) {
      snprintf (why, why_size, "cannot decrypt the metadata");
      return -1;
    }
    if (!checksum_ok (plain, FVAULT2_BLOCK_BYTES)) {
      snprintf (why, why_size, "metadata block %" PRIu64 "'s checksum does "
                "not match", i);
      return -1;
    }
    if (fvault2_parse_block (plain, l, found, why, why_size) == -1)
      return -1;
  }
  return 0;
}

/* Both halves of BUF (two blocks) wiped: the plaintext metadata holds
 * the wrapped keys. */
static int
finish (EVP_CIPHER_CTX *ctx, struct fvault2_header *h, uint8_t *buf, int r)
{
  EVP_CIPHER_CTX_free (ctx);
  OPENSSL_cleanse (h, sizeof *h);
  if (buf)
    OPENSSL_cleanse (buf, 2 * FVAULT2_BLOCK_BYTES);
  free (buf);
  return r;
}

int
fvault2_read_layout (fvault2_read_fn *read, void *opaque,
                     struct fvault2_layout *l, char *why, size_t why_size)
{
  struct fvault2_header h;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  uint8_t *buf = malloc (2 * FVAULT2_BLOCK_BYTES);
  uint64_t start, count;
  unsigned found = 0;

  memset (l, 0, sizeof *l);
  memset (&h, 0, sizeof h);
  if (ctx == NULL || buf == NULL) {
    snprintf (why, why_size, "out of memory");
    return finish (ctx, &h, buf, -1);
  }
  if (read (opaque, buf, FVAULT2_HEADER_BYTES, 0) == -1) {
    snprintf (why, why_size, "cannot read a %d-byte volume header",
              FVAULT2_HEADER_BYTES);
    return finish (ctx, &h, buf, -1);
  }
  if (fvault2_parse_header (buf, &h, why, why_size) == -1
      || read_disklabel (read, opaque, &h, buf, &start, &count,
                         why, why_size) == -1)
    return finish (ctx, &h, buf, -1);
  l->block_size = h.block_size;
  if (EVP_DecryptInit_ex (ctx, EVP_aes_128_xts (), NULL, h.metadata_key,
                          NULL) != 1) {
    snprintf (why, why_size, "cannot key AES-128-XTS for the metadata");
    return finish (ctx, &h, buf, -1);
  }
  if (read_encrypted (read, opaque, ctx, start, count, buf, l, &found,
                      why, why_size) == -1)
    return finish (ctx, &h, buf, -1);
  if (found != (FVAULT2_FOUND_SIZE | FVAULT2_FOUND_OFFSET)) {
    snprintf (why, why_size, "the metadata gives no logical volume %s",
              found & FVAULT2_FOUND_SIZE ? "offset" : "size");
    return finish (ctx, &h, buf, -1);
  }
  return finish (ctx, &h, buf, 0);
}
