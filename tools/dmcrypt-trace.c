/* dmcrypt-trace: reads a trace written with the plugin's trace=FILE (or
 * any blkparse text output) and tells how sequential the dispatches
 * were, how far the seeks went and how long chunks waited between being
 * queued (Q) and dispatched (D) and between dispatch and completion (C).
 *
 *   dmcrypt-trace [--png FILE] [--quiet] TRACE
 *
 * --png draws sector over time and throughput over time, as seekwatcher
 * does, with gnuplot.  --quiet prints only the write sequential
 * fraction, as a number between 0 and 1, for scripts. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct event
{
  double time;                  /* seconds since the trace began */
  char action;                  /* Q, D, C */
  bool write;                   /* W in rwbs */
  uint64_t sector, nsect;       /* 512-byte sectors */
};

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
      perror ("realloc");
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

/* Parses one line; false for lines that are not Q/D/C IO events (flushes
 * without sectors, blkparse's summary, other actions). */
static bool
parse_line (const char *line, struct event *ev)
{
  char act[8], rwbs[8];
  unsigned long long sector, nsect;
  double t;
  int n;

  n = sscanf (line, "%*u,%*u %*d %*u %lf %*d %7s %7s %llu + %llu",
              &t, act, rwbs, &sector, &nsect);
  if (n != 5 || act[1] != '\0' || strchr ("QDC", act[0]) == NULL
      || nsect == 0)
    return false;
  if (strchr (rwbs, 'W') == NULL && strchr (rwbs, 'R') == NULL)
    return false;               /* discards ("D") and the like */
  ev->time = t;
  ev->action = act[0];
  ev->write = strchr (rwbs, 'W') != NULL;
  ev->sector = sector;
  ev->nsect = nsect;
  return true;
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

static size_t
slot_of (const struct table *t, uint64_t sector, uint64_t nsect, bool w)
{
  uint64_t h = sector * 0x9e3779b97f4a7c15ULL ^ nsect * 31 ^ w;
  return (h ^ (h >> 29)) & (t->size - 1);
}

static void table_put (struct table *t, const struct event *ev);

static void
table_grow (struct table *t)
{
  struct table old = *t;
  size_t i;

  t->size = old.size ? 2 * old.size : 4096;
  t->used = 0;
  t->slot = calloc (t->size, sizeof *t->slot);
  if (t->slot == NULL) {
    perror ("calloc");
    exit (1);
  }
  for (i = 0; i < old.size; i++)
    if (old.slot[i].used) {
      struct event ev = { .time = old.slot[i].time,
        .sector = old.slot[i].sector, .nsect = old.slot[i].nsect,
        .write = old.slot[i].write };
      table_put (t, &ev);
    }
  free (old.slot);
}

/* Keeps the earliest unmatched event per key: a repeat of the same IO
 * before the first was matched keeps the first time. */
static void
table_put (struct table *t, const struct event *ev)
{
  size_t i;

  if (2 * (t->used + 1) > t->size)
    table_grow (t);
  for (i = slot_of (t, ev->sector, ev->nsect, ev->write);
       t->slot[i].used; i = (i + 1) & (t->size - 1))
    if (t->slot[i].sector == ev->sector && t->slot[i].nsect == ev->nsect
        && t->slot[i].write == ev->write)
      return;
  t->slot[i] = (struct pending) { ev->sector, ev->nsect, ev->write, true,
    ev->time };
  t->used++;
}

/* Removes the match of EV and returns its time, or NAN. */
static double
table_take (struct table *t, const struct event *ev)
{
  size_t i, j, k;
  double time;

  if (t->size == 0)
    return NAN;
  for (i = slot_of (t, ev->sector, ev->nsect, ev->write);
       t->slot[i].used; i = (i + 1) & (t->size - 1))
    if (t->slot[i].sector == ev->sector && t->slot[i].nsect == ev->nsect
        && t->slot[i].write == ev->write)
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
  uint64_t last_end;
  bool any;
  double first, last;           /* times of the first and last dispatch */
  struct vec seeks;             /* distances, sectors */
};

struct analysis
{
  struct stream dir[2];         /* [0] reads, [1] writes */
  struct table queued, issued;
  struct vec q2d, d2c;          /* seconds */
  double first, last;
  FILE *plot;                   /* time sector write, per D */
};

static void
on_dispatch (struct analysis *a, const struct event *ev)
{
  struct stream *s = &a->dir[ev->write];
  double q;

  s->count++;
  s->bytes += ev->nsect * 512;
  if (s->any && ev->sector == s->last_end)
    s->sequential++;
  else if (s->any)
    vec_push (&s->seeks, ev->sector > s->last_end
              ? ev->sector - s->last_end : s->last_end - ev->sector);
  if (!s->any)
    s->first = ev->time;
  s->any = true;
  s->last = ev->time;
  s->last_end = ev->sector + ev->nsect;
  q = table_take (&a->queued, ev);
  if (!isnan (q))
    vec_push (&a->q2d, ev->time - q);
  table_put (&a->issued, ev);
  if (a->plot)
    fprintf (a->plot, "%.9f %" PRIu64 " %d %" PRIu64 "\n", ev->time,
             ev->sector, ev->write, ev->nsect * 512);
}

static void
analyse (FILE *fp, struct analysis *a)
{
  char line[512];
  struct event ev;
  double d;
  bool first = true;

  while (fgets (line, sizeof line, fp)) {
    if (!parse_line (line, &ev))
      continue;
    if (first)
      a->first = ev.time;
    first = false;
    a->last = ev.time;
    switch (ev.action) {
    case 'Q':
      table_put (&a->queued, &ev);
      break;
    case 'D':
      on_dispatch (a, &ev);
      break;
    case 'C':
      d = table_take (&a->issued, &ev);
      if (!isnan (d))
        vec_push (&a->d2c, ev.time - d);
      break;
    }
  }
}

static void
analysis_free (struct analysis *a)
{
  free (a->dir[0].seeks.v);
  free (a->dir[1].seeks.v);
  free (a->q2d.v);
  free (a->d2c.v);
  free (a->queued.slot);
  free (a->issued.slot);
}

static void
print_latency (const char *what, struct vec *x)
{
  if (x->n == 0) {
    printf ("%s: no matched events\n", what);
    return;
  }
  qsort (x->v, x->n, sizeof *x->v, cmp_double);
  printf ("%s latency: p50 %.1f us, p90 %.1f us, p99 %.1f us, "
          "max %.1f us (%zu IOs)\n", what, percentile (x, 50) * 1e6,
          percentile (x, 90) * 1e6, percentile (x, 99) * 1e6,
          x->v[x->n - 1] * 1e6, x->n);
}

static void
print_stream (const char *name, struct stream *s)
{
  double mean = 0, span = s->last - s->first;
  size_t i;

  if (s->count == 0)
    return;
  printf ("%s: %" PRIu64 " dispatches, %.1f MiB, %.2f%% sequential "
          "(%" PRIu64 " started where the previous one ended)",
          name, s->count, s->bytes / 1048576.0,
          s->count > 1 ? 100.0 * s->sequential / (s->count - 1) : 100.0,
          s->sequential);
  if (span > 0)
    printf (", %.1f MB/s", s->bytes / span / 1e6);
  printf ("\n");
  if (s->seeks.n == 0)
    return;
  qsort (s->seeks.v, s->seeks.n, sizeof *s->seeks.v, cmp_double);
  for (i = 0; i < s->seeks.n; i++)
    mean += s->seeks.v[i] / s->seeks.n;
  printf ("%s seeks: %zu, distance mean %.1f KiB, median %.1f KiB, "
          "max %.1f MiB\n", name, s->seeks.n, mean / 2,
          percentile (&s->seeks, 50) / 2,
          s->seeks.v[s->seeks.n - 1] / 2048);
}

/* Sector over time on top, throughput per time slice below. */
static int
draw_png (const char *data, const char *png, double span)
{
  double bin = span > 0 ? span / 100 : 0.001;
  FILE *gp = popen ("gnuplot", "w");

  if (gp == NULL) {
    perror ("gnuplot");
    return -1;
  }
  fprintf (gp,
           "set terminal pngcairo size 1000,800\n"
           "set output '%s'\n"
           "set multiplot layout 2,1 title 'dmcrypt backend IO'\n"
           "set ylabel 'sector (512 B)'\nset format y '%%.0f'\n"
           "plot '%s' using 1:($3==1?$2:1/0) with points pt 7 ps 0.3 "
           "lc rgb 'red' title 'write', '' using 1:($3==0?$2:1/0) "
           "with points pt 7 ps 0.3 lc rgb 'blue' title 'read'\n"
           "set xlabel 'time (s)'\nset ylabel 'MB/s'\n"
           "bin(x)=%.9f*floor(x/%.9f)\n"
           "plot '%s' using (bin($1)):($4/%.9f/1e6) smooth frequency "
           "with steps title 'throughput'\n"
           "unset multiplot\n", png, data, bin, bin, data, bin);
  return pclose (gp) == 0 ? 0 : -1;
}

static void
usage (int status)
{
  fprintf (status ? stderr : stdout,
           "usage: dmcrypt-trace [--png FILE] [--quiet] TRACE\n");
  exit (status);
}

int
main (int argc, char *argv[])
{
  static const struct option opts[] = {
    { "png", required_argument, NULL, 'p' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct analysis a = { 0 };
  const char *png = NULL;
  char data[] = "/tmp/dmcrypt-trace.XXXXXX";
  bool quiet = false;
  FILE *fp;
  int c, fd = -1;

  while ((c = getopt_long (argc, argv, "p:qh", opts, NULL)) != -1)
    switch (c) {
    case 'p': png = optarg; break;
    case 'q': quiet = true; break;
    case 'h': usage (0); break;
    default: usage (2);
    }
  if (optind != argc - 1)
    usage (2);
  fp = strcmp (argv[optind], "-") == 0 ? stdin : fopen (argv[optind], "r");
  if (fp == NULL) {
    fprintf (stderr, "dmcrypt-trace: %s: %s\n", argv[optind],
             strerror (errno));
    return 1;
  }
  if (png) {
    if ((fd = mkstemp (data)) == -1 || (a.plot = fdopen (fd, "w")) == NULL) {
      perror ("dmcrypt-trace: temporary file");
      return 1;
    }
  }
  analyse (fp, &a);
  if (quiet) {
    struct stream *w = &a.dir[1];
    printf ("%.4f\n", w->count > 1 ? (double) w->sequential
            / (w->count - 1) : 1.0);
  }
  else {
    print_stream ("writes", &a.dir[1]);
    print_stream ("reads", &a.dir[0]);
    print_latency ("queue to dispatch (Q2D)", &a.q2d);
    print_latency ("dispatch to completion (D2C)", &a.d2c);
  }
  if (png) {
    fclose (a.plot);
    c = draw_png (data, png, a.last - a.first);
    unlink (data);
    if (c == -1) {
      fprintf (stderr, "dmcrypt-trace: gnuplot failed\n");
      analysis_free (&a);
      return 1;
    }
  }
  analysis_free (&a);
  if (fp != stdin)
    fclose (fp);
  return 0;
}
