/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading nbdkit's own command line (cmdline.c says why). */
#ifndef DMCRYPT_VOLUME_CMDLINE_H
#define DMCRYPT_VOLUME_CMDLINE_H

#include <stdbool.h>

/* True when ARGV, an nbdkit command line (possibly behind a wrapper
 * such as the dynamic loader), holds -r / --readonly / --read-only, as
 * nbdkit's option parser reads it. */
bool cmdline_is_readonly (int argc, char **argv);

/* The same for this process.  Returns 0, or -1 when /proc/self/cmdline
 * cannot be read (*READONLY untouched). */
int cmdline_proc_readonly (bool *readonly);

/* What an nbdkit command line says: -r, --run (nbdkit runs a command
 * against the server and exits with its status), and the files nbdkit
 * makes for the server and leaves behind: the Unix socket of -U (none
 * for "-", nbdkit's own temporary one) and the PID file of -P, each as
 * given on the command line (relative to nbdkit's first directory), or
 * NULL.  The strings are the struct's own: cmdline_facts_free. */
struct cmdline_facts
{
  bool readonly;
  bool run;
  char *unix_socket;
  char *pid_file;
};

/* Reads ARGV as nbdkit's option parser does into *FACTS.  Returns 0, or
 * -1 when out of memory (*FACTS then as far as it was read). */
int cmdline_scan (int argc, char **argv, struct cmdline_facts *facts);

/* The same for this process.  Returns 0, or -1 when /proc/self/cmdline
 * cannot be read (*FACTS untouched) or memory runs out. */
int cmdline_proc_facts (struct cmdline_facts *facts);

void cmdline_facts_free (struct cmdline_facts *facts);

#endif /* DMCRYPT_VOLUME_CMDLINE_H */
