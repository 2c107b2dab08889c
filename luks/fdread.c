/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Metadata readers' view of an image file (internal.h). */
#include <errno.h>
#include <unistd.h>

#include "internal.h"

int
luks_fd_read (void *opaque, void *buf, size_t len, uint64_t offset)
{
  int fd = *(int *) opaque;
  ssize_t n;

  for (; len > 0; len -= n, offset += n, buf = (char *) buf + n) {
    n = pread (fd, buf, len, offset);
    if (n == -1 && errno == EINTR)
      n = 0;
    else if (n <= 0)
      return -1;
  }
  return 0;
}
