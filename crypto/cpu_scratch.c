/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-CPU scratch areas: claimed with one atomic exchange, allocated on
 * a CPU's first claim and kept until the plugin is unloaded.  A thread
 * that moves to another CPU while it holds an area keeps using it, and
 * a second thread on the first CPU finds it taken and falls back: an
 * area is only ever a hint about caches, never a per-CPU assumption. */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_scratch.h"

#define MAX_SCRATCH_CPUS 256

struct slot
{
  atomic_bool busy;
  void *_Atomic mem;
} __attribute__ ((aligned (64)));       /* a cache line each */

static struct slot slots[MAX_SCRATCH_CPUS];

void *
cpu_scratch_claim (int *slot)
{
  int cpu = sched_getcpu ();
  void *mem;

  *slot = -1;
  if (cpu < 0 || cpu >= MAX_SCRATCH_CPUS ||
      atomic_exchange_explicit (&slots[cpu].busy, true,
                                memory_order_acquire))
    return NULL;
  mem = atomic_load_explicit (&slots[cpu].mem, memory_order_relaxed);
  if (mem == NULL) {
    mem = aligned_alloc (64, CPU_SCRATCH_BYTES);
    if (mem == NULL) {
      atomic_store_explicit (&slots[cpu].busy, false, memory_order_release);
      return NULL;
    }
    atomic_store_explicit (&slots[cpu].mem, mem, memory_order_relaxed);
  }
  *slot = cpu;
  return mem;
}

void
cpu_scratch_release (int slot)
{
  if (slot >= 0)
    atomic_store_explicit (&slots[slot].busy, false, memory_order_release);
}

/* The areas hold tweaks and whitened plaintext: wiped when the plugin
 * goes.  An area in use then (a thread still in a call) is left alone,
 * and every slot stays claimed, so that no call can start on one. */
__attribute__ ((destructor)) static void
free_scratch (void)
{
  unsigned i;
  void *mem;

  for (i = 0; i < MAX_SCRATCH_CPUS; i++) {
    if (atomic_exchange_explicit (&slots[i].busy, true,
                                  memory_order_acquire))
      continue;
    mem = atomic_exchange_explicit (&slots[i].mem, NULL,
                                    memory_order_relaxed);
    if (mem) {
      explicit_bzero (mem, CPU_SCRATCH_BYTES);
      free (mem);
    }
  }
}
