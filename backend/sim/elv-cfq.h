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
 * What is not modelled: I/O priorities and classes (every queue is
 * best-effort at priority 4), cgroups (one group), close cooperators
 * (queue merging), metadata requests, hw_tag's estimation (a device of
 * 5 tags or more is taken for a queueing one, CFQ_HW_QUEUE_MIN).
 *
 * Split in two: cfq-slice.c (service trees, slices, workloads, idling,
 * the idle timer) and elv-cfq.c (requests, dispatch, completion). */
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

struct cfq_queue
{
  unsigned context;
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
  struct cfq_ttime ttime;       /* its context's (the cic's) */
  struct cfq_queue *hash_next;
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
  struct cfq_queue *async_q;
  struct cfq_queue *hash[CFQ_BUCKETS];
  struct cfq_queue *tree[NWL];  /* sorted by rb_key; 2.6.32: tree[0] */
  unsigned tree_count[NWL];
  struct cfq_queue *active;
  bool active_cic;              /* a request of the slice dispatched */
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

#endif /* DMCRYPT_SIM_ELV_CFQ_H */
