/* SPDX-License-Identifier: GPL-2.0-or-later */
/* integrity-format: a dm-integrity superblock and an empty journal
 * written into an image file without the kernel (integrity_format of
 * integrity/integrity.h: what Linux 6.1's dm_integrity_ctr writes over
 * a zeroed superblock when integritysetup format loads its table), for
 * the benchmarks and tests that need a volume with integrity larger
 * than the kernel-made images of tests/data/integrity.
 *
 *   integrity-format [--offset BYTES] [--data-bytes BYTES]
 *                    [--block-size BYTES] [--tag-size BYTES]
 *                    [--journal-sectors N] [--no-fix-padding]
 *                    [--internal-hash ALG [--key-file FILE]] [--wipe]
 *                    IMAGE
 *
 * The device runs from --offset (e.g. a LUKS2 segment's offset) to the
 * end of IMAGE; with --data-bytes IMAGE is first cut or grown so that
 * the device provides exactly that many bytes of data (a multiple of 4
 * KiB), the journal as large as the kernel's default for that device.
 * Without an internal hash the tags come from above (dm-crypt's AEAD):
 * --tag-size is then required, and --wipe, which writes zero tags, is
 * refused, since dm-crypt would fail every block (cryptsetup wipes
 * through the crypt mapping: write the export through the plugin).
 * Prints "data_bytes N device_bytes D journal_sectors J". */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../integrity/integrity.h"

/* dm_integrity_ctr's default journal: 1/128 of the device, at most
 * DEFAULT_MAX_JOURNAL_SECTORS (as integrity_format applies it). */
#define JOURNAL_SIZE_SHIFT     7
#define MAX_JOURNAL_SECTORS    131072u
#define SB_PROVIDED_AT         16      /* le64 provided_data_sectors */
#define MAX_KEY_BYTES          4096

struct options {
  const char *image, *internal_hash, *key_file;
  uint64_t offset_bytes, data_bytes;
  uint32_t block_bytes, tag_size, journal_sectors;
  bool fix_padding, wipe;
};

static void
usage (FILE *f, int status)
{
  fprintf (f,
           "usage: integrity-format [options] IMAGE\n"
           "  --offset BYTES         where dm-integrity starts (default 0)\n"
           "  --data-bytes BYTES     cut or grow IMAGE to provide this much\n"
           "  --block-size BYTES     512 (default) .. 4096\n"
           "  --tag-size BYTES       default: the internal hash's size\n"
           "  --journal-sectors N    default: the kernel's for the device\n"
           "  --no-fix-padding       the padding of kernels before 1.4\n"
           "  --internal-hash ALG    crc32c, sha256, hmac(sha256) ...\n"
           "  --key-file FILE        the internal hash's key\n"
           "  --wipe                 zeros and their tags in every block\n");
  exit (status);
}

static uint64_t
number (const char *s, const char *what)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno || end == s || *end || *s == '-') {
    fprintf (stderr, "integrity-format: bad %s '%s'\n", what, s);
    exit (2);
  }
  return v;
}

static void
parse_args (int argc, char **argv, struct options *o)
{
  static const struct option longs[] = {
    { "offset", required_argument, NULL, 'o' },
    { "data-bytes", required_argument, NULL, 'd' },
    { "block-size", required_argument, NULL, 'b' },
    { "tag-size", required_argument, NULL, 't' },
    { "journal-sectors", required_argument, NULL, 'j' },
    { "no-fix-padding", no_argument, NULL, 'P' },
    { "internal-hash", required_argument, NULL, 'H' },
    { "key-file", required_argument, NULL, 'k' },
    { "wipe", no_argument, NULL, 'w' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  *o = (struct options) { .block_bytes = 512, .fix_padding = true };
  while ((c = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
    switch (c) {
    case 'o': o->offset_bytes = number (optarg, "--offset"); break;
    case 'd': o->data_bytes = number (optarg, "--data-bytes"); break;
    case 'b': o->block_bytes = number (optarg, "--block-size"); break;
    case 't': o->tag_size = number (optarg, "--tag-size"); break;
    case 'j': o->journal_sectors = number (optarg, "--journal-sectors");
      break;
    case 'P': o->fix_padding = false; break;
    case 'H': o->internal_hash = optarg; break;
    case 'k': o->key_file = optarg; break;
    case 'w': o->wipe = true; break;
    case 'h': usage (stdout, 0); break;
    default: usage (stderr, 2);
    }
  }
  if (optind != argc - 1)
    usage (stderr, 2);
  o->image = argv[optind];
}

static const char *
check_args (const struct options *o)
{
  if (o->offset_bytes % 512)
    return "--offset must be a multiple of 512";
  if (o->data_bytes % 4096)
    return "--data-bytes must be a multiple of 4096";
  if (o->internal_hash == NULL && o->tag_size == 0)
    return "without --internal-hash, --tag-size is required";
  if (o->internal_hash == NULL && o->wipe)
    return "--wipe writes zero tags: without an internal hash, write "
      "the export through dm-crypt instead";
  if (o->key_file && o->internal_hash == NULL)
    return "--key-file without --internal-hash";
  return NULL;
}

/* The device under dm-integrity: a file descriptor, or nothing at all
 * (a dry run that only keeps the superblock's provided_data_sectors). */
struct target {
  int fd;                        /* -1: dry run */
  uint64_t sb_offset;            /* bytes */
  uint64_t provided_sectors;
};

static int
t_pread (void *opaque, void *buf, uint32_t count, uint64_t offset)
{
  struct target *t = opaque;

  if (t->fd == -1 || pread (t->fd, buf, count, offset) != (ssize_t) count)
    return -EIO;
  return 0;
}

static int
t_pwrite (void *opaque, const void *buf, uint32_t count, uint64_t offset)
{
  struct target *t = opaque;
  const uint8_t *p = buf;

  if (offset == t->sb_offset && count >= SB_PROVIDED_AT + 8) {
    t->provided_sectors = 0;
    for (int i = 7; i >= 0; i--)
      t->provided_sectors = t->provided_sectors << 8 | p[SB_PROVIDED_AT + i];
  }
  if (t->fd == -1)
    return 0;
  return pwrite (t->fd, buf, count, offset) == (ssize_t) count ? 0 : -errno;
}

static int
t_flush (void *opaque)
{
  struct target *t = opaque;

  return t->fd == -1 || fdatasync (t->fd) == 0 ? 0 : -errno;
}

/* Formats a device of DEVICE_BYTES at the offset; FD -1: a dry run.
 * Returns the data sectors it provides, or 0 after printing why. */
static uint64_t
format (const struct options *o, int fd, uint64_t device_bytes,
        uint32_t journal_sectors, const uint8_t *key, size_t key_bytes)
{
  struct target t = { .fd = fd, .sb_offset = o->offset_bytes };
  struct integrity_io io = {
    .opaque = &t, .pread = t_pread, .pwrite = t_pwrite, .flush = t_flush,
  };
  struct integrity_format_options fo = {
    .offset_bytes = o->offset_bytes, .device_bytes = device_bytes,
    .tag_size = o->tag_size, .block_bytes = o->block_bytes,
    .journal_sectors = journal_sectors, .fix_padding = o->fix_padding,
    .fix_hmac = o->internal_hash != NULL, .wipe = o->wipe && fd != -1,
    .internal_hash = o->internal_hash, .internal_hash_key = key,
    .internal_hash_key_bytes = key_bytes,
  };
  char err[256];

  if (integrity_format (&io, &fo, err, sizeof err) == -1) {
    if (fd != -1)
      fprintf (stderr, "integrity-format: %s: %s\n", o->image, err);
    return 0;
  }
  return t.provided_sectors;
}

static uint32_t
default_journal (const struct options *o, uint64_t device_bytes)
{
  uint64_t j = (o->offset_bytes + device_bytes) / 512 >> JOURNAL_SIZE_SHIFT;

  return j > MAX_JOURNAL_SECTORS ? MAX_JOURNAL_SECTORS : j;
}

/* The smallest device that provides DATA_BYTES with JOURNAL sectors of
 * journal (provided data grows with the device), or 0. */
static uint64_t
device_for (const struct options *o, uint32_t journal, const uint8_t *key,
            size_t key_bytes)
{
  uint64_t want = o->data_bytes / 512;
  uint64_t lo = want, hi = 2 * want + journal + 65536;   /* sectors */

  if (format (o, -1, hi * 512, journal, key, key_bytes) < want)
    return 0;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;

    if (format (o, -1, mid * 512, journal, key, key_bytes) >= want)
      hi = mid;
    else
      lo = mid + 1;
  }
  return format (o, -1, lo * 512, journal, key, key_bytes) == want
    ? lo * 512 : 0;
}

/* With --data-bytes: the device's size, the journal the kernel's
 * default for it (found again until it no longer moves). */
static int
size_device (const struct options *o, uint64_t *device_bytes,
             uint32_t *journal, const uint8_t *key, size_t key_bytes)
{
  uint64_t dev = o->data_bytes + o->data_bytes / 8;

  for (int round = 0; round < 8; round++) {
    uint32_t j = o->journal_sectors ? o->journal_sectors
      : default_journal (o, dev);

    dev = device_for (o, j, key, key_bytes);
    if (dev == 0) {
      fprintf (stderr, "integrity-format: no device provides exactly %"
               PRIu64 " bytes\n", o->data_bytes);
      return -1;
    }
    if (o->journal_sectors || default_journal (o, dev) == j) {
      *device_bytes = dev;
      *journal = j;
      return 0;
    }
  }
  fprintf (stderr, "integrity-format: the journal's size does not settle\n");
  return -1;
}

static int
read_key (const char *path, uint8_t *key, size_t *key_bytes)
{
  FILE *f = fopen (path, "rb");

  if (f == NULL) {
    fprintf (stderr, "integrity-format: %s: %s\n", path, strerror (errno));
    return -1;
  }
  *key_bytes = fread (key, 1, MAX_KEY_BYTES, f);
  fclose (f);
  if (*key_bytes == 0 || *key_bytes == MAX_KEY_BYTES) {
    fprintf (stderr, "integrity-format: %s: no key, or over %d bytes\n",
             path, MAX_KEY_BYTES - 1);
    return -1;
  }
  return 0;
}

static int
run (const struct options *o, const uint8_t *key, size_t key_bytes)
{
  uint64_t device_bytes = 0, provided;
  uint32_t journal = o->journal_sectors;
  struct stat st;
  int fd, r = -1;

  if (o->data_bytes
      && size_device (o, &device_bytes, &journal, key, key_bytes) == -1)
    return -1;
  fd = open (o->image, O_RDWR | O_CREAT, 0600);
  if (fd == -1 || fstat (fd, &st) == -1) {
    fprintf (stderr, "integrity-format: %s: %s\n", o->image,
             strerror (errno));
    goto out;
  }
  if (o->data_bytes
      && ftruncate (fd, o->offset_bytes + device_bytes) == -1) {
    fprintf (stderr, "integrity-format: %s: %s\n", o->image,
             strerror (errno));
    goto out;
  }
  if (!o->data_bytes) {
    if ((uint64_t) st.st_size <= o->offset_bytes) {
      fprintf (stderr, "integrity-format: %s ends before --offset\n",
               o->image);
      goto out;
    }
    device_bytes = (st.st_size - o->offset_bytes) / 512 * 512;
  }
  provided = format (o, fd, device_bytes, journal, key, key_bytes);
  if (provided == 0)
    goto out;
  printf ("data_bytes %" PRIu64 " device_bytes %" PRIu64
          " journal_sectors %u\n", provided * 512, device_bytes,
          journal ? journal : default_journal (o, device_bytes));
  r = 0;
 out:
  if (fd != -1 && close (fd) == -1 && r == 0) {
    fprintf (stderr, "integrity-format: %s: %s\n", o->image,
             strerror (errno));
    r = -1;
  }
  return r;
}

int
main (int argc, char **argv)
{
  struct options o;
  static uint8_t key[MAX_KEY_BYTES];
  size_t key_bytes = 0;
  const char *bad;
  int r;

  parse_args (argc, argv, &o);
  bad = check_args (&o);
  if (bad) {
    fprintf (stderr, "integrity-format: %s\n", bad);
    return 2;
  }
  if (o.key_file && read_key (o.key_file, key, &key_bytes) == -1)
    return 1;
  r = run (&o, o.key_file ? key : NULL, key_bytes);
  explicit_bzero (key, sizeof key);
  return r == 0 ? 0 : 1;
}
