/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dispatch to a backend's operations.  This is the single place where IO
 * leaves the engine, so the trace point lives here: one "D" event before
 * each call and one "C" event after it. */
#include <errno.h>
#include <stdbool.h>

#include "backend.h"
#include "trace.h"

#define SECTOR_SHIFT 9          /* trace sectors are 512 bytes */

static void
trace_dispatch (struct backend *b, const char *rwbs, uint64_t count,
                uint64_t offset)
{
  if (b->trace && !b->ops->traces_itself)
    trace_event (b->trace, 'D', rwbs, offset >> SECTOR_SHIFT,
                 count >> SECTOR_SHIFT, 0);
}

static int
trace_complete (struct backend *b, const char *rwbs, uint64_t count,
                uint64_t offset, int r)
{
  if (b->trace && !b->ops->traces_itself)
    trace_event (b->trace, 'C', rwbs, offset >> SECTOR_SHIFT,
                 count >> SECTOR_SHIFT, r == -1 ? errno : 0);
  return r;
}

int
backend_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  trace_dispatch (b, "R", count, offset);
  return trace_complete (b, "R", count, offset,
                         b->ops->pread (b, buf, count, offset));
}

int
backend_pwrite (struct backend *b, const void *buf, size_t count,
                uint64_t offset)
{
  backend_note_write (b, count, offset);
  return backend_write_noted (b, buf, count, offset);
}

void
backend_submit_write (struct backend *b, const void *buf, size_t count,
                      uint64_t offset, backend_done_fn done, void *opaque)
{
  if (b->readonly) {
    done (opaque, EROFS);
    return;
  }
  if (b->ops->submit_write == NULL) {
    done (opaque, backend_pwrite (b, buf, count, offset) == -1 ? errno : 0);
    return;
  }
  b->ops->submit_write (b, buf, count, offset, done, opaque);
}

void
backend_submit_read (struct backend *b, void *buf, size_t count,
                     uint64_t offset, backend_done_fn done, void *opaque)
{
  if (b->ops->submit_read == NULL) {
    done (opaque, backend_pread (b, buf, count, offset) == -1 ? errno : 0);
    return;
  }
  b->ops->submit_read (b, buf, count, offset, done, opaque);
}

void
backend_unplug (struct backend *b)
{
  if (b->ops->unplug)
    b->ops->unplug (b);
}

bool
backend_queues_writes (const struct backend *b)
{
  return b->ops->submit_write != NULL;
}

void
backend_note_write (struct backend *b, size_t count, uint64_t offset)
{
  if (!b->readonly)
    trace_dispatch (b, "W", count, offset);
}

int
backend_write_noted (struct backend *b, const void *buf, size_t count,
                     uint64_t offset)
{
  if (b->readonly) {
    errno = EROFS;
    return -1;
  }
  return trace_complete (b, "W", count, offset,
                         b->ops->pwrite (b, buf, count, offset));
}

int
backend_sync (struct backend *b)
{
  if (b->readonly)
    return 0;
  /* A flush carries no sectors: blkparse prints it as "FWS". */
  trace_dispatch (b, "FWS", 0, 0);
  return trace_complete (b, "FWS", 0, 0, b->ops->sync (b));
}

int
backend_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  if (b->readonly) {
    errno = EROFS;
    return -1;
  }
  if (!b->can_discard || b->ops->discard == NULL) {
    errno = EOPNOTSUPP;
    return -1;
  }
  trace_dispatch (b, "D", count, offset);
  return trace_complete (b, "D", count, offset,
                         b->ops->discard (b, count, offset));
}

void
backend_close (struct backend *b)
{
  if (b == NULL)
    return;
  trace_close (b->trace);
  b->trace = NULL;
  b->ops->close (b);
}
