/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding a volume's socket and exchanging one request with it, with
 * dmsetup's words when it fails. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

int
socket_dir (const struct ctl_options *o, char *dir, size_t size)
{
  char why[512];

  if (o->dir == NULL)
    return ctl_registry_client_dir (dir, size);
  /* Tables with keys go through it: only a directory of ours (or
   * root's) that nobody else can write to is trusted. */
  if (ctl_dir_check (o->dir, why, sizeof why) == -1) {
    fprintf (stderr, PROGRAM ": %s\n", why);
    return -1;
  }
  snprintf (dir, size, "%s", o->dir);
  return 0;
}

int
socket_of (const struct ctl_options *o, const char *name, char *path,
           size_t size)
{
  char dir[CTL_PATH_MAX];

  if (strchr (name, '/')) {
    if ((size_t) snprintf (path, size, "%s", name) >= size) {
      fprintf (stderr, PROGRAM ": %s: path too long\n", name);
      return -1;
    }
    return 0;
  }
  if (!ctl_name_valid (name)) {
    fprintf (stderr, PROGRAM ": '%s' is not a valid volume name\n", name);
    return -1;
  }
  if (socket_dir (o, dir, sizeof dir) == -1)
    return -1;
  if (ctl_socket_path (dir, name, path, size) == -1) {
    fprintf (stderr, PROGRAM ": %s/%s: path too long\n", dir, name);
    return -1;
  }
  return 0;
}

void
ioctl_failed (const char *op, const char *name, int errnum)
{
  /* dmsetup puts "(major:minor)" between the two spaces when it knows
   * the device; a dmcrypt volume has none. */
  fprintf (stderr, "device-mapper: %s ioctl on %s  failed: %s\n",
           op, name, strerror (errnum));
}

static int
exchange (const char *path, int timeout_ms, struct ctl_message *req,
          struct ctl_message *rep)
{
  int fd = ctl_connect (path, timeout_ms), r, err;

  if (fd == -1)
    return -1;
  r = ctl_send (fd, req);
  if (r == 0)
    r = ctl_recv (fd, rep, timeout_ms);
  err = errno;
  close (fd);
  errno = err;
  return r;
}

/* No socket at PATH, or one that nobody listens on, reached by its path
 * (--control PATH, or a NAME with a '/'): dmsetup knows no such name,
 * so the words are ours, and name the socket. */
static void
no_socket (const char *path, int errnum)
{
  if (errnum == ENOENT)
    fprintf (stderr, PROGRAM ": %s: no such control socket\n", path);
  else
    fprintf (stderr, PROGRAM ": %s: nothing listens on this control "
             "socket\n", path);
}

static int
request_ms (const struct ctl_options *o, const char *name, const char *op,
            struct ctl_message *req, struct ctl_message *rep, int timeout_ms,
            bool quiet)
{
  char path[CTL_PATH_MAX];
  const char *result, *msg;
  uint64_t errnum;

  if (socket_of (o, name, path, sizeof path) == -1)
    return -1;
  if (ctl_add (req, "op", op) == -1
      || exchange (path, timeout_ms, req, rep) == -1) {
    /* No socket, or one that nobody listens on: no such volume. */
    int why = errno;
    bool gone = why == ENOENT || why == ECONNREFUSED;
    int err = gone ? ENXIO : why;

    if (quiet)
      return -1;
    if (gone && strchr (name, '/'))
      no_socket (path, why);
    else if (err == ENXIO && strcmp (op, "info") == 0)
      fprintf (stderr, "Device does not exist.\n");
    else
      ioctl_failed (op, name, err);
    return -1;
  }
  result = ctl_get (rep, "result");
  if (result && strcmp (result, "0") == 0)
    return 0;
  if (quiet)
    return -1;
  msg = ctl_get (rep, "error");
  if (ctl_get_u64 (rep, "errno", &errnum) == -1 || errnum == 0
      || errnum > 4095)
    errnum = EPROTO;
  if (msg && *msg)
    fprintf (stderr, PROGRAM ": %s: %s\n", name, msg);
  ioctl_failed (op, name, (int) errnum);
  return -1;
}

int
request (const struct ctl_options *o, const char *name, const char *op,
         struct ctl_message *req, struct ctl_message *rep)
{
  return request_ms (o, name, op, req, rep, COMMAND_TIMEOUT_MS, false);
}

int
probe (const struct ctl_options *o, const char *name,
       struct ctl_message *rep)
{
  struct ctl_message req;
  int r;

  if (ctl_msg_init (&req) == -1)
    return -1;
  r = request_ms (o, name, "info", &req, rep, PROBE_TIMEOUT_MS, true);
  ctl_msg_free (&req);
  return r;
}
