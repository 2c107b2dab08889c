/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CFQ's io_contexts and close cooperators (elv-cfq.h), as
 * block/cfq-iosched.c of 2.6.32 and 3.16 had them.
 *
 * Each queue with a request waiting sits on a "prio tree" ordered by
 * the sector of its next request (cfq_prio_tree_add).  When the active
 * sync queue runs empty, CFQ looks there for a sync queue whose next
 * request lies close to where the head is (cfq_close_cooperator): 3.16
 * within CFQQ_CLOSE_THR (8192 sectors), 2.6.32 within the active
 * queue's mean seek distance.  Such a queue is served at once, without
 * idling (cfq_select_queue; cfq_completed_request arms no idle timer),
 * and the two are marked for merging (cfq_setup_merge): at the next
 * request of each io_context of the emptied queue, the context moves
 * to the other queue, which becomes shared (cfq_set_request,
 * cfq_merge_cfqqs).  A shared queue that seeks is split again at its
 * contexts' next requests: 3.16 when it is seeky at its slice's end
 * (__cfq_slice_expired: split_coop), 2.6.32 once it has been seeky for
 * CFQQ_COOP_TOUT (HZ) (should_split_cfqq); the last context keeps it.
 *
 * Where the model departs: the prio tree is a list searched for the
 * next requests on either side of the head; the kernel's red-black tree
 * checks first whichever of the two its shape puts on the search path,
 * the model the nearer ("the parent of the NULL leaf will contain the
 * closest sector", cfqq_close), and compares the queues' next requests
 * as they are now, as the kernel's lookup does, never in a stale
 * order. */
#include <stdlib.h>

#include "elv-cfq.h"

#define CLOSE_THR (8 * 1024)    /* CFQQ_CLOSE_THR, 3.16; CFQQ_SEEK_THR
                                   of 2.6.32, sectors */

/* ---- io_contexts and queues ---- */

struct cfq_cic *
cfq_cic_of (struct blkq *q, unsigned context, bool create)
{
  struct cfq_cic **b = &q->cfq->cics[context % CFQ_BUCKETS], *c;

  for (c = *b; c; c = c->hash_next)
    if (c->context == context)
      return c;
  if (!create)
    return NULL;
  if ((c = calloc (1, sizeof *c)) == NULL)
    abort ();                   /* out of memory: nothing sane to do */
  c->context = context;
  /* The think time starts now (cfq_cic_alloc, cfq_init_icq). */
  c->ttime.last_end_request = blkq_jiffies (q, q->now);
  c->hash_next = *b;
  *b = c;
  return c;
}

struct cfq_queue *
cfq_queue_new (struct blkq *q, bool sync)
{
  struct cfq_data *cd = q->cfq;
  struct cfq_queue *cq = calloc (1, sizeof *cq);

  if (cq == NULL)
    abort ();
  cq->sync = sync;
  cq->wl = -1;
  cq->idle_window = sync;       /* cfq_init_cfqq */
  cq->all_next = cd->queues;
  cd->queues = cq;
  return cq;
}

/* cfq_put_cooperator: the references a merge into CQ's chain took. */
static void
put_cooperator (struct cfq_queue *cq)
{
  struct cfq_queue *c;

  for (c = cq->new_cfqq; c && c != cq; c = c->new_cfqq)
    if (c->proc_refs)
      c->proc_refs--;
}

/* split_cfqq: CIC leaves the shared CQ, unless it is its last context,
 * which keeps it unshared.  Returns the queue kept, or NULL.  3.16 also
 * drops what CQ's own pending merge took (2.6.32 did not). */
static struct cfq_queue *
split (struct cfq_data *cd, struct cfq_cic *cic, struct cfq_queue *cq)
{
  if (cq->proc_refs == 1) {
    cq->coop = cq->split_coop = cq->seeky = false;
    return cq;
  }
  cic->sync_q = NULL;
  if (cd->v316)
    put_cooperator (cq);
  cq->proc_refs--;
  return NULL;
}

static bool
should_split (const struct cfq_data *cd, const struct cfq_queue *cq,
              uint64_t j)
{
  if (!cq->coop)
    return false;
  if (cd->v316)
    return cq->split_coop;
  return cq->seeky && j > cq->seeky_start + cd->hz;   /* CFQQ_COOP_TOUT */
}

struct cfq_queue *
cfq_sync_queue (struct blkq *q, struct cfq_cic *cic, uint64_t j)
{
  struct cfq_queue *cq = cic->sync_q;

  if (cq && should_split (q->cfq, cq, j))
    cq = split (q->cfq, cic, cq);
  if (cq == NULL) {
    cq = cic->sync_q = cfq_queue_new (q, true);
    cq->proc_refs = 1;
    return cq;
  }
  /* cfq_merge_cfqqs: one step along the chain; the reference on the
   * new queue was taken when the merge was set up. */
  if (cq->new_cfqq) {
    cic->sync_q = cq->new_cfqq;
    cic->sync_q->coop = true;
    cq->proc_refs--;
    cq = cic->sync_q;
  }
  return cq;
}

/* ---- the prio tree ---- */

void
cfq_ptree_del (struct cfq_data *cd, struct cfq_queue *cq)
{
  struct cfq_queue **l;

  if (!cq->in_ptree)
    return;
  for (l = &cd->ptree; *l != cq; l = &(*l)->ptree_next)
    ;
  *l = cq->ptree_next;
  cq->ptree_next = NULL;
  cq->in_ptree = false;
}

void
cfq_ptree_add (struct cfq_data *cd, struct cfq_queue *cq)
{
  struct cfq_queue *c;

  cfq_ptree_del (cd, cq);
  if (cq->next_rq == NULL)
    return;
  for (c = cd->ptree; c; c = c->ptree_next)
    if (c->next_rq->rq.sector == cq->next_rq->rq.sector)
      return;                   /* cfq_prio_tree_lookup found it */
  cq->ptree_next = cd->ptree;
  cd->ptree = cq;
  cq->in_ptree = true;
}

/* ---- cooperators ---- */

static uint64_t
dist (uint64_t a, uint64_t b)
{
  return a >= b ? a - b : b - a;
}

bool
cfq_rq_close (const struct cfq_data *cd, const struct cfq_queue *cur,
              const struct request *r)
{
  uint64_t near = cd->v316 || cur->seek_samples <= 80 ? CLOSE_THR
    : cur->seek_mean;

  return dist (r->rq.sector, cd->last_position) <= near;
}

/* cfqq_close: the queue whose next request starts at the head, else
 * the nearer of the next requests on either side of it if close for
 * CUR, else the other if close. */
static struct cfq_queue *
queue_close (const struct cfq_data *cd, const struct cfq_queue *cur)
{
  uint64_t head = cd->last_position, s;
  struct cfq_queue *c, *below = NULL, *above = NULL, *first, *second;

  for (c = cd->ptree; c; c = c->ptree_next) {
    s = c->next_rq->rq.sector;
    if (s == head)
      return c;
    if (s < head && (!below || s > below->next_rq->rq.sector))
      below = c;
    if (s > head && (!above || s < above->next_rq->rq.sector))
      above = c;
  }
  first = below, second = above;
  if (!below || (above && dist (above->next_rq->rq.sector, head)
                 < dist (below->next_rq->rq.sector, head)))
    first = above, second = below;
  if (first && cfq_rq_close (cd, cur, first->next_rq))
    return first;
  if (second && cfq_rq_close (cd, cur, second->next_rq))
    return second;
  return NULL;
}

struct cfq_queue *
cfq_close_cooperator (const struct cfq_data *cd, const struct cfq_queue *cur)
{
  struct cfq_queue *c;

  if (!cd->cooperators || !cur->sync || cfq_seeky (cd, cur))
    return NULL;
  /* 3.16: not the group's only busy queue (cfqg->nr_cfqq). */
  if (cd->v316 && cd->busy_queues == 1)
    return NULL;
  if ((c = queue_close (cd, cur)) == NULL || !c->sync || cfq_seeky (cd, c))
    return NULL;
  return c;
}

void
cfq_setup_merge (struct cfq_queue *cq, struct cfq_queue *new_cq)
{
  struct cfq_queue *c;

  if (new_cq->proc_refs == 0)
    return;
  /* No circle; skip interim merges. */
  for (c = new_cq->new_cfqq; c; c = c->new_cfqq) {
    if (c == cq)
      return;
    new_cq = c;
  }
  if (cq->proc_refs == 0 || new_cq->proc_refs == 0)
    return;
  /* Toward the queue of more processes: the lesser amount of work. */
  if (new_cq->proc_refs >= cq->proc_refs) {
    cq->new_cfqq = new_cq;
    new_cq->proc_refs += cq->proc_refs;
  }
  else {
    new_cq->new_cfqq = cq;
    cq->proc_refs += new_cq->proc_refs;
  }
}

void
cfq_coop_seektime (const struct cfq_data *cd, struct cfq_queue *cq,
                   uint64_t j)
{
  if (cd->v316 || !cq->coop)
    return;
  if (cfq_seeky (cd, cq) && !cq->seeky) {
    cq->seeky = true;
    cq->seeky_start = j;
  }
  else if (!cfq_seeky (cd, cq))
    cq->seeky = false;
}
