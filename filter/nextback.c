/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The backend over the next layer (nextback.h).  Requests go down one
 * at a time when the layer below cannot take them in parallel: nbdkit
 * serialises the requests of its own connections, but not the calls of
 * the engine's threads. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <nbdkit-filter.h>

#include "nextback.h"

/* nbdkit takes 32-bit counts; the engine's chunks are far smaller, but
 * a discard may not be. */
#define MAX_CALL (1u << 30)

struct nextback
{
  nbdkit_next *next;
  bool serialise;
  bool can_flush, can_trim;
  pthread_mutex_t lock;
};

static struct nextback *
nb_of (struct backend *b)
{
  return b->priv;
}

static void
enter (struct nextback *n)
{
  if (n->serialise)
    pthread_mutex_lock (&n->lock);
}

static int
leave (struct nextback *n, int r, int err)
{
  if (n->serialise)
    pthread_mutex_unlock (&n->lock);
  if (r == -1)
    errno = err ? err : EIO;
  return r == -1 ? -1 : 0;
}

static int
nb_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  struct nextback *n = nb_of (b);
  char *p = buf;
  int r = 0, err = 0;

  while (count > 0 && r == 0) {
    uint32_t len = count > MAX_CALL ? MAX_CALL : count;

    enter (n);
    r = leave (n, n->next->pread (n->next, p, len, offset, 0, &err), err);
    p += len; offset += len; count -= len;
  }
  return r;
}

static int
nb_pwrite (struct backend *b, const void *buf, size_t count, uint64_t offset)
{
  struct nextback *n = nb_of (b);
  const char *p = buf;
  int r = 0, err = 0;

  while (count > 0 && r == 0) {
    uint32_t len = count > MAX_CALL ? MAX_CALL : count;

    enter (n);
    r = leave (n, n->next->pwrite (n->next, p, len, offset, 0, &err), err);
    p += len; offset += len; count -= len;
  }
  return r;
}

/* A layer that cannot flush has nothing volatile to flush (nbdkit's
 * memory plugin, a read-only export). */
static int
nb_sync (struct backend *b)
{
  struct nextback *n = nb_of (b);
  int err = 0;

  if (!n->can_flush)
    return 0;
  enter (n);
  return leave (n, n->next->flush (n->next, 0, &err), err);
}

static int
nb_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  struct nextback *n = nb_of (b);
  int r = 0, err = 0;

  if (!n->can_trim) {
    errno = EOPNOTSUPP;
    return -1;
  }
  while (count > 0 && r == 0) {
    uint32_t len = count > MAX_CALL ? MAX_CALL : count;

    enter (n);
    r = leave (n, n->next->trim (n->next, len, offset, 0, &err), err);
    offset += len; count -= len;
  }
  return r;
}

static void
nb_close (struct backend *b)
{
  struct nextback *n = nb_of (b);

  pthread_mutex_destroy (&n->lock);
  free (n);
  free (b);
}

static const struct backend_ops next_ops = {
  .name = "next",
  .pread = nb_pread,
  .pwrite = nb_pwrite,
  .sync = nb_sync,
  .discard = nb_discard,
  .close = nb_close,
};

struct backend *
backend_next_open (nbdkit_next *next, bool serialise, bool readonly)
{
  struct backend *b = calloc (1, sizeof *b);
  struct nextback *n = calloc (1, sizeof *n);
  int64_t size = next->get_size (next);
  int can_write = next->can_write (next);
  int can_flush = next->can_flush (next);
  int can_trim = next->can_trim (next);

  if (b == NULL || n == NULL) {
    nbdkit_error ("calloc: %m");
    goto fail;
  }
  if (size == -1 || can_write == -1 || can_flush == -1 || can_trim == -1)
    goto fail;          /* the layer below said why */
  n->next = next;
  n->serialise = serialise;
  n->can_flush = can_flush > 0;
  n->can_trim = can_trim > 0 && can_write > 0 && !readonly;
  pthread_mutex_init (&n->lock, NULL);
  b->ops = &next_ops;
  b->priv = n;
  b->size = size;
  b->readonly = readonly || can_write == 0;
  b->can_discard = n->can_trim;
  return b;

 fail:
  free (n);
  free (b);
  return NULL;
}
