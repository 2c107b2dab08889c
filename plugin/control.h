/* The control socket of a running instance: dmcryptctl's way in.
 * control.c owns the socket and its thread; ctlcmd.c answers the
 * requests (docs/control.md). */
#ifndef DMCRYPT_PLUGIN_CONTROL_H
#define DMCRYPT_PLUGIN_CONTROL_H

#include "../control/proto.h"

/* .config_complete: picks the name and binds the socket (so that a
 * name in use is a start-up error).  Returns 0 or -1 after
 * nbdkit_error. */
int control_open (void);
/* .after_fork: starts the thread that serves the socket. */
int control_start (void);
/* .unload: stops the thread, removes the socket. */
void control_close (void);

/* The volume's name as dmcryptctl knows it. */
const char *control_name (void);

/* Answers one request: fills REP (initialised) with the reply. */
void ctlcmd_dispatch (const struct ctl_message *req, struct ctl_message *rep);

#endif /* DMCRYPT_PLUGIN_CONTROL_H */
