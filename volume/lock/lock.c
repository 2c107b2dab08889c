/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Image locks (lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock.h"

struct image_lock
{
  int fd;                     /* the caller's; holds the OFD lock */
  int claim_fd;               /* O_EXCL open of a block device, or -1 */
  const char *path;           /* the caller's string, for O_EXCL */
  bool blockdev;
  bool exclusive;
  struct stat st;
};

static int
ofd_lock (int fd, bool exclusive)
{
  struct flock fl = { .l_type = exclusive ? F_WRLCK : F_RDLCK,
                      .l_whence = SEEK_SET };

  return fcntl (fd, F_OFD_SETLK, &fl);
}

static void
unlock_fd (int fd)
{
  struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

  fcntl (fd, F_OFD_SETLK, &fl);
}

/* Claims a block device as the kernel does for a writer: O_EXCL fails
 * with EBUSY while anyone else holds such a claim or a mount. */
static int
claim_blockdev (struct image_lock *l)
{
  struct stat st;
  int fd = open (l->path, O_RDWR | O_EXCL | O_CLOEXEC);

  if (fd == -1)
    return -1;
  if (fstat (fd, &st) == -1 || st.st_rdev != l->st.st_rdev) {
    close (fd);
    errno = ESTALE;             /* the path names another device now */
    return -1;
  }
  l->claim_fd = fd;
  return 0;
}

static void
unclaim (struct image_lock *l)
{
  if (l->claim_fd >= 0)
    close (l->claim_fd);
  l->claim_fd = -1;
}

/* The OFD lock first: a conflict with another dmcrypt is then reported
 * with its holder rather than as a bare EBUSY. */
static int
set_mode (struct image_lock *l, bool exclusive,
          struct image_lock_holder *holder)
{
  if (ofd_lock (l->fd, exclusive) == -1) {
    int err = errno == EACCES ? EAGAIN : errno;
    if (err == EAGAIN)
      image_lock_find_holder (&l->st, l->fd, exclusive, holder);
    errno = err;
    return -1;
  }
  if (exclusive && l->blockdev && l->claim_fd < 0
      && claim_blockdev (l) == -1) {
    int err = errno;
    ofd_lock (l->fd, l->exclusive);        /* back as it was */
    if (holder) {
      /* Held by a mount or another O_EXCL opener: only the device
       * itself is known. */
      memset (holder, 0, sizeof *holder);
      holder->dev = l->st.st_rdev;
    }
    errno = err;
    return -1;
  }
  if (!exclusive)
    unclaim (l);
  l->exclusive = exclusive;
  return 0;
}

struct image_lock *
image_lock_acquire (int fd, const char *path, bool exclusive,
                    struct image_lock_holder *holder)
{
  struct image_lock *l = calloc (1, sizeof *l);
  int err;

  if (l == NULL)
    return NULL;
  l->fd = fd;
  l->claim_fd = -1;
  l->path = path;
  if (fstat (fd, &l->st) == -1)
    goto err;
  l->blockdev = S_ISBLK (l->st.st_mode);
  l->exclusive = false;
  if (set_mode (l, exclusive, holder) == -1)
    goto err;
  return l;

 err:
  err = errno;
  unlock_fd (fd);
  free (l);
  errno = err;
  return NULL;
}

int
image_lock_change (struct image_lock *l, bool exclusive,
                   struct image_lock_holder *holder)
{
  if (exclusive == l->exclusive)
    return 0;
  return set_mode (l, exclusive, holder);
}

bool
image_lock_is_exclusive (const struct image_lock *l)
{
  return l->exclusive;
}

int
image_lock_claim_fd (const struct image_lock *l)
{
  return l ? l->claim_fd : -1;
}

void
image_lock_release (struct image_lock *l)
{
  if (l == NULL)
    return;
  unlock_fd (l->fd);
  unclaim (l);
  free (l);
}
