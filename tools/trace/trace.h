/* dmcrypt-trace's two halves: reading a trace (reader.c) and the
 * statistics of one run (analysis.c). */
#ifndef DMCRYPT_TRACE_TOOL_H
#define DMCRYPT_TRACE_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAX_LINE 65536    /* bytes; an event line is about 70 */

struct trace_event
{
  double time;                  /* seconds since the run began */
  char action[3];               /* "Q", "D", "C", or another of blkparse's */
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
 * dispatch, for gnuplot. */
struct analysis *analysis_new (FILE *plot);
void analysis_add (struct analysis *a, const struct trace_event *ev);
uint64_t analysis_events (const struct analysis *a);
uint64_t analysis_dispatches (const struct analysis *a);  /* reads, writes */
double analysis_span (const struct analysis *a);          /* seconds */

/* The fraction of write dispatches after the first that started where
 * the previous one ended, 1 for a single write; -1 with no writes. */
double analysis_write_fraction (const struct analysis *a);

/* The run's section, indented by two spaces; every figure with its
 * unit.  Sorts the samples, so call it once. */
void analysis_print (struct analysis *a);
void analysis_free (struct analysis *a);

#endif /* DMCRYPT_TRACE_TOOL_H */
