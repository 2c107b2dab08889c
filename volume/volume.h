/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layer both front ends share: a volume, built from its parameters
 * (params/params.h), that serves requests.  Opening it opens and locks
 * the image (or takes the filter's layer below), makes the crypt table
 * from a LUKS, FileVault2, BitLocker or TrueCrypt header or from plain
 * parameters, and builds the device-mapper mapping (dm/dm.h) with its
 * cipher and engine.  Everything is checked at start-up, so that a bad
 * passphrase or table is an nbdkit start-up error.
 *
 * A front end keeps one volume for its nbdkit process and calls, in
 * order: volume_new (.load), params_config on VOLUME->params (.config),
 * volume_open (.config_complete; the filter's in .after_fork, after
 * volume_set_lower), volume_start (.after_fork), then per connection
 * volume_conn_new, volume_io and volume_conn_free, and at the end
 * volume_close and volume_free.  The control socket's server
 * (control/control.h) serves it beside.
 *
 * volume.c opens and closes, image.c opens the image and its backends,
 * table.c makes the table, mapping.c the mapping, lab.c the simulated
 * device, io.c serves requests (internal.h is between them). */
#ifndef DMCRYPT_VOLUME_H
#define DMCRYPT_VOLUME_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../backend/backend.h"
#include "../dm/dm.h"
#include "../luks/luks.h"
#include "../table/crypt_table.h"
#include "lock/lock.h"
#include "params/params.h"

struct volume_control;

struct dmcrypt_volume
{
  /* As the command line gave them; volume_open settles them for the
   * volume (the type, a plain key derived, the passphrase dropped, the
   * read-only flag of a server or image that cannot be written). */
  struct dmcrypt_params params;
  /* The nbdkit filter: the data is the next layer's (LOWER), not a
   * file the volume opens. */
  bool filter;
  struct backend *lower;
  const char *image;             /* the data's name in messages and
                                    dmcryptctl: the image file, or the
                                    filter's label */
  const char *data_path;         /* what libcryptsetup reads: params.file,
                                    or the filter's copy of the header */
  bool server_readonly;          /* nbdkit -r: nothing may ever write */
  struct backend *file_backend;  /* the image, under any wrapper */
  struct image_locks locks;      /* the image's and the header's */
  struct crypt_table table;      /* the table being made; the mapping
                                    takes it */
  struct luks_info luks;         /* valid when is_luks */
  bool is_luks;
  struct backend *backend;       /* the top of the stack the engine uses */
  struct backend *integrity;     /* the sealing backend over a
                                    dm-integrity device (in the stack
                                    under BACKEND), or NULL */
  struct dm_mapping *dm;         /* the live table, its engine, reload,
                                    suspend: dm/dm.h */
  /* The image as it was opened (NULL file: none), and the tables'
   * device field: "major:minor" of a block device, else its path. */
  struct stat image_st;
  char device_field[PATH_MAX];
  atomic_uint connections;       /* opened so far: the next one's index */
  /* The control socket's server, when one was opened (control/). */
  struct volume_control *control;
};

/* A volume with no parameters given yet: the plugin's (FILTER false)
 * or the filter's.  NULL after nbdkit_error. */
struct dmcrypt_volume *volume_new (bool filter);
/* The parameters checked alone, before anything is opened (the filter's
 * .config_complete).  Returns 0 or -1 after nbdkit_error. */
int volume_check_params (struct dmcrypt_volume *v);
/* The image by its file name: the plugin's file=, or the one file the
 * filter's layer below was given; NULL when there is none. */
static inline const char *
volume_image_file (const struct dmcrypt_volume *v)
{
  return v->filter ? v->params.layer_file : v->params.file;
}
/* The filter: its data is LOWER (kept open by the filter), LABEL its
 * name where no file names it, DATA_PATH the copy of its header that
 * libcryptsetup reads.  Before volume_open. */
void volume_set_lower (struct dmcrypt_volume *v, struct backend *lower,
                       const char *label, const char *data_path);
/* Opens the image, makes the table and the mapping.  Returns 0, or -1
 * after nbdkit_error (volume_close then undoes what was done). */
int volume_open (struct dmcrypt_volume *v);
/* .after_fork: the simulated device's and the engine's threads. */
int volume_start (struct dmcrypt_volume *v);
/* The engine's summary in nbdkit's debug log, if the volume opened. */
void volume_log_stats (const struct dmcrypt_volume *v);
/* Closes what volume_open opened; the parameters stay. */
void volume_close (struct dmcrypt_volume *v);
/* volume_close, the parameters freed (secrets wiped), V freed.  The
 * control server must be closed first.  V may be NULL. */
void volume_free (struct dmcrypt_volume *v);

/* ---- io.c: the data path of both front ends ---- */

/* A client connection, the handle of both front ends: its index from 0
 * in the order connections were opened.  A client process is a
 * connection: its requests are submitted with io_context INDEX + 1 and,
 * under kernel=, from modelled CPU INDEX modulo the CPUs (workers=)
 * unless its export name said another ("cpu=N"), with its writes sync
 * when the name said "sync" (backend/submitter.h, facts.c). */
struct dmcrypt_conn
{
  struct dmcrypt_volume *volume;
  unsigned index;
  int cpu;                      /* the export name's cpu=; -1: none */
  bool sync;                    /* the export name's sync */
};
/* Counted in the mapping's open count.  EXPORT_NAME is the client's
 * (NULL: ""), read under kernel= only.  NULL after nbdkit_error. */
struct dmcrypt_conn *volume_conn_new (struct dmcrypt_volume *v,
                                      const char *export_name);
void volume_conn_free (struct dmcrypt_conn *conn);

/* A request of CONN through the mapping's gate and the engine (dm_io).
 * Returns 0, or -1 with *ERR the errno for nbdkit (after nbdkit_error
 * when the engine failed). */
enum io_op { IO_READ = DM_IO_READ, IO_WRITE = DM_IO_WRITE,
             IO_ZERO = DM_IO_ZERO, IO_TRIM = DM_IO_TRIM,
             IO_FLUSH = DM_IO_FLUSH };
int volume_io (const struct dmcrypt_conn *conn, enum io_op op, void *buf,
               uint32_t count, uint64_t offset, bool fua, int *err);
/* The minimum and preferred block sizes both front ends advertise, in
 * bytes, from min-block-size= and the live table's sector size. */
void volume_block_sizes (const struct dmcrypt_volume *v, uint32_t *minimum,
                         uint32_t *preferred);

#endif /* DMCRYPT_VOLUME_H */
