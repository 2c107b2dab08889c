/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The running volumes: the entries of the registry (or of --dir), or
 * the one volume of --control. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../control/registry.h"
#include "ctl.h"

/* Entries left by killed instances go, if the registry is truly ours
 * and no instance is starting or stopping just now (then the next
 * listing does it). */
static void
sweep (const char *dir)
{
  char why[512];
  int lock;

  if (ctl_dir_check (dir, why, sizeof why) == -1)
    return;
  if ((lock = ctl_dir_lock (dir, false)) >= 0) {
    ctl_registry_sweep (dir);
    ctl_dir_unlock (lock);
  }
}

char **
list_names (const struct ctl_options *o)
{
  char dir[CTL_PATH_MAX], **names;

  if (o->control) {
    if ((names = calloc (2, sizeof *names)) != NULL
        && (names[0] = strdup (o->control)) == NULL) {
      free (names);
      return NULL;
    }
    return names;
  }
  if (socket_dir (o, dir, sizeof dir) == -1)
    return NULL;
  if (o->dir == NULL)
    sweep (dir);
  return ctl_registry_names (dir);
}

void
free_names (char **names)
{
  ctl_names_free (names);
}
