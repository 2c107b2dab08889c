/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XTS over many sectors per OpenSSL call, built on AES-ECB: the IVs of
 * a run of sectors become tweaks in one ECB call on the tweak key, then
 * the run is whitened, encrypted or decrypted in one ECB call on the
 * data key, and whitened again.  OpenSSL's own XTS takes one call and
 * one IV reset per sector, which at 512-byte sectors costs as much as
 * the cipher.  Internal to crypto/. */
#ifndef DMCRYPT_XTS_BULK_H
#define DMCRYPT_XTS_BULK_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "iv.h"

struct xts_bulk
{
  EVP_CIPHER_CTX *data;      /* ECB on the data key, in this direction */
  EVP_CIPHER_CTX *tweak;     /* ECB encryption on the tweak key */
  EVP_CIPHER_CTX *essiv;     /* ECB encryption of the IVs first, or NULL */
  const struct iv_gen *iv;   /* 16-byte IVs */
  unsigned unit_bytes;       /* encryption sector size: 512..4096 */
};

/* Converts NBYTES (whole data units) from SRC to DST (which may equal
 * SRC).  The first unit's IV sector is IV_SECTOR, each next one's
 * IV_STEP more.  Returns 0, or -1 if OpenSSL failed (its error queue
 * left for the caller). */
int xts_bulk_convert (const struct xts_bulk *x, uint8_t *dst,
                      const uint8_t *src, size_t nbytes, uint64_t iv_sector,
                      uint64_t iv_step);

#endif /* DMCRYPT_XTS_BULK_H */
