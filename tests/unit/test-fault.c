/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fault-injecting backend: the rules language (what parses, what is
 * refused, what each rule does to which operation), and the wrapper on a
 * real file: errors, short transfers that leave exactly their prefix,
 * the Nth operation, failing syncs, delays, a stall released by a new
 * rules file, a broken file that turns faults off, and pass-through
 * when the rules file is gone. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../backend/backend.h"
#include "../../backend/fault.h"

#include "check.h"

#define IMAGE_BYTES (1024 * 1024)
#define PROBE_OFFSET (IMAGE_BYTES - 512)   /* a sector only probes read */
#define WAIT_MS 5000                       /* for new rules, at most */

static char dir[200], rules_path[256], image_path[256];
static unsigned generation;

/* Also when a CHECK fails. */
static void
remove_scratch (void)
{
  unlink (rules_path);
  unlink (image_path);
  rmdir (dir);
}

static double
now_ms (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- The language ---- */

static struct fault_rules *
parse_ok (const char *text)
{
  struct fault_rules *r;

  REQUIRE (fault_rules_parse (text, "test", &r) == 0, "refused: %s", text);
  return r;
}

static void
parse_bad (const char *text)
{
  struct fault_rules *r;

  REQUIRE (fault_rules_parse (text, "test", &r) == -1 && r == NULL,
         "accepted: %s", text);
}

static void
test_language (void)
{
  static const char *const bad[] = {
    "wrote error=EIO", "read", "read start=10", "read error=EWHAT",
    "read error=0", "read start=10 end=10 error=EIO",
    "read start=4K end=1K error=EIO", "read length=1 end=2 error=EIO",
    "read nth=0 error=EIO", "read delay=5h", "read short",
    "sync short=10", "sync start=0 error=EIO", "read short short=1",
    "read stall=1", "read foo=1 error=EIO", "read error=",
    "read start=1X error=EIO",
  };
  struct fault_rules *r;
  struct fault_verdict v;
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    parse_bad (bad[i]);
  REQUIRE (parse_ok ("# nothing\n\n   \n") == NULL, "empty file: rules");

  r = parse_ok ("read,write start=4K length=4K error=ENOSPC # c\n"
                "flush error=EIO nth=2\n"
                "all delay=2ms\n"
                "trim start=1M short error=EIO\n"
                "write start=1G short=1000 count=2 stall\n");
  REQUIRE (r->n == 5, "5 rules, got %zu", r->n);
  REQUIRE (r->rule[0].ops == (FAULT_READ | FAULT_WRITE)
         && r->rule[0].start == 4096 && r->rule[0].end == 8192
         && r->rule[0].error == ENOSPC, "rule 1");
  REQUIRE (r->rule[1].ops == FAULT_SYNC && r->rule[1].nth == 2
         && r->rule[1].count == 1, "rule 2: nth alone means count=1");
  REQUIRE (r->rule[2].delay_us == 2000 && r->rule[2].nth == 1
         && r->rule[2].count == 0, "rule 3");
  REQUIRE (r->rule[3].short_to_start && r->rule[3].start == 1 << 20
         && r->rule[3].end == UINT64_MAX, "rule 4");
  REQUIRE (r->rule[4].short_fixed && r->rule[4].short_bytes == 1000
         && r->rule[4].error == EIO && r->rule[4].stall
         && r->rule[4].count == 2, "rule 5: short means EIO");

  /* Judging: ranges, delays adding up, the first error winning. */
  fault_rules_judge (r, FAULT_READ, 4096, 0, &v);
  REQUIRE (v.error == 0 && v.delay_us == 2000, "read before the range");
  fault_rules_judge (r, FAULT_READ, 2, 4095, &v);
  REQUIRE (v.error == ENOSPC && v.transfer == 0, "read touching the range");
  fault_rules_judge (r, FAULT_SYNC, 0, 0, &v);
  REQUIRE (v.error == 0, "first sync passes");
  fault_rules_judge (r, FAULT_SYNC, 0, 0, &v);
  REQUIRE (v.error == EIO, "second sync fails");
  fault_rules_judge (r, FAULT_SYNC, 0, 0, &v);
  REQUIRE (v.error == 0, "third sync passes");
  fault_rules_judge (r, FAULT_DISCARD, 3 << 20, 0, &v);
  REQUIRE (v.error == EIO && v.transfer == 1 << 20, "discard short");
  fault_rules_judge (r, FAULT_WRITE, 65536, (1 << 30) - 4096, &v);
  REQUIRE (v.error == EIO && v.transfer == 1000 && v.stall, "write short=");
  fault_rules_judge (r, FAULT_WRITE, 512, 1 << 30, &v);
  REQUIRE (v.stall && v.transfer == 512, "short= capped by the count");
  fault_rules_judge (r, FAULT_WRITE, 512, 1 << 30, &v);
  REQUIRE (!v.stall && v.error == 0, "count=2 spent");
  fault_rules_free (r);
}

/* ---- The wrapper on a file ---- */

/* Replaces the rules file as tests should: a new file renamed over.
 * A probe rule with an error number unique to this generation tells
 * when the operations have it in force. */
static void
set_rules (struct backend *b, const char *text)
{
  char tmp[300], buf[512];
  int probe_err = 100 + generation++ % 1000;
  double deadline = now_ms () + WAIT_MS;
  FILE *fp;

  snprintf (tmp, sizeof tmp, "%s.new", rules_path);
  fp = fopen (tmp, "w");
  REQUIRE (fp, "fopen");
  fprintf (fp, "%s\nread start=%d length=512 error=%d\n", text,
           PROBE_OFFSET, probe_err);
  REQUIRE (fclose (fp) == 0 && rename (tmp, rules_path) == 0, "rename");
  for (;;) {
    errno = 0;
    if (backend_pread (b, buf, 512, PROBE_OFFSET) == -1
        && errno == probe_err)
      return;
    REQUIRE (now_ms () < deadline, "rules not in force after %d ms",
           WAIT_MS);
    usleep (1000);
  }
}

static void
clear_rules (struct backend *b)
{
  char buf[512];
  double deadline = now_ms () + WAIT_MS;

  unlink (rules_path);
  while (backend_pread (b, buf, 512, PROBE_OFFSET) == -1)
    REQUIRE (now_ms () < deadline, "rules still in force");
}

static void
fill (struct backend *b, int byte, size_t count, uint64_t offset)
{
  static char buf[IMAGE_BYTES];

  memset (buf, byte, count);
  REQUIRE (backend_pwrite (b, buf, count, offset) == 0, "fill: %m");
}

/* Fails unless [OFFSET, OFFSET+COUNT) of the file holds BYTE. */
static void
expect_bytes (struct backend *b, int byte, size_t count, uint64_t offset)
{
  static unsigned char buf[IMAGE_BYTES];
  size_t i;

  REQUIRE (backend_pread (b, buf, count, offset) == 0, "read back: %m");
  for (i = 0; i < count; i++)
    REQUIRE (buf[i] == byte, "byte %zu: %#x, expected %#x",
           (size_t) offset + i, buf[i], byte);
}

static void
expect_errno (int r, int err, const char *what)
{
  REQUIRE (r == -1 && errno == err, "%s: r=%d errno=%d, expected %d",
         what, r, errno, err);
}

static void
test_errors (struct backend *b)
{
  char buf[8192];

  fill (b, 'A', 65536, 0);
  set_rules (b, "write start=4096 length=4096 error=EIO\n"
             "read start=16K length=1 error=EIO");
  memset (buf, 'B', sizeof buf);
  REQUIRE (backend_pwrite (b, buf, 4096, 0) == 0, "write beside the range");
  expect_errno (backend_pwrite (b, buf, 4096, 4096), EIO, "write on it");
  expect_errno (backend_pwrite (b, buf, 8192, 0), EIO, "write across it");
  expect_bytes (b, 'A', 4096, 4096);           /* nothing reached it */
  expect_errno (backend_pread (b, buf, 512, 16383), EIO, "read on it");
  REQUIRE (backend_pread (b, buf, 4096, 12288) == 0, "read before it");
  REQUIRE (backend_pread (b, buf, 4096, 16385) == 0, "read after it");

  /* Short transfers: the prefix lands, the rest does not. */
  clear_rules (b);
  fill (b, 'A', 65536, 0);
  memset (buf, 'B', sizeof buf);
  set_rules (b, "write start=6144 end=8K short error=ENOSPC\n"
             "write start=32K length=4K short=1000");
  expect_errno (backend_pwrite (b, buf, 4096, 4096), ENOSPC, "short");
  expect_bytes (b, 'B', 2048, 4096);
  expect_bytes (b, 'A', 2048, 6144);
  expect_errno (backend_pwrite (b, buf, 4096, 32768), EIO, "short=");
  expect_bytes (b, 'B', 1000, 32768);
  expect_bytes (b, 'A', 3096, 33768);
  set_rules (b, "read start=6K end=8K short");
  memset (buf, 'z', sizeof buf);
  expect_errno (backend_pread (b, buf, 4096, 4096), EIO, "short read");
  REQUIRE (buf[0] == 'B' && buf[2047] == 'B' && buf[2048] == 'z',
         "short read: the prefix only");
  clear_rules (b);
  REQUIRE (backend_pwrite (b, buf, 4096, 4096) == 0, "cleared: write");
}

static void
test_nth_and_sync (struct backend *b)
{
  char buf[512] = { 0 };
  int i;

  set_rules (b, "write nth=3 count=2 error=ENOSPC\nsync error=EIO");
  for (i = 1; i <= 6; i++) {
    int r = backend_pwrite (b, buf, 512, 0);
    if (i == 3 || i == 4)
      expect_errno (r, ENOSPC, "write 3 and 4");
    else
      REQUIRE (r == 0, "write %d: %m", i);
  }
  expect_errno (backend_sync (b), EIO, "sync");
  expect_errno (backend_sync (b), EIO, "sync again");
  set_rules (b, "discard error=EIO");
  REQUIRE (backend_sync (b) == 0, "sync after the rule went: %m");
  expect_errno (backend_discard (b, 4096, 0), EIO, "discard");
}

static void
test_delay (struct backend *b)
{
  char buf[512];
  double t;

  set_rules (b, "read length=512 delay=60ms\nread length=512 delay=40");
  t = now_ms ();
  REQUIRE (backend_pread (b, buf, 512, 0) == 0, "delayed read");
  t = now_ms () - t;
  REQUIRE (t >= 99, "delays add up: %.1f ms", t);
  t = now_ms ();
  REQUIRE (backend_pread (b, buf, 512, 4096) == 0, "read elsewhere");
  REQUIRE (now_ms () - t < 50, "an op outside the range waited");
}

static atomic_int stalled_result = 1;

static void *
stalled_write (void *arg)
{
  char buf[512] = { 'S' };

  atomic_store (&stalled_result,
                backend_pwrite (arg, buf, 512, 8192) == 0 ? 0 : errno);
  return NULL;
}

static void
test_stall (struct backend *b)
{
  pthread_t t;
  char buf[512];
  double deadline;

  set_rules (b, "write start=8K length=512 stall");
  REQUIRE (pthread_create (&t, NULL, stalled_write, b) == 0, "thread");
  usleep (300 * 1000);
  REQUIRE (atomic_load (&stalled_result) == 1, "the stalled write returned");
  REQUIRE (backend_pread (b, buf, 512, 8192) == 0, "a read went on");
  /* The stall goes, an error comes in its place. */
  set_rules (b, "write start=8K length=512 error=EIO");
  deadline = now_ms () + WAIT_MS;
  while (atomic_load (&stalled_result) == 1) {
    REQUIRE (now_ms () < deadline, "not released");
    usleep (1000);
  }
  pthread_join (t, NULL);
  REQUIRE (atomic_load (&stalled_result) == EIO, "released into EIO: %d",
         atomic_load (&stalled_result));
}

static void
test_broken_file (struct backend *b)
{
  FILE *fp;
  char buf[512];
  double deadline = now_ms () + WAIT_MS;

  set_rules (b, "read length=512 error=EIO");
  fp = fopen (rules_path, "w");    /* rewritten in place, not renamed */
  REQUIRE (fp && fputs ("read errorr=EIO\n", fp) >= 0 && fclose (fp) == 0,
         "rewrite");
  /* A file that does not parse injects nothing. */
  while (backend_pread (b, buf, 512, 0) == -1)
    REQUIRE (now_ms () < deadline, "the broken file still faults");
}

int
main (void)
{
  struct backend *file, *b;
  FILE *fp;

  test_language ();
  snprintf (dir, sizeof dir, "%s/dmcrypt-fault-test.XXXXXX",
            getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
  REQUIRE (mkdtemp (dir), "mkdtemp");
  atexit (remove_scratch);
  snprintf (rules_path, sizeof rules_path, "%s/rules", dir);
  snprintf (image_path, sizeof image_path, "%s/image", dir);
  REQUIRE ((fp = fopen (image_path, "w")) && ftruncate (fileno (fp),
                                                      IMAGE_BYTES) == 0
         && fclose (fp) == 0, "image");

  /* A rules file that does not parse at open refuses the open. */
  fp = fopen (rules_path, "w");
  REQUIRE (fp && fputs ("read error=EBOGUS\n", fp) >= 0 && fclose (fp) == 0,
         "rules");
  file = backend_file_open (image_path, false);
  REQUIRE (file, "open");
  REQUIRE (backend_fault_wrap (file, rules_path) == NULL, "bad rules taken");
  unlink (rules_path);
  b = backend_fault_wrap (file, rules_path);
  REQUIRE (b && b->size == IMAGE_BYTES && !b->readonly && b->can_discard,
         "wrap");

  test_errors (b);
  test_nth_and_sync (b);
  test_delay (b);
  test_stall (b);
  test_broken_file (b);
  backend_close (b);
  printf ("PASS\n");
  return 0;
}
