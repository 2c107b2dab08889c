/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Ciphertext buffers for writes, and the backpressure on them: at most
 * CAP bytes of encrypted data are in flight at once (dm-crypt bounds its
 * pages per client the same way), so memory stays bounded under any load.
 * Freed buffers are kept for reuse: no allocation on the hot path, and a
 * taker gets the last buffer its CPU used, whose lines are still in that
 * CPU's cache (the cipher writes all of it).  Buffers are carved from
 * slabs of one transparent huge page where the kernel offers them: the
 * first touch of a 128 KiB buffer is then no longer 32 page faults. */
#ifndef DMCRYPT_BUFPOOL_H
#define DMCRYPT_BUFPOOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* A buffer kept for reuse, and the CPU that last had it in its cache. */
struct kept_buf
{
  void *buf;
  int cpu;
};

struct bufpool
{
  pthread_mutex_t lock;
  pthread_cond_t freed;
  size_t buf_size;              /* bytes per buffer */
  unsigned max_bufs;            /* the cap, in buffers (>= 1) */
  unsigned out;                 /* buffers handed out now */
  unsigned out_max;             /* high-water mark of OUT */
  struct kept_buf *free;        /* kept buffers, max_bufs slots */
  unsigned nfree;
  size_t buf_bytes;             /* buf_size rounded up to whole pages */
  size_t slab_bytes;            /* bytes per slab */
  unsigned per_slab;            /* buffers per slab */
  void **slabs;                 /* max_slabs slots */
  unsigned nslabs, max_slabs;
  unsigned carved;              /* buffers handed out of the newest slab */
  uint64_t waits;               /* times a caller blocked on the cap */
};

/* CAP_BYTES is rounded down to whole buffers, at least one. */
int bufpool_init (struct bufpool *p, size_t buf_size, uint64_t cap_bytes);
void bufpool_destroy (struct bufpool *p);

/* Takes N (<= max_bufs) buffers at once, blocking while the cap would
 * be passed: all or none, so that threads gathering several never hold
 * some while waiting for more (which could deadlock at the cap).
 * Returns 0, or -1 with errno set and no buffer taken (out of memory). */
int bufpool_get_many (struct bufpool *p, void **bufs, unsigned n);
void bufpool_put (struct bufpool *p, void *buf);

#endif /* DMCRYPT_BUFPOOL_H */
