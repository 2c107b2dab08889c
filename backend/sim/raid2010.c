/* SPDX-License-Identifier: GPL-2.0-or-later */
/* device=x25e-raid10, device=sas15k-raid10: the two arrays of the 2010
 * random-read figures (dm-devel, 3 September 2010): an Adaptec 5805Z
 * with a RAID 10 of 4 Intel X25-E SSDs, and one of 8 Seagate Savvio 15K
 * SAS disks, both the RAID card of raid10.c over their disks.  The
 * defaults' sources are in docs/device-models.md; ctrl-latency is the
 * one figure fitted, to the SSD array's raw 3320 seeks/s. */
#include "raid10.h"

/* ---- x25e-raid10 ---- */

enum { X_DISKS, X_STRIPE, X_POLICY, X_CTRL, X_CAPACITY, X_READ, X_WRITE,
       X_IOPS, X_BANDWIDTH, X_CHANNELS };

static const struct model_param x25e_params[] = {
  [X_DISKS] = { "disks", "", 4, "drives: mirrored pairs, striped",
                2, RAID10_MAX_DISKS },
  [X_STRIPE] = { "stripe", "KiB", 256,
                 "stripe (chunk) size (the card's usual default)", 4, 1024 },
  [X_POLICY] = { "read-policy", "choice", RAID10_NEAREST,
                 "which disk of a pair reads", 0, 2, RAID10_POLICIES },
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

  return raid10_create (&spec, false, why, why_size);
}

const struct device_model device_model_x25e_raid10 = {
  .name = "x25e-raid10",
  .summary = "RAID card, RAID 10 of Intel X25-E SSDs (2010)",
  .queue_depth = RAID10_QUEUE_DEPTH,
  .params = x25e_params,
  .create = x25e_create,
  .destroy = raid10_destroy,
  .queue = raid10_queue,
  .pick = raid10_pick,
};

/* ---- sas15k-raid10 ---- */

enum { S_DISKS, S_STRIPE, S_POLICY, S_CTRL, S_CAPACITY, S_CYLINDERS, S_RPM,
       S_T2T, S_AVG, S_FULL, S_BANDWIDTH, S_OVERHEAD, S_TCQ, S_AGE };

static const struct model_param sas15k_params[] = {
  [S_DISKS] = { "disks", "", 8, "drives: mirrored pairs, striped",
                2, RAID10_MAX_DISKS },
  [S_STRIPE] = { "stripe", "KiB", 256,
                 "stripe (chunk) size (the card's usual default)", 4, 1024 },
  [S_POLICY] = { "read-policy", "choice", RAID10_NEAREST,
                 "which disk of a pair reads", 0, 2, RAID10_POLICIES },
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

  return raid10_create (&spec, true, why, why_size);
}

const struct device_model device_model_sas15k_raid10 = {
  .name = "sas15k-raid10",
  .summary = "RAID card, RAID 10 of Seagate Savvio 15K.2 disks (2010)",
  .queue_depth = RAID10_QUEUE_DEPTH,
  .params = sas15k_params,
  .create = sas15k_create,
  .destroy = raid10_destroy,
  .queue = raid10_queue,
  .pick = raid10_pick,
};
