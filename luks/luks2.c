/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LUKS2 metadata checks.  The JSON comes from libcryptsetup
 * (crypt_dump_json), which has already validated it; we only decide
 * whether the one data segment is something a dm-crypt table can map. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libcryptsetup.h>

#include "../common/log.h"
#include "internal.h"

/* The value of KEY in OBJ as a string, or NULL. */
static const char *
get_string (json_object *obj, const char *key)
{
  json_object *val;

  if (!json_object_object_get_ex (obj, key, &val)
      || !json_object_is_type (val, json_type_string))
    return NULL;
  return json_object_get_string (val);
}

/* The names in config.requirements.mandatory, e.g. "req0 req1". */
static void
requirement_names (json_object *root, char *names, size_t size)
{
  json_object *config, *requirements, *mandatory;
  size_t i, used = 0;

  names[0] = '\0';
  if (!json_object_object_get_ex (root, "config", &config)
      || !json_object_object_get_ex (config, "requirements", &requirements)
      || !json_object_object_get_ex (requirements, "mandatory", &mandatory)
      || !json_object_is_type (mandatory, json_type_array))
    return;
  for (i = 0; i < json_object_array_length (mandatory) && used < size; i++)
    used += snprintf (names + used, size - used, "%s%s", i ? " " : "",
                      json_object_get_string
                        (json_object_array_get_idx (mandatory, i)));
}

/* Refuses a device in re-encryption or with requirements we do not
 * know: mapping only one of its segments would show wrong plaintext. */
static int
check_requirements (struct crypt_device *cd, json_object *root,
                    const char *hdr_path)
{
  const uint32_t reencrypt = CRYPT_REQUIREMENT_OFFLINE_REENCRYPT
                             | CRYPT_REQUIREMENT_ONLINE_REENCRYPT;
  crypt_reencrypt_info status;
  uint32_t req = 0;
  char names[128];

  if (crypt_persistent_flags_get (cd, CRYPT_FLAGS_REQUIREMENTS, &req) < 0)
    {
      nbdkit_error ("%s: cannot read the LUKS2 requirements", hdr_path);
      return -1;
    }
  /* With unknown requirements this says INVALID, so it comes after. */
  status = (req & ~reencrypt) == 0 ? crypt_reencrypt_status (cd, NULL)
                                   : CRYPT_REENCRYPT_NONE;
  if ((req & reencrypt) != 0 || status == CRYPT_REENCRYPT_CLEAN
      || status == CRYPT_REENCRYPT_CRASH)
    {
      nbdkit_error ("%s: LUKS2 device is in the middle of re-encryption: "
                    "not supported", hdr_path);
      return -1;
    }
  if (req != 0 || status != CRYPT_REENCRYPT_NONE)
    {
      requirement_names (root, names, sizeof names);
      if (names[0] == '\0')
        snprintf (names, sizeof names, "flags 0x%" PRIx32, req);
      nbdkit_error ("%s: LUKS2 header has unknown requirements (%s): "
                    "not supported", hdr_path, names);
      return -1;
    }
  return 0;
}

/* Segment flags ("in-reencryption", "backup-final", ...) only appear
 * during re-encryption in libcryptsetup 2.6. */
static int
check_segment_flags (json_object *segment, const char *hdr_path)
{
  json_object *flags;

  if (!json_object_object_get_ex (segment, "flags", &flags)
      || !json_object_is_type (flags, json_type_array)
      || json_object_array_length (flags) == 0)
    return 0;
  nbdkit_error ("%s: LUKS2 device is in the middle of re-encryption: "
                "not supported (segment flag %s)", hdr_path,
                json_object_get_string (json_object_array_get_idx (flags, 0)));
  return -1;
}

/* An authenticated segment is dm-crypt over dm-integrity: its type is
 * kept for the caller, which opens both.  cryptsetup 2.6 formats no
 * journal encryption or journal MAC for LUKS2 (LUKS2_integrity_*),
 * so a header asking for one is refused by name. */
static int
read_integrity (json_object *segment, const char *hdr_path,
                struct luks2_segment *seg)
{
  static const char *const journal_keys[] = { "journal_encryption",
                                              "journal_integrity" };
  json_object *integrity;
  const char *type, *journal;
  size_t i;

  if (!json_object_object_get_ex (segment, "integrity", &integrity))
    return 0;
  type = get_string (integrity, "type");
  if (type == NULL || *type == '\0' || strlen (type) >= sizeof seg->integrity)
    {
      nbdkit_error ("%s: LUKS2 segment has an integrity section without "
                    "a valid type", hdr_path);
      return -1;
    }
  for (i = 0; i < sizeof journal_keys / sizeof journal_keys[0]; i++)
    {
      journal = get_string (integrity, journal_keys[i]);
      if (journal != NULL && strcmp (journal, "none") != 0)
        {
          nbdkit_error ("%s: LUKS2 integrity with %s \"%s\" is not "
                        "supported", hdr_path, journal_keys[i], journal);
          return -1;
        }
    }
  snprintf (seg->integrity, sizeof seg->integrity, "%s", type);
  return 0;
}

/* Reads "size": "dynamic" or a decimal count of bytes. */
static int
parse_size (json_object *segment, const char *hdr_path,
            struct luks2_segment *seg)
{
  const char *size = get_string (segment, "size");
  char *end;

  if (size == NULL)
    goto bad;
  if (strcmp (size, "dynamic") == 0)
    {
      seg->dynamic = true;
      return 0;
    }
  errno = 0;
  seg->size_bytes = strtoull (size, &end, 10);
  if (errno == 0 && end != size && *end == '\0' && size[0] != '-')
    return 0;
 bad:
  nbdkit_error ("%s: LUKS2 data segment has no valid size", hdr_path);
  return -1;
}

static int
read_segment (json_object *segment, const char *hdr_path,
              struct luks2_segment *seg)
{
  const char *type = get_string (segment, "type");
  const char *encryption = get_string (segment, "encryption");

  if (type == NULL || strcmp (type, "crypt") != 0)
    {
      nbdkit_error ("%s: LUKS2 segment type \"%s\" is not supported",
                    hdr_path, type ? type : "");
      return -1;
    }
  if (check_segment_flags (segment, hdr_path) == -1
      || read_integrity (segment, hdr_path, seg) == -1
      || parse_size (segment, hdr_path, seg) == -1)
    return -1;
  if (encryption == NULL)
    {
      nbdkit_error ("%s: LUKS2 data segment has no cipher", hdr_path);
      return -1;
    }
  seg->encryption = strdup (encryption);
  if (seg->encryption == NULL)
    {
      nbdkit_error ("strdup: %m");
      return -1;
    }
  return 0;
}

static int
check_json (json_object *root, const char *hdr_path,
            struct luks2_segment *seg)
{
  json_object *segments, *segment;
  int n;

  if (!json_object_object_get_ex (root, "segments", &segments)
      || !json_object_is_type (segments, json_type_object))
    {
      nbdkit_error ("%s: LUKS2 metadata has no segments", hdr_path);
      return -1;
    }
  n = json_object_object_length (segments);
  if (n != 1)
    {
      nbdkit_error ("%s: LUKS2 header has %d data segments, not 1: "
                    "not supported", hdr_path, n);
      return -1;
    }
  /* Segment keys are decimal strings; the default segment is "0". */
  if (!json_object_object_get_ex (segments, "0", &segment))
    {
      nbdkit_error ("%s: LUKS2 header has no data segment 0", hdr_path);
      return -1;
    }
  return read_segment (segment, hdr_path, seg);
}

int
luks2_check_segment (struct crypt_device *cd, const char *hdr_path,
                     struct luks2_segment *seg)
{
  const char *json = NULL;
  json_object *root;
  int r;

  memset (seg, 0, sizeof *seg);
  if (crypt_dump_json (cd, &json, 0) < 0 || json == NULL
      || (root = json_tokener_parse (json)) == NULL)
    {
      nbdkit_error ("%s: cannot read the LUKS2 metadata", hdr_path);
      return -1;
    }
  r = check_requirements (cd, root, hdr_path);
  if (r == 0)
    r = check_json (root, hdr_path, seg);
  json_object_put (root);
  if (r == -1)
    luks2_segment_free (seg);
  return r;
}

void
luks2_segment_free (struct luks2_segment *seg)
{
  free (seg->encryption);
  memset (seg, 0, sizeof *seg);
}
