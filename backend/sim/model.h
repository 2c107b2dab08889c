/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Device models for the simulated device (device=hdd|usb|ssd|...): what
 * one IO costs on a disk, a USB stick, an SSD or a RAID card, in
 * nanoseconds of MODEL time.  A model is a pure function of the IOs it is
 * given and the times they start: it never reads a clock, never sleeps
 * and has no threads, so the same sequence of calls gives the same
 * answers.  The simulated device backend (sim.c, simtags.c) owns the
 * clock and calls the model under its lock, one call at a time.
 *
 * Two kinds of model.  One that serves its IOs in the order they start
 * (usb, ssd) sets START, which returns the completion at once.  One that
 * reorders what it holds (a disk with NCQ or TCQ, a RAID card with a
 * queue per disk) sets QUEUE and PICK instead: a command queued at the
 * device may be overtaken by one queued later, so its completion is
 * known only once the device has chosen to serve it.
 *
 * Adding a model: one file with a `struct device_model`, and one line in
 * models.c. */
#ifndef DMCRYPT_SIM_MODEL_H
#define DMCRYPT_SIM_MODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "devop.h"

struct dev_io
{
  enum dev_op op;
  uint64_t sector;       /* 512-byte sectors on the device */
  uint32_t nsect;        /* 0 for a flush */
};

/* What a reordering device (QUEUE and PICK) reports: a command it
 * started serving, its TAG and the model time it completes; or, with TAG
 * DEV_NO_TAG, a wake-up: a model time at which the device will have
 * something to decide that no completion of the caller's falls on (an
 * actuator that finishes work of its own, a command still on its way
 * through a controller). */
struct dev_event
{
  unsigned tag;
  uint64_t at;           /* model ns */
};
#define DEV_NO_TAG UINT_MAX

struct model_param       /* one tunable, for parsing, docs and --help */
{
  const char *key;       /* "seek-avg" */
  const char *unit;      /* "ms", "us", "MB/s", "rpm", "KiB", "MiB", "GB",
                            "" (a count: a whole number), "bool" (0 or 1),
                            "choice" (one of CHOICES) */
  double value;          /* the default, in that unit (a choice: its
                            index in CHOICES) */
  const char *doc;       /* one line: what it is, where the default
                            comes from */
  double min, max;       /* accepted values, inclusive, in that unit */
  const char *choices;   /* "choice": the names, '|'-separated */
};

struct device_model
{
  const char *name;                    /* "hdd", "usb", "ssd", ... */
  const char *summary;                 /* one line */
  unsigned queue_depth;                /* device tags: hdd 32 (NCQ), usb 1,
                                          ssd 32, RAID card 246 */
  /* The largest request the device takes, 512-byte sectors (the
   * queue's max_sectors: bios beyond it are split, merges stop at it);
   * 0: Linux's default max_sectors_kb, 1280 KiB. */
  uint32_t max_sectors;
  /* How the kernel sees the device: an NVMe drive has hardware queues
   * of its own (6.1 gives it no elevator), and a device without seeks
   * says so (QUEUE_FLAG_NONROT: 2.6.32 then plugs no tagged queue).
   * A RAID card's logical disk says neither, whatever its members. */
  bool nvme;
  bool nonrot;
  const struct model_param *params;    /* defaults, NULL-key terminated */
  /* PARAMS: the defaults overridden by the user's values (same order,
   * same units).  Returns state, or NULL with a one-line reason in WHY. */
  void *(*create) (const double *params, char *why, size_t why_size);
  void (*destroy) (void *state);
  /* A model that serves IOs in the order they start (NULL if it
   * reorders).  The device starts IO at model time NOW (the caller gives
   * it a free tag and calls this in dispatch order, one call at a time).
   * Returns the model time it completes (>= NOW).  The model keeps its
   * own state: head position, rotation phase, open allocation units,
   * channel busy-until times, write cache.  Serialise where the device
   * serialises (one actuator; one command at a time on usb-storage;
   * per-channel on an SSD).  O(1) per call, no allocation; any sector
   * is accepted (each model says what it does past its capacity). */
  uint64_t (*start) (void *state, const struct dev_io *io, uint64_t now);
  /* A model that reorders (START is NULL).  QUEUE: the device takes IO
   * into tag TAG (< queue_depth, the caller's numbering) at model time
   * NOW; it holds it until PICK reports it.  PICK: the device's next
   * decision made by model time NOW, into *EV: a command it started
   * (its completion time) or a wake-up; false when it has nothing more
   * to report by NOW.  The caller calls PICK until false after every
   * QUEUE and again at (or after) every time *EV gave it, and completes
   * each command at its time.  A decision at time T is made only
   * among the commands queued at or before T, and is final: the caller
   * must not queue with a NOW earlier than one it has already given to
   * PICK if it wants the model to see that command in time.  A device
   * that holds commands always has a reported time still to come or a
   * decision to make by NOW, so that nothing waits for ever.  Cost
   * O(commands held) per call; tables grow only past their sizes at
   * create, and QUEUE returns -1 (the command not taken) when they
   * cannot. */
  int (*queue) (void *state, const struct dev_io *io, uint64_t now,
                unsigned tag);
  bool (*pick) (void *state, uint64_t now, struct dev_event *ev);
};

extern const struct device_model device_model_hdd, device_model_usb,
  device_model_ssd, device_model_x25e_raid10, device_model_sas15k_raid10;

/* backend/sim/models.c */
const struct device_model *device_model_find (const char *name); /* NULL:
                                                                    unknown */
const char *device_model_names (void);    /* "hdd usb ssd ..." */
/* MODEL's max_sectors, or the default's 2560 (1280 KiB) when it has
 * none. */
uint32_t device_model_max_sectors (const struct device_model *model);
size_t model_param_count (const struct device_model *model);

/* backend/sim/params.c: "k=v,k=v" or "+FILE" (k=v per line, # comments)
 * over MODEL's defaults into VALUES (model->params order, room for
 * model_param_count values).  Values take units: "8.5ms", "150MB/s",
 * "4MiB", "7200" (rpm), "0.8" (in the param's own unit when none given);
 * a choice takes one of its names ("nearest"), stored as its index.
 * Unknown key, bad number or unit, a value out of the param's range, a
 * key given twice: -1 with a one-line reason naming the key in WHY.
 * TEXT NULL or "" gives the defaults. */
int model_params_parse (const struct device_model *model, const char *text,
                        double *values, char *why, size_t why_size);

/* The parameter table of MODEL, one line a key: key, default with unit,
 * doc.  For --help and the documentation. */
void model_params_describe (const struct device_model *model, FILE *fp);

#endif /* DMCRYPT_SIM_MODEL_H */
