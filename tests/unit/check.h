/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unit tests' two kinds of check.  CHECK reports a failed condition
 * and counts it in FAILURES, so that one run lists every failure; main
 * returns non-zero when any was counted.  CHECK_MSG and check_that do
 * the same with a message of their own (check_that also returns the
 * condition, for checks that guard the next ones).  REQUIRE stops the
 * test at the first failure, for checks whose failure makes the rest
 * meaningless (a server that did not start, a request that must have
 * succeeded).  CHECKS counts the checks made with a message. */
#ifndef DMCRYPT_TEST_CHECK_H
#define DMCRYPT_TEST_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures __attribute__ ((unused));
static unsigned checks __attribute__ ((unused));

static inline bool __attribute__ ((format (printf, 4, 5), unused))
check_at (bool ok, const char *file, int line, const char *fmt, ...)
{
  va_list ap;

  checks++;
  if (ok)
    return true;
  failures++;
  fprintf (stderr, "%s:%d: FAILED: ", file, line);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  return false;
}
/* The source tree's top, TOP, from this test's own path
 * (TOP/tests/unit/test-NAME), into TOP (SIZE bytes): the tests find
 * their data (tests/data, fuzz/) from there.  False when the path
 * cannot be read. */
static inline bool __attribute__ ((unused))
check_topdir (char *top, size_t size)
{
  ssize_t n = readlink ("/proc/self/exe", top, size - 1);

  if (n <= 0)
    return false;
  top[n] = '\0';
  for (int up = 0; up < 3; up++) {
    char *slash = strrchr (top, '/');

    if (slash == NULL)
      return false;
    *slash = '\0';
  }
  return true;
}

#define check_that(ok, ...) check_at ((ok), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_MSG(cond, ...) ((void) check_that ((cond), __VA_ARGS__))

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf (stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                       \
    }                                                                   \
  } while (0)

#define REQUIRE(cond, ...)                                             \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf (stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf (stderr, __VA_ARGS__);                                   \
      fputc ('\n', stderr);                                            \
      exit (1);                                                        \
    }                                                                  \
  } while (0)

#endif /* DMCRYPT_TEST_CHECK_H */
