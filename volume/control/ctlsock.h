/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's file and the volume's name: the name made
 * unique among the user's volumes through the registry
 * (control/registry.h), the socket bound and listening, and its
 * registry entry.  control.c serves the socket. */
#ifndef DMCRYPT_VOLUME_CTLSOCK_H
#define DMCRYPT_VOLUME_CTLSOCK_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#include "../../control/sockdir.h"

#define CTL_SUN_PATH sizeof ((struct sockaddr_un *) 0)->sun_path

struct ctl_socket
{
  char name[CTL_MAX_NAME + 1];
  char path[CTL_SUN_PATH];          /* the socket, absolute */
  char entry[CTL_SUN_PATH];         /* its registry entry: PATH itself
                                       or a symlink to it */
  char registry[CTL_PATH_MAX];      /* the registry directory */
  dev_t dev;                        /* the socket file we made */
  ino_t ino;
  int fd;                           /* listening; -1: none */
};

/* What the socket is asked for: name= (NULL: the image file's name
 * without its extension, or "dmcrypt" without an IMAGE_FILE) and
 * control= (NULL: the default directory). */
struct ctl_socket_want
{
  const char *name;
  const char *control;
  const char *image_file;
};

/* Chooses the name, binds the socket, listens, and adds the registry
 * entry, all with the registry locked.  Returns 0, or -1 after
 * nbdkit_error (a name in use, an unusable directory). */
int ctlsock_open (struct ctl_socket *s, const struct ctl_socket_want *w);
/* Removes the entry and the socket if they are still ours, and closes
 * the socket. */
void ctlsock_close (struct ctl_socket *s);
/* Refreshes the entry's times, so that /tmp cleaners (systemd-tmpfiles
 * ages files out after 10 days) leave a long-running volume's entry. */
void ctlsock_touch (const struct ctl_socket *s);

#endif /* DMCRYPT_VOLUME_CTLSOCK_H */
