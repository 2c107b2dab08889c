/* What a reload may load: a table that the kernel's constructor would
 * accept, for this volume's own device, that fits the image, and that
 * keeps the data's meaning (cipher, key, IV offset, offset, length,
 * sector size, IV counting) unless forced. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "dmcrypt.h"
#include "live.h"

#define MAX_TABLE_LINE 8192     /* bytes; a crypt line is far shorter */

static struct stat image;       /* the backing file, as opened */
static char device_field[PATH_MAX];

int
reload_init (void)
{
  char *abs;

  if (stat (params.file, &image) == -1) {
    nbdkit_error ("stat: %s: %m", params.file);
    return -1;
  }
  if (volume.backend->is_blockdev)
    snprintf (device_field, sizeof device_field, "%u:%u",
              volume.backend->dev_major, volume.backend->dev_minor);
  else {
    abs = realpath (params.file, NULL);
    snprintf (device_field, sizeof device_field, "%s",
              abs ? abs : params.file);
    free (abs);
  }
  return 0;
}

const char *
live_device (void)
{
  return device_field;
}

/* The device field names our image: "major:minor" of the block device,
 * or a path to the same block device or file. */
static bool
same_device (const char *field)
{
  unsigned maj, min;
  char extra;
  struct stat st;

  if (strcmp (field, device_field) == 0)
    return true;
  if (sscanf (field, "%u:%u%c", &maj, &min, &extra) == 2)
    return volume.backend->is_blockdev
      && makedev (maj, min) == image.st_rdev;
  if (stat (field, &st) == -1)
    return false;
  if (S_ISBLK (st.st_mode))
    return S_ISBLK (image.st_mode) && st.st_rdev == image.st_rdev;
  return S_ISREG (image.st_mode) && st.st_dev == image.st_dev
    && st.st_ino == image.st_ino;
}

static bool
all_zero (const uint8_t *p, size_t n)
{
  uint8_t acc = 0;

  while (n--)
    acc |= *p++;
  return acc == 0;
}

/* Constant time, as for any comparison of keys. */
static bool
same_key (const struct crypt_table *a, const struct crypt_table *b)
{
  uint8_t acc = 0;
  size_t i;

  if (a->key_size != b->key_size)
    return false;
  for (i = 0; i < a->key_size; i++)
    acc |= a->key[i] ^ b->key[i];
  return acc == 0;
}

/* Names the fields of T that differ from the live table in ways that
 * change what the plaintext is; empty when none do. */
static void
meaning_changes (const struct crypt_table *t, char *out, size_t size)
{
  const struct crypt_table *l = &volume.table;
  size_t n = 0;

#define NOTE(cond, word)                                                \
  if ((cond) && n < size)                                               \
    n += snprintf (out + n, size - n, "%s%s", n ? ", " : "", word)
  out[0] = '\0';
  NOTE (strcmp (t->cipher, l->cipher) != 0, "cipher");
  NOTE (!same_key (t, l), "key");
  NOTE (t->iv_offset != l->iv_offset, "iv_offset");
  NOTE (t->offset != l->offset, "offset");
  NOTE (t->length != l->length, "length");
  NOTE (t->sector_size != l->sector_size, "sector_size");
  NOTE ((t->flags ^ l->flags) & CT_IV_LARGE_SECTORS, "iv_large_sectors");
#undef NOTE
}

static int
check_against_volume (const struct live_reload *r,
                      const struct crypt_table *t, struct live_err *err)
{
  char changes[128];

  if (!same_device (t->device)) {
    live_fail (err, EINVAL, "device %s is not this volume's device %s "
               "(a reload cannot change the device)", t->device,
               device_field);
    return -1;
  }
  if (t->offset + t->length > volume.backend->size / 512) {
    live_fail (err, EINVAL, "the table needs %" PRIu64 " sectors, the "
               "device has %" PRIu64, t->offset + t->length,
               volume.backend->size / 512);
    return -1;
  }
  if (!r->readonly && volume.backend->readonly) {
    live_fail (err, EACCES, "%s: only a --readonly table can be loaded",
               volume.server_readonly ? "nbdkit runs with -r"
               : "the image is not writable");
    return -1;
  }
  meaning_changes (t, changes, sizeof changes);
  if (changes[0] && !r->force) {
    live_fail (err, EINVAL, "the table changes the %s of the live table, "
               "which changes what the data means%s; add --force to "
               "load it anyway", changes,
               !same_key (t, &volume.table)
               && t->key_size == volume.table.key_size
               && all_zero (t->key, t->key_size)
               ? " (the key is masked: take the table from "
               "'table --showkeys')" : "");
    return -1;
  }
  return 0;
}

int
reload_check (const struct live_reload *r, struct crypt_table *t,
              struct live_err *err)
{
  char *device;

  memset (t, 0, sizeof *t);
  if (strnlen (r->line, MAX_TABLE_LINE) == MAX_TABLE_LINE) {
    live_fail (err, EINVAL, "the table line is too long");
    return -1;
  }
  /* Both report the kernel constructor's reason through nbdkit_error,
   * as dm-crypt does to the kernel log. */
  if (crypt_table_parse (r->line, t) == -1) {
    live_fail (err, EINVAL, "the table was refused (see the server log)");
    return -1;
  }
  if (crypt_table_validate (t) == -1) {
    crypt_table_free (t);
    live_fail (err, EINVAL, "the table was refused (see the server log)");
    return -1;
  }
  if (check_against_volume (r, t, err) == -1) {
    crypt_table_free (t);
    return -1;
  }
  /* The device is ours: keep the name the volume was opened with. */
  if ((device = strdup (volume.table.device ? volume.table.device
                        : params.file)) == NULL) {
    crypt_table_free (t);
    live_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  free (t->device);
  t->device = device;
  return 0;
}
