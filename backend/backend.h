/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The backend: the few operations the engine needs from whatever holds
 * the ciphertext (a file, a block device, later an nbdkit filter's lower
 * layer, a simulated device or a fault injector).  The trace point sits
 * here: every call is one "D" event and one "C" event in the trace.
 *
 * Offsets and counts are bytes on the backing device.  Each call returns
 * 0, or -1 with errno set.  All calls are thread-safe. */
#ifndef DMCRYPT_BACKEND_H
#define DMCRYPT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct backend;
struct trace;

/* Called exactly once when a submitted write has completed: ERR is 0
 * or an errno. */
typedef void (*backend_done_fn) (void *opaque, int err);

struct backend_ops
{
  const char *name;
  int (*pread) (struct backend *b, void *buf, size_t count, uint64_t offset);
  int (*pwrite) (struct backend *b, const void *buf, size_t count,
                 uint64_t offset);
  int (*sync) (struct backend *b);
  int (*discard) (struct backend *b, uint64_t count, uint64_t offset);
  void (*close) (struct backend *b);
  /* Optional.  Starts a write of COUNT bytes of BUF at OFFSET and
   * returns; DONE (OPAQUE, err) runs once it completed, from any thread,
   * possibly before submit_write returns.  BUF stays the caller's until
   * then.  May block while the backend's queue is full.  Without it,
   * backend_submit_write writes synchronously. */
  void (*submit_write) (struct backend *b, const void *buf, size_t count,
                        uint64_t offset, backend_done_fn done, void *opaque);
  /* Optional.  Starts a read of COUNT bytes at OFFSET into BUF and
   * returns, as submit_write does: DONE (OPAQUE, err) runs once BUF
   * holds them (or the read failed), from any thread, possibly before
   * submit_read returns.  Without it, backend_submit_read reads
   * synchronously. */
  void (*submit_read) (struct backend *b, void *buf, size_t count,
                       uint64_t offset, backend_done_fn done, void *opaque);
  /* Optional.  The calling thread is about to sleep until IO it (or
   * another thread on its behalf) submitted completes: a block layer
   * that holds requests back in a plug lets them go now, as the
   * kernel's unplug does when the submitter waits.  Without it,
   * nothing. */
  void (*unplug) (struct backend *b);
  /* The backend records its own trace events (a simulated device: I, M,
   * D, C on its clock): backend.c adds none around its calls. */
  bool traces_itself;
};

struct backend
{
  const struct backend_ops *ops;
  void *priv;
  uint64_t size;              /* bytes */
  bool readonly;
  bool can_discard;
  bool is_blockdev;
  unsigned dev_major, dev_minor;  /* for traces and tables */
  struct trace *trace;        /* NULL: no tracing */
};

/* Opens PATH (regular file or block device).  READONLY opens O_RDONLY so
 * that nothing can reach the image. */
struct backend *backend_file_open (const char *path, bool readonly);

/* The descriptor of a backend made by backend_file_open, for its lock
 * (volume/lock/lock.h); the backend keeps it and closes it. */
int backend_file_fd (struct backend *b);
/* Discards of a block device go through FD, once it is not -1: the
 * kernel drops a range's page cache on discard only for the device's
 * exclusive holder (image_lock_claim_fd).  Safe while requests run. */
void backend_file_set_discard_fd (struct backend *b, int fd);

int backend_pread (struct backend *b, void *buf, size_t count,
                   uint64_t offset);
int backend_pwrite (struct backend *b, const void *buf, size_t count,
                    uint64_t offset);
/* A write that may still be in flight when this returns: many can be
 * outstanding at once below the engine (a queue of a simulated device).
 * DONE runs exactly once, also on failure (a read-only backend: EROFS). */
void backend_submit_write (struct backend *b, const void *buf, size_t count,
                           uint64_t offset, backend_done_fn done,
                           void *opaque);
/* A read that may still be in flight when this returns (submit_read);
 * DONE runs exactly once, also on failure.  Synchronous on a backend
 * without submit_read. */
void backend_submit_read (struct backend *b, void *buf, size_t count,
                          uint64_t offset, backend_done_fn done,
                          void *opaque);
/* The caller is about to wait for IO submitted before: see unplug. */
void backend_unplug (struct backend *b);
/* A synchronous write in two halves, for a caller that decides the
 * order of writes under a lock and performs them once it let go of it:
 * backend_note_write records the dispatch (the trace's "D") in that
 * order, backend_write_noted writes (and records the "C").  Writes
 * noted by different threads may then be in flight at once, as bios a
 * driver dispatched are in a device.  Not for a backend with a queue of
 * its own (backend_queues_writes), where the order is the queue's. */
bool backend_queues_writes (const struct backend *b);
void backend_note_write (struct backend *b, size_t count, uint64_t offset);
int backend_write_noted (struct backend *b, const void *buf, size_t count,
                         uint64_t offset);
int backend_sync (struct backend *b);
int backend_discard (struct backend *b, uint64_t count, uint64_t offset);
void backend_close (struct backend *b);

#endif /* DMCRYPT_BACKEND_H */
