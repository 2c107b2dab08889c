/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The volume's device-mapper mapping (dm/dm.h), made once the table is
 * known, and what the core asks of the volume for it: the image's
 * identity for reloads, its locks, and a hold that notices nbdkit
 * shutting down. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/kseries.h"
#include "internal.h"

#define HOLD_POLL_NS 5000000         /* a held request looks every 5 ms */

/* FIELD names our image: "major:minor" of the block device, or a path
 * to the same block device or file. */
static bool
same_device (void *arg, const char *field)
{
  const struct dmcrypt_volume *v = arg;
  const struct stat *image = &v->image_st;
  unsigned maj, min;
  char extra;
  struct stat st;

  if (volume_image_file (v) == NULL)
    return false;                    /* only the label itself */
  if (sscanf (field, "%u:%u%c", &maj, &min, &extra) == 2)
    return S_ISBLK (image->st_mode) && makedev (maj, min) == image->st_rdev;
  if (stat (field, &st) == -1)
    return false;
  if (S_ISBLK (st.st_mode))
    return S_ISBLK (image->st_mode) && st.st_rdev == image->st_rdev;
  return S_ISREG (image->st_mode) && st.st_dev == image->st_dev
    && st.st_ino == image->st_ino;
}

static int
locks_follow (void *arg, bool writable, char *why, size_t size)
{
  struct dmcrypt_volume *v = arg;

  return image_locks_follow (&v->locks, writable, why, size);
}

/* nbdkit_nanosleep fails when the server shuts down or the client goes
 * away, so a suspended volume never blocks nbdkit's exit. */
static int
hold (void *arg)
{
  (void) arg;
  return nbdkit_nanosleep (0, HOLD_POLL_NS);
}

static int
name_device (struct dmcrypt_volume *v)
{
  const char *file = volume_image_file (v);
  char *field = v->device_field, *abs;
  size_t size = sizeof v->device_field;

  if (file == NULL) {
    snprintf (field, size, "%s", v->image);
    return 0;
  }
  if (stat (file, &v->image_st) == -1) {
    nbdkit_error ("stat: %s: %m", file);
    return -1;
  }
  if (S_ISBLK (v->image_st.st_mode))
    snprintf (field, size, "%u:%u", major (v->image_st.st_rdev),
              minor (v->image_st.st_rdev));
  else {
    abs = realpath (file, NULL);
    snprintf (field, size, "%s", abs ? abs : file);
    free (abs);
  }
  return 0;
}

/* scheduler= when none is given: under kernel=4.0 and 6.1 the kernel's
 * own dmcrypt_write (rbtree); else the mapping's default (sorted). */
static const char *
default_scheduler (const struct dmcrypt_params *p)
{
  if (p->kernel == KSERIES_4_0 || p->kernel == KSERIES_6_1)
    return "rbtree";
  return NULL;
}

/* A chunk holds whole encryption sectors: config.c refused chunks under
 * 512 bytes, which no volume's sector fits in.  A larger sector is known
 * only now, and a size that suits 512-byte sectors (a script's, or one
 * forced on a whole test suite) should not refuse a LUKS2 image of 4096:
 * the engine takes one sector (round_chunk), and the user is told. */
static void
note_chunk_size (const char *key, uint64_t bytes, unsigned sector_size)
{
  if (bytes != 0 && bytes < sector_size)
    dmcrypt_notice ("%s: %" PRIu64 " bytes is less than the volume's "
                    "%u-byte encryption sector: chunks of one sector",
                    key, bytes, sector_size);
}

int
mapping_open (struct dmcrypt_volume *v)
{
  const struct dmcrypt_params *p = &v->params;
  struct dm_host host = {
    .backend = v->backend, .device = v->device_field,
    .same_device = same_device, .locks_follow = locks_follow,
    .hold = hold, .arg = v, .server_readonly = v->server_readonly,
    .cipher_library = p->cipher_library,
    .engine = {
      .max_read_size = p->max_read_size,
      .max_write_size = p->max_write_size,
      .max_inflight = p->max_inflight,
      .max_write_rounds = p->max_write_rounds,
      .offload_all = p->caller_crypt == TRI_FALSE,
      .kernel = p->kernel,
      .kcryptd_io = p->kcryptd_io,
      .kernel_writer = p->scheduler != NULL,
      .debug = p->engine_debug,
    },
  };
  struct dm_tunables tun = {
    .scheduler = p->scheduler ? p->scheduler
      : default_scheduler (p), .set_workers = true,
    .workers = p->workers,
  };
  struct dm_err err = { .errnum = 0 };

  note_chunk_size ("max-read-size", p->max_read_size,
                   v->table.sector_size);
  note_chunk_size ("max-write-size", p->max_write_size,
                   v->table.sector_size);
  if (name_device (v) == -1)
    return -1;
  v->dm = dm_new (&host, &v->table, p->readonly, &tun, &err);
  if (v->dm == NULL) {
    /* A table the cipher or engine refused was reported already. */
    if (err.errnum != EINVAL)
      nbdkit_error ("%s", err.msg);
    return -1;
  }
  /* A LUKS2 re-encryption's second table goes to the mapping. */
  if (v->luks.segments.count
      && dm_set_segment_tables (v->dm, &v->luks.segments,
                                v->luks.second.cipher ? &v->luks.second
                                : NULL, v->backend->size, &err) == -1) {
    nbdkit_error ("%s: %s", v->image, err.msg);
    return -1;
  }
  return 0;
}
