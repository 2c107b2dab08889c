/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The volume's crypt table: unlocked from its LUKS, FileVault2,
 * BitLocker or TrueCrypt/VeraCrypt header, or made from the plain
 * parameters (a table= line, or cipher= with a key) or a loop-AES key
 * file, then the flags
 * given on the command line, and the whole checked against the image. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../crypto/secmem.h"
#include "../luks/loopaes.h"
#include "internal.h"

static int
unlock_luks (struct dmcrypt_volume *v)
{
  static const enum luks_type types[] = {
    [VT_LUKS] = LUKS_ANY, [VT_LUKS1] = LUKS_V1, [VT_LUKS2] = LUKS_V2,
    [VT_FVAULT2] = LUKS_FVAULT2, [VT_TCRYPT] = LUKS_TCRYPT,
    [VT_BITLK] = LUKS_BITLK,
  };
  char hint[PATH_MAX + 64];
  struct luks_unlock_params p = {
    .data_path = v->data_path,
    /* The filter's header copy: its path means nothing to the user. */
    .data_name = v->filter ? v->image : NULL,
    .header_path = v->params.header,
    /* No type=: the format by its magic. */
    .type = v->params.type_given ? types[v->params.type] : LUKS_DETECT,
    .passphrase = v->params.passphrase,
    .passphrase_size = v->params.passphrase_size,
    .keyfile = v->params.keyfile,
    .keyfile_offset = v->params.keyfile_offset,
    .keyfile_size = v->params.keyfile_size,
    .key_slot = v->params.key_slot,
    .token_id_given = v->params.token_id >= 0,
    .token_id = v->params.token_id,
    .token_type = v->params.token_type,
    .token_only = v->params.token_only,
    .notice = dmcrypt_notice,
    .readonly = v->backend->readonly,
    .keyfiles = (const char *const *) v->params.keyfiles,
    .keyfiles_count = v->params.keyfiles_count,
    .tcrypt_hidden = v->params.tcrypt_hidden,
    .tcrypt_system = v->params.tcrypt_system,
    .tcrypt_backup = v->params.tcrypt_backup,
    .veracrypt_pim = v->params.veracrypt_pim,
    .tcrypt_hash = v->params.tcrypt_hash,
  };
  int r;

  if (v->params.passphrase_file_hint) {
    snprintf (hint, sizeof hint, "did you mean passphrase=+%s?",
              v->params.passphrase_file_hint);
    p.wrong_key_hint = hint;
  }
  r = luks_unlock (&p, v->backend->size, &v->table, &v->luks);
  /* The passphrase has done its work: drop it at once. */
  if (v->params.passphrase) {
    secmem_free (v->params.passphrase, v->params.passphrase_size + 1);
    v->params.passphrase = NULL;
  }
  v->is_luks = true;
  return r;
}

/* cipher=, a key, offset=, iv-offset=, sector-size=: the mapping runs
 * from the offset to the end of the device, in whole sectors. */
static int
table_from_params (struct dmcrypt_volume *v)
{
  struct dmcrypt_params *p = &v->params;
  struct crypt_table *t = &v->table;
  uint64_t data_bytes, ss;

  if (plain_key_derive (p) == -1)
    return -1;
  memset (t, 0, sizeof *t);
  t->sector_size = p->sector_size ? p->sector_size : 512;
  ss = t->sector_size;
  if (p->offset > v->backend->size / 512) {
    nbdkit_error ("offset %" PRIu64 " is beyond the end of %s",
                  p->offset, v->image);
    return -1;
  }
  data_bytes = v->backend->size - p->offset * 512;
  t->length = (ss ? data_bytes / ss * ss : data_bytes) / 512;
  t->cipher = strdup (p->cipher);
  t->device = strdup (v->image);
  t->key = secmem_dup (p->key, p->key_size);
  if (t->cipher == NULL || t->device == NULL
      || (p->key_size && t->key == NULL)) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  t->key_size = p->key_size;
  t->iv_offset = p->iv_offset;
  t->offset = p->offset;
  return 0;
}

/* loop-AES: the key file's keys and the spec LOOPAES_activate loads,
 * then the mapping as a plain one from offset= to the end; the IV
 * offset is offset= unless given (loopaesOpen's --skip defaults to
 * --offset). */
static int
table_from_loopaes (struct dmcrypt_volume *v)
{
  struct dmcrypt_params *p = &v->params;
  const struct loopaes_params lp = {
    .keyfile = p->keyfile, .keyfile_offset = p->keyfile_offset,
    .keyfile_size = p->keyfile_size, .cipher = p->cipher,
    .hash = p->hash, .key_bits = p->key_bits,
  };
  unsigned count;
  char *spec;

  if (loopaes_key (&lp, &spec, &p->key, &p->key_size, &count) == -1)
    return -1;
  nbdkit_debug ("loop-AES: %u key%s, %s", count, count > 1 ? "s" : "",
                spec);
  free (p->cipher);
  p->cipher = spec;
  if (!p->have_iv_offset)
    p->iv_offset = p->offset;
  v->is_luks = true;            /* a format of cryptsetup's, no header */
  snprintf (v->luks.type, sizeof v->luks.type, "LOOPAES");
  return table_from_params (v);
}

static void
apply_flag_params (struct dmcrypt_volume *v)
{
  const struct dmcrypt_params *p = &v->params;
  unsigned i;

  for (i = 0; i < 7; i++)
    if (p->flag[i] == TRI_TRUE)
      v->table.flags |= 1u << i;
    else if (p->flag[i] == TRI_FALSE)
      v->table.flags &= ~(1u << i);
}

/* A plain mapping that starts inside a LUKS header would overwrite it
 * with its first writes, and one over a format whose metadata is
 * scattered through the volume (FileVault2) would overwrite that: only
 * an explicit type=plain may do either. */
static int
check_plain_over_header (const struct dmcrypt_volume *v)
{
  enum luks_type found;
  uint64_t data_offset;
  char what[256];
  int r;

  if (v->params.type_given)
    return 0;
  if (luks_probe_format (v->data_path, &found) == 1
      && found != LUKS_ANY) {
    nbdkit_error ("%s has a %s header that this plain mapping would "
                  "overwrite: open it with type=%s, or give type=plain "
                  "to map it anyway", v->image,
                  luks_format_name (found), luks_format_param (found));
    return -1;
  }
  if (luks_lookalike (v->data_path, what, sizeof what) == 1) {
    nbdkit_error ("%s has %s; this plain mapping would overwrite its "
                  "header: give type=plain to map it anyway", v->image,
                  what);
    return -1;
  }
  r = luks_probe_header (v->data_path, &data_offset);
  if (r != 1 || (data_offset && v->table.offset * 512 >= data_offset))
    return 0;
  nbdkit_error ("%s has a LUKS header that this plain mapping would "
                "overwrite: open it with passphrase= or keyfile=, or give "
                "type=plain to map it anyway", v->image);
  return -1;
}

/* integritysetup's device alone: a table that moves plaintext, from the
 * device's start; integrity.c sizes it from the superblock. */
static int
table_for_integrity (struct dmcrypt_volume *v)
{
  struct crypt_table *t = &v->table;

  memset (t, 0, sizeof *t);
  t->cipher = strdup ("cipher_null-ecb");
  t->device = strdup (v->image);
  if (t->cipher == NULL || t->device == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  t->sector_size = 512;
  return 0;
}

static int
make_table (struct dmcrypt_volume *v, bool plain)
{
  if (v->params.type == VT_LOOPAES)
    return table_from_loopaes (v);
  if (v->params.type == VT_INTEGRITY)
    return table_for_integrity (v);
  if (!plain && !v->params.type_given && integrity_superblock_at_start (v)) {
    nbdkit_error ("%s has a dm-integrity superblock and no LUKS header: "
                  "open it with type=integrity (as integritysetup open)",
                  v->image);
    return -1;
  }
  if (!plain)
    return unlock_luks (v);
  if ((v->params.table ? crypt_table_parse (v->params.table, &v->table)
       : table_from_params (v)) == -1)
    return -1;
  return check_plain_over_header (v);
}

static int
check_size (const struct dmcrypt_volume *v)
{
  const struct crypt_table *t = &v->table;
  uint64_t needed = (t->offset + t->length) * 512;

  if (t->length == 0) {
    nbdkit_error ("%s: no room for data after offset %" PRIu64
                  " (512-byte sectors)", v->image, t->offset);
    return -1;
  }
  if (needed > v->backend->size) {
    nbdkit_error ("%s is smaller than the table: it needs %" PRIu64
                  " bytes, the file has %" PRIu64,
                  v->image, needed, v->backend->size);
    return -1;
  }
  return 0;
}

int
table_make (struct dmcrypt_volume *v)
{
  if (make_table (v, params_plain (&v->params)) == -1
      || integrity_stack (v) == -1)
    return -1;
  apply_flag_params (v);
  /* The tags of discarded sectors would no longer match: dm-crypt
   * takes no discards on an authenticated mapping. */
  if (v->integrity && (v->table.flags & CT_ALLOW_DISCARDS)) {
    nbdkit_error ("allow-discards: not with integrity (the discarded "
                  "sectors' tags would no longer verify)");
    return -1;
  }
  if (check_size (v) == -1 || crypt_table_validate (&v->table) == -1)
    return -1;
  return 0;
}
