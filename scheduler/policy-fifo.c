/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scheduler=fifo: the writer dispatches in the order encryption
 * finished, without sorting.  (dm-crypt before Linux 4.0 had no writer:
 * its crypting threads submitted their own writes, concurrently, as
 * submit_from_crypt_cpus still does; docs/scheduling.md compares the
 * three.) */
#include <stddef.h>

#include "policy.h"

static struct wo_item *
fifo_order (void *state, struct wo_item *batch, uint64_t head)
{
  (void) state;
  (void) head;
  return batch;
}

const struct writeout_policy writeout_policy_fifo = {
  .name = "fifo",
  .summary = "dispatch encrypted writes in completion order",
  .order = fifo_order,
};
