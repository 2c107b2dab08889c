/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A device in memory under dm-integrity (struct integrity_io), which
 * counts its writes and flushes and can crash: after a budget of
 * 512-byte sectors written, a write stores only the sectors the budget
 * still allows and fails, and every later write fails too. */
#ifndef DMCRYPT_TEST_INTEGRITY_MEMDEV_H
#define DMCRYPT_TEST_INTEGRITY_MEMDEV_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../integrity/integrity.h"

struct memdev {
  uint8_t *buf;
  uint64_t size;
  unsigned writes, flushes, reads;
  int64_t crash_budget;          /* sectors; -1: never crashes */
  uint64_t sectors_written;
  bool crashed;
};

static int __attribute__ ((unused))
memdev_pread (void *opaque, void *buf, uint32_t count, uint64_t offset)
{
  struct memdev *m = opaque;

  if (offset > m->size || count > m->size - offset)
    return -EIO;
  memcpy (buf, m->buf + offset, count);
  m->reads++;
  return 0;
}

static int __attribute__ ((unused))
memdev_pwrite (void *opaque, const void *buf, uint32_t count,
               uint64_t offset)
{
  struct memdev *m = opaque;
  uint64_t sectors = (count + 511) / 512;

  if (offset > m->size || count > m->size - offset || m->crashed)
    return -EIO;
  m->writes++;
  if (m->crash_budget >= 0
      && m->sectors_written + sectors > (uint64_t) m->crash_budget) {
    uint64_t allowed = m->crash_budget - m->sectors_written;

    memcpy (m->buf + offset, buf, allowed * 512 < count ? allowed * 512
            : count);
    m->sectors_written = m->crash_budget;
    m->crashed = true;
    return -EIO;
  }
  memcpy (m->buf + offset, buf, count);
  m->sectors_written += sectors;
  return 0;
}

static int __attribute__ ((unused))
memdev_flush (void *opaque)
{
  struct memdev *m = opaque;

  if (m->crashed)
    return -EIO;
  m->flushes++;
  return 0;
}

static void __attribute__ ((unused))
memdev_init (struct memdev *m, uint64_t size)
{
  memset (m, 0, sizeof *m);
  m->buf = calloc (1, size);
  m->size = size;
  m->crash_budget = -1;
}

static struct integrity_io __attribute__ ((unused))
memdev_io (struct memdev *m)
{
  struct integrity_io io = {
    .opaque = m, .pread = memdev_pread, .pwrite = memdev_pwrite,
    .flush = memdev_flush,
  };
  return io;
}

#endif /* DMCRYPT_TEST_INTEGRITY_MEMDEV_H */
