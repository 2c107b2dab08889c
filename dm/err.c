/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A command's failure as dmsetup reports it (dm.h): an errno value and
 * a sentence, logged for the server's debug log as it is made. */
#include <stdarg.h>
#include <stdio.h>

#include "../common/log.h"
#include "dm.h"

void
dm_fail (struct dm_err *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  err->errnum = errnum;
  va_start (ap, fmt);
  vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  va_end (ap);
  nbdkit_debug ("control: %s", err->msg);
}
