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

struct backend_ops
{
  const char *name;
  int (*pread) (struct backend *b, void *buf, size_t count, uint64_t offset);
  int (*pwrite) (struct backend *b, const void *buf, size_t count,
                 uint64_t offset);
  int (*sync) (struct backend *b);
  int (*discard) (struct backend *b, uint64_t count, uint64_t offset);
  void (*close) (struct backend *b);
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

/* Locks the image of a backend made by backend_file_open (lock.h):
 * exclusively or shared.  Returns 0, or -1 with errno and HOLDER as
 * image_lock_acquire; backend_file_relock changes a held lock. */
struct image_lock_holder;
int backend_file_lock (struct backend *b, bool exclusive,
                       struct image_lock_holder *holder);
int backend_file_relock (struct backend *b, bool exclusive,
                         struct image_lock_holder *holder);
bool backend_file_is_exclusive (struct backend *b);

int backend_pread (struct backend *b, void *buf, size_t count,
                   uint64_t offset);
int backend_pwrite (struct backend *b, const void *buf, size_t count,
                    uint64_t offset);
int backend_sync (struct backend *b);
int backend_discard (struct backend *b, uint64_t count, uint64_t offset);
void backend_close (struct backend *b);

#endif /* DMCRYPT_BACKEND_H */
