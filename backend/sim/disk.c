/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The mechanics of one spinning disk (disk.h).
 *
 * Geometry, kept simple: a linear mapping, sector s lies on cylinder
 * s * cylinders / capacity, and every track holds the same number of
 * sectors, bandwidth * (60 / rpm) / 512 (one revolution of data), so the
 * transfer rate is the same everywhere.  A real disk is zoned: its outer
 * cylinders hold more sectors and stream faster than the inner ones;
 * bandwidth is the average over the surface.
 *
 * Seek over d > 0 cylinders:
 *
 *   seek(d) = t2t + a * (d - 1) + b * sqrt (d - 1)
 *
 * with a, b fitted so that seek(1) = seek-t2t, seek(C/3) = seek-avg (a
 * third of the stroke: the mean distance between two random cylinders)
 * and seek(C) = seek-full.  The square root is the accelerate-coast-
 * decelerate shape of short seeks, the linear term the coasting of long
 * ones.  Both must be >= 0 for a curve that grows with d, which bounds
 * seek-avg between t2t + (full - t2t)/3 and t2t + (full - t2t)/sqrt(3);
 * disk_init refuses others.  d = 0 (the same cylinder) costs no seek.
 * Because the curve is concave, random seeks over the whole disk average
 * about 6 % less than seek(C/3).
 *
 * Rotation is a phase, not a mean: the platter turns continuously since
 * model time 0, sector s passes under the head at angle (s mod
 * sectors-per-track) / sectors-per-track, and after the seek the head
 * waits until its first sector comes round: 0 to 1 revolution, half a
 * revolution on average for random IO, and deterministic.  An IO that
 * starts exactly where the previous one ended pays neither seek nor
 * rotation: the drive streams a sequential run through its track buffer
 * (read-ahead, write coalescing), however late the next command comes.
 *
 * The drive's command overhead (decoding the command, setting up the
 * transfer: Seagate's manuals give access times "including controller
 * overhead" and without it) is added to every command, sequential ones
 * too. */
#include <math.h>
#include <stdio.h>

#include "disk.h"

double
disk_seek_ns (const struct disk *d, uint64_t cylinders)
{
  double x;

  if (cylinders == 0)
    return 0;
  x = cylinders - 1;
  return d->t2t_ns + d->a_ns * x + d->b_ns * sqrt (x);
}

uint64_t
disk_cylinder (const struct disk *d, uint64_t sector)
{
  uint64_t c = sector / d->sectors_per_cylinder;

  return c < d->last_cylinder ? c : d->last_cylinder;
}

double
disk_positioning_ns (const struct disk *d, uint64_t sector, uint64_t t)
{
  uint64_t from, to;
  double seek, platter, target, wait;

  if (sector == d->head)
    return 0;
  from = disk_cylinder (d, d->head);
  to = disk_cylinder (d, sector);
  seek = disk_seek_ns (d, from > to ? from - to : to - from);
  platter = fmod ((double) t + seek, d->revolution_ns) / d->revolution_ns;
  target = fmod ((double) sector, d->sectors_per_track)
    / d->sectors_per_track;
  wait = target - platter;
  if (wait < 0)
    wait += 1;
  return seek + wait * d->revolution_ns;
}

uint64_t
disk_serve (struct disk *d, uint64_t sector, uint32_t nsect, uint64_t start)
{
  uint64_t done;

  sector %= d->capacity;
  done = start + llround (d->overhead_ns
                          + disk_positioning_ns (d, sector, start)
                          + nsect * d->sector_ns);
  d->head = (sector + nsect) % d->capacity;
  return done;
}

/* a, b of the seek curve through (1, t2t), (C/3, avg), (C, full). */
static int
fit_seek (struct disk *d, const struct disk_spec *p, char *why,
          size_t why_size)
{
  double x1 = p->cylinders / 3 - 1, x2 = p->cylinders - 1;
  double y1 = p->avg_ms - p->t2t_ms, y2 = p->full_ms - p->t2t_ms;
  double det = x1 * sqrt (x2) - x2 * sqrt (x1);
  double lo = y2 * x1 / x2, hi = y2 * sqrt (x1 / x2);

  if (y1 < 0 || y2 < y1) {
    snprintf (why, why_size, "seek-avg: need seek-t2t <= seek-avg <= "
              "seek-full (%g, %g, %g ms)", p->t2t_ms, p->avg_ms,
              p->full_ms);
    return -1;
  }
  if (y1 < lo * (1 - 1e-9) || y1 > hi * (1 + 1e-9)) {
    snprintf (why, why_size, "seek-avg: %g ms makes no growing seek curve "
              "with seek-t2t=%gms and seek-full=%gms: give %.2f to %.2f ms",
              p->avg_ms, p->t2t_ms, p->full_ms, p->t2t_ms + lo,
              p->t2t_ms + hi);
    return -1;
  }
  d->t2t_ns = p->t2t_ms * 1e6;
  d->a_ns = fmax (0, (y1 * sqrt (x2) - y2 * sqrt (x1)) / det) * 1e6;
  d->b_ns = fmax (0, (x1 * y2 - x2 * y1) / det) * 1e6;
  return 0;
}

int
disk_init (struct disk *d, const struct disk_spec *spec, char *why,
           size_t why_size)
{
  *d = (struct disk) { .capacity = spec->capacity_gb * 1e9 / 512 };
  if (d->capacity < spec->cylinders) {
    snprintf (why, why_size, "cylinders: %g is more than the %llu sectors "
              "of capacity=%gGB", spec->cylinders,
              (unsigned long long) d->capacity, spec->capacity_gb);
    return -1;
  }
  if (fit_seek (d, spec, why, why_size) == -1)
    return -1;
  d->sectors_per_cylinder = (double) d->capacity / spec->cylinders;
  d->last_cylinder = spec->cylinders - 1;
  d->revolution_ns = 60e9 / spec->rpm;
  d->sector_ns = 512 / (spec->bandwidth_mbs * 1e6) * 1e9;
  d->sectors_per_track = d->revolution_ns / d->sector_ns;
  d->overhead_ns = spec->overhead_ms * 1e6;
  return 0;
}
