/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Request allocation, waiters and the plug of the block-queue model
 * (backend/sim/blkq.c, rqalloc.c, plug.c), driven with synthetic model
 * times against hand-computed sequences: a request counts from its
 * allocation to its completion, not to its dispatch; sleepers are
 * served first come, first served, one at a time (blk-mq's wake_batch
 * 1, the request lists) or wake_batch at a time (blk-mq's sbitmap);
 * the request lists' sync and async counts, batching and the 3/2
 * limit; 2.6.32's plug: its timer on jiffy boundaries at HZ 100, 250
 * and 1000, the unplug at 4 requests, by a sleeping submitter and by a
 * sleeping allocator, and the release time it gives the requests. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../backend/sim/blkq.h"

#include "check.h"

#define MS 1000000ULL           /* model ns */

static struct blkq_bio bios[64];
static unsigned nbios;
static char events[512];        /* "G I P U3 UT1 S ..." */

static void
record (void *arg, const struct blkq_event *ev)
{
  static const char *const names[] = {
    [BLKQ_EV_GETRQ] = "G", [BLKQ_EV_SLEEP] = "S", [BLKQ_EV_INSERT] = "I",
    [BLKQ_EV_MERGE] = "M", [BLKQ_EV_PLUG] = "P", [BLKQ_EV_UNPLUG] = "U",
    [BLKQ_EV_UNPLUG_TIMER] = "UT",
  };
  size_t len = strlen (events);

  (void) arg;
  if (ev->kind == BLKQ_EV_UNPLUG || ev->kind == BLKQ_EV_UNPLUG_TIMER)
    snprintf (events + len, sizeof events - len, "%s%s%u", len ? " " : "",
              names[ev->kind], ev->count);
  else
    snprintf (events + len, sizeof events - len, "%s%s", len ? " " : "",
              names[ev->kind]);
}

static struct blkq *
queue (enum blkq_layer layer, unsigned nr, unsigned hz)
{
  struct blkq_config cfg = {
    .elevator = BLKQ_NONE, .layer = layer, .nr_requests = nr, .hz = hz,
    .cfq_version = BLKQ_CFQ_3_16, .device_depth = 1, .event = record,
  };
  struct blkq *q = blkq_new (&cfg);

  REQUIRE (q, "blkq_new");
  nbios = 0;
  events[0] = '\0';
  return q;
}

/* A bio of OP at SECTOR (never adjacent to another: no merges) from
 * CONTEXT. */
static struct blkq_bio *
bio (enum dev_op op, unsigned context)
{
  struct blkq_bio *b = &bios[nbios];

  REQUIRE (nbios < sizeof bios / sizeof bios[0], "too many bios");
  *b = (struct blkq_bio) { .op = op, .sector = 1000 * ++nbios, .nsect = 8,
                           .context = context,
                           .sync = op == DEV_READ || op == DEV_FLUSH };
  return b;
}

static enum blkq_result
put (struct blkq *q, struct blkq_bio *b, uint64_t now)
{
  struct blkq_rq *rq;

  return blkq_insert (q, b, now, &rq);
}

/* blk-mq: a full queue admits a request only after a completion; the
 * dispatch of one frees nothing. */
static void
test_until_completion (void)
{
  struct blkq *q = queue (BLKQ_MQ, 2, 0);
  struct blkq_bio *c;
  struct blkq_rq *a;

  CHECK (put (q, bio (DEV_WRITE, 1), 0) == BLKQ_INSERTED);
  CHECK (put (q, bio (DEV_WRITE, 1), 0) == BLKQ_INSERTED);
  c = bio (DEV_WRITE, 1);
  CHECK (put (q, c, 0) == BLKQ_FULL);
  a = blkq_next (q, 1);
  REQUIRE (a, "no request");
  CHECK (put (q, c, 2) == BLKQ_FULL);   /* dispatched, not completed */
  CHECK (blkq_allocated (q) == 2 && blkq_queued (q) == 1);
  blkq_done (q, a, 3);
  CHECK (blkq_allocated (q) == 1);
  CHECK (put (q, c, 4) == BLKQ_INSERTED);
  while ((a = blkq_next (q, 5)) != NULL)
    blkq_done (q, a, 5);
  blkq_free (q);
  printf ("allocation: nr_requests 2 counts a request at the device "
          "until its completion\n");
}

/* blk-mq with wake_batch 1 (depth 1): each completion wakes the next
 * sleeper, in the order they slept, and makes its bio a request. */
static void
test_fifo_wake (void)
{
  struct blkq *q = queue (BLKQ_MQ, 1, 0);
  struct blkq_waiter w[3];
  struct blkq_rq *rq;
  unsigned i;

  CHECK (blkq_wake_batch (1, UINT32_MAX) == 1);
  CHECK (put (q, bio (DEV_WRITE, 1), 0) == BLKQ_INSERTED);
  for (i = 0; i < 3; i++) {
    struct blkq_bio *b = bio (DEV_WRITE, 2 + i);

    CHECK (put (q, b, 1 + i) == BLKQ_FULL);
    blkq_wait (q, &w[i], b, 1 + i);
  }
  for (i = 0; i < 3; i++) {
    rq = blkq_next (q, 10 * (i + 1));
    REQUIRE (rq, "nothing to dispatch");
    CHECK (blkq_woken (q) == NULL);
    blkq_done (q, rq, 10 * (i + 1) + 5);
    CHECK (blkq_woken (q) == &w[i] && blkq_woken (q) == NULL);
    CHECK (w[i].granted && w[i].rq->sector == w[i].bio->sector);
    CHECK (w[i].rq->insert_time == 10 * (i + 1) + 5);
    CHECK (i == 2 || !w[i + 1].granted);
  }
  rq = blkq_next (q, 50);
  blkq_done (q, rq, 51);
  blkq_free (q);
  printf ("blk-mq, wake_batch 1: three sleepers served in the order they "
          "slept, one a completion\n");
}

/* blk-mq, 32 tags without elevator: wake_batch 4 (sbq_calc_wake_batch:
 * 32 / 8).  Eight sleepers sit one on each wait queue; the fourth
 * completion wakes the first only, and the three tags freed before it
 * stay free: a newcomer takes one without sleeping. */
static void
test_wake_batch (void)
{
  struct blkq *q = queue (BLKQ_MQ, 32, 0);
  struct blkq_waiter w[8];
  struct blkq_rq *out[32];
  unsigned i, granted = 0;

  CHECK (blkq_wake_batch (32, UINT32_MAX) == 4);
  CHECK (blkq_wake_batch (64, 48) == 8);        /* mq-deadline, 2 x 32 */
  CHECK (blkq_wake_batch (2, 1) == 1);          /* mq-deadline, usb */
  CHECK (blkq_wake_batch (256, UINT32_MAX) == 8);
  for (i = 0; i < 32; i++)
    CHECK (put (q, bio (DEV_WRITE, 1), 0) == BLKQ_INSERTED);
  for (i = 0; i < 32; i++)
    out[i] = blkq_next (q, 1);
  for (i = 0; i < 8; i++) {
    struct blkq_bio *b = bio (DEV_WRITE, 2 + i);

    CHECK (put (q, b, 2) == BLKQ_FULL);
    blkq_wait (q, &w[i], b, 2);
  }
  for (i = 0; i < 4; i++) {
    blkq_done (q, out[i], 3 + i);
    while (blkq_woken (q))
      granted++;
    CHECK (granted == (i == 3));
  }
  CHECK (w[0].granted && !w[1].granted);
  CHECK (blkq_allocated (q) == 29);
  CHECK (put (q, bio (DEV_WRITE, 20), 8) == BLKQ_INSERTED);
  for (i = 4; i < 32; i++)
    blkq_done (q, out[i], 9);
  for (i = 0; i < 8; i++)
    CHECK (w[i].granted);
  while ((out[0] = blkq_next (q, 10)) != NULL)
    blkq_done (q, out[0], 10);
  blkq_free (q);
  printf ("blk-mq, 32 tags: wake_batch 4; the 4th completion wakes the "
          "first sleeper, a newcomer takes a tag left free\n");
}

/* The request lists (3.16's rules), nr_requests 4: the allocation that
 * fills the async list makes its submitter a batcher, who may go on to
 * 3/2 nr_requests (6) while within BLK_BATCH_TIME; another submitter
 * sleeps; a read has a list of its own.  Completions wake sleepers of
 * their class only once the list is below nr_requests, in order. */
static void
test_request_lists (void)
{
  struct blkq *q = queue (BLKQ_LEGACY, 4, 250);
  struct blkq_waiter wa, wb;
  struct blkq_bio *a, *b;
  struct blkq_rq *out[8];
  unsigned i, n = 0;

  for (i = 0; i < 6; i++)
    CHECK (put (q, bio (DEV_WRITE, 1), i * MS) == BLKQ_INSERTED);
  CHECK (put (q, bio (DEV_WRITE, 1), 6 * MS) == BLKQ_FULL);     /* 3/2 */
  a = bio (DEV_WRITE, 2);
  b = bio (DEV_WRITE, 3);
  CHECK (put (q, a, 7 * MS) == BLKQ_FULL);
  blkq_wait (q, &wa, a, 7 * MS);
  CHECK (put (q, b, 8 * MS) == BLKQ_FULL);
  blkq_wait (q, &wb, b, 8 * MS);
  CHECK (put (q, bio (DEV_READ, 2), 9 * MS) == BLKQ_INSERTED);
  while ((out[n] = blkq_next (q, 10 * MS)) != NULL)
    n++;
  CHECK (n == 7);
  /* 6 async allocated: freeing to 5 and 4 wakes nobody, to 3 wakes the
   * first sleeper (now a batcher), the next to 3 again the second. */
  blkq_done (q, out[0], 11 * MS);
  blkq_done (q, out[1], 12 * MS);
  CHECK (blkq_woken (q) == NULL);
  blkq_done (q, out[2], 13 * MS);
  CHECK (blkq_woken (q) == &wa && !wb.granted);
  blkq_done (q, out[3], 14 * MS);
  CHECK (blkq_woken (q) == &wb);
  for (i = 4; i < n; i++)
    blkq_done (q, out[i], 15 * MS);
  while ((out[0] = blkq_next (q, 16 * MS)) != NULL)
    blkq_done (q, out[0], 16 * MS);
  blkq_free (q);
  /* Past BLK_BATCH_TIME (5 jiffies at HZ 250: 20 ms) a batcher that
   * has allocated is one no more: the list stops at 4. */
  q = queue (BLKQ_LEGACY, 4, 250);
  for (i = 0; i < 4; i++)
    CHECK (put (q, bio (DEV_WRITE, 1), 0) == BLKQ_INSERTED);
  CHECK (put (q, bio (DEV_WRITE, 1), 19 * MS) == BLKQ_INSERTED);
  CHECK (put (q, bio (DEV_WRITE, 1), 20 * MS) == BLKQ_FULL);
  while ((out[0] = blkq_next (q, 21 * MS)) != NULL)
    blkq_done (q, out[0], 21 * MS);
  blkq_free (q);
  printf ("request lists, nr_requests 4: a batcher goes to 6 within "
          "BLK_BATCH_TIME, no further after it; sleepers woken below 4, "
          "in order; reads apart\n");
}

/* 2.6.32's plug at HZ: a write at 23 ms (and one at 20 ms, on a
 * boundary) plugs the empty queue until the jiffy boundary
 * (jiffies + unplug_delay) * tick, unplug_delay = max (3 * HZ / 1000,
 * 1): HZ 100: 30 ms; HZ 250: 24 ms; HZ 1000: 26 ms. */
static void
test_plug_timer (unsigned hz, uint64_t at, uint64_t fires)
{
  struct blkq *q = queue (BLKQ_LEGACY_PLUG, 128, hz);
  struct blkq_rq *rq;

  CHECK (put (q, bio (DEV_WRITE, 1), at) == BLKQ_INSERTED);
  CHECK (blkq_plugged (q) && strcmp (events, "G P I") == 0);
  CHECK (blkq_next (q, at) == NULL);
  CHECK_MSG (blkq_next_timer (q) == fires, "HZ %u, write at %llu ns: "
             "timer at %llu, expected %llu", hz, (unsigned long long) at,
             (unsigned long long) blkq_next_timer (q),
             (unsigned long long) fires);
  blkq_run_timers (q, fires - 1);
  CHECK (blkq_plugged (q));
  blkq_run_timers (q, fires + 3 * MS);
  CHECK (!blkq_plugged (q) && strcmp (events, "G P I UT1 U1") == 0);
  CHECK (blkq_next_timer (q) == UINT64_MAX);
  rq = blkq_next (q, fires + 3 * MS);
  REQUIRE (rq, "nothing after the timer");
  CHECK (rq->ready_time == fires);
  blkq_done (q, rq, fires + 4 * MS);
  blkq_free (q);
  printf ("plug, HZ %u: write at %.3f ms, unplug timer at %.3f ms\n", hz,
          at / 1e6, fires / 1e6);
}

/* The fourth request queued unplugs (elv_insert, unplug_thresh); a
 * submitter that sleeps on its IO unplugs (blk_unplug); the release
 * time is the unplug's. */
static void
test_unplug (void)
{
  struct blkq *q = queue (BLKQ_LEGACY_PLUG, 128, 100);
  struct blkq_rq *rq;
  unsigned i;

  for (i = 0; i < 3; i++)
    put (q, bio (DEV_WRITE, 1), i * MS);
  CHECK (blkq_plugged (q));
  put (q, bio (DEV_WRITE, 1), 3 * MS);
  CHECK (!blkq_plugged (q));
  CHECK (strcmp (events, "G P I G I G I G I U4") == 0);
  for (i = 0; i < 4; i++) {
    rq = blkq_next (q, 5 * MS);
    CHECK (rq && rq->ready_time == 3 * MS);
    blkq_done (q, rq, 6 * MS);
  }
  events[0] = '\0';
  put (q, bio (DEV_READ, 1), 7 * MS);
  CHECK (blkq_plugged (q));
  blkq_unplug (q, 8 * MS);
  CHECK (!blkq_plugged (q) && strcmp (events, "G P I U1") == 0);
  rq = blkq_next (q, 9 * MS);
  CHECK (rq && rq->ready_time == 8 * MS);
  blkq_done (q, rq, 9 * MS);
  blkq_unplug (q, 10 * MS);             /* not plugged: nothing */
  CHECK (strcmp (events, "G P I U1") == 0);
  blkq_free (q);
  printf ("plug: 4 queued requests unplug; a sleeping submitter "
          "unplugs; the requests go from the unplug\n");
}

/* A submitter that must sleep for a request unplugs first
 * (get_request_wait, 2.6.32): nr_requests 2, a batcher takes 3. */
static void
test_sleeper_unplugs (void)
{
  struct blkq *q = queue (BLKQ_LEGACY_PLUG, 2, 100);
  struct blkq_waiter w;
  struct blkq_bio *b;
  struct blkq_rq *rq;

  put (q, bio (DEV_WRITE, 1), 0);
  put (q, bio (DEV_WRITE, 1), 0);
  CHECK (put (q, bio (DEV_WRITE, 1), 0) == BLKQ_INSERTED);
  b = bio (DEV_WRITE, 2);
  CHECK (put (q, b, 1 * MS) == BLKQ_FULL);
  CHECK (blkq_plugged (q));
  blkq_wait (q, &w, b, 1 * MS);
  CHECK (!blkq_plugged (q));
  CHECK (strcmp (events, "G P I G I G I S U3") == 0);
  while (!w.granted && (rq = blkq_next (q, 2 * MS)) != NULL)
    blkq_done (q, rq, 2 * MS);
  CHECK (w.granted && blkq_woken (q) == &w);
  while ((rq = blkq_next (q, 3 * MS)) != NULL)
    blkq_done (q, rq, 3 * MS);
  blkq_free (q);
}

int
main (void)
{
  test_until_completion ();
  test_fifo_wake ();
  test_wake_batch ();
  test_request_lists ();
  test_plug_timer (100, 23 * MS, 30 * MS);
  test_plug_timer (100, 20 * MS, 30 * MS);
  test_plug_timer (250, 23 * MS, 24 * MS);
  test_plug_timer (250, 24 * MS, 28 * MS);
  test_plug_timer (1000, 23 * MS, 26 * MS);
  test_plug_timer (1000, 23 * MS + 999999, 26 * MS);
  test_unplug ();
  test_sleeper_unplugs ();
  if (failures)
    return 1;
  printf ("ok\n");
  return 0;
}
