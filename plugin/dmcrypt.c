/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nbdkit glue: callbacks named dmcrypt_<callback> that hand the command
 * line and the requests to the volume (volume/volume.h), which both
 * front ends share.  Everything about formats and crypto lives below
 * it; this file only speaks nbdkit. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>
#include <gcrypt.h>
#include <openssl/opensslv.h>

#include "../volume/control/control.h"
#include "../volume/volume.h"

#define DMCRYPT_VERSION "0.1"

/* Engine tracing in nbdkit's debug log (needs -v). */
NBDKIT_DLL_PUBLIC int dmcrypt_debug_queue;     /* -D dmcrypt.queue=1 */
NBDKIT_DLL_PUBLIC int dmcrypt_debug_writeout;  /* -D dmcrypt.writeout=1 */
NBDKIT_DLL_PUBLIC int dmcrypt_debug_workers;   /* -D dmcrypt.workers=1 */

/* The one volume of this nbdkit process; NULL when .load ran out of
 * memory (said then), which fails .config_complete. */
static struct dmcrypt_volume *volume;

static void
dmcrypt_load (void)
{
  volume = volume_new (false);
}

static void
dmcrypt_unload (void)
{
  control_close (volume);
  volume_free (volume);
  volume = NULL;
}

static void
dmcrypt_dump_plugin (void)
{
  printf ("dmcrypt_version=%s\n", DMCRYPT_VERSION);
  printf ("dmcrypt_openssl=%s\n", OPENSSL_VERSION_TEXT);
  printf ("dmcrypt_libgcrypt=%s\n", gcry_check_version (NULL));
  printf ("dmcrypt_cipher_library_auto=%s\n", sector_cipher_auto_library ());
  printf ("dmcrypt_schedulers=%s\n", engine_policy_names ());
}

static int
dmcrypt_config (const char *key, const char *value)
{
  return volume ? params_config (&volume->params, key, value) : -1;
}

static int
dmcrypt_config_complete (void)
{
  if (volume == NULL)
    return -1;
  volume->params.engine_debug =
    (dmcrypt_debug_queue ? ENGINE_DEBUG_QUEUE : 0)
    | (dmcrypt_debug_writeout ? ENGINE_DEBUG_WRITEOUT : 0)
    | (dmcrypt_debug_workers ? ENGINE_DEBUG_WORKERS : 0);
  return volume_open (volume) == -1 || control_open (volume) == -1 ? -1 : 0;
}

/* The engine's summary, once all connections are gone. */
static void
dmcrypt_cleanup (void)
{
  /* No table swap may run from the control socket from now on. */
  control_close (volume);
  volume_log_stats (volume);
}

static int
dmcrypt_after_fork (void)
{
  if (volume_start (volume) == -1)
    return -1;
  return control_start (volume);
}

static void *
dmcrypt_open (int readonly)
{
  (void) readonly;
  return volume_conn_new (volume, nbdkit_export_name ());
}

static void
dmcrypt_close (void *handle)
{
  volume_conn_free (handle);
}

static int64_t
dmcrypt_get_size (void *handle)
{
  (void) handle;
  return dm_size (volume->dm);
}

static int
dmcrypt_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                    uint32_t *maximum)
{
  (void) handle;
  volume_block_sizes (volume, minimum, preferred);
  *maximum = 0xffffffff;
  return 0;
}

static int
dmcrypt_can_write (void *handle)
{
  (void) handle;
  return !dm_readonly (volume->dm);
}

static int
dmcrypt_can_flush (void *handle)
{
  (void) handle;
  return 1;
}

static int
dmcrypt_can_fua (void *handle)
{
  (void) handle;
  return NBDKIT_FUA_NATIVE;
}

static int
dmcrypt_can_trim (void *handle)
{
  (void) handle;
  return (dm_flags (volume->dm) & CT_ALLOW_DISCARDS) != 0;
}

static int
dmcrypt_can_zero (void *handle)
{
  (void) handle;
  return 1;
}

static int
dmcrypt_can_multi_conn (void *handle)
{
  /* Every connection shares one engine and one backend, and a flush
   * syncs the whole backend, so multi-conn is safe. */
  (void) handle;
  return 1;
}

/* The volume does the work for both front ends; nbdkit wants the
 * errno. */
static int
io (void *handle, enum io_op op, void *buf, uint32_t count, uint64_t offset,
    uint32_t flags)
{
  int err;

  if (volume_io (handle, op, buf, count, offset, flags & NBDKIT_FLAG_FUA,
                 &err) == -1) {
    nbdkit_set_error (err);
    return -1;
  }
  return 0;
}

static int
dmcrypt_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
               uint32_t flags)
{
  return io (handle, IO_READ, buf, count, offset, flags);
}

static int
dmcrypt_pwrite (void *handle, const void *buf, uint32_t count,
                uint64_t offset, uint32_t flags)
{
  return io (handle, IO_WRITE, (void *) buf, count, offset, flags);
}

static int
dmcrypt_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  return io (handle, IO_ZERO, NULL, count, offset, flags);
}

static int
dmcrypt_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  return io (handle, IO_TRIM, NULL, count, offset, flags);
}

static int
dmcrypt_flush (void *handle, uint32_t flags)
{
  return io (handle, IO_FLUSH, NULL, 0, 0, flags);
}

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static struct nbdkit_plugin plugin = {
  .name              = "dmcrypt",
  .version           = DMCRYPT_VERSION,
  .longname          = "nbdkit userspace dm-crypt plugin",
  .description       = "Serves the plaintext of LUKS1, LUKS2, plain "
                       "dm-crypt, BitLocker, TrueCrypt/VeraCrypt and "
                       "FileVault2 images",
  .load              = dmcrypt_load,
  .unload            = dmcrypt_unload,
  .config            = dmcrypt_config,
  .config_complete   = dmcrypt_config_complete,
  .config_help       = dmcrypt_config_help,
  .magic_config_key  = "file",
  .dump_plugin       = dmcrypt_dump_plugin,
  .after_fork        = dmcrypt_after_fork,
  .cleanup           = dmcrypt_cleanup,
  .open              = dmcrypt_open,
  .close             = dmcrypt_close,
  .get_size          = dmcrypt_get_size,
  .block_size        = dmcrypt_block_size,
  .can_write         = dmcrypt_can_write,
  .can_flush         = dmcrypt_can_flush,
  .can_fua           = dmcrypt_can_fua,
  .can_trim          = dmcrypt_can_trim,
  .can_zero          = dmcrypt_can_zero,
  .can_multi_conn    = dmcrypt_can_multi_conn,
  .pread             = dmcrypt_pread,
  .pwrite            = dmcrypt_pwrite,
  .zero              = dmcrypt_zero,
  .trim              = dmcrypt_trim,
  .flush             = dmcrypt_flush,
  .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN (plugin)
