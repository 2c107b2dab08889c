/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated device (sim.h): the requests at the device, by tag.
 *
 * A request leaves the block queue into a free tag (blktrace's D) and
 * goes to the model.  A model that serves in order (START) says at once
 * when it completes; one that reorders (QUEUE, PICK) holds it until it
 * chooses to serve it, and says when that one completes then.  Each
 * request also has its real IO done on the image by an IO thread; once
 * both are known (its completion time and its real IO) it is filed in a
 * heap by completion time, where the completer finds it.  The heap also
 * holds the model's wake-ups: times at which it has decisions to make
 * that no completion falls on.  Everything here runs under the sim's
 * lock; simdev.c has the threads. */
#include <errno.h>
#include <stdlib.h>

#include "../../common/log.h"
#include "simint.h"

/* ---- The heap of events by time ---- */

static int
heap_push (struct sim *s, struct dev_event ev)
{
  unsigned i, parent;

  if (s->nheap == s->heap_size) {
    struct dev_event *more = realloc (s->heap,
                                      2 * s->heap_size * sizeof *more);

    if (more == NULL)
      return -1;
    s->heap = more;
    s->heap_size *= 2;
  }
  for (i = s->nheap++; i > 0 && s->heap[parent = (i - 1) / 2].at > ev.at;
       i = parent)
    s->heap[i] = s->heap[parent];
  s->heap[i] = ev;
  return 0;
}

static struct dev_event
heap_pop (struct sim *s)
{
  struct dev_event top = s->heap[0], last = s->heap[--s->nheap];
  unsigned i = 0, c;

  while ((c = 2 * i + 1) < s->nheap) {
    if (c + 1 < s->nheap && s->heap[c + 1].at < s->heap[c].at)
      c++;
    if (s->heap[c].at >= last.at)
      break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (s->nheap)
    s->heap[i] = last;
  return top;
}

/* ---- Tags ---- */

int
sim_tags_init (struct sim *s)
{
  unsigned i;

  s->slots = calloc (s->tags, sizeof *s->slots);
  s->free_tags = calloc (s->tags, sizeof *s->free_tags);
  s->jobs = calloc (s->tags, sizeof *s->jobs);
  /* Room for every tag's completion and as many wake-ups; more grow. */
  s->heap_size = 2 * s->tags;
  s->heap = calloc (s->heap_size, sizeof *s->heap);
  if (!s->slots || !s->free_tags || !s->jobs || !s->heap) {
    nbdkit_error ("device model: %m");
    return -1;
  }
  for (i = 0; i < s->tags; i++)       /* tag 0 taken first */
    s->free_tags[i] = s->tags - 1 - i;
  s->nfree = s->tags;
  return 0;
}

void
sim_tags_free (struct sim *s)
{
  free (s->slots);
  free (s->free_tags);
  free (s->jobs);
  free (s->heap);
}

/* Files TAG's completion in the heap. */
static void
file_done (struct sim *s, unsigned tag)
{
  if (heap_push (s, (struct dev_event) { tag, s->slots[tag].done_at }))
    nbdkit_error ("device model: a completion lost: %m");
}

/* TAG is due at AT (not before NOW); filed once its real IO is done. */
static void
started (struct sim *s, unsigned tag, uint64_t at, uint64_t now)
{
  struct inflight *in = &s->slots[tag];

  in->done_at = at < now ? now : at;
  in->started = true;
  if (in->io_done)
    file_done (s, tag);
}

void
sim_device_pick_locked (struct sim *s, uint64_t now)
{
  struct dev_event ev;

  if (s->model->start)
    return;
  while (s->model->pick (s->mstate, now, &ev))
    if (ev.tag != DEV_NO_TAG)
      started (s, ev.tag, ev.at, now);
    else if (heap_push (s, ev) == -1)
      nbdkit_error ("device model: a wake-up lost: %m");
}

/* The model could not take TAG: its bios fail at once, no real IO. */
static void
refused (struct sim *s, unsigned tag, uint64_t now)
{
  struct inflight *in = &s->slots[tag];
  struct blkq_bio *bio;

  for (bio = in->rq->bios; bio; bio = bio->next)
    ((struct sim_bio *) bio->opaque)->err = ENOMEM;
  in->err = ENOMEM;
  in->io_done = true;
  started (s, tag, now, now);
}

void
sim_device_take_locked (struct sim *s, struct blkq_rq *rq, uint64_t start,
                        uint64_t now)
{
  unsigned tag = s->free_tags[--s->nfree];
  struct inflight *in = &s->slots[tag];
  struct dev_io io = { .op = rq->op, .sector = rq->sector,
                       .nsect = rq->nsect };

  *in = (struct inflight) { .rq = rq };
  if (s->model->start)
    started (s, tag, s->model->start (s->mstate, &io, start), now);
  else if (s->model->queue (s->mstate, &io, start, tag) == -1) {
    refused (s, tag, now);
    return;
  }
  s->jobs[(s->job_head + s->njobs++) % s->tags] = tag;
  sim_device_pick_locked (s, now);
}

void
sim_device_io_done_locked (struct sim *s, unsigned tag, int err)
{
  struct inflight *in = &s->slots[tag];

  in->err = err;
  in->io_done = true;
  if (in->started)
    file_done (s, tag);
}

bool
sim_device_next_at (const struct sim *s, uint64_t *at)
{
  if (s->nheap == 0)
    return false;
  *at = s->heap[0].at;
  return true;
}

bool
sim_device_pop_locked (struct sim *s, struct inflight *in)
{
  struct dev_event ev = heap_pop (s);

  if (ev.tag == DEV_NO_TAG) {
    sim_device_pick_locked (s, ev.at);
    return false;
  }
  *in = s->slots[ev.tag];
  s->free_tags[s->nfree++] = ev.tag;
  return true;
}
