/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmsetup's commands on a mapping (dm.h): reload loads an inactive
 * table, clear drops it, suspend drains and holds requests, resume
 * swaps the inactive table in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dmint.h"

/* The image is locked exclusively while a read-write table is live or
 * loaded, shared otherwise; as the kernel opens a table's devices when
 * the table is loaded, a read-write reload fails while another program
 * holds the image. */
static int
follow_tables (struct dm_mapping *m, bool inactive_writable,
               struct dm_err *err)
{
  char why[512];

  if (m->host.locks_follow == NULL)
    return 0;
  if (m->host.locks_follow (m->host.arg,
                            !atomic_load (&m->readonly) || inactive_writable,
                            why, sizeof why) == -1) {
    dm_fail (err, errno, "%s", why);
    return -1;
  }
  return 0;
}

static void
follow_tables_quietly (struct dm_mapping *m)
{
  struct dm_err ignored;

  follow_tables (m, m->inactive.loaded && !m->inactive.readonly, &ignored);
}

static int
check_tunables (const struct dm_tunables *tun, struct dm_err *err)
{
  if (tun->scheduler && !dm_known_policy (tun->scheduler)) {
    dm_fail (err, EINVAL, "scheduler: expected one of: %s",
             engine_policy_names ());
    return -1;
  }
  if (tun->set_workers
      && (tun->workers < 1 || tun->workers > DM_MAX_WORKERS)) {
    dm_fail (err, EINVAL, "workers: must be between 1 and %d",
             DM_MAX_WORKERS);
    return -1;
  }
  return 0;
}

static void
drop_inactive (struct dm_mapping *m)
{
  crypt_table_free (&m->inactive.table);
  free (m->inactive.scheduler);
  memset (&m->inactive, 0, sizeof m->inactive);
}

int
dm_reload (struct dm_mapping *m, const struct dm_reload *r,
           struct dm_err *err)
{
  struct crypt_table t;
  char *scheduler = NULL;

  /* One crypt line cannot stand for several segments. */
  if (m->segments.count > 0) {
    dm_fail (err, EOPNOTSUPP, "reload: a mapping of %u segments "
             "(%s) cannot be reloaded", m->segments.count,
             m->reencrypt ? "LUKS2 in re-encryption" : "BitLocker");
    return -1;
  }
  /* Its sectors are sealed with tags by a dm-integrity device below,
   * which one crypt line cannot describe. */
  if (m->live.table.integrity_tag_size != 0) {
    dm_fail (err, EOPNOTSUPP, "reload: a mapping with integrity "
             "(integrity:%u:%s) cannot be reloaded",
             m->live.table.integrity_tag_size,
             m->live.table.integrity_type);
    return -1;
  }
  if (check_tunables (&r->tun, err) == -1
      || reload_check (m, r, &t, err) == -1)
    return -1;
  if (follow_tables (m, !r->readonly, err) == -1) {
    crypt_table_free (&t);
    return -1;
  }
  if (r->tun.scheduler && (scheduler = strdup (r->tun.scheduler)) == NULL) {
    crypt_table_free (&t);
    dm_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  /* A second reload replaces the first, as in device-mapper. */
  drop_inactive (m);
  m->inactive = (struct dm_inactive) {
    .loaded = true, .table = t, .readonly = r->readonly,
    .scheduler = scheduler, .set_workers = r->tun.set_workers,
    .workers = r->tun.workers,
  };
  return 0;
}

void
dm_clear (struct dm_mapping *m)
{
  drop_inactive (m);
  follow_tables_quietly (m);
}

int
dm_resume (struct dm_mapping *m, struct dm_err *err)
{
  if (!m->inactive.loaded) {
    if (!gate_is_closed (m))
      return 0;
    /* dm-crypt's crypt_preresume. */
    if (!m->key_valid) {
      dm_fail (err, EAGAIN, "aborting resume - crypt key is not set");
      return -1;
    }
    gate_open (m);
    return 0;
  }
  /* device-mapper suspends a running device itself to swap tables; if
   * the swap fails the device stays suspended. */
  if (dm_suspend (m, false, err) == -1
      || mapping_install (m, &m->inactive.table, m->inactive.scheduler,
                          m->inactive.set_workers, m->inactive.workers,
                          err) == -1)
    return -1;
  atomic_store (&m->readonly, m->inactive.readonly);
  m->inactive.scheduler = NULL;        /* now the live one's */
  drop_inactive (m);
  follow_tables_quietly (m);
  gate_open (m);
  return 0;
}
