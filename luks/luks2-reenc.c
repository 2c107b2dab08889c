/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opening a LUKS2 volume in the middle of a re-encryption as cryptsetup
 * 2.6.1 does (lib/setup.c, _open_and_activate_reencrypt_device): the
 * layout from the metadata (reenc-layout.c), every volume key the
 * segments need unlocked from the one passphrase or key file
 * (lib/luks2/luks2_keyslot.c, LUKS2_keyslot_open_all_segments: the old
 * key, then the new one, each by a keyslot bound to its digest; a
 * key-slot given must open both), the reencrypt digest checked
 * (LUKS2_reencrypt_digest_verify), then one table per key.
 * libcryptsetup's crypt_volume_key_get opens only the default segment,
 * so the keyslots are opened by our own unlock (keyslot.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "../common/log.h"
#include "../crypto/cipher.h"
#include "../crypto/secmem.h"
#include "internal.h"
#include "reenc.h"
#include "reenc-json.h"

#define SECTOR_BYTES 512
#define KEY_BYTES_MAX 512

/* An unlocked volume key. */
struct vkey
{
  int digest;                  /* -1: none */
  uint8_t *key;                /* secmem */
  size_t bytes;
};

struct reenc_ctx
{
  struct crypt_device *cd;
  const struct luks_unlock_params *p;
  const char *path;            /* the header's */
  const char *json;
  json_object *root;
  const char *secret;
  size_t secret_bytes;
  struct vkey keys[2];         /* old, new */
  int key_slot;                /* the last that opened */
};

static void
vkey_drop (struct vkey *k)
{
  secmem_free (k->key, k->bytes);
  k->key = NULL;
  k->bytes = 0;
}

/* The keyslot's priority: 0 ignore, 1 normal (absent), 2 prefer. */
static int
priority (json_object *root, int slot)
{
  json_object *keyslots, *ks, *pr;
  char name[16];

  snprintf (name, sizeof name, "%d", slot);
  if (!json_object_object_get_ex (root, "keyslots", &keyslots)
      || !json_object_object_get_ex (keyslots, name, &ks)
      || !json_object_object_get_ex (ks, "priority", &pr))
    return 1;
  return json_object_get_int (pr);
}

/* Tries SLOT for the key of digest K->digest: 1 opened, 0 not, -1. */
static int
try_slot (struct reenc_ctx *c, int slot, struct vkey *k)
{
  struct luks_own_keyslot ks;
  struct luks_own_digest d;
  struct crypt_pbkdf_type pbkdf;
  char id[16];

  snprintf (id, sizeof id, "%d", slot);
  if (reenc_json_digest_of (c->root, id, true) != k->digest)
    return 0;
  if (luks2_json_keyslot (c->cd, c->root, slot, &ks, &pbkdf) == -1
      || luks2_json_digest (c->root, k->digest, &d) == -1
      || ks.area_key_bytes == 0) {
    nbdkit_error ("keyslot %d: its LUKS2 metadata is not as expected", slot);
    return -1;
  }
  if (k->key == NULL) {
    k->bytes = crypt_keyslot_get_key_size (c->cd, slot) > 0
      ? (size_t) crypt_keyslot_get_key_size (c->cd, slot) : 0;
    if (k->bytes == 0 || k->bytes > KEY_BYTES_MAX
        || (k->key = secmem_alloc (k->bytes)) == NULL) {
      nbdkit_error ("keyslot %d: no usable volume key size", slot);
      k->bytes = 0;
      return -1;
    }
  }
  return luks_own_keyslot_open (c->path, &ks, &d, c->secret,
                                c->secret_bytes, k->key, k->bytes);
}

/* The key of K->digest, by the keyslot given or by every keyslot bound
 * to the digest, preferred ones first (LUKS2_keyslot_open_by_digest). */
static int
open_key (struct reenc_ctx *c, struct vkey *k, const char *which)
{
  int pass, slot, r;

  for (pass = 2; pass >= 1; pass--)
    for (slot = 0; slot < crypt_keyslot_max (CRYPT_LUKS2); slot++) {
      if (c->p->key_slot != CRYPT_ANY_SLOT
          ? slot != c->p->key_slot || pass != 2
          : priority (c->root, slot) != pass)
        continue;
      r = try_slot (c, slot, k);
      if (r == -1)
        return -1;
      if (r == 1) {
        c->key_slot = slot;
        return 0;
      }
    }
  if (c->p->key_slot != CRYPT_ANY_SLOT)
    nbdkit_error ("keyslot %d cannot open the %s volume key of the "
                  "re-encryption (digest %d)%s%s", c->p->key_slot, which,
                  k->digest, c->p->wrong_key_hint ? "; " : "",
                  c->p->wrong_key_hint ? c->p->wrong_key_hint : "");
  else
    nbdkit_error ("wrong passphrase or key file: no keyslot opened the %s "
                  "volume key of the re-encryption%s%s", which,
                  c->p->wrong_key_hint ? "; " : "",
                  c->p->wrong_key_hint ? c->p->wrong_key_hint : "");
  return -1;
}

/* LUKS2_reencrypt_digest_verify: the reencrypt keyslot's digest over
 * the keys and the re-encryption metadata. */
static int
verify_metadata (struct reenc_ctx *c, int version)
{
  struct luks_own_digest d;
  uint8_t *data, check[LUKS_OWN_DIGEST_MAX];
  size_t data_bytes;
  json_object *ks;
  char why[200], id[16];
  int slot, digest, r = -1;

  slot = reenc_json_reencrypt_keyslot (c->root, &ks);
  snprintf (id, sizeof id, "%d", slot);
  digest = slot < 0 ? -1 : reenc_json_digest_of (c->root, id, true);
  if (digest < 0 || luks2_json_digest (c->root, digest, &d) == -1) {
    nbdkit_error ("%s: LUKS2 re-encryption metadata has no digest: "
                  "refused", c->path);
    return -1;
  }
  if (reenc_verification_data (c->json, version, c->keys[0].key,
                               c->keys[0].bytes, c->keys[1].key,
                               c->keys[1].bytes, &data, &data_bytes, why,
                               sizeof why) == -1) {
    nbdkit_error ("%s: %s", c->path, why);
    return -1;
  }
  if (luks_pbkdf2 (d.hash, data, data_bytes, d.salt, d.salt_bytes,
                   d.iterations, check, d.digest_bytes) == 0) {
    r = CRYPTO_memcmp (check, d.digest, d.digest_bytes) == 0 ? 0 : -1;
    if (r == -1)
      nbdkit_error ("%s: LUKS2 re-encryption metadata does not match its "
                    "digest: refused", c->path);
  }
  secmem_free (data, data_bytes);
  return r;
}

static const struct vkey *
key_of (const struct reenc_ctx *c, int digest)
{
  return c->keys[0].digest == digest ? &c->keys[0] : &c->keys[1];
}

/* Table N of the layout, with its key (a copy in secmem). */
static int
make_table (const struct reenc_ctx *c, const struct reenc_layout *l,
            unsigned n, struct crypt_table *t)
{
  const struct reenc_table *rt = &l->tables[n];
  const struct vkey *k = rt->linear ? NULL : key_of (c, rt->digest);

  memset (t, 0, sizeof *t);
  t->length = rt->length;
  t->iv_offset = rt->iv_offset;
  t->offset = rt->offset;
  t->sector_size = rt->sector_size;
  /* The persistent flags go on every crypt target
   * (LUKS2_assembly_multisegment_dmd passes the device's flags). */
  t->flags = rt->linear ? 0 : luks2_activation_flags (c->cd);
  t->cipher = strdup (rt->cipher);
  t->device = strdup (luks_data_name (c->p));
  if (t->cipher == NULL || t->device == NULL) {
    nbdkit_error ("luks: out of memory");
    return -1;
  }
  if (k != NULL) {
    if ((t->key = secmem_dup (k->key, k->bytes)) == NULL) {
      nbdkit_error ("secmem: %m");
      return -1;
    }
    t->key_size = k->bytes;
  }
  return sector_cipher_check_spec (t->cipher, t->key_size);
}

static int
open_keys (struct reenc_ctx *c, const struct reenc_layout *l)
{
  c->keys[0].digest = l->digest_old;
  c->keys[1].digest = l->digest_new != l->digest_old ? l->digest_new : -1;
  if (c->keys[0].digest < 0 && c->keys[1].digest < 0) {
    nbdkit_error ("%s: LUKS2 re-encryption has no volume key", c->path);
    return -1;
  }
  if ((c->keys[0].digest >= 0 && open_key (c, &c->keys[0], "old") == -1)
      || (c->keys[1].digest >= 0
          && open_key (c, &c->keys[1], "new") == -1))
    return -1;
  return verify_metadata (c, l->version);
}

static int
build (struct reenc_ctx *c, const struct reenc_layout *l,
       struct crypt_table *t, struct luks_info *info)
{
  nbdkit_debug ("LUKS2 re-encryption (%s, %s resilience) interrupted "
                "cleanly: %u segments over %u tables", l->mode,
                l->resilience, l->segments.count, l->n_tables);
  if (open_keys (c, l) == -1 || make_table (c, l, 0, t) == -1
      || (l->n_tables > 1 && make_table (c, l, 1, &info->second) == -1))
    return -1;
  info->segments = l->segments;
  return 0;
}

int
luks2_reenc_unlock (struct crypt_device *cd,
                    const struct luks_unlock_params *p, uint64_t data_size,
                    struct crypt_table *t, struct luks_info *info)
{
  struct reenc_ctx c = { .cd = cd, .p = p, .key_slot = -1 };
  struct reenc_layout l;
  char why[300], *to_free = NULL;
  int r;

  c.path = p->header_path ? p->header_path : p->data_path;
  if (crypt_dump_json (cd, &c.json, 0) < 0 || c.json == NULL) {
    nbdkit_error ("%s: cannot read the LUKS2 metadata", c.path);
    return -1;
  }
  r = reenc_layout_parse (c.json, data_size, &l, why, sizeof why);
  if (r <= 0) {
    if (r == -1)
      nbdkit_error ("%s: %s", c.path, why);
    return r;
  }
  /* cryptsetup unlocks both volume keys from one passphrase
   * (LUKS2_keyslot_open_all_segments); a token's keyslot holds one. */
  if ((p->passphrase == NULL && p->keyfile == NULL) || p->token_only) {
    nbdkit_error ("%s: a LUKS2 volume in the middle of re-encryption "
                  "opens with passphrase= or keyfile= (both volume keys "
                  "from one secret); its tokens are not tried", c.path);
    return -1;
  }
  if ((c.root = json_tokener_parse (c.json)) == NULL
      || luks_read_secret (cd, p, &c.secret, &c.secret_bytes,
                           &to_free) == -1)
    r = -1;
  else
    r = build (&c, &l, t, info) == -1 ? -1 : 1;
  crypt_safe_free (to_free);
  json_object_put (c.root);
  vkey_drop (&c.keys[0]);
  vkey_drop (&c.keys[1]);
  info->key_slot = c.key_slot;
  return r;
}
