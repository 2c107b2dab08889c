/* Device models for the simulated device (device=hdd|usb|ssd): what one
 * IO costs on a disk, a USB stick or an SSD, in nanoseconds of MODEL
 * time.  A model is a pure function of the IOs it is given and the times
 * they start: it never reads a clock, never sleeps and has no threads, so
 * the same sequence of calls gives the same answers.  The simulated
 * device backend (sim.c) owns the clock and calls the model under its
 * lock, one call at a time.
 *
 * Adding a model: one file with a `struct device_model`, and one line in
 * models.c. */
#ifndef DMCRYPT_SIM_MODEL_H
#define DMCRYPT_SIM_MODEL_H

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

struct model_param       /* one tunable, for parsing, docs and --help */
{
  const char *key;       /* "seek-avg" */
  const char *unit;      /* "ms", "us", "MB/s", "rpm", "KiB", "MiB", "GB",
                            "" (a count: a whole number), "bool" (0 or 1) */
  double value;          /* the default, in that unit */
  const char *doc;       /* one line: what it is, where the default
                            comes from */
  double min, max;       /* accepted values, inclusive, in that unit */
};

struct device_model
{
  const char *name;                    /* "hdd", "usb", "ssd" */
  const char *summary;                 /* one line */
  unsigned queue_depth;                /* device tags: hdd 32 (NCQ), usb 1,
                                          ssd 32 */
  /* The largest request the device takes, 512-byte sectors (the
   * queue's max_sectors: bios beyond it are split, merges stop at it);
   * 0: Linux's default max_sectors_kb, 1280 KiB. */
  uint32_t max_sectors;
  const struct model_param *params;    /* defaults, NULL-key terminated */
  /* PARAMS: the defaults overridden by the user's values (same order,
   * same units).  Returns state, or NULL with a one-line reason in WHY. */
  void *(*create) (const double *params, char *why, size_t why_size);
  void (*destroy) (void *state);
  /* The device starts IO at model time NOW (the caller gives it a free
   * tag and calls this in dispatch order, one call at a time).  Returns
   * the model time it completes (>= NOW).  The model keeps its own
   * state: head position, rotation phase, open allocation units, channel
   * busy-until times, write cache.  Serialise where the device
   * serialises (one actuator; one command at a time on usb-storage;
   * per-channel on an SSD).  O(1) per call, no allocation; any sector
   * is accepted (each model says what it does past its capacity). */
  uint64_t (*start) (void *state, const struct dev_io *io, uint64_t now);
};

extern const struct device_model device_model_hdd, device_model_usb,
  device_model_ssd;

/* backend/sim/models.c */
const struct device_model *device_model_find (const char *name); /* NULL:
                                                                    unknown */
const char *device_model_names (void);              /* "hdd usb ssd" */
/* MODEL's max_sectors, or the default's 2560 (1280 KiB) when it has
 * none. */
uint32_t device_model_max_sectors (const struct device_model *model);
size_t model_param_count (const struct device_model *model);

/* backend/sim/params.c: "k=v,k=v" or "+FILE" (k=v per line, # comments)
 * over MODEL's defaults into VALUES (model->params order, room for
 * model_param_count values).  Values take units: "8.5ms", "150MB/s",
 * "4MiB", "7200" (rpm), "0.8" (in the param's own unit when none given).
 * Unknown key, bad number or unit, a value out of the param's range, a
 * key given twice: -1 with a one-line reason naming the key in WHY.
 * TEXT NULL or "" gives the defaults. */
int model_params_parse (const struct device_model *model, const char *text,
                        double *values, char *why, size_t why_size);

/* The parameter table of MODEL, one line a key: key, default with unit,
 * doc.  For --help and the documentation. */
void model_params_describe (const struct device_model *model, FILE *fp);

#endif /* DMCRYPT_SIM_MODEL_H */
