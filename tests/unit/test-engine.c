/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine against a model: random reads, writes, zeros and trims of
 * any alignment, under every write-out policy, dm-crypt flag, worker
 * count, chunk size and sector size, with XTS and with cipher_null
 * (whose writes go out from the caller's bytes); the backend's
 * ciphertext is then decrypted independently and compared with the
 * model, and errors must reach exactly the request that hit them. */
#include <sched.h>

#include "engine-harness.h"
#include "../../scheduler/bufpool.h"

#define DATA_OFFSET 8192        /* bytes of "header" before the data */
#define SIZE (4 << 20)          /* bytes of plaintext */
#define OPS 400                 /* random requests per configuration */

struct setup
{
  const char *name;
  const char *scheduler;
  unsigned flags, workers;
  uint64_t chunk;               /* max read/write size, bytes */
  bool offload_all;
};

static const struct setup setups[] = {
  { "default", NULL, 0, 0, 0, false },
  { "fifo, 3 workers", "fifo", 0, 3, 0, false },
  { "sorted, 1 worker, 4K chunks", "sorted", 0, 1, 4096, false },
  { "batch, 2 workers, 4K chunks", "batch", 0, 2, 4096, false },
  { "offload all, 8K chunks", "sorted", 0, 2, 8192, true },
  { "no_read_workqueue", NULL, CT_NO_READ_WORKQUEUE, 2, 16384, false },
  { "no_write_workqueue", NULL, CT_NO_WRITE_WORKQUEUE, 2, 16384, false },
  { "same_cpu_crypt", NULL, CT_SAME_CPU_CRYPT, 3, 8192, false },
  { "submit_from_crypt_cpus", NULL, CT_SUBMIT_FROM_CRYPT_CPUS, 2, 8192,
    false },
  { "high_priority, both workqueues off", "fifo",
    CT_HIGH_PRIORITY | CT_NO_READ_WORKQUEUE | CT_NO_WRITE_WORKQUEUE, 1,
    0, false },
};

static uint8_t model[SIZE], got[SIZE], buf[1 << 20];

/* The identity cipher: chunks are written from the request's bytes. */
static struct sector_cipher *
null_cipher (unsigned sector_size)
{
  struct sector_cipher_params p = {
    .spec = "cipher_null-ecb", .sector_size = sector_size,
  };

  return sector_cipher_new (&p);
}

static void
random_request (struct engine *e, uint64_t *seed, unsigned ss)
{
  unsigned kind = rnd (seed) % 10;
  uint64_t len = 1 + rnd (seed) % (rnd (seed) % 4 ? 20000 : sizeof buf);
  uint64_t off = rnd (seed) % (SIZE - len);
  uint64_t i;

  if (rnd (seed) % 2) {         /* half the requests sector-aligned */
    off &= ~(uint64_t) (ss - 1);
    len = (len + ss - 1) & ~(uint64_t) (ss - 1);
    if (off + len > SIZE)
      len = SIZE - off;
  }
  if (kind < 4) {
    REQUIRE (engine_read (e, buf, len, off) == 0, "read: %m");
    REQUIRE (memcmp (buf, model + off, len) == 0,
           "read of %llu at %llu differs", (unsigned long long) len,
           (unsigned long long) off);
  }
  else if (kind < 8) {
    for (i = 0; i < len; i++)
      buf[i] = rnd (seed);
    REQUIRE (engine_write (e, buf, len, off, kind == 7) == 0, "write: %m");
    memcpy (model + off, buf, len);
  }
  else {
    REQUIRE (engine_zero (e, len, off, false) == 0, "zero: %m");
    memset (model + off, 0, len);
  }
}

static void
run_setup (const struct setup *s, unsigned ss, bool null, uint64_t seed)
{
  struct backend *b = mem_open (DATA_OFFSET + SIZE);
  struct sector_cipher *c = null ? null_cipher (ss) : test_cipher (ss);
  struct engine_config cfg = {
    .data_offset = DATA_OFFSET, .size = SIZE, .sector_size = ss,
    .workers = s->workers, .scheduler = s->scheduler, .flags = s->flags,
    .max_read_size = s->chunk, .max_write_size = s->chunk,
    .offload_all = s->offload_all, .max_inflight = 1 << 20,
  };
  struct engine *e;
  struct engine_stats st;
  char line[1024];
  unsigned i;

  REQUIRE (c, "cipher");
  e = engine_new (&cfg, c, b);
  REQUIRE (e, "engine_new");
  REQUIRE (engine_start (e) == 0, "engine_start");
  /* The model starts as what the zeroed backend decrypts to. */
  decrypt_backend (b, c, DATA_OFFSET, model, SIZE);
  for (i = 0; i < OPS; i++)
    random_request (e, &seed, ss);
  REQUIRE (engine_flush (e) == 0, "flush: %m");
  decrypt_backend (b, c, DATA_OFFSET, got, SIZE);
  REQUIRE (memcmp (got, model, SIZE) == 0, "%s: backend differs", s->name);
  REQUIRE (mem_of (b)->syncs >= 1, "flush reached the backend");
  engine_get_stats (e, &st);
  printf ("%-40s ss %4u%s: %s\n", s->name, ss, null ? " null" : "",
          engine_format_stats (&st, line, sizeof line));
  REQUIRE (st.reads + st.writes + st.zeros == OPS, "request count");
  if (s->flags & CT_NO_WRITE_WORKQUEUE)
    REQUIRE (st.rounds == 0, "no_write_workqueue bypasses the writer");
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* A started engine of 512-byte sectors, two workers and CHUNK-byte
 * chunks over B. */
static struct engine *
small_engine (struct sector_cipher *c, struct backend *b, uint64_t chunk)
{
  struct engine_config cfg = {
    .data_offset = DATA_OFFSET, .size = SIZE, .sector_size = 512,
    .workers = 2, .max_write_size = chunk, .max_read_size = chunk,
  };
  struct engine *e;

  REQUIRE (c, "cipher");
  e = engine_new (&cfg, c, b);
  REQUIRE (e && engine_start (e) == 0, "engine");
  return e;
}

/* CBC writes of several chunks are encrypted in one call where the
 * sectors are few per chunk (sector_cipher_batch_bytes): a write of
 * FIRST bytes at 0 is wholly in batches, and after writes of every
 * shape the image still decrypts to what was written. */
static void
test_cbc_batches (unsigned ss, uint64_t chunk, unsigned flags, size_t first)
{
  struct backend *b = mem_open (DATA_OFFSET + SIZE);
  struct sector_cipher *c = test_cipher_spec ("aes-cbc-essiv:sha256", 32,
                                               ss);
  struct engine_config cfg = {
    .data_offset = DATA_OFFSET, .size = SIZE, .sector_size = ss,
    .workers = 2, .max_read_size = chunk, .max_write_size = chunk,
    .max_inflight = 1 << 20, .flags = flags,
  };
  uint64_t seed = 0x2545f4914f6cdd1dULL + ss + chunk, i, off, len;
  struct engine_stats st;
  struct engine *e;

  REQUIRE (c, "cipher");
  e = engine_new (&cfg, c, b);
  REQUIRE (e && engine_start (e) == 0, "engine");
  decrypt_backend (b, c, DATA_OFFSET, model, SIZE);
  for (i = 0; i < first; i++)
    buf[i] = rnd (&seed);
  REQUIRE (engine_write (e, buf, first, 0, false) == 0, "write: %m");
  memcpy (model, buf, first);
  engine_get_stats (e, &st);
  REQUIRE (st.batched_chunks == st.write_chunks && st.write_chunks > 1,
           "CBC, %u-byte sectors: %llu of %llu chunks in batches", ss,
           (unsigned long long) st.batched_chunks,
           (unsigned long long) st.write_chunks);
  /* Whole and ragged multi-chunk writes, then anything. */
  for (off = first; off + sizeof buf <= SIZE; off += sizeof buf + ss) {
    len = sizeof buf - off % 3 * 100;
    for (i = 0; i < len; i++)
      buf[i] = rnd (&seed);
    REQUIRE (engine_write (e, buf, len, off + off % 5, false) == 0,
             "write: %m");
    memcpy (model + off + off % 5, buf, len);
  }
  for (i = 0; i < OPS; i++)
    random_request (e, &seed, ss);
  REQUIRE (engine_flush (e) == 0, "flush: %m");
  decrypt_backend (b, c, DATA_OFFSET, got, SIZE);
  REQUIRE (memcmp (got, model, SIZE) == 0,
           "CBC, %u-byte sectors, %llu-byte chunks: backend differs", ss,
           (unsigned long long) chunk);
  engine_get_stats (e, &st);
  printf ("CBC batches, ss %4u, %6llu-byte chunks%s: %llu of %llu write "
          "chunks\n", ss, (unsigned long long) chunk,
          flags ? ", no_write_workqueue" : "",
          (unsigned long long) st.batched_chunks,
          (unsigned long long) st.write_chunks);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* Where length makes no difference to the cipher, no batches. */
static void
test_no_batches (void)
{
  struct backend *b = mem_open (DATA_OFFSET + SIZE);
  struct sector_cipher *c = test_cipher (4096);
  struct engine *e = small_engine (c, b, 16384);
  struct engine_stats st;

  memset (buf, 0x3c, sizeof buf);
  REQUIRE (engine_write (e, buf, sizeof buf, 0, false) == 0, "write: %m");
  engine_get_stats (e, &st);
  REQUIRE (st.batched_chunks == 0, "XTS: %llu chunks in batches",
           (unsigned long long) st.batched_chunks);
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* A failing sector fails exactly the requests touching it, with EIO. */
static void
test_errors (void)
{
  struct backend *b = mem_open (DATA_OFFSET + SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = small_engine (c, b, 4096);

  mem_of (b)->fail_sector = (DATA_OFFSET + 65536) / 512 + 3;
  memset (buf, 0xab, 65536);
  errno = 0;
  REQUIRE (engine_write (e, buf, 65536, 32768, false) == -1 && errno == EIO,
         "write over the bad sector fails with EIO (%m)");
  REQUIRE (engine_write (e, buf, 32768, 0, false) == 0, "write before it");
  errno = 0;
  REQUIRE (engine_read (e, buf, 8192, 65536) == -1 && errno == EIO,
         "read of the bad sector fails with EIO (%m)");
  REQUIRE (engine_read (e, buf, 8192, 65536 + 8192) == 0, "read after it");
  /* A partial write whose read-modify-write hits the bad sector. */
  errno = 0;
  REQUIRE (engine_write (e, buf, 10, 65536 + 3 * 512 + 5, false) == -1
         && errno == EIO, "partial write fails with EIO (%m)");
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

/* With cipher_null, whole-sector writes and zeros take no pool buffer
 * (they go out from the caller's bytes, or the engine's zeros); only
 * a chunk holding a merged partial sector does.  A failing sector
 * still fails exactly the write over it. */
static void
test_null_borrows (void)
{
  struct backend *b = mem_open (DATA_OFFSET + SIZE);
  struct sector_cipher *c = null_cipher (512);
  struct engine *e = small_engine (c, b, 8192);
  struct engine_stats st;
  unsigned i;

  for (i = 0; i < 65536; i++)
    buf[i] = i * 13 + 5;
  REQUIRE (engine_write (e, buf, 65536, 4096, false) == 0, "write: %m");
  REQUIRE (engine_zero (e, 16384, 131072, false) == 0, "zero: %m");
  engine_get_stats (e, &st);
  REQUIRE (st.buffers_max == 0, "whole sectors took %u buffers",
           st.buffers_max);
  REQUIRE (engine_read (e, got, 65536, 4096) == 0
           && memcmp (got, buf, 65536) == 0, "written bytes read back");
  memset (buf, 0x5a, 20000);
  REQUIRE (engine_write (e, buf, 20000, 1000, false) == 0, "write: %m");
  engine_get_stats (e, &st);
  REQUIRE (st.buffers_max >= 1 && st.buffers_max <= 2,
           "only the edge chunks took buffers (%u)", st.buffers_max);
  REQUIRE (engine_read (e, got, 20000, 1000) == 0
           && memcmp (got, buf, 20000) == 0, "unaligned write read back");
  mem_of (b)->fail_sector = (DATA_OFFSET + 262144) / 512 + 20;
  errno = 0;
  REQUIRE (engine_write (e, buf, 32768, 262144, false) == -1
           && errno == EIO, "write over the bad sector fails (%m)");
  REQUIRE (engine_write (e, buf, 8192, 262144 - 8192, false) == 0,
           "write beside it");
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

static uint64_t
thread_cpu_ns (void)
{
  struct timespec t;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/* The sampled cost of the cipher: the chunks timed are 1 in
 * CRYPT_SAMPLE_EVERY, and their ns per byte is what the cipher costs
 * when called directly, within what a loaded machine may do to two
 * timings (a factor of 20; a unit or a count gone wrong is off by 1000
 * or more). */
static void
test_cipher_clock (void)
{
  struct backend *b = mem_open (DATA_OFFSET + SIZE);
  struct sector_cipher *c = test_cipher (512);
  struct engine *e = small_engine (c, b, 16384);
  struct engine_stats st;
  const unsigned chunks = 64 * CRYPT_SAMPLE_EVERY;
  double direct, enc, dec;
  uint64_t t0;
  unsigned i;

  for (i = 0; i < chunks; i++)
    REQUIRE (engine_write (e, buf, 16384, i % 256 * 16384, false) == 0,
             "write: %m");
  for (i = 0; i < chunks; i++)
    REQUIRE (engine_read (e, buf, 16384, i % 256 * 16384) == 0, "read: %m");
  engine_get_stats (e, &st);
  REQUIRE (st.encrypt_sample_bytes == chunks / CRYPT_SAMPLE_EVERY * 16384
           && st.decrypt_sample_bytes == st.encrypt_sample_bytes,
           "chunks timed: %llu and %llu bytes",
           (unsigned long long) st.encrypt_sample_bytes,
           (unsigned long long) st.decrypt_sample_bytes);
  t0 = thread_cpu_ns ();
  for (i = 0; i < chunks; i++)
    REQUIRE (sector_cipher_encrypt (c, got, buf, 16384, i * 32) == 0,
             "encrypt");
  direct = (double) (thread_cpu_ns () - t0) / (chunks * 16384.0);
  enc = (double) st.encrypt_sample_ns / st.encrypt_sample_bytes;
  dec = (double) st.decrypt_sample_ns / st.decrypt_sample_bytes;
  printf ("cipher clock: encrypt %.3f, decrypt %.3f, direct %.3f ns/byte\n",
          enc, dec, direct);
  REQUIRE (direct > 0 && enc > direct / 20 && enc < direct * 20
           && dec > direct / 20 && dec < direct * 20,
           "sampled cost beside the direct one");
  engine_free (e);
  sector_cipher_free (c);
  backend_close (b);
}

static bool
run_on (int cpu)
{
  cpu_set_t set;

  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  return sched_setaffinity (0, sizeof set, &set) == 0
    && sched_getcpu () == cpu;
}

/* A kept buffer goes back to a taker on the CPU that last had it, even
 * under one kept later elsewhere; with none of its own a taker has the
 * most recent. */
static void
test_bufpool_cpu (void)
{
  cpu_set_t all;
  struct bufpool p;
  void *mine, *theirs, *got1, *got2;
  int a = -1, b = -1, cpu;

  REQUIRE (sched_getaffinity (0, sizeof all, &all) == 0, "affinity: %m");
  for (cpu = 0; cpu < CPU_SETSIZE && b < 0; cpu++)
    if (CPU_ISSET (cpu, &all))
      *(a < 0 ? &a : &b) = cpu;
  if (b < 0) {
    printf ("bufpool by CPU: not checked, this process may run on one "
            "CPU only\n");
    return;
  }
  REQUIRE (bufpool_init (&p, 4096, 4 * 4096) == 0, "bufpool_init");
  REQUIRE (bufpool_get_many (&p, &mine, 1) == 0
           && bufpool_get_many (&p, &theirs, 1) == 0, "get");
  REQUIRE (run_on (a), "run on CPU %d", a);
  bufpool_put (&p, mine);
  REQUIRE (run_on (b), "run on CPU %d", b);
  bufpool_put (&p, theirs);
  REQUIRE (run_on (a), "run on CPU %d", a);
  REQUIRE (bufpool_get_many (&p, &got1, 1) == 0 && got1 == mine,
           "CPU %d has its own buffer back", a);
  REQUIRE (bufpool_get_many (&p, &got2, 1) == 0 && got2 == theirs,
           "then the other");
  REQUIRE (run_on (b), "run on CPU %d", b);
  bufpool_put (&p, theirs);
  REQUIRE (run_on (a), "run on CPU %d", a);
  bufpool_put (&p, mine);
  REQUIRE (run_on (b), "run on CPU %d", b);
  REQUIRE (bufpool_get_many (&p, &got1, 1) == 0 && got1 == theirs,
           "CPU %d has its own buffer back from under the other", b);
  bufpool_put (&p, got1);
  REQUIRE (sched_setaffinity (0, sizeof all, &all) == 0, "affinity: %m");
  bufpool_destroy (&p);
  printf ("bufpool by CPU: kept buffers go back to their CPU (%d, %d)\n",
          a, b);
}

/* Buffers are carved from slabs: distinct, page-aligned, never
 * overlapping; a whole huge page's worth in one slab from a huge-page
 * boundary; kept ones reused before any new slab; never more than the
 * cap; sizes that are not a page multiple, or larger than a slab. */
static void
check_carving (size_t buf_size, unsigned cap_bufs, unsigned want_per_slab)
{
  const size_t page = 4096, rounded = (buf_size + page - 1) & ~(page - 1);
  struct bufpool p;
  void **bufs = calloc (cap_bufs, sizeof *bufs);
  unsigned i, j, slabs;

  REQUIRE (bufs != NULL, "calloc");
  REQUIRE (bufpool_init (&p, buf_size, (uint64_t) cap_bufs * buf_size) == 0,
           "bufpool_init");
  REQUIRE (p.max_bufs == cap_bufs && p.per_slab == want_per_slab,
           "%zu-byte buffers: %u per slab, cap %u (want %u, %u)", buf_size,
           p.per_slab, p.max_bufs, want_per_slab, cap_bufs);
  for (i = 0; i < cap_bufs; i++) {
    REQUIRE (bufpool_get_many (&p, &bufs[i], 1) == 0, "get %u", i);
    REQUIRE ((uintptr_t) bufs[i] % page == 0, "buffer %u is page-aligned", i);
    memset (bufs[i], 0xa5, buf_size);
    if (i % want_per_slab != 0)
      REQUIRE ((uint8_t *) bufs[i] == (uint8_t *) bufs[i - 1] + rounded,
               "buffer %u follows the one before in its slab", i);
    else if (rounded * want_per_slab >= (2u << 20))
      REQUIRE ((uintptr_t) bufs[i] % (2u << 20) == 0,
               "slab of buffer %u starts on a huge-page boundary", i);
    for (j = 0; j < i; j++)
      REQUIRE ((uint8_t *) bufs[i] >= (uint8_t *) bufs[j] + rounded
               || (uint8_t *) bufs[j] >= (uint8_t *) bufs[i] + rounded,
               "buffers %u and %u overlap", j, i);
  }
  slabs = p.nslabs;
  REQUIRE (slabs == (cap_bufs + want_per_slab - 1) / want_per_slab,
           "%u slabs for %u buffers", slabs, cap_bufs);
  for (i = 0; i < cap_bufs; i++)
    bufpool_put (&p, bufs[i]);
  REQUIRE (bufpool_get_many (&p, bufs, cap_bufs) == 0 && p.nslabs == slabs,
           "kept buffers are reused: no new slab");
  for (i = 0; i < cap_bufs; i++)
    bufpool_put (&p, bufs[i]);
  bufpool_destroy (&p);
  free (bufs);
}

static void
test_bufpool_slabs (void)
{
  check_carving (128 << 10, 40, 16);    /* the default chunk */
  check_carving (5000, 3, 3);           /* a slab no bigger than the cap */
  check_carving (3 << 20, 2, 1);        /* a buffer beyond one huge page */
  printf ("bufpool slabs: buffers carved whole, aligned and reused\n");
}

int
main (void)
{
  static const unsigned sector_sizes[] = { 512, 4096 };
  size_t i, j;

  for (i = 0; i < sizeof setups / sizeof setups[0]; i++)
    for (j = 0; j < 4; j++)
      run_setup (&setups[i], sector_sizes[j % 2], j >= 2,
                 0x9e3779b97f4a7c15ULL + i);
  test_errors ();
  test_null_borrows ();
  test_cipher_clock ();
  test_bufpool_cpu ();
  test_bufpool_slabs ();
  /* Default chunks; a request of two goes inline (nbdcopy's 256 KiB). */
  test_cbc_batches (4096, 0, 0, 256 << 10);
  test_cbc_batches (2048, 0, 0, 256 << 10);
  /* Inline whatever the size: 128 sectors of 4096 bytes per batch. */
  test_cbc_batches (4096, 0, CT_NO_WRITE_WORKQUEUE, 1 << 20);
  test_cbc_batches (4096, 16384, CT_NO_WRITE_WORKQUEUE, 1 << 20);
  test_cbc_batches (512, 4096, CT_NO_WRITE_WORKQUEUE, 1 << 20);
  test_no_batches ();
  printf ("ok\n");
  return 0;
}
