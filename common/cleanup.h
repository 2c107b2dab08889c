/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Scoped cleanups and small helpers shared by every folder.  nbdkit's own
 * cleanup.h is not installed by nbdkit-plugin-dev, so this is our own. */
#ifndef DMCRYPT_CLEANUP_H
#define DMCRYPT_CLEANUP_H

#include <pthread.h>
#include <stdlib.h>

static inline void
cleanup_free_ptr (void *ptr)
{
  free (*(void **) ptr);
}
#define CLEANUP_FREE __attribute__ ((cleanup (cleanup_free_ptr)))

static inline void
cleanup_unlock_mutex (pthread_mutex_t **m)
{
  pthread_mutex_unlock (*m);
}
#define ACQUIRE_LOCK_FOR_CURRENT_SCOPE(mutex)                          \
  pthread_mutex_t *_lock_##__LINE__                                    \
    __attribute__ ((cleanup (cleanup_unlock_mutex))) = (mutex);        \
  pthread_mutex_lock (_lock_##__LINE__)

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

#endif /* DMCRYPT_CLEANUP_H */
