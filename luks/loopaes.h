/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loop-AES key files, read as "cryptsetup loopaesOpen" reads them
 * (cryptsetup 2.6, lib/loopaes/loopaes.c): a text file of 1, 64 or 65
 * keys, one a line, all of one length; each line is hashed (SHA-256,
 * SHA-384 or SHA-512 by the key size, or HASH) and cut to the key
 * size, and its first byte XORed with 0x55 for 64 keys, 0xF4 for 65.
 * One key maps as CIPHER-cbc-plain64 (loop-AES version 1), 64 or 65 as
 * CIPHER:64-cbc-lmk (versions 2 and 3: the 65th key is the IV seed),
 * as LOOPAES_activate loads them. */
#ifndef DMCRYPT_LUKS_LOOPAES_H
#define DMCRYPT_LUKS_LOOPAES_H

#include <stddef.h>
#include <stdint.h>

/* cryptsetup 2.6's defaults (DEFAULT_LOOPAES_CIPHER, _KEYBITS). */
#define LOOPAES_DEFAULT_CIPHER   "aes"
#define LOOPAES_DEFAULT_KEY_BITS 256
#define LOOPAES_MAX_KEYS         65

struct loopaes_params
{
  const char *keyfile;          /* the key file, or /dev/fd/N */
  uint64_t keyfile_offset;      /* bytes skipped at its start */
  uint64_t keyfile_size;        /* bytes read, 0: to its end */
  const char *cipher;           /* block cipher, NULL: aes */
  const char *hash;             /* NULL: by the key size */
  unsigned key_bits;            /* each key's, 0: 256 */
};

/* The cipher spec (malloc'd) into *SPEC and the volume key (secmem,
 * *KEY_SIZE bytes) into *KEY; *KEY_COUNT the key file's keys.  Returns
 * 0, or -1 after one nbdkit_error that never quotes a key. */
int loopaes_key (const struct loopaes_params *p, char **spec,
                 uint8_t **key, size_t *key_size, unsigned *key_count);

/* The parsing alone, for the tests: the keys of the key file's
 * BYTES (LEN bytes, changed in place) into KEYS and their length into
 * *KEY_LEN.  Returns the key count, or -1 after nbdkit_error. */
int loopaes_parse (char *bytes, size_t len, const char **keys,
                   size_t *key_len);

#endif /* DMCRYPT_LUKS_LOOPAES_H */
