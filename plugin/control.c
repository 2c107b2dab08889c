/* The control socket: its name and path, binding it safely next to the
 * sockets of other instances, and the thread that serves it one
 * connection at a time (commands are short; suspend waits at most for
 * the requests in flight). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../control/sockdir.h"
#include "control.h"
#include "dmcrypt.h"

#define REQUEST_TIMEOUT_MS 5000     /* a client has 5 s to send */
#define LISTEN_BACKLOG     16
#define MAX_NAME_SUFFIX    99       /* NAME-2 .. NAME-99 for defaults */

static struct
{
  char name[CTL_MAX_NAME + 1];
  char path[sizeof ((struct sockaddr_un *) 0)->sun_path];
  dev_t dev;                        /* the socket file we made */
  ino_t ino;
  int listen_fd;
  int stop_pipe[2];
  pthread_t thread;
  bool running;
} ctl = { .listen_fd = -1, .stop_pipe = { -1, -1 } };

const char *
control_name (void)
{
  return ctl.name;
}

/* The image's file name without its extension, in the characters a
 * name may hold. */
static void
default_name (char *name, size_t size)
{
  char *copy = strdup (params.file), *base, *dot;
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

/* Is someone listening at PATH?  A socket nobody listens on is what a
 * killed instance leaves behind. */
static bool
socket_is_live (const char *path)
{
  int fd = ctl_connect (path, 1000);

  if (fd >= 0) {
    close (fd);
    return true;
  }
  return errno != ECONNREFUSED && errno != ENOENT;
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

/* Binds PATH, replacing a stale socket.  Returns the fd, or -1 with
 * errno EADDRINUSE when a live instance holds it. */
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
  if (socket_is_live (path)) {
    errno = EADDRINUSE;
    return -1;
  }
  nbdkit_debug ("control: removing the stale socket %s", path);
  if (unlink (path) == -1 && errno != ENOENT)
    return -1;
  return bind_at (path);
}

/* In DIR, binds NAME.sock, or for a default name the first free of
 * NAME-2, NAME-3...  Returns the fd or -1 after nbdkit_error. */
static int
bind_in_dir (const char *dir, bool name_given)
{
  char base[CTL_MAX_NAME + 1];
  int fd, n;

  snprintf (base, sizeof base, "%s", ctl.name);
  for (n = 1; n <= MAX_NAME_SUFFIX; n++) {
    if (n > 1)
      snprintf (ctl.name, sizeof ctl.name, "%.*s-%d",
                CTL_MAX_NAME - 4, base, n);
    if (ctl_socket_path (dir, ctl.name, ctl.path, sizeof ctl.path) == -1) {
      nbdkit_error ("control: the socket path for '%s' in %s is too long: "
                    "use control=PATH", ctl.name, dir);
      return -1;
    }
    fd = bind_replacing_stale (ctl.path);
    if (fd >= 0 || errno != EADDRINUSE || name_given)
      break;
  }
  if (fd == -1 && errno == EADDRINUSE)
    nbdkit_error ("control: name '%s' is in use by another dmcrypt "
                  "instance (%s)", ctl.name, ctl.path);
  else if (fd == -1)
    nbdkit_error ("control: %s: %m", ctl.path);
  return fd;
}

/* Binds with the directory locked, so that two instances starting at
 * once cannot both take a stale socket's place. */
static int
bind_locked (const char *dir, bool name_given)
{
  int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

  if (dir_fd >= 0)
    flock (dir_fd, LOCK_EX);
  fd = bind_in_dir (dir, name_given);
  if (dir_fd >= 0)
    close (dir_fd);                 /* closing drops the lock */
  return fd;
}

static int
choose_dir (char *dir, size_t size)
{
  char why[512];
  char *copy;

  if (params.control) {
    if ((copy = strdup (params.control)) == NULL) {
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

static int
bind_explicit (const char *dir)
{
  char cwd[CTL_PATH_MAX];
  int dir_fd, fd, n;

  /* Absolute, so that unlinking it at exit works after a chdir. */
  if (params.control[0] != '/' && getcwd (cwd, sizeof cwd))
    n = snprintf (ctl.path, sizeof ctl.path, "%s/%s", cwd, params.control);
  else
    n = snprintf (ctl.path, sizeof ctl.path, "%s", params.control);
  if (n < 0 || (size_t) n >= sizeof ctl.path) {
    nbdkit_error ("control: socket path %s is too long", params.control);
    return -1;
  }
  dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0)
    flock (dir_fd, LOCK_EX);
  fd = bind_replacing_stale (ctl.path);
  if (fd == -1 && errno == EADDRINUSE)
    nbdkit_error ("control: %s is in use by another instance", ctl.path);
  else if (fd == -1 && errno == EEXIST)
    nbdkit_error ("control: %s exists and is not a socket", ctl.path);
  else if (fd == -1)
    nbdkit_error ("control: %s: %m", ctl.path);
  if (dir_fd >= 0)
    close (dir_fd);
  return fd;
}

int
control_open (void)
{
  char dir[CTL_PATH_MAX];
  struct stat st;
  int fd;

  if (params.name) {
    if (!ctl_name_valid (params.name)) {
      nbdkit_error ("name: '%s' is not a valid volume name (1 to %d "
                    "printable characters, no '/', no spaces, not "
                    "starting with '.')", params.name, CTL_MAX_NAME);
      return -1;
    }
    snprintf (ctl.name, sizeof ctl.name, "%s", params.name);
  }
  else
    default_name (ctl.name, sizeof ctl.name);
  if (choose_dir (dir, sizeof dir) == -1)
    return -1;
  fd = params.control ? bind_explicit (dir)
    : bind_locked (dir, params.name != NULL);
  if (fd == -1)
    return -1;
  if (chmod (ctl.path, 0600) == -1 || listen (fd, LISTEN_BACKLOG) == -1
      || stat (ctl.path, &st) == -1) {
    nbdkit_error ("control: %s: %m", ctl.path);
    close (fd);
    unlink (ctl.path);
    return -1;
  }
  ctl.dev = st.st_dev;
  ctl.ino = st.st_ino;
  ctl.listen_fd = fd;
  nbdkit_debug ("control: volume '%s' on %s", ctl.name, ctl.path);
  return 0;
}

static void
reply_error (int fd, int errnum, const char *msg)
{
  struct ctl_message rep;

  if (ctl_msg_init (&rep) == -1)
    return;
  ctl_add (&rep, "result", "-1");
  ctl_addf (&rep, "errno", "%d", errnum);
  ctl_add (&rep, "error", msg);
  ctl_send (fd, &rep);
  ctl_msg_free (&rep);
}

static void
serve (int fd)
{
  struct timeval tv = { REQUEST_TIMEOUT_MS / 1000, 0 };
  struct ctl_message req, rep;

  /* A client that stops reading must not block the thread for long. */
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (!ctl_peer_allowed (fd)) {
    nbdkit_debug ("control: refused a client of another user");
    reply_error (fd, EACCES, "permission denied");
    return;
  }
  if (ctl_msg_init (&req) == -1)
    return;
  if (ctl_recv (fd, &req, REQUEST_TIMEOUT_MS) == -1) {
    if (errno == EPROTO || errno == EMSGSIZE)
      reply_error (fd, errno, errno == EPROTO ? "malformed request"
                   : "request too long");
    ctl_msg_free (&req);
    return;
  }
  if (ctl_msg_init (&rep) == 0) {
    ctlcmd_dispatch (&req, &rep);
    ctl_send (fd, &rep);
    ctl_msg_free (&rep);
  }
  ctl_msg_free (&req);
}

static void *
control_thread (void *arg)
{
  struct pollfd fds[2] = {
    { .fd = ctl.listen_fd, .events = POLLIN },
    { .fd = ctl.stop_pipe[0], .events = POLLIN },
  };
  int fd;

  (void) arg;
  for (;;) {
    if (poll (fds, 2, -1) == -1 && errno != EINTR)
      break;
    if (fds[1].revents)
      break;
    if (!(fds[0].revents & POLLIN))
      continue;
    fd = accept4 (ctl.listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd == -1) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
        usleep (10000);             /* do not spin while out of fds */
      continue;
    }
    serve (fd);
    close (fd);
  }
  return NULL;
}

int
control_start (void)
{
  int err;

  if (ctl.listen_fd == -1 || ctl.running)
    return 0;
  if (pipe2 (ctl.stop_pipe, O_CLOEXEC) == -1) {
    nbdkit_error ("control: pipe: %m");
    return -1;
  }
  err = pthread_create (&ctl.thread, NULL, control_thread, NULL);
  if (err) {
    nbdkit_error ("control: pthread_create: %s", strerror (err));
    return -1;
  }
  ctl.running = true;
  return 0;
}

void
control_close (void)
{
  struct stat st;

  if (ctl.running) {
    if (write (ctl.stop_pipe[1], "x", 1) == -1)
      nbdkit_debug ("control: stop: %m");
    pthread_join (ctl.thread, NULL);
    ctl.running = false;
  }
  if (ctl.listen_fd >= 0) {
    close (ctl.listen_fd);
    ctl.listen_fd = -1;
    /* Only our own socket: another instance may have replaced it. */
    if (stat (ctl.path, &st) == 0 && st.st_dev == ctl.dev
        && st.st_ino == ctl.ino)
      unlink (ctl.path);
  }
  if (ctl.stop_pipe[0] >= 0) {
    close (ctl.stop_pipe[0]);
    close (ctl.stop_pipe[1]);
    ctl.stop_pipe[0] = ctl.stop_pipe[1] = -1;
  }
}
