/* Reading nbdkit's own command line (cmdline.c says why). */
#ifndef DMCRYPT_PLUGIN_CMDLINE_H
#define DMCRYPT_PLUGIN_CMDLINE_H

#include <stdbool.h>

/* True when ARGV, an nbdkit command line (possibly behind a wrapper
 * such as the dynamic loader), holds -r / --readonly / --read-only, as
 * nbdkit's option parser reads it. */
bool cmdline_is_readonly (int argc, char **argv);

/* The same for this process.  Returns 0, or -1 when /proc/self/cmdline
 * cannot be read (*READONLY untouched). */
int cmdline_proc_readonly (bool *readonly);

/* What this process's nbdkit command line says: -r, and --run (nbdkit
 * runs a command against the server and exits with its status).
 * Returns 0, or -1 when /proc/self/cmdline cannot be read. */
struct cmdline_facts
{
  bool readonly;
  bool run;
};
int cmdline_proc_facts (struct cmdline_facts *facts);

#endif /* DMCRYPT_PLUGIN_CMDLINE_H */
