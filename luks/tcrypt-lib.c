/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libcryptsetup's own reading of a TCRYPT header, where it can: with
 * OpenSSL and no AF_ALG sockets, crypt_load (CRYPT_TCRYPT) succeeds
 * only when the first chain it tries (AES) is the volume's, and gives
 * up at the first cipher OpenSSL lacks.  When it succeeds, its cipher,
 * volume key and offsets make the table, and our own reading (which
 * alone gives the volume's size) must agree with them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <libcryptsetup.h>
#include <openssl/crypto.h>

#include "../common/log.h"
#include "internal.h"
#include "tcrypt.h"

/* cryptsetup open --type tcrypt's flags (2.4 and later: VeraCrypt's
 * derivations tried by default). */
static uint32_t
load_flags (const struct luks_unlock_params *p)
{
  return CRYPT_TCRYPT_LEGACY_MODES | CRYPT_TCRYPT_VERA_MODES
    | (p->tcrypt_hidden ? CRYPT_TCRYPT_HIDDEN_HEADER : 0)
    | (p->tcrypt_system ? CRYPT_TCRYPT_SYSTEM_HEADER : 0)
    | (p->tcrypt_backup ? CRYPT_TCRYPT_BACKUP_HEADER : 0);
}

static int
fill (struct crypt_device *cd, struct tcrypt_lib *lib)
{
  size_t key_size = sizeof lib->key;
  int n;

  n = snprintf (lib->spec, sizeof lib->spec, "%s-%s", crypt_get_cipher (cd),
                crypt_get_cipher_mode (cd));
  if (n < 0 || (size_t) n >= sizeof lib->spec
      || crypt_volume_key_get (cd, CRYPT_ANY_SLOT, (char *) lib->key,
                               &key_size, NULL, 0) < 0)
    return -1;
  lib->key_size = key_size;
  lib->offset = crypt_get_data_offset (cd);
  lib->iv_offset = crypt_get_iv_offset (cd);
  return 0;
}

/* Key files are read twice, by libcryptsetup and by us: only regular
 * files can be (a pipe, /dev/fd/N, gives its bytes once). */
static bool
keyfiles_rereadable (const struct luks_unlock_params *p)
{
  struct stat st;
  size_t i;

  for (i = 0; i < p->keyfiles_count; i++)
    if (stat (p->keyfiles[i], &st) == -1 || !S_ISREG (st.st_mode))
      return false;
  return true;
}

int
tcrypt_lib_load (const struct luks_unlock_params *p, struct tcrypt_lib *lib)
{
  struct crypt_params_tcrypt tp = {
    .passphrase = p->passphrase,
    .passphrase_size = p->passphrase ? p->passphrase_size : 0,
    .keyfiles = (const char **) p->keyfiles,
    .keyfiles_count = p->keyfiles_count,
    .hash_name = p->tcrypt_hash,
    .flags = load_flags (p),
    .veracrypt_pim = p->veracrypt_pim,
  };
  struct crypt_device *cd = NULL;
  int r;

  memset (lib, 0, sizeof *lib);
  if (!keyfiles_rereadable (p)) {
    nbdkit_debug ("TCRYPT: a key file is not a regular file: only dmcrypt "
                  "reads the header");
    return 0;
  }
  luks_log_start ();
  crypt_metadata_locking (NULL, 0);
  r = crypt_init (&cd, p->data_path);
  if (r == 0)
    r = crypt_load (cd, CRYPT_TCRYPT, &tp);
  if (r == 0)
    r = fill (cd, lib);
  crypt_free (cd);
  if (r < 0) {
    OPENSSL_cleanse (lib->key, sizeof lib->key);
    nbdkit_debug ("TCRYPT: libcryptsetup cannot read the header (%s); "
                  "reading it ourselves", strerror (r == -1 ? EINVAL : -r));
    return 0;
  }
  nbdkit_debug ("TCRYPT: libcryptsetup reads the header: %s", lib->spec);
  return 1;
}
