/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The nbdkit logging functions that the table and crypto code call,
 * for the tool: errors become "dmcryptctl: reason" on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../common/log.h"
#include "ctl.h"

void
nbdkit_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fputs (PROGRAM ": ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}

void
nbdkit_debug (const char *fmt, ...)
{
  va_list ap;

  if (getenv ("DMCRYPT_DEBUG") == NULL)
    return;
  va_start (ap, fmt);
  fputs (PROGRAM ": debug: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}
