/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Write-out policies: the order in which encrypted writes go to the
 * backend.  Workers finish encrypting in any order; the write-out stage
 * collects their chunks, and once per round steals everything that
 * accumulated while the previous round was being written (as dm-crypt's
 * dmcrypt_write thread does) and hands the batch to the policy, which
 * returns it in dispatch order.  The stage's lock is held only to link
 * and steal; ORDER runs outside it, in the writer thread.
 *
 * A new policy is one file defining a struct writeout_policy, listed in
 * policy.c (policy-batch.c is the example to copy).  It may keep state
 * between rounds. */
#ifndef DMCRYPT_POLICY_H
#define DMCRYPT_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* One encrypted chunk as a policy sees it.  Embedded in the engine's
 * chunk; the policy may relink NEXT freely but must return every item. */
struct wo_item
{
  uint64_t sector;          /* backend 512-byte sector: the sort key */
  uint64_t nsect;           /* length, 512-byte sectors */
  struct wo_item *next;     /* batch link */
};

struct writeout_policy
{
  const char *name;         /* the scheduler= value */
  const char *summary;      /* one line, for docs and --dump-plugin */
  /* Per-engine state, or NULL when the policy needs none; returns NULL
   * with errno set on failure.  May be NULL. */
  void *(*create) (void);
  void (*destroy) (void *state);
  /* BATCH holds this round's chunks in arrival order (never empty);
   * HEAD is the sector after the last write dispatched (UINT64_MAX
   * before the first), where an elevator would continue.  Returns the
   * same items linked in dispatch order. */
  struct wo_item *(*order) (void *state, struct wo_item *batch,
                            uint64_t head);
  /* The most chunks a round dispatches (0: no limit): the stage keeps
   * the rest of the ordered batch and hands it back, ahead of the
   * arrivals, in the next round's batch. */
  unsigned max_round;
  /* true: the stage keeps back, for the next round, each chunk of an
   * ordered batch that lies above a chunk still being encrypted and
   * within the in-flight cap of it (its own stream: writes further
   * apart are other streams), so that a stream's writes in flight are
   * sorted too, not only those that happened to finish encrypting
   * first.  Also, when a round would start
   * a little past where the last one ended while other requests are in
   * the engine, the stage waits (once, briefly) for the gap to arrive:
   * a thread preempted between receiving a request and handing it to us
   * would otherwise cost a seek back. */
  bool hold_for_encrypting;
  /* true: ORDER ascends from HEAD and wraps round to sector 0 (C-SCAN)
   * instead of ascending from 0, and the hold-back above compares
   * sectors in that order. */
  bool sweeps_from_head;
  /* true: only the write-out thread dispatches rounds, as the kernel's
   * dmcrypt_write does; a crypting thread never takes the token. */
  bool writer_only;
  /* true: each round is dispatched inside a plug, let go once the
   * round is out (backend_unplug: dmcrypt_write's blk_start_plug and
   * blk_finish_plug, 4.0 on). */
  bool plugs;
};

extern const struct writeout_policy writeout_policy_sorted;
extern const struct writeout_policy writeout_policy_fifo;
extern const struct writeout_policy writeout_policy_batch;
extern const struct writeout_policy writeout_policy_rbtree;

/* The policy named NAME (NULL: the default, "sorted"), or NULL. */
const struct writeout_policy *writeout_policy_find (const char *name);

/* Space-separated names of every policy, e.g. "sorted fifo batch". */
const char *writeout_policy_names (void);

#endif /* DMCRYPT_POLICY_H */
