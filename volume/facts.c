/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A lab client's export name under kernel= (internal.h): what the
 * kernel knew of the bios the client sends on the connection, which
 * NBD carries no flag for.  Comma-separated items:
 *
 *   cpu=N   the CPU that submitted them to dm-crypt (a per-CPU kcryptd
 *           of 3.16 encrypts and submits a bio on the CPU it came
 *           from); default: the connection's index modulo the CPUs
 *   sync    its writes are REQ_SYNC: fsync's writeback (WB_SYNC_ALL),
 *           whose bios btrfs and __writepage make WRITE_SYNC
 *
 * An empty name says nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "internal.h"

#define FACTS_MAX 256           /* bytes of an export name we read */

/* "cpu=N" of LEN bytes at ITEM into *CPU (below CPUS). */
static int
parse_cpu (const char *item, size_t len, unsigned cpus, int *cpu)
{
  char digits[16], *end;
  unsigned long n;

  len -= 4;
  if (len == 0 || len >= sizeof digits) {
    nbdkit_error ("export name: '%.*s': cpu= needs a number", (int) len + 4,
                  item);
    return -1;
  }
  memcpy (digits, item + 4, len);
  digits[len] = '\0';
  errno = 0;
  n = strtoul (digits, &end, 10);
  if (errno || *end || digits[0] == '-' || n >= cpus) {
    nbdkit_error ("export name: cpu=%s: the lab models CPUs 0 to %u "
                  "(workers=%u)", digits, cpus - 1, cpus);
    return -1;
  }
  *cpu = (int) n;
  return 0;
}

static int
parse_item (const char *item, size_t len, unsigned cpus,
            struct conn_facts *f)
{
  if (len == 4 && strncmp (item, "sync", 4) == 0) {
    f->sync = true;
    return 0;
  }
  if (len >= 4 && strncmp (item, "cpu=", 4) == 0)
    return parse_cpu (item, len, cpus, &f->cpu);
  nbdkit_error ("export name: '%.*s' is not a fact the lab takes "
                "under kernel= (cpu=N, sync)", (int) len, item);
  return -1;
}

int
conn_facts_parse (const char *name, unsigned cpus, struct conn_facts *f)
{
  const char *p = name ? name : "";
  size_t len;

  *f = (struct conn_facts) { .cpu = -1, .sync = false };
  if (strlen (p) > FACTS_MAX) {
    nbdkit_error ("export name: longer than %d bytes", FACTS_MAX);
    return -1;
  }
  while (*p) {
    len = strcspn (p, ",");
    if (len == 0 || parse_item (p, len, cpus, f) == -1) {
      if (len == 0)
        nbdkit_error ("export name: an empty item in '%s'", name);
      return -1;
    }
    p += len + (p[len] == ',');
  }
  return 0;
}
