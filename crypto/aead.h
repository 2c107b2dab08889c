/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-crypt's authenticated sectors (placeholder header). */
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
 * it); sector_bytes 512..4096; iv_large_sectors as the table's flag. */
struct aead_sector *aead_sector_new (const char *cipher,
                                     const char *integrity,
                                     const uint8_t *key, size_t key_bytes,
                                     uint32_t sector_bytes,
                                     bool iv_large_sectors,
                                     char *err, size_t errlen);
uint32_t aead_tag_size (const struct aead_sector *a); /* bytes stored per
                                     sector in dm-integrity: tag + IV */
/* The kernel's table text: "capi:authenc(hmac(sha256),xts(aes))-plain64"
 * and its optional argument "integrity:32:aead". */
const char *aead_kernel_cipher (const struct aead_sector *a);
/* sector: 512-byte sector number of the sector's start in the mapping
 * (dm-crypt's iv_offset already added).  Encrypt draws a fresh random IV
 * for -random modes.  Decrypt returns -EILSEQ on a bad tag and leaves no
 * plaintext in out.  Thread safe. */
int aead_sector_encrypt (const struct aead_sector *a, uint64_t sector,
                         const uint8_t *in, uint8_t *out, uint8_t *tag);
int aead_sector_decrypt (const struct aead_sector *a, uint64_t sector,
                         const uint8_t *in, uint8_t *out,
                         const uint8_t *tag);
void aead_sector_free (struct aead_sector *a);   /* wipes the keys */
#endif
