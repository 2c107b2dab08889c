/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Many threads at once, for each write-out policy and flag: overlapping
 * writes of whole ranges never tear, writes of neighbouring bytes in one
 * sector (read-modify-write) never lose each other's bytes, and a read
 * after an acknowledged write sees it.  Build with -fsanitize=thread to
 * check for data races (docs/engine.md). */
#include <unistd.h>

#include "engine-harness.h"

#define SIZE (2 << 20)          /* bytes of plaintext */
#define THREADS 8
#define ROUNDS 30
#define SHARED_OFF 100000       /* overlapping range: unaligned... */
#define SHARED_LEN 70001        /* ...and spanning many chunks */
#define NEIGHBOUR_OFF (1 << 20) /* one 4K region split in byte slices */
#define SLICE 97                /* bytes per thread in that region */
#define PRIVATE_OFF (1 << 20) + 65536   /* per-thread regions */
#define PRIVATE_LEN 30000

struct ctx
{
  struct engine *e;
  pthread_barrier_t barrier;
};

struct worker_arg
{
  struct ctx *ctx;
  unsigned id;
};

static void *
stress_main (void *arg)
{
  struct worker_arg *a = arg;
  struct engine *e = a->ctx->e;
  uint64_t seed = 0x1234567 + a->id * 7919;
  static __thread uint8_t buf[SHARED_LEN], back[SHARED_LEN];
  uint64_t priv = PRIVATE_OFF + a->id * PRIVATE_LEN;
  uint64_t slice = NEIGHBOUR_OFF + a->id * SLICE;
  unsigned round, i;

  for (round = 0; round < ROUNDS; round++) {
    /* Everyone writes the shared range with its own byte. */
    memset (buf, a->id * ROUNDS + round + 1, SHARED_LEN);
    REQUIRE (engine_write (e, buf, SHARED_LEN, SHARED_OFF, false) == 0,
           "shared write: %m");
    /* Its own slice of a shared sector. */
    memset (buf, round + 1, SLICE);
    REQUIRE (engine_write (e, buf, SLICE, slice, round % 3 == 0) == 0,
           "slice write: %m");
    /* Read after write on its own region. */
    for (i = 0; i < PRIVATE_LEN; i++)
      buf[i] = rnd (&seed);
    REQUIRE (engine_write (e, buf, PRIVATE_LEN, priv, false) == 0,
           "private write: %m");
    REQUIRE (engine_read (e, back, PRIVATE_LEN, priv) == 0, "read: %m");
    REQUIRE (memcmp (buf, back, PRIVATE_LEN) == 0,
           "thread %u: read after write differs", a->id);
    pthread_barrier_wait (&a->ctx->barrier);
    if (a->id == 0) {
      /* No torn result: the shared range is one writer's bytes. */
      REQUIRE (engine_read (e, back, SHARED_LEN, SHARED_OFF) == 0, "read");
      for (i = 1; i < SHARED_LEN; i++)
        REQUIRE (back[i] == back[0], "torn overlapping write at byte %u", i);
      if (round % 10 == 0)
        REQUIRE (engine_flush (e) == 0, "flush: %m");
    }
    pthread_barrier_wait (&a->ctx->barrier);
  }
  REQUIRE (engine_read (e, back, SLICE, slice) == 0, "slice read");
  for (i = 0; i < SLICE; i++)
    REQUIRE (back[i] == ROUNDS, "thread %u lost its byte %u of the "
           "shared sector", a->id, i);
  return NULL;
}

static void
run_on (bool async, const char *sched, unsigned flags, unsigned ss,
        uint64_t chunk)
{
  struct backend *b = async ? mem_open_async (SIZE) : mem_open (SIZE);
  struct sector_cipher *c = test_cipher (ss);
  struct engine_config cfg = {
    .size = SIZE, .sector_size = ss, .workers = 3, .scheduler = sched,
    .flags = flags, .max_read_size = chunk, .max_write_size = chunk,
    .max_inflight = 16 * chunk,
  };
  struct ctx ctx;
  struct worker_arg args[THREADS];
  pthread_t t[THREADS];
  struct engine_stats st;
  char line[1024];
  unsigned i;

  ctx.e = engine_new (&cfg, c, b);
  REQUIRE (ctx.e && engine_start (ctx.e) == 0, "engine");
  pthread_barrier_init (&ctx.barrier, NULL, THREADS);
  for (i = 0; i < THREADS; i++) {
    args[i] = (struct worker_arg) { .ctx = &ctx, .id = i };
    REQUIRE (pthread_create (&t[i], NULL, stress_main, &args[i]) == 0, "t");
  }
  for (i = 0; i < THREADS; i++)
    pthread_join (t[i], NULL);
  pthread_barrier_destroy (&ctx.barrier);
  engine_get_stats (ctx.e, &st);
  printf ("%s%s flags %#x ss %u: %s\n", async ? "async " : "", sched,
          flags, ss, engine_format_stats (&st, line, sizeof line));
  REQUIRE (st.errors == 0, "no request failed");
  if (async) {
    printf ("  writes in flight below the engine at once: %u\n",
            mem_of (b)->async_max);
    REQUIRE (mem_of (b)->async_max > 1, "writes were never in flight "
             "together: the write-out stage waited for each");
  }
  engine_free (ctx.e);
  sector_cipher_free (c);
  backend_close (b);
}

static void
run (const char *sched, unsigned flags, unsigned ss, uint64_t chunk)
{
  run_on (false, sched, flags, ss, chunk);
  /* The same with writes completing later and out of order below the
   * engine: acknowledgements, range locks and read-after-write must not
   * depend on the backend writing synchronously. */
  run_on (true, sched, flags, ss, chunk);
}

int
main (void)
{
  run ("sorted", 0, 512, 8192);
  run ("fifo", 0, 4096, 16384);
  run ("batch", 0, 512, 4096);
  run ("sorted", CT_SAME_CPU_CRYPT, 4096, 8192);
  run ("sorted", CT_SUBMIT_FROM_CRYPT_CPUS, 512, 4096);
  run ("fifo", CT_NO_READ_WORKQUEUE | CT_NO_WRITE_WORKQUEUE, 512, 8192);
  printf ("ok\n");
  return 0;
}
