/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmcrypt-trace's two halves: reading a trace (reader.c) and the
 * statistics of one run (analysis.c, following IOs across merges in
 * flow.c, reported by print.c and csv.c). */
#ifndef DMCRYPT_TRACE_TOOL_H
#define DMCRYPT_TRACE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAX_LINE 65536    /* bytes; an event line is about 70 */

struct trace_event
{
  uint64_t time_ns;             /* since the run began, exactly */
  double time;                  /* the same in seconds */
  char action[3];               /* "Q", "I", "M", "D", "C", or another */
  char rwbs[8];                 /* "R", "W", "FWS", "D"... */
  bool has_sectors;             /* "sector + count" follows */
  uint64_t sector, nsect;       /* 512-byte sectors */
};

enum line_kind { LINE_END, LINE_EVENT, LINE_RUN, LINE_ERROR };

struct trace_reader
{
  FILE *fp;
  const char *name;             /* as given, for messages */
  unsigned long lineno;
  bool in_summary;              /* inside blkparse's closing summary */
  size_t len;                   /* bytes in line */
  char line[TRACE_MAX_LINE];
};

/* Opens PATH ("-": standard input).  Returns -1 after a one-line
 * message on stderr naming PATH. */
int reader_open (struct trace_reader *r, const char *path);

/* Reads up to the next event or run marker.  LINE_EVENT fills EV;
 * LINE_RUN points RUN at the marker's fields ("start=... pid=... dev=...
 * file=...", valid until the next call).  Blank lines, blkparse's other
 * messages and its closing summary are passed over.  LINE_ERROR comes
 * after a one-line message naming the file and line (binary data, a
 * LUKS header, a line that is not an event, a read error). */
enum line_kind reader_next (struct trace_reader *r, struct trace_event *ev,
                            const char **run);

void reader_close (struct trace_reader *r);

struct analysis;

/* PLOT, if not NULL, gets "time sector write bytes" per read or write
 * dispatch, for gnuplot; CSV, if not NULL, the --csv header and a row
 * per Q, I, M, D and C event (csv.c). */
struct analysis *analysis_new (FILE *plot, FILE *csv);
void analysis_add (struct analysis *a, const struct trace_event *ev);
uint64_t analysis_events (const struct analysis *a);
uint64_t analysis_dispatches (const struct analysis *a);  /* reads, writes */
double analysis_span (const struct analysis *a);          /* seconds */

/* For plots: the run's first and last event (seconds) and the end of
 * the highest read or write dispatch (sectors). */
void analysis_plot_range (const struct analysis *a, double *first,
                          double *last, uint64_t *sector_end);

/* The fraction of write dispatches after the first that started where
 * the previous one ended, 1 for a single write; -1 with no writes. */
double analysis_write_fraction (const struct analysis *a);

/* After the last event: closes what is still queued at the run's end,
 * sorts the samples and sums the intervals.  Once; the reports call it. */
void analysis_finish (struct analysis *a);

/* The run's section, indented by two spaces; every figure with its
 * unit. */
void analysis_print (struct analysis *a);

/* --summary-csv FILE: opens FILE to append rows, writing the header
 * first into an empty or new file, or refusing (NULL after a one-line
 * message) a file that begins with another header. */
FILE *summary_open (const char *path);
/* One row: the run's figures, after TRACE (the file's name), RUN (from
 * 1) and the run's MARKER (NULL: none).  -1 on a write error. */
int summary_row (FILE *out, struct analysis *a, const char *trace,
                 size_t run, const char *marker);

void analysis_free (struct analysis *a);

/* --png (plot.c): draws run A from DATA (its PLOT rows, flushed) into
 * PNG with gnuplot: sector over time, by direction, above MB/s over
 * time, under TITLE (lines broken at '\n') and a last line on the
 * device's busy time, HOST-LIMITED below BUSY_DEVICE_LIMITED.  Finishes
 * A.  -1 when gnuplot could not be run or failed. */
int plot_png (struct analysis *a, const char *data, const char *png,
              const char *title);

#endif /* DMCRYPT_TRACE_TOOL_H */
