/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The table cryptsetup would load for "cryptsetup open", minus the key:
 * cipher spec, IV offset, data offset, sector size, persistent flags and
 * the mapping's length. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "../crypto/cipher.h"
#include "internal.h"

#define SECTOR_BYTES 512

static const char *
header_path (const struct luks_unlock_params *p)
{
  return p->header_path ? p->header_path : p->data_path;
}

const char *
luks_data_name (const struct luks_unlock_params *p)
{
  return p->data_name ? p->data_name : p->data_path;
}

/* LUKS2 persistent activation flags as dm-crypt optional parameters.
 * LUKS2 never sets iv_large_sectors. */
unsigned
luks2_activation_flags (struct crypt_device *cd)
{
  static const struct { uint32_t lib; unsigned table; } map[] = {
    { CRYPT_ACTIVATE_ALLOW_DISCARDS, CT_ALLOW_DISCARDS },
    { CRYPT_ACTIVATE_SAME_CPU_CRYPT, CT_SAME_CPU_CRYPT },
    { CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS, CT_SUBMIT_FROM_CRYPT_CPUS },
    { CRYPT_ACTIVATE_NO_READ_WORKQUEUE, CT_NO_READ_WORKQUEUE },
    { CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE, CT_NO_WRITE_WORKQUEUE },
#ifdef CRYPT_ACTIVATE_HIGH_PRIORITY     /* libcryptsetup >= 2.7 */
    { CRYPT_ACTIVATE_HIGH_PRIORITY, CT_HIGH_PRIORITY },
#endif
  };
  uint32_t lib_flags = 0;
  unsigned flags = 0;
  size_t i;

  if (crypt_persistent_flags_get (cd, CRYPT_FLAGS_ACTIVATION,
                                  &lib_flags) < 0)
    return 0;
  for (i = 0; i < sizeof map / sizeof map[0]; i++)
    if (lib_flags & map[i].lib)
      flags |= map[i].table;
  return flags;
}

char *
luks_name_mode_spec (struct crypt_device *cd)
{
  char *spec;

  if (asprintf (&spec, "%s-%s", crypt_get_cipher (cd),
                crypt_get_cipher_mode (cd)) == -1)
    return NULL;
  return spec;
}

/* Length in 512-byte sectors.  A dynamic segment runs to the end of the
 * device, cut down to whole encryption sectors as the kernel requires;
 * a fixed one must fit in the device. */
static int
set_length (const struct luks_unlock_params *p,
            const struct luks2_segment *seg, uint64_t data_size,
            struct crypt_table *t)
{
  uint64_t device_sectors = data_size / SECTOR_BYTES;
  uint64_t block_sectors = t->sector_size / SECTOR_BYTES;

  if (device_sectors <= t->offset)
    {
      nbdkit_error ("%s: image too small for its LUKS data offset "
                    "(%" PRIu64 " bytes, data starts at byte %" PRIu64 ")",
                    luks_data_name (p), data_size, t->offset * SECTOR_BYTES);
      return -1;
    }
  if (seg != NULL && !seg->dynamic)
    {
      t->length = seg->size_bytes / SECTOR_BYTES;
      if (t->length > device_sectors - t->offset)
        {
          nbdkit_error ("%s: image too small for its LUKS data segment "
                        "(%" PRIu64 " bytes, segment ends at byte %" PRIu64
                        ")", luks_data_name (p), data_size,
                        t->offset * SECTOR_BYTES + seg->size_bytes);
          return -1;
        }
      return 0;
    }
  t->length = device_sectors - t->offset;
  t->length -= t->length % block_sectors;
  if (t->length == 0)
    {
      nbdkit_error ("%s: image too small for its LUKS data offset "
                    "(less than one %u-byte sector of data)",
                    luks_data_name (p), t->sector_size);
      return -1;
    }
  return 0;
}

/* cryptsetup refuses a data offset inside the first 4 KiB unless the
 * header is detached: the data would overwrite the header. */
static int
check_offset (const struct luks_unlock_params *p, const struct crypt_table *t)
{
  if (p->header_path != NULL || t->offset >= 8)
    return 0;
  nbdkit_error ("%s: LUKS data offset of %" PRIu64 " sectors overlaps the "
                "header (allowed only with a detached header)",
                luks_data_name (p), t->offset);
  return -1;
}

/* t->cipher = CIPHER (taken; NULL means out of memory), t->device. */
static int
set_names (const struct luks_unlock_params *p, char *cipher,
           struct crypt_table *t)
{
  t->cipher = cipher;
  t->device = strdup (luks_data_name (p));
  if (t->cipher == NULL || t->device == NULL)
    {
      nbdkit_error ("luks: out of memory");
      return -1;
    }
  return 0;
}

int
luks_set_cipher (struct crypt_device *cd, const struct luks_unlock_params *p,
                 char *cipher, struct crypt_table *t)
{
  if (set_names (p, cipher, t) == -1)
    return -1;
  /* Before the key: a cipher we cannot run should be named as such,
   * not cost a PBKDF run, and never send libcryptsetup looking for a
   * kernel crypto fallback. */
  return sector_cipher_check_spec (t->cipher,
                                   crypt_get_volume_key_size (cd));
}

int
luks_fill_params (struct crypt_device *cd,
                  const struct luks_unlock_params *p,
                  uint64_t data_size, struct crypt_table *t,
                  struct luks_info *info)
{
  bool luks2 = strcmp (crypt_get_type (cd), CRYPT_LUKS2) == 0;
  struct luks2_segment seg;
  int r = -1;

  memset (&seg, 0, sizeof seg);
  if (luks2 && luks2_check_segment (cd, header_path (p), &seg) == -1)
    return -1;
  t->start = 0;
  t->iv_offset = crypt_get_iv_offset (cd);
  t->offset = crypt_get_data_offset (cd);
  t->sector_size = crypt_get_sector_size (cd);
  t->flags = luks2 ? luks2_activation_flags (cd) : 0;
  if (check_offset (p, t) == -1
      || set_length (p, luks2 ? &seg : NULL, data_size, t) == -1)
    goto out;
  /* LUKS2: the segment's cipher string as stored, which is what
   * cryptsetup hands to the kernel. */
  snprintf (info->integrity, sizeof info->integrity, "%s", seg.integrity);
  /* An authenticated cipher is checked with its MAC by whoever seals
   * the sectors (crypto/aead.h), which knows the MAC's share of the
   * key. */
  if (seg.integrity[0] != '\0')
    r = set_names (p, strdup (seg.encryption), t);
  else
    r = luks_set_cipher (cd, p, luks2 ? strdup (seg.encryption)
                                      : luks_name_mode_spec (cd), t);
 out:
  luks2_segment_free (&seg);
  return r;
}
