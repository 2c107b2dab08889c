/* Shared by the files of luks/ only; the interface is luks.h. */
#ifndef DMCRYPT_LUKS_INTERNAL_H
#define DMCRYPT_LUKS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <libcryptsetup.h>

#include "luks.h"

/* log.c: libcryptsetup's messages go to nbdkit_debug, never to the
 * terminal.  The last error line of the calling thread is kept so that
 * our own one-line errors can quote it. */
void luks_log_start (void);
const char *luks_log_last_error (void);   /* NULL when there was none */

/* luks2.c: what the LUKS2 JSON metadata says about the data segment. */
struct luks2_segment
{
  char *encryption;         /* cipher spec exactly as stored */
  bool dynamic;             /* size "dynamic": up to the end of the device */
  uint64_t size_bytes;      /* fixed size, when !dynamic */
};

/* Refuses (one nbdkit_error naming HDR_PATH) what we cannot serve:
 * re-encryption, unknown requirements, several or non-crypt segments,
 * integrity/AEAD.  Fills SEG otherwise.  Returns 0 or -1. */
int luks2_check_segment (struct crypt_device *cd, const char *hdr_path,
                         struct luks2_segment *seg);
void luks2_segment_free (struct luks2_segment *seg);

/* params.c: every table field except the key.  Returns 0 or -1. */
int luks_fill_params (struct crypt_device *cd,
                      const struct luks_unlock_params *p,
                      uint64_t data_size, struct crypt_table *t);
/* What messages call the data: p->data_name, else p->data_path. */
const char *luks_data_name (const struct luks_unlock_params *p);
/* "name-mode" from crypt_get_cipher and crypt_get_cipher_mode, as
 * dm-crypt wants it (LUKS1 and FileVault2 keep the two apart).  Malloc'd,
 * or NULL. */
char *luks_name_mode_spec (struct crypt_device *cd);
/* t->cipher = CIPHER (taken; NULL means out of memory) and t->device,
 * then the spec checked against the volume key size.  Returns 0 or -1. */
int luks_set_cipher (struct crypt_device *cd,
                     const struct luks_unlock_params *p, char *cipher,
                     struct crypt_table *t);

/* fvault2.c: crypt_load of a FileVault2 volume, a failure explained by
 * our own reading of the metadata (libcryptsetup says why only in its
 * debug log).  Returns 0 or -1. */
int fvault2_load (struct crypt_device *cd,
                  const struct luks_unlock_params *p);
/* The table cryptsetup activates for it, minus the key: aes-xts-plain64,
 * 512-byte sectors, the logical volume's offset and size.  Returns 0 or
 * -1. */
int fvault2_fill_params (struct crypt_device *cd,
                         const struct luks_unlock_params *p,
                         uint64_t data_size, struct crypt_table *t);

/* key.c: unlocks a keyslot into t->key / t->key_size (secmem).
 * Returns the keyslot that opened, or -1. */
int luks_fetch_volume_key (struct crypt_device *cd,
                           const struct luks_unlock_params *p,
                           struct crypt_table *t);

#endif /* DMCRYPT_LUKS_INTERNAL_H */
