/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the reencrypt keyslot's digest covers, so that a header whose
 * re-encryption metadata was changed without the volume keys is
 * refused, as cryptsetup refuses it since 2.4.3 (CVE-2021-4122).  The
 * byte layout is cryptsetup's, read in lib/luks2/luks2_reencrypt_
 * digest.c (reencrypt_assembly_verification_data, 2.6.1): 'v' and
 * '0' + version; the old key, then the new one if it differs; then
 * fields of the reencrypt keyslot and of the backup segments, strings
 * as their bytes, numbers stored as strings as 8 big-endian bytes,
 * JSON integers as 4, "dynamic" as its 7 letters. */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "../crypto/secmem.h"
#include "reenc.h"
#include "reenc-json.h"

#define STR_MAX 64

enum field { F_STR, F_U64, F_SIZE, F_U32 };

struct writer
{
  uint8_t *buf;                /* NULL: count only */
  size_t len;
  bool bad;
};

static void
put (struct writer *w, const void *p, size_t n)
{
  if (w->buf)
    memcpy (w->buf + w->len, p, n);
  w->len += n;
}

static void
field (struct writer *w, json_object *obj, const char *key, enum field f)
{
  const char *s = reenc_json_str (obj, key);
  json_object *v;
  uint64_t u64;
  uint32_t u32;

  if (f == F_U32) {
    if (!json_object_object_get_ex (obj, key, &v)
        || !json_object_is_type (v, json_type_int)) {
      w->bad = true;
      return;
    }
    u32 = htobe32 ((uint32_t) json_object_get_int64 (v));
    put (w, &u32, sizeof u32);
  }
  else if (s == NULL || (f == F_STR && (*s == '\0' || strlen (s) > STR_MAX)))
    w->bad = true;
  else if (f == F_STR || (f == F_SIZE && strcmp (s, "dynamic") == 0))
    put (w, s, strlen (s));
  else if (reenc_json_u64 (obj, key, &u64) == -1)
    w->bad = true;
  else {
    u64 = htobe64 (u64);
    put (w, &u64, sizeof u64);
  }
}

static void
segment (struct writer *w, json_object *seg, bool required)
{
  const char *type = seg ? reenc_json_str (seg, "type") : NULL;
  bool crypt = type && strcmp (type, "crypt") == 0;

  if (seg == NULL) {
    w->bad |= required;
    return;
  }
  if (!crypt && (type == NULL || strcmp (type, "linear") != 0)) {
    w->bad = true;
    return;
  }
  field (w, seg, "type", F_STR);
  field (w, seg, "offset", F_U64);
  field (w, seg, "size", F_SIZE);
  if (crypt) {
    field (w, seg, "iv_tweak", F_U64);
    field (w, seg, "encryption", F_STR);
    field (w, seg, "sector_size", F_U32);
  }
}

static void
keyslot (struct writer *w, json_object *ks)
{
  json_object *area = NULL;
  const char *type;
  bool shift, checksum;

  if (!json_object_object_get_ex (ks, "area", &area)
      || (type = reenc_json_str (area, "type")) == NULL) {
    w->bad = true;
    return;
  }
  shift = strncmp (type, "datashift", 9) == 0;
  checksum = strcmp (type, "checksum") == 0
    || strcmp (type, "datashift-checksum") == 0;
  field (w, ks, "mode", F_STR);
  field (w, ks, "direction", F_STR);
  field (w, area, "type", F_STR);
  field (w, area, "offset", F_U64);
  field (w, area, "size", F_U64);
  if (checksum) {
    field (w, area, "hash", F_STR);
    field (w, area, "sector_size", F_U32);
  }
  if (shift)
    field (w, area, "shift_size", F_U64);
}

static void
assemble (struct writer *w, json_object *root, int version,
          const uint8_t *old_key, size_t old_bytes, const uint8_t *new_key,
          size_t new_bytes)
{
  json_object *ks = NULL, *segments = NULL;
  uint8_t head[2] = { 0x76, (uint8_t) (0x30 + version) };

  put (w, head, sizeof head);
  if (old_key)
    put (w, old_key, old_bytes);
  if (new_key)
    put (w, new_key, new_bytes);
  if (reenc_json_reencrypt_keyslot (root, &ks) < 0
      || !json_object_object_get_ex (root, "segments", &segments)) {
    w->bad = true;
    return;
  }
  keyslot (w, ks);
  segment (w, reenc_json_segment_by_flag (segments, "backup-previous"),
           true);
  segment (w, reenc_json_segment_by_flag (segments, "backup-final"), true);
  segment (w, reenc_json_segment_by_flag (segments,
                                          "backup-moved-segment"), false);
}

int
reenc_verification_data (const char *json, int version,
                         const uint8_t *old_key,
                         size_t old_bytes, const uint8_t *new_key,
                         size_t new_bytes, uint8_t **data,
                         size_t *data_bytes, char *why, size_t why_size)
{
  struct writer w = { NULL, 0, false };
  json_object *root;

  *data = NULL;
  *data_bytes = 0;
  root = json ? json_tokener_parse (json) : NULL;
  if (root == NULL || version < 1 || version > 9)
    w.bad = true;
  else
    assemble (&w, root, version, old_key, old_bytes, new_key, new_bytes);
  if (!w.bad && (w.buf = secmem_alloc (w.len)) != NULL) {
    *data_bytes = w.len;
    w.len = 0;
    assemble (&w, root, version, old_key, old_bytes, new_key, new_bytes);
  }
  json_object_put (root);
  if (w.bad || w.buf == NULL) {
    secmem_free (w.buf, *data_bytes);
    snprintf (why, why_size, "LUKS2 re-encryption metadata is not as "
              "expected: cannot check its digest");
    return -1;
  }
  *data = w.buf;
  return 0;
}
