/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdbool.h>
#include <stddef.h>

#include "rangelock.h"

void
rangelock_init (struct rangelock *rl)
{
  pthread_mutex_init (&rl->lock, NULL);
  pthread_cond_init (&rl->released, NULL);
  rl->held = NULL;
}

void
rangelock_destroy (struct rangelock *rl)
{
  pthread_cond_destroy (&rl->released);
  pthread_mutex_destroy (&rl->lock);
}

static bool
overlaps_held (const struct rangelock *rl, uint64_t start, uint64_t end)
{
  const struct range_held *h;

  for (h = rl->held; h; h = h->next)
    if (start < h->end && h->start < end)
      return true;
  return false;
}

void
rangelock_lock (struct rangelock *rl, struct range_held *node,
                uint64_t start, uint64_t end)
{
  pthread_mutex_lock (&rl->lock);
  while (overlaps_held (rl, start, end))
    pthread_cond_wait (&rl->released, &rl->lock);
  node->start = start;
  node->end = end;
  node->next = rl->held;
  rl->held = node;
  pthread_mutex_unlock (&rl->lock);
}

void
rangelock_unlock (struct rangelock *rl, struct range_held *node)
{
  struct range_held **pp;

  pthread_mutex_lock (&rl->lock);
  for (pp = &rl->held; *pp; pp = &(*pp)->next)
    if (*pp == node) {
      *pp = node->next;
      break;
    }
  pthread_cond_broadcast (&rl->released);
  pthread_mutex_unlock (&rl->lock);
}
