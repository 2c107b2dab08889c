/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Scratch memory kept per CPU, for the cipher's passes between library
 * calls.  nbdkit runs 16 threads per connection by default, and a
 * thread's stack has gone cold in the caches by the time the same
 * thread serves another request; a CPU's own area was used a moment
 * ago.  Internal to crypto/. */
#ifndef DMCRYPT_CPU_SCRATCH_H
#define DMCRYPT_CPU_SCRATCH_H

#include <stddef.h>

#define CPU_SCRATCH_BYTES 49152

/* The area of the CPU this thread runs on, CPU_SCRATCH_BYTES long,
 * 64-byte aligned, or NULL where it is in use (a thread preempted in
 * the middle of a call), out of memory, or the CPU out of range: the
 * caller then uses its own stack.  *SLOT is what cpu_scratch_release
 * takes, in either case (-1 with NULL, which it ignores). */
void *cpu_scratch_claim (int *slot);
void cpu_scratch_release (int slot);

#endif /* DMCRYPT_CPU_SCRATCH_H */
