/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A run's section of the report: every figure with its unit, the
 * latencies as percentiles, and last what limited the run. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "analysis.h"

static void
print_latency (const char *what, const struct vec *x)
{
  if (x->n == 0) {
    printf ("  %s: no IO matched\n", what);
    return;
  }
  printf ("  %s: %zu IO%s matched, p50 %.1f us, p90 %.1f us, p99 %.1f us, "
          "max %.1f us\n", what, x->n, x->n == 1 ? "" : "s",
          percentile (x, 50) * 1e6, percentile (x, 90) * 1e6,
          percentile (x, 99) * 1e6, x->v[x->n - 1] * 1e6);
}

/* BYTES in the largest binary unit that keeps a figure before the
 * point: "512 B", "4.0 KiB", "1.5 MiB". */
static const char *
size_text (double bytes, char *buf, size_t size)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  unsigned u = 0;

  while (bytes >= 1024 && u < sizeof unit / sizeof unit[0] - 1) {
    bytes /= 1024;
    u++;
  }
  snprintf (buf, size, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
  return buf;
}

static void
print_seeks (const char *name, const struct vec *seeks)
{
  char mean_s[32], median_s[32], max_s[32];
  double mean = 0;
  size_t i;

  for (i = 0; i < seeks->n; i++)
    mean += seeks->v[i] / seeks->n;
  printf ("  %s: %zu seek%s, distance mean %s, median %s, max %s\n", name,
          seeks->n, seeks->n == 1 ? "" : "s",
          size_text (mean * 512, mean_s, sizeof mean_s),
          size_text (percentile (seeks, 50) * 512, median_s, sizeof median_s),
          size_text (seeks->v[seeks->n - 1] * 512, max_s, sizeof max_s));
}

static void
print_stream (const char *name, const struct stream *s)
{
  double span = s->last - s->first;
  char size[32];

  if (s->count == 0)
    return;
  printf ("  %s: %" PRIu64 " dispatch%s, %s", name, s->count,
          s->count == 1 ? "" : "es", size_text (s->bytes, size, sizeof size));
  if (s->count > 1)
    printf (", %.2f%% sequential (%" PRIu64 " of %" PRIu64 " started "
            "where the previous one ended)",
            100.0 * s->sequential / (s->count - 1), s->sequential,
            s->count - 1);
  if (span > 0)
    printf (", %.1f MB/s", s->bytes / span / 1e6);
  printf ("\n");
  if (s->seeks.n > 0)
    print_seeks (name, &s->seeks);
}

static void
print_events (const struct analysis *a)
{
  printf ("  events: %" PRIu64 " (Q %" PRIu64, a->events, a->queued_n);
  if (analysis_has_block_queue (a))
    printf (", I %" PRIu64 ", M %" PRIu64, a->inserted_n, a->merged_n);
  printf (", D %" PRIu64 ", C %" PRIu64, a->dispatched_n, a->completed_n);
  if (a->other_n)
    printf (", other %" PRIu64, a->other_n);
  printf (") over %.6f s\n", analysis_span (a));
  if (a->plug_n || a->unplug_n || a->sleep_n)
    printf ("  block layer: %" PRIu64 " plugs, %" PRIu64 " unplugs (%"
            PRIu64 " by the timer), %" PRIu64 " sleeps for a request\n",
            a->plug_n, a->unplug_n, a->timer_unplug_n, a->sleep_n);
}

static void
print_latencies (const struct analysis *a)
{
  const struct flow *f = &a->flow;

  if (!analysis_has_block_queue (a)) {
    print_latency ("queue to dispatch (Q2D)", &f->q2d);
    print_latency ("dispatch to completion (D2C)", &f->d2c);
    return;
  }
  print_latency ("queue to block queue (Q2I, Q2M)", &f->q2i);
  print_latency ("block queue to dispatch (I2D, M2D)", &f->i2d);
  print_latency ("dispatch to completion (D2C)", &f->d2c);
  print_latency ("queue to completion (Q2C)", &f->q2c);
}

static const char *
plural (uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

/* Queue depths, and how the run's span was spent at the device. */
static void
print_queues (const struct analysis *a)
{
  const struct flow *f = &a->flow;
  double busy = analysis_busy (a);

  if (analysis_has_block_queue (a)) {
    printf ("  block queue: %" PRIu64 " bio%s dispatched in %" PRIu64
            " request%s", f->bios_dispatched,
            plural (f->bios_dispatched, "", "s"), f->requests_dispatched,
            plural (f->requests_dispatched, "", "s"));
    if (f->requests_dispatched)
      printf (", %.2f bios per request",
              (double) f->bios_dispatched / f->requests_dispatched);
    printf ("\n");
    if (analysis_span_ns (a))
      printf ("  block queue depth (I/M to D): mean %.2f, max %" PRIu64
              " request%s; mean %.2f, max %" PRIu64 " bio%s\n",
              analysis_mean_depth (a, &a->queued_requests),
              a->queued_requests.max, plural (a->queued_requests.max, "",
                                              "s"),
              analysis_mean_depth (a, &a->queued_bios), a->queued_bios.max,
              plural (a->queued_bios.max, "", "s"));
  }
  if (isnan (busy))
    return;
  printf ("  device queue depth (D to C): mean %.2f, max %" PRIu64
          " request%s\n", analysis_mean_depth (a, &a->at_device),
          a->at_device.max, plural (a->at_device.max, "", "s"));
  printf ("  device busy: %.1f %% of the run's %.6f s (%.6f s with IO at "
          "the device)\n", 100 * busy, analysis_span (a),
          a->at_device.union_ns / 1e9);
  if (busy < BUSY_DEVICE_LIMITED)
    printf ("  device busy %.1f %%: the host, not the device, limited this "
            "run\n", 100 * busy);
  else
    printf ("  device busy %.1f %%: the device limited this run\n",
            100 * busy);
}

static void
print_throughput (const struct analysis *a)
{
  const char *sep = "";
  int dir;

  if (analysis_dispatches (a) == 0 || analysis_span_ns (a) == 0)
    return;
  printf ("  throughput over the run's %.6f s:", analysis_span (a));
  for (dir = 1; dir >= 0; dir--)
    if (a->dir[dir].count) {
      printf ("%s %s %.1f MB/s", sep, dir ? "writes" : "reads",
              analysis_throughput (a, dir));
      sep = ",";
    }
  printf ("\n");
}

void
analysis_print (struct analysis *a)
{
  char size[32];

  if (a->events == 0) {
    printf ("  no events: the server did no backend IO\n");
    return;
  }
  analysis_finish (a);
  print_events (a);
  print_stream ("writes", &a->dir[1]);
  print_stream ("reads", &a->dir[0]);
  if (a->flushes)
    printf ("  flushes: %" PRIu64 " dispatched\n", a->flushes);
  if (a->discards)
    printf ("  discards: %" PRIu64 " dispatched, %s\n", a->discards,
            size_text (a->discard_bytes, size, sizeof size));
  print_latencies (a);
  print_throughput (a);
  print_queues (a);
}
