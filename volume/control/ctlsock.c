/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's file: the volume's name, unique among the
 * user's volumes, the socket bound safely next to the sockets of other
 * instances, and its entry in the user's registry.  Everything between
 * probing a name and adding its entry happens with the registry
 * locked, so that two instances starting at once can neither take the
 * same name nor both replace the same stale socket. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../control/registry.h"
#include "ctlsock.h"

#define LISTEN_BACKLOG  16
#define MAX_NAME_SUFFIX 99          /* NAME-2 .. NAME-99 for defaults */

/* The image's file name without its extension, in the characters a
 * name may hold. */
static void
default_name (const char *file, char *name, size_t size)
{
  char *copy = file ? strdup (file) : NULL, *base, *dot;
  size_t i;

  base = copy ? basename (copy) : "dmcrypt";
  if ((dot = strrchr (base, '.')) != NULL && dot != base)
    *dot = '\0';
  snprintf (name, size, "%s", *base ? base : "dmcrypt");
  free (copy);
  for (i = 0; name[i]; i++)
    if (name[i] <= ' ' || name[i] > '~' || name[i] == '/')
      name[i] = '_';
  if (name[0] == '.')
    name[0] = '_';
}

static int
choose_name (struct ctl_socket *s, const struct ctl_socket_want *w)
{
  if (w->name == NULL) {
    default_name (w->image_file, s->name, sizeof s->name);
    return 0;
  }
  if (!ctl_name_valid (w->name)) {
    nbdkit_error ("name: '%s' is not a valid volume name (1 to %d "
                  "printable characters, no '/', no spaces, not "
                  "starting with '.')", w->name, CTL_MAX_NAME);
    return -1;
  }
  snprintf (s->name, sizeof s->name, "%s", w->name);
  return 0;
}

static int
bind_at (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd == -1)
    return -1;
  strcpy (sun.sun_path, path);
  if (bind (fd, (struct sockaddr *) &sun, sizeof sun) == -1) {
    int err = errno;
    close (fd);
    errno = err;
    return -1;
  }
  return fd;
}

/* Binds PATH, replacing a stale socket (one nobody listens on: what a
 * killed instance leaves behind).  Returns the fd, or -1 with errno
 * EADDRINUSE when a live instance holds it, EEXIST when PATH is not a
 * socket. */
static int
bind_replacing_stale (const char *path)
{
  struct stat st;
  int fd = bind_at (path);

  if (fd >= 0 || errno != EADDRINUSE)
    return fd;
  if (lstat (path, &st) == 0 && !S_ISSOCK (st.st_mode)) {
    errno = EEXIST;
    return -1;
  }
  if (ctl_socket_live (path, CTL_PROBE_MS)) {
    errno = EADDRINUSE;
    return -1;
  }
  nbdkit_debug ("control: removing the stale socket %s", path);
  if (unlink (path) == -1 && errno != ENOENT)
    return -1;
  return bind_at (path);
}

/* Reports a failed bind of S->path (errno set by bind_replacing_stale). */
static void
bind_failed (const struct ctl_socket *s)
{
  if (errno == EADDRINUSE)
    nbdkit_error ("control: %s is in use by another instance", s->path);
  else if (errno == EEXIST)
    nbdkit_error ("control: %s exists and is not a socket", s->path);
  else
    nbdkit_error ("control: %s: %m", s->path);
}

/* Claims S->name: its registry entry must be free and, with DIR (the
 * default socket directory), DIR/NAME.sock is bound.  Returns 0, or -1
 * with errno EADDRINUSE and the socket in use in HOLDER, or -1 with
 * another errno after nbdkit_error. */
static int
claim_name (struct ctl_socket *s, const char *dir, char *holder, size_t size)
{
  ssize_t n;

  if (ctl_socket_path (s->registry, s->name, s->entry, sizeof s->entry)
      == -1 || (dir && ctl_socket_path (dir, s->name, s->path,
                                        sizeof s->path) == -1)) {
    nbdkit_error ("control: the socket path for '%s' is too long: use "
                  "control=PATH, or a shorter " CTL_RUNTIME_ENV, s->name);
    return -1;
  }
  if (ctl_socket_live (s->entry, CTL_PROBE_MS)) {
    /* Name the other instance's socket, wherever it is. */
    if ((n = readlink (s->entry, holder, size - 1)) < 0)
      snprintf (holder, size, "%s", s->entry);
    else
      holder[n] = '\0';
    errno = EADDRINUSE;
    return -1;
  }
  if (dir == NULL)
    return 0;
  /* Not in the registry, yet live: an instance of an older dmcrypt. */
  if ((s->fd = bind_replacing_stale (s->path)) == -1 && errno == EADDRINUSE)
    snprintf (holder, size, "%s", s->path);
  else if (s->fd == -1)
    bind_failed (s);
  return s->fd == -1 ? -1 : 0;
}

/* For a default name, the first free of NAME, NAME-2, NAME-3...; name=
 * must be free itself.  Returns 0, or -1 after nbdkit_error. */
static int
pick_name (struct ctl_socket *s, const char *dir, bool given)
{
  char base[CTL_MAX_NAME + 1], holder[CTL_PATH_MAX];
  int n;

  snprintf (base, sizeof base, "%s", s->name);
  for (n = 1; n <= MAX_NAME_SUFFIX; n++) {
    if (n > 1)
      snprintf (s->name, sizeof s->name, "%.*s-%d", CTL_MAX_NAME - 4, base,
                n);
    if (claim_name (s, dir, holder, sizeof holder) == 0)
      return 0;
    if (errno != EADDRINUSE || given)
      break;
  }
  if (errno == EADDRINUSE)
    nbdkit_error ("control: name '%s' is in use by another dmcrypt "
                  "instance (%s)", s->name, holder);
  return -1;
}

/* control=PATH, made absolute so that unlinking it at exit works after
 * nbdkit's chdir, and so that the registry's symlink points at it. */
static int
bind_explicit (struct ctl_socket *s, const char *control)
{
  char cwd[CTL_PATH_MAX];
  int n;

  if (control[0] != '/' && getcwd (cwd, sizeof cwd))
    n = snprintf (s->path, sizeof s->path, "%s/%s", cwd, control);
  else
    n = snprintf (s->path, sizeof s->path, "%s", control);
  if (n < 0 || (size_t) n >= sizeof s->path) {
    nbdkit_error ("control: socket path %s is too long", control);
    return -1;
  }
  if ((s->fd = bind_replacing_stale (s->path)) == -1)
    bind_failed (s);
  return s->fd == -1 ? -1 : 0;
}

/* The entry: the socket itself when it is in the registry (under
 * whatever spelling of its path), else a symlink to it, replacing a
 * stale entry (claim_name found nobody behind it). */
static int
add_entry (struct ctl_socket *s)
{
  struct stat st;

  if (lstat (s->entry, &st) == 0) {
    if (S_ISSOCK (st.st_mode) && st.st_dev == s->dev && st.st_ino == s->ino) {
      snprintf (s->entry, sizeof s->entry, "%s", s->path);
      return 0;
    }
    if (!S_ISSOCK (st.st_mode) && !S_ISLNK (st.st_mode)) {
      nbdkit_error ("control: %s exists and is not a socket", s->entry);
      return -1;
    }
    unlink (s->entry);
  }
  if (symlink (s->path, s->entry) == -1) {
    nbdkit_error ("control: %s: %m", s->entry);
    return -1;
  }
  return 0;
}

/* With the registry (and the socket's directory) locked. */
static int
bind_and_register (struct ctl_socket *s, const struct ctl_socket_want *w,
                   const char *dir)
{
  bool given = w->name != NULL;
  struct stat st;

  if (w->control ? pick_name (s, NULL, given) == -1
      || bind_explicit (s, w->control) == -1
      : pick_name (s, dir, given) == -1)
    return -1;
  if (chmod (s->path, 0600) == -1 || listen (s->fd, LISTEN_BACKLOG) == -1
      || stat (s->path, &st) == -1) {
    nbdkit_error ("control: %s: %m", s->path);
    goto err;
  }
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  if (add_entry (s) == 0)
    return 0;

 err:
  close (s->fd);
  s->fd = -1;
  unlink (s->path);
  return -1;
}

static int
choose_dir (const char *control, char *dir, size_t size)
{
  char why[512], *copy;

  if (control) {
    if ((copy = strdup (control)) == NULL) {
      nbdkit_error ("strdup: %m");
      return -1;
    }
    snprintf (dir, size, "%s", dirname (copy));
    free (copy);
    return 0;
  }
  if (ctl_server_dir (dir, size, why, sizeof why) == -1) {
    nbdkit_error ("control: no usable socket directory (%s): "
                  "use control=PATH", why);
    return -1;
  }
  return 0;
}

static bool
same_file (const char *a, const char *b)
{
  struct stat sa, sb;

  return stat (a, &sa) == 0 && stat (b, &sb) == 0 && sa.st_dev == sb.st_dev
    && sa.st_ino == sb.st_ino;
}

int
ctlsock_open (struct ctl_socket *s, const struct ctl_socket_want *w)
{
  char dir[CTL_PATH_MAX], why[512];
  int registry_lock, dir_lock = -1, r;

  s->fd = -1;
  if (choose_name (s, w) == -1)
    return -1;
  if (ctl_registry_server_dir (s->registry, sizeof s->registry, why,
                               sizeof why) == -1) {
    nbdkit_error ("control: no usable registry directory (%s): set "
                  CTL_RUNTIME_ENV " to a directory of yours", why);
    return -1;
  }
  if (choose_dir (w->control, dir, sizeof dir) == -1)
    return -1;
  if ((registry_lock = ctl_dir_lock (s->registry, true)) == -1) {
    nbdkit_error ("control: %s: %m", s->registry);
    return -1;
  }
  /* Instances of other registries may share the socket directory. */
  if (!same_file (dir, s->registry))
    dir_lock = ctl_dir_lock (dir, true);
  ctl_registry_sweep (s->registry);
  r = bind_and_register (s, w, dir);
  ctl_dir_unlock (dir_lock);
  ctl_dir_unlock (registry_lock);
  if (r == 0)
    nbdkit_debug ("control: volume '%s' on %s, registered as %s", s->name,
                  s->path, s->entry);
  return r;
}

/* Is the file at PATH still the socket we made?  Another instance may
 * have replaced it after we stopped listening. */
static bool
still_ours (const struct ctl_socket *s)
{
  struct stat st;

  return lstat (s->path, &st) == 0 && st.st_dev == s->dev
    && st.st_ino == s->ino;
}

void
ctlsock_close (struct ctl_socket *s)
{
  char target[CTL_SUN_PATH];
  ssize_t n;
  int lock;

  if (s->fd < 0)
    return;
  /* Locked before the socket closes: from then on a starting instance
   * would take the socket for stale, and the entry's name with it. */
  lock = ctl_dir_lock (s->registry, true);
  if (strcmp (s->entry, s->path) != 0
      && (n = readlink (s->entry, target, sizeof target - 1)) >= 0
      && (target[n] = '\0', strcmp (target, s->path) == 0))
    unlink (s->entry);
  if (still_ours (s))
    unlink (s->path);
  close (s->fd);
  s->fd = -1;
  ctl_dir_unlock (lock);
}

void
ctlsock_touch (const struct ctl_socket *s)
{
  if (s->fd >= 0)
    utimensat (AT_FDCWD, s->entry, NULL, AT_SYMLINK_NOFOLLOW);
}
