/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our own keyslot unlock of a LUKS2 header: what libcryptsetup does not
 * expose about a keyslot (its salt, stripes and anti-forensic hash) and
 * the digest that checks the volume key, read from the JSON metadata
 * that crypt_dump_json returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libcryptsetup.h>
#include <openssl/evp.h>

#include "../common/log.h"
#include "internal.h"

/* OBJ.KEY as a string, or NULL. */
static const char *
str_at (json_object *obj, const char *key)
{
  json_object *v;

  return json_object_object_get_ex (obj, key, &v) &&
    json_object_is_type (v, json_type_string) ? json_object_get_string (v)
    : NULL;
}

/* Decodes base64 TEXT into OUT (at most MAX bytes).  Returns the length
 * or -1. */
static int
unbase64 (const char *text, uint8_t *out, size_t max)
{
  size_t len = text ? strlen (text) : 0, pad = 0;
  uint8_t buf[(LUKS_OWN_SALT_MAX + LUKS_OWN_DIGEST_MAX) * 2];
  int n;

  if (len == 0 || len % 4 != 0 || len / 4 * 3 > sizeof buf)
    return -1;
  n = EVP_DecodeBlock (buf, (const unsigned char *) text, (int) len);
  pad = (text[len - 1] == '=') + (text[len - 2] == '=');
  if (n < 0 || (size_t) n - pad > max)
    return -1;
  memcpy (out, buf, (size_t) n - pad);
  return n - (int) pad;
}

static int
fill_keyslot (struct crypt_device *cd, json_object *jks, int slot,
              struct luks_own_keyslot *ks, struct crypt_pbkdf_type *pbkdf)
{
  json_object *kdf, *af, *stripes;
  int n;

  memset (ks, 0, sizeof *ks);
  ks->slot = slot;
  ks->cipher = crypt_keyslot_get_encryption (cd, slot, &ks->area_key_bytes);
  if (ks->cipher == NULL || crypt_keyslot_area (cd, slot, &ks->area_offset,
                                                &ks->area_bytes) < 0 ||
      crypt_keyslot_get_pbkdf (cd, slot, pbkdf) < 0)
    return -1;
  ks->kdf = pbkdf->type;
  ks->kdf_hash = pbkdf->hash;
  ks->iterations = pbkdf->iterations;
  ks->memory_kib = pbkdf->max_memory_kb;
  ks->threads = pbkdf->parallel_threads;
  if (!json_object_object_get_ex (jks, "kdf", &kdf) ||
      !json_object_object_get_ex (jks, "af", &af) ||
      !json_object_object_get_ex (af, "stripes", &stripes))
    return -1;
  n = unbase64 (str_at (kdf, "salt"), ks->salt, sizeof ks->salt);
  if (n < 0)
    return -1;
  ks->salt_bytes = (size_t) n;
  ks->stripes = (unsigned) json_object_get_int (stripes);
  ks->af_hash = str_at (af, "hash");
  return ks->af_hash != NULL ? 0 : -1;
}

/* A pbkdf2 digest's parameters. */
static int
read_digest (json_object *jd, struct luks_own_digest *d)
{
  json_object *iter;
  int n;

  if (strcmp (str_at (jd, "type") ? str_at (jd, "type") : "",
              "pbkdf2") != 0 ||
      !json_object_object_get_ex (jd, "iterations", &iter) ||
      (d->hash = str_at (jd, "hash")) == NULL)
    return -1;
  d->iterations = (uint32_t) json_object_get_int64 (iter);
  if ((n = unbase64 (str_at (jd, "salt"), d->salt, sizeof d->salt)) < 0)
    return -1;
  d->salt_bytes = (size_t) n;
  if ((n = unbase64 (str_at (jd, "digest"), d->digest,
                     sizeof d->digest)) < 0)
    return -1;
  d->digest_bytes = (size_t) n;
  return 0;
}

int
luks2_json_digest (json_object *root, int digest, struct luks_own_digest *d)
{
  json_object *digests, *jd;
  char name[16];

  snprintf (name, sizeof name, "%d", digest);
  if (!json_object_object_get_ex (root, "digests", &digests) ||
      !json_object_object_get_ex (digests, name, &jd))
    return -1;
  return read_digest (jd, d);
}

int
luks2_json_keyslot (struct crypt_device *cd, json_object *root, int slot,
                    struct luks_own_keyslot *ks,
                    struct crypt_pbkdf_type *pbkdf)
{
  json_object *keyslots, *jks;
  char name[16];

  snprintf (name, sizeof name, "%d", slot);
  if (!json_object_object_get_ex (root, "keyslots", &keyslots) ||
      !json_object_object_get_ex (keyslots, name, &jks))
    return -1;
  return fill_keyslot (cd, jks, slot, ks, pbkdf);
}

/* The pbkdf2 digest that lists SLOT. */
static int
fill_digest (json_object *digests, int slot, struct luks_own_digest *d)
{
  char name[16];
  json_object *slots;
  const char *listed;
  size_t i;

  snprintf (name, sizeof name, "%d", slot);
  json_object_object_foreach (digests, key, jd) {
    (void) key;
    if (!json_object_object_get_ex (jd, "keyslots", &slots))
      continue;
    for (i = 0; i < json_object_array_length (slots); i++) {
      listed = json_object_get_string (json_object_array_get_idx (slots, i));
      if (listed != NULL && strcmp (listed, name) == 0)
        goto found;
    }
    continue;
  found:
    return read_digest (jd, d);
  }
  return -1;
}

static int
try_slot (struct crypt_device *cd, json_object *root, const char *path,
          int slot, const char *secret, size_t secret_bytes,
          uint8_t *volume_key, size_t key_bytes)
{
  json_object *keyslots, *jks, *digests;
  struct luks_own_keyslot ks;
  struct luks_own_digest d;
  struct crypt_pbkdf_type pbkdf;
  char name[16];

  snprintf (name, sizeof name, "%d", slot);
  if (!json_object_object_get_ex (root, "keyslots", &keyslots) ||
      !json_object_object_get_ex (keyslots, name, &jks) ||
      !json_object_object_get_ex (root, "digests", &digests) ||
      fill_keyslot (cd, jks, slot, &ks, &pbkdf) == -1 ||
      fill_digest (digests, slot, &d) == -1) {
    nbdkit_error ("keyslot %d: its LUKS2 metadata is not as expected", slot);
    return -1;
  }
  return luks_own_keyslot_open (path, &ks, &d, secret, secret_bytes,
                                volume_key, key_bytes);
}

int
luks2_own_unlock (struct crypt_device *cd, const char *path, int only_slot,
                  const char *secret, size_t secret_bytes,
                  uint8_t *volume_key, size_t key_bytes)
{
  const char *text = NULL;
  json_object *root;
  crypt_keyslot_info st;
  int slot, r = -2;

  if (crypt_dump_json (cd, &text, 0) < 0 || text == NULL ||
      (root = json_tokener_parse (text)) == NULL) {
    nbdkit_error ("cannot read the LUKS2 metadata as JSON");
    return -1;
  }
  for (slot = 0; slot < crypt_keyslot_max (CRYPT_LUKS2) && r == -2; slot++) {
    st = crypt_keyslot_status (cd, slot);
    if ((only_slot != CRYPT_ANY_SLOT && slot != only_slot) ||
        (st != CRYPT_SLOT_ACTIVE && st != CRYPT_SLOT_ACTIVE_LAST))
      continue;
    r = try_slot (cd, root, path, slot, secret, secret_bytes, volume_key,
                  key_bytes);
    r = r == 1 ? slot : r == 0 ? -2 : -1;
  }
  json_object_put (root);
  return r;
}
