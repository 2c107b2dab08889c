/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A simulated device under the engine: the real data goes to the lower
 * backend (the image), but every IO first passes a block-queue model
 * (blkq.h: depth, merging, an elevator) and a device model (model.h:
 * an HDD, a USB stick, an SSD), and completes when that device would
 * have completed it, on the model's clock (wall time × speed).  Writes
 * may be submitted asynchronously, so many are in flight below the
 * engine, as in the kernel's block layer.  The trace, if any, gets
 * blktrace's events: I (inserted), M (merged), D (the device starts
 * it), C (completed), all stamped with the model's clock. */
#ifndef DMCRYPT_SIM_H
#define DMCRYPT_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "../backend.h"

struct sim_config
{
  const char *device;           /* a device model name: "hdd", "usb", "ssd" */
  const char *device_params;    /* "k=v,k=v" or "+FILE"; NULL: defaults */
  double speed;                 /* model time per wall time; 0: 1 */
  unsigned nr_requests;         /* 0: Linux's default for the elevator */
  const char *elevator;         /* "none", "deadline" or "cfq"; NULL: the
                                   block layer's default */
  const char *elevator_params;  /* "key=value,...": the elevator's
                                   tunables by their sysfs names; NULL:
                                   none */
  /* The kernel series whose block layer is modelled: NULL (today's
   * blk-mq, as before kernel= existed), "2.6.32", "3.16", "4.0" (the
   * single request queue: request lists, plugging, CFQ) or "6.1"
   * (blk-mq with mq-deadline). */
  const char *kernel;
  unsigned hz;                  /* the kernel's timer ticks a second
                                   (jiffies); 0: the series' default */
};

/* Checks CFG (names, parameters) without building anything.  Returns 0,
 * or -1 after one nbdkit_error naming the parameter. */
int sim_check_config (const struct sim_config *cfg);

/* Wraps LOWER (owned from now on, closed with the simulation).
 * Returns the new backend, or NULL after nbdkit_error (LOWER is then
 * left to the caller). */
struct backend *backend_sim_wrap (struct backend *lower,
                                  const struct sim_config *cfg);

/* Starts the simulation's threads and its clock: after nbdkit forks
 * (threads do not survive a fork).  No IO may be submitted before.
 * Returns 0, or -1 after nbdkit_error.  Starting twice does nothing. */
int backend_sim_start (struct backend *b);

/* The model's clock, ns since the start, for trace_set_clock: ARG is
 * the backend made by backend_sim_wrap. */
uint64_t backend_sim_clock (void *arg);

/* What the simulated device did so far. */
struct sim_stats
{
  uint64_t ios;                 /* requests the device completed */
  uint64_t merges;              /* bios merged into queued requests */
  uint64_t model_ns;            /* model time since the start */
  uint64_t busy_ns;             /* model time with an IO on the device */
  uint64_t late_ns;             /* completions later than the model said,
                                   summed: the host was the limit */
  unsigned queue_max;           /* requests waiting in the queue, most */
  uint64_t sleeps;              /* submitters that slept for a request */
  uint64_t timer_unplugs;       /* plugs ended by the unplug timer */
};

/* B must be a backend made by backend_sim_wrap; false otherwise. */
bool backend_sim_stats (struct backend *b, struct sim_stats *st);

#endif /* DMCRYPT_SIM_H */
