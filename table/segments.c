/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Segment lists (segments.h): checked once when a mapping is made, then
 * walked by every request that crosses one. */
#include <inttypes.h>
#include <stdio.h>

#include "segments.h"

#define SECTOR_BYTES 512

static int
check_crypt_segment (const struct segment *s, unsigned i,
                     const struct crypt_table *t, uint64_t device_bytes,
                     char *why, size_t why_size)
{
  uint64_t block = t->sector_size / SECTOR_BYTES;

  if (s->offset < t->offset || s->iv_offset < t->iv_offset
      || s->offset - t->offset != s->iv_offset - t->iv_offset) {
    snprintf (why, why_size, "segment %u: device offset %" PRIu64
              " and IV offset %" PRIu64 " are not the table's range "
              "moved", i, s->offset, s->iv_offset);
    return -1;
  }
  if (s->offset % block || s->offset > device_bytes / SECTOR_BYTES
      || s->length > device_bytes / SECTOR_BYTES - s->offset) {
    snprintf (why, why_size, "segment %u: device offset %" PRIu64
              " is misaligned or beyond the device", i, s->offset);
    return -1;
  }
  return 0;
}

int
segment_list_check (const struct segment_list *l,
                    const struct crypt_table *t, uint64_t device_bytes,
                    char *why, size_t why_size)
{
  uint64_t next = 0, block = t->sector_size / SECTOR_BYTES;
  unsigned i;

  if (l->count == 0 || l->count > SEGMENT_MAX || block == 0) {
    snprintf (why, why_size, "%u segments", l->count);
    return -1;
  }
  for (i = 0; i < l->count; i++) {
    const struct segment *s = &l->seg[i];

    if (s->start != next || s->length == 0 || s->length % block
        || s->start % block) {
      snprintf (why, why_size, "segment %u (%" PRIu64 " +%" PRIu64
                ") is empty, misaligned or not where the previous one "
                "ends", i, s->start, s->length);
      return -1;
    }
    if (s->type == SEGMENT_CRYPT
        && check_crypt_segment (s, i, t, device_bytes, why, why_size) == -1)
      return -1;
    next += s->length;
  }
  if (next != t->length) {
    snprintf (why, why_size, "the segments cover %" PRIu64 " sectors, "
              "the mapping %" PRIu64, next, t->length);
    return -1;
  }
  return 0;
}

void
segment_list_piece (const struct segment_list *l,
                    const struct crypt_table *t, uint64_t offset,
                    uint64_t count, struct segment_piece *piece)
{
  const struct segment *s = &l->seg[0];
  uint64_t end, inside;
  unsigned i;

  /* A handful of segments: a binary search would not pay. */
  for (i = 0; i < l->count; i++) {
    s = &l->seg[i];
    if (offset < (s->start + s->length) * SECTOR_BYTES)
      break;
  }
  end = (s->start + s->length) * SECTOR_BYTES;
  inside = offset - s->start * SECTOR_BYTES;
  piece->type = s->type;
  piece->count = end - offset < count ? end - offset : count;
  piece->table_offset = s->type == SEGMENT_CRYPT
    ? (s->offset - t->offset) * SECTOR_BYTES + inside : 0;
}
