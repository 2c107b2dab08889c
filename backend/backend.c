/* Dispatch to a backend's operations.  This is the single place where IO
 * leaves the engine, so the trace point will live here too. */
#include <errno.h>

#include "backend.h"

int
backend_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  return b->ops->pread (b, buf, count, offset);
}

int
backend_pwrite (struct backend *b, const void *buf, size_t count,
                uint64_t offset)
{
  if (b->readonly) {
    errno = EROFS;
    return -1;
  }
  return b->ops->pwrite (b, buf, count, offset);
}

int
backend_sync (struct backend *b)
{
  if (b->readonly)
    return 0;
  return b->ops->sync (b);
}

int
backend_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  if (b->readonly) {
    errno = EROFS;
    return -1;
  }
  if (!b->can_discard || b->ops->discard == NULL) {
    errno = EOPNOTSUPP;
    return -1;
  }
  return b->ops->discard (b, count, offset);
}

void
backend_close (struct backend *b)
{
  if (b)
    b->ops->close (b);
}
