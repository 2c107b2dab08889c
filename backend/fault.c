/* The fault-injecting backend (see fault.h).  A watcher thread looks at
 * the rules file every FAULT_POLL_MS and swaps in a new rule set when
 * the file changed; each operation asks the rule set in force what to
 * do, or goes straight through when there is none.
 *
 * The watcher starts with the first operation, not at open: the backend
 * is opened before nbdkit forks, and a thread does not survive a fork
 * (a fork handler puts an instance back to "not started" in the child,
 * should an operation ever come first). */
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

/* What the watcher compares to notice a change of the rules file. */
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
  /* The rules in force: NULL (none: the fast path), a rule set, or
   * &not_started until the first operation starts the watcher. */
  _Atomic (struct fault_rules *) rules;
  struct fault_rules *pending;  /* read at open, in force at start */
  pthread_mutex_t lock;         /* all below, and the rule sets' refs */
  pthread_cond_t changed;       /* the rule set was swapped */
  pthread_cond_t wake;          /* the watcher's sleep (monotonic) */
  uint64_t generation;          /* swaps so far */
  bool started;                 /* the first operation came */
  bool watching;                /* the watcher runs */
  bool stop;                    /* closing: the watcher ends */
  pthread_t watcher;
  struct file_id id;            /* the file as last read */
  struct fault *next;           /* every instance, for the fork handler */
};

static struct fault_rules not_started;

static pthread_mutex_t instances_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fault *instances;

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

static void
init_sync (struct fault *f)
{
  pthread_condattr_t attr;

  pthread_mutex_init (&f->lock, NULL);
  pthread_cond_init (&f->changed, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&f->wake, &attr);
  pthread_condattr_destroy (&attr);
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

/* ---- The rule set in force ---- */

/* Makes RULES the rule set in force and wakes stalled operations.
 * Called with the lock held. */
static void
publish (struct fault *f, struct fault_rules *rules)
{
  struct fault_rules *old = atomic_exchange (&f->rules, rules);

  f->generation++;
  pthread_cond_broadcast (&f->changed);
  if (old != &not_started && old && old->refs == 0)
    fault_rules_free (old);
}

static void
reload_if_changed (struct fault *f)
{
  struct fault_rules *rules;
  struct file_id id = { .exists = false };
  struct stat st;

  if (stat (f->path, &st) == 0)
    identify (&st, &id);
  if (same_file (&id, &f->id))
    return;
  /* A file that does not parse injects nothing, so that replacing a
   * stall by a typo still releases it; the error is in the log. */
  if (load_rules (f->path, &id, &rules) == -1)
    rules = NULL;
  nbdkit_debug ("fault: %zu rules from %s", rules ? rules->n : 0,
                f->path);
  pthread_mutex_lock (&f->lock);
  f->id = id;
  publish (f, rules);
  pthread_mutex_unlock (&f->lock);
}

static void *
watch (void *arg)
{
  struct fault *f = arg;
  struct timespec t;

  pthread_mutex_lock (&f->lock);
  while (!f->stop) {
    clock_gettime (CLOCK_MONOTONIC, &t);
    t.tv_nsec += FAULT_POLL_MS * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
      t.tv_sec++;
      t.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait (&f->wake, &f->lock, &t);
    if (f->stop)
      break;
    pthread_mutex_unlock (&f->lock);
    reload_if_changed (f);
    pthread_mutex_lock (&f->lock);
  }
  pthread_mutex_unlock (&f->lock);
  return NULL;
}

/* The rule set in force (NULL: none), referenced until rules_put, and
 * its generation.  Starts the watcher on first use. */
static struct fault_rules *
rules_get (struct fault *f, uint64_t *generation)
{
  struct fault_rules *r;
  int err;

  pthread_mutex_lock (&f->lock);
  if (!f->started) {
    f->started = true;
    publish (f, f->pending);
    f->pending = NULL;
    err = pthread_create (&f->watcher, NULL, watch, f);
    if (err)
      /* The rules read at open stay in force, unwatched. */
      nbdkit_error ("fault rules: pthread_create: %s", strerror (err));
    f->watching = err == 0;
  }
  r = atomic_load (&f->rules);
  if (r)
    r->refs++;
  *generation = f->generation;
  pthread_mutex_unlock (&f->lock);
  return r;
}

static void
rules_put (struct fault *f, struct fault_rules *r)
{
  pthread_mutex_lock (&f->lock);
  if (r && --r->refs == 0 && r != atomic_load (&f->rules))
    fault_rules_free (r);
  pthread_mutex_unlock (&f->lock);
}

/* Waits until the rule set changes; false if it never will. */
static bool
wait_for_change (struct fault *f, uint64_t generation)
{
  bool watched;

  pthread_mutex_lock (&f->lock);
  while (f->generation == generation && f->watching && !f->stop)
    pthread_cond_wait (&f->changed, &f->lock);
  watched = f->watching && !f->stop;
  pthread_mutex_unlock (&f->lock);
  return watched;
}

static void
sleep_us (uint64_t us)
{
  struct timespec t = { .tv_sec = us / 1000000,
                        .tv_nsec = us % 1000000 * 1000 };

  while (nanosleep (&t, &t) == -1 && errno == EINTR)
    ;
}

/* What the rules do to OP: a stall waits for the rules to change and
 * asks again; delays are slept here. */
static void
decide (struct fault *f, enum fault_op op, uint64_t count, uint64_t offset,
        struct fault_verdict *v)
{
  struct fault_rules *r;
  uint64_t generation;

  for (;;) {
    r = rules_get (f, &generation);
    fault_rules_judge (r, op, count, offset, v);
    rules_put (f, r);
    if (!v->stall)
      break;
    nbdkit_debug ("fault: stall: %s of %" PRIu64 " bytes at %" PRIu64,
                  op_name (op), count, offset);
    if (!wait_for_change (f, generation))
      break;
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

static bool
idle (struct fault *f)
{
  return atomic_load_explicit (&f->rules, memory_order_acquire) == NULL;
}

static int
fault_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  struct fault *f = b->priv;
  struct backend *low = f->lower;
  struct fault_verdict v;

  if (idle (f))
    return low->ops->pread (low, buf, count, offset);
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

  if (idle (f))
    return low->ops->pwrite (low, buf, count, offset);
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

  if (idle (f))
    return low->ops->sync (low);
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

  if (idle (f))
    return lower_discard (f->lower, count, offset);
  decide (f, FAULT_DISCARD, count, offset, &v);
  if (v.error == 0)
    return lower_discard (f->lower, count, offset);
  if (v.transfer && lower_discard (f->lower, v.transfer, offset) == -1)
    return -1;
  errno = v.error;
  return -1;
}

static void
unregister (struct fault *f)
{
  struct fault **p;

  pthread_mutex_lock (&instances_lock);
  for (p = &instances; *p; p = &(*p)->next)
    if (*p == f) {
      *p = f->next;
      break;
    }
  pthread_mutex_unlock (&instances_lock);
}

static void
fault_close (struct backend *b)
{
  struct fault *f = b->priv;
  struct fault_rules *r;
  bool joinable;

  pthread_mutex_lock (&f->lock);
  joinable = f->watching;
  f->stop = true;
  pthread_cond_broadcast (&f->wake);
  pthread_cond_broadcast (&f->changed);
  pthread_mutex_unlock (&f->lock);
  if (joinable)
    pthread_join (f->watcher, NULL);
  unregister (f);
  r = atomic_load (&f->rules);
  if (r != &not_started)
    fault_rules_free (r);
  fault_rules_free (f->pending);
  backend_close (f->lower);
  pthread_cond_destroy (&f->wake);
  pthread_cond_destroy (&f->changed);
  pthread_mutex_destroy (&f->lock);
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

/* In a forked child only the forking thread exists: no watcher, no
 * lock holder.  The rules in force wait for the first operation. */
static void
after_fork_child (void)
{
  struct fault *f;
  struct fault_rules *r;

  pthread_mutex_init (&instances_lock, NULL);
  for (f = instances; f; f = f->next) {
    init_sync (f);
    if (!f->started)
      continue;
    r = atomic_load (&f->rules);
    if (r)
      r->refs = 0;
    f->pending = r;
    f->started = f->watching = false;
    atomic_store (&f->rules, &not_started);
  }
}

static void
register_fork_handler (void)
{
  pthread_atfork (NULL, NULL, after_fork_child);
}

struct backend *
backend_fault_wrap (struct backend *lower, const char *rules_path)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  struct backend *b = calloc (1, sizeof *b);
  struct fault *f = calloc (1, sizeof *f);

  if (b == NULL || f == NULL || (f->path = strdup (rules_path)) == NULL) {
    nbdkit_error ("fault rules: %m");
    goto err;
  }
  if (load_rules (rules_path, &f->id, &f->pending) == -1)
    goto err;
  f->lower = lower;
  atomic_init (&f->rules, &not_started);
  init_sync (f);
  *b = *lower;
  b->ops = &fault_ops;
  b->priv = f;
  b->trace = NULL;
  pthread_once (&once, register_fork_handler);
  pthread_mutex_lock (&instances_lock);
  f->next = instances;
  instances = f;
  pthread_mutex_unlock (&instances_lock);
  return b;

 err:
  if (f)
    free (f->path);
  free (f);
  free (b);
  return NULL;
}
