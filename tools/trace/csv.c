/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The figures as CSV (RFC 4180: a header line, commas, fields quoted
 * when they hold a comma, a quote or a line break; an unknown figure is
 * an empty field), for plots (--csv, a row per event) and for lab
 * scripts that collect runs (--summary-csv, a row per run). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static const char events_header[] =
  "time_s,action,rwbs,sector,sectors,bios,queued_requests,queued_bios,"
  "device_requests,latency_s";

static const char summary_header[] =
  "trace,run,start,file,events,q_events,i_events,m_events,d_events,"
  "c_events,other_events,span_s,"
  "write_dispatches,write_bytes,write_sequential,write_mb_s,"
  "read_dispatches,read_bytes,read_sequential,read_mb_s,"
  "flushes,discards,bios_dispatched,requests_dispatched,"
  "queue_requests_mean,queue_requests_max,queue_bios_mean,queue_bios_max,"
  "device_requests_mean,device_requests_max,busy_s,busy_fraction,"
  "limited_by,"
  "q2d_n,q2d_p50_us,q2d_p90_us,q2d_p99_us,q2d_max_us,"
  "q2i_n,q2i_p50_us,q2i_p90_us,q2i_p99_us,q2i_max_us,"
  "i2d_n,i2d_p50_us,i2d_p90_us,i2d_p99_us,i2d_max_us,"
  "d2c_n,d2c_p50_us,d2c_p90_us,d2c_p99_us,d2c_max_us,"
  "q2c_n,q2c_p50_us,q2c_p90_us,q2c_p99_us,q2c_max_us,"
  "g_events,s_events,plugs,unplugs,timer_unplugs";

/* ",TEXT", quoted if it must be; the first field without the comma. */
static void
text (FILE *out, const char *s, bool first)
{
  if (!first)
    fputc (',', out);
  if (strpbrk (s, ",\"\r\n") == NULL) {
    fputs (s, out);
    return;
  }
  fputc ('"', out);
  for (; *s; s++) {
    if (*s == '"')
      fputc ('"', out);
    fputc (*s, out);
  }
  fputc ('"', out);
}

/* ",X" with PRECISION decimals, or "," for NAN. */
static void
number (FILE *out, double x, int precision)
{
  if (isnan (x))
    fputc (',', out);
  else
    fprintf (out, ",%.*f", precision, x);
}

static void
count (FILE *out, uint64_t n)
{
  fprintf (out, ",%" PRIu64, n);
}

void
csv_events_header (FILE *out)
{
  fprintf (out, "%s\n", events_header);
}

void
csv_event_row (FILE *out, const struct trace_event *ev, const struct flow *f,
               const struct flow_step *step)
{
  fprintf (out, "%" PRIu64 ".%09" PRIu64 ",%s,%s,", ev->time_ns / 1000000000,
           ev->time_ns % 1000000000, ev->action, ev->rwbs);
  if (ev->has_sectors)
    fprintf (out, "%" PRIu64, ev->sector);
  count (out, ev->nsect);
  if (strchr ("DC", ev->action[0]))
    count (out, step->bios);
  else
    fputc (',', out);
  count (out, f->n_queued_requests);
  count (out, f->n_queued_bios);
  count (out, f->n_at_device);
  number (out, step->latency, 9);
  fputc ('\n', out);
}

FILE *
summary_open (const char *path)
{
  char first[sizeof summary_header + 1];
  FILE *fp = fopen (path, "a+");
  long size;

  if (fp == NULL || fseek (fp, 0, SEEK_END) == -1
      || (size = ftell (fp)) == -1) {
    fprintf (stderr, "dmcrypt-trace: %s: %s\n", path, strerror (errno));
    if (fp)
      fclose (fp);
    return NULL;
  }
  if (size == 0) {
    fprintf (fp, "%s\n", summary_header);
    return fp;
  }
  rewind (fp);
  if (fgets (first, sizeof first, fp) == NULL
      || strncmp (first, summary_header, strlen (summary_header)) != 0
      || first[strlen (summary_header)] != '\n') {
    fprintf (stderr, "dmcrypt-trace: %s: its first line is not this "
             "version's --summary-csv header: not appending to it\n", path);
    fclose (fp);
    return NULL;
  }
  return fp;
}

/* The value of KEY= in a run marker ("start=T pid=P dev=M,N file=F"):
 * up to the next space, or for the last key, file=, the rest. */
static char *
marker_field (const char *marker, const char *key)
{
  const char *p = marker;
  size_t klen = strlen (key);
  bool last = strcmp (key, "file=") == 0;

  while (marker && (p = strstr (p, key)) != NULL) {
    if (p == marker || p[-1] == ' ')
      return strndup (p + klen, last ? strlen (p + klen)
                      : strcspn (p + klen, " "));
    p += klen;
  }
  return strdup ("");
}

static void
latency_fields (FILE *out, const struct vec *x)
{
  count (out, x->n);
  number (out, percentile (x, 50) * 1e6, 3);
  number (out, percentile (x, 90) * 1e6, 3);
  number (out, percentile (x, 99) * 1e6, 3);
  number (out, x->n ? x->v[x->n - 1] * 1e6 : NAN, 3);
}

static void
direction_fields (FILE *out, const struct analysis *a, int dir)
{
  double seq = analysis_sequential (a, dir);

  count (out, a->dir[dir].count);
  count (out, a->dir[dir].bytes);
  number (out, seq < 0 ? NAN : seq, 6);
  number (out, analysis_throughput (a, dir), 3);
}

/* Depths and the device's busy time. */
static void
queue_fields (FILE *out, const struct analysis *a)
{
  bool bq = analysis_has_block_queue (a);
  double busy = analysis_busy (a);

  if (bq) {
    count (out, a->flow.bios_dispatched);
    count (out, a->flow.requests_dispatched);
    number (out, analysis_mean_depth (a, &a->queued_requests), 6);
    count (out, a->queued_requests.max);
    number (out, analysis_mean_depth (a, &a->queued_bios), 6);
    count (out, a->queued_bios.max);
  }
  else
    fputs (",,,,,,", out);
  number (out, analysis_mean_depth (a, &a->at_device), 6);
  count (out, a->at_device.max);
  number (out, a->at_device.union_ns / 1e9, 9);
  number (out, busy, 6);
  text (out, isnan (busy) ? "" : busy < BUSY_DEVICE_LIMITED ? "host"
        : "device", false);
}

int
summary_row (FILE *out, struct analysis *a, const char *trace, size_t run,
             const char *marker)
{
  char *start = marker_field (marker, "start="),
    *file = marker_field (marker, "file=");
  const struct flow *f = &a->flow;

  if (start == NULL || file == NULL) {
    perror ("dmcrypt-trace: strdup");
    exit (1);
  }
  analysis_finish (a);
  text (out, trace, true);
  count (out, run);
  text (out, start, false);
  text (out, file, false);
  count (out, a->events);
  count (out, a->queued_n);
  count (out, a->inserted_n);
  count (out, a->merged_n);
  count (out, a->dispatched_n);
  count (out, a->completed_n);
  count (out, a->other_n);
  number (out, analysis_span (a), 9);
  direction_fields (out, a, 1);
  direction_fields (out, a, 0);
  count (out, a->flushes);
  count (out, a->discards);
  queue_fields (out, a);
  latency_fields (out, &f->q2d);
  latency_fields (out, &f->q2i);
  latency_fields (out, &f->i2d);
  latency_fields (out, &f->d2c);
  latency_fields (out, &f->q2c);
  count (out, a->getrq_n);
  count (out, a->sleep_n);
  count (out, a->plug_n);
  count (out, a->unplug_n);
  count (out, a->timer_unplug_n);
  fputc ('\n', out);
  free (start);
  free (file);
  return ferror (out) ? -1 : 0;
}
