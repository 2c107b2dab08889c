/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated device as a backend (sim.h): configuration, the
 * backend operations, statistics. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "simint.h"

#define MAX_NR_REQUESTS 65536

/* The model's parameters, the user's over the defaults: a new array
 * (free it), or NULL after nbdkit_error. */
static double *
model_values (const struct device_model *m, const char *text)
{
  size_t n = 0;
  double *v;
  char why[256];

  while (m->params[n].key)
    n++;
  if ((v = calloc (n + 1, sizeof *v)) == NULL) {
    nbdkit_error ("device-params: %m");
    return NULL;
  }
  if (model_params_parse (m, text ? text : "", v, why, sizeof why) == -1) {
    nbdkit_error ("device-params: %s", why);
    free (v);
    return NULL;
  }
  return v;
}

int
sim_check_config (const struct sim_config *cfg)
{
  const struct device_model *m = device_model_find (cfg->device);
  struct blkq_config qc;
  double *v;

  if (m == NULL) {
    nbdkit_error ("device: unknown device model '%s' (expected none, %s)",
                  cfg->device, device_model_names ());
    return -1;
  }
  if (sim_block_config (cfg, m, &qc) == -1)
    return -1;
  if (cfg->nr_requests > MAX_NR_REQUESTS) {
    nbdkit_error ("nr-requests: at most %d", MAX_NR_REQUESTS);
    return -1;
  }
  if ((v = model_values (m, cfg->device_params)) == NULL)
    return -1;
  free (v);
  return 0;
}

/* ---- Operations ---- */

static struct sim *
sim_of (struct backend *b)
{
  return b->priv;
}

static int
sim_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  return sim_io (sim_of (b), DEV_READ, buf, NULL, count, offset);
}

static int
sim_pwrite (struct backend *b, const void *buf, size_t count,
            uint64_t offset)
{
  return sim_io (sim_of (b), DEV_WRITE, NULL, buf, count, offset);
}

static int
sim_sync (struct backend *b)
{
  return sim_io (sim_of (b), DEV_FLUSH, NULL, NULL, 0, 0);
}

static int
sim_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  return sim_io (sim_of (b), DEV_DISCARD, NULL, NULL, count, offset);
}

static void
sim_unplug_op (struct backend *b)
{
  sim_unplug (sim_of (b));
}

/* The bio goes before its caller hears of it: the caller may free BUF
 * or the whole request at once. */
static void
async_done (void *opaque, int err)
{
  struct sim_bio *sb = opaque;
  backend_done_fn done = sb->user_done;
  void *user = sb->user_opaque;

  free (sb);
  done (user, err);
}

/* An asynchronous IO of OP: DONE (OPAQUE, err) once it completed. */
static void
submit_async (struct backend *b, enum dev_op op, void *rbuf,
              const void *wbuf, size_t count, uint64_t offset,
              backend_done_fn done, void *opaque)
{
  struct sim_bio *sb = calloc (1, sizeof *sb);

  if (sb == NULL) {
    done (opaque, ENOMEM);
    return;
  }
  sb->bio.op = op;
  sb->bio.sector = offset / 512;
  sb->bio.nsect = count / 512;
  sb->sim = sim_of (b);
  sb->rbuf = rbuf;
  sb->wbuf = wbuf;
  sb->done = async_done;
  sb->opaque = sb;
  sb->user_done = done;
  sb->user_opaque = opaque;
  sim_submit (sb->sim, sb);
}

static void
sim_submit_write (struct backend *b, const void *buf, size_t count,
                  uint64_t offset, backend_done_fn done, void *opaque)
{
  submit_async (b, DEV_WRITE, NULL, buf, count, offset, done, opaque);
}

static void
sim_submit_read (struct backend *b, void *buf, size_t count,
                 uint64_t offset, backend_done_fn done, void *opaque)
{
  submit_async (b, DEV_READ, buf, NULL, count, offset, done, opaque);
}

static void
sim_free (struct sim *s)
{
  if (s->mstate)
    s->model->destroy (s->mstate);
  if (s->q)
    blkq_free (s->q);
  sim_tags_free (s);
  pthread_cond_destroy (&s->work);
  pthread_cond_destroy (&s->due);
  pthread_cond_destroy (&s->synced);
  pthread_cond_destroy (&s->io);
  pthread_mutex_destroy (&s->lock);
  free (s);
}

static void
sim_close (struct backend *b)
{
  struct sim *s = sim_of (b);

  if (s->threads)
    sim_stop_threads (s);
  nbdkit_debug ("device model %s: %" PRIu64 " IOs, %" PRIu64 " merges, "
                "busy %.1f %% of %.3f s model time, completions late by "
                "%.3f s in all", s->model->name, s->st.ios, s->st.merges,
                s->st.busy_ns * 100.0 / (sim_now (s) ? sim_now (s) : 1),
                sim_now (s) / 1e9, s->st.late_ns / 1e9);
  backend_close (s->lower);
  sim_free (s);
  free (b);
}

static const struct backend_ops sim_ops = {
  .name = "device model",
  .pread = sim_pread,
  .pwrite = sim_pwrite,
  .sync = sim_sync,
  .discard = sim_discard,
  .close = sim_close,
  .submit_write = sim_submit_write,
  .submit_read = sim_submit_read,
  .unplug = sim_unplug_op,
  .traces_itself = true,
};

bool
backend_sim_stats (struct backend *b, struct sim_stats *st)
{
  struct sim *s;

  if (b == NULL || b->ops != &sim_ops)
    return false;
  s = sim_of (b);
  pthread_mutex_lock (&s->lock);
  *st = s->st;
  st->model_ns = sim_now (s);
  if (s->busy)
    st->busy_ns += st->model_ns - s->busy_since;
  pthread_mutex_unlock (&s->lock);
  return true;
}

/* ---- Set-up ---- */

static int
make_queue (struct sim *s, const struct sim_config *cfg)
{
  struct blkq_config qc;

  if (sim_block_config (cfg, s->model, &qc) == -1)
    return -1;
  qc.max_sectors = s->max_sectors;
  qc.event = sim_blkq_event;
  qc.event_arg = s;
  if ((s->q = blkq_new (&qc)) == NULL) {
    nbdkit_error ("device model: %m");
    return -1;
  }
  return 0;
}

/* Conditions waited on with a deadline run on CLOCK_MONOTONIC, the
 * model clock's base. */
static void
cond_init_monotonic (pthread_cond_t *c)
{
  pthread_condattr_t ca;

  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (c, &ca);
  pthread_condattr_destroy (&ca);
}

static struct sim *
sim_new (struct backend *lower, const struct sim_config *cfg)
{
  struct sim *s = calloc (1, sizeof *s);
  char why[256];
  double *values;

  if (s == NULL) {
    nbdkit_error ("device model: %m");
    return NULL;
  }
  pthread_mutex_init (&s->lock, NULL);
  cond_init_monotonic (&s->work);
  pthread_cond_init (&s->synced, NULL);
  pthread_cond_init (&s->io, NULL);
  cond_init_monotonic (&s->due);
  s->lower = lower;
  s->model = device_model_find (cfg->device);
  s->tags = s->model->queue_depth;
  s->max_sectors = device_model_max_sectors (s->model);
  s->speed = cfg->speed > 0 ? cfg->speed : 1;
  values = model_values (s->model, cfg->device_params);
  if (values == NULL)
    goto err;
  s->mstate = s->model->create (values, why, sizeof why);
  free (values);
  if (s->mstate == NULL) {
    nbdkit_error ("device-params: %s", why);
    goto err;
  }
  if (sim_tags_init (s) == -1)
    goto err;
  if (make_queue (s, cfg) == 0)
    return s;
 err:
  sim_free (s);
  return NULL;
}

struct backend *
backend_sim_wrap (struct backend *lower, const struct sim_config *cfg)
{
  struct backend *b;
  struct sim *s;

  if (sim_check_config (cfg) == -1 || (s = sim_new (lower, cfg)) == NULL)
    return NULL;
  if ((b = calloc (1, sizeof *b)) == NULL) {
    nbdkit_error ("device model: %m");
    sim_free (s);
    return NULL;
  }
  *b = *lower;                  /* size, flags, device numbers */
  b->ops = &sim_ops;
  b->priv = s;
  b->trace = NULL;
  s->self = b;
  return b;
}

int
backend_sim_start (struct backend *b)
{
  struct sim *s = sim_of (b);

  return s->threads ? 0 : sim_start_threads (s);
}
