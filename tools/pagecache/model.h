/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The writer of tools/writeback: dd conv=fsync onto btrfs, written back
 * as Linux 3.16's page cache wrote it, as a sequence of bios, each with
 * the CPU that submitted it to dm-crypt.
 *
 * The model is pure: no clock, no threads, no IO.  The caller asks it
 * what to do next (wb_next: a bio to submit, wait for a completion, the
 * final flush, or done), at a model time it gives in nanoseconds, and
 * tells it when a bio or the flush completed.  So tools/writeback drives
 * it against an NBD server, and tests/unit/test-writeback.c against
 * completions of its own.
 *
 * What it models (docs/scheduling.md, "seeds", has the sources):
 *   dd          dirties the file's pages, unthrottled until pages dirty
 *               and under writeback reach the setpoint of 3.16's
 *               balance_dirty_pages, then one page per page written
 *               (its IO-less throttle's equilibrium); then fsync.
 *   flusher     while dirty pages exceed the background threshold, one
 *               writepages call after another from where the last
 *               ended (range_cyclic), each of writeback_chunk_size
 *               pages as btrfs's writepage_delalloc adjusts it.
 *   btrfs       bios of at most the device's largest request, ended at
 *               each writepages call's end; a background bio is
 *               submitted to dm-crypt by btrfs's "submit" kworker
 *               (unbound), on the CPU it was woken on; fsync's bios by
 *               dd itself, on dd's CPU.
 *   fsync       every dirty page in one call, then waits for all pages
 *               under writeback, then the flush (the log commit and
 *               cache flush), and returns. */
#ifndef DMCRYPT_TOOLS_PAGECACHE_MODEL_H
#define DMCRYPT_TOOLS_PAGECACHE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define WB_PAGE_BYTES 4096      /* PAGE_CACHE_SIZE on x86-64 */

struct wb_config
{
  uint64_t file_bytes;          /* what dd writes (count x bs), a whole
                                   number of pages */
  uint64_t memory_bytes;        /* dirtyable memory: free and page-cache
                                   pages (global_dirtyable_memory) */
  unsigned dirty_ratio;         /* % of it: vm.dirty_ratio (3.16: 20) */
  unsigned background_ratio;    /* %: vm.dirty_background_ratio (10) */
  uint64_t bio_max_bytes;       /* the dm device's largest request, a
                                   whole number of pages (usb: 120 KiB) */
  unsigned cpus;                /* CPUs online, >= 1 */
  unsigned dd_cpu;              /* the CPU dd runs on, < cpus */
  unsigned submit_batch;        /* bios the submit kworker sends per
                                   wake-up, >= 1 */
  bool fsync_spread;            /* a what-if, not 3.16: fsync's bios
                                   drawn over the CPUs as the background
                                   ones are, not all on dd's */
  unsigned hz;                  /* CONFIG_HZ (Debian 8's 3.16: 250) */
  uint64_t seed;                /* of the wake-up CPUs' draw */
};

/* The 3.16 defaults, with the seed's dd (4 GiB) and machine (4 CPUs, 8
 * GiB, a USB stick through usb-storage). */
void wb_config_default (struct wb_config *c);
/* NULL when C is usable, else what is wrong with it (a static string
 * naming the field). */
const char *wb_config_check (const struct wb_config *c);

enum wb_phase
{
  WB_WRITING,                   /* dd writing, the flusher behind it */
  WB_FSYNC,                     /* dd in fsync: its bios, then waiting */
  WB_FLUSHING,                  /* the flush is out */
  WB_DONE,                      /* fsync returned */
};

struct wb_bio
{
  uint64_t seq;                 /* from 0, in submission order */
  uint64_t offset_bytes;
  uint64_t length_bytes;
  unsigned cpu;                 /* submitting CPU: the NBD connection */
  bool sync;                    /* fsync's (WRITE_SYNC in the kernel) */
};

/* The dirty thresholds of global_dirty_limits and balance_dirty_pages
 * (mm/page-writeback.c, 3.16), in pages. */
struct wb_limits
{
  uint64_t background;          /* the flusher runs above it */
  uint64_t thresh;              /* the dirty limit */
  uint64_t freerun;             /* (thresh + background) / 2 */
  uint64_t setpoint;            /* (freerun + thresh) / 2 */
};

/* The bdi's write bandwidth estimate (bdi_update_write_bandwidth). */
struct wb_bandwidth
{
  uint64_t write_pps;           /* write_bandwidth, pages a second */
  uint64_t avg_pps;             /* avg_write_bandwidth */
  uint64_t stamp_ns;            /* bw_time_stamp */
  uint64_t written_stamp;       /* pages written by then */
};

struct wb_model
{
  struct wb_config cfg;
  struct wb_limits limits;
  struct wb_bandwidth bw;
  enum wb_phase phase;
  uint64_t total_pages;
  uint64_t dirtied_pages;       /* dd's progress: pages dirtied */
  uint64_t submitted_pages;     /* written back up to here (all of the
                                   file below is in bios) */
  uint64_t completed_pages;     /* pages whose bio completed */
  uint64_t chunk_left_pages;    /* of the flusher's writepages call */
  uint64_t cow_end_pages;       /* end of the pages btrfs has allocated
                                   extents for (cow_file_range) */
  uint64_t seq;                 /* bios so far */
  unsigned cpu;                 /* the submit kworker's CPU */
  unsigned batch_left;          /* bios it sends before sleeping */
  uint64_t rng;                 /* xorshift64* state */
  uint64_t fsync_start_ns;
  uint64_t done_ns;
  uint64_t async_bios, sync_bios;
};

enum wb_action
{
  WB_SUBMIT,                    /* submit *bio */
  WB_WAIT,                      /* wait for a bio's completion */
  WB_FLUSH,                     /* send the flush, wait for it */
  WB_FINISHED,                  /* fsync returned: nothing more */
};

void wb_init (struct wb_model *m, const struct wb_config *c);
/* What to do next at model time NOW_NS. */
enum wb_action wb_next (struct wb_model *m, uint64_t now_ns,
                        struct wb_bio *bio);
/* A bio submitted earlier completed at NOW_NS. */
void wb_completed (struct wb_model *m, uint64_t now_ns,
                   const struct wb_bio *bio);
/* The flush completed at NOW_NS: fsync returns. */
void wb_flushed (struct wb_model *m, uint64_t now_ns);

/* Pages dirty (not yet in a bio) and under writeback (in a bio not yet
 * completed). */
uint64_t wb_dirty_pages (const struct wb_model *m);
uint64_t wb_writeback_pages (const struct wb_model *m);

/* ---- The kernel's formulas (dirty.c), for the model and its tests ---- */

void wb_limits_of (const struct wb_config *c, struct wb_limits *l);
/* writeback_chunk_size (fs/fs-writeback.c, 3.16) of a background
 * writeback: pages one writepages call may write. */
uint64_t wb_chunk_pages (uint64_t avg_pps, uint64_t thresh_pages);
/* btrfs's writepage_delalloc (fs/btrfs/extent_io.c, 3.16): the pages
 * a writepages call may still write once it meets a delalloc range of
 * DELALLOC pages, NR_LEFT before. */
uint64_t wb_delalloc_adjust (uint64_t nr_left, uint64_t delalloc);
/* btrfs's find_lock_delalloc_range takes at most 128 MiB. */
#define WB_DELALLOC_MAX_PAGES ((128u << 20) / WB_PAGE_BYTES)
void wb_bandwidth_init (struct wb_bandwidth *b, uint64_t now_ns);
/* __bdi_update_bandwidth: at most every BANDWIDTH_INTERVAL (200 ms),
 * WRITTEN pages completed by NOW_NS. */
void wb_bandwidth_update (struct wb_bandwidth *b, unsigned hz,
                          uint64_t now_ns, uint64_t written);

/* ---- The submitting CPU (cpu.c) ---- */

/* The CPU a bio is submitted from: fsync's on dd's CPU (with
 * fsync_spread, as a background one); a background one on the submit
 * kworker's, which after each SUBMIT_BATCH bios sleeps and is woken on
 * a CPU drawn uniformly. */
unsigned wb_submit_cpu (struct wb_model *m, bool sync);

#endif /* DMCRYPT_TOOLS_PAGECACHE_MODEL_H */
