/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nbdkit's own command line as the filter needs it (filter.h): -r,
 * --run, and the socket and PID file that a server ending in
 * .after_fork must not leave behind. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nbdkit-filter.h>

#include "filter.h"

/* PATH relative to nbdkit's first directory, as nbdkit_absolute_path
 * made its own copy (server/main.c: -U, -P), or NULL. */
static int
absolute (char **path)
{
  char *abs;

  if (*path == NULL || **path == '/')
    return 0;
  if ((abs = nbdkit_absolute_path (*path)) == NULL)
    return -1;
  free (*path);
  *path = abs;
  return 0;
}

void
server_facts_read (struct cmdline_facts *server)
{
  if (cmdline_proc_facts (server) == -1
      || absolute (&server->unix_socket) == -1
      || absolute (&server->pid_file) == -1)
    nbdkit_debug ("dmcrypt: cannot read nbdkit's command line: "
                  "assuming no -r, no --run, no socket or PID file");
}

/* The PID file at PATH names this process. */
static bool
names_this_process (const char *path)
{
  FILE *fp = fopen (path, "re");
  long pid = 0;
  bool ours;

  if (fp == NULL)
    return false;
  ours = fscanf (fp, "%ld", &pid) == 1 && pid == (long) getpid ();
  fclose (fp);
  return ours;
}

/* nbdkit 1.32 never removes its Unix socket, and writes the PID file
 * before .after_fork (main.c, start_serving): a server that ends here
 * would leave a socket that refuses connections and a PID file of a
 * process that is gone. */
void
server_files_remove (const struct cmdline_facts *server)
{
  struct stat st;

  if (server->unix_socket && lstat (server->unix_socket, &st) == 0
      && S_ISSOCK (st.st_mode) && unlink (server->unix_socket) == 0)
    nbdkit_debug ("dmcrypt: removed the socket %s", server->unix_socket);
  if (server->pid_file && names_this_process (server->pid_file)
      && unlink (server->pid_file) == 0)
    nbdkit_debug ("dmcrypt: removed the PID file %s", server->pid_file);
}
