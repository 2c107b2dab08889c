/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated device (sim.h), its submission side: the model's
 * clock, the trace events, and the bios entering the block queue.
 * Submitters (the engine's write-out stage, request threads reading)
 * sleep while no request is free, as the kernel's submitters wait for
 * a free request, each on its own condition: the queue decides whom a
 * completion wakes (blkq_woken), first come, first served.  simdev.c
 * is the device side. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/log.h"
#include "../trace.h"
#include "blkq.h"
#include "model.h"
#include "sim.h"
#include "simint.h"

#define SECTOR 512

const char *
sim_rwbs (enum dev_op op)
{
  switch (op) {
  case DEV_READ: return "R";
  case DEV_WRITE: return "W";
  case DEV_FLUSH: return "FWS";
  default: return "D";
  }
}

/* blkparse's rwbs: "WS" for a sync write, as blktrace marks REQ_SYNC. */
static const char *
rwbs_of (enum dev_op op, bool sync)
{
  return op == DEV_WRITE && sync ? "WS" : sim_rwbs (op);
}

void
sim_rq_event (struct sim *s, char action, const struct blkq_rq *rq, int err)
{
  if (s->self->trace)
    trace_event (s->self->trace, action, rwbs_of (rq->op, rq->sync),
                 rq->sector, rq->nsect, err);
}

static const char *
bio_rwbs (const struct blkq_bio *bio)
{
  return rwbs_of (bio->op, bio->sync);
}

void
sim_blkq_event (void *arg, const struct blkq_event *ev)
{
  static const char *const plug_actions[] = {
    [BLKQ_EV_PLUG] = "P", [BLKQ_EV_UNPLUG] = "U",
    [BLKQ_EV_UNPLUG_TIMER] = "UT",
  };
  static const char bio_actions[] = {
    [BLKQ_EV_GETRQ] = 'G', [BLKQ_EV_SLEEP] = 'S',
    [BLKQ_EV_INSERT] = 'I', [BLKQ_EV_MERGE] = 'M',
  };
  struct sim *s = arg;
  const struct sim_bio *sb;
  struct trace_who who = { -1, NULL };

  if (ev->kind == BLKQ_EV_MERGE)
    s->st.merges++;
  if (ev->kind == BLKQ_EV_SLEEP)
    s->st.sleeps++;
  if (ev->kind == BLKQ_EV_UNPLUG_TIMER)
    s->st.timer_unplugs++;
  if (s->self->trace == NULL)
    return;
  if (ev->bio == NULL) {
    /* A timer's unplug runs in kblockd's work (blk_unplug_work). */
    if (ev->kind == BLKQ_EV_UNPLUG_TIMER || !s->unplugger)
      who.name = "kblockd";
    else
      who = *s->unplugger;
    trace_plug (s->self->trace, plug_actions[ev->kind], ev->count, &who);
    return;
  }
  sb = ev->bio->opaque;
  who = (struct trace_who) { sb->who.cpu, sb->who.name };
  trace_event_by (s->self->trace, bio_actions[ev->kind], bio_rwbs (ev->bio),
                  ev->bio->sector, ev->bio->nsect, 0, &who);
}

/* ---- The model's clock ---- */

uint64_t
sim_now (const struct sim *s)
{
  struct timespec ts;
  int64_t wall_ns;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  wall_ns = (ts.tv_sec - s->start.tv_sec) * 1000000000LL
    + (ts.tv_nsec - s->start.tv_nsec);
  return wall_ns <= 0 ? 0 : (uint64_t) ((double) wall_ns * s->speed);
}

struct timespec
sim_wall_at (const struct sim *s, uint64_t model_ns)
{
  uint64_t wall_ns = (uint64_t) ((double) model_ns / s->speed);
  struct timespec ts = s->start;

  ts.tv_sec += wall_ns / 1000000000;
  ts.tv_nsec += wall_ns % 1000000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  return ts;
}

uint64_t
backend_sim_clock (void *arg)
{
  struct backend *b = arg;

  return sim_now (b->priv);
}

/* ---- Submission ---- */

void
sim_wake_granted_locked (struct sim *s)
{
  struct blkq_waiter *w;
  bool any = false;

  while ((w = blkq_woken (s->q)) != NULL) {
    pthread_cond_signal (w->opaque);
    any = true;
  }
  if (any)
    pthread_cond_signal (&s->work);
}

/* Under the lock: SB's submitter sleeps until a completion hands it a
 * request (the queue inserts SB then). */
static void
sleep_for_request_locked (struct sim *s, struct sim_bio *sb)
{
  struct blkq_waiter w = { .next = NULL };
  pthread_cond_t cond;

  pthread_cond_init (&cond, NULL);
  w.opaque = &cond;
  blkq_wait (s->q, &w, &sb->bio, sim_now (s));
  pthread_cond_signal (&s->work);       /* 2.6.32 unplugged */
  while (!w.granted)
    pthread_cond_wait (&cond, &s->lock);
  pthread_cond_destroy (&cond);
}

/* Under the lock: queues SB, sleeping while no request is free. */
static void
insert_locked (struct sim *s, struct sim_bio *sb)
{
  struct blkq_rq *rq;
  const struct trace_who *was = s->unplugger;
  struct trace_who who = { sb->who.cpu, sb->who.name };

  s->unplugger = &who;
  if (blkq_insert (s->q, &sb->bio, sim_now (s), &rq) == BLKQ_FULL)
    sleep_for_request_locked (s, sb);
  s->unplugger = was;
  if (blkq_queued (s->q) > s->st.queue_max)
    s->st.queue_max = blkq_queued (s->q);
  /* A merge may have freed a request for a sleeper. */
  sim_wake_granted_locked (s);
  pthread_cond_signal (&s->work);
}

/* A piece of a split bio is done: the last one completes the whole
 * (all pieces complete on the completer thread, one at a time). */
static void
piece_done (void *opaque, int err)
{
  struct sim_bio *piece = opaque, *whole = piece->user_opaque;
  struct sim_bio *pieces = whole->pieces;

  if (err && whole->err == 0)
    whole->err = err;
  if (--whole->pending > 0)
    return;
  free (pieces);
  whole->done (whole->opaque, whole->err);
}

/* Under the lock: SB in pieces of at most max_sectors, as the kernel's
 * block layer splits a bio beyond the queue's limit before it becomes a
 * request.  Returns false (nothing done) when SB is not split. */
static bool
split_locked (struct sim *s, struct sim_bio *sb)
{
  uint32_t max = s->max_sectors, n, i, len;
  struct sim_bio *p;

  if ((sb->bio.op != DEV_READ && sb->bio.op != DEV_WRITE)
      || sb->bio.nsect <= max)
    return false;
  n = (sb->bio.nsect + max - 1) / max;
  if ((p = calloc (n, sizeof *p)) == NULL)
    return false;               /* then one large request, as before */
  sb->pieces = p;
  sb->pending = n;
  sb->err = 0;
  for (i = 0; i < n; i++) {
    len = i + 1 < n ? max : sb->bio.nsect - i * max;
    p[i] = *sb;
    p[i].bio.sector = sb->bio.sector + (uint64_t) i * max;
    p[i].bio.nsect = len;
    p[i].bio.next = NULL;
    p[i].bio.opaque = &p[i];
    p[i].rbuf = sb->rbuf ? (char *) sb->rbuf + (size_t) i * max * SECTOR
      : NULL;
    p[i].wbuf = sb->wbuf ? (const char *) sb->wbuf
      + (size_t) i * max * SECTOR : NULL;
    p[i].done = piece_done;
    p[i].opaque = &p[i];
    p[i].user_opaque = sb;
    p[i].pieces = NULL;
  }
  for (i = 0; i < n; i++)
    insert_locked (s, &p[i]);
  return true;
}

/* The bio's submitter, and whether the block layer counts it sync:
 * reads and flushes always, a write when its submitter says so
 * (REQ_SYNC: rw_is_sync, include/linux/blkdev.h). */
static void
who_submits (struct sim_bio *sb)
{
  sb->who = backend_submitter ();
  if (sb->who.cpu < 0)
    sb->who.cpu = (int) backend_submitter_cpu ();
  sb->bio.context = sb->who.context;
  sb->bio.sync = sb->bio.op == DEV_READ || sb->bio.op == DEV_FLUSH
    || (sb->bio.op == DEV_WRITE && sb->who.sync);
}

static void
submit_locked (struct sim *s, struct sim_bio *sb)
{
  sb->bio.opaque = sb;
  sb->bio.next = NULL;
  who_submits (sb);
  if (!split_locked (s, sb))
    insert_locked (s, sb);
}

void
sim_submit (struct sim *s, struct sim_bio *sb)
{
  pthread_mutex_lock (&s->lock);
  submit_locked (s, sb);
  pthread_mutex_unlock (&s->lock);
}

static void
unplug_locked (struct sim *s, const struct backend_submitter *by)
{
  struct trace_who who = { by->cpu, by->name };
  const struct trace_who *was = s->unplugger;

  s->unplugger = &who;
  blkq_unplug (s->q, sim_now (s));
  s->unplugger = was;
  pthread_cond_signal (&s->work);
}

void
sim_unplug (struct sim *s)
{
  struct backend_submitter by = backend_submitter ();

  if (by.cpu < 0)
    by.cpu = (int) backend_submitter_cpu ();
  pthread_mutex_lock (&s->lock);
  unplug_locked (s, &by);
  pthread_mutex_unlock (&s->lock);
}

/* A synchronous IO: submitted, then waited for on the simulation's own
 * condition (nothing on the waiter's stack is touched once it is done). */
static void
sync_done (void *opaque, int err)
{
  struct sim_bio *sb = opaque;
  struct sim *s = sb->sim;

  pthread_mutex_lock (&s->lock);
  sb->err = err;
  sb->finished = true;
  pthread_cond_broadcast (&s->synced);
  pthread_mutex_unlock (&s->lock);
}

int
sim_io (struct sim *s, enum dev_op op, void *rbuf, const void *wbuf,
        size_t count, uint64_t offset)
{
  struct sim_bio sb = {
    .bio = { .op = op, .sector = offset / SECTOR, .nsect = count / SECTOR },
    .sim = s, .rbuf = rbuf, .wbuf = wbuf, .done = sync_done,
  };

  sb.opaque = &sb;
  pthread_mutex_lock (&s->lock);
  submit_locked (s, &sb);
  /* Its caller sleeps on it: a plugged queue lets it go (2.6.32's
   * sync_page, blk_unplug). */
  unplug_locked (s, &sb.who);
  while (!sb.finished)
    pthread_cond_wait (&s->synced, &s->lock);
  pthread_mutex_unlock (&s->lock);
  if (sb.err) {
    errno = sb.err;
    return -1;
  }
  return 0;
}
