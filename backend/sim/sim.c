/* The simulated device (sim.h), its submission side: the model's
 * clock, the trace events, and the bios entering the block queue.
 * Submitters (the engine's write-out stage, request threads reading)
 * wait while the queue is full, as the kernel's submitters wait for a
 * free request.  simdev.c is the device side. */
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

void
sim_event (struct sim *s, char action, enum dev_op op, uint64_t sector,
           uint32_t nsect, int err)
{
  if (s->self->trace)
    trace_event (s->self->trace, action, sim_rwbs (op), sector, nsect, err);
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

/* Under the lock: queues SB, waiting while the queue is full. */
static void
insert_locked (struct sim *s, struct sim_bio *sb)
{
  struct blkq_rq *rq;
  enum blkq_result r;

  while ((r = blkq_insert (s->q, &sb->bio, sim_now (s), &rq)) == BLKQ_FULL)
    pthread_cond_wait (&s->space, &s->lock);
  if (r == BLKQ_MERGED)
    s->st.merges++;
  if (blkq_queued (s->q) > s->st.queue_max)
    s->st.queue_max = blkq_queued (s->q);
  sim_event (s, r == BLKQ_MERGED ? 'M' : 'I', sb->bio.op, sb->bio.sector,
             sb->bio.nsect, 0);
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

static void
submit_locked (struct sim *s, struct sim_bio *sb)
{
  sb->bio.opaque = sb;
  sb->bio.next = NULL;
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
  while (!sb.finished)
    pthread_cond_wait (&s->synced, &s->lock);
  pthread_mutex_unlock (&s->lock);
  if (sb.err) {
    errno = sb.err;
    return -1;
  }
  return 0;
}
