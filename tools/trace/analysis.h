/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One run's figures, shared by what gathers them (analysis.c) and what
 * reports them (print.c, csv.c). */
#ifndef DMCRYPT_TRACE_ANALYSIS_H
#define DMCRYPT_TRACE_ANALYSIS_H

#include "flow.h"
#include "trace.h"

struct stream                   /* dispatches of one direction */
{
  uint64_t count, sequential, bytes;
  uint64_t last_end;            /* sector */
  double first, last;           /* times of the first and last dispatch */
  struct vec seeks;             /* distances, sectors */
};

struct analysis
{
  uint64_t events, queued_n, inserted_n, merged_n, dispatched_n,
    completed_n, other_n;
  /* The block layer's own events, not IO: G (a request allocated),
   * S (a submitter slept for one), P (plugged), U (unplugged), UT (the
   * unplug timer fired). */
  uint64_t getrq_n, sleep_n, plug_n, unplug_n, timer_unplug_n;
  struct stream dir[2];         /* [0] reads, [1] writes */
  uint64_t flushes, discards;   /* dispatched */
  uint64_t discard_bytes;
  struct flow flow;
  uint64_t first_ns, last_ns;   /* the earliest and latest event */
  uint64_t sector_end;          /* of the highest read or write dispatch */
  FILE *plot;                   /* time sector write bytes, per D */
  FILE *csv;                    /* --csv rows */
  bool finished;                /* analysis_finish done: */
  struct overlap at_device, queued_requests, queued_bios;
};

/* The run's span in ns (0 for no events or one instant). */
uint64_t analysis_span_ns (const struct analysis *a);

/* The run went through a block queue: it holds I or M events. */
bool analysis_has_block_queue (const struct analysis *a);

/* The fraction of the run's span with IO at the device, or NAN when
 * the run had no dispatch or spans no time. */
double analysis_busy (const struct analysis *a);

/* Below this busy fraction the host, not the device, limited a run. */
#define BUSY_DEVICE_LIMITED 0.95

/* The time-weighted mean of what O counted over the run's span. */
double analysis_mean_depth (const struct analysis *a, const struct overlap *o);

/* MB/s (10^6 bytes) of dispatches of direction DIR (0 reads, 1 writes)
 * over the run's whole span; NAN when it spans no time. */
double analysis_throughput (const struct analysis *a, int dir);

/* The sequential fraction of direction DIR's dispatches, as
 * analysis_write_fraction. */
double analysis_sequential (const struct analysis *a, int dir);

/* Event rows for --csv: the header, and one row. */
void csv_events_header (FILE *out);
void csv_event_row (FILE *out, const struct trace_event *ev,
                    const struct flow *f, const struct flow_step *step);

#endif /* DMCRYPT_TRACE_ANALYSIS_H */
