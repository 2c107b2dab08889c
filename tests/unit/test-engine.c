/* The engine against a model: random reads, writes, zeros and trims of
 * any alignment, under every write-out policy, dm-crypt flag, worker
 * count, chunk size and sector size, with XTS and with cipher_null
 * (whose writes go out from the caller's bytes); the backend's
 * ciphertext is then decrypted independently and compared with the
 * model, and errors must reach exactly the request that hit them. */
#include "engine-harness.h"

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
  printf ("ok\n");
  return 0;
}
