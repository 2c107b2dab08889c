/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the engine unit tests: an in-memory backend that can hold
 * writes back, fail a chosen sector and log dispatch order, a keyed
 * cipher, and an engine built over both. */
#ifndef DMCRYPT_ENGINE_HARNESS_H
#define DMCRYPT_ENGINE_HARNESS_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../backend/backend.h"
#include "../../crypto/cipher.h"
#include "../../scheduler/engine.h"
#include "../../table/crypt_table.h"

#include "check.h"

struct mem
{
  uint8_t *data;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool hold;                  /* pwrite waits while set */
  unsigned held;              /* pwrites waiting */
  int64_t fail_sector;        /* IO touching this 512-byte sector: EIO */
  uint64_t log[1 << 16];      /* byte offsets of dispatched writes */
  unsigned nlog;
  unsigned syncs, discards;
  /* Asynchronous writes (mem_open_async): submitted ones wait here and
   * a thread completes them in a scrambled order, as a device with a
   * deep queue may. */
  struct pending_write
  {
    const void *buf;
    size_t count;
    uint64_t offset;
    backend_done_fn done;
    void *opaque;
  } pending[64];
  unsigned npending;
  bool stopping;
  pthread_t completer;
  uint64_t seed;
  unsigned async_max;         /* most writes in flight at once */
};

static inline int
mem_fails (struct mem *m, size_t count, uint64_t offset)
{
  return m->fail_sector >= 0
    && (uint64_t) m->fail_sector >= offset / 512
    && (uint64_t) m->fail_sector < (offset + count + 511) / 512;
}

static inline int
mem_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  struct mem *m = b->priv;
  int r = 0;

  pthread_mutex_lock (&m->lock);
  if (mem_fails (m, count, offset))
    r = -1;
  else
    memcpy (buf, m->data + offset, count);
  pthread_mutex_unlock (&m->lock);
  if (r)
    errno = EIO;
  return r;
}

static inline int
mem_pwrite (struct backend *b, const void *buf, size_t count,
            uint64_t offset)
{
  struct mem *m = b->priv;
  int r = 0;

  pthread_mutex_lock (&m->lock);
  m->held++;
  pthread_cond_broadcast (&m->cond);
  while (m->hold)
    pthread_cond_wait (&m->cond, &m->lock);
  m->held--;
  if (mem_fails (m, count, offset))
    r = -1;
  else {
    memcpy (m->data + offset, buf, count);
    if (m->nlog < sizeof m->log / sizeof m->log[0])
      m->log[m->nlog++] = offset;
  }
  pthread_mutex_unlock (&m->lock);
  if (r)
    errno = EIO;
  return r;
}

static inline int
mem_sync (struct backend *b)
{
  struct mem *m = b->priv;

  pthread_mutex_lock (&m->lock);
  m->syncs++;
  pthread_mutex_unlock (&m->lock);
  return 0;
}

static inline int
mem_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  struct mem *m = b->priv;

  pthread_mutex_lock (&m->lock);
  memset (m->data + offset, 0, count);
  m->discards++;
  pthread_mutex_unlock (&m->lock);
  return 0;
}

static inline void
mem_close (struct backend *b)
{
  struct mem *m = b->priv;

  free (m->data);
  free (m);
  free (b);
}

static const struct backend_ops mem_ops = {
  .name = "memory", .pread = mem_pread, .pwrite = mem_pwrite,
  .sync = mem_sync, .discard = mem_discard, .close = mem_close,
};

static inline void
mem_submit_write (struct backend *b, const void *buf, size_t count,
                  uint64_t offset, backend_done_fn done, void *opaque)
{
  struct mem *m = b->priv;
  unsigned cap = sizeof m->pending / sizeof m->pending[0];

  pthread_mutex_lock (&m->lock);
  while (m->npending == cap)           /* a full queue blocks */
    pthread_cond_wait (&m->cond, &m->lock);
  m->pending[m->npending++] = (struct pending_write) {
    .buf = buf, .count = count, .offset = offset, .done = done,
    .opaque = opaque,
  };
  if (m->npending > m->async_max)
    m->async_max = m->npending;
  pthread_cond_broadcast (&m->cond);
  pthread_mutex_unlock (&m->lock);
}

/* Completes a random pending write once a few are there (or the
 * submitter stopped), so completions come out of order. */
static inline void *
mem_completer (void *arg)
{
  struct backend *b = arg;
  struct mem *m = b->priv;
  struct pending_write w;
  struct timespec until;
  unsigned i;
  int err;

  pthread_mutex_lock (&m->lock);
  for (;;) {
    if (m->npending == 0) {
      if (m->stopping)
        break;
      pthread_cond_wait (&m->cond, &m->lock);
      continue;
    }
    if (m->npending < 4) {               /* let a few gather */
      clock_gettime (CLOCK_REALTIME, &until);
      until.tv_nsec += 200000;
      if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
      }
      if (pthread_cond_timedwait (&m->cond, &m->lock, &until) == 0)
        continue;
    }
    i = m->seed = m->seed * 6364136223846793005ULL + 1;
    i = (m->seed >> 33) % m->npending;
    w = m->pending[i];
    m->pending[i] = m->pending[--m->npending];
    err = mem_fails (m, w.count, w.offset) ? EIO : 0;
    if (!err) {
      memcpy (m->data + w.offset, w.buf, w.count);
      if (m->nlog < sizeof m->log / sizeof m->log[0])
        m->log[m->nlog++] = w.offset;
    }
    pthread_cond_broadcast (&m->cond);
    pthread_mutex_unlock (&m->lock);
    w.done (w.opaque, err);
    pthread_mutex_lock (&m->lock);
  }
  pthread_mutex_unlock (&m->lock);
  return NULL;
}

static inline void
mem_close_async (struct backend *b)
{
  struct mem *m = b->priv;

  pthread_mutex_lock (&m->lock);
  m->stopping = true;
  pthread_cond_broadcast (&m->cond);
  pthread_mutex_unlock (&m->lock);
  pthread_join (m->completer, NULL);
  mem_close (b);
}

static const struct backend_ops mem_async_ops = {
  .name = "memory, asynchronous writes", .pread = mem_pread,
  .pwrite = mem_pwrite, .sync = mem_sync, .discard = mem_discard,
  .close = mem_close_async, .submit_write = mem_submit_write,
};

static inline struct backend *
mem_open (uint64_t size)
{
  struct backend *b = calloc (1, sizeof *b);
  struct mem *m = calloc (1, sizeof *m);

  REQUIRE (b && m, "calloc");
  m->data = calloc (1, size);
  REQUIRE (m->data, "calloc %llu", (unsigned long long) size);
  m->fail_sector = -1;
  pthread_mutex_init (&m->lock, NULL);
  pthread_cond_init (&m->cond, NULL);
  b->ops = &mem_ops;
  b->priv = m;
  b->size = size;
  b->can_discard = true;
  b->dev_major = 7;
  return b;
}

/* A memory backend whose writes complete later, out of order. */
static inline struct backend *
mem_open_async (uint64_t size)
{
  struct backend *b = mem_open (size);
  struct mem *m = b->priv;

  b->ops = &mem_async_ops;
  m->seed = 42;
  REQUIRE (pthread_create (&m->completer, NULL, mem_completer, b) == 0,
           "completer thread");
  return b;
}

static inline struct mem *
mem_of (struct backend *b)
{
  return b->priv;
}

/* Holds (or lets go) every backend write. */
static inline void
mem_hold (struct backend *b, bool hold)
{
  struct mem *m = mem_of (b);

  pthread_mutex_lock (&m->lock);
  m->hold = hold;
  pthread_cond_broadcast (&m->cond);
  pthread_mutex_unlock (&m->lock);
}

/* Waits until N writes are held in the backend. */
static inline void
mem_wait_held (struct backend *b, unsigned n)
{
  struct mem *m = mem_of (b);
  struct timespec deadline;

  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 20;
  pthread_mutex_lock (&m->lock);
  while (m->held < n)
    REQUIRE (pthread_cond_timedwait (&m->cond, &m->lock, &deadline) == 0,
           "timed out waiting for %u held writes (have %u)", n, m->held);
  pthread_mutex_unlock (&m->lock);
}

/* SPEC keyed with KEY_BYTES (at most 64) of a fixed pattern. */
static inline struct sector_cipher *
test_cipher_spec (const char *spec, size_t key_bytes, unsigned sector_size)
{
  static uint8_t key[64];
  struct sector_cipher_params p = {
    .spec = spec, .key = key, .key_size = key_bytes,
    .sector_size = sector_size,
  };
  unsigned i;

  for (i = 0; i < sizeof key; i++)
    key[i] = i * 7 + 1;
  return sector_cipher_new (&p);
}

static inline struct sector_cipher *
test_cipher (unsigned sector_size)
{
  return test_cipher_spec ("aes-xts-plain64", 64, sector_size);
}

/* Plaintext of the backend's bytes, decrypted independently of the
 * engine, into OUT (SIZE bytes from plaintext offset 0). */
static inline void
decrypt_backend (struct backend *b, struct sector_cipher *c,
                 uint64_t data_offset, uint8_t *out, uint64_t size)
{
  struct mem *m = mem_of (b);

  pthread_mutex_lock (&m->lock);
  memcpy (out, m->data + data_offset, size);
  pthread_mutex_unlock (&m->lock);
  REQUIRE (sector_cipher_decrypt (c, out, out, size, 0) == 0, "decrypt");
}

/* xorshift: reproducible and thread-local, unlike rand(). */
static inline uint64_t
rnd (uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#endif /* DMCRYPT_ENGINE_HARNESS_H */
