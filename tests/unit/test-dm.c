/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The device-mapper core (dm/dm.h) on its own: a mapping over an
 * in-memory backend, driven as dmsetup would drive it. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../../dm/dm.h"
#include "engine-harness.h"

#define DEVICE "/images/disk.img"
#define SECTORS 2048                   /* 1 MiB */
#define KEY_A "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" \
              "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
#define KEY_B "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" \
              "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
#define LINE(key, rest) "0 2048 crypt aes-xts-plain64 " key " 0 " DEVICE " 0" rest

/* What the host was asked: the image locks the tables want. */
static int lock_calls, lock_writable, lock_fail_errno;

static int
locks_follow (void *arg, bool writable, char *why, size_t size)
{
  (void) arg;
  lock_calls++;
  if (lock_fail_errno) {
    snprintf (why, size, "image busy");
    errno = lock_fail_errno;
    return -1;
  }
  lock_writable = writable;
  return 0;
}

static struct dm_mapping *
make (struct backend *b, const char *line, bool readonly)
{
  struct dm_host host = {
    .backend = b, .device = DEVICE, .locks_follow = locks_follow,
  };
  struct crypt_table t;
  struct dm_err err = { 0 };
  struct dm_mapping *m;

  REQUIRE (crypt_table_parse (line, &t) == 0, "parse %s", line);
  m = dm_new (&host, &t, readonly, NULL, &err);
  REQUIRE (m, "dm_new: %s", err.msg);
  REQUIRE (t.key == NULL, "dm_new took the table");
  return m;
}

static int
io (struct dm_mapping *m, bool write, void *buf, uint32_t count,
    uint64_t off)
{
  int err = dm_enter (m, off, count, write);
  int r;

  if (err) {
    errno = err;
    return -1;
  }
  r = write ? engine_write (dm_engine (m), buf, count, off, false)
    : engine_read (dm_engine (m), buf, count, off);
  dm_leave (m);
  return r;
}

static char *
table_of (struct dm_mapping *m, bool inactive)
{
  char *line = dm_format_table (m, inactive, true);
  char *copy = line ? strdup (line) : NULL;

  if (line)
    crypt_table_free_line (line);
  return copy;
}

/* A reload that must fail with ERRNUM and a message holding WORDS,
 * leaving both tables as they were. */
static void
refused (struct dm_mapping *m, const struct dm_reload *r, int errnum,
         const char *words)
{
  struct dm_err err = { 0 };
  struct dm_state before, after;
  char *live = table_of (m, false), *inactive = table_of (m, true);
  char *live2, *inactive2;

  dm_get_state (m, &before);
  CHECK (dm_reload (m, r, &err) == -1);
  if (err.errnum != errnum || strstr (err.msg, words) == NULL)
    fprintf (stderr, "reload %s: errno %d, '%s'\n", r->line ? r->line : "-",
             err.errnum, err.msg);
  CHECK (err.errnum == errnum);
  CHECK (strstr (err.msg, words) != NULL);
  dm_get_state (m, &after);
  CHECK (after.inactive == before.inactive);
  live2 = table_of (m, false);
  inactive2 = table_of (m, true);
  CHECK (strcmp (live, live2) == 0);
  CHECK ((inactive == NULL) == (inactive2 == NULL));
  CHECK (inactive == NULL || strcmp (inactive, inactive2) == 0);
  free (live); free (live2); free (inactive); free (inactive2);
}

static void
test_rules (void)
{
  struct backend *b = mem_open (SECTORS * 512);
  struct dm_mapping *m = make (b, LINE (KEY_A, ""), false);
  struct dm_reload r = { .line = NULL };
  struct dm_err err = { 0 };
  struct dm_state s;
  char *t;

  CHECK (dm_size (m) == SECTORS * 512);
  CHECK (dm_sector_size (m) == 512);
  CHECK (!dm_readonly (m));

  refused (m, &r, EINVAL, "no table given");
  r.line = "0 2048 crypt nosuch-cipher " KEY_A " 0 " DEVICE " 0";
  refused (m, &r, EINVAL, "refused");
  r.line = "0 2048 crypt aes-xts-plain64 " KEY_A " 0 /images/other.img 0";
  refused (m, &r, EINVAL, "a reload cannot change the device");
  r.line = "0 4096 crypt aes-xts-plain64 " KEY_A " 0 " DEVICE " 0";
  r.force = true;
  refused (m, &r, EINVAL, "the device has 2048");
  r.force = false;
  r.line = LINE (KEY_B, "");
  refused (m, &r, EINVAL, "changes the key of the live table");
  r.line = "0 2048 crypt aes-xts-plain64 " KEY_A " 8 " DEVICE " 0";
  refused (m, &r, EINVAL, "iv_offset");
  r.line = LINE (KEY_A, "");
  r.tun.scheduler = "nosuch";
  refused (m, &r, EINVAL, "scheduler: expected one of");
  r.tun.scheduler = NULL;
  r.tun.set_workers = true;
  refused (m, &r, EINVAL, "workers: must be between");
  r.tun.set_workers = false;

  /* A read-only image takes only a read-only table. */
  b->readonly = true;
  refused (m, &r, EACCES, "the image is not writable");
  b->readonly = false;

  /* The image must be lockable for a writable table. */
  lock_fail_errno = EBUSY;
  refused (m, &r, EBUSY, "image busy");
  lock_fail_errno = 0;

  /* A good reload loads an inactive table; the live one is untouched
   * until resume. */
  r.line = LINE (KEY_A, " 1 allow_discards");
  r.readonly = true;
  CHECK (dm_reload (m, &r, &err) == 0);
  dm_get_state (m, &s);
  CHECK (s.inactive && !s.readonly);
  t = table_of (m, true);
  CHECK (t && strstr (t, "allow_discards") != NULL);
  free (t);
  CHECK (!(dm_flags (m) & CT_ALLOW_DISCARDS));
  /* The live table is writable: the lock stays exclusive. */
  CHECK (lock_writable);

  /* A failed reload keeps the loaded one. */
  r.line = LINE (KEY_B, "");
  refused (m, &r, EINVAL, "key");

  CHECK (dm_resume (m, &err) == 0);
  dm_get_state (m, &s);
  CHECK (!s.inactive && s.readonly && !s.suspended);
  CHECK (dm_flags (m) & CT_ALLOW_DISCARDS);
  CHECK (dm_readonly (m));
  CHECK (dm_enter (m, 0, 512, true) == EROFS);
  CHECK (dm_enter (m, SECTORS * 512, 512, false) == EIO);
  CHECK (!lock_writable);              /* nothing writable any more */

  /* clear drops an inactive table. */
  r.line = LINE (KEY_A, "");
  r.readonly = false;
  CHECK (dm_reload (m, &r, &err) == 0);
  CHECK (lock_writable);
  dm_clear (m);
  dm_get_state (m, &s);
  CHECK (!s.inactive);
  CHECK (!lock_writable);
  CHECK (dm_format_table (m, true, false) == NULL && errno == ENXIO);

  dm_free (m);
  b->ops->close (b);
}

/* ---- Suspend drains and holds ---- */

struct writer
{
  struct dm_mapping *m;
  uint64_t off;
  atomic_bool done;
  int r;
};

static void *
write_thread (void *arg)
{
  struct writer *w = arg;
  uint8_t buf[4096];

  memset (buf, 0x5a, sizeof buf);
  w->r = io (w->m, true, buf, sizeof buf, w->off);
  atomic_store (&w->done, true);
  return NULL;
}

struct suspender
{
  struct dm_mapping *m;
  atomic_bool done;
  int r;
};

static void *
suspend_thread (void *arg)
{
  struct suspender *s = arg;
  struct dm_err err;

  s->r = dm_suspend (s->m, false, &err);
  atomic_store (&s->done, true);
  return NULL;
}

static void
test_suspend (void)
{
  struct backend *b = mem_open (SECTORS * 512);
  struct dm_mapping *m = make (b, LINE (KEY_A, ""), false);
  struct writer w1 = { .m = m, .off = 0 }, w2 = { .m = m, .off = 8192 };
  struct suspender sp = { .m = m };
  pthread_t t1, t2, ts;
  struct dm_state s;
  struct dm_err err;
  uint8_t buf[4096];

  REQUIRE (dm_start (m) == 0, "start");
  /* A write stuck in the backend keeps suspend waiting. */
  mem_hold (b, true);
  REQUIRE (pthread_create (&t1, NULL, write_thread, &w1) == 0, "thread");
  mem_wait_held (b, 1);
  REQUIRE (pthread_create (&ts, NULL, suspend_thread, &sp) == 0, "thread");
  usleep (100000);
  CHECK (!atomic_load (&sp.done));
  dm_get_state (m, &s);
  CHECK (s.suspended && s.inflight == 1);
  mem_hold (b, false);
  pthread_join (ts, NULL);
  pthread_join (t1, NULL);
  CHECK (sp.r == 0 && w1.r == 0);
  CHECK (mem_of (b)->syncs >= 1);      /* suspend flushed */

  /* A request that comes while suspended waits for resume. */
  REQUIRE (pthread_create (&t2, NULL, write_thread, &w2) == 0, "thread");
  usleep (100000);
  CHECK (!atomic_load (&w2.done));
  CHECK (dm_suspend (m, false, &err) == 0);    /* again: nothing to do */
  CHECK (dm_resume (m, &err) == 0);
  pthread_join (t2, NULL);
  CHECK (w2.r == 0);
  CHECK (io (m, false, buf, sizeof buf, 8192) == 0);
  CHECK (buf[0] == 0x5a && buf[4095] == 0x5a);
  dm_free (m);
  b->ops->close (b);
}

/* ---- Messages: keys and tunables ---- */

static int
message (struct dm_mapping *m, uint64_t sector, const char *text,
         struct dm_err *err)
{
  memset (err, 0, sizeof *err);
  return dm_message (m, sector, text, err);
}

static void
test_messages (void)
{
  struct backend *b = mem_open (SECTORS * 512);
  struct dm_mapping *m = make (b, LINE (KEY_A, ""), false);
  struct engine_stats st;
  struct dm_state s;
  struct dm_err err;
  uint8_t buf[4096], back[4096];
  char *t;

  memset (buf, 0xc3, sizeof buf);
  REQUIRE (io (m, true, buf, sizeof buf, 0) == 0, "write");

  CHECK (message (m, 0, "key wipe", &err) == -1
         && strstr (err.msg, "not suspended") != NULL);
  CHECK (message (m, SECTORS, "key wipe", &err) == -1
         && strstr (err.msg, "no target at sector") != NULL);
  CHECK (message (m, 0, "frobnicate", &err) == -1
         && strstr (err.msg, "unrecognised message") != NULL);

  REQUIRE (dm_suspend (m, false, &err) == 0, "suspend");
  CHECK (message (m, 0, "key wipe", &err) == 0);
  dm_get_state (m, &s);
  CHECK (!s.key_valid);
  t = table_of (m, false);
  CHECK (t && strstr (t, KEY_A) == NULL);  /* the key is gone */
  free (t);
  CHECK (dm_resume (m, &err) == -1 && err.errnum == EAGAIN
         && strstr (err.msg, "crypt key is not set") != NULL);
  CHECK (message (m, 0, "key set 0011", &err) == -1
         && strstr (err.msg, "must be 64 bytes") != NULL);
  CHECK (message (m, 0, "key set :64:logon:x", &err) == -1
         && strstr (err.msg, "keyring") != NULL);
  /* Tunables wait for the key. */
  CHECK (message (m, 0, "scheduler fifo", &err) == 0);
  CHECK (message (m, 0, "key set " KEY_A, &err) == 0);
  CHECK (dm_resume (m, &err) == 0);
  dm_get_state (m, &s);
  CHECK (s.key_valid && !s.suspended);
  CHECK (strcmp (s.scheduler, "fifo") == 0);
  CHECK (io (m, false, back, sizeof back, 0) == 0);
  CHECK (memcmp (buf, back, sizeof buf) == 0);

  /* On a running mapping a tunable swaps the engine and resumes. */
  CHECK (message (m, 0, "workers 3", &err) == 0);
  CHECK (message (m, 0, "workers 0", &err) == -1
         && strstr (err.msg, "between 1 and") != NULL);
  CHECK (message (m, 0, "scheduler nosuch", &err) == -1);
  dm_get_state (m, &s);
  CHECK (s.workers == 3 && !s.suspended);
  CHECK (io (m, false, back, sizeof back, 0) == 0);
  CHECK (memcmp (buf, back, sizeof buf) == 0);

  /* The counters survive the swaps: one write, two reads. */
  dm_get_stats (m, &st);
  CHECK (st.writes == 1);
  CHECK (st.reads == 2);
  dm_free (m);
  b->ops->close (b);
}

/* ---- A forced reload that changes the data's meaning ---- */

static void
test_forced (void)
{
  struct backend *b = mem_open (SECTORS * 512);
  struct dm_mapping *m = make (b, LINE (KEY_A, ""), false);
  struct dm_reload r = {
    .line = "0 1024 crypt aes-xts-plain64 " KEY_B " 0 " DEVICE " 0",
    .force = true,
  };
  struct dm_err err = { 0 };
  uint8_t buf[512];

  CHECK (dm_reload (m, &r, &err) == 0);
  CHECK (dm_size (m) == SECTORS * 512);        /* until resume */
  CHECK (dm_resume (m, &err) == 0);
  CHECK (dm_size (m) == 1024 * 512);
  /* Old connections that still believe in the old size. */
  CHECK (io (m, false, buf, sizeof buf, 1024 * 512) == -1 && errno == EIO);
  CHECK (io (m, true, buf, sizeof buf, 1024 * 512) == -1
         && errno == ENOSPC);
  dm_free (m);
  b->ops->close (b);
}

/* ---- Requests split at the segments' boundaries (dm_io) ---- */

#define MIB (SECTORS * 512)
#define ZERO_START (1024 * 512)        /* bytes: the zero segment */
#define ZERO_END (1536 * 512)

/* dm_io of OP inside the gate. */
static int
request (struct dm_mapping *m, enum dm_io_op op, void *buf, uint32_t count,
         uint64_t off)
{
  bool write = op != DM_IO_READ && op != DM_IO_FLUSH;
  int r, err = dm_enter (m, off, count, write);

  if (err) {
    errno = err;
    return -1;
  }
  r = dm_io (m, op, buf, count, off, false);
  dm_leave (m);
  return r;
}

/* crypt [0, 1024), zero [1024, 1536), crypt [1536, 2048) over the
 * table's own sectors: the crypt pieces at the offsets and IVs the
 * table alone would give them. */
static struct dm_mapping *
make_segmented (struct backend *b)
{
  struct segment_list l = {
    .count = 3,
    .seg = {
      { .type = SEGMENT_CRYPT, .start = 0, .length = 1024 },
      { .type = SEGMENT_ZERO, .start = 1024, .length = 512 },
      { .type = SEGMENT_CRYPT, .start = 1536, .length = 512,
        .offset = 1536, .iv_offset = 1536 },
    },
  };
  struct dm_mapping *m = make (b, LINE (KEY_A, ""), false);
  struct dm_err err = { 0 };

  REQUIRE (dm_set_segments (m, &l, MIB, &err) == 0, "segments: %s",
           err.msg);
  return m;
}

static bool
all_bytes (const uint8_t *p, size_t n, uint8_t byte)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (p[i] != byte)
      return false;
  return true;
}

static void
test_segments (void)
{
  struct backend *b = mem_open (MIB), *plain = mem_open (MIB);
  struct dm_mapping *m = make_segmented (b), *whole;
  uint8_t *data = malloc (MIB), *back = malloc (MIB);
  unsigned syncs;
  size_t i;

  REQUIRE (data && back, "malloc");
  whole = make (plain, LINE (KEY_A, ""), false);
  for (i = 0; i < MIB; i++)
    data[i] = (uint8_t) (i * 7 + i / 512);
  memset (mem_of (b)->data, 0xee, MIB);
  CHECK (request (m, DM_IO_WRITE, data, MIB, 0) == 0);
  CHECK (request (whole, DM_IO_WRITE, data, MIB, 0) == 0);

  /* The zero segment dropped its part; the crypt pieces hold exactly
   * the ciphertext of the table alone. */
  CHECK (all_bytes (mem_of (b)->data + ZERO_START, ZERO_END - ZERO_START,
                    0xee));
  CHECK (memcmp (mem_of (b)->data, mem_of (plain)->data, ZERO_START) == 0);
  CHECK (memcmp (mem_of (b)->data + ZERO_END, mem_of (plain)->data
                 + ZERO_END, MIB - ZERO_END) == 0);

  CHECK (request (m, DM_IO_READ, back, MIB, 0) == 0);
  CHECK (memcmp (back, data, ZERO_START) == 0);
  CHECK (all_bytes (back + ZERO_START, ZERO_END - ZERO_START, 0));
  CHECK (memcmp (back + ZERO_END, data + ZERO_END, MIB - ZERO_END) == 0);

  /* A read across a boundary, not sector-aligned: 1000 zeros, then the
   * second crypt segment's first 3000 bytes. */
  memset (back, 0x11, 4000);
  CHECK (request (m, DM_IO_READ, back, 4000, ZERO_END - 1000) == 0);
  CHECK (all_bytes (back, 1000, 0));
  CHECK (memcmp (back + 1000, data + ZERO_END, 3000) == 0);

  /* A flush is the engine's, once, whatever the segments. */
  syncs = mem_of (b)->syncs;
  CHECK (request (m, DM_IO_FLUSH, NULL, 0, 0) == 0);
  CHECK (mem_of (b)->syncs == syncs + 1);

  free (data);
  free (back);
  dm_free (m);
  dm_free (whole);
  b->ops->close (b);
  plain->ops->close (plain);
}

/* A table of its own for a segment: KEY_B's, or cipher_null's for a
 * linear segment. */
static struct crypt_table
second_table (const char *key_hex)
{
  struct crypt_table t;
  char line[512];

  if (key_hex) {
    snprintf (line, sizeof line, "%s", LINE (KEY_B, ""));
    REQUIRE (crypt_table_parse (line, &t) == 0, "parse %s", line);
    return t;
  }
  memset (&t, 0, sizeof t);
  t.cipher = strdup ("cipher_null-ecb");
  t.device = strdup (DEVICE);
  t.length = SECTORS;
  t.sector_size = 512;
  REQUIRE (t.cipher && t.device, "strdup");
  return t;
}

/* Two keys, as a LUKS2 re-encryption maps them: [0, 1024) by KEY_A,
 * [1024, 2048) by KEY_B; then a linear half and a KEY_A half.  Each
 * piece must hold exactly what its own table alone would write. */
static void
test_two_tables (void)
{
  struct backend *b = mem_open (MIB), *pa = mem_open (MIB),
    *pb = mem_open (MIB), *lb = mem_open (MIB);
  struct dm_mapping *m = make (b, LINE (KEY_A, ""), false);
  struct dm_mapping *wa = make (pa, LINE (KEY_A, ""), false);
  struct dm_mapping *wb = make (pb, LINE (KEY_B, ""), false);
  struct dm_mapping *lin = make (lb, LINE (KEY_A, ""), false);
  struct segment_list l = { .count = 2, .seg = {
      { SEGMENT_CRYPT, 0, 1024, 0, 0, 0 },
      { SEGMENT_CRYPT, 1024, 1024, 1024, 1024, 1 } } };
  struct segment_list ll = { .count = 2, .seg = {
      { SEGMENT_LINEAR, 0, 1024, 0, 0, 1 },
      { SEGMENT_CRYPT, 1024, 1024, 1024, 1024, 0 } } };
  struct crypt_table second = second_table (KEY_B);
  struct crypt_table null = second_table (NULL);
  uint8_t *data = malloc (MIB), *back = malloc (MIB);
  struct dm_err err = { 0 };
  const size_t half = MIB / 2;
  unsigned syncs;
  char *lines;
  size_t i;

  REQUIRE (data && back, "malloc");
  REQUIRE (dm_set_segment_tables (m, &l, &second, MIB, &err) == 0,
           "segments: %s", err.msg);
  CHECK (second.key == NULL && dm_has_second_table (m));
  for (i = 0; i < MIB; i++)
    data[i] = (uint8_t) (i * 13 + i / 4096);
  CHECK (request (m, DM_IO_WRITE, data, MIB, 0) == 0);
  CHECK (request (wa, DM_IO_WRITE, data, MIB, 0) == 0);
  CHECK (request (wb, DM_IO_WRITE, data, MIB, 0) == 0);
  CHECK (memcmp (mem_of (b)->data, mem_of (pa)->data, half) == 0);
  CHECK (memcmp (mem_of (b)->data + half, mem_of (pb)->data + half,
                 half) == 0);
  memset (back, 0, MIB);
  CHECK (request (m, DM_IO_READ, back + 7, 9000, half - 4000) == 0);
  CHECK (memcmp (back + 7, data + half - 4000, 9000) == 0);
  /* A flush reaches both engines. */
  syncs = mem_of (b)->syncs;
  CHECK (request (m, DM_IO_FLUSH, NULL, 0, 0) == 0);
  CHECK (mem_of (b)->syncs == syncs + 2);

  /* Each crypt line with its own key. */
  lines = dm_format_table (m, false, true);
  REQUIRE (lines != NULL, "format");
  CHECK (strcmp (lines, "0 1024 crypt aes-xts-plain64 " KEY_A " 0 " DEVICE
                 " 0\n1024 1024 crypt aes-xts-plain64 " KEY_B " 1024 "
                 DEVICE " 1024") == 0);
  crypt_table_free_line (lines);

  /* Two keys: no message, no reload. */
  CHECK (dm_suspend (m, false, &err) == 0);
  CHECK (dm_message (m, 0, "key wipe", &err) == -1
         && err.errnum == EOPNOTSUPP);
  CHECK (dm_message (m, 0, "workers 2", &err) == -1);
  CHECK (dm_resume (m, &err) == 0);
  CHECK (dm_reload (m, &(struct dm_reload) { .line = LINE (KEY_A, "") },
                    &err) == -1 && err.errnum == EOPNOTSUPP);

  /* The linear half holds the plaintext itself, as dm-linear. */
  REQUIRE (dm_set_segment_tables (lin, &ll, &null, MIB, &err) == 0,
           "linear segments: %s", err.msg);
  CHECK (request (lin, DM_IO_WRITE, data, MIB, 0) == 0);
  CHECK (memcmp (mem_of (lb)->data, data, half) == 0);
  CHECK (memcmp (mem_of (lb)->data + half, mem_of (pa)->data + half,
                 half) == 0);
  CHECK (request (lin, DM_IO_READ, back, MIB, 0) == 0
         && memcmp (back, data, MIB) == 0);
  lines = dm_format_table (lin, false, false);
  REQUIRE (lines != NULL, "format");
  CHECK (strncmp (lines, "0 1024 linear " DEVICE " 0\n1024 1024 crypt "
                  "aes-xts-plain64 0000", 53) == 0);
  crypt_table_free_line (lines);

  free (data);
  free (back);
  dm_free (m);
  dm_free (wa);
  dm_free (wb);
  dm_free (lin);
  b->ops->close (b);
  pa->ops->close (pa);
  pb->ops->close (pb);
  lb->ops->close (lb);
}

/* An encryption not yet started (or a data shift's first step): linear
 * parts alone over the one keyless table, the device's halves swapped;
 * no message, no reload. */
static void
test_linear_alone (void)
{
  struct backend *b = mem_open (MIB);
  struct segment_list l = { .count = 2, .seg = {
      { SEGMENT_LINEAR, 0, 1024, 1024, 0, 0 },
      { SEGMENT_LINEAR, 1024, 1024, 0, 0, 0 } } };
  struct dm_err err = { 0 };
  struct dm_mapping *m;
  uint8_t *data = malloc (MIB), *back = malloc (MIB);
  char line[256], *lines;
  size_t i;

  REQUIRE (data && back, "malloc");
  snprintf (line, sizeof line, "0 %d crypt cipher_null-ecb - 0 " DEVICE
            " 0", SECTORS);
  m = make (b, line, false);
  REQUIRE (dm_set_segment_tables (m, &l, NULL, MIB, &err) == 0,
           "linear alone: %s", err.msg);
  CHECK (!dm_has_second_table (m));
  for (i = 0; i < MIB; i++)
    data[i] = (uint8_t) (i * 7 + i / 512);
  CHECK (request (m, DM_IO_WRITE, data, MIB, 0) == 0);
  CHECK (memcmp (mem_of (b)->data + MIB / 2, data, MIB / 2) == 0
         && memcmp (mem_of (b)->data, data + MIB / 2, MIB / 2) == 0);
  CHECK (request (m, DM_IO_READ, back, MIB, 0) == 0
         && memcmp (back, data, MIB) == 0);
  lines = dm_format_table (m, false, true);
  REQUIRE (lines != NULL, "format");
  CHECK (strcmp (lines, "0 1024 linear " DEVICE " 1024\n1024 1024 linear "
                 DEVICE " 0") == 0);
  crypt_table_free_line (lines);
  CHECK (dm_message (m, 0, "key wipe", &err) == -1
         && err.errnum == EOPNOTSUPP);
  CHECK (dm_reload (m, &(struct dm_reload) { .line = LINE (KEY_A, "") },
                    &err) == -1 && err.errnum == EOPNOTSUPP);
  free (data);
  free (back);
  dm_free (m);
  b->ops->close (b);
}

int
main (void)
{
  test_rules ();
  test_suspend ();
  test_messages ();
  test_forced ();
  test_segments ();
  test_two_tables ();
  test_linear_alone ();
  if (failures)
    fprintf (stderr, "%d check(s) failed\n", failures);
  else
    printf ("dm core: reload rules, suspend, messages, forced reload, "
            "segments: all passed\n");
  return failures != 0;
}
