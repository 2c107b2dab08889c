/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our own keyslot unlock, for keyslots whose cipher libcryptsetup's
 * userspace crypto lacks (Serpent, Twofish, LRW, ESSIV with Whirlpool,
 * …): it decrypts those through a temporary dm-crypt device, which is
 * not there without device-mapper.  The steps are LUKS's own: derive a
 * key from the passphrase (PBKDF2 or Argon2), decrypt the keyslot area
 * with crypto/'s sector cipher (512-byte sectors counted from the start
 * of the area), merge the anti-forensic stripes (af.c), and accept the
 * result only if it matches the header's digest of the volume key.
 *
 * What libcryptsetup exposes comes from it (crypt_keyslot_area,
 * crypt_keyslot_get_encryption, crypt_keyslot_get_pbkdf); salts,
 * stripes and the digest come from the header: the LUKS1 binary header
 * (luks1-hdr.c) or the LUKS2 JSON (luks2-keyslot.c). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "../common/log.h"
#include "../crypto/cipher.h"
#include "../crypto/secmem.h"
#include "internal.h"

#define AREA_SECTOR_BYTES 512

/* Reads BYTES at OFFSET of PATH into BUF. */
static int
read_area (const char *path, uint64_t offset, uint8_t *buf, size_t bytes)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  size_t done = 0;
  ssize_t n;

  if (fd == -1) {
    nbdkit_error ("%s: %m", path);
    return -1;
  }
  while (done < bytes) {
    n = pread (fd, buf + done, bytes - done, (off_t) (offset + done));
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      nbdkit_error ("%s: reading the keyslot area: %m", path);
      close (fd);
      return -1;
    }
    done += (size_t) n;
  }
  close (fd);
  return 0;
}

static int
derive (const struct luks_own_keyslot *ks, const char *secret,
        size_t secret_bytes, uint8_t *key)
{
  if (strcmp (ks->kdf, CRYPT_KDF_PBKDF2) == 0)
    return luks_pbkdf2 (ks->kdf_hash, secret, secret_bytes, ks->salt,
                        ks->salt_bytes, ks->iterations, key,
                        ks->area_key_bytes);
  return luks_argon2 (ks->kdf, secret, secret_bytes, ks->salt,
                      ks->salt_bytes, ks->iterations, ks->memory_kib,
                      ks->threads, key, ks->area_key_bytes);
}

/* The area's stripes decrypted into SPLIT (AREA_BYTES, whole sectors). */
static int
decrypt_area (const char *path, const struct luks_own_keyslot *ks,
              const uint8_t *key, uint8_t *split, size_t area_bytes)
{
  struct sector_cipher_params cp = {
    .spec = ks->cipher, .key = key, .key_size = ks->area_key_bytes,
    .sector_size = AREA_SECTOR_BYTES, .iv_offset = 0,
  };
  struct sector_cipher *c;
  int r;

  if (read_area (path, ks->area_offset, split, area_bytes) == -1)
    return -1;
  c = sector_cipher_new (&cp);
  if (c == NULL)
    return -1;
  r = sector_cipher_decrypt (c, split, split, area_bytes, 0);
  sector_cipher_free (c);
  return r;
}

/* Whether KEY is the volume key by the header's digest. */
static int
digest_matches (const struct luks_own_digest *d, const uint8_t *key,
                size_t key_bytes)
{
  uint8_t check[LUKS_OWN_DIGEST_MAX];

  if (luks_pbkdf2 (d->hash, key, key_bytes, d->salt, d->salt_bytes,
                   d->iterations, check, d->digest_bytes) == -1)
    return -1;
  return CRYPTO_memcmp (check, d->digest, d->digest_bytes) == 0;
}

int
luks_own_keyslot_open (const char *path, const struct luks_own_keyslot *ks,
                       const struct luks_own_digest *d, const char *secret,
                       size_t secret_bytes, uint8_t *volume_key,
                       size_t key_bytes)
{
  size_t split_bytes = key_bytes * ks->stripes;
  size_t area_bytes = (split_bytes + AREA_SECTOR_BYTES - 1) /
    AREA_SECTOR_BYTES * AREA_SECTOR_BYTES;
  uint8_t *key = NULL, *split = NULL;
  int r = -1;

  /* Before any allocation: a hostile header's stripe count must not
   * size one. */
  if (ks->stripes == 0 || split_bytes / ks->stripes != key_bytes ||
      area_bytes > ks->area_bytes) {
    nbdkit_error ("keyslot %d: %u stripes of a %zu-byte key do not fit "
                  "its %zu-byte area", ks->slot, ks->stripes, key_bytes,
                  ks->area_bytes);
    return -1;
  }
  key = secmem_alloc (ks->area_key_bytes);
  split = secmem_alloc (area_bytes);
  if (key == NULL || split == NULL) {
    nbdkit_error ("secmem_alloc: %m");
    goto out;
  }
  if (derive (ks, secret, secret_bytes, key) == -1 ||
      decrypt_area (path, ks, key, split, area_bytes) == -1 ||
      luks_af_merge (ks->af_hash, split, key_bytes, ks->stripes,
                     volume_key) == -1)
    goto out;
  r = digest_matches (d, volume_key, key_bytes);
 out:
  secmem_free (key, ks->area_key_bytes);
  secmem_free (split, area_bytes);
  return r;
}
