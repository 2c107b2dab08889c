/* From parameters to a running volume: open and lock the backing file,
 * make the crypt table (from a LUKS header or plain parameters), key
 * the cipher and build the engine.  Everything is checked here, at
 * start-up, so a bad passphrase or table is an nbdkit start-up error. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/trace.h"
#include "../crypto/secmem.h"
#include "../backend/kseries.h"
#include "volume.h"

struct dmcrypt_volume volume = { .locks.header_fd = -1 };

static bool
is_plain_type (void)
{
  if (params.type == VT_UNSET)
    params.type = (params.table || params.cipher) ? VT_PLAIN : VT_LUKS;
  return params.type == VT_PLAIN;
}

/* trace=: blkparse-style events of every backend IO, after a marker
 * that names this run.  A file that already holds earlier runs is
 * appended to, and the user is told: an analysis that mixed two runs'
 * events would be wrong without a word. */
static int
open_trace (void)
{
  struct backend *b = volume.backend;
  char *image;
  uint64_t earlier;

  if (params.trace == NULL)
    return 0;
  image = volume_image_file () ? realpath (volume_image_file (), NULL)
    : NULL;
  b->trace = trace_open (params.trace, b->dev_major, b->dev_minor,
                         image ? image : volume.image);
  free (image);
  if (b->trace == NULL)
    return -1;
  lab_attach_trace ();
  earlier = trace_existing_bytes (b->trace);
  if (earlier > 0)
    dmcrypt_notice ("appending to trace %s, which holds %" PRIu64
                    " bytes of earlier runs: this run starts at its "
                    "dmcrypt-run marker (pid %d)", params.trace, earlier,
                    (int) getpid ());
  return 0;
}

static int
unlock_luks (void)
{
  static const enum luks_type types[] = {
    [VT_LUKS] = LUKS_ANY, [VT_LUKS1] = LUKS_V1, [VT_LUKS2] = LUKS_V2,
    [VT_FVAULT2] = LUKS_FVAULT2, [VT_TCRYPT] = LUKS_TCRYPT,
    [VT_BITLK] = LUKS_BITLK,
  };
  char hint[PATH_MAX + 64];
  struct luks_unlock_params p = {
    .data_path = volume.data_path,
    /* The filter's header copy: its path means nothing to the user. */
    .data_name = volume.filter ? volume.image : NULL,
    .header_path = params.header,
    /* No type=: the format by its magic. */
    .type = params.type_given ? types[params.type] : LUKS_DETECT,
    .passphrase = params.passphrase,
    .passphrase_size = params.passphrase_size,
    .keyfile = params.keyfile,
    .keyfile_offset = params.keyfile_offset,
    .keyfile_size = params.keyfile_size,
    .key_slot = params.key_slot,
    .readonly = volume.backend->readonly,
    .keyfiles = (const char *const *) params.keyfiles,
    .keyfiles_count = params.keyfiles_count,
    .tcrypt_hidden = params.tcrypt_hidden,
    .tcrypt_system = params.tcrypt_system,
    .tcrypt_backup = params.tcrypt_backup,
    .veracrypt_pim = params.veracrypt_pim,
    .tcrypt_hash = params.tcrypt_hash,
  };
  int r;

  if (params.passphrase_file_hint) {
    snprintf (hint, sizeof hint, "did you mean passphrase=+%s?",
              params.passphrase_file_hint);
    p.wrong_key_hint = hint;
  }
  r = luks_unlock (&p, volume.backend->size, &volume.table, &volume.luks);
  /* The passphrase has done its work: drop it at once. */
  if (params.passphrase) {
    secmem_free (params.passphrase, params.passphrase_size + 1);
    params.passphrase = NULL;
  }
  volume.is_luks = true;
  return r;
}

/* cipher=, a key, offset=, iv-offset=, sector-size=: the mapping runs
 * from the offset to the end of the device, in whole sectors. */
static int
table_from_params (void)
{
  struct crypt_table *t = &volume.table;
  uint64_t data_bytes, ss;

  if (plain_key_derive () == -1)
    return -1;
  memset (t, 0, sizeof *t);
  t->sector_size = params.sector_size ? params.sector_size : 512;
  ss = t->sector_size;
  if (params.offset > volume.backend->size / 512) {
    nbdkit_error ("offset %" PRIu64 " is beyond the end of %s",
                  params.offset, volume.image);
    return -1;
  }
  data_bytes = volume.backend->size - params.offset * 512;
  t->length = (ss ? data_bytes / ss * ss : data_bytes) / 512;
  t->cipher = strdup (params.cipher);
  t->device = strdup (volume.image);
  t->key = secmem_dup (params.key, params.key_size);
  if (t->cipher == NULL || t->device == NULL
      || (params.key_size && t->key == NULL)) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  t->key_size = params.key_size;
  t->iv_offset = params.iv_offset;
  t->offset = params.offset;
  return 0;
}

static void
apply_flag_params (void)
{
  unsigned i;

  for (i = 0; i < 7; i++)
    if (params.flag[i] == TRI_TRUE)
      volume.table.flags |= 1u << i;
    else if (params.flag[i] == TRI_FALSE)
      volume.table.flags &= ~(1u << i);
}

/* A plain mapping that starts inside a LUKS header would overwrite it
 * with its first writes, and one over a format whose metadata is
 * scattered through the volume (FileVault2) would overwrite that: only
 * an explicit type=plain may do either. */
static int
check_plain_over_header (void)
{
  enum luks_type found;
  uint64_t data_offset;
  int r;

  if (params.type_given)
    return 0;
  if (luks_probe_format (volume.data_path, &found) == 1
      && found != LUKS_ANY) {
    nbdkit_error ("%s has a %s header that this plain mapping would "
                  "overwrite: open it with type=%s, or give type=plain "
                  "to map it anyway", volume.image,
                  luks_format_name (found), luks_format_param (found));
    return -1;
  }
  r = luks_probe_header (volume.data_path, &data_offset);
  if (r != 1 || (data_offset && volume.table.offset * 512 >= data_offset))
    return 0;
  nbdkit_error ("%s has a LUKS header that this plain mapping would "
                "overwrite: open it with passphrase= or keyfile=, or give "
                "type=plain to map it anyway", volume.image);
  return -1;
}

static int
make_table (bool plain)
{
  if (!plain)
    return unlock_luks ();
  if ((params.table ? crypt_table_parse (params.table, &volume.table)
       : table_from_params ()) == -1)
    return -1;
  return check_plain_over_header ();
}

static int
check_size (void)
{
  const struct crypt_table *t = &volume.table;
  uint64_t needed = (t->offset + t->length) * 512;

  if (t->length == 0) {
    nbdkit_error ("%s: no room for data after offset %" PRIu64
                  " (512-byte sectors)", volume.image, t->offset);
    return -1;
  }
  if (needed > volume.backend->size) {
    nbdkit_error ("%s is smaller than the table: it needs %" PRIu64
                  " bytes, the file has %" PRIu64,
                  volume.image, needed, volume.backend->size);
    return -1;
  }
  return 0;
}

int
volume_check_params (void)
{
  if (params.kcryptd_io != TRI_UNSET && params.kernel == KSERIES_NONE) {
    nbdkit_error ("kcryptd-io: needs kernel= (a kernel series' thread)");
    return -1;
  }
  return check_key_combinations (is_plain_type ()) == -1
    || lab_check_params () == -1 ? -1 : 0;
}

/* The image by its file name: the plugin's file=, or the one file the
 * filter's layer below was given; NULL when there is none. */
const char *
volume_image_file (void)
{
  return volume.filter ? params.layer_file : params.file;
}

int
volume_open (void)
{
  bool plain = is_plain_type ();

  if (!volume.filter)
    volume.image = volume.data_path = params.file;
  if (volume_check_params () == -1 || image_open () == -1
      || open_trace () == -1 || make_table (plain) == -1)
    return -1;
  apply_flag_params ();
  if (check_size () == -1 || crypt_table_validate (&volume.table) == -1)
    return -1;
  return mapping_open ();
}

void
volume_close (void)
{
  bool filter = volume.filter;

  dm_free (volume.dm);
  image_close ();
  backend_close (volume.backend);
  crypt_table_free (&volume.table);
  memset (&volume, 0, sizeof volume);
  image_locks_init (&volume.locks);
  volume.filter = filter;
}
