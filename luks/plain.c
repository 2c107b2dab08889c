/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Plain-mode key derivation (plain.h).  libcryptsetup computes the
 * hashed key for a CRYPT_PLAIN context with no device at all:
 * crypt_volume_key_get runs the same "hashalot" code as activation. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "../crypto/secmem.h"
#include "internal.h"
#include "plain.h"

static int
check_key_size (size_t key_size)
{
  if (key_size == 0 || key_size > PLAIN_MAX_KEY_BYTES)
    {
      nbdkit_error ("key-size: %zu bits is out of range (8 to %d)",
                    key_size * 8, PLAIN_MAX_KEY_BYTES * 8);
      return -1;
    }
  return 0;
}

/* cryptsetup's CLI turns hash "plain" into no hash at all: the
 * passphrase is cut or zero-padded to the key size. */
static int
unhashed_key (size_t key_size, const char *passphrase,
              size_t passphrase_size, uint8_t *key)
{
  memcpy (key, passphrase,
          passphrase_size < key_size ? passphrase_size : key_size);
  return 0;
}

static int
hashed_key (const char *hash, size_t key_size, const char *passphrase,
            size_t passphrase_size, uint8_t *key)
{
  struct crypt_params_plain cp = { .hash = hash, .sector_size = 512 };
  struct crypt_device *cd = NULL;
  size_t got = key_size;
  int r;

  /* The cipher only names the context; the hash makes the key. */
  r = crypt_init (&cd, NULL);
  if (r == 0)
    r = crypt_format (cd, CRYPT_PLAIN, "aes", "cbc-plain", NULL, NULL,
                      key_size, &cp);
  if (r == 0)
    r = crypt_volume_key_get (cd, CRYPT_ANY_SLOT, (char *) key, &got,
                              passphrase, passphrase_size);
  crypt_free (cd);
  /* libcryptsetup's last word here is a generic "Cannot retrieve
   * volume key"; the causes are these two. */
  if (r < 0 || got != key_size)
    {
      nbdkit_error ("hash=%s: cannot hash the passphrase: an unknown hash, "
                    "or a hash length over the key size", hash);
      return -1;
    }
  return 0;
}

int
plain_key_from_passphrase (const char *hash, size_t key_size,
                           const char *passphrase, size_t passphrase_size,
                           uint8_t **key)
{
  int r;

  if (check_key_size (key_size) == -1)
    return -1;
  if ((*key = secmem_alloc (key_size)) == NULL)
    {
      nbdkit_error ("secmem_alloc: %m");
      return -1;
    }
  luks_log_start ();
  if (strcmp (hash, "plain") == 0)
    r = unhashed_key (key_size, passphrase, passphrase_size, *key);
  else
    r = hashed_key (hash, key_size, passphrase, passphrase_size, *key);
  if (r == -1)
    {
      secmem_free (*key, key_size);
      *key = NULL;
    }
  return r;
}

int
plain_key_from_file (const char *path, uint64_t offset, size_t key_size,
                     uint8_t **key)
{
  char *bytes = NULL;
  size_t got = 0;
  const char *why;
  int fd;

  if (check_key_size (key_size) == -1)
    return -1;
  /* Opened by hand only for a message with errno in it. */
  if ((fd = open (path, O_RDONLY | O_CLOEXEC)) == -1)
    {
      nbdkit_error ("key-file %s: %m", path);
      return -1;
    }
  close (fd);
  luks_log_start ();
  if (crypt_keyfile_device_read (NULL, path, &bytes, &got, offset,
                                 key_size, 0) < 0 || got != key_size)
    {
      why = luks_log_last_error ();
      nbdkit_error ("key-file %s: %s (a plain key file holds key-size "
                    "bits, %zu bytes, from keyfile-offset)", path,
                    why ? why : "cannot read the key", key_size);
      crypt_safe_free (bytes);
      return -1;
    }
  *key = secmem_dup (bytes, key_size);
  crypt_safe_free (bytes);
  if (*key == NULL)
    {
      nbdkit_error ("secmem_dup: %m");
      return -1;
    }
  return 0;
}
