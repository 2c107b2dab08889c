/* The volumes whose sockets are in the socket directory. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define MAX_VOLUMES 4096

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* NAME.sock -> NAME, or NULL for any other entry. */
static char *
volume_name (const char *entry)
{
  size_t len = strlen (entry), slen = strlen (CTL_SOCKET_SUFFIX);
  char *name;

  if (len <= slen || strcmp (entry + len - slen, CTL_SOCKET_SUFFIX) != 0)
    return NULL;
  name = strndup (entry, len - slen);
  if (name && !ctl_name_valid (name)) {
    free (name);
    return NULL;
  }
  return name;
}

char **
list_names (void)
{
  char dir[CTL_PATH_MAX];
  char **names = calloc (MAX_VOLUMES + 1, sizeof *names);
  size_t n = 0;
  struct dirent *d;
  DIR *dp;

  if (names == NULL || socket_dir (dir, sizeof dir) == -1) {
    free (names);
    return NULL;
  }
  /* No directory yet: no volume was ever opened. */
  if ((dp = opendir (dir)) == NULL)
    return names;
  while ((d = readdir (dp)) != NULL && n < MAX_VOLUMES)
    if ((names[n] = volume_name (d->d_name)) != NULL)
      n++;
  closedir (dp);
  qsort (names, n, sizeof *names, compare_names);
  return names;
}

void
free_names (char **names)
{
  size_t i;

  if (names == NULL)
    return;
  for (i = 0; names[i]; i++)
    free (names[i]);
  free (names);
}
