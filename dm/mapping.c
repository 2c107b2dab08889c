/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A mapping's life (dm.h): built from a table, its cipher and engine
 * swapped for new ones while the gate is closed, its counters kept
 * across swaps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../crypto/secmem.h"
#include "dmint.h"

#define DEFAULT_SCHEDULER "sorted"

/* A cipher and an engine for table T with the given tunables, started
 * if the mapping runs. */
static int
build (const struct dm_mapping *m, const struct crypt_table *t,
       const char *scheduler, unsigned workers,
       struct sector_cipher **cipher, struct engine **engine)
{
  struct sector_cipher_params cp = {
    .spec = t->cipher, .key = t->key, .key_size = t->key_size,
    .sector_size = t->sector_size, .iv_offset = t->iv_offset,
    .iv_large_sectors = (t->flags & CT_IV_LARGE_SECTORS) != 0,
    .library = m->host.cipher_library,
  };
  struct engine_config ec = m->host.engine;

  /* Authenticated sectors are sealed below the engine, with their tags
   * (backend/integrity.h): the engine splits, orders and read-modify-
   * writes plaintext, as dm-crypt's own pipeline runs above its AEAD. */
  if (t->integrity_tag_size != 0) {
    cp.spec = "cipher_null-ecb";
    cp.key = NULL;
    cp.key_size = 0;
    cp.iv_offset = 0;
    cp.iv_large_sectors = false;
  }
  ec.data_offset = t->offset * 512;
  ec.size = t->length * 512;
  ec.sector_size = t->sector_size;
  ec.flags = t->flags;
  ec.scheduler = scheduler;
  ec.workers = workers;
  *engine = NULL;
  if ((*cipher = sector_cipher_new (&cp)) == NULL)
    return -1;
  *engine = engine_new (&ec, *cipher, m->host.backend);
  if (*engine == NULL || (m->started && engine_start (*engine) == -1)) {
    engine_free (*engine);
    sector_cipher_free (*cipher);
    *engine = NULL;
    *cipher = NULL;
    return -1;
  }
  engine_set_debug (*engine, m->host.engine.debug);
  return 0;
}

struct dm_mapping *
dm_new (const struct dm_host *host, struct crypt_table *t, bool readonly,
        const struct dm_tunables *tun, struct dm_err *err)
{
  struct dm_mapping *m = calloc (1, sizeof *m);
  const char *scheduler = tun && tun->scheduler ? tun->scheduler
    : DEFAULT_SCHEDULER;

  if (m == NULL || (m->live.scheduler = strdup (scheduler)) == NULL) {
    free (m);
    dm_fail (err, ENOMEM, "out of memory");
    return NULL;
  }
  m->host = *host;
  m->live.workers = tun && tun->set_workers ? tun->workers : 0;
  if (build (m, t, m->live.scheduler, m->live.workers, &m->live.cipher,
             &m->live.engine) == -1) {
    free (m->live.scheduler);
    free (m);
    dm_fail (err, EINVAL, "cannot build the engine for the table "
             "(see the server log)");
    return NULL;
  }
  m->live.table = *t;
  memset (t, 0, sizeof *t);
  m->key_valid = true;
  atomic_store (&m->readonly, readonly);
  gate_publish (m);
  return m;
}

/* The live table, then the second one if there is one. */
static unsigned
tables_of (const struct dm_mapping *m, const struct crypt_table *tables[])
{
  tables[0] = &m->live.table;
  tables[1] = &m->second.table;
  return m->second.engine ? 2 : 1;
}

int
dm_set_segments (struct dm_mapping *m, const struct segment_list *l,
                 uint64_t device_bytes, struct dm_err *err)
{
  return dm_set_segment_tables (m, l, NULL, device_bytes, err);
}

int
dm_set_segment_tables (struct dm_mapping *m, const struct segment_list *l,
                       struct crypt_table *second, uint64_t device_bytes,
                       struct dm_err *err)
{
  const struct crypt_table *tables[SEGMENT_TABLES_MAX] = {
    &m->live.table, second };
  bool linear = false;
  char why[200];
  unsigned i;

  /* A re-encryption's list may be linear parts alone (an encryption
   * that has not started); BitLocker's never has one. */
  for (i = 0; i < l->count && i < SEGMENT_MAX; i++)
    linear |= l->seg[i].type == SEGMENT_LINEAR;
  if ((second || linear
       ? segment_list_check_tables (l, tables, second ? 2 : 1,
                                    device_bytes, why, sizeof why)
       : segment_list_check (l, &m->live.table, device_bytes, why,
                             sizeof why)) == -1) {
    dm_fail (err, EINVAL, "bad segment list: %s", why);
    return -1;
  }
  if (second && build (m, second, m->live.scheduler, m->live.workers,
                       &m->second.cipher, &m->second.engine) == -1) {
    dm_fail (err, EINVAL, "cannot build the engine for the second table "
             "(see the server log)");
    return -1;
  }
  if (second) {
    m->second.table = *second;
    memset (second, 0, sizeof *second);
    /* The stack's logical block is its largest target's (dm-table.c,
     * dm_calculate_queue_limits). */
    if (m->second.table.sector_size > m->live.table.sector_size)
      atomic_store (&m->gate.sector_size, m->second.table.sector_size);
  }
  m->segments = *l;
  m->reencrypt = second != NULL || linear;
  return 0;
}

bool
dm_has_second_table (const struct dm_mapping *m)
{
  return m->second.engine != NULL;
}

const struct segment_list *
dm_segments (const struct dm_mapping *m)
{
  return m->segments.count ? &m->segments : NULL;
}

const struct crypt_table *
dm_live_table (const struct dm_mapping *m)
{
  return &m->live.table;
}

int
dm_start (struct dm_mapping *m)
{
  m->started = true;
  if (m->second.engine && engine_start (m->second.engine) == -1)
    return -1;
  return m->live.engine ? engine_start (m->live.engine) : 0;
}

static void
free_inactive (struct dm_inactive *in)
{
  crypt_table_free (&in->table);
  free (in->scheduler);
  memset (in, 0, sizeof *in);
}

void
dm_free (struct dm_mapping *m)
{
  if (m == NULL)
    return;
  free_inactive (&m->inactive);
  engine_free (m->live.engine);
  sector_cipher_free (m->live.cipher);
  crypt_table_free (&m->live.table);
  engine_free (m->second.engine);
  sector_cipher_free (m->second.cipher);
  crypt_table_free (&m->second.table);
  free (m->live.scheduler);
  free (m);
}

/* ---- Queries ---- */

void
dm_get_state (const struct dm_mapping *m, struct dm_state *s)
{
  s->suspended = gate_is_closed (m);
  s->inactive = m->inactive.loaded;
  s->readonly = atomic_load (&m->readonly);
  s->key_valid = m->key_valid;
  s->inflight = atomic_load (&m->gate.inflight);
  s->open = atomic_load (&m->open);
  s->length = m->live.table.length;
  s->targets = m->segments.count ? m->segments.count : 1;
  s->scheduler = m->live.scheduler;
  /* No cipher after "key wipe" until "key set". */
  s->cipher_library = m->live.cipher ? sector_cipher_library (m->live.cipher)
    : "none";
  s->workers = m->live.workers;
}

char *
dm_format_table (const struct dm_mapping *m, bool inactive, bool showkeys)
{
  const struct crypt_table *tables[SEGMENT_TABLES_MAX];
  unsigned n_tables = tables_of (m, tables);

  if (inactive && !m->inactive.loaded) {
    errno = ENXIO;
    return NULL;
  }
  if (!inactive && m->segments.count)
    return segment_list_format_tables (&m->segments, tables, n_tables,
                                       showkeys, m->host.device);
  return crypt_table_format (inactive ? &m->inactive.table
                             : &m->live.table, showkeys, m->host.device);
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
  sum->batched_chunks += s->batched_chunks;
  sum->dispatches += s->dispatches; sum->sequential += s->sequential;
  sum->rounds += s->rounds; sum->rmw_sectors += s->rmw_sectors;
  sum->anticipations += s->anticipations; sum->direct += s->direct;
  sum->errors += s->errors; sum->buffer_waits += s->buffer_waits;
  sum->decrypt_sample_ns += s->decrypt_sample_ns;
  sum->decrypt_sample_bytes += s->decrypt_sample_bytes;
  sum->encrypt_sample_ns += s->encrypt_sample_ns;
  sum->encrypt_sample_bytes += s->encrypt_sample_bytes;
#define HIGH(f) if (s->f > sum->f) sum->f = s->f
  HIGH (inflight_max); HIGH (worker_depth_max); HIGH (writeout_depth_max);
  HIGH (batch_max); HIGH (buffers_max);
#undef HIGH
  sum->writeout_depth = s->writeout_depth;
}

void
dm_get_stats (const struct dm_mapping *m, struct engine_stats *out)
{
  struct engine_stats now;

  *out = m->retired;
  if (m->live.engine) {
    engine_get_stats (m->live.engine, &now);
    add_stats (out, &now);
  }
  if (m->second.engine) {
    engine_get_stats (m->second.engine, &now);
    add_stats (out, &now);
  }
}

/* ---- Swaps (only while the gate is closed) ---- */

static void
retire_engine (struct dm_mapping *m)
{
  struct engine_stats s;

  if (m->live.engine) {
    engine_get_stats (m->live.engine, &s);
    add_stats (&m->retired, &s);
  }
  engine_free (m->live.engine);
  sector_cipher_free (m->live.cipher);
  m->live.engine = NULL;
  m->live.cipher = NULL;
}

/* Makes T (consumed on success) the live table, with a new cipher and
 * engine using SCHEDULER (consumed on success; NULL keeps the policy)
 * and, if SET_WORKERS, WORKERS threads.  On failure everything stays as
 * it was. */
int
mapping_install (struct dm_mapping *m, struct crypt_table *t,
                 char *scheduler, bool set_workers, unsigned workers,
                 struct dm_err *err)
{
  struct sector_cipher *cipher;
  struct engine *engine;
  unsigned new_workers = set_workers ? workers : m->live.workers;

  if (build (m, t, scheduler ? scheduler : m->live.scheduler, new_workers,
             &cipher, &engine) == -1) {
    dm_fail (err, EINVAL, "cannot build the engine for the new table "
             "(see the server log)");
    return -1;
  }
  retire_engine (m);
  crypt_table_free (&m->live.table);
  m->live.table = *t;
  memset (t, 0, sizeof *t);
  m->live.cipher = cipher;
  m->live.engine = engine;
  if (scheduler) {
    free (m->live.scheduler);
    m->live.scheduler = scheduler;
  }
  m->live.workers = new_workers;
  m->key_valid = true;
  gate_publish (m);
  return 0;
}

/* mapping_install of a copy of the live table, with KEY (secmem,
 * consumed) instead of its key when not NULL. */
static int
install_copy (struct dm_mapping *m, uint8_t *key, char *scheduler,
              bool set_workers, unsigned workers, struct dm_err *err)
{
  struct crypt_table copy;

  if (crypt_table_copy (&copy, &m->live.table) == -1) {
    secmem_free (key, m->live.table.key_size);
    dm_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  if (key) {
    secmem_free (copy.key, copy.key_size);
    copy.key = key;
  }
  if (mapping_install (m, &copy, scheduler, set_workers, workers, err)
      == -1) {
    crypt_table_free (&copy);
    return -1;
  }
  return 0;
}

void
mapping_key_wipe (struct dm_mapping *m)
{
  if (m->live.table.key)
    explicit_bzero (m->live.table.key, m->live.table.key_size);
  /* The cipher holds the expanded key: it goes now, not at resume. */
  retire_engine (m);
  m->key_valid = false;
}

int
mapping_key_set (struct dm_mapping *m, uint8_t *key, struct dm_err *err)
{
  return install_copy (m, key, NULL, false, 0, err);
}

int
mapping_set_tunables (struct dm_mapping *m, const struct dm_tunables *tun,
                      struct dm_err *err)
{
  bool was_suspended = gate_is_closed (m);
  char *scheduler = NULL;
  int r;

  if (tun->scheduler && (scheduler = strdup (tun->scheduler)) == NULL) {
    dm_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  if (!m->key_valid) {
    /* No engine until "key set", which builds it with these. */
    if (scheduler) {
      free (m->live.scheduler);
      m->live.scheduler = scheduler;
    }
    if (tun->set_workers)
      m->live.workers = tun->workers;
    return 0;
  }
  if (dm_suspend (m, false, err) == -1) {
    free (scheduler);
    return -1;
  }
  r = install_copy (m, NULL, scheduler, tun->set_workers, tun->workers, err);
  if (r == -1)
    free (scheduler);
  if (!was_suspended)
    gate_open (m);
  return r;
}
