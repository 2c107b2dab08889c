/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Backend IO events in blkparse's default text layout, one line each:
 *
 *   maj,min cpu seq time pid action rwbs sector + count [name]
 *   "  8,0    1        1     0.000000000  1234  Q   W 2048 + 8 [nbdkit]"
 *
 * so that "awk '$6 == "D"'" and tools written for blkparse work on it.
 * The actions, as blktrace means them: Q a chunk queued at the engine, I
 * a bio inserted in the block queue as a new request, M a bio merged
 * into a queued request (I and M name the bio's own sectors), D a
 * request's dispatch to the device, C its completion (D and C name the
 * request's sectors, merged bios included; C has [errno] in place of the
 * name, as blkparse prints).  Sectors are 512-byte units on the backing
 * file or device.
 *
 * A simulated block layer adds blktrace's G (a request allocated for a
 * bio), S (its submitter sleeps: no request free), P (the queue is
 * plugged), U (unplugged, with the requests allocated) and UT (the
 * unplug timer fired), as blkparse prints them.
 *
 * Each open appends a run: first a marker in blkparse's message layout,
 *
 *   "  8,0    1        0     0.000000000     0  m   N dmcrypt-run
 *    start=2026-12-01T10:00:00.123456Z pid=1234 dev=8,0 file=/img"
 *
 * (one line), then the run's events, numbered from 1 and timed from the
 * marker, or by the run's own clock (trace_set_clock).  The file only
 * ever holds whole lines. */
#ifndef DMCRYPT_TRACE_H
#define DMCRYPT_TRACE_H

#include <stdint.h>

struct trace;

/* Opens PATH for appending and writes the run marker at once.
 * DEV_MAJOR:DEV_MINOR label every line; IMAGE is the backing file the
 * marker names (bytes below 0x20, 0x7f and '\' as \ooo octal).  Returns
 * NULL after nbdkit_error. */
struct trace *trace_open (const char *path, unsigned dev_major,
                          unsigned dev_minor, const char *image);

/* Bytes the file held before this run's marker (earlier runs): 0 for
 * a new or empty file, or one that is not a regular file. */
uint64_t trace_existing_bytes (const struct trace *t);

/* Writes what is buffered and closes.  T may be NULL. */
void trace_close (struct trace *t);

/* Stamps every later event of the run with NOW_NS (ARG) instead of the
 * wall-clock time since the marker: nanoseconds since the run began on
 * the caller's clock (a simulated device's model time), so that Q, I, M,
 * D and C of one run share one clock.  NOW_NS NULL goes back to the wall
 * clock.  Set it before the first event and leave it: a change mid-run
 * mixes two clocks in one run.  NOW_NS is called once per event, with
 * the trace's lock held (so a clock that never goes back gives times
 * that never go back down the file), in the thread that records the
 * event (so it may read that thread's state, such as the model time of
 * the IO it is tracing); it must not record events itself.  T may be
 * NULL (does nothing). */
void trace_set_clock (struct trace *t, uint64_t (*now_ns) (void *arg),
                      void *arg);

/* Records one event.  ACTION is 'Q', 'I', 'M', 'D' or 'C'; RWBS as
 * blkparse spells it ("R", "W", "WFS", "FWS", "D"...); NSECT 0 for a
 * flush.
 * ERROR (an errno, 0 for success) is printed on C events.  T may be
 * NULL (does nothing).  Thread-safe.  Lines are buffered (1 MiB) and
 * reach the file whole. */
void trace_event (struct trace *t, char action, const char *rwbs,
                  uint64_t sector, uint64_t nsect, int error);

/* Whom an event is recorded for: a simulated block layer records the
 * submitter of a bio, not the thread that happens to queue it.  CPU -1
 * is the calling thread's CPU, NAME NULL its name. */
struct trace_who
{
  int cpu;
  const char *name;
};

/* trace_event for WHO (NULL: the calling thread).  ACTION may also be
 * 'G' (a request allocated for the bio) or 'S' (its submitter sleeps:
 * none free), which blkparse prints as "sector + count [name]". */
void trace_event_by (struct trace *t, char action, const char *rwbs,
                     uint64_t sector, uint64_t nsect, int error,
                     const struct trace_who *who);

/* A plug event, in blkparse's layout: ACTION "P" (the queue plugged:
 * "[name]"), "U" (unplugged) or "UT" (the unplug timer fired), both
 * "[name] COUNT" with COUNT the requests allocated; rwbs "N".  T may
 * be NULL (does nothing). */
void trace_plug (struct trace *t, const char *action, unsigned count,
                 const struct trace_who *who);

#endif /* DMCRYPT_TRACE_H */
