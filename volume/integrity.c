/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dm-integrity device under the mapping, as cryptsetup activates a
 * LUKS2 volume with integrity (crypt over integrity, the "_dif" device)
 * and integritysetup a device alone (type=integrity): opened over the
 * image's backend, its sectors sealed and opened by the backend the
 * engine then uses (backend/integrity.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/integrity.h"
#include "../crypto/secmem.h"
#include "internal.h"

/* The dm-integrity device at the table's data offset, to the end of the
 * image, as LUKS2_activate gives integrity its whole data device. */
static struct integrity_dev *
open_device (struct dmcrypt_volume *v, uint32_t tag_bytes,
             const char *internal_hash, const uint8_t *hash_key,
             size_t hash_key_bytes)
{
  struct integrity_io io = backend_integrity_io (v->backend);
  struct integrity_options opt = {
    .offset_bytes = v->table.offset * 512,
    .device_bytes = v->backend->size - v->table.offset * 512,
    .tag_size = tag_bytes,
    .mode = v->params.integrity_mode ? v->params.integrity_mode : 'J',
    .readonly = v->params.readonly,
    .internal_hash = internal_hash,
    .internal_hash_key = hash_key,
    .internal_hash_key_bytes = hash_key_bytes,
  };
  struct integrity_dev *d;
  char err[256] = "";

  /* The kernel allows no writes in recovery mode. */
  if (opt.mode == 'R')
    v->params.readonly = opt.readonly = true;
  if (v->backend->size <= opt.offset_bytes) {
    nbdkit_error ("%s: no room for a dm-integrity device after offset "
                  "%" PRIu64 " bytes", v->image, opt.offset_bytes);
    return NULL;
  }
  d = integrity_open (&io, &opt, err, sizeof err);
  if (d == NULL)
    nbdkit_error ("%s: %s", v->image, err);
  return d;
}

/* The mapping's table once the device is open: the crypt line cryptsetup
 * loads over "_dif" (from its start, the whole of it), or for
 * integritysetup's device alone a table that moves plaintext only. */
static int
settle_table (struct dmcrypt_volume *v, const struct integrity_dev *d,
              const char *kernel_cipher, uint32_t tag_bytes)
{
  struct crypt_table *t = &v->table;
  uint64_t sector_sectors = integrity_block_bytes (d) / 512;
  char *cipher = strdup (kernel_cipher);

  if (cipher == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  free (t->cipher);
  t->cipher = cipher;
  t->sector_size = integrity_block_bytes (d);
  t->integrity_tag_size = tag_bytes;
  snprintf (t->integrity_type, sizeof t->integrity_type, "aead");
  t->offset = 0;
  t->length = integrity_data_sectors (d) / sector_sectors * sector_sectors;
  if (t->length == 0) {
    nbdkit_error ("%s: the dm-integrity device provides no data",
                  v->image);
    return -1;
  }
  return 0;
}

/* LUKS2 with integrity: the whole volume key goes to the sealing, which
 * splits it between cipher and MAC as the kernel's authenc does. */
static int
stack_luks2 (struct dmcrypt_volume *v)
{
  struct crypt_table *t = &v->table;
  struct aead_sector *aead;
  struct integrity_dev *d;
  struct backend *sealed;
  char err[256] = "";

  aead = aead_sector_new (t->cipher, v->luks.integrity, t->key, t->key_size,
                          t->sector_size,
                          (t->flags & CT_IV_LARGE_SECTORS) != 0,
                          err, sizeof err);
  if (aead == NULL) {
    nbdkit_error ("%s: %s", v->image, err);
    return -1;
  }
  d = open_device (v, aead_tag_size (aead), NULL, NULL, 0);
  if (d == NULL) {
    aead_sector_free (aead);
    return -1;
  }
  if (integrity_block_bytes (d) != t->sector_size) {
    nbdkit_error ("%s: the dm-integrity device's %u-byte blocks do not "
                  "match the LUKS2 segment's %u-byte sectors", v->image,
                  integrity_block_bytes (d), t->sector_size);
    goto fail;
  }
  if (settle_table (v, d, aead_kernel_cipher (aead), aead_tag_size (aead))
      == -1)
    goto fail;
  if ((sealed = backend_integrity_wrap (v->backend, d, aead)) == NULL)
    goto fail;
  v->backend = sealed;
  v->integrity = sealed;
  return 0;

 fail:
  integrity_close (d);
  aead_sector_free (aead);
  return -1;
}

/* integritysetup's --integrity-key-file: its bytes as they are (or the
 * first --integrity-key-size of them), into locked memory. */
static uint8_t *
read_hash_key (const struct dmcrypt_params *p, size_t *bytes)
{
  size_t want = p->integrity_key_size ? p->integrity_key_size : 4096;
  uint8_t *key = secmem_alloc (want), *dup;
  FILE *f = fopen (p->integrity_key_file, "rb");
  size_t got = 0;

  if (key == NULL || f == NULL) {
    nbdkit_error ("integrity-key-file: %s: %m", p->integrity_key_file);
    goto fail;
  }
  got = fread (key, 1, want, f);
  if (ferror (f) || got == 0
      || (p->integrity_key_size && got < p->integrity_key_size)
      || (!p->integrity_key_size && fgetc (f) != EOF)) {
    nbdkit_error ("integrity-key-file: %s: %s", p->integrity_key_file,
                  got == 0 || p->integrity_key_size
                  ? "shorter than the key" : "longer than 4096 bytes");
    goto fail;
  }
  fclose (f);
  /* Freed by the caller by its own size. */
  *bytes = got;
  dup = secmem_dup (key, got);
  secmem_free (key, want);
  if (dup == NULL)
    nbdkit_error ("integrity-key-file: out of locked memory");
  return dup;

 fail:
  if (f)
    fclose (f);
  secmem_free (key, want);
  return NULL;
}

/* integritysetup open: the device's own hash checks its tags. */
static int
stack_alone (struct dmcrypt_volume *v)
{
  const struct dmcrypt_params *p = &v->params;
  const char *hash = p->integrity ? p->integrity : "crc32c";
  char kernel_name[64];
  size_t key_bytes = 0;
  uint8_t *key = NULL;
  struct integrity_dev *d;
  struct backend *sealed;

  /* integritysetup's spelling (hmac-sha256) of the kernel's
   * (hmac(sha256)), as crypt_parse_hash_integrity_mode turns it. */
  if (strncmp (hash, "hmac-", 5) == 0) {
    snprintf (kernel_name, sizeof kernel_name, "hmac(%s)", hash + 5);
    hash = kernel_name;
  }
  if (p->integrity_key_file && (key = read_hash_key (p, &key_bytes)) == NULL)
    return -1;
  d = open_device (v, 0, hash, key, key_bytes);
  secmem_free (key, key_bytes);
  if (d == NULL)
    return -1;
  if (settle_table (v, d, "cipher_null-ecb", integrity_tag_size (d)) == -1
      || (sealed = backend_integrity_wrap (v->backend, d, NULL)) == NULL) {
    integrity_close (d);
    return -1;
  }
  v->backend = sealed;
  v->integrity = sealed;
  return 0;
}

/* From what libcryptsetup reads (the image, or the filter's copy of
 * its head), never through the stack: a simulated device under it
 * serves nothing before its threads start. */
bool
integrity_superblock_at_start (struct dmcrypt_volume *v)
{
  uint8_t head[8];
  int fd = v->data_path ? open (v->data_path, O_RDONLY | O_CLOEXEC) : -1;
  bool found;

  if (fd == -1)
    return false;
  found = pread (fd, head, sizeof head, 0) == (ssize_t) sizeof head
    && integrity_sb_has_magic (head, sizeof head);
  close (fd);
  return found;
}

int
integrity_stack (struct dmcrypt_volume *v)
{
  bool wanted = v->params.type == VT_INTEGRITY
    || (v->is_luks && v->luks.integrity[0] != '\0');

  /* The lab's device serves nothing before nbdkit forks, and its
   * experiments model dm-crypt alone. */
  if (wanted && v->params.device && strcmp (v->params.device, "none") != 0) {
    nbdkit_error ("device=%s: the lab models dm-crypt alone, not over "
                  "dm-integrity", v->params.device);
    return -1;
  }
  if (v->params.type == VT_INTEGRITY)
    return stack_alone (v);
  if (v->is_luks && v->luks.integrity[0] != '\0')
    return stack_luks2 (v);
  return 0;
}
