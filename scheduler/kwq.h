/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A kernel workqueue as dm-crypt's kernels had them, for the kernel=
 * pipelines (kpipe.c): work items run in FIFO order by a set of
 * threads, one item at a time per thread.  Bound: each thread has its
 * own queue and an item is queued on the thread of a given CPU (a
 * per-CPU workqueue with max_active 1, 2.6.36's alloc_workqueue
 * without WQ_UNBOUND); unbound: one queue shared by every thread, so
 * up to that many items run at once (WQ_UNBOUND, max_active = the
 * number of threads).  A single-threaded workqueue (2.6.32's
 * create_singlethread_workqueue) is either with one thread.
 *
 * A thread takes an item off the queue, then calls its FN without the
 * lock and never touches the item afterwards: FN may queue it again
 * (elsewhere) or let its owner free it. */
#ifndef DMCRYPT_SCHED_KWQ_H
#define DMCRYPT_SCHED_KWQ_H

#include <pthread.h>
#include <stdbool.h>

struct engine;

struct kwork
{
  struct kwork *next;
  void (*fn) (struct kwork *w);
};

struct kwork_list
{
  struct kwork *head, **tailp;
  unsigned length;
};

struct kwq_thread
{
  struct kwq *wq;
  unsigned index;
  pthread_t thread;
  pthread_cond_t wake;
  struct kwork_list own;        /* bound: this thread's queue */
  bool idle;                    /* waiting on WAKE; under the lock */
  char name[16];                /* the kernel thread's name */
};

struct kwq
{
  struct engine *e;
  pthread_mutex_t lock;
  struct kwork_list shared;     /* unbound: every thread's queue */
  struct kwq_thread *t;
  unsigned n;                   /* threads running */
  bool bound, stopping;
  unsigned context_base;        /* thread i's io_context: base + i */
};

/* Starts N threads named NAME ("kcryptd_io"), or NAME/i when NUMBERED
 * ("kcryptd/0"), each with its io_context CONTEXT_BASE + i and, when
 * BOUND, modelled CPU i (backend/submitter.h).  Returns 0, or -1 after
 * nbdkit_error. */
int kwq_start (struct kwq *q, struct engine *e, const char *name,
               bool numbered, unsigned n, bool bound, unsigned context_base);
/* Stops the threads once their queues are empty. */
void kwq_stop (struct kwq *q);
/* Queues W: on CPU's thread (modulo the threads) when bound, else on
 * the shared queue, where the first idle thread takes it. */
void kwq_queue (struct kwq *q, struct kwork *w, unsigned cpu);
/* Items waiting (not running) on CPU's thread when bound, else on the
 * shared queue: for the tests. */
unsigned kwq_queued (struct kwq *q, unsigned cpu);

#endif /* DMCRYPT_SCHED_KWQ_H */
