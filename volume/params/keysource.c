/* Which parameters go together, and the plain-mode key when it comes
 * from a passphrase or a key file (cryptsetup open --type plain). */
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../crypto/secmem.h"
#include "../../luks/plain.h"
#include "../volume.h"

/* A combination the parameters must not be in, and what to say. */
struct rule
{
  bool broken;
  const char *error;
};

static int
first_broken (const struct rule *rules, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (rules[i].broken) {
      nbdkit_error ("%s", rules[i].error);
      return -1;
    }
  return 0;
}

static int
check_plain (void)
{
  int sources = !!params.table + !!params.key + !!params.keyfile
    + !!params.passphrase;
  bool geometry = params.cipher || params.have_offset
    || params.have_iv_offset || params.sector_size || params.hash
    || params.key_bits;
  const struct rule rules[] = {
    { params.header || params.key_slot >= 0,
      "key-slot and header are for LUKS, not type=plain" },
    { params.table && (sources > 1 || geometry),
      "table= already holds cipher, key, offsets and sector size: give "
      "either table= or cipher= with a key" },
    { sources == 0,
      "type=plain needs a key: table=, key=, key-file= or passphrase=" },
    { sources > 1, "give one plain-mode key: key=, key-file= or "
      "passphrase=" },
    { params.key && !params.cipher, "key= needs cipher= (or a whole "
      "table=)" },
    { params.hash && !params.passphrase, "hash= is for passphrase=: a "
      "plain key= or key-file= is never hashed" },
    { params.keyfile_size, "keyfile-size: a plain key file is read for "
      "exactly key-size bits (use key-size=)" },
    { params.keyfile_offset && !params.keyfile,
      "keyfile-offset needs key-file=" },
  };

  if (first_broken (rules, sizeof rules / sizeof rules[0]) == -1)
    return -1;
  if (params.key && params.key_bits && params.key_bits != params.key_size * 8) {
    nbdkit_error ("key-size=%u but key= holds %zu bits", params.key_bits,
                  params.key_size * 8);
    return -1;
  }
  return 0;
}

/* TrueCrypt/VeraCrypt: a passphrase, key files, or both; an absent
 * passphrase is an empty one. */
static int
check_tcrypt (void)
{
  const struct rule rules[] = {
    { params.header || params.key_slot >= 0,
      "key-slot and header are for LUKS, not type=tcrypt" },
    { params.keyfile_offset || params.keyfile_size,
      "keyfile-offset and keyfile-size are for LUKS and plain key files; "
      "TCRYPT key files are read whole" },
    { params.table || params.key || params.cipher || params.have_offset
      || params.have_iv_offset || params.sector_size || params.hash
      || params.key_bits,
      "table, key, cipher, offset, iv-offset, sector-size, hash and "
      "key-size are for type=plain; a TCRYPT header holds them" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

/* Options of one format given for another. */
static int
check_format_options (void)
{
  bool tcrypt = params.type == VT_TCRYPT;
  const struct rule rules[] = {
    { !tcrypt && params.keyfiles_count > 1,
      "keyfile given more than once (only type=tcrypt takes several)" },
    { !tcrypt && (params.tcrypt_hidden || params.tcrypt_system
                  || params.tcrypt_backup || params.veracrypt_pim
                  || params.tcrypt_hash),
      "tcrypt-hidden, tcrypt-system, tcrypt-backup, veracrypt-pim and "
      "tcrypt-hash need type=tcrypt" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

static int
check_luks (void)
{
  const struct rule rules[] = {
    { params.key && !params.type_given,
      "key= needs cipher= (or table=) for a plain mapping" },
    { params.table || params.key || params.have_offset
      || params.have_iv_offset || params.sector_size || params.hash
      || params.key_bits,
      "table, key, offset, iv-offset, sector-size, hash and key-size are "
      "for type=plain; a LUKS header holds them" },
    { (params.passphrase != NULL) == (params.keyfile != NULL),
      "LUKS needs exactly one of passphrase= or keyfile=" },
    { (params.keyfile_offset || params.keyfile_size) && !params.keyfile,
      "keyfile-offset and keyfile-size need keyfile=" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

int
check_key_combinations (bool plain)
{
  if (params.file == NULL && !volume.filter) {
    nbdkit_error ("file parameter is required (the image to open)");
    return -1;
  }
  if (check_format_options () == -1)
    return -1;
  if (params.type == VT_TCRYPT)
    return check_tcrypt ();
  return plain ? check_plain () : check_luks ();
}

/* cryptsetup's plain-mode defaults apply where it would apply them:
 * a passphrase or key file with no cipher. */
int
plain_key_derive (void)
{
  size_t key_size = (params.key_bits ? params.key_bits
                     : PLAIN_DEFAULT_KEY_BITS) / 8;
  int r;

  if (params.table || params.key)
    return 0;
  if (params.cipher == NULL
      && (params.cipher = strdup (PLAIN_DEFAULT_CIPHER)) == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  if (params.keyfile)
    r = plain_key_from_file (params.keyfile, params.keyfile_offset,
                             key_size, &params.key);
  else {
    r = plain_key_from_passphrase (params.hash ? params.hash
                                   : PLAIN_DEFAULT_HASH, key_size,
                                   params.passphrase,
                                   params.passphrase_size, &params.key);
    secmem_free (params.passphrase, params.passphrase_size + 1);
    params.passphrase = NULL;
  }
  if (r == 0)
    params.key_size = key_size;
  return r;
}
