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

#define PREFIX "dmcrypt-"

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

/* ---- Parameters ---- */

/* A bare KEY= that both dmcrypt and the plugin may take waits for the
 * end of the command line: if dmcrypt-KEY= was given too, the bare one
 * is the plugin's. */
struct deferred
{
  char *key, *value;
  struct deferred *next;
};
static struct deferred *deferred, **deferred_tail = &deferred;
static char *prefixed[64];           /* names given as dmcrypt-KEY= */
static unsigned nprefixed;
static nbdkit_next_config *next_config;
static nbdkit_backend *next_config_data;

static bool
given_prefixed (const char *key)
{
  unsigned i;

  for (i = 0; i < nprefixed; i++)
    if (strcmp (prefixed[i], key) == 0)
      return true;
  return false;
}

static int
defer (const char *key, const char *value)
{
  struct deferred *d = calloc (1, sizeof *d);

  if (d == NULL || (d->key = strdup (key)) == NULL
      || (d->value = strdup (value)) == NULL) {
    nbdkit_error ("strdup: %m");
    if (d)
      free (d->key);
    free (d);
    return -1;
  }
  *deferred_tail = d;
  deferred_tail = &d->next;
  return 0;
}

/* file= goes to the plugin, and names the volume when it is the only
 * one: messages, the table's device and the control socket's default
 * name then read as the plugin's do.  A bare dmcrypt parameter name
 * that is no file was a parameter without its value. */
static unsigned layer_files;

static int
note_layer_file (const char *value)
{
  char **layer_file = &volume->params.layer_file;

  if (access (value, F_OK) == -1 && errno == ENOENT
      && params_is_name (value)) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", value, value);
    return -1;
  }
  free (*layer_file);
  *layer_file = NULL;
  /* Absolute: nbdkit leaves the working directory when it forks. */
  if (++layer_files == 1 && (*layer_file = realpath (value, NULL)) == NULL)
    *layer_file = strdup (value);
  return 0;
}

static int
filter_config (nbdkit_next_config *next, nbdkit_backend *nxdata,
               const char *key, const char *value)
{
  char alt[64];

  next_config = next;
  next_config_data = nxdata;
  if (volume == NULL)
    return -1;
  if (strncmp (key, PREFIX, strlen (PREFIX)) == 0
      && params_is_name (key + strlen (PREFIX))
      && strcmp (key + strlen (PREFIX), "file") != 0) {
    if (nprefixed < sizeof prefixed / sizeof prefixed[0]
        && !given_prefixed (key + strlen (PREFIX))
        && (prefixed[nprefixed] = strdup (key + strlen (PREFIX))) != NULL)
      nprefixed++;
    return params_config (&volume->params, key + strlen (PREFIX), value);
  }
  /* file= is the plugin's: the filter's data is the next layer. */
  if (strcmp (key, "file") == 0)
    return note_layer_file (value) == -1 ? -1 : next (nxdata, key, value);
  if (params_respelt (key, alt, sizeof alt)) {
    nbdkit_error ("unknown parameter '%s': did you mean '%s'?", key, alt);
    return -1;
  }
  if (!params_is_name (key))
    return next (nxdata, key, value);
  return defer (key, value);
}

static int
apply_deferred (void)
{
  struct deferred *d, *next;
  int r = 0;

  for (d = deferred; d; d = next) {
    next = d->next;
    if (r == 0)
      r = given_prefixed (d->key)
        ? next_config (next_config_data, d->key, d->value)
        : params_config (&volume->params, d->key, d->value);
    explicit_bzero (d->value, strlen (d->value));
    free (d->key);
    free (d->value);
    free (d);
  }
  deferred = NULL;
  deferred_tail = &deferred;
  return r;
}

/* What can be checked before the next layer exists is checked here,
 * where an error still makes nbdkit exit non-zero in the background. */
static int
filter_config_complete (nbdkit_next_config_complete *next,
                        nbdkit_backend *nxdata)
{
  if (volume == NULL || apply_deferred () == -1
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

/* PATH relative to nbdkit's first directory, as nbdkit_absolute_path
 * made its own copy (server/main.c: -U, -P), or NULL. */
static int
absolute (char **path)
{
  char *abs;

  if (*path == NULL || **path == '/')
    return 0;
  if ((abs = nbdkit_absolute_path (*path)) == NULL)
    return -1;
  free (*path);
  *path = abs;
  return 0;
}

static void
read_server_cmdline (void)
{
  if (cmdline_proc_facts (&server) == -1
      || absolute (&server.unix_socket) == -1
      || absolute (&server.pid_file) == -1)
    nbdkit_debug ("dmcrypt: cannot read nbdkit's command line: "
                  "assuming no -r, no --run, no socket or PID file");
}

/* The control socket needs no volume: made before nbdkit forks, a name
 * in use ends the server with exit status 1 even in the background. */
static int
filter_get_ready (int thread_model)
{
  serialise = thread_model < NBDKIT_THREAD_MODEL_PARALLEL;
  read_server_cmdline ();
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

/* The PID file at PATH names this process. */
static bool
names_this_process (const char *path)
{
  FILE *fp = fopen (path, "re");
  long pid = 0;
  bool ours;

  if (fp == NULL)
    return false;
  ours = fscanf (fp, "%ld", &pid) == 1 && pid == (long) getpid ();
  fclose (fp);
  return ours;
}

/* nbdkit 1.32 never removes its Unix socket, and writes the PID file
 * before .after_fork (main.c, start_serving): a server that ends here
 * would leave a socket that refuses connections and a PID file of a
 * process that is gone. */
static void
remove_server_files (void)
{
  struct stat st;

  if (server.unix_socket && lstat (server.unix_socket, &st) == 0
      && S_ISSOCK (st.st_mode) && unlink (server.unix_socket) == 0)
    nbdkit_debug ("dmcrypt: removed the socket %s", server.unix_socket);
  if (server.pid_file && names_this_process (server.pid_file)
      && unlink (server.pid_file) == 0)
    nbdkit_debug ("dmcrypt: removed the PID file %s", server.pid_file);
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
  remove_server_files ();
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
  unsigned i;

  filter_cleanup (NULL);
  volume_free (volume);
  volume = NULL;
  cmdline_facts_free (&server);
  for (i = 0; i < nprefixed; i++)
    free (prefixed[i]);
  nprefixed = 0;
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
  return volume_conn_new (volume);
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
