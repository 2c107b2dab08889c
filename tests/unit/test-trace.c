/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The trace file: every line must be exactly what blkparse's default
 * format prints for the same fields (re-printed here with blkparse's
 * own header and message formats and checked byte for byte), each run
 * starts with its marker and numbers its events from 1 with
 * non-decreasing times, a second open appends a second run, a cut last
 * line never swallows the marker, the file only ever holds whole lines,
 * and the backend's hook writes D and C around each call.  I and M
 * lines take Q's layout; a clock hook stamps every event with its time,
 * to the nanosecond, once per event in file order even from many
 * threads, and without it the wall clock is back. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backend/backend.h"
#include "../../backend/trace.h"

#include "check.h"

/* Re-prints LINE's fields the way blkparse does and compares. */
static void
check_layout (const char *line, unsigned long expect_seq, double *last)
{
  unsigned maj, min, seq, pid;
  int cpu, consumed;
  long sec, nsec;
  char act[4], rwbs[8], head[128];

  REQUIRE (sscanf (line, "%u,%u %d %u %ld.%ld %u %3s %7s %n", &maj, &min,
                 &cpu, &seq, &sec, &nsec, &pid, act, rwbs,
                 &consumed) == 9, "unparsable: %s", line);
  snprintf (head, sizeof head, "%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s ",
            maj, min, cpu, seq, (int) sec, (unsigned long) nsec, pid, act,
            rwbs);
  REQUIRE (strncmp (line, head, strlen (head)) == 0,
         "layout differs:\n%s%s", line, head);
  REQUIRE (seq == expect_seq, "sequence %u, expected %lu", seq, expect_seq);
  REQUIRE (sec + nsec / 1e9 >= *last, "time went backwards: %s", line);
  *last = sec + nsec / 1e9;
}

/* A run marker, as blkparse prints a message (its handle_notify): the
 * header with sequence "0", pid 0, "m", "N", then the text. */
static void
check_marker (const char *line, const char *image_escaped)
{
  char msg[4096], expect[4200], when[32];
  int cpu, n = 0;

  REQUIRE (sscanf (line, "%*u,%*u %d %*s %*s %*s %*s %*s %n", &cpu, &n) == 1
           && n > 0, "unparsable marker: %s", line);
  REQUIRE (sscanf (line + n, "dmcrypt-run start=%31s", when) == 1,
           "not a run marker: %s", line);
  /* 2026-12-01T10:00:00.123456Z */
  REQUIRE (strlen (when) == 27 && when[10] == 'T' && when[19] == '.'
           && when[26] == 'Z', "start= is not UTC ISO 8601: %s", when);
  snprintf (msg, sizeof msg, "dmcrypt-run start=%s pid=%d dev=8,0 file=%s",
            when, (int) getpid (), image_escaped);
  snprintf (expect, sizeof expect, "%3d,%-3d %2d %8s %5d.%09lu %5u %2s %3s "
            "%s\n", 8, 0, cpu, "0", 0, 0ul, 0u, "m", "N", msg);
  REQUIRE (strcmp (line, expect) == 0, "marker differs:\n%s%s", line,
           expect);
}

static int
fake_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  (void) b; (void) buf; (void) count; (void) offset;
  return 0;
}

static int
fake_sync (struct backend *b)
{
  (void) b;
  return 0;
}

static const char *const tails[] = {
  "2048 + 8 [test-trace]\n", "0 + 1 [0]\n", "7 + 8 [-5]\n",
  "[test-trace]\n", "0 + 256 [test-trace]\n", "0 + 256 [0]\n",
  "[test-trace]\n", "0 [0]\n",
};
#define NTAILS (sizeof tails / sizeof tails[0])

/* One run: the marker, then events whose tails are TAILS. */
static void
write_run (const char *path, const char *image)
{
  static const struct backend_ops ops = {
    .name = "fake", .pread = fake_pread, .sync = fake_sync,
  };
  struct backend b = { .ops = &ops, .dev_major = 254, .dev_minor = 3 };
  char buf[131072];

  b.trace = trace_open (path, 8, 0, image);
  REQUIRE (b.trace, "trace_open");
  trace_event (b.trace, 'Q', "W", 2048, 8, 0);
  trace_event (b.trace, 'C', "R", 0, 1, 0);
  trace_event (b.trace, 'C', "W", 7, 8, 5);
  trace_event (b.trace, 'Q', "FWS", 0, 0, 0);
  REQUIRE (backend_pread (&b, buf, sizeof buf, 0) == 0, "pread");
  REQUIRE (backend_sync (&b) == 0, "sync");
  trace_close (b.trace);
}

/* Checks one run read from FP: its marker, then its events. */
static void
check_run (FILE *fp, const char *image_escaped)
{
  char line[4096];
  double last = 0;
  unsigned long n;

  REQUIRE (fgets (line, sizeof line, fp), "no marker");
  check_marker (line, image_escaped);
  for (n = 0; n < NTAILS; n++) {
    REQUIRE (fgets (line, sizeof line, fp), "only %lu events", n);
    check_layout (line, n + 1, &last);
    REQUIRE (strlen (line) > strlen (tails[n])
             && strcmp (line + strlen (line) - strlen (tails[n]),
                        tails[n]) == 0, "event %lu ends wrongly: %s", n + 1,
             line);
  }
}

static off_t
size_of (const char *path)
{
  struct stat st;

  REQUIRE (stat (path, &st) == 0, "stat %s", path);
  return st.st_size;
}

/* Two runs appended, the second after a cut line of an older writer. */
static void
test_runs (const char *path)
{
  static const char cut[] = "  8,0    1        9     0.0000";
  struct trace *t;
  char line[4096];
  off_t first_run;
  FILE *fp;

  write_run (path, "/srv/disk one.img");
  first_run = size_of (path);
  fp = fopen (path, "a");
  REQUIRE (fp && fputs (cut, fp) >= 0 && fclose (fp) == 0, "append cut");
  t = trace_open (path, 8, 0, "x");
  REQUIRE (t, "trace_open over a trace");
  CHECK (trace_existing_bytes (t) == (uint64_t) first_run + strlen (cut));
  trace_close (t);
  write_run (path, "/srv/odd\nname\\.img");

  fp = fopen (path, "r");
  REQUIRE (fp, "fopen");
  check_run (fp, "/srv/disk one.img");
  REQUIRE (fgets (line, sizeof line, fp), "no cut line");
  CHECK (strncmp (line, cut, strlen (cut)) == 0
         && strcmp (line + strlen (cut), "\n") == 0);
  REQUIRE (fgets (line, sizeof line, fp), "no empty run");
  check_marker (line, "x");
  check_run (fp, "/srv/odd\\012name\\134.img");
  CHECK (fgets (line, sizeof line, fp) == NULL);
  fclose (fp);
  printf ("ok: three runs appended, each after its marker\n");
}

/* More events than the buffer holds, the file looked at before the
 * close: it must end with a whole line. */
static void
test_whole_lines (const char *path)
{
  struct trace *t = trace_open (path, 8, 0, "/img");
  char last;
  off_t size;
  FILE *fp;
  int i;

  REQUIRE (t, "trace_open");
  CHECK (trace_existing_bytes (t) == 0);
  for (i = 0; i < 40000; i++)
    trace_event (t, 'D', "W", 8 * (uint64_t) i, 8, 0);
  size = size_of (path);
  CHECK (size > (1 << 20));
  fp = fopen (path, "r");
  REQUIRE (fp && fseeko (fp, size - 1, SEEK_SET) == 0
           && fread (&last, 1, 1, fp) == 1, "read the last byte");
  fclose (fp);
  CHECK (last == '\n');
  trace_close (t);
  printf ("ok: %lld bytes written before the close, whole lines\n",
          (long long) size);
}

/* A clock that reads out the times it was given, one per event. */
struct fake_clock
{
  const uint64_t *ns;
  size_t next, n;
};

static uint64_t
fake_now (void *arg)
{
  struct fake_clock *c = arg;

  REQUIRE (c->next < c->n, "the clock was read more often than events");
  return c->ns[c->next++];
}

/* The line's time field, as printed. */
static void
time_field (const char *line, char *out, size_t size)
{
  char field[32];

  REQUIRE (sscanf (line, "%*s %*s %*s %31s", field) == 1, "no time: %s",
           line);
  snprintf (out, size, "%s", field);
}

/* LINE is event SEQ at WHEN, byte for byte in blkparse's layout; only
 * the CPU and pid are taken from the line. */
static void
expect_event (const char *line, unsigned long seq, const char *when,
              const char *act, const char *rwbs, const char *tail)
{
  char expect[4096];
  unsigned pid;
  int cpu;

  REQUIRE (sscanf (line, "%*s %d %*s %*s %u", &cpu, &pid) == 2,
           "unparsable: %s", line);
  snprintf (expect, sizeof expect, "%3d,%-3d %2d %8lu %15s %5u %2s %3s %s\n",
            8, 0, cpu, seq, when, pid, act, rwbs, tail);
  CHECK (strcmp (line, expect) == 0);
  if (strcmp (line, expect) != 0)
    fprintf (stderr, "got:      %sexpected: %s", line, expect);
}

/* I and M in Q's layout, every event (Q too) on the hook's clock. */
static void
test_clock (const char *path)
{
  static const uint64_t ns[] = {
    0, 1500, 999999999, 1000000000, 12345678901, 12345678901,
  };
  static const char *const times[] = {
    "0.000000000", "0.000001500", "0.999999999", "1.000000000",
    "12.345678901", "12.345678901",
  };
  static const struct { const char *act, *rwbs, *tail; } events[] = {
    { "Q", "W", "2048 + 8 [test-trace]" },
    { "I", "W", "2048 + 8 [test-trace]" },
    { "M", "W", "2056 + 8 [test-trace]" },
    { "D", "W", "2048 + 16 [test-trace]" },
    { "C", "W", "2048 + 16 [0]" },
    { "I", "FWS", "[test-trace]" },
  };
  struct fake_clock clock = { ns, 0, sizeof ns / sizeof ns[0] };
  struct trace *t = trace_open (path, 8, 0, "/img");
  char line[4096], when[32];
  double last = 0;
  size_t i;
  FILE *fp;

  REQUIRE (t, "trace_open");
  trace_set_clock (t, fake_now, &clock);
  trace_event (t, 'Q', "W", 2048, 8, 0);
  trace_event (t, 'I', "W", 2048, 8, 0);
  trace_event (t, 'M', "W", 2056, 8, 0);
  trace_event (t, 'D', "W", 2048, 16, 0);
  trace_event (t, 'C', "W", 2048, 16, 0);
  trace_event (t, 'I', "FWS", 0, 0, 0);
  trace_set_clock (t, NULL, NULL);
  trace_event (t, 'D', "FWS", 0, 0, 0);
  trace_close (t);
  CHECK (clock.next == clock.n);

  fp = fopen (path, "r");
  REQUIRE (fp && fgets (line, sizeof line, fp), "no marker");
  check_marker (line, "/img");
  for (i = 0; i < clock.n; i++) {
    REQUIRE (fgets (line, sizeof line, fp), "only %zu events", i);
    check_layout (line, i + 1, &last);
    expect_event (line, i + 1, times[i], events[i].act, events[i].rwbs,
                  events[i].tail);
  }
  /* Back on the wall clock: a moment after the open, not 12 s on. */
  REQUIRE (fgets (line, sizeof line, fp), "no last event");
  time_field (line, when, sizeof when);
  CHECK (strtod (when, NULL) < 12);
  CHECK (fgets (line, sizeof line, fp) == NULL);
  fclose (fp);
  printf ("ok: Q, I, M, D, C stamped by the clock hook to the ns\n");
}

#define THREADS 4
#define EVENTS_PER_THREAD 5000

/* A clock that ticks 1 us per reading: read under the trace's lock,
 * event N (from 1) must say N us, whichever thread recorded it. */
static uint64_t
ticking_now (void *arg)
{
  uint64_t *ticks = arg;

  return ++*ticks * 1000;
}

static void *
record_events (void *arg)
{
  struct trace *t = arg;
  int i;

  for (i = 0; i < EVENTS_PER_THREAD; i++)
    trace_event (t, "QIMDC"[i % 5], "W", 8 * (uint64_t) i, 8, 0);
  return NULL;
}

static void
test_clock_threads (const char *path)
{
  struct trace *t = trace_open (path, 8, 0, "/img");
  pthread_t th[THREADS];
  uint64_t ticks = 0, seq, n = 0;
  unsigned long sec, nsec;
  char line[4096];
  double last = 0;
  FILE *fp;
  int i;

  REQUIRE (t, "trace_open");
  trace_set_clock (t, ticking_now, &ticks);
  for (i = 0; i < THREADS; i++)
    REQUIRE (pthread_create (&th[i], NULL, record_events, t) == 0,
             "pthread_create");
  for (i = 0; i < THREADS; i++)
    pthread_join (th[i], NULL);
  trace_close (t);
  CHECK (ticks == THREADS * EVENTS_PER_THREAD);

  fp = fopen (path, "r");
  REQUIRE (fp && fgets (line, sizeof line, fp), "no marker");
  while (fgets (line, sizeof line, fp)) {
    check_layout (line, ++n, &last);
    REQUIRE (sscanf (line, "%*s %*s %" SCNu64 " %lu.%lu", &seq, &sec,
                     &nsec) == 3, "unparsable: %s", line);
    REQUIRE (sec * 1000000000 + nsec == seq * 1000,
             "event %" PRIu64 " at %lu.%09lu s", seq, sec, nsec);
  }
  fclose (fp);
  CHECK (n == THREADS * EVENTS_PER_THREAD);
  printf ("ok: %" PRIu64 " events from %d threads, the clock read once "
          "each, in file order\n", n, THREADS);
}

int
main (void)
{
  char path[] = "/tmp/dmcrypt-trace-test.XXXXXX";
  int fd = mkstemp (path);

  REQUIRE (fd >= 0, "mkstemp");
  close (fd);
  test_runs (path);
  unlink (path);
  test_whole_lines (path);
  unlink (path);
  test_clock (path);
  unlink (path);
  test_clock_threads (path);
  unlink (path);
  return failures != 0;
}
