/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Authenticated cipher specs: split into words (cipher, chain mode, IV
 * mode and options, integrity type) the way cryptsetup's cipher_dm2c
 * (lib/libdevmapper.c) and dm-crypt's crypt_ctr_cipher_new split them,
 * then resolved and sized as cryptsetup's INTEGRITY_tag_size and
 * dm-crypt's crypt_ctr_ivmode, crypt_ctr_auth_cipher and
 * crypt_integrity_ctr (Linux 6.1) size them. */
#include <stdio.h>
#include <string.h>

#include "../common/cleanup.h"
#include "aead_spec.h"

#define WORD_MAX 64
#define MAX_TAG_BYTES 480        /* dm-crypt's MAX_TAG_SIZE */

struct aead_words
{
  char cipher[WORD_MAX];     /* "aes", "chacha20" */
  char mode[WORD_MAX];       /* "xts", "gcm", or "" */
  char ivmode[WORD_MAX];     /* "plain64", "essiv", "random" */
  char ivopts[WORD_MAX];     /* "sha256", or "" */
  char integrity[WORD_MAX];  /* "hmac(sha256)", "aead", "poly1305", "none" */
};

/* The MACs authenc may name (crypt_ctr_auth_cipher: the MAC key is as
 * long as the digest). */
struct mac_digest
{
  const char *kernel_name;
  const char *ossl_name;
  size_t bytes;
};

static const struct mac_digest mac_digests[] = {
  { "sha1",     "SHA1",     20 },
  { "sha224",   "SHA2-224", 28 },
  { "sha256",   "SHA2-256", 32 },
  { "sha384",   "SHA2-384", 48 },
  { "sha512",   "SHA2-512", 64 },
  { "sha3-256", "SHA3-256", 32 },
  { "sha3-512", "SHA3-512", 64 },
};

static bool
copy_word (char *dst, const char *src, size_t len)
{
  if (len >= WORD_MAX)
    return false;
  memcpy (dst, src, len);
  dst[len] = '\0';
  return true;
}

/* "hmac-sha256" (cryptsetup's command line) as "hmac(sha256)". */
static bool
set_integrity (struct aead_words *w, const char *integrity)
{
  if (strncmp (integrity, "hmac-", 5) == 0)
    return snprintf (w->integrity, WORD_MAX, "hmac(%s)",
                     integrity + 5) < WORD_MAX;
  return copy_word (w->integrity, integrity, strlen (integrity));
}

/* IVMODE[:IVOPTS] */
static bool
split_iv (struct aead_words *w, const char *iv)
{
  const char *colon = strchr (iv, ':');

  if (colon == NULL)
    return copy_word (w->ivmode, iv, strlen (iv)) &&
      copy_word (w->ivopts, "", 0);
  return copy_word (w->ivmode, iv, colon - iv) &&
    copy_word (w->ivopts, colon + 1, strlen (colon + 1));
}

/* CIPHER-MODE-IV or CIPHER-IV, as cipher_dm2c's two sscanf "%[^-]-%s"
 * split a LUKS2 segment's "encryption". */
static bool
split_luks2 (struct aead_words *w, const char *spec)
{
  const char *dash = strchr (spec, '-'), *rest, *dash2;

  if (dash == NULL || dash == spec || !copy_word (w->cipher, spec,
                                                  dash - spec))
    return false;
  rest = dash + 1;
  dash2 = strchr (rest, '-');
  if (dash2 == NULL)
    return copy_word (w->mode, "", 0) && split_iv (w, rest);
  return dash2 != rest && copy_word (w->mode, rest, dash2 - rest) &&
    split_iv (w, dash2 + 1);
}

/* MODE(CIPHER), or a bare CIPHER ("aegis128"). */
static bool
split_mode_cipher (struct aead_words *w, const char *api, size_t len)
{
  const char *open = memchr (api, '(', len);

  if (open == NULL)
    return memchr (api, ')', len) == NULL && memchr (api, ',', len) == NULL
      && copy_word (w->cipher, api, len) && copy_word (w->mode, "", 0);
  if (api[len - 1] != ')' || memchr (open + 1, '(', len - (open - api) - 1))
    return false;
  return copy_word (w->mode, api, open - api) &&
    copy_word (w->cipher, open + 1, len - (open - api) - 2);
}

/* The crypto API name of a capi: string: authenc(MAC,MODE(CIPHER)),
 * rfc7539(chacha20,poly1305), MODE(CIPHER) or CIPHER. */
static bool
split_api (struct aead_words *w, const char *api, const char *integrity)
{
  size_t len = strlen (api);
  const char *comma;

  if (len == 0)
    return false;
  if (strcmp (api, "rfc7539(chacha20,poly1305)") == 0)
    return copy_word (w->cipher, "chacha20", 8) && copy_word (w->mode, "", 0)
      && set_integrity (w, "poly1305");
  if (strncmp (api, "authenc(", 8) == 0 && api[len - 1] == ')') {
    /* The MAC is up to the first ',' (crypt_ctr_auth_cipher). */
    comma = strchr (api, ',');
    if (comma == NULL || !copy_word (w->integrity, api + 8, comma - api - 8))
      return false;
    return split_mode_cipher (w, comma + 1, api + len - 1 - comma - 1);
  }
  return split_mode_cipher (w, api, len) &&
    set_integrity (w, integrity != NULL ? integrity : "aead");
}

/* capi:API-IVMODE[:IVOPTS]: IV options come off at the last ':', the IV
 * mode at the last '-' (crypt_ctr_cipher_new). */
static bool
split_capi (struct aead_words *w, const char *spec, const char *integrity)
{
  char buf[AEAD_SPEC_TEXT_MAX];
  char *opts, *mode;

  if (snprintf (buf, sizeof buf, "%s", spec + 5) >= (int) sizeof buf)
    return false;
  opts = strrchr (buf, ':');
  if (opts != NULL)
    *opts++ = '\0';
  mode = strrchr (buf, '-');
  if (mode == NULL)
    return false;
  *mode++ = '\0';
  return copy_word (w->ivmode, mode, strlen (mode)) &&
    copy_word (w->ivopts, opts != NULL ? opts : "",
               opts != NULL ? strlen (opts) : 0) &&
    split_api (w, buf, integrity);
}

static const struct mac_digest *
mac_lookup (const char *integrity)
{
  size_t len = strlen (integrity), i;

  if (strncmp (integrity, "hmac(", 5) != 0 || integrity[len - 1] != ')')
    return NULL;
  for (i = 0; i < ARRAY_SIZE (mac_digests); i++)
    if (strlen (mac_digests[i].kernel_name) == len - 6 &&
        strncmp (integrity + 5, mac_digests[i].kernel_name, len - 6) == 0)
      return &mac_digests[i];
  return NULL;
}

/* The block cipher and chain of authenc and of integrity:N:none. */
static int
resolve_block (const struct aead_words *w, struct aead_spec *s,
               char *err, size_t errlen)
{
  s->cipher = block_cipher_lookup (w->cipher);
  if (s->cipher == NULL || s->cipher->ossl_stem == NULL) {
    snprintf (err, errlen, "unsupported cipher: %s", w->cipher);
    return -1;
  }
  if (strcmp (w->mode, "cbc") == 0)
    s->chain = CHAIN_CBC;
  else if (strcmp (w->mode, "xts") == 0 && s->cipher->block_bytes == 16)
    s->chain = CHAIN_XTS;
  else {
    snprintf (err, errlen, "unsupported chain mode with integrity: "
              "%s(%s)", w->mode, w->cipher);
    return -1;
  }
  /* crypt_ctr_ivmode: "at least a 64 bit sector number should fit" */
  s->iv_bytes = s->cipher->block_bytes < 8 ? 8 : s->cipher->block_bytes;
  return 0;
}

static int
resolve_aead (const struct aead_words *w, struct aead_spec *s,
              char *err, size_t errlen)
{
  if (strncmp (w->cipher, "aegis", 5) == 0) {
    snprintf (err, errlen, "unsupported AEAD: %s (neither OpenSSL nor "
              "libgcrypt has AEGIS)", w->cipher);
    return -1;
  }
  if (strcmp (w->mode, "ccm") == 0) {
    snprintf (err, errlen, "unsupported AEAD: rfc4309(ccm(%s))", w->cipher);
    return -1;
  }
  if (strcmp (w->mode, "gcm") != 0 || strcmp (w->cipher, "aes") != 0) {
    snprintf (err, errlen, "unsupported AEAD: %s%s%s%s", w->mode,
              w->mode[0] ? "(" : "", w->cipher, w->mode[0] ? ")" : "");
    return -1;
  }
  s->kind = AEAD_GCM;
  s->cipher = block_cipher_lookup ("aes");
  s->iv_bytes = 12;             /* GCM_AES_IV_SIZE */
  return 0;
}

/* Which AEAD W names. */
static int
resolve_kind (const struct aead_words *w, struct aead_spec *s,
              char *err, size_t errlen)
{
  const struct mac_digest *mac;

  if (strcmp (w->integrity, "aead") == 0)
    return resolve_aead (w, s, err, errlen);
  if (strcmp (w->integrity, "poly1305") == 0) {
    if (strcmp (w->cipher, "chacha20") != 0 || w->mode[0] != '\0') {
      snprintf (err, errlen, "unsupported AEAD: poly1305 with %s%s%s",
                w->cipher, w->mode[0] ? "-" : "", w->mode);
      return -1;
    }
    s->kind = AEAD_CHACHAPOLY;
    s->iv_bytes = 12;           /* CHACHAPOLY_IV_SIZE */
    return 0;
  }
  if (strcmp (w->integrity, "none") == 0) {
    s->kind = AEAD_IV_ONLY;
    return resolve_block (w, s, err, errlen);
  }
  mac = mac_lookup (w->integrity);
  if (mac == NULL) {
    snprintf (err, errlen, "unknown integrity type: %s", w->integrity);
    return -1;
  }
  s->kind = AEAD_AUTHENC;
  s->mac_digest = mac->ossl_name;
  s->mac_key_bytes = mac->bytes;
  return resolve_block (w, s, err, errlen);
}

static int
resolve_essiv (const struct aead_words *w, struct aead_spec *s,
               char *err, size_t errlen)
{
  size_t salt_bytes;

  /* crypto/essiv.c takes only authenc() AEADs. */
  if (s->kind != AEAD_AUTHENC) {
    snprintf (err, errlen, "unsupported IV mode with %s: essiv",
              w->integrity);
    return -1;
  }
  salt_bytes = w->ivopts[0] && strlen (w->ivopts) < sizeof s->essiv_hash ?
    iv_essiv_salt_bytes (w->ivopts) : 0;
  if (salt_bytes == 0) {
    snprintf (err, errlen, "unsupported ESSIV hash: %s",
              w->ivopts[0] ? w->ivopts : "(none)");
    return -1;
  }
  /* essiv_supported_algorithms: the digest must key the cipher. */
  if (!block_cipher_key_ok (s->cipher, salt_bytes)) {
    snprintf (err, errlen, "unsupported ESSIV: %s's %zu-byte digest is "
              "no %s key", w->ivopts, salt_bytes, s->cipher->name);
    return -1;
  }
  memcpy (s->essiv_hash, w->ivopts, strlen (w->ivopts) + 1);
  s->iv = IV_ESSIV;
  return 0;
}

/* crypt_ctr_ivmode, with what an AEAD refuses (eboiv, elephant) and
 * what we do not implement here (lmk, tcw). */
static int
resolve_iv (const struct aead_words *w, struct aead_spec *s,
            char *err, size_t errlen)
{
  static const struct { const char *name; enum iv_mode mode; } ivs[] = {
    { "plain64", IV_PLAIN64 }, { "plain64be", IV_PLAIN64BE },
    { "plain", IV_PLAIN }, { "null", IV_NULL }, { "benbi", IV_BENBI },
  };
  size_t i;

  if (strcmp (w->ivmode, "random") == 0) {
    s->iv_random = true;
    s->iv = IV_NULL;
    return 0;
  }
  if (s->kind == AEAD_IV_ONLY) {
    snprintf (err, errlen, "integrity none needs random IVs, not %s",
              w->ivmode);
    return -1;
  }
  if (strcmp (w->ivmode, "essiv") == 0)
    return resolve_essiv (w, s, err, errlen);
  for (i = 0; i < ARRAY_SIZE (ivs); i++)
    if (strcmp (w->ivmode, ivs[i].name) == 0 &&
        (ivs[i].mode != IV_BENBI || s->kind == AEAD_AUTHENC)) {
      s->iv = ivs[i].mode;
      return 0;
    }
  snprintf (err, errlen, "unsupported IV mode with integrity: %s",
            w->ivmode);
  return -1;
}

/* cryptsetup's INTEGRITY_tag_size (lib/integrity/integrity.c): the IV
 * bytes it reserves by "MODE-IV" name, then the tag of the integrity
 * type.  Its quirks stay: "cbc-random" reserves no IV bytes, so the
 * kernel's MAC is shortened by the IV (crypt_integrity_ctr). */
static unsigned
cryptsetup_tag_bytes (const struct aead_words *w, const struct aead_spec *s)
{
  char mode[2 * WORD_MAX + 2];
  unsigned iv = 0, auth = 0;

  snprintf (mode, sizeof mode, "%s%s%s", w->mode, w->mode[0] ? "-" : "",
            w->ivmode);
  if (strcmp (mode, "xts-random") == 0 || strcmp (mode, "ctr-random") == 0)
    iv = 16;
  else if (strcmp (mode, "gcm-random") == 0)
    iv = 12;
  else if (strcmp (mode, "random") == 0)
    iv = 16;
  if (s->kind == AEAD_GCM)
    auth = 16;
  else if (s->kind == AEAD_CHACHAPOLY) {
    iv = iv ? 12 : 0;
    auth = 16;
  }
  else if (s->kind == AEAD_AUTHENC)
    auth = s->mac_key_bytes;    /* hmac(sha1|sha256|sha512): the digest */
  return iv + auth;
}

/* What crypto_aead_setauthsize accepts: authenc up to the digest,
 * gcm 4, 8 and 12 to 16 (crypto_gcm_check_authsize), rfc7539 16. */
static bool
auth_tag_ok (const struct aead_spec *s, unsigned auth)
{
  switch (s->kind) {
  case AEAD_AUTHENC:
    return auth >= 1 && auth <= s->mac_key_bytes;
  case AEAD_GCM:
    return auth == 4 || auth == 8 || (auth >= 12 && auth <= 16);
  case AEAD_CHACHAPOLY:
    return auth == 16;
  case AEAD_IV_ONLY:
    return auth == 0;
  }
  return false;
}

/* crypt_integrity_ctr: the auth tag is what the IV leaves of the tag. */
static int
size_tag (const struct aead_words *w, struct aead_spec *s,
          uint32_t tag_bytes, char *err, size_t errlen)
{
  s->iv_tag_bytes = s->iv_random ? s->iv_bytes : 0;
  s->tag_bytes = tag_bytes ? tag_bytes : cryptsetup_tag_bytes (w, s);
  if (s->tag_bytes == 0 || s->tag_bytes > MAX_TAG_BYTES ||
      s->tag_bytes < s->iv_tag_bytes ||
      !auth_tag_ok (s, s->tag_bytes - s->iv_tag_bytes)) {
    snprintf (err, errlen, "unsupported integrity tag size: %u bytes for "
              "%s with %s", s->tag_bytes, w->cipher, w->integrity);
    return -1;
  }
  s->auth_tag_bytes = s->tag_bytes - s->iv_tag_bytes;
  return 0;
}

/* The table's text, as cipher_dm2c writes it; -1 if longer than the
 * kernel takes. */
static int
write_kernel_text (const struct aead_words *w, struct aead_spec *s,
                   char *err, size_t errlen)
{
  char api[4 * WORD_MAX];
  int len;

  if (s->kind == AEAD_AUTHENC)
    snprintf (api, sizeof api, "authenc(%s,%s(%s))", w->integrity, w->mode,
              w->cipher);
  else if (s->kind == AEAD_CHACHAPOLY)
    snprintf (api, sizeof api, "rfc7539(chacha20,poly1305)");
  else
    snprintf (api, sizeof api, "%s(%s)", w->mode, w->cipher);
  len = snprintf (s->kernel_cipher, sizeof s->kernel_cipher,
                  "capi:%s-%s%s%s", api, w->ivmode,
                  w->ivopts[0] ? ":" : "", w->ivopts);
  if (len < 0 || len >= (int) sizeof s->kernel_cipher) {
    snprintf (err, errlen, "cipher spec too long: capi:%s", api);
    return -1;
  }
  snprintf (s->kernel_integrity, sizeof s->kernel_integrity,
            "integrity:%u:%s", s->tag_bytes,
            s->kind == AEAD_IV_ONLY ? "none" : "aead");
  return 0;
}

int
aead_spec_parse (const char *cipher, const char *integrity,
                 uint32_t tag_bytes, struct aead_spec *s,
                 char *err, size_t errlen)
{
  struct aead_words w;
  bool capi = cipher != NULL && strncmp (cipher, "capi:", 5) == 0;
  bool split;

  memset (s, 0, sizeof *s);
  memset (&w, 0, sizeof w);
  if (cipher == NULL || (integrity == NULL && !capi)) {
    snprintf (err, errlen, "no %s given", cipher ? "integrity type"
              : "cipher");
    return -1;
  }
  split = capi ? split_capi (&w, cipher, integrity)
    : split_luks2 (&w, cipher) && set_integrity (&w, integrity);
  if (!split) {
    snprintf (err, errlen, "bad cipher spec: %s", cipher);
    return -1;
  }
  if (resolve_kind (&w, s, err, errlen) == -1 ||
      resolve_iv (&w, s, err, errlen) == -1 ||
      size_tag (&w, s, tag_bytes, err, errlen) == -1)
    return -1;
  return write_kernel_text (&w, s, err, errlen);
}

size_t
aead_spec_cipher_key_bytes (const struct aead_spec *s, size_t key_bytes)
{
  return key_bytes > s->mac_key_bytes ? key_bytes - s->mac_key_bytes : 0;
}

static int
key_error (const struct aead_spec *s, size_t key_bytes, const char *want,
           char *err, size_t errlen)
{
  snprintf (err, errlen, "%s needs %s, not a %zu-byte key",
            s->kernel_cipher, want, key_bytes);
  return -1;
}

int
aead_spec_check_key (const struct aead_spec *s, size_t key_bytes,
                     char *err, size_t errlen)
{
  size_t cipher_bytes = aead_spec_cipher_key_bytes (s, key_bytes);
  unsigned factor = s->chain == CHAIN_XTS ? 2 : 1;
  char sizes[64], want[128];

  switch (s->kind) {
  case AEAD_GCM:
    if (key_bytes == 16 || key_bytes == 24 || key_bytes == 32)
      return 0;
    return key_error (s, key_bytes, "a 16, 24 or 32 byte key", err, errlen);
  case AEAD_CHACHAPOLY:
    if (key_bytes == 32)
      return 0;
    return key_error (s, key_bytes, "a 32 byte key", err, errlen);
  case AEAD_AUTHENC:
  case AEAD_IV_ONLY:
    if (cipher_bytes > 0 && cipher_bytes % factor == 0 &&
        block_cipher_key_ok (s->cipher, cipher_bytes / factor))
      return 0;
    block_cipher_key_sizes_text (s->cipher, factor, sizes, sizeof sizes);
    snprintf (want, sizeof want, "a %s byte cipher key%s%zu-byte MAC key",
              sizes, s->mac_key_bytes ? " and a " : "",
              s->mac_key_bytes);
    if (s->mac_key_bytes == 0)
      snprintf (want, sizeof want, "a %s byte key", sizes);
    return key_error (s, key_bytes, want, err, errlen);
  }
  return -1;
}
