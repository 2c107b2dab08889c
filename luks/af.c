/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LUKS anti-forensic merge (the LUKS1 specification, section 2.4; the
 * same in LUKS2): the key was split into STRIPES blocks, and
 *
 *   d = 0;  for each of the first stripes-1 blocks s:  d = H (d ^ s)
 *   key = d ^ last block
 *
 * where H, "diffuse", hashes the block in digest-sized pieces, piece i
 * prefixed by i as a 32-bit big-endian number, the last piece cut to
 * what is left.  libcryptsetup does not export it. */
#include <endian.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "../common/log.h"
#include "../crypto/secmem.h"
#include "internal.h"

static int
diffuse (const EVP_MD *md, uint8_t *block, size_t bytes)
{
  size_t digest_bytes = (size_t) EVP_MD_get_size (md), off, n;
  uint8_t digest[EVP_MAX_MD_SIZE];
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  uint32_t i, be;
  int r = -1;

  if (ctx == NULL)
    return -1;
  for (i = 0, off = 0; off < bytes; i++, off += n) {
    n = bytes - off < digest_bytes ? bytes - off : digest_bytes;
    be = htobe32 (i);
    if (EVP_DigestInit_ex (ctx, md, NULL) != 1 ||
        EVP_DigestUpdate (ctx, &be, sizeof be) != 1 ||
        EVP_DigestUpdate (ctx, block + off, n) != 1 ||
        EVP_DigestFinal_ex (ctx, digest, NULL) != 1)
      goto out;
    memcpy (block + off, digest, n);
  }
  r = 0;
 out:
  explicit_bzero (digest, sizeof digest);
  EVP_MD_CTX_free (ctx);
  return r;
}

int
luks_af_merge (const char *hash, const uint8_t *split, size_t key_bytes,
               unsigned stripes, uint8_t *key)
{
  EVP_MD *md = luks_kdf_fetch_hash (hash);
  unsigned s;
  size_t i;
  int r = -1;

  if (md == NULL) {
    nbdkit_error ("unsupported hash for the anti-forensic split: %s", hash);
    return -1;
  }
  if (stripes == 0)
    goto out;
  memset (key, 0, key_bytes);
  for (s = 0; s + 1 < stripes; s++) {
    for (i = 0; i < key_bytes; i++)
      key[i] ^= split[s * key_bytes + i];
    if (diffuse (md, key, key_bytes) == -1)
      goto out;
  }
  for (i = 0; i < key_bytes; i++)
    key[i] ^= split[s * key_bytes + i];
  r = 0;
 out:
  if (r == -1)
    nbdkit_error ("anti-forensic merge with %s failed", hash);
  ERR_clear_error ();
  EVP_MD_free (md);
  return r;
}
