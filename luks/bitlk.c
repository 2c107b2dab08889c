/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A BitLocker volume through libcryptsetup: crypt_load with CRYPT_BITLK
 * reads the metadata and crypt_volume_key_get unwraps the full volume
 * encryption key with a passphrase, a recovery passphrase or a startup
 * key (.BEK) file, all in userspace.  The mapping is the one cryptsetup
 * 2.6 activates (lib/bitlk/bitlk.c, _activate): the whole device, the
 * metadata as zero segments, the moved volume header at sector 0 --
 * a layout no libcryptsetup call gives, so we read the metadata
 * ourselves (bitlk.h).  What cryptsetup refuses to activate, we refuse
 * by name. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "bitlk.h"
#include "internal.h"

#define SECTOR_BYTES 512

static int
read_metadata (const struct luks_unlock_params *p, struct bitlk_metadata *m)
{
  int fd = open (p->data_path, O_RDONLY | O_CLOEXEC);
  char why[256];
  int r;

  if (fd == -1) {
    nbdkit_error ("%s: %m", luks_data_name (p));
    return -1;
  }
  r = bitlk_read_metadata (luks_fd_read, &fd, m, why, sizeof why);
  close (fd);
  if (r == -1)
    nbdkit_error ("%s: cannot read the BitLocker metadata: %s",
                  luks_data_name (p), why);
  return r;
}

/* cryptsetup's _activate_check, and a volume no passphrase can open. */
static int
check_activatable (const struct luks_unlock_params *p,
                   const struct bitlk_metadata *m)
{
  const char *name = luks_data_name (p);
  const unsigned usable = BITLK_PROT_PASSPHRASE | BITLK_PROT_RECOVERY
                          | BITLK_PROT_STARTUP_KEY;

  if (!m->state_normal)
    nbdkit_error ("%s: BitLocker volume in an unsupported state (being "
                  "encrypted or decrypted) is not supported", name);
  else if (m->kind != BITLK_NORMAL)
    nbdkit_error ("%s: BitLocker %s volume is not supported", name,
                  m->kind == BITLK_EOW ? "encrypt-on-write"
                  : "unknown-type");
  else if (m->protections & BITLK_PROT_CLEAR_KEY)
    nbdkit_error ("%s: BitLocker volume with a clear key (partially "
                  "decrypted or protection suspended) is not supported",
                  name);
  else if (!(m->protections & usable))
    nbdkit_error ("%s: BitLocker volume protected only by %s is not "
                  "supported (a passphrase, recovery passphrase or "
                  "startup key is needed)", name,
                  m->protections & BITLK_PROT_SMART_CARD ? "a smart card"
                  : "TPM or unknown protectors");
  else
    return 0;
  return -1;
}

int
bitlk_load (struct crypt_device *cd, const struct luks_unlock_params *p)
{
  struct bitlk_metadata m;
  const char *why;
  int r;

  if (read_metadata (p, &m) == -1 || check_activatable (p, &m) == -1)
    return -1;
  r = crypt_load (cd, CRYPT_BITLK, NULL);
  if (r == 0)
    return 0;
  why = luks_log_last_error ();
  nbdkit_error ("%s: cannot load the BitLocker metadata: %s",
                luks_data_name (p), why ? why : strerror (-r));
  return -1;
}

int
bitlk_fill_params (struct crypt_device *cd,
                   const struct luks_unlock_params *p,
                   uint64_t data_size, struct crypt_table *t,
                   struct segment_list *segments)
{
  struct bitlk_metadata m;
  char why[256];

  if (p->key_slot != CRYPT_ANY_SLOT) {
    nbdkit_error ("key-slot: a BitLocker volume has no keyslots");
    return -1;
  }
  if (read_metadata (p, &m) == -1)
    return -1;
  if (bitlk_segments (&m, data_size, segments, why, sizeof why) == -1) {
    nbdkit_error ("%s: cannot map the BitLocker volume: %s",
                  luks_data_name (p), why);
    return -1;
  }
  if (m.volume_size != data_size / SECTOR_BYTES * SECTOR_BYTES)
    nbdkit_debug ("BitLocker volume size %" PRIu64 " does not match the "
                  "device size %" PRIu64, m.volume_size, data_size);
  /* The crypt segments' shared table: the whole device as itself. */
  t->start = 0;
  t->length = data_size / SECTOR_BYTES;
  t->offset = 0;
  t->iv_offset = 0;
  /* libcryptsetup 2.6 says 512 for every BitLocker volume. */
  t->sector_size = m.sector_size;
  t->flags = t->sector_size != SECTOR_BYTES ? CT_IV_LARGE_SECTORS : 0;
  return luks_set_cipher (cd, p, luks_name_mode_spec (cd), t);
}
