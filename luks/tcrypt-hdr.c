/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TCRYPT header decryption and parsing (tcrypt.h).  The chains and
 * their key layout are those TrueCrypt and VeraCrypt define, in the
 * order cryptsetup 2.6 tries them; the CBC modes of TrueCrypt before
 * 4.1 are tcrypt-legacy.c's. */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "../common/endian.h"
#include "../common/log.h"
#include "../crypto/cipher.h"
#include "../crypto/crc32.h"
#include "tcrypt.h"

#define XTS "xts-plain64"
#define LRW "lrw-benbi"
#define LRW_TWEAK_KEY_BYTES 16  /* the first 16 bytes of key material */
#define LAYER_KEY_BYTES 32      /* one cipher's key (XTS: each half) */

/* A layer: its cipher, key offset and tweak key offset. */
#define L(n, o, t) { n, o, t, 0, 0 }
#define ONE(c, m, o, t) { c, m, 1, { L (c, o, t) } }
static const struct tcrypt_chain chains[] = {
  ONE ("aes", XTS, 0, 32), ONE ("serpent", XTS, 0, 32),
  ONE ("twofish", XTS, 0, 32),
  { "twofish-aes", XTS, 2, { L ("twofish", 0, 64), L ("aes", 32, 96) } },
  { "serpent-twofish-aes", XTS, 3, { L ("serpent", 0, 96),
      L ("twofish", 32, 128), L ("aes", 64, 160) } },
  { "aes-serpent", XTS, 2, { L ("aes", 0, 64), L ("serpent", 32, 96) } },
  { "aes-twofish-serpent", XTS, 3, { L ("aes", 0, 96),
      L ("twofish", 32, 128), L ("serpent", 64, 160) } },
  { "serpent-twofish", XTS, 2, { L ("serpent", 0, 64),
      L ("twofish", 32, 96) } },
  ONE ("camellia", XTS, 0, 32),
  { "serpent-camellia", XTS, 2, { L ("serpent", 0, 64),
      L ("camellia", 32, 96) } },
  ONE ("aes", LRW, 32, 0), ONE ("serpent", LRW, 32, 0),
  ONE ("twofish", LRW, 32, 0),
  { "twofish-aes", LRW, 2, { L ("twofish", 32, 0), L ("aes", 64, 0) } },
  { "serpent-twofish-aes", LRW, 3, { L ("serpent", 32, 0),
      L ("twofish", 64, 0), L ("aes", 96, 0) } },
  { "aes-serpent", LRW, 2, { L ("aes", 32, 0), L ("serpent", 64, 0) } },
  { "aes-twofish-serpent", LRW, 3, { L ("aes", 32, 0),
      L ("twofish", 64, 0), L ("serpent", 96, 0) } },
  { "serpent-twofish", LRW, 2, { L ("serpent", 32, 0),
      L ("twofish", 64, 0) } },
};
#undef ONE
#undef L

/* VeraCrypt's Kuznyechik chains: no library of Debian 12 has it. */
const char tcrypt_unavailable_ciphers[] = "kuznyechik";

static bool
is_xts (const struct tcrypt_chain *c)
{
  return strcmp (c->mode, XTS) == 0;
}

/* Layer I's dm-crypt key from key material KEYS (TCRYPT_copy_key's
 * layout).  Returns its size. */
static size_t
layer_key (const struct tcrypt_chain *c, unsigned i, const uint8_t *keys,
           uint8_t *out)
{
  unsigned key_bytes = c->layer[i].key_bytes;

  /* cbc-tcw: the cipher's key, then the IV seed and whitening key that
   * the kernel's tcw takes from the key's end (crypt_iv_tcw_init). */
  if (key_bytes) {
    memcpy (out, keys + c->layer[i].key_offset, key_bytes);
    memcpy (out + key_bytes, keys + c->layer[i].tweak_offset,
            c->layer[i].extra_bytes);
    return key_bytes + c->layer[i].extra_bytes;
  }
  memcpy (out, keys + c->layer[i].key_offset, LAYER_KEY_BYTES);
  if (is_xts (c)) {
    memcpy (out + LAYER_KEY_BYTES, keys + c->layer[i].tweak_offset,
            LAYER_KEY_BYTES);
    return 2 * LAYER_KEY_BYTES;
  }
  memcpy (out + LAYER_KEY_BYTES, keys, LRW_TWEAK_KEY_BYTES);
  return LAYER_KEY_BYTES + LRW_TWEAK_KEY_BYTES;
}

size_t
tcrypt_volume_key (const struct tcrypt_header *h, uint8_t *out)
{
  size_t n = 0;
  unsigned i;

  for (i = 0; i < h->chain->layers; i++)
    n += layer_key (h->chain, i, h->keys, out + n);
  return n;
}

int
tcrypt_cipher_spec (const struct tcrypt_header *h, char *buf, size_t size)
{
  int n = snprintf (buf, size, "%s-%s", h->chain->cipher, h->chain->mode);

  return n < 0 || (size_t) n >= size ? -1 : 0;
}

uint32_t
tcrypt_crc32 (const uint8_t *p, size_t len)
{
  return ~crc32_le (0xffffffffu, p, len);
}

void
tcrypt_pool_add_keyfile (uint8_t *pool, size_t pool_bytes,
                         const uint8_t *data, size_t len)
{
  uint32_t crc = 0xffffffffu;
  size_t i, j = 0;

  for (i = 0; i < len; i++) {
    crc = crc32_le (crc, data + i, 1);
    pool[j++] += crc >> 24;
    pool[j++] += crc >> 16;
    pool[j++] += crc >> 8;
    pool[j++] += crc;
    j %= pool_bytes;
  }
}

/* Field offsets in the decrypted part. */
enum {
  OFF_MAGIC = 0, OFF_VERSION = 4, OFF_VERSION_TC = 6, OFF_KEYS_CRC = 8,
  OFF_HIDDEN_SIZE = 28, OFF_VOLUME_SIZE = 36, OFF_MK_OFFSET = 44,
  OFF_MK_SIZE = 52, OFF_FLAGS = 60, OFF_SECTOR_SIZE = 64,
  OFF_HEADER_CRC = 188, OFF_KEYS = 192,
};

int
tcrypt_parse_header (const uint8_t *plain, bool veracrypt,
                     struct tcrypt_header *h, char *why, size_t why_size)
{
  uint16_t version = get_be (plain + OFF_VERSION, 2);

  if (memcmp (plain + OFF_MAGIC, "TRUE", 4) != 0
      && !(veracrypt && memcmp (plain + OFF_MAGIC, "VERA", 4) == 0)) {
    snprintf (why, why_size, "no TRUE or VERA magic");
    return -1;
  }
  /* Headers of version 3 and before have no header CRC. */
  if (version > 3 && tcrypt_crc32 (plain, OFF_HEADER_CRC)
      != get_be (plain + OFF_HEADER_CRC, 4)) {
    snprintf (why, why_size, "header CRC mismatch");
    return -1;
  }
  if (tcrypt_crc32 (plain + OFF_KEYS, TCRYPT_KEYS_BYTES)
      != get_be (plain + OFF_KEYS_CRC, 4)) {
    snprintf (why, why_size, "key area CRC mismatch");
    return -1;
  }
  h->veracrypt = plain[OFF_MAGIC] == 'V';
  h->version = version;
  h->version_tc = get_be (plain + OFF_VERSION_TC, 2);
  h->hidden_volume_size = get_be (plain + OFF_HIDDEN_SIZE, 8);
  h->volume_size = get_be (plain + OFF_VOLUME_SIZE, 8);
  h->mk_offset = get_be (plain + OFF_MK_OFFSET, 8);
  if (h->mk_offset == 0)
    h->mk_offset = 512;
  h->mk_size = get_be (plain + OFF_MK_SIZE, 8);
  h->flags = get_be (plain + OFF_FLAGS, 4);
  h->sector_size = get_be (plain + OFF_SECTOR_SIZE, 4);
  if (h->sector_size == 0)
    h->sector_size = 512;
  memcpy (h->keys, plain + OFF_KEYS, TCRYPT_KEYS_BYTES);
  return 0;
}

/* Undoes chain C over BUF (a whole sector, the header at its start)
 * with header key KEY, the last layer first, each at sector 0.
 * Returns 0, or -1 after nbdkit_error. */
static int
decrypt_chain (const struct tcrypt_chain *c, const uint8_t *key,
               uint8_t *buf)
{
  uint8_t layer[2 * LAYER_KEY_BYTES];
  struct sector_cipher_params p = { .key = layer, .sector_size = 512 };
  struct sector_cipher *sc;
  char spec[64];
  unsigned i;
  int r = 0;

  for (i = c->layers; i-- > 0 && r == 0;) {
    snprintf (spec, sizeof spec, "%s-%s", c->layer[i].name, c->mode);
    p.spec = spec;
    p.key_size = layer_key (c, i, key, layer);
    sc = sector_cipher_new (&p);
    r = sc ? sector_cipher_decrypt (sc, buf, buf, TCRYPT_HDR_BYTES, 0) : -1;
    sector_cipher_free (sc);
  }
  OPENSSL_cleanse (layer, sizeof layer);
  return r;
}

int
tcrypt_decrypt_header (const uint8_t *sector, const uint8_t *key,
                       bool veracrypt, struct tcrypt_header *h)
{
  uint8_t buf[TCRYPT_HDR_BYTES];
  char why[64];
  size_t i;
  int r = 0;

  for (i = 0; i < sizeof chains / sizeof chains[0] && r == 0; i++) {
    /* XTS and LRW work block by block: the 448 bytes decrypt alike at
     * the start of a whole sector. */
    memset (buf, 0, sizeof buf);
    memcpy (buf, sector + TCRYPT_SALT_BYTES, TCRYPT_ENC_BYTES);
    if (decrypt_chain (&chains[i], key, buf) == -1)
      r = -1;
    else if (tcrypt_parse_header (buf, veracrypt, h, why, sizeof why) == 0) {
      h->chain = &chains[i];
      r = 1;
    }
  }
  OPENSSL_cleanse (buf, sizeof buf);
  return r;
}
