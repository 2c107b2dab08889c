/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The trace file: blkparse's default line layout, written under a lock
 * so that lines from concurrent threads never interleave, and only ever
 * in whole lines, so that a server killed mid-run leaves a file every
 * reader can still parse. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "trace.h"

/* Lines are gathered here and written whole: a line per event must not
 * cost a syscall. */
#define TRACE_BUFFER (1 << 20)  /* bytes */
#define MAX_EVENT_LINE 256      /* bytes; an event line is about 70 */

struct trace
{
  pthread_mutex_t lock;
  int fd;
  char *path;
  char *buf;                    /* whole lines not yet written */
  size_t len;                   /* bytes in buf */
  int write_errno;              /* the first failed write; 0 if none */
  unsigned dev_major, dev_minor;
  uint64_t seq;                 /* events written so far */
  uint64_t existing_bytes;      /* the file's size when opened */
  struct timespec start;        /* CLOCK_MONOTONIC at open: time 0 */
  uint64_t (*now_ns) (void *);  /* the run's clock; NULL: CLOCK_MONOTONIC */
  void *clock_arg;
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

static int
write_all (int fd, const char *p, size_t n)
{
  ssize_t r;

  while (n > 0) {
    r = write (fd, p, n);
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1)
      return -1;
    p += r;
    n -= r;
  }
  return 0;
}

/* Called with the lock held.  After a failure the trace stops: a trace
 * with holes would mislead more than a short one. */
static void
flush_locked (struct trace *t)
{
  if (t->len > 0 && t->write_errno == 0
      && write_all (t->fd, t->buf, t->len) == -1) {
    t->write_errno = errno;
    nbdkit_error ("trace: %s: write: %m (no more events are traced)",
                  t->path);
  }
  t->len = 0;
}

/* The file name as the marker carries it: the rest of the line, so
 * spaces stay, but no byte may end the line or look like an escape. */
static void
escape_path (char *out, const char *path)
{
  for (; *path; path++) {
    unsigned char c = *path;

    if (c < 0x20 || c == 0x7f || c == '\\')
      out += sprintf (out, "\\%03o", c);
    else
      *out++ = c;
  }
  *out = '\0';
}

/* The run marker: a blkparse message line ("m N", sequence 0, pid 0, as
 * blkparse prints the kernel's blk_add_trace_msg notes) at time 0, so
 * that readers of blkparse text pass over it and dmcrypt-trace starts a
 * new run at it. */
static int
write_run_marker (struct trace *t, const char *image, bool cut_line)
{
  char when[32], *file, *line;
  struct timespec now;
  struct tm tm;
  int cpu = sched_getcpu (), r;

  clock_gettime (CLOCK_REALTIME, &now);
  gmtime_r (&now.tv_sec, &tm);
  strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  file = malloc (4 * strlen (image) + 1);
  if (file == NULL)
    return -1;
  escape_path (file, image);
  r = asprintf (&line, "%s%3u,%-3u %2d %8s %5d.%09lu %5u %2s %3s "
                "dmcrypt-run start=%s.%06ldZ pid=%d dev=%u,%u file=%s\n",
                cut_line ? "\n" : "", t->dev_major, t->dev_minor,
                cpu < 0 ? 0 : cpu, "0", 0, 0ul, 0u, "m", "N", when,
                now.tv_nsec / 1000, (int) getpid (), t->dev_major,
                t->dev_minor, file);
  free (file);
  if (r == -1)
    return -1;
  r = write_all (t->fd, line, r);
  free (line);
  return r;
}

/* The size of what earlier runs left, and whether their last line was
 * cut short (by a full disk, or by an older version killed with half a
 * buffer written): the marker must begin a line of its own. */
static void
look_at_existing (struct trace *t, bool *cut_line)
{
  struct stat st;
  char last;

  *cut_line = false;
  if (fstat (t->fd, &st) == -1 || !S_ISREG (st.st_mode) || st.st_size == 0)
    return;
  t->existing_bytes = st.st_size;
  *cut_line = pread (t->fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

static struct trace *
trace_new (const char *path, unsigned dev_major, unsigned dev_minor)
{
  struct trace *t = calloc (1, sizeof *t);

  if (t == NULL)
    return NULL;
  t->fd = -1;
  t->path = strdup (path);
  t->buf = malloc (TRACE_BUFFER);
  if (t->path == NULL || t->buf == NULL) {
    free (t->path);
    free (t->buf);
    free (t);
    return NULL;
  }
  t->dev_major = dev_major;
  t->dev_minor = dev_minor;
  pthread_mutex_init (&t->lock, NULL);
  return t;
}

struct trace *
trace_open (const char *path, unsigned dev_major, unsigned dev_minor,
            const char *image)
{
  const int flags = O_APPEND | O_CREAT | O_CLOEXEC;
  struct trace *t = trace_new (path, dev_major, dev_minor);
  bool cut_line;

  if (t == NULL) {
    nbdkit_error ("trace: %m");
    return NULL;
  }
  /* Read access only serves the look at the last byte. */
  t->fd = open (path, O_RDWR | flags, 0666);
  if (t->fd == -1 && errno == EACCES)
    t->fd = open (path, O_WRONLY | flags, 0666);
  if (t->fd == -1) {
    nbdkit_error ("trace: %s: %m", path);
    trace_close (t);
    return NULL;
  }
  look_at_existing (t, &cut_line);
  clock_gettime (CLOCK_MONOTONIC, &t->start);
  if (write_run_marker (t, image, cut_line) == -1) {
    nbdkit_error ("trace: %s: %m", path);
    trace_close (t);
    return NULL;
  }
  return t;
}

uint64_t
trace_existing_bytes (const struct trace *t)
{
  return t ? t->existing_bytes : 0;
}

void
trace_close (struct trace *t)
{
  if (t == NULL)
    return;
  flush_locked (t);
  if (t->fd >= 0 && close (t->fd) == -1)
    nbdkit_error ("trace: %s: close: %m", t->path);
  pthread_mutex_destroy (&t->lock);
  free (t->buf);
  free (t->path);
  free (t);
}

void
trace_set_clock (struct trace *t, uint64_t (*now_ns) (void *arg), void *arg)
{
  if (t == NULL)
    return;
  pthread_mutex_lock (&t->lock);
  t->now_ns = now_ns;
  t->clock_arg = arg;
  pthread_mutex_unlock (&t->lock);
}

/* The event's time since the run began.  Called with the lock held. */
static void
event_time (const struct trace *t, struct timespec *out)
{
  uint64_t ns;

  if (t->now_ns) {
    ns = t->now_ns (t->clock_arg);
    out->tv_sec = ns / 1000000000;
    out->tv_nsec = ns % 1000000000;
    return;
  }
  clock_gettime (CLOCK_MONOTONIC, out);
  out->tv_sec -= t->start.tv_sec;
  out->tv_nsec -= t->start.tv_nsec;
  if (out->tv_nsec < 0) {
    out->tv_nsec += 1000000000;
    out->tv_sec--;
  }
}

/* The tail after the header: "sector + count [name]" for Q, I, M, G,
 * S and D, with the errno in place of the name for C; a flush carries
 * no sectors. */
static int
format_tail (char *buf, size_t size, char action, uint64_t sector,
             uint64_t nsect, int error, const char *name)
{
  if (action == 'C') {
    if (nsect)
      return snprintf (buf, size, "%" PRIu64 " + %" PRIu64 " [%d]\n",
                       sector, nsect, -error);
    return snprintf (buf, size, "%" PRIu64 " [%d]\n", sector, -error);
  }
  if (nsect)
    return snprintf (buf, size, "%" PRIu64 " + %" PRIu64 " [%s]\n",
                     sector, nsect, name);
  return snprintf (buf, size, "[%s]\n", name);
}

/* One line: the header for ACTION and RWBS on CPU (-1: the caller's),
 * then TAIL. */
static void
emit_line (struct trace *t, const char *act, const char *rwbs,
           const char *tail, int cpu)
{
  struct timespec ts;
  int n, saved_errno = errno;

  if (cpu < 0)
    cpu = sched_getcpu ();
  pthread_mutex_lock (&t->lock);
  if (t->len + MAX_EVENT_LINE > TRACE_BUFFER)
    flush_locked (t);
  /* Time and sequence are taken under the lock so both are monotonic
   * down the file.  After a failed write nothing more is traced. */
  if (t->write_errno == 0) {
    event_time (t, &ts);
    t->seq++;
    n = snprintf (t->buf + t->len, MAX_EVENT_LINE,
                  "%3u,%-3u %2d %8" PRIu64 " %5ld.%09ld %5d %2s %3s %s",
                  t->dev_major, t->dev_minor, cpu < 0 ? 0 : cpu, t->seq,
                  (long) ts.tv_sec, (long) ts.tv_nsec, (int) gettid (), act,
                  rwbs, tail);
    if (n > 0 && n < MAX_EVENT_LINE)
      t->len += n;
  }
  pthread_mutex_unlock (&t->lock);
  errno = saved_errno;
}

static const char *
who_name (const struct trace_who *who)
{
  return who && who->name ? who->name : thread_name ();
}

void
trace_event_by (struct trace *t, char action, const char *rwbs,
                uint64_t sector, uint64_t nsect, int error,
                const struct trace_who *who)
{
  char tail[96];
  const char act[2] = { action, '\0' };

  if (t == NULL)
    return;
  format_tail (tail, sizeof tail, action, sector, nsect, error,
               who_name (who));
  emit_line (t, act, rwbs, tail, who ? who->cpu : -1);
}

void
trace_event (struct trace *t, char action, const char *rwbs,
             uint64_t sector, uint64_t nsect, int error)
{
  trace_event_by (t, action, rwbs, sector, nsect, error, NULL);
}

void
trace_plug (struct trace *t, const char *action, unsigned count,
            const struct trace_who *who)
{
  char tail[64];

  if (t == NULL)
    return;
  if (action[0] == 'P')
    snprintf (tail, sizeof tail, "[%s]\n", who_name (who));
  else
    snprintf (tail, sizeof tail, "[%s] %u\n", who_name (who), count);
  emit_line (t, action, "N", tail, who ? who->cpu : -1);
}
