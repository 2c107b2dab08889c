/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's server: the thread that serves it one
 * connection at a time (commands are short; suspend waits at most for
 * the requests in flight).  ctlsock.c makes the socket. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "control.h"

#define REQUEST_TIMEOUT_MS 5000     /* a client has 5 s to send */
#define TOUCH_INTERVAL_MS  (3600 * 1000)  /* keeps the registry entry */

int
control_open (struct dmcrypt_volume *v)
{
  struct volume_control *c = calloc (1, sizeof *c);
  struct ctl_socket_want want = {
    .name = v->params.name, .control = v->params.control,
    .image_file = volume_image_file (v),
  };

  if (c == NULL) {
    nbdkit_error ("control: calloc: %m");
    return -1;
  }
  c->volume = v;
  c->sock.fd = -1;
  c->stop_pipe[0] = c->stop_pipe[1] = -1;
  ctlcmd_init (c);
  if (ctlsock_open (&c->sock, &want) == -1) {
    free (c);
    return -1;
  }
  v->control = c;
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
serve (struct volume_control *c, int fd)
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
    ctlcmd_dispatch (c, &req, &rep);
    ctl_send (fd, &rep);
    ctl_msg_free (&rep);
  }
  ctl_msg_free (&req);
}

static void *
control_thread (void *arg)
{
  struct volume_control *c = arg;
  struct pollfd fds[2] = {
    { .fd = c->sock.fd, .events = POLLIN },
    { .fd = c->stop_pipe[0], .events = POLLIN },
  };
  int fd, r;

  for (;;) {
    r = poll (fds, 2, TOUCH_INTERVAL_MS);
    if (r == -1 && errno != EINTR)
      break;
    if (r == 0)
      ctlsock_touch (&c->sock);
    if (r <= 0)
      continue;
    if (fds[1].revents)
      break;
    if (!(fds[0].revents & POLLIN))
      continue;
    fd = accept4 (c->sock.fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd == -1) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
        usleep (10000);             /* do not spin while out of fds */
      continue;
    }
    serve (c, fd);
    close (fd);
  }
  return NULL;
}

int
control_start (struct dmcrypt_volume *v)
{
  struct volume_control *c = v->control;
  int err;

  if (c == NULL || c->sock.fd == -1 || c->running)
    return 0;
  if (pipe2 (c->stop_pipe, O_CLOEXEC) == -1) {
    nbdkit_error ("control: pipe: %m");
    return -1;
  }
  err = pthread_create (&c->thread, NULL, control_thread, c);
  if (err) {
    nbdkit_error ("control: pthread_create: %s", strerror (err));
    return -1;
  }
  c->running = true;
  return 0;
}

void
control_close (struct dmcrypt_volume *v)
{
  struct volume_control *c = v ? v->control : NULL;

  if (c == NULL)
    return;
  if (c->running) {
    if (write (c->stop_pipe[1], "x", 1) == -1)
      nbdkit_debug ("control: stop: %m");
    pthread_join (c->thread, NULL);
    c->running = false;
  }
  ctlsock_close (&c->sock);
  if (c->stop_pipe[0] >= 0) {
    close (c->stop_pipe[0]);
    close (c->stop_pipe[1]);
  }
  free (c);
  v->control = NULL;
}
