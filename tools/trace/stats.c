/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Percentiles of latencies, and the sweep over intervals that gives a
 * device's busy time and a queue's depth. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

void *
grow_array (void *v, size_t *cap, size_t size)
{
  *cap = *cap ? 2 * *cap : 64;
  v = realloc (v, *cap * size);
  if (v == NULL) {
    perror ("dmcrypt-trace: realloc");
    exit (1);
  }
  return v;
}

void
vec_push (struct vec *x, double v)
{
  if (x->n == x->cap)
    x->v = grow_array (x->v, &x->cap, sizeof *x->v);
  x->v[x->n++] = v;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

void
vec_sort (struct vec *x)
{
  if (x->n > 0)
    qsort (x->v, x->n, sizeof *x->v, cmp_double);
}

double
percentile (const struct vec *x, double p)
{
  size_t i;

  if (x->n == 0)
    return NAN;
  i = (size_t) (p / 100.0 * (x->n - 1) + 0.5);
  return x->v[i];
}

void
vec_free (struct vec *x)
{
  free (x->v);
  *x = (struct vec) { 0 };
}

void
intervals_add (struct intervals *x, uint64_t start, uint64_t end)
{
  size_t cap = x->cap;

  if (x->n == x->cap) {
    x->start = grow_array (x->start, &cap, sizeof *x->start);
    x->end = grow_array (x->end, &x->cap, sizeof *x->end);
  }
  x->start[x->n] = start;
  x->end[x->n++] = end > start ? end : start;
}

void
intervals_free (struct intervals *x)
{
  free (x->start);
  free (x->end);
  *x = (struct intervals) { 0 };
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* One sweep over the starts and ends in time order, an end before a
 * start at the same time: the number open only changes at them.  The
 * Kth end is never before the Kth start (every interval ends after it
 * starts), so sorting the two apart keeps the count right. */
void
intervals_overlap (struct intervals *x, struct overlap *o)
{
  size_t s = 0, e = 0;
  uint64_t open = 0, now, before = 0;
  bool start_next;

  *o = (struct overlap) { 0 };
  if (x->n == 0)
    return;
  qsort (x->start, x->n, sizeof *x->start, cmp_u64);
  qsort (x->end, x->n, sizeof *x->end, cmp_u64);
  while (e < x->n) {
    start_next = s < x->n && (x->start[s] < x->end[e] || open == 0);
    now = start_next ? x->start[s] : x->end[e];
    if (open > 0)
      o->union_ns += now - before;
    o->total_ns += open * (now - before);
    before = now;
    if (start_next) {
      s++;
      if (++open > o->max)
        o->max = open;
    }
    else {
      e++;
      open--;
    }
  }
}
