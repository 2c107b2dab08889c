/* SPDX-License-Identifier: GPL-2.0-or-later */
/* For test-blkq.c: a naive model of the block queue's rules -- an array
 * of requests and linear scans, no trees, no lists -- and the tests
 * that hold the queue to it: 100 000 random bios (reads, writes,
 * flushes, discards over four streams, locally shuffled) under each
 * elevator, every result and every dispatch compared; and a locally
 * shuffled sequential stream through queues of growing depth. */
#ifndef DMCRYPT_TEST_BLKQ_MODEL_H
#define DMCRYPT_TEST_BLKQ_MODEL_H

#include <stdlib.h>

#define NRAND 100000
#define RAND_NR 128             /* nr_requests of the random runs */
#define RAND_MAX_SECT 64        /* max_sectors: some merges refused */
#define HELD_MAX 32             /* requests out at the "device" */

static uint64_t rnd_state;

static uint64_t
rnd (void)
{
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

struct mreq
{
  struct blkq_rq *rq;           /* the queue's request it stands for */
  enum dev_op op;
  uint64_t sector, age, itime;
  uint32_t nsect;
  unsigned nbios, epoch;        /* epoch: barriers inserted before it */
};

struct model
{
  enum blkq_elevator elevator;
  struct mreq m[RAND_NR];
  unsigned n;
  unsigned held;                /* dispatched, not yet freed: they still
                                   count against nr_requests */
  uint64_t seq;
  unsigned epochs_in, epochs_out;       /* barriers inserted, dispatched */
  int last_dir;
  unsigned batching, starved;
  uint64_t pos[2];
  unsigned long merges, rq_merges, fulls, expiries, barriers, requests;
};

static int
mdir (enum dev_op op)
{
  return op == DEV_WRITE;
}

static bool
mbarrier (enum dev_op op)
{
  return op == DEV_FLUSH || op == DEV_DISCARD;
}

/* The index of a request of EPOCH and DIR ending (BY_END) or starting
 * at SECTOR, or -1. */
static int
mfind (struct model *md, unsigned epoch, int dir, bool by_end,
       uint64_t sector)
{
  unsigned i;

  for (i = 0; i < md->n; i++) {
    struct mreq *r = &md->m[i];

    if (!mbarrier (r->op) && r->epoch == epoch && mdir (r->op) == dir
        && (by_end ? r->sector + r->nsect : r->sector) == sector)
      return i;
  }
  return -1;
}

static void
mremove (struct model *md, unsigned i)
{
  md->m[i] = md->m[--md->n];
}

/* A absorbs B (A ends where B starts); returns A's index after. */
static int
mabsorb (struct model *md, int a, int b)
{
  struct mreq *ra = &md->m[a], *rb = &md->m[b];

  ra->nsect += rb->nsect;
  ra->nbios += rb->nbios;
  if (rb->age < ra->age) {
    ra->age = rb->age;
    ra->itime = rb->itime;
  }
  md->rq_merges++;
  if ((unsigned) a == md->n - 1)
    a = b;
  mremove (md, b);
  return a;
}

/* What blkq_insert must answer; *IDX the request. */
static enum blkq_result
minsert (struct model *md, const struct blkq_bio *bio, uint64_t now,
         int *idx)
{
  unsigned ep = md->epochs_in;
  int dir = mdir (bio->op), a, b;

  if (!mbarrier (bio->op) && bio->nsect > 0) {
    a = mfind (md, ep, dir, true, bio->sector);
    if (a >= 0 && md->m[a].nsect + bio->nsect <= RAND_MAX_SECT) {
      md->m[a].nsect += bio->nsect;
      md->m[a].nbios++;
      b = mfind (md, ep, dir, false, md->m[a].sector + md->m[a].nsect);
      if (b >= 0 && md->m[a].nsect + md->m[b].nsect <= RAND_MAX_SECT)
        a = mabsorb (md, a, b);
      md->merges++;
      *idx = a;
      return BLKQ_MERGED;
    }
    b = mfind (md, ep, dir, false, bio->sector + bio->nsect);
    if (b >= 0 && md->m[b].nsect + bio->nsect <= RAND_MAX_SECT) {
      md->m[b].sector = bio->sector;
      md->m[b].nsect += bio->nsect;
      md->m[b].nbios++;
      a = mfind (md, ep, dir, true, md->m[b].sector);
      if (a >= 0 && md->m[a].nsect + md->m[b].nsect <= RAND_MAX_SECT)
        b = mabsorb (md, a, b);
      md->merges++;
      *idx = b;
      return BLKQ_MERGED;
    }
  }
  if (md->n + md->held == RAND_NR) {
    md->fulls++;
    return BLKQ_FULL;
  }
  *idx = md->n++;
  md->m[*idx] = (struct mreq) {
    .op = bio->op, .sector = bio->sector, .nsect = bio->nsect,
    .age = md->seq++, .itime = now, .nbios = 1, .epoch = ep,
  };
  if (mbarrier (bio->op))
    md->epochs_in++;
  md->requests++;
  return BLKQ_INSERTED;
}

/* In the dispatching epoch: the request of DIR (-1: any) with the
 * lowest sector at or above POS (BY_AGE false) or the oldest. */
static int
mpick (struct model *md, int dir, bool by_age, uint64_t pos)
{
  int best = -1;
  unsigned i;

  for (i = 0; i < md->n; i++) {
    struct mreq *r = &md->m[i];

    if (mbarrier (r->op) || r->epoch != md->epochs_out
        || (dir >= 0 && mdir (r->op) != dir) || r->sector < pos)
      continue;
    if (best < 0 || (by_age ? r->age < md->m[best].age
                     : r->sector < md->m[best].sector))
      best = i;
  }
  return best;
}

static int
mdeadline (struct model *md, uint64_t now)
{
  int r = mpick (md, md->last_dir, false, md->pos[md->last_dir]);
  int dir, old;
  uint64_t expire;

  if (r >= 0 && md->batching < BLKQ_FIFO_BATCH) {
    md->batching++;
    return r;
  }
  dir = 1;
  if (mpick (md, 0, true, 0) >= 0
      && !(mpick (md, 1, true, 0) >= 0
           && md->starved++ >= BLKQ_WRITES_STARVED))
    dir = 0;
  if (dir == 1)
    md->starved = 0;
  r = mpick (md, dir, false, md->pos[dir]);
  old = mpick (md, dir, true, 0);
  expire = dir ? BLKQ_WRITE_EXPIRE : BLKQ_READ_EXPIRE;
  if (r < 0 || now - md->m[old].itime >= expire) {
    md->expiries += r >= 0 && r != old;
    r = old;
  }
  md->last_dir = dir;
  md->batching = 1;
  return r;
}

/* What blkq_next must return: an index, or -1 for NULL. */
static int
mnext (struct model *md, uint64_t now)
{
  int r = mpick (md, -1, true, 0);
  unsigned i;

  if (r >= 0) {
    if (md->elevator == BLKQ_DEADLINE) {
      r = mdeadline (md, now);
      md->pos[mdir (md->m[r].op)] = md->m[r].sector;
    }
    return r;
  }
  for (i = 0; i < md->n; i++)
    if (mbarrier (md->m[i].op) && md->m[i].epoch == md->epochs_out) {
      md->epochs_out++;
      md->barriers++;
      return i;
    }
  return -1;
}

static struct blkq_bio rbios[NRAND], *rorder[NRAND];
static unsigned rbio_epoch[NRAND];
static bool rbio_out[NRAND];
static unsigned long epoch_in[NRAND + 1], epoch_out[NRAND + 1];

struct keyed
{
  uint64_t key;
  unsigned i;
};

static int
keyed_cmp (const void *a, const void *b)
{
  const struct keyed *x = a, *y = b;

  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* Puts ORDER[0..N) in the order of index + a random displacement below
 * WINDOW: a locally shuffled sequence. */
static void
shuffle_locally (struct blkq_bio *b, struct blkq_bio **order, unsigned n,
                 unsigned window)
{
  struct keyed *k = malloc (n * sizeof *k);
  unsigned i;

  REQUIRE (k, "malloc");
  for (i = 0; i < n; i++)
    k[i] = (struct keyed) { i + rnd () % window, i };
  qsort (k, n, sizeof *k, keyed_cmp);
  for (i = 0; i < n; i++)
    order[i] = &b[k[i].i];
  free (k);
}

/* Four streams in regions apart, each changing op now and then and
 * jumping ahead sometimes; 1 % flushes, 0.5 % discards; shuffled
 * within 32.  Ranges never overlap, as the engine's range lock keeps
 * writes in flight apart. */
static void
make_random_bios (void)
{
  uint64_t cursor[4];
  enum dev_op op[4];
  unsigned i, k, r;

  for (k = 0; k < 4; k++) {
    cursor[k] = (uint64_t) k << 40;
    op[k] = k & 1 ? DEV_WRITE : DEV_READ;
  }
  for (i = 0; i < NRAND; i++) {
    k = rnd () % 4;
    r = rnd () % 1000;
    if (r < 10) {
      rbios[i] = (struct blkq_bio) { .op = DEV_FLUSH };
      continue;
    }
    if (rnd () % 10 == 0)
      op[k] = op[k] == DEV_READ ? DEV_WRITE : DEV_READ;
    if (rnd () % 50 == 0)
      cursor[k] += 1 + rnd () % 4096;
    rbios[i] = (struct blkq_bio) {
      .op = r < 15 ? DEV_DISCARD : op[k], .sector = cursor[k],
      .nsect = 1 + rnd () % 16,
    };
    cursor[k] += rbios[i].nsect;
  }
  shuffle_locally (rbios, rorder, NRAND, 32);
}

static void
compare_rq (const struct mreq *m, const struct blkq_rq *rq)
{
  REQUIRE (m->rq == rq, "another request");
  REQUIRE (rq->op == m->op && rq->sector == m->sector
           && rq->nsect == m->nsect && rq->nbios == m->nbios
           && rq->insert_time == m->itime,
           "request %d %llu+%u (%u bios, t %llu), model %d %llu+%u "
           "(%u bios, t %llu)", rq->op, (unsigned long long) rq->sector,
           rq->nsect, rq->nbios, (unsigned long long) rq->insert_time,
           m->op, (unsigned long long) m->sector, m->nsect, m->nbios,
           (unsigned long long) m->itime);
}

static void
random_insert (struct blkq *q, struct model *md, struct blkq_bio *bio,
               uint64_t now, unsigned *next_bio)
{
  struct blkq_rq *rq = NULL;
  enum blkq_result got, want;
  int idx = -1;

  want = minsert (md, bio, now, &idx);
  got = blkq_insert (q, bio, now, &rq);
  REQUIRE (got == want, "bio %u: insert result %d, model %d",
           *next_bio, got, want);
  if (got == BLKQ_FULL)
    return;
  if (got == BLKQ_INSERTED)
    md->m[idx].rq = rq;
  compare_rq (&md->m[idx], rq);
  rbio_epoch[bio - rbios] = mbarrier (bio->op) ? md->epochs_in - 1
    : md->epochs_in;
  epoch_in[rbio_epoch[bio - rbios]]++;
  ++*next_bio;
}

/* Every bio once; a bio only in its epoch; a barrier only after all of
 * its epoch. */
static void
account_bios (struct model *md, const struct blkq_rq *rq)
{
  const struct blkq_bio *b;

  check_rq (rq);
  for (b = rq->bios; b; b = b->next) {
    unsigned i = b - rbios;

    REQUIRE (!rbio_out[i], "bio %u dispatched twice", i);
    rbio_out[i] = true;
    if (mbarrier (b->op))
      REQUIRE (epoch_out[rbio_epoch[i]] + 1 == epoch_in[rbio_epoch[i]],
               "a barrier before the bios inserted ahead of it");
    else
      REQUIRE (rbio_epoch[i] == md->epochs_out,
               "a bio passed a barrier");
    epoch_out[rbio_epoch[i]]++;
  }
}

static void
random_next (struct blkq *q, struct model *md, uint64_t now,
             struct blkq_rq **held, unsigned *nheld)
{
  int want = mnext (md, now);
  struct blkq_rq *rq = blkq_next (q, now);
  unsigned slot;

  if (want < 0) {
    REQUIRE (rq == NULL, "a request from an empty queue");
    return;
  }
  REQUIRE (rq, "no request, model has %u", md->n);
  compare_rq (&md->m[want], rq);
  REQUIRE (rq->nsect <= RAND_MAX_SECT || rq->nbios == 1,
           "request of %u sectors", rq->nsect);
  account_bios (md, rq);
  mremove (md, want);
  /* The device holds a few requests; they come back in any order. */
  md->held++;
  if (*nheld < HELD_MAX) {
    held[(*nheld)++] = rq;
    return;
  }
  md->held--;
  slot = rnd () % HELD_MAX;
  blkq_rq_free (held[slot]);
  held[slot] = rq;
}

static void
test_random (enum blkq_elevator elevator)
{
  static struct model md;
  struct blkq_config cfg = {
    .elevator = elevator, .nr_requests = RAND_NR,
    .max_sectors = RAND_MAX_SECT,
  };
  struct blkq *q = blkq_new (&cfg);
  struct blkq_rq *held[HELD_MAX];
  unsigned next_bio = 0, nheld = 0, i, steps;
  uint64_t now = 0;

  REQUIRE (q, "blkq_new");
  rnd_state = 88172645463325252ULL;
  make_random_bios ();
  memset (&md, 0, sizeof md);
  md.elevator = elevator;
  memset (rbio_out, 0, sizeof rbio_out);
  memset (epoch_in, 0, sizeof epoch_in);
  memset (epoch_out, 0, sizeof epoch_out);
  for (steps = 0; next_bio < NRAND || blkq_queued (q); steps++) {
    /* Phases of filling and draining; up to 8 ms a step, so reads
     * expire (500 ms) in a full queue. */
    unsigned fill = steps / 2000 % 2 ? 40 : 90;

    now += rnd () % (8 * MS);
    if (next_bio < NRAND && rnd () % 100 < fill)
      random_insert (q, &md, rorder[next_bio], now, &next_bio);
    else
      random_next (q, &md, now, held, &nheld);
    REQUIRE (blkq_queued (q) == md.n, "queued %u, model %u",
             blkq_queued (q), md.n);
  }
  for (i = 0; i < NRAND; i++)
    REQUIRE (rbio_out[i], "bio %u never dispatched", i);
  /* Freeing the queue with requests still at the device. */
  for (i = 0; i < nheld / 2; i++)
    blkq_rq_free (held[i]);
  blkq_free (q);
  for (; i < nheld; i++)
    blkq_rq_free (held[i]);
  printf ("random, %s: %u bios -> %lu requests (%lu bio merges, %lu "
          "bridging), %lu FULL, %lu barriers, %lu expiry jumps; every "
          "bio out once\n", elevator ? "deadline" : "none", NRAND,
          md.requests, md.merges, md.rq_merges, md.fulls, md.barriers,
          md.expiries);
  CHECK (md.merges > 1000 && md.rq_merges > 100 && md.fulls > 1000
         && md.barriers > 500);
  if (elevator == BLKQ_DEADLINE)
    CHECK (md.expiries > 10);
}

#define STREAM 20000            /* bios of 8 sectors */
#define STREAM_WINDOW 64        /* a bio arrives up to 63 places late */

/* Dispatches of a locally shuffled sequential stream that continue the
 * previous one, through a queue of NR requests that the producer keeps
 * full (the device is the bottleneck).  max_sectors 8: no merging, so
 * the depth counts bios and only the elevator's order is measured. */
static unsigned
stream_contiguous (enum blkq_elevator elevator, unsigned nr,
                   struct blkq_bio **order)
{
  struct blkq_config cfg = {
    .elevator = elevator, .nr_requests = nr, .max_sectors = 8,
  };
  struct blkq *q = blkq_new (&cfg);
  struct blkq_rq *rq;
  unsigned next = 0, contiguous = 0, out = 0;
  uint64_t now = 0, end = UINT64_MAX;

  REQUIRE (q, "blkq_new");
  while (out < STREAM) {
    while (next < STREAM
           && blkq_insert (q, order[next], now, &rq) == BLKQ_INSERTED)
      next++;
    rq = blkq_next (q, now);
    REQUIRE (rq && rq->nbios == 1, "stream: no request or a merge");
    contiguous += rq->sector == end;
    end = rq->sector + rq->nsect;
    blkq_rq_free (rq);
    out++;
    now += MS / 10;             /* 4 KiB at ~40 MB/s: no write expires */
  }
  blkq_free (q);
  return contiguous;
}

static void
test_shuffled_stream (void)
{
  static const unsigned depths[] = { 4, 32, 128, 4096 };
  static struct blkq_bio b[STREAM], *order[STREAM];
  unsigned i, input = 0, none[4], deadline[4];

  rnd_state = 0x9e3779b97f4a7c15ULL;
  for (i = 0; i < STREAM; i++)
    b[i] = (struct blkq_bio) { .op = DEV_WRITE, .sector = i * 8ULL,
                               .nsect = 8 };
  shuffle_locally (b, order, STREAM, STREAM_WINDOW);
  for (i = 1; i < STREAM; i++)
    input += order[i]->sector == order[i - 1]->sector + 8;
  printf ("shuffled stream, %u bios displaced < %u: contiguous "
          "dispatches of %u (input %u)\n", STREAM, STREAM_WINDOW,
          STREAM - 1, input);
  for (i = 0; i < 4; i++) {
    none[i] = stream_contiguous (BLKQ_NONE, depths[i], order);
    deadline[i] = stream_contiguous (BLKQ_DEADLINE, depths[i], order);
    printf ("  nr_requests %4u: none %5u (%5.1f %%), deadline %5u "
            "(%5.1f %%)\n", depths[i], none[i], 100.0 * none[i] / STREAM,
            deadline[i], 100.0 * deadline[i] / STREAM);
    CHECK (none[i] == input);
    if (i > 0)
      CHECK (deadline[i] >= deadline[i - 1]);
  }
  CHECK (deadline[3] == STREAM - 1);
  CHECK (deadline[0] < STREAM / 2);
}

#endif /* DMCRYPT_TEST_BLKQ_MODEL_H */
