/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bios in a block queue and requests at a device, by sector range: a
 * sorted array, found by binary search.  What waits is bounded by the
 * queues being traced (nr_requests, the device's tags), so inserting
 * by moving the tail stays cheap. */
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "stats.h"

void
ptrs_push (struct ptrs *p, void *item)
{
  if (p->n == p->cap)
    p->v = grow_array (p->v, &p->cap, sizeof *p->v);
  p->v[p->n++] = item;
}

void
ptrs_free (struct ptrs *p)
{
  free (p->v);
  *p = (struct ptrs) { 0 };
}

/* The first index whose sector is at least SECTOR (AFTER: above it). */
static size_t
first_at (const struct ranges *r, uint64_t sector, bool after)
{
  size_t lo = 0, hi = r->n, mid;

  while (lo < hi) {
    mid = lo + (hi - lo) / 2;
    if (r->v[mid].sector < sector || (after && r->v[mid].sector == sector))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void
ranges_add (struct ranges *r, uint64_t sector, uint64_t nsect, void *item)
{
  size_t i;

  if (r->n == r->cap)
    r->v = grow_array (r->v, &r->cap, sizeof *r->v);
  /* After those at the same sector: arrival order among equals. */
  i = first_at (r, sector, true);
  memmove (&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
  r->v[i] = (struct range_item) { sector, nsect, item };
  r->n++;
}

size_t
ranges_take (struct ranges *r, uint64_t sector, uint64_t nsect,
             struct ptrs *out)
{
  const uint64_t end = sector + nsect;
  uint64_t covered = sector;    /* taken up to here */
  size_t i = first_at (r, sector, false), kept = i, taken = 0;

  if (i == r->n)
    return 0;
  for (; i < r->n && (r->v[i].sector < end
                      || (nsect == 0 && r->v[i].sector == sector)); i++) {
    const struct range_item *x = &r->v[i];
    bool fits = nsect == 0
      ? x->nsect == 0 && taken == 0
      : x->nsect > 0 && x->sector >= covered && x->sector + x->nsect <= end;

    if (fits) {
      ptrs_push (out, x->item);
      covered = x->sector + x->nsect;
      taken++;
    }
    else
      r->v[kept++] = *x;
  }
  memmove (&r->v[kept], &r->v[i], (r->n - i) * sizeof *r->v);
  r->n -= taken;
  return taken;
}

void
ranges_take_all (struct ranges *r, struct ptrs *out)
{
  size_t i;

  for (i = 0; i < r->n; i++)
    ptrs_push (out, r->v[i].item);
  r->n = 0;
}

void
ranges_free (struct ranges *r)
{
  free (r->v);
  *r = (struct ranges) { 0 };
}
