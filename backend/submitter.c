/* The calling thread's submitter (submitter.h). */
#include <sched.h>

#include "submitter.h"

static _Thread_local struct backend_submitter current = {
  .context = 0, .cpu = -1, .name = NULL,
};

void
backend_set_submitter (const struct backend_submitter *s)
{
  current = s ? *s : (struct backend_submitter) { 0, -1, NULL };
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
