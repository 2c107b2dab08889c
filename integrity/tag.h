/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity's internal hash (integrity_sector_checksum, Linux 6.1):
 * over the superblock's salt (with fix_hmac only), the block's first
 * 512-byte sector number as a little-endian 64-bit integer, and the
 * block's data; the digest truncated to the tag size, or padded with
 * zeros.  The kernel's names: crc32c, crc32 (4-byte digests, a 4-byte
 * key is their seed), any digest OpenSSL knows by the kernel's name
 * (sha1, sha256, sha512, ...), and hmac(DIGEST), which needs a key. */
#ifndef DMCRYPT_INTEGRITY_TAG_H
#define DMCRYPT_INTEGRITY_TAG_H

#include <stddef.h>
#include <stdint.h>

struct integrity_hash;

/* NAME as the table's internal_hash gives it; KEY may be NULL.
 * Returns NULL with a one-line reason in ERR. */
struct integrity_hash *integrity_hash_new (const char *name,
                                           const uint8_t *key,
                                           size_t key_bytes, char *err,
                                           size_t errlen);
uint32_t integrity_hash_digest_size (const struct integrity_hash *h);
size_t integrity_hash_key_bytes (const struct integrity_hash *h);  /* 0:
                                                           not keyed */
const char *integrity_hash_name (const struct integrity_hash *h);
/* The tag (TAG_SIZE bytes) of DATA_BYTES of DATA at logical SECTOR;
 * SALT (16 bytes) or NULL.  Returns 0 or -EIO. */
int integrity_hash_tag (const struct integrity_hash *h, const uint8_t *salt,
                        uint64_t sector, const void *data,
                        size_t data_bytes, uint8_t *tag, uint32_t tag_size);
void integrity_hash_free (struct integrity_hash *h);   /* wipes the key */

#endif /* DMCRYPT_INTEGRITY_TAG_H */
