/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The deadline elevator of the block queue (blkq.h): mq-deadline's
 * choice of the next request (block/mq-deadline.c, 6.x:
 * __dd_dispatch_request), for the dispatching epoch's requests, which
 * blkq.c keeps sorted per direction and in FIFO order. */
#include <stddef.h>

#include "blkq-int.h"

static struct request *
first_from (struct epoch *ep, int dir, uint64_t pos)
{
  return request_of_start (tree_ceiling (ep->by_start[dir], pos));
}

static bool
expired (const struct blkq *q, const struct request *r, uint64_t now)
{
  uint64_t expire = blkq_dir (r->rq.op) == DIR_READ
    ? q->cfg.read_expire : q->cfg.write_expire;

  return now >= r->rq.insert_time && now - r->rq.insert_time >= expire;
}

struct request *
deadline_pick (struct blkq *q, struct epoch *ep, uint64_t now)
{
  struct request *r = first_from (ep, q->last_dir, q->pos[q->last_dir]);
  int dir;

  if (r && q->batching < q->cfg.fifo_batch)
    q->batching++;
  else {
    /* A new batch: reads, unless writes sat through enough read
     * batches. */
    dir = DIR_WRITE;
    if (ep->fifo[DIR_READ].head
        && !(ep->fifo[DIR_WRITE].head
             && q->starved++ >= q->cfg.writes_starved))
      dir = DIR_READ;
    if (dir == DIR_WRITE)
      q->starved = 0;
    r = first_from (ep, dir, q->pos[dir]);
    if (r == NULL || expired (q, ep->fifo[dir].head, now))
      r = ep->fifo[dir].head;
    q->last_dir = dir;
    q->batching = 1;
  }
  q->pos[blkq_dir (r->rq.op)] = r->rq.sector;
  return r;
}
