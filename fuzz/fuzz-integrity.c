/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes dm-integrity's superblock, geometry and journal parser
 * (integrity/sb.c, geom.c, journal.c): the input is the device, opened
 * readonly in mode J without and with an internal hash (crc32c), so
 * that a journal is replayed in memory.
 *
 * Rules checked beyond "no crash, no out-of-bounds access": a refusal
 * gives a reason on one line; readonly never writes; an accepted device
 * provides a multiple of its block, fitting the input; every block
 * reads, or fails with -EILSEQ (a tag that does not verify) or -EIO
 * (a place beyond the input); the table line is one line. */
#include <errno.h>
#include <string.h>

#include "../integrity/integrity.h"
#include "fuzz.h"

#define MAX_READ_BLOCKS 256

static int
image_pread (void *opaque, void *buf, uint32_t count, uint64_t offset)
{
  return fuzz_image_read (opaque, buf, count, offset) == 0 ? 0 : -EIO;
}

static int
image_pwrite (void *opaque, const void *buf, uint32_t count,
              uint64_t offset)
{
  (void) opaque; (void) buf;
  fuzz_fail ("readonly device written: %u bytes at %llu", count,
             (unsigned long long) offset);
}

static int
image_flush (void *opaque)
{
  (void) opaque;
  return 0;
}

static void
read_all (struct integrity_dev *d, uint64_t size)
{
  uint32_t bb = integrity_block_bytes (d);
  uint64_t blocks = integrity_data_sectors (d) * 512 / bb, bad;
  static uint8_t data[4096], tag[512];
  char line[1024];

  if (bb < 512 || bb > 4096 || integrity_data_sectors (d) * 512 % bb
      || integrity_data_sectors (d) * 512 > size)
    fuzz_fail ("accepted %llu sectors of %u-byte blocks on %llu bytes",
               (unsigned long long) integrity_data_sectors (d), bb,
               (unsigned long long) size);
  for (uint64_t b = 0; b < blocks && b < MAX_READ_BLOCKS; b++) {
    int r = integrity_read (d, b, 1, data, tag, &bad);

    if (r != 0 && r != -EILSEQ && r != -EIO)
      fuzz_fail ("block %llu: error %d", (unsigned long long) b, r);
  }
  integrity_table (d, line, sizeof line);
  if (strchr (line, '\n'))
    fuzz_fail ("table line of more than one line");
}

int
fuzz_integrity (const uint8_t *data, size_t size)
{
  struct fuzz_image im = { data, size };
  struct integrity_io io = {
    .opaque = &im, .pread = image_pread, .pwrite = image_pwrite,
    .flush = image_flush,
  };
  static const char *hashes[] = { NULL, "crc32c" };

  if (size < 512)
    return 0;
  for (int h = 0; h < 2; h++) {
    struct integrity_options opt = {
      .device_bytes = size & ~(size_t) 511, .readonly = true,
      .internal_hash = hashes[h],
    };
    char why[256] = "";
    struct integrity_dev *d = integrity_open (&io, &opt, why, sizeof why);

    if (d == NULL) {
      fuzz_check_reason (why);
      continue;
    }
    read_all (d, size);
    integrity_close (d);
  }
  return 0;
}

FUZZ_ENTRY (fuzz_integrity)
