/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The registry directory's entries: listing, liveness, locking and
 * the removal of entries left by killed instances. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"
#include "sockdir.h"

int
ctl_dir_lock (const char *dir, bool wait)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

  if (fd == -1)
    return -1;
  if (flock (fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == -1) {
    err = errno;
    close (fd);
    errno = err;
    return -1;
  }
  return fd;
}

void
ctl_dir_unlock (int fd)
{
  if (fd >= 0)
    close (fd);                     /* closing drops the lock */
}

bool
ctl_socket_live (const char *path, int timeout_ms)
{
  int fd = ctl_connect (path, timeout_ms);

  if (fd >= 0) {
    close (fd);
    return true;
  }
  return errno != ECONNREFUSED && errno != ENOENT && errno != ENOTDIR;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The NAME of an entry NAME.sock that is a socket or a symlink, or
 * NULL for anything else. */
static char *
entry_name (const char *dir, const struct dirent *d)
{
  size_t len = strlen (d->d_name), slen = strlen (CTL_SOCKET_SUFFIX);
  char path[CTL_PATH_MAX], *name;
  struct stat st;

  if (len <= slen || strcmp (d->d_name + len - slen, CTL_SOCKET_SUFFIX) != 0)
    return NULL;
  if (d->d_type == DT_UNKNOWN) {
    snprintf (path, sizeof path, "%s/%s", dir, d->d_name);
    if (lstat (path, &st) == -1
        || !(S_ISSOCK (st.st_mode) || S_ISLNK (st.st_mode)))
      return NULL;
  }
  else if (d->d_type != DT_SOCK && d->d_type != DT_LNK)
    return NULL;
  name = strndup (d->d_name, len - slen);
  if (name && !ctl_name_valid (name)) {
    free (name);
    return NULL;
  }
  return name;
}

char **
ctl_registry_names (const char *dir)
{
  char **names = calloc (CTL_MAX_VOLUMES + 1, sizeof *names);
  size_t n = 0;
  struct dirent *d;
  DIR *dp;

  if (names == NULL)
    return NULL;
  /* No directory yet: no volume was ever opened. */
  if ((dp = opendir (dir)) == NULL)
    return names;
  while ((d = readdir (dp)) != NULL && n < CTL_MAX_VOLUMES)
    if ((names[n] = entry_name (dir, d)) != NULL)
      n++;
  closedir (dp);
  qsort (names, n, sizeof *names, compare_names);
  return names;
}

void
ctl_names_free (char **names)
{
  size_t i;

  if (names == NULL)
    return;
  for (i = 0; names[i]; i++)
    free (names[i]);
  free (names);
}

void
ctl_registry_sweep (const char *dir)
{
  char **names = ctl_registry_names (dir), path[CTL_PATH_MAX];
  size_t i;

  for (i = 0; names && names[i]; i++)
    if (ctl_socket_path (dir, names[i], path, sizeof path) == 0
        && !ctl_socket_live (path, CTL_PROBE_MS))
      unlink (path);
  ctl_names_free (names);
}
