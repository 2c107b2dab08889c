/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Differential: the sector cipher's bulk paths (XTS on ECB, interleaved
 * CBC encryption, IVs made in bulk, libgcrypt's AES-XTS over runs of
 * sectors and its AES-ECB under the XTS construction) against OpenSSL's own modes one sector at a time
 * (cipher-reference.h).
 *
 * Input: byte 0 the case (cipher-reference.h's list), byte 1 the
 * geometry (bits 0-1: sector size 512 << n; bit 2: iv_large_sectors;
 * bits 3-5: iv_offset in encryption sectors; bit 6: AES from
 * libgcrypt, else OpenSSL), byte 2 the number of
 * encryption sectors less one (bits 0-2, at most 8) and where
 * sector_cipher_encrypt_pieces splits them (bits 3-7: a piece ends after
 * sector u + 1 where bit 3 + u is set), bytes 3-10 the start sector
 * (little-endian, in encryption sectors), then the key (64 bytes, short
 * inputs padded with zeros) and the data (the rest, repeated).
 *
 * Rule checked beyond "no crash, no leak": both directions, in place
 * and not, and encryption into pieces, give OpenSSL's bytes. */
#include <stdlib.h>
#include <string.h>

#include "../common/cleanup.h"
#include "../crypto/cipher.h"
#include "cipher-reference.h"
#include "fuzz.h"

enum { HEAD = 11, KEY_BYTES = 64, MAX_UNITS = 8, MAX_BYTES = MAX_UNITS * 4096 };

static void
fill (uint8_t *out, size_t len, const uint8_t *from, size_t n)
{
  size_t i;

  for (i = 0; i < len; i++)
    out[i] = n > 0 ? from[i % n] : (uint8_t) i;
}

/* Encryption of IN into pieces, each in its own buffer, split after
 * sector u + 1 where bit u of SPLIT is set. */
static void
compare_pieces (struct sector_cipher *c, const struct mode_case *mc,
                unsigned sector_size, unsigned split, const uint8_t *in,
                size_t nbytes, uint64_t sector, const uint8_t *want)
{
  static uint8_t pieces[MAX_UNITS][MAX_BYTES];
  uint8_t *dsts[MAX_UNITS];
  size_t lens[MAX_UNITS], n = 0, u, off;

  for (u = 0; u < nbytes / sector_size; u++) {
    if (u == 0 || (split >> (u - 1)) & 1) {
      dsts[n] = pieces[n];
      lens[n++] = 0;
    }
    lens[n - 1] += sector_size;
  }
  if (sector_cipher_encrypt_pieces (c, dsts, lens, n, in, sector) == -1)
    fuzz_fail ("%s: encryption into pieces failed", mc->spec);
  for (u = 0, off = 0; u < n; off += lens[u++])
    if (memcmp (dsts[u], want + off, lens[u]) != 0)
      fuzz_fail ("%s: encryption into %zu pieces differs from OpenSSL's "
                 "in piece %zu", mc->spec, n, u);
}

static void
compare (const struct sector_cipher_params *p, const struct mode_case *mc,
         bool encrypt, unsigned split, const uint8_t *in, size_t nbytes,
         uint64_t sector)
{
  static uint8_t got[MAX_BYTES], want[MAX_BYTES];
  struct sector_cipher *c = sector_cipher_new (p);
  int (*convert) (struct sector_cipher *, uint8_t *, const uint8_t *,
                  size_t, uint64_t) =
    encrypt ? sector_cipher_encrypt : sector_cipher_decrypt;

  if (c == NULL)
    fuzz_fail ("%s: no cipher", mc->spec);
  reference (mc, p->key, encrypt, p->sector_size, p->iv_offset,
             p->iv_large_sectors, want, in, nbytes, sector);
  if (convert (c, got, in, nbytes, sector) == -1 ||
      memcmp (got, want, nbytes) != 0)
    fuzz_fail ("%s: %s differs from OpenSSL's", mc->spec,
               encrypt ? "encryption" : "decryption");
  memcpy (got, in, nbytes);
  if (convert (c, got, got, nbytes, sector) == -1 ||
      memcmp (got, want, nbytes) != 0)
    fuzz_fail ("%s: %s in place differs from OpenSSL's", mc->spec,
               encrypt ? "encryption" : "decryption");
  if (encrypt)
    compare_pieces (c, mc, p->sector_size, split, in, nbytes, sector, want);
  sector_cipher_free (c);
}

int
fuzz_cipher_bulk (const uint8_t *data, size_t size)
{
  static uint8_t key[KEY_BYTES], in[MAX_BYTES];
  const struct mode_case *mc;
  struct sector_cipher_params p = { .key = key };
  unsigned spu, units;
  uint64_t start = 0;
  size_t nbytes, i;

  if (size < HEAD)
    return 0;
  mc = &reference_cases[data[0] % ARRAY_SIZE (reference_cases)];
  p.spec = mc->spec;
  p.key_size = mc->key_bytes;
  p.sector_size = 512u << (data[1] & 3);
  p.iv_large_sectors = (data[1] & 4) != 0;
  spu = p.sector_size / 512;
  p.iv_offset = (uint64_t) ((data[1] >> 3) & 7) * spu;
  p.library = data[1] & 0x40 ? SECTOR_CIPHER_LIB_LIBGCRYPT
    : SECTOR_CIPHER_LIB_OPENSSL;
  units = 1 + data[2] % MAX_UNITS;
  for (i = 0; i < 8; i++)
    start |= (uint64_t) data[3 + i] << (8 * i);
  /* Room for the last sector's number, and for iv_offset on top. */
  start = (start & ((UINT64_C (1) << 48) - 1)) * spu;
  nbytes = (size_t) units * p.sector_size;

  memset (key, 0, sizeof key);
  memcpy (key, data + HEAD, size - HEAD < KEY_BYTES ? size - HEAD : KEY_BYTES);
  if (size > HEAD + KEY_BYTES)
    fill (in, nbytes, data + HEAD + KEY_BYTES, size - HEAD - KEY_BYTES);
  else
    fill (in, nbytes, NULL, 0);
  /* OpenSSL refuses XTS with equal key halves, which the kernel takes. */
  if (strstr (mc->spec, "-xts-") != NULL &&
      memcmp (key, key + mc->key_bytes / 2, mc->key_bytes / 2) == 0)
    key[0] ^= 1;
  compare (&p, mc, true, data[2] >> 3, in, nbytes, start);
  compare (&p, mc, false, 0, in, nbytes, start);
  return 0;
}

FUZZ_ENTRY (fuzz_cipher_bulk)
