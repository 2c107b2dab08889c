/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The table a reload sends: read as dmsetup reads one (a file, stdin,
 * or --table), held to the kernel's rules here first so that a bad
 * table is explained on the terminal, and with a relative device path
 * made absolute (the server's working directory is not ours).  The
 * text may hold a key: it lives in locked memory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../crypto/secmem.h"
#include "../../table/crypt_table.h"
#include "tablein.h"

#define INPUT_SIZE (64 * 1024)      /* bytes of table text, at most */
#define DEVICE_WORD 6               /* <device> is the 7th word */

static int
read_fd (int fd, char *buf, size_t size)
{
  size_t len = 0;
  ssize_t r;

  while (len < size - 1) {
    r = read (fd, buf + len, size - 1 - len);
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1)
      return -1;
    if (r == 0)
      break;
    len += r;
  }
  if (len == size - 1) {
    errno = EFBIG;
    return -1;
  }
  buf[len] = '\0';
  return 0;
}

/* SOURCE: NULL or "-" (stdin), a table line (it has spaces), or a file. */
static char *
read_source (const char *source)
{
  char *buf = secmem_alloc (INPUT_SIZE);
  int fd, r;

  if (buf == NULL)
    return NULL;
  if (source && strpbrk (source, " \t")) {
    snprintf (buf, INPUT_SIZE, "%s", source);
    return buf;
  }
  if (source == NULL || strcmp (source, "-") == 0)
    r = read_fd (STDIN_FILENO, buf, INPUT_SIZE);
  else if ((fd = open (source, O_RDONLY | O_CLOEXEC)) == -1)
    r = -1;
  else {
    r = read_fd (fd, buf, INPUT_SIZE);
    close (fd);
  }
  if (r == -1) {
    fprintf (stderr, "Couldn't read the table from %s: %m\n",
             source && strcmp (source, "-") ? source : "stdin");
    secmem_free (buf, INPUT_SIZE);
    return NULL;
  }
  return buf;
}

/* The single target line of TEXT (changed in place): as dmsetup,
 * blank lines and '#' comments are skipped and spaces trimmed. */
static char *
target_line (char *text)
{
  char *line, *save = NULL, *found = NULL, *p;

  for (line = strtok_r (text, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save)) {
    if ((p = strchr (line, '#')) != NULL)
      *p = '\0';
    line += strspn (line, " \t\r");
    for (p = line + strlen (line); p > line && strchr (" \t\r", p[-1]); p--)
      ;
    *p = '\0';
    if (*line == '\0')
      continue;
    if (found) {
      fprintf (stderr, "A dmcrypt volume has exactly one target: the "
               "table has more than one line\n");
      return NULL;
    }
    found = line;
  }
  if (found == NULL)
    fprintf (stderr, "The table is empty\n");
  return found;
}

/* LINE with its device word replaced by DEVICE, into OUT. */
static int
replace_device (const char *line, const char *device, char *out,
                size_t size)
{
  const char *p = line, *start;
  int word, n;

  for (word = 0; word < DEVICE_WORD; word++) {
    p += strspn (p, " \t");
    p += strcspn (p, " \t");
  }
  p += strspn (p, " \t");
  start = p;
  p += strcspn (p, " \t");
  n = snprintf (out, size, "%.*s%s%s", (int) (start - line), line, device, p);
  return n < 0 || (size_t) n >= size ? -1 : 0;
}

char *
table_input (const char *source)
{
  char *text = read_source (source), *line, *out = NULL, *abs = NULL;
  struct crypt_table t;
  unsigned maj, min;
  char extra;

  if (text == NULL || (line = target_line (text)) == NULL)
    goto done;
  /* The kernel's checks, with its reasons printed here. */
  if (crypt_table_parse (line, &t) == -1)
    goto done;
  if (crypt_table_validate (&t) == 0
      && (out = secmem_alloc (INPUT_SIZE)) != NULL) {
    if (t.device[0] != '/' && sscanf (t.device, "%u:%u%c", &maj, &min,
                                      &extra) != 2)
      abs = realpath (t.device, NULL);
    if (replace_device (line, abs ? abs : t.device, out, INPUT_SIZE) == -1) {
      secmem_free (out, INPUT_SIZE);
      out = NULL;
    }
  }
  free (abs);
  crypt_table_free (&t);

 done:
  if (text)
    secmem_free (text, INPUT_SIZE);
  return out;
}

void
table_input_free (char *line)
{
  secmem_free (line, INPUT_SIZE);
}
