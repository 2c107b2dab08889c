/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One SATA SSD as a RAID member (flash.h).
 *
 * A command passes three stages, each busy until it is done with it:
 *
 *   read:   command processor (1 / iops) -> a flash channel (read_ns)
 *           -> the link (nsect * 512 / bandwidth)
 *   write:  command processor -> the link -> a flash channel (write_ns)
 *
 * The processor and the link take one command at a time, in arrival
 * order; the channel is the one that frees first.  The stages are sized
 * from the datasheet's figures, not from its insides: the processor's
 * time is what caps queued random reads at `iops`; the link's rate is
 * the sequential read rate; the flash time is what is left of the
 * datasheet's latency, a 4 KiB read (or write) at queue depth 1, once
 * the processor and the 4 KiB transfer are counted:
 *
 *   read_ns = read-latency - 1/iops - 4096 / bandwidth
 *
 * so a lone 4 KiB read takes exactly read-latency, a 512-byte one
 * 3584 / bandwidth less.  Intel quotes latency as the average of
 * sequential 4 KiB IOs at queue depth 1, what the host sees; the X25-E's
 * writes land in its RAM first, so its write latency is that of a cached
 * write, and the drive's sustained write rate (170 MB/s) and random
 * write rate (3,300 IO/s) are not modelled. */
#include <stdio.h>

#include "flash.h"

#define PAGE_BYTES 4096           /* the size the datasheet latencies are
                                     given for */

static uint64_t
later (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

static uint64_t *
first_free_channel (struct flash *f)
{
  uint64_t *best = &f->channel_free[0];
  unsigned i;

  for (i = 1; i < f->channels; i++)
    if (f->channel_free[i] < *best)
      best = &f->channel_free[i];
  return best;
}

uint64_t
flash_serve (struct flash *f, enum dev_op op, uint32_t nsect,
             uint64_t arrival)
{
  uint64_t xfer = nsect * f->link_ns + 0.5, *channel;

  f->cmd_free = later (arrival, f->cmd_free) + (uint64_t) (f->cmd_ns + 0.5);
  channel = first_free_channel (f);
  if (op == DEV_READ) {
    *channel = later (f->cmd_free, *channel) + (uint64_t) (f->read_ns + 0.5);
    f->link_free = later (*channel, f->link_free) + xfer;
    return f->link_free;
  }
  f->link_free = later (f->cmd_free, f->link_free) + xfer;
  *channel = later (f->link_free, *channel) + (uint64_t) (f->write_ns + 0.5);
  return *channel;
}

uint64_t
flash_idle (const struct flash *f, uint64_t now)
{
  uint64_t t = later (now, later (f->cmd_free, f->link_free));
  unsigned i;

  for (i = 0; i < f->channels; i++)
    t = later (t, f->channel_free[i]);
  return t;
}

int
flash_init (struct flash *f, const struct flash_spec *spec, char *why,
            size_t why_size)
{
  double fixed_us;

  *f = (struct flash) { .channels = spec->channels };
  f->cmd_ns = 1e9 / spec->iops;
  f->link_ns = 512 / spec->bandwidth_mbs * 1e3;  /* MB/s: bytes per us */
  fixed_us = (f->cmd_ns + PAGE_BYTES / 512 * f->link_ns) / 1e3;
  if (spec->read_latency_us < fixed_us || spec->write_latency_us < fixed_us) {
    snprintf (why, why_size, "%s: below the %.1f us that 1/iops and a "
              "4 KiB transfer take", spec->read_latency_us < fixed_us
              ? "read-latency" : "write-latency", fixed_us);
    return -1;
  }
  f->read_ns = (spec->read_latency_us - fixed_us) * 1e3;
  f->write_ns = (spec->write_latency_us - fixed_us) * 1e3;
  return 0;
}
