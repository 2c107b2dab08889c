/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stand-ins for the nbdkit functions the engine folders and the shared
 * layer call, so unit tests and tools link without the server.  Errors
 * go to stderr, and the last one is kept for tests that check what a
 * refusal says (nbdkit-stubs.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../common/log.h"
#include "nbdkit-stubs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char last_error[1024];
static unsigned errors;

void
nbdkit_error (const char *fmt, ...)
{
  va_list ap;

  pthread_mutex_lock (&lock);
  va_start (ap, fmt);
  vsnprintf (last_error, sizeof last_error, fmt, ap);
  va_end (ap);
  errors++;
  fprintf (stderr, "error: %s\n", last_error);
  pthread_mutex_unlock (&lock);
}

void
nbdkit_debug (const char *fmt, ...)
{
  va_list ap;

  if (getenv ("DMCRYPT_DEBUG") == NULL)
    return;
  va_start (ap, fmt);
  fputs ("debug: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}

/* No server to shut down: the sleep always ends normally. */
int nbdkit_nanosleep (unsigned sec, unsigned nsec);
int
nbdkit_nanosleep (unsigned sec, unsigned nsec)
{
  struct timespec ts = { .tv_sec = sec, .tv_nsec = nsec };

  nanosleep (&ts, NULL);
  return 0;
}

/* A test never asks on its terminal. */
int nbdkit_stdio_safe (void);
int
nbdkit_stdio_safe (void)
{
  return 0;
}

void
stub_errors_reset (void)
{
  pthread_mutex_lock (&lock);
  last_error[0] = '\0';
  errors = 0;
  pthread_mutex_unlock (&lock);
}

unsigned
stub_errors (void)
{
  unsigned n;

  pthread_mutex_lock (&lock);
  n = errors;
  pthread_mutex_unlock (&lock);
  return n;
}

const char *
stub_last_error (void)
{
  return last_error;
}
