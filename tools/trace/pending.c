/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Q events waiting for the I, M or D of the same IO: an open-addressed
 * table on (sector, nsect, kind).  A key repeats when the same sectors
 * are queued again before the first IO left the engine (a rewrite);
 * the oldest is matched first, as a FIFO would. */
#include <stdio.h>
#include <stdlib.h>

#include "match.h"

struct pending_slot
{
  uint64_t sector, nsect;
  uint64_t seq;                 /* 0: a free slot */
  uint64_t time_ns;
  int kind;
};

static size_t
slot_of (const struct pending *p, uint64_t sector, uint64_t nsect, int kind)
{
  uint64_t h = sector * 0x9e3779b97f4a7c15ULL ^ nsect * 31 ^ kind;
  return (h ^ (h >> 29)) & (p->size - 1);
}

static bool
same_key (const struct pending_slot *s, uint64_t sector, uint64_t nsect,
          int kind)
{
  return s->sector == sector && s->nsect == nsect && s->kind == kind;
}

static void
put_slot (struct pending *p, const struct pending_slot *new)
{
  size_t i = slot_of (p, new->sector, new->nsect, new->kind);

  while (p->slot[i].seq)
    i = (i + 1) & (p->size - 1);
  p->slot[i] = *new;
  p->used++;
}

static void
grow (struct pending *p)
{
  struct pending old = *p;
  size_t i;

  p->size = old.size ? 2 * old.size : 4096;
  p->used = 0;
  p->slot = calloc (p->size, sizeof *p->slot);
  if (p->slot == NULL) {
    perror ("dmcrypt-trace: calloc");
    exit (1);
  }
  for (i = 0; i < old.size; i++)
    if (old.slot[i].seq)
      put_slot (p, &old.slot[i]);
  free (old.slot);
}

void
pending_put (struct pending *p, uint64_t sector, uint64_t nsect, int kind,
             uint64_t time_ns)
{
  struct pending_slot s = { sector, nsect, ++p->seq, time_ns, kind };

  if (2 * (p->used + 1) > p->size)
    grow (p);
  put_slot (p, &s);
}

/* Backward-shift deletion keeps the probe chains whole. */
static void
delete_slot (struct pending *p, size_t i)
{
  size_t j, k, mask = p->size - 1;

  p->slot[i].seq = 0;
  p->used--;
  for (j = (i + 1) & mask; p->slot[j].seq; j = (j + 1) & mask) {
    k = slot_of (p, p->slot[j].sector, p->slot[j].nsect, p->slot[j].kind);
    if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
      p->slot[i] = p->slot[j];
      p->slot[j].seq = 0;
      i = j;
    }
  }
}

uint64_t
pending_take (struct pending *p, uint64_t sector, uint64_t nsect, int kind)
{
  size_t i, oldest = SIZE_MAX;
  uint64_t time;

  if (p->size == 0)
    return NO_TIME;
  for (i = slot_of (p, sector, nsect, kind); p->slot[i].seq;
       i = (i + 1) & (p->size - 1))
    if (same_key (&p->slot[i], sector, nsect, kind)
        && (oldest == SIZE_MAX || p->slot[i].seq < p->slot[oldest].seq))
      oldest = i;
  if (oldest == SIZE_MAX)
    return NO_TIME;
  time = p->slot[oldest].time_ns;
  delete_slot (p, oldest);
  return time;
}

void
pending_free (struct pending *p)
{
  free (p->slot);
  *p = (struct pending) { 0 };
}
