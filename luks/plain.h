/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Plain-mode keys derived as "cryptsetup open --type plain" derives
 * them, through libcryptsetup (cryptsetup 2.6.1's rules):
 *
 *   passphrase: hashed with HASH ("ripemd160" by default, "sha256",
 *     "sha512:32" = hash 32 bytes then zero-pad to the key size, …);
 *     HASH "plain" takes the passphrase itself, cut to the key size or
 *     zero-padded up to it.
 *   key file: exactly KEY_SIZE bytes from OFFSET, never hashed (a
 *     shorter file is an error).
 *
 * Both return 0 and a new secmem allocation of KEY_SIZE bytes in *KEY,
 * or -1 after a one-line nbdkit_error that never quotes the secret. */
#ifndef DMCRYPT_LUKS_PLAIN_H
#define DMCRYPT_LUKS_PLAIN_H

#include <stddef.h>
#include <stdint.h>

/* cryptsetup 2.6.1's plain-mode defaults (DEFAULT_PLAIN_HASH,
 * DEFAULT_PLAIN_KEYBITS, DEFAULT_CIPHER(PLAIN)). */
#define PLAIN_DEFAULT_HASH     "ripemd160"
#define PLAIN_DEFAULT_KEY_BITS 256
#define PLAIN_DEFAULT_CIPHER   "aes-cbc-essiv:sha256"
#define PLAIN_MAX_KEY_BYTES    1024   /* libcryptsetup's limit */

int plain_key_from_passphrase (const char *hash, size_t key_size,
                               const char *passphrase,
                               size_t passphrase_size, uint8_t **key);

int plain_key_from_file (const char *path, uint64_t offset,
                         size_t key_size, uint8_t **key);

#endif /* DMCRYPT_LUKS_PLAIN_H */
