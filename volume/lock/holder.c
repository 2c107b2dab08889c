/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who holds a lock on an image: OFD locks carry no pid (F_OFD_GETLK
 * and /proc/locks say -1), so the holder is found by its open files:
 * /proc/PID/fdinfo/FD lists the locks held through each descriptor.
 * Only processes we may inspect (our own, or all for root) are seen. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lock.h"

/* Does one fdinfo file list a lock on the inode named by ID
 * ("MAJ:MIN:INO" as the kernel prints it)? */
static bool
fdinfo_locks (const char *path, const char *id)
{
  char line[256];
  bool found = false;
  FILE *fp = fopen (path, "re");

  if (fp == NULL)
    return false;
  while (!found && fgets (line, sizeof line, fp))
    found = strncmp (line, "lock:", 5) == 0 && strstr (line, id) != NULL;
  fclose (fp);
  return found;
}

static bool
process_locks (const char *pid, const char *id)
{
  char dir[300], file[600];
  struct dirent *d;
  bool found = false;
  DIR *dp;

  snprintf (dir, sizeof dir, "/proc/%s/fdinfo", pid);
  if ((dp = opendir (dir)) == NULL)
    return false;
  while (!found && (d = readdir (dp)) != NULL)
    if (d->d_name[0] != '.') {
      snprintf (file, sizeof file, "%s/%s", dir, d->d_name);
      found = fdinfo_locks (file, id);
    }
  closedir (dp);
  return found;
}

static void
read_comm (pid_t pid, char *comm, size_t size)
{
  char path[64];
  FILE *fp;

  snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  comm[0] = '\0';
  if ((fp = fopen (path, "re")) != NULL) {
    if (fgets (comm, size, fp))
      comm[strcspn (comm, "\n")] = '\0';
    fclose (fp);
  }
}

static pid_t
find_pid (const struct stat *st)
{
  char id[64];
  struct dirent *d;
  pid_t self = getpid (), pid = 0;
  DIR *dp = opendir ("/proc");

  if (dp == NULL)
    return 0;
  snprintf (id, sizeof id, " %02x:%02x:%lu ", major (st->st_dev),
            minor (st->st_dev), (unsigned long) st->st_ino);
  while (pid == 0 && (d = readdir (dp)) != NULL)
    if (isdigit ((unsigned char) d->d_name[0])
        && atoi (d->d_name) != self && process_locks (d->d_name, id))
      pid = atoi (d->d_name);
  closedir (dp);
  return pid;
}

void
image_lock_find_holder (const struct stat *st, int fd, bool exclusive,
                        struct image_lock_holder *holder)
{
  struct flock fl = { .l_type = exclusive ? F_WRLCK : F_RDLCK,
                      .l_whence = SEEK_SET };

  if (holder == NULL)
    return;
  memset (holder, 0, sizeof *holder);
  holder->dev = st->st_dev;
  holder->ino = st->st_ino;
  if (fcntl (fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) {
    holder->known = true;
    holder->writer = fl.l_type == F_WRLCK;
  }
  holder->pid = find_pid (st);
  if (holder->pid)
    read_comm (holder->pid, holder->comm, sizeof holder->comm);
}
