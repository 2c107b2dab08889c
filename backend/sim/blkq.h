/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The block-queue model of the simulated device: what Linux's block
 * layer does between a file system (here: the engine) and the disk.
 * Two block layers:
 *
 *  - blk-mq (kernel 6.1, and the lab's model without kernel=): at most
 *    nr_requests requests exist at once, each holding its tag from
 *    allocation to completion; a submitter that finds none free sleeps
 *    on one of 8 wait queues and is woken in batches of wake_batch
 *    (lib/sbitmap.c, 6.1); nothing is plugged.
 *  - the single request queue (kernel 2.6.32, 3.16, 4.0): request
 *    lists counting sync and async requests apart, each up to
 *    nr_requests, freed at completion; a submitter that had to sleep
 *    becomes a "batcher" that may allocate nr_batching more within
 *    BLK_BATCH_TIME up to 3/2 nr_requests (block/blk-core.c:
 *    get_request, ioc_batching, freed_request); 2.6.32 plugs an empty
 *    queue (blk_plug_device) until 4 requests wait, a submitter sleeps
 *    on its IO, or the unplug timer fires on a jiffy boundary.
 *
 * Contiguous bios of one op merge into a request (back and front,
 * within max_sectors); an elevator chooses what the device gets next:
 * "none" (FIFO), "deadline" (mq-deadline) or "cfq" (CFQ of 2.6.32 or
 * 3.16: elv-cfq.c).  Waiters are served first come, first served: the
 * request freed at a completion is handed to the waiter the kernel
 * would wake, whose bio becomes a request at once (blkq_done).
 *
 * PURE: no threads, no clock, no sleeping.  Times are nanoseconds of
 * model time given by the caller, so the queue is a deterministic
 * function of its calls and unit tests drive them with synthetic times.
 * A time earlier than one given before counts as that one.  Timers (the
 * plug's, CFQ's idle timer) are model times the queue reports
 * (blkq_next_timer) and the caller fires (blkq_run_timers).  Not
 * thread-safe: the caller serialises every call on one queue.  Insert
 * and next take O(log n) expected time in the requests queued (treaps)
 * under none and deadline; no allocation per bio: requests are
 * recycled.
 *
 * Flushes and discards are barriers: such a request is dispatched only
 * once everything inserted before it was, and nothing inserted after it
 * is dispatched before it (nor merges with anything queued before it).
 * Linux orders flushes in its flush machinery, outside the elevator;
 * file systems wait for a discard before reusing its blocks.  A barrier
 * is the simplest model that keeps both promises. */
#ifndef DMCRYPT_SIM_BLKQ_H
#define DMCRYPT_SIM_BLKQ_H

#include <stdbool.h>
#include <stdint.h>

#include "devop.h"

enum blkq_elevator { BLKQ_NONE, BLKQ_DEADLINE, BLKQ_CFQ };

enum blkq_layer
{
  BLKQ_MQ,                      /* blk-mq tags */
  BLKQ_LEGACY,                  /* request lists, as 3.16 and 4.0 */
  BLKQ_LEGACY_PLUG,             /* ... and 2.6.32's queue plug */
};

/* The CFQ version whose rules apply (elv-cfq.c). */
enum blkq_cfq_version { BLKQ_CFQ_2_6_32, BLKQ_CFQ_3_16 };

/* The defaults a zero field of struct blkq_config stands for. */
#define BLKQ_MAX_SECTORS    2560           /* max_sectors_kb 1280 */
#define BLKQ_READ_EXPIRE    500000000ULL   /* ns: mq-deadline's 500 ms */
#define BLKQ_WRITE_EXPIRE   5000000000ULL  /* ns: 5 s */
#define BLKQ_FIFO_BATCH     16
#define BLKQ_WRITES_STARVED 2   /* read batches a waiting write allows */
#define BLKQ_HZ             250
#define BLKQ_NR_BATCHING    32  /* BLK_BATCH_REQ, include/linux/blkdev.h */
#define BLKQ_UNPLUG_THRESH  4   /* q->unplug_thresh, blk_queue_make_request */

/* CFQ's tunables, by their sysfs names; times in model ns, and 0 in a
 * time field for "the version's default at the queue's HZ" (UINT64_MAX
 * for an explicit 0, which CFQ allows for slice_idle and group_idle). */
struct blkq_cfq_tunables
{
  unsigned quantum;             /* 0: 4 (2.6.32) or 8 (3.16) */
  uint64_t slice_idle, group_idle, slice_sync, slice_async;
  uint64_t fifo_expire_sync, fifo_expire_async, target_latency;
  unsigned slice_async_rq;      /* 0: 2 */
  unsigned back_seek_max;       /* KiB; 0: 16384 */
  unsigned back_seek_penalty;   /* 0: 2 */
  int low_latency;              /* -1: the default (on) */
  /* The lab's switch, no sysfs name: close cooperators not looked for
   * (elevator-params close_cooperators=0); the kernel always did. */
  bool no_cooperators;
};

struct blkq_bio                 /* one IO from above, owned by the caller */
{
  enum dev_op op;
  uint64_t sector;              /* 512-byte sectors */
  uint32_t nsect;               /* > 0, except 0 for a flush */
  unsigned context;             /* the submitter's io_context: CFQ's
                                   queues, the batching of request
                                   lists */
  bool sync;                    /* REQ_SYNC; reads and flushes always */
  struct blkq_bio *next;        /* the queue links merged bios here */
  void *opaque;                 /* the caller's */
};

/* A request: one or more merged, contiguous bios.  The queue allocates
 * it; the caller reads these fields, owns the request once blkq_next
 * returned it and gives it back with blkq_done.  A pointer returned by
 * blkq_insert is valid only until the next call on the queue: a later
 * bio that bridges two requests merges them into one. */
struct blkq_rq
{
  enum dev_op op;
  uint64_t sector;              /* 512-byte sectors */
  uint32_t nsect;               /* sum of the bios' */
  uint64_t insert_time;         /* model ns; the oldest, after a merge */
  /* Set by blkq_next: the model time from which the queue let it go
   * (its insertion, or the unplug, timer or completion that released
   * it), so that the device never starts it earlier. */
  uint64_t ready_time;
  struct blkq_bio *bios;        /* in sector order, linked by next */
  unsigned nbios;
  bool sync;
  void *opaque;                 /* the caller's; NULL when created */
};

/* What the queue did that blktrace would show, for the caller's trace:
 * blkparse's G, S, I, M, P, U and UT. */
enum blkq_event_kind
{
  BLKQ_EV_GETRQ,                /* G: BIO got a request */
  BLKQ_EV_SLEEP,                /* S: BIO's submitter sleeps (none free) */
  BLKQ_EV_INSERT,               /* I: BIO is a new request */
  BLKQ_EV_MERGE,                /* M: BIO merged into a request */
  BLKQ_EV_PLUG,                 /* P: the queue is plugged */
  BLKQ_EV_UNPLUG,               /* U: unplugged; COUNT requests */
  BLKQ_EV_UNPLUG_TIMER,         /* UT: the unplug timer fired */
};

struct blkq_event
{
  enum blkq_event_kind kind;
  const struct blkq_bio *bio;   /* G, S, I, M; NULL otherwise */
  unsigned count;               /* U, UT: requests allocated, as
                                   blk_add_trace_unplug_* count them */
  uint64_t time;                /* model ns */
};

struct blkq_config              /* 0 in a field: its BLKQ_ default */
{
  enum blkq_elevator elevator;
  enum blkq_layer layer;
  enum blkq_cfq_version cfq_version;
  unsigned nr_requests;         /* max requests allocated (queued or at
                                   the device), per sync/async under the
                                   legacy layer; must be > 0 */
  uint32_t max_sectors;         /* a merged request never exceeds this;
                                   a larger single bio is one request */
  uint64_t read_expire, write_expire;   /* deadline: model ns */
  unsigned fifo_batch;                  /* deadline: requests a batch */
  unsigned writes_starved;              /* deadline */
  unsigned hz;                  /* jiffies a second (legacy timers) */
  unsigned wake_batch;          /* blk-mq: waiters woken together; 0:
                                   sbq_calc_wake_batch's */
  unsigned device_depth;        /* the device's tags (CFQ's hw_tag) */
  bool nonrot;                  /* a device without seeks (QUEUE_FLAG_
                                   NONROT): no plugging, no CFQ idling */
  struct blkq_cfq_tunables cfq;
  /* Called for each event, from inside the call that caused it. */
  void (*event) (void *arg, const struct blkq_event *ev);
  void *event_arg;
};

/* A submitter asleep until a request is free (blkq_wait). */
struct blkq_waiter
{
  struct blkq_bio *bio;         /* what becomes a request when granted */
  struct blkq_rq *rq;           /* then: that request */
  bool granted;
  struct blkq_waiter *next;     /* the queue's */
  void *opaque;                 /* the caller's */
};

/* NULL with errno set (EINVAL: nr_requests 0). */
struct blkq *blkq_new (const struct blkq_config *cfg);

/* Frees the queue, and the requests still queued (their bios stay the
 * caller's).  Requests dispatched and not yet freed stay valid: the
 * last blkq_done or blkq_rq_free releases what remains.  No waiter may
 * be left. */
void blkq_free (struct blkq *q);

/* Adds BIO at model time NOW.  A read or write merges into a request
 * of the same op queued since the last barrier: a back merge (the
 * request ends where BIO starts), else a front merge (it starts where
 * BIO ends), within max_sectors; a bio that closes the gap between two
 * requests merges them too.  Then the result is BLKQ_MERGED with *RQ
 * the request.  Otherwise BIO becomes a new request if one can be
 * allocated, BLKQ_INSERTED, or BLKQ_FULL: nothing was done, and the
 * caller sleeps with blkq_wait. */
enum blkq_result { BLKQ_INSERTED, BLKQ_MERGED, BLKQ_FULL };
enum blkq_result blkq_insert (struct blkq *q, struct blkq_bio *bio,
                              uint64_t now, struct blkq_rq **rq);

/* BIO's submitter sleeps at NOW until a request is free for it: W is
 * queued among the waiters (first come, first served, as the kernel's
 * exclusive waits wake them).  2.6.32 unplugs the queue before the
 * sleep (get_request_wait).  Once a completion frees a request for it,
 * BIO becomes that request (W->rq) and W comes out of blkq_woken. */
void blkq_wait (struct blkq *q, struct blkq_waiter *w, struct blkq_bio *bio,
                uint64_t now);

/* A waiter whose bio was made a request since the last call, or NULL. */
struct blkq_waiter *blkq_woken (struct blkq *q);

/* A submitter sleeps on its IO at NOW: a plugged queue (2.6.32) lets
 * its requests go, as blk_unplug did from sync_page.  Elsewhere
 * nothing. */
void blkq_unplug (struct blkq *q, uint64_t now);

/* The model time of the next timer (the plug's, CFQ's idle timer), or
 * UINT64_MAX for none. */
uint64_t blkq_next_timer (const struct blkq *q);

/* Fires the timers due at NOW or before, each at its own time. */
void blkq_run_timers (struct blkq *q, uint64_t now);

/* The next request for the device at model time NOW, removed from the
 * queue, or NULL when nothing is queued or the queue holds it back
 * (plugged, or CFQ idling).
 *
 * none: FIFO (a request merged into keeps its place; two requests
 * merged into one take the older one's place).
 *
 * deadline, as Linux's mq-deadline (block/mq-deadline.c, 6.x): reads
 * and writes are sorted apart by sector.  A batch goes on in one
 * direction with the first request at or after the start of the last
 * one dispatched in that direction, up to fifo_batch requests.  A new
 * batch takes reads, unless writes have been waiting through
 * writes_starved read batches (or there are no reads); it starts at
 * the direction's oldest request when that one has waited past its
 * expiry or nothing lies at or after the position, else it continues
 * from the position.  So the sweep does not wrap to the lowest sector:
 * what lies behind the head comes out oldest first.
 *
 * cfq: elv-cfq.c. */
struct blkq_rq *blkq_next (struct blkq *q, uint64_t now);

/* RQ, dispatched, completed at model time NOW: the elevator learns of
 * it, and its request is free for the next allocation (a waiter's,
 * when one sleeps: see blkq_woken). */
void blkq_done (struct blkq *q, struct blkq_rq *rq, uint64_t now);

/* RQ's request back, as blkq_done at the queue's latest time; also
 * after blkq_free. */
void blkq_rq_free (struct blkq_rq *rq);

/* Requests waiting now, barriers included. */
unsigned blkq_queued (const struct blkq *q);

/* Requests allocated now: waiting, or at the device until done. */
unsigned blkq_allocated (const struct blkq *q);

/* Whether the queue is plugged now (2.6.32). */
bool blkq_plugged (const struct blkq *q);

/* blk-mq's wake_batch for DEPTH tags when allocations may be limited
 * to MIN_SHALLOW bits a word (UINT32_MAX: no limit): sbq_calc_wake_batch
 * with sbitmap_calculate_shift, lib/sbitmap.c and
 * include/linux/sbitmap.h of 6.1. */
unsigned blkq_wake_batch (unsigned depth, unsigned min_shallow);

#endif /* DMCRYPT_SIM_BLKQ_H */
