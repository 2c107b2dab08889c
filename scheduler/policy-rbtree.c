/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scheduler=rbtree: the kernel's own write-out, dmcrypt_write as Linux
 * 4.0 ("dm crypt: offload writes to thread", "dm crypt: sort writes")
 * to 6.x have it, without dmcrypt's additions to it (sorted): the
 * encrypted writes are inserted into an rb-tree keyed by sector (equal
 * sectors after those already there); the write-out thread alone, woken
 * by an insertion, steals the whole tree and submits it in ascending
 * order inside one plug (blk_start_plug ... blk_finish_plug), then
 * looks again.  Nothing is held back behind a lower write still being
 * encrypted and no gap is waited for: what was not in the tree when it
 * was stolen goes in the next round, however low it lies.
 *
 * The stage's stable sort of the stolen batch gives the order of the
 * tree's in-order walk; writer_only keeps crypting threads from
 * dispatching rounds themselves, and plugs lets the block layer below
 * see each round's end. */
#include <stddef.h>

#include "policy.h"

static struct wo_item *
rbtree_order (void *state, struct wo_item *batch, uint64_t head)
{
  return writeout_policy_sorted.order (state, batch, head);
}

const struct writeout_policy writeout_policy_rbtree = {
  .name = "rbtree",
  .summary = "the kernel's dmcrypt_write: its thread sorts all that "
             "accumulated and submits it in one plug",
  .order = rbtree_order,
  .writer_only = true,
  .plugs = true,
};
