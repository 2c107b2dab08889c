/* SPDX-License-Identifier: GPL-2.0-or-later */
/* luks_unlock: load a LUKS1/LUKS2 header or FileVault2 metadata with
 * libcryptsetup, refuse what a single dm-crypt table cannot map, unlock
 * a keyslot, fill the table.
 *
 * Nothing is ever written to the image or the header.  libcryptsetup
 * 2.6 repairs a damaged LUKS2 header copy inside crypt_load (a write);
 * LUKS2_disk_hdr_read skips that repair when metadata locking is off,
 * so locking is turned off for the whole process.  It would also need
 * a lock directory (/run/cryptsetup) that ordinary users cannot write.
 * The reads themselves use O_RDONLY descriptors; only activation and
 * header writes open the device read-write, and we do neither. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "internal.h"
#include "luks.h"

/* The smallest header libcryptsetup reads: one LUKS2 binary header. */
#define LUKS_MIN_HEADER_BYTES 4096

static const char *
header_path (const struct luks_unlock_params *p)
{
  return p->header_path ? p->header_path : p->data_path;
}

/* What messages call the header. */
static const char *
header_name (const struct luks_unlock_params *p)
{
  return p->header_path ? p->header_path : luks_data_name (p);
}

static int
check_params (const struct luks_unlock_params *p)
{
  if (p->data_path == NULL)
    {
      nbdkit_error ("luks: no data file given");
      return -1;
    }
  /* Neither: the header's tokens (token.c). */
  if (p->passphrase != NULL && p->keyfile != NULL)
    {
      nbdkit_error ("luks: give either a passphrase or a key file");
      return -1;
    }
  if (p->key_slot < CRYPT_ANY_SLOT)
    {
      nbdkit_error ("key-slot %d is out of range", p->key_slot);
      return -1;
    }
  return 0;
}

/* An open failure with errno is clearer than libcryptsetup's "does not
 * exist or access denied". */
static int
check_readable (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd == -1)
    {
      nbdkit_error ("%s: %m", path);
      return -1;
    }
  close (fd);
  return 0;
}

static int
init_device (const struct luks_unlock_params *p, struct crypt_device **cd)
{
  const char *why;
  int r;

  if (check_readable (p->data_path) == -1
      || (p->header_path && check_readable (p->header_path) == -1))
    return -1;
  if (p->header_path)
    r = crypt_init_data_device (cd, p->header_path, p->data_path);
  else
    r = crypt_init (cd, p->data_path);
  if (r < 0)
    {
      why = luks_log_last_error ();
      nbdkit_error ("%s: cannot open: %s", header_name (p),
                    why ? why : strerror (-r));
      return -1;
    }
  return 0;
}

static bool
shorter_than_a_header (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0 && st.st_size < LUKS_MIN_HEADER_BYTES;
}

static const char *
type_name (enum luks_type type)
{
  return type == LUKS_V1 ? CRYPT_LUKS1 : CRYPT_LUKS2;
}

/* LUKS_DETECT: FileVault2 when its magic is there; otherwise it stays
 * LUKS_DETECT, which loads as LUKS_ANY: libcryptsetup finds a LUKS2
 * image by its secondary header when the primary one is gone.  A
 * detached header can only be LUKS. */
static int
detect_type (struct luks_unlock_params *p)
{
  enum luks_type found;
  int r;

  if (p->type != LUKS_DETECT || p->header_path)
    return 0;
  r = luks_probe_format (p->data_path, &found);
  if (r == -1)
    {
      nbdkit_error ("%s: %m", luks_data_name (p));
      return -1;
    }
  if (r == 1 && (found == LUKS_FVAULT2 || found == LUKS_BITLK))
    p->type = found;
  return 0;
}

/* FileVault2 and BitLocker keep their metadata on the volume. */
static int
check_no_header (const struct luks_unlock_params *p)
{
  if (p->header_path == NULL
      || (p->type != LUKS_FVAULT2 && p->type != LUKS_BITLK))
    return 0;
  nbdkit_error ("header: a %s volume has no detached header",
                p->type == LUKS_BITLK ? "BitLocker" : "FileVault2");
  return -1;
}

/* A header file shorter than its own LUKS header says it is: named
 * truncated, where libcryptsetup says "Input/output error" (a LUKS2
 * JSON area cut short) or nothing at all (a LUKS1 header cut short);
 * where it says "too small", that stands.  Returns true after the
 * error line. */
static bool
report_truncated (const struct luks_unlock_params *p)
{
  unsigned char head[LUKS_HEAD_BYTES];
  uint64_t needed;
  off_t size;
  ssize_t n;
  int fd = open (header_path (p), O_RDONLY | O_CLOEXEC), version;

  if (fd == -1)
    return false;
  n = pread (fd, head, sizeof head, 0);
  size = lseek (fd, 0, SEEK_END);    /* a block device's size too */
  close (fd);
  if (n < 0 || size < 0
      || (version = luks_header_needs (head, n, &needed)) == 0
      || (uint64_t) size >= needed)
    return false;
  nbdkit_error ("%s: truncated: %jd bytes, where its LUKS%d header needs "
                "%" PRIu64, header_name (p), (intmax_t) size, version,
                needed);
  return true;
}

/* A look-alike (luks_lookalike) is named before libcryptsetup says
 * only "not a LUKS device".  Returns true after the error line. */
static bool
report_lookalike (const struct luks_unlock_params *p)
{
  char what[256];

  if (luks_lookalike (header_path (p), what, sizeof what) != 1)
    return false;
  nbdkit_error ("%s: %s", header_name (p), what);
  return true;
}

/* Loads whatever LUKS version is there, then compares with the one asked
 * for: crypt_load with a version would fail without saying why. */
static int
load_header (struct crypt_device *cd, const struct luks_unlock_params *p)
{
  const char *why, *found;
  int r;

  if (p->type == LUKS_FVAULT2)
    return fvault2_load (cd, p);
  if (p->type == LUKS_BITLK)
    return bitlk_load (cd, p);
  if (report_lookalike (p))
    return -1;
  r = crypt_load (cd, CRYPT_LUKS, NULL);
  if (r < 0)
    {
      why = luks_log_last_error ();
      if ((why == NULL || r == -EIO) && report_truncated (p))
        ;
      else if (why)
        nbdkit_error ("%s: cannot load the LUKS header: %s",
                      header_name (p), why);
      /* Silent -EINVAL: no LUKS magic.  -EIO: a file too short to read
       * a header from. */
      else if (r == -EINVAL
               || (r == -EIO && shorter_than_a_header (header_path (p))))
        nbdkit_error ("%s: not a LUKS header%s", header_name (p),
                      p->type == LUKS_DETECT && p->header_path == NULL
                      ? ", nor a FileVault2 or BitLocker volume (tried "
                        "LUKS1, LUKS2, FileVault2 and BitLocker; "
                        "TrueCrypt/VeraCrypt has no magic and needs "
                        "type=tcrypt; plain mode needs table= or cipher=)"
                      : "");
      else
        nbdkit_error ("%s: cannot load the LUKS header: %s",
                      header_name (p), strerror (-r));
      return -1;
    }
  found = crypt_get_type (cd);
  if (p->type != LUKS_ANY && p->type != LUKS_DETECT
      && strcmp (found, type_name (p->type)) != 0)
    {
      nbdkit_error ("%s: not a %s header (found %s)", header_name (p),
                    type_name (p->type), found);
      return -1;
    }
  return 0;
}

/* The keyslots in use, as a bit mask: what cryptsetup luksDump lists
 * (LUKS1: "Key Slot N: ENABLED"; LUKS2: every slot under "Keyslots:",
 * unbound ones excepted, which cannot open the data). */
static uint32_t
slots_in_use (struct crypt_device *cd)
{
  int max = crypt_keyslot_max (crypt_get_type (cd)), i;
  uint32_t mask = 0;

  for (i = 0; i < max && i < 32; i++)
    switch (crypt_keyslot_status (cd, i))
      {
      case CRYPT_SLOT_ACTIVE:
      case CRYPT_SLOT_ACTIVE_LAST:
        mask |= UINT32_C (1) << i;
        break;
      default:
        break;
      }
  return mask;
}

void
luks_key_slot_list (uint32_t key_slots, const char *sep, char *buf,
                    size_t buf_size)
{
  size_t n = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; i < 32 && n < buf_size; i++)
    if (key_slots & (UINT32_C (1) << i))
      n += snprintf (buf + n, buf_size - n, "%s%d", n ? sep : "", i);
}

static void
debug_slots (const struct luks_info *info)
{
  char list[LUKS_KEY_SLOT_LIST_SIZE];

  luks_key_slot_list (info->key_slots, " ", list, sizeof list);
  nbdkit_debug ("%s keyslots in use: %s", info->type, list);
  /* cryptsetup -v open's own words. */
  nbdkit_debug ("Key slot %d unlocked.", info->key_slot);
}

static void
fill_info (struct crypt_device *cd, int key_slot, struct luks_info *info)
{
  const char *uuid = crypt_get_uuid (cd), *type = crypt_get_type (cd);

  info->version = strcmp (type, CRYPT_LUKS1) == 0 ? 1
                  : strcmp (type, CRYPT_LUKS2) == 0 ? 2 : 0;
  snprintf (info->type, sizeof info->type, "%s", type);
  snprintf (info->uuid, sizeof info->uuid, "%s", uuid ? uuid : "");
  info->key_slot = key_slot;
  if (info->version != 0)
    {
      info->key_slots = slots_in_use (cd);
      debug_slots (info);
    }
}

static int
fill_params (struct crypt_device *cd, const struct luks_unlock_params *p,
             uint64_t data_size, struct crypt_table *t,
             struct luks_info *info)
{
  if (strcmp (crypt_get_type (cd), CRYPT_LUKS2) == 0)
    switch (luks2_reenc_unlock (cd, p, data_size, t, info))
      {
      case 0: break;
      case 1: return 1;
      default: return -1;
      }
  if (p->type == LUKS_FVAULT2)
    return fvault2_fill_params (cd, p, data_size, t);
  if (p->type == LUKS_BITLK)
    return bitlk_fill_params (cd, p, data_size, t, &info->segments);
  return luks_fill_params (cd, p, data_size, t, info);
}

int
luks_unlock (const struct luks_unlock_params *p_given, uint64_t data_size,
             struct crypt_table *t, struct luks_info *info)
{
  struct luks_unlock_params params = *p_given, *p = &params;
  struct crypt_device *cd = NULL;
  int key_slot = -1, r = 0;

  if (p->type == LUKS_TCRYPT)
    return tcrypt_unlock (p, data_size, t, info);
  memset (t, 0, sizeof *t);
  memset (info, 0, sizeof *info);
  if (check_params (p) == -1 || check_readable (p->data_path) == -1
      || detect_type (p) == -1
      || check_no_header (p) == -1)
    return -1;
  luks_log_start ();
  /* Never fails when disabling.  With it off, nothing writes: that is
     all P->readonly needs. */
  crypt_metadata_locking (NULL, 0);
  if (init_device (p, &cd) == -1)
    return -1;
  /* Parameters before the key: a refusal should not cost a PBKDF run.
   * A re-encryption's tables come with their keys (1). */
  if (load_header (cd, p) == -1
      || (r = fill_params (cd, p, data_size, t, info)) == -1
      || (r == 0 && (key_slot = luks_fetch_key (cd, p, t)) == -1))
    {
      crypt_free (cd);
      crypt_table_free (t);
      crypt_table_free (&info->second);
      return -1;
    }
  fill_info (cd, r == 1 ? info->key_slot : key_slot, info);
  crypt_free (cd);
  return 0;
}
