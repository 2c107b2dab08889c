/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the TCRYPT header reader (luks/tcrypt-hdr.c): whatever a
 * decrypted header holds, and whatever sector and header key come in.
 * The first byte picks what the rest is:
 *   0  a decrypted header for tcrypt_parse_header (bit 0 of the second
 *      byte: VeraCrypt's magic allowed),
 *   1+ a header key (TCRYPT_HDR_KEY_BYTES) then a header sector
 *      (TCRYPT_HDR_BYTES) for tcrypt_decrypt_header.
 * Short inputs are padded with zeros.
 *
 * Rules checked beyond "no crash, no out-of-bounds read": a refusal
 * gives a reason on one line; an accepted header has the magic, a key
 * area whose CRC is the one it declares, a non-zero data offset and
 * sector size; decryption never fails with an error (only "no match"),
 * and a match gives a cipher spec and a volume key of a size the chain
 * defines. */
#include <stdlib.h>
#include <string.h>

#include "../common/endian.h"
#include "../luks/tcrypt.h"
#include "fuzz.h"

static void
check_accepted (const uint8_t *plain, bool veracrypt,
                const struct tcrypt_header *h)
{
  if (memcmp (plain, "TRUE", 4) != 0
      && !(veracrypt && memcmp (plain, "VERA", 4) == 0))
    fuzz_fail ("accepted a header without its magic");
  if (tcrypt_crc32 (plain + 192, TCRYPT_KEYS_BYTES) != get_be (plain + 8, 4))
    fuzz_fail ("accepted a key area whose CRC does not match");
  if (memcmp (h->keys, plain + 192, TCRYPT_KEYS_BYTES) != 0)
    fuzz_fail ("the keys are not the header's");
  if (h->mk_offset == 0 || h->sector_size == 0)
    fuzz_fail ("accepted a zero data offset or sector size");
}

static void
fuzz_parse (const uint8_t *data, size_t size)
{
  bool veracrypt = size > 0 && (data[0] & 1);
  uint8_t *plain = fuzz_padded (size ? data + 1 : data, size ? size - 1 : 0,
                                TCRYPT_ENC_BYTES);
  struct tcrypt_header h;
  char why[64] = "";

  if (tcrypt_parse_header (plain, veracrypt, &h, why, sizeof why) == -1) {
    if (why[0] == '\0' || strchr (why, '\n') != NULL)
      fuzz_fail ("a refusal without a one-line reason: '%s'", why);
  }
  else
    check_accepted (plain, veracrypt, &h);
  free (plain);
}

static void
fuzz_decrypt (const uint8_t *data, size_t size)
{
  uint8_t *in = fuzz_padded (data, size,
                             TCRYPT_HDR_KEY_BYTES + TCRYPT_HDR_BYTES);
  uint8_t key[TCRYPT_VOLUME_KEY_MAX];
  struct tcrypt_header h;
  char spec[64];
  size_t n;
  int r;

  fuzz_log_reset ();
  r = tcrypt_decrypt_header (in + TCRYPT_HDR_KEY_BYTES, in, true, &h);
  if (r == -1)
    fuzz_fail ("decryption failed: %s", fuzz_log_text ());
  if (r == 1) {
    n = tcrypt_volume_key (&h, key);
    if (n == 0 || n > sizeof key || n % h.chain->layers != 0)
      fuzz_fail ("a %zu-byte volume key for %s", n, h.chain->cipher);
    if (tcrypt_cipher_spec (&h, spec, sizeof spec) == -1)
      fuzz_fail ("no cipher spec for %s", h.chain->cipher);
  }
  free (in);
}

int
fuzz_tcrypt (const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  if (data[0] == 0)
    fuzz_parse (data + 1, size - 1);
  else
    fuzz_decrypt (data + 1, size - 1);
  return 0;
}

FUZZ_ENTRY (fuzz_tcrypt)
