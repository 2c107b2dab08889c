/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is there a LUKS header at the start of an image?  Plain mode over a
 * LUKS image would overwrite the header with its first writes.  And
 * which format, by its magic: LUKS, FileVault2 or BitLocker. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "bitlk.h"
#include "fvault2.h"
#include "internal.h"
#include "luks.h"

/* LUKS1 and a LUKS2 primary header both start with it. */
static const char luks_magic[6] = { 'L', 'U', 'K', 'S', '\xba', '\xbe' };

/* Big-endian fields of the on-disk headers. */
static uint64_t
be (const unsigned char *p, int bytes)
{
  uint64_t v = 0;
  int i;

  for (i = 0; i < bytes; i++)
    v = v << 8 | p[i];
  return v;
}

/* LUKS1 (the LUKS On-Disk Format Specification 1.2.3, 2.4): the phdr's
 * key-bytes field at 108, eight 48-byte keyslots from 208, each with its
 * key material offset (512-byte sectors) at +40.  A keyslot's material
 * is key-bytes times 4000 stripes in whole sectors, whatever its state:
 * what cryptsetup 2.6 checks (LUKS_device_sectors in
 * lib/luks1/keymanage.c, with LUKS_STRIPES). */
static uint64_t
luks1_needs (const unsigned char *head)
{
  uint64_t key_bytes = be (head + 108, 4), end, needed = LUKS_HEAD_BYTES;
  int i;

  for (i = 0; i < 8; i++) {
    end = be (head + 208 + 48 * i + 40, 4) * 512
          + (key_bytes * 4000 + 511) / 512 * 512;
    if (end > needed)
      needed = end;
  }
  return needed;
}

int
luks_header_needs (const unsigned char *head, size_t n, uint64_t *needed)
{
  uint64_t hdr_size;

  if (n < 8 || memcmp (head, luks_magic, sizeof luks_magic) != 0)
    return 0;
  if (be (head + 6, 2) == 1) {
    *needed = n < LUKS_HEAD_BYTES ? LUKS_HEAD_BYTES : luks1_needs (head);
    return 1;
  }
  /* LUKS2 (On-Disk Format Specification 1.1.x): hdr_size at 8, the
   * binary header (4096 bytes) and the JSON area after it. */
  hdr_size = n < 16 ? 0 : be (head + 8, 8);
  *needed = hdr_size < 4096 ? 4096 : hdr_size;
  return 2;
}

/* The first bytes of PATH into HEAD: how many (short for a small
 * file), or -1 with errno. */
static ssize_t
read_head (const char *path, char *head, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd == -1)
    return -1;
  n = pread (fd, head, size, 0);
  close (fd);
  return n;
}

int
luks_probe_format (const char *path, enum luks_type *type)
{
  char head[FVAULT2_HEADER_BYTES];
  ssize_t n = read_head (path, head, sizeof head);

  if (n == -1)
    return -1;
  if ((size_t) n >= sizeof luks_magic
      && memcmp (head, luks_magic, sizeof luks_magic) == 0)
    *type = LUKS_ANY;
  else if (fvault2_has_magic (head, n))
    *type = LUKS_FVAULT2;
  else if (bitlk_has_magic (head, n))
    *type = LUKS_BITLK;
  else
    return 0;
  return 1;
}

int
luks_probe_header (const char *path, uint64_t *data_offset)
{
  struct crypt_device *cd = NULL;
  enum luks_type type;
  int r = luks_probe_format (path, &type);

  *data_offset = 0;
  if (r != 1 || type != LUKS_ANY)
    return r == -1 ? -1 : 0;
  luks_log_start ();
  /* Off, so that loading never repairs (writes) the header. */
  crypt_metadata_locking (NULL, 0);
  if (crypt_init (&cd, path) == 0 && crypt_load (cd, CRYPT_LUKS, NULL) == 0)
    *data_offset = crypt_get_data_offset (cd) * 512;
  crypt_free (cd);
  return 1;
}

const char *
luks_format_name (enum luks_type type)
{
  switch (type) {
  case LUKS_FVAULT2: return "FileVault2";
  case LUKS_BITLK: return "BitLocker";
  case LUKS_TCRYPT: return "TCRYPT";
  case LUKS_V1: return "LUKS1";
  case LUKS_V2: return "LUKS2";
  default: return "LUKS";
  }
}

const char *
luks_format_param (enum luks_type type)
{
  switch (type) {
  case LUKS_FVAULT2: return "fvault2";
  case LUKS_BITLK: return "bitlk";
  case LUKS_TCRYPT: return "tcrypt";
  case LUKS_V1: return "luks1";
  case LUKS_V2: return "luks2";
  default: return "luks";
  }
}
