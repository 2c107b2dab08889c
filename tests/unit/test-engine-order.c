/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's ordering guarantees, made deterministic by holding the
 * backend's writes (one round written at a time, so that a held write
 * holds the write-out stage): the sorted policy (and rbtree, from the
 * writer thread alone) dispatches a round in ascending sector order
 * and fifo in arrival order; batch caps a round and sweeps
 * upwards, so that lower arrivals never starve a chunk it left over,
 * and a rewrite just behind its head still goes out; a write is
 * acknowledged only once its ciphertext is in the backend; FUA and
 * flush sync; the in-flight cap bounds ciphertext buffers; without a
 * limit rounds are written at once, with one the rest wait for it; a
 * write waits for a lower one still in crypto only within the hold
 * window (the in-flight cap), its own stream's span.  (Suspend is
 * the device-mapper core's: test-dm.c.) */
#include <unistd.h>

#include "../../scheduler/internal.h"
#include "../../scheduler/policy.h"
#include "engine-harness.h"

#define SIZE (1 << 20)          /* bytes of plaintext */
#define CHUNK 4096              /* bytes per chunk */
#define NWRITES 16              /* writes queued behind a held one */

struct job
{
  struct engine *e;
  uint64_t offset, len;
  bool fua, done;
  int r;
  pthread_t thread;
  uint8_t data[CHUNK * 16];
};

static void *
job_main (void *arg)
{
  struct job *j = arg;

  j->r = engine_write (j->e, j->data, j->len, j->offset, j->fua);
  __atomic_store_n (&j->done, true, __ATOMIC_RELEASE);
  return NULL;
}

static void
job_start (struct job *j, struct engine *e, uint64_t offset, uint64_t len)
{
  j->e = e;
  j->offset = offset;
  j->len = len;
  j->done = false;
  memset (j->data, offset / CHUNK + 1, len);
  REQUIRE (pthread_create (&j->thread, NULL, job_main, j) == 0, "thread");
}

static bool
job_done (struct job *j)
{
  return __atomic_load_n (&j->done, __ATOMIC_ACQUIRE);
}

static void
job_join (struct job *j)
{
  pthread_join (j->thread, NULL);
  REQUIRE (j->r == 0, "write at %llu failed", (unsigned long long) j->offset);
}

static struct engine *
make_engine_rounds (struct backend *b, struct sector_cipher *c,
                    const char *sched, uint64_t max_inflight,
                    unsigned max_write_rounds)
{
  struct engine_config cfg = {
    .size = SIZE, .sector_size = 512, .workers = 2, .scheduler = sched,
    .max_read_size = CHUNK, .max_write_size = CHUNK,
    .max_inflight = max_inflight, .max_write_rounds = max_write_rounds,
  };
  struct engine *e = engine_new (&cfg, c, b);

  REQUIRE (e && engine_start (e) == 0, "engine");
  return e;
}

static struct engine *
make_engine (struct backend *b, struct sector_cipher *c, const char *sched,
             uint64_t max_inflight)
{
  return make_engine_rounds (b, c, sched, max_inflight, 1);
}

/* Polls until the write-out queue holds N chunks. */
static void
wait_queued (struct engine *e, unsigned n)
{
  struct engine_stats st;
  int i;

  for (i = 0; i < 20000; i++) {
    engine_get_stats (e, &st);
    if (st.writeout_depth >= n)
      return;
    usleep (1000);
  }
  REQUIRE (0, "write-out queue never reached %u chunks", n);
}

/* One write holds the writer in the backend; NWRITES more arrive one by
 * one in a shuffled order; on release the next round is dispatched in
 * the policy's order.  Returns how many of that round ascend. */
static unsigned
round_order (const char *sched, bool expect_sorted)
{
  static const unsigned shuffled[NWRITES] = {
    9, 3, 14, 1, 7, 12, 5, 16, 2, 11, 8, 15, 4, 10, 13, 6,
  };
  static struct job jobs[NWRITES + 1];
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine (b, c, sched, 0);
  struct mem *m = mem_of (b);
  unsigned i, ascending = 0;

  mem_hold (b, true);
  job_start (&jobs[0], e, 100 * CHUNK, CHUNK);
  mem_wait_held (b, 1);
  for (i = 0; i < NWRITES; i++) {
    job_start (&jobs[i + 1], e, shuffled[i] * CHUNK, CHUNK);
    wait_queued (e, i + 1);
  }
  REQUIRE (!job_done (&jobs[1]), "a write was acknowledged while held");
  mem_hold (b, false);
  for (i = 0; i <= NWRITES; i++)
    job_join (&jobs[i]);
  REQUIRE (m->nlog == NWRITES + 1, "%u writes reached the backend", m->nlog);
  for (i = 1; i <= NWRITES; i++) {
    uint64_t want = expect_sorted ? i * CHUNK : shuffled[i - 1] * CHUNK;
    REQUIRE (m->log[i] == want, "%s: dispatch %u at %llu, expected %llu",
           sched, i, (unsigned long long) m->log[i],
           (unsigned long long) want);
    ascending += i > 1 && m->log[i] == m->log[i - 1] + CHUNK;
  }
  printf ("%s: %u of %u dispatches continue the previous one\n", sched,
          ascending, NWRITES - 1);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
  return ascending;
}

#define JOBS 5                  /* writes of 16 chunks behind a held one */

/* 80 chunks queue behind a held write, in writes of 16 at shuffled
 * offsets; on release they reach the backend ascending, in rounds of at
 * most the policy's max_round.  Returns the largest round. */
static unsigned
round_cap (const char *sched)
{
  static const unsigned shuffled[JOBS] = { 3, 0, 4, 1, 2 };
  static struct job jobs[JOBS + 1];
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine (b, c, sched, 0);
  struct mem *m = mem_of (b);
  struct engine_stats st;
  unsigned i;

  mem_hold (b, true);
  job_start (&jobs[0], e, 100 * CHUNK, CHUNK);
  mem_wait_held (b, 1);
  for (i = 0; i < JOBS; i++)
    job_start (&jobs[i + 1], e, shuffled[i] * 16 * CHUNK, 16 * CHUNK);
  wait_queued (e, JOBS * 16);
  mem_hold (b, false);
  for (i = 0; i <= JOBS; i++)
    job_join (&jobs[i]);
  REQUIRE (m->nlog == JOBS * 16 + 1, "%u writes reached the backend",
           m->nlog);
  for (i = 1; i <= JOBS * 16; i++)
    REQUIRE (m->log[i] == (i - 1) * CHUNK, "%s: dispatch %u at %llu", sched,
             i, (unsigned long long) m->log[i]);
  engine_get_stats (e, &st);
  printf ("%s: %u chunks queued at once: rounds %llu, the largest %u "
          "chunks\n", sched, JOBS * 16, (unsigned long long) st.rounds - 1,
          st.batch_max);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
  return st.batch_max;
}

#define SWEEP_ROUNDS 50

/* The stage's part played by hand: a chunk at the top waits while, each
 * round, more chunks than a round takes arrive below everything before;
 * every round orders what was left plus the arrivals and dispatches the
 * first CAP.  Returns the round the top chunk went in (0: never). */
static unsigned
top_chunk_round (const struct writeout_policy *p, unsigned cap)
{
  static struct wo_item items[1 + SWEEP_ROUNDS * 65];
  void *state = p->create ? p->create () : NULL;
  struct wo_item *left, **tail, *it;
  uint64_t low = 1 << 30, head = UINT64_MAX;
  unsigned round, i, n = 0, found = 0;

  REQUIRE (cap < 65 && (state || !p->create), "%s: create", p->name);
  items[n] = (struct wo_item) { .sector = 1ULL << 40, .nsect = 8 };
  left = &items[n++];
  for (round = 1; round <= SWEEP_ROUNDS && !found; round++) {
    for (tail = &left; *tail; tail = &(*tail)->next)
      ;
    for (i = 0; i <= cap; i++) {
      low -= 8;
      items[n] = (struct wo_item) { .sector = low, .nsect = 8 };
      *tail = &items[n++];
      tail = &(*tail)->next;
    }
    left = p->order (state, left, head);
    for (i = 0, it = left; i < cap; i++, it = it->next) {
      if (it == &items[0])
        found = round;
      head = it->sector + it->nsect;
    }
    left = it;
  }
  if (p->destroy)
    p->destroy (state);
  return found;
}

/* A sweeping policy puts the sector just behind the head last in its
 * order (position UINT64_MAX); a rewrite of the last sector written
 * must still go out, with nothing else pending. */
static void
test_rewrite_behind_head (const char *sched)
{
  static struct job j;
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine (b, c, sched, 0);
  unsigned i;

  memset (j.data, 1, 512);
  REQUIRE (engine_write (e, j.data, 512, 8 * CHUNK, false) == 0, "write");
  job_start (&j, e, 8 * CHUNK, 512);
  for (i = 0; i < 2000 && !job_done (&j); i++)
    usleep (10000);
  REQUIRE (job_done (&j), "%s: a rewrite of the last sector written never "
           "completed", sched);
  job_join (&j);
  REQUIRE (mem_of (b)->nlog == 2, "two writes");
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* Acknowledged means in the backend; FUA and flush reach its sync. */
static void
test_ack_fua_flush (void)
{
  static struct job j;
  static uint8_t plain[CHUNK * 4];
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine (b, c, NULL, 0);
  struct mem *m = mem_of (b);
  unsigned syncs;

  mem_hold (b, true);
  job_start (&j, e, 0, sizeof plain);
  mem_wait_held (b, 1);
  usleep (20000);
  REQUIRE (!job_done (&j), "write acknowledged before its ciphertext is down");
  mem_hold (b, false);
  job_join (&j);
  decrypt_backend (b, c, 0, plain, sizeof plain);
  REQUIRE (memcmp (plain, j.data, sizeof plain) == 0,
         "acknowledged write is not in the backend");

  syncs = m->syncs;
  j.fua = true;
  job_start (&j, e, CHUNK * 8, CHUNK);
  job_join (&j);
  REQUIRE (m->syncs == syncs + 1, "FUA write synced the backend once");
  REQUIRE (engine_flush (e) == 0 && m->syncs == syncs + 2, "flush syncs");
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* With the cap at two chunks, two 16-chunk writes never have more than
 * two ciphertext buffers out between them. */
static void
test_backpressure (void)
{
  static struct job j, k;
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine (b, c, NULL, 2 * CHUNK);
  struct engine_stats st;

  mem_hold (b, true);
  job_start (&j, e, 0, 16 * CHUNK);
  mem_wait_held (b, 1);
  job_start (&k, e, 32 * CHUNK, 16 * CHUNK);
  usleep (50000);
  engine_get_stats (e, &st);
  REQUIRE (st.buffers_max == 2, "buffers out while held: %u", st.buffers_max);
  REQUIRE (st.buffer_waits > 0, "the cap held an encryption back");
  mem_hold (b, false);
  job_join (&j);
  job_join (&k);
  engine_get_stats (e, &st);
  REQUIRE (st.buffers_max == 2, "buffers out at most: %u", st.buffers_max);
  printf ("backpressure: %llu waits at a cap of 2 buffers\n",
          (unsigned long long) st.buffer_waits);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* Rounds written at once on a backend without a queue of its own:
 * with no limit three writes from three threads are all in the backend
 * together, none waiting for another's; with a limit of two, the third
 * waits in the stage until one of them is down, and is then written. */
static void
test_rounds_in_flight (unsigned limit)
{
  static struct job jobs[3];
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine_rounds (b, c, NULL, 0, limit);
  struct mem *m = mem_of (b);
  unsigned i, at_once = limit ? limit : 3;

  mem_hold (b, true);
  for (i = 0; i < 3; i++) {
    job_start (&jobs[i], e, (8 + 4 * i) * CHUNK, CHUNK);
    if (i < at_once)
      mem_wait_held (b, i + 1);
  }
  if (limit) {
    wait_queued (e, 3 - limit);
    usleep (20000);
    pthread_mutex_lock (&m->lock);
    REQUIRE (m->held == limit, "%u writes in the backend at a limit of %u",
             m->held, limit);
    pthread_mutex_unlock (&m->lock);
    REQUIRE (!job_done (&jobs[2]), "a write beyond the limit returned");
  }
  mem_hold (b, false);
  for (i = 0; i < 3; i++)
    job_join (&jobs[i]);
  REQUIRE (m->nlog == 3, "%u writes reached the backend", m->nlog);
  printf ("rounds written at once, limit %u: %u\n", limit, at_once);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* Polls up to ten seconds for J to finish. */
static bool
job_finishes (struct job *j)
{
  int i;

  for (i = 0; i < 1000 && !job_done (j); i++)
    usleep (10000);
  return job_done (j);
}

/* A chunk registered as in crypto at sector PENDING (as a write wave
 * registers its chunks before encrypting them; another far above it),
 * with a hold window of 32 sectors (a cap of four 4 KiB chunks): a
 * write just above it waits for it, and so does the next write of that
 * stream, although beyond the window of the chunk in crypto; a write
 * below it or beyond the window goes out meanwhile, and the two that
 * waited go, in order, once the chunks in crypto are gone. */
static void
test_hold_window (const char *sched)
{
  static struct job below, far, near, next;
  static struct request r;
  const uint64_t pending = 64, window = 4 * CHUNK / 512;
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = make_engine (b, c, sched, 4 * CHUNK);
  unsigned i;

  memset (&r, 0, sizeof r);
  r.e = e;
  r.write = true;
  /* A second chunk in crypto far above puts the writes below between
   * the lowest and the highest chunk in crypto. */
  r.nchunks = 2;
  for (i = 0; i < r.nchunks; i++) {
    r.chunks[i].req = &r;
    r.chunks[i].wo.sector = i ? 10 * pending : pending;
    r.chunks[i].wo.nsect = CHUNK / 512;
  }
  writeout_admit (e, &r);
  REQUIRE (r.chunks[0].encrypting, "%s: the chunk is registered", sched);
  /* Far first: below leaves the head of batch's sweep under the rest. */
  job_start (&far, e, (pending + window) * 512, CHUNK);
  REQUIRE (job_finishes (&far), "%s: a write %llu sectors above a chunk in "
           "crypto, beyond the window, waited for it", sched,
           (unsigned long long) window);
  job_join (&far);
  job_start (&below, e, 0, CHUNK);
  REQUIRE (job_finishes (&below), "%s: a write below a chunk in crypto "
           "waited for it", sched);
  job_join (&below);
  job_start (&near, e, (pending + window - CHUNK / 512) * 512, CHUNK);
  usleep (50000);
  REQUIRE (!job_done (&near), "%s: a write inside the window went out "
           "before the chunk in crypto below it", sched);
  job_start (&next, e, (pending + window) * 512 + CHUNK, CHUNK);
  usleep (50000);
  REQUIRE (!job_done (&next), "%s: a stream's write overtook the one "
           "before it, held back", sched);
  writeout_cancel (e, &r.chunks[0]);
  writeout_cancel (e, &r.chunks[1]);
  REQUIRE (job_finishes (&near), "%s: the held write never went out", sched);
  REQUIRE (job_finishes (&next), "%s: the write behind it never went out",
           sched);
  job_join (&near);
  job_join (&next);
  REQUIRE (mem_of (b)->nlog == 4, "%s: %u writes reached the backend", sched,
           mem_of (b)->nlog);
  REQUIRE (mem_of (b)->log[2] == near.offset
           && mem_of (b)->log[3] == next.offset,
           "%s: the held writes went out in order", sched);
  printf ("hold window, %s: %llu sectors\n", sched,
          (unsigned long long) window);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* Freeing the engine right after a write whose chunks a worker
 * encrypted must neither hang nor touch freed memory: a thread may
 * still be finishing its part after the request returned (this once
 * hung the writer's shutdown). */
static void
test_free_after_worker_dispatch (void)
{
  static uint8_t data[3 * CHUNK];
  struct backend *b = mem_open (SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine_config cfg = {
    .size = SIZE, .sector_size = 512, .workers = 1,
    .flags = CT_SAME_CPU_CRYPT, .max_write_size = CHUNK,
  };
  struct engine *e;
  unsigned i;

  for (i = 0; i < 300; i++) {
    e = engine_new (&cfg, c, b);
    REQUIRE (e && engine_start (e) == 0, "engine");
    REQUIRE (engine_write (e, data, sizeof data, i * 512, false) == 0,
           "write: %m");
    engine_free (e);
  }
  sector_cipher_free (c);
  backend_close (b);
}

int
main (void)
{
  unsigned sorted = round_order ("sorted", true);
  unsigned fifo = round_order ("fifo", false);
  unsigned batch = round_order ("batch", true);
  unsigned rbtree = round_order ("rbtree", true);
  unsigned cap = writeout_policy_batch.max_round, top, top_sorted;

  REQUIRE (sorted == NWRITES - 1 && fifo < sorted, "sorted beats fifo");
  REQUIRE (batch == sorted, "batch sorts a small round as sorted does");
  REQUIRE (rbtree == sorted, "rbtree sorts a round as sorted does");
  REQUIRE (cap > 0 && cap < JOBS * 16, "batch caps a round at %u", cap);
  REQUIRE (round_cap ("sorted") == JOBS * 16, "sorted: one round");
  REQUIRE (round_cap ("batch") == cap, "batch: rounds of at most %u", cap);
  top = top_chunk_round (&writeout_policy_batch, cap);
  top_sorted = top_chunk_round (&writeout_policy_sorted, cap);
  printf ("a chunk left over, %u lower ones arriving per round of %u: "
          "batch dispatches it in round %u, sorted order with the same cap "
          "in round %u (0: not in %u)\n", cap + 1, cap, top, top_sorted,
          SWEEP_ROUNDS);
  REQUIRE (top == 2 && top_sorted == 0, "the sweep reaches a left-over "
           "chunk (round %u; sorted %u)", top, top_sorted);
  test_rewrite_behind_head ("batch");
  test_ack_fua_flush ();
  test_backpressure ();
  test_rounds_in_flight (0);
  test_rounds_in_flight (2);
  test_hold_window ("sorted");
  test_hold_window ("batch");
  alarm (120);                  /* a hang is a failure, not a stall */
  test_free_after_worker_dispatch ();
  printf ("ok\n");
  return 0;
}
