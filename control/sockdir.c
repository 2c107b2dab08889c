/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Control socket directories, names, and the peer checks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "sockdir.h"

/* DMCRYPT_RUNTIME_DIR counts when it names something of ours (not a
 * directory: the server says so), or nothing yet (the server makes
 * it): one inherited from another user (su, sudo -E) is not ours, as
 * for XDG_RUNTIME_DIR. */
static bool
runtime_env_usable (const char *env)
{
  struct stat st;

  if (env == NULL || env[0] != '/' || strlen (env) >= CTL_PATH_MAX - 16)
    return false;
  if (stat (env, &st) == -1)
    return errno == ENOENT;
  return st.st_uid == geteuid ();
}

int
ctl_registry_candidates (char dirs[][CTL_PATH_MAX], int max)
{
  const char *env = getenv (CTL_RUNTIME_ENV);
  uid_t uid = geteuid ();
  int n = 0;

  if (n < max && runtime_env_usable (env)) {
    snprintf (dirs[n++], CTL_PATH_MAX, "%s", env);
    return n;
  }
  if (n < max && uid == 0)
    snprintf (dirs[n++], CTL_PATH_MAX, "/run/dmcrypt");
  if (n < max)
    snprintf (dirs[n++], CTL_PATH_MAX, "/tmp/dmcrypt-%u", (unsigned) uid);
  return n;
}

int
ctl_dir_candidates (char dirs[][CTL_PATH_MAX], int max)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  struct stat st;
  int n = 0;

  /* An XDG_RUNTIME_DIR inherited from another user (su, sudo) is not
   * ours: skip it rather than fail in it. */
  if (n < max && xdg && xdg[0] == '/' && strlen (xdg) < CTL_PATH_MAX - 16
      && stat (xdg, &st) == 0 && S_ISDIR (st.st_mode)
      && st.st_uid == geteuid ())
    snprintf (dirs[n++], CTL_PATH_MAX, "%s/dmcrypt", xdg);
  return n + ctl_registry_candidates (dirs + n, max - n);
}

static int
refuse (char *why, size_t size, int err, const char *dir, const char *what)
{
  snprintf (why, size, "%s: %s", dir, what);
  errno = err;
  return -1;
}

int
ctl_dir_prepare (const char *dir, char *why, size_t why_size)
{
  struct stat st;

  if (mkdir (dir, 0700) == -1 && errno != EEXIST) {
    int err = errno;
    return refuse (why, why_size, err, dir, strerror (err));
  }
  /* lstat: a symlink planted in /tmp must not redirect us. */
  if (lstat (dir, &st) == -1) {
    int err = errno;
    return refuse (why, why_size, err, dir, strerror (err));
  }
  if (!S_ISDIR (st.st_mode))
    return refuse (why, why_size, ENOTDIR, dir, "not a directory");
  if (st.st_uid != geteuid ())
    return refuse (why, why_size, EPERM, dir, "owned by another user");
  if ((st.st_mode & 077) && chmod (dir, 0700) == -1) {
    int err = errno;
    return refuse (why, why_size, err, dir, strerror (err));
  }
  return 0;
}

int
ctl_dir_check (const char *dir, char *why, size_t why_size)
{
  struct stat st;

  if (lstat (dir, &st) == -1) {
    int err = errno;
    return refuse (why, why_size, err, dir, strerror (err));
  }
  if (!S_ISDIR (st.st_mode))
    return refuse (why, why_size, ENOTDIR, dir, "not a directory");
  if (st.st_uid != geteuid () && st.st_uid != 0)
    return refuse (why, why_size, EPERM, dir, "owned by another user");
  if (st.st_mode & 022)
    return refuse (why, why_size, EPERM, dir, "writable by others");
  return 0;
}

static int
first_prepared (char dirs[][CTL_PATH_MAX], int n, char *dir, size_t size,
                char *why, size_t why_size)
{
  int i;

  for (i = 0; i < n; i++)
    if (ctl_dir_prepare (dirs[i], why, why_size) == 0) {
      snprintf (dir, size, "%s", dirs[i]);
      return 0;
    }
  return -1;
}

int
ctl_server_dir (char *dir, size_t size, char *why, size_t why_size)
{
  char dirs[CTL_MAX_CANDIDATES][CTL_PATH_MAX];
  int n = ctl_dir_candidates (dirs, CTL_MAX_CANDIDATES);

  return first_prepared (dirs, n, dir, size, why, why_size);
}

int
ctl_registry_server_dir (char *dir, size_t size, char *why, size_t why_size)
{
  char dirs[CTL_MAX_CANDIDATES][CTL_PATH_MAX];
  int n = ctl_registry_candidates (dirs, CTL_MAX_CANDIDATES);

  return first_prepared (dirs, n, dir, size, why, why_size);
}

int
ctl_registry_client_dir (char *dir, size_t size)
{
  char dirs[CTL_MAX_CANDIDATES][CTL_PATH_MAX], why[256];
  int n = ctl_registry_candidates (dirs, CTL_MAX_CANDIDATES), i;

  for (i = 0; i < n; i++)
    if (ctl_dir_check (dirs[i], why, sizeof why) == 0) {
      snprintf (dir, size, "%s", dirs[i]);
      return 0;
    }
  snprintf (dir, size, "%s", dirs[0]);
  return 0;
}

bool
ctl_name_valid (const char *name)
{
  size_t i, len = strlen (name);

  if (len == 0 || len > CTL_MAX_NAME || name[0] == '.')
    return false;
  for (i = 0; i < len; i++)
    if (name[i] <= ' ' || name[i] > '~' || name[i] == '/')
      return false;
  return true;
}

int
ctl_socket_path (const char *dir, const char *name, char *path, size_t size)
{
  struct sockaddr_un sun;
  int n = snprintf (path, size, "%s/%s" CTL_SOCKET_SUFFIX, dir, name);

  if (n < 0 || (size_t) n >= size || (size_t) n >= sizeof sun.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

bool
ctl_peer_allowed (int fd)
{
  struct ucred cred;
  socklen_t len = sizeof cred;

  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
    return false;
  return cred.uid == geteuid () || cred.uid == 0;
}

int
ctl_connect (const char *path, int timeout_ms)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
  int fd, err;

  if (strlen (path) >= sizeof sun.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy (sun.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1)
    return -1;
  /* A Unix connect blocks while the backlog is full: bound it. */
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect (fd, (struct sockaddr *) &sun, sizeof sun) == -1) {
    err = errno == EAGAIN || errno == EINPROGRESS ? ETIMEDOUT : errno;
    close (fd);
    errno = err;
    return -1;
  }
  if (!ctl_peer_allowed (fd)) {
    close (fd);
    errno = EACCES;
    return -1;
  }
  return fd;
}
