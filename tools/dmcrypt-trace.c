/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmcrypt-trace: reads a trace written with the plugin's trace=FILE (or
 * any blkparse text output) and tells, for each run of the server, how
 * sequential the dispatches were, how far the seeks went, how long IOs
 * waited at each step from being queued (Q) through the block queue (I,
 * M) to dispatch (D) and completion (C), how deep the queues were and
 * how busy the device was: whether the device or the host limited it.
 *
 *   dmcrypt-trace [--run N|last] [--png FILE [--title TEXT]]
 *                 [--csv FILE] [--summary-csv FILE] [--quiet] TRACE
 *
 * A trace file collects runs: each server start appends a dmcrypt-run
 * marker and its own events, numbered and timed afresh, so runs are
 * analysed apart, never mixed.  --png draws sector over time and
 * throughput over time, as seekwatcher does, with gnuplot, under
 * --title or a title naming the trace and the run; --csv writes
 * a row per event, for other plots.  --quiet prints only the write
 * sequential fraction, as a number between 0 and 1, for scripts.  These
 * need one run: the file's only one, or the one --run chooses.
 * --summary-csv appends a row of figures per run analysed, for lab
 * scripts that collect many. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

#define ALL_RUNS 0
#define LAST_RUN (-1L)

struct run
{
  char *marker;                 /* the marker's fields; NULL: none */
  struct analysis *a;           /* NULL: not chosen */
};

struct runs
{
  struct run *v;
  size_t n, cap;
  long chosen;                  /* 1-based, ALL_RUNS or LAST_RUN */
  bool chosen_by_user;          /* --run, not the default */
  FILE *plot;                   /* the chosen run's dispatches */
  FILE *csv;                    /* the chosen run's --csv rows */
};

static bool
is_chosen (const struct runs *rs, size_t index)
{
  return rs->chosen == ALL_RUNS || rs->chosen == LAST_RUN
    || (size_t) rs->chosen == index + 1;
}

/* A temporary file made empty again: the run it held was let go. */
static void
empty_file (FILE *fp)
{
  if (fp == NULL)
    return;
  if (fflush (fp) == EOF || ftruncate (fileno (fp), 0) == -1) {
    perror ("dmcrypt-trace: temporary file");
    exit (1);
  }
  rewind (fp);
}

/* A new run from its marker's fields (NULL: events before any marker).
 * With the last run chosen, the one before is let go. */
static void
start_run (struct runs *rs, const char *marker)
{
  struct run *r;
  char *copy = marker ? strdup (marker) : NULL;

  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? 2 * rs->cap : 16;
    rs->v = realloc (rs->v, rs->cap * sizeof *rs->v);
  }
  if (rs->v == NULL || (marker && copy == NULL)) {
    perror ("dmcrypt-trace: realloc");
    exit (1);
  }
  if (rs->chosen == LAST_RUN && rs->n > 0) {
    analysis_free (rs->v[rs->n - 1].a);
    rs->v[rs->n - 1].a = NULL;
    empty_file (rs->plot);
    empty_file (rs->csv);
  }
  r = &rs->v[rs->n];
  r->marker = copy;
  r->a = is_chosen (rs, rs->n) ? analysis_new (rs->plot, rs->csv) : NULL;
  rs->n++;
}

static int
read_runs (struct trace_reader *rd, struct runs *rs)
{
  struct trace_event ev;
  const char *marker;
  enum line_kind kind;

  while ((kind = reader_next (rd, &ev, &marker)) != LINE_END)
    switch (kind) {
    case LINE_RUN:
      start_run (rs, marker);
      break;
    case LINE_EVENT:
      if (rs->n == 0)
        start_run (rs, NULL);
      if (rs->v[rs->n - 1].a)
        analysis_add (rs->v[rs->n - 1].a, &ev);
      break;
    default:
      return -1;
    }
  return 0;
}

static void
free_runs (struct runs *rs)
{
  size_t i;

  for (i = 0; i < rs->n; i++) {
    analysis_free (rs->v[i].a);
    free (rs->v[i].marker);
  }
  free (rs->v);
}

static void
print_run (const struct runs *rs, size_t i)
{
  const struct run *r = &rs->v[i];

  if (r->marker)
    printf ("run %zu of %zu: %s\n", i + 1, rs->n, r->marker);
  else
    printf ("run %zu of %zu: no dmcrypt-run marker (blkparse output or an "
            "older trace)\n", i + 1, rs->n);
  analysis_print (r->a);
}

static const char help[] =
  "Analyses each run of a trace=FILE trace apart (a run: a server\n"
  "start's dmcrypt-run marker and its events): how sequential the\n"
  "dispatches were; per IO the waits from Q (queued at the engine)\n"
  "through I or M (into the block queue as a request, or merged into\n"
  "one) to D (to the device) and C (completed), in us; queue depths;\n"
  "MB/s; and the part of the run the device was busy (below 95 %: the\n"
  "host, not the device, limited the run).\n"
  "  --run N|last        only run N (from 1) or the last run\n"
  "  --png FILE          also draw sector and MB/s over time (one run),\n"
  "                      titled with the device's busy time\n"
  "  --title TEXT        --png's title (a newline or \\n breaks a line;\n"
  "                      default: the trace, the run and its marker)\n"
  "  --csv FILE          also write a row per Q, I, M, D and C event\n"
  "                      (one run): time_s,action,rwbs,sector,sectors,\n"
  "                      bios,queued_requests,queued_bios,\n"
  "                      device_requests,latency_s\n"
  "  --summary-csv FILE  also append a row of figures per run analysed,\n"
  "                      the header first into a new or empty FILE\n"
  "                      (the columns: docs/engine.md, Tracing)\n"
  "  --quiet             print only the write sequential fraction, 0\n"
  "                      to 1 (one run; exit 1 if it has no writes)\n"
  "--png, --csv and --quiet on a trace of several runs need --run.\n"
  "A trace holds blkparse event lines, blkparse messages (m N), blank\n"
  "lines and blkparse's closing summary; anything else is an error\n"
  "naming its line.  An empty trace or run is reported as \"no\n"
  "events\" and is not an error.\n"
  "Exit status: 0 analysed, 1 not a trace or nothing to report,\n"
  "2 usage.\n";

static void
usage (int status)
{
  fprintf (status ? stderr : stdout,
           "usage: dmcrypt-trace [--run N|last] [--png FILE [--title TEXT]]\n"
           "                     [--csv FILE] [--summary-csv FILE] [--quiet] "
           "TRACE\n%s",
           status ? "" : help);
  exit (status);
}

static long
parse_run (const char *s)
{
  char *end;
  long n;

  if (strcmp (s, "last") == 0)
    return LAST_RUN;
  errno = 0;
  n = strtol (s, &end, 10);
  if (errno || end == s || *end || n < 1) {
    fprintf (stderr, "dmcrypt-trace: --run: '%s' is not a run number "
             "(1, 2, ...) or 'last'\n", s);
    exit (2);
  }
  return n;
}

/* The one run --quiet and --png work on, or -1 after a message. */
static long
single_run (const struct runs *rs, const char *name)
{
  size_t i;

  if (rs->n > 1 && !rs->chosen_by_user) {
    fprintf (stderr, "dmcrypt-trace: %s: %zu runs in this trace: choose "
             "one with --run N (1 to %zu) or --run last\n", name, rs->n,
             rs->n);
    return -1;
  }
  for (i = 0; i < rs->n; i++)
    if (rs->v[i].a)
      return i;
  fprintf (stderr, "dmcrypt-trace: %s: no runs, no events (an empty "
           "trace)\n", name);
  return -1;
}

static int
quiet_fraction (const struct runs *rs, size_t i, const char *name)
{
  double f = analysis_write_fraction (rs->v[i].a);

  if (f < 0) {
    fprintf (stderr, "dmcrypt-trace: %s: run %zu has no write dispatches: "
             "no sequential fraction\n", name, i + 1);
    return 1;
  }
  printf ("%.4f\n", f);
  return 0;
}

/* --png's title without --title: the trace, the run, and its marker's
 * fields on a line of their own.  NULL when out of memory. */
static char *
default_title (const struct runs *rs, size_t i, const char *name)
{
  const char *marker = rs->v[i].marker;
  char *title;

  if (asprintf (&title, "dmcrypt backend IO: %s, run %zu of %zu%s%s", name,
                i + 1, rs->n, marker ? "\n" : "", marker ? marker : "")
      == -1)
    return NULL;
  return title;
}

static int
png_of_run (struct runs *rs, size_t i, const char *name, const char *data,
            const char *png, const char *title)
{
  char *fallback = NULL;
  int r;

  if (analysis_dispatches (rs->v[i].a) == 0) {
    fprintf (stderr, "dmcrypt-trace: %s: run %zu has no read or write "
             "dispatches to draw\n", name, i + 1);
    return 1;
  }
  if (title == NULL && (title = fallback = default_title (rs, i, name))
      == NULL) {
    perror ("dmcrypt-trace: title");
    return 1;
  }
  r = fflush (rs->plot) == EOF
    || plot_png (rs->v[i].a, data, png, title) == -1;
  free (fallback);
  if (r)
    fprintf (stderr, "dmcrypt-trace: %s: gnuplot failed\n", png);
  return r;
}

/* Copies the --csv rows gathered in TMP to PATH. */
static int
write_csv (FILE *tmp, const char *path)
{
  char buf[65536];
  size_t n;
  FILE *out;

  if (fflush (tmp) == EOF || fseek (tmp, 0, SEEK_SET) == -1) {
    perror ("dmcrypt-trace: temporary file");
    return 1;
  }
  out = fopen (path, "w");
  if (out == NULL) {
    fprintf (stderr, "dmcrypt-trace: %s: %s\n", path, strerror (errno));
    return 1;
  }
  while ((n = fread (buf, 1, sizeof buf, tmp)) > 0)
    fwrite (buf, 1, n, out);
  if (ferror (tmp) | ferror (out) | (fclose (out) == EOF)) {
    fprintf (stderr, "dmcrypt-trace: %s: write error\n", path);
    return 1;
  }
  return 0;
}

/* A --summary-csv row per run analysed. */
static int
write_summary (struct runs *rs, const char *name, const char *path)
{
  FILE *out = summary_open (path);
  size_t i;
  int r = 0;

  if (out == NULL)
    return 1;
  for (i = 0; i < rs->n && r == 0; i++)
    if (rs->v[i].a)
      r = summary_row (out, rs->v[i].a, name, i + 1, rs->v[i].marker);
  if (r == -1 || fclose (out) == EOF) {
    fprintf (stderr, "dmcrypt-trace: %s: write error\n", path);
    return 1;
  }
  return 0;
}

struct outputs                  /* what the options asked for */
{
  bool quiet;
  const char *png, *csv, *summary;      /* file names, or NULL */
  const char *title;                    /* --png's, or NULL: the default */
  char plot_data[32];                   /* --png's temporary file */
};

static int
report (struct runs *rs, const char *name, const struct outputs *o)
{
  long one = -1;
  size_t i;

  if (rs->chosen > 0 && (size_t) rs->chosen > rs->n) {
    fprintf (stderr, "dmcrypt-trace: %s: no run %ld: the trace holds %zu\n",
             name, rs->chosen, rs->n);
    return 1;
  }
  if ((o->quiet || o->png || o->csv) && (one = single_run (rs, name)) < 0)
    return 1;
  if (o->png && png_of_run (rs, one, name, o->plot_data, o->png, o->title))
    return 1;
  if (o->csv && write_csv (rs->csv, o->csv))
    return 1;
  if (o->summary && write_summary (rs, name, o->summary))
    return 1;
  if (o->quiet)
    return quiet_fraction (rs, one, name);
  if (rs->n == 0)
    printf ("%s: no runs, no events (an empty trace)\n", name);
  for (i = 0; i < rs->n; i++)
    if (rs->v[i].a)
      print_run (rs, i);
  return 0;
}

/* The temporary files that gather the chosen run's --png and --csv
 * data while the trace is read. */
static int
open_temporaries (struct runs *rs, struct outputs *o)
{
  int fd;

  if (o->png) {
    strcpy (o->plot_data, "/tmp/dmcrypt-trace.XXXXXX");
    if ((fd = mkstemp (o->plot_data)) == -1
        || (rs->plot = fdopen (fd, "w")) == NULL) {
      perror ("dmcrypt-trace: temporary file");
      return -1;
    }
  }
  if (o->csv && (rs->csv = tmpfile ()) == NULL) {
    perror ("dmcrypt-trace: temporary file");
    return -1;
  }
  return 0;
}

int
main (int argc, char *argv[])
{
  static const struct option opts[] = {
    { "run", required_argument, NULL, 'r' },
    { "png", required_argument, NULL, 'p' },
    { "title", required_argument, NULL, 't' },
    { "csv", required_argument, NULL, 'c' },
    { "summary-csv", required_argument, NULL, 's' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  static struct trace_reader rd;
  struct runs rs = { .chosen = ALL_RUNS };
  struct outputs o = { .quiet = false };
  int c, status;

  while ((c = getopt_long (argc, argv, "r:p:t:c:s:qh", opts, NULL)) != -1)
    switch (c) {
    case 'r':
      rs.chosen = parse_run (optarg);
      rs.chosen_by_user = true;
      break;
    case 'p': o.png = optarg; break;
    case 't': o.title = optarg; break;
    case 'c': o.csv = optarg; break;
    case 's': o.summary = optarg; break;
    case 'q': o.quiet = true; break;
    case 'h': usage (0); break;
    default: usage (2);
    }
  if (optind != argc - 1)
    usage (2);
  if (o.title && !o.png) {
    fprintf (stderr, "dmcrypt-trace: --title: it titles --png's plot: "
             "give --png FILE too\n");
    return 2;
  }
  /* One run is wanted: until the file says which, follow the last. */
  if ((o.png || o.csv || o.quiet) && !rs.chosen_by_user)
    rs.chosen = LAST_RUN;
  if (reader_open (&rd, argv[optind]) == -1)
    return 1;
  status = open_temporaries (&rs, &o) == -1 || read_runs (&rd, &rs) == -1
    ? 1 : report (&rs, argv[optind], &o);
  reader_close (&rd);
  if (rs.plot) {
    fclose (rs.plot);
    unlink (o.plot_data);
  }
  if (rs.csv)
    fclose (rs.csv);
  free_runs (&rs);
  return status;
}
