/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A test facility: a backend that wraps another and injects faults --
 * errors, short transfers, delays, stalls -- by rules read from a file
 * (the plugin's fault-rules= parameter).  Every operation looks at the
 * file (one stat(2)): replace it (write a new one and rename it over
 * the old) and the next operation follows the new rules; remove it and
 * every fault is off.  A stalled operation looks every FAULT_POLL_MS.
 *
 * One rule a line, '#' starts a comment:
 *
 *   OPS [start=SIZE] [end=SIZE | length=SIZE] [nth=N] [count=N] ACTION...
 *
 *   OPS      read, write, sync (or flush), discard (or trim), all; a
 *            comma-separated list of them
 *   start, end, length
 *            the byte range on the wrapped backend (ciphertext offsets,
 *            the LUKS data offset included) that an operation must
 *            overlap to match; sync has no range, so a ranged rule never
 *            matches it.  SIZE is bytes, or a number with K, M or G.
 *   nth, count
 *            the rule fires on matches nth .. nth+count-1 (counting from
 *            1 since the rules were loaded); nth alone means count=1;
 *            neither: every match
 *   ACTIONS  error=NAME   fail with errno NAME (EIO, ENOSPC, ...)
 *            short        transfer the bytes before the range's start,
 *                         then fail (error=, EIO by default)
 *            short=SIZE   transfer SIZE bytes (at most the whole
 *                         operation), then fail
 *            delay=TIME   sleep first (TIME: N, Nms, Nus or Ns; N is ms)
 *            stall        block until the rules change, then look again
 *
 * A short transfer surfaces exactly as a real one does through
 * backend/file.c: the bytes before the fault reach the wrapped backend
 * (or the buffer), then the call fails with the errno, as file.c's retry
 * of a short pwrite/pread would.  When several rules match, their delays
 * add up, any stall stalls, and the first error (in file order) wins. */
#ifndef DMCRYPT_FAULT_H
#define DMCRYPT_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define FAULT_POLL_MS 10        /* how often a stalled operation looks */

enum fault_op
{
  FAULT_READ    = 1 << 0,
  FAULT_WRITE   = 1 << 1,
  FAULT_SYNC    = 1 << 2,
  FAULT_DISCARD = 1 << 3,
};

struct fault_rule
{
  unsigned ops;                 /* enum fault_op bits */
  bool ranged;
  uint64_t start, end;          /* bytes, [start, end) */
  uint64_t nth;                 /* first match that fires, from 1 */
  uint64_t count;               /* matches that fire; 0: all from nth */
  int error;                    /* errno; 0: none */
  bool short_to_start;          /* "short": transfer up to start */
  bool short_fixed;             /* "short=SIZE" */
  uint64_t short_bytes;         /* bytes, with short_fixed */
  uint64_t delay_us;
  bool stall;
  atomic_uint_fast64_t matched; /* operations matched so far */
};

struct fault_rules
{
  size_t n;
  struct fault_rule *rule;
};

/* What the rules decide for one operation. */
struct fault_verdict
{
  uint64_t delay_us;
  bool stall;
  int error;                    /* 0: do the operation */
  uint64_t transfer;            /* with error: bytes to do first */
};

/* Parses TEXT (the rules file's content; WHERE names it in errors).
 * Returns the rules (NULL for a file without rules) in *OUT and 0, or
 * -1 after nbdkit_error naming the line. */
int fault_rules_parse (const char *text, const char *where,
                       struct fault_rules **out);
void fault_rules_free (struct fault_rules *rules);

/* Counts the match in every rule that OP of COUNT bytes at OFFSET
 * matches and fills V. */
void fault_rules_judge (struct fault_rules *rules, enum fault_op op,
                        uint64_t count, uint64_t offset,
                        struct fault_verdict *v);

/* Wraps LOWER (owned from now on, closed with the wrapper) with rules
 * from RULES_PATH, which need not exist yet; its present content must
 * parse.  Returns NULL after nbdkit_error, LOWER left to the caller. */
struct backend *backend_fault_wrap (struct backend *lower,
                                    const char *rules_path);

#endif /* DMCRYPT_FAULT_H */
