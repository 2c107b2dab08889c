/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules a crypt table must obey, whatever made it, and its
 * ownership: copy and free. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../crypto/cipher.h"
#include "../crypto/secmem.h"
#include "crypt_table.h"

#define CT_ALL_FLAGS                                                    \
  (CT_ALLOW_DISCARDS | CT_SAME_CPU_CRYPT | CT_SUBMIT_FROM_CRYPT_CPUS     \
   | CT_NO_READ_WORKQUEUE | CT_NO_WRITE_WORKQUEUE | CT_IV_LARGE_SECTORS \
   | CT_HIGH_PRIORITY)

/* A cipher with white space could not be read back from the line.  The
 * device is informational (file= may well hold a space) and unchecked. */
static int
check_cipher (const char *cipher)
{
  const char *p;

  if (cipher == NULL || *cipher == '\0') {
    nbdkit_error ("table has no cipher");
    return -1;
  }
  for (p = cipher; *p; p++) {
    if (isspace ((unsigned char) *p)) {
      nbdkit_error ("table cipher '%s' contains white space", cipher);
      return -1;
    }
  }
  return 0;
}

/* The kernel refuses iv_offset (crypt_ctr) and length
 * (crypt_ctr_optional) off the encryption sector grid, and the block
 * layer refuses the device offset (queue limits), whether or not
 * iv_large_sectors is set. */
static int
check_aligned (const char *field, uint64_t sectors, unsigned sector_size)
{
  uint64_t sectors_per_block = sector_size / 512;

  if (sectors % sectors_per_block != 0) {
    nbdkit_error ("table %s %" PRIu64 " is not a multiple of sector_size "
                  "%u (%" PRIu64 " sectors of 512 bytes)",
                  field, sectors, sector_size, sectors_per_block);
    return -1;
  }
  return 0;
}

static int
check_sector_size (unsigned sector_size)
{
  if (sector_size < 512 || sector_size > 4096
      || (sector_size & (sector_size - 1)) != 0) {
    nbdkit_error ("table sector_size %u is invalid: must be a power of "
                  "two from 512 to 4096", sector_size);
    return -1;
  }
  return 0;
}

static int
check_geometry (const struct crypt_table *t)
{
  if (t->start != 0) {
    nbdkit_error ("table start must be 0, not %" PRIu64, t->start);
    return -1;
  }
  /* dm core refuses a zero-length target. */
  if (t->length == 0) {
    nbdkit_error ("table length must not be 0");
    return -1;
  }
  if (check_sector_size (t->sector_size) == -1
      || check_aligned ("length", t->length, t->sector_size) == -1
      || check_aligned ("iv_offset", t->iv_offset, t->sector_size) == -1
      || check_aligned ("offset", t->offset, t->sector_size) == -1)
    return -1;
  /* Byte offsets into the backing file must fit in 64 bits. */
  if (t->offset > UINT64_MAX / 512 - t->length) {
    nbdkit_error ("table offset %" PRIu64 " + length %" PRIu64
                  " sectors is beyond 2^64 bytes", t->offset, t->length);
    return -1;
  }
  return 0;
}

int
crypt_table_validate (const struct crypt_table *t)
{
  if (check_geometry (t) == -1 || check_cipher (t->cipher) == -1)
    return -1;
  if (t->flags & ~(unsigned) CT_ALL_FLAGS) {
    nbdkit_error ("table has unknown flags 0x%x",
                  t->flags & ~(unsigned) CT_ALL_FLAGS);
    return -1;
  }
  if (t->key_size > 0 && t->key == NULL) {
    nbdkit_error ("table key size is %zu bytes but the key is missing",
                  t->key_size);
    return -1;
  }
  /* An authenticated cipher is checked by the code that seals its
   * sectors (crypto/aead.h), which knows the MAC's share of the key. */
  if (t->integrity_tag_size != 0)
    return 0;
  return sector_cipher_check_spec (t->cipher, t->key_size);
}

int
crypt_table_copy (struct crypt_table *dst, const struct crypt_table *src)
{
  *dst = *src;
  dst->cipher = NULL;
  dst->device = NULL;
  dst->key = NULL;

  if ((src->cipher && (dst->cipher = strdup (src->cipher)) == NULL)
      || (src->device && (dst->device = strdup (src->device)) == NULL))
    goto fail;
  if (src->key != NULL && src->key_size > 0) {
    dst->key = secmem_dup (src->key, src->key_size);
    if (dst->key == NULL)
      goto fail;
  }
  return 0;

 fail:
  nbdkit_error ("crypt_table_copy: %m");
  crypt_table_free (dst);
  errno = ENOMEM;
  return -1;
}

void
crypt_table_free (struct crypt_table *t)
{
  if (t == NULL)
    return;
  secmem_free (t->key, t->key_size);
  free (t->cipher);
  free (t->device);
  memset (t, 0, sizeof *t);
}
