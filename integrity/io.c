/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The device's I/O through struct integrity_io.  A failed write or
 * flush makes the device failed, as dm_integrity_io_error sets
 * ic->failed: every later request gets that error. */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define IO_CHUNK_BYTES (1u << 30)

int
integrity_dev_pread (struct integrity_dev *d, void *buf, uint64_t len,
                     uint64_t offset)
{
  uint8_t *p = buf;

  while (len) {
    uint32_t n = len < IO_CHUNK_BYTES ? len : IO_CHUNK_BYTES;
    int r = d->io.pread (d->io.opaque, p, n, offset);

    if (r < 0)
      return r;
    p += n;
    offset += n;
    len -= n;
  }
  return 0;
}

int
integrity_dev_pwrite (struct integrity_dev *d, const void *buf,
                      uint64_t len, uint64_t offset)
{
  const uint8_t *p = buf;

  if (d->failed)
    return d->failed;
  if (d->readonly)
    return -EROFS;
  while (len) {
    uint32_t n = len < IO_CHUNK_BYTES ? len : IO_CHUNK_BYTES;
    int r = d->io.pwrite (d->io.opaque, p, n, offset);

    if (r < 0) {
      d->failed = r;
      return r;
    }
    p += n;
    offset += n;
    len -= n;
  }
  return 0;
}

int
integrity_dev_flush (struct integrity_dev *d)
{
  int r;

  if (d->failed)
    return d->failed;
  if (d->readonly || d->io.flush == NULL)
    return 0;
  r = d->io.flush (d->io.opaque);
  if (r < 0)
    d->failed = r;
  return r;
}

/* sync_rw_sb: the whole 8-sector area, the version as sb_set_version
 * gives it, then a flush (REQ_FUA). */
int
integrity_dev_write_sb (struct integrity_dev *d)
{
  int r;

  d->sb.version = integrity_sb_version_for (d->sb.flags, d->mode);
  integrity_sb_encode (&d->sb, d->sb_raw);
  r = integrity_dev_pwrite (d, d->sb_raw, sizeof d->sb_raw,
                            d->g.start_sectors * 512);
  return r < 0 ? r : integrity_dev_flush (d);
}

int
integrity_dev_write_in_place (struct integrity_dev *d, uint64_t sector,
                              const void *data, const uint8_t *tag)
{
  int r = integrity_dev_pwrite (d, data, d->block_bytes,
                                integrity_geom_data_byte (&d->g, sector));

  if (r == 0)
    r = integrity_dev_pwrite (d, tag, d->g.tag_size,
                              integrity_geom_tag_byte (&d->g, sector));
  return r;
}
