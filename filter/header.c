/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libcryptsetup reads headers from paths only, and has no interface for
 * other IO: the header area of the next layer (everything before the
 * data) is copied into a memfd that it opens as /proc/self/fd/N.  The
 * copy is read-only as far as the layer below is concerned: nothing in
 * it is ever written back.  FileVault2 metadata is scattered (the
 * encrypted part may lie anywhere in the first 1 GiB): only the blocks
 * that the metadata chain reads are copied, into a sparse copy as long
 * as the layer; so is BitLocker's, whose metadata areas lie anywhere in
 * the volume. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nbdkit-filter.h>

#include "../common/endian.h"
#include "../luks/bitlk.h"
#include "../luks/fvault2.h"
#include "../luks/luks.h"
#include "filter.h"

#define PROBE_BYTES   (64 * 1024)            /* a plain image: the probe */
#define LUKS2_DEFAULT (16 * 1024 * 1024)     /* cryptsetup's data offset */
#define MAX_HEADER    (1024 * 1024 * 1024)   /* LUKS2 allows 128 MiB of
                                                keyslots; far beyond */
#define COPY_CHUNK    (1024 * 1024)
#define TCRYPT_HEAD   (64 * 1024 + 512)      /* up to the hidden header */
#define TCRYPT_TAIL   (128 * 1024)           /* the backup headers */

/* The first WANT bytes of LOWER (at most its size) into FD, from DONE
 * on. */
static int
copy_to (struct backend *lower, int fd, uint64_t *done, uint64_t want)
{
  uint8_t *buf;
  size_t len;

  if (want > lower->size)
    want = lower->size;
  if (*done >= want)
    return 0;
  if ((buf = malloc (COPY_CHUNK)) == NULL) {
    nbdkit_error ("malloc: %m");
    return -1;
  }
  for (; *done < want; *done += len) {
    len = want - *done < COPY_CHUNK ? want - *done : COPY_CHUNK;
    if (backend_pread (lower, buf, len, *done) == -1) {
      nbdkit_error ("reading the header from the plugin: %m");
      break;
    }
    if (pwrite (fd, buf, len, *done) != (ssize_t) len) {
      nbdkit_error ("copying the header: %m");
      break;
    }
  }
  free (buf);
  return *done >= want ? 0 : -1;
}

/* LUKS2 binary header sizes: a power of two from 16 KiB to 4 MiB, the
 * second copy of the header right after the first. */
static bool
luks2_header_size_valid (uint64_t bytes)
{
  return bytes >= 16 * 1024 && bytes <= 4 * 1024 * 1024
    && (bytes & (bytes - 1)) == 0;
}

/* With the first binary header destroyed cryptsetup opens the second,
 * found at one of the sizes LUKS2 allows: its size, or 0. */
static uint64_t
secondary_header_size (struct backend *lower)
{
  uint8_t h[16];
  uint64_t off;

  for (off = 16 * 1024; luks2_header_size_valid (off); off *= 2)
    if (off + sizeof h <= lower->size
        && backend_pread (lower, h, sizeof h, off) == 0
        && memcmp (h, "SKUL\xba\xbe", 6) == 0 && get_be (h + 6, 2) == 2
        && get_be (h + 8, 8) == off)
      return off;
  return 0;
}

/* fvault2_read_fn and bitlk_read_fn over the layer below that also
 * copies what it read into the header copy. */
struct copy_reader
{
  struct backend *lower;
  int fd;
};

static int
copy_read (void *opaque, void *buf, size_t len, uint64_t offset)
{
  struct copy_reader *c = opaque;

  if (offset > c->lower->size || len > c->lower->size - offset
      || backend_pread (c->lower, buf, len, offset) == -1
      || pwrite (c->fd, buf, len, offset) != (ssize_t) len)
    return -1;
  return 0;
}

/* FileVault2's metadata chain or BitLocker's metadata (with the whole
 * first metadata area, which libcryptsetup reads in blocks) copied as
 * it is read.  Metadata that does not read is not an error here:
 * unlocking the copy names the problem. */
static int
copy_scattered (struct backend *lower, int fd, bool bitlk)
{
  struct copy_reader c = { .lower = lower, .fd = fd };
  uint8_t *area = NULL;
  struct fvault2_layout l;
  struct bitlk_metadata m;
  char why[256];

  if (bitlk) {
    if (bitlk_read_metadata (copy_read, &c, &m, why, sizeof why) == -1)
      nbdkit_debug ("BitLocker metadata copy: %s", why);
    else if ((area = malloc (BITLK_METADATA_BYTES)) == NULL
             || copy_read (&c, area, BITLK_METADATA_BYTES,
                           m.metadata_offset[0]) == -1)
      nbdkit_debug ("BitLocker metadata copy: the first area is short");
    free (area);
  }
  else if (fvault2_read_layout (copy_read, &c, &l, why, sizeof why) == -1)
    nbdkit_debug ("FileVault2 metadata copy: %s", why);
  if (ftruncate (fd, lower->size) == -1) {
    nbdkit_error ("copying the header: %m");
    return -1;
  }
  return 0;
}

/* How much of the layer the header takes (*WANT), once its first
 * PROBE_BYTES are in FD (at PATH); 0 for an image without LUKS magic
 * (a FileVault2 or BitLocker image's metadata is copied here).  -1 after
 * nbdkit_error. */
static int
header_bytes (struct backend *lower, int fd, const char *path,
              uint64_t *done, uint64_t *want)
{
  uint8_t h[4096];
  uint64_t data_offset = 0, area = 0;
  bool magic;

  *want = 0;
  if (pread (fd, h, sizeof h, 0) != sizeof h)
    return 0;
  if (fvault2_has_magic (h, sizeof h) || bitlk_has_magic (h, sizeof h))
    return copy_scattered (lower, fd, bitlk_has_magic (h, sizeof h));
  magic = memcmp (h, "LUKS\xba\xbe", 6) == 0;
  if (magic && get_be (h + 6, 2) == 1) {        /* LUKS1: payloadOffset */
    *want = get_be (h + 104, 4) * 512;
    return 0;
  }
  /* LUKS2: both binary headers with their JSON areas, then the JSON's
   * data segment offset. */
  if (magic && luks2_header_size_valid (get_be (h + 8, 8)))
    area = get_be (h + 8, 8);
  else
    area = secondary_header_size (lower);
  if (area == 0)
    return 0;
  if (copy_to (lower, fd, done, 2 * area) == -1)
    return -1;
  *want = luks_probe_header (path, &data_offset) == 1 && data_offset > 0
    ? data_offset : LUKS2_DEFAULT;
  return 0;
}

/* The last TCRYPT_TAIL bytes of LOWER into FD at the same offsets. */
static int
copy_tail (struct backend *lower, int fd)
{
  struct copy_reader c = { .lower = lower, .fd = fd };
  uint64_t from = lower->size > TCRYPT_TAIL ? lower->size - TCRYPT_TAIL : 0;
  uint8_t *buf = malloc (TCRYPT_TAIL);
  int r;

  if (buf == NULL) {
    nbdkit_error ("malloc: %m");
    return -1;
  }
  r = copy_read (&c, buf, lower->size - from, from);
  free (buf);
  if (r == -1)
    nbdkit_error ("copying the TCRYPT backup headers: %m");
  return r;
}

int
header_copy_tcrypt (struct backend *lower, char *path, size_t size)
{
  int fd = memfd_create ("dmcrypt-header", MFD_CLOEXEC);
  uint64_t done = 0;

  if (fd == -1) {
    nbdkit_error ("memfd_create: %m");
    return -1;
  }
  snprintf (path, size, "/proc/self/fd/%d", fd);
  if (copy_to (lower, fd, &done, TCRYPT_HEAD) == -1
      || copy_tail (lower, fd) == -1)
    goto fail;
  if (ftruncate (fd, lower->size) == -1) {
    nbdkit_error ("copying the header: %m");
    goto fail;
  }
  return fd;

 fail:
  close (fd);
  return -1;
}

int
header_copy (struct backend *lower, char *path, size_t size)
{
  int fd = memfd_create ("dmcrypt-header", MFD_CLOEXEC);
  uint64_t done = 0, want;

  if (fd == -1) {
    nbdkit_error ("memfd_create: %m");
    return -1;
  }
  snprintf (path, size, "/proc/self/fd/%d", fd);
  if (copy_to (lower, fd, &done, PROBE_BYTES) == -1)
    goto fail;
  if (header_bytes (lower, fd, path, &done, &want) == -1)
    goto fail;
  if (want > MAX_HEADER) {
    nbdkit_error ("the LUKS header claims more than %d MiB: refused",
                  MAX_HEADER >> 20);
    goto fail;
  }
  if (copy_to (lower, fd, &done, want) == -1)
    goto fail;
  return fd;

 fail:
  close (fd);
  return -1;
}
