/* SPDX-License-Identifier: GPL-2.0-or-later */
/* device=hdd: a 7200 rpm desktop disk with one actuator and NCQ.
 *
 * An IO costs positioning plus transfer on the disk's mechanics
 * (disk.c: seek curve, rotation from the clock's phase, one media rate):
 *
 *   done = begin + seek(d) + rotation + nsect * 512 / bandwidth
 *
 * With ncq=on (the default) the disk holds its 32 tagged commands and
 * the actuator, whenever it is free, serves the one it reaches soonest
 * from where the head is, unless one has waited ncq-age-limit, which
 * goes first (ncq.c): a SATA disk's Native Command Queuing.  With
 * ncq=off the actuator serves them in the order they start, the order
 * the host chose:
 *
 *   begin = max (now, when the previous IO left the media)
 *
 * Write cache (write-cache=1, off by default, as `hdparm -W0`, so that
 * the lab sees the media).  With ncq=off: a write is acknowledged when
 * it fits in cache-size bytes of not-yet-written data, else when enough
 * older writes have reached the media; the media writes the cache out
 * in arrival order, and reads wait behind that write-out.  A write
 * larger than the cache is written through.  With ncq=on: a write is
 * acknowledged at once when it fits beside the cached writes the
 * actuator has not yet taken, and its media write then competes with
 * the queued commands like any other; one that does not fit is written
 * through.  Either way a flush completes when the media has caught up
 * with everything started before it.  Discard is not a disk command: it
 * costs nothing.
 *
 * Sectors at or past the capacity wrap round (sector mod capacity), so a
 * backing image larger than the modelled disk still gets a seek profile.
 *
 * Defaults: typical figures of 1 TB, 7200 rpm desktop disk datasheets
 * (e.g. the Seagate Barracuda 7200 series manuals: 0.8 ms track-to-track,
 * 8.5 ms average read seek, about 16 ms full stroke, 150 MB/s average
 * sustained transfer between about 200 MB/s outside and 100 MB/s inside,
 * 64 MB of cache).  400000 cylinders: 1 TB on two heads (one platter) at
 * 1.25 MB a track (150 MB/s for 8.33 ms).  The age limit: see
 * docs/device-models.md. */
#include <stdio.h>
#include <stdlib.h>

#include "disk.h"
#include "model.h"
#include "ncq.h"

enum { CAPACITY, CYLINDERS, RPM, SEEK_T2T, SEEK_AVG, SEEK_FULL, BANDWIDTH,
       WRITE_CACHE, CACHE_SIZE, NCQ, NCQ_AGE_LIMIT };

#define QUEUE_DEPTH 32            /* NCQ's tags */

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
  [NCQ] = { "ncq", "bool", 1,
            "reorder queued commands: shortest positioning time first",
            0, 1 },
  [NCQ_AGE_LIMIT] = { "ncq-age-limit", "ms", 500,
                      "a command waiting this long goes next",
                      0, 1e6 },
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
  struct ncq q;                   /* the disk, its queue and actuator */
  struct dev_events told;         /* decided, not yet reported */
  uint64_t busy_until;            /* ncq=off: model ns the media is free */
  /* ncq=off: the write cache, a FIFO ring; NULL when write-cache=0. */
  struct dirty *ring;
  uint64_t ring_size, ring_first, ring_count;
  uint64_t dirty_slots;
  uint64_t cache_sectors;         /* ncq=on: 0 when write-cache=0 */
};

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

/* ncq=off: IO starts at NOW, in the order IOs start. */
static uint64_t
start_in_order (struct hdd *h, const struct dev_io *io, uint64_t now)
{
  uint64_t begin = now > h->busy_until ? now : h->busy_until, done;

  if (io->op == DEV_FLUSH)
    return begin;
  if (io->op == DEV_DISCARD)
    return now;
  done = disk_serve (&h->q.disk, io->sector, io->nsect, begin);
  h->busy_until = done;
  if (io->op == DEV_WRITE && h->ring)
    return cache_ack (h, now, done, (uint64_t) io->nsect * 512);
  return done;
}

/* ncq=on: a write the cache takes is acknowledged at once. */
static bool
cached (const struct hdd *h, const struct dev_io *io)
{
  return io->op == DEV_WRITE && io->nsect > 0
    && h->q.own_sectors + io->nsect <= h->cache_sectors;
}

static int
hdd_queue (void *state, const struct dev_io *io, uint64_t now, unsigned tag)
{
  struct hdd *h = state;
  struct ncq_job job = { io->op, io->sector, io->nsect, now, tag };

  if (!h->q.reorder)
    return dev_events_push (&h->told, tag, start_in_order (h, io, now));
  if (io->op == DEV_DISCARD)
    return dev_events_push (&h->told, tag, now);
  if (!cached (h, io))
    return ncq_add (&h->q, &job);
  job.id = DEV_NO_TAG;
  if (ncq_add (&h->q, &job) == -1)
    return -1;
  return dev_events_push (&h->told, tag, now);
}

static bool
hdd_pick (void *state, uint64_t now, struct dev_event *ev)
{
  struct hdd *h = state;

  return dev_events_pop (&h->told, ev) || ncq_next (&h->q, now, ev);
}

static void
hdd_destroy (void *state)
{
  struct hdd *h = state;

  if (h) {
    ncq_free (&h->q);
    dev_events_free (&h->told);
    free (h->ring);
    free (h);
  }
}

static int
make_cache (struct hdd *h, const double *p, char *why, size_t why_size)
{
  if (!p[WRITE_CACHE])
    return 0;
  if (p[NCQ]) {
    h->cache_sectors = p[CACHE_SIZE] * 1024 * 1024 / 512;
    return 0;
  }
  h->ring_size = p[CACHE_SIZE] * 1024 * 1024 / SLOT_BYTES;
  h->ring = calloc (h->ring_size, sizeof *h->ring);
  if (h->ring == NULL) {
    snprintf (why, why_size, "cache-size: out of memory");
    return -1;
  }
  return 0;
}

static void *
hdd_create (const double *p, char *why, size_t why_size)
{
  struct hdd *h = calloc (1, sizeof *h);
  struct disk_spec spec = {
    p[CAPACITY], p[CYLINDERS], p[RPM], p[SEEK_T2T], p[SEEK_AVG],
    p[SEEK_FULL], p[BANDWIDTH], 0,
  };
  struct disk disk;

  if (h == NULL) {
    snprintf (why, why_size, "hdd: out of memory");
    return NULL;
  }
  if (disk_init (&disk, &spec, why, why_size) == -1)
    goto fail;
  if (ncq_init (&h->q, &disk, p[NCQ], p[NCQ_AGE_LIMIT] * 1e6,
                QUEUE_DEPTH) == -1) {
    snprintf (why, why_size, "hdd: out of memory");
    goto fail;
  }
  if (make_cache (h, p, why, why_size) == 0)
    return h;
 fail:
  hdd_destroy (h);
  return NULL;
}

const struct device_model device_model_hdd = {
  .name = "hdd",
  .summary = "7200 rpm desktop disk: seek curve, rotation, NCQ",
  .queue_depth = QUEUE_DEPTH,
  .params = hdd_params,
  .create = hdd_create,
  .destroy = hdd_destroy,
  .queue = hdd_queue,
  .pick = hdd_pick,
};
