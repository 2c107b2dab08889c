/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CBC over many sectors at once.  One sector's CBC encryption is
 * serial: each block waits for the one before, so OpenSSL encrypts it
 * a block at a time with nothing to overlap.  The chains of different
 * sectors are independent, so block j of a group of sectors, each XORed
 * with its own chain, is gathered and encrypted in one ECB call, which
 * AES-NI pipelines like any other ECB.  Decryption is parallel within a
 * sector, but OpenSSL's needs an IV reset per sector, as costly as
 * decrypting 512 bytes: here a run of sectors is one ECB call, then
 * each block is XORed with the ciphertext block before it (or its
 * sector's IV).  Internal to crypto/. */
#ifndef DMCRYPT_CBC_MULTI_H
#define DMCRYPT_CBC_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "iv.h"

struct cbc_multi
{
  EVP_CIPHER_CTX *ecb;       /* ECB on the volume key, this direction */
  EVP_CIPHER_CTX *ecb_short; /* encryption's columns under
                                CBC_MULTI_SHORT_COLUMN bytes, or NULL for
                                ECB: a library whose calls cost less */
  EVP_CIPHER_CTX *essiv;     /* ECB encryption of the IVs first, or NULL */
  const struct iv_gen *iv;   /* IVs of the cipher's block size */
  unsigned block_bytes;      /* cipher block: 8 or 16 */
  unsigned unit_bytes;       /* encryption sector size */
};

/* A column of fewer bytes (a group of fewer sectors) goes to
 * ecb_short: libgcrypt's AES-ECB (gcrypt_provider.c) costs more per
 * call than OpenSSL's and gains from about 1 KiB per call. */
#define CBC_MULTI_SHORT_COLUMN 1024

/* Encrypts NBYTES (whole units) from SRC to DST (which may equal SRC),
 * each unit CBC with its own IV: the first unit's IV sector is
 * IV_SECTOR, each next one's IV_STEP more.  Returns 0, or -1 if OpenSSL
 * failed (its error queue left for the caller). */
int cbc_multi_encrypt (const struct cbc_multi *m, uint8_t *dst,
                       const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                       uint64_t iv_step);

/* The same for NPIECES pieces of plaintext that follow each other at
 * SRC, piece i (LENS[i] bytes, whole units) encrypted into DSTS[i]:
 * chains from several pieces share the ECB calls. */
int cbc_multi_encrypt_pieces (const struct cbc_multi *m, uint8_t *const *dsts,
                              const size_t *lens, size_t npieces,
                              const uint8_t *src, uint64_t iv_sector,
                              uint64_t iv_step);

/* Bytes of units the encryption interleaves at most: the length a call
 * needs to reach its longest ECB calls. */
size_t cbc_multi_group_bytes (unsigned unit_bytes);

/* The same for decryption. */
int cbc_multi_decrypt (const struct cbc_multi *m, uint8_t *dst,
                       const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                       uint64_t iv_step);

#endif /* DMCRYPT_CBC_MULTI_H */
