/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What is done to one chunk: a read is fetched by the request's thread
 * (chunk_fetch) and decrypted in place in the caller's buffer; a write
 * is encrypted into a pool buffer (never the caller's, which nbdkit
 * owns; with cipher_null, whose ciphertext is the plaintext, it is
 * written from the caller's bytes instead) and handed to the write-out
 * stage, which calls
 * chunk_dispatch_write.  Workers only crypt, as kcryptd does: a stalled
 * device never holds a worker, so reads beside a stalled write go on.
 * The last chunk of a request to finish wakes the request's thread. */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define SECTOR_SHIFT 9          /* 512-byte sectors */

void
chunk_fetch (struct engine *e, struct chunk *c)
{
  if (backend_pread (e->backend, c->data, c->len,
                     e->cfg.data_offset + c->offset) == -1)
    c->err = errno;
}

static int
decrypt_chunk (struct engine *e, struct chunk *c)
{
  if (c->err)
    return c->err;
  if (sector_cipher_decrypt (e->cipher, c->data, c->data, c->len,
                             c->offset >> SECTOR_SHIFT) == -1)
    return errno;
  return 0;
}

/* The plaintext at POS (inside the request's aligned range), as a
 * pointer to at most LIMIT - POS contiguous bytes; returns their count. */
static size_t
plaintext_at (const struct request *r, uint64_t pos, uint64_t limit,
              const uint8_t **src)
{
  struct engine *e = r->e;
  unsigned ss = e->cfg.sector_size;
  uint64_t mid_end = r->tail ? r->end - ss : r->end;

  if (r->head && pos == r->start) {
    *src = r->head;
    return ss;
  }
  if (r->tail && pos == mid_end) {
    *src = r->tail;
    return ss;
  }
  if (limit > mid_end)
    limit = mid_end;
  *src = r->src ? r->src + (pos - r->src_offset) : e->zeros;
  return limit - pos;
}

static int
encrypt_chunk (struct engine *e, struct chunk *c)
{
  uint64_t pos = c->offset, end = c->offset + c->len;
  uint8_t *out = c->data;
  const uint8_t *src;
  size_t n;

  while (pos < end) {
    n = plaintext_at (c->req, pos, end, &src);
    if (sector_cipher_encrypt (e->cipher, out, src, n,
                               pos >> SECTOR_SHIFT) == -1)
      return -1;
    pos += n;
    out += n;
  }
  return 0;
}

/* After a write chunk's encryption: to the write-out stage, or with
 * ERR, done. */
static void
encrypted (struct engine *e, struct chunk *c, int err, bool on_worker)
{
  if (err) {
    writeout_cancel (e, c);
    if (!c->borrowed)
      bufpool_put (&e->bufs, c->data);
    chunk_done (c, err);
    return;
  }
  writeout_submit (e, c, on_worker);
}

void
chunk_run (struct chunk *c, bool on_worker)
{
  struct engine *e = c->req->e;
  uint64_t nth, clock;
  int err;

  nth = atomic_fetch_add_explicit (on_worker ? &e->st.worker_chunks
                                   : &e->st.inline_chunks, 1,
                                   memory_order_relaxed);
  clock = c->err ? 0 : crypt_clock_start (nth, 1);
  if (!c->req->write)
    err = decrypt_chunk (e, c);
  else
    err = encrypt_chunk (e, c) == -1 ? (errno ? errno : EIO) : 0;
  if (clock)
    crypt_clock_stop (e, c->req->write, c->len, clock);
  if (!c->req->write) {
    chunk_done (c, err);
    return;
  }
  encrypted (e, c, err, on_worker);
}

/* How many write chunks from C on (at most N) one encryption call can
 * take: each a piece of the caller's bytes that follows the one before,
 * in a pool buffer, no more bytes in all than the cipher gains from
 * (sector_cipher_batch_bytes).  Sets *SRC to the first's plaintext. */
static unsigned
batch_length (struct engine *e, const struct chunk *c, unsigned n,
              const uint8_t **src)
{
  size_t most = sector_cipher_batch_bytes (e->cipher), bytes = 0;
  const uint8_t *piece, *next = NULL;
  unsigned k;

  for (k = 0; k < n; k++) {
    if (c[k].err || c[k].borrowed || c[k].req->src == NULL ||
        bytes + c[k].len > most ||
        plaintext_at (c[k].req, c[k].offset, c[k].offset + c[k].len,
                      &piece) != c[k].len ||
        (k > 0 && piece != next))
      break;
    if (k == 0)
      *src = piece;
    next = piece + c[k].len;
    bytes += c[k].len;
  }
  return k;
}

/* Encrypts the N write chunks from C on in one call (batch_length). */
static void
run_batch (struct engine *e, struct chunk *c, unsigned n, const uint8_t *src)
{
  uint8_t *dsts[WAVE_CHUNKS];
  size_t lens[WAVE_CHUNKS], bytes = 0;
  uint64_t nth, clock;
  unsigned k;
  int err;

  for (k = 0; k < n; k++) {
    dsts[k] = c[k].data;
    lens[k] = c[k].len;
    bytes += c[k].len;
  }
  nth = atomic_fetch_add_explicit (&e->st.inline_chunks, n,
                                   memory_order_relaxed);
  atomic_fetch_add_explicit (&e->st.batched_chunks, n, memory_order_relaxed);
  clock = crypt_clock_start (nth, n);
  err = sector_cipher_encrypt_pieces (e->cipher, dsts, lens, n, src,
                                      c[0].offset >> SECTOR_SHIFT) == -1
    ? (errno ? errno : EIO) : 0;
  if (clock)
    crypt_clock_stop (e, true, bytes, clock);
  for (k = 0; k < n; k++)
    encrypted (e, &c[k], err, false);
}

void
chunk_run_inline (struct chunk *c, unsigned n)
{
  struct engine *e = n ? c->req->e : NULL;
  const uint8_t *src = NULL;
  unsigned i, len;

  for (i = 0; i < n; i += len) {
    len = c->req->write ? batch_length (e, &c[i], n - i, &src) : 0;
    if (len > 1)
      run_batch (e, &c[i], len, src);
    else {
      chunk_run (&c[i], false);
      len = 1;
    }
  }
}

/* The completion of a dispatched write, in whatever thread the backend
 * completes it: the buffer goes back, then the chunk is done (and may be
 * gone at once: its request's thread may return). */
static void
write_done (void *opaque, int err)
{
  struct chunk *c = opaque;
  struct engine *e = c->req->e;

  if (!c->borrowed)
    bufpool_put (&e->bufs, c->data);
  chunk_done (c, err);
}

/* Counted in dispatch order, which is what the policy decided. */
static uint64_t
count_dispatch (struct engine *e, struct chunk *c)
{
  uint64_t off = e->cfg.data_offset + c->offset;
  uint64_t prev_end;

  prev_end = atomic_exchange_explicit (&e->st.last_write_end, off + c->len,
                                       memory_order_relaxed);
  atomic_fetch_add_explicit (&e->st.dispatches, 1, memory_order_relaxed);
  if (prev_end == off)
    atomic_fetch_add_explicit (&e->st.sequential, 1, memory_order_relaxed);
  return off;
}

/* The write itself may still be queued below when this returns.  The
 * clone is sync if its request is, in whichever thread submits it (the
 * request's, kcryptd, dmcrypt_write): clone_init copies the bio's
 * bi_rw (drivers/md/dm-crypt.c, 2.6.32 to 4.x). */
void
chunk_dispatch_write (struct engine *e, struct chunk *c)
{
  uint64_t off = count_dispatch (e, c);
  bool was = backend_submitter_set_sync (c->req->sync);

  backend_submit_write (e->backend, c->data, c->len, off, write_done, c);
  backend_submitter_set_sync (was);
}

/* The two halves of chunk_dispatch_write on a backend that writes
 * synchronously: the dispatch in the policy's order, then the write,
 * which the write-out stage performs once it let go of its token. */
void
chunk_note_write (struct engine *e, struct chunk *c)
{
  backend_note_write (e->backend, c->len, count_dispatch (e, c));
}

void
chunk_write_noted (struct engine *e, struct chunk *c)
{
  uint64_t off = e->cfg.data_offset + c->offset;

  write_done (c, backend_write_noted (e->backend, c->data, c->len, off)
              == -1 ? errno : 0);
}

static long
futex (atomic_uint *addr, int op, unsigned val)
{
  return syscall (SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* The owner sets this bit in pending before it sleeps, so that the last
 * chunk makes the wake-up system call only when someone is asleep: a
 * request whose chunks all ran on its own thread makes none. */
#define PENDING_SLEEPER 0x80000000u

/* After the decrement the request may be gone (its thread saw zero and
 * returned): only the futex address is touched, which is harmless. */
void
chunk_done (struct chunk *c, int err)
{
  struct request *r = c->req;

  c->err = err;
  if (atomic_fetch_sub_explicit (&r->pending, 1, memory_order_acq_rel) ==
      (PENDING_SLEEPER | 1))
    futex (&r->pending, FUTEX_WAKE_PRIVATE, 1);
}

/* Waits for every chunk; returns 0 or -1 with the first chunk's errno. */
int
request_wait (struct request *r)
{
  unsigned v = atomic_load_explicit (&r->pending, memory_order_acquire), i;

  while ((v & ~PENDING_SLEEPER) != 0) {
    if ((v & PENDING_SLEEPER) == 0) {
      /* On failure V is reloaded: a chunk finished meanwhile. */
      if (!atomic_compare_exchange_weak_explicit (&r->pending, &v,
                                                  v | PENDING_SLEEPER,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire))
        continue;
      v |= PENDING_SLEEPER;
    }
    futex (&r->pending, FUTEX_WAIT_PRIVATE, v);
    v = atomic_load_explicit (&r->pending, memory_order_acquire);
  }
  for (i = 0; i < r->nchunks; i++)
    if (r->chunks[i].err) {
      errno = r->chunks[i].err;
      return -1;
    }
  return 0;
}
