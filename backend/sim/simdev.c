/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated device (sim.h), its device side.
 *
 * The dispatcher hands queued requests to the device while it has a
 * free tag (simtags.c gives it to the model and files it under its
 * completion time once the model has said when, and its real IO is
 * done) and passes it to an IO thread, which does the real IO on the
 * image.  The completer sleeps to each completion time (an absolute
 * deadline on the model's clock) and completes the bios.  Real IO runs
 * on as many threads as the device has tags (up to SIM_IO_THREADS_MAX),
 * so one stalled IO holds its own tag only, as one stuck command holds
 * one NCQ slot; a device of depth 1 (a USB stick) is held whole, as
 * usb-storage is.  The models and the queue are pure: all timing is
 * here. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "../../common/log.h"
#include "simint.h"

#define SECTOR 512

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

/* ---- Dispatcher ---- */

/* When the device starts RQ: a request that waited for a tag starts
 * when the tag came free, not when this thread woke to hand it over, as
 * the kernel's completion path starts the next command at once.  So the
 * threads' wake-up latency never adds up over thousands of back-to-back
 * commands: the model keeps to its absolute deadlines, and only a host
 * that falls behind them (a completion due before it is dispatched)
 * slows the device down. */
static uint64_t
device_start (const struct sim *s, const struct blkq_rq *rq, uint64_t now)
{
  uint64_t start = rq->ready_time > s->freed_at ? rq->ready_time
    : s->freed_at;

  return start < now ? start : now;
}

/* Under the lock: takes the next request if a tag is free, emits D as
 * it leaves the queue (so the trace never shows more queued than the
 * queue holds) and asks the model when it completes.  The model is
 * only ever called here, under the lock: by the dispatcher, or by the
 * completer as a tag comes free. */
static bool
dispatch_one_locked (struct sim *s)
{
  struct blkq_rq *rq;
  uint64_t now = sim_now (s), start;

  if (s->busy >= s->tags || (rq = blkq_next (s->q, now)) == NULL)
    return false;
  start = device_start (s, rq, now);
  if (s->busy++ == 0)
    s->busy_since = start;
  sim_rq_event (s, 'D', rq, 0);
  sim_device_take_locked (s, rq, start, now);
  pthread_cond_signal (&s->io);
  return true;
}

/* Under the lock: sleeps until there may be work, or until the queue's
 * next timer (the plug's, CFQ's idle timer), which it then fires at
 * the timer's own model time, as the kernel's timer interrupt would:
 * an absolute deadline on the model's clock, never one slept late. */
static void
wait_work_locked (struct sim *s)
{
  uint64_t timer = blkq_next_timer (s->q);
  struct timespec at;

  if (timer == UINT64_MAX) {
    pthread_cond_wait (&s->work, &s->lock);
    return;
  }
  if (sim_now (s) < timer) {
    at = sim_wall_at (s, timer);
    pthread_cond_timedwait (&s->work, &s->lock, &at);
  }
  if (sim_now (s) >= timer)
    blkq_run_timers (s->q, timer);
}

static void *
dispatcher_main (void *arg)
{
  struct sim *s = arg;

  pthread_mutex_lock (&s->lock);
  for (;;) {
    if (dispatch_one_locked (s))
      continue;
    if (s->stopping && blkq_queued (s->q) == 0)
      break;
    if (s->stopping)            /* nothing more comes: nothing to plug */
      blkq_unplug (s->q, sim_now (s));
    wait_work_locked (s);
  }
  s->dispatcher_done = true;
  pthread_cond_broadcast (&s->io);
  pthread_cond_signal (&s->due);
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* ---- IO threads ---- */

/* The real IO of RQ's bios; the first error. */
static int
rq_real_io (struct sim *s, struct blkq_rq *rq)
{
  struct blkq_bio *bio;
  int err, first = 0;

  for (bio = rq->bios; bio; bio = bio->next)
    if ((err = real_io (s, bio->opaque)) != 0) {
      ((struct sim_bio *) bio->opaque)->err = err;
      if (first == 0)
        first = err;
    }
  return first;
}

static void *
io_main (void *arg)
{
  struct sim *s = arg;
  struct blkq_rq *rq;
  unsigned tag;
  int err;

  pthread_mutex_lock (&s->lock);
  for (;;) {
    if (s->njobs == 0) {
      if (s->dispatcher_done)
        break;
      pthread_cond_wait (&s->io, &s->lock);
      continue;
    }
    tag = s->jobs[s->job_head];
    s->job_head = (s->job_head + 1) % s->tags;
    s->njobs--;
    rq = s->slots[tag].rq;
    pthread_mutex_unlock (&s->lock);
    err = rq_real_io (s, rq);
    pthread_mutex_lock (&s->lock);
    sim_device_io_done_locked (s, tag, err);
    pthread_cond_signal (&s->due);
  }
  s->io_running--;
  pthread_cond_signal (&s->due);
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* ---- Completer ---- */

/* Unlocked: the bios of a completed request are done; each may free
 * itself (or wake its waiter) in DONE, so nothing is read after it.
 * The request itself goes back to the queue under the lock, at its
 * completion's model time DONE_AT: the queue is not thread-safe.  Its
 * allocation ends there (__blk_put_request), which may hand a request
 * to a sleeping submitter, and may let the elevator dispatch again. */
static void
complete_bios (struct sim *s, struct blkq_rq *rq, uint64_t done_at)
{
  struct blkq_bio *bio = rq->bios, *next;
  struct sim_bio *sb;
  uint64_t timer;

  rq->bios = NULL;
  for (; bio; bio = next) {
    next = bio->next;
    sb = bio->opaque;
    sb->done (sb->opaque, sb->err);
  }
  pthread_mutex_lock (&s->lock);
  timer = blkq_next_timer (s->q);
  blkq_done (s->q, rq, done_at);
  /* CFQ arms its idle timer at a completion (cfq_completed_request,
   * cfq_arm_slice_timer): the dispatcher, asleep until the timer it
   * knew of or until work comes, must learn of an earlier one, or a
   * queue idled for an owner that sends nothing more is never
   * expired and what other queues hold never goes. */
  if (blkq_next_timer (s->q) < timer)
    pthread_cond_signal (&s->work);
  sim_wake_granted_locked (s);
  while (dispatch_one_locked (s))
    ;
  pthread_mutex_unlock (&s->lock);
}

/* Under the lock: waits until the earliest event at the device is due;
 * false when there is nothing more to complete, ever (the model's
 * wake-ups left then concern no request). */
static bool
wait_due_locked (struct sim *s)
{
  struct timespec at;
  uint64_t due;

  for (;;) {
    if (s->dispatcher_done && s->io_running == 0 && s->busy == 0)
      return false;
    if (!sim_device_next_at (s, &due)) {
      pthread_cond_wait (&s->due, &s->lock);
      continue;
    }
    if (sim_now (s) >= due)
      return true;
    at = sim_wall_at (s, due);
    pthread_cond_timedwait (&s->due, &s->lock, &at);
  }
}

static void *
completer_main (void *arg)
{
  struct sim *s = arg;
  struct inflight in;

  pthread_mutex_lock (&s->lock);
  while (wait_due_locked (s)) {
    if (!sim_device_pop_locked (s, &in))
      continue;                   /* a wake-up: the model decided */
    s->st.late_ns += sim_now (s) - in.done_at;
    s->st.ios++;
    /* C before the tag is free: the next D comes after it. */
    sim_rq_event (s, 'C', in.rq, in.err);
    s->freed_at = in.done_at;
    if (--s->busy == 0)
      s->st.busy_ns += in.done_at - s->busy_since;
    /* The next command goes out from here, as the kernel's completion
     * path restarts the queue: waking the dispatcher for it would cost
     * a thread's wake-up per command, on a host busy encrypting. */
    dispatch_one_locked (s);
    /* A reordering device chooses its next command now, among those it
     * holds and the one just dispatched. */
    sim_device_pick_locked (s, in.done_at);
    pthread_cond_signal (&s->work);
    pthread_mutex_unlock (&s->lock);
    complete_bios (s, in.rq, in.done_at);
    pthread_mutex_lock (&s->lock);
  }
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* ---- Threads ---- */

int
sim_start_threads (struct sim *s)
{
  unsigned n = s->tags < SIM_IO_THREADS_MAX ? s->tags : SIM_IO_THREADS_MAX, i;
  int err;

  clock_gettime (CLOCK_MONOTONIC, &s->start);
  s->freed_at = 0;
  s->stopping = s->dispatcher_done = false;
  if ((err = pthread_create (&s->dispatcher, NULL, dispatcher_main, s)))
    goto fail;
  s->threads = 1;
  for (i = 0; i < n; i++) {
    if ((err = pthread_create (&s->io_threads[i], NULL, io_main, s)))
      goto fail_stop;
    s->io_running = ++s->nio;
  }
  if ((err = pthread_create (&s->completer, NULL, completer_main, s)))
    goto fail_stop;
  s->threads = 2;
  return 0;
 fail_stop:
  sim_stop_threads (s);
 fail:
  errno = err;
  nbdkit_error ("device model: pthread_create: %m");
  return -1;
}

void
sim_stop_threads (struct sim *s)
{
  unsigned i;

  pthread_mutex_lock (&s->lock);
  s->stopping = true;
  pthread_cond_broadcast (&s->work);
  pthread_cond_broadcast (&s->io);
  pthread_cond_broadcast (&s->due);
  pthread_mutex_unlock (&s->lock);
  pthread_join (s->dispatcher, NULL);
  for (i = 0; i < s->nio; i++)
    pthread_join (s->io_threads[i], NULL);
  s->nio = 0;
  if (s->threads == 2)
    pthread_join (s->completer, NULL);
  s->threads = 0;
}
