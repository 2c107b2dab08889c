/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a reload may load (dm.h): a table that the kernel's constructor
 * would accept, for this mapping's own device, that fits the backend,
 * and that keeps the data's meaning (cipher, key, IV offset, offset,
 * length, sector size, IV counting) unless forced. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmint.h"

#define MAX_TABLE_LINE 8192     /* bytes; a crypt line is far shorter */

static bool
same_device (const struct dm_mapping *m, const char *field)
{
  if (strcmp (field, m->host.device) == 0)
    return true;
  return m->host.same_device && m->host.same_device (m->host.arg, field);
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

/* Names the fields of T that differ from the live table L in ways that
 * change what the plaintext is; empty when none do. */
static void
meaning_changes (const struct crypt_table *t, const struct crypt_table *l,
                 char *out, size_t size)
{
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
check_against_mapping (const struct dm_mapping *m, const struct dm_reload *r,
                       const struct crypt_table *t, struct dm_err *err)
{
  const struct crypt_table *live = &m->live.table;
  const struct backend *b = m->host.backend;
  char changes[128];

  if (!same_device (m, t->device)) {
    dm_fail (err, EINVAL, "device %s is not this volume's device %s "
             "(a reload cannot change the device)", t->device,
             m->host.device);
    return -1;
  }
  if (t->offset + t->length > b->size / 512) {
    dm_fail (err, EINVAL, "the table needs %" PRIu64 " sectors, the "
             "device has %" PRIu64, t->offset + t->length, b->size / 512);
    return -1;
  }
  if (!r->readonly && b->readonly) {
    dm_fail (err, EACCES, "%s: only a --readonly table can be loaded",
             m->host.server_readonly ? "nbdkit runs with -r"
             : "the image is not writable");
    return -1;
  }
  meaning_changes (t, live, changes, sizeof changes);
  if (changes[0] && !r->force) {
    dm_fail (err, EINVAL, "the table changes the %s of the live table, "
             "which changes what the data means%s; add --force to "
             "load it anyway", changes,
             !same_key (t, live) && t->key_size == live->key_size
             && all_zero (t->key, t->key_size)
             ? " (the key is masked: take the table from "
             "'table --showkeys')" : "");
    return -1;
  }
  return 0;
}

int
reload_check (const struct dm_mapping *m, const struct dm_reload *r,
              struct crypt_table *t, struct dm_err *err)
{
  char *device;

  memset (t, 0, sizeof *t);
  if (r->line == NULL) {
    dm_fail (err, EINVAL, "reload: no table given");
    return -1;
  }
  if (strnlen (r->line, MAX_TABLE_LINE) == MAX_TABLE_LINE) {
    dm_fail (err, EINVAL, "the table line is too long");
    return -1;
  }
  /* Both report the kernel constructor's reason through nbdkit_error,
   * as dm-crypt does to the kernel log. */
  if (crypt_table_parse (r->line, t) == -1) {
    dm_fail (err, EINVAL, "the table was refused (see the server log)");
    return -1;
  }
  if (crypt_table_validate (t) == -1) {
    crypt_table_free (t);
    dm_fail (err, EINVAL, "the table was refused (see the server log)");
    return -1;
  }
  if (check_against_mapping (m, r, t, err) == -1) {
    crypt_table_free (t);
    return -1;
  }
  /* The device is ours: keep the name the live table was made with. */
  if ((device = strdup (m->live.table.device ? m->live.table.device
                        : m->host.device)) == NULL) {
    crypt_table_free (t);
    dm_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  free (t->device);
  t->device = device;
  return 0;
}
