/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A LUKS2 volume in the middle of a re-encryption, as cryptsetup 2.6.1
 * activates it after a clean interruption (lib/setup.c,
 * _open_and_activate_reencrypt_device): every segment in use, in order,
 * each with its own cipher, sector size, IV tweak and key, or dm-linear
 * for the plaintext part of an encryption or decryption in progress.
 * This part reads the layout from the JSON metadata alone, no key, so
 * that a fuzzer reaches it. */
#ifndef DMCRYPT_LUKS_REENC_H
#define DMCRYPT_LUKS_REENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../table/segments.h"

#define REENC_CIPHER_MAX 64

/* One of the mapping's tables, without its key. */
struct reenc_table
{
  bool linear;                 /* dm-linear: cipher_null-ecb, no key */
  int digest;                  /* crypt: the digest that checks its key */
  char cipher[REENC_CIPHER_MAX];
  unsigned sector_size;        /* bytes */
  uint64_t offset;             /* 512-byte sectors into the data device */
  uint64_t iv_offset;          /* 512-byte sectors */
  uint64_t length;             /* 512-byte sectors it spans */
};

struct reenc_layout
{
  int version;                 /* of "online-reencrypt-vN": 2 or 3 */
  uint64_t length;             /* the mapping's, 512-byte sectors */
  struct segment_list segments;
  struct reenc_table tables[SEGMENT_TABLES_MAX];
  unsigned n_tables;
  int digest_old, digest_new;  /* the backup-previous and backup-final
                                  segments' digests; -1: linear */
  char mode[12];               /* "reencrypt", "encrypt", "decrypt" */
  char resilience[24];         /* the reencrypt keyslot's area type */
};

/* From JSON (a LUKS2 header's metadata, as crypt_dump_json gives it)
 * and DEVICE_BYTES (the data device's size): returns 0 when the header
 * is not in re-encryption (no online-reencrypt requirement), 1 with L
 * filled when it was interrupted cleanly, -1 with a one-line reason in
 * WHY otherwise: a crash that needs recovery (the line says to run
 * cryptsetup repair), unknown requirements or flags, integrity,
 * hostile segment lists (overlaps, gaps, past the device, no digest,
 * misaligned, too many). */
int reenc_layout_parse (const char *json, uint64_t device_bytes,
                        struct reenc_layout *l, char *why, size_t why_size);

/* What the reencrypt keyslot's digest covers
 * (lib/luks2/luks2_reencrypt_digest.c, reencrypt_assembly_verification
 * _data, 2.6.1): VERSION (struct reenc_layout's) as a byte, the old
 * and new volume keys (a key absent: KEY NULL), the reencrypt keyslot's parameters and the backup
 * segments.  *DATA is secmem of *DATA_BYTES (free with secmem_free).
 * Returns 0, or -1 with WHY. */
int reenc_verification_data (const char *json, int version,
                             const uint8_t *old_key,
                             size_t old_bytes, const uint8_t *new_key,
                             size_t new_bytes, uint8_t **data,
                             size_t *data_bytes, char *why,
                             size_t why_size);

#endif /* DMCRYPT_LUKS_REENC_H */
