/* device=hdd: a 7200 rpm desktop disk with one actuator.
 *
 * An IO costs positioning plus transfer, and the actuator serves IOs one
 * after the other in the order they start (NCQ tags are accepted, 32 of
 * them, but not reordered: the order the host chose is the order the
 * media sees, which is what the lab measures):
 *
 *   done = begin + seek(d) + rotation + nsect * 512 / bandwidth
 *   begin = max (now, when the previous IO left the media)
 *
 * Geometry, kept simple: a linear mapping, sector s lies on cylinder
 * s * cylinders / capacity, and every track holds the same number of
 * sectors, bandwidth * (60 / rpm) / 512 (one revolution of data), so the
 * transfer rate is the same everywhere.  A real disk is zoned: its outer
 * cylinders hold more sectors and stream about twice as fast as the
 * inner ones; bandwidth is the average over the surface.
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
 * create refuses others.  d = 0 (the same cylinder) costs no seek.
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
 * Write cache (write-cache=1, off by default, as `hdparm -W0`, so that
 * the lab sees the media): a write is acknowledged when it fits in
 * cache-size bytes of not-yet-written data, else when enough older
 * writes have reached the media; the media writes the cache out in
 * arrival order (no reordering), and reads wait behind that write-out.
 * A write larger than the cache is written through.  A flush completes
 * when the media has caught up with everything started before it, with
 * or without the cache.  Discard is not a disk command: it costs
 * nothing.
 *
 * Sectors at or past the capacity wrap round (sector mod capacity), so a
 * backing image larger than the modelled disk still gets a seek profile.
 *
 * Defaults: typical figures of 1 TB, 7200 rpm desktop disk datasheets
 * (e.g. the Seagate Barracuda 7200 series manuals: 0.8 ms track-to-track,
 * 8.5 ms average read seek, about 16 ms full stroke, 150 MB/s average
 * sustained transfer between about 200 MB/s outside and 100 MB/s inside,
 * 64 MB of cache).  400000 cylinders: 1 TB on two heads (one platter) at
 * 1.25 MB a track (150 MB/s for 8.33 ms). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

enum { CAPACITY, CYLINDERS, RPM, SEEK_T2T, SEEK_AVG, SEEK_FULL, BANDWIDTH,
       WRITE_CACHE, CACHE_SIZE };

static const struct model_param hdd_params[] = {
  [CAPACITY] = { "capacity", "GB", 1000,
                 "disk size (decimal GB); sectors past it wrap round",
                 0.001, 1e6 },
  [CYLINDERS] = { "cylinders", "", 400000,
                  "seek positions: 1 TB on 2 heads at 1.25 MB a track",
                  10, 1e9 },
  [RPM] = { "rpm", "rpm", 7200, "spindle speed: one turn is 8.33 ms",
            1000, 30000 },
  [SEEK_T2T] = { "seek-t2t", "ms", 0.8,
                 "track-to-track seek (7200 rpm datasheets)", 0, 1000 },
  [SEEK_AVG] = { "seek-avg", "ms", 8.5,
                 "average seek: a third of the stroke (datasheets)",
                 0, 1000 },
  [SEEK_FULL] = { "seek-full", "ms", 16,
                  "full-stroke seek (datasheets)", 0, 1000 },
  [BANDWIDTH] = { "bandwidth", "MB/s", 150,
                  "media rate, the mean of outer and inner zones",
                  0.001, 1e5 },
  [WRITE_CACHE] = { "write-cache", "bool", 0,
                    "acknowledge writes from the cache (hdparm -W1)", 0, 1 },
  [CACHE_SIZE] = { "cache-size", "MiB", 64,
                   "write cache size (desktop disks: 64 MB)", 0.004, 1024 },
  { NULL },
};

#define SLOT_BYTES 4096           /* the write cache's unit of account */

struct dirty                      /* a cached write not yet on the media */
{
  uint64_t clean_at;              /* model ns: it reaches the media */
  uint64_t slots;
};

struct hdd
{
  uint64_t capacity;              /* sectors */
  double sectors_per_cylinder, sectors_per_track;
  uint64_t last_cylinder;
  double revolution_ns, sector_ns;
  double t2t_ns, a_ns, b_ns;      /* the seek curve */
  uint64_t head;                  /* the sector after the last IO */
  uint64_t busy_until;            /* model ns: the media is free */
  /* The write cache, a FIFO ring; NULL when write-cache=0. */
  struct dirty *ring;
  uint64_t ring_size, ring_first, ring_count;
  uint64_t dirty_slots;
};

static double
seek_ns (const struct hdd *h, uint64_t cylinders)
{
  double x;

  if (cylinders == 0)
    return 0;
  x = cylinders - 1;
  return h->t2t_ns + h->a_ns * x + h->b_ns * sqrt (x);
}

static uint64_t
cylinder_of (const struct hdd *h, uint64_t sector)
{
  uint64_t c = sector / h->sectors_per_cylinder;

  return c < h->last_cylinder ? c : h->last_cylinder;
}

/* Seek plus rotational wait from the head's place at time T to SECTOR. */
static double
positioning_ns (const struct hdd *h, uint64_t sector, uint64_t t)
{
  uint64_t from, to;
  double seek, platter, target, wait;

  if (sector == h->head)
    return 0;
  from = cylinder_of (h, h->head);
  to = cylinder_of (h, sector);
  seek = seek_ns (h, from > to ? from - to : to - from);
  platter = fmod ((double) t + seek, h->revolution_ns) / h->revolution_ns;
  target = fmod ((double) sector, h->sectors_per_track)
    / h->sectors_per_track;
  wait = target - platter;
  if (wait < 0)
    wait += 1;
  return seek + wait * h->revolution_ns;
}

/* When the write cache can take a write of BYTES started at NOW that
 * reaches the media at MEDIA_DONE: once the older dirty data plus this
 * fits in the cache. */
static uint64_t
cache_ack (struct hdd *h, uint64_t now, uint64_t media_done, uint64_t bytes)
{
  uint64_t slots = (bytes + SLOT_BYTES - 1) / SLOT_BYTES, ack = now;
  struct dirty *oldest;

  if (slots == 0)                 /* an entry per slot at most: the ring */
    slots = 1;                    /* never holds more than it has */
  if (slots > h->ring_size)
    return media_done;
  while (h->ring_count > 0) {
    oldest = &h->ring[h->ring_first];
    if (oldest->clean_at > now
        && h->dirty_slots + slots <= h->ring_size)
      break;
    if (oldest->clean_at > ack)
      ack = oldest->clean_at;
    h->dirty_slots -= oldest->slots;
    h->ring_first = (h->ring_first + 1) % h->ring_size;
    h->ring_count--;
  }
  h->ring[(h->ring_first + h->ring_count) % h->ring_size]
    = (struct dirty) { media_done, slots };
  h->ring_count++;
  h->dirty_slots += slots;
  return ack;
}

static uint64_t
hdd_start (void *state, const struct dev_io *io, uint64_t now)
{
  struct hdd *h = state;
  uint64_t begin = now > h->busy_until ? now : h->busy_until;
  uint64_t sector, done;

  if (io->op == DEV_FLUSH)
    return begin;
  if (io->op == DEV_DISCARD)
    return now;
  sector = io->sector % h->capacity;
  done = begin + llround (positioning_ns (h, sector, begin)
                          + io->nsect * h->sector_ns);
  h->busy_until = done;
  h->head = (sector + io->nsect) % h->capacity;
  if (io->op == DEV_WRITE && h->ring)
    return cache_ack (h, now, done, (uint64_t) io->nsect * 512);
  return done;
}

/* a, b of the seek curve through (1, t2t), (C/3, avg), (C, full). */
static int
fit_seek (struct hdd *h, const double *p, char *why, size_t why_size)
{
  double x1 = p[CYLINDERS] / 3 - 1, x2 = p[CYLINDERS] - 1;
  double y1 = p[SEEK_AVG] - p[SEEK_T2T], y2 = p[SEEK_FULL] - p[SEEK_T2T];
  double det = x1 * sqrt (x2) - x2 * sqrt (x1);
  double lo = y2 * x1 / x2, hi = y2 * sqrt (x1 / x2);

  if (y1 < 0 || y2 < y1) {
    snprintf (why, why_size, "seek-avg: need seek-t2t <= seek-avg <= "
              "seek-full (%g, %g, %g ms)", p[SEEK_T2T], p[SEEK_AVG],
              p[SEEK_FULL]);
    return -1;
  }
  if (y1 < lo * (1 - 1e-9) || y1 > hi * (1 + 1e-9)) {
    snprintf (why, why_size, "seek-avg: %g ms makes no growing seek curve "
              "with seek-t2t=%gms and seek-full=%gms: give %.2f to %.2f ms",
              p[SEEK_AVG], p[SEEK_T2T], p[SEEK_FULL], p[SEEK_T2T] + lo,
              p[SEEK_T2T] + hi);
    return -1;
  }
  h->t2t_ns = p[SEEK_T2T] * 1e6;
  h->a_ns = fmax (0, (y1 * sqrt (x2) - y2 * sqrt (x1)) / det) * 1e6;
  h->b_ns = fmax (0, (x1 * y2 - x2 * y1) / det) * 1e6;
  return 0;
}

static void *
hdd_create (const double *p, char *why, size_t why_size)
{
  struct hdd *h = calloc (1, sizeof *h);

  if (h == NULL) {
    snprintf (why, why_size, "hdd: out of memory");
    return NULL;
  }
  h->capacity = p[CAPACITY] * 1e9 / 512;
  if (h->capacity < p[CYLINDERS]) {
    snprintf (why, why_size, "cylinders: %g is more than the %llu sectors "
              "of capacity=%gGB", p[CYLINDERS],
              (unsigned long long) h->capacity, p[CAPACITY]);
    goto fail;
  }
  if (fit_seek (h, p, why, why_size) == -1)
    goto fail;
  h->sectors_per_cylinder = (double) h->capacity / p[CYLINDERS];
  h->last_cylinder = p[CYLINDERS] - 1;
  h->revolution_ns = 60e9 / p[RPM];
  h->sector_ns = 512 / (p[BANDWIDTH] * 1e6) * 1e9;
  h->sectors_per_track = h->revolution_ns / h->sector_ns;
  if (p[WRITE_CACHE]) {
    h->ring_size = p[CACHE_SIZE] * 1024 * 1024 / SLOT_BYTES;
    h->ring = calloc (h->ring_size, sizeof *h->ring);
    if (h->ring == NULL) {
      snprintf (why, why_size, "cache-size: out of memory");
      goto fail;
    }
  }
  return h;

 fail:
  free (h);
  return NULL;
}

static void
hdd_destroy (void *state)
{
  struct hdd *h = state;

  if (h) {
    free (h->ring);
    free (h);
  }
}

const struct device_model device_model_hdd = {
  .name = "hdd",
  .summary = "7200 rpm desktop disk: seek curve, rotation, one actuator",
  .queue_depth = 32,
  .params = hdd_params,
  .create = hdd_create,
  .destroy = hdd_destroy,
  .start = hdd_start,
};
