/* key=HEX or key=+FILE (a file holding the hex key, as dmsetup users
 * keep it; surrounding white space is ignored). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../crypto/secmem.h"
#include "dmcrypt.h"

enum { KEY_FILE_MAX = 8192 };    /* bytes of hex: 4 KiB keys at most */

static int
read_key_file (const char *path, char *hex, size_t hex_size)
{
  FILE *fp = fopen (path, "re");
  size_t n;

  if (fp == NULL) {
    nbdkit_error ("key: %s: %m", path);
    return -1;
  }
  n = fread (hex, 1, hex_size - 1, fp);
  if (ferror (fp) || !feof (fp)) {
    nbdkit_error ("key: %s: %s", path,
                  ferror (fp) ? "read error" : "file too large");
    fclose (fp);
    return -1;
  }
  fclose (fp);
  hex[n] = '\0';
  while (n > 0 && isspace ((unsigned char) hex[n - 1]))
    hex[--n] = '\0';
  return 0;
}

int key_param_parse (const char *value);

int
key_param_parse (const char *value)
{
  char *hex = NULL;
  const char *digits = value;
  int r = -1;

  if (params.key) {
    nbdkit_error ("key given more than once");
    return -1;
  }
  if (value[0] == '+') {
    hex = secmem_alloc (KEY_FILE_MAX + 1);
    if (hex == NULL) {
      nbdkit_error ("key: %m");
      return -1;
    }
    if (read_key_file (value + 1, hex, KEY_FILE_MAX + 1) == -1)
      goto out;
    digits = hex;
    while (isspace ((unsigned char) *digits))
      digits++;
  }
  if (hex_decode (digits, &params.key, &params.key_size) == -1) {
    nbdkit_error ("key: %s", errno == ENOMEM ? strerror (errno)
                  : "not hex digits, two per key byte");
    goto out;
  }
  r = 0;
 out:
  if (hex)
    secmem_free (hex, KEY_FILE_MAX + 1);
  return r;
}
