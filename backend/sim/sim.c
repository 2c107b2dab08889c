/* The simulated device (sim.h): a block-queue model and a device model
 * between the engine and the image.
 *
 * Three kinds of thread meet here.  Submitters (the engine's write-out
 * stage, request threads reading) insert bios into the block queue,
 * waiting while it is full, as the kernel's submitters wait for a free
 * request.  The dispatcher hands queued requests to the device while
 * it has a free tag: it asks the model when the IO will complete, does
 * the real IO on the image at once, and files the request under that
 * completion time.  The completer sleeps to each completion time (an
 * absolute deadline on the model's clock) and completes the bios.
 * Models and queue are pure (no clock, no threads): all timing is
 * here. */
#include <errno.h>
#include <pthread.h>
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

static const char *
rwbs_of (enum dev_op op)
{
  switch (op) {
  case DEV_READ: return "R";
  case DEV_WRITE: return "W";
  case DEV_FLUSH: return "FWS";
  default: return "D";
  }
}

static void
event (struct sim *s, char action, enum dev_op op, uint64_t sector,
       uint32_t nsect, int err)
{
  if (s->self->trace)
    trace_event (s->self->trace, action, rwbs_of (op), sector, nsect, err);
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

/* The CLOCK_MONOTONIC time at which the model's clock shows MODEL_NS. */
static struct timespec
wall_at (const struct sim *s, uint64_t model_ns)
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
  event (s, r == BLKQ_MERGED ? 'M' : 'I', sb->bio.op, sb->bio.sector,
         sb->bio.nsect, 0);
  pthread_cond_signal (&s->work);
}

void
sim_submit (struct sim *s, struct sim_bio *sb)
{
  sb->bio.opaque = sb;
  sb->bio.next = NULL;
  pthread_mutex_lock (&s->lock);
  insert_locked (s, sb);
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
  sb.bio.opaque = &sb;
  pthread_mutex_lock (&s->lock);
  insert_locked (s, &sb);
  while (!sb.finished)
    pthread_cond_wait (&s->synced, &s->lock);
  pthread_mutex_unlock (&s->lock);
  if (sb.err) {
    errno = sb.err;
    return -1;
  }
  return 0;
}

/* ---- The device ---- */

/* The real IO of one bio on the image. */
static int
real_io (struct sim *s, struct sim_bio *sb)
{
  struct backend *lower = s->lower;
  uint64_t off = sb->bio.sector * SECTOR;
  size_t len = (size_t) sb->bio.nsect * SECTOR;
  int r;

  switch (sb->bio.op) {
  case DEV_READ: r = backend_pread (lower, sb->rbuf, len, off); break;
  case DEV_WRITE: r = backend_pwrite (lower, sb->wbuf, len, off); break;
  case DEV_FLUSH: r = backend_sync (lower); break;
  default: r = backend_discard (lower, len, off); break;
  }
  return r == -1 ? errno : 0;
}

/* Heap of dispatched requests by completion time (at most TAGS). */
static void
heap_push (struct sim *s, struct inflight in)
{
  unsigned i = s->nheap++, parent;

  while (i > 0 && s->heap[parent = (i - 1) / 2].done_at > in.done_at) {
    s->heap[i] = s->heap[parent];
    i = parent;
  }
  s->heap[i] = in;
}

static struct inflight
heap_pop (struct sim *s)
{
  struct inflight top = s->heap[0], last = s->heap[--s->nheap];
  unsigned i = 0, c;

  while ((c = 2 * i + 1) < s->nheap) {
    if (c + 1 < s->nheap && s->heap[c + 1].done_at < s->heap[c].done_at)
      c++;
    if (s->heap[c].done_at >= last.done_at)
      break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (s->nheap)
    s->heap[i] = last;
  return top;
}

/* Unlocked: the device starts RQ at NOW; the image gets its bios.
 * Only the dispatcher calls it: the model needs no lock of its own. */
static struct inflight
start_on_device (struct sim *s, struct blkq_rq *rq, uint64_t now)
{
  struct dev_io io = { .op = rq->op, .sector = rq->sector,
                       .nsect = rq->nsect };
  struct inflight in = { .rq = rq, .err = 0 };
  struct blkq_bio *bio;
  int err;

  in.done_at = s->model->start (s->mstate, &io, now);
  if (in.done_at < now)
    in.done_at = now;
  for (bio = rq->bios; bio; bio = bio->next)
    if ((err = real_io (s, bio->opaque)) != 0) {
      ((struct sim_bio *) bio->opaque)->err = err;
      if (in.err == 0)
        in.err = err;
    }
  return in;
}

static void *
dispatcher_main (void *arg)
{
  struct sim *s = arg;
  struct blkq_rq *rq;
  struct inflight in;
  uint64_t now = 0;

  pthread_mutex_lock (&s->lock);
  for (;;) {
    rq = NULL;
    if (s->busy < s->tags)
      rq = blkq_next (s->q, now = sim_now (s));
    if (rq == NULL) {
      if (s->stopping && blkq_queued (s->q) == 0)
        break;
      pthread_cond_wait (&s->work, &s->lock);
      continue;
    }
    if (s->busy++ == 0)
      s->busy_since = now;
    /* D while the request leaves the queue: the trace never shows more
     * queued than the queue holds. */
    event (s, 'D', rq->op, rq->sector, rq->nsect, 0);
    pthread_cond_broadcast (&s->space);
    pthread_mutex_unlock (&s->lock);
    in = start_on_device (s, rq, now);
    pthread_mutex_lock (&s->lock);
    heap_push (s, in);
    pthread_cond_signal (&s->due);
  }
  s->dispatcher_done = true;
  pthread_cond_signal (&s->due);
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* Unlocked: the bios of a completed request are done; each may free
 * itself (or wake its waiter) in DONE, so nothing is read after it.
 * The request itself goes back to the queue under the lock: the queue
 * is not thread-safe. */
static void
complete_bios (struct sim *s, struct blkq_rq *rq)
{
  struct blkq_bio *bio = rq->bios, *next;
  struct sim_bio *sb;

  rq->bios = NULL;
  for (; bio; bio = next) {
    next = bio->next;
    sb = bio->opaque;
    sb->done (sb->opaque, sb->err);
  }
  pthread_mutex_lock (&s->lock);
  blkq_rq_free (rq);
  pthread_mutex_unlock (&s->lock);
}

/* Under the lock: waits until the earliest dispatched request is due;
 * returns false when there is nothing more to complete, ever. */
static bool
wait_due_locked (struct sim *s)
{
  struct timespec at;

  for (;;) {
    if (s->nheap == 0) {
      if (s->dispatcher_done && s->busy == 0)
        return false;
      pthread_cond_wait (&s->due, &s->lock);
      continue;
    }
    if (sim_now (s) >= s->heap[0].done_at)
      return true;
    at = wall_at (s, s->heap[0].done_at);
    pthread_cond_timedwait (&s->due, &s->lock, &at);
  }
}

static void *
completer_main (void *arg)
{
  struct sim *s = arg;
  struct inflight in;
  uint64_t now;

  pthread_mutex_lock (&s->lock);
  while (wait_due_locked (s)) {
    in = heap_pop (s);
    now = sim_now (s);
    s->st.late_ns += now - in.done_at;
    s->st.ios++;
    /* C before the tag is free: the next D comes after it. */
    event (s, 'C', in.rq->op, in.rq->sector, in.rq->nsect, in.err);
    if (--s->busy == 0)
      s->st.busy_ns += in.done_at - s->busy_since;
    pthread_cond_signal (&s->work);
    pthread_mutex_unlock (&s->lock);
    complete_bios (s, in.rq);
    pthread_mutex_lock (&s->lock);
  }
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

int
sim_start_threads (struct sim *s)
{
  int err;

  clock_gettime (CLOCK_MONOTONIC, &s->start);
  if ((err = pthread_create (&s->dispatcher, NULL, dispatcher_main, s)))
    goto fail;
  if ((err = pthread_create (&s->completer, NULL, completer_main, s))) {
    sim_stop_threads (s);
    goto fail;
  }
  s->threads = 2;
  return 0;
 fail:
  errno = err;
  nbdkit_error ("device model: pthread_create: %m");
  return -1;
}

void
sim_stop_threads (struct sim *s)
{
  pthread_mutex_lock (&s->lock);
  s->stopping = true;
  pthread_cond_broadcast (&s->work);
  pthread_cond_broadcast (&s->due);
  pthread_mutex_unlock (&s->lock);
  pthread_join (s->dispatcher, NULL);
  if (s->threads == 2)
    pthread_join (s->completer, NULL);
  s->threads = 0;
}
