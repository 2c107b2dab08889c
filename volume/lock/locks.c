/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A volume's locks (lock.h): its image's, taken on the file backend's
 * own descriptor, and its detached header's, on a descriptor opened for
 * the purpose; exclusive or shared as the volume's tables want. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../common/log.h"
#include "lock.h"

void
image_locks_init (struct image_locks *l)
{
  memset (l, 0, sizeof *l);
  l->header_fd = -1;
}

static struct image_lock *
lock_or_fail (int fd, const char *path, bool exclusive)
{
  struct image_lock_holder h = { 0 };
  struct image_lock *lock = image_lock_acquire (fd, path, exclusive, &h);
  char why[512];

  if (lock == NULL) {
    image_lock_reason (path, exclusive, errno, &h, why, sizeof why);
    nbdkit_error ("%s", why);
  }
  return lock;
}

static bool
fd_is_writable (int fd)
{
  return fd >= 0 && (fcntl (fd, F_GETFL) & O_ACCMODE) == O_RDWR;
}

/* Discards of a block device go through the writer's O_EXCL claim,
 * which exists only while the lock is exclusive. */
static void
publish_claim (struct image_locks *l)
{
  backend_file_set_discard_fd (l->file, image_lock_claim_fd (l->image));
}

int
image_locks_take_image (struct image_locks *l, struct backend *file,
                        const char *path, bool exclusive)
{
  l->image = lock_or_fail (backend_file_fd (file), path, exclusive);
  if (l->image == NULL)
    return -1;
  l->file = file;
  l->image_path = path;
  publish_claim (l);
  return 0;
}

int
image_locks_take_header (struct image_locks *l, const char *path,
                         bool writable, bool exclusive)
{
  int fd = open (path, (writable && access (path, W_OK) == 0
                        ? O_RDWR : O_RDONLY) | O_CLOEXEC);

  if (fd == -1) {
    nbdkit_error ("header: %s: %m", path);
    return -1;
  }
  l->header_fd = fd;
  l->header_path = path;
  l->header = lock_or_fail (fd, path, exclusive && fd_is_writable (fd));
  return l->header ? 0 : -1;
}

/* The image's lock, or the header's (IMAGE false). */
static int
follow_one (struct image_locks *l, bool image, bool exclusive, char *why,
            size_t size)
{
  struct image_lock_holder h = { 0 };
  int r;

  /* The claim closes as the lock turns shared: no discard may start
   * on it from then on. */
  if (image && !exclusive)
    backend_file_set_discard_fd (l->file, -1);
  r = image_lock_change (image ? l->image : l->header, exclusive, &h);
  if (image)
    publish_claim (l);
  if (r == 0)
    return 0;
  image_lock_reason (image ? l->image_path : l->header_path, exclusive,
                     errno, &h, why, size);
  errno = EBUSY;
  return -1;
}

int
image_locks_follow (struct image_locks *l, bool writable, char *why,
                    size_t why_size)
{
  bool header_exclusive = writable && fd_is_writable (l->header_fd);
  bool was_exclusive = l->image && image_lock_is_exclusive (l->image);
  char ignored[16];

  if (l->image && follow_one (l, true, writable, why, why_size) == -1)
    return -1;
  if (l->header
      && follow_one (l, false, header_exclusive, why, why_size) == -1) {
    if (l->image)
      follow_one (l, true, was_exclusive, ignored, sizeof ignored);
    errno = EBUSY;
    return -1;
  }
  return 0;
}

void
image_locks_release (struct image_locks *l)
{
  if (l->image) {
    backend_file_set_discard_fd (l->file, -1);
    image_lock_release (l->image);
  }
  image_lock_release (l->header);
  if (l->header_fd >= 0)
    close (l->header_fd);
  image_locks_init (l);
}
