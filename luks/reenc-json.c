/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON helpers for the re-encryption metadata (reenc-json.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reenc-json.h"

const char *
reenc_json_str (json_object *obj, const char *key)
{
  json_object *v;

  if (obj == NULL || !json_object_object_get_ex (obj, key, &v)
      || !json_object_is_type (v, json_type_string))
    return NULL;
  return json_object_get_string (v);
}

int
reenc_json_u64 (json_object *obj, const char *key, uint64_t *out)
{
  const char *text = reenc_json_str (obj, key);
  char *end;

  if (text == NULL || text[0] < '0' || text[0] > '9')
    return -1;
  errno = 0;
  *out = strtoull (text, &end, 10);
  return errno == 0 && *end == '\0' ? 0 : -1;
}

bool
reenc_json_has_flag (json_object *segment, const char *prefix)
{
  json_object *flags;
  const char *flag;
  size_t i;

  if (!json_object_object_get_ex (segment, "flags", &flags)
      || !json_object_is_type (flags, json_type_array))
    return false;
  for (i = 0; i < json_object_array_length (flags); i++) {
    flag = json_object_get_string (json_object_array_get_idx (flags, i));
    if (flag && strncmp (flag, prefix, strlen (prefix)) == 0)
      return true;
  }
  return false;
}

json_object *
reenc_json_segment (json_object *segments, unsigned n)
{
  char name[16];
  json_object *seg;

  snprintf (name, sizeof name, "%u", n);
  if (!json_object_object_get_ex (segments, name, &seg)
      || !json_object_is_type (seg, json_type_object))
    return NULL;
  return seg;
}

json_object *
reenc_json_segment_by_flag (json_object *segments, const char *flag)
{
  json_object_object_foreach (segments, key, seg) {
    (void) key;
    if (json_object_is_type (seg, json_type_object)
        && reenc_json_has_flag (seg, flag))
      return seg;
  }
  return NULL;
}

static bool
lists (json_object *array, const char *id)
{
  const char *item;
  size_t i;

  if (!json_object_is_type (array, json_type_array))
    return false;
  for (i = 0; i < json_object_array_length (array); i++) {
    item = json_object_get_string (json_object_array_get_idx (array, i));
    if (item && strcmp (item, id) == 0)
      return true;
  }
  return false;
}

int
reenc_json_digest_of (json_object *root, const char *id, bool keyslots)
{
  json_object *digests, *listed;
  char *end;
  long n;

  if (!json_object_object_get_ex (root, "digests", &digests)
      || !json_object_is_type (digests, json_type_object))
    return -1;
  json_object_object_foreach (digests, key, d) {
    if (!json_object_object_get_ex (d, keyslots ? "keyslots" : "segments",
                                    &listed)
        || !lists (listed, id))
      continue;
    n = strtol (key, &end, 10);
    return *end == '\0' && n >= 0 && n < 1024 ? (int) n : -1;
  }
  return -1;
}

int
reenc_json_reencrypt_keyslot (json_object *root, json_object **ks)
{
  json_object *keyslots;
  const char *type;
  char *end;
  long n;

  if (!json_object_object_get_ex (root, "keyslots", &keyslots)
      || !json_object_is_type (keyslots, json_type_object))
    return -1;
  json_object_object_foreach (keyslots, key, k) {
    type = reenc_json_str (k, "type");
    if (type == NULL || strcmp (type, "reencrypt") != 0)
      continue;
    n = strtol (key, &end, 10);
    if (*end != '\0' || n < 0 || n >= 32)
      return -1;
    *ks = k;
    return (int) n;
  }
  return -1;
}

const char *
reenc_json_shown (const char *s)
{
  const char *c;

  for (c = s; *c; c++)
    if (*c < 0x20 || *c > 0x7e)
      return "(not printable)";
  return s;
}
