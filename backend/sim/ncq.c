/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A disk's command queue and its actuator (ncq.h).
 *
 * Whenever the actuator is free it takes the job it reaches soonest:
 * the least seek plus rotational wait from the head's place at the
 * moment it starts (disk_positioning_ns), what the Intel/Seagate NCQ
 * white paper (July 2003) calls Rotational Position Ordering.  Ties go
 * to the job added first.  Only jobs that have arrived by then compete;
 * an idle actuator starts a job the moment it arrives.
 *
 * Greedy positioning can leave a job behind for ever (one far from the
 * others keeps losing), so drives age their queue: a job that has waited
 * AGE_LIMIT or longer when the actuator frees goes next, the oldest
 * first (US patent 6,965,965 describes the oldest command taken once
 * its age passes a threshold held in a mode page).  An age limit of 0
 * serves in arrival order, as does REORDER false.
 *
 * A flush is a barrier, as a non-queued command is on SATA (libata's
 * ata_std_qc_defer holds it while queued commands are active, and
 * queued ones while it is): the jobs added before it are
 * served first, it completes when the last of them has, and the jobs
 * added after it wait for it.  Arrival times are clamped so that this
 * order holds on the clock too.  A flush itself takes no time.
 *
 * The disk's own work (a write acknowledged from its cache) competes
 * like any job and is never reported: the owner learns of the actuator
 * through a wake-up when such work ends with jobs still waiting. */
#include <stdlib.h>
#include <string.h>

#include "ncq.h"

int
ncq_init (struct ncq *q, const struct disk *disk, bool reorder,
          uint64_t age_limit_ns, unsigned size)
{
  *q = (struct ncq) { .disk = *disk, .reorder = reorder,
                      .age_limit_ns = age_limit_ns,
                      .size = size ? size : 1 };
  q->job = calloc (q->size, sizeof *q->job);
  return q->job ? 0 : -1;
}

void
ncq_free (struct ncq *q)
{
  free (q->job);
  q->job = NULL;
}

/* The latest arrival among the held jobs from FROM on. */
static uint64_t
latest_arrival (const struct ncq *q, unsigned from)
{
  uint64_t t = 0;
  unsigned i;

  for (i = from; i < q->njobs; i++)
    if (q->job[i].arrived > t)
      t = q->job[i].arrived;
  return t;
}

/* The held flush added last, or -1. */
static int
last_flush (const struct ncq *q)
{
  int i;

  for (i = (int) q->njobs - 1; i >= 0; i--)
    if (q->job[i].op == DEV_FLUSH)
      return i;
  return -1;
}

int
ncq_add (struct ncq *q, const struct ncq_job *job)
{
  struct ncq_job j = *job;
  int f = last_flush (q);
  uint64_t floor;

  if (q->njobs == q->size) {
    struct ncq_job *more = realloc (q->job, 2 * q->size * sizeof *more);

    if (more == NULL)
      return -1;
    q->job = more;
    q->size *= 2;
  }
  /* A barrier's order on the clock: nothing arrives before the flush
   * it follows, a flush not before what it follows. */
  floor = j.op == DEV_FLUSH ? latest_arrival (q, f < 0 ? 0 : f)
    : f >= 0 ? q->job[f].arrived : 0;
  if (j.arrived < floor)
    j.arrived = floor;
  j.sector %= q->disk.capacity;
  if (j.id == DEV_NO_TAG)
    q->own_sectors += j.nsect;
  q->job[q->njobs++] = j;
  return 0;
}

/* The jobs before the first held flush compete; the flush itself when
 * nothing is before it.  The count of them. */
static unsigned
competing (const struct ncq *q)
{
  unsigned i;

  for (i = 0; i < q->njobs; i++)
    if (q->job[i].op == DEV_FLUSH)
      return i == 0 ? 1 : i;
  return q->njobs;
}

int
ncq_choose (const struct ncq *q, uint64_t start)
{
  unsigned n = competing (q), i;
  int oldest = -1, best = -1;
  double cost, best_cost = 0;

  for (i = 0; i < n; i++)
    if (q->job[i].arrived <= start
        && (oldest < 0 || q->job[i].arrived < q->job[oldest].arrived))
      oldest = i;
  if (oldest < 0 || !q->reorder || q->job[oldest].op == DEV_FLUSH
      || start - q->job[oldest].arrived >= q->age_limit_ns)
    return oldest;
  for (i = 0; i < n; i++) {
    if (q->job[i].arrived > start)
      continue;
    cost = disk_positioning_ns (&q->disk, q->job[i].sector, start);
    if (best < 0 || cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

static struct ncq_job
take (struct ncq *q, unsigned i)
{
  struct ncq_job j = q->job[i];

  memmove (&q->job[i], &q->job[i + 1], (q->njobs - i - 1) * sizeof j);
  q->njobs--;
  if (j.id == DEV_NO_TAG)
    q->own_sectors -= j.nsect;
  return j;
}

/* The earliest arrival among the competing jobs. */
static uint64_t
first_arrival (const struct ncq *q)
{
  unsigned n = competing (q), i;
  uint64_t t = q->job[0].arrived;

  for (i = 1; i < n; i++)
    if (q->job[i].arrived < t)
      t = q->job[i].arrived;
  return t;
}

/* A wake-up at AT, unless the owner already has a time there. */
static bool
wake (struct ncq *q, uint64_t at, struct dev_event *ev)
{
  if ((q->busy_told && at == q->busy_until) || q->woken_for == at + 1)
    return false;
  q->woken_for = at + 1;
  *ev = (struct dev_event) { DEV_NO_TAG, at };
  return true;
}

bool
ncq_next (struct ncq *q, uint64_t now, struct dev_event *ev)
{
  while (q->njobs > 0) {
    uint64_t arrival = first_arrival (q);
    uint64_t start = arrival > q->busy_until ? arrival : q->busy_until;
    struct ncq_job job;

    if (start > now)
      return wake (q, start, ev);
    job = take (q, ncq_choose (q, start));
    q->busy_until = job.op == DEV_FLUSH ? start
      : disk_serve (&q->disk, job.sector, job.nsect, start);
    q->busy_told = job.id != DEV_NO_TAG;
    if (q->busy_told) {
      *ev = (struct dev_event) { job.id, q->busy_until };
      return true;
    }
  }
  return false;
}

int
dev_events_push (struct dev_events *f, unsigned tag, uint64_t at)
{
  if (f->count == f->size) {
    unsigned size = f->size ? 2 * f->size : 16, i;
    struct dev_event *ev = malloc (size * sizeof *ev);

    if (ev == NULL)
      return -1;
    for (i = 0; i < f->count; i++)
      ev[i] = f->ev[(f->first + i) % f->size];
    free (f->ev);
    f->ev = ev;
    f->first = 0;
    f->size = size;
  }
  f->ev[(f->first + f->count++) % f->size] = (struct dev_event) { tag, at };
  return 0;
}

bool
dev_events_pop (struct dev_events *f, struct dev_event *ev)
{
  if (f->count == 0)
    return false;
  *ev = f->ev[f->first];
  f->first = (f->first + 1) % f->size;
  f->count--;
  return true;
}

void
dev_events_free (struct dev_events *f)
{
  free (f->ev);
  *f = (struct dev_events) { NULL, 0, 0, 0 };
}
