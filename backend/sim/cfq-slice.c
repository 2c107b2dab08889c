/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CFQ's time: service trees, slices, workloads, idling (elv-cfq.h).
 * Every time here is in jiffies, as block/cfq-iosched.c counts. */
#include <stddef.h>
#include <stdint.h>

#include "elv-cfq.h"

#define PRIO 4                  /* IOPRIO_NORM: every queue's */

/* The base slice scaled by priority (cfq_prio_slice). */
unsigned
cfq_prio_slice (const struct cfq_data *cd, bool sync, int prio)
{
  unsigned base = cd->slice[sync];

  return base + base / 5 * (4 - prio);  /* CFQ_SLICE_SCALE */
}

int
cfq_wl_of (const struct cfq_data *cd, const struct cfq_queue *cq)
{
  if (!cd->v316)
    return 0;                   /* 2.6.32: one service tree */
  if (!cq->sync)
    return WL_ASYNC;
  return cq->idle_window ? WL_SYNC : WL_SYNC_NOIDLE;     /* cfqq_type */
}

bool
cfq_seeky (const struct cfq_data *cd, const struct cfq_queue *cq)
{
  if (cd->v316)
    return __builtin_popcount (cq->seek_history) > 32 / 8;
  return cq->seek_mean > 8 * 1024;      /* CFQQ_SEEK_THR, 2.6.32 */
}

bool
cfq_ttime_big (const struct cfq_ttime *t, unsigned slice)
{
  return t->samples > 80 && t->mean > slice;    /* sample_valid */
}

/* ---- service trees ---- */

static void
tree_unlink (struct cfq_data *cd, struct cfq_queue *cq)
{
  if (cq->tree_prev)
    cq->tree_prev->tree_next = cq->tree_next;
  else
    cd->tree[cq->wl] = cq->tree_next;
  if (cq->tree_next)
    cq->tree_next->tree_prev = cq->tree_prev;
  cq->tree_prev = cq->tree_next = NULL;
  cd->tree_count[cq->wl]--;
  cq->wl = -1;
}

/* After the queues of key KEY or less: time_before orders them. */
static void
tree_link (struct cfq_data *cd, struct cfq_queue *cq, int wl)
{
  struct cfq_queue *p = NULL, *n = cd->tree[wl];

  while (n && n->rb_key <= cq->rb_key) {
    p = n;
    n = n->tree_next;
  }
  cq->tree_prev = p;
  cq->tree_next = n;
  if (p)
    p->tree_next = cq;
  else
    cd->tree[wl] = cq;
  if (n)
    n->tree_prev = cq;
  cq->wl = wl;
  cd->tree_count[wl]++;
}

/* cfq_service_tree_add: the key is when the queue should be served:
 * now plus an offset for the other busy queues, less what was left of
 * its last slice; FRONT (a preemption) puts it a second before the
 * first. */
void
cfq_service_tree_add (struct cfq_data *cd, struct cfq_queue *cq,
                      bool front, uint64_t j)
{
  int wl = cfq_wl_of (cd, cq);
  unsigned others = cd->busy_queues ? cd->busy_queues - 1 : 0;
  int64_t key;

  if (!front) {
    key = (int64_t) j + others
      * (int64_t) (cfq_prio_slice (cd, true, 0)
                   - cfq_prio_slice (cd, cq->sync, PRIO));
    key -= cq->slice_resid;
    cq->slice_resid = 0;
  }
  else
    key = (cd->tree[wl] ? cd->tree[wl]->rb_key : (int64_t) j)
      - (int64_t) cd->hz;
  if (cq->wl >= 0) {
    if (key == cq->rb_key && cq->wl == wl)
      return;
    tree_unlink (cd, cq);
  }
  cq->rb_key = key;
  tree_link (cd, cq, wl);
}

/* cfq_add_cfqq_rr and its cfq_resort_rr_list: the service tree, and
 * the prio tree by its next request. */
void
cfq_add_rr (struct cfq_data *cd, struct cfq_queue *cq, uint64_t j)
{
  cq->on_rr = true;
  cd->busy_queues++;
  cd->busy_sync_queues += cq->sync;
  cfq_service_tree_add (cd, cq, false, j);
  cfq_ptree_add (cd, cq);
}

void
cfq_del_rr (struct cfq_data *cd, struct cfq_queue *cq)
{
  cq->on_rr = false;
  if (cq->wl >= 0)
    tree_unlink (cd, cq);
  cfq_ptree_del (cd, cq);
  cd->busy_queues--;
  cd->busy_sync_queues -= cq->sync;
}

/* ---- slices ---- */

bool
cfq_slice_used (const struct cfq_queue *cq, uint64_t j)
{
  return !cq->slice_new && j >= cq->slice_end;
}

/* 3.16's cfq_group_get_avg_queues: an average of busy queues that
 * follows a rise at once and a fall slowly. */
static unsigned
avg_queues (struct cfq_data *cd)
{
  unsigned busy = cd->busy_queues;
  unsigned lo = cd->busy_avg < busy ? cd->busy_avg : busy;
  unsigned hi = cd->busy_avg < busy ? busy : cd->busy_avg;

  cd->busy_avg = (3 * hi + lo + 2) / 4;
  return cd->busy_avg;
}

/* cfq_scaled_cfqq_slice (3.16, low_latency): slices shrink so that
 * every queue is served within target_latency, not below 2 idles'
 * worth. */
static unsigned
scaled_slice (struct cfq_data *cd, const struct cfq_queue *cq)
{
  unsigned slice = cfq_prio_slice (cd, cq->sync, PRIO);
  unsigned iq, expect, low;

  if (!cd->v316 || !cd->latency)
    return slice;
  iq = avg_queues (cd);
  expect = cd->slice[1] * iq;
  if (expect <= cd->target_latency)
    return slice;
  low = 2 * cd->slice_idle * slice / cd->slice[1];
  if (low > slice)
    low = slice;
  slice = slice * cd->target_latency / expect;
  return slice > low ? slice : low;
}

/* A slice starts at the completion of the queue's first request of
 * it (cfq_completed_request). */
void
cfq_set_prio_slice (struct cfq_data *cd, struct cfq_queue *cq, uint64_t j)
{
  unsigned slice = scaled_slice (cd, cq);

  cq->slice_start = j;
  cq->slice_end = j + slice;
  cq->allocated_slice = slice;
}

static void
set_active (struct cfq_data *cd, struct cfq_queue *cq, uint64_t j)
{
  if (cq) {
    cq->slice_start = cq->slice_end = 0;
    cq->dispatch_start = j;
    cq->allocated_slice = cq->slice_dispatch = 0;
    cq->wait_request = cq->must_dispatch = false;
    cq->must_alloc_slice = cq->fifo_checked = false;
    cq->slice_new = true;
    cd->idle_timer = UINT64_MAX;
  }
  cd->active = cq;
}

/* __cfq_slice_expired: what was left of a slice cut short (TIMED_OUT)
 * moves the queue forward in its tree next time; 3.16 marks a shared
 * queue that seeks for splitting. */
void
cfq_slice_expired (struct cfq_data *cd, bool timed_out, uint64_t j)
{
  struct cfq_queue *cq = cd->active;

  if (cq == NULL)
    return;
  if (cq->wait_request)
    cd->idle_timer = UINT64_MAX;
  cq->wait_request = cq->wait_busy = false;
  if (cd->v316 && cq->coop && cfq_seeky (cd, cq))
    cq->split_coop = true;
  if (timed_out && (cd->v316 || !cq->slice_new))
    cq->slice_resid = cq->slice_new ? (int64_t) scaled_slice (cd, cq)
      : (int64_t) cq->slice_end - (int64_t) j;
  if (cd->v316) {
    /* cfq_group_served: the workload's rest is kept for next time. */
    cd->saved_wl_slice = cd->workload_expires > (int64_t) j
      ? (uint64_t) (cd->workload_expires - (int64_t) j) : 0;
    cd->saved_wl = cd->serving_wl;
    if (cq->on_rr && cq->sort == NULL)
      cfq_del_rr (cd, cq);
  }
  if (cq->on_rr) {
    cfq_service_tree_add (cd, cq, false, j);
    cfq_ptree_add (cd, cq);
  }
  cd->active = NULL;
  cd->active_cic = NULL;
}

/* ---- 3.16's workloads ---- */

/* choose_wl_class_and_type: the serving workload goes on while it has
 * queues and its slice lasts; then the one whose first queue waited
 * longest, for a share of target_latency by its number of queues. */
static void
choose_workload (struct cfq_data *cd, uint64_t j)
{
  unsigned count, slice, busy = cd->busy_queues;
  int wl, best = WL_SYNC_NOIDLE;
  int64_t lowest = 0;
  bool valid = false;

  if (busy == 0)
    return;
  if (cd->tree_count[cd->serving_wl]
      && (int64_t) j <= cd->workload_expires)
    return;
  for (wl = 0; wl < NWL; wl++)
    if (cd->tree[wl] && (!valid || cd->tree[wl]->rb_key < lowest)) {
      lowest = cd->tree[wl]->rb_key;
      best = wl;
      valid = true;
    }
  cd->serving_wl = best;
  count = cd->tree_count[best];
  slice = cd->target_latency * count
    / (cd->busy_avg > busy ? cd->busy_avg : busy);
  if (best == WL_ASYNC) {
    unsigned tmp = cd->target_latency * cd->tree_count[WL_ASYNC] / busy;

    slice = slice < tmp ? slice : tmp;
    slice = slice * cd->slice[0] / cd->slice[1];
  }
  else if (slice < 2 * cd->slice_idle)
    slice = 2 * cd->slice_idle;
  if (slice < CFQ_MIN_TT)
    slice = CFQ_MIN_TT;
  cd->workload_expires = (int64_t) (j + slice);
}

static struct cfq_queue *
next_queue (struct cfq_data *cd, uint64_t j)
{
  if (!cd->v316)
    return cd->tree[0];
  if (cd->rq_queued == 0)
    return NULL;
  /* cfq_choose_cfqg: the one group's saved workload. */
  if (cd->saved_wl_slice) {
    cd->workload_expires = (int64_t) (j + cd->saved_wl_slice);
    cd->serving_wl = cd->saved_wl;
  }
  else
    cd->workload_expires = (int64_t) j - 1;
  choose_workload (cd, j);
  return cd->tree[cd->serving_wl];
}

/* ---- choosing the queue ---- */

bool
cfq_should_idle (const struct cfq_data *cd, const struct cfq_queue *cq)
{
  if (!cd->slice_idle)
    return false;
  if (cq->idle_window && !(cd->nonrot && cd->hw_tag))
    return true;
  /* The last queue of its tree idles unless its think time is big. */
  return cq->wl >= 0 && cd->tree_count[cq->wl] == 1 && cq->sync
    && !cfq_ttime_big (&cd->st_ttime[cq->wl], cd->slice_idle);
}

/* 2.6.32's cfq_select_queue: an emptied queue with a close
 * cooperator hands the disk to it. */
static struct cfq_queue *
select_2632 (struct cfq_data *cd, uint64_t j)
{
  struct cfq_queue *cq = cd->active, *coop = NULL;

  if (cq == NULL)
    goto new_queue;
  if (cfq_slice_used (cq, j) && !cq->must_dispatch)
    goto expire;
  if (cq->sort)
    return cq;
  if ((coop = cfq_close_cooperator (cd, cq)) != NULL) {
    if (!cq->new_cfqq)
      cfq_setup_merge (cq, coop);
    goto expire;
  }
  if (cd->idle_timer != UINT64_MAX || (cq->dispatched && cq->idle_window))
    return NULL;
 expire:
  cfq_slice_expired (cd, false, j);
 new_queue:
  set_active (cd, coop ? coop : next_queue (cd, j), j);
  return cd->active;
}

/* 3.16's cfq_select_queue: as 2.6.32's, the cooperator served within
 * the workload that was being served (no cfq_choose_cfqg). */
static struct cfq_queue *
select_316 (struct cfq_data *cd, uint64_t j)
{
  struct cfq_queue *cq = cd->active, *coop = NULL;

  if (cq == NULL)
    goto new_queue;
  if (cd->rq_queued == 0)
    return NULL;
  if (cq->wait_busy && cq->sort)
    goto expire;
  if (cfq_slice_used (cq, j) && !cq->must_dispatch) {
    if (cd->busy_queues == 1 && cq->sort == NULL && cq->dispatched
        && cfq_should_idle (cd, cq))
      return NULL;
    goto check_group_idle;
  }
  if (cq->sort)
    return cq;
  if ((coop = cfq_close_cooperator (cd, cq)) != NULL) {
    if (!cq->new_cfqq)
      cfq_setup_merge (cq, coop);
    goto expire;
  }
  if (cd->idle_timer != UINT64_MAX)
    return NULL;
  /* A deep seeky queue on a device faster than it: do not idle. */
  if (cfq_seeky (cd, cq) && cq->idle_window
      && (cq->slice_new
          || cq->slice_end - j > j - cq->slice_start)) {
    cq->deep = false;
    cq->idle_window = false;
  }
  if (cq->dispatched && cfq_should_idle (cd, cq))
    return NULL;
 check_group_idle:
  if (cd->group_idle && cd->busy_queues == 1 && cd->grp_dispatched
      && !cfq_ttime_big (&cd->grp_ttime, cd->group_idle))
    return NULL;
 expire:
  cfq_slice_expired (cd, false, j);
 new_queue:
  set_active (cd, coop ? coop : next_queue (cd, j), j);
  return cd->active;
}

struct cfq_queue *
cfq_select_queue (struct cfq_data *cd, uint64_t j)
{
  return cd->v316 ? select_316 (cd, j) : select_2632 (cd, j);
}

/* ---- idling ---- */

/* cfq_arm_slice_timer: the active queue emptied; wait slice_idle for
 * its next request rather than seek elsewhere, unless the process of
 * the slice's first request (active_cic) thinks longer than what is
 * left of the slice. */
void
cfq_arm_slice_timer (struct blkq *q, uint64_t j)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_queue *cq = cd->active;
  const struct cfq_cic *cic = cd->active_cic;
  unsigned sl = cd->slice_idle;
  bool group = false;

  if (cd->nonrot && cd->hw_tag)
    return;
  if (cd->v316) {
    if (!cfq_should_idle (cd, cq)) {
      if (!cd->group_idle)
        return;
      group = true;
    }
    if (cq->dispatched)
      return;
  }
  else if (!cd->slice_idle || !cq->idle_window
           || cd->rq_in_driver[0] + cd->rq_in_driver[1])
    return;
  if (cic == NULL)
    return;
  if (cic->ttime.samples > 80
      && (int64_t) cq->slice_end - (int64_t) j < (int64_t) cic->ttime.mean)
    return;
  if (group && cd->busy_queues > 1)
    return;
  cq->wait_request = true;
  if (group)
    sl = cd->group_idle;
  else if (!cd->v316 && cq->seek_samples > 80 && cfq_seeky (cd, cq)) {
    unsigned tt = (CFQ_MIN_TT * cd->hz + 999) / 1000;     /* ms */

    sl = sl < tt ? sl : tt;
  }
  cd->idle_timer = blkq_jiffy_start (q, j + sl);
}

/* 3.16's cfq_should_wait_busy: the group's only queue keeps its slice
 * a little past a completion when its next request should come. */
bool
cfq_should_wait_busy (const struct cfq_data *cd, const struct cfq_queue *cq,
                      uint64_t j)
{
  if (cq->sort || cd->busy_queues > 1)
    return false;
  if (cfq_ttime_big (&cd->grp_ttime, cd->group_idle))
    return false;
  if (cfq_slice_used (cq, j))
    return true;
  if (cd->active_cic && cd->active_cic->ttime.samples > 80
      && (int64_t) cq->slice_end - (int64_t) j
         < (int64_t) cd->active_cic->ttime.mean)
    return true;
  return cq->slice_end - j == 1;
}
