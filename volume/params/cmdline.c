/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nbdkit -r as the plugin can know it at start-up.  nbdkit 1.32 tells a
 * plugin that it is read-only only per connection (.open), too late to
 * open the image read-only and to take a shared rather than an
 * exclusive lock; so the server's own command line is read again with
 * nbdkit's option table (server/options.h of nbdkit 1.32).  The same
 * reading gives the filter --run, and the socket and PID file that a
 * server ending in .after_fork would leave behind (nbdkit 1.32 removes
 * neither, main.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"

#define CMDLINE_MAX (1 << 20)        /* bytes of /proc/self/cmdline */

static const char nbdkit_short_options[] = "46D:e:fg:i:nop:P:rst:u:U:vV";

/* Only whether each long option takes an argument matters here. */
#define NOARG(n) { n, no_argument, NULL, 0 }
#define ARG(n)   { n, required_argument, NULL, 0 }
static const struct option nbdkit_long_options[] = {
  NOARG ("ipv4-only"), NOARG ("ipv6-only"), ARG ("debug"),
  NOARG ("dump-config"), NOARG ("dump-plugin"), NOARG ("exit-with-parent"),
  ARG ("export"), ARG ("export-name"), ARG ("exportname"), ARG ("filter"),
  NOARG ("foreground"), NOARG ("no-fork"), ARG ("group"), NOARG ("help"),
  ARG ("ip-addr"), ARG ("ipaddr"), ARG ("log"), NOARG ("long-options"),
  ARG ("mask-handshake"), NOARG ("new-style"), NOARG ("newstyle"),
  NOARG ("no-sr"), NOARG ("old-style"), NOARG ("oldstyle"),
  ARG ("pid-file"), ARG ("pidfile"), ARG ("port"),
  { "read-only", no_argument, NULL, 'r' },
  { "readonly", no_argument, NULL, 'r' },
  ARG ("run"), ARG ("selinux-label"), NOARG ("short-options"),
  NOARG ("single"), NOARG ("stdin"), NOARG ("swap"), ARG ("threads"),
  ARG ("tls"), ARG ("tls-certificates"), ARG ("tls-psk"),
  NOARG ("tls-verify-peer"), ARG ("unix"), ARG ("user"), NOARG ("verbose"),
  NOARG ("version"), NOARG ("vsock"),
  { NULL, 0, NULL, 0 },
};
#undef NOARG
#undef ARG

/* Under a wrapper (the dynamic loader run by hand, valgrind) nbdkit's
 * own arguments start after its program name. */
static int
first_nbdkit_arg (int argc, char **argv)
{
  int i;
  const char *base;

  for (i = 0; i < argc; i++) {
    base = strrchr (argv[i], '/');
    base = base ? base + 1 : argv[i];
    if (strcmp (base, "nbdkit") == 0)
      return i;
  }
  return 0;
}

/* A copy of VALUE (or NULL) into *DST, the last one given winning, as
 * nbdkit's parser keeps it.  Returns 0, or -1 when out of memory. */
static int
keep (char **dst, const char *value)
{
  free (*dst);
  *dst = value ? strdup (value) : NULL;
  return value && *dst == NULL ? -1 : 0;
}

/* Which long option I of nbdkit_long_options is. */
static bool
is_long (int i, const char *name)
{
  return strcmp (nbdkit_long_options[i].name, name) == 0;
}

int
cmdline_scan (int argc, char **argv, struct cmdline_facts *f)
{
  int start = first_nbdkit_arg (argc, argv), n = argc - start, c, i = 0;
  char **copy = calloc (n + 1, sizeof *copy);
  int r = 0;

  memset (f, 0, sizeof *f);
  if (copy == NULL || n <= 0) {
    free (copy);
    return copy == NULL && n > 0 ? -1 : 0;
  }
  memcpy (copy, argv + start, n * sizeof *copy);
  /* GNU getopt starts afresh with optind 0; nbdkit is done with it. */
  opterr = 0;
  optind = 0;
  while (r == 0 && (c = getopt_long (n, copy, nbdkit_short_options,
                                     nbdkit_long_options, &i)) != -1)
    if (c == 'r')
      f->readonly = true;
    else if (c == 'U' || (c == 0 && is_long (i, "unix")))
      /* -U - is a socket in nbdkit's own temporary directory. */
      r = keep (&f->unix_socket, strcmp (optarg, "-") ? optarg : NULL);
    else if (c == 'P' || (c == 0 && (is_long (i, "pidfile")
                                     || is_long (i, "pid-file"))))
      r = keep (&f->pid_file, optarg);
    else if (c == 0 && is_long (i, "run"))
      f->run = true;
  optind = 1;
  free (copy);
  return r;
}

void
cmdline_facts_free (struct cmdline_facts *f)
{
  free (f->unix_socket);
  free (f->pid_file);
  f->unix_socket = f->pid_file = NULL;
}

bool
cmdline_is_readonly (int argc, char **argv)
{
  struct cmdline_facts f;

  cmdline_scan (argc, argv, &f);
  cmdline_facts_free (&f);
  return f.readonly;
}

int
cmdline_proc_readonly (bool *readonly)
{
  struct cmdline_facts f = { .readonly = false };
  int r = cmdline_proc_facts (&f);

  cmdline_facts_free (&f);
  if (r == 0)
    *readonly = f.readonly;
  return r;
}

int
cmdline_proc_facts (struct cmdline_facts *facts)
{
  char *buf = malloc (CMDLINE_MAX), **argv = NULL, *p;
  FILE *fp = fopen ("/proc/self/cmdline", "re");
  size_t len = 0;
  int argc = 0, r = -1;

  if (buf && fp && (len = fread (buf, 1, CMDLINE_MAX - 1, fp)) > 0) {
    buf[len] = '\0';
    for (p = buf; p < buf + len; p += strlen (p) + 1)
      argc++;
    if ((argv = calloc (argc + 1, sizeof *argv)) != NULL) {
      argc = 0;
      for (p = buf; p < buf + len; p += strlen (p) + 1)
        argv[argc++] = p;
      r = cmdline_scan (argc, argv, facts);
    }
  }
  if (fp)
    fclose (fp);
  free (argv);
  free (buf);
  return r;
}
