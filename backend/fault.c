/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fault-injecting backend (see fault.h).  Every operation looks at
 * the rules file (one stat(2), as nbdkit's error filter re-checks its
 * file per request) and reads it again when it changed; then it asks
 * the rules in force what to do.  No thread of its own, so nothing to
 * restart after nbdkit forks. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/log.h"
#include "fault.h"

#define MAX_RULES_FILE_BYTES (64 * 1024)

/* What is compared to notice a change of the rules file. */
struct file_id
{
  bool exists;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
};

struct fault
{
  struct backend *lower;
  char *path;
  pthread_rwlock_t lock;        /* RULES and ID: read by operations,
                                   written when the file changed */
  pthread_mutex_t reading;      /* one reader of the file at a time */
  struct fault_rules *rules;    /* NULL: none */
  struct file_id id;            /* the file as last read */
  uint64_t generation;          /* times the rules were replaced */
};

static const char *
op_name (enum fault_op op)
{
  switch (op) {
  case FAULT_READ: return "read";
  case FAULT_WRITE: return "write";
  case FAULT_SYNC: return "sync";
  default: return "discard";
  }
}

/* ---- Reading the rules file ---- */

static bool
same_file (const struct file_id *a, const struct file_id *b)
{
  if (a->exists != b->exists)
    return false;
  return !a->exists
    || (a->dev == b->dev && a->ino == b->ino && a->size == b->size
        && a->mtime.tv_sec == b->mtime.tv_sec
        && a->mtime.tv_nsec == b->mtime.tv_nsec);
}

static void
identify (const struct stat *st, struct file_id *id)
{
  id->exists = true;
  id->dev = st->st_dev;
  id->ino = st->st_ino;
  id->size = st->st_size;
  id->mtime = st->st_mtim;
}

/* The file's content (NUL-terminated, malloc'd) and identity; a file
 * that does not exist reads as empty.  NULL after nbdkit_error. */
static char *
read_rules_file (const char *path, struct file_id *id)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  char *text = NULL;
  ssize_t r;

  memset (id, 0, sizeof *id);
  if (fd == -1 && errno == ENOENT)
    return strdup ("");
  if (fd == -1 || fstat (fd, &st) == -1) {
    nbdkit_error ("fault rules %s: %m", path);
    goto out;
  }
  identify (&st, id);
  if (st.st_size > MAX_RULES_FILE_BYTES) {
    nbdkit_error ("fault rules %s: larger than %d bytes", path,
                  MAX_RULES_FILE_BYTES);
    goto out;
  }
  if ((text = calloc (1, st.st_size + 1)) == NULL
      || (r = pread (fd, text, st.st_size, 0)) == -1) {
    nbdkit_error ("fault rules %s: %m", path);
    free (text);
    text = NULL;
  }
 out:
  if (fd >= 0)
    close (fd);
  return text;
}

/* Parses the file into *RULES (NULL: no rules).  -1 on any error. */
static int
load_rules (const char *path, struct file_id *id, struct fault_rules **rules)
{
  char *text = read_rules_file (path, id);
  int r;

  *rules = NULL;
  if (text == NULL)
    return -1;
  r = fault_rules_parse (text, path, rules);
  free (text);
  return r;
}

/* ---- The rules in force ---- */

static bool
changed (struct fault *f, const struct file_id *id)
{
  bool r;

  pthread_rwlock_rdlock (&f->lock);
  r = !same_file (id, &f->id);
  pthread_rwlock_unlock (&f->lock);
  return r;
}

/* The file as it is now (no file: nothing exists). */
static void
look (const struct fault *f, struct file_id *id)
{
  struct stat st;

  memset (id, 0, sizeof *id);
  if (stat (f->path, &st) == 0)
    identify (&st, id);
}

/* Reads the file again if it changed since it was last read.  A file
 * that does not parse injects nothing, so that replacing a stall by a
 * typo still releases it; the error is in the log. */
static void
refresh (struct fault *f)
{
  struct fault_rules *rules, *old;
  struct file_id id;

  look (f, &id);
  if (!changed (f, &id))
    return;
  pthread_mutex_lock (&f->reading);
  if (changed (f, &id)) {
    if (load_rules (f->path, &id, &rules) == -1)
      rules = NULL;
    nbdkit_debug ("fault: %zu rules from %s", rules ? rules->n : 0,
                  f->path);
    pthread_rwlock_wrlock (&f->lock);
    old = f->rules;
    f->rules = rules;
    f->id = id;
    f->generation++;
    pthread_rwlock_unlock (&f->lock);
    fault_rules_free (old);
  }
  pthread_mutex_unlock (&f->reading);
}

static void
sleep_us (uint64_t us)
{
  struct timespec t = { .tv_sec = us / 1000000,
                        .tv_nsec = us % 1000000 * 1000 };

  while (nanosleep (&t, &t) == -1 && errno == EINTR)
    ;
}

/* A stalled operation looks at the file every FAULT_POLL_MS until the
 * rules it was judged by (GENERATION) are replaced, by itself or by
 * another operation. */
static void
wait_for_change (struct fault *f, uint64_t generation)
{
  uint64_t now;

  do {
    sleep_us (FAULT_POLL_MS * 1000);
    refresh (f);
    pthread_rwlock_rdlock (&f->lock);
    now = f->generation;
    pthread_rwlock_unlock (&f->lock);
  } while (now == generation);
}

/* What the rules do to OP: a stall waits for the rules to change and
 * asks again; delays are slept here. */
static void
decide (struct fault *f, enum fault_op op, uint64_t count, uint64_t offset,
        struct fault_verdict *v)
{
  uint64_t generation;

  for (;;) {
    refresh (f);
    pthread_rwlock_rdlock (&f->lock);
    fault_rules_judge (f->rules, op, count, offset, v);
    generation = f->generation;
    pthread_rwlock_unlock (&f->lock);
    if (!v->stall)
      break;
    nbdkit_debug ("fault: stall: %s of %" PRIu64 " bytes at %" PRIu64,
                  op_name (op), count, offset);
    wait_for_change (f, generation);
    nbdkit_debug ("fault: released: %s of %" PRIu64 " bytes at %" PRIu64,
                  op_name (op), count, offset);
  }
  if (v->delay_us)
    sleep_us (v->delay_us);
  if (v->error)
    nbdkit_debug ("fault: %s of %" PRIu64 " bytes at %" PRIu64
                  ": %s after %" PRIu64 " bytes", op_name (op), count,
                  offset, strerror (v->error), v->transfer);
}

/* ---- The backend operations ---- */

static int
fault_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  struct fault *f = b->priv;
  struct backend *low = f->lower;
  struct fault_verdict v;

  decide (f, FAULT_READ, count, offset, &v);
  if (v.error == 0)
    return low->ops->pread (low, buf, count, offset);
  if (v.transfer && low->ops->pread (low, buf, v.transfer, offset) == -1)
    return -1;
  errno = v.error;
  return -1;
}

static int
fault_pwrite (struct backend *b, const void *buf, size_t count,
              uint64_t offset)
{
  struct fault *f = b->priv;
  struct backend *low = f->lower;
  struct fault_verdict v;

  decide (f, FAULT_WRITE, count, offset, &v);
  if (v.error == 0)
    return low->ops->pwrite (low, buf, count, offset);
  if (v.transfer && low->ops->pwrite (low, buf, v.transfer, offset) == -1)
    return -1;
  errno = v.error;
  return -1;
}

static int
fault_sync (struct backend *b)
{
  struct fault *f = b->priv;
  struct backend *low = f->lower;
  struct fault_verdict v;

  decide (f, FAULT_SYNC, 0, 0, &v);
  if (v.error == 0)
    return low->ops->sync (low);
  errno = v.error;
  return -1;
}

static int
lower_discard (struct backend *low, uint64_t count, uint64_t offset)
{
  if (low->ops->discard == NULL) {
    errno = EOPNOTSUPP;
    return -1;
  }
  return low->ops->discard (low, count, offset);
}

static int
fault_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  struct fault *f = b->priv;
  struct fault_verdict v;

  decide (f, FAULT_DISCARD, count, offset, &v);
  if (v.error == 0)
    return lower_discard (f->lower, count, offset);
  if (v.transfer && lower_discard (f->lower, v.transfer, offset) == -1)
    return -1;
  errno = v.error;
  return -1;
}

static void
fault_close (struct backend *b)
{
  struct fault *f = b->priv;

  fault_rules_free (f->rules);
  backend_close (f->lower);
  pthread_rwlock_destroy (&f->lock);
  pthread_mutex_destroy (&f->reading);
  free (f->path);
  free (f);
  free (b);
}

static const struct backend_ops fault_ops = {
  .name = "fault",
  .pread = fault_pread,
  .pwrite = fault_pwrite,
  .sync = fault_sync,
  .discard = fault_discard,
  .close = fault_close,
};

struct backend *
backend_fault_wrap (struct backend *lower, const char *rules_path)
{
  struct backend *b = calloc (1, sizeof *b);
  struct fault *f = calloc (1, sizeof *f);

  if (b == NULL || f == NULL || (f->path = strdup (rules_path)) == NULL) {
    nbdkit_error ("fault rules: %m");
    goto err;
  }
  if (load_rules (rules_path, &f->id, &f->rules) == -1)
    goto err;
  f->lower = lower;
  pthread_rwlock_init (&f->lock, NULL);
  pthread_mutex_init (&f->reading, NULL);
  *b = *lower;
  b->ops = &fault_ops;
  b->priv = f;
  b->trace = NULL;
  return b;

 err:
  if (f)
    free (f->path);
  free (f);
  free (b);
  return NULL;
}
