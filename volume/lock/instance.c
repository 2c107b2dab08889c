/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding the dmcrypt instance that serves an image, through the
 * registry (lock.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../control/proto.h"
#include "../../control/registry.h"
#include "../../control/sockdir.h"
#include "lock.h"

static long
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Our own socket, before nbdkit forked, is not served yet: asking it
 * would only wait.  (After the fork the peer is the parent that made
 * the socket, and the reply's pid tells.) */
static bool
peer_is_self (int fd)
{
  struct ucred cred;
  socklen_t len = sizeof cred;

  return getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0
    && cred.pid == getpid ();
}

/* The "info" reply of the instance at PATH into REP (initialised).
 * Returns 0, or -1 when there is none within TIMEOUT_MS. */
static int
ask_info (const char *path, int timeout_ms, struct ctl_message *rep)
{
  struct ctl_message req;
  int fd = ctl_connect (path, timeout_ms), r = -1;
  const char *result;

  if (fd == -1)
    return -1;
  if (!peer_is_self (fd) && ctl_msg_init (&req) == 0) {
    if (ctl_add (&req, "op", "info") == 0 && ctl_send (fd, &req) == 0)
      r = ctl_recv (fd, rep, timeout_ms);
    ctl_msg_free (&req);
  }
  close (fd);
  result = r == 0 ? ctl_get (rep, "result") : NULL;
  return result && strcmp (result, "0") == 0 ? 0 : -1;
}

static bool
serves_image (const struct ctl_message *rep, dev_t dev, ino_t ino)
{
  uint64_t image_dev, image_ino, image_rdev;

  if (ctl_get_u64 (rep, "image_dev", &image_dev) == -1
      || ctl_get_u64 (rep, "image_ino", &image_ino) == -1)
    return false;
  if (image_dev == (uint64_t) dev && image_ino == (uint64_t) ino)
    return true;
  /* A block device: st_rdev is 0 for anything else. */
  return ino == 0 && ctl_get_u64 (rep, "image_rdev", &image_rdev) == 0
    && image_rdev != 0 && image_rdev == (uint64_t) dev;
}

/* Fills NAME and PID from REP when it is another process's instance
 * serving the image.  Returns 0 or -1. */
static int
holder_of (const struct ctl_message *rep, dev_t dev, ino_t ino, char *name,
           size_t name_size, long *pid)
{
  const char *volume = ctl_get (rep, "name");
  uint64_t server_pid;

  if (volume == NULL || !serves_image (rep, dev, ino)
      || ctl_get_u64 (rep, "pid", &server_pid) == -1
      || server_pid == (uint64_t) getpid ())
    return -1;
  if (name_size > 0)
    snprintf (name, name_size, "%s", volume);
  *pid = (long) server_pid;
  return 0;
}

int
image_lock_find_instance (dev_t dev, ino_t ino, char *name,
                          size_t name_size, long *pid)
{
  char dir[CTL_PATH_MAX], path[CTL_PATH_MAX], **names;
  long deadline = now_ms () + IMAGE_INSTANCE_BUDGET_MS, left;
  struct ctl_message rep;
  int found = -1;
  size_t i;

  ctl_registry_client_dir (dir, sizeof dir);
  if ((names = ctl_registry_names (dir)) == NULL)
    return -1;
  for (i = 0; found == -1 && names[i]; i++) {
    if ((left = deadline - now_ms ()) <= 0)
      break;
    if (ctl_socket_path (dir, names[i], path, sizeof path) == -1
        || ctl_msg_init (&rep) == -1)
      continue;
    if (ask_info (path, left < IMAGE_INSTANCE_TIMEOUT_MS ? (int) left
                  : IMAGE_INSTANCE_TIMEOUT_MS, &rep) == 0)
      found = holder_of (&rep, dev, ino, name, name_size, pid);
    ctl_msg_free (&rep);
  }
  ctl_names_free (names);
  if (found == -1)
    errno = ENOENT;
  return found;
}
