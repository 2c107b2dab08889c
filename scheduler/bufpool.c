/* A bounded pool of equal-sized, page-aligned buffers. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bufpool.h"

#define BUF_ALIGN 4096          /* bytes: page alignment, O_DIRECT-ready */

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

int
bufpool_init (struct bufpool *p, size_t buf_size, uint64_t cap_bytes)
{
  uint64_t n = cap_bytes / buf_size;

  p->buf_size = buf_size;
  p->max_bufs = n < 1 ? 1 : n > 1u << 20 ? 1u << 20 : n;
  p->out = p->out_max = p->nfree = 0;
  p->waits = 0;
  p->free = calloc (p->max_bufs, sizeof *p->free);
  if (p->free == NULL)
    return -1;
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->freed, NULL);
  return 0;
}

void
bufpool_destroy (struct bufpool *p)
{
  while (p->nfree > 0)
    free (p->free[--p->nfree].buf);
  free (p->free);
  p->free = NULL;
  pthread_cond_destroy (&p->freed);
  pthread_mutex_destroy (&p->lock);
}

int
bufpool_get_many (struct bufpool *p, void **bufs, unsigned n)
{
  size_t size = (p->buf_size + BUF_ALIGN - 1) & ~(size_t) (BUF_ALIGN - 1);
  unsigned i;
  int cpu = sched_getcpu ();

  pthread_mutex_lock (&p->lock);
  if (p->out + n > p->max_bufs) {
    p->waits++;
    do
      pthread_cond_wait (&p->freed, &p->lock);
    while (p->out + n > p->max_bufs);
  }
  p->out += n;
  if (p->out > p->out_max)
    p->out_max = p->out;
  for (i = 0; i < n; i++)
    bufs[i] = p->nfree > 0 ? take_kept (p, cpu) : NULL;
  pthread_mutex_unlock (&p->lock);
  for (i = 0; i < n; i++)
    if (bufs[i] == NULL && (bufs[i] = aligned_alloc (BUF_ALIGN, size)) == NULL)
      goto nomem;
  return 0;

 nomem:
  {
    int err = errno;
    unsigned j;

    for (j = 0; j < n; j++)
      bufpool_put (p, j < i ? bufs[j] : NULL);
    errno = err;
    return -1;
  }
}

/* BUF NULL returns only the slot (an allocation that failed). */
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
