/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Segment lists (segments.h): checked once when a mapping is made, then
 * walked by every request that crosses one. */
#include <inttypes.h>
#include <stdio.h>

#include "segments.h"

#define SECTOR_BYTES 512

static int
check_mapped_segment (const struct segment *s, unsigned i,
                      const struct crypt_table *t, uint64_t device_bytes,
                      char *why, size_t why_size)
{
  uint64_t block = t->sector_size / SECTOR_BYTES;
  bool iv_moved = s->type == SEGMENT_LINEAR
    || (s->iv_offset >= t->iv_offset
        && s->offset - t->offset == s->iv_offset - t->iv_offset);

  if (s->offset < t->offset || !iv_moved) {
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

/* The table that serves S, or NULL (a zero segment). */
static const struct crypt_table *
table_of (const struct segment *s, const struct crypt_table *const *tables)
{
  return s->type == SEGMENT_ZERO ? NULL : tables[s->table];
}

static int
check_tables (const struct segment_list *l,
              const struct crypt_table *const *tables, unsigned n_tables,
              char *why, size_t why_size)
{
  unsigned i, used = 0;

  if (l->count == 0 || l->count > SEGMENT_MAX || n_tables == 0
      || n_tables > SEGMENT_TABLES_MAX) {
    snprintf (why, why_size, "%u segments over %u tables", l->count,
              n_tables);
    return -1;
  }
  for (i = 0; i < n_tables; i++)
    if (tables[i]->sector_size < SECTOR_BYTES) {
      snprintf (why, why_size, "table %u: sector size %u", i,
                tables[i]->sector_size);
      return -1;
    }
  for (i = 0; i < l->count; i++) {
    if (l->seg[i].type == SEGMENT_ZERO)
      continue;
    if (l->seg[i].table >= n_tables) {
      snprintf (why, why_size, "segment %u: no table %u", i,
                l->seg[i].table);
      return -1;
    }
    used |= 1u << l->seg[i].table;
  }
  if (n_tables > 1 && used != (1u << n_tables) - 1) {
    snprintf (why, why_size, "a table no segment uses");
    return -1;
  }
  return 0;
}

int
segment_list_check_tables (const struct segment_list *l,
                           const struct crypt_table *const *tables,
                           unsigned n_tables, uint64_t device_bytes,
                           char *why, size_t why_size)
{
  uint64_t next = 0, block;
  unsigned i;

  if (check_tables (l, tables, n_tables, why, why_size) == -1)
    return -1;
  for (i = 0; i < l->count; i++) {
    const struct segment *s = &l->seg[i];
    const struct crypt_table *t = table_of (s, tables);

    /* A zero segment keeps the first table's alignment (BitLocker). */
    block = (t ? t->sector_size : tables[0]->sector_size) / SECTOR_BYTES;
    if (s->start != next || s->length == 0 || s->length % block
        || s->start % block) {
      snprintf (why, why_size, "segment %u (%" PRIu64 " +%" PRIu64
                ") is empty, misaligned or not where the previous one "
                "ends", i, s->start, s->length);
      return -1;
    }
    if (t && check_mapped_segment (s, i, t, device_bytes, why,
                                   why_size) == -1)
      return -1;
    next += s->length;
  }
  if (next != tables[0]->length) {
    snprintf (why, why_size, "the segments cover %" PRIu64 " sectors, "
              "the mapping %" PRIu64, next, tables[0]->length);
    return -1;
  }
  return 0;
}

int
segment_list_check (const struct segment_list *l,
                    const struct crypt_table *t, uint64_t device_bytes,
                    char *why, size_t why_size)
{
  unsigned i;

  /* One shared table: a segment naming another is a caller's error. */
  for (i = 0; i < l->count && i < SEGMENT_MAX; i++)
    if (l->seg[i].type == SEGMENT_LINEAR || l->seg[i].table != 0) {
      snprintf (why, why_size, "segment %u: not the shared table's", i);
      return -1;
    }
  return segment_list_check_tables (l, &t, 1, device_bytes, why, why_size);
}

void
segment_list_piece_tables (const struct segment_list *l,
                           const struct crypt_table *const *tables,
                           uint64_t offset, uint64_t count,
                           struct segment_piece *piece)
{
  const struct segment *s = &l->seg[0];
  const struct crypt_table *t;
  uint64_t end, inside;
  unsigned i;

  /* A handful of segments: a binary search would not pay. */
  for (i = 0; i < l->count; i++) {
    s = &l->seg[i];
    if (offset < (s->start + s->length) * SECTOR_BYTES)
      break;
  }
  t = table_of (s, tables);
  end = (s->start + s->length) * SECTOR_BYTES;
  inside = offset - s->start * SECTOR_BYTES;
  piece->type = s->type;
  piece->table = t ? s->table : 0;
  piece->count = end - offset < count ? end - offset : count;
  piece->table_offset = t ? (s->offset - t->offset) * SECTOR_BYTES + inside
    : 0;
}

void
segment_list_piece (const struct segment_list *l,
                    const struct crypt_table *t, uint64_t offset,
                    uint64_t count, struct segment_piece *piece)
{
  segment_list_piece_tables (l, &t, offset, count, piece);
}
