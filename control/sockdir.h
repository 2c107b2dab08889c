/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where control sockets live and who may talk through them.
 *
 * Every running dmcrypt instance listens on control=PATH, or by default
 * on DIR/NAME.sock, DIR being the first usable of:
 *   $XDG_RUNTIME_DIR/dmcrypt   when XDG_RUNTIME_DIR is our own directory
 *   the registry directory     see below
 * and has an entry in the user's registry directory (registry.h), the
 * first usable of:
 *   $DMCRYPT_RUNTIME_DIR       when set to an absolute path that is
 *                              ours or does not exist yet
 *   /run/dmcrypt               otherwise for root
 *   /tmp/dmcrypt-UID           otherwise
 * Directories have mode 0700 and belong to the user; sockets have mode
 * 0600.  Both ends check the other's uid with SO_PEERCRED: only the
 * same user, or root, is served or trusted (tables with keys travel
 * over these sockets). */
#ifndef DMCRYPT_CONTROL_SOCKDIR_H
#define DMCRYPT_CONTROL_SOCKDIR_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_SOCKET_SUFFIX ".sock"
#define CTL_MAX_NAME 127            /* bytes, as device-mapper's names */
#define CTL_PATH_MAX 4096           /* bytes of a directory path */
#define CTL_MAX_CANDIDATES 3
#define CTL_RUNTIME_ENV "DMCRYPT_RUNTIME_DIR"

/* The candidate socket directories above, in order, or the registry's
 * alone; return how many were written (up to MAX). */
int ctl_dir_candidates (char dirs[][CTL_PATH_MAX], int max);
int ctl_registry_candidates (char dirs[][CTL_PATH_MAX], int max);

/* Server side: makes DIR (mode 0700) if it is missing and checks it.
 * Returns 0, or -1 with errno and a one-line reason in WHY. */
int ctl_dir_prepare (const char *dir, char *why, size_t why_size);

/* Client side: checks that DIR is a directory owned by us or by root
 * that nobody else may write to.  Returns 0, or -1 as above. */
int ctl_dir_check (const char *dir, char *why, size_t why_size);

/* The server's socket directory and registry directory: the first
 * candidate ctl_dir_prepare accepts.  Return 0, or -1 with the last
 * candidate's reason in WHY. */
int ctl_server_dir (char *dir, size_t size, char *why, size_t why_size);
int ctl_registry_server_dir (char *dir, size_t size, char *why,
                             size_t why_size);
/* The client's registry directory: the first candidate that exists and
 * passes ctl_dir_check (or the first candidate when none exists yet). */
int ctl_registry_client_dir (char *dir, size_t size);

/* A volume name: 1..CTL_MAX_NAME printable ASCII characters, no '/',
 * no whitespace, not starting with '.'. */
bool ctl_name_valid (const char *name);

/* DIR/NAME.sock into PATH.  Returns 0, or -1 with errno ENAMETOOLONG
 * when it does not fit a Unix socket address. */
int ctl_socket_path (const char *dir, const char *name, char *path,
                     size_t size);

/* True when the peer on FD runs as our effective uid or as root. */
bool ctl_peer_allowed (int fd);

/* Connects to the socket at PATH, waiting at most TIMEOUT_MS, and
 * checks the server's uid.  Returns the fd, or -1 with errno (ENOENT,
 * ECONNREFUSED for a stale socket, EACCES for a server of another
 * user, ETIMEDOUT). */
int ctl_connect (const char *path, int timeout_ms);

#endif /* DMCRYPT_CONTROL_SOCKDIR_H */
