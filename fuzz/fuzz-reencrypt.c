/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the LUKS2 re-encryption layout (luks/reenc-layout.c) and the
 * reencrypt digest's input (luks/reenc-digest.c): the input is the JSON
 * metadata, the data device 256 MiB.
 *
 * Rules checked beyond "no crash, no out-of-bounds access": a refusal
 * gives a reason on one line and leaves no segments; an accepted layout
 * is sorted, contiguous from 0 to its length, every segment inside the
 * device, named by a table that exists, no two over the same bytes of
 * the device, each crypt table's key checked by the old or the new
 * digest. */
#include <stdlib.h>
#include <string.h>

#include "../crypto/secmem.h"
#include "../luks/reenc.h"
#include "fuzz.h"

#define DEVICE_BYTES (256ULL * 1024 * 1024)

static void
check_layout (const struct reenc_layout *l)
{
  const struct segment_list *sl = &l->segments;
  uint64_t next = 0;
  unsigned i, j;

  if (sl->count == 0 || sl->count > SEGMENT_MAX || l->n_tables == 0
      || l->n_tables > SEGMENT_TABLES_MAX)
    fuzz_fail ("accepted %u segments over %u tables", sl->count,
               l->n_tables);
  for (i = 0; i < sl->count; i++) {
    const struct segment *s = &sl->seg[i];

    if (s->start != next || s->length == 0 || s->table >= l->n_tables
        || s->offset + s->length > DEVICE_BYTES / 512)
      fuzz_fail ("segment %u misplaced", i);
    for (j = i + 1; j < sl->count; j++)
      if (s->offset < sl->seg[j].offset + sl->seg[j].length
          && sl->seg[j].offset < s->offset + s->length)
        fuzz_fail ("segments %u and %u overlap", i, j);
    next += s->length;
  }
  if (next != l->length)
    fuzz_fail ("segments cover %llu of %llu sectors",
               (unsigned long long) next, (unsigned long long) l->length);
  for (i = 0; i < l->n_tables; i++)
    if (!l->tables[i].linear && l->tables[i].digest != l->digest_old
        && l->tables[i].digest != l->digest_new)
      fuzz_fail ("table %u's key is neither old nor new", i);
}

static void
check_digest_input (const char *json, const struct reenc_layout *l)
{
  static const uint8_t key[64];
  uint8_t *data;
  size_t bytes;
  char why[256];

  if (reenc_verification_data (json, l->version, key, 32, key, 64, &data,
                               &bytes, why, sizeof why) == 0) {
    if (bytes < 2 + 32 + 64 || data[0] != 'v')
      fuzz_fail ("digest input of %zu bytes", bytes);
    secmem_free (data, bytes);
  }
  else if (why[0] == '\0' || strchr (why, '\n'))
    fuzz_fail ("digest input refused without a one-line reason");
}

int
fuzz_reencrypt (const uint8_t *data, size_t size)
{
  struct reenc_layout l;
  char why[300], *json = malloc (size + 1);
  int r;

  if (json == NULL)
    return 0;
  memcpy (json, data, size);
  json[size] = '\0';
  r = reenc_layout_parse (json, DEVICE_BYTES, &l, why, sizeof why);
  if (r == -1 && (why[0] == '\0' || strchr (why, '\n')
                  || l.segments.count != 0))
    fuzz_fail ("refused without a one-line reason");
  if (r == 1) {
    check_layout (&l);
    check_digest_input (json, &l);
  }
  free (json);
  return 0;
}

FUZZ_ENTRY (fuzz_reencrypt)
