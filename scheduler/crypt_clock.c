/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the cipher costs inside the server, as CPU time, taken on a
 * sample of the chunks.  Timing every chunk would cost two system calls
 * each (CLOCK_THREAD_CPUTIME_ID is not in the vDSO: about 170 ns on a
 * virtual machine), 90 ms per GiB of 4 KiB writes; one chunk in
 * CRYPT_SAMPLE_EVERY costs a sixteenth of that, and over a GiB still
 * times hundreds of chunks.  Thread CPU time, not wall time: a thread
 * preempted in the middle of a chunk would otherwise count another's
 * work as the cipher's. */
#include <time.h>

#include "internal.h"

static uint64_t
thread_cpu_ns (void)
{
  struct timespec t;

  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t) == -1)
    return 0;
  return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/* NTH counts the chunks this kind of thread crypted before this one.
 * Returns 0 for a chunk left untimed. */
uint64_t
crypt_clock_start (uint64_t nth, unsigned n)
{
  /* N chunks crypted in one call, the NTH to the NTH + N - 1, are timed
   * together when one of them is due. */
  uint64_t into = nth % CRYPT_SAMPLE_EVERY;

  if (n == 0 || (into != 0 && into + n <= CRYPT_SAMPLE_EVERY))
    return 0;
  return thread_cpu_ns ();
}

void
crypt_clock_stop (struct engine *e, bool write, uint64_t bytes,
                  uint64_t start)
{
  uint64_t now = thread_cpu_ns ();

  if (now < start)
    return;
  atomic_fetch_add_explicit (&e->st.crypt_sample_ns[write], now - start,
                             memory_order_relaxed);
  atomic_fetch_add_explicit (&e->st.crypt_sample_bytes[write], bytes,
                             memory_order_relaxed);
}
