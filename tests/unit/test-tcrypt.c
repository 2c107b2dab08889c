/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The TCRYPT header code (luks/tcrypt-hdr.c) on headers made here: a
 * header encrypted with each kind of chain (one cipher, a cascade, XTS
 * and LRW) decrypts to the same fields and volume key; a flipped bit,
 * a wrong key or the wrong magic is refused; the CRC-32 and the key
 * file pool have their known answers.  The real images are
 * tests/test-tcrypt.sh's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../crypto/cipher.h"
#include "../../crypto/crc32.h"
#include "../../luks/tcrypt.h"
#include "check.h"

static void
put_be (uint8_t *p, uint64_t v, unsigned n)
{
  while (n--) {
    p[n] = v & 0xff;
    v >>= 8;
  }
}

/* A decrypted header: VERSION, the magic, sizes, keys, both CRCs. */
static void
make_plain (uint8_t *plain, const char *magic, unsigned version)
{
  unsigned i;

  memset (plain, 0, TCRYPT_ENC_BYTES);
  memcpy (plain, magic, 4);
  put_be (plain + 4, version, 2);
  put_be (plain + 6, 0x010b, 2);
  put_be (plain + 36, 1 << 20, 8);             /* volume size */
  put_be (plain + 44, 131072, 8);              /* data offset */
  put_be (plain + 52, 1 << 20, 8);
  put_be (plain + 64, 512, 4);
  for (i = 0; i < TCRYPT_KEYS_BYTES; i++)
    plain[192 + i] = (uint8_t) (i * 29 + 7);
  put_be (plain + 8, tcrypt_crc32 (plain + 192, TCRYPT_KEYS_BYTES), 4);
  put_be (plain + 188, tcrypt_crc32 (plain, 188), 4);
}

/* Encrypts the 448 bytes at SECTOR + 64 with LAYERS (specs, top first)
 * keyed from KEY the way tcrypt-hdr.c keys them: the first layer first,
 * as a write through cryptsetup's stacked devices. */
static void
encrypt_header (uint8_t *sector, const char *const *layers, unsigned n,
                const uint8_t *const *keys, size_t key_bytes)
{
  uint8_t buf[TCRYPT_HDR_BYTES] = { 0 };
  unsigned i;

  memcpy (buf, sector + TCRYPT_SALT_BYTES, TCRYPT_ENC_BYTES);
  for (i = 0; i < n; i++) {
    struct sector_cipher_params p = {
      .spec = layers[i], .key = keys[i], .key_size = key_bytes,
      .sector_size = 512,
    };
    struct sector_cipher *c = sector_cipher_new (&p);
    REQUIRE (c != NULL, "%s", layers[i]);
    REQUIRE (sector_cipher_encrypt (c, buf, buf, sizeof buf, 0) == 0,
             "%s", layers[i]);
    sector_cipher_free (c);
  }
  memcpy (sector + TCRYPT_SALT_BYTES, buf, TCRYPT_ENC_BYTES);
}

static void
fill (uint8_t *p, size_t n, unsigned seed)
{
  size_t i;

  for (i = 0; i < n; i++)
    p[i] = (uint8_t) (seed + i * 13 + (i >> 3));
}

/* serpent-twofish-aes in XTS: layer i's key at 32 i, its tweak key at
 * 96 + 32 i of the header key. */
static void
test_xts_cascade (void)
{
  static const char *const layers[] = {
    "serpent-xts-plain64", "twofish-xts-plain64", "aes-xts-plain64",
  };
  uint8_t sector[TCRYPT_HDR_BYTES], key[TCRYPT_HDR_KEY_BYTES];
  uint8_t k[3][64], vk[TCRYPT_VOLUME_KEY_MAX], want[192];
  const uint8_t *keys[3] = { k[0], k[1], k[2] };
  struct tcrypt_header h;
  char spec[64];
  unsigned i;

  fill (key, sizeof key, 3);
  fill (sector, TCRYPT_SALT_BYTES, 9);
  make_plain (sector + TCRYPT_SALT_BYTES, "VERA", 5);
  for (i = 0; i < 3; i++) {
    memcpy (k[i], key + 32 * i, 32);
    memcpy (k[i] + 32, key + 96 + 32 * i, 32);
  }
  encrypt_header (sector, layers, 3, keys, 64);
  REQUIRE (tcrypt_decrypt_header (sector, key, true, &h) == 1,
           "the serpent-twofish-aes header does not decrypt");
  CHECK (strcmp (h.chain->cipher, "serpent-twofish-aes") == 0);
  CHECK (h.veracrypt && h.version == 5 && h.version_tc == 0x010b);
  CHECK (h.volume_size == 1 << 20 && h.mk_offset == 131072);
  CHECK (h.sector_size == 512 && h.hidden_volume_size == 0);
  CHECK (tcrypt_cipher_spec (&h, spec, sizeof spec) == 0
         && strcmp (spec, "serpent-twofish-aes-xts-plain64") == 0);
  CHECK (tcrypt_cipher_spec (&h, spec, 10) == -1);
  /* crypt_volume_key_get's order: each layer's key, then its tweak key,
   * from the header's key material. */
  for (i = 0; i < 3; i++) {
    memcpy (want + 64 * i, h.keys + 32 * i, 32);
    memcpy (want + 64 * i + 32, h.keys + 96 + 32 * i, 32);
  }
  CHECK (tcrypt_volume_key (&h, vk) == 192 && memcmp (vk, want, 192) == 0);

  CHECK (tcrypt_decrypt_header (sector, key, false, &h) == 0);  /* VERA */
  key[100] ^= 1;
  CHECK (tcrypt_decrypt_header (sector, key, true, &h) == 0);
  key[100] ^= 1;
  sector[TCRYPT_HDR_BYTES - 1] ^= 0x80;           /* in the keys */
  CHECK (tcrypt_decrypt_header (sector, key, true, &h) == 0);
}

/* aes in LRW (TrueCrypt 4): the key at 32, the tweak key at 0. */
static void
test_lrw (void)
{
  static const char *const layers[] = { "aes-lrw-benbi" };
  uint8_t sector[TCRYPT_HDR_BYTES], key[TCRYPT_HDR_KEY_BYTES], k[48];
  uint8_t vk[TCRYPT_VOLUME_KEY_MAX];
  const uint8_t *keys[1] = { k };
  struct tcrypt_header h;

  fill (key, sizeof key, 77);
  fill (sector, TCRYPT_SALT_BYTES, 1);
  /* Version 2: no header CRC is checked. */
  make_plain (sector + TCRYPT_SALT_BYTES, "TRUE", 2);
  sector[TCRYPT_SALT_BYTES + 188] ^= 0xff;
  memcpy (k, key + 32, 32);
  memcpy (k + 32, key, 16);
  encrypt_header (sector, layers, 1, keys, 48);
  REQUIRE (tcrypt_decrypt_header (sector, key, false, &h) == 1,
           "the aes-lrw header does not decrypt");
  CHECK (strcmp (h.chain->cipher, "aes") == 0
         && strcmp (h.chain->mode, "lrw-benbi") == 0);
  CHECK (!h.veracrypt && h.version == 2);
  CHECK (tcrypt_volume_key (&h, vk) == 48);
  CHECK (memcmp (vk, h.keys + 32, 32) == 0 && memcmp (vk + 32, h.keys, 16) == 0);
}

static void
test_parse (void)
{
  uint8_t plain[TCRYPT_ENC_BYTES];
  struct tcrypt_header h;
  char why[64];

  make_plain (plain, "TRUE", 5);
  CHECK (tcrypt_parse_header (plain, false, &h, why, sizeof why) == 0);
  plain[40] ^= 1;                               /* covered by the CRC */
  CHECK (tcrypt_parse_header (plain, true, &h, why, sizeof why) == -1
         && strstr (why, "header CRC") != NULL);
  make_plain (plain, "VERA", 5);
  CHECK (tcrypt_parse_header (plain, false, &h, why, sizeof why) == -1
         && strstr (why, "magic") != NULL);
  make_plain (plain, "TRUE", 5);
  plain[300] ^= 1;
  CHECK (tcrypt_parse_header (plain, true, &h, why, sizeof why) == -1
         && strstr (why, "key area CRC") != NULL);
  /* Zero data offset and sector size read as 512. */
  make_plain (plain, "TRUE", 3);
  memset (plain + 44, 0, 8);
  memset (plain + 64, 0, 4);
  CHECK (tcrypt_parse_header (plain, false, &h, why, sizeof why) == 0
         && h.mk_offset == 512 && h.sector_size == 512);
}

static void
test_crc_and_pool (void)
{
  static const uint8_t pool_a[4] = { 0x17, 0x48, 0x41, 0xbc };
  uint8_t pool[TCRYPT_POOL_BYTES] = { 0 }, data[20];

  CHECK (tcrypt_crc32 ((const uint8_t *) "123456789", 9) == 0xcbf43926);
  /* "a": zlib's crc32 0xe8b7be43, uninverted 0x174841bc, added big end
   * first. */
  tcrypt_pool_add_keyfile (pool, sizeof pool, (const uint8_t *) "a", 1);
  CHECK (memcmp (pool, pool_a, 4) == 0 && pool[4] == 0);
  /* 20 bytes fill 80 pool bytes: the pool wraps and adds. */
  memset (pool, 0, sizeof pool);
  fill (data, sizeof data, 5);
  tcrypt_pool_add_keyfile (pool, sizeof pool, data, sizeof data);
  {
    uint8_t again[TCRYPT_POOL_BYTES] = { 0 };
    uint32_t crc = 0xffffffffu;
    size_t i, j = 0;

    for (i = 0; i < sizeof data; i++) {
      crc = crc32_le (crc, data + i, 1);
      again[j % 64] += crc >> 24;
      again[(j + 1) % 64] += crc >> 16;
      again[(j + 2) % 64] += crc >> 8;
      again[(j + 3) % 64] += crc;
      j += 4;
    }
    CHECK (memcmp (pool, again, sizeof pool) == 0);
  }
}

int
main (void)
{
  test_crc_and_pool ();
  test_parse ();
  test_xts_cascade ();
  test_lrw ();
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("tcrypt: all checks passed\n");
  return 0;
}
