/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The mapping cryptsetup 2.6 activates for a BitLocker volume (bitlk.h,
 * bitlk_segments): four zero segments where the metadata lives, the
 * volume header's sectors served at sector 0, the rest as itself. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bitlk.h"

#define SECTOR_BYTES 512
#define ZERO_RANGES  4
#define MAX_SEGMENTS 10            /* cryptsetup's MAX_BITLK_SEGMENTS */

struct range { uint64_t start, length; };    /* 512-byte sectors */

/* The zero ranges, sorted by start, checked to lie apart from each
 * other, from the moved header at 0 and inside the device. */
static int
zero_ranges (const struct bitlk_metadata *m, uint64_t device_sectors,
             uint64_t header_sectors, struct range z[ZERO_RANGES],
             char *why, size_t why_size)
{
  struct range t;
  unsigned i, j;

  for (i = 0; i < 3; i++)
    z[i] = (struct range) { m->metadata_offset[i] / SECTOR_BYTES,
                            BITLK_METADATA_BYTES / SECTOR_BYTES };
  z[3] = (struct range) { m->volume_header_offset / SECTOR_BYTES,
                          header_sectors };
  for (i = 1; i < ZERO_RANGES; i++)
    for (j = i; j > 0 && z[j].start < z[j - 1].start; j--) {
      t = z[j]; z[j] = z[j - 1]; z[j - 1] = t;
    }
  for (i = 0; i < ZERO_RANGES; i++)
    if (z[i].start < (i ? z[i - 1].start + z[i - 1].length : header_sectors)
        || z[i].start > device_sectors
        || z[i].length > device_sectors - z[i].start) {
      snprintf (why, why_size, "metadata area at sector %" PRIu64
                " overlaps another or leaves the device", z[i].start);
      return -1;
    }
  return 0;
}

static int
add (struct segment_list *l, enum segment_type type, uint64_t start,
     uint64_t length, uint64_t offset)
{
  if (l->count == MAX_SEGMENTS)
    return -1;
  l->seg[l->count++] = (struct segment) { type, start, length, offset,
                                          offset, 0 };
  return 0;
}

int
bitlk_segments (const struct bitlk_metadata *m, uint64_t device_bytes,
                struct segment_list *l, char *why, size_t why_size)
{
  uint64_t device_sectors = device_bytes / SECTOR_BYTES;
  uint64_t header_sectors = m->volume_header_size / SECTOR_BYTES, pos;
  struct range z[ZERO_RANGES];
  unsigned i;
  int r = 0;

  memset (l, 0, sizeof *l);
  if (m->metadata_offset[0] % SECTOR_BYTES
      || m->metadata_offset[1] % SECTOR_BYTES
      || m->metadata_offset[2] % SECTOR_BYTES
      || m->volume_header_offset % SECTOR_BYTES || header_sectors == 0
      || m->volume_header_size % SECTOR_BYTES) {
    snprintf (why, why_size, "metadata offsets are not whole sectors");
    return -1;
  }
  if (zero_ranges (m, device_sectors, header_sectors, z, why,
                   why_size) == -1)
    return -1;
  r |= add (l, SEGMENT_CRYPT, 0, header_sectors,
            m->volume_header_offset / SECTOR_BYTES);
  pos = header_sectors;
  for (i = 0; i < ZERO_RANGES; i++) {
    if (z[i].start > pos)
      r |= add (l, SEGMENT_CRYPT, pos, z[i].start - pos, pos);
    r |= add (l, SEGMENT_ZERO, z[i].start, z[i].length, 0);
    pos = z[i].start + z[i].length;
  }
  if (pos < device_sectors)
    r |= add (l, SEGMENT_CRYPT, pos, device_sectors - pos, pos);
  if (r) {
    snprintf (why, why_size, "more than %d segments", MAX_SEGMENTS);
    return -1;
  }
  return 0;
}
