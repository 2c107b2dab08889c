/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loop-AES key files (loopaes.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "../common/log.h"
#include "../crypto/secmem.h"
#include "internal.h"
#include "loopaes.h"

/* _crypt_format_loopaes: "Invalid key size" above 1024 bytes. */
#define LOOPAES_MAX_KEY_BYTES 1024
#define GPG_PROBE_BYTES 100

/* LOOPAES_parse_keyfile: an encrypted key file is refused by name. */
static bool
is_gpg (const char *bytes, size_t len)
{
  size_t probe = len - 1 < GPG_PROBE_BYTES ? len - 1 : GPG_PROBE_BYTES;

  return memmem (bytes, probe, "BEGIN PGP MESSAGE", 17) != NULL;
}

int
loopaes_parse (char *bytes, size_t len, const char **keys, size_t *key_len)
{
  size_t lens[LOOPAES_MAX_KEYS], off = 0, i;
  int n = 0;

  if (len == 0 || is_gpg (bytes, len)) {
    nbdkit_error ("keyfile: %s", len == 0 ? "the loop-AES key file is empty"
                  : "a GPG-encrypted loop-AES key file: decrypt it first "
                  "(gpg --decrypt KEYFILE), then give it as keyfile=");
    return -1;
  }
  /* Lines end at '\n' or '\r'; the last must end too, and blank lines
   * between keys are skipped. */
  for (i = 0; i < len; i++)
    if (bytes[i] == '\n' || bytes[i] == '\r')
      bytes[i] = '\0';
  while (off < len && n < LOOPAES_MAX_KEYS) {
    keys[n] = bytes + off;
    lens[n] = strnlen (bytes + off, len - off);
    off += lens[n];
    if (off == len) {
      nbdkit_error ("keyfile: not a loop-AES key file (key %d has no end "
                    "of line)", n + 1);
      return -1;
    }
    while (off < len && bytes[off] == '\0')
      off++;
    n++;
  }
  for (i = 0; i < (size_t) n; i++)
    if (lens[i] != lens[0] || lens[i] == 0)
      break;
  if (off != len || i != (size_t) n || (n != 1 && n != 64 && n != 65)) {
    nbdkit_error ("keyfile: not a loop-AES key file (it needs 1, 64 or 65 "
                  "lines, all of one length)");
    return -1;
  }
  *key_len = lens[0];
  return n;
}

/* LOOPAES_parse_keyfile's defaults: the hash by the key size. */
static const char *
default_hash (size_t key_bytes)
{
  return key_bytes == 16 ? "sha256" : key_bytes == 24 ? "sha384"
    : key_bytes == 32 ? "sha512" : NULL;
}

/* hash_keys: each key's hash cut to KEY_BYTES, its first byte tweaked
 * by the count. */
static int
hash_keys (const char *hash, const char **keys, size_t key_len, int count,
           size_t key_bytes, uint8_t *out)
{
  uint8_t tweak = count == 64 ? 0x55 : count == 65 ? 0xf4 : 0;
  uint8_t digest[EVP_MAX_MD_SIZE];
  EVP_MD *md = luks_kdf_fetch_hash (hash);
  unsigned got = 0;
  int i, r = -1;

  if (md == NULL || (size_t) EVP_MD_get_size (md) < key_bytes) {
    nbdkit_error ("hash: %s %s", hash, md == NULL ? "is not a known hash"
                  : "is shorter than the key size");
    goto out;
  }
  for (i = 0; i < count; i++) {
    if (EVP_Digest (keys[i], key_len, digest, &got, md, NULL) != 1) {
      ERR_clear_error ();
      nbdkit_error ("hash: %s failed", hash);
      goto out;
    }
    memcpy (out + i * key_bytes, digest, key_bytes);
    out[i * key_bytes] ^= tweak;
  }
  r = 0;
 out:
  OPENSSL_cleanse (digest, sizeof digest);
  EVP_MD_free (md);
  return r;
}

/* The key file's bytes, as crypt_activate_by_keyfile_device_offset
 * reads them, into secmem *BYTES (*LEN bytes, *LEN + 1 allocated). */
static int
read_keyfile (const struct loopaes_params *p, char **bytes, size_t *len)
{
  char *raw = NULL;
  const char *why;
  int fd;

  /* Opened by hand only for a message with errno in it. */
  if ((fd = open (p->keyfile, O_RDONLY | O_CLOEXEC)) == -1) {
    nbdkit_error ("keyfile %s: %m", p->keyfile);
    return -1;
  }
  close (fd);
  luks_log_start ();
  if (crypt_keyfile_device_read (NULL, p->keyfile, &raw, len,
                                 p->keyfile_offset, p->keyfile_size,
                                 0) < 0) {
    why = luks_log_last_error ();
    nbdkit_error ("keyfile %s: %s", p->keyfile,
                  why ? why : "cannot read the key file");
    return -1;
  }
  *bytes = secmem_alloc (*len + 1);
  if (*bytes != NULL)
    memcpy (*bytes, raw, *len);
  crypt_safe_free (raw);
  if (*bytes == NULL) {
    nbdkit_error ("secmem_alloc: %m");
    return -1;
  }
  return 0;
}

static int
check_params (const struct loopaes_params *p, size_t key_bytes,
              const char **hash)
{
  if (p->key_bits % 8 != 0 || key_bytes == 0
      || key_bytes > LOOPAES_MAX_KEY_BYTES) {
    nbdkit_error ("key-size: %u bits is not a loop-AES key size (8 to %d, "
                  "whole bytes)", p->key_bits, LOOPAES_MAX_KEY_BYTES * 8);
    return -1;
  }
  *hash = p->hash ? p->hash : default_hash (key_bytes);
  if (*hash == NULL) {
    nbdkit_error ("key-size: a %zu-bit key needs hash= (loop-AES's "
                  "defaults cover 128, 192 and 256 bits)", key_bytes * 8);
    return -1;
  }
  return 0;
}

static int
make_spec (const struct loopaes_params *p, int count, char **spec)
{
  const char *cipher = p->cipher ? p->cipher : LOOPAES_DEFAULT_CIPHER;

  /* LOOPAES_activate: version 1 is plain CBC, 2 and 3 lmk. */
  if ((count == 1 ? asprintf (spec, "%s-cbc-plain64", cipher)
       : asprintf (spec, "%s:64-cbc-lmk", cipher)) < 0) {
    *spec = NULL;
    nbdkit_error ("asprintf: %m");
    return -1;
  }
  return 0;
}

int
loopaes_key (const struct loopaes_params *p, char **spec, uint8_t **key,
             size_t *key_size, unsigned *key_count)
{
  size_t key_bytes = (p->key_bits ? p->key_bits
                      : LOOPAES_DEFAULT_KEY_BITS) / 8, len = 0, key_len;
  const char *keys[LOOPAES_MAX_KEYS], *hash;
  char *bytes = NULL;
  int n = -1;

  *spec = NULL;
  *key = NULL;
  if (check_params (p, key_bytes, &hash) == -1
      || read_keyfile (p, &bytes, &len) == -1)
    return -1;
  n = loopaes_parse (bytes, len, keys, &key_len);
  if (n > 0 && (*key = secmem_alloc (n * key_bytes)) == NULL) {
    nbdkit_error ("secmem_alloc: %m");
    n = -1;
  }
  if (n > 0 && (hash_keys (hash, keys, key_len, n, key_bytes, *key) == -1
                || make_spec (p, n, spec) == -1)) {
    secmem_free (*key, n * key_bytes);
    *key = NULL;
    n = -1;
  }
  secmem_free (bytes, len + 1);
  if (n < 0)
    return -1;
  *key_size = n * key_bytes;
  *key_count = n;
  return 0;
}
