/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The simulated block layer's configuration (simint.h): from kernel=,
 * hz=, elevator=, elevator-params= and nr-requests= to a struct
 * blkq_config, with each series' defaults and their sources. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../kseries.h"
#include "simint.h"

#define MS 1000000ULL           /* model ns */

/* The block layer of each series, as the distributions that ran it
 * configured it.  2.6.32: Ubuntu 10.04's -server flavour (amd64),
 * CONFIG_HZ=100 and CONFIG_DEFAULT_IOSCHED="deadline"
 * (debian.master/config/amd64/config.flavour.server of Ubuntu's lucid
 * kernel tree).  3.16 and 4.0: Debian 8's kernels, CONFIG_HZ_250 and
 * CFQ by default (the kernel's own default, CONFIG_DEFAULT_CFQ).  6.1:
 * Debian 12, CONFIG_HZ=250 (linux-headers-6.1.0-47-amd64's .config),
 * mq-deadline for a single-queue device and none for NVMe
 * (elevator_get_default, block/elevator.c).  No kernel=: blk-mq without
 * an elevator, the lab's model before kernel= existed. */
struct series
{
  enum blkq_layer layer;
  enum blkq_cfq_version cfq;
  unsigned hz;
  const char *elevator;         /* NULL: 6.1's choice by device */
};

static const struct series series[] = {
  [KSERIES_NONE] = { BLKQ_MQ, BLKQ_CFQ_3_16, 250, "none" },
  [KSERIES_2_6_32] = { BLKQ_LEGACY_PLUG, BLKQ_CFQ_2_6_32, 100, "deadline" },
  [KSERIES_3_16] = { BLKQ_LEGACY, BLKQ_CFQ_3_16, 250, "cfq" },
  [KSERIES_4_0] = { BLKQ_LEGACY, BLKQ_CFQ_3_16, 250, "cfq" },
  [KSERIES_6_1] = { BLKQ_MQ, BLKQ_CFQ_3_16, 250, NULL },
};

static const struct series *
series_of (const struct sim_config *cfg)
{
  int k = kernel_series_parse (cfg->kernel);

  return k < 0 ? NULL : &series[k];
}

static int
parse_elevator (const char *name, enum blkq_elevator *e)
{
  if (strcmp (name, "none") == 0 || strcmp (name, "noop") == 0)
    *e = BLKQ_NONE;
  else if (strcmp (name, "deadline") == 0
           || strcmp (name, "mq-deadline") == 0)
    *e = BLKQ_DEADLINE;
  else if (strcmp (name, "cfq") == 0)
    *e = BLKQ_CFQ;
  else {
    nbdkit_error ("elevator: unknown elevator '%s' (expected none, "
                  "deadline or cfq)", name);
    return -1;
  }
  return 0;
}

/* ---- elevator-params= ---- */

enum unit { COUNT, MSECS, BOOL };

struct tunable
{
  const char *key;
  enum blkq_elevator elevator;
  enum unit unit;
  unsigned min;
};

static const struct tunable tunables[] = {
  { "fifo_batch", BLKQ_DEADLINE, COUNT, 1 },
  { "read_expire", BLKQ_DEADLINE, MSECS, 1 },
  { "write_expire", BLKQ_DEADLINE, MSECS, 1 },
  { "writes_starved", BLKQ_DEADLINE, COUNT, 1 },
  { "quantum", BLKQ_CFQ, COUNT, 1 },
  { "slice_idle", BLKQ_CFQ, MSECS, 0 },
  { "group_idle", BLKQ_CFQ, MSECS, 0 },
  { "slice_sync", BLKQ_CFQ, MSECS, 1 },
  { "slice_async", BLKQ_CFQ, MSECS, 1 },
  { "slice_async_rq", BLKQ_CFQ, COUNT, 1 },
  { "fifo_expire_sync", BLKQ_CFQ, MSECS, 1 },
  { "fifo_expire_async", BLKQ_CFQ, MSECS, 1 },
  { "target_latency", BLKQ_CFQ, MSECS, 1 },
  { "back_seek_max", BLKQ_CFQ, COUNT, 0 },
  { "back_seek_penalty", BLKQ_CFQ, COUNT, 1 },
  { "low_latency", BLKQ_CFQ, BOOL, 0 },
  { "close_cooperators", BLKQ_CFQ, BOOL, 0 },   /* the lab's own */
  { NULL, 0, 0, 0 },
};

static void
set_tunable (struct blkq_config *qc, const char *key, unsigned long v)
{
  struct blkq_cfq_tunables *c = &qc->cfq;
  uint64_t ns = v ? v * MS : UINT64_MAX;        /* an explicit 0 */

  if (strcmp (key, "fifo_batch") == 0) qc->fifo_batch = v;
  else if (strcmp (key, "read_expire") == 0) qc->read_expire = v * MS;
  else if (strcmp (key, "write_expire") == 0) qc->write_expire = v * MS;
  else if (strcmp (key, "writes_starved") == 0) qc->writes_starved = v;
  else if (strcmp (key, "quantum") == 0) c->quantum = v;
  else if (strcmp (key, "slice_idle") == 0) c->slice_idle = ns;
  else if (strcmp (key, "group_idle") == 0) c->group_idle = ns;
  else if (strcmp (key, "slice_sync") == 0) c->slice_sync = ns;
  else if (strcmp (key, "slice_async") == 0) c->slice_async = ns;
  else if (strcmp (key, "slice_async_rq") == 0) c->slice_async_rq = v;
  else if (strcmp (key, "fifo_expire_sync") == 0) c->fifo_expire_sync = ns;
  else if (strcmp (key, "fifo_expire_async") == 0)
    c->fifo_expire_async = ns;
  else if (strcmp (key, "target_latency") == 0) c->target_latency = ns;
  else if (strcmp (key, "back_seek_max") == 0)
    c->back_seek_max = v ? v : UINT32_MAX;
  else if (strcmp (key, "back_seek_penalty") == 0)
    c->back_seek_penalty = v;
  else if (strcmp (key, "low_latency") == 0) c->low_latency = v;
  else if (strcmp (key, "close_cooperators") == 0) c->no_cooperators = !v;
}

static const char *
keys_of (enum blkq_elevator e)
{
  return e == BLKQ_DEADLINE
    ? "fifo_batch, read_expire, write_expire, writes_starved"
    : "quantum, slice_idle, group_idle, slice_sync, slice_async, "
      "slice_async_rq, fifo_expire_sync, fifo_expire_async, "
      "target_latency, back_seek_max, back_seek_penalty, low_latency, "
      "close_cooperators";
}

/* One "key=value" of elevator-params (KEY_LEN bytes at ITEM). */
static int
parse_tunable (const char *item, size_t len, enum blkq_elevator e,
               struct blkq_config *qc)
{
  const struct tunable *t;
  const char *eq = memchr (item, '=', len);
  size_t klen = eq ? (size_t) (eq - item) : len;
  unsigned long v;
  char *end, value[32];

  for (t = tunables; t->key; t++)
    if (strlen (t->key) == klen && strncmp (t->key, item, klen) == 0)
      break;
  if (t->key == NULL || t->elevator != e || e == BLKQ_NONE) {
    nbdkit_error ("elevator-params: '%.*s' is not a tunable of this "
                  "elevator (%s)", (int) klen, item,
                  e == BLKQ_NONE ? "none has none" : keys_of (e));
    return -1;
  }
  len -= klen + 1;
  if (eq == NULL || len == 0 || len >= sizeof value) {
    nbdkit_error ("elevator-params: %s needs a value", t->key);
    return -1;
  }
  memcpy (value, eq + 1, len);
  value[len] = '\0';
  errno = 0;
  v = strtoul (value, &end, 10);
  if (errno || *end || value[0] == '-' || v < t->min || v > 1000000
      || (t->unit == BOOL && v > 1)) {
    nbdkit_error ("elevator-params: %s: '%s' is not %s", t->key, value,
                  t->unit == BOOL ? "0 or 1"
                  : t->unit == MSECS ? "a whole number of ms in range"
                  : "a whole number in range");
    return -1;
  }
  set_tunable (qc, t->key, v);
  return 0;
}

static int
parse_tunables (const char *text, enum blkq_elevator e,
                struct blkq_config *qc)
{
  const char *p = text;
  size_t len;

  while (p && *p) {
    len = strcspn (p, ",");
    if (len && parse_tunable (p, len, e, qc) == -1)
      return -1;
    p += len + (p[len] == ',');
  }
  return 0;
}

/* ---- the whole ---- */

int
sim_block_config (const struct sim_config *cfg, const struct device_model *m,
                  struct blkq_config *qc)
{
  const struct series *sr = series_of (cfg);
  const char *el;
  unsigned tags = m->queue_depth;

  if (sr == NULL) {
    nbdkit_error ("kernel: '%s' is not a kernel series the lab models "
                  "(expected %s)", cfg->kernel, kernel_series_names ());
    return -1;
  }
  el = cfg->elevator ? cfg->elevator
    : sr->elevator ? sr->elevator
    : m->nvme ? "none" : "deadline";
  *qc = (struct blkq_config) {
    .layer = sr->layer, .cfq_version = sr->cfq,
    .hz = cfg->hz ? cfg->hz : sr->hz, .device_depth = tags,
    .nonrot = m->nonrot, .cfq.low_latency = -1,
  };
  if (parse_elevator (el, &qc->elevator) == -1)
    return -1;
  if (qc->elevator == BLKQ_CFQ && sr->layer == BLKQ_MQ) {
    nbdkit_error ("elevator: cfq is an elevator of the single request "
                  "queue: it needs kernel=2.6.32, 3.16 or 4.0");
    return -1;
  }
  if (parse_tunables (cfg->elevator_params, qc->elevator, qc) == -1)
    return -1;
  /* blk-mq: without an elevator the queue is as deep as the device,
   * with one twice the device's depth, capped at BLKDEV_DEFAULT_RQ
   * (128) per queue (blk_mq_init_sched); request lists: BLKDEV_MAX_RQ,
   * 128. */
  qc->nr_requests = cfg->nr_requests ? cfg->nr_requests
    : sr->layer != BLKQ_MQ ? 128
    : qc->elevator == BLKQ_NONE ? tags
    : 2 * (tags < 128 ? tags : 128);
  return 0;
}
