/* scheduler=fifo: dispatch in the order encryption finished, as dm-crypt
 * did before Linux 4.0 and as submit_from_crypt_cpus still does. */
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
