/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Anticipation for the sorted policy: inside a sequential stream, a
 * round that would start a little past where the last write ended waits
 * once, briefly, for the gap to arrive: ANTICIPATE_NS, or as long as
 * another round is being written up to ANTICIPATE_MAX_NS (the gap has
 * as long as the device is busy anyway, as it had when one round was
 * written at a time; a stalled write does not hold a stream for
 * longer).  A request thread preempted between receiving a request and
 * handing it to the engine would otherwise cost a seek back and one
 * forward (the anticipatory I/O scheduler's idea, applied to the
 * write-out stage). */
#include <time.h>

#include "internal.h"

#define NS_PER_S 1000000000L

static bool
before (const struct timespec *a, const struct timespec *b)
{
  return a->tv_sec < b->tv_sec
    || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static struct timespec
after (const struct timespec *t, long ns)
{
  struct timespec r = *t;

  r.tv_nsec += ns;
  if (r.tv_nsec >= NS_PER_S) {
    r.tv_nsec -= NS_PER_S;
    r.tv_sec++;
  }
  return r;
}

static bool
in_stream_gap (const struct writeout *wo, uint64_t sector)
{
  return wo->policy->hold_for_encrypting && wo->run >= RUN_MIN
    && wo->last_end != UINT64_MAX && sector > wo->last_end
    && sector - wo->last_end <= ANTICIPATE_SECTORS;
}

bool
anticipate_gap_locked (struct writeout *wo, const struct wo_item *first)
{
  struct timespec now;

  if (!in_stream_gap (wo, first->sector))
    return false;
  clock_gettime (CLOCK_REALTIME, &now);
  if (wo->gap_at != wo->last_end) {
    wo->gap_at = wo->last_end;
    wo->gap_deadline = after (&now, ANTICIPATE_NS);
    wo->gap_limit = after (&now, ANTICIPATE_MAX_NS);
    wo->anticipations++;
  }
  return before (&now, &wo->gap_deadline)
    || (wo->writing > 0 && before (&now, &wo->gap_limit));
}

struct wo_item *
anticipate_cut (const struct writeout *wo, struct wo_item *batch)
{
  struct wo_item *it, *tail;
  uint64_t end;

  if (!wo->policy->hold_for_encrypting || wo->run < RUN_MIN)
    return NULL;
  for (it = batch; it->next; it = it->next) {
    end = it->sector + it->nsect;
    if (it->next->sector > end
        && it->next->sector - end <= ANTICIPATE_SECTORS) {
      tail = it->next;
      it->next = NULL;
      return tail;
    }
  }
  return NULL;
}

void
anticipate_wait_locked (struct writeout *wo)
{
  wo->anticipating = wo->sleeping = true;
  /* The last round being written wakes us when it is done. */
  pthread_cond_timedwait (&wo->wake, &wo->lock, wo->writing > 0
                          ? &wo->gap_limit : &wo->gap_deadline);
  wo->anticipating = wo->sleeping = false;
}
