/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A disk's command queue and its one actuator (SATA NCQ, SCSI TCQ): the
 * disk holds the commands it was given and, whenever the actuator is
 * free, serves next the one it reaches soonest from where the head is
 * (shortest positioning time: seek plus rotation), unless one has
 * waited longer than the age limit, which then goes first.  Pure, like
 * disk.h; ncq.c explains the rules.  The hdd model and the RAID card's
 * SAS disks use it; dev_events is the FIFO in which a model keeps the
 * decisions it has yet to report to its caller. */
#ifndef DMCRYPT_SIM_NCQ_H
#define DMCRYPT_SIM_NCQ_H

#include <stdbool.h>
#include <stdint.h>

#include "disk.h"
#include "model.h"

struct ncq_job
{
  enum dev_op op;                 /* DEV_READ, DEV_WRITE or DEV_FLUSH */
  uint64_t sector;                /* wrapped at the disk's capacity */
  uint32_t nsect;
  uint64_t arrived;               /* model ns: it reached the disk */
  unsigned id;                    /* the owner's, reported when served;
                                     DEV_NO_TAG: the disk's own work (a
                                     cached write), never reported */
};

struct ncq
{
  struct disk disk;
  bool reorder;                   /* false: the order the jobs arrived */
  uint64_t age_limit_ns;          /* a job this old goes next */
  struct ncq_job *job;            /* held, in the order they were added */
  unsigned njobs, size;
  uint64_t own_sectors;           /* held jobs of the disk's own work */
  uint64_t busy_until;            /* model ns: the actuator is free */
  bool busy_told;                 /* busy_until was reported */
  uint64_t woken_for;             /* the last wake-up reported, + 1 */
};

/* Q around DISK, room for SIZE jobs (it grows past them).  -1: out of
 * memory. */
int ncq_init (struct ncq *q, const struct disk *disk, bool reorder,
              uint64_t age_limit_ns, unsigned size);
void ncq_free (struct ncq *q);
/* Holds JOB (-1: out of memory).  A flush is a barrier: no job added
 * after it is served before it, none before it after it. */
int ncq_add (struct ncq *q, const struct ncq_job *job);
/* The index of the job the actuator serves if it starts at START among
 * the jobs arrived by then; -1 if none has. */
int ncq_choose (const struct ncq *q, uint64_t start);
/* The actuator's next decision by model time NOW: a job served (its id
 * and completion time) or a wake-up (DEV_NO_TAG and the time the
 * actuator has its next decision to make, when no reported completion
 * falls on it).  False: nothing more to report by NOW. */
bool ncq_next (struct ncq *q, uint64_t now, struct dev_event *ev);

/* A growing FIFO of events decided and not yet reported. */
struct dev_events
{
  struct dev_event *ev;
  unsigned first, count, size;
};

int dev_events_push (struct dev_events *f, unsigned tag, uint64_t at);
bool dev_events_pop (struct dev_events *f, struct dev_event *ev);
void dev_events_free (struct dev_events *f);

#endif /* DMCRYPT_SIM_NCQ_H */
