/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A RAID card (the Adaptec 5805Z of the 2010 measurement) with a RAID
 * 10 array: mirrored pairs of drives, striped (raid10.h).
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
 * tie: the distance to the head position md's raid1 read_balance keeps,
 * though md takes an idle disk first).  A write
 * piece goes to both.  A command completes when its last piece has; the
 * completion reaches the host at once.  A flush completes once every
 * command queued before it has (and no sooner than any command
 * completed before it); discard costs the card's latency only.  The
 * card's 512 MB cache is not modelled: reads at random miss it, and
 * writes go through to the disks.  Sectors past the array wrap round.
 *
 * The disks are SSDs (flash.c), served in the order pieces reach them,
 * or spinning disks (disk.c), each reordering its own queue by shortest
 * positioning time with an age limit (ncq.c: SCSI tagged queuing);
 * raid2010.c has the two arrays of 2010. */
#include <stdio.h>
#include <stdlib.h>

#include "raid10.h"

#define QUEUE_DEPTH RAID10_QUEUE_DEPTH

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
  bool disks_spin;                /* members are disks, not SSDs */
  unsigned ndisks, npairs;
  uint64_t chunk, disk_sectors;   /* sectors */
  unsigned policy;
  uint64_t ctrl_ns;
  struct member disk[RAID10_MAX_DISKS];
  unsigned turn[RAID10_MAX_DISKS / 2];  /* alternate: the pair's next
                                           disk */
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
  case RAID10_ALTERNATE:
    r->turn[pair] ^= 1;
    return a + !r->turn[pair];
  case RAID10_NEAREST:
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

int
raid10_queue (void *state, const struct dev_io *io, uint64_t now, unsigned tag)
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

bool
raid10_pick (void *state, uint64_t now, struct dev_event *ev)
{
  struct raid *r = state;

  while (!dev_events_pop (&r->told, ev))
    if (!advance_disks (r, now))
      return false;
  return true;
}

/* ---- Set-up ---- */

void
raid10_destroy (void *state)
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

void *
raid10_create (const struct raid_spec *p, bool disks_spin, char *why,
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
  raid10_destroy (r);
  return NULL;
}
