/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The thread structure of dm-crypt as each kernel series had it
 * (kernel=, backend/kseries.h), in place of dmcrypt's own pipeline:
 * who encrypts and decrypts, who submits each clone, in what order.
 * A request is handed over a bio at a time (internal.h, KBIO_BYTES),
 * each bio one work item, its chunks its clones.
 *
 * 2.6.32 (drivers/md/dm-crypt.c 1.7): crypt_map queues a read on
 *   kcryptd_io and a write on kcryptd, both single-threaded workqueues
 *   (crypt_ctr: create_singlethread_workqueue).  kcryptd_io_read
 *   submits the read clone and returns; crypt_endio queues its
 *   decryption on kcryptd (kcryptd_queue_crypt), which ends the bio.
 *   kcryptd_crypt_write_convert encrypts a write clone by clone and
 *   submits each itself (kcryptd_crypt_write_io_submit, async = 0 for
 *   a synchronous cipher).
 * 2.6.38 to 3.19 ("dm crypt: scale to multiple CPUs"): kcryptd is a
 *   per-CPU workqueue with max_active 1 (alloc_workqueue without
 *   WQ_UNBOUND), so a bio is encrypted on the CPU that submitted it,
 *   one at a time per CPU, and that worker submits its clones; reads
 *   are submitted from crypt_map itself (kcryptd_io_read (io,
 *   GFP_NOWAIT); kcryptd_io only when that allocation fails).
 * 4.0 to 6.x ("dm crypt: offload writes to thread", "dm crypt: sort
 *   writes", "dm crypt: unbound workqueue"): kcryptd is unbound
 *   (max_active = the CPUs) unless same_cpu_crypt; encrypted writes go
 *   to dmcrypt_write (the write-out stage, scheduler=rbtree) unless
 *   submit_from_crypt_cpus.  6.1 adds no_read_workqueue (decrypt where
 *   the read completes) and no_write_workqueue (encrypt in crypt_map
 *   and submit there), both since 5.9.
 *
 * The reader's unplug: a task that reads through the page cache sleeps
 * on the page, and 2.6.32's sync_page unplugs the queues below it
 * (blk_run_backing_dev, dm_table_unplug_all) before it sleeps; since
 * 2.6.39 its plug is flushed when it schedules (blk_flush_plug_list).
 * Under 2.6.32 that unplug runs while kcryptd_io has yet to submit the
 * clone, which then waits in the plugged queue for the unplug timer:
 * the caller unplugs before it hands the bio over, deterministically,
 * rather than racing kcryptd_io.  A caller that submitted its clone
 * itself unplugs after submitting it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/kseries.h"
#include "../common/log.h"
#include "../table/crypt_table.h"
#include "internal.h"

static void
configure_series (struct engine *e, const struct engine_config *cfg)
{
  struct kpipe *kp = &e->kp;
  unsigned flags = cfg->flags;

  switch (cfg->kernel) {
  case KSERIES_2_6_32:
    kp->crypt_threads = 1;
    kp->kcryptd_io = cfg->kcryptd_io != 0;
    e->direct_writes = !cfg->kernel_writer;
    break;
  case KSERIES_3_16:
    kp->crypt_threads = e->nworkers;
    kp->bound = true;
    kp->kcryptd_io = cfg->kcryptd_io == 1;
    e->direct_writes = !cfg->kernel_writer;
    break;
  default:                      /* 4.0, 6.1 */
    if (cfg->kernel == KSERIES_6_1) {
      kp->inline_reads = (flags & CT_NO_READ_WORKQUEUE) != 0;
      kp->inline_writes = (flags & CT_NO_WRITE_WORKQUEUE) != 0;
    }
    kp->crypt_threads = e->nworkers;
    kp->bound = (flags & CT_SAME_CPU_CRYPT) != 0;
    kp->kcryptd_io = cfg->kcryptd_io == 1;
    e->direct_writes = (flags & CT_SUBMIT_FROM_CRYPT_CPUS)
      || kp->inline_writes;
    break;
  }
}

int
kpipe_configure (struct engine *e, const struct engine_config *cfg)
{
  memset (&e->kp, 0, sizeof e->kp);
  e->kp.series = cfg->kernel;
  e->direct_writes = (cfg->flags & (CT_SUBMIT_FROM_CRYPT_CPUS
                                    | CT_NO_WRITE_WORKQUEUE)) != 0;
  if (cfg->kernel == KSERIES_NONE)
    return 0;
  if (cfg->kernel < KSERIES_2_6_32 || cfg->kernel > KSERIES_6_1) {
    nbdkit_error ("engine: unknown kernel series %d", cfg->kernel);
    return -1;
  }
  configure_series (e, cfg);
  return 0;
}

int
kpipe_start (struct engine *e)
{
  struct kpipe *kp = &e->kp;
  bool single = kp->series == KSERIES_2_6_32;

  if (kwq_start (&kp->crypt, e, "kcryptd", !single, kp->crypt_threads,
                 kp->bound, CONTEXT_KCRYPTD) == -1)
    return -1;
  if (kp->kcryptd_io
      && kwq_start (&kp->io, e, "kcryptd_io", false, 1, false,
                    CONTEXT_KCRYPTD_IO) == -1) {
    kwq_stop (&kp->crypt);
    return -1;
  }
  return 0;
}

void
kpipe_stop (struct engine *e)
{
  kwq_stop (&e->kp.crypt);
  kwq_stop (&e->kp.io);
}

/* Groups R's chunks into bios of at most KBIO_BYTES (at least one chunk
 * each). */
static void
make_bios (struct request *r)
{
  uint64_t bytes = 0;
  struct kbio *b = NULL;
  unsigned i;

  r->nbios = 0;
  for (i = 0; i < r->nchunks; i++) {
    if (b == NULL || bytes + r->chunks[i].len > KBIO_BYTES) {
      b = &r->bios[r->nbios++];
      b->req = r;
      b->first = i;
      b->n = 0;
      bytes = 0;
    }
    b->n++;
    bytes += r->chunks[i].len;
    r->chunks[i].kbio = b;
  }
}

static struct kbio *
kbio_of (struct kwork *w)
{
  return (struct kbio *) ((char *) w - offsetof (struct kbio, work));
}

/* kcryptd: crypts a bio's chunks in turn.  A write chunk goes on to the
 * write-out stage, or is submitted here (direct_writes); a read chunk
 * is done.  Its request may return once the last is: nothing of it is
 * touched after that. */
static void
crypt_work (struct kwork *w)
{
  struct kbio *b = kbio_of (w);
  struct chunk *c = &b->req->chunks[b->first];
  unsigned i, n = b->n;

  for (i = 0; i < n; i++)
    chunk_run (&c[i], true);
}

static void
queue_crypt (struct engine *e, struct kbio *b)
{
  b->work.fn = crypt_work;
  kwq_queue (&e->kp.crypt, &b->work, b->req->cpu);
}

/* A read clone's completion (crypt_endio): once the bio's last chunk
 * is in, its decryption goes to kcryptd, on the CPU of the request's
 * submitter where kcryptd is per CPU, or is done here. */
static void
read_done (void *opaque, int err)
{
  struct chunk *c = opaque;
  struct kbio *b = c->kbio;
  struct engine *e = b->req->e;

  if (err)
    c->err = err;
  if (atomic_fetch_sub_explicit (&b->fetching, 1, memory_order_acq_rel) != 1)
    return;
  if (e->kp.inline_reads)
    crypt_work (&b->work);
  else
    queue_crypt (e, b);
}

/* Submits a bio's read clones; the completions may come at once. */
static void
submit_reads (struct engine *e, struct kbio *b)
{
  struct chunk *c = &b->req->chunks[b->first];
  unsigned i, n = b->n;

  atomic_store_explicit (&b->fetching, n, memory_order_relaxed);
  for (i = 0; i < n; i++)
    backend_submit_read (e->backend, c[i].data, c[i].len,
                         e->cfg.data_offset + c[i].offset, read_done,
                         &c[i]);
}

/* kcryptd_io (2.6.32's kcryptd_io_read): submits and does not wait. */
static void
io_read_work (struct kwork *w)
{
  struct kbio *b = kbio_of (w);

  submit_reads (b->req->e, b);
}

static void
run_read (struct engine *e, struct request *r)
{
  unsigned i;

  if (e->kp.kcryptd_io) {
    backend_unplug (e->backend);        /* finds the clone not there yet */
    for (i = 0; i < r->nbios; i++) {
      r->bios[i].work.fn = io_read_work;
      kwq_queue (&e->kp.io, &r->bios[i].work, 0);
    }
    return;
  }
  for (i = 0; i < r->nbios; i++)
    submit_reads (e, &r->bios[i]);
  backend_unplug (e->backend);          /* the reader goes to sleep */
}

static void
run_write (struct engine *e, struct request *r)
{
  unsigned i;

  if (e->kp.inline_writes) {
    chunk_run_inline (r->chunks, r->nchunks);
    return;
  }
  for (i = 0; i < r->nbios; i++)
    queue_crypt (e, &r->bios[i]);
}

int
kpipe_run_wave (struct engine *e, struct request *r)
{
  r->claimed = 0;
  r->queue = NULL;
  r->cpu = backend_submitter_cpu ();
  atomic_store_explicit (&r->pending, r->nchunks, memory_order_relaxed);
  make_bios (r);
  if (r->write)
    run_write (e, r);
  else
    run_read (e, r);
  return request_wait (r);
}
