/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The block queue's parts (blkq.h), shared by its files: the core and
 * its treaps (blkq.c), request allocation and waiters (rqalloc.c), the
 * 2.6.32 plug (plug.c), the elevators (elv-deadline.c, elv-cfq.c). */
#ifndef DMCRYPT_SIM_BLKQ_INT_H
#define DMCRYPT_SIM_BLKQ_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blkq.h"

enum { DIR_READ, DIR_WRITE, NDIRS };

#define SBQ_WAIT_QUEUES 8       /* include/linux/sbitmap.h */
#define IOC_BUCKETS 64

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
  struct fifo fifo[NDIRS];      /* none and cfq: every request in fifo[0] */
  unsigned count;               /* requests (barriers not counted) */
};

struct cfq_queue;

struct request
{
  struct blkq_rq rq;            /* the caller's view */
  struct blkq *q;               /* whose free list it returns to */
  struct blkq_bio *bios_tail;
  unsigned context;             /* the first bio's submitter */
  uint64_t age;                 /* FIFO order: creation, or the older
                                   one's after a request merge */
  struct tnode by_start, by_end;
  struct request *prev, *next;  /* FIFO; next also links free and
                                   barrier lists */
  struct epoch after;           /* barriers: what was inserted after */
  /* CFQ (elv-cfq.c): its queue, sort tree and FIFO. */
  struct cfq_queue *cfqq;
  struct tnode cfq_node;
  struct request *cfq_prev, *cfq_next;
  uint64_t fifo_jiffies;        /* when its FIFO time expires */
};

/* The request whose by_start (by_end) node N is; NULL for none. */
static inline struct request *
request_of_start (struct tnode *n)
{
  return n ? (struct request *) ((char *) n
                                 - offsetof (struct request, by_start))
    : NULL;
}

static inline struct request *
request_of_end (struct tnode *n)
{
  return n ? (struct request *) ((char *) n
                                 - offsetof (struct request, by_end))
    : NULL;
}

/* A submitter's io_context as the request lists see it (blk-core.c's
 * ioc->nr_batch_requests, ioc->last_waited). */
struct ioc_state
{
  unsigned context;
  unsigned nr_batch;
  uint64_t last_waited;         /* jiffies */
  struct ioc_state *next;
};

struct waitq
{
  struct blkq_waiter *head, *tail;
};

/* Request allocation: blk-mq's tags or the legacy request lists. */
struct rqalloc
{
  unsigned count[2];            /* legacy: [sync]; blk-mq: count[0] */
  bool full[2];                 /* legacy: blk_rl_full */
  /* legacy: wait[sync]; blk-mq: the sbitmap's wait queues */
  struct waitq wait[SBQ_WAIT_QUEUES];
  int wait_cnt[SBQ_WAIT_QUEUES];
  unsigned wake_index, wait_index, wake_batch;
  struct ioc_state *iocs[IOC_BUCKETS];
  struct waitq granted;         /* for blkq_woken */
};

struct plug
{
  bool enabled, plugged;
  uint64_t timer;               /* model ns it fires; UINT64_MAX: none */
  unsigned delay;               /* jiffies: q->unplug_delay */
};

struct cfq_data;

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
  bool draining;                /* blkq_free: no elevator holds back */
  uint64_t now;                 /* the latest model time given */
  uint64_t release;             /* model ns the queue was last let go
                                   by an unplug, a timer or (cfq) a
                                   completion */
  struct rqalloc alloc;
  struct plug plug;
  struct cfq_data *cfq;
  /* deadline, as mq-deadline's struct deadline_data: */
  int last_dir;
  unsigned batching;            /* requests in the current batch */
  unsigned starved;             /* read batches while writes waited */
  uint64_t pos[NDIRS];          /* start of the last dispatched, sectors */
};

/* blkq.c */
void blkq_emit (struct blkq *q, enum blkq_event_kind kind,
                const struct blkq_bio *bio, unsigned count);
int blkq_dir (enum dev_op op);
bool blkq_is_barrier (enum dev_op op);
struct request *blkq_of_rq (struct blkq_rq *rq);
/* A new request for BIO, inserted at the queue's time (allocation
 * already done): a granted waiter's. */
struct request *blkq_add_new (struct blkq *q, struct blkq_bio *bio);
uint64_t blkq_jiffies (const struct blkq *q, uint64_t ns);
/* The model time at which jiffy J begins. */
uint64_t blkq_jiffy_start (const struct blkq *q, uint64_t j);
/* Treaps, for the elevators. */
void tree_insert (struct tnode **root, struct tnode *n);
void tree_remove (struct tnode **root, struct tnode *n);
struct tnode *tree_ceiling (struct tnode *t, uint64_t key);
struct tnode *tree_floor_before (struct tnode *t, uint64_t key,
                                 uint64_t seq);
struct tnode *tree_after (struct tnode *t, uint64_t key, uint64_t seq);
struct tnode *tree_first (struct tnode *t);
uint32_t blkq_rand (struct blkq *q);

/* elv-deadline.c: the next request of EP, or NULL. */
struct request *deadline_pick (struct blkq *q, struct epoch *ep,
                               uint64_t now);

/* rqalloc.c */
void rqalloc_init (struct blkq *q);
void rqalloc_destroy (struct blkq *q);
/* Allocates a request for BIO at NOW, if the rules let it. */
bool rqalloc_get (struct blkq *q, const struct blkq_bio *bio, uint64_t now);
/* A request of class SYNC completed at NOW: its allocation ends; a
 * waiter may be granted one. */
void rqalloc_put (struct blkq *q, bool sync, uint64_t now);
void rqalloc_wait (struct blkq *q, struct blkq_waiter *w, uint64_t now);
unsigned rqalloc_count (const struct blkq *q);

/* plug.c */
void plug_init (struct blkq *q);
/* Before a new request is added at NOW: an empty queue is plugged. */
void plug_before_add (struct blkq *q, uint64_t now);
/* After it was added: unplug_thresh requests waiting unplug it. */
void plug_after_add (struct blkq *q, uint64_t now);
/* Lets a plugged queue go at NOW; false if it was not plugged. */
bool plug_remove (struct blkq *q, uint64_t now);
void plug_run_timer (struct blkq *q, uint64_t now);

/* elv-cfq.c */
int cfq_init (struct blkq *q);
void cfq_exit (struct blkq *q);
void cfq_add (struct blkq *q, struct request *r, uint64_t now);
void cfq_front_merged (struct blkq *q, struct request *r);
void cfq_requests_merged (struct blkq *q, struct request *a,
                          struct request *b);
/* cfq_allow_merge: whether BIO may join R. */
bool cfq_allow_merge (struct blkq *q, const struct request *r,
                      const struct blkq_bio *bio);
struct request *cfq_pick (struct blkq *q, uint64_t now, bool force);
void cfq_completed (struct blkq *q, struct request *r, uint64_t now);
/* ELV_MQUEUE_MUST: may exceed nr_requests (cfq_may_queue). */
bool cfq_must_queue (struct blkq *q, unsigned context, bool sync);
uint64_t cfq_next_timer (const struct blkq *q);
void cfq_run_timer (struct blkq *q, uint64_t now);

#endif /* DMCRYPT_SIM_BLKQ_INT_H */
