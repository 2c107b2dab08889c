/* The engine: turns plaintext requests into sector crypto and backend IO.
 *
 * Offsets and counts of requests are bytes of plaintext (the export);
 * any alignment is accepted: partial encryption sectors are done by
 * read-modify-write, serialised against overlapping writes.  Each call
 * returns 0, or -1 with errno set (the caller reports it). */
#ifndef DMCRYPT_ENGINE_H
#define DMCRYPT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../crypto/cipher.h"
#include "../backend/backend.h"

struct engine;

struct engine_config
{
  uint64_t data_offset;        /* bytes into the backend where data starts */
  uint64_t size;               /* bytes of plaintext */
  unsigned sector_size;        /* encryption sector, bytes */
  unsigned workers;            /* crypto worker threads; 0: online CPUs */
  const char *scheduler;       /* write-out policy name; NULL: "sorted" */
  unsigned flags;              /* enum crypt_table_flag */
  uint64_t max_read_size;      /* bytes per chunk; 0: 128 KiB */
  uint64_t max_write_size;     /* bytes per chunk; 0: 128 KiB */
};

/* Takes no ownership of CIPHER or BACKEND; both must outlive it. */
struct engine *engine_new (const struct engine_config *cfg,
                           struct sector_cipher *cipher,
                           struct backend *backend);
/* Starts worker threads (called in nbdkit's .after_fork). */
int engine_start (struct engine *e);
/* Drains and stops the threads, frees everything. */
void engine_free (struct engine *e);

int engine_read (struct engine *e, void *buf, uint32_t count,
                 uint64_t offset);
int engine_write (struct engine *e, const void *buf, uint32_t count,
                  uint64_t offset, bool fua);
/* Writes encrypted zeros over the range. */
int engine_zero (struct engine *e, uint32_t count, uint64_t offset,
                 bool fua);
/* Passes the range's whole encryption sectors down as a discard. */
int engine_trim (struct engine *e, uint32_t count, uint64_t offset,
                 bool fua);
int engine_flush (struct engine *e);

#endif /* DMCRYPT_ENGINE_H */
