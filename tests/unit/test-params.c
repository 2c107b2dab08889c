/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The parameters both front ends share (volume/params/params.h) without
 * nbdkit: each kind of key=value read, each refusal one error line that
 * names the parameter, the secrets read from +FILE and -FD into the
 * object, the rules of which parameters go together, and the plain key
 * derived as cryptsetup derives it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../backend/kseries.h"
#include "../../volume/params/params.h"
#include "../nbdkit-stubs.h"
#include "check.h"

static char dir[] = "/tmp/dmcrypt-params-XXXXXX";

/* KEY=VALUE into P must be taken, with no error. */
static void
taken (struct dmcrypt_params *p, const char *key, const char *value)
{
  stub_errors_reset ();
  CHECK_MSG (params_config (p, key, value) == 0 && stub_errors () == 0,
             "%s=%s refused: %s", key, value, stub_last_error ());
}

/* KEY=VALUE into P must be refused with one error holding WORDS. */
static void
refused (struct dmcrypt_params *p, const char *key, const char *value,
         const char *words)
{
  int r;

  stub_errors_reset ();
  r = params_config (p, key, value);
  CHECK_MSG (r == -1, "%s=%s taken", key, value);
  CHECK_MSG (stub_errors () == 1, "%s=%s: %u errors", key, value,
             stub_errors ());
  CHECK_MSG (strstr (stub_last_error (), words) != NULL,
             "%s=%s: '%s' lacks '%s'", key, value, stub_last_error (),
             words);
}

/* A file in DIR holding TEXT; its path in PATH. */
static void
file_holding (char *path, size_t size, const char *name, const char *text)
{
  FILE *fp;

  snprintf (path, size, "%s/%s", dir, name);
  fp = fopen (path, "w");
  REQUIRE (fp && fputs (text, fp) != EOF && fclose (fp) == 0, "%s", path);
}

static void
test_defaults (void)
{
  struct dmcrypt_params p;
  size_t i;

  params_init (&p);
  CHECK (p.key_slot == -1);
  CHECK (p.caller_crypt == TRI_UNSET && p.kcryptd_io == TRI_UNSET);
  for (i = 0; i < 7; i++)
    CHECK (p.flag[i] == TRI_UNSET);
  CHECK (p.file == NULL && p.type == VT_UNSET && p.kernel == KSERIES_NONE);
  /* Freed back to the same. */
  taken (&p, "file", "/images/disk.img");
  taken (&p, "key-slot", "3");
  params_free (&p);
  CHECK (p.file == NULL && p.key_slot == -1 && p.flag[0] == TRI_UNSET);
}

static void
test_values (void)
{
  struct dmcrypt_params p;

  params_init (&p);
  taken (&p, "cipher", "aes-xts-plain64");
  CHECK (p.cipher && strcmp (p.cipher, "aes-xts-plain64") == 0);
  refused (&p, "cipher", "aes-cbc-plain", "cipher given more than once");
  /* The engine's settings: the last one wins. */
  taken (&p, "scheduler", "fifo");
  taken (&p, "scheduler", "batch");
  CHECK (strcmp (p.scheduler, "batch") == 0);
  /* nbdkit's numbers: decimal, 0x hex, 0 octal. */
  taken (&p, "offset", "0x10");
  CHECK (p.offset == 16 && p.have_offset);
  taken (&p, "iv-offset", "010");
  CHECK (p.iv_offset == 8 && p.have_iv_offset);
  taken (&p, "workers", "4");
  CHECK (p.workers == 4);
  refused (&p, "workers", "0", "workers: '0' is not a whole number from 1 "
           "to 1024");
  refused (&p, "workers", "abc", "workers: 'abc'");
  refused (&p, "offset", "-1", "offset: '-1' is not a whole number");
  /* Sizes: suffixes as nbdkit's; a chunk holds a sector at least. */
  taken (&p, "max-write-size", "4K");
  CHECK (p.max_write_size == 4096);
  taken (&p, "max-read-size", "2s");
  CHECK (p.max_read_size == 1024);
  refused (&p, "max-write-size", "3", "less than one 512-byte sector");
  refused (&p, "max-inflight", "1X", "is not a size");
  taken (&p, "min-block-size", "sector");
  CHECK (p.min_block_size == MIN_BLOCK_SECTOR);
  refused (&p, "min-block-size", "3", "not a power of two");
  refused (&p, "key-size", "12", "not a whole number of bytes");
  /* Tokens: LUKS2 has 32 (0..31). */
  CHECK (p.token_id == -1 && p.token_type == NULL && !p.token_only);
  taken (&p, "token-id", "31");
  CHECK (p.token_id == 31);
  refused (&p, "token-id", "32", "token-id: '32' is not a whole number");
  taken (&p, "token-type", "clevis");
  CHECK (strcmp (p.token_type, "clevis") == 0);
  refused (&p, "token-type", "x", "token-type given more than once");
  taken (&p, "token-only", "yes");
  CHECK (p.token_only);
  refused (&p, "token-only", "maybe", "token-only: 'maybe' is not a "
           "boolean");
  taken (&p, "device-speed", "0.5");
  CHECK (p.device_speed == 0.5);
  refused (&p, "device-speed", "0", "not a positive number");
  params_free (&p);
}

static void
test_words (void)
{
  struct dmcrypt_params p;
  char alt[64];

  params_init (&p);
  taken (&p, "allow-discards", "yes");
  taken (&p, "same-cpu-crypt", "OFF");
  CHECK (p.flag[0] == TRI_TRUE && p.flag[1] == TRI_FALSE);
  CHECK (p.flag[2] == TRI_UNSET);
  refused (&p, "high-priority", "maybe", "high-priority: 'maybe' is not a "
           "boolean");
  taken (&p, "readonly", "1");
  CHECK (p.readonly);
  taken (&p, "type", "tcrypt");
  CHECK (p.type == VT_TCRYPT && p.type_given);
  refused (&p, "type", "ext4", "type: unknown volume type 'ext4'");
  taken (&p, "kernel", "3.16");
  CHECK (p.kernel == KSERIES_3_16);
  refused (&p, "kernel", "5.0", "kernel: '5.0' is not a kernel series");
  /* dmcrypt-KEY= is KEY=. */
  taken (&p, "dmcrypt-offset", "8");
  CHECK (p.offset == 8);
  /* keyfile= repeats (TCRYPT); the first is the key file. */
  taken (&p, "keyfile", "/k/one");
  taken (&p, "key-file", "/k/two");
  CHECK (p.keyfiles_count == 2 && strcmp (p.keyfile, "/k/one") == 0
         && strcmp (p.keyfiles[1], "/k/two") == 0);
  refused (&p, "allow_discards", "1", "did you mean 'allow-discards'?");
  refused (&p, "nosuch", "1", "unknown parameter 'nosuch'");
  CHECK (params_respelt ("key_size", alt, sizeof alt)
         && strcmp (alt, "key-size") == 0);
  CHECK (params_respelt ("key-size", alt, sizeof alt) == NULL);
  CHECK (params_respelt ("no_such", alt, sizeof alt) == NULL);
  CHECK (params_is_name ("kcryptd-io") && !params_is_name ("kcryptd_io"));
  /* A bare word after file= was a parameter without its value. */
  taken (&p, "file", "/images/disk.img");
  refused (&p, "file", "readonly", "'readonly' needs a value");
  params_free (&p);
}

static void
test_secrets (void)
{
  static const uint8_t key[] = { 0x00, 0x11, 0xab, 0xcd };
  struct dmcrypt_params p;
  char path[256], literal[300];
  int fds[2];

  params_init (&p);
  /* +FILE: the first line, without its newline. */
  file_holding (path, sizeof path, "pw", "s3cret pass\nsecond line\n");
  snprintf (literal, sizeof literal, "+%s", path);
  taken (&p, "passphrase", literal);
  CHECK (p.passphrase_size == 11
         && memcmp (p.passphrase, "s3cret pass", 12) == 0);
  refused (&p, "passphrase", "again", "passphrase given more than once");
  /* key=+FILE: hex with white space around it. */
  file_holding (path, sizeof path, "key", "  0011abCD \n\n");
  snprintf (literal, sizeof literal, "+%s", path);
  taken (&p, "key", literal);
  CHECK (p.key_size == sizeof key && memcmp (p.key, key, sizeof key) == 0);
  params_free (&p);

  params_init (&p);
  refused (&p, "key", "0011a", "key: not hex digits, two per key byte");
  snprintf (literal, sizeof literal, "+%s/none", dir);
  refused (&p, "table", literal, "table: ");
  refused (&p, "passphrase", "-2", "-FD cannot be stdin, stdout or stderr");
  refused (&p, "passphrase", "-x1", "must be followed by a file descriptor");
  refused (&p, "passphrase", "-", "stdin is not a terminal to ask on");
  /* -FD: a pipe's first line. */
  REQUIRE (pipe (fds) == 0, "pipe");
  REQUIRE (write (fds[1], "0 8 crypt x\n", 12) == 12, "write");
  close (fds[1]);
  snprintf (literal, sizeof literal, "-%d", fds[0]);
  taken (&p, "table", literal);
  CHECK (p.table && strcmp (p.table, "0 8 crypt x") == 0);
  /* A literal passphrase that names a file most likely meant +FILE. */
  taken (&p, "passphrase", path);
  CHECK (p.passphrase_file_hint && strcmp (p.passphrase_file_hint, path)
         == 0 && strcmp (p.passphrase, path) == 0);
  params_free (&p);
}

/* KEYS (NULL-terminated key, value pairs) must pass params_check, or be
 * refused with WORDS. */
static void
combination (const char *const *kv, bool need_file, const char *words)
{
  struct dmcrypt_params p;
  size_t i;
  int r;

  params_init (&p);
  for (i = 0; kv[i]; i += 2)
    taken (&p, kv[i], kv[i + 1]);
  stub_errors_reset ();
  r = params_check (&p, need_file);
  if (words == NULL)
    CHECK_MSG (r == 0, "%s...: refused: %s", kv[0], stub_last_error ());
  else
    CHECK_MSG (r == -1 && strstr (stub_last_error (), words),
               "%s...: '%s' lacks '%s'", kv[0], stub_last_error (), words);
  params_free (&p);
}

static void
test_combinations (void)
{
#define KV(...) ((const char *const[]) { __VA_ARGS__, NULL })
  combination (KV ("file", "f", "passphrase", "pw"), true, NULL);
  combination (KV ("passphrase", "pw"), true, "file parameter is required");
  combination (KV ("passphrase", "pw"), false, NULL);
  /* No secret: the volume's tokens (cryptsetup open). */
  combination (KV ("file", "f"), true, NULL);
  combination (KV ("file", "f", "passphrase", "pw", "keyfile", "k"), true,
               "one of passphrase= or keyfile=, not both");
  combination (KV ("file", "f", "token-id", "3", "token-type", "clevis",
                   "token-only", "yes"), true, NULL);
  combination (KV ("file", "f", "passphrase", "pw", "token-id", "0"), true,
               NULL);
  combination (KV ("file", "f", "key-slot", "1"), true,
               "key-slot needs passphrase= or keyfile=");
  combination (KV ("file", "f", "token-type", ""), true,
               "token-type: empty");
  combination (KV ("file", "f", "type", "tcrypt", "token-only", "1"), true,
               "token-id, token-type and token-only are for LUKS");
  combination (KV ("file", "f", "cipher", "aes-xts-plain64", "key", "00",
                   "token-id", "1"), true, "are for LUKS");
  combination (KV ("file", "f", "cipher", "aes-xts-plain64", "key", "00"),
               true, NULL);
  combination (KV ("file", "f", "type", "plain", "key", "00"), true,
               "key= needs cipher=");
  combination (KV ("file", "f", "cipher", "aes-xts-plain64", "key", "00",
                   "passphrase", "pw"), true, "give one plain-mode key");
  combination (KV ("file", "f", "passphrase", "pw", "offset", "8"), true,
               "a LUKS header holds them");
  combination (KV ("file", "f", "passphrase", "pw", "tcrypt-hidden", "1"),
               true, "need type=tcrypt");
  combination (KV ("file", "f", "passphrase", "pw", "kcryptd-io", "1"),
               true, "kcryptd-io: needs kernel=");
#undef KV
}

/* cryptsetup open --type plain --hash sha256 --key-size 256: the key is
 * SHA-256 of the passphrase, "abc" giving FIPS 180-2's first example. */
static void
test_plain_key (void)
{
  static const uint8_t sha256_abc[32] = {
    0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
    0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
    0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
  };
  struct dmcrypt_params p;

  params_init (&p);
  taken (&p, "passphrase", "abc");
  taken (&p, "hash", "sha256");
  taken (&p, "key-size", "256");
  CHECK (params_plain (&p) == false);       /* no cipher= yet: LUKS */
  params_free (&p);

  params_init (&p);
  taken (&p, "type", "plain");
  taken (&p, "passphrase", "abc");
  taken (&p, "hash", "sha256");
  taken (&p, "key-size", "256");
  CHECK (params_plain (&p));
  REQUIRE (plain_key_derive (&p) == 0, "derive: %s", stub_last_error ());
  CHECK (p.key_size == 32 && memcmp (p.key, sha256_abc, 32) == 0);
  CHECK (p.passphrase == NULL);             /* dropped once used */
  CHECK (p.cipher && strcmp (p.cipher, "aes-cbc-essiv:sha256") == 0);
  params_free (&p);

  /* hash=plain: the passphrase itself, zero-padded to the key size. */
  params_init (&p);
  taken (&p, "cipher", "aes-xts-plain64");
  taken (&p, "passphrase", "abc");
  taken (&p, "hash", "plain");
  taken (&p, "key-size", "64");
  REQUIRE (plain_key_derive (&p) == 0, "derive: %s", stub_last_error ());
  CHECK (p.key_size == 8 && memcmp (p.key, "abc\0\0\0\0\0", 8) == 0);
  params_free (&p);
}

static void
remove_dir (void)
{
  static const char *const names[] = { "pw", "key" };
  char path[300];
  size_t i;

  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, names[i]);
    unlink (path);
  }
  rmdir (dir);
}

int
main (void)
{
  REQUIRE (mkdtemp (dir), "mkdtemp");
  test_defaults ();
  test_values ();
  test_words ();
  test_secrets ();
  test_combinations ();
  test_plain_key ();
  remove_dir ();
  if (failures) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("params: %u checks passed\n", checks);
  return 0;
}
