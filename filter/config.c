/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The filter's parameters: dmcrypt-KEY= is always dmcrypt's; file=
 * and any KEY= that is none of dmcrypt's are the plugin's; a bare KEY=
 * that both may take is dmcrypt's unless dmcrypt-KEY= was given too
 * (filter.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nbdkit-filter.h>

#include "filter.h"

#define PREFIX "dmcrypt-"

/* A bare KEY= that both dmcrypt and the plugin may take waits for the
 * end of the command line: if dmcrypt-KEY= was given too, the bare one
 * is the plugin's. */
struct deferred
{
  char *key, *value;
  struct deferred *next;
};
static struct deferred *deferred, **deferred_tail = &deferred;
static char *prefixed[64];           /* names given as dmcrypt-KEY= */
static unsigned nprefixed;
static nbdkit_next_config *next_config;
static nbdkit_backend *next_config_data;

static bool
given_prefixed (const char *key)
{
  unsigned i;

  for (i = 0; i < nprefixed; i++)
    if (strcmp (prefixed[i], key) == 0)
      return true;
  return false;
}

static int
defer (const char *key, const char *value)
{
  struct deferred *d = calloc (1, sizeof *d);

  if (d == NULL || (d->key = strdup (key)) == NULL
      || (d->value = strdup (value)) == NULL) {
    nbdkit_error ("strdup: %m");
    if (d)
      free (d->key);
    free (d);
    return -1;
  }
  *deferred_tail = d;
  deferred_tail = &d->next;
  return 0;
}

/* file= goes to the plugin, and names the volume when it is the only
 * one: messages, the table's device and the control socket's default
 * name then read as the plugin's do.  A bare dmcrypt parameter name
 * that is no file was a parameter without its value. */
static unsigned layer_files;

static int
note_layer_file (struct dmcrypt_params *p, const char *value)
{
  char **layer_file = &p->layer_file;

  if (access (value, F_OK) == -1 && errno == ENOENT
      && params_is_name (value)) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", value, value);
    return -1;
  }
  free (*layer_file);
  *layer_file = NULL;
  /* Absolute: nbdkit leaves the working directory when it forks. */
  if (++layer_files == 1 && (*layer_file = realpath (value, NULL)) == NULL)
    *layer_file = strdup (value);
  return 0;
}

int
filter_config_key (struct dmcrypt_params *p, nbdkit_next_config *next,
                   nbdkit_backend *nxdata, const char *key,
                   const char *value)
{
  char alt[64];

  next_config = next;
  next_config_data = nxdata;
  if (strncmp (key, PREFIX, strlen (PREFIX)) == 0
      && params_is_name (key + strlen (PREFIX))
      && strcmp (key + strlen (PREFIX), "file") != 0) {
    if (nprefixed < sizeof prefixed / sizeof prefixed[0]
        && !given_prefixed (key + strlen (PREFIX))
        && (prefixed[nprefixed] = strdup (key + strlen (PREFIX))) != NULL)
      nprefixed++;
    return params_config (p, key + strlen (PREFIX), value);
  }
  /* file= is the plugin's: the filter's data is the next layer. */
  if (strcmp (key, "file") == 0)
    return note_layer_file (p, value) == -1 ? -1
      : next (nxdata, key, value);
  if (params_respelt (key, alt, sizeof alt)) {
    nbdkit_error ("unknown parameter '%s': did you mean '%s'?", key, alt);
    return -1;
  }
  if (!params_is_name (key))
    return next (nxdata, key, value);
  return defer (key, value);
}

/* PATH (malloc'd, or NULL) made absolute in place. */
static int
make_absolute (char **path)
{
  char *abs;

  if (*path == NULL)
    return 0;
  if ((abs = nbdkit_absolute_path (*path)) == NULL)
    return -1;
  free (*path);
  *path = abs;
  return 0;
}

/* The filter opens its volume after nbdkit forks and leaves the working
 * directory (.after_fork): the files it reads then are named absolutely
 * now, as the plugin's file= is. */
static int
paths_absolute (struct dmcrypt_params *p)
{
  size_t i;

  for (i = 0; i < p->keyfiles_count; i++)
    if (make_absolute (&p->keyfiles[i]) == -1)
      return -1;
  if (p->keyfiles_count)
    p->keyfile = p->keyfiles[0];
  return make_absolute (&p->header) == -1
    || make_absolute (&p->integrity_key_file) == -1
    || make_absolute (&p->trace) == -1 ? -1 : 0;
}

int
filter_config_apply (struct dmcrypt_params *p)
{
  struct deferred *d, *next;
  int r = 0;

  for (d = deferred; d; d = next) {
    next = d->next;
    if (r == 0)
      r = given_prefixed (d->key)
        ? next_config (next_config_data, d->key, d->value)
        : params_config (p, d->key, d->value);
    explicit_bzero (d->value, strlen (d->value));
    free (d->key);
    free (d->value);
    free (d);
  }
  deferred = NULL;
  deferred_tail = &deferred;
  return r == 0 ? paths_absolute (p) : r;
}

void
filter_config_free (void)
{
  unsigned i;

  for (i = 0; i < nprefixed; i++)
    free (prefixed[i]);
  nprefixed = 0;
}
