/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine folders report through nbdkit's logging functions.  Inside
 * the server they resolve from nbdkit at load time; unit tests and tools
 * link tests/nbdkit-stubs.c instead, which prints to stderr. */
#ifndef DMCRYPT_LOG_H
#define DMCRYPT_LOG_H

#include <stdarg.h>

extern void nbdkit_error (const char *msg, ...)
  __attribute__ ((format (printf, 1, 2)));
extern void nbdkit_debug (const char *msg, ...)
  __attribute__ ((format (printf, 1, 2)));

#endif /* DMCRYPT_LOG_H */
