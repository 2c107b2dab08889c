/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's insides, shared by the files of scheduler/: a request is
 * split into chunks of at most max-read-size/max-write-size bytes; the
 * chunks are crypted by the calling thread and the worker pool
 * (workers.c), encrypted writes pass the write-out stage (writeout.c),
 * and chunk.c holds what is done to one chunk. */
#ifndef DMCRYPT_SCHED_INTERNAL_H
#define DMCRYPT_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../backend/submitter.h"
#include "bufpool.h"
#include "engine.h"
#include "kwq.h"
#include "policy.h"
#include "rangelock.h"

/* A request is worked in waves of at most this many chunks, so that a
 * huge zero or write needs no allocation (64 MiB at 128 KiB chunks is
 * 512 chunks: 16 waves). */
#define WAVE_CHUNKS 32

#define MAX_SECTOR_SIZE 4096    /* bytes: the largest encryption sector */

/* Anticipation (anticipate.c): a gap of at most ANTICIPATE_SECTORS
 * 512-byte sectors (64 MiB, as much as may be in flight by default)
 * ahead of the last write is waited for once, for ANTICIPATE_NS or
 * while another round is being written up to ANTICIPATE_MAX_NS, inside
 * a stream of at least RUN_MIN contiguous writes. */
#define ANTICIPATE_SECTORS 131072
#define ANTICIPATE_NS 2000000
#define ANTICIPATE_MAX_NS 20000000
#define RUN_MIN 8

/* The kernel= pipelines (kpipe.c) hand a request to kcryptd a bio at a
 * time: the run of its chunks up to KBIO_BYTES, the most a bio of the
 * page cache holds (BIO_MAX_PAGES, 256 pages of 4 KiB), and what
 * dm-crypt accepts of a write at once since 4.0 (crypt_map's
 * dm_accept_partial_bio). */
#define KBIO_BYTES (1024 * 1024)

/* The io_contexts of the engine's threads (backend/submitter.h), as
 * kernel threads have their own. */
#define CONTEXT_WRITER      SUBMITTER_KTHREAD         /* dmcrypt_write */
#define CONTEXT_KCRYPTD_IO  (SUBMITTER_KTHREAD + 1)
#define CONTEXT_KCRYPTD     (SUBMITTER_KTHREAD + 2)   /* + its index */

struct request;

/* A bio of a request, for the kernel= pipelines: one work item. */
struct kbio
{
  struct kwork work;            /* on kcryptd_io, then kcryptd */
  struct request *req;
  unsigned first, n;            /* the request's chunks [first, first+n) */
  atomic_uint fetching;         /* read: chunks whose read is in flight */
};

struct chunk
{
  struct wo_item wo;            /* write-out link and sort key */
  struct request *req;
  uint64_t offset;              /* plaintext bytes, sector-aligned */
  uint32_t len;                 /* bytes, whole sectors */
  uint8_t *data;                /* read: where the plaintext goes;
                                   write: the ciphertext (a pool buffer,
                                   or the plaintext when BORROWED) */
  int err;                      /* errno for this chunk, 0 when done well */
  bool borrowed;                /* write: DATA is the plaintext itself, no
                                   pool buffer (identity cipher) */
  bool encrypting;              /* on the write-out stage's pending list */
  struct chunk *pend_prev, *pend_next;
  struct kbio *kbio;            /* kernel= pipelines: its bio */
};

struct request
{
  struct engine *e;
  bool write;
  /* Write plaintext: the caller's bytes SRC hold plaintext offset
   * SRC_OFFSET onwards (NULL: zeros); HEAD and TAIL are the merged
   * partial first and last sectors (NULL when whole). */
  const uint8_t *src;
  uint64_t src_offset;
  uint64_t start, end;          /* aligned plaintext range, bytes */
  const uint8_t *head, *tail;
  struct chunk chunks[WAVE_CHUNKS];
  unsigned nchunks;
  unsigned claimed;             /* chunks taken; under the pool lock */
  struct rqueue *queue;         /* where it waits for workers, or NULL */
  struct request *prev, *next;  /* links in that queue */
  atomic_uint pending;          /* chunks not complete; owner waits on 0 */
  /* kernel= pipelines: the request's bios, and the modelled CPU that
   * submitted it (a per-CPU kcryptd runs its bios there). */
  struct kbio bios[WAVE_CHUNKS];
  unsigned nbios;
  unsigned cpu;
  /* A write of a submitter whose writes are sync (backend/submitter.h):
   * its clones go down REQ_SYNC, whoever submits them. */
  bool sync;
};

struct rqueue
{
  struct request *head, *tail;
};

struct worker
{
  struct workers *pool;
  unsigned index;
  pthread_t thread;
  pthread_cond_t wake;
  struct rqueue own;            /* same_cpu_crypt requests for it */
  bool idle;                    /* waiting on WAKE; under the pool lock */
};

struct workers
{
  pthread_mutex_t lock;
  struct rqueue shared;
  struct worker *w;
  unsigned n;                   /* threads running */
  bool stopping;
  unsigned depth, depth_max;    /* chunks waiting for a worker */
};

struct writeout
{
  /* Writes one chunk out (chunk_dispatch_write): given by the engine,
   * so that the stage knows nothing of what a chunk is beyond its
   * place in the order. */
  void (*dispatch) (struct engine *e, struct chunk *c);
  /* On a backend without a queue of its own, a round is dispatched in
   * two halves: NOTE, under the token, gives each chunk its place in
   * the order (chunk_note_write), PERFORM writes it (chunk_write_noted)
   * once the token is released, so that rounds dispatched by different
   * threads are written at once, as a device has the bios dmcrypt_write
   * submitted in flight together; at most MAX_WRITING rounds at once
   * (0: no limit).  NULL: DISPATCH under the token. */
  void (*note) (struct engine *e, struct chunk *c);
  void (*perform) (struct engine *e, struct chunk *c);
  unsigned max_writing;
  unsigned writing;               /* rounds being performed */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct wo_item *head, **tailp;  /* arrivals, in order */
  struct chunk *encrypting;       /* chunks being encrypted now */
  unsigned depth, depth_max;      /* chunks waiting */
  unsigned batch_max;             /* largest round, chunks */
  uint64_t rounds;
  const struct writeout_policy *policy;
  void *state;
  struct wo_item *held;           /* kept back from a round */
  uint64_t hold_sectors;          /* the hold-back window (the in-flight cap) */
  pthread_t thread;
  bool running, stopping, sleeping;
  bool anticipating;              /* waiting for a gap: wake on admit */
  bool busy;                      /* the dispatch token is taken */
  /* Written by the token holder only: */
  uint64_t last_end;              /* sector after the last dispatch */
  unsigned run;                   /* contiguous dispatches, about */
  uint64_t gap_at;                /* the gap being waited for... */
  struct timespec gap_deadline;   /* ...until then (CLOCK_REALTIME), */
  struct timespec gap_limit;      /* ...or this while rounds are written */
  uint64_t anticipations;         /* gaps waited for */
  uint64_t direct;                /* chunks dispatched by their crypter */
};

struct counters
{
  atomic_uint_fast64_t reads, writes, zeros, trims, flushes;
  atomic_uint_fast64_t read_bytes, write_bytes;       /* plaintext */
  atomic_uint_fast64_t read_chunks, write_chunks;
  atomic_uint_fast64_t inline_chunks, worker_chunks;  /* who crypted */
  atomic_uint_fast64_t batched_chunks;
  /* The chunks timed (crypt_clock.c): [0] decryption, [1] encryption. */
  atomic_uint_fast64_t crypt_sample_ns[2], crypt_sample_bytes[2];
  atomic_uint_fast64_t dispatches, sequential;        /* backend writes */
  atomic_uint_fast64_t rmw_sectors, errors;
  atomic_uint_fast64_t last_write_end;  /* backend bytes */
  atomic_uint inflight_max;             /* requests at once */
};

/* The thread structure of the kernel series of kernel= (kpipe.c).
 * With KSERIES_NONE, dmcrypt's own pipeline runs and none of this is
 * used. */
struct kpipe
{
  int series;                   /* enum kernel_series */
  bool kcryptd_io;              /* reads submitted by kcryptd_io */
  bool bound;                   /* kcryptd per CPU, else unbound */
  bool inline_reads;            /* decrypted where the read completes */
  bool inline_writes;           /* encrypted by the caller */
  unsigned crypt_threads;       /* kcryptd threads */
  struct kwq crypt;             /* kcryptd */
  struct kwq io;                /* kcryptd_io */
};

struct engine
{
  struct engine_config cfg;     /* cfg.scheduler is not kept */
  struct sector_cipher *cipher;
  struct backend *backend;
  const struct writeout_policy *policy;
  uint64_t read_chunk, write_chunk;   /* bytes per chunk */
  uint64_t max_inflight;              /* bytes of ciphertext */
  unsigned nworkers;
  struct rangelock writes;      /* sector-aligned ranges being written */
  struct bufpool bufs;
  struct workers pool;
  struct writeout wo;
  /* The thread that encrypted a write chunk dispatches it: no
   * write-out thread (submit_from_crypt_cpus, no_write_workqueue, or
   * the kernel series' kcryptd before 4.0). */
  bool direct_writes;
  struct kpipe kp;
  uint8_t *zeros;               /* write_chunk bytes of zeros */
  bool identity;                /* cipher_null: ciphertext is plaintext */
  bool started;
  atomic_uint debug;            /* enum engine_debug; set at any time */
  atomic_uint inflight;         /* requests inside the engine */
  struct counters st;
};

/* Times N chunks crypted in one call, the NTH on, if one of them is of
 * the sample (crypt_clock.c). */
uint64_t crypt_clock_start (uint64_t nth, unsigned n);
void crypt_clock_stop (struct engine *e, bool write, uint64_t bytes,
                       uint64_t start);

static inline bool
debug_on (struct engine *e, unsigned flag)
{
  return atomic_load_explicit (&e->debug, memory_order_relaxed) & flag;
}

/* engine.c: counts the requests inside (the high-water mark is a
 * statistic; suspending is the device-mapper core's job, dm/dm.h). */
void requests_enter (struct engine *e);
void requests_leave (struct engine *e);

/* thread.c: names the calling thread NAME (which must outlive it),
 * sets its submitter (CONTEXT, modelled CPU or -1) and its priority. */
void thread_setup (struct engine *e, const char *name, unsigned context,
                   int cpu);

/* workers.c */
int workers_start (struct engine *e, unsigned n);
void workers_stop (struct workers *p);
/* Queues R's unclaimed chunks: on worker WORKER's own queue, or on the
 * shared queue when WORKER < 0. */
void workers_submit (struct workers *p, struct request *r, int worker);
/* Takes R's next unclaimed chunk back for the caller, or NULL. */
struct chunk *workers_claim (struct workers *p, struct request *r);

/* writeout.c */
int writeout_start (struct engine *e);
void writeout_stop (struct writeout *wo);
/* R's write chunks have their buffers and are about to be encrypted: a
 * policy that orders across writes in flight will not dispatch past
 * them until they arrive. */
void writeout_admit (struct engine *e, struct request *r);
/* A chunk's encryption failed: it will never arrive. */
void writeout_cancel (struct engine *e, struct chunk *c);
/* Hands an encrypted chunk to the write-out stage. */
void writeout_submit (struct engine *e, struct chunk *c, bool on_worker);

/* kpipe.c: the kernel series' threads (kernel=) */
/* Fills E->kp and E->direct_writes from CFG; -1 after nbdkit_error. */
int kpipe_configure (struct engine *e, const struct engine_config *cfg);
int kpipe_start (struct engine *e);
void kpipe_stop (struct engine *e);
/* Runs a wave of R (its chunks filled, a write's buffers admitted) as
 * the series did, and waits for it. */
int kpipe_run_wave (struct engine *e, struct request *r);

/* anticipate.c, all under the stage's lock with the dispatch token */
/* Should the round starting with FIRST wait for a gap before it? */
bool anticipate_gap_locked (struct writeout *wo, const struct wo_item *first);
/* Cuts an ordered batch before its first gap inside a stream; returns
 * the tail (or NULL) for the next round. */
struct wo_item *anticipate_cut (const struct writeout *wo,
                                struct wo_item *batch);
/* Waits for an admission, an arrival or the gap's deadline. */
void anticipate_wait_locked (struct writeout *wo);

/* chunk.c */
/* The request's thread reads a read chunk's ciphertext (sets c->err). */
void chunk_fetch (struct engine *e, struct chunk *c);
void chunk_run (struct chunk *c, bool on_worker);
/* Runs N chunks of one request in this thread, in order; a write's
 * chunks that follow each other in the caller's bytes are encrypted in
 * one call where the cipher gains from it. */
void chunk_run_inline (struct chunk *c, unsigned n);
void chunk_dispatch_write (struct engine *e, struct chunk *c);
void chunk_note_write (struct engine *e, struct chunk *c);
void chunk_write_noted (struct engine *e, struct chunk *c);
void chunk_done (struct chunk *c, int err);
int request_wait (struct request *r);
int read_plain_sector (struct engine *e, uint8_t *buf, uint64_t offset);
void trace_queue (struct engine *e, const char *rwbs, uint64_t offset,
                  uint64_t len);

#endif /* DMCRYPT_SCHED_INTERNAL_H */
