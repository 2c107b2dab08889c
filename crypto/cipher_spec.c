/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cipher spec parsing: first split into words exactly as the kernel's
 * crypt_ctr_cipher_old/new split them, then resolve the words. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cleanup.h"
#include "../common/log.h"
#include "cipher_spec.h"
#include "lmk.h"
#include "tcw.h"

/* CRYPTO_MAX_ALG_NAME in the kernel: no longer spec can be valid. */
#define SPEC_MAX_BYTES 128

struct spec_words
{
  const char *cipher;        /* "aes" */
  const char *keycount;      /* after "aes:", or NULL */
  const char *chain;         /* "xts" */
  const char *ivmode;        /* "essiv", or NULL */
  const char *ivopts;        /* "sha256", or NULL */
};

/* cipher[:keycount]-chainmode-ivmode[:ivopts] (crypt_ctr_cipher_old). */
static int
split_old (char *buf, const char *spec, struct spec_words *w)
{
  char *tmp = buf, *first;

  if (strchr (buf, '(') != NULL) {
    nbdkit_error ("bad cipher spec: %s (crypto API names need the capi: "
                  "prefix)", spec);
    return -1;
  }
  first = strsep (&tmp, "-");
  w->cipher = strsep (&first, ":");
  w->keycount = first;
  w->chain = strsep (&tmp, "-");
  w->ivmode = strsep (&tmp, ":");
  w->ivopts = tmp;

  /* The original dm-crypt format: a bare cipher name means cbc-plain. */
  if (w->chain == NULL ||
      (strcmp (w->chain, "plain") == 0 && w->ivmode == NULL)) {
    w->chain = "cbc";
    w->ivmode = "plain";
  }
  return 0;
}

/* capi:chainmode(cipher)-ivmode:ivopts (crypt_ctr_cipher_new).  IV
 * options come off at the last ':', the IV mode at the last '-'. */
static int
split_capi (char *buf, const char *spec, struct spec_words *w)
{
  char *api = buf + strlen ("capi:");
  char *opts, *mode, *open;
  size_t api_len;

  opts = strrchr (api, ':');
  if (opts != NULL)
    *opts++ = '\0';
  mode = strrchr (api, '-');
  if (mode != NULL)
    *mode++ = '\0';
  w->ivopts = opts;
  w->ivmode = mode;
  w->keycount = NULL;

  open = strchr (api, '(');
  api_len = strlen (api);
  if (open == NULL || api_len < 3 || api[api_len - 1] != ')') {
    nbdkit_error ("bad cipher spec: %s (expected capi:MODE(CIPHER)-IV)",
                  spec);
    return -1;
  }
  api[api_len - 1] = '\0';
  *open = '\0';
  w->chain = api;
  w->cipher = open + 1;
  if (strpbrk (w->cipher, "(),") != NULL) {
    nbdkit_error ("unsupported cipher spec: %s (nested crypto API "
                  "templates)", spec);
    return -1;
  }
  return 0;
}

/* A keycount must be a power of two; above 1 it selects multi-key
 * mappings, which we take for loop-AES's lmk ("aes:64-cbc-lmk") only. */
static int
check_keycount (const char *keycount, const char *ivmode, const char *spec,
                unsigned *key_count)
{
  char *end;
  unsigned long count;

  *key_count = 1;
  if (keycount == NULL)
    return 0;
  count = strtoul (keycount, &end, 10);
  if (*keycount < '0' || *keycount > '9' || *end != '\0' || count == 0 ||
      (count & (count - 1)) != 0) {
    nbdkit_error ("bad key count in cipher spec: %s", spec);
    return -1;
  }
  if (count > 1 && (ivmode == NULL || strcmp (ivmode, "lmk") != 0)) {
    nbdkit_error ("unsupported cipher spec: %s (multi-key mappings with "
                  "%lu keys, other than lmk's)", spec, count);
    return -1;
  }
  /* The kernel's sscanf of an unsigned: more keys than that cannot be. */
  if (count > 0xffffffffu) {
    nbdkit_error ("bad key count in cipher spec: %s", spec);
    return -1;
  }
  *key_count = count;
  return 0;
}

static int
resolve_chain (const struct spec_words *w, const char *spec,
               struct cipher_spec *out)
{
  const struct block_cipher *bc = out->cipher;

  if (strcmp (w->chain, "ecb") == 0)
    out->chain = CHAIN_ECB;
  else if (strcmp (w->chain, "cbc") == 0)
    out->chain = CHAIN_CBC;
  else if (strcmp (w->chain, "xts") == 0)
    out->chain = CHAIN_XTS;
  else if (strcmp (w->chain, "lrw") == 0)
    out->chain = CHAIN_LRW;
  else if (w->chain[0] == '\0') {
    nbdkit_error ("bad cipher spec: %s", spec);
    return -1;
  }
  else {
    nbdkit_error ("unsupported chain mode: %s", w->chain);
    return -1;
  }

  if (bc->ossl_stem == NULL && out->chain != CHAIN_ECB) {
    nbdkit_error ("unsupported cipher spec: %s (%s works only with ecb)",
                  spec, bc->name);
    return -1;
  }
  /* The kernel's xts and lrw templates want 16-byte blocks
   * (crypto/xts.c, crypto/lrw.c). */
  if ((out->chain == CHAIN_XTS || out->chain == CHAIN_LRW) &&
      bc->block_bytes != 16) {
    nbdkit_error ("unsupported cipher spec: %s (%s needs a cipher with "
                  "16-byte blocks, %s has %u)", spec, w->chain, bc->name,
                  bc->block_bytes);
    return -1;
  }
  return 0;
}

static const struct
{
  const char *name;
  enum iv_mode mode;
} iv_modes[] = {
  { "null", IV_NULL }, { "plain", IV_PLAIN }, { "plain64", IV_PLAIN64 },
  { "plain64be", IV_PLAIN64BE }, { "essiv", IV_ESSIV },
  { "benbi", IV_BENBI }, { "eboiv", IV_EBOIV }, { "elephant", IV_ELEPHANT },
  { "lmk", IV_LMK }, { "tcw", IV_TCW },
};

/* Kernel IV modes that need integrity metadata. */
static const char *const unsupported_iv_modes[] = {
  "random",
};

static int
resolve_essiv (const struct spec_words *w, const char *spec,
               struct cipher_spec *out)
{
  char sizes[64];
  size_t salt_bytes;

  if (w->ivopts == NULL || w->ivopts[0] == '\0') {
    nbdkit_error ("bad cipher spec: %s (essiv needs a hash, as in "
                  "essiv:sha256)", spec);
    return -1;
  }
  salt_bytes = strlen (w->ivopts) < CIPHER_SPEC_HASH_MAX ?
    iv_essiv_salt_bytes (w->ivopts) : 0;
  if (salt_bytes == 0) {
    nbdkit_error ("unsupported ESSIV hash: %s", w->ivopts);
    return -1;
  }
  /* The kernel keys the IV cipher with the whole digest (crypto/essiv.c) */
  if (!block_cipher_key_ok (out->cipher, salt_bytes)) {
    block_cipher_key_sizes_text (out->cipher, 1, sizes, sizeof sizes);
    nbdkit_error ("unsupported cipher spec: %s (essiv:%s makes a %zu-byte "
                  "key, %s needs %s bytes)", spec, w->ivopts, salt_bytes,
                  out->cipher->name, sizes);
    return -1;
  }
  strcpy (out->essiv_hash, w->ivopts);
  return 0;
}

/* BitLocker's mode is AES-CBC; the kernel's eboiv part wants the IV to
 * be one cipher block, and we diffuse only in front of CBC. */
static int
resolve_elephant (const char *spec, struct cipher_spec *out)
{
  if (out->chain != CHAIN_CBC || out->cipher->block_bytes != 16) {
    nbdkit_error ("unsupported cipher spec: %s (elephant works only with "
                  "cbc and a 16-byte block cipher)", spec);
    return -1;
  }
  return 0;
}

/* loop-AES and TrueCrypt before 4.1 are CBC; the kernel would wrap
 * their IVs around any mode, to no use. */
static int
resolve_legacy (const char *spec, struct cipher_spec *out)
{
  if (out->chain != CHAIN_CBC) {
    nbdkit_error ("unsupported cipher spec: %s (%s works only with cbc)",
                  spec, out->iv == IV_LMK ? "lmk" : "tcw");
    return -1;
  }
  return 0;
}

static int
resolve_iv (const struct spec_words *w, const char *spec,
            struct cipher_spec *out)
{
  size_t i;

  out->iv = IV_NONE;
  if (out->chain == CHAIN_ECB) {
    /* crypt_ctr_ivmode: "Selected cipher does not support IVs"; ESSIV
     * would make the kernel wrap ecb in its essiv template, which fails. */
    if (w->ivmode != NULL && strcmp (w->ivmode, "essiv") == 0) {
      nbdkit_error ("unsupported cipher spec: %s (ecb takes no IV)", spec);
      return -1;
    }
    if (w->ivmode != NULL)
      nbdkit_debug ("cipher spec %s: ecb takes no IV, ignoring %s",
                    spec, w->ivmode);
    return 0;
  }
  if (w->ivmode == NULL) {
    nbdkit_error ("bad cipher spec: %s (an IV mode is required)", spec);
    return -1;
  }
  for (i = 0; i < ARRAY_SIZE (iv_modes); i++)
    if (strcmp (w->ivmode, iv_modes[i].name) == 0) {
      out->iv = iv_modes[i].mode;
      if (out->iv == IV_ELEPHANT)
        return resolve_elephant (spec, out);
      if (out->iv == IV_LMK || out->iv == IV_TCW)
        return resolve_legacy (spec, out);
      return out->iv == IV_ESSIV ? resolve_essiv (w, spec, out) : 0;
    }
  for (i = 0; i < ARRAY_SIZE (unsupported_iv_modes); i++)
    if (strcmp (w->ivmode, unsupported_iv_modes[i]) == 0) {
      nbdkit_error ("unsupported IV mode: %s", w->ivmode);
      return -1;
    }
  nbdkit_error ("invalid IV mode: %s", w->ivmode);
  return -1;
}

int
cipher_spec_parse (const char *spec, struct cipher_spec *out)
{
  char buf[SPEC_MAX_BYTES];
  struct spec_words w = { 0 };
  bool capi;

  memset (out, 0, sizeof *out);
  if (spec == NULL || spec[0] == '\0') {
    nbdkit_error ("cipher spec is empty");
    return -1;
  }
  if (strlen (spec) >= sizeof buf) {
    nbdkit_error ("cipher spec is longer than %zu bytes", sizeof buf - 1);
    return -1;
  }
  strcpy (buf, spec);
  capi = strncmp (buf, "capi:", strlen ("capi:")) == 0;
  if ((capi ? split_capi : split_old) (buf, spec, &w) == -1)
    return -1;

  if (w.cipher[0] == '\0') {
    nbdkit_error ("bad cipher spec: %s", spec);
    return -1;
  }
  if (check_keycount (w.keycount, w.ivmode, spec, &out->key_count) == -1)
    return -1;
  /* crypt_ctr_cipher_new: lmk in the capi form always means 64 keys. */
  if (capi && w.ivmode != NULL && strcmp (w.ivmode, "lmk") == 0)
    out->key_count = 64;
  out->cipher = block_cipher_lookup (w.cipher);
  if (out->cipher == NULL) {
    nbdkit_error ("unsupported cipher: %s", w.cipher);
    return -1;
  }
  if (resolve_chain (&w, spec, out) == -1)
    return -1;
  return resolve_iv (&w, spec, out);
}

static const char *const chain_names[] = {
  [CHAIN_ECB] = "ecb", [CHAIN_CBC] = "cbc", [CHAIN_XTS] = "xts",
  [CHAIN_LRW] = "lrw",
};

/* The IV's bytes: the cipher block, at least 8 (crypt_ctr_ivmode). */
static size_t
iv_bytes_of (const struct cipher_spec *s)
{
  return s->cipher->block_bytes < 8 ? 8 : s->cipher->block_bytes;
}

static unsigned
log2_of (unsigned power_of_two)
{
  unsigned n = 0;

  while ((1u << n) < power_of_two)
    n++;
  return n;
}

void
cipher_spec_key_layout (const struct cipher_spec *s, size_t key_bytes,
                        struct cipher_key_layout *out)
{
  out->key_count = s->key_count ? s->key_count : 1;
  out->extra_bytes = 0;
  /* crypt_ctr_ivmode: tcw's IV seed and whitening key end the key;
   * lmk has a seed key (version 3) when the key does not split into
   * its key count, and then all key_count + 1 keys are of one size. */
  if (s->iv == IV_TCW && key_bytes > iv_bytes_of (s) + TCW_WHITENING_BYTES)
    out->extra_bytes = iv_bytes_of (s) + TCW_WHITENING_BYTES;
  else if (s->iv == IV_LMK && key_bytes % out->key_count != 0)
    out->extra_bytes = key_bytes / (out->key_count + 1);
  /* crypt_subkey_size: the rest shifted by log2 (key count). */
  out->data_key_bytes = (key_bytes - out->extra_bytes)
    >> log2_of (out->key_count);
}

/* tcw and lmk keys (cipher_spec_key_layout).  Returns 0, or -1 after
 * nbdkit_error. */
static int
check_legacy_key (const struct cipher_spec *s, const char *spec,
                  size_t key_bytes)
{
  const struct block_cipher *bc = s->cipher;
  struct cipher_key_layout l;
  char sizes[64];

  cipher_spec_key_layout (s, key_bytes, &l);
  block_cipher_key_sizes_text (bc, 1, sizes, sizeof sizes);
  if (s->iv == IV_TCW && l.extra_bytes == 0) {
    /* crypt_iv_tcw_ctr: "Wrong key size for TCW" */
    nbdkit_error ("%s-cbc-tcw needs a key of %s bytes, then a %zu-byte IV "
                  "seed and a %u-byte whitening key, not %zu (cipher spec "
                  "%s)", bc->name, sizes, iv_bytes_of (s),
                  TCW_WHITENING_BYTES, key_bytes, spec);
    return -1;
  }
  /* crypt_iv_lmk_init copies an MD5 digest's worth of the seed key: a
   * shorter one would be read past the key's end. */
  if (s->iv == IV_LMK && l.extra_bytes != 0
      && l.extra_bytes < LMK_SEED_KEY_BYTES) {
    nbdkit_error ("%s-cbc-lmk: the seed key after the %u keys must hold at "
                  "least %d bytes, not %zu (cipher spec %s)", bc->name,
                  l.key_count, LMK_SEED_KEY_BYTES, l.extra_bytes, spec);
    return -1;
  }
  if (block_cipher_key_ok (bc, l.data_key_bytes))
    return 0;
  if (s->iv == IV_TCW)
    nbdkit_error ("%s-cbc-tcw needs a key of %s bytes plus %zu, not %zu "
                  "(cipher spec %s)", bc->name, sizes, l.extra_bytes,
                  key_bytes, spec);
  else
    nbdkit_error ("%s-cbc-lmk needs %u keys of %s bytes each, and maybe "
                  "one more of the same size as the IV seed, not %zu bytes "
                  "(cipher spec %s)", bc->name, l.key_count, sizes,
                  key_bytes, spec);
  return -1;
}

int
cipher_spec_check_key (const struct cipher_spec *s, const char *spec,
                       size_t key_bytes)
{
  const struct block_cipher *bc = s->cipher;
  unsigned parts = s->chain == CHAIN_XTS ? 2 : 1;
  char sizes[64];

  if (s->iv == IV_TCW || s->iv == IV_LMK)
    return check_legacy_key (s, spec, key_bytes);

  /* crypto/lrw.c: the cipher's key, then 16 bytes of tweak key. */
  if (s->chain == CHAIN_LRW) {
    if (key_bytes > 16 && block_cipher_key_ok (bc, key_bytes - 16))
      return 0;
    block_cipher_key_sizes_text (bc, 1, sizes, sizeof sizes);
    nbdkit_error ("%s-lrw needs a key of %s bytes plus 16, not %zu "
                  "(cipher spec %s)", bc->name, sizes, key_bytes, spec);
    return -1;
  }
  /* crypt_ctr_ivmode: elephant halves the key, the second half keys
   * the AES that makes each sector's key (at most 32 bytes). */
  if (s->iv == IV_ELEPHANT) {
    size_t half = key_bytes / 2;

    if (key_bytes % 2 == 0 && block_cipher_key_ok (bc, half) &&
        (half == 16 || half == 24 || half == 32))
      return 0;
    nbdkit_error ("%s-cbc-elephant needs a key of two equal halves, the "
                  "%s key and an AES key (32, 48 or 64 bytes), not %zu "
                  "(cipher spec %s)", bc->name, bc->name, key_bytes, spec);
    return -1;
  }
  /* crypto/xts.c: the key is two keys of the cipher, one after the
   * other; each must be a valid key on its own. */
  if (key_bytes % parts == 0 && block_cipher_key_ok (bc, key_bytes / parts))
    return 0;

  block_cipher_key_sizes_text (bc, parts, sizes, sizeof sizes);
  if (bc->key_sizes == 1)       /* only the empty key */
    nbdkit_error ("%s takes no key, not %zu bytes (cipher spec %s)",
                  bc->name, key_bytes, spec);
  else
    nbdkit_error ("%s-%s needs a %s byte key, not %zu (cipher spec %s)",
                  bc->name, chain_names[s->chain], sizes, key_bytes, spec);
  return -1;
}
