/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The mechanics of one spinning disk: where a sector lies (cylinder,
 * angle), how long the actuator takes to reach it from where the head is
 * (seek curve, rotational wait on the model clock's phase), how long its
 * data takes to pass under the head.  Pure: the times are model
 * nanoseconds given by the caller.  The hdd model and the RAID card's
 * SAS disks are built on it; disk.c explains the formulas. */
#ifndef DMCRYPT_SIM_DISK_H
#define DMCRYPT_SIM_DISK_H

#include <stddef.h>
#include <stdint.h>

struct disk_spec                  /* in the units of the model's params */
{
  double capacity_gb;             /* decimal GB */
  double cylinders;               /* seek positions */
  double rpm;
  double t2t_ms, avg_ms, full_ms; /* seek over 1 cylinder, a third of the
                                     stroke, the whole stroke */
  double bandwidth_mbs;           /* media rate, MB/s */
  double overhead_ms;             /* the drive's own command overhead */
};

struct disk
{
  uint64_t capacity;              /* sectors */
  double sectors_per_cylinder, sectors_per_track;
  uint64_t last_cylinder;
  double revolution_ns, sector_ns;
  double t2t_ns, a_ns, b_ns;      /* the seek curve */
  double overhead_ns;             /* added to every command served */
  uint64_t head;                  /* the sector after the last IO */
};

/* D from SPEC; -1 with a one-line reason naming the key in WHY when the
 * spec makes no disk (cylinders beyond the capacity; a seek-avg that
 * makes no seek curve growing with the distance). */
int disk_init (struct disk *d, const struct disk_spec *spec, char *why,
               size_t why_size);
/* The seek over CYLINDERS (0: none). */
double disk_seek_ns (const struct disk *d, uint64_t cylinders);
uint64_t disk_cylinder (const struct disk *d, uint64_t sector);
/* Seek plus rotational wait from the head's place at model time T to
 * SECTOR (< capacity); 0 when SECTOR is where the head is. */
double disk_positioning_ns (const struct disk *d, uint64_t sector,
                            uint64_t t);
/* Serves NSECT sectors from SECTOR (wrapped at the capacity) starting at
 * model time START: returns the time it completes and moves the head. */
uint64_t disk_serve (struct disk *d, uint64_t sector, uint32_t nsect,
                     uint64_t start);

#endif /* DMCRYPT_SIM_DISK_H */
