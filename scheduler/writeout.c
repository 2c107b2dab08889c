/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The write-out stage, dm-crypt's dmcrypt_write: encrypted chunks are
 * linked in arrival order; each round steals everything that
 * accumulated while the previous round was being dispatched, asks the
 * policy for the dispatch order and dispatches the batch.
 *
 * Rounds are dispatched by whoever holds the dispatch token (one at a
 * time, so the dispatches are the policy's order): the thread that just
 * encrypted a chunk, when the token is free (no hand-off, no sleep, a
 * few rounds at most), else the writer thread, which also waits for
 * stream gaps and takes over what a crypting thread left.  On a backend
 * that writes synchronously the holder writes a round after letting
 * the token go (internal.h: note, perform), so that a thread whose
 * chunk comes next dispatches it itself instead of sleeping while the
 * holder writes.  Submission from the crypting thread
 * (submit_from_crypt_cpus, no_write_workqueue) bypasses the stage. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "../common/log.h"
#include "../table/crypt_table.h"
#include "internal.h"

/* Rounds a crypting thread runs before leaving the rest to the writer
 * thread: its own request's reply waits meanwhile. */
#define CRYPTER_ROUNDS 2

enum rounds_end
{
  ROUNDS_EMPTY,                 /* nothing left */
  ROUNDS_HELD,                  /* the rest waits for a chunk in crypto */
  ROUNDS_GAP,                   /* the rest waits for a stream gap */
  ROUNDS_LIMIT,                 /* the round limit was reached */
  ROUNDS_FULL,                  /* max_writing rounds are being written */
  ROUNDS_TAKEN,                 /* the token was taken while we wrote */
};

static struct chunk *
chunk_of (struct wo_item *it)
{
  return (struct chunk *) ((char *) it - offsetof (struct chunk, wo));
}

static struct wo_item *
concat (struct wo_item *a, struct wo_item *b)
{
  struct wo_item **link = &a;

  while (*link)
    link = &(*link)->next;
  *link = b;
  return a;
}

static unsigned
list_length (const struct wo_item *it)
{
  unsigned n = 0;

  for (; it; it = it->next)
    n++;
  return n;
}

/* Whether a chunk at PENDING holds one at SECTOR back: PENDING comes
 * first in the policy's order, and less than the hold window before.
 * Positions are distances from ORIGIN (0, or the head for a sweeping
 * policy) modulo 2^64, so that the sectors behind the head of a sweep
 * come last. */
static bool
holds_back (const struct writeout *wo, uint64_t origin, uint64_t pending,
            uint64_t sector)
{
  uint64_t at = sector - origin, before = pending - origin;

  return before <= at && at - before < wo->hold_sectors;
}

/* The positions of the chunks that may still arrive before the round
 * is written: those in crypto, and arrivals since it was taken. */
struct pending_span
{
  uint64_t lowest, highest;
  bool any;
};

static void
widen (struct pending_span *span, uint64_t origin, uint64_t sector)
{
  uint64_t at = sector - origin;

  if (!span->any || at < span->lowest)
    span->lowest = at;
  if (!span->any || at > span->highest)
    span->highest = at;
  span->any = true;
}

static struct pending_span
pending_span_locked (const struct writeout *wo, uint64_t origin)
{
  struct pending_span span = { .any = false };
  const struct chunk *c;
  const struct wo_item *it;

  for (c = wo->encrypting; c; c = c->pend_next)
    widen (&span, origin, c->wo.sector);
  for (it = wo->head; it; it = it->next)
    widen (&span, origin, it->sector);
  return span;
}

/* Under the lock: whether a chunk that may still arrive before the
 * round is written holds SECTOR back.  A chunk within the window is an
 * earlier write of SECTOR's own stream, which SECTOR waits for.  One
 * farther away belongs to another stream (a stream's writes inside the
 * engine at once lie closer together than the in-flight cap), whose
 * place before SECTOR would make nothing more sequential: not waiting
 * for it saves SECTOR's thread a sleep and its bytes a trip to the CPU
 * that dispatches the round.  SPAN spares the walk for a sector below
 * every pending chunk or a window above them all. */
static bool
held_back_locked (const struct writeout *wo, const struct pending_span *span,
                  uint64_t origin, uint64_t sector)
{
  uint64_t at = sector - origin;
  const struct chunk *c;
  const struct wo_item *it;

  if (!span->any || at < span->lowest
      || (at > span->highest && at - span->highest >= wo->hold_sectors))
    return false;
  for (c = wo->encrypting; c; c = c->pend_next)
    if (holds_back (wo, origin, c->wo.sector, sector))
      return true;
  for (it = wo->head; it; it = it->next)
    if (holds_back (wo, origin, it->sector, sector))
      return true;
  return false;
}

/* Under the lock: splits the ordered BATCH into what may go now
 * (returned, in order: at most the policy's max_round chunks, none
 * held back) and the rest, prepended to the held list.  A chunk kept
 * back holds back those after it within the window too, so that a
 * stream never overtakes itself. */
static struct wo_item *
split_batch_locked (struct writeout *wo, struct wo_item *batch)
{
  uint64_t origin = wo->policy->sweeps_from_head ? wo->last_end : 0;
  unsigned room = wo->policy->max_round ? wo->policy->max_round : UINT_MAX;
  bool hold = wo->policy->hold_for_encrypting;
  struct pending_span span = { .any = false };
  struct wo_item *go = NULL, **go_tail = &go;
  struct wo_item *keep = NULL, *kept = NULL, *it, *next;

  if (hold)
    span = pending_span_locked (wo, origin);
  for (it = batch; it; it = next) {
    next = it->next;
    it->next = NULL;
    if (room > 0
        && !(hold && ((kept && holds_back (wo, origin, kept->sector,
                                           it->sector))
                      || held_back_locked (wo, &span, origin,
                                           it->sector)))) {
      room--;
      *go_tail = it;
      go_tail = &it->next;
    }
    else {
      if (kept)
        kept->next = it;
      else
        keep = it;
      kept = it;
    }
  }
  wo->held = concat (keep, wo->held);
  return go;
}

/* Under the lock: the held chunks (older) then the arrivals. */
static struct wo_item *
take_all_locked (struct writeout *wo)
{
  struct wo_item *all = concat (wo->held, wo->head);

  wo->held = wo->head = NULL;
  wo->tailp = &wo->head;
  wo->depth = 0;
  return all;
}

static void
debug_round (struct wo_item *it, unsigned held)
{
  unsigned count = 0, in_order = 0;
  uint64_t end = it->sector;

  for (; it; it = it->next, count++) {
    in_order += it->sector == end;
    end = it->sector + it->nsect;
  }
  nbdkit_debug ("write-out round: %u chunks, %u contiguous, %u held back",
                count, in_order, held);
}

/* Dispatches an ordered list (or notes it, for perform_list).  The
 * caller holds the token, not the lock. */
static void
dispatch_list (struct engine *e, struct wo_item *it)
{
  struct writeout *wo = &e->wo;
  struct wo_item *next;

  for (; it; it = next) {
    next = it->next;            /* the chunk is gone once done */
    /* A seek halves the run: one late request does not end a stream. */
    wo->run = it->sector == wo->last_end ? wo->run + 1 : wo->run / 2;
    wo->last_end = it->sector + it->nsect;
    if (wo->note)
      wo->note (e, chunk_of (it));
    else
      wo->dispatch (e, chunk_of (it));
  }
}

/* Writes a noted list; no token needed, its place is taken. */
static void
perform_list (struct engine *e, struct wo_item *it)
{
  struct wo_item *next;

  for (; it; it = next) {
    next = it->next;
    e->wo.perform (e, chunk_of (it));
  }
}

/* Under the lock, holding the token: the next round in the policy's
 * order, or NULL and why there is none in *END. */
static struct wo_item *
take_round_locked (struct writeout *wo, enum rounds_end *end)
{
  struct wo_item *batch;

  do {
    batch = take_all_locked (wo);
    if (batch == NULL) {
      *end = ROUNDS_EMPTY;
      return NULL;
    }
    pthread_mutex_unlock (&wo->lock);
    batch = wo->policy->order (wo->state, batch, wo->last_end);
    pthread_mutex_lock (&wo->lock);
    batch = split_batch_locked (wo, batch);
    /* Held for a chunk in crypto; if it (or anything) arrived while we
     * sorted, go again: its crypter saw the token taken. */
    if (batch == NULL && wo->head == NULL) {
      *end = ROUNDS_HELD;
      return NULL;
    }
  } while (batch == NULL);
  if (anticipate_gap_locked (wo, batch)) {
    wo->held = concat (batch, wo->held);
    *end = ROUNDS_GAP;
    return NULL;
  }
  wo->held = concat (anticipate_cut (wo, batch), wo->held);
  return batch;
}

/* Under the lock, the token free: takes it and runs up to MAX rounds
 * (0: no limit) while something may be dispatched, then lets it go
 * (ROUNDS_TAKEN: another thread took it while a round was written, and
 * goes on).  CRYPTER: the holder is a crypting thread, not the writer
 * (for the statistics). */
static enum rounds_end
run_rounds_locked (struct engine *e, unsigned max, bool crypter)
{
  struct writeout *wo = &e->wo;
  enum rounds_end end = ROUNDS_LIMIT;
  struct wo_item *batch;
  unsigned n, done;

  wo->busy = true;
  for (done = 0; max == 0 || done < max; done++) {
    if (wo->max_writing && wo->writing >= wo->max_writing) {
      /* The first of them to finish goes on. */
      end = ROUNDS_FULL;
      break;
    }
    if ((batch = take_round_locked (wo, &end)) == NULL)
      break;
    n = list_length (batch);
    wo->rounds++;
    if (n > wo->batch_max)
      wo->batch_max = n;
    if (crypter)
      wo->direct += n;
    pthread_mutex_unlock (&wo->lock);
    if (debug_on (e, ENGINE_DEBUG_WRITEOUT))
      debug_round (batch, list_length (wo->held));
    dispatch_list (e, batch);
    if (wo->policy->plugs)
      backend_unplug (e->backend);
    pthread_mutex_lock (&wo->lock);
    if (wo->perform == NULL)
      continue;
    /* The round's place is taken: the next holder need not wait for
     * its writes, nor sleep while they are done by another thread. */
    wo->writing++;
    wo->busy = false;
    pthread_mutex_unlock (&wo->lock);
    perform_list (e, batch);
    pthread_mutex_lock (&wo->lock);
    wo->writing--;
    if ((wo->stopping || (wo->anticipating && wo->writing == 0))
        && wo->sleeping)
      pthread_cond_signal (&wo->wake);
    if (wo->busy)
      return ROUNDS_TAKEN;
    wo->busy = true;
  }
  wo->busy = false;
  if (end == ROUNDS_LIMIT && wo->head == NULL && wo->held == NULL)
    end = ROUNDS_EMPTY;
  return end;
}

static void
wait_locked (struct writeout *wo)
{
  wo->sleeping = true;
  pthread_cond_wait (&wo->wake, &wo->lock);
  wo->sleeping = false;
}

static void *
writer_main (void *arg)
{
  struct engine *e = arg;
  struct writeout *wo = &e->wo;
  enum rounds_end end;

  thread_setup (e, "dmcrypt_write", CONTEXT_WRITER, -1);
  pthread_mutex_lock (&wo->lock);
  for (;;) {
    if (wo->busy || (wo->head == NULL && wo->held == NULL)) {
      /* Stop only when nothing is left: every chunk must reach its
       * owner. */
      if (wo->stopping && !wo->busy && wo->writing == 0)
        break;
      wait_locked (wo);
      continue;
    }
    end = run_rounds_locked (e, 0, false);
    if (end == ROUNDS_GAP)
      anticipate_wait_locked (wo);
    else if ((end == ROUNDS_HELD && wo->head == NULL) || end == ROUNDS_FULL)
      /* The chunk in crypto arrives (or is cancelled) and wakes us; a
       * thread that finishes writing a round goes on itself. */
      wait_locked (wo);
  }
  pthread_mutex_unlock (&wo->lock);
  return NULL;
}

int
writeout_start (struct engine *e)
{
  struct writeout *wo = &e->wo;
  int err;

  pthread_mutex_init (&wo->lock, NULL);
  pthread_cond_init (&wo->wake, NULL);
  wo->head = wo->held = NULL;
  wo->tailp = &wo->head;
  wo->encrypting = NULL;
  wo->depth = 0;
  wo->stopping = wo->busy = false;
  wo->writing = 0;
  wo->last_end = wo->gap_at = UINT64_MAX;
  wo->hold_sectors = e->max_inflight >> 9;
  wo->run = 0;
  wo->policy = e->policy;
  wo->state = NULL;
  if (wo->policy->create && (wo->state = wo->policy->create ()) == NULL) {
    nbdkit_error ("scheduler %s: %m", wo->policy->name);
    goto err;
  }
  err = pthread_create (&wo->thread, NULL, writer_main, e);
  if (err) {
    errno = err;
    nbdkit_error ("creating write-out thread: %m");
    if (wo->policy->destroy)
      wo->policy->destroy (wo->state);
    goto err;
  }
  wo->running = true;
  return 0;

 err:
  pthread_cond_destroy (&wo->wake);
  pthread_mutex_destroy (&wo->lock);
  return -1;
}

void
writeout_stop (struct writeout *wo)
{
  if (!wo->running)
    return;
  pthread_mutex_lock (&wo->lock);
  wo->stopping = true;
  pthread_cond_signal (&wo->wake);
  pthread_mutex_unlock (&wo->lock);
  pthread_join (wo->thread, NULL);
  wo->running = false;
  if (wo->policy->destroy)
    wo->policy->destroy (wo->state);
  pthread_cond_destroy (&wo->wake);
  pthread_mutex_destroy (&wo->lock);
}

static bool
bypassed (struct engine *e)
{
  return !e->wo.running || e->direct_writes;
}

static void
unlink_encrypting_locked (struct writeout *wo, struct chunk *c)
{
  if (c->pend_prev)
    c->pend_prev->pend_next = c->pend_next;
  else
    wo->encrypting = c->pend_next;
  if (c->pend_next)
    c->pend_next->pend_prev = c->pend_prev;
  c->encrypting = false;
}

void
writeout_admit (struct engine *e, struct request *r)
{
  struct writeout *wo = &e->wo;
  bool track = !bypassed (e) && wo->policy->hold_for_encrypting;
  struct chunk *c;
  unsigned i;

  for (i = 0; i < r->nchunks; i++)
    r->chunks[i].encrypting = false;
  if (!track)
    return;
  pthread_mutex_lock (&wo->lock);
  for (i = 0; i < r->nchunks; i++) {
    c = &r->chunks[i];
    c->encrypting = true;
    c->pend_prev = NULL;
    c->pend_next = wo->encrypting;
    if (wo->encrypting)
      wo->encrypting->pend_prev = c;
    wo->encrypting = c;
  }
  if (wo->anticipating)
    pthread_cond_signal (&wo->wake);
  pthread_mutex_unlock (&wo->lock);
}

void
writeout_cancel (struct engine *e, struct chunk *c)
{
  struct writeout *wo = &e->wo;

  if (!c->encrypting)
    return;
  pthread_mutex_lock (&wo->lock);
  unlink_encrypting_locked (wo, c);
  /* Chunks held behind it may go now: the writer takes them. */
  if (wo->sleeping)
    pthread_cond_signal (&wo->wake);
  pthread_mutex_unlock (&wo->lock);
}

/* ON_WORKER: a worker encrypted C.  It never takes the token: a write
 * stalled in the device would hold the worker, and with it the reads
 * waiting for decryption; the writer thread dispatches instead, as it
 * does every round of a writer_only policy. */
void
writeout_submit (struct engine *e, struct chunk *c, bool on_worker)
{
  struct writeout *wo = &e->wo;
  enum rounds_end end;

  if (bypassed (e)) {
    wo->dispatch (e, c);
    return;
  }
  c->wo.next = NULL;
  pthread_mutex_lock (&wo->lock);
  if (c->encrypting)
    unlink_encrypting_locked (wo, c);
  *wo->tailp = &c->wo;
  wo->tailp = &c->wo.next;
  if (++wo->depth > wo->depth_max)
    wo->depth_max = wo->depth;
  if (wo->busy || on_worker || wo->policy->writer_only) {
    /* The token holder takes it in its next round, or the writer. */
    if (!wo->busy && wo->sleeping)
      pthread_cond_signal (&wo->wake);
    pthread_mutex_unlock (&wo->lock);
    return;
  }
  end = run_rounds_locked (e, CRYPTER_ROUNDS, true);
  /* What needs waiting for, or more rounds, is the writer's job; a
   * chunk held for one still in crypto is its crypter's.  A writer told
   * to stop while we held the token waits for it back. */
  if ((end == ROUNDS_GAP || end == ROUNDS_LIMIT || wo->stopping)
      && wo->sleeping)
    pthread_cond_signal (&wo->wake);
  pthread_mutex_unlock (&wo->lock);
}
