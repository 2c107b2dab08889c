/* Key memory: whole pages of their own, so that locking them and keeping
 * them out of core dumps touches nothing else. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "secmem.h"

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
  void *ptr;

  if (mapped_bytes == 0) {
    errno = ENOMEM;
    return NULL;
  }
  ptr = mmap (NULL, mapped_bytes, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ptr == MAP_FAILED)
    return NULL;

  /* Both are best effort: an unprivileged user over RLIMIT_MEMLOCK (or a
   * kernel without MADV_DONTDUMP) still gets working memory. */
  (void) mlock (ptr, mapped_bytes);
#ifdef MADV_DONTDUMP
  (void) madvise (ptr, mapped_bytes, MADV_DONTDUMP);
#endif
  errno = saved_errno;
  return ptr;                   /* anonymous mappings start zeroed */
}

void
secmem_free (void *ptr, size_t size)
{
  size_t mapped_bytes = page_rounded (size);
  int saved_errno = errno;

  if (ptr == NULL)
    return;
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
