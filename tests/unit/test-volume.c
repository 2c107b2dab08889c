/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The volume both front ends share (volume/volume.h) without nbdkit: a
 * plain table over a temporary file opened, requests through its data
 * path (volume_io) checked against OpenSSL's AES-XTS on the file's
 * bytes, its errors, its connections; the image lock between volumes
 * (one writer or many readers, the reason named, the locks following a
 * reload); the filter's volume over a layer below, which takes no lock;
 * and the control server answering dmcryptctl's requests. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../../backend/submitter.h"
#include "../../volume/control/control.h"
#include "../../volume/volume.h"
#include "../nbdkit-stubs.h"
#include "check.h"

#define IMAGE_BYTES (4 * 1024 * 1024)
#define OFFSET_SECTORS 8             /* offset=: the data starts at 4 KiB */
#define IV_OFFSET 16                 /* iv-offset=, 512-byte sectors */
#define DATA_BYTES (IMAGE_BYTES - OFFSET_SECTORS * 512)
#define KEY_HEX                                                          \
  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"     \
  "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"

static char dir[] = "/tmp/dmcrypt-volume-XXXXXX";
static char image[300];

/* A plugin's volume of IMAGE, plain aes-xts-plain64, with the extra
 * KEY=VALUE pairs of EXTRA (NULL-terminated; NULL for none), opened;
 * NULL when volume_open failed (the volume freed). */
static struct dmcrypt_volume *
open_plain (const char *const *extra)
{
  struct dmcrypt_volume *v = volume_new (false);
  char offset[16], iv_offset[16];
  size_t i;

  REQUIRE (v, "volume_new");
  snprintf (offset, sizeof offset, "%d", OFFSET_SECTORS);
  snprintf (iv_offset, sizeof iv_offset, "%d", IV_OFFSET);
  REQUIRE (params_config (&v->params, "file", image) == 0
           && params_config (&v->params, "cipher", "aes-xts-plain64") == 0
           && params_config (&v->params, "key", KEY_HEX) == 0
           && params_config (&v->params, "offset", offset) == 0
           && params_config (&v->params, "iv-offset", iv_offset) == 0,
           "parameters: %s", stub_last_error ());
  for (i = 0; extra && extra[i]; i += 2)
    REQUIRE (params_config (&v->params, extra[i], extra[i + 1]) == 0,
             "%s: %s", extra[i], stub_last_error ());
  stub_errors_reset ();
  if (volume_open (v) == 0)
    return v;
  volume_free (v);
  return NULL;
}

#define KV(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* The plaintext of COUNT bytes at byte OFFSET of the mapping, from the
 * image's bytes decrypted by OpenSSL itself: aes-xts-plain64 with the
 * IV the little-endian 512-byte sector number plus iv-offset. */
static void
decrypt_image (uint8_t *out, size_t count, uint64_t offset)
{
  uint8_t key[64], sector[512], iv[16];
  uint64_t first = offset / 512, last = (offset + count - 1) / 512, s, n;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new ();
  int fd = open (image, O_RDONLY), len, i;
  size_t at, from;

  REQUIRE (ctx && fd >= 0, "openssl, open");
  for (i = 0; i < 64; i++)
    key[i] = i;
  for (s = first; s <= last; s++) {
    REQUIRE (pread (fd, sector, 512, (OFFSET_SECTORS + s) * 512) == 512,
             "pread");
    memset (iv, 0, sizeof iv);
    n = s + IV_OFFSET;
    for (i = 0; i < 8; i++)
      iv[i] = n >> (8 * i);
    REQUIRE (EVP_DecryptInit_ex (ctx, EVP_aes_256_xts (), NULL, key, iv)
             && EVP_DecryptUpdate (ctx, sector, &len, sector, 512), "xts");
    from = s == first ? offset % 512 : 0;
    at = s * 512 + from - offset;
    memcpy (out + at, sector + from,
            (count - at < 512 - from ? count - at : 512 - from));
  }
  close (fd);
  EVP_CIPHER_CTX_free (ctx);
}

static int
io (struct dmcrypt_conn *c, enum io_op op, void *buf, uint32_t count,
    uint64_t offset)
{
  int err = 0;

  if (volume_io (c, op, buf, count, offset, false, &err) == 0)
    return 0;
  errno = err;
  return -1;
}

static void
test_request_path (void)
{
  struct dmcrypt_volume *v = open_plain (NULL);
  struct dmcrypt_conn *c1, *c2;
  uint8_t *data = malloc (65536), *back = malloc (65536);
  uint32_t min, pref;
  struct dm_state s;
  char *real = realpath (image, NULL);
  size_t i;

  REQUIRE (v && data && back && real, "open: %s", stub_last_error ());
  CHECK (dm_size (v->dm) == DATA_BYTES);
  CHECK (strcmp (v->image, image) == 0);
  CHECK (strcmp (v->device_field, real) == 0);
  CHECK (v->params.type == VT_PLAIN);
  REQUIRE (volume_start (v) == 0, "start");

  c1 = volume_conn_new (v, "");
  c2 = volume_conn_new (v, "");
  REQUIRE (c1 && c2, "connections");
  CHECK (c1->index == 0 && c2->index == 1);
  dm_get_state (v->dm, &s);
  CHECK (s.open == 2);

  /* Written through one connection, unaligned; read through the other,
   * and found on the file as OpenSSL encrypts it. */
  for (i = 0; i < 65536; i++)
    data[i] = (uint8_t) (i * 13 + 7);
  CHECK (io (c2, IO_WRITE, data, 65536, 1000) == 0);
  CHECK (io (c1, IO_FLUSH, NULL, 0, 0) == 0);
  memset (back, 0, 65536);
  CHECK (io (c1, IO_READ, back, 65536, 1000) == 0);
  CHECK (memcmp (back, data, 65536) == 0);
  memset (back, 0, 65536);
  decrypt_image (back, 65536, 1000);
  CHECK (memcmp (back, data, 65536) == 0);

  /* The gate's answers, and no discards without allow-discards. */
  CHECK (io (c1, IO_READ, back, 512, DATA_BYTES - 256) == -1
         && errno == EIO);
  CHECK (io (c1, IO_WRITE, data, 512, DATA_BYTES) == -1 && errno == ENOSPC);
  CHECK (io (c1, IO_TRIM, NULL, 4096, 0) == -1 && errno == EOPNOTSUPP);

  volume_block_sizes (v, &min, &pref);
  CHECK (min == 1 && pref == 4096);
  volume_conn_free (c1);
  volume_conn_free (c2);
  dm_get_state (v->dm, &s);
  CHECK (s.open == 0);
  volume_free (v);
  free (real);
  free (data);
  free (back);
}

/* min-block-size=sector; allow-discards: the trim reaches the file, a
 * hole that reads as zeros of ciphertext. */
static void
test_sector_and_discards (void)
{
  struct dmcrypt_volume *v = open_plain (KV ("min-block-size", "sector",
                                             "allow-discards", "1"));
  uint8_t ones[4096], zeros[4096] = { 0 }, raw[4096];
  struct dmcrypt_conn *c;
  uint32_t min, pref;
  int fd;

  REQUIRE (v, "open: %s", stub_last_error ());
  volume_block_sizes (v, &min, &pref);
  CHECK (min == 512 && pref == 4096);
  c = volume_conn_new (v, "");
  REQUIRE (c, "connection");
  memset (ones, 0xff, sizeof ones);
  CHECK (io (c, IO_WRITE, ones, sizeof ones, 0) == 0);
  CHECK (io (c, IO_TRIM, NULL, sizeof ones, 0) == 0);
  fd = open (image, O_RDONLY);
  REQUIRE (fd >= 0 && pread (fd, raw, sizeof raw, OFFSET_SECTORS * 512)
           == (ssize_t) sizeof raw, "pread");
  close (fd);
  CHECK (memcmp (raw, zeros, sizeof raw) == 0);
  volume_conn_free (c);
  volume_free (v);
}

/* A second volume of IMAGE (EXTRA as for open_plain) must not open, for
 * the one-line reason WORDS. */
static void
refused_by_lock (const char *const *extra, const char *words)
{
  struct dmcrypt_volume *v = open_plain (extra);

  CHECK_MSG (v == NULL, "opened beside another");
  CHECK_MSG (strstr (stub_last_error (), image)
             && strstr (stub_last_error (), words),
             "'%s' lacks '%s'", stub_last_error (), words);
  volume_free (v);
}

/* Under kernel=, a connection's export name says what the kernel knew
 * of its bios: "cpu=N" the submitting CPU (else the index modulo the
 * CPUs), "sync" its writes REQ_SYNC; the request thread submits with
 * them.  A name the lab cannot read refuses the connection with an
 * error naming it; without kernel= the name is not read. */
static void
test_export_facts (void)
{
  struct dmcrypt_volume *v = open_plain (KV ("kernel", "3.16",
                                             "workers", "4"));
  struct dmcrypt_conn *plain, *facts;
  struct backend_submitter by;
  uint8_t block[4096] = { 0 };
  static const char *const bad[] = { "cpu=4", "cpu=", "cpu=-1", "syncs",
                                     "sync,,cpu=1", "volume" };
  size_t i;

  REQUIRE (v, "open: %s", stub_last_error ());
  REQUIRE (volume_start (v) == 0, "start");
  plain = volume_conn_new (v, NULL);
  facts = volume_conn_new (v, "cpu=2,sync");
  REQUIRE (plain && facts, "connections: %s", stub_last_error ());
  CHECK (plain->cpu == -1 && !plain->sync);
  CHECK (facts->cpu == 2 && facts->sync);
  CHECK (io (facts, IO_WRITE, block, sizeof block, 0) == 0);
  by = backend_submitter ();
  CHECK (by.cpu == 2 && by.sync && by.context == facts->index + 1);
  CHECK (io (plain, IO_WRITE, block, sizeof block, 0) == 0);
  by = backend_submitter ();
  CHECK (by.cpu == (int) (plain->index % 4) && !by.sync);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    stub_errors_reset ();
    CHECK_MSG (volume_conn_new (v, bad[i]) == NULL,
               "export name '%s' taken", bad[i]);
    CHECK_MSG (strstr (stub_last_error (), "export name") != NULL,
               "'%s': the error does not name the export name: %s", bad[i],
               stub_last_error ());
  }
  volume_conn_free (plain);
  volume_conn_free (facts);
  volume_close (v);
  volume_free (v);

  v = open_plain (NULL);
  REQUIRE (v && volume_start (v) == 0, "open: %s", stub_last_error ());
  plain = volume_conn_new (v, "volume");
  CHECK (plain && plain->cpu == -1 && !plain->sync);
  volume_conn_free (plain);
  volume_close (v);
  volume_free (v);
}

static void
test_locks (void)
{
  struct dmcrypt_volume *writer = open_plain (NULL), *r1, *r2, *r3;
  struct dm_reload reload = { .readonly = false };
  struct dm_err err = { 0 };
  char *line;

  REQUIRE (writer, "writer: %s", stub_last_error ());
  refused_by_lock (NULL, "is in use: another program has it open "
                   "read-write; it can have one writer only");
  refused_by_lock (KV ("readonly", "1"), "it cannot be read while another "
                   "writes it");
  volume_free (writer);

  /* Readers share; a writer is refused while they read. */
  r1 = open_plain (KV ("readonly", "1"));
  r2 = open_plain (KV ("readonly", "1"));
  REQUIRE (r1 && r2, "readers: %s", stub_last_error ());
  CHECK (dm_readonly (r1->dm));
  refused_by_lock (NULL, "has it open read-only; it can have one writer "
                   "only");

  /* The locks follow the tables: a read-write table cannot load while
   * another reads the image, and can once it is gone. */
  line = dm_format_table (r1->dm, false, true);
  REQUIRE (line, "format");
  reload.line = line;
  CHECK (dm_reload (r1->dm, &reload, &err) == -1 && err.errnum == EBUSY
         && strstr (err.msg, "has it open read-only; it can have one "
                    "writer only"));
  volume_free (r2);
  err.errnum = 0;
  CHECK (dm_reload (r1->dm, &reload, &err) == 0);
  /* Exclusive now that a writable table is loaded. */
  refused_by_lock (KV ("readonly", "1"), "it cannot be read while another "
                   "writes it");
  /* Dropped: shared again. */
  dm_clear (r1->dm);
  r3 = open_plain (KV ("readonly", "1"));
  CHECK (r3 != NULL);
  crypt_table_free_line (line);
  volume_free (r3);
  volume_free (r1);
}

/* The filter's volume: its data is a layer below, which it does not
 * lock (the plugin below keeps its own rules). */
static void
test_filter_lower (void)
{
  struct dmcrypt_volume *v = volume_new (true), *other;
  struct backend *lower = backend_file_open (image, false);
  struct dmcrypt_conn *c;
  uint8_t buf[4096], back[4096];

  REQUIRE (v && lower, "volume_new, lower");
  REQUIRE (params_config (&v->params, "cipher", "aes-xts-plain64") == 0
           && params_config (&v->params, "key", KEY_HEX) == 0
           && params_config (&v->params, "iv-offset", "16") == 0
           && params_config (&v->params, "offset", "8") == 0, "params");
  CHECK (volume_check_params (v) == 0);       /* no file= needed */
  volume_set_lower (v, lower, "test-lower", image);
  REQUIRE (volume_open (v) == 0, "open: %s", stub_last_error ());
  CHECK (strcmp (v->image, "test-lower") == 0);
  CHECK (strcmp (v->device_field, "test-lower") == 0);
  other = open_plain (NULL);
  CHECK_MSG (other != NULL, "the filter locked the layer below: %s",
             stub_last_error ());
  volume_free (other);
  c = volume_conn_new (v, "");
  REQUIRE (c, "connection");
  memset (buf, 0x5a, sizeof buf);
  CHECK (io (c, IO_WRITE, buf, sizeof buf, 8192) == 0);
  decrypt_image (back, sizeof back, 8192);
  CHECK (memcmp (back, buf, sizeof buf) == 0);
  volume_conn_free (c);
  volume_free (v);
}

/* OP to the control socket at PATH; the reply in REP (initialised). */
static int
ask (const char *path, const char *op, struct ctl_message *rep)
{
  struct ctl_message req;
  int fd = ctl_connect (path, 2000), r = -1;

  if (fd >= 0 && ctl_msg_init (&req) == 0) {
    if (ctl_add (&req, "op", op) == 0 && ctl_send (fd, &req) == 0)
      r = ctl_recv (fd, rep, 2000);
    ctl_msg_free (&req);
  }
  if (fd >= 0)
    close (fd);
  return r;
}

/* In a child (another process, as another instance would be): the
 * instance serving IMAGE is NAME, served by the parent. */
static bool
found_from_child (const struct stat *st, const char *name)
{
  char found[64];
  long pid = 0;
  pid_t child = fork ();
  int status;

  REQUIRE (child >= 0, "fork");
  if (child == 0)
    _exit (image_lock_find_instance (st->st_dev, st->st_ino, found,
                                     sizeof found, &pid) == 0
           && strcmp (found, name) == 0 && pid == (long) getppid ()
           ? 0 : 1);
  return waitpid (child, &status, 0) == child && WIFEXITED (status)
    && WEXITSTATUS (status) == 0;
}

static void
test_control (void)
{
  struct dmcrypt_volume *v = open_plain (KV ("name", "vol-ctl"));
  struct ctl_message rep;
  char path[sizeof v->control->sock.path];
  uint64_t ino, errnum;
  struct stat st;
  long self_pid;
  char name[64];

  REQUIRE (v && stat (image, &st) == 0, "open: %s", stub_last_error ());
  REQUIRE (control_open (v) == 0 && v->control, "control_open: %s",
           stub_last_error ());
  CHECK (strcmp (v->control->sock.name, "vol-ctl") == 0);
  snprintf (path, sizeof path, "%s", v->control->sock.path);
  REQUIRE (control_start (v) == 0, "control_start");

  REQUIRE (ctl_msg_init (&rep) == 0, "message");
  CHECK (ask (path, "info", &rep) == 0);
  CHECK (ctl_get (&rep, "result") && strcmp (ctl_get (&rep, "result"), "0")
         == 0);
  CHECK (ctl_get (&rep, "name") && strcmp (ctl_get (&rep, "name"),
                                           "vol-ctl") == 0);
  CHECK (ctl_get (&rep, "type") && strcmp (ctl_get (&rep, "type"), "plain")
         == 0);
  CHECK (ctl_get (&rep, "image") && strcmp (ctl_get (&rep, "image"), image)
         == 0);
  CHECK (ctl_get_u64 (&rep, "image_ino", &ino) == 0 && ino == st.st_ino);
  ctl_msg_free (&rep);

  REQUIRE (ctl_msg_init (&rep) == 0, "message");
  CHECK (ask (path, "status", &rep) == 0);
  CHECK (ctl_get (&rep, "status")
         && strcmp (ctl_get (&rep, "status"), "0 8184 crypt ") == 0);
  ctl_msg_free (&rep);

  REQUIRE (ctl_msg_init (&rep) == 0, "message");
  CHECK (ask (path, "bogus", &rep) == 0);
  CHECK (strcmp (ctl_get (&rep, "result"), "-1") == 0
         && ctl_get_u64 (&rep, "errno", &errnum) == 0 && errnum == EINVAL);
  ctl_msg_free (&rep);

  /* Another process finds this instance by the image's identity; this
   * one never finds itself. */
  CHECK (found_from_child (&st, "vol-ctl"));
  CHECK (image_lock_find_instance (st.st_dev, st.st_ino, name, sizeof name,
                                   &self_pid) == -1 && errno == ENOENT);

  control_close (v);
  CHECK (v->control == NULL);
  CHECK (access (path, F_OK) == -1 && errno == ENOENT);
  control_close (v);                       /* again: nothing */
  volume_free (v);
}

static int
remove_all (void)
{
  char path[400];

  snprintf (path, sizeof path, "rm -rf '%s'", dir);
  return system (path);
}

int
main (void)
{
  char registry[300];
  int fd;

  REQUIRE (mkdtemp (dir), "mkdtemp");
  snprintf (registry, sizeof registry, "%s/registry", dir);
  REQUIRE (mkdir (registry, 0700) == 0, "mkdir");
  setenv ("DMCRYPT_RUNTIME_DIR", registry, 1);
  snprintf (image, sizeof image, "%s/disk.img", dir);
  fd = open (image, O_RDWR | O_CREAT | O_EXCL, 0600);
  REQUIRE (fd >= 0 && ftruncate (fd, IMAGE_BYTES) == 0, "image");
  close (fd);

  test_request_path ();
  test_sector_and_discards ();
  test_export_facts ();
  test_locks ();
  test_filter_lower ();
  test_control ();
  remove_all ();
  if (failures) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("volume: data path, locks, the filter's volume, control: all "
          "passed\n");
  return 0;
}
