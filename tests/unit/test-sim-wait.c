/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated device with real threads (backend/sim): submitters
 * that find the block queue full sleep, and completions serve them in
 * the order they went to sleep, whatever order their threads wake in.
 * A usb model (one tag, nr-requests 1) runs its clock 200 times slower
 * than the wall, so that the first write holds the only request for
 * some 80 ms while six more threads, started one after another, each
 * go to sleep (the device's statistics count the sleepers).  Then the
 * writes must complete in the order of their threads' starts.  Also under the
 * request lists of kernel=3.16 with nr-requests 1, where the first
 * submitter may batch: the others still sleep and go in order. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../backend/backend.h"
#include "../../backend/submitter.h"
#include "../../backend/sim/sim.h"

#include "check.h"

#define WRITERS 7
#define WRITE_BYTES 65536

struct writer
{
  struct backend *b;
  unsigned id;
  char *buf;
  bool submitted;               /* backend_submit_write returned */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static unsigned order[WRITERS], ndone;

static void
write_done (void *opaque, int err)
{
  struct writer *w = opaque;

  pthread_mutex_lock (&lock);
  REQUIRE (err == 0, "write %u failed: %s", w->id, strerror (err));
  order[ndone++] = w->id;
  pthread_cond_signal (&all_done);
  pthread_mutex_unlock (&lock);
}

/* One after another on the stick: no merge costs; never two queued
 * at once, so no two merge in the queue. */
static void *
writer_main (void *arg)
{
  struct writer *w = arg;
  struct backend_submitter who = { .context = 100 + w->id, .cpu = 0,
                                   .name = "writer" };

  backend_set_submitter (&who);
  backend_submit_write (w->b, w->buf, WRITE_BYTES,
                        (uint64_t) w->id * WRITE_BYTES, write_done, w);
  pthread_mutex_lock (&lock);
  w->submitted = true;
  pthread_mutex_unlock (&lock);
  return NULL;
}

static unsigned
completed (void)
{
  unsigned n;

  pthread_mutex_lock (&lock);
  n = ndone;
  pthread_mutex_unlock (&lock);
  return n;
}

static bool
submitted (struct writer *w)
{
  bool done;

  pthread_mutex_lock (&lock);
  done = w->submitted;
  pthread_mutex_unlock (&lock);
  return done;
}

static uint64_t
sleeps (struct backend *b)
{
  struct sim_stats st;

  REQUIRE (backend_sim_stats (b, &st), "not a simulated device");
  return st.sleeps;
}

static void
run (const char *kernel)
{
  char path[] = "/tmp/test-sim-wait.XXXXXX";
  struct sim_config cfg = {
    .device = "usb", .speed = 0.005, .nr_requests = 1, .kernel = kernel,
  };
  struct writer w[WRITERS];
  pthread_t t[WRITERS];
  struct backend *lower, *b;
  unsigned i;
  int fd = mkstemp (path);

  REQUIRE (fd >= 0 && ftruncate (fd, 64 << 20) == 0, "scratch file");
  close (fd);
  lower = backend_file_open (path, false);
  REQUIRE (lower, "backend_file_open");
  b = backend_sim_wrap (lower, &cfg);
  REQUIRE (b && backend_sim_start (b) == 0, "backend_sim_wrap");
  ndone = 0;
  for (i = 0; i < WRITERS; i++) {
    w[i] = (struct writer) { b, i, calloc (1, WRITE_BYTES), false };
    REQUIRE (w[i].buf, "calloc");
    REQUIRE (pthread_create (&t[i], NULL, writer_main, &w[i]) == 0,
             "pthread_create");
    /* The first takes the request; each later one sleeps before the
     * next starts, all while the first is at the device. */
    while (i == 0 ? !submitted (&w[0]) : sleeps (b) < i) {
      REQUIRE (completed () == 0, "the first write completed before "
               "writer %u slept: the host is too slow for this test", i);
      usleep (100);
    }
  }
  for (i = 0; i < WRITERS; i++)
    pthread_join (t[i], NULL);
  pthread_mutex_lock (&lock);
  while (ndone < WRITERS)
    pthread_cond_wait (&all_done, &lock);
  pthread_mutex_unlock (&lock);
  printf ("%s: %u writers, %llu slept; completion order:", kernel
          ? kernel : "blk-mq", WRITERS, (unsigned long long) sleeps (b));
  for (i = 0; i < WRITERS; i++)
    printf (" %u", order[i]);
  printf ("\n");
  CHECK (sleeps (b) == WRITERS - 1);
  for (i = 0; i < WRITERS; i++)
    CHECK_MSG (order[i] == i, "%s: write %u completed as %u", kernel
               ? kernel : "blk-mq", order[i], i);
  backend_close (b);
  for (i = 0; i < WRITERS; i++)
    free (w[i].buf);
  unlink (path);
}

int
main (void)
{
  run (NULL);
  run ("3.16");
  if (failures)
    return 1;
  printf ("ok\n");
  return 0;
}
