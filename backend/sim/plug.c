/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The queue plug of 2.6.32 (blkq.h): an empty queue is plugged when a
 * request is added (__make_request, blk_plug_device), and nothing is
 * dispatched until it is unplugged: when unplug_thresh requests wait
 * (elv_insert), when a submitter sleeps on its IO (blk_unplug from
 * sync_page) or for a request (get_request_wait), or when the unplug
 * timer fires (blk_unplug_timeout, then kblockd's blk_unplug_work).
 * The timer is armed with mod_timer (jiffies + unplug_delay), so it
 * fires on a jiffy boundary.  A queue of a non-rotational device with
 * tags is never plugged (queue_should_plug).  Since 2.6.39 the plug is
 * the submitting task's (blk_start_plug); a workqueue thread such as
 * kcryptd holds none, so 3.16 and 4.0 plug nothing here. */
#include <stddef.h>
#include <stdint.h>

#include "blkq-int.h"

void
plug_init (struct blkq *q)
{
  struct plug *p = &q->plug;

  p->enabled = q->cfg.layer == BLKQ_LEGACY_PLUG
    && !(q->cfg.nonrot && q->cfg.device_depth > 1);
  /* blk_queue_make_request: 3 ms, at least a jiffy. */
  p->delay = 3 * q->cfg.hz / 1000;
  if (p->delay == 0)
    p->delay = 1;
  p->timer = UINT64_MAX;
}

void
plug_before_add (struct blkq *q, uint64_t now)
{
  struct plug *p = &q->plug;

  if (!p->enabled || q->queued > 0 || p->plugged)
    return;
  p->plugged = true;
  p->timer = blkq_jiffy_start (q, blkq_jiffies (q, now) + p->delay);
  blkq_emit (q, BLKQ_EV_PLUG, NULL, 0);
}

void
plug_after_add (struct blkq *q, uint64_t now)
{
  /* nrq: requests allocated less those at the driver: the queued. */
  if (q->plug.plugged && q->queued >= BLKQ_UNPLUG_THRESH)
    plug_remove (q, now);
}

bool
plug_remove (struct blkq *q, uint64_t now)
{
  struct plug *p = &q->plug;

  if (!p->plugged)
    return false;
  p->plugged = false;
  p->timer = UINT64_MAX;
  if (now > q->release)
    q->release = now;
  blkq_emit (q, BLKQ_EV_UNPLUG, NULL, rqalloc_count (q));
  return true;
}

void
plug_run_timer (struct blkq *q, uint64_t now)
{
  uint64_t t = q->plug.timer;

  if (t > now)
    return;
  blkq_emit (q, BLKQ_EV_UNPLUG_TIMER, NULL, rqalloc_count (q));
  plug_remove (q, t);
}
