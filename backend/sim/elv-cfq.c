/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CFQ's requests: queues per io_context, the choice of the next
 * request, dispatch and completion (elv-cfq.h; the slices are
 * cfq-slice.c's).  Times in jiffies, as block/cfq-iosched.c counts. */
#include <stddef.h>
#include <stdlib.h>

#include "elv-cfq.h"

#define NS_PER_MS 1000000ULL
#define PAGE_BYTES 4096

/* A tunable in ns (0: DEFAULT jiffies; UINT64_MAX: an explicit 0) in
 * jiffies, rounded up as msecs_to_jiffies rounds. */
static unsigned
jiffies_of (const struct blkq *q, uint64_t ns, unsigned dflt)
{
  if (ns == 0)
    return dflt;
  if (ns == UINT64_MAX)
    return 0;
  return (ns / NS_PER_MS * q->cfg.hz + 999) / 1000;
}

/* The tunables' defaults at HZ (cfq_init_queue, cfq_init): quantum 4
 * in 2.6.32, 8 in 3.16; fifo_expire HZ/8 (sync) and HZ/4 (async);
 * slice_sync HZ/10, slice_async HZ/25 and slice_idle HZ/125, each at
 * least a jiffy; group_idle as slice_idle (3.16, group scheduling on as
 * Debian configures it); target_latency 3 HZ/10. */
static void
set_tunables (struct blkq *q, struct cfq_data *cd)
{
  const struct blkq_cfq_tunables *t = &q->cfg.cfq;
  unsigned hz = q->cfg.hz, idle = hz / 125 ?: 1;

  cd->hz = hz;
  cd->quantum = t->quantum ? t->quantum : cd->v316 ? 8 : 4;
  cd->fifo_expire[1] = jiffies_of (q, t->fifo_expire_sync, hz / 8);
  cd->fifo_expire[0] = jiffies_of (q, t->fifo_expire_async, hz / 4);
  cd->slice[1] = jiffies_of (q, t->slice_sync, hz / 10);
  cd->slice[0] = jiffies_of (q, t->slice_async, hz / 25 ?: 1);
  cd->slice_idle = jiffies_of (q, t->slice_idle, idle);
  cd->group_idle = cd->v316 ? jiffies_of (q, t->group_idle, idle) : 0;
  cd->target_latency = jiffies_of (q, t->target_latency, hz * 3 / 10);
  cd->slice_async_rq = t->slice_async_rq ? t->slice_async_rq : 2;
  cd->back_max = 2ULL * (t->back_seek_max == UINT32_MAX ? 0
                         : t->back_seek_max ? t->back_seek_max
                         : 16 * 1024);
  cd->back_penalty = t->back_seek_penalty ? t->back_seek_penalty : 2;
  cd->latency = t->low_latency != 0;
  cd->cooperators = !t->no_cooperators;
}

int
cfq_init (struct blkq *q)
{
  struct cfq_data *cd = calloc (1, sizeof *cd);

  if (cd == NULL)
    return -1;
  cd->v316 = q->cfg.cfq_version == BLKQ_CFQ_3_16;
  set_tunables (q, cd);
  cd->hw_tag = q->cfg.device_depth >= CFQ_HW_QUEUE_MIN;
  cd->nonrot = q->cfg.nonrot;
  cd->idle_timer = UINT64_MAX;
  cd->serving_wl = WL_SYNC_NOIDLE;
  /* 3.16 starts as if the last delayed sync request were a second ago
   * (last_delayed_sync = jiffies - HZ); 2.6.32 at the start. */
  cd->last_end_sync = cd->v316 ? -(int64_t) cd->hz : 0;
  q->cfq = cd;
  return 0;
}

void
cfq_exit (struct blkq *q)
{
  struct cfq_queue *cq, *next;
  struct cfq_cic *c, *cnext;
  unsigned i;

  for (cq = q->cfq->queues; cq; cq = next) {
    next = cq->all_next;
    free (cq);
  }
  for (i = 0; i < CFQ_BUCKETS; i++)
    for (c = q->cfq->cics[i]; c; c = cnext) {
      cnext = c->hash_next;
      free (c);
    }
  free (q->cfq);
  q->cfq = NULL;
}

/* ---- queues ---- */

/* The queue a new request R goes to at jiffy J (cfq_set_request): its
 * context's sync queue, or the shared async queue. */
static struct cfq_queue *
queue_for (struct blkq *q, const struct request *r, uint64_t j)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_cic *cic = cfq_cic_of (q, r->context, true);

  if (r->rq.sync)
    return cfq_sync_queue (q, cic, j);
  if (cd->async_q == NULL)
    cd->async_q = cfq_queue_new (q, false);
  return cd->async_q;
}

/* The queue CONTEXT's requests of class SYNC go to now, or NULL. */
static struct cfq_queue *
queue_of (struct blkq *q, unsigned context, bool sync)
{
  struct cfq_cic *cic = cfq_cic_of (q, context, false);

  if (cic == NULL)
    return NULL;
  return sync ? cic->sync_q : q->cfq->async_q;
}

/* ---- the choice of the next request ---- */

/* cfq_choose_req: sync first; else the nearer to the head at LAST,
 * forward, or backward within back_max at back_penalty times the
 * distance; two requests behind that: the further back (one seek). */
static struct request *
choose_req (const struct cfq_data *cd, struct request *r1,
            struct request *r2, uint64_t last)
{
  uint64_t s1, s2, d1 = 0, d2 = 0;
  bool wrap1 = false, wrap2 = false;

  if (r1 == NULL || r1 == r2)
    return r2;
  if (r2 == NULL)
    return r1;
  if (r1->rq.sync != r2->rq.sync)
    return r1->rq.sync ? r1 : r2;
  s1 = r1->rq.sector;
  s2 = r2->rq.sector;
  if (s1 >= last)
    d1 = s1 - last;
  else if (s1 + cd->back_max >= last)
    d1 = (last - s1) * cd->back_penalty;
  else
    wrap1 = true;
  if (s2 >= last)
    d2 = s2 - last;
  else if (s2 + cd->back_max >= last)
    d2 = (last - s2) * cd->back_penalty;
  else
    wrap2 = true;
  if (wrap1 != wrap2)
    return wrap1 ? r2 : r1;
  if (wrap1)
    return s1 <= s2 ? r1 : r2;
  if (d1 != d2)
    return d1 < d2 ? r1 : r2;
  return s1 >= s2 ? r1 : r2;
}

static struct request *
of_node (struct tnode *n)
{
  return n ? (struct request *) ((char *) n
                                 - offsetof (struct request, cfq_node))
    : NULL;
}

/* cfq_find_next_rq: after LAST leaves, the better of the requests
 * around it in sector order (the following one wrapping to the first);
 * 2.6.32 judges from the head, 3.16 from LAST. */
static struct request *
find_next_rq (const struct cfq_data *cd, struct cfq_queue *cq,
              struct request *last)
{
  struct tnode *t = cq->sort;
  struct request *next, *prev;

  next = of_node (tree_after (t, last->cfq_node.key, last->cfq_node.seq));
  if (next == NULL) {
    next = of_node (tree_first (t));
    if (next == last)
      next = NULL;
  }
  prev = of_node (tree_floor_before (t, last->cfq_node.key,
                                     last->cfq_node.seq));
  return choose_req (cd, next, prev,
                     cd->v316 ? last->rq.sector : cd->last_position);
}

static void
fifo_append (struct cfq_queue *cq, struct request *r)
{
  r->cfq_next = NULL;
  r->cfq_prev = cq->fifo_tail;
  if (cq->fifo_tail)
    cq->fifo_tail->cfq_next = r;
  else
    cq->fifo_head = r;
  cq->fifo_tail = r;
}

static void
fifo_remove (struct cfq_queue *cq, struct request *r)
{
  if (r->cfq_prev)
    r->cfq_prev->cfq_next = r->cfq_next;
  else
    cq->fifo_head = r->cfq_next;
  if (r->cfq_next)
    r->cfq_next->cfq_prev = r->cfq_prev;
  else
    cq->fifo_tail = r->cfq_prev;
}

static void
add_rq_rb (struct blkq *q, struct request *r, uint64_t j)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_queue *cq = r->cfqq;

  struct request *prev = cq->next_rq;

  cq->queued++;
  r->cfq_node.key = r->rq.sector;
  tree_insert (&cq->sort, &r->cfq_node);
  if (!cq->on_rr)
    cfq_add_rr (cd, cq, j);
  cq->next_rq = choose_req (cd, cq->next_rq, r, cd->last_position);
  if (cq->next_rq != prev)
    cfq_ptree_add (cd, cq);
}

/* cfq_remove_request: out of its queue (2.6.32 takes an emptied queue
 * off the service tree at once, 3.16 at its slice's end, but off the
 * prio tree at once: cfq_del_rq_rb). */
static void
remove_request (struct cfq_data *cd, struct request *r)
{
  struct cfq_queue *cq = r->cfqq;

  if (cq->next_rq == r)
    cq->next_rq = find_next_rq (cd, cq, r);
  fifo_remove (cq, r);
  tree_remove (&cq->sort, &r->cfq_node);
  cq->queued--;
  cd->rq_queued--;
  if (cq->sort == NULL)
    cfq_ptree_del (cd, cq);
  if (!cd->v316 && cq->on_rr && cq->sort == NULL)
    cfq_del_rr (cd, cq);
}

/* ---- insertion ---- */

static void
update_ttime (struct cfq_ttime *t, uint64_t j, unsigned cap)
{
  uint64_t elapsed = j - t->last_end_request;

  if (elapsed > 2ULL * cap)
    elapsed = 2ULL * cap;
  t->samples = (7 * t->samples + 256) / 8;
  t->total = (7 * t->total + 256 * elapsed) / 8;
  t->mean = (t->total + 128) / t->samples;
}

/* cfq_update_io_seektime: 2.6.32 a decaying mean distance, 3.16 the
 * last 32 requests, each far (over 800 sectors) or near. */
static void
update_seek (struct cfq_data *cd, struct cfq_queue *cq,
             const struct request *r)
{
  uint64_t pos = r->rq.sector, last = cq->last_request_pos, d = 0, cap;

  if (last)
    d = last < pos ? pos - last : last - pos;
  if (cd->v316) {
    cq->seek_history <<= 1;
    cq->seek_history |= cd->nonrot ? r->rq.nsect < 2 * 32 : d > 8 * 100;
    return;
  }
  cap = cq->seek_mean * 4 + (cq->seek_samples <= 60 ? 2 * 1024 * 1024
                             : 2 * 1024 * 64);
  if (d > cap)
    d = cap;
  cq->seek_samples = (7 * cq->seek_samples + 256) / 8;
  cq->seek_total = (7 * cq->seek_total + 256 * d) / 8;
  cq->seek_mean = (cq->seek_total + cq->seek_samples / 2)
    / cq->seek_samples;
}

/* A write that is sync is WRITE_SYNC, which carries REQ_NOIDLE in
 * 2.6.32, 3.16 and 4.0 (include/linux/fs.h): "expect no request after
 * this one". */
static bool
rq_noidle (const struct request *r)
{
  return r->rq.op == DEV_WRITE && r->rq.sync;
}

/* cfq_update_idle_window: a sync queue idles unless (3.16) its next
 * request is REQ_NOIDLE, or its process -- the cic of the request just
 * queued -- thinks longer than slice_idle or (3.16: shallow and)
 * seeks. */
static void
update_idle_window (struct cfq_data *cd, struct cfq_queue *cq,
                    const struct cfq_cic *cic)
{
  unsigned idle = cd->slice_idle;

  if (!cq->sync)
    return;
  if (cd->v316 && cq->queued >= 4)
    cq->deep = true;
  if (cd->v316 && cq->next_rq && rq_noidle (cq->next_rq))
    cq->idle_window = false;
  else if (!cd->slice_idle
           || (cd->v316 ? !cq->deep && cfq_seeky (cd, cq)
               : !cd->latency && cd->hw_tag && cfq_seeky (cd, cq)))
    cq->idle_window = false;
  else if (cic->ttime.samples > 80) {
    if (!cd->v316 && cq->seek_samples > 80 && cfq_seeky (cd, cq))
      idle = (CFQ_MIN_TT * cd->hz + 999) / 1000;
    cq->idle_window = cic->ttime.mean <= idle;
  }
}

/* cfq_should_preempt: R, new in CQ, takes the disk from the active
 * queue. */
static bool
should_preempt (struct cfq_data *cd, struct cfq_queue *cq,
                const struct request *r, uint64_t j)
{
  struct cfq_queue *act = cd->active;

  if (act == NULL)
    return false;
  if (!cd->v316 && cfq_slice_used (act, j))
    return true;
  if (r->rq.sync && !act->sync)
    return true;
  if (cd->v316) {
    if (cfq_slice_used (act, j))
      return true;
    if (cd->serving_wl == WL_SYNC_NOIDLE
        && cfq_wl_of (cd, cq) == WL_SYNC_NOIDLE
        && cd->tree_count[WL_SYNC_NOIDLE] == 2 && act->sort == NULL)
      return true;
    if (act->sort == NULL && !cfq_should_idle (cd, act))
      return true;
  }
  if (!cd->active_cic || !act->wait_request)
    return false;
  return cfq_rq_close (cd, act, r);
}

static void
preempt (struct cfq_data *cd, struct cfq_queue *cq, uint64_t j)
{
  int old = cfq_wl_of (cd, cd->active);

  cfq_slice_expired (cd, true, j);
  if (old != cfq_wl_of (cd, cq))
    cd->saved_wl_slice = 0;
  cfq_service_tree_add (cd, cq, true, j);
  cq->slice_end = 0;
  cq->slice_new = true;
}

/* cfq_rq_enqueued. */
static void
enqueued (struct blkq *q, struct cfq_queue *cq, struct request *r,
          uint64_t j)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_cic *cic = cfq_cic_of (q, r->context, true);

  cd->rq_queued++;
  if (!cd->v316 || cq->sync)
    update_ttime (&cic->ttime, j, cd->slice_idle);
  if (cd->v316) {
    if (cq->sync && cq->wl >= 0)
      update_ttime (&cd->st_ttime[cq->wl], j, cd->slice_idle);
    update_ttime (&cd->grp_ttime, j, cd->group_idle);
  }
  update_seek (cd, cq, r);
  cfq_coop_seektime (cd, cq, j);
  update_idle_window (cd, cq, cic);
  cq->last_request_pos = r->rq.sector + r->rq.nsect;
  if (cq == cd->active) {
    /* Idling for it: a request larger than a page, or other work,
     * runs the queue at once; else it waits for the unplug. */
    if (cq->wait_request) {
      if ((uint64_t) r->rq.nsect * 512 > PAGE_BYTES || cd->busy_queues > 1) {
        cd->idle_timer = UINT64_MAX;
        if (cd->v316)
          cq->wait_request = false;
      }
      if (!cd->v316 || cq->wait_request)
        cq->must_dispatch = true;
    }
  }
  else if (should_preempt (cd, cq, r, j))
    preempt (cd, cq, j);
}

void
cfq_add (struct blkq *q, struct request *r, uint64_t now)
{
  uint64_t j = blkq_jiffies (q, now);
  struct cfq_queue *cq = queue_for (q, r, j);

  r->cfqq = cq;
  r->fifo_jiffies = j + q->cfq->fifo_expire[r->rq.sync];
  fifo_append (cq, r);
  add_rq_rb (q, r, j);
  enqueued (q, cq, r, j);
}

void
cfq_front_merged (struct blkq *q, struct request *r)
{
  struct cfq_queue *cq = r->cfqq;

  tree_remove (&cq->sort, &r->cfq_node);
  cq->queued--;
  add_rq_rb (q, r, blkq_jiffies (q, q->now));
}

/* cfq_merged_requests: A absorbs B, which may be of another queue
 * (attempt_merge asks nothing of the queues, nor of sync); A takes B's
 * FIFO place if B is older and of its own queue.  3.16 also makes A
 * its queue's next request where B was, and takes B's queue, emptied
 * and not the active one, off the service tree (2.6.32's
 * cfq_del_rq_rb did that for any queue). */
void
cfq_requests_merged (struct blkq *q, struct request *a, struct request *b)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_queue *cq = a->cfqq, *bq = b->cfqq;

  if (b->fifo_jiffies < a->fifo_jiffies && cq == bq) {
    fifo_remove (cq, a);
    a->cfq_prev = b->cfq_prev;
    a->cfq_next = b;
    if (b->cfq_prev)
      b->cfq_prev->cfq_next = a;
    else
      cq->fifo_head = a;
    b->cfq_prev = a;
    a->fifo_jiffies = b->fifo_jiffies;
  }
  if (cd->v316 && cq->next_rq == b)
    cq->next_rq = a;
  remove_request (cd, b);
  if (cd->v316 && bq->on_rr && bq->sort == NULL && bq != cd->active)
    cfq_del_rr (cd, bq);
}

/* cfq_allow_merge: BIO joins R only if R is of the queue BIO's own
 * request would go to (its context's sync queue, or the async queue);
 * never a sync bio into an async request. */
bool
cfq_allow_merge (struct blkq *q, const struct request *r,
                 const struct blkq_bio *bio)
{
  struct cfq_queue *cq;

  if (bio->sync && !r->rq.sync)
    return false;
  if (r->cfqq == NULL)          /* behind a barrier: not CFQ's yet */
    return r->rq.sync == bio->sync
      && (!bio->sync || r->context == bio->context);
  cq = queue_of (q, bio->context, bio->sync);
  return cq != NULL && cq == r->cfqq;
}

/* ---- dispatch ---- */

/* cfq_may_dispatch: how deep the queue may go at the device. */
static bool
may_dispatch (struct cfq_data *cd, struct cfq_queue *cq, uint64_t j)
{
  unsigned max = cd->v316 ? (cd->quantum / 2 ?: 1) : cd->quantum;
  uint64_t depth;

  if ((cd->v316 ? cfq_should_idle (cd, cq) : cq->idle_window)
      && (cd->v316 ? cd->rq_in_flight[0] : cd->rq_in_driver[0]))
    return false;               /* drain async before sync */
  if (cd->rq_in_flight[1] && !cq->sync)
    return false;
  if (cq->dispatched >= max) {
    bool promote = cd->v316 && cq->sync && cd->busy_sync_queues == 1;
    bool soon = !cd->v316 || cq->slice_new
      || j + (uint64_t) cd->slice_idle * cq->dispatched > cq->slice_end;

    if (cd->busy_queues > 1 && soon && !promote)
      return false;
    if (!cd->v316)
      max *= 4;
    else
      max = cd->busy_queues == 1 || promote ? UINT32_MAX : cd->quantum;
  }
  /* Async ramps up by slice_sync after the last (delayed) sync. */
  if (!cq->sync && cd->latency) {
    depth = ((int64_t) j - cd->last_end_sync) / cd->slice[1];
    if (depth == 0 && cq->dispatched == 0)
      depth = 1;
    if (depth < max)
      max = depth;
  }
  return cq->dispatched < max;
}

/* cfq_check_fifo: once a slice, the oldest request if expired. */
static struct request *
check_fifo (struct cfq_queue *cq, uint64_t j)
{
  struct request *r = cq->fifo_head;

  if (cq->fifo_checked)
    return NULL;
  cq->fifo_checked = true;
  return r && j >= r->fifo_jiffies ? r : NULL;
}

/* cfq_dispatch_insert and cfq_activate_request. */
static void
dispatch (struct cfq_data *cd, struct request *r)
{
  struct cfq_queue *cq = r->cfqq;

  cq->next_rq = find_next_rq (cd, cq, r);
  remove_request (cd, r);
  cq->dispatched++;
  cd->grp_dispatched++;
  cd->rq_in_flight[cq->sync]++;
  cd->rq_in_driver[r->rq.sync]++;
  cd->last_position = r->rq.sector + r->rq.nsect;
}

/* Draining for a barrier (elv_drain_elevator): the first queue's
 * requests, no slices, no limits. */
static struct request *
forced (struct cfq_data *cd, uint64_t j)
{
  struct cfq_queue *cq = cd->active;
  int wl;

  if (cq == NULL || cq->sort == NULL) {
    cfq_slice_expired (cd, false, j);
    for (wl = 0, cq = NULL; wl < NWL && cq == NULL; wl++)
      cq = cd->tree[wl];
    if (cq == NULL)
      return NULL;
    cd->active = cq;
  }
  return cq->next_rq;
}

struct request *
cfq_pick (struct blkq *q, uint64_t now, bool force)
{
  struct cfq_data *cd = q->cfq;
  uint64_t j = blkq_jiffies (q, now);
  struct cfq_queue *cq;
  struct request *r;

  if (force) {
    if ((r = forced (cd, j)) != NULL)
      dispatch (cd, r);
    return r;
  }
  if (cd->busy_queues == 0 || (cq = cfq_select_queue (cd, j)) == NULL
      || !may_dispatch (cd, cq, j))
    return NULL;
  if ((r = check_fifo (cq, j)) == NULL)
    r = cq->next_rq;
  dispatch (cd, r);
  if (cd->active_cic == NULL)
    cd->active_cic = cfq_cic_of (q, r->context, true);
  cq->slice_dispatch++;
  cq->must_dispatch = false;
  /* An async queue's slice ends after 2 x slice_async_rq x (8 - prio)
   * requests when others wait (cfq_prio_to_maxrq, prio 4). */
  if (cd->busy_queues > 1 && !cq->sync
      && cq->slice_dispatch >= (cd->v316 ? 2 * cd->slice_async_rq * 4
                                : 2 * (cd->slice_async_rq
                                       + cd->slice_async_rq * 3))) {
    cq->slice_end = j + 1;
    cfq_slice_expired (cd, false, j);
  }
  return r;
}

/* ---- completion ---- */

void
cfq_completed (struct blkq *q, struct request *r, uint64_t now)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_queue *cq = r->cfqq;
  uint64_t j = blkq_jiffies (q, now);

  cd->rq_in_driver[r->rq.sync]--;
  cd->rq_in_flight[cq->sync]--;
  cq->dispatched--;
  cd->grp_dispatched--;
  if (r->rq.sync) {
    cfq_cic_of (q, r->context, true)->ttime.last_end_request = j;
    if (!cd->v316)
      cd->last_end_sync = (int64_t) j;
    else {
      if (cq->wl >= 0)
        cd->st_ttime[cq->wl].last_end_request = j;
      /* last_delayed_sync: a sync request that took fifo_expire_sync
       * from its allocation to its completion. */
      if (blkq_jiffies (q, r->rq.insert_time) + cd->fifo_expire[1] <= j)
        cd->last_end_sync = (int64_t) j;
    }
  }
  if (cd->v316)
    cd->grp_ttime.last_end_request = j;
  if (cd->active != cq)
    return;
  if (cq->slice_new) {
    cfq_set_prio_slice (cd, cq, j);
    cq->slice_new = false;
  }
  if (cd->v316 && cfq_should_wait_busy (cd, cq, j)) {
    cq->slice_end = j + (cd->slice_idle ? cd->slice_idle : cd->group_idle);
    cq->wait_busy = true;
  }
  /* No idling with a close cooperator to serve instead; 2.6.32 none
   * after a REQ_NOIDLE request either. */
  if (cfq_slice_used (cq, j))
    cfq_slice_expired (cd, true, j);
  else if (r->rq.sync && cq->sort == NULL
           && !cfq_close_cooperator (cd, cq)
           && (cd->v316 || !rq_noidle (r)))
    cfq_arm_slice_timer (q, j);
}

/* cfq_may_queue: a process CFQ is idling for may exceed nr_requests,
 * once a slice. */
bool
cfq_must_queue (struct blkq *q, unsigned context, bool sync)
{
  struct cfq_queue *cq = queue_of (q, context, sync);

  if (cq == NULL || !cq->wait_request || cq->must_alloc_slice)
    return false;
  cq->must_alloc_slice = true;
  return true;
}

uint64_t
cfq_next_timer (const struct blkq *q)
{
  return q->cfq->idle_timer;
}

/* cfq_idle_slice_timer at NOW: a request that came lets the queue go;
 * a used slice, or an empty queue while others wait, expires. */
void
cfq_run_timer (struct blkq *q, uint64_t now)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_queue *cq = cd->active;
  uint64_t j = blkq_jiffies (q, now);
  bool timed_out = true;

  cd->idle_timer = UINT64_MAX;
  if (now > q->release)
    q->release = now;
  if (cq) {
    timed_out = false;
    if (cq->must_dispatch)
      return;
    if (!cfq_slice_used (cq, j)) {
      if (cd->busy_queues == 0 || cq->sort)
        return;
      cq->deep = false;
    }
  }
  cfq_slice_expired (cd, timed_out, j);
}
