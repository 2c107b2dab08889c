/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmcryptctl's parts: talking to instances (client.c), finding them
 * in the registry (list.c), and printing what they say as dmsetup does
 * (report.c). */
#ifndef DMCRYPT_TOOLS_CTL_H
#define DMCRYPT_TOOLS_CTL_H

#include <stdbool.h>
#include <stddef.h>

#include "../../control/proto.h"
#include "../../control/sockdir.h"

#define PROGRAM "dmcryptctl"
#define COMMAND_TIMEOUT_MS 120000   /* suspend may wait for requests */
#define PROBE_TIMEOUT_MS   3000     /* ls and name lookups */

struct ctl_options
{
  bool showkeys, inactive;             /* table */
  bool columns, noheadings;            /* info -c */
  const char *fields;                  /* info -c -o */
  const char *separator;               /* info -c --separator */
  bool stats;                          /* status --stats */
  bool readonly, force;                /* reload */
  const char *table;                   /* reload --table */
  const char *scheduler;               /* reload --scheduler */
  const char *workers;                 /* reload --workers */
  bool noflush, nolockfs;              /* suspend */
  const char *dir;                     /* --dir: the socket directory */
  const char *control;                 /* --control, DMCRYPT_CONTROL: one
                                          volume's socket, holding a '/' */
};

/* client.c; O: the command line's options. */

/* The socket of volume NAME (a path when NAME holds a '/').  Returns 0,
 * or -1 after printing why. */
int socket_of (const struct ctl_options *o, const char *name, char *path,
               size_t size);
/* The directory of the volumes' sockets or entries: --dir, or the
 * registry. */
int socket_dir (const struct ctl_options *o, char *dir, size_t size);

/* Sends REQ (with "op OP" added) to volume NAME and reads the reply
 * into REP (both initialised).  OP also names the command in dmsetup's
 * error lines.  On failure prints dmsetup's lines (but not "Command
 * failed.") and returns -1. */
int request (const struct ctl_options *o, const char *name, const char *op,
             struct ctl_message *req, struct ctl_message *rep);
/* "info" of NAME with a short timeout, printing nothing on failure: a
 * stale socket of a killed instance is simply not there. */
int probe (const struct ctl_options *o, const char *name,
           struct ctl_message *rep);
/* Prints "device-mapper: OP ioctl on NAME  failed: <strerror ERRNUM>". */
void ioctl_failed (const char *op, const char *name, int errnum);

/* list.c: the names of the registry's volumes, sorted (or --control's
 * socket alone); a NULL-terminated array to free with free_names.
 * Stale entries are removed from the registry on the way, but may be
 * listed: probe tells. */
char **list_names (const struct ctl_options *o);
void free_names (char **names);

/* report.c */
void print_info_long (const struct ctl_message *info);
/* info -c for N replies.  Returns 0, or -1 after printing why. */
int print_info_columns (const struct ctl_options *o,
                        struct ctl_message *infos, size_t n);
/* ls: one line per volume. */
void print_ls_line (const struct ctl_message *info);

#endif /* DMCRYPT_TOOLS_CTL_H */
