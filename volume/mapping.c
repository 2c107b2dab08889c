/* The volume's device-mapper mapping (dm/dm.h), made once the table is
 * known, and what the core asks of the plugin for it: the image's
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
#include "volume.h"

#define HOLD_POLL_NS 5000000         /* a held request looks every 5 ms */

/* dmcrypt.c's -D dmcrypt.* flags. */
extern int dmcrypt_debug_queue, dmcrypt_debug_writeout, dmcrypt_debug_workers;

static struct stat image;            /* the backing file, as opened */
static char device_field[PATH_MAX];

/* FIELD names our image: "major:minor" of the block device, or a path
 * to the same block device or file. */
static bool
same_device (void *arg, const char *field)
{
  unsigned maj, min;
  char extra;
  struct stat st;

  (void) arg;
  if (volume_image_file () == NULL)
    return false;                    /* only the label itself */
  if (sscanf (field, "%u:%u%c", &maj, &min, &extra) == 2)
    return S_ISBLK (image.st_mode) && makedev (maj, min) == image.st_rdev;
  if (stat (field, &st) == -1)
    return false;
  if (S_ISBLK (st.st_mode))
    return S_ISBLK (image.st_mode) && st.st_rdev == image.st_rdev;
  return S_ISREG (image.st_mode) && st.st_dev == image.st_dev
    && st.st_ino == image.st_ino;
}

static int
locks_follow (void *arg, bool writable, char *why, size_t size)
{
  (void) arg;
  return image_locks_follow (&volume.locks, writable, why, size);
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
name_device (void)
{
  const char *file = volume_image_file ();
  char *abs;

  if (file == NULL) {
    snprintf (device_field, sizeof device_field, "%s", volume.image);
    return 0;
  }
  if (stat (file, &image) == -1) {
    nbdkit_error ("stat: %s: %m", file);
    return -1;
  }
  if (S_ISBLK (image.st_mode))
    snprintf (device_field, sizeof device_field, "%u:%u",
              major (image.st_rdev), minor (image.st_rdev));
  else {
    abs = realpath (file, NULL);
    snprintf (device_field, sizeof device_field, "%s", abs ? abs : file);
    free (abs);
  }
  return 0;
}

/* scheduler= when none is given: under kernel=4.0 and 6.1 the kernel's
 * own dmcrypt_write (rbtree); else the mapping's default (sorted). */
static const char *
default_scheduler (void)
{
  if (params.kernel == KSERIES_4_0 || params.kernel == KSERIES_6_1)
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
mapping_open (void)
{
  struct dm_host host = {
    .backend = volume.backend, .device = device_field,
    .same_device = same_device, .locks_follow = locks_follow,
    .hold = hold, .server_readonly = volume.server_readonly,
    .cipher_library = params.cipher_library,
    .engine = {
      .max_read_size = params.max_read_size,
      .max_write_size = params.max_write_size,
      .max_inflight = params.max_inflight,
      .max_write_rounds = params.max_write_rounds,
      .offload_all = params.caller_crypt == TRI_FALSE,
      .kernel = params.kernel,
      .kcryptd_io = params.kcryptd_io,
      .kernel_writer = params.scheduler != NULL,
      .debug = (dmcrypt_debug_queue ? ENGINE_DEBUG_QUEUE : 0)
               | (dmcrypt_debug_writeout ? ENGINE_DEBUG_WRITEOUT : 0)
               | (dmcrypt_debug_workers ? ENGINE_DEBUG_WORKERS : 0),
    },
  };
  struct dm_tunables tun = {
    .scheduler = params.scheduler ? params.scheduler
      : default_scheduler (), .set_workers = true,
    .workers = params.workers,
  };
  struct dm_err err = { .errnum = 0 };

  note_chunk_size ("max-read-size", params.max_read_size,
                   volume.table.sector_size);
  note_chunk_size ("max-write-size", params.max_write_size,
                   volume.table.sector_size);
  if (name_device () == -1)
    return -1;
  volume.dm = dm_new (&host, &volume.table, params.readonly, &tun, &err);
  if (volume.dm == NULL) {
    /* A table the cipher or engine refused was reported already. */
    if (err.errnum != EINVAL)
      nbdkit_error ("%s", err.msg);
    return -1;
  }
  if (volume.luks.segments.count
      && dm_set_segments (volume.dm, &volume.luks.segments,
                          volume.backend->size, &err) == -1) {
    nbdkit_error ("%s: %s", volume.image, err.msg);
    return -1;
  }
  return 0;
}

const char *
mapping_device (void)
{
  return device_field;
}
