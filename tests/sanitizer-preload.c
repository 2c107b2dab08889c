/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Preloaded with the sanitizer runtime into nbdkit by tests/bin/nbdkit
 * (make check-asan, make check-tsan); tests/functions.sh builds it.
 *
 * A preloaded ASan or TSan runtime starts on the first malloc.  In
 * nbdkit that is inside libp11-kit's constructor (gnutls loads it),
 * while newlocale holds glibc's locale lock.  The runtime's start-up
 * looks up swift_demangle with dlsym and, when it is missing, clears the
 * error with dlerror, which translates the message and takes the same
 * lock: the lock is left broken, and the next newlocale (json-c, when
 * libcryptsetup reads a LUKS2 header) waits forever.  With this symbol
 * the lookup succeeds and dlerror is never called.  It is only called
 * for Swift symbol names, which nbdkit has none of. */
#include <stddef.h>

char *swift_demangle (const char *mangled, size_t mangled_len,
                      char *out, size_t *out_len, unsigned flags);

char *
swift_demangle (const char *mangled, size_t mangled_len, char *out,
                size_t *out_len, unsigned flags)
{
  (void) mangled;
  (void) mangled_len;
  (void) out;
  (void) out_len;
  (void) flags;
  return NULL;                  /* not demangled: the name is kept */
}
