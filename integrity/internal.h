/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the files of integrity/ share: the device's state and the
 * helpers of each part.  Every function here is called with the
 * device's mutex held. */
#ifndef DMCRYPT_INTEGRITY_INTERNAL_H
#define DMCRYPT_INTEGRITY_INTERNAL_H

#include <pthread.h>

#include "geom.h"
#include "integrity.h"
#include "sb.h"
#include "tag.h"

#define INTEGRITY_N_COMMIT_IDS   4          /* N_COMMIT_IDS */
#define INTEGRITY_BITMAP_BLOCK_BYTES 4096   /* BITMAP_BLOCK_SIZE */

/* The journal in memory, as the kernel keeps it (ic->journal): every
 * section, its 8 entry sectors then its block sectors. */
struct integrity_journal {
  uint8_t *buf;
  size_t bytes;
  uint8_t commit_seq;
  uint32_t free_section, free_entry, free_entries;
  uint32_t uncommitted_section, n_uncommitted_sections;
  bool wrote;                 /* ic->wrote_to_journal */
  /* The journal's newest entry of each block it holds: an open
   * addressing table of logical sectors and entry positions. */
  uint64_t *map_sector;       /* UINT64_MAX: empty slot */
  uint32_t *map_pos;
  size_t map_slots;           /* a power of two */
};

struct integrity_bitmap {
  uint8_t *bits;              /* the bitmap blocks as the journal holds
                                 them, bit i of byte b = bit 8b + i */
  size_t bytes;
  uint32_t log2_sectors_per_bit;
  bool *dirty;                /* readonly: regions whose tags are not
                                 checked (recalculation pending) */
};

struct integrity_dev {
  pthread_mutex_t lock;
  struct integrity_io io;
  uint8_t sb_raw[INTEGRITY_SB_SECTORS * 512];
  struct integrity_sb sb;
  struct integrity_geom g;
  char mode;
  bool readonly;
  struct integrity_hash *hash;      /* NULL: tags from above */
  const uint8_t *salt;              /* sb.salt with fix_hmac, or NULL */
  uint32_t block_bytes;
  uint64_t mismatches;
  int failed;                       /* ic->failed: sticky -errno */
  uint32_t journal_watermark, commit_time_ms, log2_buffer_sectors;
  uint32_t free_entries_threshold;
  struct integrity_journal j;
  struct integrity_bitmap bm;
};

/* dev.c: the device's I/O, an error making the device failed. */
int integrity_dev_pread (struct integrity_dev *d, void *buf, uint64_t len,
                         uint64_t offset);
int integrity_dev_pwrite (struct integrity_dev *d, const void *buf,
                          uint64_t len, uint64_t offset);
int integrity_dev_flush (struct integrity_dev *d);
int integrity_dev_write_sb (struct integrity_dev *d);
/* Writes one block's data and tag in place (modes D and B, and the
 * journal's write-back). */
int integrity_dev_write_in_place (struct integrity_dev *d, uint64_t sector,
                                  const void *data, const uint8_t *tag);

/* journal.c */
int integrity_journal_alloc (struct integrity_dev *d, char *err,
                             size_t errlen);
void integrity_journal_free (struct integrity_journal *j);
/* replay_journal: reads and replays the journal, into the areas, or
 * into memory when readonly; then continues it or clears it. */
int integrity_journal_replay (struct integrity_dev *d, char *err,
                              size_t errlen);
/* init_journal: SECTIONS sections from START, empty, commit seq SEQ. */
int integrity_journal_init (struct integrity_dev *d, uint32_t start,
                            uint32_t sections, uint8_t seq);
/* The journal's entry for logical SECTOR: copies its block and tag
 * (TAG may be NULL) and returns true, or false when it holds none. */
bool integrity_journal_lookup (struct integrity_dev *d, uint64_t sector,
                               uint8_t *data, uint8_t *tag);
/* Adds one block (TAG: tag_size bytes, computed already). */
int integrity_journal_add (struct integrity_dev *d, uint64_t sector,
                           const uint8_t *data, const uint8_t *tag);
/* integrity_commit and integrity_writer at once: the uncommitted
 * sections written and flushed, then their blocks written in place
 * and flushed. */
int integrity_journal_commit (struct integrity_dev *d);
/* dm_integrity_postsuspend: commits, and rewrites the journal empty
 * when anything was written to it. */
int integrity_journal_close (struct integrity_dev *d);

/* bitmap.c: mode B, and a dirty bitmap left by it. */
/* dm_integrity_ctr's log2_sectors_per_bitmap_bit, by default. */
uint32_t integrity_bitmap_log2_sectors_per_bit (const struct integrity_geom *g);
int integrity_bitmap_open (struct integrity_dev *d, char *err,
                           size_t errlen);
/* Sets the bits of blocks [SECTOR, SECTOR + N_SECTORS) on disk before
 * they are written in place. */
int integrity_bitmap_mark (struct integrity_dev *d, uint64_t sector,
                           uint64_t n_sectors);
int integrity_bitmap_flush (struct integrity_dev *d);
int integrity_bitmap_close (struct integrity_dev *d);
/* Readonly with a dirty bitmap: whether SECTOR's tag is unchecked. */
bool integrity_bitmap_unchecked (const struct integrity_dev *d,
                                 uint64_t sector);
void integrity_bitmap_free (struct integrity_bitmap *bm);

#endif /* DMCRYPT_INTEGRITY_INTERNAL_H */
