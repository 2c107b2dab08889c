/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity in userspace, byte-compatible with Linux 6.1's
 * drivers/md/dm-integrity.c (target version 1.10): the superblock, the
 * journal, the interleaved data and tag areas, the internal hashes.
 * The device under it is reached only through struct integrity_io, so
 * that it runs on a file, a block device or a memory buffer alike.
 * Thread safe: every call on one device takes its mutex. */
#ifndef DMCRYPT_INTEGRITY_H
#define DMCRYPT_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct integrity_io {            /* the device under dm-integrity */
  void *opaque;
  int (*pread) (void *opaque, void *buf, uint32_t count, uint64_t offset);
  int (*pwrite) (void *opaque, const void *buf, uint32_t count,
                 uint64_t offset);
  int (*flush) (void *opaque);   /* each returns 0 or -errno */
};

struct integrity_options {
  uint64_t offset_bytes;   /* where the dm-integrity device starts */
  uint64_t device_bytes;   /* its length; 0: as the superblock's
                              provided_data_sectors needs it */
  uint32_t tag_size;       /* bytes, 0: the superblock's */
  char mode;               /* 'J' (default), 'B', 'D', 'R' (recovery, ro) */
  bool readonly;           /* never write: a journal is replayed in memory */
  const char *internal_hash;  /* "crc32c", "crc32", "sha1", "sha256",
                                 "hmac(sha256)", ...; NULL: the tags come
                                 from above (dm-crypt's AEAD) */
  const uint8_t *internal_hash_key; size_t internal_hash_key_bytes;
  /* table options as dmsetup shows them, may stay 0 = kernel default */
  uint32_t journal_watermark, commit_time_ms, buffer_sectors;
};

struct integrity_dev;

/* True when BUF (LEN bytes, at least 8) starts with dm-integrity's
 * superblock magic, "integrt". */
bool integrity_sb_has_magic (const uint8_t *buf, size_t len);

struct integrity_dev *integrity_open (const struct integrity_io *io,
                                      const struct integrity_options *opt,
                                      char *err, size_t errlen);
uint64_t integrity_data_sectors (const struct integrity_dev *d); /* 512 B */
uint32_t integrity_block_bytes (const struct integrity_dev *d);
uint32_t integrity_tag_size (const struct integrity_dev *d);
/* Blocks of integrity_block_bytes; tags tag_size bytes each, in block
 * order.  With an internal hash, tags may be NULL: computed on write,
 * checked on read.  Return 0 or -errno; -EILSEQ when a tag does not
 * verify (internal hash) -- *bad_block is then the first such block. */
int integrity_read (struct integrity_dev *d, uint64_t block,
                    uint32_t nblocks, void *data, uint8_t *tags,
                    uint64_t *bad_block);
int integrity_write (struct integrity_dev *d, uint64_t block,
                     uint32_t nblocks, const void *data,
                     const uint8_t *tags, bool fua);
int integrity_flush (struct integrity_dev *d);
int integrity_close (struct integrity_dev *d);   /* commits, writes back */
/* dmsetup's table line after "start len integrity DEV", e.g.
 * "0 32 J 6 journal_sectors:968 interleave_sectors:32768 buffer_sectors:128
 *  journal_watermark:50 commit_time:10000 fix_padding", and its status
 * ("mismatches provided_data_sectors recalc_sector" as the kernel prints).
 * An internal hash shows as internal_hash:ALG, never with its key. */
void integrity_table (const struct integrity_dev *d, char *buf, size_t len);
void integrity_status (const struct integrity_dev *d, char *buf, size_t len);
uint64_t integrity_mismatches (const struct integrity_dev *d);

/* What integritysetup format (through the kernel's
 * initialize_superblock and init_journal) writes: a superblock and an
 * empty journal.  With wipe, every block is then written as zeros with
 * its tag (the internal hash's, or zeros), as integritysetup's wipe
 * does; without, the data area is left as it is. */
struct integrity_format_options {
  uint64_t offset_bytes;    /* where the dm-integrity device starts */
  uint64_t device_bytes;    /* its length (required) */
  uint32_t tag_size;        /* bytes; 0: the internal hash's size */
  uint32_t block_bytes;     /* 512 (0) .. 4096 */
  uint32_t journal_sectors; /* 0: the kernel's default */
  uint32_t interleave_sectors;  /* 0: 32768 */
  bool fix_padding;         /* cryptsetup passes it on kernels >= 1.4 */
  bool fix_hmac;            /* the salt, hashed before each block */
  bool bitmap;              /* formatted for mode B (version 3) */
  bool wipe;
  const char *internal_hash;
  const uint8_t *internal_hash_key; size_t internal_hash_key_bytes;
};
int integrity_format (const struct integrity_io *io,
                      const struct integrity_format_options *fo,
                      char *err, size_t errlen);

#endif /* DMCRYPT_INTEGRITY_H */
