/* The block-queue model (blkq.h): requests between barriers form an
 * epoch; the oldest epoch is the one the elevator dispatches from, the
 * newest the one bios merge into.  Each epoch indexes its requests per
 * direction by start sector (the elevator's sort order, front merges)
 * and by end sector (back merges, as Linux's request hash), in treaps,
 * and keeps them in FIFO lists (one for none, one per direction for
 * deadline).  A barrier request carries the epoch that follows it. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "blkq.h"

enum { DIR_READ, DIR_WRITE, NDIRS };

/* A treap node, ordered by (key, seq); seq makes every key unique. */
struct tnode
{
  struct tnode *left, *right;
  uint64_t key, seq;
  uint32_t prio;                /* heap order: random, so depth ~ log n */
};

struct fifo
{
  struct request *head, *tail;
};

struct epoch
{
  struct tnode *by_start[NDIRS], *by_end[NDIRS];
  struct fifo fifo[NDIRS];      /* none: every request in fifo[0] */
  unsigned count;               /* requests (barriers not counted) */
};

struct request
{
  struct blkq_rq rq;            /* the caller's view */
  struct blkq *q;               /* whose free list it returns to */
  struct blkq_bio *bios_tail;
  uint64_t age;                 /* FIFO order: creation, or the older
                                   one's after a request merge */
  struct tnode by_start, by_end;
  struct request *prev, *next;  /* FIFO; next also links free and
                                   barrier lists */
  struct epoch after;           /* barriers: what was inserted after */
};

struct blkq
{
  struct blkq_config cfg;
  struct epoch base;            /* before the first barrier: dispatching */
  struct request *barrier_head, *barrier_tail;
  unsigned queued;              /* requests waiting, barriers included */
  uint64_t seq;                 /* requests created, for tie-breaks */
  uint32_t rand;                /* xorshift state for treap priorities */
  struct request *free;         /* recycled requests */
  unsigned outstanding;         /* dispatched, not yet freed */
  bool closed;                  /* blkq_free called: last free frees q */
  /* deadline, as mq-deadline's struct deadline_data: */
  int last_dir;
  unsigned batching;            /* requests in the current batch */
  unsigned starved;             /* read batches while writes waited */
  uint64_t pos[NDIRS];          /* start of the last dispatched, sectors */
};

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

static void
tree_insert (struct tnode **root, struct tnode *n)
{
  struct tnode **link = root;

  while (*link && (*link)->prio >= n->prio)
    link = before (n, (*link)->key, (*link)->seq)
      ? &(*link)->left : &(*link)->right;
  split (*link, n, &n->left, &n->right);
  *link = n;
}

static void
tree_remove (struct tnode **root, struct tnode *n)
{
  struct tnode **link = root;

  while (*link != n)
    link = before (n, (*link)->key, (*link)->seq)
      ? &(*link)->left : &(*link)->right;
  *link = join (n->left, n->right);
}

/* The first node whose key is at least KEY, or NULL. */
static struct tnode *
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

/* ---- requests in an epoch ---- */

static struct request *
of_start (struct tnode *n)
{
  return n ? (struct request *) ((char *) n
                                 - offsetof (struct request, by_start))
    : NULL;
}

static struct request *
of_end (struct tnode *n)
{
  return n ? (struct request *) ((char *) n
                                 - offsetof (struct request, by_end))
    : NULL;
}

static struct request *
of_rq (struct blkq_rq *rq)
{
  return (struct request *) ((char *) rq - offsetof (struct request, rq));
}

static int
dir_of (enum dev_op op)
{
  return op == DEV_WRITE ? DIR_WRITE : DIR_READ;
}

static bool
is_barrier (enum dev_op op)
{
  return op == DEV_FLUSH || op == DEV_DISCARD;
}

static struct fifo *
fifo_of (struct blkq *q, struct epoch *ep, const struct request *r)
{
  return &ep->fifo[q->cfg.elevator == BLKQ_NONE ? 0 : dir_of (r->rq.op)];
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
  tree_insert (&ep->by_start[dir_of (r->rq.op)], &r->by_start);
}

static void
index_end (struct epoch *ep, struct request *r)
{
  r->by_end.key = end_of (r);
  tree_insert (&ep->by_end[dir_of (r->rq.op)], &r->by_end);
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
  int dir = dir_of (r->rq.op);

  tree_remove (&ep->by_start[dir], &r->by_start);
  tree_remove (&ep->by_end[dir], &r->by_end);
  fifo_unlink (fifo_of (q, ep, r), r);
  ep->count--;
}

/* ---- allocation ---- */

static uint32_t
next_rand (struct blkq *q)
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
            .insert_time = now, .bios = bio, .nbios = 1 },
    .q = q, .bios_tail = bio, .age = q->seq,
    .by_start = { .seq = q->seq, .prio = next_rand (q) },
    .by_end = { .seq = q->seq, .prio = next_rand (q) },
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
  /* One request in reserve: a failed allocation then means requests
   * are queued or out at the device, and one will come back. */
  if ((q->free = calloc (1, sizeof *q->free)) == NULL) {
    free (q);
    return NULL;
  }
  q->cfg = *cfg;
  if (q->cfg.max_sectors == 0)
    q->cfg.max_sectors = BLKQ_MAX_SECTORS;
  if (q->cfg.read_expire == 0)
    q->cfg.read_expire = BLKQ_READ_EXPIRE;
  if (q->cfg.write_expire == 0)
    q->cfg.write_expire = BLKQ_WRITE_EXPIRE;
  if (q->cfg.fifo_batch == 0)
    q->cfg.fifo_batch = BLKQ_FIFO_BATCH;
  q->rand = 2463534242u;        /* fixed: runs are reproducible */
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
  while ((rq = blkq_next (q, UINT64_MAX)) != NULL) {
    q->outstanding--;
    free (of_rq (rq));
  }
  free_list (q->free);
  q->free = NULL;
  q->closed = true;
  if (q->outstanding == 0)
    free (q);
}

void
blkq_rq_free (struct blkq_rq *rq)
{
  struct request *r = of_rq (rq);
  struct blkq *q = r->q;

  q->outstanding--;
  if (!q->closed) {
    request_put (r);
    return;
  }
  free (r);
  if (q->outstanding == 0)
    free (q);
}

unsigned
blkq_queued (const struct blkq *q)
{
  return q->queued;
}

/* ---- merging ---- */

/* Where bios go: the epoch after the last barrier. */
static struct epoch *
newest_epoch (struct blkq *q)
{
  return q->barrier_tail ? &q->barrier_tail->after : &q->base;
}

static bool
fits (const struct blkq *q, const struct request *r, uint64_t nsect)
{
  return r->rq.nsect + nsect <= q->cfg.max_sectors;
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
  return by_end ? of_end (n) : of_start (n);
}

/* A, ending where B starts, absorbs B, and takes B's place in the FIFO
 * and its insert time when B is older (mq-deadline's
 * dd_merged_requests). */
static void
merge_requests (struct blkq *q, struct epoch *ep, struct request *a,
                struct request *b)
{
  struct fifo *f = fifo_of (q, ep, a);

  epoch_remove (q, ep, b);
  tree_remove (&ep->by_end[dir_of (a->rq.op)], &a->by_end);
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
}

static struct request *
back_merge (struct blkq *q, struct epoch *ep, struct request *r,
            struct blkq_bio *bio)
{
  int dir = dir_of (r->rq.op);
  struct request *next;

  tree_remove (&ep->by_end[dir], &r->by_end);
  r->bios_tail->next = bio;
  r->bios_tail = bio;
  bio->next = NULL;
  r->rq.nsect += bio->nsect;
  r->rq.nbios++;
  index_end (ep, r);
  next = find_at (ep, dir, false, end_of (r));
  if (next && fits (q, r, next->rq.nsect))
    merge_requests (q, ep, r, next);
  return r;
}

static struct request *
front_merge (struct blkq *q, struct epoch *ep, struct request *r,
             struct blkq_bio *bio)
{
  int dir = dir_of (r->rq.op);
  struct request *prev;

  tree_remove (&ep->by_start[dir], &r->by_start);
  bio->next = r->rq.bios;
  r->rq.bios = bio;
  r->rq.sector = bio->sector;
  r->rq.nsect += bio->nsect;
  r->rq.nbios++;
  index_start (ep, r);
  prev = find_at (ep, dir, true, r->rq.sector);
  if (prev && fits (q, prev, r->rq.nsect)) {
    merge_requests (q, ep, prev, r);
    return prev;
  }
  return r;
}

/* A request BIO merged into, or NULL.  Only the newest epoch: a bio
 * never joins a request queued before a barrier it came after. */
static struct request *
bio_merge (struct blkq *q, struct blkq_bio *bio)
{
  struct epoch *ep = newest_epoch (q);
  int dir = dir_of (bio->op);
  struct request *r;

  if (is_barrier (bio->op) || bio->nsect == 0)
    return NULL;
  r = find_at (ep, dir, true, bio->sector);
  if (r && fits (q, r, bio->nsect))
    return back_merge (q, ep, r, bio);
  r = find_at (ep, dir, false, bio->sector + bio->nsect);
  if (r && fits (q, r, bio->nsect))
    return front_merge (q, ep, r, bio);
  return NULL;
}

enum blkq_result
blkq_insert (struct blkq *q, struct blkq_bio *bio, uint64_t now,
             struct blkq_rq **rq)
{
  struct request *r = bio_merge (q, bio);

  if (r) {
    *rq = &r->rq;
    return BLKQ_MERGED;
  }
  if (q->queued >= q->cfg.nr_requests
      || (r = request_new (q, bio, now)) == NULL)
    return BLKQ_FULL;
  if (is_barrier (bio->op)) {
    if (q->barrier_tail)
      q->barrier_tail->next = r;
    else
      q->barrier_head = r;
    q->barrier_tail = r;
  }
  else
    epoch_add (q, newest_epoch (q), r);
  q->queued++;
  *rq = &r->rq;
  return BLKQ_INSERTED;
}

/* ---- dispatch ---- */

static struct request *
first_from (struct epoch *ep, int dir, uint64_t pos)
{
  return of_start (tree_ceiling (ep->by_start[dir], pos));
}

static bool
expired (const struct blkq *q, const struct request *r, uint64_t now)
{
  uint64_t expire = dir_of (r->rq.op) == DIR_READ
    ? q->cfg.read_expire : q->cfg.write_expire;

  return now >= r->rq.insert_time && now - r->rq.insert_time >= expire;
}

/* mq-deadline's __dd_dispatch_request, for the requests of EP. */
static struct request *
deadline_pick (struct blkq *q, struct epoch *ep, uint64_t now)
{
  struct request *r = first_from (ep, q->last_dir, q->pos[q->last_dir]);
  int dir;

  if (r && q->batching < q->cfg.fifo_batch) {
    q->batching++;
    return r;
  }
  /* A new batch: reads, unless writes sat through enough read batches. */
  dir = DIR_WRITE;
  if (ep->fifo[DIR_READ].head
      && !(ep->fifo[DIR_WRITE].head
           && q->starved++ >= BLKQ_WRITES_STARVED))
    dir = DIR_READ;
  if (dir == DIR_WRITE)
    q->starved = 0;
  r = first_from (ep, dir, q->pos[dir]);
  if (r == NULL || expired (q, ep->fifo[dir].head, now))
    r = ep->fifo[dir].head;
  q->last_dir = dir;
  q->batching = 1;
  return r;
}

struct blkq_rq *
blkq_next (struct blkq *q, uint64_t now)
{
  struct request *r;

  if (q->base.count > 0) {
    if (q->cfg.elevator == BLKQ_DEADLINE) {
      r = deadline_pick (q, &q->base, now);
      q->pos[dir_of (r->rq.op)] = r->rq.sector;
    }
    else
      r = q->base.fifo[0].head;
    epoch_remove (q, &q->base, r);
  }
  else if ((r = q->barrier_head) != NULL) {
    q->barrier_head = r->next;
    if (q->barrier_head == NULL)
      q->barrier_tail = NULL;
    q->base = r->after;         /* what waited behind it may go now */
  }
  else
    return NULL;
  q->queued--;
  q->outstanding++;
  return &r->rq;
}
