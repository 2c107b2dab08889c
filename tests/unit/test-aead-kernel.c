/* SPDX-License-Identifier: GPL-2.0-or-later */
/* aead_sector against the kernel: sectors and their dm-integrity tags
 * cut from LUKS2 images with integrity that Linux 6.1 wrote
 * (tests/data/aead-vectors.txt, made by tests/aead-vectors.py from
 * tests/data/integrity/).  Each sector must decrypt to what was
 * written, fail once a bit is flipped, and encrypt (with the stored IV
 * for -random modes) to the kernel's very bytes; the segment's
 * --cipher and --integrity must give the kernel's table text. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../../crypto/aead.h"
#include "check.h"

#define MAX_SECTOR 4096
#define MAX_TAG 480
#define MAX_KEY 256

struct vector
{
  char name[64], luks2_cipher[128], luks2_integrity[64], cipher[128];
  uint32_t tag_bytes, sector_bytes;
  bool iv_large_sectors;
  uint64_t iv_offset;
  uint8_t key[MAX_KEY];
  size_t key_bytes;
  struct aead_sector *a;
  unsigned sectors;
};

struct sector
{
  uint64_t number;
  uint8_t pt[MAX_SECTOR], ct[MAX_SECTOR], tag[MAX_TAG];
  size_t pt_bytes, ct_bytes, tag_bytes;
};

static bool
find_vectors (char *path, size_t len)
{
  char top[4096];

  if (!check_topdir (top, sizeof top))
    return false;
  snprintf (path, len, "%s/tests/data/aead-vectors.txt", top);
  return access (path, R_OK) == 0;
}

static size_t
unhex (const char *hex, uint8_t *out, size_t max)
{
  size_t n = 0;
  unsigned byte;

  while (n < max && sscanf (hex + 2 * n, "%2x", &byte) == 1)
    out[n++] = (uint8_t) byte;
  return n;
}

/* The bytes the images were written with: 512-byte sector i of the
 * pattern is sha256 ("dmcrypt integrity pattern i"), then 480 bytes of
 * i mod 256; N bytes from byte FROM on. */
static void
pattern (uint64_t from, uint8_t *out, size_t n)
{
  uint8_t sector[512];
  char text[64];
  unsigned len;
  size_t i;

  for (i = 0; i < n; i++) {
    uint64_t at = from + i;

    if (i == 0 || at % 512 == 0) {
      snprintf (text, sizeof text, "dmcrypt integrity pattern %llu",
                (unsigned long long) (at / 512));
      EVP_Digest (text, strlen (text), sector, &len, EVP_sha256 (), NULL);
      memset (sector + 32, (int) (at / 512 % 256), 480);
    }
    out[i] = sector[at % 512];
  }
}

/* "pattern P", "zeros", or the plaintext in hex. */
static size_t
read_plaintext (const char *value, uint8_t *out, size_t sector_bytes)
{
  if (strncmp (value, "pattern ", 8) == 0) {
    pattern (strtoull (value + 8, NULL, 10), out, sector_bytes);
    return sector_bytes;
  }
  if (strcmp (value, "zeros") == 0) {
    memset (out, 0, sector_bytes);
    return sector_bytes;
  }
  return unhex (value, out, sector_bytes);
}

/* The capi: text and the LUKS2 pair must both key. */
static void
open_vector (struct vector *v)
{
  const struct aead_sector_params p = {
    .cipher = v->cipher, .key = v->key, .key_bytes = v->key_bytes,
    .sector_bytes = v->sector_bytes, .iv_large_sectors = v->iv_large_sectors,
    .iv_offset = v->iv_offset, .tag_bytes = v->tag_bytes,
  };
  char err[256] = "", want[32];
  struct aead_sector *luks2;

  v->a = aead_sector_new_params (&p, err, sizeof err);
  check_that (v->a != NULL, "%s: %s: %s", v->name, v->cipher, err);
  luks2 = aead_sector_new (v->luks2_cipher, v->luks2_integrity, v->key,
                           v->key_bytes, v->sector_bytes,
                           v->iv_large_sectors, err, sizeof err);
  if (!check_that (luks2 != NULL, "%s: %s + %s: %s", v->name,
                   v->luks2_cipher, v->luks2_integrity, err))
    return;
  snprintf (want, sizeof want, "integrity:%u:aead", v->tag_bytes);
  CHECK_MSG (strcmp (aead_kernel_cipher (luks2), v->cipher) == 0,
             "%s: %s, the kernel's %s", v->name, aead_kernel_cipher (luks2),
             v->cipher);
  CHECK_MSG (strcmp (aead_kernel_integrity (luks2), want) == 0,
             "%s: %s, the kernel's %s", v->name,
             aead_kernel_integrity (luks2), want);
  aead_sector_free (luks2);
}

static void
check_sector (struct vector *v, const struct sector *s)
{
  static uint8_t out[MAX_SECTOR];
  uint8_t tag[MAX_TAG];
  uint32_t auth;

  if (v->a == NULL ||
      !check_that (s->ct_bytes == v->sector_bytes &&
                   s->pt_bytes == v->sector_bytes &&
                   s->tag_bytes == aead_tag_size (v->a),
                   "%s: sector %llu: sizes", v->name,
                   (unsigned long long) s->number))
    return;
  v->sectors++;
  auth = aead_auth_tag_size (v->a);
  CHECK_MSG (aead_sector_decrypt (v->a, s->number, s->ct, out, s->tag) == 0
             && memcmp (out, s->pt, v->sector_bytes) == 0,
             "%s: sector %llu does not decrypt to what was written",
             v->name, (unsigned long long) s->number);
  if (aead_stored_iv_size (v->a) > 0)
    CHECK (aead_sector_encrypt_iv (v->a, s->number, s->pt, out, tag,
                                   s->tag + auth) == 0);
  else
    CHECK (aead_sector_encrypt (v->a, s->number, s->pt, out, tag) == 0);
  CHECK_MSG (memcmp (out, s->ct, v->sector_bytes) == 0 &&
             memcmp (tag, s->tag, s->tag_bytes) == 0,
             "%s: sector %llu: not the kernel's ciphertext and tag",
             v->name, (unsigned long long) s->number);
  memcpy (tag, s->tag, s->tag_bytes);
  tag[0] ^= 0x01;
  CHECK_MSG (aead_sector_decrypt (v->a, s->number, s->ct, out, tag)
             == -EILSEQ, "%s: sector %llu: a flipped tag accepted",
             v->name, (unsigned long long) s->number);
}

static void
close_vector (struct vector *v)
{
  CHECK_MSG (v->sectors > 0, "%s: no sector checked", v->name);
  aead_sector_free (v->a);
  memset (v, 0, sizeof *v);
}

/* One "KEY VALUE" line into V or S. */
static void
read_line (char *line, struct vector *v, struct sector *s)
{
  char *value = strchr (line, ' ');

  if (value == NULL)
    return;
  *value++ = '\0';
  value[strcspn (value, "\n")] = '\0';
  if (strcmp (line, "name") == 0)
    snprintf (v->name, sizeof v->name, "%s", value);
  else if (strcmp (line, "luks2_cipher") == 0)
    snprintf (v->luks2_cipher, sizeof v->luks2_cipher, "%s", value);
  else if (strcmp (line, "luks2_integrity") == 0)
    snprintf (v->luks2_integrity, sizeof v->luks2_integrity, "%s", value);
  else if (strcmp (line, "cipher") == 0)
    snprintf (v->cipher, sizeof v->cipher, "%s", value);
  else if (strcmp (line, "tag_bytes") == 0)
    v->tag_bytes = (uint32_t) strtoul (value, NULL, 10);
  else if (strcmp (line, "sector_bytes") == 0)
    v->sector_bytes = (uint32_t) strtoul (value, NULL, 10);
  else if (strcmp (line, "iv_large_sectors") == 0)
    v->iv_large_sectors = strcmp (value, "1") == 0;
  else if (strcmp (line, "iv_offset") == 0)
    v->iv_offset = strtoull (value, NULL, 10);
  else if (strcmp (line, "key") == 0) {
    v->key_bytes = unhex (value, v->key, sizeof v->key);
    open_vector (v);
  }
  else if (strcmp (line, "sector") == 0)
    s->number = strtoull (value, NULL, 10);
  else if (strcmp (line, "plaintext") == 0)
    s->pt_bytes = read_plaintext (value, s->pt,
                                  v->sector_bytes <= MAX_SECTOR ?
                                  v->sector_bytes : MAX_SECTOR);
  else if (strcmp (line, "ciphertext") == 0)
    s->ct_bytes = unhex (value, s->ct, sizeof s->ct);
  else if (strcmp (line, "tag") == 0) {
    s->tag_bytes = unhex (value, s->tag, sizeof s->tag);
    check_sector (v, s);
  }
}

int
main (void)
{
  static struct vector v;
  static struct sector s;
  char path[4200], *line = NULL;
  size_t cap = 0;
  unsigned images = 0;
  FILE *fp;

  REQUIRE (find_vectors (path, sizeof path), "tests/data/aead-vectors.txt "
           "not found beside the build");
  fp = fopen (path, "r");
  REQUIRE (fp != NULL, "%s: %m", path);
  while (getline (&line, &cap, fp) > 0) {
    if (line[0] == '#')
      continue;
    if (strncmp (line, "end", 3) == 0) {
      close_vector (&v);
      images++;
    }
    else
      read_line (line, &v, &s);
  }
  free (line);
  fclose (fp);
  CHECK_MSG (images >= 4, "only %u images in %s", images, path);
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("aead-kernel: %u images, all %u checks passed\n", images, checks);
  return 0;
}
