/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The two stores that match a trace's events to each other: Q events
 * waiting for the I, M or D of the same IO (matched exactly, by sector,
 * length and kind), and bios or requests waiting in a queue for the
 * event that takes them out (matched by range: a D takes the bios its
 * request covers, a C the requests its range covers). */
#ifndef DMCRYPT_TRACE_MATCH_H
#define DMCRYPT_TRACE_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NO_TIME UINT64_MAX      /* an event that was not matched */

/* Times of Q events by (sector, nsect, kind), an open-addressed table:
 * repeats of one key are kept and taken oldest first. */
struct pending
{
  struct pending_slot *slot;
  size_t size;                  /* power of two */
  size_t used;
  uint64_t seq;                 /* puts so far: the age of each entry */
};

void pending_put (struct pending *p, uint64_t sector, uint64_t nsect,
                  int kind, uint64_t time_ns);
/* Removes the oldest entry of the key and returns its time, or NO_TIME. */
uint64_t pending_take (struct pending *p, uint64_t sector, uint64_t nsect,
                       int kind);
void pending_free (struct pending *p);

/* Items with a sector range, sorted by sector and then by arrival. */
struct range_item
{
  uint64_t sector, nsect;       /* 512-byte sectors */
  void *item;
};

struct ranges
{
  struct range_item *v;
  size_t n, cap;
};

struct ptrs
{
  void **v;
  size_t n, cap;
};

void ranges_add (struct ranges *r, uint64_t sector, uint64_t nsect,
                 void *item);
/* Moves into OUT (sector order) the items inside [SECTOR, SECTOR +
 * NSECT) that do not overlap each other, the oldest first where some
 * do: a request holds every sector once.  NSECT 0 (a flush) takes the
 * oldest empty item at SECTOR.  Returns how many were taken. */
size_t ranges_take (struct ranges *r, uint64_t sector, uint64_t nsect,
                    struct ptrs *out);
/* Every item left, in OUT; R is left empty. */
void ranges_take_all (struct ranges *r, struct ptrs *out);
void ranges_free (struct ranges *r);

void ptrs_push (struct ptrs *p, void *item);
void ptrs_free (struct ptrs *p);

#endif /* DMCRYPT_TRACE_MATCH_H */
