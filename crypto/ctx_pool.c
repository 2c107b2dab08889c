/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-thread copies of keyed contexts.
 *
 * Every copy sits on two lists: its pool's and its thread's.  Both lists
 * change only under registry_lock, which is taken on a thread's first
 * use of a pool, when a pool is freed and when a thread exits — never on
 * the hot path.  The hot path reads a small thread-local cache keyed by
 * pool id; ids are never reused, so a cache entry left behind by a freed
 * pool can never match again and is never dereferenced. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../common/cleanup.h"
#include "../common/log.h"
#include "ctx_pool.h"

struct thread_slot;

struct ctx_copy
{
  EVP_CIPHER_CTX *ctx[CTX_POOL_SLOTS];
  EVP_MAC_CTX *mac;
  struct ctx_pool *pool;
  struct thread_slot *thread;
  struct ctx_copy *pool_prev, *pool_next;
  struct ctx_copy *thread_prev, *thread_next;
};

struct thread_slot
{
  struct ctx_copy *copies;
};

struct ctx_pool
{
  uint64_t id;                  /* unique for the life of the process */
  EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS];
  EVP_MAC_CTX *mac_template;
  struct ctx_copy *copies;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_pool_id = 1;            /* 0 marks an empty entry */
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key;
static bool slot_key_ok;

#define TLS_CACHE_ENTRIES 4
static __thread struct
{
  uint64_t pool_id;
  struct ctx_copy *copy;
} tls_cache[TLS_CACHE_ENTRIES];
static __thread unsigned tls_cache_next;

static void
free_copy (struct ctx_copy *copy)
{
  size_t i;

  for (i = 0; i < CTX_POOL_SLOTS; i++)
    EVP_CIPHER_CTX_free (copy->ctx[i]);        /* cleanses the schedule */
  EVP_MAC_CTX_free (copy->mac);                /* and the MAC's key */
  free (copy);
}

static void
unlink_from_pool (struct ctx_copy *copy)
{
  if (copy->pool_prev != NULL)
    copy->pool_prev->pool_next = copy->pool_next;
  else
    copy->pool->copies = copy->pool_next;
  if (copy->pool_next != NULL)
    copy->pool_next->pool_prev = copy->pool_prev;
}

static void
unlink_from_thread (struct ctx_copy *copy)
{
  if (copy->thread_prev != NULL)
    copy->thread_prev->thread_next = copy->thread_next;
  else
    copy->thread->copies = copy->thread_next;
  if (copy->thread_next != NULL)
    copy->thread_next->thread_prev = copy->thread_prev;
}

/* pthread key destructor: the thread is exiting, drop its copies. */
static void
thread_exit (void *arg)
{
  struct thread_slot *slot = arg;
  struct ctx_copy *copy, *next;
  size_t i;

  {
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&registry_lock);
    for (copy = slot->copies; copy != NULL; copy = next) {
      next = copy->thread_next;
      unlink_from_pool (copy);
      free_copy (copy);
    }
  }
  free (slot);
  for (i = 0; i < TLS_CACHE_ENTRIES; i++)
    tls_cache[i].pool_id = 0;
}

static void
make_slot_key (void)
{
  slot_key_ok = pthread_key_create (&slot_key, thread_exit) == 0;
}

/* When the plugin is unloaded, threads that outlive it must not call
 * a destructor that is no longer mapped. */
__attribute__ ((destructor)) static void
ctx_pool_unload (void)
{
  if (slot_key_ok)
    pthread_key_delete (slot_key);
}

struct ctx_pool *
ctx_pool_new (EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS])
{
  return ctx_pool_new_mac (templates, NULL);
}

struct ctx_pool *
ctx_pool_new_mac (EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS],
                  EVP_MAC_CTX *mac_template)
{
  struct ctx_pool *pool = calloc (1, sizeof *pool);
  size_t i;

  if (pool == NULL) {
    nbdkit_error ("calloc: %m");
    for (i = 0; i < CTX_POOL_SLOTS; i++)
      EVP_CIPHER_CTX_free (templates[i]);
    EVP_MAC_CTX_free (mac_template);
    return NULL;
  }
  for (i = 0; i < CTX_POOL_SLOTS; i++)
    pool->templates[i] = templates[i];
  pool->mac_template = mac_template;

  ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&registry_lock);
  pool->id = next_pool_id++;
  return pool;
}

void
ctx_pool_free (struct ctx_pool *pool)
{
  struct ctx_copy *copy, *next;
  size_t i;

  if (pool == NULL)
    return;
  {
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&registry_lock);
    for (copy = pool->copies; copy != NULL; copy = next) {
      next = copy->pool_next;
      unlink_from_thread (copy);
      free_copy (copy);
    }
  }
  for (i = 0; i < CTX_POOL_SLOTS; i++)
    EVP_CIPHER_CTX_free (pool->templates[i]);
  EVP_MAC_CTX_free (pool->mac_template);
  free (pool);
}

/* Copies POOL's templates.  Called with registry_lock held. */
static struct ctx_copy *
new_copy (struct ctx_pool *pool)
{
  struct ctx_copy *copy = calloc (1, sizeof *copy);
  size_t i;

  if (copy == NULL)
    return NULL;
  for (i = 0; i < CTX_POOL_SLOTS; i++) {
    if (pool->templates[i] == NULL)
      continue;
    copy->ctx[i] = EVP_CIPHER_CTX_new ();
    if (copy->ctx[i] == NULL ||
        EVP_CIPHER_CTX_copy (copy->ctx[i], pool->templates[i]) != 1) {
      free_copy (copy);
      return NULL;
    }
  }
  if (pool->mac_template != NULL &&
      (copy->mac = EVP_MAC_CTX_dup (pool->mac_template)) == NULL) {
    free_copy (copy);
    return NULL;
  }
  return copy;
}

/* This thread's copy for POOL, made if missing.  Called with
 * registry_lock held. */
static struct ctx_copy *
find_or_make_copy (struct ctx_pool *pool)
{
  struct thread_slot *slot = pthread_getspecific (slot_key);
  struct ctx_copy *copy;

  if (slot == NULL) {
    slot = calloc (1, sizeof *slot);
    if (slot == NULL) {
      errno = ENOMEM;
      return NULL;
    }
    if ((errno = pthread_setspecific (slot_key, slot)) != 0) {
      free (slot);
      return NULL;
    }
  }
  for (copy = slot->copies; copy != NULL; copy = copy->thread_next)
    if (copy->pool == pool)
      return copy;

  copy = new_copy (pool);
  if (copy == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  copy->pool = pool;
  copy->thread = slot;
  copy->pool_next = pool->copies;
  if (pool->copies != NULL)
    pool->copies->pool_prev = copy;
  pool->copies = copy;
  copy->thread_next = slot->copies;
  if (slot->copies != NULL)
    slot->copies->thread_prev = copy;
  slot->copies = copy;
  return copy;
}

static struct ctx_copy *
get_slow (struct ctx_pool *pool)
{
  struct ctx_copy *copy;
  unsigned entry;

  pthread_once (&slot_key_once, make_slot_key);
  if (!slot_key_ok) {
    errno = EAGAIN;
    return NULL;
  }
  {
    ACQUIRE_LOCK_FOR_CURRENT_SCOPE (&registry_lock);
    copy = find_or_make_copy (pool);
  }
  if (copy == NULL)
    return NULL;
  entry = tls_cache_next++ % TLS_CACHE_ENTRIES;
  tls_cache[entry].pool_id = pool->id;
  tls_cache[entry].copy = copy;
  return copy;
}

static struct ctx_copy *
get_copy (struct ctx_pool *pool)
{
  unsigned i;

  for (i = 0; i < TLS_CACHE_ENTRIES; i++)
    if (tls_cache[i].pool_id == pool->id)
      return tls_cache[i].copy;
  return get_slow (pool);
}

EVP_CIPHER_CTX *const *
ctx_pool_get (struct ctx_pool *pool)
{
  struct ctx_copy *copy = get_copy (pool);

  return copy != NULL ? copy->ctx : NULL;
}

EVP_MAC_CTX *
ctx_pool_get_mac (struct ctx_pool *pool)
{
  struct ctx_copy *copy = get_copy (pool);

  if (copy != NULL && copy->mac == NULL)
    errno = EINVAL;
  return copy != NULL ? copy->mac : NULL;
}
