/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nbdkit glue for the filter: nbdkit --filter=dmcrypt PLUGIN ... serves
 * the plaintext of whatever ciphertext the plugin (and any filters
 * between) serve.  The volume, its mapping, engine and control socket
 * are the layer both front ends share (volume/), over a backend that
 * calls the next layer (nextback.c); this file only speaks nbdkit's
 * filter API.
 *
 * The next layer exists only after nbdkit forked, so the volume opens
 * in .after_fork, once for every connection, on a context of its own.
 * nbdkit 1.32 gives a filter the layer below only from .after_fork
 * (nbdkit_next_context_open needs the backend that .after_fork gets;
 * .get_ready gets none), and a plugin such as nbd with shared=true is
 * ready only after its own .after_fork: by then nbdkit has gone into
 * the background and its exit status was 0. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nbdkit-filter.h>

#include "../volume/params/cmdline.h"
#include "../volume/control/control.h"
#include "../volume/volume.h"
#include "filter.h"
#include "nextback.h"

/* -D dmcrypt.* flags, as the plugin's: handed to the volume. */
NBDKIT_DLL_PUBLIC int dmcrypt_debug_queue;
NBDKIT_DLL_PUBLIC int dmcrypt_debug_writeout;
NBDKIT_DLL_PUBLIC int dmcrypt_debug_workers;

/* The one volume of this nbdkit process; NULL when .load ran out of
 * memory (said then), which fails .config. */
static struct dmcrypt_volume *volume;
static nbdkit_next *shared;          /* the volume's own context */
static bool serialise;               /* the layer below is not parallel */
static int header_fd = -1;
static char header_path[64];
/* Under --run, a volume that did not open: every connection is refused
 * (the error is in the log), so that the command fails at once. */
static bool failed_under_run;
/* nbdkit's command line, read in .get_ready, before nbdkit leaves its
 * working directory; the socket and PID file made absolute. */
static struct cmdline_facts server;

static int
filter_config (nbdkit_next_config *next, nbdkit_backend *nxdata,
               const char *key, const char *value)
{
  if (volume == NULL)
    return -1;
  return filter_config_key (&volume->params, next, nxdata, key, value);
}

/* What can be checked before the next layer exists is checked here,
 * where an error still makes nbdkit exit non-zero in the background. */
static int
filter_config_complete (nbdkit_next_config_complete *next,
                        nbdkit_backend *nxdata)
{
  if (volume == NULL || filter_config_apply (&volume->params) == -1
      || volume_check_params (volume) == -1)
    return -1;
  volume->params.engine_debug =
    (dmcrypt_debug_queue ? ENGINE_DEBUG_QUEUE : 0)
    | (dmcrypt_debug_writeout ? ENGINE_DEBUG_WRITEOUT : 0)
    | (dmcrypt_debug_workers ? ENGINE_DEBUG_WORKERS : 0);
  return next (nxdata);
}

static int
filter_thread_model (void)
{
  return NBDKIT_THREAD_MODEL_PARALLEL;
}

/* The control socket needs no volume: made before nbdkit forks, a name
 * in use ends the server with exit status 1 even in the background. */
static int
filter_get_ready (int thread_model)
{
  serialise = thread_model < NBDKIT_THREAD_MODEL_PARALLEL;
  server_facts_read (&server);
  return control_open (volume);
}

/* ---- The volume over the next layer ---- */

static int
open_lower (nbdkit_backend *nxdata, bool readonly)
{
  struct backend *lower;

  shared = nbdkit_next_context_open (nxdata, readonly, "", 1);
  if (shared == NULL) {
    nbdkit_error ("cannot open the plugin's export");
    return -1;
  }
  if (shared->prepare (shared) == -1)
    return -1;
  nbdkit_debug ("dmcrypt: the layer below %s",
                serialise ? "is not parallel: calls to it are serialised"
                : "is parallel");
  lower = backend_next_open (shared, serialise, readonly);
  if (lower == NULL)
    return -1;
  volume_set_lower (volume, lower, FILTER_IMAGE_LABEL, header_path);
  header_fd = (volume->params.type == VT_TCRYPT ? header_copy_tcrypt
               : header_copy) (lower, header_path, sizeof header_path);
  return header_fd == -1 ? -1 : 0;
}

/* An error here ends the server, without its socket and PID file: in
 * the foreground nbdkit exits 1; in the background it exited 0 already
 * and the error is in its log (syslog).  Under --run nbdkit would keep
 * its socket for the command, which would then wait for a server that
 * is gone: the server stays, and refuses every connection instead. */
static int
filter_after_fork (nbdkit_backend *nxdata)
{
  if (open_lower (nxdata, server.readonly) == 0 && volume_open (volume) == 0
      && volume_start (volume) == 0)
    return control_start (volume);
  /* The socket was made before the fork: no volume answers on it. */
  control_close (volume);
  if (server.run) {
    failed_under_run = true;
    return 0;
  }
  nbdkit_debug ("dmcrypt: the volume did not open (nbdkit's log has the "
                "error): the server ends");
  server_files_remove (&server);
  return -1;
}

/* Everything that calls the next layer stops before its context goes. */
static void
filter_cleanup (nbdkit_backend *nxdata)
{
  (void) nxdata;
  control_close (volume);
  volume_log_stats (volume);
  if (volume)
    volume_close (volume);
  if (header_fd >= 0)
    close (header_fd);
  header_fd = -1;
  if (shared) {
    shared->finalize (shared);
    nbdkit_next_context_close (shared);
    shared = NULL;
  }
}

static void
filter_load (void)
{
  volume = volume_new (true);
}

static void
filter_unload (void)
{
  filter_cleanup (NULL);
  volume_free (volume);
  volume = NULL;
  cmdline_facts_free (&server);
  filter_config_free ();
}

/* ---- Connections ---- */

static void *
filter_open (nbdkit_next_open *next, nbdkit_context *context, int readonly,
             const char *exportname, int is_tls)
{
  (void) is_tls;
  /* The reason was logged once, in .after_fork. */
  if (failed_under_run) {
    nbdkit_debug ("dmcrypt: refused: the volume did not open");
    return NULL;
  }
  if (next (context, readonly, exportname) == -1)
    return NULL;
  return volume_conn_new (volume, exportname);
}

static void
filter_close (void *handle)
{
  volume_conn_free (handle);
}

static int64_t
filter_get_size (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return dm_size (volume->dm);
}

/* The engine's sizes, within what the layer below accepts. */
static int
filter_block_size (nbdkit_next *next, void *handle, uint32_t *minimum,
                   uint32_t *preferred, uint32_t *maximum)
{
  uint32_t lmin = 0, lpref = 0, lmax = 0;
  unsigned ss = dm_sector_size (volume->dm);

  (void) handle;
  if (next->block_size (next, &lmin, &lpref, &lmax) == -1)
    return -1;
  volume_block_sizes (volume, minimum, preferred);
  /* The engine reads and writes the layer below in whole encryption
   * sectors: only a lower minimum larger than a sector asks clients
   * for more. */
  if (lmin > ss && lmin > *minimum)
    *minimum = lmin;
  if (lpref > *preferred)
    *preferred = lpref;
  if (*preferred < *minimum)
    *preferred = *minimum;
  *maximum = lmax ? lmax : 0xffffffff;
  return 0;
}

static int
filter_can_write (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return !dm_readonly (volume->dm);
}

static int
filter_can_flush (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return 1;
}

static int
filter_can_fua (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return NBDKIT_FUA_NATIVE;
}

static int
filter_can_trim (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return (dm_flags (volume->dm) & CT_ALLOW_DISCARDS) != 0;
}

/* Zeros are written encrypted: the layer's own zeroing would leave
 * zeros of ciphertext, which decrypt to noise. */
static int
filter_can_zero (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return 1;
}

static int
filter_can_fast_zero (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return 0;
}

/* Holes in the ciphertext are not zeros in the plaintext. */
static int
filter_can_extents (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return 0;
}

static int
filter_can_cache (nbdkit_next *next, void *handle)
{
  (void) next; (void) handle;
  return NBDKIT_CACHE_NONE;
}

static int
filter_can_multi_conn (nbdkit_next *next, void *handle)
{
  /* One engine and one context serve every connection. */
  (void) next; (void) handle;
  return 1;
}

static int
filter_pread (nbdkit_next *next, void *handle, void *buf, uint32_t count,
              uint64_t offset, uint32_t flags, int *err)
{
  (void) next;
  return volume_io (handle, IO_READ, buf, count, offset,
                    flags & NBDKIT_FLAG_FUA, err);
}

static int
filter_pwrite (nbdkit_next *next, void *handle, const void *buf,
               uint32_t count, uint64_t offset, uint32_t flags, int *err)
{
  (void) next;
  return volume_io (handle, IO_WRITE, (void *) buf, count, offset,
                    flags & NBDKIT_FLAG_FUA, err);
}

static int
filter_zero (nbdkit_next *next, void *handle, uint32_t count,
             uint64_t offset, uint32_t flags, int *err)
{
  (void) next;
  return volume_io (handle, IO_ZERO, NULL, count, offset,
                    flags & NBDKIT_FLAG_FUA, err);
}

static int
filter_trim (nbdkit_next *next, void *handle, uint32_t count,
             uint64_t offset, uint32_t flags, int *err)
{
  (void) next;
  return volume_io (handle, IO_TRIM, NULL, count, offset,
                    flags & NBDKIT_FLAG_FUA, err);
}

static int
filter_flush (nbdkit_next *next, void *handle, uint32_t flags, int *err)
{
  (void) next; (void) flags;
  return volume_io (handle, IO_FLUSH, NULL, 0, 0, false, err);
}

static struct nbdkit_filter filter = {
  .name              = "dmcrypt",
  .longname          = "nbdkit userspace dm-crypt filter",
  .description       = "Serves the plaintext of LUKS1, LUKS2, plain "
                       "dm-crypt, BitLocker, TrueCrypt/VeraCrypt and "
                       "FileVault2 ciphertext from any plugin",
  .load              = filter_load,
  .unload            = filter_unload,
  .config            = filter_config,
  .config_complete   = filter_config_complete,
  .config_help       = dmcrypt_filter_config_help,
  .thread_model      = filter_thread_model,
  .get_ready         = filter_get_ready,
  .after_fork        = filter_after_fork,
  .cleanup           = filter_cleanup,
  .open              = filter_open,
  .close             = filter_close,
  .get_size          = filter_get_size,
  .block_size        = filter_block_size,
  .can_write         = filter_can_write,
  .can_flush         = filter_can_flush,
  .can_fua           = filter_can_fua,
  .can_trim          = filter_can_trim,
  .can_zero          = filter_can_zero,
  .can_fast_zero     = filter_can_fast_zero,
  .can_extents       = filter_can_extents,
  .can_cache         = filter_can_cache,
  .can_multi_conn    = filter_can_multi_conn,
  .pread             = filter_pread,
  .pwrite            = filter_pwrite,
  .zero              = filter_zero,
  .trim              = filter_trim,
  .flush             = filter_flush,
};

NBDKIT_REGISTER_FILTER (filter)
