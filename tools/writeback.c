/* SPDX-License-Identifier: GPL-2.0-or-later */
/* writeback: dd if=random of=FILE bs=1M conv=fsync onto btrfs, as Linux
 * 3.16's page cache wrote it back, against an NBD export: the flusher's
 * bios behind dd as the dirty limits allow, then fsync's, each sent on
 * the connection of the CPU that submitted it to dm-crypt, then a
 * flush.  Each connection says what the kernel knew of its bios in its
 * export name (the plugin reads it under kernel=): "cpu=N" for a CPU's
 * background bios, "cpu=N,sync" for fsync's, which were WRITE_SYNC
 * (--fsync-async sends them as the others).  The model is
 * tools/pagecache/ (pagecache/model.h); docs/scheduling.md, "seeds",
 * says where each piece of it comes from.
 *
 *   writeback [OPTION...] URI
 *   writeback --dry-run [OPTION...]
 *
 * Every time and rate printed is in the model's time: the wall clock
 * times --speed, the server's device-speed.  The last lines are dd's
 * own ("4294967296 bytes (4.3 GB) copied, 29.7559 s, 144 MB/s": bytes
 * over the time from the first write to fsync's return) and a
 * "Results:" line for scripts; --progress prints a line to stderr every
 * so many model seconds.  --dry-run needs no server: it completes the
 * bios in the order they were sent, one at a time, at --dry-run-rate,
 * and prints each bio as it is sent. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnbd.h>

#include "pagecache/model.h"
#include "pagecache/report.h"

#define MAX_CPUS 64

struct options
{
  struct wb_config cfg;
  const char *uri;
  double speed;                 /* model seconds per wall second */
  double progress_s;            /* model seconds between lines; 0: none */
  bool dry_run;
  double dry_rate_bps;          /* bytes a model second, --dry-run */
  bool fsync_async;             /* fsync's bios without REQ_SYNC */
};

struct run;

/* A bio in flight, on the run's list of completed ones once its reply
 * came. */
struct inflight
{
  struct wb_bio bio;
  int error;                    /* the reply's errno */
  struct run *run;
  struct inflight *next;
};

struct run
{
  const struct options *o;
  struct wb_model m;
  /* CPU c's connection is nbd[c], its sync one nbd[cpus + c]. */
  struct nbd_handle *nbd[2 * MAX_CPUS];
  unsigned nconn;
  char *buf;                    /* the bytes every bio writes */
  struct inflight *done;        /* completed, not yet told the model */
  int flush_error;
  bool flushed;
  double t0_s;                  /* wall clock of the first write */
  double next_progress_s;       /* model time of the next line */
  double progress_s;            /* model time of the last line */
  uint64_t progress_pages;      /* completed by then */
  uint64_t bios_per_cpu[MAX_CPUS];
};

static void
usage (FILE *f, int status)
{
  fprintf (f,
"usage: writeback [OPTION...] URI    |    writeback --dry-run [OPTION...]\n"
"  --size BYTES            what dd writes (default 4G)\n"
"  --memory BYTES          dirtyable memory (default 8G)\n"
"  --dirty-ratio N         vm.dirty_ratio, %% (default 20)\n"
"  --dirty-background-ratio N  vm.dirty_background_ratio, %% (10)\n"
"  --bio-max BYTES         the device's largest request (default 120K)\n"
"  --cpus N                CPUs, one NBD connection each (default 4)\n"
"  --dd-cpu N              the CPU dd runs on (default 0)\n"
"  --submit-batch N        bios btrfs's submit kworker sends per wake-up\n"
"                          (default 1)\n"
"  --hz N                  the kernel's HZ (default 250)\n"
"  --seed N                of the submit kworker's CPUs (default 1)\n"
"  --speed N               the server's device-speed (default 1)\n"
"  --progress SECONDS      model seconds between progress lines (10;\n"
"                          0: none)\n"
"  --fsync-async           fsync's bios as plain writes, not REQ_SYNC\n"
"  --fsync-spread          a what-if, not 3.16: fsync's bios on CPUs drawn\n"
"                          as the background ones, not all on dd's\n"
"  --dry-run               no server: print the bios\n"
"  --dry-run-rate MB/s     the bios' completion rate then (default 170)\n"
"Sizes take K, M, G (powers of 1024).  Each connection's export name\n"
"says its CPU and whether its writes are sync: cpu=N or cpu=N,sync.\n");
  exit (status);
}

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- Options ---- */

static bool
parse_size (const char *s, uint64_t *bytes)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (s, &end);
  if (errno || end == s || !(v >= 0))
    return false;
  switch (*end) {
  case 'K': v *= 1024; end++; break;
  case 'M': v *= 1024 * 1024; end++; break;
  case 'G': v *= 1024. * 1024 * 1024; end++; break;
  case 'T': v *= 1024. * 1024 * 1024 * 1024; end++; break;
  }
  if (*end || v > 1e18)
    return false;
  *bytes = (uint64_t) v;
  return true;
}

static bool
parse_uint (const char *s, unsigned *n)
{
  char *end;
  unsigned long v;

  errno = 0;
  v = strtoul (s, &end, 10);
  if (errno || end == s || *end || v > 1000000000)
    return false;
  *n = (unsigned) v;
  return true;
}

static bool
parse_double (const char *s, double *v)
{
  char *end;

  errno = 0;
  *v = strtod (s, &end);
  return !errno && end != s && !*end && *v >= 0 && *v < 1e12;
}

enum { O_SIZE = 256, O_MEMORY, O_RATIO, O_BG_RATIO, O_BIO_MAX, O_CPUS,
       O_DD_CPU, O_BATCH, O_HZ, O_SEED, O_SPEED, O_PROGRESS, O_DRY,
       O_DRY_RATE, O_FSYNC_ASYNC, O_FSYNC_SPREAD };

static const struct option longopts[] = {
  { "size", required_argument, NULL, O_SIZE },
  { "memory", required_argument, NULL, O_MEMORY },
  { "dirty-ratio", required_argument, NULL, O_RATIO },
  { "dirty-background-ratio", required_argument, NULL, O_BG_RATIO },
  { "bio-max", required_argument, NULL, O_BIO_MAX },
  { "cpus", required_argument, NULL, O_CPUS },
  { "dd-cpu", required_argument, NULL, O_DD_CPU },
  { "submit-batch", required_argument, NULL, O_BATCH },
  { "hz", required_argument, NULL, O_HZ },
  { "seed", required_argument, NULL, O_SEED },
  { "speed", required_argument, NULL, O_SPEED },
  { "progress", required_argument, NULL, O_PROGRESS },
  { "dry-run", no_argument, NULL, O_DRY },
  { "dry-run-rate", required_argument, NULL, O_DRY_RATE },
  { "fsync-async", no_argument, NULL, O_FSYNC_ASYNC },
  { "fsync-spread", no_argument, NULL, O_FSYNC_SPREAD },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 }
};

/* One option's value into O; false when it does not parse. */
static bool
set_option (struct options *o, int c, const char *v)
{
  struct wb_config *w = &o->cfg;
  unsigned seed;

  switch (c) {
  case O_SIZE: return parse_size (v, &w->file_bytes);
  case O_MEMORY: return parse_size (v, &w->memory_bytes);
  case O_RATIO: return parse_uint (v, &w->dirty_ratio);
  case O_BG_RATIO: return parse_uint (v, &w->background_ratio);
  case O_BIO_MAX: return parse_size (v, &w->bio_max_bytes);
  case O_CPUS: return parse_uint (v, &w->cpus);
  case O_DD_CPU: return parse_uint (v, &w->dd_cpu);
  case O_BATCH: return parse_uint (v, &w->submit_batch);
  case O_HZ: return parse_uint (v, &w->hz);
  case O_SEED:
    if (!parse_uint (v, &seed))
      return false;
    w->seed = seed;
    return true;
  case O_SPEED: return parse_double (v, &o->speed) && o->speed > 0;
  case O_PROGRESS: return parse_double (v, &o->progress_s);
  case O_DRY: o->dry_run = true; return true;
  case O_FSYNC_ASYNC: o->fsync_async = true; return true;
  case O_FSYNC_SPREAD: w->fsync_spread = true; return true;
  case O_DRY_RATE:
    if (!parse_double (v, &o->dry_rate_bps) || o->dry_rate_bps <= 0)
      return false;
    o->dry_rate_bps *= 1e6;
    return true;
  }
  return false;
}

static const char *
option_name (int c)
{
  const struct option *l;

  for (l = longopts; l->name; l++)
    if (l->val == c)
      return l->name;
  return "?";
}

static void
parse_options (int argc, char **argv, struct options *o)
{
  const char *why;
  int c;

  *o = (struct options) { .speed = 1, .progress_s = 10,
                          .dry_rate_bps = 170e6 };
  wb_config_default (&o->cfg);
  while ((c = getopt_long (argc, argv, "h", longopts, NULL)) != -1) {
    if (c == 'h')
      usage (stdout, 0);
    if (c == '?' || !set_option (o, c, optarg)) {
      if (c != '?')
        fprintf (stderr, "writeback: --%s: bad value '%s'\n",
                 option_name (c), optarg);
      exit (2);
    }
  }
  if ((why = wb_config_check (&o->cfg)) != NULL) {
    fprintf (stderr, "writeback: %s\n", why);
    exit (2);
  }
  if (o->cfg.cpus > MAX_CPUS) {
    fprintf (stderr, "writeback: cpus: at most %d\n", MAX_CPUS);
    exit (2);
  }
  if (o->dry_run ? optind != argc : optind != argc - 1)
    usage (stderr, 2);
  o->uri = o->dry_run ? NULL : argv[optind];
}

/* ---- Reports ---- */

static double
mib (uint64_t pages)
{
  return pages * (double) WB_PAGE_BYTES / (1 << 20);
}

static void
print_setup (const struct options *o, const struct wb_model *m)
{
  const struct wb_limits *l = &m->limits;

  printf ("writeback: dd of %.0f MiB, conv=fsync, %u CPU(s), dd on CPU %u;"
          " memory %.0f MiB: background %.0f MiB, setpoint %.0f MiB,"
          " limit %.0f MiB; bios up to %" PRIu64 " KiB; submit batch %u;"
          " HZ %u; seed %" PRIu64 "; device-speed %g; fsync's bios %s%s\n",
          mib (m->total_pages), o->cfg.cpus, o->cfg.dd_cpu,
          o->cfg.memory_bytes / 1048576., mib (l->background),
          mib (l->setpoint), mib (l->thresh), o->cfg.bio_max_bytes >> 10,
          o->cfg.submit_batch, o->cfg.hz, o->cfg.seed, o->speed,
          o->fsync_async ? "async" : "sync",
          o->cfg.fsync_spread ? ", spread over the CPUs" : "");
}

static const char *
phase_name (enum wb_phase p)
{
  static const char *const names[] = { "writing", "fsync", "flushing",
                                       "done" };
  return names[p];
}

/* A progress line to stderr when its model time has come. */
static void
progress (struct run *r, double now_model_s)
{
  const struct wb_model *m = &r->m;
  double interval = r->o->progress_s;

  if (interval <= 0 || now_model_s < r->next_progress_s)
    return;
  fprintf (stderr, "writeback: %8.2f s: dirtied %.0f MiB, written %.0f MiB"
           " (%.1f MB/s), under writeback %.0f MiB, dirty %.0f MiB, %s\n",
           now_model_s, mib (m->dirtied_pages), mib (m->completed_pages),
           (m->completed_pages - r->progress_pages) * (double) WB_PAGE_BYTES
           / 1e6 / (now_model_s - r->progress_s),
           mib (wb_writeback_pages (m)), mib (wb_dirty_pages (m)),
           phase_name (m->phase));
  r->progress_pages = m->completed_pages;
  r->progress_s = now_model_s;
  while (r->next_progress_s <= now_model_s)
    r->next_progress_s += interval;
}

static void
print_results (const struct run *r)
{
  const struct wb_model *m = &r->m;
  double secs = m->done_ns / 1e9, fsync_s;
  uint64_t bytes = m->total_pages * WB_PAGE_BYTES;
  char line[160];
  unsigned c;

  fsync_s = (m->done_ns - m->fsync_start_ns) / 1e9;
  printf ("bios: %" PRIu64 " background, %" PRIu64 " by fsync; per CPU:",
          m->async_bios, m->sync_bios);
  for (c = 0; c < r->o->cfg.cpus; c++)
    printf (" %" PRIu64, r->bios_per_cpu[c]);
  printf ("\nfsync: %.6f s, from %.6f s\n", fsync_s, m->fsync_start_ns / 1e9);
  wb_dd_line (bytes, secs, line, sizeof line);
  printf ("%s\n", line);
  printf ("Results: %" PRIu64 " bytes, %.6f s, %.3f MB/s (model time)\n",
          bytes, secs, secs > 0 ? bytes / secs / 1e6 : 0);
}

/* ---- The dry run: bios complete in order at a fixed rate ---- */

struct fifo
{
  struct wb_bio *bios;
  uint64_t head, tail, cap;
};

static void
fifo_push (struct fifo *q, const struct wb_bio *bio)
{
  struct wb_bio *bigger;
  uint64_t i, n = q->tail - q->head, old = q->cap;

  if (n == old) {
    q->cap = old ? 2 * old : 1024;
    bigger = malloc (q->cap * sizeof *bigger);
    if (bigger == NULL) {
      perror ("writeback: malloc");
      exit (1);
    }
    for (i = 0; i < n; i++)
      bigger[i] = q->bios[(q->head + i) % old];
    free (q->bios);
    q->bios = bigger, q->head = 0, q->tail = n;
  }
  q->bios[q->tail++ % q->cap] = *bio;
}

static void
print_bio (const struct wb_model *m, uint64_t now_ns, const struct wb_bio *b)
{
  printf ("%" PRIu64 " %.3f %u %" PRIu64 " %" PRIu64 " %d %" PRIu64
          " %" PRIu64 "\n", b->seq, now_ns / 1e6, b->cpu, b->offset_bytes,
          b->length_bytes, b->sync, wb_dirty_pages (m),
          wb_writeback_pages (m));
}

static void
dry_run (struct run *r)
{
  struct wb_model *m = &r->m;
  struct fifo q = { NULL, 0, 0, 0 };
  struct wb_bio bio;
  uint64_t now = 0;
  enum wb_action a;

  printf ("seq time_ms cpu offset length sync dirty_pages"
          " writeback_pages\n");
  while ((a = wb_next (m, now, &bio)) != WB_FINISHED) {
    if (a == WB_SUBMIT) {
      fifo_push (&q, &bio);
      r->bios_per_cpu[bio.cpu]++;
      print_bio (m, now, &bio);
    }
    else if (a == WB_FLUSH)
      wb_flushed (m, now);
    else {
      /* The oldest bio completes, the device free once it has. */
      bio = q.bios[q.head++ % q.cap];
      now += (uint64_t) (bio.length_bytes / r->o->dry_rate_bps * 1e9);
      wb_completed (m, now, &bio);
    }
    progress (r, now / 1e9);
  }
  free (q.bios);
}

/* ---- Against a server ---- */

static double
model_s (const struct run *r)
{
  return (now_s () - r->t0_s) * r->o->speed;
}

static uint64_t
model_ns (const struct run *r)
{
  return (uint64_t) (model_s (r) * 1e9);
}

/* libnbd's completion callbacks: note the reply, the model is told
 * later, at the model time the poll loop reads. */
static int
bio_done (void *user_data, int *error)
{
  struct inflight *f = user_data;

  f->error = *error;
  f->next = f->run->done;
  f->run->done = f;
  return 1;
}

static int
flush_done (void *user_data, int *error)
{
  struct run *r = user_data;

  r->flush_error = *error;
  r->flushed = true;
  return 1;
}

/* A connection to URI whose export name says the CPU its bios come
 * from and whether its writes are sync. */
static struct nbd_handle *
connect_as (const char *uri, unsigned cpu, bool sync)
{
  struct nbd_handle *h = nbd_create ();
  char name[32];

  snprintf (name, sizeof name, "cpu=%u%s", cpu, sync ? ",sync" : "");
  if (h == NULL || nbd_set_opt_mode (h, true) == -1
      || nbd_connect_uri (h, uri) == -1
      || nbd_set_export_name (h, name) == -1 || nbd_opt_go (h) == -1) {
    fprintf (stderr, "writeback: %s (export %s): %s\n", uri, name,
             nbd_get_error ());
    exit (1);
  }
  return h;
}

static void
connect_all (struct run *r)
{
  unsigned cpus = r->o->cfg.cpus, c;
  int64_t size;

  r->nconn = r->o->fsync_async ? cpus : 2 * cpus;
  for (c = 0; c < r->nconn; c++)
    r->nbd[c] = connect_as (r->o->uri, c % cpus, c >= cpus);
  size = nbd_get_size (r->nbd[0]);
  if (size < 0 || (uint64_t) size < r->o->cfg.file_bytes) {
    fprintf (stderr, "writeback: the export (%" PRId64 " bytes) is smaller"
             " than --size\n", size);
    exit (1);
  }
}

/* A bio goes on its CPU's connection, fsync's on its sync one. */
static void
submit (struct run *r, const struct wb_bio *bio)
{
  struct inflight *f = malloc (sizeof *f);
  nbd_completion_callback cb = { .callback = bio_done, .user_data = f };
  unsigned c = bio->cpu + (bio->sync && !r->o->fsync_async
                           ? r->o->cfg.cpus : 0);

  if (f == NULL) {
    perror ("writeback: malloc");
    exit (1);
  }
  *f = (struct inflight) { .bio = *bio, .run = r };
  if (nbd_aio_pwrite (r->nbd[c], r->buf, bio->length_bytes,
                      bio->offset_bytes, cb, 0) == -1) {
    fprintf (stderr, "writeback: write at %" PRIu64 ": %s\n",
             bio->offset_bytes, nbd_get_error ());
    exit (1);
  }
  r->bios_per_cpu[bio->cpu]++;
}

/* Waits until a connection can be read or written, and lets libnbd
 * move: replies call bio_done and flush_done. */
static void
poll_once (struct run *r)
{
  struct pollfd fds[2 * MAX_CPUS];
  unsigned c, n = r->nconn, dir;
  int rc = 0;

  for (c = 0; c < n; c++) {
    dir = nbd_aio_get_direction (r->nbd[c]);
    fds[c] = (struct pollfd) { .fd = nbd_aio_get_fd (r->nbd[c]),
      .events = ((dir & LIBNBD_AIO_DIRECTION_READ) ? POLLIN : 0)
                | ((dir & LIBNBD_AIO_DIRECTION_WRITE) ? POLLOUT : 0) };
  }
  if (poll (fds, n, -1) == -1) {
    if (errno == EINTR)
      return;
    perror ("writeback: poll");
    exit (1);
  }
  for (c = 0; c < n && rc != -1; c++) {
    if (fds[c].revents & (POLLIN | POLLHUP | POLLERR))
      rc = nbd_aio_notify_read (r->nbd[c]);
    else if (fds[c].revents & POLLOUT)
      rc = nbd_aio_notify_write (r->nbd[c]);
  }
  if (rc == -1) {
    fprintf (stderr, "writeback: %s\n", nbd_get_error ());
    exit (1);
  }
}

/* Tells the model of the bios whose replies came. */
static void
take_completions (struct run *r)
{
  struct inflight *f;
  uint64_t now = model_ns (r);

  while ((f = r->done) != NULL) {
    r->done = f->next;
    if (f->error) {
      fprintf (stderr, "writeback: write at %" PRIu64 ": %s\n",
               f->bio.offset_bytes, strerror (f->error));
      exit (1);
    }
    wb_completed (&r->m, now, &f->bio);
    free (f);
  }
}

static void
flush_one (struct run *r, unsigned c)
{
  nbd_completion_callback cb = { .callback = flush_done, .user_data = r };

  r->flushed = false;
  if (nbd_aio_flush (r->nbd[c], cb, 0) == -1) {
    fprintf (stderr, "writeback: flush: %s\n", nbd_get_error ());
    exit (1);
  }
  while (!r->flushed)
    poll_once (r);
  if (r->flush_error) {
    fprintf (stderr, "writeback: flush: %s\n", strerror (r->flush_error));
    exit (1);
  }
}

/* fsync's flush (the log commit's), from dd's CPU: one when a flush
 * covers every connection's writes (multi-conn), else one on each. */
static void
flush (struct run *r)
{
  unsigned dd = r->o->cfg.dd_cpu, c;
  bool one = nbd_can_multi_conn (r->nbd[dd]) == 1;

  for (c = 0; c < r->nconn; c++)
    if (!one || c == dd)
      flush_one (r, c);
  wb_flushed (&r->m, model_ns (r));
}

static void
run_against_server (struct run *r)
{
  struct wb_bio bio;
  enum wb_action a;

  r->t0_s = now_s ();
  while ((a = wb_next (&r->m, model_ns (r), &bio)) != WB_FINISHED) {
    if (a == WB_SUBMIT)
      submit (r, &bio);
    else if (a == WB_FLUSH)
      flush (r);
    else {
      poll_once (r);
      take_completions (r);
    }
    progress (r, model_s (r));
  }
}

static void
make_buffer (struct run *r)
{
  uint64_t state = 88172645463325252ULL, i;

  r->buf = malloc (r->o->cfg.bio_max_bytes);
  if (r->buf == NULL) {
    perror ("writeback: malloc");
    exit (1);
  }
  /* dd's if=random: bytes no server may take for zeros. */
  for (i = 0; i < r->o->cfg.bio_max_bytes; i++) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    r->buf[i] = (char) (state >> 24);
  }
}

int
main (int argc, char **argv)
{
  static struct run r;
  struct options o;
  unsigned c;

  parse_options (argc, argv, &o);
  r.o = &o;
  r.next_progress_s = o.progress_s;
  wb_init (&r.m, &o.cfg);
  print_setup (&o, &r.m);
  if (o.dry_run)
    dry_run (&r);
  else {
    make_buffer (&r);
    connect_all (&r);
    run_against_server (&r);
    for (c = 0; c < r.nconn; c++) {
      nbd_shutdown (r.nbd[c], 0);
      nbd_close (r.nbd[c]);
    }
    free (r.buf);
  }
  print_results (&r);
  return 0;
}
