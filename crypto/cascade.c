/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cipher cascades: one sector_cipher per layer, applied in turn over
 * the same sectors.  See cascade.h for the order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "block_cipher.h"
#include "cascade.h"

struct cascade
{
  unsigned layers;
  struct sector_cipher *layer[CASCADE_MAX_LAYERS];   /* top first */
};

/* Words of SPEC before its chain mode that name block ciphers: the
 * cascade's ciphers.  *REST points at the chain mode ("xts-plain64").
 * Returns how many, or 0 when the spec is not of that shape. */
static unsigned
leading_ciphers (const char *spec, const char *name[], size_t len[],
                 unsigned max, const char **rest)
{
  char word[64];
  const char *p = spec, *dash;
  unsigned n = 0;
  size_t wlen;

  while ((dash = strchr (p, '-')) != NULL) {
    wlen = dash - p;
    if (wlen == 0 || wlen >= sizeof word)
      return 0;
    memcpy (word, p, wlen);
    word[wlen] = '\0';
    if (block_cipher_lookup (word) == NULL)
      break;
    if (n < max) {
      name[n] = p;
      len[n] = wlen;
    }
    n++;
    p = dash + 1;
  }
  *rest = p;
  return n;
}

int
cascade_split (const char *spec, char layer[][CASCADE_LAYER_SPEC_MAX])
{
  const char *name[CASCADE_MAX_LAYERS], *rest;
  size_t len[CASCADE_MAX_LAYERS];
  unsigned n, i;

  if (spec == NULL || strncmp (spec, "capi:", 5) == 0)
    return 0;
  n = leading_ciphers (spec, name, len, CASCADE_MAX_LAYERS, &rest);
  if (n < 2)
    return 0;
  if (n > CASCADE_MAX_LAYERS) {
    nbdkit_error ("unsupported cipher spec: %s (a cascade of %u ciphers; "
                  "at most %d)", spec, n, CASCADE_MAX_LAYERS);
    return -1;
  }
  for (i = 0; i < n; i++)
    if (snprintf (layer[i], CASCADE_LAYER_SPEC_MAX, "%.*s-%s",
                  (int) len[i], name[i], rest) >= CASCADE_LAYER_SPEC_MAX) {
      nbdkit_error ("cipher spec is too long: %s", spec);
      return -1;
    }
  return n;
}

/* Every layer has the same key size (TCRYPT_activate keys each layer
 * with one volume-key size). */
static int
layer_key_size (const char *spec, unsigned layers, size_t key_size,
                size_t *each)
{
  if (key_size == 0 || key_size % layers != 0) {
    nbdkit_error ("cipher spec %s needs a key of %u equal parts, not "
                  "%zu bytes", spec, layers, key_size);
    return -1;
  }
  *each = key_size / layers;
  return 0;
}

int
cascade_check_spec (const char *spec, size_t key_size)
{
  char layer[CASCADE_MAX_LAYERS][CASCADE_LAYER_SPEC_MAX];
  int n = cascade_split (spec, layer), i;
  size_t each;

  if (n <= 0)
    return n == 0 ? sector_cipher_check_spec (spec, key_size) : -1;
  if (layer_key_size (spec, n, key_size, &each) == -1)
    return -1;
  for (i = 0; i < n; i++)
    if (sector_cipher_check_spec (layer[i], each) == -1)
      return -1;
  return 0;
}

struct cascade *
cascade_new (const struct sector_cipher_params *p)
{
  char layer[CASCADE_MAX_LAYERS][CASCADE_LAYER_SPEC_MAX];
  struct sector_cipher_params lp = *p;
  int n = cascade_split (p->spec, layer), i;
  struct cascade *c;
  size_t each;

  if (n <= 0 || layer_key_size (p->spec, n, p->key_size, &each) == -1)
    return NULL;
  c = calloc (1, sizeof *c);
  if (c == NULL) {
    nbdkit_error ("calloc: %m");
    return NULL;
  }
  c->layers = n;
  lp.key_size = each;
  for (i = 0; i < n; i++) {
    lp.spec = layer[i];
    lp.key = p->key + i * each;
    c->layer[i] = sector_cipher_new (&lp);
    if (c->layer[i] == NULL) {
      cascade_free (c);
      return NULL;
    }
  }
  return c;
}

const char *
cascade_library (const struct cascade *c)
{
  bool openssl = false, gcrypt = false;
  unsigned i;

  for (i = 0; i < c->layers; i++) {
    const char *lib = sector_cipher_library (c->layer[i]);

    openssl |= strcmp (lib, "openssl") == 0;
    gcrypt |= strcmp (lib, "libgcrypt") == 0;
  }
  return openssl && gcrypt ? "openssl+libgcrypt"
    : gcrypt ? "libgcrypt" : openssl ? "openssl" : "none";
}

void
cascade_free (struct cascade *c)
{
  unsigned i;

  if (c == NULL)
    return;
  for (i = 0; i < c->layers; i++)
    sector_cipher_free (c->layer[i]);
  free (c);
}

int
cascade_convert (struct cascade *c, uint8_t *dst, const uint8_t *src,
                 size_t nbytes, uint64_t sector, bool encrypt)
{
  unsigned i, layer;
  int r;

  for (i = 0; i < c->layers; i++, src = dst) {
    layer = encrypt ? i : c->layers - 1 - i;
    r = encrypt
      ? sector_cipher_encrypt (c->layer[layer], dst, src, nbytes, sector)
      : sector_cipher_decrypt (c->layer[layer], dst, src, nbytes, sector);
    if (r == -1)
      return -1;
  }
  return 0;
}
