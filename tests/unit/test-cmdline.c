/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nbdkit -r read back from nbdkit's command line
 * (volume/params/cmdline.c), as nbdkit's own option parser reads it:
 * short options bundled or with arguments, long options and their
 * aliases, options after the plugin's parameters (GNU getopt permutes),
 * "--", and wrappers in front.  The same for --run and the files of -U
 * and -P. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../volume/params/cmdline.h"
#include "check.h"

#define ARGV(...) (char *[]) { __VA_ARGS__, NULL }
#define COUNT(...) (int) (sizeof ((char *[]) { __VA_ARGS__ }) / sizeof (char *))
#define RO(...) cmdline_is_readonly (COUNT (__VA_ARGS__), ARGV (__VA_ARGS__))
#define FACTS(f, ...) cmdline_scan (COUNT (__VA_ARGS__), ARGV (__VA_ARGS__), f)

/* S is EXPECTED, both NULL or the same string. */
static bool
same (const char *s, const char *expected)
{
  return s == NULL ? expected == NULL : expected && strcmp (s, expected) == 0;
}

/* The socket and PID file an nbdkit command line gives the server. */
static void
check_files (void)
{
  struct cmdline_facts f;

  CHECK (FACTS (&f, "nbdkit", "dmcrypt", "file=a.img") == 0);
  CHECK (same (f.unix_socket, NULL) && same (f.pid_file, NULL) && !f.run);
  CHECK (FACTS (&f, "nbdkit", "-U", "d.sock", "-P", "d.pid", "dmcrypt",
                "a.img") == 0);
  CHECK (same (f.unix_socket, "d.sock") && same (f.pid_file, "d.pid"));
  cmdline_facts_free (&f);
  /* Long forms, bundled and attached arguments. */
  CHECK (FACTS (&f, "nbdkit", "--unix=/s/x", "--pidfile", "/p/1",
                "dmcrypt", "a.img") == 0);
  CHECK (same (f.unix_socket, "/s/x") && same (f.pid_file, "/p/1"));
  cmdline_facts_free (&f);
  CHECK (FACTS (&f, "nbdkit", "-rfU/tmp/s", "--pid-file=q.pid", "dmcrypt",
                "a.img") == 0);
  CHECK (same (f.unix_socket, "/tmp/s") && same (f.pid_file, "q.pid"));
  CHECK (f.readonly);
  cmdline_facts_free (&f);
  /* -U - is nbdkit's own temporary socket; the last one given wins. */
  CHECK (FACTS (&f, "nbdkit", "-U", "a.sock", "-U", "-", "-P", "1",
                "-P", "2", "dmcrypt", "--run", "true") == 0);
  CHECK (same (f.unix_socket, NULL) && same (f.pid_file, "2") && f.run);
  cmdline_facts_free (&f);
  /* Values and options' arguments are neither. */
  CHECK (FACTS (&f, "nbdkit", "--run", "-U x", "dmcrypt",
                "passphrase=-Uy", "-D", "-P") == 0);
  CHECK (same (f.unix_socket, NULL) && same (f.pid_file, NULL) && f.run);
  cmdline_facts_free (&f);
}

int
main (void)
{
  bool proc = true;

  CHECK (!RO ("nbdkit", "dmcrypt", "file=a.img"));
  CHECK (RO ("nbdkit", "-r", "dmcrypt", "file=a.img"));
  CHECK (RO ("/usr/sbin/nbdkit", "--readonly", "dmcrypt", "a.img"));
  CHECK (RO ("nbdkit", "--read-only", "dmcrypt", "a.img"));
  CHECK (RO ("nbdkit", "-fvr", "dmcrypt", "a.img"));
  CHECK (RO ("nbdkit", "-rU", "/tmp/s", "dmcrypt", "a.img"));
  /* After the plugin's parameters: nbdkit still takes it. */
  CHECK (RO ("nbdkit", "dmcrypt", "file=a.img", "-r"));
  /* Arguments of options are not options. */
  CHECK (!RO ("nbdkit", "-U", "-r", "dmcrypt", "a.img"));
  CHECK (!RO ("nbdkit", "-P", "-r", "dmcrypt", "a.img"));
  CHECK (!RO ("nbdkit", "--run", "-r", "dmcrypt", "a.img"));
  CHECK (!RO ("nbdkit", "--filter", "-r", "dmcrypt", "a.img"));
  CHECK (!RO ("nbdkit", "-D", "-r", "dmcrypt", "a.img"));
  CHECK (RO ("nbdkit", "--run=nbdinfo $uri", "-r", "dmcrypt", "a.img"));
  CHECK (!RO ("nbdkit", "--run", "nbdinfo -r", "dmcrypt", "a.img"));
  /* Values are not options either, nor is anything after "--". */
  CHECK (!RO ("nbdkit", "dmcrypt", "passphrase=-r"));
  CHECK (!RO ("nbdkit", "--", "dmcrypt", "-r"));
  /* Unknown options do not stop the scan. */
  CHECK (RO ("nbdkit", "--no-such-option", "-r", "dmcrypt", "a.img"));
  /* nbdkit started through the dynamic loader (the sanitizer runs) or
   * another wrapper: its own options count, the wrapper's do not. */
  CHECK (RO ("/lib64/ld-linux-x86-64.so.2", "--preload", "x.so",
             "/usr/sbin/nbdkit", "-r", "dmcrypt", "a.img"));
  CHECK (!RO ("/lib64/ld-linux-x86-64.so.2", "--preload", "-r.so",
              "/usr/sbin/nbdkit", "dmcrypt", "a.img"));
  check_files ();
  /* This process is no nbdkit and has no -r. */
  CHECK (cmdline_proc_readonly (&proc) == 0);
  CHECK (!proc);
  if (failures == 0)
    printf ("cmdline: ok\n");
  return failures != 0;
}
