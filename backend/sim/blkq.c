/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The block-queue model (blkq.h), its core: requests between barriers
 * form an epoch; the oldest epoch is the one the elevator dispatches
 * from, the newest the one bios merge into.  Each epoch indexes its
 * requests per direction by start sector (the elevator's sort order,
 * front merges) and by end sector (back merges, as Linux's request
 * hash), in treaps, and keeps them in FIFO lists (one for none and
 * cfq, one per direction for deadline).  A barrier request carries the
 * epoch that follows it.  Allocation and waiters are rqalloc.c's, the
 * 2.6.32 plug plug.c's, the elevators elv-deadline.c's and
 * elv-cfq.c's. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "blkq-int.h"

#define NS_PER_S 1000000000ULL

/* ---- treaps ---- */

static bool
before (const struct tnode *a, uint64_t key, uint64_t seq)
{
  return a->key < key || (a->key == key && a->seq < seq);
}

/* Splits T into the nodes before N's (key, seq) and the others. */
static void
split (struct tnode *t, const struct tnode *n,
       struct tnode **lo, struct tnode **hi)
{
  if (t == NULL)
    *lo = *hi = NULL;
  else if (before (t, n->key, n->seq)) {
    split (t->right, n, &t->right, hi);
    *lo = t;
  }
  else {
    split (t->left, n, lo, &t->left);
    *hi = t;
  }
}

/* Every node of A is ordered before every node of B. */
static struct tnode *
join (struct tnode *a, struct tnode *b)
{
  if (a == NULL)
    return b;
  if (b == NULL)
    return a;
  if (a->prio > b->prio) {
    a->right = join (a->right, b);
    return a;
  }
  b->left = join (a, b->left);
  return b;
}

void
tree_insert (struct tnode **root, struct tnode *n)
{
  struct tnode **link = root;

  while (*link && (*link)->prio >= n->prio)
    link = before (n, (*link)->key, (*link)->seq)
      ? &(*link)->left : &(*link)->right;
  split (*link, n, &n->left, &n->right);
  *link = n;
}

void
tree_remove (struct tnode **root, struct tnode *n)
{
  struct tnode **link = root;

  while (*link != n)
    link = before (n, (*link)->key, (*link)->seq)
      ? &(*link)->left : &(*link)->right;
  *link = join (n->left, n->right);
}

/* The first node whose key is at least KEY, or NULL. */
struct tnode *
tree_ceiling (struct tnode *t, uint64_t key)
{
  struct tnode *found = NULL;

  while (t)
    if (t->key >= key) {
      found = t;
      t = t->left;
    }
    else
      t = t->right;
  return found;
}

/* The last node ordered before (KEY, SEQ), or NULL. */
struct tnode *
tree_floor_before (struct tnode *t, uint64_t key, uint64_t seq)
{
  struct tnode *found = NULL;

  while (t)
    if (before (t, key, seq)) {
      found = t;
      t = t->right;
    }
    else
      t = t->left;
  return found;
}

/* The first node ordered after (KEY, SEQ), or NULL. */
struct tnode *
tree_after (struct tnode *t, uint64_t key, uint64_t seq)
{
  struct tnode *found = NULL;

  while (t)
    if (before (t, key, seq) || (t->key == key && t->seq == seq))
      t = t->right;
    else {
      found = t;
      t = t->left;
    }
  return found;
}

struct tnode *
tree_first (struct tnode *t)
{
  while (t && t->left)
    t = t->left;
  return t;
}

/* ---- requests in an epoch ---- */

struct request *
blkq_of_rq (struct blkq_rq *rq)
{
  return (struct request *) ((char *) rq - offsetof (struct request, rq));
}

int
blkq_dir (enum dev_op op)
{
  return op == DEV_WRITE ? DIR_WRITE : DIR_READ;
}

bool
blkq_is_barrier (enum dev_op op)
{
  return op == DEV_FLUSH || op == DEV_DISCARD;
}

static struct fifo *
fifo_of (struct blkq *q, struct epoch *ep, const struct request *r)
{
  return &ep->fifo[q->cfg.elevator == BLKQ_DEADLINE
                   ? blkq_dir (r->rq.op) : 0];
}

static uint64_t
end_of (const struct request *r)
{
  return r->rq.sector + r->rq.nsect;
}

static void
fifo_link_after (struct fifo *f, struct request *prev, struct request *r)
{
  r->prev = prev;
  r->next = prev ? prev->next : f->head;
  if (r->next)
    r->next->prev = r;
  else
    f->tail = r;
  if (prev)
    prev->next = r;
  else
    f->head = r;
}

static void
fifo_unlink (struct fifo *f, struct request *r)
{
  if (r->prev)
    r->prev->next = r->next;
  else
    f->head = r->next;
  if (r->next)
    r->next->prev = r->prev;
  else
    f->tail = r->prev;
}

static void
index_start (struct epoch *ep, struct request *r)
{
  r->by_start.key = r->rq.sector;
  tree_insert (&ep->by_start[blkq_dir (r->rq.op)], &r->by_start);
}

static void
index_end (struct epoch *ep, struct request *r)
{
  r->by_end.key = end_of (r);
  tree_insert (&ep->by_end[blkq_dir (r->rq.op)], &r->by_end);
}

static void
epoch_add (struct blkq *q, struct epoch *ep, struct request *r)
{
  index_start (ep, r);
  index_end (ep, r);
  fifo_link_after (fifo_of (q, ep, r), fifo_of (q, ep, r)->tail, r);
  ep->count++;
}

static void
epoch_remove (struct blkq *q, struct epoch *ep, struct request *r)
{
  int dir = blkq_dir (r->rq.op);

  tree_remove (&ep->by_start[dir], &r->by_start);
  tree_remove (&ep->by_end[dir], &r->by_end);
  fifo_unlink (fifo_of (q, ep, r), r);
  ep->count--;
}

/* ---- time and events ---- */

uint64_t
blkq_jiffies (const struct blkq *q, uint64_t ns)
{
  return ns / NS_PER_S * q->cfg.hz + ns % NS_PER_S * q->cfg.hz / NS_PER_S;
}

uint64_t
blkq_jiffy_start (const struct blkq *q, uint64_t j)
{
  uint64_t hz = q->cfg.hz;

  return j / hz * NS_PER_S + (j % hz * NS_PER_S + hz - 1) / hz;
}

void
blkq_emit (struct blkq *q, enum blkq_event_kind kind,
           const struct blkq_bio *bio, unsigned count)
{
  struct blkq_event ev = {
    .kind = kind, .bio = bio, .count = count, .time = q->now,
  };

  if (q->cfg.event)
    q->cfg.event (q->cfg.event_arg, &ev);
}

/* The queue's time for a call at NOW: never earlier than before. */
static uint64_t
advance (struct blkq *q, uint64_t now)
{
  if (now > q->now)
    q->now = now;
  return q->now;
}

/* ---- allocation ---- */

uint32_t
blkq_rand (struct blkq *q)
{
  q->rand ^= q->rand << 13;
  q->rand ^= q->rand >> 17;
  q->rand ^= q->rand << 5;
  return q->rand;
}

static struct request *
request_new (struct blkq *q, struct blkq_bio *bio, uint64_t now)
{
  struct request *r = q->free;

  if (r)
    q->free = r->next;
  else if ((r = malloc (sizeof *r)) == NULL)
    return NULL;
  *r = (struct request) {
    .rq = { .op = bio->op, .sector = bio->sector, .nsect = bio->nsect,
            .insert_time = now, .bios = bio, .nbios = 1,
            .sync = bio->sync },
    .q = q, .bios_tail = bio, .context = bio->context, .age = q->seq,
    .by_start = { .seq = q->seq, .prio = blkq_rand (q) },
    .by_end = { .seq = q->seq, .prio = blkq_rand (q) },
    .cfq_node = { .seq = q->seq, .prio = blkq_rand (q) },
  };
  q->seq++;
  bio->next = NULL;
  return r;
}

static void
request_put (struct request *r)
{
  r->next = r->q->free;
  r->q->free = r;
}

static void
set_defaults (struct blkq_config *c)
{
  if (c->max_sectors == 0)
    c->max_sectors = BLKQ_MAX_SECTORS;
  if (c->read_expire == 0)
    c->read_expire = BLKQ_READ_EXPIRE;
  if (c->write_expire == 0)
    c->write_expire = BLKQ_WRITE_EXPIRE;
  if (c->fifo_batch == 0)
    c->fifo_batch = BLKQ_FIFO_BATCH;
  if (c->writes_starved == 0)
    c->writes_starved = BLKQ_WRITES_STARVED;
  if (c->hz == 0)
    c->hz = BLKQ_HZ;
  /* mq-deadline limits async requests to 3/4 of the tags
   * (dd_depth_updated), which sets the sbitmap's min_shallow_depth. */
  if (c->wake_batch == 0)
    c->wake_batch = blkq_wake_batch (c->nr_requests,
                                     c->elevator == BLKQ_DEADLINE
                                     ? (c->nr_requests * 3 / 4 ?: 1)
                                     : UINT32_MAX);
}

struct blkq *
blkq_new (const struct blkq_config *cfg)
{
  struct blkq *q;

  if (cfg->nr_requests == 0) {
    errno = EINVAL;
    return NULL;
  }
  if ((q = calloc (1, sizeof *q)) == NULL)
    return NULL;
  q->cfg = *cfg;
  set_defaults (&q->cfg);
  q->rand = 2463534242u;        /* fixed: runs are reproducible */
  rqalloc_init (q);
  plug_init (q);
  if (q->cfg.elevator == BLKQ_CFQ && cfq_init (q) == -1) {
    free (q);
    return NULL;
  }
  return q;
}

static void
free_list (struct request *r)
{
  struct request *next;

  for (; r; r = next) {
    next = r->next;
    free (r);
  }
}

void
blkq_free (struct blkq *q)
{
  struct blkq_rq *rq;

  if (q == NULL)
    return;
  q->plug.plugged = false;
  q->draining = true;
  while ((rq = blkq_next (q, UINT64_MAX)) != NULL) {
    q->outstanding--;
    free (blkq_of_rq (rq));
  }
  free_list (q->free);
  q->free = NULL;
  rqalloc_destroy (q);
  if (q->cfq)
    cfq_exit (q);
  q->closed = true;
  if (q->outstanding == 0)
    free (q);
}

unsigned
blkq_queued (const struct blkq *q)
{
  return q->queued;
}

unsigned
blkq_allocated (const struct blkq *q)
{
  return rqalloc_count (q);
}

bool
blkq_plugged (const struct blkq *q)
{
  return q->plug.plugged;
}

/* ---- merging ---- */

/* Where bios go: the epoch after the last barrier. */
static struct epoch *
newest_epoch (struct blkq *q)
{
  return q->barrier_tail ? &q->barrier_tail->after : &q->base;
}

/* Whether requests of EP are the elevator's (CFQ holds only those of
 * the dispatching epoch). */
static bool
cfq_holds (const struct blkq *q, const struct epoch *ep)
{
  return q->cfq && ep == &q->base;
}

static bool
fits (const struct blkq *q, const struct request *r, uint64_t nsect)
{
  return r->rq.nsect + nsect <= q->cfg.max_sectors;
}

/* Whether A and B, contiguous, may become one request: within
 * max_sectors, and under CFQ of one queue, as the requests a merged
 * one is tried against are its neighbours in its own queue's sort
 * tree (attempt_back_merge, attempt_front_merge through
 * elv_rb_latter_request, elv_rb_former_request). */
static bool
may_merge (const struct blkq *q, const struct request *a,
           const struct request *b)
{
  return a && b && fits (q, a, b->rq.nsect) && a->cfqq == b->cfqq;
}

/* The request of direction DIR in EP that ends (BY_END) or starts at
 * SECTOR, or NULL. */
static struct request *
find_at (struct epoch *ep, int dir, bool by_end, uint64_t sector)
{
  struct tnode *n = tree_ceiling (by_end ? ep->by_end[dir]
                                  : ep->by_start[dir], sector);

  if (n == NULL || n->key != sector)
    return NULL;
  return by_end ? request_of_end (n) : request_of_start (n);
}

/* A, ending where B starts, absorbs B, and takes B's place in the FIFO
 * and its insert time when B is older (mq-deadline's
 * dd_merged_requests, cfq_merged_requests).  B's allocation ends at
 * once: it never reaches the device. */
static void
merge_requests (struct blkq *q, struct epoch *ep, struct request *a,
                struct request *b)
{
  struct fifo *f = fifo_of (q, ep, a);

  if (cfq_holds (q, ep))
    cfq_requests_merged (q, a, b);
  epoch_remove (q, ep, b);
  tree_remove (&ep->by_end[blkq_dir (a->rq.op)], &a->by_end);
  a->bios_tail->next = b->rq.bios;
  a->bios_tail = b->bios_tail;
  a->rq.nsect += b->rq.nsect;
  a->rq.nbios += b->rq.nbios;
  index_end (ep, a);
  if (b->age < a->age) {
    /* B, unlinked, still points at its FIFO predecessor, which is
     * older than B and so neither A nor B. */
    fifo_unlink (f, a);
    fifo_link_after (f, b->prev, a);
    a->age = b->age;
    a->rq.insert_time = b->rq.insert_time;
  }
  q->queued--;
  request_put (b);
  rqalloc_put (q, b->rq.sync, q->now);
}

static struct request *
back_merge (struct blkq *q, struct epoch *ep, struct request *r,
            struct blkq_bio *bio)
{
  int dir = blkq_dir (r->rq.op);
  struct request *next;

  tree_remove (&ep->by_end[dir], &r->by_end);
  r->bios_tail->next = bio;
  r->bios_tail = bio;
  bio->next = NULL;
  r->rq.nsect += bio->nsect;
  r->rq.nbios++;
  index_end (ep, r);
  next = find_at (ep, dir, false, end_of (r));
  if (may_merge (q, r, next))
    merge_requests (q, ep, r, next);
  return r;
}

static struct request *
front_merge (struct blkq *q, struct epoch *ep, struct request *r,
             struct blkq_bio *bio)
{
  int dir = blkq_dir (r->rq.op);
  struct request *prev;

  tree_remove (&ep->by_start[dir], &r->by_start);
  bio->next = r->rq.bios;
  r->rq.bios = bio;
  r->rq.sector = bio->sector;
  r->rq.nsect += bio->nsect;
  r->rq.nbios++;
  index_start (ep, r);
  if (cfq_holds (q, ep))
    cfq_front_merged (q, r);
  prev = find_at (ep, dir, true, r->rq.sector);
  if (may_merge (q, prev, r)) {
    merge_requests (q, ep, prev, r);
    return prev;
  }
  return r;
}

/* Whether BIO may join R: under CFQ only a request of the queue BIO's
 * own request would go to (cfq_allow_merge). */
static bool
may_join (struct blkq *q, const struct request *r, const struct blkq_bio *bio)
{
  return r && fits (q, r, bio->nsect)
    && (!q->cfq || cfq_allow_merge (q, r, bio));
}

/* A request BIO merged into, or NULL.  Only the newest epoch: a bio
 * never joins a request queued before a barrier it came after. */
static struct request *
bio_merge (struct blkq *q, struct blkq_bio *bio)
{
  struct epoch *ep = newest_epoch (q);
  int dir = blkq_dir (bio->op);
  struct request *r;

  if (blkq_is_barrier (bio->op) || bio->nsect == 0)
    return NULL;
  r = find_at (ep, dir, true, bio->sector);
  if (may_join (q, r, bio))
    return back_merge (q, ep, r, bio);
  r = find_at (ep, dir, false, bio->sector + bio->nsect);
  if (may_join (q, r, bio))
    return front_merge (q, ep, r, bio);
  return NULL;
}

/* ---- insertion ---- */

/* A request for BIO, allocated at the queue's time: queued as the
 * kernel's __make_request queues it (G, the plug, I, the unplug at
 * unplug_thresh). */
struct request *
blkq_add_new (struct blkq *q, struct blkq_bio *bio)
{
  struct request *r = request_new (q, bio, q->now);

  if (r == NULL)
    abort ();                   /* out of memory: nothing sane to do */
  blkq_emit (q, BLKQ_EV_GETRQ, bio, 0);
  plug_before_add (q, q->now);
  if (blkq_is_barrier (bio->op)) {
    if (q->barrier_tail)
      q->barrier_tail->next = r;
    else
      q->barrier_head = r;
    q->barrier_tail = r;
  }
  else {
    epoch_add (q, newest_epoch (q), r);
    if (cfq_holds (q, newest_epoch (q)))
      cfq_add (q, r, q->now);
  }
  q->queued++;
  blkq_emit (q, BLKQ_EV_INSERT, bio, 0);
  plug_after_add (q, q->now);
  return r;
}

enum blkq_result
blkq_insert (struct blkq *q, struct blkq_bio *bio, uint64_t now,
             struct blkq_rq **rq)
{
  struct request *r;

  now = advance (q, now);
  if ((r = bio_merge (q, bio)) != NULL) {
    blkq_emit (q, BLKQ_EV_MERGE, bio, 0);
    *rq = &r->rq;
    return BLKQ_MERGED;
  }
  if (!rqalloc_get (q, bio, now))
    return BLKQ_FULL;
  *rq = &blkq_add_new (q, bio)->rq;
  return BLKQ_INSERTED;
}

void
blkq_wait (struct blkq *q, struct blkq_waiter *w, struct blkq_bio *bio,
           uint64_t now)
{
  now = advance (q, now);
  w->bio = bio;
  w->rq = NULL;
  w->granted = false;
  blkq_emit (q, BLKQ_EV_SLEEP, bio, 0);
  /* get_request_wait (2.6.32) unplugs before io_schedule. */
  plug_remove (q, now);
  rqalloc_wait (q, w, now);
}

struct blkq_waiter *
blkq_woken (struct blkq *q)
{
  struct waitq *g = &q->alloc.granted;
  struct blkq_waiter *w = g->head;

  if (w) {
    g->head = w->next;
    if (g->head == NULL)
      g->tail = NULL;
    w->next = NULL;
  }
  return w;
}

void
blkq_unplug (struct blkq *q, uint64_t now)
{
  plug_remove (q, advance (q, now));
}

uint64_t
blkq_next_timer (const struct blkq *q)
{
  uint64_t t = q->plug.timer, c = q->cfq ? cfq_next_timer (q) : UINT64_MAX;

  return c < t ? c : t;
}

void
blkq_run_timers (struct blkq *q, uint64_t now)
{
  uint64_t t;

  advance (q, now);
  while ((t = blkq_next_timer (q)) <= now) {
    if (t == q->plug.timer)
      plug_run_timer (q, t);
    else
      cfq_run_timer (q, t);
  }
}

/* ---- dispatch ---- */

/* The barrier at the head goes; what waited behind it becomes the
 * dispatching epoch (CFQ takes its requests in their FIFO order). */
static struct request *
next_barrier (struct blkq *q)
{
  struct request *r = q->barrier_head, *n;

  q->barrier_head = r->next;
  if (q->barrier_head == NULL)
    q->barrier_tail = NULL;
  q->base = r->after;
  if (q->cfq)
    for (n = q->base.fifo[0].head; n; n = n->next)
      cfq_add (q, n, q->now);
  return r;
}

static struct request *
elevator_pick (struct blkq *q, uint64_t now)
{
  switch (q->cfg.elevator) {
  case BLKQ_DEADLINE:
    return deadline_pick (q, &q->base, now);
  case BLKQ_CFQ:
    /* A barrier waits: drain (elv_drain_elevator's forced dispatch). */
    return cfq_pick (q, now, q->barrier_head != NULL || q->draining);
  default:
    return q->base.fifo[0].head;
  }
}

struct blkq_rq *
blkq_next (struct blkq *q, uint64_t now)
{
  struct request *r;

  now = advance (q, now);
  if (q->plug.plugged)
    return NULL;
  if (q->base.count > 0) {
    if ((r = elevator_pick (q, now)) == NULL)
      return NULL;
    epoch_remove (q, &q->base, r);
  }
  else if (q->barrier_head)
    r = next_barrier (q);
  else
    return NULL;
  q->queued--;
  q->outstanding++;
  r->rq.ready_time = r->rq.insert_time > q->release ? r->rq.insert_time
    : q->release;
  return &r->rq;
}

void
blkq_done (struct blkq *q, struct blkq_rq *rq, uint64_t now)
{
  struct request *r = blkq_of_rq (rq);
  bool sync = rq->sync;

  q->outstanding--;
  if (q->closed) {
    free (r);
    if (q->outstanding == 0)
      free (q);
    return;
  }
  now = advance (q, now);
  if (q->cfq && r->cfqq) {
    cfq_completed (q, r, now);
    if (now > q->release)
      q->release = now;
  }
  request_put (r);
  rqalloc_put (q, sync, now);
}

void
blkq_rq_free (struct blkq_rq *rq)
{
  struct blkq *q = blkq_of_rq (rq)->q;

  blkq_done (q, rq, q->now);
}
