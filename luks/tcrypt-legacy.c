/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TrueCrypt's CBC modes (before 4.1) recognised, to be refused by name:
 * cryptsetup reads these headers but the kernel cannot map the data
 * ("Kernel does not support activation for this TCRYPT legacy mode").
 * Only the single-cipher "cbc-tcw" headers are recognised here: the 448
 * bytes are whitened with 8 bytes of the header key (at 8) and in CBC
 * with the cipher's key at 32 and the IV at 0 (cryptsetup's
 * TCRYPT_decrypt_hdr_one).  The cascades' outer CBC and Blowfish's
 * byte order are not: those volumes stay "no header matched". */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "../crypto/cipher.h"
#include "tcrypt.h"

#define WHITENING_OFFSET 8
#define WHITENING_BYTES  8
#define CBC_KEY_OFFSET   32

static const struct
{
  const char *name;
  unsigned key_bytes, block_bytes;
} cbc_ciphers[] = {
  { "aes", 32, 16 }, { "serpent", 32, 16 }, { "twofish", 32, 16 },
  { "cast5", 16, 8 }, { "des3_ede", 24, 8 },
};

/* Decrypts BUF (a whole sector, the header at its start) in NAME's CBC
 * with IV, as CBC with a zero IV and the first block fixed up.  Returns
 * 0 or -1. */
static int
decrypt_cbc (const char *name, const uint8_t *key, size_t key_bytes,
             const uint8_t *iv, unsigned block_bytes, uint8_t *buf)
{
  struct sector_cipher_params p = { .key = key, .key_size = key_bytes,
                                    .sector_size = 512 };
  struct sector_cipher *c;
  char spec[32];
  unsigned i;
  int r;

  snprintf (spec, sizeof spec, "%s-cbc-null", name);
  p.spec = spec;
  c = sector_cipher_new (&p);
  r = c ? sector_cipher_decrypt (c, buf, buf, TCRYPT_HDR_BYTES, 0) : -1;
  sector_cipher_free (c);
  for (i = 0; r == 0 && i < block_bytes; i++)
    buf[i] ^= iv[i];
  return r;
}

const char *
tcrypt_legacy_chain (const uint8_t *sector, const uint8_t *key)
{
  uint8_t buf[TCRYPT_HDR_BYTES];
  struct tcrypt_header h;
  const char *found = NULL;
  char why[64];
  size_t i, j;

  for (i = 0; i < sizeof cbc_ciphers / sizeof cbc_ciphers[0] && !found;
       i++) {
    memset (buf, 0, sizeof buf);
    memcpy (buf, sector + TCRYPT_SALT_BYTES, TCRYPT_ENC_BYTES);
    for (j = 0; j < TCRYPT_ENC_BYTES; j++)
      buf[j] ^= key[WHITENING_OFFSET + j % WHITENING_BYTES];
    if (decrypt_cbc (cbc_ciphers[i].name, key + CBC_KEY_OFFSET,
                     cbc_ciphers[i].key_bytes, key,
                     cbc_ciphers[i].block_bytes, buf) == 0
        && tcrypt_parse_header (buf, false, &h, why, sizeof why) == 0)
      found = cbc_ciphers[i].name;
  }
  OPENSSL_cleanse (buf, sizeof buf);
  OPENSSL_cleanse (&h, sizeof h);
  return found;
}
