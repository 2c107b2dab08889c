/* The live and inactive tables (see live.h): reload, clear, suspend,
 * resume, and the swap that builds a new cipher and engine from a table
 * while the gate (gate.c) is closed and nothing is in flight. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../crypto/secmem.h"
#include "dmcrypt.h"
#include "live.h"

/* dmcrypt.c's -D dmcrypt.* flags, given again to every rebuilt engine. */
extern int dmcrypt_debug_queue, dmcrypt_debug_writeout, dmcrypt_debug_workers;

#define MAX_WORKERS 1024

/* Control thread only. */
static struct
{
  bool have_inactive;
  struct crypt_table inactive;
  bool inactive_readonly;
  char *inactive_scheduler;          /* NULL: keep the live policy */
  bool inactive_set_workers;
  unsigned inactive_workers;
  bool key_valid;                    /* false after "key wipe" */
  struct engine_stats retired;       /* engines already freed */
} st;

void
live_fail (struct live_err *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  err->errnum = errnum;
  va_start (ap, fmt);
  vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  va_end (ap);
  nbdkit_debug ("control: %s", err->msg);
}

/* The live table's geometry for new connections; the backend's discard
 * switch follows allow_discards (the backend is opened before any
 * table exists). */
static void
publish (void)
{
  gate_publish (&volume.table);
  volume.backend->can_discard = !volume.backend->readonly
    && (volume.table.flags & CT_ALLOW_DISCARDS);
}

int
live_init (void)
{
  st.key_valid = true;
  publish ();
  return reload_init ();
}

void
live_free (void)
{
  crypt_table_free (&st.inactive);
  free (st.inactive_scheduler);
  st.inactive_scheduler = NULL;
  st.inactive_set_workers = false;
  st.have_inactive = false;
}

/* ---- Queries ---- */

void
live_get_state (struct live_state *s)
{
  s->suspended = gate_is_closed ();
  s->inactive = st.have_inactive;
  s->readonly = atomic_load (&live_readonly);
  s->key_valid = st.key_valid;
  s->inflight = gate_inflight ();
}

char *
live_format_table (bool inactive, bool showkeys)
{
  if (inactive && !st.have_inactive) {
    errno = ENXIO;
    return NULL;
  }
  return crypt_table_format (inactive ? &st.inactive : &volume.table,
                             showkeys, live_device ());
}

static void
add_stats (struct engine_stats *sum, const struct engine_stats *s)
{
  sum->reads += s->reads; sum->writes += s->writes;
  sum->zeros += s->zeros; sum->trims += s->trims;
  sum->flushes += s->flushes;
  sum->read_bytes += s->read_bytes; sum->write_bytes += s->write_bytes;
  sum->read_chunks += s->read_chunks; sum->write_chunks += s->write_chunks;
  sum->inline_chunks += s->inline_chunks;
  sum->worker_chunks += s->worker_chunks;
  sum->dispatches += s->dispatches; sum->sequential += s->sequential;
  sum->rounds += s->rounds; sum->rmw_sectors += s->rmw_sectors;
  sum->errors += s->errors; sum->buffer_waits += s->buffer_waits;
#define HIGH(f) if (s->f > sum->f) sum->f = s->f
  HIGH (inflight_max); HIGH (worker_depth_max); HIGH (writeout_depth_max);
  HIGH (batch_max); HIGH (buffers_max);
#undef HIGH
}

void
live_get_stats (struct engine_stats *out)
{
  struct engine_stats now;

  *out = st.retired;
  if (volume.engine) {
    engine_get_stats (volume.engine, &now);
    add_stats (out, &now);
  }
}

/* ---- Swaps (only while the gate is closed) ---- */

static void
retire_engine (struct engine *engine, struct sector_cipher *cipher)
{
  struct engine_stats s;

  if (engine) {
    engine_get_stats (engine, &s);
    add_stats (&st.retired, &s);
  }
  engine_free (engine);
  sector_cipher_free (cipher);
}

/* Makes T (consumed on success) the live table, with a new cipher and
 * engine using SCHEDULER (consumed on success; NULL keeps the policy)
 * and, if SET_WORKERS, WORKERS threads.  On failure everything stays
 * as it was. */
static int
install (struct crypt_table *t, char *scheduler, bool set_workers,
         unsigned workers, struct live_err *err)
{
  struct crypt_table old_table = volume.table;
  struct sector_cipher *old_cipher = volume.cipher;
  struct engine *old_engine = volume.engine;
  char *old_scheduler = params.scheduler;
  unsigned old_workers = params.workers;
  uint64_t old_size = volume.size;

  volume.table = *t;
  volume.size = t->length * 512;
  volume.cipher = NULL;
  volume.engine = NULL;
  if (scheduler)
    params.scheduler = scheduler;
  if (set_workers)
    params.workers = workers;
  if (volume_build_engine () == -1 || engine_start (volume.engine) == -1) {
    engine_free (volume.engine);
    sector_cipher_free (volume.cipher);
    volume.table = old_table;
    volume.size = old_size;
    volume.cipher = old_cipher;
    volume.engine = old_engine;
    params.scheduler = old_scheduler;
    params.workers = old_workers;
    live_fail (err, EINVAL, "cannot build the engine for the new table "
               "(see the server log)");
    return -1;
  }
  engine_set_debug (volume.engine,
                    (dmcrypt_debug_queue ? ENGINE_DEBUG_QUEUE : 0)
                    | (dmcrypt_debug_writeout ? ENGINE_DEBUG_WRITEOUT : 0)
                    | (dmcrypt_debug_workers ? ENGINE_DEBUG_WORKERS : 0));
  retire_engine (old_engine, old_cipher);
  crypt_table_free (&old_table);
  if (scheduler)
    free (old_scheduler);
  memset (t, 0, sizeof *t);
  st.key_valid = true;
  publish ();
  return 0;
}

/* install() of a copy of the live table, with KEY (secmem, consumed)
 * instead of its key when not NULL. */
static int
install_copy (uint8_t *key, char *scheduler, bool set_workers,
              unsigned workers, struct live_err *err)
{
  struct crypt_table copy;

  if (crypt_table_copy (&copy, &volume.table) == -1) {
    secmem_free (key, volume.table.key_size);
    live_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  if (key) {
    secmem_free (copy.key, copy.key_size);
    copy.key = key;
  }
  if (install (&copy, scheduler, set_workers, workers, err) == -1) {
    crypt_table_free (&copy);
    return -1;
  }
  return 0;
}

void
live_key_wipe (void)
{
  if (volume.table.key)
    explicit_bzero (volume.table.key, volume.table.key_size);
  /* The cipher holds the expanded key: it goes now, not at resume. */
  retire_engine (volume.engine, volume.cipher);
  volume.engine = NULL;
  volume.cipher = NULL;
  st.key_valid = false;
}

int
live_key_set (uint8_t *key, struct live_err *err)
{
  return install_copy (key, NULL, false, 0, err);
}

int
live_set_tunables (char *scheduler, bool set_workers, unsigned workers,
                   struct live_err *err)
{
  bool was_suspended = gate_is_closed ();
  int r;

  if (!st.key_valid) {
    /* No engine until "key set", which builds it with these. */
    if (scheduler) {
      free (params.scheduler);
      params.scheduler = scheduler;
    }
    if (set_workers)
      params.workers = workers;
    return 0;
  }
  if (live_suspend (false, err) == -1)
    return -1;
  r = install_copy (NULL, scheduler, set_workers, workers, err);
  if (!was_suspended)
    gate_open ();
  return r;
}

/* ---- Commands ---- */

/* The image is locked exclusively while a read-write table is live or
 * loaded, shared otherwise; as the kernel opens a table's devices when
 * the table is loaded, a read-write reload fails while another program
 * holds the image. */
static int
follow_tables (bool inactive_writable, struct live_err *err)
{
  char why[512];

  if (image_locks_follow (!atomic_load (&live_readonly) || inactive_writable,
                          why, sizeof why) == -1) {
    live_fail (err, errno, "%s", why);
    return -1;
  }
  return 0;
}

static void
follow_tables_quietly (void)
{
  struct live_err ignored;

  follow_tables (st.have_inactive && !st.inactive_readonly, &ignored);
}

int
live_reload (const struct live_reload *r, struct live_err *err)
{
  struct crypt_table t;
  char *scheduler = NULL;

  if (r->scheduler && !live_known_policy (r->scheduler)) {
    live_fail (err, EINVAL, "scheduler: expected one of: %s",
               engine_policy_names ());
    return -1;
  }
  if (r->set_workers && (r->workers < 1 || r->workers > MAX_WORKERS)) {
    live_fail (err, EINVAL, "workers: must be between 1 and %d",
               MAX_WORKERS);
    return -1;
  }
  if (reload_check (r, &t, err) == -1)
    return -1;
  if (follow_tables (!r->readonly, err) == -1) {
    crypt_table_free (&t);
    return -1;
  }
  if (r->scheduler && (scheduler = strdup (r->scheduler)) == NULL) {
    crypt_table_free (&t);
    live_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  /* A second reload replaces the first, as in device-mapper. */
  live_free ();
  st.inactive = t;
  st.inactive_readonly = r->readonly;
  st.inactive_scheduler = scheduler;
  st.inactive_set_workers = r->set_workers;
  st.inactive_workers = r->workers;
  st.have_inactive = true;
  return 0;
}

void
live_clear (void)
{
  live_free ();
  follow_tables_quietly ();
}

int
live_suspend (bool noflush, struct live_err *err)
{
  if (gate_is_closed ())
    return 0;
  if (gate_close () == -1) {
    live_fail (err, ETIMEDOUT, "requests still in flight after a minute");
    return -1;
  }
  /* --noflush: once drained nothing is queued inside dmcrypt (every
   * write returned after reaching the backend), so it only skips the
   * backend's sync. */
  if (!noflush && volume.engine && engine_flush (volume.engine) == -1) {
    int e = errno;
    gate_open ();
    live_fail (err, e, "flush before suspend failed: %s", strerror (e));
    return -1;
  }
  return 0;
}

int
live_resume (struct live_err *err)
{
  if (!st.have_inactive) {
    if (!gate_is_closed ())
      return 0;
    /* dm-crypt's crypt_preresume. */
    if (!st.key_valid) {
      live_fail (err, EAGAIN, "aborting resume - crypt key is not set");
      return -1;
    }
    gate_open ();
    return 0;
  }
  /* device-mapper suspends a running device itself to swap tables; if
   * the swap fails the device stays suspended. */
  if (live_suspend (false, err) == -1
      || install (&st.inactive, st.inactive_scheduler,
                  st.inactive_set_workers, st.inactive_workers, err) == -1)
    return -1;
  atomic_store (&live_readonly, st.inactive_readonly);
  st.inactive_scheduler = NULL;        /* now params.scheduler */
  live_free ();
  follow_tables_quietly ();
  gate_open ();
  return 0;
}
