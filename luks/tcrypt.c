/* SPDX-License-Identifier: GPL-2.0-or-later */
/* luks_unlock for TrueCrypt and VeraCrypt volumes (LUKS_TCRYPT): the
 * header sector read from where the options say, the header key
 * derived as cryptsetup 2.6 derives it (lib/tcrypt/tcrypt.c,
 * TCRYPT_init_hdr: PBKDF2 over a fixed list of hashes and iteration
 * counts, VeraCrypt's PIM, key files mixed into the passphrase), the
 * header decrypted by tcrypt-hdr.c, and the table that
 * TCRYPT_activate would load: the data offset, IV offset and size
 * rules of TCRYPT_get_data_offset and TCRYPT_get_iv_offset.  A chain
 * of ciphers becomes one cascade mapping (crypto/cascade.h).
 * libcryptsetup reads the header first where it can (tcrypt-lib.c);
 * its table and ours must then be the same. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "../common/log.h"
#include "../crypto/secmem.h"
#include "internal.h"
#include "tcrypt.h"

#define SECTOR_BYTES 512

/* TCRYPT_init_hdr's key derivations, in its order.  VeraCrypt's with a
 * PIM: PIM_CONST + PIM_MULT * PIM iterations. */
static const struct tcrypt_kdf
{
  const char *hash;
  uint32_t iterations;
  bool veracrypt;
  uint32_t pim_const, pim_mult;
} kdfs[] = {
  { "ripemd160", 2000, false, 0, 0 }, { "ripemd160", 1000, false, 0, 0 },
  { "sha512", 1000, false, 0, 0 }, { "whirlpool", 1000, false, 0, 0 },
  { "sha1", 2000, false, 0, 0 },              /* TrueCrypt's CBC modes */
  { "sha512", 500000, true, 15000, 1000 },
  { "whirlpool", 500000, true, 15000, 1000 },
  { "sha256", 500000, true, 15000, 1000 },
  { "sha256", 200000, true, 0, 2048 },          /* system volumes */
  { "ripemd160", 655331, true, 15000, 1000 },
  { "ripemd160", 327661, true, 0, 2048 },       /* system volumes */
};

/* Hashes cryptsetup names that we refuse, with the reason. */
static const struct { const char *hash, *why; } refused_hashes[] = {
  { "stribog512", "Streebog: cryptsetup 2.6.1 cannot open these either" },
  { "blake2s-256", "VeraCrypt 1.26 BLAKE2s: cryptsetup 2.6.1 cannot open "
    "these either" },
  { "argon2id", "VeraCrypt 1.26 Argon2id: cryptsetup 2.6.1 cannot open "
    "these either" },
};

static const char *
data_name (const struct luks_unlock_params *p)
{
  return luks_data_name (p);
}

static int
check_hash (const struct luks_unlock_params *p)
{
  size_t i;

  if (p->tcrypt_hash == NULL)
    return 0;
  for (i = 0; i < sizeof refused_hashes / sizeof refused_hashes[0]; i++)
    if (strcmp (p->tcrypt_hash, refused_hashes[i].hash) == 0) {
      nbdkit_error ("tcrypt-hash: %s is not supported (%s)",
                    p->tcrypt_hash, refused_hashes[i].why);
      return -1;
    }
  for (i = 0; i < sizeof kdfs / sizeof kdfs[0]; i++)
    if (strcmp (p->tcrypt_hash, kdfs[i].hash) == 0)
      return 0;
  nbdkit_error ("tcrypt-hash: unknown hash '%s' (expected sha512, sha256, "
                "whirlpool, ripemd160 or sha1)", p->tcrypt_hash);
  return -1;
}

static int
check_params (const struct luks_unlock_params *p)
{
  if (p->header_path) {
    nbdkit_error ("header: a TCRYPT volume has no detached header");
    return -1;
  }
  if (p->key_slot != -1) {
    nbdkit_error ("key-slot: a TCRYPT volume has no keyslots");
    return -1;
  }
  if (p->tcrypt_system && (p->tcrypt_hidden || p->tcrypt_backup)) {
    nbdkit_error ("tcrypt-system: a system volume has neither a hidden "
                  "nor a backup header here");
    return -1;
  }
  return check_hash (p);
}

/* The header sector at OFFSET (negative: from the end) into SECTOR. */
static int
read_sector (int fd, uint64_t data_size, int64_t offset, uint8_t *sector)
{
  uint64_t at;
  ssize_t n;

  if (offset < 0 && (uint64_t) -offset > data_size)
    return -1;
  at = offset < 0 ? data_size - (uint64_t) -offset : (uint64_t) offset;
  if (at + TCRYPT_HDR_BYTES > data_size)
    return -1;
  n = pread (fd, sector, TCRYPT_HDR_BYTES, at);
  return n == TCRYPT_HDR_BYTES ? 0 : -1;
}

/* Where to look, as TCRYPT_read_phdr: up to two places. */
static unsigned
header_offsets (const struct luks_unlock_params *p, int64_t *offs)
{
  if (p->tcrypt_system)
    offs[0] = TCRYPT_SYSTEM_OFFSET;
  else if (p->tcrypt_hidden && p->tcrypt_backup)
    offs[0] = TCRYPT_HIDDEN_BACKUP_OFFSET;
  else if (p->tcrypt_hidden) {
    offs[0] = TCRYPT_HIDDEN_OFFSET;
    offs[1] = TCRYPT_HIDDEN_OFFSET_OLD;   /* TrueCrypt before 6.0 */
    return 2;
  }
  else if (p->tcrypt_backup)
    offs[0] = TCRYPT_BACKUP_OFFSET;
  else
    offs[0] = 0;
  return 1;
}

/* Mixes the first TCRYPT_KEYFILE_MAX bytes of the key file PATH into
 * POOL (POOL_BYTES).  Returns 0, or -1 after nbdkit_error. */
static int
mix_keyfile (const char *path, uint8_t *pool, size_t pool_bytes)
{
  uint8_t *data = secmem_alloc (TCRYPT_KEYFILE_MAX);
  size_t got = 0;
  ssize_t n = 0;
  int fd = -1;

  if (data == NULL || (fd = open (path, O_RDONLY | O_CLOEXEC)) == -1)
    n = -1;
  /* A pipe (/dev/fd/N) may give it in pieces. */
  while (n != -1 && got < TCRYPT_KEYFILE_MAX
         && (n = read (fd, data + got, TCRYPT_KEYFILE_MAX - got)) > 0)
    got += n;
  if (n == -1)
    nbdkit_error ("key file %s: %m", path);
  else
    tcrypt_pool_add_keyfile (pool, pool_bytes, data, got);
  if (fd != -1)
    close (fd);
  secmem_free (data, TCRYPT_KEYFILE_MAX);
  return n == -1 ? -1 : 0;
}

/* The passphrase with the key files mixed in, as TCRYPT_init_hdr makes
 * it: POOL (VERACRYPT_POOL_BYTES) and its length in *LEN. */
static int
make_secret (const struct luks_unlock_params *p, uint8_t *pool, size_t *len)
{
  size_t pw = p->passphrase ? p->passphrase_size : 0, max, i;

  /* VeraCrypt's pool grows with a passphrase over 64 bytes. */
  max = pw > TCRYPT_POOL_BYTES ? VERACRYPT_POOL_BYTES : TCRYPT_POOL_BYTES;
  if (pw > max) {
    nbdkit_error ("passphrase: longer than the %zu bytes TCRYPT allows",
                  max);
    return -1;
  }
  memset (pool, 0, VERACRYPT_POOL_BYTES);
  for (i = 0; i < p->keyfiles_count; i++)
    if (mix_keyfile (p->keyfiles[i], pool, max) == -1)
      return -1;
  for (i = 0; i < pw; i++)
    pool[i] += (uint8_t) p->passphrase[i];
  *len = p->keyfiles_count ? max : pw;
  return 0;
}

static bool
kdf_wanted (const struct luks_unlock_params *p, const struct tcrypt_kdf *k)
{
  if (p->tcrypt_hash && strcmp (p->tcrypt_hash, k->hash) != 0)
    return false;
  /* With a PIM, TrueCrypt's derivations are not tried. */
  return !p->veracrypt_pim || k->veracrypt;
}

/* Tries every derivation on SECTOR: 1 with *H, 0 for none, -1. */
static int
try_kdfs (const struct luks_unlock_params *p, const uint8_t *sector,
          const uint8_t *secret, size_t secret_len, struct tcrypt_header *h)
{
  uint8_t key[TCRYPT_HDR_KEY_BYTES];
  uint32_t iterations;
  size_t i;
  int r = 0;

  for (i = 0; i < sizeof kdfs / sizeof kdfs[0] && r == 0; i++) {
    if (!kdf_wanted (p, &kdfs[i]))
      continue;
    iterations = p->veracrypt_pim
      ? kdfs[i].pim_const + kdfs[i].pim_mult * p->veracrypt_pim
      : kdfs[i].iterations;
    nbdkit_debug ("TCRYPT: trying PBKDF2-%s, %u iterations", kdfs[i].hash,
                  iterations);
    if (luks_pbkdf2 (kdfs[i].hash, secret, secret_len, sector,
                     TCRYPT_SALT_BYTES, iterations, key, sizeof key) == -1)
      r = -1;
    else
      r = tcrypt_decrypt_header (sector, key, true, h);
    /* TrueCrypt before 4.1: cryptsetup tries its CBC chains (with
     * CRYPT_TCRYPT_LEGACY_MODES, as its tcryptOpen) after the others. */
    if (r == 0 && !kdfs[i].veracrypt)
      r = tcrypt_legacy_decrypt_header (sector, key, h);
  }
  OPENSSL_cleanse (key, sizeof key);
  return r;
}

static void
report_no_match (const struct luks_unlock_params *p)
{
  nbdkit_error ("%s: no TCRYPT %sheader matched: wrong passphrase or key "
                "files%s, or a volume dmcrypt cannot open (%s ciphers, "
                "TrueCrypt's CBC cascades and Blowfish, VeraCrypt's "
                "Argon2, BLAKE2s and Streebog)", data_name (p),
                p->tcrypt_system ? "system " : p->tcrypt_hidden
                ? "hidden " : "", p->veracrypt_pim ? " or PIM" : "",
                tcrypt_unavailable_ciphers);
}

/* Finds and decrypts the header into *H.  Returns 0 or -1. */
static int
find_header (const struct luks_unlock_params *p, uint64_t data_size,
             struct tcrypt_header *h)
{
  uint8_t sector[TCRYPT_HDR_BYTES], secret[VERACRYPT_POOL_BYTES];
  int64_t offs[2];
  unsigned n = header_offsets (p, offs), i;
  size_t secret_len;
  int fd, r = 0;

  fd = open (p->data_path, O_RDONLY | O_CLOEXEC);
  if (fd == -1) {
    nbdkit_error ("%s: %m", data_name (p));
    return -1;
  }
  if (make_secret (p, secret, &secret_len) == -1)
    r = -1;
  for (i = 0; i < n && r == 0; i++)
    if (read_sector (fd, data_size, offs[i], sector) == 0)
      r = try_kdfs (p, sector, secret, secret_len, h);
  close (fd);
  OPENSSL_cleanse (secret, sizeof secret);
  if (r == 0)
    report_no_match (p);
  return r == 1 ? 0 : -1;
}

/* TCRYPT_get_data_offset, in 512-byte sectors. */
static uint64_t
data_offset (const struct luks_unlock_params *p,
             const struct tcrypt_header *h, uint64_t data_size)
{
  bool xts = strncmp (h->chain->mode, "xts", 3) == 0;
  uint64_t old_hidden = (uint64_t) -TCRYPT_HIDDEN_OFFSET_OLD;

  if (p->tcrypt_system)
    return h->mk_offset / SECTOR_BYTES;
  if (xts && h->version < 3)
    return 1;
  if (p->tcrypt_hidden && (!xts || h->version <= 3))
    /* Before header version 4 the hidden volume ends just before its
     * header near the end of the outer one. */
    return data_size < h->hidden_volume_size + old_hidden ? 0
      : (data_size - h->hidden_volume_size - old_hidden) / SECTOR_BYTES;
  return h->mk_offset / SECTOR_BYTES;
}

/* The mapping's length in 512-byte sectors: the header's size of the
 * volume.  A system volume, and headers that give no size (TrueCrypt
 * before 5), run to the end of the device, as device_block_adjust
 * makes a size of 0. */
static uint64_t
data_length (const struct luks_unlock_params *p,
             const struct tcrypt_header *h, uint64_t data_size,
             uint64_t offset)
{
  uint64_t length = (p->tcrypt_hidden ? h->hidden_volume_size
                     : h->volume_size) / SECTOR_BYTES;

  if (length == 0 || p->tcrypt_system)
    return data_size / SECTOR_BYTES > offset
      ? data_size / SECTOR_BYTES - offset : 0;
  return length;
}

static int
fill_table (const struct luks_unlock_params *p,
            const struct tcrypt_header *h, uint64_t data_size,
            struct crypt_table *t)
{
  uint8_t key[TCRYPT_VOLUME_KEY_MAX];
  char spec[64];

  if (h->sector_size != SECTOR_BYTES) {
    nbdkit_error ("%s: TCRYPT sector size %u is not supported",
                  data_name (p), h->sector_size);
    return -1;
  }
  t->offset = data_offset (p, h, data_size);
  t->length = data_length (p, h, data_size, t->offset);
  /* TCRYPT_get_iv_offset: XTS's is the data offset, LRW's 0, CBC's
   * the header's offset of the keys (a hidden volume's too). */
  t->iv_offset = strncmp (h->chain->mode, "lrw", 3) == 0 ? 0
    : strncmp (h->chain->mode, "xts", 3) == 0 ? t->offset
    : h->mk_offset / SECTOR_BYTES;
  t->sector_size = SECTOR_BYTES;
  t->key_size = tcrypt_volume_key (h, key);
  t->key = secmem_dup (key, t->key_size);
  OPENSSL_cleanse (key, sizeof key);
  if (t->key == NULL || tcrypt_cipher_spec (h, spec, sizeof spec) == -1
      || (t->cipher = strdup (spec)) == NULL
      || (t->device = strdup (p->data_path)) == NULL) {
    nbdkit_error ("out of memory");
    return -1;
  }
  return 0;
}

static void
fill_info (const struct tcrypt_header *h, struct luks_info *info)
{
  snprintf (info->type, sizeof info->type, "TCRYPT");
  nbdkit_debug ("TCRYPT: %s header version %u, %s-%s",
                h->veracrypt ? "VeraCrypt" : "TrueCrypt", h->version,
                h->chain->cipher, h->chain->mode);
}

/* Where libcryptsetup read the header too, it must have read what we
 * did: the table is then the one it would activate. */
static int
agree_with_lib (const struct luks_unlock_params *p,
                const struct tcrypt_lib *lib, const struct crypt_table *t)
{
  const char *what = strcmp (lib->spec, t->cipher) != 0 ? "cipher"
    : lib->key_size != t->key_size
      || CRYPTO_memcmp (lib->key, t->key, t->key_size) != 0 ? "volume key"
    : lib->offset != t->offset ? "data offset"
    : lib->iv_offset != t->iv_offset ? "IV offset" : NULL;

  if (what == NULL)
    return 0;
  nbdkit_error ("%s: libcryptsetup and dmcrypt read a different %s from "
                "the TCRYPT header", data_name (p), what);
  return -1;
}

int
tcrypt_unlock (const struct luks_unlock_params *p, uint64_t data_size,
               struct crypt_table *t, struct luks_info *info)
{
  struct tcrypt_header *h;
  struct tcrypt_lib *lib;
  int r, by_lib;

  memset (t, 0, sizeof *t);
  memset (info, 0, sizeof *info);
  if (check_params (p) == -1)
    return -1;
  h = secmem_alloc (sizeof *h);
  lib = secmem_alloc (sizeof *lib);
  if (h == NULL || lib == NULL) {
    nbdkit_error ("secmem_alloc: %m");
    secmem_free (h, sizeof *h);
    secmem_free (lib, sizeof *lib);
    return -1;
  }
  by_lib = tcrypt_lib_load (p, lib);
  r = find_header (p, data_size, h);
  if (r == 0)
    r = fill_table (p, h, data_size, t);
  if (r == 0 && by_lib)
    r = agree_with_lib (p, lib, t);
  if (r == 0)
    fill_info (h, info);
  else
    crypt_table_free (t);
  secmem_free (h, sizeof *h);
  secmem_free (lib, sizeof *lib);
  return r;
}
