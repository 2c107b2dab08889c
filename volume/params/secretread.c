/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a secret from a file, a descriptor or the terminal without
 * leaving a copy behind.  nbdkit_read_password reads through stdio,
 * whose buffer keeps the secret in freed, unwiped heap memory (a core
 * dump shows it); here read(2) goes straight into locked memory.  The
 * forms and their meaning are nbdkit_read_password's: +FILE and -FD
 * give their first line, - asks on the terminal with echo off, and
 * descriptors 0-2 are refused. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../crypto/secmem.h"
#include "params.h"

enum { SECRET_MAX = 64 * 1024 };   /* bytes of a line, tables included */

/* The first line of what FD holds, into a new secmem of *SIZE + 1. */
static char *
read_line (int fd, const char *what, size_t *size)
{
  char *buf = secmem_alloc (SECRET_MAX + 1), *line = NULL, *nl = NULL;
  size_t n = 0;
  ssize_t r;

  if (buf == NULL) {
    nbdkit_error ("%s: %m", what);
    return NULL;
  }
  while (nl == NULL && n < SECRET_MAX
         && (r = read (fd, buf + n, SECRET_MAX - n)) != 0) {
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1) {
      nbdkit_error ("%s: read: %m", what);
      goto out;
    }
    nl = memchr (buf + n, '\n', r);
    n += r;
  }
  if (nl == NULL && n == SECRET_MAX) {
    nbdkit_error ("%s: the first line is longer than %d bytes", what,
                  SECRET_MAX);
    goto out;
  }
  *size = nl ? (size_t) (nl - buf) : n;
  buf[*size] = '\0';
  if ((line = secmem_dup (buf, *size + 1)) == NULL)
    nbdkit_error ("%s: %m", what);
 out:
  secmem_free (buf, SECRET_MAX + 1);
  return line;
}

static char *
read_from_terminal (const char *what, size_t *size)
{
  struct termios saved, quiet;
  bool echo_off;
  char *line;

  if (!nbdkit_stdio_safe () || !isatty (STDIN_FILENO)) {
    nbdkit_error ("%s=-: stdin is not a terminal to ask on", what);
    return NULL;
  }
  printf ("password: ");
  fflush (stdout);
  echo_off = tcgetattr (STDIN_FILENO, &saved) == 0;
  if (echo_off) {
    quiet = saved;
    quiet.c_lflag &= ~ECHO;
    tcsetattr (STDIN_FILENO, TCSAFLUSH, &quiet);
  }
  line = read_line (STDIN_FILENO, what, size);
  if (echo_off)
    tcsetattr (STDIN_FILENO, TCSAFLUSH, &saved);
  printf ("\n");
  return line;
}

/* The descriptor of -FD, as nbdkit_parse_int reads a number.  The
 * refusal does not repeat what follows the '-': a passphrase meant
 * literally may start with one. */
static int
fd_number (const char *what, const char *digits, int *fd)
{
  char *end;
  long n;

  errno = 0;
  n = strtol (digits, &end, 0);
  if (errno || end == digits || *end || n < 0 || n > INT_MAX) {
    nbdkit_error ("%s: '-' must be followed by a file descriptor number "
                  "(-FD), or be alone (ask on the terminal)", what);
    return -1;
  }
  *fd = n;
  return 0;
}

char *
secret_read (const char *what, const char *value, size_t *size)
{
  char *line;
  int fd;

  if (strcmp (value, "-") == 0)
    return read_from_terminal (what, size);
  if (value[0] == '-') {
    if (fd_number (what, value + 1, &fd) == -1)
      return NULL;
    if (fd >= 0 && fd <= 2) {
      nbdkit_error ("%s: -FD cannot be stdin, stdout or stderr", what);
      return NULL;
    }
  }
  else if ((fd = open (value + 1, O_RDONLY | O_CLOEXEC)) == -1) {
    nbdkit_error ("%s: %s: %m", what, value + 1);
    return NULL;
  }
  line = read_line (fd, what, size);
  close (fd);
  return line;
}
