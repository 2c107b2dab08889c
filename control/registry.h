/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The user's registry of running volumes: one directory per user
 * (sockdir.h says which) holding an entry NAME.sock for every running
 * instance, wherever its socket is: the socket itself when it lives
 * there, else a symlink to it.  It keeps names unique across all of
 * the user's volumes, as device-mapper's are, and lets dmcryptctl find
 * an instance started with control=PATH or under another
 * XDG_RUNTIME_DIR.
 *
 * Instances add and remove their entry with the directory locked
 * (ctl_dir_lock), and listen before they add it: an entry nobody
 * listens behind, under the lock, was left by a killed instance and may
 * be removed (ctl_registry_sweep). */
#ifndef DMCRYPT_CONTROL_REGISTRY_H
#define DMCRYPT_CONTROL_REGISTRY_H

#include <stdbool.h>

#define CTL_MAX_VOLUMES 4096
#define CTL_PROBE_MS    1000        /* a live socket answers connect */

/* Locks DIR against other instances (flock), waiting if WAIT.  Returns
 * an fd for ctl_dir_unlock, or -1 with errno (EWOULDBLOCK: held). */
int ctl_dir_lock (const char *dir, bool wait);
void ctl_dir_unlock (int fd);

/* True unless nothing listens at PATH: no such file (a dangling
 * entry), or a socket that refuses connections.  A socket of another
 * user, or one too busy to connect to within TIMEOUT_MS, counts as
 * live: only what is surely dead is ever removed. */
bool ctl_socket_live (const char *path, int timeout_ms);

/* The names of DIR's entries (sockets and symlinks called NAME.sock
 * with a valid NAME), sorted: a NULL-terminated array to free with
 * ctl_names_free, or NULL with errno.  A missing DIR has none. */
char **ctl_registry_names (const char *dir);
void ctl_names_free (char **names);

/* Removes DIR's entries that nobody listens behind.  The caller holds
 * DIR's lock. */
void ctl_registry_sweep (const char *dir);

#endif /* DMCRYPT_CONTROL_REGISTRY_H */
