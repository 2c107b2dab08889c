/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity's request path on a device in memory: round trips in
 * modes J, D and B, tags from above, a tag that does not verify, a
 * dirty bitmap recovered, and the journal's promise: a crash at any
 * sector written leaves every block old or new with a valid tag, a
 * flushed write never lost, and a readonly open reads what a replay
 * writes without writing anything. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "integrity-memdev.h"

#define DEV_BYTES   (1 << 20)
#define BLOCK       512
#define INTEGRITY_SB_DIRTY_BITMAP_FLAG 0x4   /* byte 24: flags */

/* Block B's content at version V (0: the zeros of the wipe). */
static void
pattern (uint8_t *p, uint64_t b, unsigned v)
{
  if (v == 0) {
    memset (p, 0, BLOCK);
    return;
  }
  for (int i = 0; i < BLOCK; i++)
    p[i] = b * 31 + v * 7 + i;
  memcpy (p, &b, 8);
  memcpy (p + 8, &v, 4);
}

/* The version of block B that P holds, or -1. */
static int
version_of (const uint8_t *p, uint64_t b)
{
  uint8_t want[BLOCK];
  unsigned v;

  memcpy (&v, p + 8, 4);
  if (v > 1000)
    v = 0;
  pattern (want, b, v);
  if (memcmp (want, p, BLOCK) == 0)
    return v;
  pattern (want, b, 0);
  return memcmp (want, p, BLOCK) == 0 ? 0 : -1;
}

static void
format (struct memdev *m, const char *hash, uint32_t journal_sectors,
        bool bitmap)
{
  struct integrity_io io = memdev_io (m);
  struct integrity_format_options fo = {
    .device_bytes = m->size, .journal_sectors = journal_sectors,
    .interleave_sectors = 256, .fix_padding = true, .wipe = true,
    .internal_hash = hash, .tag_size = hash ? 0 : 8, .bitmap = bitmap,
  };
  char err[256];

  REQUIRE (integrity_format (&io, &fo, err, sizeof err) == 0, "%s", err);
}

static struct integrity_dev *
open_dev (struct memdev *m, char mode, bool ro, const char *hash)
{
  struct integrity_io io = memdev_io (m);
  struct integrity_options opt = {
    .device_bytes = m->size, .mode = mode, .readonly = ro,
    .internal_hash = hash,
  };
  char err[256];
  struct integrity_dev *d = integrity_open (&io, &opt, err, sizeof err);

  if (d == NULL)
    fprintf (stderr, "open: %s\n", err);
  return d;
}

/* An open that may meet a crash: its failure is expected, not told. */
static struct integrity_dev *
integrity_open_quiet (struct memdev *m)
{
  struct integrity_io io = memdev_io (m);
  struct integrity_options opt = {
    .device_bytes = m->size, .mode = 'J', .internal_hash = "crc32c",
  };
  char err[256];

  return integrity_open (&io, &opt, err, sizeof err);
}

static int
write_version (struct integrity_dev *d, uint64_t b, uint32_t n, unsigned v,
               bool fua)
{
  uint8_t *buf = malloc ((size_t) n * BLOCK);
  int r;

  for (uint32_t i = 0; i < n; i++)
    pattern (buf + i * BLOCK, b + i, v);
  r = integrity_write (d, b, n, buf, NULL, fua);
  free (buf);
  return r;
}

/* Whether blocks [B, B + N) all hold version V. */
static bool
holds (struct integrity_dev *d, uint64_t b, uint32_t n, unsigned v)
{
  uint8_t *buf = malloc ((size_t) n * BLOCK);
  uint64_t bad = UINT64_MAX;
  bool ok = integrity_read (d, b, n, buf, NULL, &bad) == 0;

  for (uint32_t i = 0; ok && i < n; i++)
    ok = version_of (buf + i * BLOCK, b + i) == (int) v;
  free (buf);
  return ok;
}

static void
test_round_trip (char mode)
{
  struct memdev m;
  struct integrity_dev *d;
  uint64_t blocks;

  memdev_init (&m, DEV_BYTES);
  format (&m, "crc32c", 0, mode == 'B');
  d = open_dev (&m, mode, false, "crc32c");
  REQUIRE (d != NULL, "open %c", mode);
  blocks = integrity_data_sectors (d);
  CHECK (integrity_block_bytes (d) == 512 && integrity_tag_size (d) == 4);
  CHECK (write_version (d, 250, 20, 1, false) == 0);   /* across areas */
  CHECK (write_version (d, 255, 1, 2, false) == 0);
  CHECK_MSG (holds (d, 250, 5, 1) && holds (d, 255, 1, 2)
             && holds (d, 256, 14, 1), "mode %c before flush", mode);
  CHECK (holds (d, 0, 250, 0));
  CHECK (integrity_flush (d) == 0);
  CHECK (write_version (d, blocks - 3, 3, 5, true) == 0);
  CHECK (write_version (d, blocks - 1, 2, 5, false) == -ERANGE);
  CHECK (integrity_close (d) == 0);
  d = open_dev (&m, mode, false, "crc32c");
  REQUIRE (d != NULL, "reopen %c", mode);
  CHECK_MSG (holds (d, 250, 5, 1) && holds (d, 255, 1, 2)
             && holds (d, 256, 14, 1) && holds (d, blocks - 3, 3, 5),
             "mode %c after reopen", mode);
  CHECK (integrity_mismatches (d) == 0);
  CHECK (integrity_close (d) == 0);
  free (m.buf);
}

/* In mode J an unflushed write is in the journal only: the data area
 * still holds the zeros. */
static void
test_journal_defers (void)
{
  struct memdev m;
  struct integrity_dev *d;
  uint8_t zeros[BLOCK] = { 0 };
  uint64_t off;
  unsigned writes;

  memdev_init (&m, DEV_BYTES);
  format (&m, "crc32c", 0, false);
  d = open_dev (&m, 'J', false, "crc32c");
  REQUIRE (d != NULL, "open");
  writes = m.writes;
  CHECK (write_version (d, 10, 1, 3, false) == 0);
  CHECK (m.writes == writes);
  integrity_close (d);
  d = open_dev (&m, 'J', true, "crc32c");
  REQUIRE (d != NULL, "open");
  CHECK (holds (d, 10, 1, 3));
  integrity_close (d);
  /* The block is in place once closed: find it by its pattern. */
  off = 0;
  for (uint64_t o = 0; o < m.size; o += BLOCK)
    if (version_of (m.buf + o, 10) == 3)
      off = o;
  CHECK (off != 0 && memcmp (m.buf + off, zeros, BLOCK) != 0);
  free (m.buf);
}

static void
test_mismatch (void)
{
  struct memdev m;
  struct integrity_dev *d;
  uint8_t buf[16 * BLOCK];
  uint64_t bad = 0;
  char status[64];

  memdev_init (&m, DEV_BYTES);
  format (&m, "sha256", 0, false);
  d = open_dev (&m, 'J', false, "sha256");
  REQUIRE (d != NULL, "open");
  CHECK (write_version (d, 0, 16, 4, false) == 0);
  CHECK (integrity_close (d) == 0);
  for (uint64_t o = 0; o < m.size; o += BLOCK)
    if (version_of (m.buf + o, 7) == 4)
      m.buf[o + 100] ^= 1;
  d = open_dev (&m, 'J', true, "sha256");
  REQUIRE (d != NULL, "open");
  CHECK (integrity_read (d, 0, 16, buf, NULL, &bad) == -EILSEQ);
  CHECK (bad == 7);
  CHECK (integrity_read (d, 0, 7, buf, NULL, &bad) == 0);
  CHECK (integrity_mismatches (d) == 1);
  integrity_status (d, status, sizeof status);
  CHECK (strncmp (status, "1 ", 2) == 0);
  integrity_close (d);
  /* Mode R checks nothing. */
  d = open_dev (&m, 'R', false, "sha256");
  REQUIRE (d != NULL, "open R");
  CHECK (integrity_read (d, 0, 16, buf, NULL, &bad) == 0);
  CHECK (write_version (d, 0, 1, 1, false) == -EROFS);
  integrity_close (d);
  free (m.buf);
}

/* No internal hash: the tags come from above and go back up. */
static void
test_tags_from_above (void)
{
  struct memdev m;
  struct integrity_dev *d;
  uint8_t data[4 * BLOCK], tags[32], back[32], out[4 * BLOCK];

  memdev_init (&m, DEV_BYTES);
  format (&m, NULL, 0, false);
  for (int i = 0; i < 4; i++)
    pattern (data + i * BLOCK, 40 + i, 9);
  for (int i = 0; i < 32; i++)
    tags[i] = 0xa0 + i;
  for (int pass = 0; pass < 2; pass++) {
    d = open_dev (&m, pass ? 'D' : 'J', false, NULL);
    REQUIRE (d != NULL, "open");
    CHECK (integrity_write (d, 40 + 10 * pass, 4, data, tags, false) == 0);
    memset (back, 0, sizeof back);
    CHECK (integrity_read (d, 40 + 10 * pass, 4, out, back, NULL) == 0);
    CHECK (memcmp (back, tags, 32) == 0 && memcmp (out, data, sizeof out) == 0);
    CHECK (integrity_close (d) == 0);
    d = open_dev (&m, 'J', true, NULL);
    REQUIRE (d != NULL, "reopen");
    memset (back, 0, sizeof back);
    CHECK (integrity_read (d, 40 + 10 * pass, 4, out, back, NULL) == 0);
    CHECK_MSG (memcmp (back, tags, 32) == 0, "tags back, pass %d", pass);
    integrity_close (d);
  }
  free (m.buf);
}

/* Mode B left dirty by a crash: the regions of its bits get their tags
 * made again from the data, which then reads back; readonly, they are
 * read unchecked and nothing is written. */
static void
test_dirty_bitmap (void)
{
  struct memdev m, crash;
  struct integrity_dev *d;
  uint8_t buf[BLOCK];
  uint64_t bad;

  memdev_init (&m, DEV_BYTES);
  format (&m, "crc32c", 0, true);
  d = open_dev (&m, 'B', false, "crc32c");
  REQUIRE (d != NULL, "open B");
  CHECK (write_version (d, 20, 1, 6, false) == 0);
  memdev_init (&crash, DEV_BYTES);
  memcpy (crash.buf, m.buf, DEV_BYTES);
  CHECK (integrity_close (d) == 0);
  CHECK ((m.buf[24] & INTEGRITY_SB_DIRTY_BITMAP_FLAG) == 0);
  CHECK ((crash.buf[24] & INTEGRITY_SB_DIRTY_BITMAP_FLAG) != 0);
  /* The data changed without its tag, in both images. */
  for (uint64_t o = 0; o < m.size; o += BLOCK)
    if (version_of (m.buf + o, 20) == 6) {
      m.buf[o + 200] ^= 1;
      crash.buf[o + 200] ^= 1;
    }
  d = open_dev (&m, 'J', true, "crc32c");
  REQUIRE (d != NULL, "open clean");
  CHECK (integrity_read (d, 20, 1, buf, NULL, &bad) == -EILSEQ);
  integrity_close (d);
  d = open_dev (&crash, 'J', true, "crc32c");
  REQUIRE (d != NULL, "open dirty readonly");
  CHECK (integrity_read (d, 20, 1, buf, NULL, &bad) == 0);
  CHECK (crash.writes == 0);
  integrity_close (d);
  d = open_dev (&crash, 'J', false, "crc32c");
  REQUIRE (d != NULL, "open dirty");
  CHECK (integrity_close (d) == 0);
  CHECK ((crash.buf[24] & INTEGRITY_SB_DIRTY_BITMAP_FLAG) == 0);
  d = open_dev (&crash, 'J', true, "crc32c");
  REQUIRE (d != NULL, "open recalculated");
  CHECK (integrity_read (d, 20, 1, buf, NULL, &bad) == 0);
  integrity_close (d);
  free (m.buf);
  free (crash.buf);
}

/* The writes of the crash test, version i + 1 for step i; a step of
 * no blocks is a flush. */
static const struct { uint64_t block; uint32_t n; bool fua; } steps[] = {
  { 0, 10, false }, { 3, 1, false }, { 100, 200, false }, { 0, 0, false },
  { 500, 10, true }, { 5, 300, false }, { 1000, 3, false }, { 7, 1, false },
};
#define N_STEPS (sizeof steps / sizeof steps[0])
#define MAX_BLOCKS 1024

struct history {
  unsigned newest[MAX_BLOCKS];   /* the newest version written to it */
  unsigned floor[MAX_BLOCKS];    /* the newest one flushed */
};

static bool
step_covers (unsigned v, uint64_t b)
{
  return v >= 1 && v <= N_STEPS && b >= steps[v - 1].block
    && b < steps[v - 1].block + steps[v - 1].n;
}

/* The steps until one fails (the crash), then the close.  True when
 * everything succeeded. */
static bool
run_steps (struct memdev *m, struct history *h)
{
  struct integrity_dev *d = open_dev (m, 'J', false, "crc32c");
  bool ok = d != NULL;

  memset (h, 0, sizeof *h);
  for (unsigned i = 0; ok && i < N_STEPS; i++) {
    bool flushed;

    if (steps[i].n == 0)
      flushed = ok = integrity_flush (d) == 0;
    else {
      for (uint32_t k = 0; k < steps[i].n; k++)
        h->newest[steps[i].block + k] = i + 1;
      ok = write_version (d, steps[i].block, steps[i].n, i + 1,
                          steps[i].fua) == 0;
      flushed = ok && steps[i].fua;
    }
    if (flushed)
      memcpy (h->floor, h->newest, sizeof h->floor);
  }
  if (d != NULL && integrity_close (d) != 0)
    ok = false;
  if (ok)
    memcpy (h->floor, h->newest, sizeof h->floor);
  return ok;
}

/* The blocks the steps write, and some around them. */
static const struct { uint64_t block, n; } checked[] = {
  { 0, 320 }, { 490, 30 }, { 995, 15 },
};

/* Reads the blocks checked: each must verify and hold a version its
 * history allows.  Returns false at the first that does not. */
static bool
check_after_crash (struct memdev *m, bool ro, const struct history *h,
                   uint8_t *image, int64_t budget)
{
  struct integrity_dev *d = open_dev (m, 'J', ro, "crc32c");
  uint64_t bad;
  bool ok = d != NULL;

  for (size_t c = 0; ok && c < sizeof checked / sizeof checked[0]; c++) {
    uint64_t first = checked[c].block;
    uint8_t *p = image + first * BLOCK;

    ok = integrity_read (d, first, checked[c].n, p, NULL, &bad) == 0;
    for (uint64_t b = first; ok && b < first + checked[c].n; b++) {
      int v = version_of (image + b * BLOCK, b);

      ok = v >= (int) h->floor[b] && v <= (int) h->newest[b]
        && (v == 0 || step_covers (v, b));
      if (!ok)
        fprintf (stderr, "crash after %lld sectors%s: block %llu holds "
                 "version %d, floor %u newest %u\n", (long long) budget,
                 ro ? " (readonly)" : "", (unsigned long long) b, v,
                 h->floor[b], h->newest[b]);
    }
  }
  if (d != NULL)
    integrity_close (d);
  return ok;
}

static void
test_crash_everywhere (void)
{
  struct memdev base, m, ro;
  struct history h;
  static uint8_t image[MAX_BLOCKS * BLOCK], image_ro[MAX_BLOCKS * BLOCK];
  int64_t budget;
  unsigned failed = 0, points = 0;

  memdev_init (&base, DEV_BYTES);
  format (&base, "crc32c", 352, false);
  memdev_init (&m, DEV_BYTES);
  memdev_init (&ro, DEV_BYTES);
  for (budget = 0;; budget++) {
    bool done;

    memcpy (m.buf, base.buf, DEV_BYTES);
    m.crash_budget = budget;
    m.crashed = false;
    m.sectors_written = 0;
    done = run_steps (&m, &h);
    memcpy (ro.buf, m.buf, DEV_BYTES);
    m.crash_budget = -1;
    m.crashed = false;
    memset (image, 0, sizeof image);
    memset (image_ro, 0, sizeof image_ro);
    ro.writes = 0;
    if (!check_after_crash (&m, false, &h, image, budget)
        || !check_after_crash (&ro, true, &h, image_ro, budget)
        || ro.writes != 0 || memcmp (image, image_ro, sizeof image) != 0)
      failed++;
    points++;
    if (done || failed > 3)
      break;
  }
  CHECK_MSG (failed == 0, "%u of %u crash points failed", failed, points);
  CHECK_MSG (points > 1000, "only %u crash points", points);
  printf ("crash points: %u\n", points);
  free (base.buf);
  free (m.buf);
  free (ro.buf);
}

struct thread_arg {
  struct integrity_dev *d;
  uint64_t first;
  bool ok;
};

static void *
thread_main (void *p)
{
  struct thread_arg *a = p;

  a->ok = true;
  for (unsigned v = 1; v <= 20 && a->ok; v++)
    a->ok = write_version (a->d, a->first, 8, v, v % 5 == 0) == 0
      && holds (a->d, a->first, 8, v);
  return NULL;
}

static void
test_threads (void)
{
  struct memdev m;
  struct thread_arg args[4];
  pthread_t t[4];

  memdev_init (&m, DEV_BYTES);
  format (&m, "crc32c", 0, false);
  for (int i = 0; i < 4; i++) {
    args[i].d = i ? args[0].d : open_dev (&m, 'J', false, "crc32c");
    args[i].first = 64 * i + 60;
    REQUIRE (args[i].d != NULL, "open");
    pthread_create (&t[i], NULL, thread_main, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join (t[i], NULL);
    CHECK_MSG (args[i].ok, "thread %d", i);
  }
  CHECK (integrity_close (args[0].d) == 0);
  free (m.buf);
}

/* The open after a crash replays the journal, writes it back and
 * clears it; a second crash at any point of that, and the open after
 * it must still find every block old or new, nothing flushed lost
 * (replay_journal is idempotent: it replays what is committed until
 * the journal is cleared).  The first crash at every 47th sector of
 * the steps, the second at every sector of the open and close after. */
static bool
crash_twice (struct memdev *once, struct memdev *twice,
             const struct history *h, uint8_t *image, int64_t budget,
             unsigned *points)
{
  for (int64_t second = 0;; second++) {
    struct integrity_dev *d;
    bool finished;

    memcpy (twice->buf, once->buf, DEV_BYTES);
    twice->crash_budget = second;
    twice->crashed = false;
    twice->sectors_written = 0;
    d = integrity_open_quiet (twice);
    if (d != NULL && integrity_close (d) != 0)
      d = NULL;
    finished = !twice->crashed;
    twice->crash_budget = -1;
    twice->crashed = false;
    memset (image, 0, MAX_BLOCKS * BLOCK);
    (*points)++;
    if (!check_after_crash (twice, false, h, image, budget))
      return false;
    if (finished)
      return true;
  }
}

static void
test_crash_during_replay (void)
{
  struct memdev base, once, twice;
  struct history h;
  static uint8_t image[MAX_BLOCKS * BLOCK];
  unsigned failed = 0, points = 0;

  memdev_init (&base, DEV_BYTES);
  format (&base, "crc32c", 352, false);
  memdev_init (&once, DEV_BYTES);
  memdev_init (&twice, DEV_BYTES);
  for (int64_t budget = 0; failed < 3; budget += 47) {
    bool done;

    memcpy (once.buf, base.buf, DEV_BYTES);
    once.crash_budget = budget;
    once.crashed = false;
    once.sectors_written = 0;
    done = run_steps (&once, &h);
    once.crash_budget = -1;
    once.crashed = false;
    if (!crash_twice (&once, &twice, &h, image, budget, &points))
      failed++;
    if (done)
      break;
  }
  CHECK_MSG (failed == 0, "%u first crash points failed after a second",
             failed);
  CHECK_MSG (points > 1000, "only %u crash points", points);
  printf ("crash points during replay: %u\n", points);
  free (base.buf);
  free (once.buf);
  free (twice.buf);
}

int
main (void)
{
  test_round_trip ('J');
  test_round_trip ('D');
  test_round_trip ('B');
  test_journal_defers ();
  test_mismatch ();
  test_tags_from_above ();
  test_dirty_bitmap ();
  test_threads ();
  test_crash_everywhere ();
  test_crash_during_replay ();
  if (failures)
    fprintf (stderr, "%d failures\n", failures);
  return failures != 0;
}
