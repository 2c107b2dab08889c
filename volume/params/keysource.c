/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which parameters go together, and the plain-mode key when it comes
 * from a passphrase or a key file (cryptsetup open --type plain). */
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../crypto/secmem.h"
#include "../../luks/plain.h"
#include "../../backend/kseries.h"
#include "params.h"

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
check_plain (const struct dmcrypt_params *p)
{
  int sources = !!p->table + !!p->key + !!p->keyfile
    + !!p->passphrase;
  bool geometry = p->cipher || p->have_offset
    || p->have_iv_offset || p->sector_size || p->hash
    || p->key_bits;
  const struct rule rules[] = {
    { p->header || p->key_slot >= 0,
      "key-slot and header are for LUKS, not type=plain" },
    { p->table && (sources > 1 || geometry),
      "table= already holds cipher, key, offsets and sector size: give "
      "either table= or cipher= with a key" },
    { sources == 0,
      "type=plain needs a key: table=, key=, key-file= or passphrase=" },
    { sources > 1, "give one plain-mode key: key=, key-file= or "
      "passphrase=" },
    { p->key && !p->cipher, "key= needs cipher= (or a whole "
      "table=)" },
    { p->hash && !p->passphrase, "hash= is for passphrase=: a "
      "plain key= or key-file= is never hashed" },
    { p->keyfile_size, "keyfile-size: a plain key file is read for "
      "exactly key-size bits (use key-size=)" },
    { p->keyfile_offset && !p->keyfile,
      "keyfile-offset needs key-file=" },
  };

  if (first_broken (rules, sizeof rules / sizeof rules[0]) == -1)
    return -1;
  if (p->key && p->key_bits && p->key_bits != p->key_size * 8) {
    nbdkit_error ("key-size=%u but key= holds %zu bits", p->key_bits,
                  p->key_size * 8);
    return -1;
  }
  return 0;
}

/* TrueCrypt/VeraCrypt: a passphrase, key files, or both; an absent
 * passphrase is an empty one. */
static int
check_tcrypt (const struct dmcrypt_params *p)
{
  const struct rule rules[] = {
    { p->header || p->key_slot >= 0,
      "key-slot and header are for LUKS, not type=tcrypt" },
    { p->keyfile_offset || p->keyfile_size,
      "keyfile-offset and keyfile-size are for LUKS and plain key files; "
      "TCRYPT key files are read whole" },
    { p->table || p->key || p->cipher || p->have_offset
      || p->have_iv_offset || p->sector_size || p->hash
      || p->key_bits,
      "table, key, cipher, offset, iv-offset, sector-size, hash and "
      "key-size are for type=plain; a TCRYPT header holds them" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

/* loop-AES: cryptsetup loopaesOpen's --key-file (required), --cipher,
 * --key-size, --hash, --offset, --skip (our iv-offset=),
 * --keyfile-offset and --keyfile-size. */
static int
check_loopaes (const struct dmcrypt_params *p)
{
  const struct rule rules[] = {
    { p->header || p->key_slot >= 0,
      "key-slot and header are for LUKS, not type=loopaes" },
    { p->passphrase || p->table || p->key,
      "type=loopaes takes its keys from keyfile= alone, not passphrase=, "
      "table= or key=" },
    { p->keyfile == NULL,
      "type=loopaes needs keyfile= (cryptsetup loopaesOpen --key-file)" },
    { p->sector_size && p->sector_size != 512,
      "sector-size: loop-AES has 512-byte sectors only" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

/* integritysetup open: a dm-integrity device alone, no key but a keyed
 * hash's. */
static int
check_integrity (const struct dmcrypt_params *p)
{
  const struct rule rules[] = {
    { p->header || p->key_slot >= 0 || p->passphrase || p->keyfile,
      "passphrase, keyfile, key-slot and header are not for "
      "type=integrity (integrity-key-file= keys a keyed hash)" },
    { p->table || p->key || p->cipher || p->have_offset
      || p->have_iv_offset || p->sector_size || p->hash || p->key_bits,
      "table, key, cipher, offset, iv-offset, sector-size, hash and "
      "key-size are for type=plain; a dm-integrity superblock holds "
      "its geometry" },
    { p->integrity_key_size && !p->integrity_key_file,
      "integrity-key-size needs integrity-key-file=" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

/* Options of one format given for another. */
static int
check_format_options (const struct dmcrypt_params *p)
{
  bool tcrypt = p->type == VT_TCRYPT;
  const struct rule rules[] = {
    { p->type != VT_INTEGRITY
      && (p->integrity || p->integrity_key_file || p->integrity_key_size),
      "integrity, integrity-key-file and integrity-key-size need "
      "type=integrity (a LUKS2 header names its own)" },
    { p->integrity_mode && p->type != VT_INTEGRITY && p->type != VT_LUKS
      && p->type != VT_LUKS2 && p->type != VT_UNSET,
      "integrity-mode is for type=integrity and LUKS2 with integrity" },
    { !tcrypt && p->keyfiles_count > 1,
      "keyfile given more than once (only type=tcrypt takes several)" },
    { !tcrypt && (p->tcrypt_hidden || p->tcrypt_system
                  || p->tcrypt_backup || p->veracrypt_pim
                  || p->tcrypt_hash),
      "tcrypt-hidden, tcrypt-system, tcrypt-backup, veracrypt-pim and "
      "tcrypt-hash need type=tcrypt" },
    { p->type != VT_LUKS && p->type != VT_LUKS1 && p->type != VT_LUKS2
      && (p->token_id >= 0 || p->token_type || p->token_only),
      "token-id, token-type and token-only are for LUKS (LUKS2 tokens, "
      "Clevis bindings of LUKS1)" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

static int
check_luks (const struct dmcrypt_params *p)
{
  const struct rule rules[] = {
    { p->key && !p->type_given,
      "key= needs cipher= (or table=) for a plain mapping" },
    { p->table || p->key || p->have_offset
      || p->have_iv_offset || p->sector_size || p->hash
      || p->key_bits,
      "table, key, offset, iv-offset, sector-size, hash and key-size are "
      "for type=plain; a LUKS header holds them" },
    { p->passphrase && p->keyfile,
      "LUKS takes one of passphrase= or keyfile=, not both" },
    /* Tokens unlock the keyslots they name; cryptsetup open applies
     * --key-slot to the passphrase alone (src/cryptsetup.c, 2.6.1). */
    { p->key_slot >= 0 && !p->passphrase && !p->keyfile,
      "key-slot needs passphrase= or keyfile= (a token unlocks the "
      "keyslots it names)" },
    { p->token_type && p->token_type[0] == '\0',
      "token-type: empty (give a type such as clevis or systemd-tpm2)" },
    { (p->keyfile_offset || p->keyfile_size) && !p->keyfile,
      "keyfile-offset and keyfile-size need keyfile=" },
  };

  return first_broken (rules, sizeof rules / sizeof rules[0]);
}

bool
params_plain (struct dmcrypt_params *p)
{
  if (p->type == VT_UNSET)
    p->type = (p->table || p->cipher) ? VT_PLAIN : VT_LUKS;
  return p->type == VT_PLAIN;
}

int
params_check (struct dmcrypt_params *p, bool need_file)
{
  bool plain = params_plain (p);

  if (p->kcryptd_io != TRI_UNSET && p->kernel == KSERIES_NONE) {
    nbdkit_error ("kcryptd-io: needs kernel= (a kernel series' thread)");
    return -1;
  }
  if (p->file == NULL && need_file) {
    nbdkit_error ("file parameter is required (the image to open)");
    return -1;
  }
  if (check_format_options (p) == -1)
    return -1;
  if (p->type == VT_TCRYPT)
    return check_tcrypt (p);
  if (p->type == VT_LOOPAES)
    return check_loopaes (p);
  if (p->type == VT_INTEGRITY)
    return check_integrity (p);
  return plain ? check_plain (p) : check_luks (p);
}

/* cryptsetup's plain-mode defaults apply where it would apply them:
 * a passphrase or key file with no cipher. */
int
plain_key_derive (struct dmcrypt_params *p)
{
  size_t key_size = (p->key_bits ? p->key_bits
                     : PLAIN_DEFAULT_KEY_BITS) / 8;
  int r;

  if (p->table || p->key)
    return 0;
  if (p->cipher == NULL
      && (p->cipher = strdup (PLAIN_DEFAULT_CIPHER)) == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  if (p->keyfile)
    r = plain_key_from_file (p->keyfile, p->keyfile_offset,
                             key_size, &p->key);
  else {
    r = plain_key_from_passphrase (p->hash ? p->hash
                                   : PLAIN_DEFAULT_HASH, key_size,
                                   p->passphrase,
                                   p->passphrase_size, &p->key);
    secmem_free (p->passphrase, p->passphrase_size + 1);
    p->passphrase = NULL;
  }
  if (r == 0)
    p->key_size = key_size;
  return r;
}
