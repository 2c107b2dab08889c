/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stand-ins for the nbdkit server functions that the fuzzed code calls.
 * Errors are kept in a log (not printed: a fuzzer runs millions of
 * inputs) so a fuzzer can check what was reported.  The parsers follow
 * nbdkit's documented rules closely enough for the plugin's own checks
 * to be reached; they are not nbdkit's code. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"

static char log_text[FUZZ_LOG_BYTES];
static size_t log_bytes;
static unsigned log_errors;
static bool log_multiline;

void
fuzz_log_reset (void)
{
  log_text[0] = '\0';
  log_bytes = 0;
  log_errors = 0;
  log_multiline = false;
}

unsigned
fuzz_log_errors (void)
{
  return log_errors;
}

const char *
fuzz_log_text (void)
{
  return log_text;
}

bool
fuzz_log_multiline (void)
{
  return log_multiline;
}

void
fuzz_fail (const char *why, ...)
{
  va_list ap;

  va_start (ap, why);
  fputs ("fuzz: rule broken: ", stderr);
  vfprintf (stderr, why, ap);
  fputc ('\n', stderr);
  va_end (ap);
  if (log_bytes > 0)
    fprintf (stderr, "fuzz: errors reported:\n%s", log_text);
  abort ();
}

char *
fuzz_strndup (const uint8_t *data, size_t size)
{
  char *s = strndup ((const char *) data, size);

  if (s == NULL)
    abort ();
  return s;
}

uint8_t *
fuzz_padded (const uint8_t *data, size_t n, size_t size)
{
  uint8_t *buf = calloc (1, size);

  if (buf == NULL)
    abort ();
  memcpy (buf, data, n < size ? n : size);
  return buf;
}

void nbdkit_verror (const char *fmt, va_list args);
void nbdkit_error (const char *fmt, ...);
void nbdkit_vdebug (const char *fmt, va_list args);
void nbdkit_debug (const char *fmt, ...);

void
nbdkit_verror (const char *fmt, va_list args)
{
  char msg[4096];
  int n;

  /* Formatting every message checks its arguments (a NULL %s, a bad
   * pointer) under the sanitizers even though nothing is printed. */
  n = vsnprintf (msg, sizeof msg, fmt, args);
  if (n < 0)
    fuzz_fail ("nbdkit_error: cannot format \"%s\"", fmt);
  if (msg[0] == '\0')
    fuzz_fail ("nbdkit_error: empty message from \"%s\"", fmt);
  if (strchr (msg, '\n') != NULL)
    log_multiline = true;
  log_errors++;
  n = snprintf (log_text + log_bytes, sizeof log_text - log_bytes, "%s\n",
                msg);
  if (n > 0)
    log_bytes += (size_t) n < sizeof log_text - log_bytes ?
      (size_t) n : sizeof log_text - log_bytes - 1;
}

void
nbdkit_error (const char *fmt, ...)
{
  va_list ap;
  int saved_errno = errno;

  va_start (ap, fmt);
  errno = saved_errno;          /* for %m */
  nbdkit_verror (fmt, ap);
  va_end (ap);
  errno = saved_errno;
}

void
nbdkit_vdebug (const char *fmt, va_list args)
{
  char msg[4096];

  if (vsnprintf (msg, sizeof msg, fmt, args) < 0)
    fuzz_fail ("nbdkit_debug: cannot format \"%s\"", fmt);
}

void
nbdkit_debug (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  nbdkit_vdebug (fmt, ap);
  va_end (ap);
}

/* ---- number and boolean parsers ---------------------------------- */

/* The end of a strto* call: no digits, trailing text and range errors
 * are refused with one error naming WHAT. */
static int
check_number_end (const char *what, const char *str, const char *end)
{
  if (errno != 0) {
    nbdkit_error ("%s: could not parse number: \"%s\": %m", what, str);
    return -1;
  }
  if (end == str) {
    nbdkit_error ("%s: empty string where we expected a number", what);
    return -1;
  }
  if (*end != '\0') {
    nbdkit_error ("%s: could not parse number: \"%s\": trailing garbage",
                  what, str);
    return -1;
  }
  return 0;
}

static bool
is_negative (const char *str)
{
  while (isspace ((unsigned char) *str))
    str++;
  return *str == '-';
}

int nbdkit_parse_int (const char *what, const char *str, int *rp);
int nbdkit_parse_unsigned (const char *what, const char *str,
                           unsigned *rp);
int nbdkit_parse_uint64_t (const char *what, const char *str,
                           uint64_t *rp);
int64_t nbdkit_parse_size (const char *str);
int nbdkit_parse_bool (const char *str);

int
nbdkit_parse_int (const char *what, const char *str, int *rp)
{
  char *end;
  long r;

  errno = 0;
  r = strtol (str, &end, 0);
  if (errno == 0 && (r < INT_MIN || r > INT_MAX))
    errno = ERANGE;
  if (check_number_end (what, str, end) == -1)
    return -1;
  *rp = (int) r;
  return 0;
}

/* Unsigned values up to MAX; a minus sign is refused, not wrapped. */
static int
parse_unsigned_max (const char *what, const char *str, uint64_t max,
                    uint64_t *rp)
{
  unsigned long long r;
  char *end;

  if (is_negative (str)) {
    nbdkit_error ("%s: negative numbers are not allowed", what);
    return -1;
  }
  errno = 0;
  r = strtoull (str, &end, 0);
  if (errno == 0 && r > max)
    errno = ERANGE;
  if (check_number_end (what, str, end) == -1)
    return -1;
  *rp = r;
  return 0;
}

int
nbdkit_parse_unsigned (const char *what, const char *str, unsigned *rp)
{
  uint64_t r;

  if (parse_unsigned_max (what, str, UINT_MAX, &r) == -1)
    return -1;
  *rp = (unsigned) r;
  return 0;
}

int
nbdkit_parse_uint64_t (const char *what, const char *str, uint64_t *rp)
{
  return parse_unsigned_max (what, str, UINT64_MAX, rp);
}

/* A byte count with an optional unit letter (b, k, m, g, t, p, e; binary
 * multiples), as nbdkit_parse_size documents.  Returns -1 after an
 * error. */
int64_t
nbdkit_parse_size (const char *str)
{
  static const char units[] = "bkmgtpe";
  const char *unit;
  char *end;
  long long size;
  unsigned shift_bits = 0;

  errno = 0;
  size = strtoll (str, &end, 10);
  if (errno != 0 || end == str || size < 0) {
    nbdkit_error ("size: could not parse \"%s\"", str);
    return -1;
  }
  if (*end != '\0') {
    unit = end[1] == '\0' ? strchr (units, tolower ((unsigned char) *end))
                          : NULL;
    if (unit == NULL) {
      nbdkit_error ("size: could not parse \"%s\": unknown unit", str);
      return -1;
    }
    shift_bits = 10 * (unsigned) (unit - units);
  }
  if (shift_bits > 0 && size > INT64_MAX >> shift_bits) {
    nbdkit_error ("size: \"%s\" is too large", str);
    return -1;
  }
  return (int64_t) size << shift_bits;
}

int
nbdkit_parse_bool (const char *str)
{
  static const char *const yes[] = { "1", "true", "t", "yes", "y", "on" };
  static const char *const no[] = { "0", "false", "f", "no", "n", "off" };
  size_t i;

  for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (strcasecmp (str, yes[i]) == 0)
      return 1;
    if (strcasecmp (str, no[i]) == 0)
      return 0;
  }
  nbdkit_error ("could not decipher boolean (%s)", str);
  return -1;
}

/* volume/params/secretread.c reads "-" (a prompt) and "-FD" from this
 * process's terminal or descriptors, "+FILE" from any file: while
 * fuzzing, only literal secrets are taken. */
char *secret_read (const char *what, const char *value, size_t *size);

char *
secret_read (const char *what, const char *value, size_t *size)
{
  (void) value;
  (void) size;
  nbdkit_error ("%s: only literal secrets while fuzzing", what);
  return NULL;
}

int
fuzz_image_read (void *opaque, void *buf, size_t len, uint64_t offset)
{
  const struct fuzz_image *im = opaque;

  if (offset > im->size || len > im->size - offset)
    return -1;
  memcpy (buf, im->data + offset, len);
  return 0;
}

void
fuzz_check_reason (const char *why)
{
  if (why[0] == '\0' || strchr (why, '\n') != NULL)
    fuzz_fail ("a refusal without a one-line reason: '%s'", why);
}
