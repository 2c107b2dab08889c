/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The block-queue model (backend/sim/blkq.c), driven with synthetic
 * model times: FIFO order under none; under deadline, sector order in
 * batches of fifo_batch from the last position, reads preferred, writes
 * starved at most BLKQ_WRITES_STARVED batches, expiry; merging (back,
 * front, bridging, max_sectors, ops never mixed); the depth limit;
 * flush and discard barriers; 100 000 random bios against a naive model
 * of the rules (blkq-model.h), both elevators; and the repair of a
 * locally shuffled sequential stream by a deep deadline queue. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../backend/sim/blkq.h"

#include "check.h"

#define MS 1000000ULL           /* model ns */

static struct blkq_bio bios[4096];
static unsigned nbios;

/* What a dispatched request was, copied before it is freed. */
struct got
{
  enum dev_op op;
  uint64_t sector;
  uint32_t nsect;
  unsigned nbios;
};

static struct blkq *
queue_new (enum blkq_elevator elevator, unsigned nr, uint32_t max_sectors)
{
  struct blkq_config cfg = {
    .elevator = elevator, .nr_requests = nr, .max_sectors = max_sectors,
  };
  struct blkq *q = blkq_new (&cfg);

  REQUIRE (q, "blkq_new");
  nbios = 0;
  return q;
}

static enum blkq_result
put (struct blkq *q, enum dev_op op, uint64_t sector, uint32_t nsect,
     uint64_t now)
{
  struct blkq_bio *bio = &bios[nbios++];
  struct blkq_rq *rq = NULL;
  enum blkq_result r;

  REQUIRE (nbios <= sizeof bios / sizeof bios[0], "too many bios");
  *bio = (struct blkq_bio) { .op = op, .sector = sector, .nsect = nsect };
  r = blkq_insert (q, bio, now, &rq);
  REQUIRE (r == BLKQ_FULL || rq != NULL, "no request returned");
  return r;
}

/* The bios of RQ are contiguous, in sector order, of its op, and add up
 * to it. */
static void
check_rq (const struct blkq_rq *rq)
{
  const struct blkq_bio *b;
  uint64_t end = rq->sector;
  unsigned n = 0;

  for (b = rq->bios; b; b = b->next, n++) {
    REQUIRE (b->op == rq->op, "a bio of another op in a request");
    REQUIRE (b->sector == end, "bio at %llu, expected %llu",
             (unsigned long long) b->sector, (unsigned long long) end);
    end += b->nsect;
  }
  REQUIRE (n == rq->nbios && end == rq->sector + rq->nsect,
           "request %llu+%u: %u bios ending at %llu",
           (unsigned long long) rq->sector, rq->nsect, n,
           (unsigned long long) end);
}

static struct got
take (struct blkq *q, uint64_t now)
{
  struct blkq_rq *rq = blkq_next (q, now);
  struct got g;

  REQUIRE (rq, "queue empty, %u queued", blkq_queued (q));
  check_rq (rq);
  g = (struct got) { rq->op, rq->sector, rq->nsect, rq->nbios };
  blkq_rq_free (rq);
  return g;
}

static void
queue_free_empty (struct blkq *q)
{
  REQUIRE (blkq_next (q, 0) == NULL && blkq_queued (q) == 0,
           "queue not empty at the end");
  blkq_free (q);
}

/* none hands requests out in arrival order, whatever their sectors. */
static void
test_fifo_none (void)
{
  static const uint64_t sectors[] = { 900, 16, 500, 8000, 0, 300, 64 };
  struct blkq *q = queue_new (BLKQ_NONE, 64, 0);
  unsigned i, n = sizeof sectors / sizeof sectors[0];
  struct got g;

  for (i = 0; i < n; i++)
    CHECK (put (q, i % 3 ? DEV_WRITE : DEV_READ, sectors[i] * 8, 8, i)
           == BLKQ_INSERTED);
  CHECK (blkq_queued (q) == n);
  for (i = 0; i < n; i++) {
    g = take (q, 100);
    CHECK (g.sector == sectors[i] * 8);
    CHECK (g.op == (i % 3 ? DEV_WRITE : DEV_READ));
  }
  queue_free_empty (q);
  printf ("none: %u requests out in arrival order\n", n);
}

/* Appends "R16 " or "W48 " for each run of one direction to OUT. */
static void
runs_of (const struct got *g, unsigned n, char *out, size_t size)
{
  unsigned i, run = 0;
  size_t len = 0;

  out[0] = '\0';
  for (i = 0; i < n; i++) {
    run++;
    if (i + 1 == n || g[i + 1].op != g[i].op) {
      len += snprintf (out + len, size - len, "%s%c%u", len ? " " : "",
                       g[i].op == DEV_READ ? 'R' : 'W', run);
      run = 0;
    }
  }
}

/* 64 reads and 64 writes queued in descending sector order come out
 * ascending per direction, in batches of 16: three read batches, one
 * write batch (writes starved twice), the last reads, the writes. */
static void
test_deadline_batches (void)
{
  struct blkq *q = queue_new (BLKQ_DEADLINE, 256, 0);
  struct got g[128];
  uint64_t next[2] = { 0, 0 };
  char runs[128];
  int i;

  for (i = 63; i >= 0; i--) {
    CHECK (put (q, DEV_READ, 100000 + i * 16, 8, 0) == BLKQ_INSERTED);
    CHECK (put (q, DEV_WRITE, i * 16, 8, 0) == BLKQ_INSERTED);
  }
  for (i = 0; i < 128; i++) {
    int dir;

    g[i] = take (q, 0);
    dir = g[i].op == DEV_WRITE;
    CHECK (g[i].sector == (dir ? 0 : 100000) + next[dir] * 16);
    next[dir]++;
  }
  runs_of (g, 128, runs, sizeof runs);
  printf ("deadline, 64 reads + 64 writes queued in descending order: "
          "%s\n", runs);
  CHECK (strcmp (runs, "R48 W16 R16 W48") == 0);
  queue_free_empty (q);
}

/* The sweep goes up from the last position; what lies behind it comes
 * out oldest first (mq-deadline restarts at the FIFO head, it does not
 * wrap to the lowest sector): a descending stream queued behind the
 * head therefore stays descending. */
static void
test_deadline_position (void)
{
  struct blkq *q = queue_new (BLKQ_DEADLINE, 2048, 0);
  unsigned i, ahead = 0, behind = 0;
  struct got g;

  CHECK (put (q, DEV_WRITE, 500 * 16, 8, 0) == BLKQ_INSERTED);
  CHECK (take (q, 0).sector == 500 * 16);
  for (i = 1000; i-- > 0;)
    if (i != 500)
      CHECK (put (q, DEV_WRITE, i * 16, 8, 1) == BLKQ_INSERTED);
  for (i = 501; i < 1000; i++) {
    g = take (q, 2);
    ahead += g.sector == i * 16;
  }
  for (i = 500; i-- > 0;) {
    g = take (q, 2);
    behind += g.sector == i * 16;
  }
  printf ("deadline, head at 500 of 1000 descending: %u ascending from "
          "the head, then %u behind it oldest first\n", ahead, behind);
  CHECK (ahead == 499 && behind == 500);
  queue_free_empty (q);
}

/* A read that arrives during a write batch waits for the batch's end,
 * then goes first. */
static void
test_read_preference (void)
{
  struct blkq *q = queue_new (BLKQ_DEADLINE, 256, 0);
  unsigned i;
  struct got g;

  for (i = 0; i < 40; i++)
    put (q, DEV_WRITE, i * 16, 8, 0);
  for (i = 0; i < 5; i++)
    CHECK (take (q, 0).sector == i * 16);
  for (i = 0; i < 3; i++)
    put (q, DEV_READ, 50000 + i * 16, 8, 1);
  for (i = 5; i < 16; i++)
    CHECK (take (q, 1).op == DEV_WRITE);
  for (i = 0; i < 3; i++) {
    g = take (q, 1);
    CHECK (g.op == DEV_READ && g.sector == 50000 + i * 16);
  }
  for (i = 16; i < 40; i++)
    CHECK (take (q, 1).sector == i * 16);
  queue_free_empty (q);
  printf ("deadline: 3 reads arriving after 5 of a 16-write batch go "
          "after its 11 others, before the next batch\n");
}

/* OP's request behind the head waits while younger than EXPIRE; once
 * expired it goes first in the next batch (the running one finishes). */
static void
test_expiry (enum dev_op op, uint64_t expire)
{
  const uint64_t head = 1 << 20;
  struct blkq *q = queue_new (BLKQ_DEADLINE, 256, 0);
  unsigned i, before = 0;
  struct got g;

  put (q, op, head, 8, 0);
  CHECK (take (q, 0).sector == head);
  put (q, op, 0, 8, 1 * MS);                /* behind the head */
  for (i = 1; i <= 64; i++)
    put (q, op, head + i * 16, 8, 2 * MS);
  /* Not expired: the sweep goes on through two batch starts. */
  for (i = 1; i < 20; i++)
    CHECK (take (q, 1 * MS + expire - 1).sector == head + i * 16);
  /* Expired in the middle of the second batch: it ends first. */
  for (;;) {
    g = take (q, 1 * MS + expire);
    if (g.sector == 0)
      break;
    before++;
  }
  printf ("deadline: a %s behind the head, expired during a batch, "
          "waits for %u more, then passes %u others\n",
          op == DEV_READ ? "read" : "write", before,
          blkq_queued (q));
  CHECK (before == 12 && blkq_queued (q) == 64 - 19 - 12);
  while (blkq_queued (q))
    take (q, 1 * MS + expire);
  queue_free_empty (q);
}

/* Back, front and bridging merges; max_sectors; ops never mixed. */
static void
test_merges (void)
{
  struct blkq *q = queue_new (BLKQ_NONE, 64, 32);
  struct got g;

  CHECK (put (q, DEV_WRITE, 0, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 8, 8, 0) == BLKQ_MERGED);       /* back */
  CHECK (put (q, DEV_WRITE, 1000, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 992, 8, 0) == BLKQ_MERGED);     /* front */
  /* Bridging: 2000 and 2016 become one with 2008 between them. */
  CHECK (put (q, DEV_WRITE, 2000, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 2016, 8, 0) == BLKQ_INSERTED);
  CHECK (blkq_queued (q) == 4);
  CHECK (put (q, DEV_WRITE, 2008, 8, 0) == BLKQ_MERGED);
  CHECK (blkq_queued (q) == 3);
  /* max_sectors 32: the request at 0 takes 16 more, then no more. */
  CHECK (put (q, DEV_WRITE, 16, 16, 0) == BLKQ_MERGED);
  CHECK (put (q, DEV_WRITE, 32, 8, 0) == BLKQ_INSERTED);
  /* Ops never mix; flushes and discards never merge. */
  CHECK (put (q, DEV_READ, 40, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_DISCARD, 48, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_DISCARD, 56, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_FLUSH, 0, 0, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_FLUSH, 0, 0, 0) == BLKQ_INSERTED);

  g = take (q, 0);
  CHECK (g.sector == 0 && g.nsect == 32 && g.nbios == 3);
  g = take (q, 0);
  CHECK (g.sector == 992 && g.nsect == 16 && g.nbios == 2);
  g = take (q, 0);
  CHECK (g.sector == 2000 && g.nsect == 24 && g.nbios == 3);
  g = take (q, 0);
  CHECK (g.sector == 32 && g.nsect == 8 && g.op == DEV_WRITE);
  g = take (q, 0);
  CHECK (g.sector == 40 && g.op == DEV_READ);
  CHECK (take (q, 0).op == DEV_DISCARD && take (q, 0).op == DEV_DISCARD);
  CHECK (take (q, 0).op == DEV_FLUSH && take (q, 0).op == DEV_FLUSH);
  queue_free_empty (q);
  printf ("merges: back, front, a bio bridging two requests makes one "
          "(queued 4 -> 3); max_sectors kept; ops never mixed\n");
}

/* When the bridged request would exceed max_sectors the bio joins the
 * left one only; when the left one is full it joins the right one.
 * Under none a bridged pair takes the older one's place. */
static void
test_merge_limits (void)
{
  struct blkq *q = queue_new (BLKQ_NONE, 64, 24);
  struct got g;

  put (q, DEV_WRITE, 116, 16, 0);   /* right, older */
  put (q, DEV_WRITE, 5000, 8, 1);
  put (q, DEV_WRITE, 100, 8, 2);    /* left */
  CHECK (put (q, DEV_WRITE, 108, 8, 3) == BLKQ_MERGED);   /* 16 + 16 > 24 */
  CHECK (blkq_queued (q) == 3);
  put (q, DEV_WRITE, 200, 24, 4);   /* full */
  put (q, DEV_WRITE, 232, 8, 5);
  CHECK (put (q, DEV_WRITE, 224, 8, 6) == BLKQ_MERGED);   /* front */
  g = take (q, 0);
  CHECK (g.sector == 116 && g.nsect == 16);
  take (q, 0);
  g = take (q, 0);
  CHECK (g.sector == 100 && g.nsect == 16 && g.nbios == 2);
  take (q, 0);
  g = take (q, 0);
  CHECK (g.sector == 224 && g.nsect == 16 && g.nbios == 2);
  queue_free_empty (q);

  q = queue_new (BLKQ_NONE, 64, 0);
  put (q, DEV_WRITE, 316, 8, 0);    /* right, older */
  put (q, DEV_WRITE, 5000, 8, 1);
  put (q, DEV_WRITE, 300, 8, 2);
  CHECK (put (q, DEV_WRITE, 308, 8, 3) == BLKQ_MERGED);
  g = take (q, 0);
  CHECK (g.sector == 300 && g.nsect == 24);
  CHECK (take (q, 0).sector == 5000);
  queue_free_empty (q);
}

/* FULL at nr_requests, nothing done; a merge still accepted. */
static void
test_depth (void)
{
  struct blkq *q = queue_new (BLKQ_DEADLINE, 4, 0);
  unsigned i;

  for (i = 0; i < 4; i++)
    CHECK (put (q, DEV_WRITE, i * 100, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 1000, 8, 0) == BLKQ_FULL);
  CHECK (put (q, DEV_FLUSH, 0, 0, 0) == BLKQ_FULL);
  CHECK (put (q, DEV_READ, 8, 8, 0) == BLKQ_FULL);
  CHECK (blkq_queued (q) == 4);
  CHECK (put (q, DEV_WRITE, 8, 8, 0) == BLKQ_MERGED);
  CHECK (blkq_queued (q) == 4);
  take (q, 0);
  CHECK (put (q, DEV_WRITE, 1000, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 2000, 8, 0) == BLKQ_FULL);
  while (blkq_queued (q))
    take (q, 0);
  queue_free_empty (q);
  printf ("depth: FULL at nr_requests 4 (write, read, flush); a merge "
          "still accepted\n");
}

/* Nothing passes a flush or discard either way, and nothing merges
 * across one. */
static void
test_barriers (enum blkq_elevator elevator, const char *expect)
{
  struct blkq *q = queue_new (elevator, 64, 0);
  char out[256];
  size_t len = 0;
  struct got g;

  put (q, DEV_WRITE, 1000, 8, 0);
  put (q, DEV_WRITE, 0, 8, 0);
  put (q, DEV_READ, 5000, 8, 0);
  CHECK (put (q, DEV_FLUSH, 0, 0, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 8, 8, 0) == BLKQ_INSERTED);     /* no merge */
  put (q, DEV_WRITE, 500, 8, 0);
  CHECK (put (q, DEV_DISCARD, 2000, 8, 0) == BLKQ_INSERTED);
  CHECK (put (q, DEV_WRITE, 16, 8, 0) == BLKQ_INSERTED);    /* no merge */
  CHECK (put (q, DEV_WRITE, 24, 8, 0) == BLKQ_MERGED);      /* same epoch */
  while (blkq_queued (q)) {
    g = take (q, 0);
    len += snprintf (out + len, sizeof out - len, "%s%c%llu",
                     len ? " " : "", "RWFD"[g.op],
                     (unsigned long long) g.sector);
  }
  printf ("barriers, %s: %s\n", elevator ? "deadline" : "none", out);
  CHECK (strcmp (out, expect) == 0);
  /* On an empty queue a flush goes at once. */
  put (q, DEV_FLUSH, 0, 0, 0);
  CHECK (take (q, 0).op == DEV_FLUSH);
  queue_free_empty (q);
}

#include "blkq-model.h"

int
main (void)
{
  test_fifo_none ();
  test_deadline_batches ();
  test_deadline_position ();
  test_read_preference ();
  test_expiry (DEV_READ, BLKQ_READ_EXPIRE);
  test_expiry (DEV_WRITE, BLKQ_WRITE_EXPIRE);
  test_merges ();
  test_merge_limits ();
  test_depth ();
  test_barriers (BLKQ_NONE, "W1000 W0 R5000 F0 W8 W500 D2000 W16");
  test_barriers (BLKQ_DEADLINE, "R5000 W0 W1000 F0 W8 W500 D2000 W16");
  test_random (BLKQ_NONE);
  test_random (BLKQ_DEADLINE);
  test_shuffled_stream ();
  if (failures)
    return 1;
  printf ("ok\n");
  return 0;
}
