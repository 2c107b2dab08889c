/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A RAID card with a RAID 10 array of SSDs or spinning disks, as a
 * reordering device model (model.h's queue and pick); raid10.c explains
 * it, raid2010.c makes the two arrays of the 2010 measurement from it. */
#ifndef DMCRYPT_SIM_RAID10_H
#define DMCRYPT_SIM_RAID10_H

#include <stdbool.h>
#include <stddef.h>

#include "disk.h"
#include "flash.h"
#include "model.h"
#include "ncq.h"

/* aacraid's queue depth for an array (aac_slave_configure, 2.6.32):
 * (can_queue - other devices) / arrays = (504 - 12 disks) / 2. */
#define RAID10_QUEUE_DEPTH 246
#define RAID10_MAX_DISKS 32

/* Which disk of a mirrored pair reads (read-policy). */
enum { RAID10_PRIMARY, RAID10_ALTERNATE, RAID10_NEAREST };
#define RAID10_POLICIES "primary|alternate|nearest"

struct raid_spec                  /* in the units of the params */
{
  double disks, stripe_kib, policy, ctrl_us;
  double capacity_gb;             /* per disk */
  struct flash_spec flash;        /* SSDs */
  struct disk_spec disk;          /* spinning disks, and: */
  bool tcq;                       /* they reorder their queues */
  double age_limit_ms;
};

/* The array SPEC describes: SSDs (flash), or spinning disks when
 * DISKS_SPIN (disk, with tagged queuing if tcq).  NULL with a one-line
 * reason naming the key in WHY. */
void *raid10_create (const struct raid_spec *spec, bool disks_spin,
                     char *why, size_t why_size);
void raid10_destroy (void *state);
int raid10_queue (void *state, const struct dev_io *io, uint64_t now,
                  unsigned tag);
bool raid10_pick (void *state, uint64_t now, struct dev_event *ev);

#endif /* DMCRYPT_SIM_RAID10_H */
