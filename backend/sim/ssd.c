/* SPDX-License-Identifier: GPL-2.0-or-later */
/* device=ssd: a consumer SATA/NVMe SSD: flash channels working in
 * parallel behind one host link.
 *
 * Every IO occupies one channel for the flash operation's latency and
 * the host link for its data, bytes / bandwidth; the link carries one
 * transfer at a time, in the order IOs start:
 *
 *   read:   the channel senses (read-latency), then the link carries
 *           the data out
 *   write:  the link carries the data in, then the channel programs it
 *           (write-latency)
 *
 * The channel is the one that frees first, for reads as well as writes:
 * a page-mapped FTL places each write on whichever die is idle, and
 * striping spreads the data so that reads find their channels about as
 * evenly; modelling where each page went would add a map and change
 * little.  So the order of IOs does not matter to this device, only how
 * many are in flight: N IOs started together on C channels complete
 * about N/C latencies later, and a stream of large IOs runs at the link
 * bandwidth.  The flash latency does not grow with the IO's size (the
 * controller spreads a large IO over the planes and dies of its
 * channel); the link bounds what large IOs get.
 *
 * A flush completes when every channel and the link is idle (a consumer
 * drive with a volatile write cache would ack writes earlier and pay at
 * the flush; here writes complete when programmed, so a flush only waits
 * for them).  Discard (TRIM) updates the FTL's map in RAM: it costs
 * nothing.  There is no capacity: any sector is accepted.
 *
 * Defaults, a consumer SSD: 60 us to read a page and 150 us to program
 * one (TLC NAND with an SLC write cache; datasheets and QD1 fio runs of
 * SATA and NVMe drives show 50-100 us reads), 8 channels (the usual
 * consumer controller), 2000 MB/s through the link (a mid-range PCIe 3
 * x4 NVMe drive; a SATA drive would be 550), 32 commands queued (NCQ's
 * 32 tags; NVMe allows more). */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

enum { CHANNELS, READ_LATENCY, WRITE_LATENCY, BANDWIDTH };

#define MAX_CHANNELS 64

static const struct model_param ssd_params[] = {
  [CHANNELS] = { "channels", "", 8,
                 "flash channels in parallel (consumer controllers)",
                 1, MAX_CHANNELS },
  [READ_LATENCY] = { "read-latency", "us", 60,
                     "flash read of one IO (TLC page read, QD1 fio)",
                     0, 1e6 },
  [WRITE_LATENCY] = { "write-latency", "us", 150,
                      "flash program of one IO (SLC-cached TLC)", 0, 1e6 },
  [BANDWIDTH] = { "bandwidth", "MB/s", 2000,
                  "host link, all channels together (PCIe 3 x4 NVMe)",
                  0.001, 1e6 },
  { NULL },
};

struct ssd
{
  unsigned channels;
  double read_ns, write_ns;       /* flash latency per IO */
  double link_ns;                 /* per sector */
  uint64_t link_free;             /* model ns */
  uint64_t channel_free[MAX_CHANNELS];
};

static uint64_t *
first_free_channel (struct ssd *s)
{
  uint64_t *best = &s->channel_free[0];
  unsigned i;

  for (i = 1; i < s->channels; i++)
    if (s->channel_free[i] < *best)
      best = &s->channel_free[i];
  return best;
}

static uint64_t
later (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* When every channel and the link is idle. */
static uint64_t
idle_time (const struct ssd *s, uint64_t now)
{
  uint64_t t = later (now, s->link_free);
  unsigned i;

  for (i = 0; i < s->channels; i++)
    t = later (t, s->channel_free[i]);
  return t;
}

static uint64_t
ssd_start (void *state, const struct dev_io *io, uint64_t now)
{
  struct ssd *s = state;
  uint64_t xfer = io->nsect * s->link_ns + 0.5, *channel;

  switch (io->op) {
  case DEV_READ:
    channel = first_free_channel (s);
    *channel = later (now, *channel) + (uint64_t) (s->read_ns + 0.5);
    s->link_free = later (*channel, s->link_free) + xfer;
    return s->link_free;
  case DEV_WRITE:
    s->link_free = later (now, s->link_free) + xfer;
    channel = first_free_channel (s);
    *channel = later (s->link_free, *channel)
      + (uint64_t) (s->write_ns + 0.5);
    return *channel;
  case DEV_FLUSH:
    return idle_time (s, now);
  case DEV_DISCARD:
    break;
  }
  return now;
}

static void *
ssd_create (const double *p, char *why, size_t why_size)
{
  struct ssd *s = calloc (1, sizeof *s);

  if (s == NULL) {
    snprintf (why, why_size, "ssd: out of memory");
    return NULL;
  }
  s->channels = p[CHANNELS];
  s->read_ns = p[READ_LATENCY] * 1e3;
  s->write_ns = p[WRITE_LATENCY] * 1e3;
  s->link_ns = 512 / p[BANDWIDTH] * 1e3;     /* MB/s: bytes per us */
  return s;
}

static void
ssd_destroy (void *state)
{
  free (state);
}

const struct device_model device_model_ssd = {
  .name = "ssd",
  .nvme = true, .nonrot = true,
  .summary = "consumer SSD: parallel flash channels behind one link",
  .queue_depth = 32,
  .params = ssd_params,
  .create = ssd_create,
  .destroy = ssd_destroy,
  .start = ssd_start,
};
