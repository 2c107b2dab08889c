/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Linux 3.16's dirty accounting formulas, in pages (model.h). */
#include "model.h"

#define NS_PER_S 1000000000ULL
/* fs/fs-writeback.c: MIN_WRITEBACK_PAGES, 4 MiB of pages. */
#define MIN_WRITEBACK_PAGES ((4096ULL << 10) / WB_PAGE_BYTES)
/* include/linux/writeback.h: a writeback chunk's share of the limit. */
#define DIRTY_SCOPE 8
/* mm/backing-dev.c: INIT_BW, a new bdi's write bandwidth, 100 MiB/s. */
#define INIT_BW_PPS ((100ULL << 20) / WB_PAGE_BYTES)

/* global_dirty_limits: both thresholds are ratios of the dirtyable
 * memory, and the background one at most half the limit. */
void
wb_limits_of (const struct wb_config *c, struct wb_limits *l)
{
  uint64_t memory = c->memory_bytes / WB_PAGE_BYTES;

  l->thresh = c->dirty_ratio * memory / 100;
  l->background = c->background_ratio * memory / 100;
  if (l->background >= l->thresh)
    l->background = l->thresh / 2;
  /* dirty_freerun_ceiling, and bdi_position_ratio's setpoint, where
   * the throttled writer's rate equals the writeback rate. */
  l->freerun = (l->thresh + l->background) / 2;
  l->setpoint = (l->freerun + l->thresh) / 2;
}

/* writeback_chunk_size for WB_SYNC_NONE: half a second of the measured
 * bandwidth, at most an eighth of the dirty limit, plus 4 MiB, rounded
 * down to 4 MiB (the background work's nr_pages is LONG_MAX). */
uint64_t
wb_chunk_pages (uint64_t avg_pps, uint64_t thresh_pages)
{
  uint64_t pages = avg_pps / 2;

  if (pages > thresh_pages / DIRTY_SCOPE)
    pages = thresh_pages / DIRTY_SCOPE;
  pages += MIN_WRITEBACK_PAGES;
  return pages / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES;
}

/* writepage_delalloc: when the call has fewer pages left than the
 * delalloc range it just allocated, it may write the range if under
 * 2 x 8192 pages, else 8192 pages (which can also lower a larger
 * writeback chunk). */
uint64_t
wb_delalloc_adjust (uint64_t nr_left, uint64_t delalloc)
{
  uint64_t thresh = 8192;

  if (nr_left >= delalloc)
    return nr_left;
  if (delalloc < thresh * 2)
    thresh = delalloc;
  return delalloc < thresh ? delalloc : thresh;
}

void
wb_bandwidth_init (struct wb_bandwidth *b, uint64_t now_ns)
{
  b->write_pps = INIT_BW_PPS;
  b->avg_pps = INIT_BW_PPS;
  b->stamp_ns = now_ns;
  b->written_stamp = 0;
}

static uint64_t
roundup_pow_of_two (uint64_t x)
{
  uint64_t p = 1;

  while (p < x)
    p <<= 1;
  return p;
}

/* bdi_update_write_bandwidth: the pages written since the last update
 * over a period of 3 s (in jiffies, rounded up to a power of two),
 * the rest of the period at the old estimate; avg_write_bandwidth
 * follows it an eighth of the way, only when the estimate turned. */
static void
update_write_bandwidth (struct wb_bandwidth *b, uint64_t elapsed,
                        uint64_t period, unsigned hz, uint64_t written)
{
  uint64_t avg = b->avg_pps, old = b->write_pps, bw;

  bw = (written - b->written_stamp) * hz;
  if (elapsed > period) {
    b->write_pps = b->avg_pps = bw / elapsed;
    return;
  }
  bw = (bw + old * (period - elapsed)) / period;
  if (avg > old && old >= bw)
    avg -= (avg - old) >> 3;
  if (avg < old && old <= bw)
    avg += (old - avg) >> 3;
  b->write_pps = bw;
  b->avg_pps = avg;
}

/* __bdi_update_bandwidth: no more often than BANDWIDTH_INTERVAL,
 * max(HZ / 5, 1) jiffies; elapsed time counts in jiffies. */
void
wb_bandwidth_update (struct wb_bandwidth *b, unsigned hz, uint64_t now_ns,
                     uint64_t written)
{
  uint64_t interval = hz / 5 > 1 ? hz / 5 : 1;
  uint64_t elapsed = (now_ns - b->stamp_ns) * hz / NS_PER_S;

  if (now_ns < b->stamp_ns || elapsed < interval)
    return;
  update_write_bandwidth (b, elapsed, roundup_pow_of_two (3ULL * hz), hz,
                          written);
  b->written_stamp = written;
  b->stamp_ns = now_ns;
}
