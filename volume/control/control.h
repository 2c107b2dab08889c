/* The control socket of a running instance: dmcryptctl's way in.
 * ctlsock.c makes the socket and its registry entry, control.c serves
 * it from its thread, ctlcmd.c answers the requests (docs/control.md). */
#ifndef DMCRYPT_PLUGIN_CONTROL_H
#define DMCRYPT_PLUGIN_CONTROL_H

#include "../../control/proto.h"

/* .config_complete, once the image is open: picks the name, binds the
 * socket and registers it (so that a name in use is a start-up error).
 * Returns 0 or -1 after nbdkit_error. */
int control_open (void);
/* .after_fork: starts the thread that serves the socket. */
int control_start (void);
/* .cleanup, .unload: stops the thread, removes the socket and its
 * registry entry. */
void control_close (void);

/* The volume's name as dmcryptctl knows it. */
const char *control_name (void);

/* Notes the image's identity (a stat of it as it was opened) for the
 * info reply's image_dev, image_ino and image_rdev. */
void ctlcmd_init (void);
/* Answers one request: fills REP (initialised) with the reply. */
void ctlcmd_dispatch (const struct ctl_message *req, struct ctl_message *rep);

#endif /* DMCRYPT_PLUGIN_CONTROL_H */
