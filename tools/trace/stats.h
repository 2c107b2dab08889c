/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The analyser's two kinds of sample: latencies (a vector of seconds,
 * for percentiles) and intervals of model or wall time (for how much
 * of a run something was busy, and how deep a queue was). */
#ifndef DMCRYPT_TRACE_STATS_H
#define DMCRYPT_TRACE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* V's array of *CAP items of SIZE bytes, its capacity doubled (from
 * 64); out of memory is a message and exit 1. */
void *grow_array (void *v, size_t *cap, size_t size);

struct vec
{
  double *v;
  size_t n, cap;
};

void vec_push (struct vec *x, double v);
/* Sorts X; percentile then takes P (0..100) of it, NAN when empty. */
void vec_sort (struct vec *x);
double percentile (const struct vec *x, double p);
void vec_free (struct vec *x);

/* Intervals [start, end] in ns: what was in a queue from when to when. */
struct intervals
{
  uint64_t *start, *end;
  size_t n, cap;
};

/* An END before START counts as START: an empty interval. */
void intervals_add (struct intervals *x, uint64_t start, uint64_t end);
void intervals_free (struct intervals *x);

struct overlap
{
  uint64_t total_ns;            /* the sum of the lengths */
  uint64_t union_ns;            /* time with at least one interval open */
  uint64_t max;                 /* the most intervals open at once */
};

/* Sorts X's ends.  Intervals that touch (one ends when the next starts)
 * are never counted open together. */
void intervals_overlap (struct intervals *x, struct overlap *o);

#endif /* DMCRYPT_TRACE_STATS_H */
