/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One SATA SSD of the 2008-2010 kind (Intel X25-E) as a member of a
 * RAID array: a command processor that takes one command at a time,
 * flash channels working in parallel, one link to the host.  Pure, like
 * disk.h; flash.c explains it. */
#ifndef DMCRYPT_SIM_FLASH_H
#define DMCRYPT_SIM_FLASH_H

#include <stddef.h>
#include <stdint.h>

#include "devop.h"

#define FLASH_MAX_CHANNELS 64

struct flash_spec                 /* in the units of the model's params */
{
  double read_latency_us;         /* a 4 KiB read at queue depth 1 */
  double write_latency_us;        /* a 4 KiB write at queue depth 1 */
  double iops;                    /* random 4 KiB reads a second, queued */
  double bandwidth_mbs;           /* sequential read, MB/s */
  double channels;
};

struct flash
{
  double cmd_ns;                  /* the command processor, per command */
  double read_ns, write_ns;       /* a channel, per IO */
  double link_ns;                 /* the link, per sector */
  unsigned channels;
  uint64_t cmd_free, link_free;   /* model ns */
  uint64_t channel_free[FLASH_MAX_CHANNELS];
};

/* F from SPEC; -1 with a one-line reason naming the key in WHY when the
 * latencies are shorter than the command and the 4 KiB transfer. */
int flash_init (struct flash *f, const struct flash_spec *spec, char *why,
                size_t why_size);
/* A read or write of NSECT sectors that reaches the drive at ARRIVAL:
 * when it completes (the drive serves in arrival order). */
uint64_t flash_serve (struct flash *f, enum dev_op op, uint32_t nsect,
                      uint64_t arrival);
/* When everything it was given has completed (from NOW on). */
uint64_t flash_idle (const struct flash *f, uint64_t now);

#endif /* DMCRYPT_SIM_FLASH_H */
