/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A cascade of block ciphers in one mapping, as cryptsetup names a
 * TrueCrypt/VeraCrypt chain: "serpent-twofish-aes-xts-plain64" is
 * serpent, twofish and aes, each in xts-plain64.  cryptsetup activates
 * it as stacked dm-crypt devices (lib/tcrypt/tcrypt.c, TCRYPT_activate):
 * the last cipher nearest the disk, every layer with the same IV
 * offset and sector numbers.  Writes go through the first cipher first;
 * reads undo the last cipher first.  The volume key is the layers' keys
 * concatenated in the spec's order, all of one size.  Internal to
 * crypto/; cipher.c dispatches to it. */
#ifndef DMCRYPT_CASCADE_H
#define DMCRYPT_CASCADE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cipher.h"

#define CASCADE_MAX_LAYERS 4
#define CASCADE_LAYER_SPEC_MAX 128

struct cascade;

/* How many ciphers SPEC chains: 0 when it names one (not a cascade),
 * else 2..CASCADE_MAX_LAYERS with LAYER[i] the single-cipher spec of
 * layer i ("serpent-xts-plain64"), top layer first.  -1 after
 * nbdkit_error for a chain we cannot take (too many ciphers). */
int cascade_split (const char *spec,
                   char layer[][CASCADE_LAYER_SPEC_MAX]);

/* Checks every layer with its share of KEY_SIZE.  Returns 0 or -1. */
int cascade_check_spec (const char *spec, size_t key_size);

/* Keys every layer.  NULL after nbdkit_error. */
struct cascade *cascade_new (const struct sector_cipher_params *p);
void cascade_free (struct cascade *c);
/* sector_cipher_library of a cascade. */
const char *cascade_library (const struct cascade *c);

/* sector_cipher_encrypt/decrypt over the whole chain. */
int cascade_convert (struct cascade *c, uint8_t *dst, const uint8_t *src,
                     size_t nbytes, uint64_t sector, bool encrypt);

#endif /* DMCRYPT_CASCADE_H */
