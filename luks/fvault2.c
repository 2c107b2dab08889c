/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A FileVault2 volume through libcryptsetup: crypt_load with
 * CRYPT_FVAULT2 reads the metadata and, given the passphrase,
 * crypt_volume_key_get unwraps the volume key, all in userspace.  The
 * table is the one cryptsetup 2.6 activates (lib/fvault2/fvault2.c,
 * _activate): aes-xts-plain64 with the 2 x 128-bit key, 512-byte
 * sectors, IV offset 0, the data offset crypt_get_data_offset gives
 * and the logical volume's size, which we read ourselves (fvault2.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "fvault2.h"
#include "internal.h"

#define SECTOR_BYTES 512

/* Our own reading of the metadata in P's data file; -1 with WHY. */
static int
read_layout (const struct luks_unlock_params *p, struct fvault2_layout *l,
             char *why, size_t why_size)
{
  int fd = open (p->data_path, O_RDONLY | O_CLOEXEC);
  int r;

  if (fd == -1) {
    snprintf (why, why_size, "%s", strerror (errno));
    return -1;
  }
  r = fvault2_read_layout (luks_fd_read, &fd, l, why, why_size);
  close (fd);
  return r;
}

/* Our reading first: it names what is wrong (libcryptsetup says it in
 * its debug log only), and metadata it refuses never reaches
 * libcryptsetup, whose bounds checks are weaker (fvault2-block.c). */
int
fvault2_load (struct crypt_device *cd, const struct luks_unlock_params *p)
{
  struct fvault2_layout l;
  const char *lib_why;
  char why[256];
  int r;

  if (read_layout (p, &l, why, sizeof why) == 0) {
    r = crypt_load (cd, CRYPT_FVAULT2, NULL);
    if (r == 0)
      return 0;
    lib_why = luks_log_last_error ();
    snprintf (why, sizeof why, "%s", lib_why ? lib_why : strerror (-r));
  }
  nbdkit_error ("%s: cannot load the FileVault2 metadata: %s",
                luks_data_name (p), why);
  return -1;
}

/* The logical volume must lie where libcryptsetup says and fit in the
 * image: device_block_adjust refuses a mapping past the device's end. */
static int
check_layout (const struct luks_unlock_params *p,
              const struct fvault2_layout *l, uint64_t data_offset,
              uint64_t data_size)
{
  if (l->volume_offset != data_offset) {
    nbdkit_error ("%s: FileVault2 metadata gives the logical volume at "
                  "byte %" PRIu64 ", libcryptsetup at %" PRIu64,
                  luks_data_name (p), l->volume_offset, data_offset);
    return -1;
  }
  if (l->volume_size / SECTOR_BYTES == 0
      || data_offset > data_size
      || l->volume_size / SECTOR_BYTES > (data_size - data_offset)
                                         / SECTOR_BYTES) {
    nbdkit_error ("%s: image too small for its FileVault2 logical volume "
                  "(%" PRIu64 " bytes, the volume is %" PRIu64 " bytes "
                  "at byte %" PRIu64 ")", luks_data_name (p), data_size,
                  l->volume_size, data_offset);
    return -1;
  }
  return 0;
}

int
fvault2_fill_params (struct crypt_device *cd,
                     const struct luks_unlock_params *p,
                     uint64_t data_size, struct crypt_table *t)
{
  struct fvault2_layout l;
  char why[256];

  if (p->key_slot != CRYPT_ANY_SLOT) {
    nbdkit_error ("key-slot: a FileVault2 volume has no keyslots");
    return -1;
  }
  if (read_layout (p, &l, why, sizeof why) == -1) {
    nbdkit_error ("%s: cannot read the FileVault2 metadata: %s",
                  luks_data_name (p), why);
    return -1;
  }
  t->offset = crypt_get_data_offset (cd);
  if (check_layout (p, &l, t->offset * SECTOR_BYTES, data_size) == -1)
    return -1;
  t->start = 0;
  t->length = l.volume_size / SECTOR_BYTES;
  t->iv_offset = crypt_get_iv_offset (cd);
  t->sector_size = crypt_get_sector_size (cd);
  t->flags = 0;
  return luks_set_cipher (cd, p, luks_name_mode_spec (cd), t);
}
