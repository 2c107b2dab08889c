/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's life: configuration and threads.  The requests
 * themselves are in request.c; a table swap builds a new engine
 * (dm/mapping.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend/kseries.h"
#include "../common/log.h"
#include "../table/crypt_table.h"
#include "internal.h"

#define DEFAULT_CHUNK (128 * 1024)          /* bytes, the kernel's */
#define DEFAULT_INFLIGHT (64 * 1024 * 1024) /* bytes of ciphertext */
#define MAX_CHUNK (64 * 1024 * 1024)        /* bytes: nbdkit's largest */

/* Chunk size in bytes: whole sectors, at least one, at most MAX_CHUNK
 * (a larger one could never be filled, and zeros are kept for one). */
static uint64_t
round_chunk (uint64_t size, unsigned ss)
{
  if (size == 0)
    size = DEFAULT_CHUNK;
  if (size > MAX_CHUNK)
    size = MAX_CHUNK;
  size &= ~(uint64_t) (ss - 1);
  return size < ss ? ss : size;
}

int
engine_check_config (const struct engine_config *cfg)
{
  unsigned ss = cfg->sector_size;

  if (ss < 512 || ss > MAX_SECTOR_SIZE || (ss & (ss - 1))) {
    nbdkit_error ("engine: bad sector size %u", ss);
    return -1;
  }
  if (writeout_policy_find (cfg->scheduler) == NULL) {
    nbdkit_error ("scheduler: unknown policy '%s' (expected one of: %s)",
                  cfg->scheduler, writeout_policy_names ());
    return -1;
  }
  return 0;
}

/* Applies CFG to E's derived fields; allocates the pool and zeros. */
static int
apply_config (struct engine *e, const struct engine_config *cfg)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);

  e->cfg = *cfg;
  e->cfg.scheduler = NULL;
  e->policy = writeout_policy_find (cfg->scheduler);
  e->read_chunk = round_chunk (cfg->max_read_size, cfg->sector_size);
  e->write_chunk = round_chunk (cfg->max_write_size, cfg->sector_size);
  e->max_inflight = cfg->max_inflight ? cfg->max_inflight
    : DEFAULT_INFLIGHT;
  e->nworkers = cfg->workers ? cfg->workers : cpus > 0 ? cpus : 1;
  if (kpipe_configure (e, cfg) == -1)
    return -1;
  atomic_store_explicit (&e->debug, cfg->debug, memory_order_relaxed);
  e->zeros = calloc (1, e->write_chunk);
  if (e->zeros == NULL
      || bufpool_init (&e->bufs, e->write_chunk, e->max_inflight) == -1) {
    nbdkit_error ("engine: %m");
    free (e->zeros);
    e->zeros = NULL;
    return -1;
  }
  return 0;
}

struct engine *
engine_new (const struct engine_config *cfg, struct sector_cipher *cipher,
            struct backend *backend)
{
  struct engine *e;

  if (engine_check_config (cfg) == -1)
    return NULL;
  e = calloc (1, sizeof *e);
  if (e == NULL) {
    nbdkit_error ("calloc: %m");
    return NULL;
  }
  if (apply_config (e, cfg) == -1) {
    free (e);
    return NULL;
  }
  e->cipher = cipher;
  e->identity = cipher && sector_cipher_is_identity (cipher);
  e->backend = backend;
  rangelock_init (&e->writes);
  e->wo.dispatch = chunk_dispatch_write;
  if (!backend_queues_writes (backend)) {
    e->wo.note = chunk_note_write;
    e->wo.perform = chunk_write_noted;
  }
  e->wo.max_writing = cfg->max_write_rounds;
  return e;
}

/* The crypting threads: dmcrypt's worker pool, or the kernel series'
 * kcryptd (and kcryptd_io). */
static int
start_crypters (struct engine *e)
{
  if (e->kp.series != KSERIES_NONE)
    return kpipe_start (e);
  return workers_start (e, e->nworkers);
}

static void
stop_crypters (struct engine *e)
{
  workers_stop (&e->pool);
  kpipe_stop (e);
}

/* The writer thread is needed unless every chunk is dispatched by the
 * thread that encrypted it. */
static int
start_threads (struct engine *e)
{
  if (start_crypters (e) == -1)
    return -1;
  if (!e->direct_writes && writeout_start (e) == -1) {
    stop_crypters (e);
    return -1;
  }
  if (debug_on (e, ENGINE_DEBUG_WORKERS))
    nbdkit_debug ("engine: %u workers, scheduler %s%s, kernel %s",
                  e->nworkers, e->policy->name,
                  e->wo.running ? "" : " (bypassed)",
                  kernel_series_name (e->kp.series));
  return 0;
}

/* Crypters first: after a chunk's completion has let its request go, a
 * worker may still be on its way back to the queue (or, with
 * submit_from_crypt_cpus, out of the backend). */
static void
stop_threads (struct engine *e)
{
  stop_crypters (e);
  writeout_stop (&e->wo);
}

int
engine_start (struct engine *e)
{
  if (e->started)
    return 0;
  if (start_threads (e) == -1)
    return -1;
  e->started = true;
  return 0;
}

void
engine_free (struct engine *e)
{
  if (e == NULL)
    return;
  stop_threads (e);
  bufpool_destroy (&e->bufs);
  free (e->zeros);
  rangelock_destroy (&e->writes);
  free (e);
}

/* ---- Requests inside ---- */

void
requests_leave (struct engine *e)
{
  atomic_fetch_sub (&e->inflight, 1);
}

void
requests_enter (struct engine *e)
{
  unsigned n = atomic_fetch_add (&e->inflight, 1) + 1;
  unsigned max = atomic_load_explicit (&e->st.inflight_max,
                                       memory_order_relaxed);

  while (n > max
         && !atomic_compare_exchange_weak (&e->st.inflight_max, &max, n))
    ;
}

void
engine_set_debug (struct engine *e, unsigned debug)
{
  atomic_store_explicit (&e->debug, debug, memory_order_relaxed);
}

int
engine_submitter_cpu (const struct engine *e, unsigned connection)
{
  if (e->kp.series == KSERIES_NONE)
    return -1;
  return (int) (connection % e->nworkers);
}

unsigned
engine_cpus (const struct engine *e)
{
  return e->kp.series == KSERIES_NONE ? 0 : e->nworkers;
}

const char *
engine_policy_names (void)
{
  return writeout_policy_names ();
}
