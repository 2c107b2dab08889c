/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who submits the IO a thread passes to a backend.  The kernel's block
 * layer files a request by the task that submitted it: CFQ gives each
 * io_context its own queue of synchronous requests, a task's plug holds
 * its requests until it sleeps, and a per-CPU workqueue runs a bio on
 * the CPU that queued it.  A simulated block layer (backend/sim) needs
 * the same facts, and the engine and the front ends are the ones that
 * know them; every other backend ignores them.
 *
 * The submitter is thread-local: a thread sets it once (a worker, the
 * write-out thread) or per request (a front end's request thread, for
 * the client connection the request came on), and every backend call
 * the thread makes afterwards carries it. */
#ifndef DMCRYPT_BACKEND_SUBMITTER_H
#define DMCRYPT_BACKEND_SUBMITTER_H

#include <stdbool.h>

/* Contexts 1 .. SUBMITTER_CLIENTS_MAX name client connections (the
 * client processes above); contexts from SUBMITTER_KTHREAD upwards
 * name the engine's own threads, as kernel threads have io_contexts of
 * their own. */
#define SUBMITTER_CLIENTS_MAX 65535u
#define SUBMITTER_KTHREAD     65536u

struct backend_submitter
{
  /* The io_context: 0 when nobody said (one shared context). */
  unsigned context;
  /* The modelled CPU the submitter runs on: what a per-CPU workqueue
   * (kernel 3.x's kcryptd) and the trace's cpu column go by; -1: the
   * host CPU the thread runs on (sched_getcpu). */
  int cpu;
  /* The thread's name for the trace's [name] column; NULL: the
   * trace's own default. */
  const char *name;
  /* Its writes are REQ_SYNC: fsync's WRITE_SYNC (REQ_SYNC | REQ_NOIDLE
   * in 2.6.32, 3.16 and 4.0, include/linux/fs.h), which a dm-crypt
   * clone inherits from its bio (clone_init: bi_rw).  Reads and
   * flushes are sync whatever this says. */
  bool sync;
};

/* Sets the calling thread's submitter (copied; NAME must outlive the
 * thread's use of it).  NULL resets it to "nobody said". */
void backend_set_submitter (const struct backend_submitter *s);

/* The calling thread's submitter: { 0, -1, NULL, false } unless set. */
struct backend_submitter backend_submitter (void);

/* Sets only whether the calling thread's writes are sync (a thread
 * that submits the clones of other threads' bios, kcryptd or
 * dmcrypt_write, says so per clone); returns what it was. */
bool backend_submitter_set_sync (bool sync);

/* The calling thread's modelled CPU if set, else the host CPU it runs
 * on (0 when that cannot be had). */
unsigned backend_submitter_cpu (void);

#endif /* DMCRYPT_BACKEND_SUBMITTER_H */
