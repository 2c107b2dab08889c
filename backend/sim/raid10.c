/* device=x25e-raid10, device=sas15k-raid10: a RAID card (the Adaptec
 * 5805Z of the 2010 measurement) with a RAID 10 array: mirrored pairs of
 * drives, striped.
 *
 * The card takes each command after ctrl-latency (its firmware's time
 * per command, and the host's, the one figure fitted: see
 * docs/device-models.md), splits it at the stripe (chunk) boundaries and
 * sends each piece to the pair that holds it:
 *
 *   chunk k = sector / stripe, pair = k mod pairs,
 *   on the pair's disks at (k / pairs) * stripe + sector mod stripe
 *
 * (RAID 0 over RAID 1 pairs, as Adaptec's guide describes RAID 10).  A
 * read piece goes to one disk of its pair, chosen by read-policy:
 * primary (always the first), alternate (turns per pair) or nearest
 * (the disk whose last piece ended nearest to this one, the first on a
 * tie: the head position Linux md's raid1 read_balance uses).  A write
 * piece goes to both.  A command completes when its last piece has; the
 * completion reaches the host at once.  A flush completes once every
 * command queued before it has (and no sooner than any command
 * completed before it); discard costs the card's latency only.  The
 * card's 512 MB cache is not modelled: reads at random miss it, and
 * writes go through to the disks.  Sectors past the array wrap round.
 *
 * The disks: x25e-raid10 has Intel X25-E SSDs (flash.c), served in the
 * order pieces reach them; sas15k-raid10 has Seagate Savvio 15K.2 SAS
 * disks (disk.c), each reordering its own queue by shortest positioning
 * time with an age limit (ncq.c: SCSI tagged queuing). */
#include <stdio.h>
#include <stdlib.h>

#include "disk.h"
#include "flash.h"
#include "model.h"
#include "ncq.h"

/* aacraid's queue depth for an array (aac_slave_configure, 2.6.32):
 * (can_queue - other devices) / arrays = (504 - 12 disks) / 2. */
#define QUEUE_DEPTH 246
#define MAX_DISKS 32

enum { POLICY_PRIMARY, POLICY_ALTERNATE, POLICY_NEAREST };
#define POLICIES "primary|alternate|nearest"

struct raid_spec
{
  double disks, stripe_kib, policy, ctrl_us;
  double capacity_gb;             /* per disk */
  struct flash_spec flash;        /* x25e */
  struct disk_spec disk;          /* sas15k */
  bool tcq;
  double age_limit_ms;
};

struct member
{
  struct flash f;                 /* an SSD's */
  struct ncq q;                   /* a disk's */
  uint64_t last_end;              /* the sector after its last piece */
};

struct host                       /* a command of the host's, by tag */
{
  bool live, flush;
  unsigned pieces;                /* not yet complete */
  uint64_t seq;                   /* the order it was queued in */
  uint64_t arrived;               /* at the disks: model ns */
  uint64_t done;                  /* its latest piece so far */
};

struct raid
{
  bool disks_spin;                /* sas15k: members are disks */
  unsigned ndisks, npairs;
  uint64_t chunk, disk_sectors;   /* sectors */
  unsigned policy;
  uint64_t ctrl_ns;
  struct member disk[MAX_DISKS];
  unsigned turn[MAX_DISKS / 2];   /* alternate: the pair's next disk */
  struct host host[QUEUE_DEPTH];
  uint64_t seq, latest_done;
  unsigned *piece_host;           /* a disk's queued piece: its host tag */
  unsigned *piece_free, npiece_free, piece_size;
  struct dev_events told;
};

/* ---- Pieces queued at the disks ---- */

static int
grow_pieces (struct raid *r)
{
  unsigned size = r->piece_size ? 2 * r->piece_size : 2 * QUEUE_DEPTH, i;
  unsigned *host = realloc (r->piece_host, size * sizeof *host);
  unsigned *free_ = host ? realloc (r->piece_free, size * sizeof *free_)
    : NULL;

  if (host)
    r->piece_host = host;
  if (free_ == NULL)
    return -1;
  r->piece_free = free_;
  for (i = r->piece_size; i < size; i++)
    r->piece_free[r->npiece_free++] = i;
  r->piece_size = size;
  return 0;
}

static int
new_piece (struct raid *r, unsigned tag)
{
  unsigned id;

  if (r->npiece_free == 0 && grow_pieces (r) == -1)
    return -1;
  id = r->piece_free[--r->npiece_free];
  r->piece_host[id] = tag;
  return id;
}

/* ---- Commands complete ---- */

static int
report (struct raid *r, unsigned tag, uint64_t at)
{
  r->host[tag].live = false;
  if (at > r->latest_done)
    r->latest_done = at;
  return dev_events_push (&r->told, tag, at);
}

/* The flushes whose older commands have all completed. */
static int
report_flushes (struct raid *r)
{
  uint64_t oldest = UINT64_MAX;
  unsigned t;

  for (t = 0; t < QUEUE_DEPTH; t++)
    if (r->host[t].live && !r->host[t].flush && r->host[t].seq < oldest)
      oldest = r->host[t].seq;
  for (t = 0; t < QUEUE_DEPTH; t++)
    if (r->host[t].live && r->host[t].flush && r->host[t].seq < oldest
        && report (r, t, r->host[t].arrived > r->latest_done
                   ? r->host[t].arrived : r->latest_done) == -1)
      return -1;
  return 0;
}

/* A piece of TAG completed at AT; the command's completion time when it
 * was its last, else 0.  -1: out of memory. */
static int64_t
piece_done (struct raid *r, unsigned tag, uint64_t at)
{
  struct host *h = &r->host[tag];

  if (at > h->done)
    h->done = at;
  if (--h->pieces > 0)
    return 0;
  if (report (r, tag, h->done) == -1 || report_flushes (r) == -1)
    return -1;
  return h->done;
}

/* ---- Commands to the disks ---- */

static unsigned
read_disk (struct raid *r, unsigned pair, uint64_t sector)
{
  unsigned a = 2 * pair, b = a + 1;
  uint64_t da, db;

  switch (r->policy) {
  case POLICY_ALTERNATE:
    r->turn[pair] ^= 1;
    return a + !r->turn[pair];
  case POLICY_NEAREST:
    da = r->disk[a].last_end > sector ? r->disk[a].last_end - sector
      : sector - r->disk[a].last_end;
    db = r->disk[b].last_end > sector ? r->disk[b].last_end - sector
      : sector - r->disk[b].last_end;
    return db < da ? b : a;
  default:
    return a;
  }
}

static int
to_disk (struct raid *r, unsigned d, const struct ncq_job *job)
{
  struct member *m = &r->disk[d];
  struct ncq_job j = *job;
  int id;

  m->last_end = job->sector + job->nsect;
  if (!r->disks_spin)
    return piece_done (r, job->id, flash_serve (&m->f, job->op, job->nsect,
                                                job->arrived)) < 0 ? -1 : 0;
  if ((id = new_piece (r, job->id)) == -1)
    return -1;
  j.id = id;
  return ncq_add (&m->q, &j);
}

/* The pieces of a read or write of TAG, at the disks from ARRIVED. */
static int
split (struct raid *r, const struct dev_io *io, uint64_t arrived,
       unsigned tag, bool count_only)
{
  uint64_t array = r->npairs * r->disk_sectors;
  uint64_t sector = io->sector % array, left = io->nsect, k, off, len;
  unsigned pieces = 0, pair;
  struct ncq_job job = { io->op, 0, 0, arrived, tag };

  do {
    k = sector / r->chunk;
    off = sector % r->chunk;
    len = r->chunk - off < left ? r->chunk - off : left;
    pair = k % r->npairs;
    job.sector = k / r->npairs * r->chunk + off;
    job.nsect = len;
    pieces += io->op == DEV_WRITE ? 2 : 1;
    if (!count_only
        && ((io->op == DEV_WRITE && to_disk (r, 2 * pair, &job) == -1)
            || to_disk (r, io->op == DEV_WRITE ? 2 * pair + 1
                        : read_disk (r, pair, job.sector), &job) == -1))
      return -1;
    sector = (sector + len) % array;
    left -= len;
  } while (left > 0);
  return pieces;
}

static int
raid_queue (void *state, const struct dev_io *io, uint64_t now, unsigned tag)
{
  struct raid *r = state;
  uint64_t arrived = now + r->ctrl_ns;
  struct host *h;

  if (tag >= QUEUE_DEPTH)
    return -1;
  h = &r->host[tag];
  *h = (struct host) { .live = true, .seq = r->seq++, .arrived = arrived,
                       .done = arrived };
  switch (io->op) {
  case DEV_DISCARD:
    return report (r, tag, arrived);
  case DEV_FLUSH:
    h->flush = true;
    return report_flushes (r);
  default:
    h->pieces = split (r, io, arrived, tag, true);
    return split (r, io, arrived, tag, false) < 0 ? -1 : 0;
  }
}

/* The disks' decisions by NOW; false when none had any. */
static bool
advance_disks (struct raid *r, uint64_t now)
{
  struct dev_event ev;
  bool any = false;
  unsigned d, tag;
  int64_t done;

  for (d = 0; r->disks_spin && d < r->ndisks; d++)
    while (ncq_next (&r->disk[d].q, now, &ev)) {
      any = true;
      if (ev.tag == DEV_NO_TAG) {
        dev_events_push (&r->told, DEV_NO_TAG, ev.at);
        continue;
      }
      tag = r->piece_host[ev.tag];
      r->piece_free[r->npiece_free++] = ev.tag;
      /* The disk frees at ev.at: a wake-up unless the host's completion
       * falls there. */
      done = piece_done (r, tag, ev.at);
      if (ev.at > now && done != (int64_t) ev.at)
        dev_events_push (&r->told, DEV_NO_TAG, ev.at);
    }
  return any;
}

static bool
raid_pick (void *state, uint64_t now, struct dev_event *ev)
{
  struct raid *r = state;

  while (!dev_events_pop (&r->told, ev))
    if (!advance_disks (r, now))
      return false;
  return true;
}

/* ---- Set-up ---- */

static void
raid_destroy (void *state)
{
  struct raid *r = state;
  unsigned d;

  if (r == NULL)
    return;
  for (d = 0; d < r->ndisks; d++)
    ncq_free (&r->disk[d].q);
  free (r->piece_host);
  free (r->piece_free);
  dev_events_free (&r->told);
  free (r);
}

static int
init_disks (struct raid *r, const struct raid_spec *p, char *why,
            size_t why_size)
{
  struct disk disk;
  unsigned d;

  if (!r->disks_spin) {
    for (d = 0; d < r->ndisks; d++)
      if (flash_init (&r->disk[d].f, &p->flash, why, why_size) == -1)
        return -1;
    return 0;
  }
  if (disk_init (&disk, &p->disk, why, why_size) == -1)
    return -1;
  for (d = 0; d < r->ndisks; d++)
    if (ncq_init (&r->disk[d].q, &disk, p->tcq, p->age_limit_ms * 1e6,
                  QUEUE_DEPTH) == -1) {
      snprintf (why, why_size, "raid10: out of memory");
      return -1;
    }
  return grow_pieces (r);
}

static void *
raid_create (const struct raid_spec *p, bool disks_spin, char *why,
             size_t why_size)
{
  struct raid *r = calloc (1, sizeof *r);

  if (r == NULL) {
    snprintf (why, why_size, "raid10: out of memory");
    return NULL;
  }
  if ((unsigned) p->disks % 2) {
    snprintf (why, why_size, "disks: %g is not a whole number of mirrored "
              "pairs", p->disks);
    goto fail;
  }
  r->disks_spin = disks_spin;
  r->ndisks = p->disks;
  r->npairs = r->ndisks / 2;
  r->chunk = p->stripe_kib * 2;
  r->disk_sectors = p->capacity_gb * 1e9 / 512;
  r->policy = p->policy;
  r->ctrl_ns = p->ctrl_us * 1e3 + 0.5;
  if (init_disks (r, p, why, why_size) == 0)
    return r;
 fail:
  raid_destroy (r);
  return NULL;
}

/* ---- x25e-raid10 ---- */

enum { X_DISKS, X_STRIPE, X_POLICY, X_CTRL, X_CAPACITY, X_READ, X_WRITE,
       X_IOPS, X_BANDWIDTH, X_CHANNELS };

static const struct model_param x25e_params[] = {
  [X_DISKS] = { "disks", "", 4, "drives: mirrored pairs, striped",
                2, MAX_DISKS },
  [X_STRIPE] = { "stripe", "KiB", 256,
                 "stripe (chunk) size (the card's usual default)", 4, 1024 },
  [X_POLICY] = { "read-policy", "choice", POLICY_NEAREST,
                 "which disk of a pair reads", 0, 2, POLICIES },
  [X_CTRL] = { "ctrl-latency", "us", 226,
               "card and host per command (fitted: raw 3320 seeks/s)",
               0, 1e6 },
  [X_CAPACITY] = { "capacity", "GB", 64, "per drive (X25-E: 32, 64 GB)",
                   0.001, 1e5 },
  [X_READ] = { "read-latency", "us", 75,
               "4 KiB read at queue depth 1 (X25-E datasheet)", 0, 1e6 },
  [X_WRITE] = { "write-latency", "us", 85,
                "4 KiB write at queue depth 1 (X25-E datasheet)", 0, 1e6 },
  [X_IOPS] = { "iops", "", 35000,
               "random 4 KiB reads a second, queued (datasheet)", 1, 1e7 },
  [X_BANDWIDTH] = { "bandwidth", "MB/s", 250,
                    "sequential read (X25-E datasheet)", 0.001, 1e5 },
  [X_CHANNELS] = { "channels", "", 10, "flash channels (Intel's controller)",
                   1, FLASH_MAX_CHANNELS },
  { NULL },
};

static void *
x25e_create (const double *p, char *why, size_t why_size)
{
  struct raid_spec spec = {
    .disks = p[X_DISKS], .stripe_kib = p[X_STRIPE], .policy = p[X_POLICY],
    .ctrl_us = p[X_CTRL], .capacity_gb = p[X_CAPACITY],
    .flash = { p[X_READ], p[X_WRITE], p[X_IOPS], p[X_BANDWIDTH],
               p[X_CHANNELS] },
  };

  return raid_create (&spec, false, why, why_size);
}

const struct device_model device_model_x25e_raid10 = {
  .name = "x25e-raid10",
  .summary = "RAID card, RAID 10 of Intel X25-E SSDs (2010)",
  .queue_depth = QUEUE_DEPTH,
  .params = x25e_params,
  .create = x25e_create,
  .destroy = raid_destroy,
  .queue = raid_queue,
  .pick = raid_pick,
};

/* ---- sas15k-raid10 ---- */

enum { S_DISKS, S_STRIPE, S_POLICY, S_CTRL, S_CAPACITY, S_CYLINDERS, S_RPM,
       S_T2T, S_AVG, S_FULL, S_BANDWIDTH, S_OVERHEAD, S_TCQ, S_AGE };

static const struct model_param sas15k_params[] = {
  [S_DISKS] = { "disks", "", 8, "drives: mirrored pairs, striped",
                2, MAX_DISKS },
  [S_STRIPE] = { "stripe", "KiB", 256,
                 "stripe (chunk) size (the card's usual default)", 4, 1024 },
  [S_POLICY] = { "read-policy", "choice", POLICY_NEAREST,
                 "which disk of a pair reads", 0, 2, POLICIES },
  [S_CTRL] = { "ctrl-latency", "us", 226,
               "card and host per command (x25e-raid10's fit)", 0, 1e6 },
  [S_CAPACITY] = { "capacity", "GB", 146.8,
                   "per drive (Savvio 15K.2 ST9146852SS)", 0.001, 1e5 },
  [S_CYLINDERS] = { "cylinders", "", 71400,
                    "seek positions: 4 heads at 514 KB a track", 10, 1e9 },
  [S_RPM] = { "rpm", "rpm", 15000, "spindle speed: one turn is 4 ms",
              1000, 30000 },
  [S_T2T] = { "seek-t2t", "ms", 0.2, "track-to-track seek (Savvio manuals)",
              0, 1000 },
  [S_AVG] = { "seek-avg", "ms", 2.9, "average read seek (15K.2 datasheet)",
              0, 1000 },
  [S_FULL] = { "seek-full", "ms", 5.9,
               "full stroke: twice the average (Savvio manuals)", 0, 1000 },
  [S_BANDWIDTH] = { "bandwidth", "MB/s", 128,
                    "media rate, the mean of 105 to 152 MB/s (manual)",
                    0.001, 1e5 },
  [S_OVERHEAD] = { "cmd-overhead", "ms", 0.2,
                   "the drive's command overhead (Savvio manuals)", 0, 100 },
  [S_TCQ] = { "tcq", "bool", 1,
              "each drive reorders its queue (tagged queuing)", 0, 1 },
  [S_AGE] = { "tcq-age-limit", "ms", 500,
              "a command waiting this long goes next", 0, 1e6 },
  { NULL },
};

static void *
sas15k_create (const double *p, char *why, size_t why_size)
{
  struct raid_spec spec = {
    .disks = p[S_DISKS], .stripe_kib = p[S_STRIPE], .policy = p[S_POLICY],
    .ctrl_us = p[S_CTRL], .capacity_gb = p[S_CAPACITY],
    .disk = { p[S_CAPACITY], p[S_CYLINDERS], p[S_RPM], p[S_T2T], p[S_AVG],
              p[S_FULL], p[S_BANDWIDTH], p[S_OVERHEAD] },
    .tcq = p[S_TCQ], .age_limit_ms = p[S_AGE],
  };

  return raid_create (&spec, true, why, why_size);
}

const struct device_model device_model_sas15k_raid10 = {
  .name = "sas15k-raid10",
  .summary = "RAID card, RAID 10 of Seagate Savvio 15K.2 disks (2010)",
  .queue_depth = QUEUE_DEPTH,
  .params = sas15k_params,
  .create = sas15k_create,
  .destroy = raid_destroy,
  .queue = raid_queue,
  .pick = raid_pick,
};
