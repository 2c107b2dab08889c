/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-crypt's authenticated sectors, byte for byte as Linux 6.1's
 * crypt_convert_block_aead makes them over dm-integrity:
 *
 *   AAD   = the sector's 512-byte sector number (le64, iv_offset taken
 *           off), then its IV (for essiv, the encrypted IV)
 *   data  = the sector, encrypted in place of the plaintext
 *   tag   = the AEAD's auth tag, then the IV for "-random" modes,
 *           aead_tag_size bytes in all, stored by dm-integrity
 *
 * authenc(hmac(H),MODE(CIPHER)) encrypts, then MACs AAD and ciphertext
 * with HMAC-H keyed by the key's last digest-size bytes; gcm(aes) and
 * rfc7539(chacha20,poly1305) are the standard AEADs over the same AAD.
 *
 * Units: every "sector" argument counts 512-byte sectors; sizes are in
 * bytes. */
#ifndef DMCRYPT_AEAD_H
#define DMCRYPT_AEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aead_sector;

/* cipher: the LUKS2 segment's "encryption" (aes-xts-plain64,
 * aes-cbc-essiv:sha256, aes-gcm-random, chacha20-random, or the kernel's
 * capi: form); integrity: the segment's integrity type ("hmac(sha256)",
 * "hmac(sha512)", "aead", "poly1305", ...); key: the whole volume key as
 * LUKS2 stores it (cipher key then MAC key, as the kernel's table takes
 * it); sector_bytes 512..4096; iv_large_sectors as the table's flag.
 * Returns NULL with a one-line reason in ERR. */
struct aead_sector *aead_sector_new (const char *cipher,
                                     const char *integrity,
                                     const uint8_t *key, size_t key_bytes,
                                     uint32_t sector_bytes,
                                     bool iv_large_sectors,
                                     char *err, size_t errlen);

/* All that a dm-crypt table line may say besides. */
struct aead_sector_params
{
  const char *cipher;          /* as aead_sector_new */
  const char *integrity;       /* as aead_sector_new; NULL with capi: */
  const uint8_t *key;          /* copied */
  size_t key_bytes;
  uint32_t sector_bytes;       /* 512..4096, a power of two */
  bool iv_large_sectors;
  uint64_t iv_offset;          /* the table's <iv_offset>, 512-byte sectors */
  uint32_t tag_bytes;          /* the table's integrity:N; 0: cryptsetup's
                                  size for the cipher and integrity type */
};

struct aead_sector *aead_sector_new_params (const struct aead_sector_params *p,
                                            char *err, size_t errlen);

/* Bytes stored per sector in dm-integrity: tag + IV. */
uint32_t aead_tag_size (const struct aead_sector *a);
/* Its two parts: the auth tag first (integrity_tag_size), then the IV
 * (integrity_iv_size, 0 unless "-random"). */
uint32_t aead_auth_tag_size (const struct aead_sector *a);
uint32_t aead_stored_iv_size (const struct aead_sector *a);
/* The AEAD's IV bytes (what aead_sector_encrypt_iv takes). */
uint32_t aead_iv_size (const struct aead_sector *a);

/* The kernel's table text: "capi:authenc(hmac(sha256),xts(aes))-plain64"
 * and its optional argument "integrity:32:aead". */
const char *aead_kernel_cipher (const struct aead_sector *a);
const char *aead_kernel_integrity (const struct aead_sector *a);

/* sector: 512-byte sector number of the sector's start in the mapping
 * (dm-crypt's iv_offset already added), a multiple of sector_bytes/512.
 * IN and OUT hold sector_bytes each and may be the same buffer; TAG
 * holds aead_tag_size bytes.  Encrypt draws a fresh random IV for
 * -random modes.  Decrypt returns -EILSEQ on a bad tag and leaves no
 * plaintext in out (it is zeroed).  Other returns: 0, -EINVAL for a
 * misaligned sector, -EIO when the library fails.  Thread safe. */
int aead_sector_encrypt (const struct aead_sector *a, uint64_t sector,
                         const uint8_t *in, uint8_t *out, uint8_t *tag);
int aead_sector_decrypt (const struct aead_sector *a, uint64_t sector,
                         const uint8_t *in, uint8_t *out,
                         const uint8_t *tag);

/* aead_sector_encrypt with the caller's IV (aead_iv_size bytes) for a
 * -random mode, for known answers; -EINVAL for other modes. */
int aead_sector_encrypt_iv (const struct aead_sector *a, uint64_t sector,
                            const uint8_t *in, uint8_t *out, uint8_t *tag,
                            const uint8_t *iv);

void aead_sector_free (struct aead_sector *a);   /* wipes the keys */

#endif /* DMCRYPT_AEAD_H */
