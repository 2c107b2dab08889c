/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The parameters that carry secrets: passphrase=, table= and key=.
 * Each takes nbdkit's password forms -- +FILE, -FD, - (ask on the
 * terminal) -- which keep the secret out of argv (ps) and out of
 * nbdkit's -v config log; a literal value is in both.  Whatever is
 * read goes into locked memory at once (secretread.c). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../crypto/secmem.h"
#include "../../table/crypt_table.h"
#include "params.h"

enum { KEY_FILE_MAX = 8192 };    /* bytes of hex: 4 KiB keys at most */

static bool
is_password_form (const char *value)
{
  return value[0] == '+' || value[0] == '-';
}

/* VALUE's secret in secmem of *SIZE + 1 bytes: read by secret_read for
 * the +FILE, -FD and - forms, else the literal itself. */
static char *
read_secret (const char *key, const char *value, size_t *size)
{
  char *copy;

  if (is_password_form (value))
    return secret_read (key, value, size);
  *size = strlen (value);
  if ((copy = secmem_dup (value, *size + 1)) == NULL)
    nbdkit_error ("%s: %m", key);
  return copy;
}

int
secret_passphrase (struct dmcrypt_params *p, const char *value)
{
  if (p->passphrase) {
    nbdkit_error ("passphrase given more than once");
    return -1;
  }
  /* "passphrase=pw.txt" most likely meant the file: remembered for the
   * error when no keyslot takes it. */
  if (!is_password_form (value) && access (value, F_OK) == 0
      && (p->passphrase_file_hint = strdup (value)) == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  p->passphrase = read_secret ("passphrase", value,
                                   &p->passphrase_size);
  return p->passphrase ? 0 : -1;
}

int
secret_table (struct dmcrypt_params *p, const char *value)
{
  size_t size;

  if (p->table) {
    nbdkit_error ("table given more than once");
    return -1;
  }
  /* A table line starts with its start sector, never with + or -. */
  p->table = read_secret ("table", value, &size);
  return p->table ? 0 : -1;
}

/* key=+FILE: the hex key in a file, as dmsetup users keep it; white
 * space around it is ignored.  Read whole (not one line) so that a key
 * split over lines is refused rather than cut. */
static int
read_key_file (const char *path, char *hex, size_t hex_size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  size_t n = 0;
  ssize_t r = 1;

  if (fd == -1) {
    nbdkit_error ("key: %s: %m", path);
    return -1;
  }
  /* read(2), not stdio: no buffer keeps a copy of the key. */
  while (n < hex_size && (r = read (fd, hex + n, hex_size - n)) != 0)
    if (r > 0)
      n += r;
    else if (errno != EINTR)
      break;
  close (fd);
  if (r == -1 || n == hex_size) {
    nbdkit_error ("key: %s: %s", path, r == -1 ? strerror (errno)
                  : "file too large");
    return -1;
  }
  hex[n] = '\0';
  while (n > 0 && isspace ((unsigned char) hex[n - 1]))
    hex[--n] = '\0';
  return 0;
}

/* key=+FILE, key=-FD, key=-: the hex digits in secmem of *SIZE bytes,
 * without surrounding white space. */
static char *
read_key_text (const char *value, size_t *size)
{
  char *hex;
  size_t n;

  if (value[0] == '+') {
    *size = KEY_FILE_MAX + 1;
    if ((hex = secmem_alloc (*size)) == NULL) {
      nbdkit_error ("key: %m");
      return NULL;
    }
    if (read_key_file (value + 1, hex, *size) == -1) {
      secmem_free (hex, *size);
      return NULL;
    }
  }
  else {
    if ((hex = read_secret ("key", value, &n)) == NULL)
      return NULL;
    *size = n + 1;
    while (n > 0 && isspace ((unsigned char) hex[n - 1]))
      hex[--n] = '\0';
  }
  return hex;
}

int
secret_key (struct dmcrypt_params *p, const char *value)
{
  char *text = NULL;
  const char *digits = value;
  size_t text_size = 0;
  int r = -1;

  if (p->key) {
    nbdkit_error ("key given more than once");
    return -1;
  }
  if (is_password_form (value)) {
    if ((text = read_key_text (value, &text_size)) == NULL)
      return -1;
    digits = text;
    while (isspace ((unsigned char) *digits))
      digits++;
  }
  if (hex_decode (digits, &p->key, &p->key_size) == -1)
    nbdkit_error ("key: %s", errno == ENOMEM ? strerror (errno)
                  : "not hex digits, two per key byte");
  else
    r = 0;
  if (text)
    secmem_free (text, text_size);
  return r;
}
