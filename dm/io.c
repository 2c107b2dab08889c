/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A request's way through the mapping (dm.h): to the live engine, or
 * split at the boundaries of the mapping's segments. */
#include <string.h>

#include "dmint.h"

static int
run (struct engine *e, enum dm_io_op op, void *buf, uint32_t count,
     uint64_t offset, bool fua)
{
  switch (op) {
  case DM_IO_READ: return engine_read (e, buf, count, offset);
  case DM_IO_WRITE: return engine_write (e, buf, count, offset, fua);
  case DM_IO_ZERO: return engine_zero (e, count, offset, fua);
  case DM_IO_TRIM: return engine_trim (e, count, offset, fua);
  default: return engine_flush (e);
  }
}

/* A request over several segments (BitLocker), piece by piece, as the
 * kernel's __split_and_process_bio (drivers/md/dm.c, 2.6.32 on) cuts a
 * bio at the end of each target it finds (dm_table_find_target,
 * max_io_len): a zero segment reads as zeros and drops writes, as
 * dm-zero does; a crypt piece goes to the engine where the shared table
 * holds it.  A re-encryption's segments name their own table
 * (LUKS2_assembly_multisegment_dmd, cryptsetup 2.6.1): a piece goes to
 * that table's engine, a linear one to the keyless cipher_null
 * engine. */
static int
run_segments (struct dm_mapping *m, enum dm_io_op op, void *buf,
              uint32_t count, uint64_t offset, bool fua)
{
  const struct crypt_table *tables[SEGMENT_TABLES_MAX] = {
    &m->live.table, &m->second.table };
  struct engine *engines[SEGMENT_TABLES_MAX] = {
    m->live.engine, m->second.engine };
  struct segment_piece piece;

  while (count > 0) {
    segment_list_piece_tables (&m->segments, tables, offset, count,
                               &piece);
    if (piece.type != SEGMENT_ZERO) {
      if (run (engines[piece.table], op, buf, piece.count,
               piece.table_offset, fua) == -1)
        return -1;
    }
    else if (op == DM_IO_READ)
      memset (buf, 0, piece.count);
    if (buf)
      buf = (char *) buf + piece.count;
    count -= piece.count;
    offset += piece.count;
  }
  return 0;
}

int
dm_io (struct dm_mapping *m, enum dm_io_op op, void *buf, uint32_t count,
       uint64_t offset, bool fua)
{
  /* A flush reaches every target, as dm's __send_empty_flush sends one
   * to each target of the table. */
  if (op == DM_IO_FLUSH && m->second.engine
      && run (m->second.engine, op, buf, count, offset, fua) == -1)
    return -1;
  if (op == DM_IO_FLUSH || m->segments.count == 0)
    return run (m->live.engine, op, buf, count, offset, fua);
  return run_segments (m, op, buf, count, offset, fua);
}
