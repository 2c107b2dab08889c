/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The mapping cryptsetup 2.6.1 activates for a LUKS2 volume whose
 * re-encryption was interrupted cleanly, read from the JSON metadata
 * (reenc.h).  The rules are cryptsetup's, read in its sources:
 * LUKS2_reencrypt_status (in re-encryption when the requirement
 * online-reencrypt-vN is set; crashed when a segment is flagged
 * in-reencryption), LUKS2_assembly_multisegment_dmd (the segments not
 * flagged backup-*, by their number, each at its offset, a "dynamic"
 * size only for the last, up to the device's end), LUKS2_get_data_size
 * and LUKS2_reencrypt_check_device_size with
 * LUKS2_reencrypt_data_offset (the mapping is the device minus the
 * smallest segment offset, minus the data shift while a forward one is
 * under way). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reenc.h"
#include "reenc-json.h"

#define SECTOR_BYTES 512
#define FAIL(...) (snprintf (why, why_size, __VA_ARGS__), -1)

/* One segment in use as the JSON says it. */
struct json_seg
{
  bool linear, dynamic;
  uint64_t offset, size;       /* bytes */
  uint64_t iv_tweak;           /* 512-byte sectors */
  unsigned sector_size;        /* bytes */
  const char *cipher;
  int digest;
};

/* 0 without online re-encryption, 1 with it (L->version set). */
static int
check_requirements (json_object *root, struct reenc_layout *l, char *why,
                    size_t why_size)
{
  json_object *config, *reqs, *mandatory;
  const char *name;
  size_t i;

  if (!json_object_object_get_ex (root, "config", &config)
      || !json_object_object_get_ex (config, "requirements", &reqs)
      || !json_object_object_get_ex (reqs, "mandatory", &mandatory))
    return 0;
  if (!json_object_is_type (mandatory, json_type_array))
    return FAIL ("LUKS2 requirements are not a list");
  for (i = 0; i < json_object_array_length (mandatory); i++) {
    name = json_object_get_string (json_object_array_get_idx (mandatory,
                                                              i));
    if (name && (strcmp (name, "online-reencrypt-v2") == 0
                 || strcmp (name, "online-reencrypt-v3") == 0))
      l->version = name[18] - '0';
    else if (name && strcmp (name, "online-reencrypt") == 0)
      return FAIL ("LUKS2 re-encryption of the first format "
                   "(online-reencrypt, cryptsetup 2.2) is not supported: "
                   "finish it with cryptsetup reencrypt --resume-only");
    else
      return FAIL ("LUKS2 header has unknown requirements (%s): not "
                   "supported", name ? reenc_json_shown (name) : "?");
  }
  return l->version != 0;
}

static int
read_crypt (json_object *js, unsigned n, struct json_seg *s, char *why,
            size_t why_size)
{
  json_object *ss;
  int32_t sector;

  if (json_object_object_get_ex (js, "integrity", &ss))
    return FAIL ("LUKS2 segment %u has integrity: re-encryption with "
                 "integrity is not supported", n);
  s->cipher = reenc_json_str (js, "encryption");
  if (s->cipher == NULL || *s->cipher == '\0'
      || strlen (s->cipher) >= REENC_CIPHER_MAX
      || reenc_json_shown (s->cipher) != s->cipher
      || reenc_json_u64 (js, "iv_tweak", &s->iv_tweak) == -1)
    return FAIL ("LUKS2 segment %u has no valid cipher or IV tweak", n);
  s->sector_size = SECTOR_BYTES;
  if (json_object_object_get_ex (js, "sector_size", &ss)) {
    sector = json_object_get_int (ss);
    if (!json_object_is_type (ss, json_type_int) || sector < 512
        || sector > 4096 || (sector & (sector - 1)) != 0)
      return FAIL ("LUKS2 segment %u has an invalid sector size", n);
    s->sector_size = (unsigned) sector;
  }
  return 0;
}

static int
read_segment (json_object *root, json_object *js, unsigned n,
              struct json_seg *s, char *why, size_t why_size)
{
  const char *type = reenc_json_str (js, "type"), *size;
  char id[16];

  memset (s, 0, sizeof *s);
  if (json_object_object_get_ex (js, "flags", NULL)
      && !reenc_json_has_flag (js, "backup-"))
    return FAIL ("LUKS2 segment %u has unknown flags: not supported", n);
  if (type == NULL || (strcmp (type, "crypt") != 0
                       && strcmp (type, "linear") != 0))
    return FAIL ("LUKS2 segment %u type \"%s\" is not supported", n,
                 type ? reenc_json_shown (type) : "");
  s->linear = strcmp (type, "linear") == 0;
  size = reenc_json_str (js, "size");
  s->dynamic = size && strcmp (size, "dynamic") == 0;
  if (reenc_json_u64 (js, "offset", &s->offset) == -1
      || (!s->dynamic && reenc_json_u64 (js, "size", &s->size) == -1)
      || s->offset % SECTOR_BYTES || s->size % SECTOR_BYTES)
    return FAIL ("LUKS2 segment %u has no valid offset or size", n);
  if (s->linear) {
    s->digest = -1;
    s->sector_size = SECTOR_BYTES;
    return 0;
  }
  snprintf (id, sizeof id, "%u", n);
  s->digest = reenc_json_digest_of (root, id, false);
  if (s->digest < 0)
    return FAIL ("LUKS2 segment %u has no digest: no key can open it", n);
  return read_crypt (js, n, s, why, why_size);
}

/* The segments not flagged backup-*, numbered 0..N-1 before any
 * backup one (LUKS2_get_data_size walks them so). */
static int
read_segments (json_object *root, json_object *segments,
               struct json_seg *segs, unsigned *count, char *why,
               size_t why_size)
{
  unsigned n = 0, total = (unsigned) json_object_object_length (segments);
  json_object *js;

  json_object_object_foreach (segments, key, val) {
    (void) key;
    if (reenc_json_has_flag (val, "in-reencryption"))
      return FAIL ("LUKS2 re-encryption was interrupted by a crash: its "
                   "hot zone needs recovery, which writes; run "
                   "'cryptsetup repair' on it first (no device-mapper "
                   "needed: an image file will do)");
  }
  for (n = 0; n < total; n++) {
    js = reenc_json_segment (segments, n);
    if (js == NULL)
      return FAIL ("LUKS2 segments are not numbered 0 to %u", total - 1);
    if (reenc_json_has_flag (js, "backup-"))
      break;
    if (n == SEGMENT_MAX)
      return FAIL ("LUKS2 header has more than %d segments in use",
                   SEGMENT_MAX);
    if (read_segment (root, js, n, &segs[n], why, why_size) == -1)
      return -1;
  }
  *count = n;
  return n == 0 ? FAIL ("LUKS2 header has no segment in use") : 0;
}

/* The reencrypt keyslot's mode, direction, resilience and shift. */
static int
read_keyslot (json_object *root, struct reenc_layout *l, bool *forward,
              uint64_t *shift, char *why, size_t why_size)
{
  json_object *ks, *area;
  const char *mode, *direction, *type;

  if (reenc_json_reencrypt_keyslot (root, &ks) < 0
      || !json_object_object_get_ex (ks, "area", &area))
    return FAIL ("LUKS2 re-encryption has no reencrypt keyslot");
  mode = reenc_json_str (ks, "mode");
  direction = reenc_json_str (ks, "direction");
  type = reenc_json_str (area, "type");
  if (mode == NULL || direction == NULL || type == NULL
      || strlen (mode) >= sizeof l->mode
      || strlen (type) >= sizeof l->resilience)
    return FAIL ("LUKS2 reencrypt keyslot is not as expected");
  snprintf (l->mode, sizeof l->mode, "%s", mode);
  snprintf (l->resilience, sizeof l->resilience, "%s", type);
  *forward = strcmp (direction, "forward") == 0;
  *shift = 0;
  if (json_object_object_get_ex (area, "shift_size", NULL)
      && (reenc_json_u64 (area, "shift_size", shift) == -1
          || *shift % SECTOR_BYTES))
    return FAIL ("LUKS2 reencrypt keyslot has an invalid data shift");
  return 0;
}

/* LUKS2_reencrypt_check_device_size and LUKS2_get_data_size: the
 * mapping's length in sectors, refused when the device is too small. */
static int
mapping_length (json_object *segments, const struct json_seg *segs,
                unsigned count, uint64_t device_bytes, bool forward,
                uint64_t shift, uint64_t *length, char *why,
                size_t why_size)
{
  uint64_t min_offset = UINT64_MAX, need = 0, data_offset;
  unsigned i;

  for (i = 0; i < count; i++) {
    if (segs[i].offset < min_offset)
      min_offset = segs[i].offset;
    if (segs[i].dynamic && i + 1 != count)
      return FAIL ("LUKS2 segment %u is dynamic but not the last", i);
    if (!segs[i].dynamic && (segs[i].size > UINT64_MAX / 2
                             || need > UINT64_MAX / 2))
      return FAIL ("LUKS2 segment %u is too large", i);
    need += segs[i].size;
  }
  if (segs[count - 1].dynamic && need)
    need += segs[count - 1].sector_size;
  if (!forward && (segs[count - 1].dynamic
                   || reenc_json_segment_by_flag (segments,
                                                  "backup-moved-segment")))
    need += shift;
  data_offset = min_offset + (forward ? shift : 0);
  if (data_offset < min_offset || device_bytes < data_offset
      || device_bytes < need)
    return FAIL ("the data device (%" PRIu64 " bytes) is too small for "
                 "the re-encryption's segments (%" PRIu64 " bytes from "
                 "byte %" PRIu64 ")", device_bytes, need, data_offset);
  *length = (device_bytes - data_offset) / SECTOR_BYTES;
  return 0;
}

/* The table serving S: one per digest, one for the linear part. */
static int
table_for (struct reenc_layout *l, const struct json_seg *s, char *why,
           size_t why_size)
{
  struct reenc_table *t;
  unsigned i;

  for (i = 0; i < l->n_tables; i++)
    if (l->tables[i].linear == s->linear
        && (s->linear || l->tables[i].digest == s->digest))
      return (int) i;
  if (l->n_tables == SEGMENT_TABLES_MAX)
    return FAIL ("LUKS2 segments need more than %d keys",
                 SEGMENT_TABLES_MAX);
  t = &l->tables[l->n_tables];
  t->linear = s->linear;
  t->digest = s->digest;
  snprintf (t->cipher, sizeof t->cipher, "%s",
            s->linear ? "cipher_null-ecb" : s->cipher);
  t->sector_size = s->sector_size;
  /* The linear table is the whole device as itself: an encryption with
   * a data shift maps two linear pieces, the moved one last on the
   * device but first in the volume. */
  t->offset = s->linear ? 0 : s->offset / SECTOR_BYTES;
  t->iv_offset = s->linear ? 0 : s->iv_tweak;
  return (int) l->n_tables++;
}

/* No two segments over the same bytes of the device: each byte of the
 * volume is in one place. */
static int
check_overlaps (const struct segment_list *sl, char *why, size_t why_size)
{
  unsigned i, j;

  for (i = 0; i < sl->count; i++)
    for (j = i + 1; j < sl->count; j++)
      if (sl->seg[i].offset < sl->seg[j].offset + sl->seg[j].length
          && sl->seg[j].offset < sl->seg[i].offset + sl->seg[i].length)
        return FAIL ("LUKS2 segments %u and %u overlap on the device", i,
                     j);
  return 0;
}

/* The list and its tables, checked as the mapping will check them. */
static int
place (struct reenc_layout *l, const struct json_seg *segs, unsigned count,
       uint64_t device_bytes, char *why, size_t why_size)
{
  struct crypt_table ct[SEGMENT_TABLES_MAX];
  const struct crypt_table *tables[SEGMENT_TABLES_MAX] = { &ct[0], &ct[1] };
  struct segment *s;
  uint64_t start = 0, end;
  unsigned i;
  int t;

  for (i = 0; i < count; i++) {
    if ((t = table_for (l, &segs[i], why, why_size)) == -1)
      return -1;
    s = &l->segments.seg[i];
    s->type = segs[i].linear ? SEGMENT_LINEAR : SEGMENT_CRYPT;
    s->table = (unsigned) t;
    s->start = start;
    s->length = segs[i].dynamic ? l->length - start
      : segs[i].size / SECTOR_BYTES;
    s->offset = segs[i].offset / SECTOR_BYTES;
    s->iv_offset = segs[i].linear ? 0 : segs[i].iv_tweak;
    if (start > l->length || s->length == 0
        || s->length > l->length - start)
      return FAIL ("LUKS2 segment %u is empty or past the device", i);
    start += s->length;
    end = s->offset + s->length - l->tables[t].offset;
    if (end > l->tables[t].length)
      l->tables[t].length = end;
  }
  /* The targets make the device: with no dynamic segment, their sum
   * (dm_create_device maps the targets, whatever size was checked). */
  l->length = start;
  l->segments.count = count;
  l->tables[0].length = l->length;
  for (i = 0; i < l->n_tables; i++) {
    memset (&ct[i], 0, sizeof ct[i]);
    ct[i].sector_size = l->tables[i].sector_size;
    ct[i].offset = l->tables[i].offset;
    ct[i].iv_offset = l->tables[i].iv_offset;
    ct[i].length = l->tables[i].length;
  }
  if (segment_list_check_tables (&l->segments, tables, l->n_tables,
                                 device_bytes, why, why_size) == -1)
    return -1;
  return check_overlaps (&l->segments, why, why_size);
}

static int
backup_digest (json_object *root, json_object *segments, const char *flag)
{
  json_object *seg = reenc_json_segment_by_flag (segments, flag);
  const char *type = seg ? reenc_json_str (seg, "type") : NULL;

  json_object_object_foreach (segments, key, val)
    if (val == seg && type && strcmp (type, "crypt") == 0)
      return reenc_json_digest_of (root, key, false);
  return -1;
}

static int
parse_root (json_object *root, uint64_t device_bytes, struct reenc_layout *l,
            char *why, size_t why_size)
{
  struct json_seg segs[SEGMENT_MAX];
  json_object *segments;
  unsigned count;
  uint64_t shift;
  bool forward;
  int r;

  if ((r = check_requirements (root, l, why, why_size)) <= 0)
    return r;
  if (!json_object_object_get_ex (root, "segments", &segments)
      || !json_object_is_type (segments, json_type_object))
    return FAIL ("LUKS2 metadata has no segments");
  if (read_segments (root, segments, segs, &count, why, why_size) == -1
      || read_keyslot (root, l, &forward, &shift, why, why_size) == -1
      || mapping_length (segments, segs, count, device_bytes, forward,
                         shift, &l->length, why, why_size) == -1
      || place (l, segs, count, device_bytes, why, why_size) == -1)
    return -1;
  l->digest_old = backup_digest (root, segments, "backup-previous");
  l->digest_new = backup_digest (root, segments, "backup-final");
  /* Every key the segments need is one of the two the reencrypt
   * digest covers (LUKS2_reencrypt_digest_verify). */
  for (r = 0; r < (int) l->n_tables; r++)
    if (!l->tables[r].linear && l->tables[r].digest != l->digest_old
        && l->tables[r].digest != l->digest_new)
      return FAIL ("LUKS2 segment key (digest %d) is neither the old nor "
                   "the new volume key", l->tables[r].digest);
  return 1;
}

int
reenc_layout_parse (const char *json, uint64_t device_bytes,
                    struct reenc_layout *l, char *why, size_t why_size)
{
  json_object *root;
  int r;

  memset (l, 0, sizeof *l);
  snprintf (why, why_size, "%s", "");
  root = json ? json_tokener_parse (json) : NULL;
  if (root == NULL || !json_object_is_type (root, json_type_object)) {
    json_object_put (root);
    return FAIL ("cannot read the LUKS2 metadata as JSON");
  }
  r = parse_root (root, device_bytes, l, why, why_size);
  json_object_put (root);
  if (r != 1) {
    memset (l, 0, sizeof *l);
    l->digest_old = l->digest_new = -1;
  }
  return r;
}
