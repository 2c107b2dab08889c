/* The trace file: every line must be exactly what blkparse's default
 * format prints for the same fields (re-printed here with blkparse's
 * own header format and checked byte for byte), events come in
 * sequence order with non-decreasing times, and the backend's hook
 * writes D and C around each call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int
main (void)
{
  static const struct backend_ops ops = {
    .name = "fake", .pread = fake_pread, .sync = fake_sync,
  };
  static const char *const tails[] = {
    "2048 + 8 [test-trace]\n", "0 + 1 [0]\n", "7 + 8 [-5]\n",
    "[test-trace]\n", "0 + 256 [test-trace]\n", "0 + 256 [0]\n",
    "[test-trace]\n", "0 [0]\n",
  };
  char path[] = "/tmp/dmcrypt-trace-test.XXXXXX", line[256];
  struct backend b = { .ops = &ops, .dev_major = 254, .dev_minor = 3 };
  unsigned long n = 0;
  double last = 0;
  char buf[131072];
  FILE *fp;
  int fd = mkstemp (path);

  REQUIRE (fd >= 0, "mkstemp");
  close (fd);
  b.trace = trace_open (path, 8, 0);
  REQUIRE (b.trace, "trace_open");
  trace_event (b.trace, 'Q', "W", 2048, 8, 0);
  trace_event (b.trace, 'C', "R", 0, 1, 0);
  trace_event (b.trace, 'C', "W", 7, 8, 5);
  trace_event (b.trace, 'Q', "FWS", 0, 0, 0);
  REQUIRE (backend_pread (&b, buf, sizeof buf, 0) == 0, "pread");
  REQUIRE (backend_sync (&b) == 0, "sync");
  trace_close (b.trace);

  fp = fopen (path, "r");
  REQUIRE (fp, "fopen");
  while (fgets (line, sizeof line, fp)) {
    check_layout (line, n + 1, &last);
    REQUIRE (n < sizeof tails / sizeof tails[0], "too many lines");
    REQUIRE (strlen (line) > strlen (tails[n])
           && strcmp (line + strlen (line) - strlen (tails[n]),
                      tails[n]) == 0, "line %lu ends wrongly: %s", n + 1,
           line);
    n++;
  }
  fclose (fp);
  unlink (path);
  REQUIRE (n == sizeof tails / sizeof tails[0], "%lu lines", n);
  printf ("ok: %lu lines in blkparse's layout\n", n);
  return 0;
}
