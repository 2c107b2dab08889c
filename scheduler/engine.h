/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine: turns plaintext requests into sector crypto and backend IO,
 * with dm-crypt's pipeline: requests split into chunks, crypto on a
 * worker pool ("kcryptd"), encrypted writes ordered by a write-out policy
 * ("dmcrypt_write"), flush and FUA barriers and a cap on
 * the ciphertext in flight.  docs/engine.md tells the whole story.
 *
 * Offsets and counts of requests are bytes of plaintext (the export);
 * any alignment is accepted: partial encryption sectors are done by
 * read-modify-write, serialised against overlapping writes.  A write
 * returns only after its ciphertext reached the backend.  Each call
 * returns 0, or -1 with errno set (the caller reports it). */
#ifndef DMCRYPT_ENGINE_H
#define DMCRYPT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../crypto/cipher.h"
#include "../backend/backend.h"

struct engine;

/* What -D dmcrypt.* turns on: nbdkit_debug lines per event. */
enum engine_debug
{
  ENGINE_DEBUG_QUEUE    = 1 << 0,   /* each request in and out */
  ENGINE_DEBUG_WRITEOUT = 1 << 1,   /* each write-out round */
  ENGINE_DEBUG_WORKERS  = 1 << 2,   /* threads, priorities */
};

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
  uint64_t max_inflight;       /* bytes of ciphertext in flight; 0: 64 MiB */
  /* Write-out rounds being written at once on a backend that writes
   * synchronously (a file); 0: no limit, 1: one write at a time. */
  unsigned max_write_rounds;
  /* false (default): the calling thread crypts its whole request while
   * as many requests as workers are inside, else its first chunk while
   * idle workers take the rest, so no hand-off is paid where it cannot
   * help; true: every chunk goes to the workers, as in the kernel. */
  bool offload_all;
  /* The kernel series whose dm-crypt threads are modelled (enum
   * kernel_series, backend/kseries.h; kpipe.c): KSERIES_NONE (0) is
   * dmcrypt's own pipeline, for which the two fields after it are
   * ignored. */
  int kernel;
  /* Read clones submitted by a kcryptd_io thread (1), as 2.6.32 did,
   * or by the caller (0), as since 2.6.38; -1: the series' way. */
  int kcryptd_io;
  /* kernel=2.6.32 or 3.16, whose kcryptd submitted its own writes:
   * writes go through the write-out thread and SCHEDULER instead (a
   * scheduler= given with them). */
  bool kernel_writer;
  unsigned debug;              /* enum engine_debug */
};

/* The cipher's CPU time is taken on every CRYPT_SAMPLE_EVERY-th chunk
 * crypted inline and every CRYPT_SAMPLE_EVERY-th on a worker. */
#define CRYPT_SAMPLE_EVERY 16

struct engine_stats
{
  uint64_t reads, writes, zeros, trims, flushes;   /* requests */
  uint64_t read_bytes, write_bytes;                /* plaintext bytes */
  uint64_t read_chunks, write_chunks;
  uint64_t inline_chunks, worker_chunks;   /* crypted by caller / worker */
  uint64_t batched_chunks;     /* write chunks encrypted in one call with
                                  the chunks next to them */
  uint64_t dispatches;         /* backend writes of chunks */
  uint64_t sequential;         /* ... starting where the previous ended */
  uint64_t rounds;             /* write-out rounds */
  uint64_t anticipations;      /* waits for a gap before a round */
  uint64_t direct;             /* chunks dispatched by their crypter */
  uint64_t rmw_sectors;        /* partial sectors read-modify-written */
  uint64_t errors;             /* requests that failed */
  uint64_t buffer_waits;       /* times the in-flight cap held a writer */
  /* CPU time of the cipher on a sample of the chunks, and their bytes */
  uint64_t decrypt_sample_ns, decrypt_sample_bytes;
  uint64_t encrypt_sample_ns, encrypt_sample_bytes;
  unsigned inflight_max;       /* requests inside at once, high-water */
  unsigned worker_depth_max;   /* chunks waiting for a worker */
  unsigned writeout_depth_max; /* chunks waiting for write-out */
  unsigned writeout_depth;     /* ... now */
  unsigned batch_max;          /* largest write-out round, chunks */
  unsigned buffers_max;        /* ciphertext buffers out at once */
};

/* Checks CFG (scheduler name, sizes) without building anything.
 * Returns 0, or -1 after nbdkit_error. */
int engine_check_config (const struct engine_config *cfg);

/* Takes no ownership of CIPHER or BACKEND; both must outlive it. */
struct engine *engine_new (const struct engine_config *cfg,
                           struct sector_cipher *cipher,
                           struct backend *backend);
/* Starts worker threads (called in nbdkit's .after_fork).  Until then
 * every request is done in the calling thread. */
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
/* Returns once every write acknowledged before it is on stable storage. */
int engine_flush (struct engine *e);

void engine_set_debug (struct engine *e, unsigned debug);
void engine_get_stats (struct engine *e, struct engine_stats *st);
/* One line: "reads 10 (1.0 MiB), writes ...".  Returns BUF. */
char *engine_format_stats (const struct engine_stats *st, char *buf,
                           size_t size);
/* The modelled CPU a request of client connection CONNECTION (from 0)
 * is submitted from: the connection modulo the CPUs (workers) under a
 * kernel series, so that a client picks a CPU by its connection; -1
 * (the host's CPU) for dmcrypt's own pipeline. */
int engine_submitter_cpu (const struct engine *e, unsigned connection);
/* The modelled CPUs under a kernel series (workers=), 0 without one. */
unsigned engine_cpus (const struct engine *e);
/* Names of the write-out policies: "sorted fifo". */
const char *engine_policy_names (void);

#endif /* DMCRYPT_ENGINE_H */
