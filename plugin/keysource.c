/* Which parameters go together, and the plain-mode key when it comes
 * from a passphrase or a key file (cryptsetup open --type plain). */
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../crypto/secmem.h"
#include "../luks/plain.h"
#include "dmcrypt.h"

static bool
has_plain_geometry (void)
{
  return params.cipher || params.have_offset || params.have_iv_offset
    || params.sector_size || params.hash || params.key_bits;
}

static int
check_plain_sources (void)
{
  int sources = !!params.table + !!params.key + !!params.keyfile
    + !!params.passphrase;

  if (params.table && (sources > 1 || has_plain_geometry ())) {
    nbdkit_error ("table= already holds cipher, key, offsets and sector "
                  "size: give either table= or cipher= with a key");
    return -1;
  }
  if (sources == 0) {
    nbdkit_error ("type=plain needs a key: table=, key=, key-file= or "
                  "passphrase=");
    return -1;
  }
  if (sources > 1) {
    nbdkit_error ("give one plain-mode key: key=, key-file= or "
                  "passphrase=");
    return -1;
  }
  if (params.key && !params.cipher) {
    nbdkit_error ("key= needs cipher= (or a whole table=)");
    return -1;
  }
  return 0;
}

static int
check_plain (void)
{
  if (params.header || params.key_slot >= 0) {
    nbdkit_error ("key-slot and header are for LUKS, not type=plain");
    return -1;
  }
  if (check_plain_sources () == -1)
    return -1;
  if (params.hash && !params.passphrase) {
    nbdkit_error ("hash= is for passphrase=: a plain key= or key-file= "
                  "is never hashed");
    return -1;
  }
  if (params.keyfile_size) {
    nbdkit_error ("keyfile-size: a plain key file is read for exactly "
                  "key-size bits (use key-size=)");
    return -1;
  }
  if (params.keyfile_offset && !params.keyfile) {
    nbdkit_error ("keyfile-offset needs key-file=");
    return -1;
  }
  if (params.key && params.key_bits && params.key_bits != params.key_size * 8) {
    nbdkit_error ("key-size=%u but key= holds %zu bits", params.key_bits,
                  params.key_size * 8);
    return -1;
  }
  return 0;
}

static int
check_luks (void)
{
  if (params.key && !params.type_given) {
    nbdkit_error ("key= needs cipher= (or table=) for a plain mapping");
    return -1;
  }
  if (params.table || params.key || params.have_offset
      || params.have_iv_offset || params.sector_size || params.hash
      || params.key_bits) {
    nbdkit_error ("table, key, offset, iv-offset, sector-size, hash and "
                  "key-size are for type=plain; a LUKS header holds them");
    return -1;
  }
  if ((params.passphrase != NULL) == (params.keyfile != NULL)) {
    nbdkit_error ("LUKS needs exactly one of passphrase= or keyfile=");
    return -1;
  }
  if ((params.keyfile_offset || params.keyfile_size) && !params.keyfile) {
    nbdkit_error ("keyfile-offset and keyfile-size need keyfile=");
    return -1;
  }
  return 0;
}

int
check_key_combinations (bool plain)
{
  if (params.file == NULL) {
    nbdkit_error ("file parameter is required (the image to open)");
    return -1;
  }
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
