/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One-line notices the user should see at start-up although nothing
 * failed (nbdkit has no warning call: nbdkit_error says "error", and
 * nbdkit_debug needs -v).  They go to stderr, which is still the
 * terminal while .config_complete runs, and to the debug log. */
#include <stdarg.h>
#include <stdio.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "internal.h"

void
dmcrypt_notice (const char *fmt, ...)
{
  char line[1024];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (line, sizeof line, fmt, ap);
  va_end (ap);
  fprintf (stderr, "nbdkit: dmcrypt: note: %s\n", line);
  nbdkit_debug ("%s", line);
}
