/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel workqueues for the kernel= pipelines (kwq.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "internal.h"

static void
list_init (struct kwork_list *l)
{
  l->head = NULL;
  l->tailp = &l->head;
  l->length = 0;
}

static void
list_append (struct kwork_list *l, struct kwork *w)
{
  w->next = NULL;
  *l->tailp = w;
  l->tailp = &w->next;
  l->length++;
}

static struct kwork *
list_pop (struct kwork_list *l)
{
  struct kwork *w = l->head;

  if (w == NULL)
    return NULL;
  l->head = w->next;
  if (l->head == NULL)
    l->tailp = &l->head;
  l->length--;
  return w;
}

static struct kwork_list *
queue_of (struct kwq *q, struct kwq_thread *t)
{
  return q->bound ? &t->own : &q->shared;
}

static void *
kwq_main (void *arg)
{
  struct kwq_thread *t = arg;
  struct kwq *q = t->wq;
  struct kwork_list *l = queue_of (q, t);
  struct kwork *w;

  thread_setup (q->e, t->name, q->context_base + t->index,
                q->bound ? (int) t->index : -1);
  pthread_mutex_lock (&q->lock);
  for (;;) {
    w = list_pop (l);
    if (w == NULL) {
      if (q->stopping)
        break;
      t->idle = true;
      pthread_cond_wait (&t->wake, &q->lock);
      t->idle = false;
      continue;
    }
    pthread_mutex_unlock (&q->lock);
    w->fn (w);                  /* W may be gone once FN returns */
    pthread_mutex_lock (&q->lock);
  }
  pthread_mutex_unlock (&q->lock);
  return NULL;
}

static int
start_thread (struct kwq *q, unsigned i, const char *name, bool numbered)
{
  struct kwq_thread *t = &q->t[i];
  int err;

  t->wq = q;
  t->index = i;
  list_init (&t->own);
  if (numbered)
    snprintf (t->name, sizeof t->name, "%s/%u", name, i);
  else
    snprintf (t->name, sizeof t->name, "%s", name);
  pthread_cond_init (&t->wake, NULL);
  err = pthread_create (&t->thread, NULL, kwq_main, t);
  if (err) {
    errno = err;
    nbdkit_error ("creating %s thread: %m", t->name);
    pthread_cond_destroy (&t->wake);
    return -1;
  }
  q->n++;
  return 0;
}

int
kwq_start (struct kwq *q, struct engine *e, const char *name,
           bool numbered, unsigned n, bool bound, unsigned context_base)
{
  unsigned i;

  memset (q, 0, sizeof *q);
  q->e = e;
  q->bound = bound;
  q->context_base = context_base;
  list_init (&q->shared);
  pthread_mutex_init (&q->lock, NULL);
  q->t = calloc (n, sizeof *q->t);
  if (q->t == NULL) {
    nbdkit_error ("calloc: %m");
    pthread_mutex_destroy (&q->lock);
    return -1;
  }
  for (i = 0; i < n; i++)
    if (start_thread (q, i, name, numbered) == -1) {
      kwq_stop (q);
      return -1;
    }
  return 0;
}

void
kwq_stop (struct kwq *q)
{
  unsigned i;

  if (q->t == NULL)
    return;
  pthread_mutex_lock (&q->lock);
  q->stopping = true;
  for (i = 0; i < q->n; i++)
    pthread_cond_signal (&q->t[i].wake);
  pthread_mutex_unlock (&q->lock);
  for (i = 0; i < q->n; i++) {
    pthread_join (q->t[i].thread, NULL);
    pthread_cond_destroy (&q->t[i].wake);
  }
  free (q->t);
  q->t = NULL;
  q->n = 0;
  pthread_mutex_destroy (&q->lock);
}

/* Under the lock: wakes the thread that serves W's queue (bound), or
 * the first idle one (unbound; a busy one takes W when it is done). */
static void
wake_locked (struct kwq *q, struct kwq_thread *owner)
{
  unsigned i;

  if (owner) {
    if (owner->idle) {
      owner->idle = false;
      pthread_cond_signal (&owner->wake);
    }
    return;
  }
  for (i = 0; i < q->n; i++)
    if (q->t[i].idle) {
      q->t[i].idle = false;     /* so one item wakes one thread */
      pthread_cond_signal (&q->t[i].wake);
      return;
    }
}

void
kwq_queue (struct kwq *q, struct kwork *w, unsigned cpu)
{
  struct kwq_thread *owner = q->bound ? &q->t[cpu % q->n] : NULL;

  pthread_mutex_lock (&q->lock);
  list_append (owner ? &owner->own : &q->shared, w);
  wake_locked (q, owner);
  pthread_mutex_unlock (&q->lock);
}

unsigned
kwq_queued (struct kwq *q, unsigned cpu)
{
  unsigned n;

  pthread_mutex_lock (&q->lock);
  n = q->bound ? q->t[cpu % q->n].own.length : q->shared.length;
  pthread_mutex_unlock (&q->lock);
  return n;
}
