/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the parameter parsing both front ends share:
 * volume/params/config.c's params_config with the key=value pairs of
 * the input, one per line, as nbdkit would hand them over from its
 * command line.
 *
 * A key=+TEXT value is served from a scratch file holding TEXT, so the
 * key file reader is fuzzed without opening whatever path the input
 * names.
 *
 * Rules checked beyond "no crash, no leak":
 *   - a refused pair reports exactly one one-line error; an accepted
 *     one reports none;
 *   - key=HEX that is accepted holds exactly the bytes of HEX;
 *   - no error message holds the text of a passphrase= or key= value. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../volume/params/params.h"
#include "fuzz.h"

enum { MAX_PAIRS = 64 };

struct pair
{
  char *key, *value;
};

static struct dmcrypt_params params;
static char key_file[64];

static void
remove_key_file (void)
{
  if (key_file[0] != '\0')
    unlink (key_file);
}

static void
setup_once (void)
{
  static bool done;
  const char *dir = getenv ("TMPDIR");
  int fd;

  if (done)
    return;
  done = true;
  params_init (&params);
  snprintf (key_file, sizeof key_file, "%.40s/fuzz-key.XXXXXX",
            dir && strlen (dir) <= 40 ? dir : "/tmp");
  fd = mkstemp (key_file);
  if (fd == -1)
    fuzz_fail ("mkstemp %s failed", key_file);
  close (fd);
  atexit (remove_key_file);
}

/* Writes TEXT into the scratch key file and returns "+FILE". */
static char *
key_file_value (const char *text)
{
  FILE *fp = fopen (key_file, "w");
  char *value;

  if (fp == NULL || fputs (text, fp) == EOF || fclose (fp) != 0)
    fuzz_fail ("cannot write %s", key_file);
  if (asprintf (&value, "+%s", key_file) == -1)
    abort ();
  return value;
}

/* Splits TEXT into lines of KEY=VALUE (VALUE empty without '='). */
static size_t
split_pairs (char *text, struct pair *pairs)
{
  char *line, *save = NULL, *eq;
  size_t n = 0;

  for (line = strtok_r (text, "\n", &save); line && n < MAX_PAIRS;
       line = strtok_r (NULL, "\n", &save)) {
    eq = strchr (line, '=');
    pairs[n].key = line;
    pairs[n].value = eq ? eq + 1 : line + strlen (line);
    if (eq)
      *eq = '\0';
    n++;
  }
  return n;
}

/* Whether VALUE is a secret worth looking for: a passphrase or a hex
 * key of 8 or more bytes of text that no other pair contains. */
static bool
is_secret (const struct pair *pairs, size_t n, size_t which)
{
  const struct pair *p = &pairs[which];
  size_t i;

  if ((strcmp (p->key, "passphrase") != 0 && strcmp (p->key, "key") != 0)
      || strlen (p->value) < 8 || p->value[0] == '+')
    return false;
  for (i = 0; i < n; i++)
    if (i != which && (strstr (pairs[i].key, p->value)
                       || strstr (pairs[i].value, p->value)))
      return false;
  return true;
}

static bool
is_hex (const char *s)
{
  return *s != '\0' && strspn (s, "0123456789abcdefABCDEF") == strlen (s);
}

/* An accepted key=HEX must hold the bytes the digits spell. */
static void
check_key_bytes (const char *hex)
{
  size_t i;
  unsigned byte;

  if (params.key_size != strlen (hex) / 2)
    fuzz_fail ("key=%zu digits gave %zu bytes", strlen (hex),
               params.key_size);
  for (i = 0; i < params.key_size; i++) {
    if (sscanf (hex + 2 * i, "%2x", &byte) != 1 || params.key[i] != byte)
      fuzz_fail ("key byte %zu differs from its digits", i);
  }
}

static void
config_one (const struct pair *pairs, size_t n, size_t i)
{
  const struct pair *p = &pairs[i];
  bool had_key = params.key != NULL;
  char *value = p->value;
  int r;

  if (strcmp (p->key, "key") == 0 && value[0] == '+')
    value = key_file_value (value + 1);
  fuzz_log_reset ();
  r = params_config (&params, p->key, value);
  if (r == -1 && (fuzz_log_errors () != 1 || fuzz_log_multiline ()))
    fuzz_fail ("%s= refused with %u errors (want one line)", p->key,
               fuzz_log_errors ());
  if (r == 0 && fuzz_log_errors () != 0)
    fuzz_fail ("%s= accepted but reported an error", p->key);
  if (r == -1 && is_secret (pairs, n, i)
      && strstr (fuzz_log_text (), p->value) != NULL)
    fuzz_fail ("an error message holds the %s= value", p->key);
  if (r == 0 && !had_key && strcmp (p->key, "key") == 0 && is_hex (value))
    check_key_bytes (value);
  if (value != p->value)
    free (value);
}

int
fuzz_params (const uint8_t *data, size_t size)
{
  struct pair pairs[MAX_PAIRS];
  char *text;
  size_t n, i;

  setup_once ();
  text = fuzz_strndup (data, size);
  n = split_pairs (text, pairs);
  for (i = 0; i < n; i++)
    config_one (pairs, n, i);
  params_free (&params);              /* back to params_init's */
  free (text);
  return 0;
}

FUZZ_ENTRY (fuzz_params)
