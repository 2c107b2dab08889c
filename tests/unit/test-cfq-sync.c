/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sync writes and close cooperators in the block-queue model's CFQ
 * (backend/sim/elv-cfq.c, cfq-coop.c), driven with synthetic model
 * times against sequences computed by hand from block/cfq-iosched.c and
 * block/blk-core.c of 2.6.32 and 3.16:
 *
 *  - a sync write takes a request of the sync list, which an async
 *    submitter's full list does not stop (get_request: rl->count[sync]);
 *  - it joins only a request of its own context's queue, and two
 *    requests become one only within a queue (cfq_allow_merge,
 *    elv_rb_latter_request);
 *  - it is REQ_NOIDLE (WRITE_SYNC): 3.16 moves its queue off the idle
 *    window (cfq_update_idle_window), so an emptied writer's queue
 *    hands the disk to another writer at once; 2.6.32 arms no idle
 *    timer at its completion (cfq_completed_request);
 *  - close cooperators: an emptied sync queue whose neighbour's next
 *    request starts where the head is hands the disk to it at once
 *    (cfq_select_queue, cfq_close_cooperator); the emptied queue's
 *    context then joins the other's queue (cfq_setup_merge,
 *    cfq_merge_cfqqs), so their contiguous bios merge; a shared queue
 *    that seeks is split again (3.16: at its slice's end; 2.6.32: after
 *    a second); elevator-params close_cooperators=0 turns it off. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../backend/sim/blkq.h"

#include "check.h"

#define MS 1000000ULL           /* model ns */
#define S (1000 * MS)

static struct blkq_bio bios[256];
static unsigned nbios;

static const char *
vname (enum blkq_cfq_version v)
{
  return v == BLKQ_CFQ_3_16 ? "3.16" : "2.6.32";
}

static struct blkq *
cfq (enum blkq_cfq_version v, unsigned nr, bool no_coop)
{
  struct blkq_config cfg = {
    .elevator = BLKQ_CFQ, .layer = BLKQ_LEGACY, .cfq_version = v,
    .nr_requests = nr, .hz = v == BLKQ_CFQ_3_16 ? 250 : 100,
    .device_depth = 1, .cfq.low_latency = -1,
    .cfq.no_cooperators = no_coop,
  };
  struct blkq *q = blkq_new (&cfg);

  REQUIRE (q, "blkq_new");
  nbios = 0;
  return q;
}

/* A bio of 8 sectors: a read, a sync write (W_SYNC) or an async one. */
enum kind { READ, W_SYNC, W_ASYNC };

static enum blkq_result
put (struct blkq *q, enum kind k, unsigned context, uint64_t sector,
     uint64_t now)
{
  struct blkq_bio *b = &bios[nbios++];
  struct blkq_rq *rq;

  REQUIRE (nbios <= sizeof bios / sizeof bios[0], "too many bios");
  *b = (struct blkq_bio) { .op = k == READ ? DEV_READ : DEV_WRITE,
                           .sector = sector, .nsect = 8,
                           .context = context, .sync = k != W_ASYNC };
  return blkq_insert (q, b, now, &rq);
}

/* Dispatches and completes everything queued at NOW. */
static void
drain_at (struct blkq *q, uint64_t now)
{
  struct blkq_rq *rq;

  blkq_run_timers (q, now);
  while ((rq = blkq_next (q, now)) != NULL)
    blkq_done (q, rq, now);
}

static void
finish (struct blkq *q)
{
  drain_at (q, 1000 * S);
  blkq_free (q);
}

/* nr_requests 2: context 1's two async writes fill the async list
 * (the second marks it full and makes context 1 a batcher); context 3,
 * no batcher, finds it full; its sync write takes a sync request. */
static void
test_sync_list (enum blkq_cfq_version v)
{
  struct blkq *q = cfq (v, 2, false);

  CHECK (put (q, W_ASYNC, 1, 0, 0) == BLKQ_INSERTED);
  CHECK (put (q, W_ASYNC, 1, 100, 0) == BLKQ_INSERTED);
  CHECK (put (q, W_ASYNC, 3, 200, 0) == BLKQ_FULL);
  CHECK (put (q, W_SYNC, 3, 300, 0) == BLKQ_INSERTED);
  CHECK (blkq_allocated (q) == 3);
  finish (q);
  printf ("cfq %s: a sync write takes a sync request beside a full async "
          "list\n", vname (v));
}

/* Bio merges go by queue: context 1's second write joins its first,
 * context 2's write after them does not, nor does an async write join
 * a sync request; async writes join each other.  A bio that bridges
 * two requests of one queue makes them one; of two queues, not. */
static void
test_merge_by_queue (enum blkq_cfq_version v)
{
  struct blkq *q = cfq (v, 128, false);

  CHECK (put (q, W_SYNC, 1, 0, 0) == BLKQ_INSERTED);
  CHECK (put (q, W_SYNC, 1, 8, 0) == BLKQ_MERGED);
  CHECK (put (q, W_SYNC, 2, 16, 0) == BLKQ_INSERTED);
  CHECK (put (q, W_ASYNC, 2, 24, 0) == BLKQ_INSERTED);
  CHECK (put (q, W_ASYNC, 1, 32, 0) == BLKQ_MERGED);
  CHECK (blkq_queued (q) == 3);
  finish (q);

  q = cfq (v, 128, false);
  put (q, W_SYNC, 1, 1000, 0);
  put (q, W_SYNC, 1, 1016, 0);
  CHECK (put (q, W_SYNC, 1, 1008, 0) == BLKQ_MERGED);
  CHECK (blkq_queued (q) == 1);
  put (q, W_SYNC, 1, 2000, 0);
  put (q, W_SYNC, 2, 2016, 0);
  CHECK (put (q, W_SYNC, 1, 2008, 0) == BLKQ_MERGED);
  CHECK (blkq_queued (q) == 3);
  finish (q);
  printf ("cfq %s: a sync write joins its own context's requests only; "
          "requests of two queues stay two\n", vname (v));
}

/* Context 1 at sector 0 (one request), context 2 far away.  3.16: both
 * queues' next requests are REQ_NOIDLE, so neither idles while the
 * other waits: once context 1's only write is dispatched, context 2's
 * goes at once.  The same with reads waits for context 1 (it idles).
 * 2.6.32: no idle timer after a sync write's completion (10 ms after
 * a read's, a jiffy at HZ 100), so context 2 goes at the completion. */
static void
test_noidle (enum blkq_cfq_version v, enum kind k)
{
  struct blkq *q = cfq (v, 128, false);
  struct blkq_rq *first, *second;
  unsigned i;

  put (q, k, 1, 0, 0);
  for (i = 0; i < 3; i++)
    put (q, k, 2, 1000000 + 16 * i, 0);
  first = blkq_next (q, 0);
  REQUIRE (first && first->sector == 0, "context 1 first");
  second = blkq_next (q, 0);
  if (v == BLKQ_CFQ_3_16) {
    CHECK_MSG (k == READ ? second == NULL
               : second != NULL && second->sector == 1000000,
               "3.16 %s: the second dispatch", k == READ ? "reads"
               : "sync writes");
  }
  else {
    CHECK (second == NULL);
    blkq_done (q, first, 1 * MS);
    CHECK_MSG (blkq_next_timer (q) == (k == READ ? 10 * MS : UINT64_MAX),
               "2.6.32 %s: idle timer %llu", k == READ ? "reads"
               : "sync writes", (unsigned long long) blkq_next_timer (q));
    second = blkq_next (q, 1 * MS);
    CHECK (k == READ ? second == NULL
           : second != NULL && second->sector == 1000000);
    first = NULL;
  }
  if (second)
    blkq_done (q, second, 2 * MS);
  if (first)
    blkq_done (q, first, 2 * MS);
  finish (q);
  printf ("cfq %s: %s of two contexts: %s\n", vname (v),
          k == READ ? "reads" : "sync writes",
          k == READ ? "the emptied queue idles"
          : "the emptied queue hands over at once (REQ_NOIDLE)");
}

/* A reads sector 0, B sector 8, contiguous but of two queues (no
 * merge).  A's read goes first (its queue came first into the service
 * tree, B's 20 jiffies later at HZ 250, 8 at HZ 100); A's queue is then
 * empty and, with cooperators, B's next request starts where A's ended:
 * B's read goes at once and A's queue is set to merge into B's.
 * Without them, A's queue idles for A.  Then A's next read (16) goes
 * into B's queue, so B's read at 24 joins it; without the merge they
 * stay two requests (and A's does not join B's read at 8 still queued:
 * another queue's). */
static void
test_cooperators (enum blkq_cfq_version v, bool on)
{
  struct blkq *q = cfq (v, 128, !on);
  struct blkq_rq *a, *b;

  CHECK (put (q, READ, 1, 0, 0) == BLKQ_INSERTED);
  CHECK (put (q, READ, 2, 8, 0) == BLKQ_INSERTED);
  a = blkq_next (q, 0);
  REQUIRE (a && a->sector == 0, "A first");
  b = blkq_next (q, 0);
  CHECK_MSG (on ? b && b->sector == 8 : b == NULL, "cfq %s, cooperators "
             "%s: the second dispatch %s", vname (v), on ? "on" : "off",
             b ? "was B's" : "waited");
  CHECK (put (q, READ, 1, 16, 0) == BLKQ_INSERTED);
  CHECK_MSG (put (q, READ, 2, 24, 0) == (on ? BLKQ_MERGED : BLKQ_INSERTED),
             "cfq %s, cooperators %s: B's read after A's", vname (v),
             on ? "on" : "off");
  blkq_done (q, a, 1 * MS);
  if (b)
    blkq_done (q, b, 1 * MS);
  finish (q);
  printf ("cfq %s, cooperators %s: %s\n", vname (v), on ? "on" : "off",
          on ? "the close queue served at once, then merged: A's and B's "
          "bios join" : "the emptied queue idles, the queues stay apart");
}

/* After test_cooperators' merge, the shared queue seeks: B sends six
 * reads a million sectors apart, served and completed; 3.16 marks the
 * queue for splitting when its slice ends (the idle timer expires it),
 * 2.6.32 once it has been seeky for a second.  A's next read then
 * takes a queue of its own: B's bio right after it does not join it.
 * Before the split it would have. */
static void
test_split (enum blkq_cfq_version v)
{
  struct blkq *q = cfq (v, 128, false);
  uint64_t t = 0, base = 5000000;
  unsigned i;

  put (q, READ, 1, 0, 0);
  put (q, READ, 2, 8, 0);
  drain_at (q, 0);
  CHECK (put (q, READ, 1, 24, 1 * MS) == BLKQ_INSERTED);   /* merged */
  CHECK (put (q, READ, 2, 16, 1 * MS) == BLKQ_MERGED);
  drain_at (q, 2 * MS);
  for (i = 0; i < 6; i++) {
    t = (3 + i) * MS;
    put (q, READ, 2, 1000000 * (i + 1), t);
    drain_at (q, t);
  }
  /* The idle timer ends the slice (3.16: split_coop); 2.6.32 waits
   * until the queue has been seeky for a second. */
  t = v == BLKQ_CFQ_3_16 ? 100 * MS : 2 * S;
  drain_at (q, t);
  CHECK (put (q, READ, 1, base, t) == BLKQ_INSERTED);
  CHECK_MSG (put (q, READ, 2, base + 8, t) == BLKQ_INSERTED,
             "cfq %s: B's bio joined A's request after the split",
             vname (v));
  finish (q);
  printf ("cfq %s: a shared queue that seeks is split: A's next request "
          "has a queue of its own\n", vname (v));
}

int
main (void)
{
  enum blkq_cfq_version v;

  for (v = BLKQ_CFQ_2_6_32; v <= BLKQ_CFQ_3_16; v++) {
    test_sync_list (v);
    test_merge_by_queue (v);
    test_noidle (v, W_SYNC);
    test_noidle (v, READ);
    test_cooperators (v, true);
    test_cooperators (v, false);
    test_split (v);
  }
  if (failures)
    return 1;
  printf ("ok\n");
  return 0;
}
