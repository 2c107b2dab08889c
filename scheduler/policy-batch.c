/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scheduler=batch: sorted, but a round dispatches at most BATCH_CHUNKS
 * chunks, and the rounds sweep upwards.
 *
 * Why compare it with sorted: dm-crypt's write-out (and scheduler=sorted)
 * writes in one round everything that arrived while the previous round
 * was being written.  Under a burst a round grows to the whole in-flight
 * cap (max-inflight, 64 MiB: 512 chunks of 128 KiB), and a write that
 * arrives meanwhile -- an fsync's -- waits for all of it before it is even
 * sorted in.  A cap bounds how long a round takes; what it leaves over
 * goes into the next round, sorted together with the newcomers.
 *
 * A cap alone would starve: a steady flow of writes below a left-over
 * chunk would pass it round after round.  So each round starts at the
 * first sector at or above the head (where the last write ended) and
 * goes up, the lower sectors after (C-SCAN, as the elevators below us
 * do): a chunk waits at most until the sweep comes round to it.  When
 * nothing lies behind the head, a round is ordered as under sorted.
 *
 * This file is also the example of a policy: a name, a summary, an order
 * function over a linked batch, the fields the stage honours (policy.h),
 * state if needed (create/destroy; none here); then one line in policy.c
 * and the scheduler= lists of the documentation. */
#include <stddef.h>

#include "policy.h"

/* Chunks a round: 64 x 128 KiB (the default max-write-size) = 8 MiB,
 * about 50 ms of a 150 MB/s disk: enough to keep a device streaming and
 * give the sort something to work on, short enough for a waiting write. */
#define BATCH_CHUNKS 64

static struct wo_item *
batch_order (void *state, struct wo_item *batch, uint64_t head)
{
  struct wo_item *sorted = writeout_policy_sorted.order (state, batch, head);
  struct wo_item **cut = &sorted, *start, *last;

  while (*cut && (*cut)->sector < head)
    cut = &(*cut)->next;
  if (*cut == NULL || cut == &sorted)
    return sorted;              /* all above the head, or all below */
  /* Rotate: [head, end) first, then [0, head). */
  start = *cut;
  for (last = start; last->next; last = last->next)
    ;
  *cut = NULL;
  last->next = sorted;
  return start;
}

const struct writeout_policy writeout_policy_batch = {
  .name = "batch",
  .summary = "ascending sweeps from the head, a bounded number of chunks "
             "a round",
  .order = batch_order,
  .max_round = BATCH_CHUNKS,
  .hold_for_encrypting = true,
  .sweeps_from_head = true,
};
