/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The list of write-out policies, looked up by their scheduler= name. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

static const struct writeout_policy *const policies[] = {
  &writeout_policy_sorted,      /* first: the default */
  &writeout_policy_fifo,
  &writeout_policy_batch,
  &writeout_policy_rbtree,
};

const struct writeout_policy *
writeout_policy_find (const char *name)
{
  size_t i;

  if (name == NULL)
    return policies[0];
  for (i = 0; i < sizeof policies / sizeof policies[0]; i++)
    if (strcmp (policies[i]->name, name) == 0)
      return policies[i];
  return NULL;
}

/* Made from the list, so that a new policy is named everywhere
 * (--dump-plugin, errors, "message ... scheduler") by its one line
 * above. */
static char names[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void
join_names (void)
{
  size_t i, n = 0;

  for (i = 0; i < sizeof policies / sizeof policies[0]; i++)
    n += snprintf (names + n, n < sizeof names ? sizeof names - n : 0,
                   "%s%s", i ? " " : "", policies[i]->name);
}

const char *
writeout_policy_names (void)
{
  pthread_once (&names_once, join_names);
  return names;
}
