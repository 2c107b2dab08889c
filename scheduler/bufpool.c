/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bounded pool of equal-sized, page-aligned buffers. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bufpool.h"

#define BUF_ALIGN 4096          /* bytes: page alignment, O_DIRECT-ready */
#define SLAB_BYTES (2u << 20)   /* one x86-64 transparent huge page */

/* How far down the kept buffers a taker looks for one of its own CPU's. */
#define CPU_SCAN 16

/* The most recently kept buffer last used on CPU, else the most recently
 * kept: a buffer whose lines are still in this CPU's cache costs no
 * misses when the cipher writes it. */
static void *
take_kept (struct bufpool *p, int cpu)
{
  unsigned i = p->nfree, low = p->nfree > CPU_SCAN ? p->nfree - CPU_SCAN : 0;
  void *buf;

  while (i > low && p->free[i - 1].cpu != cpu)
    i--;
  if (i == low)
    i = p->nfree;
  buf = p->free[i - 1].buf;
  memmove (&p->free[i - 1], &p->free[i],
           (p->nfree - i) * sizeof *p->free);
  p->nfree--;
  return buf;
}

/* A never used buffer from the newest slab, or from a new slab once
 * that one is all handed out; NULL when out of memory.  Fewer buffers
 * than the cap are ever carved: a buffer is carved only when none is
 * kept, so at most as many exist as were ever out at once. */
static void *
carve (struct bufpool *p)
{
  void *slab;

  if (p->nslabs == 0 || p->carved == p->per_slab) {
    if (p->nslabs == p->max_slabs)
      return NULL;
    slab = aligned_alloc (p->slab_bytes >= SLAB_BYTES ? SLAB_BYTES
                          : BUF_ALIGN, p->slab_bytes);
    if (slab == NULL)
      return NULL;
    /* Only a hint: where huge pages are off, the slab is 4 KiB pages. */
    if (p->slab_bytes >= SLAB_BYTES)
      (void) madvise (slab, p->slab_bytes, MADV_HUGEPAGE);
    p->slabs[p->nslabs++] = slab;
    p->carved = 0;
  }
  return (uint8_t *) p->slabs[p->nslabs - 1] + p->carved++ * p->buf_bytes;
}

int
bufpool_init (struct bufpool *p, size_t buf_size, uint64_t cap_bytes)
{
  uint64_t n = cap_bytes / buf_size;

  p->buf_size = buf_size;
  p->max_bufs = n < 1 ? 1 : n > 1u << 20 ? 1u << 20 : n;
  p->out = p->out_max = p->nfree = 0;
  p->waits = 0;
  p->buf_bytes = (buf_size + BUF_ALIGN - 1) & ~(size_t) (BUF_ALIGN - 1);
  p->per_slab = p->buf_bytes >= SLAB_BYTES ? 1 : SLAB_BYTES / p->buf_bytes;
  if (p->per_slab > p->max_bufs)
    p->per_slab = p->max_bufs;
  /* Whole huge pages, so that the slab's end is not 4 KiB pages. */
  p->slab_bytes = p->per_slab * p->buf_bytes;
  if (p->slab_bytes > SLAB_BYTES)
    p->slab_bytes = (p->slab_bytes + SLAB_BYTES - 1)
      & ~(size_t) (SLAB_BYTES - 1);
  p->max_slabs = (p->max_bufs + p->per_slab - 1) / p->per_slab;
  p->nslabs = p->carved = 0;
  p->free = calloc (p->max_bufs, sizeof *p->free);
  p->slabs = calloc (p->max_slabs, sizeof *p->slabs);
  if (p->free == NULL || p->slabs == NULL) {
    free (p->free);
    free (p->slabs);
    return -1;
  }
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->freed, NULL);
  return 0;
}

void
bufpool_destroy (struct bufpool *p)
{
  while (p->nslabs > 0)
    free (p->slabs[--p->nslabs]);
  free (p->slabs);
  free (p->free);
  p->free = NULL;
  p->slabs = NULL;
  pthread_cond_destroy (&p->freed);
  pthread_mutex_destroy (&p->lock);
}

int
bufpool_get_many (struct bufpool *p, void **bufs, unsigned n)
{
  unsigned i;
  int cpu = sched_getcpu ();

  pthread_mutex_lock (&p->lock);
  if (p->out + n > p->max_bufs) {
    p->waits++;
    do
      pthread_cond_wait (&p->freed, &p->lock);
    while (p->out + n > p->max_bufs);
  }
  for (i = 0; i < n; i++) {
    bufs[i] = p->nfree > 0 ? take_kept (p, cpu) : carve (p);
    if (bufs[i] == NULL)
      break;
  }
  if (i < n) {                  /* out of memory: give back what was taken */
    while (i > 0)
      p->free[p->nfree++] = (struct kept_buf) { bufs[--i], cpu };
    pthread_mutex_unlock (&p->lock);
    errno = ENOMEM;
    return -1;
  }
  p->out += n;
  if (p->out > p->out_max)
    p->out_max = p->out;
  pthread_mutex_unlock (&p->lock);
  return 0;
}

/* BUF NULL returns only the slot (a chunk that never had a buffer). */
void
bufpool_put (struct bufpool *p, void *buf)
{
  int cpu = sched_getcpu ();

  pthread_mutex_lock (&p->lock);
  p->out--;
  if (buf)
    p->free[p->nfree++] = (struct kept_buf) { buf, cpu };
  /* Waiters may want different counts: let each re-check. */
  pthread_cond_broadcast (&p->freed);
  pthread_mutex_unlock (&p->lock);
}
