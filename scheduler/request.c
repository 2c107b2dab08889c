/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's requests: split into chunks
 * and worked in waves (see internal.h).  Reads are decrypted in place in
 * the caller's buffer after the backend returns them; writes are
 * encrypted into pool buffers, never the caller's (cipher_null's are
 * written from them: borrow_plaintext), and acknowledged once their
 * ciphertext is down, as dm-crypt does. */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/kseries.h"
#include "../backend/trace.h"
#include "../common/log.h"
#include "../table/crypt_table.h"
#include "internal.h"

#define SECTOR_SHIFT 9           /* 512-byte sectors */

/* Chunks of a request its own thread crypts, however idle the workers
 * are: beyond them the rest is shared out. */
#define INLINE_CHUNKS 2

void
trace_queue (struct engine *e, const char *rwbs, uint64_t offset,
             uint64_t len)
{
  if (e->backend->trace)
    trace_event (e->backend->trace, 'Q', rwbs,
                 (e->cfg.data_offset + offset) >> SECTOR_SHIFT,
                 len >> SECTOR_SHIFT, 0);
}

/* OFFSET is sector-aligned plaintext; BUF gets one decrypted sector. */
int
read_plain_sector (struct engine *e, uint8_t *buf, uint64_t offset)
{
  unsigned ss = e->cfg.sector_size;

  trace_queue (e, "R", offset, ss);
  if (backend_pread (e->backend, buf, ss, e->cfg.data_offset + offset) == -1)
    return -1;
  return sector_cipher_decrypt (e->cipher, buf, buf, ss,
                                offset >> SECTOR_SHIFT);
}

/* Crypts R's chunks: inline, on one worker, on the workers alone, or
 * (default) inline when the engine is busy or R small, else the first
 * inline while idle workers take the others, the caller helping until
 * none is left unclaimed.  Then waits.  The identity cipher's chunks
 * always stay inline: with no crypto to share, a hand-off is all cost. */
static int
run_wave (struct engine *e, struct request *r, bool inline_only)
{
  struct chunk *c;
  unsigned i;
  int cpu;

  r->claimed = 0;
  r->queue = NULL;
  atomic_store_explicit (&r->pending, r->nchunks, memory_order_relaxed);
  /* Reads are fetched here and only decrypted below: as in the kernel,
   * IO is issued by the request, never by a worker. */
  if (!r->write)
    for (i = 0; i < r->nchunks; i++)
      chunk_fetch (e, &r->chunks[i]);
  if (inline_only || e->pool.n == 0 || e->identity)
    chunk_run_inline (r->chunks, r->nchunks);
  else if (e->cfg.flags & CT_SAME_CPU_CRYPT) {
    cpu = sched_getcpu ();
    workers_submit (&e->pool, r, cpu < 0 ? 0 : cpu);
  }
  else if (e->cfg.offload_all)
    workers_submit (&e->pool, r, -1);
  else if (r->nchunks <= INLINE_CHUNKS ||
           atomic_load_explicit (&e->inflight, memory_order_relaxed)
           >= e->nworkers) {
    /* A hand-off costs about what crypting a chunk does (two context
     * switches, and the bytes pulled into another CPU's cache and
     * back), so a request of two chunks is done no sooner on two CPUs.
     * And with as many requests as workers inside already, their
     * threads keep the CPUs busy. */
    chunk_run_inline (r->chunks, r->nchunks);
  }
  else {
    r->claimed = 1;
    workers_submit (&e->pool, r, -1);
    chunk_run (&r->chunks[0], false);
    while ((c = workers_claim (&e->pool, r)) != NULL)
      chunk_run (c, false);
  }
  return request_wait (r);
}

/* Splits [*POS, END) into the next wave of R's chunks. */
static void
fill_wave (struct engine *e, struct request *r, uint64_t *pos, uint64_t end,
           uint8_t *read_base, uint64_t read_offset)
{
  uint64_t size = r->write ? e->write_chunk : e->read_chunk;
  unsigned max = WAVE_CHUNKS;
  struct chunk *c;

  /* A write wave takes all its buffers at once: no more than the cap. */
  if (r->write && max > e->bufs.max_bufs)
    max = e->bufs.max_bufs;
  for (r->nchunks = 0; *pos < end && r->nchunks < max; r->nchunks++) {
    c = &r->chunks[r->nchunks];
    c->req = r;
    c->offset = *pos;
    c->len = end - *pos < size ? end - *pos : size;
    c->data = read_base ? read_base + (*pos - read_offset) : NULL;
    c->err = 0;
    c->wo.sector = (e->cfg.data_offset + *pos) >> SECTOR_SHIFT;
    c->wo.nsect = c->len >> SECTOR_SHIFT;
    trace_queue (e, !r->write ? "R" : r->sync ? "WS" : "W", *pos, c->len);
    *pos += c->len;
  }
  atomic_fetch_add_explicit (r->write ? &e->st.write_chunks
                             : &e->st.read_chunks, r->nchunks,
                             memory_order_relaxed);
}

/* With the identity cipher the ciphertext of a chunk whose plaintext
 * lies in one piece (the caller's bytes, or zeros) is that plaintext:
 * the chunk is written from it, with no copy into a pool buffer (the
 * copy a real cipher makes as its output).  The caller's bytes stay
 * valid until the request returns, after its writes completed, and
 * are nbdkit's memory already: they are not counted against the pool's
 * in-flight cap.  Not a chunk holding a merged partial edge sector,
 * which lives apart from the caller's bytes. */
static bool
borrow_plaintext (struct engine *e, struct request *r, struct chunk *c)
{
  uint64_t ss = e->cfg.sector_size;
  uint64_t first = r->head ? r->start + ss : r->start;
  uint64_t last = r->tail ? r->end - ss : r->end;

  if (!e->identity || c->offset < first || c->offset + c->len > last)
    return false;
  c->data = r->src ? (uint8_t *) r->src + (c->offset - r->src_offset)
    : e->zeros;
  return true;
}

/* Gives each chunk of a write wave its ciphertext buffer and tells the
 * write-out stage they are coming. */
static int
admit_writes (struct engine *e, struct request *r)
{
  void *bufs[WAVE_CHUNKS];
  unsigned i, j = 0, n = 0;

  for (i = 0; i < r->nchunks; i++)
    if (!(r->chunks[i].borrowed = borrow_plaintext (e, r, &r->chunks[i])))
      n++;
  if (n && bufpool_get_many (&e->bufs, bufs, n) == -1)
    return -1;
  for (i = 0; i < r->nchunks; i++)
    if (!r->chunks[i].borrowed)
      r->chunks[i].data = bufs[j++];
  writeout_admit (e, r);
  return 0;
}

/* Runs [START, END) of R in waves. */
static int
run_range (struct engine *e, struct request *r, uint64_t start,
           uint64_t end, uint8_t *read_base, uint64_t read_offset)
{
  unsigned no_wq = r->write ? CT_NO_WRITE_WORKQUEUE : CT_NO_READ_WORKQUEUE;
  uint64_t pos = start;

  while (pos < end) {
    fill_wave (e, r, &pos, end, read_base, read_offset);
    if (r->write && admit_writes (e, r) == -1)
      return -1;
    if (e->kp.series != KSERIES_NONE && e->started) {
      if (kpipe_run_wave (e, r) == -1)
        return -1;
    }
    else if (run_wave (e, r, (e->cfg.flags & no_wq) != 0) == -1)
      return -1;
  }
  return 0;
}

static int
do_read (struct engine *e, uint8_t *buf, uint64_t count, uint64_t offset)
{
  const uint64_t ss = e->cfg.sector_size;
  uint64_t start = offset & ~(ss - 1);
  uint64_t end = (offset + count + ss - 1) & ~(ss - 1);
  uint64_t mid_start = start, mid_end = end, n;
  uint8_t edge[MAX_SECTOR_SIZE];
  struct request r = { .e = e, .write = false };

  if (offset != start) {
    if (read_plain_sector (e, edge, start) == -1)
      return -1;
    n = start + ss - offset < count ? start + ss - offset : count;
    memcpy (buf, edge + (offset - start), n);
    mid_start = start + ss;
  }
  if (offset + count != end && end - ss >= mid_start) {
    if (read_plain_sector (e, edge, end - ss) == -1)
      return -1;
    memcpy (buf + (end - ss - offset), edge, offset + count - (end - ss));
    mid_end = end - ss;
  }
  if (mid_start >= mid_end)
    return 0;
  return run_range (e, &r, mid_start, mid_end, buf, offset);
}

/* Reads the partial first and last sectors of a write and lays the
 * new bytes (or zeros) over them: the read half of read-modify-write. */
static int
merge_edges (struct engine *e, struct request *r, uint8_t *head,
             uint8_t *tail, const uint8_t *buf, uint64_t count,
             uint64_t offset)
{
  const uint64_t ss = e->cfg.sector_size;
  uint64_t stop = offset + count, n;

  if (offset != r->start) {
    if (read_plain_sector (e, head, r->start) == -1)
      return -1;
    n = (stop < r->start + ss ? stop : r->start + ss) - offset;
    if (buf)
      memcpy (head + (offset - r->start), buf, n);
    else
      memset (head + (offset - r->start), 0, n);
    r->head = head;
    atomic_fetch_add_explicit (&e->st.rmw_sectors, 1, memory_order_relaxed);
  }
  if (stop != r->end && !(r->head && r->end - ss == r->start)) {
    if (read_plain_sector (e, tail, r->end - ss) == -1)
      return -1;
    n = stop - (r->end - ss);
    if (buf)
      memcpy (tail, buf + (r->end - ss - offset), n);
    else
      memset (tail, 0, n);
    r->tail = tail;
    atomic_fetch_add_explicit (&e->st.rmw_sectors, 1, memory_order_relaxed);
  }
  return 0;
}

/* Writes BUF (or zeros when BUF is NULL) over [OFFSET, OFFSET+COUNT). */
static int
do_write (struct engine *e, const uint8_t *buf, uint64_t count,
          uint64_t offset, bool fua)
{
  const uint64_t ss = e->cfg.sector_size;
  uint8_t head[MAX_SECTOR_SIZE], tail[MAX_SECTOR_SIZE];
  struct request r = {
    .e = e, .write = true, .src = buf, .src_offset = offset,
    .start = offset & ~(ss - 1),
    .end = (offset + count + ss - 1) & ~(ss - 1),
    .sync = backend_submitter ().sync,
  };
  struct range_held held;
  int ret;

  rangelock_lock (&e->writes, &held, r.start, r.end);
  ret = merge_edges (e, &r, head, tail, buf, count, offset);
  if (ret == 0)
    ret = run_range (e, &r, r.start, r.end, NULL, 0);
  rangelock_unlock (&e->writes, &held);
  if (ret == 0 && fua)
    ret = backend_sync (e->backend);
  return ret;
}

static int
do_trim (struct engine *e, uint64_t count, uint64_t offset, bool fua)
{
  const uint64_t ss = e->cfg.sector_size;
  uint64_t start = (offset + ss - 1) & ~(ss - 1);
  uint64_t end = (offset + count) & ~(ss - 1);
  struct range_held held;
  int r;

  /* Only whole encryption sectors can be discarded; a trim is advisory,
   * so the partial edges are simply left alone. */
  if (end <= start)
    return 0;
  trace_queue (e, "D", start, end - start);
  rangelock_lock (&e->writes, &held, start, end);
  r = backend_discard (e->backend, end - start, e->cfg.data_offset + start);
  rangelock_unlock (&e->writes, &held);
  if (r == 0 && fua)
    r = backend_sync (e->backend);
  return r;
}

enum op { OP_READ, OP_WRITE, OP_ZERO, OP_TRIM };

static const char *const op_names[] = { "read", "write", "zero", "trim" };

/* Every request passes here: debug, statistics. */
static int
request (struct engine *e, enum op op, void *buf, uint32_t count,
         uint64_t offset, bool fua)
{
  int r;

  if (debug_on (e, ENGINE_DEBUG_QUEUE))
    nbdkit_debug ("queue: %s %" PRIu32 " bytes at %" PRIu64 "%s",
                  op_names[op], count, offset, fua ? " fua" : "");
  requests_enter (e);
  switch (op) {
  case OP_READ:
    r = count ? do_read (e, buf, count, offset) : 0;
    atomic_fetch_add_explicit (&e->st.reads, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&e->st.read_bytes, count,
                               memory_order_relaxed);
    break;
  case OP_WRITE:
  case OP_ZERO:
    r = count ? do_write (e, buf, count, offset, fua) : 0;
    atomic_fetch_add_explicit (op == OP_WRITE ? &e->st.writes
                               : &e->st.zeros, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&e->st.write_bytes, count,
                               memory_order_relaxed);
    break;
  default:
    r = do_trim (e, count, offset, fua);
    atomic_fetch_add_explicit (&e->st.trims, 1, memory_order_relaxed);
    break;
  }
  if (r == -1)
    atomic_fetch_add_explicit (&e->st.errors, 1, memory_order_relaxed);
  requests_leave (e);
  if (debug_on (e, ENGINE_DEBUG_QUEUE))
    nbdkit_debug ("queue: %s %" PRIu32 " bytes at %" PRIu64 " done: %s",
                  op_names[op], count, offset,
                  r == -1 ? strerror (errno) : "ok");
  return r;
}

int
engine_read (struct engine *e, void *buf, uint32_t count, uint64_t offset)
{
  return request (e, OP_READ, buf, count, offset, false);
}

int
engine_write (struct engine *e, const void *buf, uint32_t count,
              uint64_t offset, bool fua)
{
  return request (e, OP_WRITE, (void *) buf, count, offset, fua);
}

int
engine_zero (struct engine *e, uint32_t count, uint64_t offset, bool fua)
{
  return request (e, OP_ZERO, NULL, count, offset, fua);
}

int
engine_trim (struct engine *e, uint32_t count, uint64_t offset, bool fua)
{
  return request (e, OP_TRIM, NULL, count, offset, fua);
}

/* Writes are acknowledged only once their ciphertext is down, so every
 * write acknowledged before this flush is already in the backend: the
 * flush bypasses the queues and only syncs. */
int
engine_flush (struct engine *e)
{
  int r;

  requests_enter (e);
  trace_queue (e, "FWS", 0, 0);
  r = backend_sync (e->backend);
  atomic_fetch_add_explicit (&e->st.flushes, 1, memory_order_relaxed);
  requests_leave (e);
  return r;
}
