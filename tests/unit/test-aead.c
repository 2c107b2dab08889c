/* SPDX-License-Identifier: GPL-2.0-or-later */
/* aead_sector: the kernel's table text and tag sizes for each LUKS2
 * pair, refusals by name, round trips in every mode, tampering caught,
 * the sector bound into the tag, fresh random IVs, and each mode's
 * bytes against an independent computation (the project's own
 * sector_cipher for the skcipher under authenc, OpenSSL's one-shot HMAC
 * and AEAD calls over the AAD dm-crypt lays out), and many threads on
 * one aead_sector. */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "../../crypto/aead.h"
#include "../../crypto/cipher.h"
#include "check.h"

#define MAX_SECTOR 4096
#define MAX_TAG 128

struct mode
{
  const char *cipher, *integrity;
  size_t key_bytes;
  bool random;
};

static const struct mode modes[] = {
  { "aes-xts-plain64", "hmac(sha256)", 96, false },
  { "aes-xts-plain64", "hmac(sha512)", 128, false },
  { "aes-xts-plain64be", "hmac(sha1)", 52, false },
  { "aes-xts-random", "hmac(sha256)", 96, true },
  { "aes-cbc-plain64", "hmac(sha256)", 64, false },
  { "aes-cbc-essiv:sha256", "hmac(sha256)", 64, false },
  { "aes-cbc-random", "hmac(sha256)", 64, true },
  { "serpent-xts-plain64", "hmac(sha256)", 96, false },
  { "aes-gcm-random", "aead", 32, true },
  { "aes-gcm-random", "aead", 16, true },
  { "chacha20-random", "poly1305", 32, true },
  { "aes-xts-random", "none", 64, true },
};
#define N_MODES (sizeof modes / sizeof modes[0])

static void
fill (uint8_t *p, size_t n, unsigned seed)
{
  size_t i;

  for (i = 0; i < n; i++)
    p[i] = (uint8_t) (i * 31 + seed * 7 + (i >> 8));
}

static struct aead_sector *
make (const struct mode *m, uint32_t sector_bytes, bool large)
{
  uint8_t key[128];
  char err[256] = "";
  struct aead_sector *a;

  fill (key, m->key_bytes, 1);
  a = aead_sector_new (m->cipher, m->integrity, key, m->key_bytes,
                       sector_bytes, large, err, sizeof err);
  check_that (a != NULL, "%s + %s: %s", m->cipher, m->integrity, err);
  return a;
}

static bool
all_zero (const uint8_t *p, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (p[i] != 0)
      return false;
  return true;
}

/* ---- table text and sizes -------------------------------------------- */

struct text_case
{
  const char *cipher, *integrity;
  size_t key_bytes;
  const char *kernel_cipher, *kernel_integrity;
  uint32_t auth_bytes, iv_bytes;
};

static const struct text_case text_cases[] = {
  { "aes-xts-plain64", "hmac(sha256)", 96,
    "capi:authenc(hmac(sha256),xts(aes))-plain64", "integrity:32:aead",
    32, 0 },
  { "aes-xts-random", "hmac(sha256)", 96,
    "capi:authenc(hmac(sha256),xts(aes))-random", "integrity:48:aead",
    32, 16 },
  { "aes-gcm-random", "aead", 32, "capi:gcm(aes)-random",
    "integrity:28:aead", 16, 12 },
  { "chacha20-random", "poly1305", 32,
    "capi:rfc7539(chacha20,poly1305)-random", "integrity:28:aead", 16, 12 },
  { "aes-cbc-essiv:sha256", "hmac(sha512)", 96,
    "capi:authenc(hmac(sha512),cbc(aes))-essiv:sha256", "integrity:64:aead",
    64, 0 },
  { "aes-xts-plain64", "hmac-sha1", 84,
    "capi:authenc(hmac(sha1),xts(aes))-plain64", "integrity:20:aead", 20, 0 },
  { "aes-xts-random", "none", 64, "capi:xts(aes)-random",
    "integrity:16:none", 0, 16 },
  /* cryptsetup reserves no IV bytes for "cbc-random": the kernel's MAC
   * is what the IV leaves of the 32 bytes. */
  { "aes-cbc-random", "hmac(sha256)", 64,
    "capi:authenc(hmac(sha256),cbc(aes))-random", "integrity:32:aead",
    16, 16 },
  { "capi:authenc(hmac(sha256),xts(aes))-plain64", NULL, 96,
    "capi:authenc(hmac(sha256),xts(aes))-plain64", "integrity:32:aead",
    32, 0 },
  { "capi:gcm(aes)-random", "aead", 16, "capi:gcm(aes)-random",
    "integrity:28:aead", 16, 12 },
  { "capi:authenc(hmac(sha256),cbc(aes))-essiv:sha256", NULL, 64,
    "capi:authenc(hmac(sha256),cbc(aes))-essiv:sha256", "integrity:32:aead",
    32, 0 },
};

static void
test_kernel_text (void)
{
  uint8_t key[128];
  char err[256];
  size_t i;

  fill (key, sizeof key, 2);
  for (i = 0; i < sizeof text_cases / sizeof text_cases[0]; i++) {
    const struct text_case *t = &text_cases[i];
    struct aead_sector *a = aead_sector_new (t->cipher, t->integrity, key,
                                             t->key_bytes, 4096, true, err,
                                             sizeof err);

    if (!check_that (a != NULL, "%s: %s", t->cipher, err))
      continue;
    CHECK_MSG (strcmp (aead_kernel_cipher (a), t->kernel_cipher) == 0,
               "%s: %s", t->cipher, aead_kernel_cipher (a));
    CHECK_MSG (strcmp (aead_kernel_integrity (a), t->kernel_integrity) == 0,
               "%s: %s", t->cipher, aead_kernel_integrity (a));
    CHECK_MSG (aead_auth_tag_size (a) == t->auth_bytes &&
               aead_stored_iv_size (a) == t->iv_bytes &&
               aead_tag_size (a) == t->auth_bytes + t->iv_bytes,
               "%s: tag %u = %u + %u", t->cipher, aead_tag_size (a),
               aead_auth_tag_size (a), aead_stored_iv_size (a));
    aead_sector_free (a);
  }
}

/* ---- refusals ---------------------------------------------------------- */

struct refusal
{
  const char *cipher, *integrity;
  size_t key_bytes;
  uint32_t sector_bytes;
  const char *says;
};

static const struct refusal refusals[] = {
  { "aegis128-random", "aead", 16, 4096, "AEGIS" },
  { "capi:aegis256-random", "aead", 32, 4096, "AEGIS" },
  { "aes-xts-plain64", "crc32c", 64, 4096, "unknown integrity type" },
  { "aes-xts-plain64", "cmac(aes)", 80, 4096, "unknown integrity type" },
  { "aes-xts-plain64", "hmac(sha256)", 50, 4096, "not a 50-byte key" },
  { "aes-xts-plain64", "hmac(sha256)", 32, 4096, "not a 32-byte key" },
  { "aes-gcm-random", "aead", 20, 4096, "a 16, 24 or 32 byte key" },
  { "chacha20-random", "poly1305", 16, 4096, "a 32 byte key" },
  { "aes-ccm-random", "aead", 19, 4096, "rfc4309" },
  { "aes-xts-plain64", "aead", 64, 4096, "unsupported AEAD: xts(aes)" },
  { "aes-xts-eboiv", "hmac(sha256)", 96, 4096, "unsupported IV mode" },
  { "aes-xts-plain64", "none", 64, 4096, "needs random IVs" },
  { "aes-gcm-essiv:sha256", "aead", 32, 4096, "essiv" },
  { "aes-cbc-essiv:nohash", "hmac(sha256)", 64, 4096, "ESSIV hash" },
  { "aes-lrw-plain64", "hmac(sha256)", 80, 4096, "chain mode" },
  { "nosuch-xts-plain64", "hmac(sha256)", 96, 4096, "unsupported cipher" },
  { "aes", "hmac(sha256)", 64, 4096, "bad cipher spec" },
  { "aes-xts-plain64", "hmac(sha256)", 96, 1000, "invalid sector size" },
  { "aes-xts-plain64", NULL, 96, 4096, "no integrity type" },
};

static void
test_refusals (void)
{
  uint8_t key[128];
  size_t i;

  fill (key, sizeof key, 3);
  for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
    const struct refusal *r = &refusals[i];
    char err[256] = "";
    struct aead_sector *a = aead_sector_new (r->cipher, r->integrity, key,
                                             r->key_bytes, r->sector_bytes,
                                             false, err, sizeof err);

    CHECK_MSG (a == NULL && strstr (err, r->says) != NULL &&
               strchr (err, '\n') == NULL,
               "%s + %s: got \"%s\", want \"%s\"", r->cipher,
               r->integrity ? r->integrity : "(null)", err, r->says);
    aead_sector_free (a);
  }
}

/* ---- round trips and tampering ---------------------------------------- */

static void
round_trip (const struct mode *m, uint32_t sector_bytes, bool large)
{
  struct aead_sector *a = make (m, sector_bytes, large);
  static uint8_t pt[MAX_SECTOR], ct[MAX_SECTOR], back[MAX_SECTOR];
  uint8_t tag[MAX_TAG];
  uint64_t step = sector_bytes / 512, s;

  if (a == NULL)
    return;
  for (s = 0; s < 40 * step; s += 13 * step) {
    fill (pt, sector_bytes, (unsigned) s);
    CHECK (aead_sector_encrypt (a, s, pt, ct, tag) == 0);
    CHECK_MSG (memcmp (pt, ct, sector_bytes) != 0, "%s: no encryption",
               m->cipher);
    CHECK (aead_sector_decrypt (a, s, ct, back, tag) == 0);
    CHECK_MSG (memcmp (pt, back, sector_bytes) == 0, "%s + %s at %u: "
               "round trip", m->cipher, m->integrity, sector_bytes);
    memcpy (back, ct, sector_bytes);           /* in place */
    CHECK (aead_sector_decrypt (a, s, back, back, tag) == 0 &&
           memcmp (pt, back, sector_bytes) == 0);
  }
  CHECK_MSG (aead_sector_encrypt (a, step == 1 ? 0 : 1, pt, ct, tag)
             == (step == 1 ? 0 : -EINVAL), "%s: misaligned sector",
             m->cipher);
  aead_sector_free (a);
}

/* Decrypting with one byte of CT or TAG flipped, or at another sector,
 * must fail with no plaintext left. */
static void
expect_refused (const struct aead_sector *a, const char *what,
                const char *name, uint64_t sector, const uint8_t *ct,
                const uint8_t *tag, uint32_t sector_bytes)
{
  static uint8_t out[MAX_SECTOR];

  memset (out, 0xa5, sizeof out);
  CHECK_MSG (aead_sector_decrypt (a, sector, ct, out, tag) == -EILSEQ,
             "%s: %s accepted", name, what);
  CHECK_MSG (all_zero (out, sector_bytes), "%s: %s left bytes in out",
             name, what);
}

static void
tamper (const struct mode *m)
{
  const uint32_t sb = 4096;
  struct aead_sector *a = make (m, sb, true);
  static uint8_t pt[MAX_SECTOR], ct[MAX_SECTOR], bad[MAX_SECTOR];
  uint8_t tag[MAX_TAG], bad_tag[MAX_TAG];
  uint32_t auth, stored_iv;

  if (a == NULL)
    return;
  auth = aead_auth_tag_size (a);
  stored_iv = aead_stored_iv_size (a);
  fill (pt, sb, 9);
  REQUIRE (aead_sector_encrypt (a, 64, pt, ct, tag) == 0, "encrypt");
  if (auth == 0) {              /* integrity:N:none authenticates nothing */
    aead_sector_free (a);
    return;
  }
  memcpy (bad, ct, sb);
  bad[1000] ^= 0x10;
  expect_refused (a, "flipped ciphertext", m->cipher, 64, bad, tag, sb);
  memcpy (bad_tag, tag, sizeof bad_tag);
  bad_tag[auth - 1] ^= 0x01;
  expect_refused (a, "flipped tag", m->cipher, 64, ct, bad_tag, sb);
  if (stored_iv > 0) {
    memcpy (bad_tag, tag, sizeof bad_tag);
    bad_tag[auth + stored_iv - 1] ^= 0x80;
    expect_refused (a, "flipped IV", m->cipher, 64, ct, bad_tag, sb);
  }
  /* The sector number is in the AAD: the same bytes elsewhere fail. */
  expect_refused (a, "another sector", m->cipher, 72, ct, tag, sb);
  aead_sector_free (a);
}

static void
random_ivs_differ (const struct mode *m)
{
  struct aead_sector *a = make (m, 512, false);
  uint8_t pt[512], ct1[512], ct2[512], tag1[MAX_TAG], tag2[MAX_TAG];
  uint32_t auth;

  if (a == NULL)
    return;
  auth = aead_auth_tag_size (a);
  fill (pt, sizeof pt, 4);
  CHECK (aead_sector_encrypt (a, 8, pt, ct1, tag1) == 0);
  CHECK (aead_sector_encrypt (a, 8, pt, ct2, tag2) == 0);
  CHECK_MSG (memcmp (tag1 + auth, tag2 + auth, aead_stored_iv_size (a))
             != 0 && memcmp (ct1, ct2, sizeof ct1) != 0,
             "%s: two writes, one IV", m->cipher);
  aead_sector_free (a);
}

static void
test_modes (void)
{
  size_t i;

  for (i = 0; i < N_MODES; i++) {
    round_trip (&modes[i], 512, false);
    round_trip (&modes[i], 4096, true);
    round_trip (&modes[i], 4096, false);
    round_trip (&modes[i], 1024, true);
    tamper (&modes[i]);
    if (modes[i].random)
      random_ivs_differ (&modes[i]);
  }
}

/* ---- independent references ------------------------------------------- */

/* HMAC-DIGEST (MAC_KEY) over le64 (AAD_SECTOR), IV, CT. */
static void
ref_hmac (const char *digest, const uint8_t *mac_key, size_t mac_key_bytes,
          uint64_t aad_sector, const uint8_t *iv, size_t iv_bytes,
          const uint8_t *ct, size_t ct_bytes, uint8_t *mac)
{
  static uint8_t msg[8 + 16 + MAX_SECTOR];
  uint64_t le = htole64 (aad_sector);
  size_t mac_bytes;

  memcpy (msg, &le, 8);
  memcpy (msg + 8, iv, iv_bytes);
  memcpy (msg + 8 + iv_bytes, ct, ct_bytes);
  REQUIRE (EVP_Q_mac (NULL, "HMAC", NULL, digest, NULL, mac_key,
                      mac_key_bytes, msg, 8 + iv_bytes + ct_bytes, mac, 64,
                      &mac_bytes) != NULL, "HMAC");
}

/* One EVP call of CIPHER with IV. */
static void
ref_cipher (const char *cipher, const uint8_t *key, const uint8_t *iv,
            const uint8_t *in, uint8_t *out, size_t len)
{
  EVP_CIPHER *c = EVP_CIPHER_fetch (NULL, cipher, NULL);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  int n;

  REQUIRE (c != NULL && ctx != NULL &&
           EVP_EncryptInit_ex (ctx, c, NULL, key, iv) == 1 &&
           EVP_CIPHER_CTX_set_padding (ctx, 0) == 1 &&
           EVP_EncryptUpdate (ctx, out, &n, in, (int) len) == 1 &&
           (size_t) n == len, "%s", cipher);
  EVP_CIPHER_CTX_free (ctx);
  EVP_CIPHER_free (c);
}

/* authenc(hmac(sha256),xts(aes))-plain64 with iv_large_sectors and an
 * iv_offset: the ciphertext is the plain dm-crypt sector that
 * sector_cipher makes from the cipher key; the tag is HMAC over the
 * target's sector number (iv_offset taken off), the plain64 IV of the
 * IV sector (iv_offset in, shifted), and the ciphertext. */
static void
test_authenc_xts_reference (uint32_t sb, bool large, uint64_t iv_offset)
{
  uint8_t key[96], tag[MAX_TAG], mac[64], iv[16] = { 0 };
  static uint8_t pt[MAX_SECTOR], ct[MAX_SECTOR], want[MAX_SECTOR];
  const uint64_t sector = 8 * 1000 + iv_offset;   /* includes iv_offset */
  const struct aead_sector_params p = {
    .cipher = "aes-xts-plain64", .integrity = "hmac(sha256)", .key = key,
    .key_bytes = 96, .sector_bytes = sb, .iv_large_sectors = large,
    .iv_offset = iv_offset,
  };
  struct sector_cipher_params sp = {
    .spec = "aes-xts-plain64", .key = key, .key_size = 64,
    .sector_size = sb, .iv_large_sectors = large,
    .library = SECTOR_CIPHER_LIB_OPENSSL,
  };
  struct sector_cipher *c;
  char err[256];
  struct aead_sector *a;
  uint64_t iv_sector = large ? sector / (sb / 512) : sector, le;

  fill (key, sizeof key, 5);
  c = sector_cipher_new (&sp);
  a = aead_sector_new_params (&p, err, sizeof err);
  REQUIRE (a != NULL && c != NULL, "%s", err);
  fill (pt, sb, 6);
  REQUIRE (aead_sector_encrypt (a, sector, pt, ct, tag) == 0, "encrypt");
  REQUIRE (sector_cipher_encrypt (c, want, pt, sb, sector) == 0, "skcipher");
  CHECK_MSG (memcmp (ct, want, sb) == 0, "xts ciphertext at %u, large %d, "
             "iv_offset %llu", sb, large, (unsigned long long) iv_offset);
  le = htole64 (iv_sector);
  memcpy (iv, &le, 8);
  ref_hmac ("SHA2-256", key + 64, 32, sector - iv_offset, iv, 16, ct, sb,
            mac);
  CHECK_MSG (memcmp (tag, mac, 32) == 0, "authenc tag at %u, large %d, "
             "iv_offset %llu", sb, large, (unsigned long long) iv_offset);
  sector_cipher_free (c);
  aead_sector_free (a);
}

/* essiv(authenc(hmac(sha256),cbc(aes)),sha256): the IV is plain64
 * encrypted under SHA256 of the whole key (crypto/essiv.c hashes the
 * encryption key, then the MAC key), and the AAD carries that encrypted
 * IV. */
static void
test_authenc_essiv_reference (void)
{
  uint8_t key[64], salt[32], tag[MAX_TAG], mac[64];
  uint8_t iv[16] = { 0 }, eiv[16];
  static uint8_t pt[4096], ct[4096], want[4096];
  const uint64_t sector = 4096;
  uint64_t le = htole64 (sector / 8);
  unsigned salt_bytes;
  struct aead_sector *a;
  char err[256];

  fill (key, sizeof key, 7);
  a = aead_sector_new ("aes-cbc-essiv:sha256", "hmac(sha256)", key, 64,
                       4096, true, err, sizeof err);
  REQUIRE (a != NULL, "%s", err);
  fill (pt, sizeof pt, 8);
  REQUIRE (aead_sector_encrypt (a, sector, pt, ct, tag) == 0, "encrypt");
  EVP_Digest (key, 64, salt, &salt_bytes, EVP_sha256 (), NULL);
  memcpy (iv, &le, 8);
  ref_cipher ("AES-256-ECB", salt, NULL, iv, eiv, 16);
  ref_cipher ("AES-256-CBC", key, eiv, pt, want, sizeof pt);
  CHECK_MSG (memcmp (ct, want, sizeof ct) == 0, "essiv cbc ciphertext");
  ref_hmac ("SHA2-256", key + 32, 32, sector, eiv, 16, ct, sizeof ct, mac);
  CHECK_MSG (memcmp (tag, mac, 32) == 0, "essiv authenc tag");
  aead_sector_free (a);
}

/* authenc with a random IV, here the caller's: XTS with that IV, the
 * HMAC over it, the IV stored after the MAC. */
static void
test_authenc_random_reference (void)
{
  uint8_t key[96], tag[MAX_TAG], mac[64], iv[16];
  static uint8_t pt[512], ct[512], want[512];
  struct aead_sector *a;
  char err[256];

  fill (key, sizeof key, 9);
  fill (iv, sizeof iv, 10);
  a = aead_sector_new ("aes-xts-random", "hmac(sha512)", key, 96, 512,
                       false, err, sizeof err);
  REQUIRE (a != NULL, "%s", err);
  REQUIRE (aead_tag_size (a) == 64 + 16, "hmac(sha512) + xts-random");
  fill (pt, sizeof pt, 11);
  REQUIRE (aead_sector_encrypt_iv (a, 77, pt, ct, tag, iv) == 0, "enc");
  ref_cipher ("AES-128-XTS", key, iv, pt, want, sizeof pt);
  CHECK_MSG (memcmp (ct, want, sizeof ct) == 0, "xts-random ciphertext");
  ref_hmac ("SHA2-512", key + 32, 64, 77, iv, 16, ct, sizeof ct, mac);
  CHECK_MSG (memcmp (tag, mac, 64) == 0 && memcmp (tag + 64, iv, 16) == 0,
             "xts-random tag, then IV");
  aead_sector_free (a);
}

/* gcm(aes) and rfc7539(chacha20,poly1305): OpenSSL's AEAD over AAD =
 * le64 sector || IV; stored tag = auth tag || IV. */
static void
ref_aead (const char *name, const uint8_t *key, const uint8_t *iv,
          uint64_t sector, const uint8_t *pt, uint8_t *ct, size_t len,
          uint8_t *auth)
{
  EVP_CIPHER *c = EVP_CIPHER_fetch (NULL, name, NULL);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  uint8_t aad[20];
  uint64_t le = htole64 (sector);
  int n, last;

  memcpy (aad, &le, 8);
  memcpy (aad + 8, iv, 12);
  REQUIRE (c != NULL && ctx != NULL &&
           EVP_EncryptInit_ex (ctx, c, NULL, key, iv) == 1 &&
           EVP_EncryptUpdate (ctx, NULL, &n, aad, sizeof aad) == 1 &&
           EVP_EncryptUpdate (ctx, ct, &n, pt, (int) len) == 1 &&
           EVP_EncryptFinal_ex (ctx, ct + n, &last) == 1 &&
           EVP_CIPHER_CTX_ctrl (ctx, EVP_CTRL_AEAD_GET_TAG, 16, auth) == 1,
           "%s", name);
  EVP_CIPHER_CTX_free (ctx);
  EVP_CIPHER_free (c);
}

static void
test_aead_reference (const char *cipher, const char *integrity,
                     const char *ossl_name)
{
  uint8_t key[32], iv[12], tag[MAX_TAG], auth[16];
  static uint8_t pt[4096], ct[4096], want[4096];
  struct aead_sector *a;
  char err[256];

  fill (key, sizeof key, 12);
  fill (iv, sizeof iv, 13);
  a = aead_sector_new (cipher, integrity, key, 32, 4096, true, err,
                       sizeof err);
  REQUIRE (a != NULL, "%s", err);
  fill (pt, sizeof pt, 14);
  REQUIRE (aead_sector_encrypt_iv (a, 4104, pt, ct, tag, iv) == 0, "enc");
  ref_aead (ossl_name, key, iv, 4104, pt, want, sizeof pt, auth);
  CHECK_MSG (memcmp (ct, want, sizeof ct) == 0, "%s ciphertext", cipher);
  CHECK_MSG (memcmp (tag, auth, 16) == 0 && memcmp (tag + 16, iv, 12) == 0,
             "%s: tag, then IV", cipher);
  aead_sector_free (a);
}

/* Tags shorter than the AEAD's: the kernel's auth tag is what the IV
 * leaves of integrity:N, the first bytes of the full one. */
static void
test_truncated_tags (void)
{
  uint8_t key[64], iv[16], tag[MAX_TAG], auth[16], mac[64];
  static uint8_t pt[512], ct[512], want[512];
  const struct aead_sector_params gcm = {
    .cipher = "capi:gcm(aes)-random", .key = key, .key_bytes = 32,
    .sector_bytes = 512, .tag_bytes = 24,
  };
  struct aead_sector *a;
  char err[256];

  fill (key, sizeof key, 15);
  fill (iv, sizeof iv, 16);
  fill (pt, sizeof pt, 17);
  a = aead_sector_new_params (&gcm, err, sizeof err);
  REQUIRE (a != NULL, "%s", err);
  CHECK (aead_auth_tag_size (a) == 12 && aead_stored_iv_size (a) == 12);
  CHECK (aead_sector_encrypt_iv (a, 16, pt, ct, tag, iv) == 0);
  ref_aead ("AES-256-GCM", key, iv, 16, pt, want, sizeof pt, auth);
  CHECK_MSG (memcmp (ct, want, sizeof ct) == 0 &&
             memcmp (tag, auth, 12) == 0 && memcmp (tag + 12, iv, 12) == 0,
             "gcm with a 12-byte tag");
  CHECK (aead_sector_decrypt (a, 16, ct, want, tag) == 0 &&
         memcmp (want, pt, sizeof pt) == 0);
  aead_sector_free (a);

  /* cryptsetup's aes-cbc-random + hmac(sha256): 32 bytes, IV 16. */
  a = aead_sector_new ("aes-cbc-random", "hmac(sha256)", key, 64, 512,
                       false, err, sizeof err);
  REQUIRE (a != NULL, "%s", err);
  CHECK (aead_sector_encrypt_iv (a, 24, pt, ct, tag, iv) == 0);
  ref_cipher ("AES-256-CBC", key, iv, pt, want, sizeof pt);
  ref_hmac ("SHA2-256", key + 32, 32, 24, iv, 16, ct, sizeof ct, mac);
  CHECK_MSG (memcmp (ct, want, sizeof ct) == 0 &&
             memcmp (tag, mac, 16) == 0 && memcmp (tag + 16, iv, 16) == 0,
             "cbc-random: HMAC cut to 16 bytes, then the IV");
  aead_sector_free (a);
}

/* A plain-IV mode refuses a caller's IV. */
static void
test_iv_hook_refused (void)
{
  uint8_t key[96] = { 1 }, iv[16] = { 0 }, tag[MAX_TAG];
  static uint8_t pt[512], ct[512];
  char err[256];
  struct aead_sector *a = aead_sector_new ("aes-xts-plain64",
                                           "hmac(sha256)", key, 96, 512,
                                           false, err, sizeof err);

  REQUIRE (a != NULL, "%s", err);
  CHECK (aead_sector_encrypt_iv (a, 0, pt, ct, tag, iv) == -EINVAL);
  aead_sector_free (a);
}

/* ---- threads ------------------------------------------------------------ */

struct worker
{
  const struct aead_sector *a;
  unsigned id;
  int bad;
};

static void *
work (void *arg)
{
  struct worker *w = arg;
  uint8_t pt[4096], ct[4096], back[4096], tag[MAX_TAG];
  uint64_t s;
  unsigned i;

  for (i = 0; i < 300; i++) {
    s = (uint64_t) (w->id * 1000 + i) * 8;
    fill (pt, sizeof pt, w->id * 977 + i);
    if (aead_sector_encrypt (w->a, s, pt, ct, tag) != 0 ||
        aead_sector_decrypt (w->a, s, ct, back, tag) != 0 ||
        memcmp (pt, back, sizeof pt) != 0)
      w->bad++;
    tag[0] ^= 1;
    if (aead_sector_decrypt (w->a, s, ct, back, tag) != -EILSEQ)
      w->bad++;
  }
  return NULL;
}

static void
test_threads (const struct mode *m)
{
  struct aead_sector *a = make (m, 4096, true);
  pthread_t threads[6];
  struct worker workers[6];
  unsigned i;
  int bad = 0;

  if (a == NULL)
    return;
  for (i = 0; i < 6; i++) {
    workers[i] = (struct worker) { .a = a, .id = i };
    REQUIRE (pthread_create (&threads[i], NULL, work, &workers[i]) == 0,
             "pthread_create");
  }
  for (i = 0; i < 6; i++) {
    pthread_join (threads[i], NULL);
    bad += workers[i].bad;
  }
  CHECK_MSG (bad == 0, "%s: %d bad sectors from threads", m->cipher, bad);
  aead_sector_free (a);
}

int
main (void)
{
  test_kernel_text ();
  test_refusals ();
  test_modes ();
  test_authenc_xts_reference (512, false, 0);
  test_authenc_xts_reference (4096, true, 0);
  test_authenc_xts_reference (4096, false, 0);
  test_authenc_xts_reference (4096, true, 64);
  test_authenc_xts_reference (512, false, 3);
  test_authenc_essiv_reference ();
  test_authenc_random_reference ();
  test_aead_reference ("aes-gcm-random", "aead", "AES-256-GCM");
  test_aead_reference ("chacha20-random", "poly1305", "ChaCha20-Poly1305");
  test_truncated_tags ();
  test_iv_hook_refused ();
  test_threads (&modes[0]);
  test_threads (&modes[8]);
  test_threads (&modes[10]);
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("aead: all %u checks passed\n", checks);
  return 0;
}
