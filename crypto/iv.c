/* SPDX-License-Identifier: GPL-2.0-or-later */
/* IV generators, byte for byte as drivers/md/dm-crypt.c writes them. */
#include <endian.h>
#include <string.h>

#include <openssl/err.h>

#include "../common/cleanup.h"
#include "../common/log.h"
#include "block_cipher.h"
#include "iv.h"

void
iv_gen_init (struct iv_gen *g, enum iv_mode mode, unsigned block_bytes,
             unsigned sector_bytes)
{
  unsigned log2_block = 0;

  while ((1u << log2_block) < block_bytes)
    log2_block++;
  g->mode = mode;
  /* crypt_ctr_ivmode: "at least a 64 bit sector number should fit" */
  g->iv_bytes = mode == IV_NONE ? 0 : block_bytes < 8 ? 8 : block_bytes;
  g->benbi_shift = 9 - log2_block;
  g->sector_bytes = sector_bytes;
}

static void
put_le64 (uint8_t *p, uint64_t v)
{
  v = htole64 (v);
  memcpy (p, &v, sizeof v);
}

static void
put_be64 (uint8_t *p, uint64_t v)
{
  v = htobe64 (v);
  memcpy (p, &v, sizeof v);
}

void
iv_generate (const struct iv_gen *g, uint64_t iv_sector, uint8_t *iv)
{
  uint32_t le32;

  memset (iv, 0, g->iv_bytes);
  switch (g->mode) {
  case IV_NONE:
  case IV_NULL:
  case IV_LMK:                  /* lmk.c, from the sector's data */
  case IV_TCW:                  /* tcw.c, from the key's IV seed */
    break;
  case IV_PLAIN:
    le32 = htole32 ((uint32_t) iv_sector);   /* upper 32 bits dropped */
    memcpy (iv, &le32, sizeof le32);
    break;
  case IV_PLAIN64:
  case IV_ESSIV:
    put_le64 (iv, iv_sector);
    break;
  case IV_PLAIN64BE:
    put_be64 (iv + g->iv_bytes - 8, iv_sector);
    break;
  case IV_BENBI:
    put_be64 (iv + g->iv_bytes - 8, (iv_sector << g->benbi_shift) + 1);
    break;
  case IV_EBOIV:
  case IV_ELEPHANT:             /* crypt_iv_elephant_gen ends in eboiv */
    put_le64 (iv, iv_sector * g->sector_bytes);
    break;
  }
}

void
iv_generate_run (const struct iv_gen *g, uint64_t iv_sector,
                 uint64_t iv_step, size_t count, uint8_t *ivs)
{
  size_t i;

  /* The bulk paths' IVs (XTS runs, CBC groups): a loop the compiler
   * keeps in registers, rather than a call and a memset per sector. */
  if ((g->mode == IV_PLAIN64 || g->mode == IV_ESSIV) && g->iv_bytes == 16) {
    for (i = 0; i < count; i++, iv_sector += iv_step) {
      put_le64 (ivs + i * 16, iv_sector);
      memset (ivs + i * 16 + 8, 0, 8);
    }
    return;
  }
  for (i = 0; i < count; i++, iv_sector += iv_step)
    iv_generate (g, iv_sector, ivs + i * g->iv_bytes);
}

/* Kernel hash names that ESSIV may name, and OpenSSL's digest for each. */
struct essiv_hash
{
  const char *kernel_name;
  const char *ossl_name;
  size_t salt_bytes;         /* digest bytes the kernel keeps */
};

static const struct essiv_hash essiv_hashes[] = {
  { "md5",      "MD5",       16 },
  { "sha1",     "SHA1",      20 },
  { "rmd160",   "RIPEMD160", 20 },
  { "sha224",   "SHA224",    28 },
  { "sha256",   "SHA256",    32 },
  { "sha384",   "SHA384",    48 },
  { "sha512",   "SHA512",    64 },
  { "sha3-224", "SHA3-224",  28 },
  { "sha3-256", "SHA3-256",  32 },
  { "sha3-384", "SHA3-384",  48 },
  { "sha3-512", "SHA3-512",  64 },
  { "sm3",      "SM3",       32 },
  { "wp256",    "WHIRLPOOL", 32 },   /* crypto/wp512.c: truncated */
  { "wp384",    "WHIRLPOOL", 48 },
  { "wp512",    "WHIRLPOOL", 64 },
};

static const struct essiv_hash *
essiv_hash_lookup (const char *name)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (essiv_hashes); i++)
    if (strcmp (essiv_hashes[i].kernel_name, name) == 0)
      return &essiv_hashes[i];
  return NULL;
}

size_t
iv_essiv_salt_bytes (const char *hash)
{
  const struct essiv_hash *h = essiv_hash_lookup (hash);
  EVP_MD *md;

  if (h == NULL)
    return 0;
  md = block_cipher_fetch_digest (h->ossl_name);
  if (md == NULL)
    return 0;
  EVP_MD_free (md);
  return h->salt_bytes;
}

int
iv_essiv_salt (const char *hash, const uint8_t *key, size_t key_bytes,
               uint8_t *salt)
{
  const struct essiv_hash *h = essiv_hash_lookup (hash);
  uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned digest_bytes = 0;
  EVP_MD *md = NULL;
  int r = -1;

  if (h != NULL)
    md = block_cipher_fetch_digest (h->ossl_name);
  if (md == NULL) {
    nbdkit_error ("unsupported ESSIV hash: %s", hash);
    return -1;
  }
  if (EVP_Digest (key, key_bytes, digest, &digest_bytes, md, NULL) != 1 ||
      digest_bytes < h->salt_bytes) {
    ERR_clear_error ();
    nbdkit_error ("ESSIV hash %s failed", hash);
    goto out;
  }
  memcpy (salt, digest, h->salt_bytes);
  r = 0;
 out:
  explicit_bzero (digest, sizeof digest);
  EVP_MD_free (md);
  return r;
}
