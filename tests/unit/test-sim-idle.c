/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated device with real threads (backend/sim): CFQ's idle
 * timer, armed at a completion, must fire even when nothing else comes.
 *
 * kernel=3.16, CFQ, the usb model.  Writer A (io_context 1) writes
 * synchronously (REQ_SYNC, as fsync's writes through kcryptd); while
 * its write completes, writer B (io_context 2) queues an asynchronous
 * write elsewhere.  CFQ 3.16 then idles slice_idle for A's next request
 * (cfq_completed_request, cfq_arm_slice_timer: A's is the last sync
 * queue), none comes, and the timer expires A's slice so that B's write
 * goes (cfq_idle_slice_timer).  A's completion callback sleeps a while
 * before it returns, so that the dispatcher, woken by B's arrival, has
 * gone back to sleep before the completion arms the timer: the case in
 * which a dispatcher that learnt of no timer slept for ever and B's
 * write never completed (every submitter waited, nothing completed).
 * The wait for B is bounded: a hang fails the test instead of hanging
 * it. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../backend/backend.h"
#include "../../backend/submitter.h"
#include "../../backend/sim/sim.h"

#include "check.h"

#define WRITE_BYTES 4096
#define B_OFFSET (1ULL << 30)   /* far from A: no merge, no cooperator */
#define HANG_S 20               /* wall seconds: B must be done by then */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static bool a_done, b_done;
static struct backend *dev;
static char buf_a[WRITE_BYTES], buf_b[WRITE_BYTES];

static void
b_finished (void *opaque, int err)
{
  (void) opaque;
  REQUIRE (err == 0, "write B failed: %s", strerror (err));
  pthread_mutex_lock (&lock);
  b_done = true;
  pthread_cond_broadcast (&changed);
  pthread_mutex_unlock (&lock);
}

/* On the completer's thread, before the queue hears of A's
 * completion: B arrives, as a submitter of its own, and the dispatcher
 * it wakes finds A still at the device and goes back to sleep. */
static void
a_finished (void *opaque, int err)
{
  struct backend_submitter b = { .context = 2, .cpu = 1, .name = "B",
                                 .sync = false };
  struct backend_submitter was = backend_submitter ();

  (void) opaque;
  REQUIRE (err == 0, "write A failed: %s", strerror (err));
  backend_set_submitter (&b);
  backend_submit_write (dev, buf_b, WRITE_BYTES, B_OFFSET, b_finished, NULL);
  backend_set_submitter (&was);
  usleep (50000);
  pthread_mutex_lock (&lock);
  a_done = true;
  pthread_cond_broadcast (&changed);
  pthread_mutex_unlock (&lock);
}

/* Waits until *FLAG or HANG_S seconds; false on the timeout. */
static bool
wait_for (bool *flag)
{
  struct timespec until;
  int rc = 0;

  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_sec += HANG_S;
  pthread_mutex_lock (&lock);
  while (!*flag && rc != ETIMEDOUT)
    rc = pthread_cond_timedwait (&changed, &lock, &until);
  rc = *flag;
  pthread_mutex_unlock (&lock);
  return rc;
}

int
main (void)
{
  char path[] = "/tmp/test-sim-idle.XXXXXX";
  struct sim_config cfg = {
    .device = "usb", .speed = 0.5, .kernel = "3.16", .elevator = "cfq",
  };
  struct backend_submitter a = { .context = 1, .cpu = 0, .name = "A",
                                 .sync = true };
  struct backend *lower;
  int fd = mkstemp (path);

  REQUIRE (fd >= 0 && ftruncate (fd, 2 * B_OFFSET) == 0, "scratch file");
  close (fd);
  lower = backend_file_open (path, false);
  REQUIRE (lower, "backend_file_open");
  dev = backend_sim_wrap (lower, &cfg);
  REQUIRE (dev && backend_sim_start (dev) == 0, "backend_sim_wrap");
  backend_set_submitter (&a);
  backend_submit_write (dev, buf_a, WRITE_BYTES, 0, a_finished, NULL);
  REQUIRE (wait_for (&a_done), "write A never completed");
  if (!check_that (wait_for (&b_done), "write B did not complete within "
                   "%d s: CFQ's idle timer, armed at A's completion, never "
                   "fired", HANG_S)) {
    unlink (path);
    return 1;                   /* the device's threads are stuck */
  }
  printf ("an idle timer armed at a completion fired: the idled queue "
          "expired and the other queue's write went\n");
  backend_close (dev);
  unlink (path);
  if (failures)
    return 1;
  printf ("ok\n");
  return 0;
}
