/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Milliseconds on the monotonic clock, for deadlines of poll loops that
 * a change of the wall clock must not stretch or cut short. */
#ifndef DMCRYPT_COMMON_CLOCK_H
#define DMCRYPT_COMMON_CLOCK_H

#include <time.h>

static inline long long
monotonic_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

#endif /* DMCRYPT_COMMON_CLOCK_H */
