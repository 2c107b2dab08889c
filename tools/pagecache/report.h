/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What tools/writeback prints of a run: dd's own summary line. */
#ifndef DMCRYPT_TOOLS_PAGECACHE_REPORT_H
#define DMCRYPT_TOOLS_PAGECACHE_REPORT_H

#include <stddef.h>
#include <stdint.h>

/* V in SI units as coreutils' human_readable shows it (autoscale,
 * round to nearest, SI, a space, "B"): one decimal below 10, else
 * none; "4.3 GB", "144 MB". */
void wb_human_si (double v, char *buf, size_t size);
/* dd's closing line (coreutils 8.23, print_stats) for BYTES written
 * in SECONDS: "4294967296 bytes (4.3 GB) copied, 29.7559 s, 144 MB/s". */
void wb_dd_line (uint64_t bytes, double seconds, char *buf, size_t size);

#endif /* DMCRYPT_TOOLS_PAGECACHE_REPORT_H */
