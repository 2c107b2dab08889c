/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The calling thread's submitter (submitter.h). */
#include <sched.h>

#include "submitter.h"

static _Thread_local struct backend_submitter current = {
  .context = 0, .cpu = -1, .name = NULL, .sync = false,
};

void
backend_set_submitter (const struct backend_submitter *s)
{
  current = s ? *s : (struct backend_submitter) { 0, -1, NULL, false };
}

bool
backend_submitter_set_sync (bool sync)
{
  bool was = current.sync;

  current.sync = sync;
  return was;
}

struct backend_submitter
backend_submitter (void)
{
  return current;
}

unsigned
backend_submitter_cpu (void)
{
  int cpu;

  if (current.cpu >= 0)
    return (unsigned) current.cpu;
  cpu = sched_getcpu ();
  return cpu < 0 ? 0 : (unsigned) cpu;
}
