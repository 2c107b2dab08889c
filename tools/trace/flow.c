/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Following bios from Q to C across merges (the rules: flow.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "flow.h"

struct bio                      /* in the block queue */
{
  uint64_t q_ns;                /* NO_TIME: its Q was not matched */
  uint64_t i_ns;                /* its I or M */
  bool merged;                  /* M: it did not start a request */
};

struct request                  /* at the device */
{
  uint64_t d_ns;
  size_t nbios;
  uint64_t q_ns[];              /* per bio */
};

static void *
xmalloc (size_t size)
{
  void *p = malloc (size);

  if (p == NULL) {
    perror ("dmcrypt-trace: malloc");
    exit (1);
  }
  return p;
}

/* Seconds from FROM to TO; negative if a clock went back. */
static double
seconds (uint64_t from, uint64_t to)
{
  return (double) (int64_t) (to - from) / 1e9;
}

static bool
timed (enum io_kind kind)
{
  return kind == KIND_READ || kind == KIND_WRITE;
}

static void
on_queue_insert (struct flow *f, char action, enum io_kind kind,
                 uint64_t sector, uint64_t nsect, uint64_t t,
                 struct flow_step *step)
{
  struct bio *b = xmalloc (sizeof *b);

  b->q_ns = pending_take (&f->engine, sector, nsect, kind);
  b->i_ns = t;
  b->merged = action == 'M';
  if (b->q_ns != NO_TIME) {
    step->latency = seconds (b->q_ns, t);
    if (timed (kind))
      vec_push (&f->q2i, step->latency);
  }
  ranges_add (&f->block_queue[kind], sector, nsect, b);
  f->n_queued_bios++;
  f->n_queued_requests += !b->merged;
}

/* A bio leaves the block queue for the device at T. */
static void
leave_queue (struct flow *f, const struct bio *b, bool timed_io, uint64_t t)
{
  intervals_add (&f->queued_bios, b->i_ns, t);
  f->n_queued_bios--;
  if (!b->merged) {
    intervals_add (&f->queued_requests, b->i_ns, t);
    f->n_queued_requests--;
  }
  if (!timed_io)
    return;
  vec_push (&f->i2d, seconds (b->i_ns, t));
  if (b->q_ns != NO_TIME)
    vec_push (&f->q2d, seconds (b->q_ns, t));
}

static void
on_dispatch (struct flow *f, enum io_kind kind, uint64_t sector,
             uint64_t nsect, uint64_t t, struct flow_step *step)
{
  size_t n, i;
  uint64_t first_i = NO_TIME;
  struct request *rq;

  f->taken.n = 0;
  n = ranges_take (&f->block_queue[kind], sector, nsect, &f->taken);
  rq = xmalloc (sizeof *rq + (n ? n : 1) * sizeof *rq->q_ns);
  rq->d_ns = t;
  rq->nbios = n ? n : 1;
  if (n == 0) {                 /* not through a block queue */
    rq->q_ns[0] = pending_take (&f->engine, sector, nsect, kind);
    if (rq->q_ns[0] != NO_TIME) {
      step->latency = seconds (rq->q_ns[0], t);
      if (timed (kind))
        vec_push (&f->q2d, step->latency);
    }
  }
  for (i = 0; i < n; i++) {
    struct bio *b = f->taken.v[i];

    rq->q_ns[i] = b->q_ns;
    if (b->i_ns < first_i)
      first_i = b->i_ns;
    leave_queue (f, b, timed (kind), t);
    free (b);
  }
  if (n > 0) {
    step->latency = seconds (first_i, t);
    f->bios_dispatched += n;
    f->requests_dispatched++;
  }
  step->bios = rq->nbios;
  ranges_add (&f->device[kind], sector, nsect, rq);
  f->n_at_device++;
}

static void
on_complete (struct flow *f, enum io_kind kind, uint64_t sector,
             uint64_t nsect, uint64_t t, struct flow_step *step)
{
  size_t n, i, j;

  f->taken.n = 0;
  n = ranges_take (&f->device[kind], sector, nsect, &f->taken);
  for (i = 0; i < n; i++) {
    struct request *rq = f->taken.v[i];

    intervals_add (&f->at_device, rq->d_ns, t);
    f->n_at_device--;
    step->bios += rq->nbios;
    if (i == 0)
      step->latency = seconds (rq->d_ns, t);
    for (j = 0; j < rq->nbios && timed (kind); j++) {
      vec_push (&f->d2c, seconds (rq->d_ns, t));
      if (rq->q_ns[j] != NO_TIME)
        vec_push (&f->q2c, seconds (rq->q_ns[j], t));
    }
    free (rq);
  }
}

void
flow_add (struct flow *f, char action, enum io_kind kind, uint64_t sector,
          uint64_t nsect, uint64_t time_ns, struct flow_step *step)
{
  *step = (struct flow_step) { 0, NAN };
  switch (action) {
  case 'Q':
    pending_put (&f->engine, sector, nsect, kind, time_ns);
    break;
  case 'I':
  case 'M':
    on_queue_insert (f, action, kind, sector, nsect, time_ns, step);
    break;
  case 'D':
    on_dispatch (f, kind, sector, nsect, time_ns, step);
    break;
  case 'C':
    on_complete (f, kind, sector, nsect, time_ns, step);
    break;
  }
}

void
flow_finish (struct flow *f, uint64_t end_ns)
{
  size_t i;
  int k;

  for (k = 0; k < KINDS; k++) {
    f->taken.n = 0;
    ranges_take_all (&f->block_queue[k], &f->taken);
    for (i = 0; i < f->taken.n; i++) {
      leave_queue (f, f->taken.v[i], false, end_ns);
      free (f->taken.v[i]);
    }
    f->taken.n = 0;
    ranges_take_all (&f->device[k], &f->taken);
    for (i = 0; i < f->taken.n; i++) {
      struct request *rq = f->taken.v[i];

      intervals_add (&f->at_device, rq->d_ns, end_ns);
      f->n_at_device--;
      free (rq);
    }
  }
}

void
flow_free (struct flow *f)
{
  int k;

  flow_finish (f, 0);
  vec_free (&f->q2d);
  vec_free (&f->q2i);
  vec_free (&f->i2d);
  vec_free (&f->d2c);
  vec_free (&f->q2c);
  intervals_free (&f->queued_bios);
  intervals_free (&f->queued_requests);
  intervals_free (&f->at_device);
  pending_free (&f->engine);
  for (k = 0; k < KINDS; k++) {
    ranges_free (&f->block_queue[k]);
    ranges_free (&f->device[k]);
  }
  ptrs_free (&f->taken);
}
