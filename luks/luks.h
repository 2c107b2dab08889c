/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unlocking a LUKS1/LUKS2 header or a FileVault2 volume through
 * libcryptsetup, without device-mapper: the result is the crypt table
 * that cryptsetup would have loaded into the kernel, with the volume key
 * in it. */
#ifndef DMCRYPT_LUKS_H
#define DMCRYPT_LUKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../table/crypt_table.h"
#include "../table/segments.h"

/* The format to open.  LUKS_ANY: LUKS1 or LUKS2, by the header.
 * LUKS_DETECT: FileVault2 or BitLocker when the image starts with its
 * magic, else as
 * LUKS_ANY (a LUKS2 image may have lost its primary header), the error
 * then naming every format tried. */
enum luks_type { LUKS_ANY, LUKS_V1, LUKS_V2, LUKS_FVAULT2, LUKS_DETECT,
                 LUKS_TCRYPT, LUKS_BITLK };

struct luks_unlock_params
{
  const char *data_path;       /* image or block device holding the data */
  const char *header_path;     /* detached header, or NULL */
  enum luks_type type;
  const char *passphrase;      /* NULL when a key file is used */
  size_t passphrase_size;      /* bytes */
  const char *keyfile;         /* NULL when a passphrase is used */
  uint64_t keyfile_offset;     /* bytes skipped in the key file */
  size_t keyfile_size;         /* bytes read from it; 0 = up to EOF */
  int key_slot;                /* -1 = any */
  /* LUKS tokens (LUKS2's; LUKS1: Clevis's luksmeta bindings), as
   * cryptsetup open's --token-id, --token-type, --token-only: tried
   * first when one is given or when there is neither a passphrase nor
   * a key file. */
  bool token_id_given;
  int token_id;                /* with token_id_given */
  const char *token_type;      /* NULL = any */
  bool token_only;             /* no passphrase or key file after them */
  /* Says, one line, why a token could not unlock when something is
   * left to try; NULL: nbdkit_debug. */
  void (*notice) (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
  bool readonly;               /* nothing may be written to the image */
  const char *wrong_key_hint;  /* added to "no keyslot matched", or NULL */
  const char *data_name;       /* what messages call the data: NULL for
                                  data_path (the filter's header copy
                                  has a better name than its path) */
  /* LUKS_TCRYPT only (TrueCrypt/VeraCrypt): the passphrase may be NULL
   * (empty) and key files are mixed into it; keyfile is unused. */
  const char *const *keyfiles;
  size_t keyfiles_count;
  bool tcrypt_hidden;          /* the hidden volume's header */
  bool tcrypt_system;          /* a system volume's header (sector 62) */
  bool tcrypt_backup;          /* the backup header near the end */
  uint32_t veracrypt_pim;      /* VeraCrypt PIM, 0 = none */
  const char *tcrypt_hash;     /* try only this PBKDF2 hash, or NULL */
};

/* What the header says beyond the table. */
struct luks_info
{
  int version;                 /* 1 or 2; 0 for FileVault2 */
  char type[16];               /* libcryptsetup's name: "LUKS1",
                                  "LUKS2", "FVAULT2", "TCRYPT" */
  char uuid[40];               /* header UUID, with dashes (FileVault2:
                                  the logical volume family's) */
  int key_slot;                /* the slot that opened */
  uint32_t key_slots;          /* bit N set: keyslot N is in use
                                  (LUKS1 has 8, LUKS2 32); 0 for
                                  FileVault2 and BitLocker */
  struct segment_list segments;  /* BitLocker: the mapping's segments,
                                    which share the table; a LUKS2
                                    re-encryption: its segments, over
                                    the table and SECOND; else none */
  /* A LUKS2 volume in the middle of a re-encryption (luks/reenc.h):
   * the mapping's second table (the other volume key's, or the linear
   * part's), with its key; zeroed otherwise.  The caller frees it
   * (crypt_table_free). */
  struct crypt_table second;
  /* LUKS2 with integrity: the segment's integrity type
   * ("hmac(sha256)", "aead", "poly1305"), "" without.  The table is then
   * the segment's cipher as stored (aes-xts-plain64, aes-gcm-random)
   * over the dm-integrity device that starts at its offset, with the
   * whole key (the cipher's, then the MAC's); the caller opens that
   * device and seals the sectors (backend/integrity.h). */
  char integrity[32];
};

/* Loads the header (for LUKS_DETECT, after finding the format by its
 * magic), unlocks a keyslot and fills T (zeroed first) with
 * the table cryptsetup would make: cipher spec, volume key, IV offset,
 * data offset, encryption sector size, LUKS2 persistent flags, and the
 * length of the data segment in 512-byte sectors (given DATA_SIZE, the
 * data device's size in bytes).  A LUKS2 header whose re-encryption
 * was interrupted cleanly gives the mapping cryptsetup activates for it
 * (INFO's segments and second table; every volume key unlocked from
 * the one secret).  Refuses, with a one-line nbdkit_error, a
 * re-encryption that crashed (recovery is cryptsetup repair's) and
 * unknown requirements (integrity: see struct luks_info).  A FileVault2
 * volume gives the table of its logical
 * volume and has no keyslots (KEY_SLOT must be -1; INFO->key_slot is
 * 0, as cryptsetup says).  Returns 0 or -1. */
int luks_unlock (const struct luks_unlock_params *p, uint64_t data_size,
                 struct crypt_table *t, struct luks_info *info);

/* KEY_SLOTS (struct luks_info's mask) as the slot numbers in ascending
 * order, SEP between them ("0 1", "0,1"), into BUF; "" for none.  96
 * bytes hold any mask with a one-character SEP. */
#define LUKS_KEY_SLOT_LIST_SIZE 96
void luks_key_slot_list (uint32_t key_slots, const char *sep, char *buf,
                         size_t buf_size);

/* Returns 1 when PATH starts with LUKS magic, with *DATA_OFFSET the byte
 * offset where the header says its data begins (0 when the header does
 * not load), 0 when it does not, -1 with errno when PATH cannot be
 * read.  Nothing is written and no key is derived. */
int luks_probe_header (const char *path, uint64_t *data_offset);

/* How many bytes of a LUKS image libcryptsetup reads before it can load
 * the header that HEAD (the image's first N bytes) starts: LUKS1, the
 * 592-byte header and every keyslot's key material; LUKS2, the binary
 * header and its JSON area (hdr_size), the primary copy.  Returns the
 * LUKS version (1 or 2) with *NEEDED, or 0 when HEAD has no LUKS magic.
 * Read 592 bytes or all the image has. */
#define LUKS_HEAD_BYTES 592
int luks_header_needs (const unsigned char *head, size_t n,
                       uint64_t *needed);

/* Which format PATH starts with, by its magic: returns 1 with *TYPE
 * LUKS_ANY (LUKS1 or LUKS2), LUKS_FVAULT2 or LUKS_BITLK, 0 for neither, -1 with
 * errno when PATH cannot be read.  Only the first 512 bytes are read. */
int luks_probe_format (const char *path, enum luks_type *type);

/* Returns 1 when PATH starts with a format that looks like LUKS but is
 * not a volume on its own (a Ceph RBD clone's header), with WHAT saying
 * what it is and how it opens, 0 when it does not, -1 with errno when
 * PATH cannot be read.  Only the first 8 bytes are read. */
int luks_lookalike (const char *path, char *what, size_t what_size);

/* A format's name for messages ("FileVault2") and its type= value
 * ("fvault2"). */
const char *luks_format_name (enum luks_type type);
const char *luks_format_param (enum luks_type type);

#endif /* DMCRYPT_LUKS_H */
