/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The device models (backend/sim/): each against its own formula with
 * the default parameters, driven with synthetic model times.
 *
 *   hdd  seek(d) meets seek-t2t, seek-avg at C/3 and seek-full, and the
 *        rotational wait is 0 to 1 revolution by angle; a sequential
 *        128 KiB stream gets the media bandwidth (2 %); random 4 KiB
 *        reads over the disk get 1 / (seek-avg + half a turn + transfer)
 *        (10 %); the write cache acks at once and a flush waits for the
 *        media; sectors past the capacity wrap.
 *   usb  an in-order 128 KiB stream gets seq-write (2 %); the order 4
 *        workers of a fifo write-out complete writes in is >= 3x slower;
 *        random 4 KiB writes slower still; one merge costs au / copy-bw +
 *        erase; open-units streams at once stay fast, one more does not;
 *        reads cost read-latency + transfer.
 *   ssd  N IOs started together on 8 channels: the last completes N/8
 *        latencies later (5 %); large IOs run at the bandwidth (2 %); the
 *        order of IOs does not matter.
 *   all  deterministic; completion >= start; a flush completes after the
 *        writes before it; parameters: every unit, files, comments, and
 *        one-line errors that name the key; docs/device-models.md
 *        shows every parameter table.
 *
 * No clocks, no threads: the numbers printed are model time. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../backend/sim/model.h"
#include "check.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define NS_PER_S 1e9

struct dev
{
  const struct device_model *model;
  void *state;
  double p[64];                   /* the parameters it was made with */
};

static struct dev
dev_new (const char *name, const char *params)
{
  struct dev d = { device_model_find (name), NULL, { 0 } };
  char why[256];

  REQUIRE (d.model != NULL, "no model %s", name);
  REQUIRE (model_params_parse (d.model, params, d.p, why, sizeof why) == 0,
           "%s %s: %s", name, params, why);
  d.state = d.model->create (d.p, why, sizeof why);
  REQUIRE (d.state != NULL, "%s %s: %s", name, params, why);
  return d;
}

static void
dev_free (struct dev *d)
{
  d->model->destroy (d->state);
}

/* Queues IO in TAG at NOW on a reordering model (REQUIRE: taken). */
static void
dev_queue (struct dev *d, enum dev_op op, uint64_t sector, uint32_t nsect,
           uint64_t now, unsigned tag)
{
  struct dev_io io = { op, sector, nsect };

  REQUIRE (d->model->queue (d->state, &io, now, tag) == 0, "queue");
}

/* Every decision of a reordering model, as if no IO came after the ones
 * queued: each tag's completion into DONE (DEPTH of them; wake-ups are
 * skipped).  Returns how many completions it reported. */
static unsigned
dev_drain (struct dev *d, uint64_t *done, unsigned depth)
{
  struct dev_event ev;
  unsigned n = 0;

  while (d->model->pick (d->state, UINT64_MAX, &ev))
    if (ev.tag != DEV_NO_TAG) {
      REQUIRE (ev.tag < depth, "tag %u", ev.tag);
      done[ev.tag] = ev.at;
      n++;
    }
  return n;
}

/* Starts one IO at NOW, returns its completion; checks it is >= NOW.  A
 * reordering model gets it in tag 0, nothing else queued. */
static uint64_t
dev_io (struct dev *d, enum dev_op op, uint64_t sector, uint32_t nsect,
        uint64_t now)
{
  struct dev_io io = { op, sector, nsect };
  uint64_t done;

  if (d->model->start)
    done = d->model->start (d->state, &io, now);
  else {
    dev_queue (d, op, sector, nsect, now, 0);
    REQUIRE (dev_drain (d, &done, 1) == 1, "one completion");
  }
  CHECK (done >= now);
  return done;
}

/* ---- A caller of the model, event by event ---- */

#define LOOP_TAGS 256

/* What a closed loop queues: NEXT gives the IO for TAG, DONE (if set)
 * hears of each completion; CTX is theirs. */
struct workload
{
  struct dev_io (*next) (void *ctx, unsigned tag);
  void (*done) (void *ctx, unsigned tag, uint64_t queued, uint64_t at);
  void *ctx;
};

struct loop
{
  struct dev *d;
  uint64_t now;
  uint64_t queued_at[LOOP_TAGS];
  uint64_t done_at[LOOP_TAGS];    /* UINT64_MAX: not known yet */
  uint64_t wake[LOOP_TAGS];       /* wake-ups to come */
  unsigned nwake;
  uint64_t max_wait;              /* the longest completion - queued */
};

static void
loop_queue (struct loop *l, unsigned tag, struct dev_io io)
{
  struct dev *d = l->d;

  l->queued_at[tag] = l->now;
  l->done_at[tag] = UINT64_MAX;
  if (d->model->start)
    l->done_at[tag] = d->model->start (d->state, &io, l->now);
  else
    REQUIRE (d->model->queue (d->state, &io, l->now, tag) == 0, "queue");
}

/* The model's decisions by now: completions and wake-ups. */
static void
loop_pick (struct loop *l)
{
  struct dev_event ev;

  while (!l->d->model->start && l->d->model->pick (l->d->state, l->now, &ev))
    if (ev.tag == DEV_NO_TAG) {
      REQUIRE (l->nwake < LOOP_TAGS, "wake-ups");
      CHECK (ev.at > l->now);
      l->wake[l->nwake++] = ev.at;
    }
    else {
      CHECK (l->done_at[ev.tag] == UINT64_MAX && ev.at >= l->now);
      l->done_at[ev.tag] = ev.at;
    }
}

/* The next event among DEPTH tags: a completion (its tag) or a wake-up
 * (-1); the clock moves to it.  REQUIRE: there is one (a model that
 * holds commands never leaves its caller without a time to come). */
static int
loop_step (struct loop *l, unsigned depth)
{
  uint64_t best = UINT64_MAX;
  int tag = -2;
  unsigned i, w = 0;

  for (i = 0; i < depth; i++)
    if (l->done_at[i] < best) {
      best = l->done_at[i];
      tag = i;
    }
  for (i = 0; i < l->nwake; i++)
    if (l->wake[i] < best) {
      best = l->wake[i];
      tag = -1;
      w = i;
    }
  REQUIRE (tag != -2, "%s: stranded at %" PRIu64, l->d->model->name, l->now);
  l->now = best;
  if (tag == -1)
    l->wake[w] = l->wake[--l->nwake];
  return tag;
}

/* DEPTH commands kept queued: each tag refilled with W's next IO the
 * moment its command completes, until N have completed.  Returns the
 * model time of the last completion; *L keeps the rest. */
static uint64_t
closed_loop (struct loop *l, struct dev *d, unsigned depth, unsigned n,
             const struct workload *w)
{
  unsigned i, completed = 0;
  int tag;

  REQUIRE (depth <= LOOP_TAGS && depth <= d->model->queue_depth, "depth");
  *l = (struct loop) { .d = d };
  for (i = 0; i < depth; i++)
    loop_queue (l, i, w->next (w->ctx, i));
  loop_pick (l);
  while (completed < n) {
    tag = loop_step (l, depth);
    if (tag >= 0) {
      if (l->now - l->queued_at[tag] > l->max_wait)
        l->max_wait = l->now - l->queued_at[tag];
      if (w->done)
        w->done (w->ctx, tag, l->queued_at[tag], l->now);
      l->done_at[tag] = UINT64_MAX;
      if (++completed < n)
        loop_queue (l, tag, w->next (w->ctx, tag));
    }
    loop_pick (l);
  }
  return l->now;
}

static double
mb_per_s (uint64_t bytes, uint64_t ns)
{
  return bytes / (ns / NS_PER_S) / 1e6;
}

static int
within (double measured, double expected, double fraction)
{
  return fabs (measured - expected) <= fraction * expected;
}

/* xorshift64: the same "random" IOs on every run. */
static uint64_t
next_random (uint64_t *state)
{
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* ---- hdd ---- */

/* The seek over D cylinders: the least positioning time (done - start -
 * transfer) over every angle of a target on cylinder D, from cylinder 0.
 * The rotational wait of the best angle is below one sector's time; the
 * worst angle waits one revolution more (checked here). */
static double
hdd_seek_ms (uint64_t d_cyl)
{
  struct dev d = dev_new ("hdd", "");
  double capacity = 1000e9 / 512, spc = capacity / 400000;
  double sector_ns = 512 / 150e6 * NS_PER_S, spt = 60e9 / 7200 / sector_ns;
  uint64_t first = ceil (d_cyl * spc), k, t = 0, at, done;
  double best = INFINITY, worst = 0;

  for (k = 0; k < spt; k++) {
    t = dev_io (&d, DEV_READ, 0, 1, t);       /* the head to cylinder 0 */
    at = t;
    done = dev_io (&d, DEV_READ, first + k, 1, at);
    best = fmin (best, done - at - sector_ns);
    worst = fmax (worst, done - at - sector_ns);
    t = done;
  }
  dev_free (&d);
  CHECK (within (worst - best, 60e9 / 7200, 0.001));
  return best / 1e6;
}

static void
test_hdd_seek (void)
{
  double t2t = hdd_seek_ms (1), avg = hdd_seek_ms (400000 / 3);
  double full = hdd_seek_ms (400000 - 1);

  printf ("hdd seek: 1 cylinder %.3f ms, C/3 %.3f ms, C-1 %.3f ms "
          "(0.8/8.5/16)\n", t2t, avg, full);
  CHECK (within (t2t, 0.8, 0.01));
  CHECK (within (avg, 8.5, 0.01));
  CHECK (within (full, 16, 0.01));
  CHECK (t2t < hdd_seek_ms (100) && hdd_seek_ms (100) < avg);
}

/* N writes (or reads) of BYTES each in order from SECTOR, each started
 * when the previous completed; returns MB/s. */
static double
hdd_stream (enum dev_op op, uint64_t sector, unsigned n, uint64_t bytes)
{
  struct dev d = dev_new ("hdd", "");
  uint64_t t = 0;
  unsigned i;

  for (i = 0; i < n; i++)
    t = dev_io (&d, op, sector + i * (bytes / 512), bytes / 512, t);
  dev_free (&d);
  return mb_per_s (n * bytes, t);
}

static void
test_hdd_sequential (void)
{
  uint64_t middle = 1000e9 / 512 / 2;
  double w = hdd_stream (DEV_WRITE, middle, 8192, 128 * KiB);
  double r = hdd_stream (DEV_READ, 12345, 8192, 128 * KiB);
  struct dev d = dev_new ("hdd", "");
  uint64_t t = 0, far = 1000e9 / 512 / 3;
  unsigned i;

  /* Two streams a third of the disk apart, alternating: a seek each. */
  for (i = 0; i < 2048; i++)
    t = dev_io (&d, DEV_WRITE, (i % 2 ? far : 0) + i / 2 * 256, 256, t);
  dev_free (&d);
  printf ("hdd sequential 128 KiB: write %.1f MB/s, read %.1f MB/s "
          "(150); two interleaved streams %.1f MB/s\n", w, r,
          mb_per_s (2048 * 128 * KiB, t));
  CHECK (within (w, 150, 0.02));
  CHECK (within (r, 150, 0.02));
  CHECK (mb_per_s (2048 * 128 * KiB, t) < 150 / 5);
}

/* Random 4 KiB reads over SPAN sectors from sector 0, one at a time:
 * IO/s. */
static double
hdd_random_iops (const char *params, uint64_t span, unsigned n)
{
  struct dev d = dev_new ("hdd", params);
  uint64_t rng = 88172645463325252ULL, t = 0;
  unsigned i;

  for (i = 0; i < n; i++)
    t = dev_io (&d, DEV_READ, next_random (&rng) % (span / 8) * 8, 8, t);
  dev_free (&d);
  return n / (t / NS_PER_S);
}

static void
test_hdd_random (void)
{
  double modelled = 1 / ((8.5 + 60e3 / 7200 / 2) / 1e3 + 4096 / 150e6);
  double whole = hdd_random_iops ("", 1000e9 / 512, 5000);
  double short_stroke = hdd_random_iops ("", GiB / 512, 5000);

  printf ("hdd random 4 KiB reads: %.1f IO/s over the disk (modelled "
          "%.1f), %.1f IO/s within its first GiB\n", whole, modelled,
          short_stroke);
  CHECK (within (whole, modelled, 0.10));
  CHECK (short_stroke > 1.5 * whole);
  /* One at a time there is nothing to reorder. */
  CHECK (hdd_random_iops ("ncq=off", 1000e9 / 512, 5000) == whole);
}

static void
test_hdd_write_cache (void)
{
  struct dev plain = dev_new ("hdd", "ncq=off");
  struct dev cached = dev_new ("hdd", "write-cache=1,ncq=off");
  struct dev small = dev_new ("hdd",
                              "write-cache=yes,cache-size=1MiB,ncq=off");
  uint64_t rng = 1, sector, media = 0, ack, last_small = 0, flushed;
  unsigned i, late_acks = 0;

  for (i = 0; i < 1000; i++) {
    sector = next_random (&rng) % (uint64_t) (1000e9 / 512 / 8) * 8;
    media = dev_io (&plain, DEV_WRITE, sector, 8, 0);
    CHECK (dev_io (&cached, DEV_WRITE, sector, 8, 0) == 0);
    ack = dev_io (&small, DEV_WRITE, sector, 8, 0);
    CHECK (ack <= media && ack >= last_small);
    late_acks += ack > 0;
    last_small = ack;
  }
  for (i = 0; i < 600; i++)      /* empty writes hold a slot too */
    CHECK (dev_io (&small, DEV_WRITE, i, 0, 0) > 0);
  flushed = dev_io (&cached, DEV_FLUSH, 0, 0, 0);
  printf ("hdd write cache: 1000 random 4 KiB writes acked at 0, flush "
          "at %.1f ms (media %.1f ms); a 1 MiB cache acked %u late\n",
          flushed / 1e6, media / 1e6, late_acks);
  CHECK (flushed == media);
  CHECK (dev_io (&plain, DEV_FLUSH, 0, 0, 0) == media);
  CHECK (late_acks >= 1000 - 256);     /* 256 4 KiB slots, then wait */
  CHECK (dev_io (&cached, DEV_READ, 0, 8, 0) > media);
  dev_free (&plain);
  dev_free (&cached);
  dev_free (&small);
}

static void
test_hdd_wrap (void)
{
  struct dev a = dev_new ("hdd", "capacity=1GB"), b = dev_new ("hdd",
                                                             "capacity=1GB");
  uint64_t cap = 1e9 / 512, t;

  dev_io (&a, DEV_READ, 1000, 8, 0);
  dev_io (&b, DEV_READ, 1000, 8, 0);
  CHECK (dev_io (&a, DEV_READ, 777777, 8, 1e6)
         == dev_io (&b, DEV_READ, cap + 777777, 8, 1e6));
  t = dev_io (&a, DEV_WRITE, UINT64_MAX - 4, 16, 1e9);
  CHECK (t > 1e9 && t < 1e9 + 1e8);
  dev_free (&a);
  dev_free (&b);
}

/* ncq=off is the model as it was before NCQ: the same IOs give the same
 * times to the nanosecond (the figures are that model's, for this
 * sequence: reads and writes, some started before the last completed). */
static void
test_hdd_in_order_unchanged (void)
{
  static const struct { const char *params; uint64_t t, sum; } cases[] = {
    { "ncq=off", 61413904640ULL, 70109658122ULL },
    { "ncq=off,write-cache=1,cache-size=1MiB", 61413904640ULL,
      70164179404ULL },
  };
  size_t c;
  unsigned i;

  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    struct dev d = dev_new ("hdd", cases[c].params);
    uint64_t rng = 88172645463325252ULL, t = 0, sum = 0, done;

    for (i = 0; i < 5000; i++) {
      done = dev_io (&d, i % 3 == 2 ? DEV_WRITE : DEV_READ,
                     next_random (&rng) % (1000000000000ULL / 512 / 8) * 8,
                     8, t);
      sum += done - t;
      t = i % 7 == 0 ? t + 1000 : done;
    }
    CHECK (t == cases[c].t && sum == cases[c].sum);
    dev_free (&d);
  }
}

/* A disk whose figures are round: 1000 cylinders of one 1000-sector
 * track, 10 ms a turn, 10 us a sector, seek(d) = 1 + 0.01 (d - 1) ms
 * (seek-avg on the straight line through t2t and full). */
#define ROUND_DISK "capacity=0.512GB,cylinders=1000,rpm=6000," \
  "bandwidth=51.2MB/s,seek-t2t=1ms,seek-avg=4.32333333333ms,seek-full=10.99ms"
#define MS 1000000.0

/* Tag 0 reads the first track (0 to 10 ms, the head then on cylinder 1
 * at angle 0); tags 1-3 queued at 0 as ORDER says, one sector each:
 * B on cylinder 2 at angle 0.05, A on 101 at 0.25, D on 301 at 0.45.
 * Their completions into DONE[0..3] by tag. */
static void
round_disk_abd (const char *params, const char *order, uint64_t *done)
{
  char text[256];
  struct dev d;
  unsigned tag;

  snprintf (text, sizeof text, "%s,%s", ROUND_DISK, params);
  d = dev_new ("hdd", text);
  dev_queue (&d, DEV_READ, 0, 1000, 0, 0);
  for (tag = 1; tag <= 3; tag++)
    dev_queue (&d, DEV_READ, order[tag - 1] == 'B' ? 2050
               : order[tag - 1] == 'A' ? 101250 : 301450, 1, 0, tag);
  CHECK (dev_drain (&d, done, 4) == 4);
  dev_free (&d);
}

static bool
at_ms (uint64_t ns, double ms)
{
  return fabs (ns - ms * MS) <= 5;
}

/* Which command goes next, by hand.  At 10 ms, from cylinder 1, angle
 * 0: B costs seek(1) = 1 ms, then the platter is at 0.1, past B's 0.05:
 * 9.5 ms more (10.5); A costs 1.99 + 0.51 = 2.5 ms; D 3.99 + 0.51 =
 * 4.5 ms.  A goes (done 12.51).  At 12.51 from cylinder 101, angle
 * 0.251: B 1.98 + 6.01 = 7.99 ms, D 2.99 + 9 = 11.99 ms: B (20.51).
 * Then D from cylinder 2: 3.98 + 0.01 ms (24.51).  In arrival order
 * the same commands end at 20.51 (B), 22.51 (A), 34.51 (D). */
static void
test_hdd_ncq_order (void)
{
  uint64_t ncq[4], fifo[4];

  round_disk_abd ("", "BAD", ncq);
  round_disk_abd ("ncq=off", "BAD", fifo);
  printf ("hdd ncq: B A D queued, served A %.2f, B %.2f, D %.2f ms; in "
          "order B %.2f, A %.2f, D %.2f ms\n", ncq[2] / MS, ncq[1] / MS,
          ncq[3] / MS, fifo[1] / MS, fifo[2] / MS, fifo[3] / MS);
  CHECK (at_ms (ncq[0], 10) && at_ms (fifo[0], 10));
  CHECK (at_ms (ncq[2], 12.51) && at_ms (ncq[1], 20.51)
         && at_ms (ncq[3], 24.51));
  CHECK (at_ms (fifo[1], 20.51) && at_ms (fifo[2], 22.51)
         && at_ms (fifo[3], 34.51));
}

/* The age limit, by hand: D, A, B queued at 0 with an 11 ms limit.  At
 * 10 ms no command is 11 ms old: A goes, by position (12.51).  At 12.51
 * all are: the oldest, D (first of equal ages), goes from cylinder 101,
 * 2.99 + 9 ms (24.51), then B from 301: 3.98 + 2.01 ms (30.51).  With
 * a limit of 1 ms the disk serves in arrival order from the start. */
static void
test_hdd_ncq_age_limit (void)
{
  uint64_t aged[4], fifo[4], young[4];

  round_disk_abd ("ncq-age-limit=11ms", "DAB", aged);
  round_disk_abd ("ncq-age-limit=1ms", "DAB", young);
  round_disk_abd ("ncq=off", "DAB", fifo);
  CHECK (at_ms (aged[2], 12.51) && at_ms (aged[1], 24.51)
         && at_ms (aged[3], 30.51));
  CHECK (memcmp (young, fifo, sizeof fifo) == 0);
}

/* A flush is a barrier: tag 1 (A, far) before it, tag 3 after it at
 * sector 1000, where the head is at 10 ms: without the flush it would
 * go first, for nothing.  A ends at 12.51, the flush with it, then the
 * read from cylinder 101 at 12.51: seek 1.99 ms, the platter at 0.45,
 * its sector at 0: 5.5 ms more (20.01). */
static void
test_hdd_ncq_flush (void)
{
  struct dev d = dev_new ("hdd", ROUND_DISK);
  uint64_t done[4];

  dev_queue (&d, DEV_READ, 0, 1000, 0, 0);
  dev_queue (&d, DEV_READ, 101250, 1, 0, 1);
  dev_queue (&d, DEV_FLUSH, 0, 0, 0, 2);
  dev_queue (&d, DEV_READ, 1000, 1, 0, 3);
  CHECK (dev_drain (&d, done, 4) == 4);
  CHECK (at_ms (done[1], 12.51) && done[2] == done[1]
         && at_ms (done[3], 20.01));
  dev_free (&d);
}

/* With the write cache and NCQ: a write is acknowledged when queued
 * while the cache holds it, and its media write competes; one that does
 * not fit (a 6 KiB cache holds one 4 KiB write; the actuator busy) is written
 * through; a flush waits for the media. */
static void
test_hdd_ncq_cache (void)
{
  struct dev d = dev_new ("hdd", ROUND_DISK
                          ",write-cache=1,cache-size=6KiB");
  struct dev_event ev;
  uint64_t done[4];

  dev_queue (&d, DEV_READ, 0, 1000, 0, 0);       /* busy to 10 ms */
  REQUIRE (d.model->pick (d.state, 0, &ev), "the first read");
  CHECK (ev.tag == 0 && at_ms (ev.at, 10));
  dev_queue (&d, DEV_WRITE, 101250, 8, 1000, 1);
  dev_queue (&d, DEV_WRITE, 2050, 8, 2000, 2);
  REQUIRE (d.model->pick (d.state, 2000, &ev), "an ack");
  CHECK (ev.tag == 1 && ev.at == 1000);           /* cached */
  CHECK (!d.model->pick (d.state, 2000, &ev));   /* the rest waits */
  dev_queue (&d, DEV_FLUSH, 0, 0, 3000, 3);
  CHECK (dev_drain (&d, done, 4) == 2);
  /* At 10 ms the cached write (A's place: 2.5 ms, and 80 us of data)
   * goes first, to 12.58; then tag 2 from cylinder 101, angle 0.258:
   * seek 1.98 ms, the platter at 0.456, 5.94 ms to 0.05, 80 us
   * (20.58); the flush with it. */
  CHECK (at_ms (done[2], 20.58) && done[3] == done[2]);
  dev_free (&d);
}

/* 4 KiB random reads over the whole default disk. */
static struct dev_io
random_read (void *ctx, unsigned tag)
{
  (void) tag;
  return (struct dev_io) { DEV_READ,
                           next_random (ctx) % (1000000000000ULL / 4096) * 8,
                           8 };
}

/* Queue depth 32: in arrival order the disk does what it does one at a
 * time; reordered, it serves the nearest of 32, about 2.5 times as
 * many. */
static void
test_hdd_ncq_qd32 (void)
{
  struct dev on = dev_new ("hdd", ""), off = dev_new ("hdd", "ncq=off");
  uint64_t rng = 4, t_on, t_off;
  struct workload w = { random_read, NULL, &rng };
  struct loop l;
  double iops_on, iops_off, qd1 = hdd_random_iops ("", 1000e9 / 512, 5000);

  t_on = closed_loop (&l, &on, 32, 20000, &w);
  iops_on = 20000 / (t_on / NS_PER_S);
  rng = 4;
  t_off = closed_loop (&l, &off, 32, 5000, &w);
  iops_off = 5000 / (t_off / NS_PER_S);
  printf ("hdd random 4 KiB reads, queue depth 32: %.1f IO/s with NCQ, "
          "%.1f in order (%.1f at depth 1)\n", iops_on, iops_off, qd1);
  CHECK (within (iops_off, qd1, 0.05));
  CHECK (iops_on > 2.2 * qd1);
  dev_free (&on);
  dev_free (&off);
}

/* No command waits much past the age limit: at depth 32 the limit
 * cuts the tail (it has to, in a long enough run), and with none the
 * unluckiest wait longer. */
static void
test_hdd_ncq_starvation (void)
{
  struct dev limited = dev_new ("hdd", "ncq-age-limit=100ms");
  struct dev unlimited = dev_new ("hdd", "ncq-age-limit=1000000ms");
  uint64_t rng = 9, worst_limited, worst_unlimited;
  struct workload w = { random_read, NULL, &rng };
  struct loop l;

  closed_loop (&l, &limited, 32, 20000, &w);
  worst_limited = l.max_wait;
  rng = 9;
  closed_loop (&l, &unlimited, 32, 20000, &w);
  worst_unlimited = l.max_wait;
  printf ("hdd ncq: longest wait %.0f ms with a 100 ms age limit, %.0f ms "
          "without\n", worst_limited / MS, worst_unlimited / MS);
  /* Past the limit a command waits for the one in service and for the
   * older ones past it: a full stroke and a turn each at most. */
  CHECK (worst_limited < 100 * MS + 32 * (16 + 8.34 + 0.03) * MS);
  CHECK (worst_unlimited > worst_limited);
  dev_free (&limited);
  dev_free (&unlimited);
}

/* ---- usb ---- */

#define USB_WRITES 512            /* of 128 KiB: 64 MiB, 16 AUs */

/* The order in which a fifo write-out with 4 workers hands 128 KiB
 * writes to the device: chunks of 4 consecutive writes go out
 * round-robin and complete shuffled, within windows of 4 to 8 writes. */
static void
fifo_workers_order (unsigned *order, unsigned n)
{
  uint64_t rng = 2463534242;
  unsigned start, w, i, j, tmp;

  for (i = 0; i < n; i++)
    order[i] = i;
  for (start = 0; start < n; start += w) {
    w = 4 + next_random (&rng) % 5;
    if (w > n - start)
      w = n - start;
    for (i = w - 1; i > 0; i--) {
      j = next_random (&rng) % (i + 1);
      tmp = order[start + i];
      order[start + i] = order[start + j];
      order[start + j] = tmp;
    }
  }
}

/* 128 KiB writes (ORDER: their indexes) one at a time: MB/s. */
static double
usb_writes (const char *params, const unsigned *order, unsigned n)
{
  struct dev d = dev_new ("usb", params);
  uint64_t t = 0;
  unsigned i;

  for (i = 0; i < n; i++)
    t = dev_io (&d, DEV_WRITE, order[i] * 256ULL, 256, t);
  dev_free (&d);
  return mb_per_s (n * 128 * KiB, t);
}

static void
test_usb_write_orders (void)
{
  unsigned in_order[USB_WRITES], shuffled[USB_WRITES], i;
  struct dev d = dev_new ("usb", "");
  uint64_t rng = 7, t = 0;
  double seq, fifo, random_4k;

  for (i = 0; i < USB_WRITES; i++)
    in_order[i] = i;
  fifo_workers_order (shuffled, USB_WRITES);
  seq = usb_writes ("", in_order, USB_WRITES);
  fifo = usb_writes ("", shuffled, USB_WRITES);
  for (i = 0; i < 2000; i++)
    t = dev_io (&d, DEV_WRITE, next_random (&rng) % (GiB / 4096) * 8, 8, t);
  random_4k = mb_per_s (2000 * 4 * KiB, t);
  dev_free (&d);
  printf ("usb writes: in-order 128 KiB %.1f MB/s (170), fifo 4 workers "
          "%.1f MB/s (%.1fx slower), random 4 KiB %.3f MB/s (%.0fx "
          "slower)\n", seq, fifo, seq / fifo, random_4k, seq / random_4k);
  CHECK (within (seq, 170, 0.02));
  CHECK (seq / fifo >= 3);
  CHECK (random_4k < fifo / 3);
}

/* One out-of-order write costs a merge: au / copy-bw + erase. */
static void
test_usb_merge (void)
{
  struct dev d = dev_new ("usb", "copy-bw=100MB/s,erase=3ms");
  uint64_t t = dev_io (&d, DEV_WRITE, 256, 256, 0), again;
  double write_ns = 128 * KiB / 170e6 * NS_PER_S;
  double merge_ns = 4 * MiB / 100e6 * NS_PER_S + 3e6;

  CHECK (within (t, write_ns, 1e-6));
  again = dev_io (&d, DEV_WRITE, 0, 256, t) - t;       /* backwards */
  CHECK (within (again, merge_ns + write_ns, 1e-6));
  t += again;
  again = dev_io (&d, DEV_WRITE, 1024, 256, t) - t;    /* skips ahead */
  CHECK (within (again, merge_ns + write_ns, 1e-6));
  t += again;
  again = dev_io (&d, DEV_WRITE, 1280, 256, t) - t;    /* in order */
  CHECK (within (again, write_ns, 1e-6));
  printf ("usb merge: %.2f ms for a 4 MiB AU at 100 MB/s + 3 ms erase\n",
          merge_ns / 1e6);
  dev_free (&d);
}

/* The default merge, from the flashbench README's --open-au example: a
 * 4 MiB unit merged in 241 ms where the card wrote it in order in
 * 455 ms, 0.53 of it; the stick writes 4 MiB at 170 MB/s in 24.67 ms,
 * so a merge takes 13.1 ms: 4 MiB at 320 MB/s, no erase on top.  The
 * same for an 8 MiB unit (the Patriot stick of the flashbench-results
 * list) doubles it. */
static void
test_usb_merge_defaults (void)
{
  struct dev d = dev_new ("usb", ""), big = dev_new ("usb", "au=8MiB");
  uint64_t t = dev_io (&d, DEV_WRITE, 256, 256, 0), again;
  double write_ns = 128 * KiB / 170e6 * NS_PER_S;

  again = dev_io (&d, DEV_WRITE, 0, 256, t) - t;
  CHECK (within (again - write_ns, 4194304 / 320e6 * NS_PER_S, 1e-6));
  CHECK (within ((4194304 / 170e6) * (241.0 / 455), 4194304 / 320e6, 0.01));
  t = dev_io (&big, DEV_WRITE, 256, 256, 0);
  again = dev_io (&big, DEV_WRITE, 0, 256, t) - t;
  CHECK (within (again - write_ns, 2 * 4194304 / 320e6 * NS_PER_S, 1e-6));
  printf ("usb merge by default: %.2f ms (4 MiB AU), %.2f ms (8 MiB)\n",
          4194304 / 320e6 * 1e3, 2 * 4194304 / 320e6 * 1e3);
  dev_free (&d);
  dev_free (&big);
}

/* STREAMS in-order 128 KiB streams in different AUs, round-robin. */
static double
usb_streams (const char *params, unsigned streams)
{
  struct dev d = dev_new ("usb", params);
  uint64_t t = 0, au = 4 * MiB / 512;
  unsigned i;

  for (i = 0; i < 32 * streams; i++)
    t = dev_io (&d, DEV_WRITE, (i % streams) * 10 * au + i / streams * 256,
                256, t);
  dev_free (&d);
  return mb_per_s (32 * streams * 128 * KiB, t);
}

static void
test_usb_open_units (void)
{
  double two = usb_streams ("", 2), three = usb_streams ("", 3);
  double three_open = usb_streams ("open-units=3", 3);

  printf ("usb open units: 2 streams %.1f MB/s, 3 streams %.1f MB/s; "
          "with open-units=3: %.1f MB/s\n", two, three, three_open);
  CHECK (within (two, 170, 0.001));
  CHECK (three < two / 3);
  CHECK (within (three_open, 170, 0.001));
}

static void
test_usb_reads (void)
{
  struct dev d = dev_new ("usb", "");
  uint64_t rng = 99, t = 0, w = 0, r;
  double read_ns = 250e3 + 4096 / 215e6 * NS_PER_S;
  unsigned i;

  /* Reads between the writes of an in-order stream: the writes still
   * run at seq-write, each read costs read-latency + transfer. */
  for (i = 0; i < 256; i++) {
    r = dev_io (&d, DEV_READ, next_random (&rng) % (GiB / 4096) * 8, 8, t);
    CHECK (within (r - t, read_ns, 1e-6));
    t = dev_io (&d, DEV_WRITE, i * 256ULL, 256, r);
    w += t - r;
  }
  printf ("usb reads: 4 KiB in %.1f us; writes between them %.1f MB/s\n",
          read_ns / 1e3, mb_per_s (256 * 128 * KiB, w));
  CHECK (within (mb_per_s (256 * 128 * KiB, w), 170, 0.001));
  dev_free (&d);
}

/* ---- ssd ---- */

/* N IOs of BYTES started together at 0: when the last completes. */
static uint64_t
ssd_burst (const char *params, enum dev_op op, unsigned n, uint64_t bytes)
{
  struct dev d = dev_new ("ssd", params);
  uint64_t last = 0, done;
  unsigned i;

  for (i = 0; i < n; i++) {
    done = dev_io (&d, op, i * 1000003ULL, bytes / 512, 0);
    last = done > last ? done : last;
  }
  dev_free (&d);
  return last;
}

static void
test_ssd_parallel (void)
{
  uint64_t r64 = ssd_burst ("", DEV_READ, 64, 4 * KiB);
  uint64_t w64 = ssd_burst ("", DEV_WRITE, 64, 4 * KiB);
  uint64_t r1 = ssd_burst ("", DEV_READ, 1, 4 * KiB);
  uint64_t one_channel = ssd_burst ("channels=1", DEV_READ, 64, 4 * KiB);

  printf ("ssd: 64 reads of 4 KiB at once: last at %.1f us (8 x 60), "
          "writes %.1f us (8 x 150); one channel %.1f us\n", r64 / 1e3,
          w64 / 1e3, one_channel / 1e3);
  CHECK (within (r64, 64 / 8 * 60e3, 0.05));
  CHECK (within (w64, 64 / 8 * 150e3, 0.05));
  CHECK (within (r1, 60e3 + 4096 / 2000e6 * NS_PER_S, 1e-6));
  CHECK (within (one_channel, 64 * 60e3, 0.05));
}

static void
test_ssd_bandwidth (void)
{
  double w = mb_per_s (256 * MiB, ssd_burst ("", DEV_WRITE, 256, MiB));
  double r = mb_per_s (256 * MiB, ssd_burst ("", DEV_READ, 256, MiB));

  printf ("ssd: 256 MiB in 1 MiB IOs: write %.0f MB/s, read %.0f MB/s "
          "(2000)\n", w, r);
  CHECK (within (w, 2000, 0.02));
  CHECK (within (r, 2000, 0.02));
}

/* The SSD does not care about order: 512 random 4 KiB writes, queued 32
 * deep, take as long sorted as shuffled. */
static uint64_t
ssd_qd32 (const uint64_t *sectors, unsigned n)
{
  struct dev d = dev_new ("ssd", "");
  uint64_t done[32] = { 0 }, last = 0;
  unsigned i;

  for (i = 0; i < n; i++) {       /* tag i % 32 frees, the next starts */
    done[i % 32] = dev_io (&d, DEV_WRITE, sectors[i], 8, done[i % 32]);
    last = done[i % 32] > last ? done[i % 32] : last;
  }
  dev_free (&d);
  return last;
}

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return x < y ? -1 : x > y;
}

static void
test_ssd_order (void)
{
  uint64_t sectors[512], rng = 5, shuffled;
  unsigned i;

  for (i = 0; i < 512; i++)
    sectors[i] = next_random (&rng) % (GiB / 4096) * 8;
  shuffled = ssd_qd32 (sectors, 512);
  qsort (sectors, 512, sizeof *sectors, compare_u64);
  CHECK (ssd_qd32 (sectors, 512) == shuffled);
}

/* ---- RAID 10 behind a RAID card ---- */

/* The card's latency and the X25-E's: a 4 KiB read alone takes
 * ctrl-latency + read-latency, 226 + 75 us: 3322 a second, the raw
 * figure.  A 512-byte one moves 3584 bytes less over the 250 MB/s link:
 * 14.3 us less (the command 28.571, flash 30.045, link 2.048 us). */
static void
test_raid_x25e_latency (void)
{
  struct dev d = dev_new ("x25e-raid10", "");
  uint64_t t = 1000000, page, sector;

  page = dev_io (&d, DEV_READ, 123456 * 8, 8, t) - t;
  t += 1000000;
  sector = dev_io (&d, DEV_READ, 777777, 1, t) - t;
  printf ("x25e-raid10: a 4 KiB read %.3f us (%.0f/s), 512 bytes %.3f us "
          "(%.0f/s)\n", page / 1e3, 1e9 / page, sector / 1e3,
          1e9 / sector);
  CHECK (page == 226000 + 75000);
  CHECK (sector == 226000 + 28571 + 30045 + 2048);
  dev_free (&d);
}

/* The SAS array on round disks (one pair, a 1 MiB stripe, the card's
 * latency 100 us, no drive overhead): a read that continues where its
 * disk's head is takes 100 us + 8 sectors of 10 us; any other seeks. */
#define ROUND_SAS "ctrl-latency=100us,cmd-overhead=0,capacity=0.512GB," \
  "cylinders=1000,rpm=6000,bandwidth=51.2MB/s,seek-t2t=1ms," \
  "seek-avg=4.32333333333ms,seek-full=10.99ms"
#define ROUND_PAIR ROUND_SAS ",disks=2,stripe=1024KiB"
#define STREAMED (100000 + 8 * 10000)

/* Reads R1-R5 after a write at 0 (both heads then at 8): R1 at 500000
 * (disk a on a tie), R2 at 8, R3 at 500008, R4 at 16, R5 at 24.  Which
 * of R2-R5 streamed, as a string of S (streamed) and s (sought). */
static void
mirror_reads (const char *policy, char *pattern)
{
  static const uint64_t at[] = { 500000, 8, 500008, 16, 24 };
  char text[512];
  struct dev d;
  uint64_t t = 0, done;
  unsigned i;

  snprintf (text, sizeof text, ROUND_PAIR ",read-policy=%s", policy);
  d = dev_new ("sas15k-raid10", text);
  t = dev_io (&d, DEV_WRITE, 0, 8, t);
  for (i = 0; i < 5; i++) {
    done = dev_io (&d, DEV_READ, at[i], 8, t);
    if (i > 0)
      pattern[i - 1] = done - t == STREAMED ? 'S' : 's';
    t = done;
  }
  pattern[4] = '\0';
  dev_free (&d);
}

/* By hand: primary reads everything on disk a, which R1 sent far away
 * (R5 continues R4 there);
 * alternate sends R2 and R4 to b, R3 and R5 to a (a is off R5's
 * stream); nearest follows both streams. */
static void
test_raid_mirror_choice (void)
{
  char primary[5], alternate[5], nearest[5];

  mirror_reads ("primary", primary);
  mirror_reads ("alternate", alternate);
  mirror_reads ("nearest", nearest);
  printf ("raid10 mirror reads R2-R5 (S streamed, s sought): primary %s, "
          "alternate %s, nearest %s\n", primary, alternate, nearest);
  CHECK (strcmp (primary, "sssS") == 0);
  CHECK (strcmp (alternate, "SSSs") == 0);
  CHECK (strcmp (nearest, "SSSS") == 0);
}

/* The stripe: with 2 pairs and 4 KiB chunks, sector 16 (chunk 2) is on
 * pair 0 right after chunk 0, sector 8 (chunk 1) at the start of pair
 * 1; a read across chunks 0 and 1 is two pieces served at once; a write
 * completes when both disks of its pair have it. */
static void
test_raid_stripe (void)
{
  struct dev d = dev_new ("sas15k-raid10", ROUND_SAS
                          ",disks=4,stripe=4KiB");
  struct dev fresh = dev_new ("sas15k-raid10", ROUND_SAS
                              ",disks=4,stripe=4KiB");
  uint64_t t = 0, done;

  done = dev_io (&d, DEV_READ, 0, 8, t);
  CHECK (done - t == STREAMED);
  t = done;
  done = dev_io (&d, DEV_READ, 16, 8, t);         /* pair 0, after 0 */
  CHECK (done - t == STREAMED);
  t = done;
  done = dev_io (&d, DEV_READ, 8, 8, t);          /* pair 1 at 0 */
  CHECK (done - t == STREAMED);
  t = done;
  done = dev_io (&d, DEV_READ, 48, 8, t);         /* pair 0 at 24 */
  CHECK (done - t > STREAMED);
  CHECK (dev_io (&fresh, DEV_READ, 0, 16, 0) == STREAMED);
  t = done;
  done = dev_io (&d, DEV_WRITE, 56, 8, t);        /* pair 1 at 24 */
  CHECK (done - t > STREAMED);
  CHECK (dev_io (&d, DEV_FLUSH, 0, 0, t) == done);
  dev_free (&d);
  dev_free (&fresh);
}

/* Random 4 KiB reads over the array, one at a time: IO/s. */
static double
raid_random_iops (const char *name, const char *params, uint32_t nsect,
                  unsigned n)
{
  struct dev d = dev_new (name, params);
  uint64_t rng = 31337, t = 0, span = 0;
  unsigned i;

  span = d.p[0] / 2 * (strcmp (name, "x25e-raid10") == 0 ? 64 : 146.8)
    * 1e9 / 512;
  for (i = 0; i < n; i++)
    t = dev_io (&d, DEV_READ, next_random (&rng) % (span / 8) * 8, nsect, t);
  dev_free (&d);
  return n / (t / NS_PER_S);
}

/* The raw seeker figures of 2010, 3320 and 257 seeks/s, from the model
 * at queue depth 1 (the 2.6.32 page cache reads 4 KiB pages).  The SAS
 * array's depends on which disk of a pair reads: only a choice that
 * shortens seeks comes near it. */
static void
test_raid_raw_figures (void)
{
  double x25e = raid_random_iops ("x25e-raid10", "", 8, 2000);
  double sas = raid_random_iops ("sas15k-raid10", "", 8, 20000);
  double sas_primary = raid_random_iops ("sas15k-raid10",
                                         "read-policy=primary", 8, 20000);
  double x25e_512 = raid_random_iops ("x25e-raid10", "", 1, 2000);

  printf ("raw random reads at depth 1: x25e-raid10 %.0f/s (3320; %.0f/s "
          "at 512 bytes), sas15k-raid10 %.0f/s (257; %.0f/s reading the "
          "primary disk only)\n", x25e, x25e_512, sas, sas_primary);
  CHECK (within (x25e, 3320, 0.01));
  CHECK (within (sas, 257, 0.10));
  CHECK (sas_primary < 0.85 * sas);
}

/* ---- every model ---- */

/* A mixed random run of N IOs; the same on every instance.  Every flush
 * completes after every write started before it. */
static uint64_t
mixed_run (const char *name, const char *params, unsigned n)
{
  struct dev d = dev_new (name, params);
  uint64_t rng = 12345, now = 0, sum = 0, done, writes_done = 0, r;
  unsigned i;

  for (i = 0; i < n; i++) {
    r = next_random (&rng);
    now += r % 100000;
    switch (r >> 60) {
    case 0:
      done = dev_io (&d, DEV_FLUSH, 0, 0, now);
      CHECK (done >= writes_done);
      break;
    case 1:
      done = dev_io (&d, DEV_DISCARD, r % (GiB / 512), 2048, now);
      break;
    default:
      done = dev_io (&d, r & 1 ? DEV_WRITE : DEV_READ,
                     (r >> 8) % (64 * GiB / 512), 1 + (r >> 40) % 2560, now);
      if (r & 1)
        writes_done = done > writes_done ? done : writes_done;
    }
    sum += done - now;
  }
  dev_free (&d);
  return sum;
}

/* The same mix, DEPTH at a time through the event-driven caller. */
#define MIXED_N 4000

struct mixed
{
  uint64_t rng, next_seq, sum;
  uint64_t seq[LOOP_TAGS];        /* the command in each tag */
  enum dev_op op[MIXED_N + LOOP_TAGS];
  uint64_t done[MIXED_N + LOOP_TAGS];   /* UINT64_MAX: not completed */
};

static struct dev_io
mixed_next (void *ctx, unsigned tag)
{
  struct mixed *m = ctx;
  uint64_t r = next_random (&m->rng);
  struct dev_io io = { r & 1 ? DEV_WRITE : DEV_READ,
                       (r >> 8) % (64 * GiB / 512), 1 + (r >> 40) % 2560 };

  if (r >> 60 == 0)
    io = (struct dev_io) { DEV_FLUSH, 0, 0 };
  else if (r >> 60 == 1)
    io = (struct dev_io) { DEV_DISCARD, r % (GiB / 512), 2048 };
  m->seq[tag] = m->next_seq;
  m->op[m->next_seq] = io.op;
  m->done[m->next_seq++] = UINT64_MAX;
  return io;
}

static void
mixed_done (void *ctx, unsigned tag, uint64_t queued, uint64_t at)
{
  struct mixed *m = ctx;

  m->done[m->seq[tag]] = at;
  m->sum += at - queued;
}

/* Every flush that completed did so after every write queued before
 * it; the sum of the latencies, for comparing runs. */
static uint64_t
mixed_loop (const char *name, const char *params)
{
  static struct mixed m;
  struct workload w = { mixed_next, mixed_done, &m };
  struct dev d = dev_new (name, params);
  unsigned depth = d.model->queue_depth < 16 ? d.model->queue_depth : 16;
  struct loop l;
  uint64_t f, i, late = 0;

  m = (struct mixed) { .rng = 777 };
  closed_loop (&l, &d, depth, MIXED_N, &w);
  for (f = 0; f < m.next_seq; f++)
    for (i = 0; m.op[f] == DEV_FLUSH && m.done[f] != UINT64_MAX && i < f;
         i++)
      late += m.op[i] == DEV_WRITE && m.done[i] > m.done[f];
  CHECK_MSG (late == 0, "%s %s: %" PRIu64 " writes after a later flush",
             name, params, late);
  dev_free (&d);
  return m.sum;
}

static void
test_all_models (void)
{
  static const char *const cases[][2] = {
    { "hdd", "" }, { "hdd", "write-cache=1,cache-size=8MiB" },
    { "hdd", "ncq=off" }, { "hdd", "ncq=off,write-cache=1" },
    { "usb", "" }, { "usb", "open-units=4,au=1MiB" },
    { "ssd", "" }, { "ssd", "channels=3" },
    { "x25e-raid10", "" }, { "x25e-raid10", "read-policy=alternate" },
    { "sas15k-raid10", "" }, { "sas15k-raid10", "tcq=off,stripe=16KiB" },
  };
  const char *names = device_model_names ();
  size_t i;

  CHECK (strcmp (names, "hdd usb ssd x25e-raid10 sas15k-raid10") == 0);
  CHECK (device_model_find ("floppy") == NULL);
  CHECK (device_model_find ("hdd")->queue_depth == 32);
  CHECK (device_model_find ("usb")->queue_depth == 1);
  CHECK (device_model_find ("ssd")->queue_depth == 32);
  CHECK (device_model_find ("x25e-raid10")->queue_depth == 246);
  CHECK (device_model_find ("sas15k-raid10")->queue_depth == 246);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK (mixed_run (cases[i][0], cases[i][1], 20000)
           == mixed_run (cases[i][0], cases[i][1], 20000));
    CHECK (mixed_loop (cases[i][0], cases[i][1])
           == mixed_loop (cases[i][0], cases[i][1]));
  }
}

/* ---- parameters ---- */

static double
param (const char *name, const char *text, const char *key)
{
  const struct device_model *m = device_model_find (name);
  double values[64];
  char why[256];
  size_t i;

  REQUIRE (model_params_parse (m, text, values, why, sizeof why) == 0,
           "%s: %s", text, why);
  for (i = 0; m->params[i].key; i++)
    if (strcmp (m->params[i].key, key) == 0)
      return values[i];
  REQUIRE (0, "no key %s", key);
}

/* TEXT is refused with one line that contains WORD (the key). */
static void
refused (const char *name, const char *text, const char *word)
{
  const struct device_model *m = device_model_find (name);
  double values[64] = { 0 };
  char why[512] = "";

  CHECK (model_params_parse (m, text, values, why, sizeof why) == -1);
  if (strstr (why, word) == NULL || strchr (why, '\n') || values[0] != 0)
    fprintf (stderr, "'%s': reason '%s' should name %s\n", text, why, word);
  CHECK (strstr (why, word) != NULL);
  CHECK (strchr (why, '\n') == NULL);
  CHECK (values[0] == 0);         /* untouched */
}

static void
test_param_units (void)
{
  static const struct { const char *model, *text, *key; double value; }
  cases[] = {
    { "hdd", "seek-t2t=800us", "seek-t2t", 0.8 },
    { "hdd", "seek-t2t=800000ns", "seek-t2t", 0.8 },
    { "hdd", "seek-avg=0.009s", "seek-avg", 9 },
    { "hdd", "seek-full=17", "seek-full", 17 },
    { "hdd", "seek-full = 17 ms ", "seek-full", 17 },
    { "ssd", "read-latency=0.1ms", "read-latency", 100 },
    { "hdd", "capacity=2TB", "capacity", 2000 },
    { "hdd", "capacity=500000MB", "capacity", 500 },
    { "hdd", "capacity=1000000kB", "capacity", 1 },
    { "hdd", "capacity=1000000KB", "capacity", 1 },
    { "hdd", "capacity=1000000000B", "capacity", 1 },
    { "hdd", "capacity=1TiB", "capacity", 1099.511627776 },
    { "hdd", "capacity=1T", "capacity", 1099.511627776 },
    { "hdd", "capacity=1GiB", "capacity", 1.073741824 },
    { "hdd", "capacity=2G", "capacity", 2.147483648 },
    { "usb", "au=8M", "au", 8 },
    { "usb", "au=2MiB", "au", 2 },
    { "usb", "au=4096K", "au", 4 },
    { "usb", "au=1024KiB", "au", 1 },
    { "usb", "au=8MB", "au", 7.62939453125 },
    { "hdd", "cache-size=0.125GiB", "cache-size", 128 },
    { "hdd", "bandwidth=120000kB/s", "bandwidth", 120 },
    { "hdd", "bandwidth=120000KB/s", "bandwidth", 120 },
    { "hdd", "bandwidth=1.5GB/s", "bandwidth", 1500 },
    { "hdd", "bandwidth=100MiB/s", "bandwidth", 104.8576 },
    { "hdd", "bandwidth=1000KiB/s", "bandwidth", 1.024 },
    { "hdd", "bandwidth=1GiB/s", "bandwidth", 1073.741824 },
    { "hdd", "bandwidth=5000000B/s", "bandwidth", 5 },
    { "hdd", "bandwidth=99.5", "bandwidth", 99.5 },
    { "hdd", "rpm=5400rpm", "rpm", 5400 },
    { "hdd", "rpm=10000", "rpm", 10000 },
    { "hdd", "cylinders=200000", "cylinders", 200000 },
    { "ssd", "channels=4", "channels", 4 },
    { "hdd", "", "rpm", 7200 },
    { "hdd", " rpm = 5400 , , seek-avg=9ms,", "rpm", 5400 },
    { "hdd", "ncq-age-limit=0.25s", "ncq-age-limit", 250 },
    { "sas15k-raid10", "", "read-policy", 2 },
    { "sas15k-raid10", "read-policy=primary", "read-policy", 0 },
    { "x25e-raid10", "read-policy = alternate ", "read-policy", 1 },
    { "x25e-raid10", "stripe=1MiB", "stripe", 1024 },
    { "sas15k-raid10", "tcq-age-limit=2s", "tcq-age-limit", 2000 },
  };
  static const char *const yes[] = { "1", "true", "yes", "on", "TRUE" };
  static const char *const no[] = { "0", "false", "no", "off", "Off" };
  char text[64];
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double v = param (cases[i].model, cases[i].text, cases[i].key);

    if (!within (v, cases[i].value, 1e-12))
      fprintf (stderr, "%s: %.15g, expected %.15g\n", cases[i].text, v,
               cases[i].value);
    CHECK (within (v, cases[i].value, 1e-12));
  }
  CHECK (param ("hdd", NULL, "seek-avg") == 8.5);
  for (i = 0; i < 5; i++) {
    snprintf (text, sizeof text, "write-cache=%s", yes[i]);
    CHECK (param ("hdd", text, "write-cache") == 1);
    snprintf (text, sizeof text, "write-cache=%s", no[i]);
    CHECK (param ("hdd", text, "write-cache") == 0);
  }
}

static void
test_param_errors (void)
{
  refused ("hdd", "seek-avg=8.5xs", "seek-avg");
  refused ("hdd", "seek-avg=8.5MB/s", "seek-avg");     /* not a time */
  refused ("hdd", "seek-avg=fast", "seek-avg");
  refused ("hdd", "seek-avg=", "seek-avg");
  refused ("hdd", "seek-avg", "seek-avg");
  refused ("hdd", "seek-avg=nan", "seek-avg");
  refused ("hdd", "seek-avg=inf", "seek-avg");
  refused ("hdd", "seek-avg=-1", "seek-avg");
  refused ("hdd", "bandwidth=0", "bandwidth");
  refused ("hdd", "bandwidth=150mb/s", "bandwidth");   /* case matters */
  refused ("hdd", "bandwidth=150Mb/s", "bandwidth");
  refused ("hdd", "rpm=0", "rpm");
  refused ("hdd", "rpm=7200rps", "rpm");
  refused ("hdd", "cylinders=1.5", "cylinders");
  refused ("hdd", "cylinders=400k", "cylinders");
  refused ("hdd", "write-cache=maybe", "write-cache");
  refused ("hdd", "write-cache=2", "write-cache");
  refused ("hdd", "rpm=5400,rpm=7200", "rpm");
  refused ("usb", "open-units=0", "open-units");
  refused ("usb", "open-units=17", "open-units");
  refused ("ssd", "channels=65", "channels");
  refused ("ssd", "read-latency=-5us", "read-latency");
  refused ("hdd", "rpm=7200,foo=1", "foo");
  refused ("hdd", "foo=1", "seek-avg");        /* the keys are listed */
  refused ("usb", "seek-avg=8ms", "open-units");
  refused ("x25e-raid10", "read-policy=random", "read-policy");
  refused ("x25e-raid10", "read-policy=Nearest", "primary|alternate");
  refused ("sas15k-raid10", "read-policy=", "read-policy");
  refused ("hdd", "ncq=maybe", "ncq");
  refused ("sas15k-raid10", "disks=34", "disks");
  refused ("x25e-raid10", "stripe=2KiB", "stripe");
}

/* A model's own checks, at create: one line naming the key. */
static void
create_refused (const char *name, const char *text, const char *key)
{
  const struct device_model *m = device_model_find (name);
  double values[64];
  char why[256] = "";

  REQUIRE (model_params_parse (m, text, values, why, sizeof why) == 0,
           "%s: %s", text, why);
  CHECK (m->create (values, why, sizeof why) == NULL);
  if (strstr (why, key) == NULL)
    fprintf (stderr, "'%s': create said '%s'\n", text, why);
  CHECK (strstr (why, key) != NULL && strchr (why, '\n') == NULL);
}

static void
test_create_errors (void)
{
  create_refused ("hdd", "seek-avg=5ms", "seek-avg");  /* no curve */
  create_refused ("hdd", "seek-avg=15ms", "seek-avg");
  create_refused ("hdd", "seek-t2t=9ms", "seek-avg");  /* t2t > avg */
  create_refused ("hdd", "capacity=0.001,cylinders=10000", "cylinders");
  create_refused ("usb", "au=100000B", "au");
  create_refused ("sas15k-raid10", "disks=3", "disks");
  create_refused ("sas15k-raid10", "seek-avg=1ms", "seek-avg");
  create_refused ("x25e-raid10", "read-latency=40us", "read-latency");
  create_refused ("x25e-raid10", "iops=10000", "read-latency");
}

static void
test_param_file (void)
{
  char dir[] = "/tmp/dmcrypt-models-XXXXXX", path[64], plus[80];
  const struct device_model *hdd = device_model_find ("hdd");
  double values[64];
  char why[512];
  FILE *fp;

  REQUIRE (mkdtemp (dir), "mkdtemp");
  snprintf (path, sizeof path, "%s/params", dir);
  snprintf (plus, sizeof plus, "+%s", path);
  fp = fopen (path, "w");
  REQUIRE (fp, "%s", path);
  fprintf (fp, "# a 5400 rpm laptop disk\n\n  rpm = 5400rpm\n"
           "seek-avg=12ms   # datasheet\n\t\n#seek-full=1\n"
           "seek-full=22\nwrite-cache=on\n");
  fclose (fp);
  CHECK (param ("hdd", plus, "rpm") == 5400);
  CHECK (param ("hdd", plus, "seek-avg") == 12);
  CHECK (param ("hdd", plus, "seek-full") == 22);
  CHECK (param ("hdd", plus, "write-cache") == 1);
  CHECK (param ("hdd", plus, "bandwidth") == 150);

  fp = fopen (path, "w");
  REQUIRE (fp, "%s", path);
  fprintf (fp, "rpm=5400\n# fine so far\nseek-avg=12xs\n");
  fclose (fp);
  refused ("hdd", plus, "seek-avg");
  CHECK (model_params_parse (hdd, plus, values, why, sizeof why) == -1);
  CHECK (strstr (why, "line 3") != NULL && strstr (why, path) != NULL);

  fp = fopen (path, "w");
  REQUIRE (fp, "%s", path);
  fprintf (fp, "rpm=5400,seek-avg=9\n");     /* one key a line */
  fclose (fp);
  refused ("hdd", plus, "rpm");

  unlink (path);
  refused ("hdd", plus, path);
  rmdir (dir);
}

static void
test_describe (void)
{
  char *text = NULL;
  size_t size = 0;
  FILE *fp = open_memstream (&text, &size);

  REQUIRE (fp, "open_memstream");
  model_params_describe (device_model_find ("hdd"), fp);
  model_params_describe (device_model_find ("usb"), fp);
  model_params_describe (device_model_find ("sas15k-raid10"), fp);
  fclose (fp);
  CHECK (strstr (text, "seek-avg       8.5ms") != NULL);
  CHECK (strstr (text, "bandwidth      150MB/s") != NULL);
  CHECK (strstr (text, "open-units     2 ") != NULL);
  CHECK (strstr (text, "usb: ") != NULL);
  CHECK (strstr (text, "read-policy    nearest ") != NULL);
  CHECK (strstr (text, "tcq            on ") != NULL);
  free (text);
}

/* docs/device-models.md shows every model's parameter table as
 * model_params_describe prints it. */
static void
test_docs (const char *argv0)
{
  char path[4096], *doc = NULL, *table = NULL;
  size_t doc_size = 0, table_size = 0, i;
  const char *names[] = { "hdd", "usb", "ssd", "x25e-raid10",
                          "sas15k-raid10" };
  FILE *fp;

  snprintf (path, sizeof path, "%.*s../../docs/device-models.md",
            (int) (strrchr (argv0, '/') ? strrchr (argv0, '/') - argv0 + 1
                   : 0), argv0);
  fp = fopen (path, "r");
  REQUIRE (fp, "%s: %m", path);
  REQUIRE (getdelim (&doc, &doc_size, '\0', fp) > 0, "%s: empty", path);
  fclose (fp);
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    fp = open_memstream (&table, &table_size);
    REQUIRE (fp, "open_memstream");
    model_params_describe (device_model_find (names[i]), fp);
    fclose (fp);
    if (strstr (doc, table) == NULL)
      fprintf (stderr, "%s lacks this table:\n%s", path, table);
    CHECK (strstr (doc, table) != NULL);
    free (table);
    table = NULL;
  }
  free (doc);
}

int
main (int argc, char **argv)
{
  test_hdd_seek ();
  test_hdd_sequential ();
  test_hdd_random ();
  test_hdd_write_cache ();
  test_hdd_wrap ();
  test_hdd_in_order_unchanged ();
  test_hdd_ncq_order ();
  test_hdd_ncq_age_limit ();
  test_hdd_ncq_flush ();
  test_hdd_ncq_cache ();
  test_hdd_ncq_qd32 ();
  test_hdd_ncq_starvation ();
  test_usb_write_orders ();
  test_usb_merge ();
  test_usb_merge_defaults ();
  test_usb_open_units ();
  test_usb_reads ();
  test_ssd_parallel ();
  test_ssd_bandwidth ();
  test_ssd_order ();
  test_raid_x25e_latency ();
  test_raid_mirror_choice ();
  test_raid_stripe ();
  test_raid_raw_figures ();
  test_all_models ();
  test_param_units ();
  test_param_errors ();
  test_create_errors ();
  test_param_file ();
  test_describe ();
  if (argc > 0)
    test_docs (argv[0]);
  if (failures)
    fprintf (stderr, "%d checks failed\n", failures);
  return failures != 0;
}
