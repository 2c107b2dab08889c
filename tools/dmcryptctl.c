/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmcryptctl: dmsetup's commands for running dmcrypt volumes, through
 * each instance's control socket.  The same words, options, output
 * layouts and failure lines as dmsetup; see dmcryptctl.pod. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../crypto/secmem.h"
#include "ctl/ctl.h"
#include "ctl/tablein.h"

#define VERSION "0.1"
#define MAX_MESSAGE_TEXT 4096       /* bytes of a "message" */
#define CONTROL_ENV "DMCRYPT_CONTROL"

/* The command line's options, for the whole run. */
static struct ctl_options opts;

/* What a command says of volumes on its command line: --control
 * stands for the NAME. */
enum names { NO_NAME, ONE_NAME, ANY_NAMES };

struct command
{
  const char *name;
  int min_args, max_args;           /* after the command; -1: any */
  enum names names;
  int (*run) (int argc, char **argv);
  const char *usage;
};

static void usage (FILE *fp);

/* The names to act on: those given, or every live volume. */
static char **
names_or_all (int argc, char **argv, bool *all)
{
  char **names;
  struct ctl_message rep;
  int i, n = 0;

  *all = argc == 0;
  if (!*all) {
    names = calloc (argc + 1, sizeof *names);
    for (i = 0; names && i < argc; i++)
      if ((names[i] = strdup (argv[i])) == NULL) {
        free_names (names);
        return NULL;
      }
    return names;
  }
  if ((names = list_names (&opts)) == NULL || ctl_msg_init (&rep) == -1) {
    free_names (names);
    return NULL;
  }
  /* Sockets left by killed instances are skipped, not reported. */
  for (i = 0; names[i]; i++)
    if (probe (&opts, names[i], &rep) == 0)
      names[n++] = names[i];
    else
      free (names[i]);
  names[n] = NULL;
  ctl_msg_free (&rep);
  return names;
}

static int
cmd_ls (int argc, char **argv)
{
  struct ctl_message rep;
  char **names = list_names (&opts);
  int i, shown = 0;

  (void) argc; (void) argv;
  if (names == NULL || ctl_msg_init (&rep) == -1) {
    free_names (names);
    return -1;
  }
  for (i = 0; names[i]; i++)
    if (probe (&opts, names[i], &rep) == 0) {
      print_ls_line (&rep);
      shown++;
    }
  if (shown == 0)
    printf ("No devices found\n");
  ctl_msg_free (&rep);
  free_names (names);
  return 0;
}

static int
cmd_info (int argc, char **argv)
{
  struct ctl_message req, *reps;
  char **names;
  bool all;
  int i, n = 0, r = 0;

  if ((names = names_or_all (argc, argv, &all)) == NULL)
    return -1;
  for (i = 0; names[i]; i++)
    ;
  if (i == 0 && all)
    printf ("No devices found\n");
  reps = calloc (i + 1, sizeof *reps);
  for (i = 0; reps && names[i]; i++) {
    if (ctl_msg_init (&req) == -1 || ctl_msg_init (&reps[n]) == -1)
      break;
    if (request (&opts, names[i], "info", &req, &reps[n]) == 0) {
      if (!opts.columns)
        print_info_long (&reps[n]);
      n++;
    }
    else {
      ctl_msg_free (&reps[n]);
      r = -1;
    }
    ctl_msg_free (&req);
  }
  if (opts.columns && n > 0 && print_info_columns (&opts, reps, n) == -1)
    r = -1;
  for (i = 0; i < n; i++)
    ctl_msg_free (&reps[i]);
  free (reps);
  free_names (names);
  return reps ? r : -1;
}

/* DIR ("encrypt", "decrypt"): the sampled CPU time of the cipher as ms
 * per GiB of that direction, once a chunk of it was timed. */
static void
print_cipher_cost (const struct ctl_message *rep, const char *dir)
{
  char ns_key[64], bytes_key[64];
  uint64_t ns, bytes;

  snprintf (ns_key, sizeof ns_key, "stat.%s_sample_ns", dir);
  snprintf (bytes_key, sizeof bytes_key, "stat.%s_sample_bytes", dir);
  if (ctl_get_u64 (rep, ns_key, &ns) == 0
      && ctl_get_u64 (rep, bytes_key, &bytes) == 0 && bytes > 0)
    printf ("%s_cpu_ms_per_gib: %.1f\n", dir,
            ns / 1e6 * (1024.0 * 1024 * 1024) / bytes);
}

/* NAME_dif: the dm-integrity device under volume NAME, as cryptsetup
 * names it, when no volume of that name exists.  BASE gets NAME. */
static bool
is_dif_name (const char *name, char *base, size_t size)
{
  size_t len = strlen (name);
  char path[CTL_PATH_MAX];

  if (len <= 4 || len - 4 >= size || strcmp (name + len - 4, "_dif") != 0
      || strchr (name, '/'))
    return false;
  if (socket_of (&opts, name, path, sizeof path) == 0
      && access (path, F_OK) == 0)
    return false;
  memcpy (base, name, len - 4);
  base[len - 4] = '\0';
  return true;
}

/* table and status: one line per volume ("name: line" for all); a
 * volume over dm-integrity also shows that device, NAME_dif, as dmsetup
 * shows cryptsetup's two. */
static int
print_lines (int argc, char **argv, const char *op)
{
  struct ctl_message req, rep;
  char **names;
  const char *key = strcmp (op, "table") == 0 ? "table" : "status";
  char base[CTL_MAX_NAME + 1], dif_key[32];
  bool all, answered, dif;
  size_t f;
  int i, r = 0;

  if ((names = names_or_all (argc, argv, &all)) == NULL)
    return -1;
  if (names[0] == NULL && all)
    printf ("No devices found\n");
  for (i = 0; names[i]; i++) {
    if (ctl_msg_init (&req) == -1 || ctl_msg_init (&rep) == -1)
      return -1;
    ctl_add (&req, "showkeys", opts.showkeys ? "1" : "0");
    ctl_add (&req, "inactive", opts.inactive ? "1" : "0");
    ctl_add (&req, "stats", opts.stats ? "1" : "0");
    dif = !all && is_dif_name (names[i], base, sizeof base);
    answered = request (&opts, dif ? base : names[i], op, &req, &rep) == 0;
    if (!answered)
      r = -1;
    snprintf (dif_key, sizeof dif_key, "%s_dif", key);
    /* A multi-segment mapping answers a line per segment. */
    for (f = 0; answered && f < rep.nfields; f++)
      if (strcmp (rep.field[f].key, dif ? dif_key : key) == 0)
        printf ("%s%s%s\n", all ? names[i] : "", all ? ": " : "",
                rep.field[f].value);
    for (f = 0; answered && all && f < rep.nfields; f++)
      if (strcmp (rep.field[f].key, dif_key) == 0)
        printf ("%s_dif: %s\n", names[i], rep.field[f].value);
    for (f = 0; f < rep.nfields; f++)
      if (strncmp (rep.field[f].key, "stat.", 5) == 0)
        printf ("%s: %s\n", rep.field[f].key + 5, rep.field[f].value);
    if (opts.stats && r == 0) {
      uint64_t dispatches, sequential;
      if (ctl_get_u64 (&rep, "stat.dispatches", &dispatches) == 0
          && ctl_get_u64 (&rep, "stat.sequential", &sequential) == 0
          && dispatches > 0)
        printf ("sequential_fraction: %.3f\n",
                (double) sequential / dispatches);
      print_cipher_cost (&rep, "decrypt");
      print_cipher_cost (&rep, "encrypt");
    }
    ctl_msg_free (&req);
    ctl_msg_free (&rep);
  }
  fflush (stdout);
  free_names (names);
  return r;
}

static int
cmd_table (int argc, char **argv)
{
  return print_lines (argc, argv, "table");
}

static int
cmd_status (int argc, char **argv)
{
  return print_lines (argc, argv, "status");
}

/* One command with fields already in REQ; frees REQ. */
static int
simple (const char *name, const char *op, struct ctl_message *req)
{
  struct ctl_message rep;
  int r;

  if (ctl_msg_init (&rep) == -1) {
    ctl_msg_free (req);
    return -1;
  }
  r = request (&opts, name, op, req, &rep);
  ctl_msg_free (req);
  ctl_msg_free (&rep);
  return r;
}

static int
cmd_reload (int argc, char **argv)
{
  struct ctl_message req;
  char *line;
  int r;

  if (argc == 2 && opts.table) {
    fprintf (stderr, "Give the table either as an argument or with "
             "--table, not both\n");
    return -1;
  }
  if ((line = table_input (opts.table ? opts.table
                           : argc == 2 ? argv[1] : NULL)) == NULL) {
    ioctl_failed ("reload", argv[0], EINVAL);
    return -1;
  }
  if (ctl_msg_init (&req) == -1) {
    table_input_free (line);
    return -1;
  }
  r = ctl_add (&req, "table", line);
  table_input_free (line);
  ctl_add (&req, "readonly", opts.readonly ? "1" : "0");
  ctl_add (&req, "force", opts.force ? "1" : "0");
  if (opts.scheduler)
    ctl_add (&req, "scheduler", opts.scheduler);
  if (opts.workers)
    ctl_add (&req, "workers", opts.workers);
  if (r == -1) {
    fprintf (stderr, "The table is too long\n");
    ctl_msg_free (&req);
    return -1;
  }
  return simple (argv[0], "reload", &req);
}

static int
cmd_plain (const char *op, const char *name)
{
  struct ctl_message req;

  if (ctl_msg_init (&req) == -1)
    return -1;
  ctl_add (&req, "noflush", opts.noflush ? "1" : "0");
  ctl_add (&req, "nolockfs", opts.nolockfs ? "1" : "0");
  return simple (name, op, &req);
}

static int
cmd_clear (int argc, char **argv)
{
  (void) argc;
  return cmd_plain ("clear", argv[0]);
}

static int
cmd_suspend (int argc, char **argv)
{
  (void) argc;
  return cmd_plain ("suspend", argv[0]);
}

static int
cmd_resume (int argc, char **argv)
{
  (void) argc;
  return cmd_plain ("resume", argv[0]);
}

/* "key set -": the key is read from stdin, out of the process list. */
static int
key_from_stdin (char *text, size_t size, size_t len)
{
  int c;

  len -= 1;                           /* drop the "-" */
  while ((c = getchar ()) != EOF && len + 1 < size)
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
      text[len++] = c;
  text[len] = '\0';
  return c == EOF ? 0 : -1;
}

static int
cmd_message (int argc, char **argv)
{
  struct ctl_message req;
  char *text = secmem_alloc (MAX_MESSAGE_TEXT);
  size_t len = 0;
  int i, r = -1;

  if (text == NULL || ctl_msg_init (&req) == -1) {
    secmem_free (text, MAX_MESSAGE_TEXT);
    return -1;
  }
  for (i = 2; i < argc; i++)
    len += snprintf (text + len, len < MAX_MESSAGE_TEXT
                     ? MAX_MESSAGE_TEXT - len : 0, "%s%s",
                     i > 2 ? " " : "", argv[i]);
  if (len >= MAX_MESSAGE_TEXT
      || (argc == 5 && strcasecmp (argv[2], "key") == 0
          && strcasecmp (argv[3], "set") == 0 && strcmp (argv[4], "-") == 0
          && key_from_stdin (text, MAX_MESSAGE_TEXT, len) == -1))
    fprintf (stderr, "The message is too long\n");
  else if (ctl_add (&req, "sector", argv[1]) == 0
           && ctl_add (&req, "text", text) == 0) {
    secmem_free (text, MAX_MESSAGE_TEXT);
    return simple (argv[0], "message", &req);
  }
  secmem_free (text, MAX_MESSAGE_TEXT);
  ctl_msg_free (&req);
  return r;
}

static int
cmd_help (int argc, char **argv)
{
  (void) argc; (void) argv;
  usage (stdout);
  return 0;
}

static int
cmd_version (int argc, char **argv)
{
  (void) argc; (void) argv;
  printf (PROGRAM " version:  " VERSION "\n");
  return 0;
}

static const struct command commands[] = {
  { "ls", 0, 0, NO_NAME, cmd_ls, "" },
  { "info", 0, -1, ANY_NAMES, cmd_info,
    "[-c [--noheadings] [-o FIELDS] [--separator SEP]] [NAME...]" },
  { "table", 0, -1, ANY_NAMES, cmd_table,
    "[--showkeys] [--inactive] [NAME...]" },
  { "status", 0, -1, ANY_NAMES, cmd_status, "[--stats] [NAME...]" },
  { "reload", 1, 2, ONE_NAME, cmd_reload, "NAME [TABLE_FILE | - | 'TABLE'] "
    "[--table TABLE] [--readonly] [--force]\n"
    "                [--scheduler POLICY] [--workers N]" },
  { "clear", 1, 1, ONE_NAME, cmd_clear, "NAME" },
  { "suspend", 1, 1, ONE_NAME, cmd_suspend, "[--noflush] [--nolockfs] NAME" },
  { "resume", 1, 1, ONE_NAME, cmd_resume, "NAME" },
  { "message", 3, -1, ONE_NAME, cmd_message, "NAME SECTOR MESSAGE..." },
  { "help", 0, 0, NO_NAME, cmd_help, "" },
  { "version", 0, 0, NO_NAME, cmd_version, "" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void
usage (FILE *fp)
{
  size_t i;

  fprintf (fp, "Usage:\n\n" PROGRAM " [--dir DIR | --control PATH] "
           "COMMAND [OPTIONS]\n\n");
  for (i = 0; i < NCOMMANDS; i++)
    fprintf (fp, "        %s %s\n", commands[i].name, commands[i].usage);
  fprintf (fp, "\nNAME is a volume name (nbdkit's name= parameter) or "
           "the path of a control socket.\n"
           "With --control PATH (or DMCRYPT_CONTROL=PATH), NAME is left "
           "out: PATH is the volume.\n");
}

static int
parse_options (int argc, char **argv)
{
  static const struct option long_options[] = {
    { "columns", no_argument, NULL, 'c' },
    { "control", required_argument, NULL, 'X' },
    { "dir", required_argument, NULL, 'D' },
    { "force", no_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { "inactive", no_argument, NULL, 'I' },
    { "noflush", no_argument, NULL, 'F' },
    { "noheadings", no_argument, NULL, 'N' },
    { "nolockfs", no_argument, NULL, 'L' },
    { "options", required_argument, NULL, 'o' },
    { "readonly", no_argument, NULL, 'r' },
    { "scheduler", required_argument, NULL, 'P' },
    { "separator", required_argument, NULL, 'S' },
    { "showkeys", no_argument, NULL, 'K' },
    { "stats", no_argument, NULL, 's' },
    { "table", required_argument, NULL, 'T' },
    { "version", no_argument, NULL, 'V' },
    { "workers", required_argument, NULL, 'W' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  while ((c = getopt_long (argc, argv, "cCfho:r", long_options, NULL)) != -1)
    switch (c) {
    case 'c': case 'C': opts.columns = true; break;
    case 'D': opts.dir = optarg; break;
    case 'X': opts.control = optarg; break;
    case 'f': opts.force = true; break;
    case 'h': usage (stdout); exit (EXIT_SUCCESS);
    case 'I': opts.inactive = true; break;
    case 'F': opts.noflush = true; break;
    case 'N': opts.noheadings = true; break;
    case 'L': opts.nolockfs = true; break;
    case 'o': opts.fields = optarg; break;
    case 'r': opts.readonly = true; break;
    case 'P': opts.scheduler = optarg; break;
    case 'S': opts.separator = optarg; break;
    case 'K': opts.showkeys = true; break;
    case 's': opts.stats = true; break;
    case 'T': opts.table = optarg; break;
    case 'V': cmd_version (0, NULL); exit (EXIT_SUCCESS);
    case 'W': opts.workers = optarg; break;
    default: usage (stderr); return -1;
    }
  return 0;
}

/* --control PATH, or DMCRYPT_CONTROL, as a NAME: one with a '/', which
 * is never a volume name.  Returns 0, or -1 after printing why. */
static int
control_path (void)
{
  static char path[CTL_PATH_MAX];
  const char *given = opts.control;

  /* An empty DMCRYPT_CONTROL counts as unset. */
  if (given == NULL && (given = getenv (CONTROL_ENV)) != NULL && !*given)
    given = NULL;
  opts.control = NULL;
  if (given == NULL)
    return 0;
  if (*given == '\0'
      || (size_t) snprintf (path, sizeof path, "%s%s",
                            strchr (given, '/') ? "" : "./", given)
      >= sizeof path) {
    fprintf (stderr, PROGRAM ": --control: '%s' is not a socket path\n",
             given);
    return -1;
  }
  opts.control = path;
  return 0;
}

/* ARGV (NARGS words after the command) with --control's path put
 * where the command's NAME goes.  Returns NULL after printing why. */
static char **
with_control (const struct command *cmd, char **argv, int *nargs)
{
  char **args;

  if (cmd->names == ANY_NAMES && *nargs > 0) {
    fprintf (stderr, PROGRAM ": --control (or " CONTROL_ENV ") names the "
             "volume: give no NAME\n");
    return NULL;
  }
  if ((args = calloc (*nargs + 2, sizeof *args)) == NULL) {
    perror (PROGRAM);
    return NULL;
  }
  args[0] = (char *) opts.control;
  memcpy (args + 1, argv, *nargs * sizeof *args);
  (*nargs)++;
  return args;
}

int
main (int argc, char **argv)
{
  const struct command *cmd = NULL;
  char **args;
  int nargs, r;
  size_t i;

  if (parse_options (argc, argv) == -1 || control_path () == -1)
    return EXIT_FAILURE;
  if (optind >= argc) {
    usage (stderr);
    return EXIT_FAILURE;
  }
  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp (argv[optind], commands[i].name) == 0)
      cmd = &commands[i];
  if (cmd == NULL) {
    fprintf (stderr, "Unknown command: %s\n", argv[optind]);
    usage (stderr);
    return EXIT_FAILURE;
  }
  nargs = argc - optind - 1;
  args = argv + optind + 1;
  if (opts.control && cmd->names != NO_NAME
      && (args = with_control (cmd, args, &nargs)) == NULL)
    return EXIT_FAILURE;
  if (nargs < cmd->min_args || (cmd->max_args >= 0
                                && nargs > cmd->max_args)) {
    fprintf (stderr, "Usage: " PROGRAM " %s %s\n", cmd->name, cmd->usage);
    r = -2;
  }
  else
    r = cmd->run (nargs, args);
  if (args != argv + optind + 1)
    free (args);
  if (r == -1)
    fprintf (stderr, "Command failed.\n");
  return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
