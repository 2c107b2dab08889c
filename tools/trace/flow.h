/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How each IO of a run went: queued at the engine (Q), into the block
 * queue as a new request (I) or merged into a queued one (M), to the
 * device (D), back (C).  I and M name a bio's own sectors, D and C its
 * request's, which may hold many merged bios; so bios are followed one
 * by one:
 *
 *   Q to I or M   the same sectors, length and kind (oldest Q first);
 *   I/M to D      a D takes the queued bios of its kind inside its
 *                 range, no two overlapping (the oldest where they do);
 *   D to C        a C takes the requests at the device of its kind
 *                 inside its range, the same way; every bio of such a
 *                 request completes with it.
 *
 * A D that takes no queued bio (a trace without I and M, or an IO that
 * went round the block queue) is a bio of its own, its Q matched as
 * above.  Limits: bios of the same sectors queued at once are told
 * apart by arrival alone, so their latencies may swap; a bio split
 * across requests, or a request completed in parts, matches nothing. */
#ifndef DMCRYPT_TRACE_FLOW_H
#define DMCRYPT_TRACE_FLOW_H

#include "match.h"
#include "stats.h"

/* What an IO is; only reads and writes have their latencies taken.
 * Flushes and discards count at the device and in the queues. */
enum io_kind { KIND_READ, KIND_WRITE, KIND_DISCARD, KIND_FLUSH, KINDS };

struct flow_step                /* what one event did, for --csv */
{
  uint64_t bios;                /* D, C: bios of what it took; else 0 */
  double latency;               /* seconds; NAN: nothing matched, or Q */
};

struct flow
{
  /* Per bio of a read or write, in seconds. */
  struct vec q2d, q2i, i2d, d2c, q2c;
  /* Who was where, from when to when (ns): bios in the block queue (I
   * or M to D), the requests among them (I to D), requests at the
   * device (D to C).  flow_finish closes what is still open. */
  struct intervals queued_bios, queued_requests, at_device;
  /* The same, counted after the event just added (file order). */
  uint64_t n_queued_bios, n_queued_requests, n_at_device;
  /* Bios dispatched out of the block queue, and their requests. */
  uint64_t bios_dispatched, requests_dispatched;

  struct pending engine;        /* Q events */
  struct ranges block_queue[KINDS];     /* struct bio */
  struct ranges device[KINDS];          /* struct request */
  struct ptrs taken;
};

/* ACTION one of Q, I, M, D, C (others are passed over); KIND an
 * io_kind; TIME_NS since the run began.  STEP gets the wait the event
 * ended: I and M the bio's Q to I/M; D its request's I to D (from the
 * first bio's I), or Q to D for a D that took no queued bio; C its
 * request's D to C. */
void flow_add (struct flow *f, char action, enum io_kind kind,
               uint64_t sector, uint64_t nsect, uint64_t time_ns,
               struct flow_step *step);

/* What is still queued or at the device stays there until END_NS. */
void flow_finish (struct flow *f, uint64_t end_ns);
void flow_free (struct flow *f);

#endif /* DMCRYPT_TRACE_FLOW_H */
