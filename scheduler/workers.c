/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The worker pool, dm-crypt's kcryptd: threads that take chunks off a
 * queue of requests.  A queued request carries a claim cursor, so a
 * worker (or the request's own thread, helping) takes its next chunk in
 * O(1) and a big request is spread over every idle worker.  With
 * same_cpu_crypt a request goes to one worker's own queue instead. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/log.h"
#include "../table/crypt_table.h"
#include "internal.h"

static void
rqueue_append (struct rqueue *q, struct request *r)
{
  r->queue = q;
  r->next = NULL;
  r->prev = q->tail;
  if (q->tail)
    q->tail->next = r;
  else
    q->head = r;
  q->tail = r;
}

static void
rqueue_remove (struct request *r)
{
  struct rqueue *q = r->queue;

  if (r->prev)
    r->prev->next = r->next;
  else
    q->head = r->next;
  if (r->next)
    r->next->prev = r->prev;
  else
    q->tail = r->prev;
  r->queue = NULL;
}

/* Under the lock: takes R's next chunk, dequeuing R with its last. */
static struct chunk *
claim_locked (struct workers *p, struct request *r)
{
  struct chunk *c = &r->chunks[r->claimed++];

  p->depth--;
  if (r->claimed == r->nchunks)
    rqueue_remove (r);
  return c;
}

/* Names the thread and, with high_priority, raises it where the OS
 * allows: best effort and silent, as the kernel's flag is a hint too. */
static struct chunk *
next_chunk_locked (struct workers *p, struct worker *w)
{
  if (w->own.head)
    return claim_locked (p, w->own.head);
  if (p->shared.head)
    return claim_locked (p, p->shared.head);
  return NULL;
}

static void *
worker_main (void *arg)
{
  struct worker *w = arg;
  struct workers *p = w->pool;
  struct engine *e = (struct engine *)
    ((char *) p - offsetof (struct engine, pool));
  char name[16];
  struct chunk *c;

  snprintf (name, sizeof name, "kcryptd/%u", w->index);
  thread_setup (e, name, CONTEXT_KCRYPTD + w->index, -1);
  pthread_mutex_lock (&p->lock);
  while (!p->stopping) {
    c = next_chunk_locked (p, w);
    if (c == NULL) {
      w->idle = true;
      pthread_cond_wait (&w->wake, &p->lock);
      w->idle = false;
      continue;
    }
    pthread_mutex_unlock (&p->lock);
    chunk_run (c, true);
    pthread_mutex_lock (&p->lock);
  }
  pthread_mutex_unlock (&p->lock);
  return NULL;
}

int
workers_start (struct engine *e, unsigned n)
{
  struct workers *p = &e->pool;
  unsigned i;
  int err;

  memset (p, 0, sizeof *p);
  pthread_mutex_init (&p->lock, NULL);
  p->w = calloc (n, sizeof *p->w);
  if (p->w == NULL) {
    nbdkit_error ("calloc: %m");
    return -1;
  }
  for (i = 0; i < n; i++) {
    p->w[i].pool = p;
    p->w[i].index = i;
    pthread_cond_init (&p->w[i].wake, NULL);
    err = pthread_create (&p->w[i].thread, NULL, worker_main, &p->w[i]);
    if (err) {
      errno = err;
      nbdkit_error ("creating worker thread: %m");
      pthread_cond_destroy (&p->w[i].wake);
      workers_stop (p);
      return -1;
    }
    p->n++;
  }
  return 0;
}

void
workers_stop (struct workers *p)
{
  unsigned i;

  if (p->w == NULL)
    return;
  pthread_mutex_lock (&p->lock);
  p->stopping = true;
  for (i = 0; i < p->n; i++)
    pthread_cond_signal (&p->w[i].wake);
  pthread_mutex_unlock (&p->lock);
  for (i = 0; i < p->n; i++) {
    pthread_join (p->w[i].thread, NULL);
    pthread_cond_destroy (&p->w[i].wake);
  }
  free (p->w);
  p->w = NULL;
  p->n = 0;
  pthread_mutex_destroy (&p->lock);
}

/* Wakes up to WANT idle workers for the shared queue. */
static void
wake_idle_locked (struct workers *p, unsigned want)
{
  unsigned i;

  for (i = 0; i < p->n && want > 0; i++)
    if (p->w[i].idle) {
      p->w[i].idle = false;     /* so one chunk wakes one worker */
      pthread_cond_signal (&p->w[i].wake);
      want--;
    }
}

void
workers_submit (struct workers *p, struct request *r, int worker)
{
  unsigned unclaimed = r->nchunks - r->claimed;

  if (unclaimed == 0)
    return;
  pthread_mutex_lock (&p->lock);
  p->depth += unclaimed;
  if (p->depth > p->depth_max)
    p->depth_max = p->depth;
  if (worker >= 0) {
    struct worker *w = &p->w[worker % p->n];
    rqueue_append (&w->own, r);
    if (w->idle) {
      w->idle = false;
      pthread_cond_signal (&w->wake);
    }
  }
  else {
    rqueue_append (&p->shared, r);
    wake_idle_locked (p, unclaimed);
  }
  pthread_mutex_unlock (&p->lock);
}

struct chunk *
workers_claim (struct workers *p, struct request *r)
{
  struct chunk *c = NULL;

  pthread_mutex_lock (&p->lock);
  if (r->queue && r->claimed < r->nchunks)
    c = claim_locked (p, r);
  pthread_mutex_unlock (&p->lock);
  return c;
}
