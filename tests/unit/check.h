/* The unit tests' two kinds of check.  CHECK reports a failed condition
 * and counts it in FAILURES, so that one run lists every failure; main
 * returns non-zero when any was counted.  REQUIRE stops the test at the
 * first failure, for checks whose failure makes the rest meaningless
 * (a server that did not start, a request that must have succeeded). */
#ifndef DMCRYPT_TEST_CHECK_H
#define DMCRYPT_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int failures __attribute__ ((unused));

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
