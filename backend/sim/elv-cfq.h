/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CFQ, the block queue's elevator=cfq, as block/cfq-iosched.c of
 * 2.6.32 and 3.16 had it: a queue of requests per io_context for its
 * sync IO (reads, sync writes), one shared async queue, served in
 * time slices in the order of a service tree (3.16: one tree per
 * workload type, sync, sync-noidle and async, each served for a
 * workload slice), each slice dispatching up to quantum requests in
 * the elevator order from the head (cfq_choose_req: forward, or back
 * up to back_seek_max at back_seek_penalty), a FIFO-expired request
 * first once per slice, idling slice_idle on a sync queue that emptied
 * (3.16 also group_idle), sync preempting async.
 *
 * Close cooperators (cfq-coop.c): an emptied sync queue hands the disk
 * at once to a sync queue whose next request lies close to where the
 * head is (cfq_close_cooperator), and the two are merged into one
 * shared queue at their processes' next requests (cfq_setup_merge,
 * cfq_merge_cfqqs), split again once the shared queue seeks.
 *
 * What is not modelled: I/O priorities and classes (every queue is
 * best-effort at priority 4), cgroups (one group), metadata requests,
 * hw_tag's estimation (a device of 5 tags or more is taken for a
 * queueing one, CFQ_HW_QUEUE_MIN).
 *
 * Split in three: cfq-slice.c (service trees, slices, workloads,
 * idling, the idle timer), cfq-coop.c (io_contexts, the prio tree,
 * cooperators) and elv-cfq.c (requests, dispatch, completion). */
#ifndef DMCRYPT_SIM_ELV_CFQ_H
#define DMCRYPT_SIM_ELV_CFQ_H

#include <stdbool.h>
#include <stdint.h>

#include "blkq-int.h"

enum { WL_ASYNC, WL_SYNC_NOIDLE, WL_SYNC, NWL };  /* enum wl_type_t */

#define CFQ_BUCKETS 64
#define CFQ_HW_QUEUE_MIN 5
#define CFQ_MIN_TT 2            /* jiffies; 2.6.32 also as ms */

struct cfq_ttime                /* think time, in jiffies */
{
  uint64_t last_end_request;
  unsigned long total, samples, mean;
};

/* An io_context as CFQ knows it (3.16's struct cfq_io_cq, 2.6.32's
 * cfq_io_context): the queue its sync requests go to, its think time. */
struct cfq_cic
{
  unsigned context;
  struct cfq_queue *sync_q;     /* cic->cfqq[1]: NULL until its first
                                   sync request, or after a split */
  struct cfq_ttime ttime;
  struct cfq_cic *hash_next;
};

struct cfq_queue
{
  bool sync;
  struct tnode *sort;           /* queued requests by sector */
  struct request *fifo_head, *fifo_tail;
  struct request *next_rq;
  unsigned queued, dispatched;
  bool on_rr;
  int wl;                       /* the service tree it is on */
  int64_t rb_key;               /* jiffies */
  struct cfq_queue *tree_prev, *tree_next;
  int64_t slice_resid;
  uint64_t slice_start, slice_end, dispatch_start;      /* jiffies */
  unsigned allocated_slice, slice_dispatch;
  bool wait_request, must_dispatch, must_alloc_slice, fifo_checked;
  bool idle_window, slice_new, wait_busy, deep;
  uint64_t last_request_pos;    /* sectors */
  unsigned seek_samples;        /* 2.6.32 */
  uint64_t seek_total, seek_mean;
  uint32_t seek_history;        /* 3.16 */
  /* Cooperation (cfq-coop.c). */
  unsigned proc_refs;           /* cfqq_process_refs: the cics whose
                                   queue it is, and those a merge into
                                   it promised */
  struct cfq_queue *new_cfqq;   /* where its cics go at their next
                                   request (cfq_setup_merge) */
  bool coop;                    /* shared by merged io_contexts */
  bool split_coop;              /* 3.16: shared and seeky at its slice's
                                   end: split at the next request */
  bool seeky;                   /* 2.6.32: shared and seeky ... */
  uint64_t seeky_start;         /* ... since then (jiffies) */
  bool in_ptree;                /* on the prio tree (p_root) */
  struct cfq_queue *ptree_next; /* that tree, as a list */
  struct cfq_queue *all_next;   /* every queue, for cfq_exit */
};

struct cfq_data
{
  bool v316;                    /* 3.16's rules, else 2.6.32's */
  unsigned hz;
  /* Tunables, in jiffies where times. */
  unsigned quantum, slice[2], slice_async_rq, slice_idle, group_idle;
  unsigned fifo_expire[2], target_latency, back_penalty;
  uint64_t back_max;            /* sectors */
  bool latency, hw_tag, nonrot;
  bool cooperators;             /* the lab's switch: close cooperators
                                   looked for (the kernel always did) */
  struct cfq_queue *async_q;
  struct cfq_cic *cics[CFQ_BUCKETS];
  struct cfq_queue *queues;     /* all of them, by all_next */
  struct cfq_queue *ptree;      /* prio_trees[4]: the queues with a
                                   next request, by ptree_next */
  struct cfq_queue *tree[NWL];  /* sorted by rb_key; 2.6.32: tree[0] */
  unsigned tree_count[NWL];
  struct cfq_queue *active;
  struct cfq_cic *active_cic;   /* the cic of the slice's first
                                   dispatched request */
  unsigned busy_queues, busy_sync_queues, rq_queued;
  unsigned rq_in_driver[2];     /* by the requests' sync */
  unsigned rq_in_flight[2];     /* by the queues' sync (2.6.32's
                                   sync_flight is [1]) */
  uint64_t last_position;       /* sectors */
  int64_t last_end_sync;        /* jiffies: 2.6.32's last_end_sync_rq,
                                   3.16's last_delayed_sync */
  uint64_t idle_timer;          /* model ns; UINT64_MAX: none */
  /* 3.16's single group: workloads and their history. */
  int serving_wl;
  int64_t workload_expires;     /* jiffies */
  uint64_t saved_wl_slice;
  int saved_wl;
  unsigned busy_avg;
  struct cfq_ttime st_ttime[NWL], grp_ttime;
  unsigned grp_dispatched;
};

/* cfq-slice.c */
int cfq_wl_of (const struct cfq_data *cd, const struct cfq_queue *cq);
void cfq_service_tree_add (struct cfq_data *cd, struct cfq_queue *cq,
                           bool front, uint64_t j);
void cfq_add_rr (struct cfq_data *cd, struct cfq_queue *cq, uint64_t j);
void cfq_del_rr (struct cfq_data *cd, struct cfq_queue *cq);
bool cfq_slice_used (const struct cfq_queue *cq, uint64_t j);
void cfq_set_prio_slice (struct cfq_data *cd, struct cfq_queue *cq,
                         uint64_t j);
void cfq_slice_expired (struct cfq_data *cd, bool timed_out, uint64_t j);
struct cfq_queue *cfq_select_queue (struct cfq_data *cd, uint64_t j);
bool cfq_should_idle (const struct cfq_data *cd, const struct cfq_queue *cq);
void cfq_arm_slice_timer (struct blkq *q, uint64_t j);
bool cfq_should_wait_busy (const struct cfq_data *cd,
                           const struct cfq_queue *cq, uint64_t j);
bool cfq_seeky (const struct cfq_data *cd, const struct cfq_queue *cq);
bool cfq_ttime_big (const struct cfq_ttime *t, unsigned slice);
unsigned cfq_prio_slice (const struct cfq_data *cd, bool sync, int prio);

/* cfq-coop.c */
/* CONTEXT's cic, made if CREATE (at the queue's time); NULL if not. */
struct cfq_cic *cfq_cic_of (struct blkq *q, unsigned context, bool create);
/* A new queue, on the list of all. */
struct cfq_queue *cfq_queue_new (struct blkq *q, bool sync);
/* The sync queue a request of CIC goes to at jiffy J, split or merged
 * first as cfq_set_request does. */
struct cfq_queue *cfq_sync_queue (struct blkq *q, struct cfq_cic *cic,
                                  uint64_t j);
/* cfq_prio_tree_add: CQ on the tree by its next request, unless
 * another queue's next request starts at the same sector; off it
 * without one. */
void cfq_ptree_add (struct cfq_data *cd, struct cfq_queue *cq);
void cfq_ptree_del (struct cfq_data *cd, struct cfq_queue *cq);
/* cfq_rq_close: R within the close distance of the head for CUR. */
bool cfq_rq_close (const struct cfq_data *cd, const struct cfq_queue *cur,
                   const struct request *r);
/* A sync queue to serve instead of idling on CUR, or NULL. */
struct cfq_queue *cfq_close_cooperator (const struct cfq_data *cd,
                                        const struct cfq_queue *cur);
void cfq_setup_merge (struct cfq_queue *cq, struct cfq_queue *new_cq);
/* 2.6.32: a shared queue's seeky_start, after its seek mean changed at
 * jiffy J. */
void cfq_coop_seektime (const struct cfq_data *cd, struct cfq_queue *cq,
                        uint64_t j);

#endif /* DMCRYPT_SIM_ELV_CFQ_H */
