/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which keyslots our own unlock tries, and what it reads about each
 * from the LUKS1 binary header (the LUKS1 specification, "on-disk
 * format": big-endian fields, eight 48-byte keyslots from byte 208) or
 * from the LUKS2 JSON metadata (luks2-json.c). */
#include <endian.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "internal.h"

#define LUKS1_HDR_BYTES 592
#define LUKS1_HASH_OFF 72
#define LUKS1_DIGEST_OFF 112
#define LUKS1_DIGEST_BYTES 20
#define LUKS1_DIGEST_SALT_OFF 132
#define LUKS1_SALT_BYTES 32
#define LUKS1_DIGEST_ITER_OFF 164
#define LUKS1_SLOTS_OFF 208
#define LUKS1_SLOT_BYTES 48
#define LUKS1_NAME_BYTES 32

struct luks1_hdr
{
  uint8_t raw[LUKS1_HDR_BYTES];
  char hash[LUKS1_NAME_BYTES + 1];
};

static uint32_t
be32_at (const uint8_t *p)
{
  uint32_t v;

  memcpy (&v, p, sizeof v);
  return be32toh (v);
}

static int
read_luks1_hdr (const char *path, struct luks1_hdr *h)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd == -1) {
    nbdkit_error ("%s: %m", path);
    return -1;
  }
  n = pread (fd, h->raw, sizeof h->raw, 0);
  close (fd);
  if (n != (ssize_t) sizeof h->raw) {
    nbdkit_error ("%s: cannot read the LUKS1 header", path);
    return -1;
  }
  memcpy (h->hash, h->raw + LUKS1_HASH_OFF, LUKS1_NAME_BYTES);
  h->hash[LUKS1_NAME_BYTES] = '\0';
  return 0;
}

static void
luks1_digest (const struct luks1_hdr *h, struct luks_own_digest *d)
{
  d->hash = h->hash;
  d->iterations = be32_at (h->raw + LUKS1_DIGEST_ITER_OFF);
  memcpy (d->salt, h->raw + LUKS1_DIGEST_SALT_OFF, LUKS1_SALT_BYTES);
  d->salt_bytes = LUKS1_SALT_BYTES;
  memcpy (d->digest, h->raw + LUKS1_DIGEST_OFF, LUKS1_DIGEST_BYTES);
  d->digest_bytes = LUKS1_DIGEST_BYTES;
}

/* What libcryptsetup exposes of SLOT: its area and cipher. */
static int
exposed (struct crypt_device *cd, int slot, struct luks_own_keyslot *ks)
{
  uint64_t offset, length;

  ks->slot = slot;
  ks->cipher = crypt_keyslot_get_encryption (cd, slot, &ks->area_key_bytes);
  if (ks->cipher == NULL ||
      crypt_keyslot_area (cd, slot, &offset, &length) < 0) {
    nbdkit_error ("keyslot %d: libcryptsetup does not describe it", slot);
    return -1;
  }
  ks->area_offset = offset;
  ks->area_bytes = length;
  return 0;
}

static int
luks1_keyslot (struct crypt_device *cd, const struct luks1_hdr *h, int slot,
               struct luks_own_keyslot *ks)
{
  const uint8_t *s = h->raw + LUKS1_SLOTS_OFF + slot * LUKS1_SLOT_BYTES;

  if (exposed (cd, slot, ks) == -1)
    return -1;
  ks->kdf = CRYPT_KDF_PBKDF2;
  ks->kdf_hash = h->hash;
  ks->iterations = be32_at (s + 4);
  memcpy (ks->salt, s + 8, LUKS1_SALT_BYTES);
  ks->salt_bytes = LUKS1_SALT_BYTES;
  ks->stripes = be32_at (s + 44);
  ks->af_hash = h->hash;
  return 0;
}

static bool
slot_active (struct crypt_device *cd, int slot)
{
  crypt_keyslot_info st = crypt_keyslot_status (cd, slot);

  return st == CRYPT_SLOT_ACTIVE || st == CRYPT_SLOT_ACTIVE_LAST;
}

static int
luks1_unlock (struct crypt_device *cd, const char *path, int only_slot,
              const char *secret, size_t secret_bytes, uint8_t *volume_key,
              size_t key_bytes)
{
  struct luks1_hdr h;
  struct luks_own_keyslot ks;
  struct luks_own_digest d;
  int slot, r;

  if (read_luks1_hdr (path, &h) == -1)
    return -1;
  luks1_digest (&h, &d);
  for (slot = 0; slot < crypt_keyslot_max (CRYPT_LUKS1); slot++) {
    if ((only_slot != CRYPT_ANY_SLOT && slot != only_slot) ||
        !slot_active (cd, slot))
      continue;
    memset (&ks, 0, sizeof ks);
    if (luks1_keyslot (cd, &h, slot, &ks) == -1)
      return -1;
    r = luks_own_keyslot_open (path, &ks, &d, secret, secret_bytes,
                               volume_key, key_bytes);
    if (r != 0)
      return r == 1 ? slot : -1;
  }
  return -2;
}

int
luks_own_unlock (struct crypt_device *cd, const struct luks_unlock_params *p,
                 const char *secret, size_t secret_bytes,
                 uint8_t *volume_key, size_t key_bytes)
{
  const char *path = p->header_path ? p->header_path : p->data_path;
  const char *type = crypt_get_type (cd);

  nbdkit_debug ("libcryptsetup cannot open the keyslot here; "
                "trying our own keyslot unlock");
  if (strcmp (type, CRYPT_LUKS1) == 0)
    return luks1_unlock (cd, path, p->key_slot, secret, secret_bytes,
                         volume_key, key_bytes);
  if (strcmp (type, CRYPT_LUKS2) == 0)
    return luks2_own_unlock (cd, path, p->key_slot, secret, secret_bytes,
                             volume_key, key_bytes);
  nbdkit_error ("cannot unlock a %s keyslot without device-mapper", type);
  return -1;
}
