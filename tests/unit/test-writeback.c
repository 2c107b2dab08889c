/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tools/writeback's model (tools/pagecache/), without a server: the
 * kernel's formulas against hand-computed values, and the bios a whole
 * dd conv=fsync sends, bios completing in the order they were sent.
 *
 *   limits     global_dirty_limits and the setpoint for 8 GiB; the
 *              background threshold at most half the limit.
 *   chunk      writeback_chunk_size at 100 MiB/s and 20 MB/s, and
 *              capped by the dirty limit.
 *   delalloc   writepage_delalloc's budget: kept, raised to a range
 *              under 64 MiB, set to 8192 pages (32 MiB) above.
 *   bandwidth  bdi_update_write_bandwidth's smoothing, jiffy by jiffy.
 *   sequence   a 400-page file with 1000 pages of memory: every bio's
 *              offset, length and kind, the dirty counts, fsync.
 *   chunks     btrfs's budget in a run: one call writes a whole range
 *              under 64 MiB; 8192, then 5120-page calls above it.
 *   cpus       one CPU gives one connection; runs of submit-batch bios
 *              per CPU; fsync's bios on dd's CPU; the draw uniform.
 *   report     dd's line for the seed's own figures.
 *   config     every bad field refused, by name. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/pagecache/model.h"
#include "../../tools/pagecache/report.h"
#include "check.h"

#define P WB_PAGE_BYTES
#define MAX_BIOS 4096

struct trace
{
  struct wb_bio bios[MAX_BIOS];
  size_t n;
  uint64_t dirty_at_fsync;      /* pages dd left to fsync */
  uint64_t flushes;
};

/* Runs M to its end: bios complete in the order they were sent, each
 * NS_PER_BIO after the last (0: the model's clock stands still). */
static void
run_in_order (struct wb_model *m, uint64_t ns_per_bio, struct trace *t)
{
  size_t head = 0;
  uint64_t now = 0;
  struct wb_bio bio;
  enum wb_action a;

  memset (t, 0, sizeof *t);
  while ((a = wb_next (m, now, &bio)) != WB_FINISHED) {
    if (a == WB_SUBMIT) {
      REQUIRE (t->n < MAX_BIOS, "more than %d bios", MAX_BIOS);
      if (bio.sync && t->dirty_at_fsync == 0)
        t->dirty_at_fsync = wb_dirty_pages (m) + bio.length_bytes / P;
      t->bios[t->n++] = bio;
    }
    else if (a == WB_FLUSH) {
      t->flushes++;
      wb_flushed (m, now);
    }
    else {
      REQUIRE (head < t->n, "a wait with nothing in flight");
      now += ns_per_bio;
      wb_completed (m, now, &t->bios[head++]);
    }
  }
}

static void
test_limits (void)
{
  struct wb_config c;
  struct wb_limits l;

  wb_config_default (&c);
  /* 8 GiB = 2097152 pages: 20 % and 10 %, rounded down. */
  wb_limits_of (&c, &l);
  CHECK (l.thresh == 419430);
  CHECK (l.background == 209715);
  CHECK (l.freerun == 314572);          /* (419430 + 209715) / 2 */
  CHECK (l.setpoint == 367001);         /* (314572 + 419430) / 2 */
  c.dirty_ratio = 10;
  c.background_ratio = 20;
  wb_limits_of (&c, &l);
  CHECK (l.thresh == 209715);
  CHECK (l.background == 104857);       /* half the limit */
}

static void
test_chunk (void)
{
  /* INIT_BW, 100 MiB/s = 25600 pages/s: half a second, + 1024, to
   * whole 4 MiB. */
  CHECK (wb_chunk_pages (25600, 419430) == 13312);
  /* 20 MB/s = 4882 pages/s: 2441 + 1024 = 3465 -> 3072. */
  CHECK (wb_chunk_pages (4882, 419430) == 3072);
  /* An eighth of a 26214-page limit, 3276, + 1024 -> 4096. */
  CHECK (wb_chunk_pages (25600, 26214) == 4096);
  CHECK (wb_chunk_pages (0, 0) == 1024);
}

static void
test_delalloc (void)
{
  CHECK (wb_delalloc_adjust (100, 50) == 100);
  CHECK (wb_delalloc_adjust (20000, 16384) == 20000);
  CHECK (wb_delalloc_adjust (3072, 10000) == 10000);
  CHECK (wb_delalloc_adjust (3072, 16383) == 16383);
  CHECK (wb_delalloc_adjust (3072, 32768) == 8192);
  /* A larger writeback chunk is lowered to 8192. */
  CHECK (wb_delalloc_adjust (13312, 32768) == 8192);
}

static void
test_bandwidth (void)
{
  struct wb_bandwidth b;
  const uint64_t ms = 1000000;

  /* HZ 250: updates at least 50 jiffies (200 ms) apart, over a period
   * of 1024 jiffies (3 s, rounded up to a power of two). */
  wb_bandwidth_init (&b, 0);
  CHECK (b.write_pps == 25600 && b.avg_pps == 25600);
  wb_bandwidth_update (&b, 250, 199 * ms, 5000);
  CHECK (b.write_pps == 25600 && b.stamp_ns == 0);
  /* 1 s: (10000 * 250 + 25600 * 774) / 1024 = 21791; avg unmoved, as
   * the estimate has not turned. */
  wb_bandwidth_update (&b, 250, 1000 * ms, 10000);
  CHECK (b.write_pps == 21791 && b.avg_pps == 25600);
  CHECK (b.written_stamp == 10000 && b.stamp_ns == 1000 * ms);
  /* 2 s: (10000 * 250 + 21791 * 774) / 1024 = 18912; avg falls an
   * eighth of the way to 21791: 25600 - 476. */
  wb_bandwidth_update (&b, 250, 2000 * ms, 20000);
  CHECK (b.write_pps == 18912);
  CHECK (b.avg_pps == 25124);
  /* Beyond the period: the plain rate, 5000 pages in 1250 jiffies. */
  wb_bandwidth_update (&b, 250, 7000 * ms, 25000);
  CHECK (b.write_pps == 1000 && b.avg_pps == 1000);
}

/* 1000 pages of memory: limit 200, background 100, freerun 150,
 * setpoint 175; chunks of 1024 (an eighth of the limit, 25, + 1024);
 * bios of 30 pages; a 400-page file.  At 0 dd dirties 175 pages and
 * the flusher's one call writes them all (bios 0-5); each completion
 * lets dd dirty as many pages as it freed; after the fourth (120
 * completed, 295 dirtied) dirty pages exceed 100 again and the
 * flusher writes 175..295 (bios 6-9); after the eighth dd has dirtied
 * the whole file, and fsync writes the 105 pages left (bios 10-13). */
static void
test_sequence (void)
{
  static const uint64_t expect[][3] = {      /* page, pages, sync */
    { 0, 30, 0 }, { 30, 30, 0 }, { 60, 30, 0 }, { 90, 30, 0 },
    { 120, 30, 0 }, { 150, 25, 0 }, { 175, 30, 0 }, { 205, 30, 0 },
    { 235, 30, 0 }, { 265, 30, 0 }, { 295, 30, 1 }, { 325, 30, 1 },
    { 355, 30, 1 }, { 385, 15, 1 },
  };
  const size_t n = sizeof expect / sizeof expect[0];
  static struct trace t;
  struct wb_config c;
  struct wb_model m;
  size_t i;

  wb_config_default (&c);
  c.memory_bytes = 1000 * P;
  c.file_bytes = 400 * P;
  c.bio_max_bytes = 30 * P;
  c.cpus = 1;
  wb_init (&m, &c);
  CHECK (m.limits.setpoint == 175 && m.limits.background == 100);
  run_in_order (&m, 0, &t);
  CHECK_MSG (t.n == n, "%zu bios, not %zu", t.n, n);
  for (i = 0; i < n && i < t.n; i++) {
    CHECK_MSG (t.bios[i].seq == i, "bio %zu: seq %" PRIu64, i,
               t.bios[i].seq);
    CHECK_MSG (t.bios[i].offset_bytes == expect[i][0] * P
               && t.bios[i].length_bytes == expect[i][1] * P
               && t.bios[i].sync == expect[i][2] && t.bios[i].cpu == 0,
               "bio %zu: %" PRIu64 " + %" PRIu64 " sync %d cpu %u", i,
               t.bios[i].offset_bytes / P, t.bios[i].length_bytes / P,
               t.bios[i].sync, t.bios[i].cpu);
  }
  CHECK (t.dirty_at_fsync == 105);
  CHECK (t.flushes == 1);
  CHECK (m.async_bios == 10 && m.sync_bios == 4);
  CHECK (m.phase == WB_DONE && m.completed_pages == 400);
}

/* The bios sent at the start (the model's clock standing still until
 * the first completion), and their pages. */
static size_t
first_burst (const struct wb_config *c, uint64_t *pages)
{
  struct wb_model m;
  struct wb_bio bio;
  size_t n = 0;

  wb_init (&m, c);
  *pages = 0;
  while (wb_next (&m, 0, &bio) == WB_SUBMIT) {
    n++;
    *pages += bio.length_bytes / P;
  }
  return n;
}

static void
test_chunks (void)
{
  struct wb_config c;
  uint64_t pages;
  size_t n;

  wb_config_default (&c);
  c.bio_max_bytes = 30 * P;
  /* 40000 pages: setpoint 7000, background 4000, chunks of 1024; the
   * first call meets a 7000-page delalloc range, under 16384, and
   * writes all of it: 233 bios of 30 and one of 10. */
  c.memory_bytes = 40000ULL * P;
  n = first_burst (&c, &pages);
  CHECK_MSG (n == 234 && pages == 7000, "%zu bios, %" PRIu64 " pages", n,
             pages);
  /* 200000 pages: setpoint 35000, background 20000; chunks of 5120
   * (an eighth of the limit, 5000, + 1024, to 4 MiB).  The first call
   * meets 32768 pages of delalloc (the 128 MiB most) and writes 8192
   * (274 bios); then two of 5120 (171 bios each, a 20-page bio at the
   * end), leaving 16568 dirty, under the background threshold. */
  c.memory_bytes = 200000ULL * P;
  n = first_burst (&c, &pages);
  CHECK_MSG (n == 274 + 171 + 171 && pages == 8192 + 5120 + 5120,
             "%zu bios, %" PRIu64 " pages", n, pages);
}

static void
test_cpus (void)
{
  static struct trace t;
  struct wb_config c;
  struct wb_model m;
  size_t i, per_cpu[4] = { 0 }, asyncs = 0;

  wb_config_default (&c);
  c.memory_bytes = 4000ULL * P;
  c.file_bytes = 3000ULL * P;
  c.bio_max_bytes = 4 * P;
  c.dd_cpu = 2;
  c.submit_batch = 3;
  wb_init (&m, &c);
  run_in_order (&m, 1000, &t);
  REQUIRE (t.n == 750, "%zu bios", t.n);
  for (i = 0; i < t.n; i++) {
    if (t.bios[i].sync) {
      CHECK_MSG (t.bios[i].cpu == 2, "fsync bio %zu on CPU %u", i,
                 t.bios[i].cpu);
      continue;
    }
    /* The kworker moves only after a whole batch of 3. */
    if (asyncs % 3 != 0)
      CHECK_MSG (t.bios[i].cpu == t.bios[i - 1].cpu,
                 "bio %zu moved within a batch", i);
    asyncs++;
    per_cpu[t.bios[i].cpu]++;
  }
  CHECK (asyncs == m.async_bios && asyncs > 600);
  /* Uniform: each CPU within a fifth of its share. */
  for (i = 0; i < 4; i++)
    CHECK_MSG (per_cpu[i] * 4 > asyncs * 8 / 10
               && per_cpu[i] * 4 < asyncs * 12 / 10,
               "CPU %zu: %zu of %zu", i, per_cpu[i], asyncs);
  /* The what-if: fsync's bios drawn as the others, every CPU some. */
  c.fsync_spread = true;
  wb_init (&m, &c);
  run_in_order (&m, 1000, &t);
  memset (per_cpu, 0, sizeof per_cpu);
  for (i = 0; i < t.n; i++)
    if (t.bios[i].sync)
      per_cpu[t.bios[i].cpu]++;
  for (i = 0; i < 4; i++)
    CHECK_MSG (per_cpu[i] > 0, "fsync-spread: no fsync bio on CPU %zu", i);
  c.fsync_spread = false;
  c.cpus = 1;
  c.dd_cpu = 0;
  wb_init (&m, &c);
  run_in_order (&m, 1000, &t);
  for (i = 0; i < t.n; i++)
    CHECK_MSG (t.bios[i].cpu == 0, "bio %zu on CPU %u", i, t.bios[i].cpu);
}

static void
test_report (void)
{
  char buf[160];

  wb_human_si (4294967296., buf, sizeof buf);
  CHECK (strcmp (buf, "4.3 GB") == 0);
  wb_human_si (999.6e6, buf, sizeof buf);
  CHECK (strcmp (buf, "1.0 GB") == 0);
  wb_human_si (9.96e6, buf, sizeof buf);
  CHECK (strcmp (buf, "10 MB") == 0);
  wb_human_si (512, buf, sizeof buf);
  CHECK (strcmp (buf, "512 B") == 0);
  /* The seed's Linux 4.0.2 run, as dd printed it. */
  wb_dd_line (4294967296ULL, 29.7559, buf, sizeof buf);
  CHECK_MSG (strcmp (buf, "4294967296 bytes (4.3 GB) copied, 29.7559 s, "
                     "144 MB/s") == 0, "%s", buf);
}

/* Spoils field I of C; returns its name as errors give it, or NULL
 * past the last. */
static const char *
spoil (struct wb_config *c, int i)
{
  switch (i) {
  case 0: c->file_bytes = 4097; return "size";
  case 1: c->file_bytes = 0; return "size";
  case 2: c->memory_bytes = 99 * P; return "memory";
  case 3: c->dirty_ratio = 0; return "dirty-ratio";
  case 4: c->background_ratio = 101; return "dirty-background-ratio";
  case 5: c->bio_max_bytes = 1000; return "bio-max";
  case 6: c->cpus = 0; return "cpus";
  case 7: c->dd_cpu = 4; return "dd-cpu";
  case 8: c->submit_batch = 0; return "submit-batch";
  case 9: c->hz = 10; return "hz";
  }
  return NULL;
}

static void
test_config (void)
{
  struct wb_config c;
  const char *field, *why;
  int i;

  wb_config_default (&c);
  CHECK (wb_config_check (&c) == NULL);
  for (i = 0; wb_config_default (&c), (field = spoil (&c, i)); i++) {
    why = wb_config_check (&c);
    CHECK_MSG (why != NULL && strncmp (why, field, strlen (field)) == 0
               && why[strlen (field)] == ':',
               "%s: %s", field, why ? why : "accepted");
  }
  CHECK (i == 10);
}

int
main (void)
{
  test_limits ();
  test_chunk ();
  test_delalloc ();
  test_bandwidth ();
  test_sequence ();
  test_chunks ();
  test_cpus ();
  test_report ();
  test_config ();
  if (failures) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("PASS: writeback model, %u checks\n", checks);
  return 0;
}
