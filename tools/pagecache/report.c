/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dd's summary line (report.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "report.h"

void
wb_human_si (double v, char *buf, size_t size)
{
  static const char *const prefixes[] = { "", "k", "M", "G", "T", "P" };
  unsigned p = 0;

  /* Scale by 1000 while the rounded figure would reach 1000. */
  while (p + 1 < sizeof prefixes / sizeof prefixes[0]
         && (v >= 10 ? round (v) : round (v * 10) / 10) >= 1000) {
    v /= 1000;
    p++;
  }
  if (v < 10 && round (v * 10) / 10 < 10)
    snprintf (buf, size, "%.1f %sB", round (v * 10) / 10, prefixes[p]);
  else
    snprintf (buf, size, "%.0f %sB", round (v), prefixes[p]);
}

void
wb_dd_line (uint64_t bytes, double seconds, char *buf, size_t size)
{
  char total[32], rate[32];

  wb_human_si ((double) bytes, total, sizeof total);
  if (seconds > 0)
    wb_human_si (bytes / seconds, rate, sizeof rate);
  else
    snprintf (rate, sizeof rate, "Infinity B");
  snprintf (buf, size, "%" PRIu64 " bytes (%s) copied, %g s, %s/s",
            bytes, total, seconds, rate);
}
