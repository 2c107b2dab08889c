/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dd conv=fsync through Linux 3.16's page cache and btrfs, as bios
 * (model.h). */
#include <string.h>

#include "model.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* The seed: dd of 4 GiB (bs=1M) onto btrfs on LUKS on a USB 3 stick,
 * Debian 8's 3.16 on a ThinkPad T440p with 4 CPUs.  Its memory is not
 * said: 8 GiB, the model's common configuration, all of it taken as
 * dirtyable (a desktop's own pages would lower every threshold).  The
 * ratios are 3.16's defaults (vm_dirty_ratio, dirty_background_ratio),
 * HZ Debian's CONFIG_HZ_250, and a bio at most the 240 sectors of
 * usb-storage (max_sectors, drivers/usb/storage/scsiglue.c), which dm
 * stacks onto the crypt device's limits. */
void
wb_config_default (struct wb_config *c)
{
  *c = (struct wb_config) {
    .file_bytes = 4 * GiB, .memory_bytes = 8 * GiB,
    .dirty_ratio = 20, .background_ratio = 10,
    .bio_max_bytes = 240 * 512, .cpus = 4, .dd_cpu = 0,
    .submit_batch = 1, .hz = 250, .seed = 1,
  };
}

const char *
wb_config_check (const struct wb_config *c)
{
  if (c->file_bytes == 0 || c->file_bytes % WB_PAGE_BYTES)
    return "size: not a positive whole number of 4096-byte pages";
  if (c->memory_bytes / WB_PAGE_BYTES < 100)
    return "memory: under 100 pages";
  if (c->dirty_ratio < 1 || c->dirty_ratio > 100)
    return "dirty-ratio: not 1 to 100";
  if (c->background_ratio < 1 || c->background_ratio > 100)
    return "dirty-background-ratio: not 1 to 100";
  if (c->bio_max_bytes == 0 || c->bio_max_bytes % WB_PAGE_BYTES
      || c->bio_max_bytes > 32 * MiB)
    return "bio-max: not 1 to 8192 whole 4096-byte pages";
  if (c->cpus < 1 || c->cpus > 1024)
    return "cpus: not 1 to 1024";
  if (c->dd_cpu >= c->cpus)
    return "dd-cpu: not below cpus";
  if (c->submit_batch < 1 || c->submit_batch > 1000000)
    return "submit-batch: not 1 to 1000000";
  if (c->hz < 24 || c->hz > 10000)
    return "hz: not 24 to 10000";
  return NULL;
}

void
wb_init (struct wb_model *m, const struct wb_config *c)
{
  memset (m, 0, sizeof *m);
  m->cfg = *c;
  wb_limits_of (c, &m->limits);
  wb_bandwidth_init (&m->bw, 0);
  m->phase = WB_WRITING;
  m->total_pages = c->file_bytes / WB_PAGE_BYTES;
  /* A zero state would make xorshift return zeros forever. */
  m->rng = c->seed * 2 + 1;
}

uint64_t
wb_dirty_pages (const struct wb_model *m)
{
  return m->dirtied_pages - m->submitted_pages;
}

uint64_t
wb_writeback_pages (const struct wb_model *m)
{
  return m->submitted_pages - m->completed_pages;
}

/* dd's write()s dirty pages freely until the pages dirty and under
 * writeback reach the setpoint; there balance_dirty_pages holds dd to
 * the rate pages leave writeback (3.16's IO-less throttle, at its
 * equilibrium), so it dirties as many as completed. */
static void
dd_dirty (struct wb_model *m)
{
  uint64_t nr_dirty = m->dirtied_pages - m->completed_pages, more;

  if (nr_dirty >= m->limits.setpoint)
    return;
  more = m->limits.setpoint - nr_dirty;
  if (more > m->total_pages - m->dirtied_pages)
    more = m->total_pages - m->dirtied_pages;
  m->dirtied_pages += more;
}

/* btrfs allocates an extent for the delalloc range that starts at page
 * POS (cow_file_range via writepage_delalloc): the dirty pages from
 * there, at most 128 MiB.  A background writepages call's budget is
 * adjusted to it. */
static void
new_delalloc (struct wb_model *m, uint64_t pos, bool sync)
{
  uint64_t delalloc = m->dirtied_pages - pos;

  if (delalloc > WB_DELALLOC_MAX_PAGES)
    delalloc = WB_DELALLOC_MAX_PAGES;
  m->cow_end_pages = pos + delalloc;
  if (!sync)
    m->chunk_left_pages = wb_delalloc_adjust (m->chunk_left_pages, delalloc);
}

static uint64_t
min3 (uint64_t a, uint64_t b, uint64_t c)
{
  uint64_t m = a < b ? a : b;

  return m < c ? m : c;
}

/* The pages of the next bio: contiguous dirty pages from where
 * writeback stands, at most a largest request, and for the flusher
 * within its writepages call's budget (extent_write_cache_pages stops
 * when nr_to_write runs out, and flushes the bio it was building). */
static uint64_t
next_bio_pages (struct wb_model *m, bool sync)
{
  uint64_t max = m->cfg.bio_max_bytes / WB_PAGE_BYTES, pages = 0;
  uint64_t pos = m->submitted_pages, run;

  while (pages < max && pos < m->dirtied_pages) {
    if (pos >= m->cow_end_pages)
      new_delalloc (m, pos, sync);
    if (!sync && m->chunk_left_pages == 0)
      break;
    run = min3 (max - pages, m->cow_end_pages - pos,
                m->dirtied_pages - pos);
    if (!sync && run > m->chunk_left_pages)
      run = m->chunk_left_pages;
    pages += run;
    pos += run;
    if (!sync)
      m->chunk_left_pages -= run;
  }
  return pages;
}

static void
emit_bio (struct wb_model *m, bool sync, struct wb_bio *bio)
{
  uint64_t pages = next_bio_pages (m, sync);

  *bio = (struct wb_bio) {
    .seq = m->seq++,
    .offset_bytes = m->submitted_pages * WB_PAGE_BYTES,
    .length_bytes = pages * WB_PAGE_BYTES,
    .cpu = wb_submit_cpu (m, sync), .sync = sync,
  };
  m->submitted_pages += pages;
  /* The scan found no more dirty pages: the call ends early. */
  if (wb_dirty_pages (m) == 0)
    m->chunk_left_pages = 0;
  if (sync)
    m->sync_bios++;
  else
    m->async_bios++;
}

/* dd's last write() returned: fsync (filemap_fdatawrite_range with
 * WB_SYNC_ALL and nr_to_write LONG_MAX) takes every dirty page. */
static void
start_fsync (struct wb_model *m, uint64_t now_ns)
{
  m->phase = WB_FSYNC;
  m->fsync_start_ns = now_ns;
  m->chunk_left_pages = 0;
}

static enum wb_action
next_writing (struct wb_model *m, uint64_t now_ns, struct wb_bio *bio)
{
  if (m->chunk_left_pages == 0) {
    dd_dirty (m);
    if (m->dirtied_pages == m->total_pages) {
      start_fsync (m, now_ns);
      return wb_next (m, now_ns, bio);
    }
    /* over_bground_thresh: the flusher's next chunk, or sleep. */
    if (wb_dirty_pages (m) <= m->limits.background)
      return WB_WAIT;
    m->chunk_left_pages = wb_chunk_pages (m->bw.avg_pps, m->limits.thresh);
  }
  emit_bio (m, false, bio);
  return WB_SUBMIT;
}

enum wb_action
wb_next (struct wb_model *m, uint64_t now_ns, struct wb_bio *bio)
{
  switch (m->phase) {
  case WB_WRITING:
    return next_writing (m, now_ns, bio);
  case WB_FSYNC:
    if (wb_dirty_pages (m) > 0) {
      emit_bio (m, true, bio);
      return WB_SUBMIT;
    }
    /* filemap_fdatawait: every page under writeback, the flusher's
     * too, then the log commit's flush. */
    if (wb_writeback_pages (m) > 0)
      return WB_WAIT;
    m->phase = WB_FLUSHING;
    return WB_FLUSH;
  case WB_FLUSHING:
    return WB_WAIT;
  case WB_DONE:
    break;
  }
  return WB_FINISHED;
}

void
wb_completed (struct wb_model *m, uint64_t now_ns, const struct wb_bio *bio)
{
  m->completed_pages += bio->length_bytes / WB_PAGE_BYTES;
  wb_bandwidth_update (&m->bw, m->cfg.hz, now_ns, m->completed_pages);
}

void
wb_flushed (struct wb_model *m, uint64_t now_ns)
{
  m->phase = WB_DONE;
  m->done_ns = now_ns;
}
