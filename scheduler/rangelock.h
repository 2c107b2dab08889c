/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Exclusive locks on byte ranges: a write that touches a partial
 * encryption sector reads, modifies and writes the whole sector, so every
 * write holds its sector-aligned range until its ciphertext is down. */
#ifndef DMCRYPT_RANGELOCK_H
#define DMCRYPT_RANGELOCK_H

#include <pthread.h>
#include <stdint.h>

struct range_held
{
  uint64_t start, end;           /* bytes, [start, end) */
  struct range_held *next;
};

struct rangelock
{
  pthread_mutex_t lock;
  pthread_cond_t released;
  struct range_held *held;
};

void rangelock_init (struct rangelock *rl);
void rangelock_destroy (struct rangelock *rl);
/* Blocks until no held range overlaps [start, end), then holds it.
 * NODE is caller storage (usually on the stack) until the unlock. */
void rangelock_lock (struct rangelock *rl, struct range_held *node,
                     uint64_t start, uint64_t end);
void rangelock_unlock (struct rangelock *rl, struct range_held *node);

#endif /* DMCRYPT_RANGELOCK_H */
