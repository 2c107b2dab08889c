/* The list of write-out policies, looked up by their scheduler= name. */
#include <stddef.h>
#include <string.h>

#include "policy.h"

static const struct writeout_policy *const policies[] = {
  &writeout_policy_sorted,      /* first: the default */
  &writeout_policy_fifo,
  &writeout_policy_batch,
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

const char *
writeout_policy_names (void)
{
  return "sorted fifo batch";
}
