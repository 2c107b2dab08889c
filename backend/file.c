/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The backend on a regular file or a block device. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../common/log.h"
#include "backend.h"

struct file_priv
{
  int fd;
  char *path;
  /* The image's exclusive claim (an O_EXCL descriptor of a block
   * device), set by its lock's owner while a request may discard. */
  atomic_int discard_fd;
};

static int
file_fd (struct backend *b)
{
  return ((struct file_priv *) b->priv)->fd;
}

static int
file_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  char *p = buf;

  while (count > 0) {
    ssize_t r = pread (file_fd (b), p, count, offset);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (r == 0) {
      /* Past the end of the device: the request was checked against the
       * size, so this means the file shrank under us. */
      errno = EIO;
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int
file_pwrite (struct backend *b, const void *buf, size_t count,
             uint64_t offset)
{
  const char *p = buf;

  while (count > 0) {
    ssize_t r = pwrite (file_fd (b), p, count, offset);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int
file_sync (struct backend *b)
{
  return fdatasync (file_fd (b));
}

static int
file_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  struct file_priv *fp = b->priv;

  if (b->is_blockdev) {
    uint64_t range[2] = { offset, count };
    int claim = atomic_load (&fp->discard_fd);
    return ioctl (claim >= 0 ? claim : fp->fd, BLKDISCARD, range);
  }
  /* A punched hole reads back as zeros: the ciphertext is gone, exactly
   * as after a discard passed down to a thin or flash device. */
  return fallocate (file_fd (b), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                    offset, count);
}

static void
file_close (struct backend *b)
{
  struct file_priv *fp = b->priv;

  close (fp->fd);
  free (fp->path);
  free (fp);
  free (b);
}

int
backend_file_fd (struct backend *b)
{
  return file_fd (b);
}

void
backend_file_set_discard_fd (struct backend *b, int fd)
{
  struct file_priv *fp = b->priv;

  atomic_store (&fp->discard_fd, fd);
}

static const struct backend_ops file_ops = {
  .name = "file",
  .pread = file_pread,
  .pwrite = file_pwrite,
  .sync = file_sync,
  .discard = file_discard,
  .close = file_close,
};

static int
file_size (int fd, const struct stat *st, uint64_t *size)
{
  if (S_ISBLK (st->st_mode))
    return ioctl (fd, BLKGETSIZE64, size);
  *size = st->st_size;
  return 0;
}

struct backend *
backend_file_open (const char *path, bool readonly)
{
  struct backend *b = calloc (1, sizeof *b);
  struct file_priv *fp = calloc (1, sizeof *fp);
  struct stat st;

  if (b == NULL || fp == NULL) {
    nbdkit_error ("calloc: %m");
    goto err;
  }
  fp->fd = -1;
  atomic_init (&fp->discard_fd, -1);
  if ((fp->path = strdup (path)) == NULL) {
    nbdkit_error ("strdup: %m");
    goto err;
  }
  fp->fd = open (path, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (fp->fd == -1) {
    nbdkit_error ("open: %s: %m", path);
    goto err;
  }
  if (fstat (fp->fd, &st) == -1) {
    nbdkit_error ("fstat: %s: %m", path);
    goto err_close;
  }
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode)) {
    nbdkit_error ("%s: not a regular file or block device", path);
    goto err_close;
  }
  b->ops = &file_ops;
  b->priv = fp;
  b->readonly = readonly;
  b->is_blockdev = S_ISBLK (st.st_mode);
  b->can_discard = !readonly;
  b->dev_major = major (b->is_blockdev ? st.st_rdev : st.st_dev);
  b->dev_minor = minor (b->is_blockdev ? st.st_rdev : st.st_dev);
  if (file_size (fp->fd, &st, &b->size) == -1) {
    nbdkit_error ("%s: cannot get size: %m", path);
    goto err_close;
  }
  return b;

 err_close:
  close (fp->fd);
 err:
  if (fp)
    free (fp->path);
  free (fp);
  free (b);
  return NULL;
}
