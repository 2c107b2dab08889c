/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by sim.c (queue, device, threads) and simback.c (the backend
 * operations and set-up). */
#ifndef DMCRYPT_SIM_INTERNAL_H
#define DMCRYPT_SIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../backend.h"
#include "../submitter.h"
#include "../trace.h"
#include "blkq.h"
#include "model.h"
#include "sim.h"

struct sim;

#define SIM_IO_THREADS_MAX 8

/* One IO from above on its way through the queue and the device. */
struct sim_bio
{
  struct blkq_bio bio;          /* bio.opaque is this */
  struct sim *sim;
  void *rbuf;                   /* a read's destination */
  const void *wbuf;             /* a write's source */
  backend_done_fn done;         /* run by the completer, once */
  void *opaque;
  backend_done_fn user_done;    /* an asynchronous write's caller */
  void *user_opaque;
  int err;
  bool finished;                /* a synchronous IO's: under the lock */
  struct sim_bio *pieces;       /* a bio split at max_sectors: its parts */
  unsigned pending;             /* ...not complete yet */
  struct backend_submitter who; /* the thread that submitted it: its
                                   io_context, CPU and name */
};

/* A request at the device, in its tag's slot. */
struct inflight
{
  uint64_t done_at;             /* model ns, once started */
  struct blkq_rq *rq;
  int err;                      /* the first failing bio's */
  bool started;                 /* the model said when it completes */
  bool io_done;                 /* its real IO on the image is done */
};

struct sim
{
  struct backend *self, *lower;
  const struct device_model *model;
  void *mstate;
  unsigned tags;                /* the device's queue depth */
  uint32_t max_sectors;         /* larger bios are split (sectors) */
  struct blkq *q;
  double speed;                 /* model ns per wall ns */
  struct timespec start;        /* CLOCK_MONOTONIC at model time 0 */
  pthread_mutex_t lock;
  pthread_cond_t work;          /* a request or a tag to dispatch with */
  pthread_cond_t due;           /* a request was filed under its time */
  pthread_cond_t synced;        /* a synchronous IO finished */
  pthread_cond_t io;            /* a request for the IO threads */
  struct inflight *slots;       /* TAGS: the requests at the device */
  unsigned *free_tags, nfree;   /* the tags not in use */
  unsigned *jobs;               /* ring of TAGS: tags whose real IO is due */
  unsigned job_head, njobs;
  struct dev_event *heap;       /* by time: requests started and with
                                   their real IO done, the model's
                                   wake-ups (simtags.c) */
  unsigned nheap, heap_size;
  unsigned busy;                /* tags in use, dispatching included */
  uint64_t busy_since;          /* model ns when BUSY last left 0 */
  uint64_t freed_at;            /* model ns the last tag came free */
  bool stopping, dispatcher_done;
  unsigned threads;             /* 1: dispatcher, 2: and completer */
  pthread_t dispatcher, completer;
  pthread_t io_threads[SIM_IO_THREADS_MAX];   /* real IO: min (TAGS,
                                                 SIM_IO_THREADS_MAX) */
  unsigned nio, io_running;
  struct sim_stats st;
  /* Whom P and U events name: the submitter inserting or unplugging,
   * under the lock; NULL: kblockd. */
  const struct trace_who *unplugger;
};

uint64_t sim_now (const struct sim *s);
/* The CLOCK_MONOTONIC time at which the model's clock shows MODEL_NS. */
struct timespec sim_wall_at (const struct sim *s, uint64_t model_ns);
const char *sim_rwbs (enum dev_op op);
/* A trace event of RQ (D, C), if tracing (the trace stamps it with the
 * model's clock). */
void sim_rq_event (struct sim *s, char action, const struct blkq_rq *rq,
                   int err);
/* Queues SB (waiting while no request is free); SB->done runs later. */
void sim_submit (struct sim *s, struct sim_bio *sb);
/* The calling thread is about to sleep on its IO: blkq_unplug. */
void sim_unplug (struct sim *s);
/* Under the lock: wakes the submitters whose bios the queue made
 * requests (blkq_woken), and the dispatcher. */
void sim_wake_granted_locked (struct sim *s);
/* blkq's events into the trace (struct blkq_config's event). */
void sim_blkq_event (void *arg, const struct blkq_event *ev);
/* A synchronous IO through queue and device.  Returns 0 or -1 with
 * errno. */
int sim_io (struct sim *s, enum dev_op op, void *rbuf, const void *wbuf,
            size_t count, uint64_t offset);
/* blkconf.c: the block layer CFG asks for over device model M.
 * Returns 0, or -1 after one nbdkit_error naming the parameter. */
int sim_block_config (const struct sim_config *cfg,
                      const struct device_model *m, struct blkq_config *qc);
/* simdev.c: the dispatcher, the IO threads and the completer. */
int sim_start_threads (struct sim *s);
void sim_stop_threads (struct sim *s);

/* simtags.c: the requests at the device, by tag; all under the lock.
 * Init: -1 after nbdkit_error. */
int sim_tags_init (struct sim *s);
void sim_tags_free (struct sim *s);
/* RQ into a free tag, to the model at model time START (<= NOW), its
 * real IO to the IO threads' ring. */
void sim_device_take_locked (struct sim *s, struct blkq_rq *rq,
                             uint64_t start, uint64_t now);
/* A reordering model's decisions by NOW, filed. */
void sim_device_pick_locked (struct sim *s, uint64_t now);
/* TAG's real IO is done, with ERR (0 or an errno). */
void sim_device_io_done_locked (struct sim *s, unsigned tag, int err);
/* The time of the earliest filed event; false: none. */
bool sim_device_next_at (const struct sim *s, uint64_t *at);
/* Takes the earliest event: a completed request into *IN, its tag free
 * again (true), or a wake-up, the model asked at its time (false). */
bool sim_device_pop_locked (struct sim *s, struct inflight *in);

#endif /* DMCRYPT_SIM_INTERNAL_H */
