/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Answers control requests: the data behind dmcryptctl's info, table,
 * status, and the commands that change the volume.  Presentation is the
 * tool's job; this file sends raw fields (docs/control.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../backend/integrity.h"
#include "control.h"

#define READ_AHEAD_SECTORS 256      /* what dmsetup shows for dm-crypt */

/* What image_lock_find_instance (lock/lock.h) compares: another
 * instance finding the image locked asks who holds it. */
void
ctlcmd_init (struct volume_control *c)
{
  const char *file = volume_image_file (c->volume);

  c->image_known = file && stat (file, &c->image_st) == 0;
}

static void
add_image_identity (const struct volume_control *c, struct ctl_message *rep)
{
  const struct stat *st = &c->image_st;

  if (!c->image_known)
    return;
  ctl_addf (rep, "image_dev", "%" PRIu64, (uint64_t) st->st_dev);
  ctl_addf (rep, "image_ino", "%" PRIu64, (uint64_t) st->st_ino);
  ctl_addf (rep, "image_rdev", "%" PRIu64, S_ISBLK (st->st_mode)
            ? (uint64_t) st->st_rdev : (uint64_t) 0);
}

static const char *
volume_type (const struct dmcrypt_volume *v)
{
  if (v->params.type == VT_INTEGRITY)
    return "integrity";
  if (!v->is_luks)
    return "plain";
  if (strcmp (v->luks.type, "TCRYPT") == 0)
    return "tcrypt";
  if (strcmp (v->luks.type, "LOOPAES") == 0)
    return "loopaes";
  if (v->luks.version == 0)
    return strcmp (v->luks.type, "BITLK") == 0 ? "bitlk" : "fvault2";
  return v->luks.version == 1 ? "luks1" : "luks2";
}

/* cryptsetup's UUID of an active device: CRYPT-<type>-<uuid without
 * dashes>-<name>, type as libcryptsetup names it (LUKS2, FVAULT2);
 * CRYPT-BITLK-<name> for BitLocker.
 * Plain volumes have none, as after dmsetup create. */
static void
add_uuid (const struct volume_control *c, struct ctl_message *rep)
{
  const struct dmcrypt_volume *v = c->volume;
  char hex[sizeof v->luks.uuid];
  size_t i, n = 0;

  if (!v->is_luks)
    return;
  for (i = 0; v->luks.uuid[i] && n + 1 < sizeof hex; i++)
    if (v->luks.uuid[i] != '-')
      hex[n++] = v->luks.uuid[i];
  hex[n] = '\0';
  /* TCRYPT headers have no UUID, loop-AES has no header, and
   * cryptsetup 2.6 activates BitLocker without the volume's GUID:
   * CRYPT-<type>-<name>. */
  if (n == 0 || strcmp (v->luks.type, "BITLK") == 0)
    ctl_addf (rep, "uuid", "CRYPT-%s-%s", v->luks.type, c->sock.name);
  else
    ctl_addf (rep, "uuid", "CRYPT-%s-%s-%s", v->luks.type, hex,
              c->sock.name);
}

/* The keyslot that opened and those in use ("0,1"), for info -o
 * keyslot,keyslots; LUKS only: FileVault2 and plain have none. */
static void
add_key_slots (const struct dmcrypt_volume *v, struct ctl_message *rep)
{
  char list[LUKS_KEY_SLOT_LIST_SIZE];

  if (!v->is_luks || v->luks.version == 0)
    return;
  luks_key_slot_list (v->luks.key_slots, ",", list, sizeof list);
  ctl_addf (rep, "key_slot", "%d", v->luks.key_slot);
  ctl_add (rep, "key_slots", list);
}

static int
cmd_info (const struct volume_control *c, struct ctl_message *rep)
{
  const struct dmcrypt_volume *v = c->volume;
  struct dm_state s;

  dm_get_state (v->dm, &s);
  ctl_add (rep, "name", c->sock.name);
  ctl_add (rep, "type", volume_type (v));
  ctl_add (rep, "image", v->image);
  add_uuid (c, rep);
  add_key_slots (v, rep);
  ctl_addf (rep, "suspended", "%d", s.suspended);
  ctl_addf (rep, "readonly", "%d", s.readonly);
  ctl_addf (rep, "live", "%d", 1);
  ctl_addf (rep, "inactive", "%d", s.inactive);
  ctl_addf (rep, "open", "%u", s.open);
  /* dm-crypt raises no dm events: the kernel shows 0, even after a
   * table swap. */
  ctl_addf (rep, "event", "%u", 0u);
  /* No kernel block device exists: no major and minor to show. */
  ctl_addf (rep, "major", "%u", 0u);
  ctl_addf (rep, "minor", "%u", 0u);
  ctl_addf (rep, "targets", "%u", s.targets);
  ctl_addf (rep, "read_ahead", "%u", READ_AHEAD_SECTORS);
  ctl_addf (rep, "key_valid", "%d", s.key_valid);
  ctl_addf (rep, "inflight", "%u", s.inflight);
  ctl_addf (rep, "pid", "%ld", (long) getpid ());
  add_image_identity (c, rep);
  return 0;
}

/* The dm-integrity device under the mapping, as cryptsetup's "_dif"
 * device (or integritysetup's device alone) shows in dmsetup: its table
 * line ("0 LEN integrity DEV OFFSET TAG MODE #opts ...") or its status
 * line ("0 LEN integrity MISMATCHES PROVIDED RECALC").  Empty without. */
static void
integrity_line (const struct dmcrypt_volume *v, bool table, char *line,
                size_t size)
{
  const struct integrity_dev *d;
  char rest[512];

  line[0] = '\0';
  if (v->integrity == NULL)
    return;
  d = backend_integrity_dev (v->integrity);
  if (table)
    integrity_table (d, rest, sizeof rest);
  else
    integrity_status (d, rest, sizeof rest);
  if (table)
    snprintf (line, size, "0 %" PRIu64 " integrity %s %s",
              integrity_data_sectors (d), v->device_field, rest);
  else
    snprintf (line, size, "0 %" PRIu64 " integrity %s",
              integrity_data_sectors (d), rest);
}

/* integritysetup's device alone: no crypt target above it. */
static bool
integrity_alone (const struct dmcrypt_volume *v)
{
  return v->integrity != NULL && v->params.type == VT_INTEGRITY;
}

/* Beside the mapping's own lines ("table", "status"), those of the
 * dm-integrity device under it ("table_dif", "status_dif"), which
 * dmcryptctl shows as dmsetup shows NAME_dif; the device alone answers
 * in KEY. */
static int
add_integrity_line (const struct dmcrypt_volume *v, const char *key,
                    struct ctl_message *rep)
{
  char line[PATH_MAX + 1024], dif_key[32];

  integrity_line (v, strcmp (key, "table") == 0, line, sizeof line);
  if (line[0] == '\0')
    return 0;
  if (integrity_alone (v))
    return ctl_add (rep, key, line);
  snprintf (dif_key, sizeof dif_key, "%s_dif", key);
  return ctl_add (rep, dif_key, line);
}

static int
cmd_table (const struct dmcrypt_volume *v, const struct ctl_message *req,
           struct ctl_message *rep)
{
  struct dm_mapping *dm = v->dm;
  char *lines = dm_format_table (dm, ctl_get_bool (req, "inactive"),
                                 ctl_get_bool (req, "showkeys"));
  char *line, *next;
  int r = 0;

  /* No inactive table: dmsetup prints nothing and succeeds. */
  if (lines == NULL)
    return errno == ENXIO ? 0 : -1;
  if (integrity_alone (v)) {
    crypt_table_free_line (lines);
    return ctl_get_bool (req, "inactive") ? 0
      : add_integrity_line (v, "table", rep);
  }
  /* A field per segment, in order: a value holds no newline. */
  for (line = lines; r == 0 && line; line = next) {
    if ((next = strchr (line, '\n')) != NULL)
      *next++ = '\0';
    r = ctl_add (rep, "table", line);
  }
  crypt_table_free_line (lines);
  if (r == 0 && !ctl_get_bool (req, "inactive"))
    r = add_integrity_line (v, "table", rep);
  return r;
}

static void
add_stats (struct dm_mapping *dm, struct ctl_message *rep)
{
  struct engine_stats st;
  struct dm_state s;

  dm_get_state (dm, &s);
  dm_get_stats (dm, &st);
#define U64(f) ctl_addf (rep, "stat." #f, "%" PRIu64, (uint64_t) st.f)
  U64 (reads); U64 (writes); U64 (zeros); U64 (trims); U64 (flushes);
  U64 (read_bytes); U64 (write_bytes); U64 (read_chunks);
  U64 (write_chunks); U64 (inline_chunks); U64 (worker_chunks);
  U64 (batched_chunks);
  U64 (dispatches); U64 (sequential); U64 (rounds); U64 (rmw_sectors);
  U64 (errors); U64 (buffer_waits); U64 (inflight_max);
  U64 (worker_depth_max); U64 (writeout_depth_max); U64 (batch_max);
  U64 (buffers_max); U64 (decrypt_sample_ns); U64 (decrypt_sample_bytes);
  U64 (encrypt_sample_ns); U64 (encrypt_sample_bytes);
#undef U64
  ctl_addf (rep, "stat.inflight", "%u", s.inflight);
  ctl_addf (rep, "stat.open", "%u", s.open);
  ctl_add (rep, "stat.scheduler", s.scheduler);
  ctl_add (rep, "stat.cipher_library", s.cipher_library);
  ctl_addf (rep, "stat.workers", "%u", s.workers);
}

static int
cmd_status (const struct dmcrypt_volume *v, const struct ctl_message *req,
            struct ctl_message *rep)
{
  struct dm_mapping *dm = v->dm;
  const struct segment_list *l = dm_segments (dm);
  struct dm_state s;
  unsigned i;

  /* The kernel's crypt_status for STATUSTYPE_INFO emits nothing, and
   * dm-zero has no status at all, so each line ends with the
   * separating space; a line per segment, as dmsetup status. */
  dm_get_state (dm, &s);
  if (l == NULL && !integrity_alone (v))
    ctl_addf (rep, "status", "0 %" PRIu64 " crypt ", s.length);
  add_integrity_line (v, "status", rep);
  for (i = 0; l && i < l->count; i++)
    ctl_addf (rep, "status", "%" PRIu64 " %" PRIu64 " %s ", l->seg[i].start,
              l->seg[i].length,
              l->seg[i].type == SEGMENT_ZERO ? "zero"
              : l->seg[i].type == SEGMENT_LINEAR ? "linear" : "crypt");
  if (ctl_get_bool (req, "stats"))
    add_stats (dm, rep);
  /* Sectors whose tag did not verify: dm-integrity's status counts its
   * own mismatches; dm-crypt's AEAD failures only reach the log. */
  if (ctl_get_bool (req, "stats") && v->integrity)
    ctl_addf (rep, "stat.integrity_failures", "%" PRIu64,
              backend_integrity_failures (v->integrity));
  return 0;
}

static int
cmd_reload (struct dm_mapping *dm, const struct ctl_message *req,
            struct dm_err *err)
{
  struct dm_reload r = {
    .line = ctl_get (req, "table"),
    .readonly = ctl_get_bool (req, "readonly"),
    .force = ctl_get_bool (req, "force"),
    .tun.scheduler = ctl_get (req, "scheduler"),
  };
  uint64_t workers;

  if (r.line == NULL) {
    dm_fail (err, EINVAL, "reload: no table given");
    return -1;
  }
  if (ctl_get (req, "workers")) {
    if (ctl_get_u64 (req, "workers", &workers) == -1
        || workers > DM_MAX_WORKERS) {
      dm_fail (err, EINVAL, "workers: must be between 1 and %d",
               DM_MAX_WORKERS);
      return -1;
    }
    r.tun.set_workers = true;
    r.tun.workers = workers;
  }
  return dm_reload (dm, &r, err);
}

static int
cmd_message (struct dm_mapping *dm, const struct ctl_message *req,
             struct dm_err *err)
{
  const char *text = ctl_get (req, "text");
  uint64_t sector;

  if (text == NULL || ctl_get_u64 (req, "sector", &sector) == -1) {
    dm_fail (err, EINVAL, "message: sector and text are needed");
    return -1;
  }
  return dm_message (dm, sector, text, err);
}

static int
run (const struct volume_control *c, const char *op,
     const struct ctl_message *req, struct ctl_message *rep,
     struct dm_err *err)
{
  struct dm_mapping *dm = c->volume->dm;

  if (strcmp (op, "info") == 0)
    return cmd_info (c, rep);
  if (strcmp (op, "table") == 0)
    return cmd_table (c->volume, req, rep);
  if (strcmp (op, "status") == 0)
    return cmd_status (c->volume, req, rep);
  if (strcmp (op, "reload") == 0)
    return cmd_reload (dm, req, err);
  if (strcmp (op, "clear") == 0) {
    dm_clear (dm);
    return 0;
  }
  if (strcmp (op, "suspend") == 0)
    return dm_suspend (dm, ctl_get_bool (req, "noflush"), err);
  if (strcmp (op, "resume") == 0)
    return dm_resume (dm, err);
  if (strcmp (op, "message") == 0)
    return cmd_message (dm, req, err);
  dm_fail (err, EINVAL, "unknown operation '%.32s'", op);
  return -1;
}

void
ctlcmd_dispatch (struct volume_control *c, const struct ctl_message *req,
                 struct ctl_message *rep)
{
  struct dm_err err = { .errnum = 0 };
  const char *op = ctl_get (req, "op");

  if (op == NULL)
    dm_fail (&err, EINVAL, "no operation given");
  else if (run (c, op, req, rep, &err) == 0) {
    ctl_add (rep, "result", "0");
    return;
  }
  else if (err.errnum == 0)
    dm_fail (&err, errno ? errno : EIO, "%s failed: %s", op,
               strerror (errno ? errno : EIO));
  /* A failed command's reply holds nothing but the error. */
  explicit_bzero (rep->buf, rep->len);
  rep->len = 0;
  ctl_add (rep, "result", "-1");
  ctl_addf (rep, "errno", "%d", err.errnum);
  ctl_add (rep, "error", err.msg);
}
