/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket of a running volume: dmcryptctl's way in.
 * ctlsock.c makes the socket and its registry entry, control.c serves
 * it from its thread, ctlcmd.c answers the requests (docs/control.md).
 *
 * A front end opens it once the parameters are known (the plugin in
 * .config_complete, after volume_open; the filter in .get_ready, before
 * its volume opens, so that a name in use ends the server before nbdkit
 * forks), starts its thread in .after_fork, once the volume is open,
 * and closes it before the volume. */
#ifndef DMCRYPT_VOLUME_CONTROL_H
#define DMCRYPT_VOLUME_CONTROL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "../../control/proto.h"
#include "../volume.h"
#include "ctlsock.h"

/* The volume's control server: V->control while open. */
struct volume_control
{
  struct dmcrypt_volume *volume;
  struct ctl_socket sock;            /* its name is the volume's */
  int stop_pipe[2];
  pthread_t thread;
  bool running;
  /* A stat of the image as it was when the socket opened, for the info
   * reply's image_dev, image_ino and image_rdev, which another instance
   * that finds the image locked compares (lock/lock.h). */
  bool image_known;
  struct stat image_st;
};

/* Picks the name, binds the socket and registers it (so that a name in
 * use is a start-up error) into V->control.  Returns 0 or -1 after
 * nbdkit_error. */
int control_open (struct dmcrypt_volume *v);
/* .after_fork: starts the thread that serves the socket. */
int control_start (struct dmcrypt_volume *v);
/* .cleanup, .unload: stops the thread, removes the socket and its
 * registry entry, frees V->control.  Again is nothing. */
void control_close (struct dmcrypt_volume *v);

/* ctlcmd.c: notes the image's identity into C. */
void ctlcmd_init (struct volume_control *c);
/* ctlcmd.c: answers one request of C's client: fills REP (initialised)
 * with the reply. */
void ctlcmd_dispatch (struct volume_control *c, const struct ctl_message *req,
                      struct ctl_message *rep);

#endif /* DMCRYPT_VOLUME_CONTROL_H */
