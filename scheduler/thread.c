/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The set-up every thread of the engine does first (internal.h): the
 * kernel's names for them (kcryptd, kcryptd_io, dmcrypt_write), the
 * submitter the block layer below sees, and high_priority's nice. */
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/log.h"
#include "../table/crypt_table.h"
#include "internal.h"

/* nice value of high_priority threads: the kernel uses WQ_HIGHPRI. */
#define HIGH_PRIORITY_NICE (-10)

void
thread_setup (struct engine *e, const char *name, unsigned context, int cpu)
{
  struct backend_submitter self = {
    .context = context, .cpu = cpu, .name = name,
  };

  pthread_setname_np (pthread_self (), name);
  backend_set_submitter (&self);
  if (!(e->cfg.flags & CT_HIGH_PRIORITY))
    return;
  if (setpriority (PRIO_PROCESS, gettid (), HIGH_PRIORITY_NICE) == -1) {
    if (debug_on (e, ENGINE_DEBUG_WORKERS))
      nbdkit_debug ("%s: high priority not allowed: %m", name);
  }
  else if (debug_on (e, ENGINE_DEBUG_WORKERS))
    nbdkit_debug ("%s: nice %d", name, HIGH_PRIORITY_NICE);
}
