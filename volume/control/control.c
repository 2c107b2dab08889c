/* The control socket's server: the thread that serves it one
 * connection at a time (commands are short; suspend waits at most for
 * the requests in flight).  ctlsock.c makes the socket. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "control.h"
#include "ctlsock.h"

#define REQUEST_TIMEOUT_MS 5000     /* a client has 5 s to send */
#define TOUCH_INTERVAL_MS  (3600 * 1000)  /* keeps the registry entry */

static struct
{
  struct ctl_socket sock;
  int stop_pipe[2];
  pthread_t thread;
  bool running;
} ctl = { .sock = { .fd = -1 }, .stop_pipe = { -1, -1 } };

const char *
control_name (void)
{
  return ctl.sock.name;
}

int
control_open (void)
{
  ctlcmd_init ();
  return ctlsock_open (&ctl.sock);
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
    { .fd = ctl.sock.fd, .events = POLLIN },
    { .fd = ctl.stop_pipe[0], .events = POLLIN },
  };
  int fd, r;

  (void) arg;
  for (;;) {
    r = poll (fds, 2, TOUCH_INTERVAL_MS);
    if (r == -1 && errno != EINTR)
      break;
    if (r == 0)
      ctlsock_touch (&ctl.sock);
    if (r <= 0)
      continue;
    if (fds[1].revents)
      break;
    if (!(fds[0].revents & POLLIN))
      continue;
    fd = accept4 (ctl.sock.fd, NULL, NULL, SOCK_CLOEXEC);
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

  if (ctl.sock.fd == -1 || ctl.running)
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
  if (ctl.running) {
    if (write (ctl.stop_pipe[1], "x", 1) == -1)
      nbdkit_debug ("control: stop: %m");
    pthread_join (ctl.thread, NULL);
    ctl.running = false;
  }
  ctlsock_close (&ctl.sock);
  if (ctl.stop_pipe[0] >= 0) {
    close (ctl.stop_pipe[0]);
    close (ctl.stop_pipe[1]);
    ctl.stop_pipe[0] = ctl.stop_pipe[1] = -1;
  }
}
