/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes cipher specs in dm-crypt's grammar, and the sector cipher made
 * from every spec that is accepted.
 *
 * Input: byte 0 the key size in bytes, byte 1 the geometry (bits 0-1:
 * sector size 512 << n; bit 2: iv_large_sectors; bits 3-5: iv_offset in
 * encryption sectors), then the spec up to a NUL, then key bytes (the
 * key repeats them, or is a fixed pattern when there are none).
 *
 * Rules checked beyond "no crash, no leak":
 *   - a refusal reports exactly one error, on one line (for a spec
 *     without a newline); an acceptance reports none;
 *   - a spec that sector_cipher_check_spec accepts also parses and
 *     passes cipher_spec_check_key (a cascade: each of its layers, with
 *     its equal share of the key), and keys a working sector cipher;
 *   - decrypt (encrypt (x)) == x, over two sectors at once and one
 *     sector at a time alike, in place and not. */
#include <stdlib.h>
#include <string.h>

#include "../crypto/cascade.h"
#include "../crypto/cipher.h"
#include "../crypto/cipher_spec.h"
#include "../crypto/iv_legacy.h"
#include "fuzz.h"

enum { SECTORS = 2, MAX_SECTOR_BYTES = 4096 };

struct geometry
{
  size_t key_bytes;
  unsigned sector_bytes;
  bool iv_large_sectors;
  uint64_t iv_offset;           /* 512-byte sectors */
};

static struct geometry
read_geometry (const uint8_t *data)
{
  struct geometry g;

  g.key_bytes = data[0];
  g.sector_bytes = 512u << (data[1] & 3);
  g.iv_large_sectors = (data[1] & 4) != 0;
  g.iv_offset = (uint64_t) ((data[1] >> 3) & 7) * (g.sector_bytes / 512);
  return g;
}

static void
expect_refusal_logged (const char *what, const char *spec)
{
  if (fuzz_log_errors () != 1
      || (strchr (spec, '\n') == NULL && fuzz_log_multiline ()))
    fuzz_fail ("%s refused with %u errors (want one line)", what,
               fuzz_log_errors ());
}

/* Encrypts and decrypts SECTORS sectors both as one run and sector by
 * sector; everything must agree and give the plaintext back. */
static void
check_round_trip (struct sector_cipher *c, const struct geometry *g,
                  uint8_t seed)
{
  static uint8_t plain[SECTORS * MAX_SECTOR_BYTES];
  static uint8_t whole[SECTORS * MAX_SECTOR_BYTES];
  static uint8_t piece[SECTORS * MAX_SECTOR_BYTES];
  size_t bytes = SECTORS * g->sector_bytes, i;
  uint64_t first = 8 * (g->sector_bytes / 512);       /* any aligned */

  for (i = 0; i < bytes; i++)
    plain[i] = (uint8_t) (i * 7 + seed);
  if (sector_cipher_encrypt (c, whole, plain, bytes, first) == -1)
    fuzz_fail ("encrypt failed");
  for (i = 0; i < SECTORS; i++)
    if (sector_cipher_encrypt (c, piece + i * g->sector_bytes,
                               plain + i * g->sector_bytes, g->sector_bytes,
                               first + i * (g->sector_bytes / 512)) == -1)
      fuzz_fail ("encrypt of one sector failed");
  if (memcmp (whole, piece, bytes) != 0)
    fuzz_fail ("a run and its sectors one by one encrypt differently");
  if (sector_cipher_decrypt (c, whole, whole, bytes, first) == -1)
    fuzz_fail ("decrypt in place failed");
  if (memcmp (whole, plain, bytes) != 0)
    fuzz_fail ("decrypt (encrypt (x)) != x");
}

static void
check_layer_parses (const char *spec, size_t key_bytes)
{
  struct cipher_spec s;

  if (cipher_spec_parse (spec, &s) == -1
      || cipher_spec_check_key (&s, spec, key_bytes) == -1)
    fuzz_fail ("sector_cipher_check_spec accepted what the parser "
               "refuses: %s", spec);
}

/* What sector_cipher_check_spec accepted must parse: a single cipher
 * as itself, a cascade layer by layer. */
static void
check_parses (const char *spec, size_t key_bytes)
{
  char layer[CASCADE_MAX_LAYERS][CASCADE_LAYER_SPEC_MAX];
  int n = cascade_split (spec, layer), i;

  if (n == -1)
    fuzz_fail ("sector_cipher_check_spec accepted a chain cascade_split "
               "refuses");
  if (n == 0) {
    check_layer_parses (spec, key_bytes);
    return;
  }
  if (key_bytes % n != 0)
    fuzz_fail ("a cascade accepted with a key that does not split evenly");
  for (i = 0; i < n; i++)
    check_layer_parses (layer[i], key_bytes / n);
}

/* A spec (or one of its cascade's layers) with the lmk or tcw IV. */
static bool
legacy_iv (const char *spec)
{
  char layer[CASCADE_MAX_LAYERS][CASCADE_LAYER_SPEC_MAX];
  int n = cascade_split (spec, layer), i;
  struct cipher_spec s;

  if (n == 0)
    return cipher_spec_parse (spec, &s) == 0 && iv_legacy_mode (&s);
  for (i = 0; i < n; i++)
    if (cipher_spec_parse (layer[i], &s) == 0 && iv_legacy_mode (&s))
      return true;
  return false;
}

static void
check_cipher (const char *spec, const struct geometry *g,
              const uint8_t *key_src, size_t key_src_bytes)
{
  struct sector_cipher_params p = {
    .spec = spec, .key_size = g->key_bytes,
    .sector_size = g->sector_bytes, .iv_offset = g->iv_offset,
    .iv_large_sectors = g->iv_large_sectors,
  };
  struct sector_cipher *c;
  uint8_t key[256];
  size_t i;

  check_parses (spec, g->key_bytes);
  for (i = 0; i < g->key_bytes; i++)
    key[i] = key_src_bytes ? key_src[i % key_src_bytes]
                           : (uint8_t) (i * 29 + 1);
  p.key = key;
  fuzz_log_reset ();
  c = sector_cipher_new (&p);
  /* lmk and tcw (iv_legacy_mode) are the kernel's for 512-byte sectors
   * only, which the spec alone cannot tell: a larger sector is refused
   * when the cipher is made, in one line. */
  if (c == NULL && legacy_iv (spec) && g->sector_bytes != 512) {
    expect_refusal_logged ("sector_cipher_new", spec);
    return;
  }
  if (c == NULL)
    fuzz_fail ("sector_cipher_new failed on an accepted spec: %s",
               fuzz_log_text ());
  if (sector_cipher_sector_size (c) != g->sector_bytes)
    fuzz_fail ("sector size changed");
  check_round_trip (c, g, key[0]);
  sector_cipher_free (c);
}

int
fuzz_cipher_spec (const uint8_t *data, size_t size)
{
  struct geometry g;
  struct cipher_spec s;
  const uint8_t *nul;
  char *spec;
  size_t spec_bytes;

  if (size < 2)
    return 0;
  g = read_geometry (data);
  data += 2;
  size -= 2;
  nul = memchr (data, '\0', size);
  spec_bytes = nul ? (size_t) (nul - data) : size;
  spec = fuzz_strndup (data, spec_bytes);

  fuzz_log_reset ();
  if (cipher_spec_parse (spec, &s) == -1)
    expect_refusal_logged ("cipher_spec_parse", spec);
  else if (fuzz_log_errors () != 0)
    fuzz_fail ("an accepted spec reported an error");

  fuzz_log_reset ();
  if (sector_cipher_check_spec (spec, g.key_bytes) == -1)
    expect_refusal_logged ("sector_cipher_check_spec", spec);
  else {
    if (fuzz_log_errors () != 0)
      fuzz_fail ("an accepted spec and key size reported an error");
    check_cipher (spec, &g, nul ? nul + 1 : NULL,
                  nul ? size - spec_bytes - 1 : 0);
  }
  free (spec);
  return 0;
}

FUZZ_ENTRY (fuzz_cipher_spec)
