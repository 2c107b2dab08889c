/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Clevis's own tools, run as Clevis's unlockers run them
 * (clevis-luks-common-functions, clevis 19): "clevis decrypt" reads a
 * compact JWE on stdin and prints the keyslot's passphrase, whatever
 * the pin (tang, sss, tpm2); "luksmeta show" and "luksmeta load" find
 * the JWEs that clevis luks bind keeps beside a LUKS1 header.  The
 * passphrase goes into locked memory and is wiped when dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../crypto/secmem.h"
#include "clevis.h"
#include "helper.h"
#include "token.h"

/* luksmeta exits with EX_OSFILE (72) when the device has no luksmeta
 * area (luksmeta.c, luksmeta 9: -ENOENT from luksmeta_test). */
#define LUKSMETA_NONE 72
/* luksmeta data is at most a few KiB a slot: LUKS1's gap before the
 * data is 1 MiB at most in cryptsetup's layout. */
#define LUKSMETA_DATA_MAX (1024 * 1024)

int
clevis_decrypt (const char *jwe, char **pass, size_t *pass_bytes,
                char *why, size_t why_size)
{
  const char *const argv[] = { "clevis", "decrypt", NULL };
  char *buf = secmem_alloc (CLEVIS_PASS_MAX + 1);
  size_t n;
  int r;

  *pass = NULL;
  if (buf == NULL)
    {
      snprintf (why, why_size, "cannot lock memory for the passphrase");
      return -1;
    }
  r = luks_spawn (argv, jwe, strlen (jwe), buf, CLEVIS_PASS_MAX, &n, why,
                  why_size);
  if (r == 0 && n == 0)
    snprintf (why, why_size, "clevis decrypt printed no passphrase");
  else if (r > 0 && why[0] == '\0')
    snprintf (why, why_size, "clevis decrypt failed (exit %d)", r);
  if (r != 0 || n == 0)
    {
      secmem_free (buf, CLEVIS_PASS_MAX + 1);
      return -1;
    }
  buf[n] = '\0';
  *pass = buf;
  *pass_bytes = n;
  return 0;
}

void
clevis_pass_free (char *pass)
{
  if (pass)
    secmem_free (pass, CLEVIS_PASS_MAX + 1);
}

/* A helper has no /proc/self of ours: the filter's header copy is
 * /proc/self/fd/N. */
static void
path_for_helper (const char *path, char *buf, size_t size)
{
  if (strncmp (path, "/proc/self/", 11) == 0)
    snprintf (buf, size, "/proc/%d/%s", (int) getpid (), path + 11);
  else
    snprintf (buf, size, "%s", path);
}

/* "N   active UUID" lines. */
static uint32_t
clevis_lines (const char *text)
{
  uint32_t slots = 0;
  const char *line;
  char state[16], uuid[40];
  int slot;

  for (line = text; line && *line; line = strchr (line, '\n'),
       line = line ? line + 1 : NULL)
    if (sscanf (line, "%d %15s %39s", &slot, state, uuid) == 3
        && slot >= 0 && slot < 8 && strcmp (state, "active") == 0
        && strcmp (uuid, CLEVIS_LUKSMETA_UUID) == 0)
      slots |= UINT32_C (1) << slot;
  return slots;
}

int
clevis_luksmeta_slots (const char *path, uint32_t *slots, char *why,
                       size_t why_size)
{
  char dev[4096], text[2048];
  const char *const argv[] = { "luksmeta", "show", "-d", dev, NULL };
  size_t n;
  int r;

  *slots = 0;
  path_for_helper (path, dev, sizeof dev);
  r = luks_spawn (argv, "", 0, text, sizeof text - 1, &n, why, why_size);
  if (r == LUKSMETA_NONE)
    return 0;
  if (r != 0)
    {
      if (r > 0 && why[0] == '\0')
        snprintf (why, why_size, "luksmeta show failed (exit %d)", r);
      return -1;
    }
  text[n] = '\0';
  *slots = clevis_lines (text);
  return 0;
}

int
clevis_luksmeta_load (const char *path, int slot, char **data,
                      size_t *data_bytes, char *why, size_t why_size)
{
  char dev[4096], num[16];
  const char *const argv[] = { "luksmeta", "load", "-d", dev, "-s", num,
                               "-u", CLEVIS_LUKSMETA_UUID, NULL };
  int r;

  path_for_helper (path, dev, sizeof dev);
  snprintf (num, sizeof num, "%d", slot);
  *data = malloc (LUKSMETA_DATA_MAX);
  if (*data == NULL)
    {
      snprintf (why, why_size, "out of memory");
      return -1;
    }
  r = luks_spawn (argv, "", 0, *data, LUKSMETA_DATA_MAX, data_bytes, why,
                  why_size);
  if (r > 0 && why[0] == '\0')
    snprintf (why, why_size, "luksmeta load failed (exit %d)", r);
  if (r != 0)
    {
      free (*data);
      *data = NULL;
      return -1;
    }
  return 0;
}
