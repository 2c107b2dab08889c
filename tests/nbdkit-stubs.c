/* Stand-ins for the nbdkit functions the engine folders call, so unit
 * tests and tools link without the server.  Errors go to stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/log.h"

void
nbdkit_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fputs ("error: ", stderr);
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
  fputs ("debug: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}
