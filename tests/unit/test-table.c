/* SPDX-License-Identifier: GPL-2.0-or-later */
/* table/: the dm-crypt target line parser, validator and formatter,
 * held against tables the real kernel accepted, printed or refused
 * (../shared/reference/kernel-dmsetup) and against edge cases. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../crypto/cipher.h"
#include "../../crypto/secmem.h"
#include "../../table/crypt_table.h"
#include "check.h"

#define KEY64 "202122232425262728292a2b2c2d2e2f303132333435363738393a3b" \
  "3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
#define KEY32 "000102030405060708090a0b0c0d0e0f" \
  "101112131415161718191a1b1c1d1e1f"
#define ZEROS32 "00000000000000000000000000000000" \
  "00000000000000000000000000000000"
#define XTS "0 32768 crypt aes-xts-plain64 " KEY64
#define ESSIV "0 32768 crypt aes-cbc-essiv:sha256 " KEY32


/* The nbdkit_error stub prints to stderr: capture it around a parse so
 * the test can check that a refusal names its reason in one line. */
static int
parse_capturing (const char *line, struct crypt_table *t,
                 char *err, size_t err_size)
{
  FILE *tmp = tmpfile ();
  int saved_stderr = dup (2);
  size_t n = 0;
  int r;

  if (tmp == NULL || saved_stderr == -1) {
    perror ("test-table: tmpfile/dup");
    exit (1);
  }
  fflush (stderr);
  dup2 (fileno (tmp), 2);
  r = crypt_table_parse (line, t);
  fflush (stderr);
  dup2 (saved_stderr, 2);
  close (saved_stderr);
  rewind (tmp);
  n = fread (err, 1, err_size - 1, tmp);
  err[n] = '\0';
  fclose (tmp);
  return r;
}

static unsigned
count_lines (const char *s)
{
  unsigned n = 0;

  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* LINE must be refused with exactly one error line containing WANT
 * (when non-NULL) and without leaking any hex key of the tests. */
static void
expect_refused (const char *line, const char *want)
{
  struct crypt_table t;
  char err[4096];
  int r = parse_capturing (line, &t, err, sizeof err);

  CHECK_MSG (r == -1, "accepted: %s", line);
  if (r == 0) {
    crypt_table_free (&t);
    return;
  }
  CHECK_MSG (t.cipher == NULL && t.key == NULL && t.device == NULL,
         "table not freed after refusing: %s", line);
  CHECK_MSG (count_lines (err) == 1 && strncmp (err, "error: ", 7) == 0,
         "want one error line for %s, got: %s", line, err);
  if (want)
    CHECK_MSG (strstr (err, want) != NULL,
           "error for %s should mention '%s', got: %s", line, want, err);
  CHECK_MSG (strstr (err, "2021222324") == NULL
         && strstr (err, "0001020304") == NULL,
         "error message shows key material: %s", err);
}

static bool
format_equals (const struct crypt_table *t, bool showkeys,
               const char *device, const char *want)
{
  char *got = crypt_table_format (t, showkeys, device);
  bool same = got != NULL && strcmp (got, want) == 0;

  if (!same)
    fprintf (stderr, "  format(%s): %s\n  expected:     %s\n",
             showkeys ? "showkeys" : "masked", got ? got : "(null)", want);
  crypt_table_free_line (got);
  return same;
}

/* LINE parses and prints back as SHOWN (--showkeys) and MASKED. */
static void
expect_table (const char *line, const char *shown, const char *masked)
{
  struct crypt_table t;
  char err[4096];

  if (parse_capturing (line, &t, err, sizeof err) == -1) {
    CHECK_MSG (false, "refused: %s: %s", line, err);
    return;
  }
  CHECK_MSG (format_equals (&t, true, NULL, shown), "showkeys of %s", line);
  if (masked)
    CHECK_MSG (format_equals (&t, false, NULL, masked), "masked of %s", line);
  CHECK_MSG (crypt_table_validate (&t) == 0, "validate after parse: %s", line);
  crypt_table_free (&t);
}

static void
test_embedded_kernel_tables (void)
{
  /* p1 of plain-cbc-essiv.txt; device kept as given when not replaced. */
  expect_table (ESSIV " 0 /dev/vda 0", ESSIV " 0 /dev/vda 0",
                "0 32768 crypt aes-cbc-essiv:sha256 " ZEROS32
                " 0 /dev/vda 0");
  /* p5: every flag, in another order than the kernel prints them. */
  expect_table ("0 30720 crypt aes-cbc-plain64 " KEY32 " 7 254:0 2048 5 "
                "no_write_workqueue no_read_workqueue submit_from_crypt_cpus"
                " same_cpu_crypt allow_discards",
                "0 30720 crypt aes-cbc-plain64 " KEY32 " 7 254:0 2048 5 "
                "allow_discards same_cpu_crypt submit_from_crypt_cpus "
                "no_read_workqueue no_write_workqueue",
                "0 30720 crypt aes-cbc-plain64 " ZEROS32 " 7 254:0 2048 5 "
                "allow_discards same_cpu_crypt submit_from_crypt_cpus "
                "no_read_workqueue no_write_workqueue");
  /* p6 and e1: order fixed; words after the count are ignored. */
  expect_table (XTS " 0 254:0 0 2 iv_large_sectors sector_size:4096",
                XTS " 0 254:0 0 2 sector_size:4096 iv_large_sectors", NULL);
  expect_table (XTS " 0 254:0 0 1 sector_size:4096 iv_large_sectors",
                XTS " 0 254:0 0 1 sector_size:4096", NULL);
  /* p7 and p8. */
  expect_table ("0 32768 crypt capi:xts(aes)-plain64 " KEY64 " 0 254:0 0",
                "0 32768 crypt capi:xts(aes)-plain64 " KEY64 " 0 254:0 0",
                NULL);
  expect_table (XTS " 16 254:0 0 2 sector_size:4096 iv_large_sectors",
                XTS " 16 254:0 0 2 sector_size:4096 iv_large_sectors",
                NULL);
  /* e2 .. e7: the kernel refused them. */
  expect_refused ("0 32767 crypt aes-xts-plain64 " KEY64
                  " 0 /dev/vda 0 1 sector_size:4096", "length 32767");
  expect_refused (XTS " 0 /dev/vda 0 1 bogus_flag", "bogus_flag");
  expect_refused ("0 32768 crypt aes-xts-plain64 0011 0 /dev/vda 0", NULL);
  expect_refused (XTS " 5 /dev/vda 0 2 sector_size:4096 iv_large_sectors",
                  "iv_offset 5");
  expect_refused (XTS " 3 /dev/vda 0 1 sector_size:4096", "iv_offset 3");
  expect_refused ("0 32760 crypt aes-xts-plain64 " KEY64
                  " 0 /dev/vda 5 1 sector_size:4096", "offset 5");
  /* LUKS2 opened without --disable-keyring. */
  expect_refused ("0 98304 crypt aes-xts-plain64 :64:logon:cryptsetup:"
                  "a6790d8f-0093-4ace-bc8e-da1dbaa8e0fb-d0 0 254:0 32768 1 "
                  "sector_size:4096",
                  "key in kernel keyring is not supported; give the key "
                  "in hex");
}

static void
test_whitespace_and_words (void)
{
  const char *want = ESSIV " 0 254:0 0 1 allow_discards";

  expect_table ("0\t32768  crypt\t\taes-cbc-essiv:sha256   " KEY32
                " 0 254:0 0 1 allow_discards", want, NULL);
  expect_table ("  " ESSIV " 0 254:0 0 1 allow_discards \n", want, NULL);
  expect_table (ESSIV " 0 254:0 0 1 ALLOW_Discards", want, NULL);
  expect_table (ESSIV " 0 254:0 0 2 allow_discards allow_discards",
                want, NULL);
  expect_table (ESSIV " 0 254:0 0 1 allow_discards trailing garbage 7",
                want, NULL);
  expect_table (ESSIV " 0 254:0 0 0", ESSIV " 0 254:0 0", NULL);
  expect_table (ESSIV " 0 254:0 0 0 ignored", ESSIV " 0 254:0 0", NULL);
  expect_table (ESSIV " 0 254:0 0 3 submit_from_crypt_cpus high_priority "
                "allow_discards",
                ESSIV " 0 254:0 0 3 allow_discards high_priority "
                "submit_from_crypt_cpus", NULL);
  /* The kernel's hex_to_bin takes upper case; dmsetup prints lower. */
  expect_table ("0 32768 crypt aes-cbc-essiv:sha256 "
                "000102030405060708090A0B0C0D0E0F101112131415161718191A1B"
                "1C1D1E1F 0 254:0 0", ESSIV " 0 254:0 0", NULL);
  expect_table (ESSIV " 0 254:0 0 1 sector_size:512", ESSIV " 0 254:0 0",
                NULL);
  expect_table (ESSIV " 18446744073709551615 254:0 0",
                ESSIV " 18446744073709551615 254:0 0", NULL);
}

static void
test_refused_fields (void)
{
  expect_refused ("", "empty");
  expect_refused (" \t\n", "empty");
  expect_refused (ESSIV " 0 254:0", "fields");
  expect_refused ("0 32768 crypt", "fields");
  expect_refused ("8 32768 crypt aes-cbc-essiv:sha256 " KEY32 " 0 254:0 0",
                  "table start must be 0");
  expect_refused ("0 32768 linear aes-cbc-essiv:sha256 " KEY32
                  " 0 254:0 0", "linear");
  expect_refused ("0 0 crypt aes-cbc-essiv:sha256 " KEY32 " 0 254:0 0",
                  "length");
  expect_refused ("0 -8 crypt aes-cbc-essiv:sha256 " KEY32 " 0 254:0 0",
                  "'-8'");
  expect_refused (ESSIV " -1 254:0 0", "'-1'");
  expect_refused (ESSIV " +1 254:0 0", "'+1'");
  expect_refused (ESSIV " 0 254:0 0x10", "'0x10'");
  expect_refused (ESSIV " 18446744073709551616 254:0 0",
                  "'18446744073709551616'");
  expect_refused ("0 99999999999999999999999 crypt aes-cbc-essiv:sha256 "
                  KEY32 " 0 254:0 0", "99999999999999999999999");
  expect_refused ("0 32768 crypt aes-cbc-essiv:sha256 " KEY32
                  " 0 254:0 18446744073709551615", "offset");
  expect_refused (ESSIV " 0 254:0 0\n0 8 crypt aes-cbc-essiv:sha256 "
                  KEY32 " 0 254:0 0", "more than one line");
}

static void
test_refused_keys (void)
{
  /* 63 and 65 digits, a non-hex digit, the wrong size for the cipher. */
  expect_refused ("0 8 crypt aes-cbc-essiv:sha256 "
                  "000102030405060708090a0b0c0d0e0f"
                  "101112131415161718191a1b1c1d1e1 0 254:0 0", "odd");
  expect_refused ("0 8 crypt aes-cbc-essiv:sha256 " KEY32 "f 0 254:0 0",
                  "odd");
  expect_refused ("0 8 crypt aes-cbc-essiv:sha256 "
                  "000102030405060708090a0b0c0d0e0f"
                  "101112131415161718191a1b1c1d1eg0 0 254:0 0",
                  "character 63 is not a hex digit");
  expect_refused ("0 8 crypt aes-xts-plain64 " KEY32 "0011 0 254:0 0",
                  NULL);
  expect_refused ("0 8 crypt aes-xts-plain64 - 0 254:0 0", NULL);
  expect_refused ("0 8 crypt aes-xts-plain64 :64:user:foo 0 254:0 0",
                  "kernel keyring");
}

static void
test_refused_options (void)
{
  expect_refused (ESSIV " 0 254:0 0 2 allow_discards", "'2'");
  expect_refused (ESSIV " 0 254:0 0 1", "'1'");
  expect_refused (ESSIV " 0 254:0 0 x allow_discards", "'x'");
  expect_refused (ESSIV " 0 254:0 0 -1 allow_discards", "'-1'");
  expect_refused (ESSIV " 0 254:0 0 10 allow_discards allow_discards "
                  "allow_discards allow_discards allow_discards "
                  "allow_discards allow_discards allow_discards "
                  "allow_discards allow_discards", "'10'");
  expect_refused (ESSIV " 0 254:0 0 1 sector_size:1000", "sector_size");
  expect_refused (ESSIV " 0 254:0 0 1 sector_size:8192", "sector_size");
  expect_refused (ESSIV " 0 254:0 0 1 sector_size:256", "sector_size");
  expect_refused (ESSIV " 0 254:0 0 1 sector_size:", "sector_size");
  expect_refused (ESSIV " 0 254:0 0 1 sector_size:4096x", "sector_size");
  expect_refused (ESSIV " 0 254:0 0 1 sector_size:65536", "sector_size");
  expect_refused (ESSIV " 0 254:0 0 1 integrity:28:aead",
                  "integrity/AEAD is not supported");
  expect_refused (ESSIV " 0 254:0 0 1 allow-discards", "allow-discards");
  /* The count decides what is read: the bad word is inside it. */
  expect_refused (ESSIV " 0 254:0 0 2 allow_discards bogus", "bogus");
}

/* cipher_null takes no key, spelt "-"; whether crypto/ supports it
 * decides whether the table is accepted, but the parse must agree. */
static void
test_empty_key (void)
{
  struct crypt_table t = {
    .length = 8, .cipher = (char *) "cipher_null-ecb",
    .device = (char *) "254:0", .sector_size = 512,
  };
  const char *line = "0 8 crypt cipher_null-ecb - 0 254:0 0";

  CHECK_MSG (format_equals (&t, true, NULL, line), "key_size 0 shows -");
  CHECK_MSG (format_equals (&t, false, NULL, line), "key_size 0 masks as -");
  if (sector_cipher_check_spec ("cipher_null-ecb", 0) == 0)
    expect_table (line, line, line);
  else
    expect_refused (line, NULL);
  expect_refused ("0 8 crypt cipher_null-ecb 0 0 254:0 0", "odd");
}

/* The rules on a struct made without parsing (LUKS, cipher=/key=). */
static void
test_validate (void)
{
  static uint8_t key[64];
  struct crypt_table good = {
    .length = 32768, .cipher = (char *) "aes-xts-plain64", .key = key,
    .key_size = 64, .device = (char *) "254:0", .sector_size = 4096,
    .iv_offset = 8, .offset = 32768,
    .flags = CT_ALLOW_DISCARDS | CT_IV_LARGE_SECTORS,
  };
  struct crypt_table t;

  CHECK_MSG (crypt_table_validate (&good) == 0, "valid table refused");
  t = good; t.device = NULL;
  CHECK_MSG (crypt_table_validate (&t) == 0, "device is informational");
  t.device = (char *) "my disk.img";
  CHECK_MSG (crypt_table_validate (&t) == 0, "file= may hold a space");
#define REFUSED(field, value)                                          \
  t = good; t.field = value;                                           \
  CHECK_MSG (crypt_table_validate (&t) == -1, "accepted " #field " " #value)
  REFUSED (start, 8);
  REFUSED (length, 0);
  REFUSED (length, 32764);
  REFUSED (iv_offset, 5);
  REFUSED (offset, 5);
  REFUSED (sector_size, 0);
  REFUSED (sector_size, 256);
  REFUSED (sector_size, 1536);
  REFUSED (sector_size, 8192);
  REFUSED (flags, 1u << 12);
  REFUSED (key, NULL);
  REFUSED (key_size, 3);
  REFUSED (cipher, NULL);
  REFUSED (cipher, (char *) "aes xts-plain64");
  REFUSED (offset, (UINT64_MAX / 512) & ~(uint64_t) 7);
#undef REFUSED
  t = good; t.flags = 0; t.iv_offset = 4;
  CHECK_MSG (crypt_table_validate (&t) == -1,
         "iv_offset off the grid without iv_large_sectors");
}

static void
test_copy_and_free (void)
{
  const char *line = "0 30720 crypt aes-cbc-plain64 " KEY32 " 8 254:0 2048"
    " 2 allow_discards sector_size:1024";
  struct crypt_table a, b;
  static const struct crypt_table zero;

  if (crypt_table_parse (line, &a) == -1) {
    CHECK_MSG (false, "refused %s", line);
    return;
  }
  CHECK_MSG (crypt_table_copy (&b, &a) == 0, "copy failed");
  CHECK_MSG (b.key != a.key && b.cipher != a.cipher && b.device != a.device,
         "copy shares memory");
  CHECK_MSG (b.key_size == 32 && memcmp (a.key, b.key, 32) == 0,
         "copied key differs");
  crypt_table_free (&a);
  CHECK_MSG (memcmp (&a, &zero, sizeof a) == 0, "free leaves fields set");
  CHECK_MSG (format_equals (&b, true, NULL, line), "copy formats the same");
  crypt_table_free (&b);
  crypt_table_free (&b);        /* freeing twice is harmless */
}

static void
test_format_errors (void)
{
  struct crypt_table t = { .length = 8, .sector_size = 512,
                           .device = (char *) "254:0" };

  errno = 0;
  CHECK_MSG (crypt_table_format (&t, true, NULL) == NULL && errno == EINVAL,
         "format without cipher");
  t.cipher = (char *) "aes-cbc-essiv:sha256";
  t.device = NULL;
  errno = 0;
  CHECK_MSG (crypt_table_format (&t, false, NULL) == NULL && errno == EINVAL,
         "format without device");
  CHECK_MSG (format_equals (&t, false, "7:1",
                        "0 8 crypt aes-cbc-essiv:sha256 - 0 7:1 0"),
         "device argument");
  crypt_table_free_line (NULL);
}

static void
test_hex_decode (void)
{
  uint8_t *bytes = (uint8_t *) "x";
  size_t size = 99;

  CHECK_MSG (hex_decode ("00ff7F", &bytes, &size) == 0 && size == 3
         && bytes[0] == 0 && bytes[1] == 0xff && bytes[2] == 0x7f,
         "hex_decode 00ff7F");
  secmem_free (bytes, size);
  CHECK_MSG (hex_decode ("", &bytes, &size) == 0 && bytes == NULL && size == 0,
         "hex_decode of nothing");
  CHECK_MSG (hex_decode ("abc", &bytes, &size) == -1 && errno == EINVAL
         && bytes == NULL && size == 0, "hex_decode odd length");
  CHECK_MSG (hex_decode ("0g", &bytes, &size) == -1 && errno == EINVAL,
         "hex_decode non-hex");
  CHECK_MSG (hex_decode ("0 ", &bytes, &size) == -1, "hex_decode space");
}

/* ---- the kernel transcripts ---------------------------------------- */

struct transcript_counts
{
  unsigned creates_ok, creates_failed, showkeys, masked, keyring;
};

/* Tables currently live in a transcript, by dm name. */
struct live
{
  char name[64];
  struct crypt_table table;
};
static struct live live[16];

static struct live *
find_live (const char *name, bool create)
{
  size_t i;

  for (i = 0; i < sizeof live / sizeof live[0]; i++)
    if (live[i].name[0] && strcmp (live[i].name, name) == 0)
      return &live[i];
  for (i = 0; create && i < sizeof live / sizeof live[0]; i++) {
    if (live[i].name[0] == '\0') {
      snprintf (live[i].name, sizeof live[i].name, "%s", name);
      return &live[i];
    }
  }
  return NULL;
}

static void
forget_live (const char *name)
{
  struct live *l = find_live (name, false);

  if (l) {
    crypt_table_free (&l->table);
    l->name[0] = '\0';
  }
}

static void
forget_all_live (void)
{
  size_t i;

  for (i = 0; i < sizeof live / sizeof live[0]; i++)
    if (live[i].name[0])
      forget_live (live[i].name);
}

/* What the kernel said when it refused e2..e7, in our words. */
static const char *
refusal_reason (const char *name)
{
  static const char *const reasons[][2] = {
    { "e2", "length 32767" }, { "e3", "bogus_flag" },
    { "e5", "iv_offset 5" }, { "e6", "iv_offset 3" },
    { "e7", "offset 5" },
  };
  size_t i;

  for (i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
    if (strcmp (reasons[i][0], name) == 0)
      return reasons[i][1];
  return NULL;
}

/* The last word of CMD (the dm name), copied into NAME. */
static void
last_word (const char *cmd, char *name, size_t size)
{
  const char *end = cmd + strlen (cmd), *start;

  while (end > cmd && end[-1] == ' ')
    end--;
  start = end;
  while (start > cmd && start[-1] != ' ')
    start--;
  snprintf (name, size, "%.*s", (int) (end - start), start);
}

static bool
output_failed (char **out, size_t nout)
{
  size_t i;

  for (i = 0; i < nout; i++)
    if (strncmp (out[i], "(exit status", 12) == 0)
      return true;
  return false;
}

/* "dmsetup create [--readonly] NAME --table '...'" */
static void
check_create (const char *cmd, char **out, size_t nout,
              struct transcript_counts *c)
{
  const char *open = strstr (cmd, "--table '");
  const char *close = strrchr (cmd, '\'');
  char name[64], table[1024];
  struct live *l;

  if (open == NULL || close == NULL || close < open + 9) {
    CHECK_MSG (false, "cannot read transcript command: %s", cmd);
    return;
  }
  snprintf (table, sizeof table, "%.*s", (int) (open - cmd), cmd);
  last_word (table, name, sizeof name);
  snprintf (table, sizeof table, "%.*s", (int) (close - open - 9),
            open + 9);

  if (output_failed (out, nout)) {
    expect_refused (table, refusal_reason (name));
    c->creates_failed++;
    return;
  }
  forget_live (name);
  l = find_live (name, true);
  CHECK_MSG (l && crypt_table_parse (table, &l->table) == 0,
         "kernel accepted, we refused: %s", table);
  if (l && l->table.cipher == NULL)
    forget_live (name);
  c->creates_ok++;
}

/* The <key> field (the fifth word) names a kernel keyring key. */
static bool
key_in_keyring (const char *line)
{
  const char *p = line;
  int word;

  for (word = 0; word < 4 && p; word++) {
    p = strchr (p, ' ');
    if (p)
      p += strspn (p, " ");
  }
  return p != NULL && *p == ':';
}

/* A --showkeys line must parse back to itself (or be refused, when its
 * key is in the kernel keyring). */
static void
check_shown_line (const char *name, const char *line,
                  struct transcript_counts *c)
{
  struct live *l;

  if (key_in_keyring (line)) {
    expect_refused (line, "kernel keyring");
    c->keyring++;
    return;
  }
  if (find_live (name, false) == NULL) {
    l = find_live (name, true);
    CHECK_MSG (l && crypt_table_parse (line, &l->table) == 0,
           "refused a table dmsetup printed: %s", line);
    if (l && l->table.cipher == NULL)
      forget_live (name);
  }
  expect_table (line, line, NULL);
  c->showkeys++;
}

/* "dmsetup table [--showkeys] NAME": what we print for the live table
 * must be what dmsetup printed. */
static void
check_table_cmd (const char *cmd, char **out, size_t nout,
                 struct transcript_counts *c)
{
  bool showkeys = strstr (cmd, " --showkeys") != NULL;
  char name[64];
  struct live *l;

  /* --concise/--inactive layouts, pipes and failures are not tables. */
  if (strstr (cmd, " --concise") || strstr (cmd, " --inactive")
      || strchr (cmd, '|') || strstr (cmd, "&&")
      || nout != 1 || output_failed (out, nout))
    return;
  last_word (cmd, name, sizeof name);
  if (showkeys)
    check_shown_line (name, out[0], c);
  l = find_live (name, false);
  if (l == NULL) {
    CHECK_MSG (showkeys || key_in_keyring (out[0]),
           "no table known for: %s", out[0]);
    return;
  }
  CHECK_MSG (format_equals (&l->table, showkeys, "254:0", out[0]),
         "%s %s", showkeys ? "showkeys" : "masked", name);
  c->masked += !showkeys;
}

static void
check_command (const char *cmd, char **out, size_t nout,
               struct transcript_counts *c)
{
  char name[64];

  if (strncmp (cmd, "dmsetup create ", 15) == 0)
    check_create (cmd, out, nout, c);
  else if (strncmp (cmd, "dmsetup table ", 14) == 0)
    check_table_cmd (cmd, out, nout, c);
  else if (strncmp (cmd, "dmsetup remove ", 15) == 0
           || strncmp (cmd, "cryptsetup close ", 17) == 0) {
    last_word (cmd, name, sizeof name);
    forget_live (name);
  }
}

/* Splits a transcript into "$ command" blocks and their output lines;
 * "#" lines are comments. */
static void
check_transcript (const char *path, struct transcript_counts *c)
{
  FILE *fp = fopen (path, "r");
  char *lines[512];
  size_t nlines = 0, i, j;
  char *line = NULL;
  size_t line_size = 0;
  ssize_t len;

  if (fp == NULL) {
    CHECK_MSG (false, "%s: %s", path, strerror (errno));
    return;
  }
  while (nlines < sizeof lines / sizeof lines[0]
         && (len = getline (&line, &line_size, fp)) != -1) {
    if (len > 0 && line[len - 1] == '\n')
      line[len - 1] = '\0';
    lines[nlines++] = strdup (line);
  }
  free (line);
  fclose (fp);
  CHECK_MSG (nlines < sizeof lines / sizeof lines[0], "%s: too long", path);

  for (i = 0; i < nlines; i = j) {
    j = i + 1;
    if (lines[i] == NULL || strncmp (lines[i], "$ ", 2) != 0)
      continue;
    while (j < nlines && lines[j] && strncmp (lines[j], "$ ", 2) != 0
           && lines[j][0] != '#')
      j++;
    check_command (lines[i] + 2, &lines[i + 1], j - i - 1, c);
  }
  for (i = 0; i < nlines; i++)
    free (lines[i]);
  forget_all_live ();
}

static bool
is_transcript (const char *name)
{
  size_t len = strlen (name);

  return len > 4 && strcmp (name + len - 4, ".txt") == 0;
}

/* Returns false when the transcripts are absent. */
static bool
test_transcripts (void)
{
  const char *shared = getenv ("DMCRYPT_SHARED");
  struct transcript_counts c = { 0 };
  char dir[4096], path[8192];
  struct dirent *d;
  DIR *dp;

  /* Run from the top of the tree: tests/data is the copy of ../shared's
   * transcripts. */
  if (!(shared && *shared))
    shared = access ("tests/data/reference", R_OK) == 0 ? "tests/data"
      : "../shared";
  snprintf (dir, sizeof dir, "%s/reference/kernel-dmsetup", shared);
  dp = opendir (dir);
  if (dp == NULL)
    return false;
  while ((d = readdir (dp)) != NULL) {
    if (!is_transcript (d->d_name))
      continue;
    snprintf (path, sizeof path, "%s/%s", dir, d->d_name);
    check_transcript (path, &c);
  }
  closedir (dp);

  printf ("transcripts: %u creates accepted, %u refused, %u --showkeys "
          "lines, %u masked lines, %u keyring keys refused\n",
          c.creates_ok, c.creates_failed, c.showkeys, c.masked, c.keyring);
  /* What the transcripts of kernel 6.1 hold: p1..p10, e1, ro1; e2..e7;
   * three LUKS images. */
  CHECK_MSG (c.creates_ok >= 11, "too few accepted creates: %u", c.creates_ok);
  CHECK_MSG (c.creates_failed >= 6, "too few refused creates: %u",
         c.creates_failed);
  CHECK_MSG (c.keyring >= 2, "too few keyring tables: %u", c.keyring);
  CHECK_MSG (c.showkeys >= 13, "too few --showkeys lines: %u", c.showkeys);
  CHECK_MSG (c.masked >= 7, "too few masked lines: %u", c.masked);
  return true;
}

int
main (void)
{
  bool have_transcripts;

  test_embedded_kernel_tables ();
  test_whitespace_and_words ();
  test_refused_fields ();
  test_refused_keys ();
  test_refused_options ();
  test_empty_key ();
  test_validate ();
  test_copy_and_free ();
  test_format_errors ();
  test_hex_decode ();
  have_transcripts = test_transcripts ();

  printf ("%u checks, %d failed\n", checks, failures);
  if (failures > 0)
    return 1;
  if (!have_transcripts) {
    printf ("SKIP: ../shared absent (reference/kernel-dmsetup)\n");
    return 77;
  }
  return 0;
}
