/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Formats that look like LUKS but are not a volume on their own, named
 * so that nobody is shown half of one.  Ceph's RBD layered encryption
 * (librbd/crypto/luks/Magic.cc, Quincy on) stores a clone's LUKS1 or
 * LUKS2 header with "RBDL" in place of "LUKS" (and a LUKS2 secondary
 * header's "SKUL" as "LDBR"), so that cryptsetup never opens it: the
 * clone's unwritten areas are read from its parent image, encrypted
 * with the parent's key, and only librbd can mix the two. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "luks.h"

static const char rbd_clone_magic[6] = { 'R', 'B', 'D', 'L', '\xba', '\xbe' };

int
luks_lookalike (const char *path, char *what, size_t what_size)
{
  unsigned char head[8];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;
  unsigned version;

  if (fd == -1)
    return -1;
  n = pread (fd, head, sizeof head, 0);
  close (fd);
  if (n < 0)
    return -1;
  if ((size_t) n < sizeof head
      || memcmp (head, rbd_clone_magic, sizeof rbd_clone_magic) != 0)
    return 0;
  version = (unsigned) head[6] << 8 | head[7];
  snprintf (what, what_size,
            "a Ceph RBD clone's encryption header (magic RBDL, LUKS%s): "
            "its data mixes the clone's key and its parent image's, so "
            "it opens only through librbd with the parent (rbd "
            "encryption load, or qemu's rbd driver), not as a LUKS "
            "volume",
            version == 1 ? "1" : version == 2 ? "2" : " of unknown version");
  return 1;
}
