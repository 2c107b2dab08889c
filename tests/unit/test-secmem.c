/* SPDX-License-Identifier: GPL-2.0-or-later */
/* secmem: zeroed, page-aligned, kept out of core dumps, locked when the
 * memlock limit allows, and refused cleanly when too large. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../crypto/secmem.h"


#include "check.h"

/* The VmFlags line of the mapping that contains PTR, from smaps. */
static bool
vm_flags_of (const void *ptr, char *flags, size_t len)
{
  FILE *fp = fopen ("/proc/self/smaps", "r");
  char line[512];
  bool inside = false, found = false;
  uintptr_t addr = (uintptr_t) ptr;

  if (fp == NULL)
    return false;
  while (!found && fgets (line, sizeof line, fp) != NULL) {
    unsigned long lo, hi;
    if (sscanf (line, "%lx-%lx ", &lo, &hi) == 2 && strchr (line, '-'))
      inside = addr >= lo && addr < hi;
    else if (inside && strncmp (line, "VmFlags:", 8) == 0) {
      snprintf (flags, len, "%s", line + 8);
      found = true;
    }
  }
  fclose (fp);
  return found;
}

static bool
all_zero (const unsigned char *p, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (p[i] != 0)
      return false;
  return true;
}

static void
test_sizes (void)
{
  static const size_t sizes[] = { 0, 1, 32, 4095, 4096, 4097, 1 << 20 };
  size_t page_bytes = (size_t) sysconf (_SC_PAGESIZE);
  size_t i;

  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = secmem_alloc (sizes[i]);
    CHECK (p != NULL);
    if (p == NULL)
      continue;
    CHECK ((uintptr_t) p % page_bytes == 0);
    CHECK (all_zero (p, sizes[i]));
    memset (p, 0xa5, sizes[i]);              /* writable to the end */
    secmem_free (p, sizes[i]);
  }
}

static void
test_flags (void)
{
  char flags[512];
  unsigned char *p = secmem_alloc (64);

  CHECK (p != NULL);
  if (p == NULL)
    return;
  CHECK (vm_flags_of (p, flags, sizeof flags));
  CHECK (strstr (flags, " dd") != NULL);   /* MADV_DONTDUMP */
  /* Locking is best effort: expect it only when one page fits, and not
   * under ASan or TSan, whose mlock interceptors do nothing. */
#if defined __SANITIZE_ADDRESS__ || defined __SANITIZE_THREAD__
  printf ("note: sanitizer build, mlock is a no-op\n");
#else
  struct rlimit limit;

  if (getrlimit (RLIMIT_MEMLOCK, &limit) == 0 &&
      limit.rlim_cur >= (rlim_t) 2 * sysconf (_SC_PAGESIZE))
    CHECK (strstr (flags, " lo") != NULL);
  else
    printf ("note: RLIMIT_MEMLOCK too small to expect locking\n");
#endif
  secmem_free (p, 64);
}

static void
test_dup_and_errors (void)
{
  static const char secret[] = "not really a key";
  char *copy = secmem_dup (secret, sizeof secret);

  CHECK (copy != NULL && memcmp (copy, secret, sizeof secret) == 0);
  secmem_free (copy, sizeof secret);

  errno = 0;
  CHECK (secmem_alloc (SIZE_MAX) == NULL);
  CHECK (errno == ENOMEM);

  errno = 1234;                  /* free keeps errno for the caller */
  secmem_free (NULL, 10);
  copy = secmem_alloc (10);
  secmem_free (copy, 10);
  CHECK (errno == 1234);
}

int
main (void)
{
  test_sizes ();
  test_flags ();
  test_dup_and_errors ();
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("secmem: all checks passed\n");
  return 0;
}
