/* From parameters to a running volume: open the backing file, make the
 * crypt table (from a LUKS header or plain parameters), key the cipher
 * and build the engine.  Everything is checked here, at start-up, so a
 * bad passphrase or table is an nbdkit start-up error. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/fault.h"
#include "../backend/trace.h"
#include "../crypto/secmem.h"
#include "dmcrypt.h"

struct dmcrypt_volume volume;

static bool
is_plain_type (void)
{
  if (params.type == VT_UNSET)
    params.type = (params.table || params.cipher) ? VT_PLAIN : VT_LUKS;
  return params.type == VT_PLAIN;
}

static int
check_key_combinations (bool plain)
{
  if (params.file == NULL) {
    nbdkit_error ("file parameter is required (the image to open)");
    return -1;
  }
  if (plain) {
    if (params.passphrase || params.keyfile || params.header
        || params.key_slot >= 0) {
      nbdkit_error ("passphrase, keyfile, key-slot and header are for LUKS, "
                    "not type=plain");
      return -1;
    }
    if (params.table && (params.cipher || params.key || params.have_offset
                         || params.have_iv_offset || params.sector_size)) {
      nbdkit_error ("table= already holds cipher, key, offsets and "
                    "sector size: give either table= or cipher=/key=");
      return -1;
    }
    if (!params.table && (params.cipher == NULL || params.key == NULL)) {
      nbdkit_error ("type=plain needs table= or both cipher= and key=");
      return -1;
    }
    return 0;
  }
  if (params.table || params.cipher || params.key || params.have_offset
      || params.have_iv_offset || params.sector_size) {
    nbdkit_error ("table, cipher, key, offset, iv-offset and sector-size "
                  "are for type=plain; a LUKS header holds them");
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

static int
open_backend (void)
{
  /* A file we may only read is still served, read-only, without first
   * failing to open it for writing. */
  bool writable = access (params.file, W_OK) == 0;
  struct backend *faulty;

  volume.backend = backend_file_open (params.file, !writable);
  if (volume.backend && !writable)
    nbdkit_debug ("%s is not writable: serving read-only", params.file);
  if (volume.backend == NULL || params.fault_rules == NULL)
    return volume.backend ? 0 : -1;
  /* fault-rules=: the test facility sits right under the trace point,
   * so traces show the injected errors as the device's. */
  faulty = backend_fault_wrap (volume.backend, params.fault_rules);
  if (faulty == NULL)
    return -1;
  volume.backend = faulty;
  return 0;
}

/* A start-up notice in the shape of nbdkit's own stderr messages but
 * without "error:": the server goes on.  Written before nbdkit forks,
 * so it reaches the terminal that started the server. */
static void __attribute__ ((format (printf, 1, 2)))
notice (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  flockfile (stderr);
  fputs ("nbdkit: dmcrypt: note: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  funlockfile (stderr);
  va_end (ap);
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
  image = realpath (params.file, NULL);
  b->trace = trace_open (params.trace, b->dev_major, b->dev_minor,
                         image ? image : params.file);
  free (image);
  if (b->trace == NULL)
    return -1;
  earlier = trace_existing_bytes (b->trace);
  if (earlier > 0)
    notice ("appending to trace %s, which holds %" PRIu64 " bytes of "
            "earlier runs: this run starts at its dmcrypt-run marker "
            "(pid %d)", params.trace, earlier, (int) getpid ());
  return 0;
}

static int
unlock_luks (void)
{
  static const enum luks_type types[] = {
    [VT_LUKS] = LUKS_ANY, [VT_LUKS1] = LUKS_V1, [VT_LUKS2] = LUKS_V2,
  };
  struct luks_unlock_params p = {
    .data_path = params.file,
    .header_path = params.header,
    .type = types[params.type],
    .passphrase = params.passphrase,
    .passphrase_size = params.passphrase_size,
    .keyfile = params.keyfile,
    .keyfile_offset = params.keyfile_offset,
    .keyfile_size = params.keyfile_size,
    .key_slot = params.key_slot,
    .readonly = volume.backend->readonly,
  };
  int r = luks_unlock (&p, volume.backend->size, &volume.table,
                       &volume.luks);

  /* The passphrase has done its work: drop it at once. */
  if (params.passphrase) {
    secmem_free (params.passphrase, params.passphrase_size + 1);
    params.passphrase = NULL;
  }
  volume.is_luks = true;
  return r;
}

/* cipher=, key=, offset=, iv-offset=, sector-size=: the mapping runs
 * from the offset to the end of the device, in whole sectors. */
static int
table_from_params (void)
{
  struct crypt_table *t = &volume.table;
  uint64_t data_bytes, ss;

  memset (t, 0, sizeof *t);
  t->sector_size = params.sector_size ? params.sector_size : 512;
  ss = t->sector_size;
  if (params.offset > volume.backend->size / 512) {
    nbdkit_error ("offset %" PRIu64 " is beyond the end of %s",
                  params.offset, params.file);
    return -1;
  }
  data_bytes = volume.backend->size - params.offset * 512;
  t->length = (ss ? data_bytes / ss * ss : data_bytes) / 512;
  t->cipher = strdup (params.cipher);
  t->device = strdup (params.file);
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

static int
make_table (bool plain)
{
  if (!plain)
    return unlock_luks ();
  if (params.table)
    return crypt_table_parse (params.table, &volume.table);
  return table_from_params ();
}

static int
check_size (void)
{
  const struct crypt_table *t = &volume.table;
  uint64_t needed = (t->offset + t->length) * 512;

  if (t->length == 0) {
    nbdkit_error ("%s: no room for data after offset %" PRIu64
                  " (512-byte sectors)", params.file, t->offset);
    return -1;
  }
  if (needed > volume.backend->size) {
    nbdkit_error ("%s is smaller than the table: it needs %" PRIu64
                  " bytes, the file has %" PRIu64,
                  params.file, needed, volume.backend->size);
    return -1;
  }
  volume.size = t->length * 512;
  return 0;
}

/* Also called by live.c to rebuild both from a new live table. */
int
volume_build_engine (void)
{
  const struct crypt_table *t = &volume.table;
  struct sector_cipher_params cp = {
    .spec = t->cipher, .key = t->key, .key_size = t->key_size,
    .sector_size = t->sector_size, .iv_offset = t->iv_offset,
    .iv_large_sectors = (t->flags & CT_IV_LARGE_SECTORS) != 0,
  };
  struct engine_config ec = {
    .data_offset = t->offset * 512, .size = volume.size,
    .sector_size = t->sector_size, .workers = params.workers,
    .scheduler = params.scheduler, .flags = t->flags,
    .max_read_size = params.max_read_size,
    .max_write_size = params.max_write_size,
    .max_inflight = params.max_inflight,
    .offload_all = params.caller_crypt == TRI_FALSE,
  };

  volume.cipher = sector_cipher_new (&cp);
  if (volume.cipher == NULL)
    return -1;
  volume.engine = engine_new (&ec, volume.cipher, volume.backend);
  return volume.engine ? 0 : -1;
}

int
volume_open (void)
{
  bool plain = is_plain_type ();

  if (check_key_combinations (plain) == -1 || open_backend () == -1
      || open_trace () == -1 || make_table (plain) == -1)
    return -1;
  apply_flag_params ();
  if (check_size () == -1 || crypt_table_validate (&volume.table) == -1)
    return -1;
  if (volume.backend->readonly)
    params.readonly = true;
  if (!(volume.table.flags & CT_ALLOW_DISCARDS))
    volume.backend->can_discard = false;
  return volume_build_engine ();
}

void
volume_close (void)
{
  engine_free (volume.engine);
  sector_cipher_free (volume.cipher);
  backend_close (volume.backend);
  crypt_table_free (&volume.table);
  memset (&volume, 0, sizeof volume);
}
