/* Backend IO events in blkparse's default text layout, one line each:
 *
 *   maj,min cpu seq time pid action rwbs sector + count [name]
 *   "  8,0    1        1     0.000000000  1234  Q   W 2048 + 8 [nbdkit]"
 *
 * so that "awk '$6 == "D"'" and tools written for blkparse work on it.  Q is a
 * chunk queued at the engine, D its dispatch to the backend, C the
 * completion (with [errno] in place of the name, as blkparse prints).
 * Sectors are 512-byte units on the backing file or device.
 *
 * Each open appends a run: first a marker in blkparse's message layout,
 *
 *   "  8,0    1        0     0.000000000     0  m   N dmcrypt-run
 *    start=2026-12-01T10:00:00.123456Z pid=1234 dev=8,0 file=/img"
 *
 * (one line), then the run's events, numbered from 1 and timed from the
 * marker.  The file only ever holds whole lines. */
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

/* Records one event.  ACTION is 'Q', 'D' or 'C'; RWBS as blkparse
 * spells it ("R", "W", "WFS", "FWS", "D"...); NSECT 0 for a flush.
 * ERROR (an errno, 0 for success) is printed on C events.  T may be
 * NULL (does nothing).  Thread-safe.  Lines are buffered (1 MiB) and
 * reach the file whole. */
void trace_event (struct trace *t, char action, const char *rwbs,
                  uint64_t sector, uint64_t nsect, int error);

#endif /* DMCRYPT_TRACE_H */
