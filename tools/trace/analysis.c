/* The statistics of one run: how sequential the dispatches were, how
 * far the seeks went, and how long chunks waited between being queued
 * (Q) and dispatched (D) and between dispatch and completion (C). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

struct vec
{
  double *v;
  size_t n, cap;
};

static void
vec_push (struct vec *x, double v)
{
  if (x->n == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 1024;
    x->v = realloc (x->v, x->cap * sizeof *x->v);
    if (x->v == NULL) {
      perror ("dmcrypt-trace: realloc");
      exit (1);
    }
  }
  x->v[x->n++] = v;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
percentile (struct vec *x, double p)
{
  size_t i;

  if (x->n == 0)
    return NAN;
  i = (size_t) (p / 100.0 * (x->n - 1) + 0.5);
  return x->v[i];
}

/* Pending Q (or D) times, matched to the next D (or C) of the same IO
 * by a small open-addressed table keyed on (sector, nsect, write). */
struct pending
{
  uint64_t sector, nsect;
  bool write, used;
  double time;
};

struct table
{
  struct pending *slot;
  size_t size;                  /* power of two */
  size_t used;
};

struct io                       /* what a pending entry is keyed on */
{
  double time;
  bool write;
  uint64_t sector, nsect;
};

static size_t
slot_of (const struct table *t, uint64_t sector, uint64_t nsect, bool w)
{
  uint64_t h = sector * 0x9e3779b97f4a7c15ULL ^ nsect * 31 ^ w;
  return (h ^ (h >> 29)) & (t->size - 1);
}

static void table_put (struct table *t, const struct io *io);

static void
table_grow (struct table *t)
{
  struct table old = *t;
  size_t i;

  t->size = old.size ? 2 * old.size : 4096;
  t->used = 0;
  t->slot = calloc (t->size, sizeof *t->slot);
  if (t->slot == NULL) {
    perror ("dmcrypt-trace: calloc");
    exit (1);
  }
  for (i = 0; i < old.size; i++)
    if (old.slot[i].used) {
      struct io io = { .time = old.slot[i].time,
        .sector = old.slot[i].sector, .nsect = old.slot[i].nsect,
        .write = old.slot[i].write };
      table_put (t, &io);
    }
  free (old.slot);
}

/* Keeps the earliest unmatched event per key: a repeat of the same IO
 * before the first was matched keeps the first time. */
static void
table_put (struct table *t, const struct io *io)
{
  size_t i;

  if (2 * (t->used + 1) > t->size)
    table_grow (t);
  for (i = slot_of (t, io->sector, io->nsect, io->write);
       t->slot[i].used; i = (i + 1) & (t->size - 1))
    if (t->slot[i].sector == io->sector && t->slot[i].nsect == io->nsect
        && t->slot[i].write == io->write)
      return;
  t->slot[i] = (struct pending) { io->sector, io->nsect, io->write, true,
    io->time };
  t->used++;
}

/* Removes the match of IO and returns its time, or NAN. */
static double
table_take (struct table *t, const struct io *io)
{
  size_t i, j, k;
  double time;

  if (t->size == 0)
    return NAN;
  for (i = slot_of (t, io->sector, io->nsect, io->write);
       t->slot[i].used; i = (i + 1) & (t->size - 1))
    if (t->slot[i].sector == io->sector && t->slot[i].nsect == io->nsect
        && t->slot[i].write == io->write)
      break;
  if (!t->slot[i].used)
    return NAN;
  time = t->slot[i].time;
  /* Backward-shift deletion keeps the probe chains whole. */
  t->slot[i].used = false;
  t->used--;
  for (j = (i + 1) & (t->size - 1); t->slot[j].used;
       j = (j + 1) & (t->size - 1)) {
    k = slot_of (t, t->slot[j].sector, t->slot[j].nsect, t->slot[j].write);
    if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
      t->slot[i] = t->slot[j];
      t->slot[j].used = false;
      i = j;
    }
  }
  return time;
}

struct stream                   /* dispatches of one direction */
{
  uint64_t count, sequential, bytes;
  uint64_t last_end;            /* sector */
  double first, last;           /* times of the first and last dispatch */
  struct vec seeks;             /* distances, sectors */
};

struct analysis
{
  uint64_t events, queued_n, dispatched_n, completed_n, other_n;
  struct stream dir[2];         /* [0] reads, [1] writes */
  uint64_t flushes, discards;   /* dispatched */
  uint64_t discard_bytes;
  struct table queued, issued;
  struct vec q2d, d2c;          /* seconds */
  double first, last;           /* times of the first and last event */
  FILE *plot;                   /* time sector write bytes, per D */
};

struct analysis *
analysis_new (FILE *plot)
{
  struct analysis *a = calloc (1, sizeof *a);

  if (a == NULL) {
    perror ("dmcrypt-trace: calloc");
    exit (1);
  }
  a->plot = plot;
  return a;
}

void
analysis_free (struct analysis *a)
{
  if (a == NULL)
    return;
  free (a->dir[0].seeks.v);
  free (a->dir[1].seeks.v);
  free (a->q2d.v);
  free (a->d2c.v);
  free (a->queued.slot);
  free (a->issued.slot);
  free (a);
}

static void
stream_add (struct stream *s, const struct trace_event *ev)
{
  if (s->count > 0 && ev->sector == s->last_end)
    s->sequential++;
  else if (s->count > 0)
    vec_push (&s->seeks, ev->sector > s->last_end
              ? ev->sector - s->last_end : s->last_end - ev->sector);
  if (s->count == 0)
    s->first = ev->time;
  s->count++;
  s->bytes += ev->nsect * 512;
  s->last = ev->time;
  s->last_end = ev->sector + ev->nsect;
}

/* Reads and writes: the IOs whose Q, D and C are matched. */
static void
on_io (struct analysis *a, const struct trace_event *ev, const struct io *io)
{
  double t;

  switch (ev->action[0]) {
  case 'Q':
    table_put (&a->queued, io);
    break;
  case 'D':
    stream_add (&a->dir[io->write], ev);
    t = table_take (&a->queued, io);
    if (!isnan (t))
      vec_push (&a->q2d, ev->time - t);
    table_put (&a->issued, io);
    if (a->plot)
      fprintf (a->plot, "%.9f %" PRIu64 " %d %" PRIu64 "\n", ev->time,
               ev->sector, io->write, ev->nsect * 512);
    break;
  case 'C':
    t = table_take (&a->issued, io);
    if (!isnan (t))
      vec_push (&a->d2c, ev->time - t);
    break;
  }
}

void
analysis_add (struct analysis *a, const struct trace_event *ev)
{
  const char *rwbs = ev->rwbs;
  bool qdc = ev->action[1] == '\0' && strchr ("QDC", ev->action[0]);
  struct io io = { ev->time, strchr (rwbs, 'W') != NULL, ev->sector,
    ev->nsect };

  if (a->events++ == 0)
    a->first = ev->time;
  a->last = ev->time;
  if (!qdc) {
    a->other_n++;
    return;
  }
  a->queued_n += ev->action[0] == 'Q';
  a->dispatched_n += ev->action[0] == 'D';
  a->completed_n += ev->action[0] == 'C';
  if (!ev->has_sectors) {
    a->flushes += ev->action[0] == 'D' && strchr (rwbs, 'F');
    return;
  }
  if (rwbs[0] == 'D') {         /* a discard */
    a->discards += ev->action[0] == 'D';
    a->discard_bytes += ev->action[0] == 'D' ? ev->nsect * 512 : 0;
    return;
  }
  if (ev->nsect > 0 && (io.write || strchr (rwbs, 'R')))
    on_io (a, ev, &io);
}

uint64_t
analysis_events (const struct analysis *a)
{
  return a->events;
}

uint64_t
analysis_dispatches (const struct analysis *a)
{
  return a->dir[0].count + a->dir[1].count;
}

double
analysis_span (const struct analysis *a)
{
  return a->last - a->first;
}

double
analysis_write_fraction (const struct analysis *a)
{
  const struct stream *w = &a->dir[1];

  if (w->count == 0)
    return -1;
  return w->count > 1 ? (double) w->sequential / (w->count - 1) : 1.0;
}

static void
print_latency (const char *what, struct vec *x)
{
  if (x->n == 0) {
    printf ("  %s: no IO matched\n", what);
    return;
  }
  qsort (x->v, x->n, sizeof *x->v, cmp_double);
  printf ("  %s: %zu IO%s matched, p50 %.1f us, p90 %.1f us, p99 %.1f us, "
          "max %.1f us\n", what, x->n, x->n == 1 ? "" : "s", percentile (x, 50) * 1e6,
          percentile (x, 90) * 1e6, percentile (x, 99) * 1e6,
          x->v[x->n - 1] * 1e6);
}

/* BYTES in the largest binary unit that keeps a figure before the
 * point: "512 B", "4.0 KiB", "1.5 MiB". */
static const char *
size_text (double bytes, char *buf, size_t size)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  unsigned u = 0;

  while (bytes >= 1024 && u < sizeof unit / sizeof unit[0] - 1) {
    bytes /= 1024;
    u++;
  }
  snprintf (buf, size, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
  return buf;
}

static void
print_seeks (const char *name, struct vec *seeks)
{
  char mean_s[32], median_s[32], max_s[32];
  double mean = 0;
  size_t i;

  qsort (seeks->v, seeks->n, sizeof *seeks->v, cmp_double);
  for (i = 0; i < seeks->n; i++)
    mean += seeks->v[i] / seeks->n;
  printf ("  %s: %zu seek%s, distance mean %s, median %s, max %s\n", name,
          seeks->n, seeks->n == 1 ? "" : "s",
          size_text (mean * 512, mean_s, sizeof mean_s),
          size_text (percentile (seeks, 50) * 512, median_s, sizeof median_s),
          size_text (seeks->v[seeks->n - 1] * 512, max_s, sizeof max_s));
}

static void
print_stream (const char *name, struct stream *s)
{
  double span = s->last - s->first;
  char size[32];

  if (s->count == 0)
    return;
  printf ("  %s: %" PRIu64 " dispatch%s, %s", name, s->count,
          s->count == 1 ? "" : "es", size_text (s->bytes, size, sizeof size));
  if (s->count > 1)
    printf (", %.2f%% sequential (%" PRIu64 " of %" PRIu64 " started "
            "where the previous one ended)",
            100.0 * s->sequential / (s->count - 1), s->sequential,
            s->count - 1);
  if (span > 0)
    printf (", %.1f MB/s", s->bytes / span / 1e6);
  printf ("\n");
  if (s->seeks.n > 0)
    print_seeks (name, &s->seeks);
}

void
analysis_print (struct analysis *a)
{
  char size[32];

  if (a->events == 0) {
    printf ("  no events: the server did no backend IO\n");
    return;
  }
  printf ("  events: %" PRIu64 " (Q %" PRIu64 ", D %" PRIu64 ", C %" PRIu64,
          a->events, a->queued_n, a->dispatched_n, a->completed_n);
  if (a->other_n)
    printf (", other %" PRIu64, a->other_n);
  printf (") over %.6f s\n", analysis_span (a));
  print_stream ("writes", &a->dir[1]);
  print_stream ("reads", &a->dir[0]);
  if (a->flushes)
    printf ("  flushes: %" PRIu64 " dispatched\n", a->flushes);
  if (a->discards)
    printf ("  discards: %" PRIu64 " dispatched, %s\n", a->discards,
            size_text (a->discard_bytes, size, sizeof size));
  print_latency ("queue to dispatch (Q2D)", &a->q2d);
  print_latency ("dispatch to completion (D2C)", &a->d2c);
}
