/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CFQ in the block-queue model (backend/sim/elv-cfq.c, cfq-slice.c),
 * driven with synthetic model times against sequences computed by
 * hand from block/cfq-iosched.c of 2.6.32 and 3.16: the choice of the
 * next request (forward, back within back_seek_max at twice the cost,
 * wrapping last); a sync request preempting the async queue, which
 * waits while sync IO is in flight; quantum; slices alternating between
 * two sync queues; idling on an emptied sync queue, its timer on a
 * jiffy boundary, and what the timer does; a FIFO-expired request
 * served first at the next slice. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../backend/sim/blkq.h"

#include "check.h"

#define MS 1000000ULL           /* model ns */

static struct blkq_bio bios[256];
static unsigned nbios;

static struct blkq *
cfq (enum blkq_cfq_version v, unsigned hz, unsigned depth)
{
  struct blkq_config cfg = {
    .elevator = BLKQ_CFQ, .layer = BLKQ_LEGACY, .cfq_version = v,
    .nr_requests = 128, .hz = hz, .device_depth = depth,
    .cfq.low_latency = -1,
  };
  struct blkq *q = blkq_new (&cfg);

  REQUIRE (q, "blkq_new");
  nbios = 0;
  return q;
}

static struct blkq_bio *
put (struct blkq *q, enum dev_op op, unsigned context, uint64_t sector,
     uint64_t now)
{
  struct blkq_bio *b = &bios[nbios++];
  struct blkq_rq *rq;

  REQUIRE (nbios <= sizeof bios / sizeof bios[0], "too many bios");
  *b = (struct blkq_bio) { .op = op, .sector = sector, .nsect = 8,
                           .context = context, .sync = op == DEV_READ };
  REQUIRE (blkq_insert (q, b, now, &rq) == BLKQ_INSERTED, "not inserted");
  return b;
}

static void
drain (struct blkq *q, uint64_t now)
{
  struct blkq_rq *rq;

  blkq_run_timers (q, now);
  while ((rq = blkq_next (q, now)) != NULL)
    blkq_done (q, rq, now);
  blkq_free (q);
}

/* Head at 100008 after the first write; then A 100100 (92 ahead), B
 * 99000 (1008 back: 2016), C 90000 (10008 back: 20016), D 150000
 * (49992 ahead), E 50000 (beyond 16 MiB back: wraps).  One at a time:
 * A, B (2016 < 49892), C (20216 < 49892), D (E wraps), E. */
static void
test_choice (enum blkq_cfq_version v)
{
  static const uint64_t order[] = { 100100, 99000, 90000, 150000, 50000 };
  struct blkq *q = cfq (v, 100, 1);
  struct blkq_rq *rq;
  unsigned i;

  put (q, DEV_WRITE, 1, 100000, 0);
  rq = blkq_next (q, 0);
  blkq_done (q, rq, 1 * MS);
  put (q, DEV_WRITE, 1, 150000, 2 * MS);
  put (q, DEV_WRITE, 1, 99000, 2 * MS);
  put (q, DEV_WRITE, 1, 50000, 2 * MS);
  put (q, DEV_WRITE, 1, 100100, 2 * MS);
  put (q, DEV_WRITE, 1, 90000, 2 * MS);
  for (i = 0; i < 5; i++) {
    rq = blkq_next (q, (3 + i) * MS);
    REQUIRE (rq, "no request");
    CHECK_MSG (rq->sector == order[i], "cfq %s: dispatch %u at %llu, "
               "expected %llu", v ? "3.16" : "2.6.32", i,
               (unsigned long long) rq->sector,
               (unsigned long long) order[i]);
    blkq_done (q, rq, (3 + i) * MS);
  }
  drain (q, 10 * MS);
  printf ("cfq %s: the next request: ahead, back 1008 and 10008 at twice "
          "the cost, ahead, then the one beyond back_seek_max\n",
          v ? "3.16" : "2.6.32");
}

/* A read arriving while the async queue dispatches preempts it, but
 * waits for the write at the device (async drained before sync IO);
 * then the async queue waits while the read is at the device, and
 * while the read's queue idles (until 10 ms: HZ 100, one jiffy). */
static void
test_preempt (enum blkq_cfq_version v)
{
  struct blkq *q = cfq (v, 100, 32);
  struct blkq_rq *w, *r;
  unsigned i;

  for (i = 0; i < 10; i++)
    put (q, DEV_WRITE, 1, 1000 + 16 * i, 0);
  w = blkq_next (q, 0);
  REQUIRE (w && w->op == DEV_WRITE, "no write");
  put (q, DEV_READ, 2, 500000, 1 * MS);
  CHECK (blkq_next (q, 1 * MS) == NULL);
  blkq_done (q, w, 2 * MS);
  r = blkq_next (q, 2 * MS);
  REQUIRE (r && r->op == DEV_READ, "the read did not go next");
  CHECK (blkq_next (q, 2 * MS) == NULL);
  blkq_done (q, r, 3 * MS);
  CHECK (blkq_next (q, 3 * MS) == NULL);
  CHECK (blkq_next_timer (q) == 10 * MS);
  blkq_run_timers (q, 10 * MS);
  w = blkq_next (q, 10 * MS);
  CHECK (w && w->op == DEV_WRITE && w->ready_time == 10 * MS);
  if (w)
    blkq_done (q, w, 11 * MS);
  drain (q, 1000 * MS);
  printf ("cfq %s: a read preempts the async queue after the write at "
          "the device; writes wait for it and its idling\n",
          v ? "3.16" : "2.6.32");
}

/* Quantum: with another queue busy, 4 requests of a sync queue at the
 * device (2.6.32: quantum 4; 3.16: quantum / 2 early in the slice); a
 * sole queue 16 (2.6.32: 4 x quantum) or no limit (3.16). */
static unsigned
dispatched (struct blkq *q)
{
  struct blkq_rq *out[64];
  unsigned n = 0, i;

  while (n < 64 && (out[n] = blkq_next (q, 1 * MS)) != NULL)
    n++;
  for (i = 0; i < n; i++)
    blkq_done (q, out[i], 2 * MS);
  return n;
}

static void
test_quantum (enum blkq_cfq_version v)
{
  struct blkq *q = cfq (v, 100, 32);
  unsigned i, two, one;

  for (i = 0; i < 20; i++) {
    put (q, DEV_READ, 1, 1000 + 16 * i, 0);
    put (q, DEV_READ, 2, 900000 + 16 * i, 0);
  }
  two = dispatched (q);
  blkq_free (q);
  q = cfq (v, 100, 32);
  for (i = 0; i < 20; i++)
    put (q, DEV_READ, 1, 1000 + 16 * i, 0);
  one = dispatched (q);
  blkq_free (q);
  printf ("cfq %s: quantum: %u at the device with two busy queues, %u "
          "with one\n", v ? "3.16" : "2.6.32", two, one);
  CHECK (two == 4);
  CHECK (one == (v == BLKQ_CFQ_3_16 ? 20 : 16));
}

/* Two sync queues, one request at the device at a time, a dispatch
 * each jiffy: the first queue's slice (slice_sync: 10 jiffies at HZ
 * 100, 25 at HZ 250) starts at its first completion and is used up at
 * the pick of jiffy 10 (25): the second queue, 8 (20) jiffies later in
 * the service tree, takes over, and so on. */
static void
test_slices (enum blkq_cfq_version v, unsigned hz, unsigned slice)
{
  struct blkq *q = cfq (v, hz, 1);
  uint64_t tick = 1000 * MS / hz;
  unsigned k, ctx, wrong = 0;
  struct blkq_rq *rq;

  for (k = 0; k < 60; k++) {
    put (q, DEV_READ, 1, 1000 + 16 * k, 0);
    put (q, DEV_READ, 2, 900000 + 16 * k, 0);
  }
  for (k = 0; k < 4 * slice; k++) {
    rq = blkq_next (q, k * tick);
    REQUIRE (rq, "no request at %u", k);
    ctx = rq->sector >= 900000 ? 2 : 1;
    wrong += ctx != 1 + k / slice % 2;
    blkq_done (q, rq, k * tick + tick / 2);
  }
  drain (q, 10000 * MS);
  printf ("cfq %s, HZ %u: two sync queues alternate every %u dispatches "
          "(one a jiffy): %u out of turn\n", v ? "3.16" : "2.6.32", hz,
          slice, wrong);
  CHECK (wrong == 0);
}

/* Idling: a sync queue that emptied waits slice_idle (HZ/125, at
 * least a jiffy: 2.6.32 at HZ 100 one jiffy, the timer at the next
 * boundary, 10 ms; 3.16 at HZ 250 two, 12 ms) for its next request; a
 * far read of another process meanwhile waits, and goes when the
 * timer expires the slice. */
static void
test_idle (enum blkq_cfq_version v, unsigned hz, uint64_t fires)
{
  struct blkq *q = cfq (v, hz, 1);
  struct blkq_rq *rq;

  put (q, DEV_READ, 1, 1000, 0);
  rq = blkq_next (q, 0);
  blkq_done (q, rq, 5 * MS);
  CHECK_MSG (blkq_next_timer (q) == fires, "cfq %s, HZ %u: idle timer "
             "at %llu, expected %llu", v ? "3.16" : "2.6.32", hz,
             (unsigned long long) blkq_next_timer (q),
             (unsigned long long) fires);
  put (q, DEV_READ, 2, 5000000, 6 * MS);
  CHECK (blkq_next (q, 6 * MS) == NULL);
  blkq_run_timers (q, fires - 1);
  CHECK (blkq_next (q, fires - 1) == NULL);
  blkq_run_timers (q, fires);
  rq = blkq_next (q, fires + 1 * MS);
  CHECK (rq && rq->sector == 5000000 && rq->ready_time == fires);
  if (rq)
    blkq_done (q, rq, fires + 2 * MS);
  drain (q, 1000 * MS);
  /* The same process's next read ends the idling at once. */
  q = cfq (v, hz, 1);
  put (q, DEV_READ, 1, 1000, 0);
  rq = blkq_next (q, 0);
  blkq_done (q, rq, 5 * MS);
  put (q, DEV_READ, 1, 1008, 6 * MS);
  rq = blkq_next (q, 6 * MS);
  CHECK (rq && rq->sector == 1008);
  if (rq)
    blkq_done (q, rq, 7 * MS);
  drain (q, 1000 * MS);
  printf ("cfq %s, HZ %u: an emptied sync queue idles until %.0f ms; "
          "another's read waits for it, its own goes at once\n",
          v ? "3.16" : "2.6.32", hz, fires / 1e6);
}

/* FIFO expiry, 2.6.32 at HZ 100: a write 1000008 sectors behind the
 * head (beyond back_seek_max) expires at jiffy 25 (fifo_expire_async
 * HZ/4).  The async queue's slice (slice_async, 4 jiffies) starts at
 * the completion of its first request: the first at jiffy 0, so the
 * pick of jiffy 4 finds it used and starts the next, whose first
 * request completes at 4, and so on: slices begin at the picks of 4,
 * 8, ..., 24, 28.  Only a slice's first pick looks at the FIFO: the
 * expired write goes at the pick of 28. */
static void
test_fifo (void)
{
  struct blkq *q = cfq (BLKQ_CFQ_2_6_32, 100, 1);
  struct blkq_rq *rq;
  unsigned k, at = 0;

  put (q, DEV_WRITE, 1, 1000000, 0);
  rq = blkq_next (q, 0);
  blkq_done (q, rq, 5 * MS);
  put (q, DEV_WRITE, 1, 0, 6 * MS);
  for (k = 1; k <= 40; k++)
    put (q, DEV_WRITE, 1, 1000000 + 16 * k, 6 * MS);
  for (k = 1; k <= 41; k++) {
    rq = blkq_next (q, k * 10 * MS);
    REQUIRE (rq, "no request at %u", k);
    if (rq->sector == 0)
      at = k;
    else
      CHECK (rq->sector == 1000000 + 16 * (k - (at != 0)));
    blkq_done (q, rq, k * 10 * MS + 5 * MS);
  }
  printf ("cfq 2.6.32: a write behind the head, FIFO-expired at 250 ms, "
          "goes at dispatch %u (the first slice to begin after it)\n", at);
  CHECK (at == 28);
  drain (q, 1000 * MS);
}

int
main (void)
{
  test_choice (BLKQ_CFQ_2_6_32);
  test_choice (BLKQ_CFQ_3_16);
  test_preempt (BLKQ_CFQ_2_6_32);
  test_preempt (BLKQ_CFQ_3_16);
  test_quantum (BLKQ_CFQ_2_6_32);
  test_quantum (BLKQ_CFQ_3_16);
  test_slices (BLKQ_CFQ_2_6_32, 100, 10);
  test_slices (BLKQ_CFQ_3_16, 250, 25);
  test_idle (BLKQ_CFQ_2_6_32, 100, 10 * MS);
  test_idle (BLKQ_CFQ_3_16, 250, 12 * MS);
  test_fifo ();
  if (failures)
    return 1;
  printf ("ok\n");
  return 0;
}
