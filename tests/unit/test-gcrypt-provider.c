/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libgcrypt provider's AES (crypto/gcrypt_provider.c) against
 * OpenSSL's own: AES-ECB built on libgcrypt's XTS with a zero tweak,
 * and AES-XTS one data unit per update, at every key size, both
 * directions, in place and not, over lengths from one block to past
 * the provider's 1 MiB per libgcrypt call, and through a context copy
 * (each worker thread's), which must key a new handle. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "../../crypto/gcrypt_provider.h"
#include "check.h"

#define MAX_BYTES ((3 << 20) + 4096)

static const size_t lengths[] = {
  16, 32, 240, 512, 4096, 16384, 65536, (1 << 20), (1 << 20) + 16, MAX_BYTES,
};

/* One update of LEN bytes from IN to OUT with CIPHER keyed with KEY (an
 * IV for XTS), or through a copy of that context with COPY. */
static bool
crypt_once (EVP_CIPHER *cipher, const uint8_t *key, const uint8_t *iv,
            bool encrypt, bool copy, uint8_t *out, const uint8_t *in,
            size_t len)
{
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new (), *dup = EVP_CIPHER_CTX_new ();
  EVP_CIPHER_CTX *use = ctx;
  int out_len = 0;
  bool ok = ctx != NULL && dup != NULL &&
    EVP_CipherInit_ex (ctx, cipher, NULL, key, iv, encrypt) == 1 &&
    EVP_CIPHER_CTX_set_padding (ctx, 0) == 1;

  if (ok && copy) {
    ok = EVP_CIPHER_CTX_copy (dup, ctx) == 1;
    use = dup;
  }
  ok = ok && EVP_CipherUpdate (use, out, &out_len, in, (int) len) == 1 &&
    (size_t) out_len == len;
  EVP_CIPHER_CTX_free (ctx);
  EVP_CIPHER_CTX_free (dup);
  return ok;
}

/* NAME from the provider against OpenSSL's, over every length. */
static void
compare (OSSL_LIB_CTX *gcrypt, const char *name, size_t key_bytes,
         uint8_t *in, uint8_t *want, uint8_t *got)
{
  EVP_CIPHER *mine = EVP_CIPHER_fetch (gcrypt, name, NULL);
  EVP_CIPHER *ossl = EVP_CIPHER_fetch (NULL, name, NULL);
  bool xts = strstr (name, "XTS") != NULL;
  uint8_t key[64], iv[16];
  size_t i;
  int dir, way;

  if (!check_that (mine != NULL && ossl != NULL, "%s: not fetched", name))
    goto out;
  CHECK_MSG (EVP_CIPHER_get_key_length (mine) == (int) key_bytes &&
             EVP_CIPHER_get_iv_length (mine) == (xts ? 16 : 0),
             "%s: key %d, IV %d bytes", name,
             EVP_CIPHER_get_key_length (mine),
             EVP_CIPHER_get_iv_length (mine));
  for (i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
    /* XTS's data unit: libgcrypt and OpenSSL both cap it (OpenSSL at
     * 2^20 blocks); dm-crypt's is at most 4096 bytes. */
    if (xts && lengths[i] > 65536)
      continue;
    RAND_bytes (key, sizeof key);
    RAND_bytes (iv, sizeof iv);
    RAND_bytes (in, lengths[i]);
    for (dir = 0; dir < 2; dir++)
      for (way = 0; way < 3; way++) {
        /* way 0: out of place; 1: in place; 2: through a copy. */
        REQUIRE (crypt_once (ossl, key, xts ? iv : NULL, dir == 0, false,
                             want, in, lengths[i]), "OpenSSL's %s", name);
        if (way == 1)
          memcpy (got, in, lengths[i]);
        CHECK_MSG (crypt_once (mine, key, xts ? iv : NULL, dir == 0,
                               way == 2, got, way == 1 ? got : in,
                               lengths[i]) &&
                   memcmp (got, want, lengths[i]) == 0,
                   "%s, %zu bytes, %s, %s: not OpenSSL's bytes", name,
                   lengths[i], dir == 0 ? "encrypt" : "decrypt",
                   way == 0 ? "out of place" : way == 1 ? "in place"
                   : "copied context");
      }
  }
 out:
  EVP_CIPHER_free (mine);
  EVP_CIPHER_free (ossl);
}

int
main (void)
{
  static const struct { const char *name; size_t key_bytes; } algs[] = {
    { "AES-128-ECB", 16 }, { "AES-192-ECB", 24 }, { "AES-256-ECB", 32 },
    { "AES-128-XTS", 32 }, { "AES-256-XTS", 64 },
  };
  OSSL_LIB_CTX *gcrypt = gcrypt_provider_libctx ();
  uint8_t *in = malloc (MAX_BYTES), *want = malloc (MAX_BYTES);
  uint8_t *got = malloc (MAX_BYTES);
  size_t i;

  REQUIRE (in && want && got, "malloc");
  REQUIRE (gcrypt != NULL, "libgcrypt's provider does not load");
  for (i = 0; i < sizeof algs / sizeof algs[0]; i++)
    compare (gcrypt, algs[i].name, algs[i].key_bytes, in, want, got);
  free (in);
  free (want);
  free (got);
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("gcrypt-provider: %u checks passed, AES-ECB and AES-XTS as "
          "OpenSSL's\n", checks);
  return 0;
}
