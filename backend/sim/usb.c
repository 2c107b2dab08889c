/* SPDX-License-Identifier: GPL-2.0-or-later */
/* device=usb: a cheap USB stick whose controller maps flash by
 * allocation units (AU, the erase block group flashbench finds: 4 MiB).
 *
 * A block-mapped FTL keeps a few AUs "open": an open AU writes into a
 * fresh erased unit strictly in order, and the FTL remembers where the
 * next in-order write goes.  So a write costs
 *
 *   in order in an open AU:             len / seq-write
 *   backwards or skipping ahead in it:  merge + len / seq-write
 *   in an AU not open, < open-units:    len / seq-write (it opens)
 *   in an AU not open, open-units full: merge + len / seq-write
 *                                       (the least recently written
 *                                       open AU is closed by a merge)
 *
 *   merge = au / copy-bw + erase
 *
 * A merge copies the unit's valid data into a fresh unit and erases the
 * old one; every page of the AU is taken as valid (a stick in use).
 * After a merge forced by an out-of-order write the AU stays open, its
 * next in-order write right after the one that forced it.  An AU written
 * to its very end closes for free (the new unit simply replaces the old;
 * the old one is erased in the background, which seq-write already
 * includes), so an in-order stream never merges.  A write that spans AUs
 * is that many writes, one per AU.
 *
 * Reads are cheap and do not disturb the open AUs: read-latency (the
 * usb-storage command round trip) + len / read-bw.  Flush and discard
 * cost nothing beyond waiting their turn (usb-storage passes no discard;
 * sticks have no volatile cache worth flushing).  The stick takes one
 * command at a time (queue depth 1): every IO starts when the previous
 * one completed.  There is no capacity: any sector maps to AU
 * sector / au.
 *
 * Defaults, from flash measurements, none from the collapse below.  au
 * 4 MiB and 2 open units: the flashbench README's --open-au example
 * (Arnd Bergmann's tool for the Linaro flash card survey), a card whose
 * 4 MiB allocation units stay fast two at a time and not three, and the
 * survey's commonest finding on cheap media.  A merge: in that example
 * 256 KiB writes into three units in turn, each opening a unit and so
 * closing another, ran at 912 KiB/s against 6.27 MiB/s into two: 241 ms
 * more per write, the merge of a 4 MiB unit, where the card wrote a
 * whole unit in order in 455 ms (8.79 MiB/s).  Garbage collection costs
 * about half the time the host takes to write the unit: here 4 MiB at
 * 170 MB/s, 24.7 ms, halves to 13.1 ms, copy-bw 320 MB/s; the measured
 * time includes the erase, so erase is 0 (left to experiments).
 * seq-write 170 MB/s and read-bw 215 MB/s: dd to and from a plain USB 3
 * block device in unix.stackexchange.com/q/203677, the stick whose
 * writes through dm-crypt with 4 encryption threads, unsorted, fell to
 * about 20 MB/s and rose to 144 MB/s once Linux 4.0 sorted them.
 * read-latency 250 us: flashbench -a times about 0.5 ms for two small
 * reads on such sticks. */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

enum { AU, OPEN_UNITS, SEQ_WRITE, COPY_BW, ERASE, READ_BW, READ_LATENCY };

#define MAX_OPEN 16

static const struct model_param usb_params[] = {
  [AU] = { "au", "MiB", 4,
           "allocation unit: the FTL's erase block (flashbench)",
           0.0625, 1024 },
  [OPEN_UNITS] = { "open-units", "", 2,
                   "AUs written in order at once (flashbench --open-au)",
                   1, MAX_OPEN },
  [SEQ_WRITE] = { "seq-write", "MB/s", 170,
                  "in-order write rate (dd to a USB 3 stick)", 0.001, 1e5 },
  [COPY_BW] = { "copy-bw", "MB/s", 320,
                "merge: AU copy rate (flashbench: half an AU write)",
                0.001, 1e5 },
  [ERASE] = { "erase", "ms", 0,
              "merge: erasing the old AU (in copy-bw's measurement)",
              0, 1e4 },
  [READ_BW] = { "read-bw", "MB/s", 215, "read rate (dd from a USB 3 stick)",
                0.001, 1e5 },
  [READ_LATENCY] = { "read-latency", "us", 250,
                     "per-read command round trip (flashbench -a)", 0, 1e6 },
  { NULL },
};

struct open_unit
{
  uint64_t au;                    /* sector / au */
  uint64_t next;                  /* sector offset in it of an in-order
                                     write */
  uint64_t last_write;            /* usb->writes when written last: LRU */
  int open;
};

struct usb
{
  uint64_t au_sectors;
  unsigned open_units;
  double write_ns, read_ns;       /* per sector */
  double merge_ns, read_latency_ns;
  uint64_t busy_until;
  uint64_t writes;
  struct open_unit unit[MAX_OPEN];
};

/* The open unit of AU, or the slot to open it in: a free one, else the
 * least recently written (*EVICTED set). */
static struct open_unit *
find_unit (struct usb *u, uint64_t au, int *evicted)
{
  struct open_unit *free_slot = NULL, *lru = NULL;
  unsigned i;

  *evicted = 0;
  for (i = 0; i < u->open_units; i++) {
    struct open_unit *o = &u->unit[i];

    if (!o->open)
      free_slot = free_slot ? free_slot : o;
    else if (o->au == au)
      return o;
    else if (lru == NULL || o->last_write < lru->last_write)
      lru = o;
  }
  if (free_slot)
    return free_slot;
  *evicted = 1;
  return lru;
}

/* The cost of writing LEN sectors at offset OFF of one AU. */
static double
write_in_unit (struct usb *u, uint64_t au, uint64_t off, uint64_t len)
{
  int evicted;
  struct open_unit *o = find_unit (u, au, &evicted);
  double ns = len * u->write_ns;

  if (evicted || (o->open && o->au == au && off != o->next))
    ns += u->merge_ns;
  o->au = au;
  o->open = off + len < u->au_sectors;
  o->next = off + len;
  o->last_write = ++u->writes;
  return ns;
}

static double
write_ns (struct usb *u, uint64_t sector, uint64_t nsect)
{
  double ns = 0;

  while (nsect > 0) {
    uint64_t off = sector % u->au_sectors;
    uint64_t len = u->au_sectors - off < nsect ? u->au_sectors - off : nsect;

    ns += write_in_unit (u, sector / u->au_sectors, off, len);
    sector += len;
    nsect -= len;
  }
  return ns;
}

static uint64_t
usb_start (void *state, const struct dev_io *io, uint64_t now)
{
  struct usb *u = state;
  uint64_t begin = now > u->busy_until ? now : u->busy_until;
  double ns = 0;

  if (io->op == DEV_READ)
    ns = u->read_latency_ns + io->nsect * u->read_ns;
  else if (io->op == DEV_WRITE)
    ns = write_ns (u, io->sector, io->nsect);
  u->busy_until = begin + (uint64_t) (ns + 0.5);
  return u->busy_until;
}

static void *
usb_create (const double *p, char *why, size_t why_size)
{
  struct usb *u;
  double au_bytes = p[AU] * 1024 * 1024;

  if (au_bytes != (uint64_t) au_bytes / 512 * 512) {
    snprintf (why, why_size, "au: %g MiB is not a whole number of "
              "512-byte sectors", p[AU]);
    return NULL;
  }
  u = calloc (1, sizeof *u);
  if (u == NULL) {
    snprintf (why, why_size, "usb: out of memory");
    return NULL;
  }
  u->au_sectors = au_bytes / 512;
  u->open_units = p[OPEN_UNITS];
  u->write_ns = 512 / p[SEQ_WRITE] * 1e3;   /* MB/s: bytes per us */
  u->read_ns = 512 / p[READ_BW] * 1e3;
  u->merge_ns = au_bytes / p[COPY_BW] * 1e3 + p[ERASE] * 1e6;
  u->read_latency_ns = p[READ_LATENCY] * 1e3;
  return u;
}

static void
usb_destroy (void *state)
{
  free (state);
}

const struct device_model device_model_usb = {
  .name = "usb",
  .summary = "cheap USB stick: block-mapped FTL, disorder costs merges",
  .queue_depth = 1,
  /* usb-storage's limit (120 KiB: drivers/usb/storage/scsiglue.c),
   * the 240-sector writes of the 2015 blktrace. */
  .max_sectors = 240,
  .params = usb_params,
  .create = usb_create,
  .destroy = usb_destroy,
  .start = usb_start,
};
