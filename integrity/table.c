/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm_integrity_status (Linux 6.1): the table line after the device's
 * name, and the status line.  The internal hash's key is shown as
 * dmsetup table shows it without --showkeys: as many '0' digits. */
#include <stdio.h>

#include "internal.h"

#define BITMAP_FLUSH_INTERVAL_MS 10000   /* BITMAP_FLUSH_INTERVAL, 10 s */

static unsigned
arg_count (const struct integrity_dev *d)
{
  return 3 + (d->g.sectors_per_block != 1) + 2 * (d->mode == 'J')
    + 2 * (d->mode == 'B') + (d->hash != NULL)
    + ((d->sb.flags & INTEGRITY_SB_FIXED_PADDING) != 0)
    + ((d->sb.flags & INTEGRITY_SB_FIXED_HMAC) != 0);
}

/* The watermark as the kernel prints it, from its threshold. */
static unsigned
watermark_percent (const struct integrity_dev *d)
{
  uint64_t entries = d->g.journal_entries;
  uint64_t w = (entries - d->free_entries_threshold) * 100 + entries / 2;

  return entries ? w / entries : 0;
}

#define EMIT(...)                                                       \
  do {                                                                  \
    int n_ = snprintf (buf + used, used < len ? len - used : 0,         \
                       __VA_ARGS__);                                    \
    used += n_ > 0 ? (size_t) n_ : 0;                                   \
  } while (0)

void
integrity_table (const struct integrity_dev *d, char *buf, size_t len)
{
  size_t used = 0, i;

  if (len == 0)
    return;
  buf[0] = '\0';
  EMIT ("%llu %u %c %u", (unsigned long long) d->g.start_sectors,
        d->g.tag_size, d->mode, arg_count (d));
  if (d->g.sectors_per_block != 1)
    EMIT (" block_size:%u", d->block_bytes);
  EMIT (" journal_sectors:%llu",
        (unsigned long long) integrity_geom_journal_sectors (&d->g));
  EMIT (" interleave_sectors:%u", 1u << d->g.log2_interleave_sectors);
  EMIT (" buffer_sectors:%u", 1u << d->log2_buffer_sectors);
  if (d->mode == 'J') {
    EMIT (" journal_watermark:%u", watermark_percent (d));
    EMIT (" commit_time:%u", d->commit_time_ms);
  }
  if (d->mode == 'B') {
    EMIT (" sectors_per_bit:%llu",
          (unsigned long long) 1 << d->bm.log2_sectors_per_bit);
    EMIT (" bitmap_flush_interval:%u", BITMAP_FLUSH_INTERVAL_MS);
  }
  if (d->sb.flags & INTEGRITY_SB_FIXED_PADDING)
    EMIT (" fix_padding");
  if (d->sb.flags & INTEGRITY_SB_FIXED_HMAC)
    EMIT (" fix_hmac");
  if (d->hash)
    EMIT (" internal_hash:%s", integrity_hash_name (d->hash));
  for (i = 0; d->hash && i < integrity_hash_key_bytes (d->hash); i++)
    EMIT ("%s00", i == 0 ? ":" : "");
}

void
integrity_status (const struct integrity_dev *d, char *buf, size_t len)
{
  size_t used = 0;

  if (len == 0)
    return;
  EMIT ("%llu %llu -",
        (unsigned long long) integrity_mismatches (d),
        (unsigned long long) d->g.provided_data_sectors);
}
