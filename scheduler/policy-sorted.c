/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scheduler=sorted (default): each round is dispatched in ascending
 * backend sector order, equal sectors in arrival order, as dm-crypt's
 * dmcrypt_write thread does since Linux 4.0 ("dm crypt: sort writes").
 *
 * The kernel inserts into an rb-tree under its lock; here the stage's
 * lock only links a list, and the stolen batch is put in order by a
 * stable merge sort outside the lock: the same order, with the
 * O(n log n) work off the path every worker contends on. */
#include <stddef.h>

#include "policy.h"

/* Merges two sorted lists; on equal sectors A's items (earlier
 * arrivals) come first, which keeps the sort stable. */
static struct wo_item *
merge (struct wo_item *a, struct wo_item *b)
{
  struct wo_item head, *tail = &head;

  while (a && b) {
    if (b->sector < a->sector) {
      tail->next = b;
      b = b->next;
    }
    else {
      tail->next = a;
      a = a->next;
    }
    tail = tail->next;
  }
  tail->next = a ? a : b;
  return head.next;
}

static struct wo_item *
sort_list (struct wo_item *batch)
{
  struct wo_item *slow = batch, *fast, *second;

  if (batch == NULL || batch->next == NULL)
    return batch;
  /* Split in the middle, sort each half, merge. */
  for (fast = batch->next; fast && fast->next; fast = fast->next->next)
    slow = slow->next;
  second = slow->next;
  slow->next = NULL;
  return merge (sort_list (batch), sort_list (second));
}

static struct wo_item *
sorted_order (void *state, struct wo_item *batch, uint64_t head)
{
  (void) state;
  (void) head;
  return sort_list (batch);
}

const struct writeout_policy writeout_policy_sorted = {
  .name = "sorted",
  .summary = "dispatch each round in ascending sector order (default)",
  .order = sorted_order,
  .hold_for_encrypting = true,
};
