/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unlocking a keyslot: passphrase or key file in, volume key out.  The
 * key goes straight into secmem; the key file's contents stay in
 * libcryptsetup's own wiped allocation. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "../crypto/secmem.h"
#include "internal.h"

/* A key-slot given by the user must exist, be in use and open the data
 * segment: libcryptsetup would hand back an unbound slot's key, which
 * is not the volume key. */
static int
check_key_slot (struct crypt_device *cd, int slot)
{
  int max = crypt_keyslot_max (crypt_get_type (cd));

  if (slot == CRYPT_ANY_SLOT)
    return 0;
  if (slot < 0 || slot >= max)
    {
      nbdkit_error ("key-slot %d is out of range (0..%d for %s)",
                    slot, max - 1, crypt_get_type (cd));
      return -1;
    }
  switch (crypt_keyslot_status (cd, slot))
    {
    case CRYPT_SLOT_ACTIVE:
    case CRYPT_SLOT_ACTIVE_LAST:
      return 0;
    case CRYPT_SLOT_INACTIVE:
      nbdkit_error ("keyslot %d is not in use", slot);
      return -1;
    case CRYPT_SLOT_UNBOUND:
      nbdkit_error ("keyslot %d is not bound to the data segment", slot);
      return -1;
    default:
      nbdkit_error ("keyslot %d is invalid", slot);
      return -1;
    }
}

/* Reads the key file as cryptsetup --key-file does (offset, size, no
 * newline handling).  *SECRET is crypt_safe_alloc'd. */
static int
read_key_file (struct crypt_device *cd, const struct luks_unlock_params *p,
               char **secret, size_t *secret_size)
{
  const char *why;
  int fd;

  /* Opened once by hand only for a message with errno in it. */
  fd = open (p->keyfile, O_RDONLY | O_CLOEXEC);
  if (fd == -1)
    {
      nbdkit_error ("key file %s: %m", p->keyfile);
      return -1;
    }
  close (fd);
  if (crypt_keyfile_device_read (cd, p->keyfile, secret, secret_size,
                                 p->keyfile_offset, p->keyfile_size, 0) < 0)
    {
      why = luks_log_last_error ();
      nbdkit_error ("key file %s: %s", p->keyfile,
                    why ? why : "cannot read the key");
      return -1;
    }
  return 0;
}

static void
report_unlock_error (struct crypt_device *cd,
                     const struct luks_unlock_params *p, int r)
{
  const char *what = p->keyfile ? "key file" : "passphrase";
  const char *why = luks_log_last_error (), *type = crypt_get_type (cd);
  bool is_luks = strncmp (type, "LUKS", 4) == 0;
  const char *type_name = strcmp (type, CRYPT_BITLK) == 0 ? "BitLocker"
                          : "FileVault2";

  /* FileVault2 and BitLocker have no keyslots: a key that does not
   * unwrap is -EPERM (BitLocker: -ENOTSUP when only keys it cannot use
   * were left to try). */
  if ((r == -EPERM || r == -ENOTSUP) && !is_luks)
    nbdkit_error ("wrong %s: it does not unlock the %s volume%s%s",
                  what, type_name, p->wrong_key_hint ? "; " : "",
                  p->wrong_key_hint ? p->wrong_key_hint : "");
  /* -ENOENT: the last slot tried could not open the data segment. */
  else if ((r == -EPERM || r == -ENOENT) && p->key_slot == CRYPT_ANY_SLOT)
    nbdkit_error ("wrong passphrase or key file: no keyslot matched%s%s",
                  p->wrong_key_hint ? "; " : "",
                  p->wrong_key_hint ? p->wrong_key_hint : "");
  else if (r == -EPERM)
    nbdkit_error ("keyslot %d did not accept the %s%s%s", p->key_slot, what,
                  p->wrong_key_hint ? "; " : "",
                  p->wrong_key_hint ? p->wrong_key_hint : "");
  else if (r == -ENOENT)
    nbdkit_error ("keyslot %d cannot open the data segment", p->key_slot);
  else
    nbdkit_error ("cannot unlock a keyslot: %s",
                  why ? why : strerror (-r));
}

int
luks_key_by_secret (struct crypt_device *cd,
                    const struct luks_unlock_params *p, int slot,
                    const char *secret, size_t secret_size, uint8_t *key,
                    size_t *key_size)
{
  struct luks_unlock_params one = *p;
  size_t size = *key_size;
  int r;

  one.key_slot = slot;
  r = crypt_volume_key_get (cd, slot, (char *) key, key_size, secret,
                            secret_size);
  /* Anything but a wrong key: most likely a keyslot cipher that
   * libcryptsetup would decrypt through device-mapper. */
  if (r < 0 && r != -EPERM && r != -ENOENT && r != -ENOMEM
      && strncmp (crypt_get_type (cd), "LUKS", 4) == 0)
    {
      *key_size = size;
      r = luks_own_unlock (cd, &one, secret, secret_size, key, size);
      if (r == -1)
        return LUKS_KEY_REPORTED;
      if (r == -2)
        r = -EPERM;
    }
  return r;
}

int
luks_fetch_volume_key (struct crypt_device *cd,
                       const struct luks_unlock_params *p,
                       struct crypt_table *t)
{
  size_t key_size = crypt_get_volume_key_size (cd);   /* bytes */
  char *file_secret = NULL;
  size_t file_secret_size = 0;
  const char *secret = p->passphrase;
  size_t secret_size = p->passphrase_size;
  int r;

  if (key_size == 0)
    {
      nbdkit_error ("LUKS header declares no volume key size");
      return -1;
    }
  if (check_key_slot (cd, p->key_slot) == -1)
    return -1;
  if (p->keyfile != NULL)
    {
      if (read_key_file (cd, p, &file_secret, &file_secret_size) == -1)
        return -1;
      secret = file_secret;
      secret_size = file_secret_size;
    }
  /* t->key_size is the allocation's size from here on, so that
   * crypt_table_free releases it whatever happens next. */
  if (luks_table_key_alloc (t, key_size) == -1)
    {
      crypt_safe_free (file_secret);
      return -1;
    }
  r = luks_key_by_secret (cd, p, p->key_slot, secret, secret_size, t->key,
                          &key_size);
  crypt_safe_free (file_secret);
  if (r == LUKS_KEY_REPORTED)
    return -1;
  if (r < 0)
    {
      report_unlock_error (cd, p, r);
      return -1;
    }
  if (key_size != t->key_size)
    {
      nbdkit_error ("keyslot %d holds a %zu-byte key, not the %zu-byte "
                    "volume key", r, key_size, t->key_size);
      return -1;
    }
  return r;
}

int
luks_read_secret (struct crypt_device *cd, const struct luks_unlock_params *p,
                  const char **secret, size_t *secret_size, char **to_free)
{
  *to_free = NULL;
  *secret = p->passphrase;
  *secret_size = p->passphrase_size;
  if (p->keyfile == NULL)
    return 0;
  if (read_key_file (cd, p, to_free, secret_size) == -1)
    return -1;
  *secret = *to_free;
  return 0;
}

int
luks_table_key_alloc (struct crypt_table *t, size_t key_size)
{
  if (t->key != NULL)
    return 0;
  t->key = secmem_alloc (key_size);
  if (t->key == NULL)
    {
      nbdkit_error ("secmem_alloc: %m");
      return -1;
    }
  t->key_size = key_size;
  return 0;
}
