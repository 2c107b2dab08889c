/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Request allocation in the block queue (blkq.h): who gets a request,
 * who sleeps, and whom a completion wakes.
 *
 * blk-mq: a tag from allocation to completion, nr_requests in all; a
 * submitter that finds none free sleeps on the next of 8 wait queues
 * (bt_wait_ptr, round robin); each freed tag counts down the wait
 * queue that wakes next, and every wake_batch-th wakes up to
 * wake_batch of its sleepers, then the next wait queue's turn comes
 * (__sbq_wake_up, lib/sbitmap.c of 6.1).  A woken sleeper takes a free
 * tag, or sleeps again on the next wait queue.
 *
 * The legacy request lists (block/blk-core.c, 2.6.32 and 3.16): sync
 * and async requests counted apart, each up to nr_requests; the
 * allocation that fills a list marks it full and makes its submitter a
 * batcher; once full, only batchers (and CFQ's ELV_MQUEUE_MUST)
 * allocate, up to 3/2 nr_requests (get_request).  A batcher may take
 * nr_batching requests, or any within BLK_BATCH_TIME of becoming one
 * (ioc_batching, ioc_set_batching).  A freed request wakes one sleeper
 * of its class, once the list is below nr_requests (freed_request),
 * and the sleeper becomes a batcher (get_request_wait).
 *
 * The kernel wakes the sleeper, which then allocates; here the
 * allocation is made for it at the completion (a grant), so that no
 * later submitter can take the request in between: the order is first
 * come, first served, and independent of how fast threads wake. */
#include <stdlib.h>

#include "blkq-int.h"

/* ---- io_contexts ---- */

static struct ioc_state *
ioc_get (struct blkq *q, unsigned context)
{
  struct ioc_state **b = &q->alloc.iocs[context % IOC_BUCKETS], *s;

  for (s = *b; s; s = s->next)
    if (s->context == context)
      return s;
  if ((s = calloc (1, sizeof *s)) == NULL)
    return NULL;                /* as current_io_context failing */
  s->context = context;
  s->next = *b;
  *b = s;
  return s;
}

static uint64_t
batch_time (const struct blkq *q)
{
  return q->cfg.hz / 50;        /* BLK_BATCH_TIME, block/blk.h */
}

static bool
ioc_batching (const struct blkq *q, const struct ioc_state *ioc,
              uint64_t now)
{
  if (ioc == NULL)
    return false;
  /* At least one request even once the time is up: no lost wake-up. */
  return ioc->nr_batch == BLKQ_NR_BATCHING
    || (ioc->nr_batch > 0
        && blkq_jiffies (q, now) < ioc->last_waited + batch_time (q));
}

static void
ioc_set_batching (const struct blkq *q, struct ioc_state *ioc, uint64_t now)
{
  if (ioc == NULL || ioc_batching (q, ioc, now))
    return;
  ioc->nr_batch = BLKQ_NR_BATCHING;
  ioc->last_waited = blkq_jiffies (q, now);
}

/* ---- allocation ---- */

/* get_request of 2.6.32 and 3.16 (__get_request). */
static bool
legacy_get (struct blkq *q, const struct blkq_bio *bio, uint64_t now)
{
  struct rqalloc *a = &q->alloc;
  unsigned nr = q->cfg.nr_requests, c = a->count[bio->sync];
  bool must = q->cfq && cfq_must_queue (q, bio->context, bio->sync);
  /* 2.6.32 looks the io_context up only once the list is about to
   * fill; 3.16 has it from the bio, and counts every batched
   * allocation. */
  struct ioc_state *ioc = q->cfg.cfq_version == BLKQ_CFQ_3_16
    ? ioc_get (q, bio->context) : NULL;

  if (c + 1 >= nr) {
    if (ioc == NULL)
      ioc = ioc_get (q, bio->context);
    if (!a->full[bio->sync]) {
      ioc_set_batching (q, ioc, now);
      a->full[bio->sync] = true;
    }
    else if (!must && !ioc_batching (q, ioc, now))
      return false;
  }
  if (c >= 3 * nr / 2)
    return false;
  a->count[bio->sync]++;
  if (ioc_batching (q, ioc, now))
    ioc->nr_batch--;
  return true;
}

bool
rqalloc_get (struct blkq *q, const struct blkq_bio *bio, uint64_t now)
{
  if (q->cfg.layer != BLKQ_MQ)
    return legacy_get (q, bio, now);
  if (q->alloc.count[0] >= q->cfg.nr_requests)
    return false;
  q->alloc.count[0]++;
  return true;
}

unsigned
rqalloc_count (const struct blkq *q)
{
  return q->alloc.count[0] + q->alloc.count[1];
}

/* ---- waiters ---- */

static void
waitq_push (struct waitq *wq, struct blkq_waiter *w)
{
  w->next = NULL;
  if (wq->tail)
    wq->tail->next = w;
  else
    wq->head = w;
  wq->tail = w;
}

static struct blkq_waiter *
waitq_pop (struct waitq *wq)
{
  struct blkq_waiter *w = wq->head;

  if (w) {
    wq->head = w->next;
    if (wq->head == NULL)
      wq->tail = NULL;
    w->next = NULL;
  }
  return w;
}

/* W's bio becomes the request allocated for it. */
static void
grant (struct blkq *q, struct blkq_waiter *w)
{
  w->rq = &blkq_add_new (q, w->bio)->rq;
  w->granted = true;
  waitq_push (&q->alloc.granted, w);
}

void
rqalloc_wait (struct blkq *q, struct blkq_waiter *w, uint64_t now)
{
  struct rqalloc *a = &q->alloc;

  (void) now;
  if (q->cfg.layer != BLKQ_MQ) {
    waitq_push (&a->wait[w->bio->sync], w);
    return;
  }
  waitq_push (&a->wait[a->wait_index], w);
  a->wait_index = (a->wait_index + 1) % SBQ_WAIT_QUEUES;
}

/* __sbq_wake_up: the first wait queue with sleepers from wake_index
 * counts the freed tag; at its wake_batch-th, up to wake_batch of its
 * sleepers wake. */
static void
mq_wake (struct blkq *q)
{
  struct rqalloc *a = &q->alloc;
  struct blkq_waiter *w;
  unsigned i, ws, n;

  for (i = 0; i < SBQ_WAIT_QUEUES; i++)
    if (a->wait[(a->wake_index + i) % SBQ_WAIT_QUEUES].head)
      break;
  if (i == SBQ_WAIT_QUEUES)
    return;
  ws = (a->wake_index + i) % SBQ_WAIT_QUEUES;
  a->wake_index = ws;
  if (--a->wait_cnt[ws] > 0)
    return;
  for (n = 0; n < a->wake_batch && (w = waitq_pop (&a->wait[ws])); n++)
    if (a->count[0] < q->cfg.nr_requests) {
      a->count[0]++;
      grant (q, w);
    }
    else
      rqalloc_wait (q, w, q->now);      /* sleeps again: bt_wait_ptr */
  a->wake_index = (ws + 1) % SBQ_WAIT_QUEUES;
  a->wait_cnt[ws] = a->wake_batch;
}

/* __freed_request: below nr_requests the list is no longer full and
 * one sleeper wakes, a batcher from now on. */
static void
legacy_freed (struct blkq *q, bool sync, uint64_t now)
{
  struct rqalloc *a = &q->alloc;
  struct blkq_waiter *w;

  if (a->count[sync] + 1 > q->cfg.nr_requests)
    return;
  a->full[sync] = false;
  if ((w = a->wait[sync].head) == NULL)
    return;
  ioc_set_batching (q, ioc_get (q, w->bio->context), now);
  if (legacy_get (q, w->bio, now))
    grant (q, waitq_pop (&a->wait[sync]));
}

void
rqalloc_put (struct blkq *q, bool sync, uint64_t now)
{
  if (q->cfg.layer == BLKQ_MQ) {
    q->alloc.count[0]--;
    mq_wake (q);
  }
  else {
    q->alloc.count[sync]--;
    legacy_freed (q, sync, now);
  }
}

void
rqalloc_init (struct blkq *q)
{
  unsigned i;

  q->alloc.wake_batch = q->cfg.wake_batch;
  for (i = 0; i < SBQ_WAIT_QUEUES; i++)
    q->alloc.wait_cnt[i] = q->alloc.wake_batch;
}

void
rqalloc_destroy (struct blkq *q)
{
  struct ioc_state *s, *next;
  unsigned i;

  for (i = 0; i < IOC_BUCKETS; i++)
    for (s = q->alloc.iocs[i]; s; s = next) {
      next = s->next;
      free (s);
    }
}

/* sbitmap_calculate_shift: 64 bits a word, fewer for small maps so
 * that they spread over at least 4 words. */
static unsigned
sbitmap_shift (unsigned depth)
{
  unsigned shift = 6;

  if (depth >= 4)
    while ((4U << shift) > depth)
      shift--;
  return shift;
}

unsigned
blkq_wake_batch (unsigned depth, unsigned min_shallow)
{
  unsigned shift = sbitmap_shift (depth), word = 1U << shift;
  unsigned shallow = min_shallow < word ? min_shallow : word;
  unsigned rest = depth & (word - 1);
  unsigned usable = (depth >> shift) * shallow
    + (rest < shallow ? rest : shallow);
  unsigned batch = usable / SBQ_WAIT_QUEUES;   /* SBQ_WAKE_BATCH is 8 */

  return batch < 1 ? 1 : batch > 8 ? 8 : batch;
}
