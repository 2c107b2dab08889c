/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libcryptsetup's log, routed into nbdkit_debug.  Left alone, the library
 * prints to stdout/stderr, which an nbdkit plugin must never do. */
#include <stddef.h>
#include <stdio.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>
#include <libcryptsetup.h>

#include "../common/log.h"
#include "internal.h"

/* -D dmcrypt.luks=1: libcryptsetup's own debug messages too. */
NBDKIT_DLL_PUBLIC int dmcrypt_debug_luks;

/* Per thread: luks_unlock may run in several threads at once (tests),
 * and the callback is global. */
static __thread char last_error[256];

/* Copies MSG into BUF on one line: newlines become spaces, trailing
 * blanks go. */
static void
one_line (char *buf, size_t buf_size, const char *msg)
{
  size_t n = 0;

  for (; *msg != '\0' && n + 1 < buf_size; msg++)
    buf[n++] = (*msg == '\n' || *msg == '\r') ? ' ' : *msg;
  while (n > 0 && buf[n - 1] == ' ')
    n--;
  buf[n] = '\0';
}

static void
log_callback (int level, const char *msg, void *usrptr)
{
  char line[sizeof last_error];

  (void) usrptr;
  /* Whole-metadata dumps: too long for a log line, and not needed. */
  if (level == CRYPT_LOG_DEBUG_JSON || msg == NULL)
    return;
  one_line (line, sizeof line, msg);
  nbdkit_debug ("libcryptsetup: %s", line);
  if (level == CRYPT_LOG_ERROR)
    snprintf (last_error, sizeof last_error, "%s", line);
}

void
luks_log_start (void)
{
  last_error[0] = '\0';
  crypt_set_debug_level (dmcrypt_debug_luks ? CRYPT_DEBUG_ALL
                                            : CRYPT_DEBUG_NONE);
  /* The default callback (cd = NULL) also catches messages logged
   * before a crypt_device exists, e.g. by crypt_init. */
  crypt_set_log_callback (NULL, log_callback, NULL);
}

const char *
luks_log_last_error (void)
{
  return last_error[0] != '\0' ? last_error : NULL;
}
