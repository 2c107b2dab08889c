/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the dm-crypt table language: crypt_table_parse on any bytes.
 *
 * Rules checked beyond "no crash, no leak":
 *   - a refusal reports exactly one error, on one line, and leaves the
 *     table empty; an acceptance reports none;
 *   - an accepted table validates, and formatting it (with and without
 *     keys) gives a line that parses back to the same table;
 *   - no error message holds the key's hex digits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../table/crypt_table.h"
#include "fuzz.h"

static bool
same_table (const struct crypt_table *a, const struct crypt_table *b,
            bool same_key)
{
  if (a->start != b->start || a->length != b->length
      || a->iv_offset != b->iv_offset || a->offset != b->offset
      || a->flags != b->flags || a->sector_size != b->sector_size
      || a->key_size != b->key_size
      || strcmp (a->cipher, b->cipher) != 0
      || strcmp (a->device, b->device) != 0)
    return false;
  return !same_key || a->key_size == 0
    || memcmp (a->key, b->key, a->key_size) == 0;
}

static bool
is_empty (const struct crypt_table *t)
{
  static const struct crypt_table zero;

  return memcmp (t, &zero, sizeof zero) == 0;
}

/* Formats T and parses the line again: the same table must come back
 * (with an all-zero key when the key is hidden). */
static void
check_round_trip (const struct crypt_table *t, bool showkeys)
{
  struct crypt_table again;
  char *line = crypt_table_format (t, showkeys, NULL);
  size_t i;

  if (line == NULL)
    fuzz_fail ("crypt_table_format failed on an accepted table");
  fuzz_log_reset ();
  if (crypt_table_parse (line, &again) == -1)
    fuzz_fail ("formatted line refused: %s", showkeys ? line : "(keys)");
  if (!same_table (t, &again, showkeys))
    fuzz_fail ("formatted line parses to another table");
  for (i = 0; !showkeys && i < again.key_size; i++)
    if (again.key[i] != 0)
      fuzz_fail ("hidden key is not all zeros");
  crypt_table_free (&again);
  crypt_table_free_line (line);
}

/* The fifth word of LINE (the key field) when it looks like a key worth
 * hiding: 16 or more hex digits that no other word contains. */
static char *
secret_key_word (const char *line)
{
  char *copy = strdup (line), *save = NULL, *word, *key = NULL;
  const char *seps = " \t\n\v\f\r";
  char *words[64];
  size_t n = 0, i;

  if (copy == NULL)
    abort ();
  for (word = strtok_r (copy, seps, &save); word && n < 64;
       word = strtok_r (NULL, seps, &save))
    words[n++] = word;
  if (n >= 5 && strlen (words[4]) >= 16
      && strspn (words[4], "0123456789abcdefABCDEF") == strlen (words[4])) {
    key = strdup (words[4]);
    for (i = 0; key && i < n; i++)
      if (i != 4 && strstr (words[i], key) != NULL) {
        free (key);
        key = NULL;
      }
  }
  free (copy);
  return key;
}

int
fuzz_table (const uint8_t *data, size_t size)
{
  char *line = fuzz_strndup (data, size), *key_word;
  struct crypt_table t, copy;
  int r;

  fuzz_log_reset ();
  r = crypt_table_parse (line, &t);
  if (r == -1) {
    if (fuzz_log_errors () != 1 || fuzz_log_multiline ())
      fuzz_fail ("a refused table reported %u errors (want one line)",
                 fuzz_log_errors ());
    if (!is_empty (&t))
      fuzz_fail ("a refused table was not left empty");
    key_word = secret_key_word (line);
    if (key_word && strstr (fuzz_log_text (), key_word) != NULL)
      fuzz_fail ("an error message holds the key's hex digits");
    free (key_word);
    free (line);
    return 0;
  }
  if (fuzz_log_errors () != 0)
    fuzz_fail ("an accepted table reported an error");
  if (crypt_table_validate (&t) == -1)
    fuzz_fail ("an accepted table does not validate");
  check_round_trip (&t, true);
  check_round_trip (&t, false);
  if (crypt_table_copy (&copy, &t) == -1 || !same_table (&t, &copy, true))
    fuzz_fail ("crypt_table_copy differs");
  crypt_table_free (&copy);
  crypt_table_free (&t);
  if (!is_empty (&t))
    fuzz_fail ("crypt_table_free left fields behind");
  free (line);
  return 0;
}

FUZZ_ENTRY (fuzz_table)
