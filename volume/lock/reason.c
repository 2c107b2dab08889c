/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Why an image could not be locked, in the one line the user reads
 * (lock.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../control/sockdir.h"
#include "lock.h"

/* "dmcrypt volume 'vol' (pid 12)" when one of the user's instances
 * serves the image, else "qemu-img (pid 34)" or "another program" into
 * BUF. */
static void
describe_holder (const struct image_lock_holder *h, char *buf, size_t size)
{
  char name[CTL_MAX_NAME + 1];
  long pid;

  if (image_lock_find_instance (h->dev, h->ino, name, sizeof name, &pid)
      == 0)
    snprintf (buf, size, "dmcrypt volume '%s' (pid %ld)", name, pid);
  else if (h->pid)
    snprintf (buf, size, "%s (pid %d)", h->comm, (int) h->pid);
  else
    snprintf (buf, size, "another program");
}

void
image_lock_reason (const char *path, bool exclusive, int err,
                   const struct image_lock_holder *h, char *why,
                   size_t size)
{
  char who[CTL_MAX_NAME + 64];

  describe_holder (h, who, sizeof who);
  if (err == EBUSY && strncmp (who, "dmcrypt", 7) == 0)
    snprintf (why, size, "%s is in use: %s has it open read-write", path,
              who);
  else if (err == EBUSY)
    snprintf (why, size, "%s is in use: mounted, mapped by device-mapper "
              "or opened exclusively by another program", path);
  else if (err != EAGAIN)
    snprintf (why, size, "%s: cannot lock: %s", path, strerror (err));
  else if (exclusive)
    snprintf (why, size, "%s is in use: %s has it open%s; it can have "
              "one writer only (readers may share it: readonly=true or "
              "nbdkit -r)", path, who,
              h->known && !h->writer ? " read-only" : " read-write");
  else
    snprintf (why, size, "%s is in use: %s has it open read-write; it "
              "cannot be read while another writes it", path, who);
}
