/* SPDX-License-Identifier: GPL-2.0-or-later */
/* OpenSSL's allocations in one arena kept out of core dumps.
 *
 * OpenSSL copies every key it is given into its own contexts, and the
 * first round key of an AES key schedule is the raw key: each keyed
 * EVP_CIPHER_CTX holds the volume key (both XTS halves), and
 * libcryptsetup's PBKDF2 state holds what the passphrase derives.
 * secmem cannot reach those.  So, when this object is loaded and before
 * OpenSSL has allocated anything, OpenSSL's allocator is pointed at its
 * own secure heap (CRYPTO_secure_malloc_init): one mapping, MADV_DONTDUMP,
 * locked on fault when RLIMIT_MEMLOCK allows, cleansed on free.  Should
 * the arena fill up, allocations fall back to malloc (and are counted).
 *
 * The functions handed to OpenSSL must outlive it: the object that holds
 * them is pinned in memory (RTLD_NODELETE) so an unloaded plugin cannot
 * leave OpenSSL calling into an unmapped page. */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "../common/log.h"
#include "ossl_heap.h"

/* About 0.5 MiB after start-up and 2.5 KiB per thread that crypts; small
 * enough to be locked within the usual 8 MiB RLIMIT_MEMLOCK with room
 * left for secmem. */
#define ARENA_BYTES (UINT64_C (4) << 20)   /* a power of two */
#define ARENA_MIN_BLOCK_BYTES 32           /* a power of two */

static bool arena_active;
static uintptr_t arena_start, arena_end;   /* for re-locking, or 0 */
static size_t fallback_allocations;

static void *
heap_malloc (size_t bytes, const char *file, int line)
{
  void *ptr;

  if (bytes == 0)               /* as CRYPTO_malloc itself answers */
    return NULL;
  if (CRYPTO_secure_malloc_initialized ()) {
    ptr = CRYPTO_secure_malloc (bytes, file, line);
    if (ptr != NULL)
      return ptr;
    __atomic_add_fetch (&fallback_allocations, 1, __ATOMIC_RELAXED);
  }
  return malloc (bytes);
}

static void
heap_free (void *ptr, const char *file, int line)
{
  if (ptr != NULL && CRYPTO_secure_allocated (ptr))
    CRYPTO_secure_free (ptr, file, line);           /* cleanses */
  else
    free (ptr);
}

static void *
heap_realloc (void *ptr, size_t bytes, const char *file, int line)
{
  size_t old_bytes;
  void *moved;

  if (ptr == NULL)
    return heap_malloc (bytes, file, line);
  if (bytes == 0) {
    heap_free (ptr, file, line);
    return NULL;
  }
  if (!CRYPTO_secure_allocated (ptr))
    return realloc (ptr, bytes);
  old_bytes = CRYPTO_secure_actual_size (ptr);
  if (bytes <= old_bytes)
    return ptr;
  moved = heap_malloc (bytes, file, line);
  if (moved == NULL)
    return NULL;
  memcpy (moved, ptr, old_bytes);
  CRYPTO_secure_free (ptr, file, line);
  return moved;
}

/* The arena's bounds: the mapping of /proc/self/maps that holds a block
 * of it (the guard pages on either side are mappings of their own). */
static void
find_arena (void)
{
  void *probe = CRYPTO_secure_malloc (1, __FILE__, __LINE__);
  FILE *fp = fopen ("/proc/self/maps", "re");
  uintptr_t lo, hi, at = (uintptr_t) probe;
  char line[512];

  while (probe && fp && fgets (line, sizeof line, fp) != NULL)
    if (sscanf (line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2
        && at >= lo && at < hi) {
      arena_start = lo;
      arena_end = hi;
      break;
    }
  if (fp)
    fclose (fp);
  CRYPTO_secure_free (probe, __FILE__, __LINE__);
}

/* Locks are not inherited across fork (nbdkit forks to daemonize). */
static void
relock_in_child (void)
{
#if defined SYS_mlock2 && defined MLOCK_ONFAULT
  if (arena_end > arena_start)
    (void) syscall (SYS_mlock2, arena_start, arena_end - arena_start,
                    MLOCK_ONFAULT);
#endif
}

static void
pin_this_object (void)
{
  Dl_info info;

  if (dladdr ((void *) pin_this_object, &info) != 0 && info.dli_fname)
    (void) dlopen (info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

__attribute__ ((constructor)) static void
ossl_heap_init (void)
{
  if (CRYPTO_set_mem_functions (heap_malloc, heap_realloc, heap_free) != 1)
    return;                     /* OpenSSL was in use already */
  pin_this_object ();
  if (CRYPTO_secure_malloc_init (ARENA_BYTES, ARENA_MIN_BLOCK_BYTES) == 0)
    return;                     /* no arena: plain malloc, as before */
  arena_active = true;
  find_arena ();
  (void) pthread_atfork (NULL, NULL, relock_in_child);
}

void
ossl_heap_report (void)
{
  if (!arena_active) {
    nbdkit_debug ("crypto: OpenSSL allocates from the ordinary heap: "
                  "its key schedules may appear in a core dump");
    return;
  }
  nbdkit_debug ("crypto: OpenSSL allocates from a %" PRIu64 " MiB arena "
                "kept out of core dumps: %zu bytes in use, %zu "
                "allocations outside it", ARENA_BYTES >> 20,
                CRYPTO_secure_used (),
                __atomic_load_n (&fallback_allocations, __ATOMIC_RELAXED));
}
