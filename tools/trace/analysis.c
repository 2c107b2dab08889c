/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The statistics of one run: how sequential the dispatches were, how
 * far the seeks went, how each IO went from Q to C (flow.c) and how
 * busy the device was.  The reports are print.c's and csv.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

struct analysis *
analysis_new (FILE *plot, FILE *csv)
{
  struct analysis *a = calloc (1, sizeof *a);

  if (a == NULL) {
    perror ("dmcrypt-trace: calloc");
    exit (1);
  }
  a->plot = plot;
  a->csv = csv;
  if (csv)
    csv_events_header (csv);
  return a;
}

void
analysis_free (struct analysis *a)
{
  if (a == NULL)
    return;
  vec_free (&a->dir[0].seeks);
  vec_free (&a->dir[1].seeks);
  flow_free (&a->flow);
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

/* What the event's IO is, from blkparse's rwbs; -1: none we follow
 * (no data and no flush, as "N"). */
static int
kind_of (const struct trace_event *ev)
{
  const char *rwbs = ev->rwbs;

  if (!ev->has_sectors || ev->nsect == 0)
    return strchr (rwbs, 'F') ? KIND_FLUSH : -1;
  if (rwbs[0] == 'D')
    return KIND_DISCARD;
  if (strchr (rwbs, 'W'))
    return KIND_WRITE;
  return strchr (rwbs, 'R') ? KIND_READ : -1;
}

/* Per-action counts, and what only dispatches tell. */
static void
count (struct analysis *a, const struct trace_event *ev, int kind)
{
  bool dispatch = ev->action[0] == 'D';

  a->queued_n += ev->action[0] == 'Q';
  a->inserted_n += ev->action[0] == 'I';
  a->merged_n += ev->action[0] == 'M';
  a->dispatched_n += dispatch;
  a->completed_n += ev->action[0] == 'C';
  if (!dispatch)
    return;
  if (!ev->has_sectors)
    a->flushes += strchr (ev->rwbs, 'F') != NULL;
  else if (ev->rwbs[0] == 'D') {
    a->discards++;
    a->discard_bytes += ev->nsect * 512;
  }
  else if (kind == KIND_READ || kind == KIND_WRITE) {
    stream_add (&a->dir[kind == KIND_WRITE], ev);
    if (ev->sector + ev->nsect > a->sector_end)
      a->sector_end = ev->sector + ev->nsect;
    if (a->plot)
      fprintf (a->plot, "%.9f %" PRIu64 " %d %" PRIu64 "\n", ev->time,
               ev->sector, kind == KIND_WRITE, ev->nsect * 512);
  }
}

/* The block layer's events by blkparse's action. */
static void
count_block_layer (struct analysis *a, const struct trace_event *ev)
{
  const char *act = ev->action;

  a->getrq_n += strcmp (act, "G") == 0;
  a->sleep_n += strcmp (act, "S") == 0;
  a->plug_n += strcmp (act, "P") == 0;
  a->unplug_n += strcmp (act, "U") == 0;
  a->timer_unplug_n += strcmp (act, "UT") == 0;
}

void
analysis_add (struct analysis *a, const struct trace_event *ev)
{
  bool followed = ev->action[1] == '\0' && strchr ("QIMDC", ev->action[0]);
  int kind = kind_of (ev);
  struct flow_step step;

  if (a->events++ == 0 || ev->time_ns < a->first_ns)
    a->first_ns = ev->time_ns;
  if (ev->time_ns > a->last_ns)
    a->last_ns = ev->time_ns;
  if (!followed) {
    a->other_n++;
    count_block_layer (a, ev);
    return;
  }
  count (a, ev, kind);
  if (kind < 0)
    return;
  flow_add (&a->flow, ev->action[0], kind, ev->sector, ev->nsect,
            ev->time_ns, &step);
  if (a->csv)
    csv_event_row (a->csv, ev, &a->flow, &step);
}

void
analysis_finish (struct analysis *a)
{
  struct flow *f = &a->flow;

  if (a->finished)
    return;
  a->finished = true;
  flow_finish (f, a->last_ns);
  vec_sort (&a->dir[0].seeks);
  vec_sort (&a->dir[1].seeks);
  vec_sort (&f->q2d);
  vec_sort (&f->q2i);
  vec_sort (&f->i2d);
  vec_sort (&f->d2c);
  vec_sort (&f->q2c);
  intervals_overlap (&f->at_device, &a->at_device);
  intervals_overlap (&f->queued_requests, &a->queued_requests);
  intervals_overlap (&f->queued_bios, &a->queued_bios);
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

void
analysis_plot_range (const struct analysis *a, double *first, double *last,
                     uint64_t *sector_end)
{
  *first = a->first_ns / 1e9;
  *last = a->last_ns / 1e9;
  *sector_end = a->sector_end;
}

uint64_t
analysis_span_ns (const struct analysis *a)
{
  return a->last_ns - a->first_ns;
}

double
analysis_span (const struct analysis *a)
{
  return analysis_span_ns (a) / 1e9;
}

bool
analysis_has_block_queue (const struct analysis *a)
{
  return a->inserted_n + a->merged_n > 0;
}

double
analysis_busy (const struct analysis *a)
{
  if (a->dispatched_n == 0 || analysis_span_ns (a) == 0)
    return NAN;
  return (double) a->at_device.union_ns / analysis_span_ns (a);
}

double
analysis_mean_depth (const struct analysis *a, const struct overlap *o)
{
  if (analysis_span_ns (a) == 0)
    return NAN;
  return (double) o->total_ns / analysis_span_ns (a);
}

double
analysis_throughput (const struct analysis *a, int dir)
{
  if (analysis_span_ns (a) == 0)
    return NAN;
  return a->dir[dir].bytes / analysis_span (a) / 1e6;
}

double
analysis_sequential (const struct analysis *a, int dir)
{
  const struct stream *s = &a->dir[dir];

  if (s->count == 0)
    return -1;
  return s->count > 1 ? (double) s->sequential / (s->count - 1) : 1.0;
}

double
analysis_write_fraction (const struct analysis *a)
{
  return analysis_sequential (a, 1);
}
