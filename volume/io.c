/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The data path of both front ends, the plugin and the filter: a
 * request passes the mapping's gate (dm_enter), goes through the
 * mapping to the engine (dm_io), and its error comes back as an errno
 * for the front end to hand to nbdkit; and the block sizes both front
 * ends advertise. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/kseries.h"
#include "../backend/submitter.h"
#include "internal.h"

struct dmcrypt_conn *
volume_conn_new (struct dmcrypt_volume *v, const char *export_name)
{
  struct conn_facts facts = { .cpu = -1, .sync = false };
  struct dmcrypt_conn *conn;

  if (v->params.kernel != KSERIES_NONE
      && conn_facts_parse (export_name,
                           engine_cpus (dm_engine (v->dm)), &facts) == -1)
    return NULL;
  if ((conn = malloc (sizeof *conn)) == NULL) {
    nbdkit_error ("malloc: %m");
    return NULL;
  }
  conn->volume = v;
  conn->index = atomic_fetch_add (&v->connections, 1);
  conn->cpu = facts.cpu;
  conn->sync = facts.sync;
  dm_opened (v->dm);
  return conn;
}

void
volume_conn_free (struct dmcrypt_conn *conn)
{
  if (conn && conn->volume->dm)
    dm_closed (conn->volume->dm);
  free (conn);
}

/* The request thread submits for CONN's client: its io_context, and
 * under kernel= its modelled CPU and whether its writes are sync, for
 * the block layer below (CFQ's queue per process, a per-CPU kcryptd)
 * and the trace. */
static void
set_submitter (const struct dmcrypt_conn *conn, const struct engine *e)
{
  struct backend_submitter s = {
    .context = conn->index % SUBMITTER_CLIENTS_MAX + 1,
    .cpu = conn->cpu >= 0 ? conn->cpu
      : engine_submitter_cpu (e, conn->index),
    .name = NULL, .sync = conn->sync,
  };

  backend_set_submitter (&s);
}

static const char *const op_names[] = {
  [IO_READ] = "pread", [IO_WRITE] = "pwrite", [IO_ZERO] = "zero",
  [IO_TRIM] = "trim", [IO_FLUSH] = "flush",
};

int
volume_io (const struct dmcrypt_conn *conn, enum io_op op, void *buf,
           uint32_t count, uint64_t offset, bool fua, int *err)
{
  struct dm_mapping *dm = conn->volume->dm;
  bool write = op == IO_WRITE || op == IO_ZERO || op == IO_TRIM;
  int r;

  if (op == IO_FLUSH)
    count = offset = 0;
  if ((*err = dm_enter (dm, offset, count, write)) != 0)
    return -1;
  set_submitter (conn, dm_engine (dm));
  /* A connection opened while discards were allowed outlives them;
   * dm_enter refuses writes while the live table is read-only, also on
   * a connection opened while it was read-write, as on the kernel. */
  if (op == IO_TRIM && !(dm_flags (dm) & CT_ALLOW_DISCARDS)) {
    dm_leave (dm);
    *err = EOPNOTSUPP;
    return -1;
  }
  r = dm_io (dm, (enum dm_io_op) op, buf, count, offset, fua);
  /* A tag that did not verify is the kernel's EILSEQ in the mapping
   * (BLK_STS_PROTECTION); NBD has no such error, and a block device
   * over NBD reports EIO, as it would for a sector the disk lost. */
  if (r == -1 && errno == EILSEQ) {
    *err = EIO;
    nbdkit_error ("%s: %" PRIu32 " bytes at %" PRIu64 ": an integrity tag "
                  "did not verify (EILSEQ)", op_names[op], count, offset);
  }
  else if (r == -1) {
    *err = errno;
    nbdkit_error ("%s: %s", op_names[op], strerror (*err));
  }
  dm_leave (dm);
  return r;
}

/* A minimum of 1 by default: every alignment is served (the engine
 * reads, modifies and writes partial sectors), and clients that
 * honour a larger minimum refuse a smaller write instead of merging
 * it -- libnbd's strict mode fails it with EINVAL, so nbdfuse, which
 * hands on each write of the kernel's FUSE layer as it comes (mke2fs
 * writes 1 KiB pieces), could not make a file system.  The preferred
 * size, the encryption sector and at least a page, keeps clients that
 * honour it (qemu) to whole sectors. */
void
volume_block_sizes (const struct dmcrypt_volume *v, uint32_t *minimum,
                    uint32_t *preferred)
{
  unsigned ss = dm_sector_size (v->dm), min = v->params.min_block_size;

  if (min == MIN_BLOCK_SECTOR)
    *minimum = ss;
  else
    *minimum = min ? min : 1;
  *preferred = ss > 4096 ? ss : 4096;
}
