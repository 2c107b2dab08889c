/* Unlocking a LUKS1/LUKS2 header through libcryptsetup, without
 * device-mapper: the result is the crypt table that cryptsetup would have
 * loaded into the kernel, with the volume key in it. */
#ifndef DMCRYPT_LUKS_H
#define DMCRYPT_LUKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../table/crypt_table.h"

enum luks_type { LUKS_ANY, LUKS_V1, LUKS_V2 };

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
  bool readonly;               /* nothing may be written to the image */
  const char *wrong_key_hint;  /* added to "no keyslot matched", or NULL */
  const char *data_name;       /* what messages call the data: NULL for
                                  data_path (the filter's header copy
                                  has a better name than its path) */
};

/* What the header says beyond the table. */
struct luks_info
{
  int version;                 /* 1 or 2 */
  char uuid[40];               /* header UUID, with dashes */
  int key_slot;                /* the slot that opened */
};

/* Loads the header, unlocks a keyslot and fills T (zeroed first) with
 * the table cryptsetup would make: cipher spec, volume key, IV offset,
 * data offset, encryption sector size, LUKS2 persistent flags, and the
 * length of the data segment in 512-byte sectors (given DATA_SIZE, the
 * data device's size in bytes).  Refuses, with a one-line nbdkit_error,
 * headers in re-encryption, with integrity/AEAD, or with unknown
 * requirements.  Returns 0 or -1. */
int luks_unlock (const struct luks_unlock_params *p, uint64_t data_size,
                 struct crypt_table *t, struct luks_info *info);

/* Returns 1 when PATH starts with LUKS magic, with *DATA_OFFSET the byte
 * offset where the header says its data begins (0 when the header does
 * not load), 0 when it does not, -1 with errno when PATH cannot be
 * read.  Nothing is written and no key is derived. */
int luks_probe_header (const char *path, uint64_t *data_offset);

#endif /* DMCRYPT_LUKS_H */
