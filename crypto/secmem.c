/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Key memory: whole pages of their own, so that locking them and keeping
 * them out of core dumps touches nothing else.
 *
 * Memory locks are not inherited by a child of fork(), and nbdkit forks
 * after .config_complete (to daemonize, or around --run) with the key
 * already unlocked: every live allocation is noted, and the child locks
 * them again (MADV_DONTDUMP, a mapping flag, is inherited). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "secmem.h"

struct region
{
  void *ptr;
  size_t mapped_bytes;
  struct region *next;
};

static pthread_mutex_t regions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *regions;          /* every live allocation */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
lock_regions (void)
{
  pthread_mutex_lock (&regions_lock);
}

static void
unlock_regions (void)
{
  pthread_mutex_unlock (&regions_lock);
}

/* In the child of fork: only this thread exists, and it holds the lock
 * (taken by lock_regions before the fork). */
static void
relock_in_child (void)
{
  struct region *r;

  for (r = regions; r != NULL; r = r->next)
    (void) mlock (r->ptr, r->mapped_bytes);
  unlock_regions ();
}

static void
register_atfork (void)
{
  (void) pthread_atfork (lock_regions, unlock_regions, relock_in_child);
}

/* SIZE bytes rounded up to whole pages; 0 on overflow.  An empty request
 * still gets one page so that the pointer is valid and unique. */
static size_t
page_rounded (size_t size)
{
  size_t page_bytes = (size_t) sysconf (_SC_PAGESIZE);

  if (size == 0)
    return page_bytes;
  if (size > SIZE_MAX - page_bytes)
    return 0;
  return (size + page_bytes - 1) / page_bytes * page_bytes;
}

void *
secmem_alloc (size_t size)
{
  size_t mapped_bytes = page_rounded (size);
  int saved_errno = errno;
  struct region *r;
  void *ptr;

  if (mapped_bytes == 0) {
    errno = ENOMEM;
    return NULL;
  }
  pthread_once (&atfork_once, register_atfork);
  r = malloc (sizeof *r);
  if (r == NULL)
    return NULL;
  ptr = mmap (NULL, mapped_bytes, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ptr == MAP_FAILED) {
    free (r);
    return NULL;
  }

  /* Both are best effort: an unprivileged user over RLIMIT_MEMLOCK (or a
   * kernel without MADV_DONTDUMP) still gets working memory. */
  (void) mlock (ptr, mapped_bytes);
#ifdef MADV_DONTDUMP
  (void) madvise (ptr, mapped_bytes, MADV_DONTDUMP);
#endif
  r->ptr = ptr;
  r->mapped_bytes = mapped_bytes;
  lock_regions ();
  r->next = regions;
  regions = r;
  unlock_regions ();
  errno = saved_errno;
  return ptr;                   /* anonymous mappings start zeroed */
}

/* Forgets PTR's region. */
static void
unregister (void *ptr)
{
  struct region **link, *r = NULL;

  lock_regions ();
  for (link = &regions; *link != NULL; link = &(*link)->next)
    if ((*link)->ptr == ptr) {
      r = *link;
      *link = r->next;
      break;
    }
  unlock_regions ();
  free (r);
}

void
secmem_free (void *ptr, size_t size)
{
  size_t mapped_bytes = page_rounded (size);
  int saved_errno = errno;

  if (ptr == NULL)
    return;
  unregister (ptr);
  /* Wipe every mapped byte: callers may have used the slack too. */
  explicit_bzero (ptr, mapped_bytes);
  (void) munlock (ptr, mapped_bytes);
  (void) munmap (ptr, mapped_bytes);
  errno = saved_errno;
}

void *
secmem_dup (const void *src, size_t size)
{
  void *ptr = secmem_alloc (size);

  if (ptr != NULL && size > 0)
    memcpy (ptr, src, size);
  return ptr;
}
