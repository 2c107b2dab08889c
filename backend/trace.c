/* The trace file: blkparse's default line layout, written under a lock
 * so that lines from concurrent threads never interleave. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "trace.h"

struct trace
{
  pthread_mutex_t lock;
  FILE *fp;
  unsigned dev_major, dev_minor;
  uint64_t seq;                 /* events written so far */
  struct timespec start;        /* CLOCK_MONOTONIC at open: time 0 */
};

/* The calling thread's name ("nbdkit", "kcryptd/0", "dmcrypt_write"):
 * who dispatched an IO is half of what a trace is for. */
static const char *
thread_name (void)
{
  static __thread char name[17];

  if (name[0] == '\0' && prctl (PR_GET_NAME, name) == -1)
    strcpy (name, "?");
  return name;
}

struct trace *
trace_open (const char *path, unsigned dev_major, unsigned dev_minor)
{
  struct trace *t = calloc (1, sizeof *t);

  if (t == NULL) {
    nbdkit_error ("trace: calloc: %m");
    return NULL;
  }
  t->fp = fopen (path, "ae");
  if (t->fp == NULL) {
    nbdkit_error ("trace: %s: %m", path);
    free (t);
    return NULL;
  }
  /* A large buffer: a line per event must not cost a syscall. */
  setvbuf (t->fp, NULL, _IOFBF, 1 << 20);
  pthread_mutex_init (&t->lock, NULL);
  t->dev_major = dev_major;
  t->dev_minor = dev_minor;
  clock_gettime (CLOCK_MONOTONIC, &t->start);
  return t;
}

void
trace_close (struct trace *t)
{
  if (t == NULL)
    return;
  if (fclose (t->fp) == EOF)
    nbdkit_error ("trace: close: %m");
  pthread_mutex_destroy (&t->lock);
  free (t);
}

static void
elapsed_since (const struct timespec *start, struct timespec *out)
{
  clock_gettime (CLOCK_MONOTONIC, out);
  out->tv_sec -= start->tv_sec;
  out->tv_nsec -= start->tv_nsec;
  if (out->tv_nsec < 0) {
    out->tv_nsec += 1000000000;
    out->tv_sec--;
  }
}

/* The tail after the header: "sector + count [name]" for Q and D, with
 * the errno in place of the name for C; a flush carries no sectors. */
static int
format_tail (char *buf, size_t size, char action, uint64_t sector,
             uint64_t nsect, int error)
{
  if (action == 'C') {
    if (nsect)
      return snprintf (buf, size, "%" PRIu64 " + %" PRIu64 " [%d]\n",
                       sector, nsect, -error);
    return snprintf (buf, size, "%" PRIu64 " [%d]\n", sector, -error);
  }
  if (nsect)
    return snprintf (buf, size, "%" PRIu64 " + %" PRIu64 " [%s]\n",
                     sector, nsect, thread_name ());
  return snprintf (buf, size, "[%s]\n", thread_name ());
}

void
trace_event (struct trace *t, char action, const char *rwbs,
             uint64_t sector, uint64_t nsect, int error)
{
  char tail[96];
  struct timespec ts;
  int cpu, saved_errno = errno;
  const char act[2] = { action, '\0' };

  if (t == NULL)
    return;
  format_tail (tail, sizeof tail, action, sector, nsect, error);
  cpu = sched_getcpu ();
  pthread_mutex_lock (&t->lock);
  /* Time and sequence are taken under the lock so both are monotonic
   * down the file. */
  elapsed_since (&t->start, &ts);
  t->seq++;
  fprintf (t->fp, "%3u,%-3u %2d %8" PRIu64 " %5ld.%09ld %5d %2s %3s %s",
           t->dev_major, t->dev_minor, cpu < 0 ? 0 : cpu, t->seq,
           (long) ts.tv_sec, (long) ts.tv_nsec, (int) gettid (), act,
           rwbs, tail);
  pthread_mutex_unlock (&t->lock);
  errno = saved_errno;
}
