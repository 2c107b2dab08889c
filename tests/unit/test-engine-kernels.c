/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel series' thread structures (kernel=, scheduler/kpipe.c),
 * seen from below: a recording backend notes, for every call, who made
 * it (the submitter: io_context, modelled CPU, thread name) and in what
 * order, and can hold writes in the submitting thread and keep reads in
 * flight until the test completes them.
 *
 * 2.6.32: every write is submitted by kcryptd in the order the writes
 * were queued (FIFO); every read by kcryptd_io, which does not wait for
 * it, after the reader's own unplug; decryption happens after the read
 * completes, on kcryptd.  kcryptd-io=false: the reader submits, then
 * unplugs.  3.16: a write from CPU k is encrypted and submitted by
 * kcryptd/k, a second one from CPU k waits for the first, one from
 * another CPU goes at once; a read is decrypted on its reader's CPU.
 * 4.0 (rbtree): dmcrypt_write submits all that accumulated, sorted,
 * then unplugs; a lower write arriving during a round goes in the
 * next; nothing waits for a lower write still in crypto.  Data
 * round-trips in every mode, decrypted independently. */
#include <unistd.h>

#include "../../backend/kseries.h"
#include "../../backend/submitter.h"
#include "../../scheduler/internal.h"
#include "engine-harness.h"

#define SIZE (8 << 20)          /* bytes of plaintext */
#define CHUNK 4096              /* bytes per chunk */
#define MAX_EVENTS 4096
#define MAX_READS 64

struct event
{
  char op;                      /* W submit_write, R submit_read,
                                   w pwrite, r pread, U unplug */
  uint64_t offset;              /* bytes */
  struct backend_submitter by;
  char name[16];
};

struct rec
{
  uint8_t *data;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct event ev[MAX_EVENTS];
  unsigned nev;
  bool hold;                    /* submit_write of HOLD_OFFSET waits */
  int64_t hold_offset;          /* bytes; -1: every write */
  unsigned held;                /* writers waiting */
  bool defer_reads;             /* submit_read leaves reads in flight */
  struct
  {
    void *buf;
    size_t count;
    uint64_t offset;
    backend_done_fn done;
    void *opaque;
  } reads[MAX_READS];
  unsigned nreads;
};

static struct rec *
rec_of (struct backend *b)
{
  return b->priv;
}

/* Under the lock. */
static void
record_locked (struct rec *m, char op, uint64_t offset)
{
  struct event *e = &m->ev[m->nev];
  struct backend_submitter s = backend_submitter ();

  REQUIRE (m->nev < MAX_EVENTS, "too many events");
  e->op = op;
  e->offset = offset;
  e->by = s;
  snprintf (e->name, sizeof e->name, "%s", s.name ? s.name : "?");
  m->nev++;
  pthread_cond_broadcast (&m->cond);
}

static void
record (struct backend *b, char op, uint64_t offset)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  record_locked (m, op, offset);
  pthread_mutex_unlock (&m->lock);
}

static int
rec_pread (struct backend *b, void *buf, size_t count, uint64_t offset)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  record_locked (m, 'r', offset);
  memcpy (buf, m->data + offset, count);
  pthread_mutex_unlock (&m->lock);
  return 0;
}

static int
rec_pwrite (struct backend *b, const void *buf, size_t count,
            uint64_t offset)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  record_locked (m, 'w', offset);
  memcpy (m->data + offset, buf, count);
  pthread_mutex_unlock (&m->lock);
  return 0;
}

static int
rec_sync (struct backend *b)
{
  (void) b;
  return 0;
}

static int
rec_discard (struct backend *b, uint64_t count, uint64_t offset)
{
  (void) b; (void) count; (void) offset;
  return 0;
}

static void
rec_close (struct backend *b)
{
  struct rec *m = rec_of (b);

  free (m->data);
  free (m);
  free (b);
}

static bool
held_locked (struct rec *m, uint64_t offset)
{
  return m->hold && (m->hold_offset < 0
                     || (uint64_t) m->hold_offset == offset);
}

/* Recorded when entered (the dispatch order), completed in the
 * submitting thread once not held. */
static void
rec_submit_write (struct backend *b, const void *buf, size_t count,
                  uint64_t offset, backend_done_fn done, void *opaque)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  record_locked (m, 'W', offset);
  if (held_locked (m, offset)) {
    m->held++;
    pthread_cond_broadcast (&m->cond);
    while (held_locked (m, offset))
      pthread_cond_wait (&m->cond, &m->lock);
    m->held--;
  }
  memcpy (m->data + offset, buf, count);
  pthread_mutex_unlock (&m->lock);
  done (opaque, 0);
}

static void
rec_submit_read (struct backend *b, void *buf, size_t count,
                 uint64_t offset, backend_done_fn done, void *opaque)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  record_locked (m, 'R', offset);
  if (m->defer_reads) {
    REQUIRE (m->nreads < MAX_READS, "too many reads in flight");
    m->reads[m->nreads].buf = buf;
    m->reads[m->nreads].count = count;
    m->reads[m->nreads].offset = offset;
    m->reads[m->nreads].done = done;
    m->reads[m->nreads].opaque = opaque;
    m->nreads++;
    pthread_cond_broadcast (&m->cond);
    pthread_mutex_unlock (&m->lock);
    return;
  }
  memcpy (buf, m->data + offset, count);
  pthread_mutex_unlock (&m->lock);
  done (opaque, 0);
}

static void
rec_unplug (struct backend *b)
{
  record (b, 'U', 0);
}

static const struct backend_ops rec_ops = {
  .name = "recorder", .pread = rec_pread, .pwrite = rec_pwrite,
  .sync = rec_sync, .discard = rec_discard, .close = rec_close,
  .submit_write = rec_submit_write, .submit_read = rec_submit_read,
  .unplug = rec_unplug,
};

static struct backend *
rec_open (void)
{
  struct backend *b = calloc (1, sizeof *b);
  struct rec *m = calloc (1, sizeof *m);

  REQUIRE (b && m && (m->data = calloc (1, SIZE)), "calloc");
  pthread_mutex_init (&m->lock, NULL);
  pthread_cond_init (&m->cond, NULL);
  m->hold_offset = -1;
  b->ops = &rec_ops;
  b->priv = m;
  b->size = SIZE;
  return b;
}

static void
rec_hold (struct backend *b, bool hold, int64_t offset)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  m->hold = hold;
  m->hold_offset = offset;
  pthread_cond_broadcast (&m->cond);
  pthread_mutex_unlock (&m->lock);
}

static void
rec_clear (struct backend *b)
{
  struct rec *m = rec_of (b);

  pthread_mutex_lock (&m->lock);
  m->nev = 0;
  pthread_mutex_unlock (&m->lock);
}

/* Completes every read in flight, in the calling thread. */
static void
rec_complete_reads (struct backend *b)
{
  struct rec *m = rec_of (b);
  unsigned i, n;
  typeof (m->reads[0]) reads[MAX_READS];

  pthread_mutex_lock (&m->lock);
  n = m->nreads;
  for (i = 0; i < n; i++) {
    reads[i] = m->reads[i];
    memcpy (reads[i].buf, m->data + reads[i].offset, reads[i].count);
  }
  m->nreads = 0;
  pthread_mutex_unlock (&m->lock);
  for (i = 0; i < n; i++)
    reads[i].done (reads[i].opaque, 0);
}

/* Waits until the backend saw N events of kind OP, or N writers held,
 * or N reads in flight (OP 'H', 'F'). */
static void
rec_wait (struct backend *b, char op, unsigned n)
{
  struct rec *m = rec_of (b);
  struct timespec deadline;
  unsigned have, i;

  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 20;
  pthread_mutex_lock (&m->lock);
  for (;;) {
    if (op == 'H')
      have = m->held;
    else if (op == 'F')
      have = m->nreads;
    else
      for (have = 0, i = 0; i < m->nev; i++)
        have += m->ev[i].op == op;
    if (have >= n)
      break;
    REQUIRE (pthread_cond_timedwait (&m->cond, &m->lock, &deadline) == 0,
             "timed out waiting for %u '%c' (have %u)", n, op, have);
  }
  pthread_mutex_unlock (&m->lock);
}

/* The events of kind OP, in order, into OUT (at most MAX). */
static unsigned
rec_events (struct backend *b, char op, struct event *out, unsigned max)
{
  struct rec *m = rec_of (b);
  unsigned i, n = 0;

  pthread_mutex_lock (&m->lock);
  for (i = 0; i < m->nev && n < max; i++)
    if (op == 0 || m->ev[i].op == op)
      out[n++] = m->ev[i];
  pthread_mutex_unlock (&m->lock);
  return n;
}

/* ---- Clients: a thread per request, submitting as a connection ---- */

struct client
{
  struct engine *e;
  bool write;
  uint64_t offset, len;
  unsigned context;
  int cpu;
  bool done;
  int r;
  pthread_t thread;
  uint8_t data[CHUNK];
};

static void *
client_main (void *arg)
{
  struct client *c = arg;
  struct backend_submitter self = {
    .context = c->context, .cpu = c->cpu, .name = "client",
  };

  backend_set_submitter (&self);
  if (c->write)
    c->r = engine_write (c->e, c->data, c->len, c->offset, false);
  else
    c->r = engine_read (c->e, c->data, c->len, c->offset);
  __atomic_store_n (&c->done, true, __ATOMIC_RELEASE);
  return NULL;
}

/* Chunk number K's bytes: K + 1 everywhere. */
static void
client_start (struct client *c, struct engine *e, bool write, unsigned k,
              unsigned context, int cpu)
{
  c->e = e;
  c->write = write;
  c->offset = (uint64_t) k * CHUNK;
  c->len = CHUNK;
  c->context = context;
  c->cpu = cpu;
  c->done = false;
  memset (c->data, write ? k + 1 : 0, CHUNK);
  REQUIRE (pthread_create (&c->thread, NULL, client_main, c) == 0,
           "thread");
}

static bool
client_done (struct client *c)
{
  return __atomic_load_n (&c->done, __ATOMIC_ACQUIRE);
}

/* Polls up to ten seconds for C to finish. */
static bool
client_finishes (struct client *c)
{
  int i;

  for (i = 0; i < 1000 && !client_done (c); i++)
    usleep (10000);
  return client_done (c);
}

/* Joins C and checks a read got chunk K's bytes. */
static void
client_join (struct client *c)
{
  unsigned k = c->offset / CHUNK, i;

  pthread_join (c->thread, NULL);
  REQUIRE (c->r == 0, "request at chunk %u failed", k);
  if (!c->write)
    for (i = 0; i < CHUNK; i++)
      REQUIRE (c->data[i] == (uint8_t) (k + 1),
               "read of chunk %u: byte %u is %u", k, i, c->data[i]);
}

/* Polls until COND (E, ARG) or fails after 20 s. */
static void
poll_until (bool (*cond) (struct engine *, unsigned, unsigned),
            struct engine *e, unsigned arg, unsigned n, const char *what)
{
  int i;

  for (i = 0; i < 20000; i++) {
    if (cond (e, arg, n))
      return;
    usleep (1000);
  }
  REQUIRE (0, "never: %s", what);
}

/* kcryptd's queue of CPU holds N items. */
static bool
kcryptd_queued (struct engine *e, unsigned cpu, unsigned n)
{
  return kwq_queued (&e->kp.crypt, cpu) == n;
}

/* The write-out stage's queue holds N chunks. */
static bool
writeout_queued (struct engine *e, unsigned unused, unsigned n)
{
  struct engine_stats st;

  (void) unused;
  engine_get_stats (e, &st);
  return st.writeout_depth == n;
}

static struct engine *
kernel_engine (struct backend *b, struct sector_cipher *c, int kernel,
               unsigned workers, const char *sched, int kcryptd_io)
{
  struct engine_config cfg = {
    .size = SIZE, .sector_size = 512, .workers = workers,
    .scheduler = sched, .max_read_size = CHUNK, .max_write_size = CHUNK,
    .kernel = kernel, .kcryptd_io = kcryptd_io,
    .kernel_writer = sched != NULL && kernel < KSERIES_4_0,
  };
  struct engine *e = engine_new (&cfg, c, b);

  REQUIRE (e && engine_start (e) == 0, "engine");
  return e;
}

static void
expect_by (const struct event *ev, const char *name, unsigned context,
           int cpu, const char *what)
{
  REQUIRE (strcmp (ev->name, name) == 0 && ev->by.context == context
           && ev->by.cpu == cpu,
           "%s: %c at %llu by %s (context %u, cpu %d), expected %s "
           "(context %u, cpu %d)", what, ev->op,
           (unsigned long long) ev->offset, ev->name, ev->by.context,
           ev->by.cpu, name, context, cpu);
}

/* The backend's bytes decrypt to chunk K's pattern for each K in
 * CHUNKS (N of them). */
static void
check_image (struct backend *b, struct sector_cipher *c,
             const unsigned *chunks, unsigned n)
{
  static uint8_t plain[SIZE];
  struct rec *m = rec_of (b);
  unsigned i, j, k;

  pthread_mutex_lock (&m->lock);
  memcpy (plain, m->data, SIZE);
  pthread_mutex_unlock (&m->lock);
  REQUIRE (sector_cipher_decrypt (c, plain, plain, SIZE, 0) == 0,
           "decrypt");
  for (i = 0; i < n; i++) {
    k = chunks[i];
    for (j = 0; j < CHUNK; j++)
      REQUIRE (plain[k * CHUNK + j] == (uint8_t) (k + 1),
               "image: chunk %u byte %u is %u", k, j,
               plain[k * CHUNK + j]);
  }
}

/* Writes chunks CHUNKS[0..N) at once from N connections. */
static void
write_chunks (struct engine *e, const unsigned *chunks, unsigned n)
{
  static struct client c[16];
  unsigned i;

  for (i = 0; i < n; i++)
    client_start (&c[i], e, true, chunks[i], i + 1, (int) i);
  for (i = 0; i < n; i++)
    client_join (&c[i]);
}

/* Reads them back from N connections at once. */
static void
read_chunks (struct engine *e, const unsigned *chunks, unsigned n)
{
  static struct client c[16];
  unsigned i;

  for (i = 0; i < n; i++)
    client_start (&c[i], e, false, chunks[i], i + 1, (int) i);
  for (i = 0; i < n; i++)
    client_join (&c[i]);
}

/* ---- 2.6.32 ---- */

/* One write holds kcryptd in the backend; four more from other
 * connections and CPUs queue behind it; released, kcryptd submits them
 * in the order they were queued, each itself, asynchronously. */
static void
test_2632_writes (void)
{
  static const unsigned order[] = { 100, 9, 3, 14, 1 };
  static struct client c[5];
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_2_6_32, 4, NULL, -1);
  struct event ev[16];
  unsigned i, n;

  REQUIRE (e->kp.crypt.n == 1 && e->kp.io.n == 1 && !e->wo.running,
           "2.6.32: one kcryptd, one kcryptd_io, no dmcrypt_write");
  rec_hold (b, true, -1);
  client_start (&c[0], e, true, order[0], 1, 0);
  rec_wait (b, 'H', 1);
  for (i = 1; i < 5; i++) {
    client_start (&c[i], e, true, order[i], i + 1, (int) (i % 4));
    poll_until (kcryptd_queued, e, 0, i, "a write queued on kcryptd");
  }
  REQUIRE (!client_done (&c[1]), "a write returned before it was written");
  rec_hold (b, false, -1);
  for (i = 0; i < 5; i++)
    client_join (&c[i]);
  n = rec_events (b, 0, ev, 16);
  REQUIRE (n == 5, "2.6.32: %u backend calls for 5 writes", n);
  for (i = 0; i < n; i++) {
    REQUIRE (ev[i].op == 'W' && ev[i].offset == order[i] * CHUNK,
             "2.6.32: call %u is %c at %llu, expected W at %u", i, ev[i].op,
             (unsigned long long) ev[i].offset, order[i] * CHUNK);
    expect_by (&ev[i], "kcryptd", CONTEXT_KCRYPTD, -1, "2.6.32 write");
  }
  check_image (b, ci, order, 5);
  printf ("2.6.32: 5 writes from 5 connections submitted by kcryptd in "
          "queue order\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* Each read: the reader unplugs (finding nothing), kcryptd_io submits
 * the clone and goes on (a second read is submitted while the first is
 * in flight); only once the reads complete are they decrypted, on
 * kcryptd, and the readers return. */
static void
test_2632_reads (void)
{
  static const unsigned chunks[] = { 9, 3 };
  static struct client c[2];
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_2_6_32, 4, NULL, -1);
  struct engine_stats before, after;
  struct event ev[16];
  unsigned i, n;

  write_chunks (e, chunks, 2);
  rec_clear (b);
  rec_of (b)->defer_reads = true;
  engine_get_stats (e, &before);
  for (i = 0; i < 2; i++) {
    client_start (&c[i], e, false, chunks[i], 7 + i, 1);
    rec_wait (b, 'F', i + 1);
  }
  usleep (20000);
  REQUIRE (!client_done (&c[0]) && !client_done (&c[1]),
           "a read returned before its clone completed");
  n = rec_events (b, 0, ev, 16);
  REQUIRE (n == 4, "2.6.32: %u backend calls for 2 reads", n);
  for (i = 0; i < 2; i++) {
    REQUIRE (ev[2 * i].op == 'U', "2.6.32: the reader's unplug first");
    expect_by (&ev[2 * i], "client", 7 + i, 1, "2.6.32 reader's unplug");
    REQUIRE (ev[2 * i + 1].op == 'R'
             && ev[2 * i + 1].offset == chunks[i] * CHUNK,
             "2.6.32: then its clone");
    expect_by (&ev[2 * i + 1], "kcryptd_io", CONTEXT_KCRYPTD_IO, -1,
               "2.6.32 read clone");
  }
  rec_complete_reads (b);
  for (i = 0; i < 2; i++)
    client_join (&c[i]);
  engine_get_stats (e, &after);
  REQUIRE (after.worker_chunks - before.worker_chunks == 2
           && after.inline_chunks == before.inline_chunks,
           "2.6.32: reads decrypted by kcryptd (%llu), not the reader",
           (unsigned long long) (after.worker_chunks
                                 - before.worker_chunks));
  printf ("2.6.32: reads: the reader unplugs, kcryptd_io submits "
          "without waiting, kcryptd decrypts after completion\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* kcryptd-io=false (2.6.38's read path): the reader submits its clone,
 * then unplugs as it goes to sleep. */
static void
test_2632_direct_reads (void)
{
  static const unsigned chunks[] = { 5 };
  static struct client c;
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_2_6_32, 4, NULL, 0);
  struct event ev[16];
  unsigned n;

  REQUIRE (e->kp.io.n == 0, "kcryptd-io=false: no kcryptd_io thread");
  write_chunks (e, chunks, 1);
  rec_clear (b);
  rec_of (b)->defer_reads = true;
  client_start (&c, e, false, chunks[0], 3, 2);
  rec_wait (b, 'U', 1);
  n = rec_events (b, 0, ev, 16);
  REQUIRE (n == 2 && ev[0].op == 'R' && ev[1].op == 'U',
           "kcryptd-io=false: the clone, then the unplug (%u calls)", n);
  expect_by (&ev[0], "client", 3, 2, "kcryptd-io=false read clone");
  expect_by (&ev[1], "client", 3, 2, "kcryptd-io=false unplug");
  REQUIRE (!client_done (&c), "the read returned before it completed");
  rec_complete_reads (b);
  client_join (&c);
  printf ("2.6.32, kcryptd-io=false: the reader submits, then unplugs\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* ---- 3.16 ---- */

/* Writes from CPU 1 are encrypted and submitted by kcryptd/1 one after
 * another; one from CPU 2 goes meanwhile, by kcryptd/2. */
static void
test_316_writes (void)
{
  static const unsigned chunks[] = { 20, 21, 30 };
  static struct client c[3];
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_3_16, 4, NULL, -1);
  struct event ev[16];
  unsigned n;

  REQUIRE (e->kp.crypt.n == 4 && e->kp.crypt.bound && !e->wo.running
           && e->kp.io.n == 0, "3.16: kcryptd per CPU, no writer");
  rec_hold (b, true, -1);
  client_start (&c[0], e, true, chunks[0], 1, 1);
  rec_wait (b, 'H', 1);
  client_start (&c[1], e, true, chunks[1], 2, 1);
  poll_until (kcryptd_queued, e, 1, 1, "a second write queued on CPU 1");
  client_start (&c[2], e, true, chunks[2], 3, 2);
  rec_wait (b, 'H', 2);           /* both CPUs' workers in the backend */
  n = rec_events (b, 'W', ev, 16);
  REQUIRE (n == 2, "3.16: %u writes submitted while CPU 1's first is "
           "held, expected 2", n);
  expect_by (&ev[0], "kcryptd/1", CONTEXT_KCRYPTD + 1, 1, "3.16 CPU 1");
  REQUIRE (ev[1].offset == chunks[2] * CHUNK, "3.16: CPU 2's write next");
  expect_by (&ev[1], "kcryptd/2", CONTEXT_KCRYPTD + 2, 2, "3.16 CPU 2");
  rec_hold (b, false, -1);
  client_join (&c[0]);
  client_join (&c[1]);
  client_join (&c[2]);
  n = rec_events (b, 'W', ev, 16);
  REQUIRE (n == 3 && ev[2].offset == chunks[1] * CHUNK,
           "3.16: CPU 1's second write after its first");
  expect_by (&ev[2], "kcryptd/1", CONTEXT_KCRYPTD + 1, 1, "3.16 CPU 1");
  check_image (b, ci, chunks, 3);
  printf ("3.16: kcryptd/k submits CPU k's writes, one at a time per "
          "CPU, CPUs at once\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* A read from CPU 3 is submitted by its reader and decrypted by
 * kcryptd/3: while kcryptd/3 is held in a write, the read waits for
 * it, and a read from CPU 2 does not. */
static void
test_316_reads (void)
{
  static const unsigned chunks[] = { 9, 3 };
  static struct client w, r3, r2;
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_3_16, 4, NULL, -1);
  struct event ev[16];
  unsigned n;

  write_chunks (e, chunks, 2);
  rec_clear (b);
  rec_hold (b, true, 40 * CHUNK);
  client_start (&w, e, true, 40, 1, 3);
  rec_wait (b, 'H', 1);
  client_start (&r3, e, false, chunks[0], 2, 3);
  poll_until (kcryptd_queued, e, 3, 1, "the read's decryption on CPU 3");
  client_start (&r2, e, false, chunks[1], 3, 2);
  client_join (&r2);
  REQUIRE (!client_done (&r3), "3.16: CPU 3's read was decrypted while "
           "kcryptd/3 was busy");
  n = rec_events (b, 'R', ev, 16);
  REQUIRE (n == 2, "3.16: %u read clones", n);
  expect_by (&ev[0], "client", 2, 3, "3.16 read clone");
  expect_by (&ev[1], "client", 3, 2, "3.16 read clone");
  rec_hold (b, false, -1);
  client_join (&r3);
  client_join (&w);
  printf ("3.16: reads submitted by the reader, decrypted on its CPU's "
          "kcryptd\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* ---- 4.0: dmcrypt_write and scheduler=rbtree ---- */

/* Round 1 (chunk 100) holds dmcrypt_write; 9, 3, 14 accumulate; round
 * 2 submits them sorted and holds at 9; 1 arrives meanwhile and goes
 * in round 3.  Each round ends with an unplug. */
static void
test_40_rounds (void)
{
  static const unsigned chunks[] = { 100, 9, 3, 14, 1 };
  static const unsigned expect[] = { 100, 3, 9, 14, 1 };
  static const char rounds[] = "WUWWWUWU";
  static struct client c[5];
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_4_0, 2, "rbtree", -1);
  struct event ev[16];
  unsigned i, n, w;

  REQUIRE (e->wo.running && !e->kp.bound && e->kp.crypt.n == 2,
           "4.0: unbound kcryptd and dmcrypt_write");
  rec_hold (b, true, 100 * CHUNK);
  client_start (&c[0], e, true, chunks[0], 1, 0);
  rec_wait (b, 'H', 1);
  for (i = 1; i < 4; i++) {
    client_start (&c[i], e, true, chunks[i], i + 1, (int) (i % 2));
    poll_until (writeout_queued, e, 0, i, "a write at dmcrypt_write");
  }
  rec_hold (b, true, 9 * CHUNK);        /* lets 100 go, holds 9 */
  rec_wait (b, 'W', 3);                 /* 100, 3, 9: held at 9 */
  client_start (&c[4], e, true, chunks[4], 5, 0);
  poll_until (writeout_queued, e, 0, 1, "a lower write during a round");
  rec_hold (b, false, -1);
  for (i = 0; i < 5; i++)
    client_join (&c[i]);
  rec_wait (b, 'U', 3);         /* the last round's, after its write */
  usleep (20000);               /* time for anything more to show */
  n = rec_events (b, 0, ev, 16);
  REQUIRE (n == strlen (rounds), "4.0: %u backend calls, expected %zu", n,
           strlen (rounds));
  for (i = 0, w = 0; i < n; i++) {
    REQUIRE (ev[i].op == rounds[i], "4.0: call %u is %c, expected %c", i,
             ev[i].op, rounds[i]);
    expect_by (&ev[i], "dmcrypt_write", CONTEXT_WRITER, -1, "4.0");
    if (ev[i].op == 'W') {
      REQUIRE (ev[i].offset == expect[w] * CHUNK, "4.0: write %u at %llu, "
               "expected %u", w, (unsigned long long) ev[i].offset,
               expect[w] * CHUNK);
      w++;
    }
  }
  check_image (b, ci, chunks, 5);
  printf ("4.0: rbtree rounds: 100 | 3 9 14 | 1, each unplugged\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* A chunk registered as in crypto just below a write does not hold it
 * back under rbtree (it would under sorted: test-engine-order). */
static void
test_40_no_hold_back (void)
{
  static struct client c;
  static struct request r;
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine *e = kernel_engine (b, ci, KSERIES_4_0, 2, "rbtree", -1);

  memset (&r, 0, sizeof r);
  r.e = e;
  r.write = true;
  r.nchunks = 1;
  r.chunks[0].req = &r;
  r.chunks[0].wo.sector = 64;
  r.chunks[0].wo.nsect = CHUNK / 512;
  writeout_admit (e, &r);
  client_start (&c, e, true, 64 * 512 / CHUNK + 1, 1, 0);
  REQUIRE (client_finishes (&c), "4.0: a write waited for a lower one "
           "still in crypto");
  writeout_cancel (e, &r.chunks[0]);
  client_join (&c);
  printf ("4.0: no hold-back behind a lower write in crypto\n");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* ---- Every series: data round-trips ---- */

static void
test_round_trip (int kernel, int kcryptd_io, unsigned flags,
                 const char *sched)
{
  static const unsigned chunks[] = { 7, 0, 200, 13, 12, 255, 64, 3 };
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine_config cfg = {
    .size = SIZE, .sector_size = 512, .workers = 3, .scheduler = sched,
    .flags = flags,
    .kernel = kernel, .kcryptd_io = kcryptd_io,
    .kernel_writer = sched != NULL && kernel < KSERIES_4_0,
  };
  struct engine *e = engine_new (&cfg, ci, b);
  static uint8_t big[3 * KBIO_BYTES + 5 * 512], back[sizeof big];
  unsigned i;

  REQUIRE (e && engine_start (e) == 0, "engine");
  write_chunks (e, chunks, 8);
  check_image (b, ci, chunks, 8);
  read_chunks (e, chunks, 8);
  /* Several bios in one request, unaligned at both ends. */
  for (i = 0; i < sizeof big; i++)
    big[i] = i * 31 + 7;
  REQUIRE (engine_write (e, big, sizeof big - 700, 300, false) == 0,
           "big write");
  REQUIRE (engine_read (e, back, sizeof big - 700, 300) == 0, "big read");
  REQUIRE (memcmp (big, back, sizeof big - 700) == 0,
           "kernel %s: a 3 MiB request round-trips",
           kernel_series_name (kernel));
  printf ("kernel %s%s%s%s: data round-trips\n", kernel_series_name (kernel),
          kcryptd_io == 1 ? " kcryptd-io" : kcryptd_io == 0
          ? " no kcryptd-io" : "", sched ? " scheduler=" : "",
          sched ? sched : "");
  engine_free (e);
  sector_cipher_free (ci);
  backend_close (b);
}

/* A connection's requests come from CPU connection mod workers under
 * a kernel series; from the host's CPU (-1) without one. */
static void
test_submitter_cpu (void)
{
  struct backend *b = rec_open ();
  struct sector_cipher *ci = test_cipher (512);
  struct engine_config cfg = {
    .size = SIZE, .sector_size = 512, .workers = 4,
  };
  struct engine *own = engine_new (&cfg, ci, b), *k;

  cfg.kernel = KSERIES_3_16;
  k = engine_new (&cfg, ci, b);
  REQUIRE (own && k, "engines");
  REQUIRE (engine_submitter_cpu (own, 5) == -1, "no kernel=: host CPU");
  REQUIRE (engine_submitter_cpu (k, 0) == 0
           && engine_submitter_cpu (k, 5) == 1
           && engine_submitter_cpu (k, 7) == 3, "connection mod 4");
  engine_free (own);
  engine_free (k);
  sector_cipher_free (ci);
  backend_close (b);
}

int
main (void)
{
  alarm (300);                  /* a hang is a failure, not a stall */
  test_submitter_cpu ();
  test_2632_writes ();
  test_2632_reads ();
  test_2632_direct_reads ();
  test_316_writes ();
  test_316_reads ();
  test_40_rounds ();
  test_40_no_hold_back ();
  test_round_trip (KSERIES_2_6_32, -1, 0, NULL);
  test_round_trip (KSERIES_2_6_32, 0, 0, NULL);
  test_round_trip (KSERIES_2_6_32, -1, 0, "sorted");
  test_round_trip (KSERIES_3_16, -1, 0, NULL);
  test_round_trip (KSERIES_3_16, 1, 0, NULL);
  test_round_trip (KSERIES_4_0, -1, 0, "rbtree");
  test_round_trip (KSERIES_4_0, -1, 0, "fifo");
  test_round_trip (KSERIES_4_0, -1, CT_SAME_CPU_CRYPT
                   | CT_SUBMIT_FROM_CRYPT_CPUS, "rbtree");
  test_round_trip (KSERIES_6_1, -1, 0, "rbtree");
  test_round_trip (KSERIES_6_1, -1, CT_NO_READ_WORKQUEUE
                   | CT_NO_WRITE_WORKQUEUE, "rbtree");
  printf ("ok\n");
  return 0;
}
