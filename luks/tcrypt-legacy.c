/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TrueCrypt's CBC headers before 4.1 with a single cipher ("cbc-tcw"):
 * the 448 bytes are whitened with 8 bytes of the header key (at 8) and
 * in CBC with the cipher's key at 32 and the IV at 0 (cryptsetup's
 * TCRYPT_decrypt_hdr_one).  The volume maps as the kernel's tcw IV mode
 * does it (cryptsetup's TCRYPT_activate, "aes-cbc-tcw"): the cipher's
 * key from the key material at 32, then the IV seed (one cipher block)
 * and the 16-byte whitening key from its start.  The cascades' "outer"
 * CBC ("cbci-tcrypt") and Blowfish ("cbc-tcrypt") the kernel cannot map
 * (cryptsetup: "Kernel does not support activation for this TCRYPT
 * legacy mode"); they are not tried here, and stay "no header
 * matched". */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "../crypto/cipher.h"
#include "tcrypt.h"

#define WHITENING_OFFSET 8
#define WHITENING_BYTES  8
#define CBC_KEY_OFFSET   32
#define TCW_WHITENING_KEY_BYTES 16

#define TCW(c, key, block) { c, "cbc-tcw", 1, { { c, CBC_KEY_OFFSET, 0, \
      key, block + TCW_WHITENING_KEY_BYTES } } }
/* cryptsetup's tcrypt_cipher[] order; the block is the IV seed. */
static const struct tcrypt_chain tcw_chains[] = {
  TCW ("aes", 32, 16), TCW ("serpent", 32, 16), TCW ("twofish", 32, 16),
  TCW ("cast5", 16, 8), TCW ("des3_ede", 24, 8),
};
#undef TCW

/* The IV seed's bytes: the cipher block. */
static unsigned
block_bytes (const struct tcrypt_chain *c)
{
  return c->layer[0].extra_bytes - TCW_WHITENING_KEY_BYTES;
}

/* Decrypts BUF (a whole sector, the header at its start) in C's CBC
 * with IV, as CBC with a zero IV and the first block fixed up.  Returns
 * 0 or -1. */
static int
decrypt_cbc (const struct tcrypt_chain *c, const uint8_t *key,
             const uint8_t *iv, uint8_t *buf)
{
  struct sector_cipher_params p = { .key = key,
                                    .key_size = c->layer[0].key_bytes,
                                    .sector_size = 512 };
  struct sector_cipher *sc;
  char spec[32];
  unsigned i;
  int r;

  snprintf (spec, sizeof spec, "%s-cbc-null", c->layer[0].name);
  p.spec = spec;
  sc = sector_cipher_new (&p);
  r = sc ? sector_cipher_decrypt (sc, buf, buf, TCRYPT_HDR_BYTES, 0) : -1;
  sector_cipher_free (sc);
  for (i = 0; r == 0 && i < block_bytes (c); i++)
    buf[i] ^= iv[i];
  return r;
}

int
tcrypt_legacy_decrypt_header (const uint8_t *sector, const uint8_t *key,
                              struct tcrypt_header *h)
{
  uint8_t buf[TCRYPT_HDR_BYTES];
  char why[64];
  size_t i, j;
  int r = 0;

  for (i = 0; i < sizeof tcw_chains / sizeof tcw_chains[0] && r == 0;
       i++) {
    memset (buf, 0, sizeof buf);
    memcpy (buf, sector + TCRYPT_SALT_BYTES, TCRYPT_ENC_BYTES);
    for (j = 0; j < TCRYPT_ENC_BYTES; j++)
      buf[j] ^= key[WHITENING_OFFSET + j % WHITENING_BYTES];
    if (decrypt_cbc (&tcw_chains[i], key + CBC_KEY_OFFSET, key, buf) == -1)
      r = -1;
    else if (tcrypt_parse_header (buf, false, h, why, sizeof why) == 0) {
      h->chain = &tcw_chains[i];
      r = 1;
    }
  }
  OPENSSL_cleanse (buf, sizeof buf);
  return r;
}
