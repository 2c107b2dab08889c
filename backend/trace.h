/* Backend IO events in blkparse's default text layout, one line each:
 *
 *   maj,min cpu seq time pid action rwbs sector + count [name]
 *   "  8,0    1        1     0.000000000  1234  Q   W 2048 + 8 [nbdkit]"
 *
 * so that "grep -w D" and tools written for blkparse work on it.  Q is a
 * chunk queued at the engine, D its dispatch to the backend, C the
 * completion (with [errno] in place of the name, as blkparse prints).
 * Sectors are 512-byte units on the backing file or device. */
#ifndef DMCRYPT_TRACE_H
#define DMCRYPT_TRACE_H

#include <stdint.h>

struct trace;

/* Opens PATH for appending.  DEV_MAJOR:DEV_MINOR label every line.
 * Returns NULL after nbdkit_error. */
struct trace *trace_open (const char *path, unsigned dev_major,
                          unsigned dev_minor);

/* Flushes and closes.  T may be NULL. */
void trace_close (struct trace *t);

/* Records one event.  ACTION is 'Q', 'D' or 'C'; RWBS as blkparse
 * spells it ("R", "W", "WFS", "FWS", "D"...); NSECT 0 for a flush.
 * ERROR (an errno, 0 for success) is printed on C events.  T may be
 * NULL (does nothing).  Thread-safe. */
void trace_event (struct trace *t, char action, const char *rwbs,
                  uint64_t sector, uint64_t nsect, int error);

#endif /* DMCRYPT_TRACE_H */
