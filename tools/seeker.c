/* SPDX-License-Identifier: GPL-2.0-or-later */
/* seeker: random-read "seeks per second" of an NBD export, in the manner
 * of the classic seeker disk benchmark: one small read at a random
 * block-aligned offset at a time (queue depth 1) for a fixed time, then
 * the number of reads per second and the mean time per access.
 *
 *   seeker [--time SECONDS] [--block-size BYTES] [--seed N] [--quiet] URI
 *
 * URI is any libnbd URI, e.g. nbd+unix:///?socket=/tmp/sock.  The default
 * is 512-byte reads for 30 seconds.  A server whose minimum block size is
 * larger than the block size asked for is read in its minimum block size
 * (as the page cache would read a 4K-sector disk), and the header says so.
 *
 * The last line is always "Results: N seeks/second, X ms random access
 * time", which scripts can parse. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnbd.h>

#include "../common/xorshift.h"

struct options
{
  const char *uri;
  double seconds;               /* how long to read */
  uint64_t block_bytes;         /* size of each read */
  uint64_t seed;
  bool quiet;                   /* no progress dots */
};

static void
usage (FILE *f, int status)
{
  fprintf (f,
           "usage: seeker [--time SECONDS] [--block-size BYTES] "
           "[--seed N] [--quiet] URI\n"
           "  -t, --time SECONDS     how long to read (default 30)\n"
           "  -b, --block-size BYTES size of each read (default 512)\n"
           "  -s, --seed N           random seed (default: the clock)\n"
           "  -q, --quiet            no progress dots\n");
  exit (status);
}

static double
now_seconds (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
parse_options (int argc, char **argv, struct options *o)
{
  static const struct option longopts[] = {
    { "time", required_argument, NULL, 't' },
    { "block-size", required_argument, NULL, 'b' },
    { "seed", required_argument, NULL, 's' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  char *end;
  int c;

  o->seconds = 30;
  o->block_bytes = 512;
  o->seed = (uint64_t) time (NULL);
  o->quiet = false;
  while ((c = getopt_long (argc, argv, "t:b:s:qh", longopts, NULL)) != -1) {
    errno = 0;
    switch (c) {
    case 't':
      o->seconds = strtod (optarg, &end);
      if (errno || *end || !(o->seconds > 0 && o->seconds <= 86400))
        usage (stderr, 2);
      break;
    case 'b':
      o->block_bytes = strtoull (optarg, &end, 10);
      if (errno || *end || o->block_bytes == 0
          || o->block_bytes > 64 * 1024 * 1024)
        usage (stderr, 2);
      break;
    case 's':
      o->seed = strtoull (optarg, &end, 10);
      if (errno || *end)
        usage (stderr, 2);
      break;
    case 'q':
      o->quiet = true;
      break;
    case 'h':
      usage (stdout, 0);
      break;
    default:
      usage (stderr, 2);
    }
  }
  if (optind != argc - 1)
    usage (stderr, 2);
  o->uri = argv[optind];
  /* A zero state would make xorshift return zeros forever. */
  o->seed = o->seed * 2 + 1;
}

/* Reads random blocks until the time is up; returns the number of reads
 * and their total time in *elapsed_s, or -1 on a read error. */
static int64_t
seek_loop (struct nbd_handle *nbd, const struct options *o,
           uint64_t block_bytes, uint64_t nblocks, double *elapsed_s)
{
  uint64_t state = o->seed;
  double start = now_seconds (), now = start, next_dot = start + 1;
  int64_t reads = 0;
  char *buf;

  buf = malloc (block_bytes);
  if (buf == NULL) {
    perror ("malloc");
    return -1;
  }
  while (now - start < o->seconds) {
    uint64_t offset = xorshift64s_next (&state) % nblocks * block_bytes;

    if (nbd_pread (nbd, buf, block_bytes, offset, 0) == -1) {
      fprintf (stderr, "seeker: pread at %" PRIu64 ": %s\n",
               offset, nbd_get_error ());
      free (buf);
      return -1;
    }
    reads++;
    now = now_seconds ();
    if (!o->quiet && now >= next_dot) {
      putchar ('.');
      fflush (stdout);
      next_dot += 1;
    }
  }
  free (buf);
  *elapsed_s = now - start;
  return reads;
}

int
main (int argc, char **argv)
{
  struct options o;
  struct nbd_handle *nbd;
  int64_t size_bytes, min_block_bytes, reads;
  uint64_t block_bytes;
  double elapsed_s;

  parse_options (argc, argv, &o);
  nbd = nbd_create ();
  if (nbd == NULL || nbd_connect_uri (nbd, o.uri) == -1) {
    fprintf (stderr, "seeker: %s: %s\n", o.uri, nbd_get_error ());
    exit (1);
  }
  size_bytes = nbd_get_size (nbd);
  if (size_bytes == -1) {
    fprintf (stderr, "seeker: size: %s\n", nbd_get_error ());
    exit (1);
  }
  block_bytes = o.block_bytes;
  min_block_bytes = nbd_get_block_size (nbd, LIBNBD_SIZE_MINIMUM);
  if (min_block_bytes > 0 && (uint64_t) min_block_bytes > block_bytes)
    block_bytes = min_block_bytes;
  if ((uint64_t) size_bytes < block_bytes) {
    fprintf (stderr, "seeker: export of %" PRId64 " bytes is smaller than "
             "one %" PRIu64 "-byte block\n", size_bytes, block_bytes);
    exit (1);
  }

  printf ("Seeker (libnbd), random %" PRIu64 "-byte reads at queue depth 1"
          "%s\n", block_bytes,
          block_bytes != o.block_bytes ? " (the server's minimum)" : "");
  printf ("Benchmarking %s [%" PRId64 " MiB], wait %g seconds",
          o.uri, size_bytes >> 20, o.seconds);
  fflush (stdout);
  reads = seek_loop (nbd, &o, block_bytes, size_bytes / block_bytes,
                     &elapsed_s);
  putchar ('\n');
  if (reads <= 0)
    exit (1);
  nbd_shutdown (nbd, 0);
  nbd_close (nbd);

  printf ("%" PRId64 " reads in %.3f s\n", reads, elapsed_s);
  printf ("Results: %.0f seeks/second, %.4f ms random access time\n",
          reads / elapsed_s, elapsed_s * 1000 / reads);
  return 0;
}
