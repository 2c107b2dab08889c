/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FileVault2 (Core Storage) metadata, read without libcryptsetup.
 *
 * libcryptsetup 2.6 opens a FileVault2 volume (crypt_load with
 * CRYPT_FVAULT2) and gives its key and data offset, but the logical
 * volume's size, which the mapping it activates is as long as, only
 * crypt_dump prints.  This parser reads it, and the offset as a check,
 * from the same metadata: a 512-byte volume header at byte 0, a disk
 * label block that leads to the encrypted metadata, and 8 KiB metadata
 * blocks in AES-128-XTS (keyed by the volume header itself, so no
 * secret is needed).  Every offset and length in the image is checked
 * before use; nothing here writes.  No nbdkit or libcryptsetup calls:
 * the unit tests and the fuzzer drive it directly. */
#ifndef DMCRYPT_FVAULT2_H
#define DMCRYPT_FVAULT2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FVAULT2_HEADER_BYTES 512      /* the volume header at byte 0 */
#define FVAULT2_BLOCK_BYTES  8192     /* one metadata block */

/* Reads LEN bytes at byte OFFSET of the image into BUF.  Returns 0, or
 * -1 when they cannot all be read (beyond the end included). */
typedef int fvault2_read_fn (void *opaque, void *buf, size_t len,
                             uint64_t offset);

/* What the volume header says. */
struct fvault2_header
{
  uint32_t block_size;          /* bytes: the unit of block offsets */
  uint64_t disklabel_block;     /* the disk label, in blocks */
  uint8_t metadata_key[32];     /* AES-128-XTS key of the encrypted
                                   metadata: key data, then PV UUID */
};

/* Where the logical volume lies on the physical one. */
struct fvault2_layout
{
  uint32_t block_size;          /* bytes */
  uint64_t volume_offset;       /* bytes from the start of the image */
  uint64_t volume_size;         /* bytes */
};

/* True when HEAD (SIZE bytes from byte 0) starts like a Core Storage
 * volume header: version 1 and the "CS" signature.  No checksum: a
 * damaged header should still be named as FileVault2. */
bool fvault2_has_magic (const void *head, size_t size);

/* Checks the volume header HEAD (FVAULT2_HEADER_BYTES) and fills *H.
 * Returns 0, or -1 with a short reason in WHY. */
int fvault2_parse_header (const uint8_t *head, struct fvault2_header *h,
                          char *why, size_t why_size);

/* What one decrypted metadata block (FVAULT2_BLOCK_BYTES, its checksum
 * already checked) says about the logical volume: its size (block type
 * 0x001a, an XML property list) or its offset (type 0x0305).  Sets the
 * bit FVAULT2_FOUND_SIZE or FVAULT2_FOUND_OFFSET in *FOUND for what it
 * set in *L.  Other types are skipped.  Returns 0, or -1 with WHY. */
#define FVAULT2_FOUND_SIZE   1u
#define FVAULT2_FOUND_OFFSET 2u
int fvault2_parse_block (const uint8_t *block, struct fvault2_layout *l,
                         unsigned *found, char *why, size_t why_size);

/* Reads the whole chain through READ, the way libcryptsetup 2.6 does
 * (every encrypted block up to the first all-zero one, nothing beyond
 * 1 GiB), and fills *L.  Returns 0, or -1 with WHY. */
int fvault2_read_layout (fvault2_read_fn *read, void *opaque,
                         struct fvault2_layout *l,
                         char *why, size_t why_size);

#endif /* DMCRYPT_FVAULT2_H */
