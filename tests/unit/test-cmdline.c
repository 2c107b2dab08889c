/* nbdkit -r read back from nbdkit's command line (plugin/cmdline.c), as
 * nbdkit's own option parser reads it: short options bundled or with
 * arguments, long options and their aliases, options after the plugin's
 * parameters (GNU getopt permutes), "--", and wrappers in front. */
#include <stdbool.h>
#include <stdio.h>

#include "../../plugin/cmdline.h"
#include "check.h"

#define ARGV(...) (char *[]) { __VA_ARGS__, NULL }
#define COUNT(...) (int) (sizeof ((char *[]) { __VA_ARGS__ }) / sizeof (char *))
#define RO(...) cmdline_is_readonly (COUNT (__VA_ARGS__), ARGV (__VA_ARGS__))

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
  /* This process is no nbdkit and has no -r. */
  CHECK (cmdline_proc_readonly (&proc) == 0);
  CHECK (!proc);
  if (failures == 0)
    printf ("cmdline: ok\n");
  return failures != 0;
}
