/* The block-queue model of the simulated device: what Linux's blk-mq
 * does between a file system (here: the engine) and the disk.  A queue
 * of at most nr_requests requests; contiguous bios of one op merge into
 * a request (back and front, within max_sectors); an elevator chooses
 * what the device gets next: "none" (FIFO) or "deadline" (mq-deadline).
 *
 * PURE: no threads, no clock, no sleeping.  Times are nanoseconds of
 * model time given by the caller, so the queue is a deterministic
 * function of its calls and unit tests drive it with synthetic times.
 * Not thread-safe: the caller serialises every call on one queue,
 * blkq_rq_free included (it returns the request to the queue's free
 * list).  Insert and next take O(log n) expected time in the requests
 * queued (treaps); no allocation per bio: requests are recycled.
 *
 * Flushes and discards are barriers: such a request is dispatched only
 * once everything inserted before it was, and nothing inserted after it
 * is dispatched before it (nor merges with anything queued before it).
 * Linux orders flushes in its flush machinery, outside the elevator;
 * file systems wait for a discard before reusing its blocks.  A barrier
 * is the simplest model that keeps both promises. */
#ifndef DMCRYPT_SIM_BLKQ_H
#define DMCRYPT_SIM_BLKQ_H

#include <stdint.h>

#include "devop.h"

enum blkq_elevator { BLKQ_NONE, BLKQ_DEADLINE };

/* The defaults a zero field of struct blkq_config stands for. */
#define BLKQ_MAX_SECTORS    2560           /* max_sectors_kb 1280 */
#define BLKQ_READ_EXPIRE    500000000ULL   /* ns: mq-deadline's 500 ms */
#define BLKQ_WRITE_EXPIRE   5000000000ULL  /* ns: 5 s */
#define BLKQ_FIFO_BATCH     16
#define BLKQ_WRITES_STARVED 2   /* read batches a waiting write allows */

struct blkq_bio                 /* one IO from above, owned by the caller */
{
  enum dev_op op;
  uint64_t sector;              /* 512-byte sectors */
  uint32_t nsect;               /* > 0, except 0 for a flush */
  struct blkq_bio *next;        /* the queue links merged bios here */
  void *opaque;                 /* the caller's */
};

/* A request: one or more merged, contiguous bios.  The queue allocates
 * it; the caller reads these fields, owns the request once blkq_next
 * returned it and gives it back with blkq_rq_free.  A pointer returned
 * by blkq_insert is valid only until the next call on the queue: a
 * later bio that bridges two requests merges them into one. */
struct blkq_rq
{
  enum dev_op op;
  uint64_t sector;              /* 512-byte sectors */
  uint32_t nsect;               /* sum of the bios' */
  uint64_t insert_time;         /* model ns; the oldest, after a merge */
  struct blkq_bio *bios;        /* in sector order, linked by next */
  unsigned nbios;
  void *opaque;                 /* the caller's; NULL when created */
};

struct blkq_config              /* 0 in a field: its BLKQ_ default */
{
  enum blkq_elevator elevator;
  unsigned nr_requests;         /* max requests queued (not counting
                                   dispatched ones); must be > 0 */
  uint32_t max_sectors;         /* a merged request never exceeds this;
                                   a larger single bio is one request */
  uint64_t read_expire, write_expire;   /* deadline: model ns */
  unsigned fifo_batch;                  /* deadline: requests a batch */
};

/* NULL with errno set (EINVAL: nr_requests 0). */
struct blkq *blkq_new (const struct blkq_config *cfg);

/* Frees the queue, and the requests still queued (their bios stay the
 * caller's).  Requests dispatched and not yet freed stay valid: the
 * last blkq_rq_free releases what remains. */
void blkq_free (struct blkq *q);

/* Adds BIO at model time NOW (never less than the last call's NOW).
 * A read or write merges into a request of the same op queued since the
 * last barrier: a back merge (the request ends where BIO starts), else a
 * front merge (it starts where BIO ends), within max_sectors; a bio
 * that closes the gap between two requests merges them too.  Then the
 * result is BLKQ_MERGED with *RQ the request.  Otherwise BIO becomes a
 * new request, BLKQ_INSERTED, or, when nr_requests requests are queued
 * already, BLKQ_FULL: nothing was done, the caller retries after a
 * blkq_next.  (Requests are recycled, and allocated only when more are
 * alive than ever before; should that fail, BLKQ_FULL too: a request
 * is kept in reserve, so some are queued or out at the device then, and
 * the retry after blkq_next or blkq_rq_free finds one.) */
enum blkq_result { BLKQ_INSERTED, BLKQ_MERGED, BLKQ_FULL };
enum blkq_result blkq_insert (struct blkq *q, struct blkq_bio *bio,
                              uint64_t now, struct blkq_rq **rq);

/* The next request for the device at model time NOW, removed from the
 * queue, or NULL when nothing is queued.
 *
 * none: FIFO (a request merged into keeps its place; two requests
 * merged into one take the older one's place).
 *
 * deadline, as Linux's mq-deadline (block/mq-deadline.c, 6.x): reads
 * and writes are sorted apart by sector.  A batch goes on in one
 * direction with the first request at or after the start of the last
 * one dispatched in that direction, up to fifo_batch requests.  A new
 * batch takes reads, unless writes have been waiting through
 * BLKQ_WRITES_STARVED read batches (or there are no reads); it starts
 * at the direction's oldest request when that one has waited past its
 * expiry or nothing lies at or after the position, else it continues
 * from the position.  So the sweep does not wrap to the lowest sector:
 * what lies behind the head comes out oldest first. */
struct blkq_rq *blkq_next (struct blkq *q, uint64_t now);

void blkq_rq_free (struct blkq_rq *rq);

/* Requests waiting now, barriers included. */
unsigned blkq_queued (const struct blkq *q);

#endif /* DMCRYPT_SIM_BLKQ_H */
