/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-crypt's IV generators (drivers/md/dm-crypt.c, crypt_iv_*_gen):
 * the IV of one encryption sector from its IV sector number.  Internal
 * to crypto/. */
#ifndef DMCRYPT_IV_H
#define DMCRYPT_IV_H

#include <stddef.h>
#include <stdint.h>

enum iv_mode
{
  IV_NONE,        /* the chain mode takes no IV (ecb) */
  IV_NULL,        /* all zero */
  IV_PLAIN,       /* 32-bit little-endian sector, zero padded */
  IV_PLAIN64,     /* 64-bit little-endian sector, zero padded */
  IV_PLAIN64BE,   /* 64-bit big-endian sector in the last 8 bytes */
  IV_ESSIV,       /* plain64, then encrypted under HASH(key) */
  IV_BENBI,       /* big-endian 1-based count of cipher blocks */
  IV_EBOIV,       /* byte offset, encrypted under the volume key */
  IV_ELEPHANT,    /* eboiv, around BitLocker's Elephant diffuser */
  IV_LMK,         /* loop-AES: MD5 of the sector's plaintext (lmk.h) */
  IV_TCW,         /* TrueCrypt CBC: seed ^ sector, whitening (tcw.h) */
};

#define IV_MAX_BYTES 16

struct iv_gen
{
  enum iv_mode mode;
  unsigned iv_bytes;         /* IV length: the cipher block, at least 8 */
  unsigned benbi_shift;      /* 9 - log2 (cipher block bytes) */
  unsigned sector_bytes;     /* encryption sector size, for eboiv */
};

/* Sets up G for MODE with a cipher of BLOCK_BYTES and SECTOR_BYTES
 * sectors. */
void iv_gen_init (struct iv_gen *g, enum iv_mode mode, unsigned block_bytes,
                  unsigned sector_bytes);

/* Writes the g->iv_bytes generator output for IV_SECTOR into IV.  For
 * IV_ESSIV, IV_EBOIV and IV_ELEPHANT this is the value the caller still has to
 * encrypt, as the kernel's essiv template and eboiv generator do; IV_LMK
 * and IV_TCW need the data or key material (lmk.h, tcw.h): zeros here. */
void iv_generate (const struct iv_gen *g, uint64_t iv_sector, uint8_t *iv);

/* The generator output of COUNT consecutive encryption sectors, the
 * first at IV_SECTOR and each next IV_STEP further on, written back to
 * back (g->iv_bytes each) into IVS. */
void iv_generate_run (const struct iv_gen *g, uint64_t iv_sector,
                      uint64_t iv_step, size_t count, uint8_t *ivs);

/* The key size, in bytes, that essiv:HASH gives its cipher (the digest
 * size), or 0 if HASH is not a kernel hash name we support. */
size_t iv_essiv_salt_bytes (const char *hash);

/* SALT = HASH (KEY) as the kernel computes it (wp256 and wp384 are
 * truncated Whirlpool).  SALT holds iv_essiv_salt_bytes (HASH) bytes.
 * Returns 0, or -1 after nbdkit_error. */
int iv_essiv_salt (const char *hash, const uint8_t *key, size_t key_bytes,
                   uint8_t *salt);

#endif /* DMCRYPT_IV_H */
