/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity's journal (Linux 6.1's dm-integrity.c).  A section is 8
 * sectors of entries then one block per entry; entry n sits in entry
 * sector n % 8 at n / 8 entries in (access_journal_entry).  An entry
 * is the block's first sector (le64; sector_hi 0xffffffff: unused),
 * the last 8 bytes of each of the block's sectors, and the tag.  The
 * last 8 bytes of every journal sector hold the commit id of its
 * commit (dm_integrity_commit_id): what a block's sectors had there is
 * kept in the entry (restore_last_bytes).  Writes fill entries in
 * memory; a commit stamps and writes the sections, then (integrity_
 * writer) writes their blocks and tags in place.  replay_journal finds
 * the committed sections after a crash by their commit ids. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define ENTRY_UNUSED_HI 0xffffffffu

static uint8_t
next_seq (uint8_t seq)
{
  return (seq + 1) % INTEGRITY_N_COMMIT_IDS;
}

static uint8_t
prev_seq (uint8_t seq)
{
  return (seq + INTEGRITY_N_COMMIT_IDS - 1) % INTEGRITY_N_COMMIT_IDS;
}

/* create_journal's commit ids 0x1111111111111111 .. 0x4444444444444444,
 * xored with the section and sector so that a sector written at the
 * wrong place does not pass. */
static uint64_t
commit_id (uint32_t section, uint32_t sector, uint8_t seq)
{
  return 0x1111111111111111ull * (seq + 1u)
    ^ ((uint64_t) section << 32 ^ sector);
}

static uint64_t
get_le64 (const uint8_t *p)
{
  uint64_t v = 0;

  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static void
put_le64 (uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = v >> (8 * i);
}

static uint8_t *
jsector (struct integrity_dev *d, uint32_t section, uint32_t s)
{
  return d->j.buf
    + ((size_t) section * d->g.journal_section_sectors + s) * 512;
}

static uint8_t *
jentry (struct integrity_dev *d, uint32_t section, uint32_t n)
{
  return jsector (d, section, n % INTEGRITY_JOURNAL_BLOCK_SECTORS)
    + (n / INTEGRITY_JOURNAL_BLOCK_SECTORS) * d->g.journal_entry_size;
}

static uint8_t *
jdata (struct integrity_dev *d, uint32_t section, uint32_t n)
{
  return jsector (d, section, INTEGRITY_JOURNAL_BLOCK_SECTORS
                  + (n << d->g.log2_sectors_per_block));
}

static bool
entry_unused (const uint8_t *je)
{
  return get_le64 (je) >> 32 == ENTRY_UNUSED_HI;
}

static void
entry_set_unused (uint8_t *je)
{
  put_le64 (je, (uint64_t) ENTRY_UNUSED_HI << 32 | (get_le64 (je)
                                                     & 0xffffffffu));
}

static uint8_t *
entry_tag (struct integrity_dev *d, uint8_t *je)
{
  return je + 8 + 8 * d->g.sectors_per_block;
}

/* restore_last_bytes */
static void
restore_last_bytes (struct integrity_dev *d, uint8_t *data,
                    const uint8_t *je)
{
  for (uint32_t s = 0; s < d->g.sectors_per_block; s++)
    memcpy (data + s * 512 + INTEGRITY_JOURNAL_SECTOR_DATA, je + 8 + 8 * s,
            8);
}

/* The map from logical sectors to the journal's newest entry. */

static size_t
map_slot (const struct integrity_journal *j, uint64_t sector)
{
  uint64_t h = sector * 0x9e3779b97f4a7c15ull;

  return (h >> 20) & (j->map_slots - 1);
}

static void
map_put (struct integrity_journal *j, uint64_t sector, uint32_t pos)
{
  size_t i = map_slot (j, sector);

  while (j->map_sector[i] != UINT64_MAX && j->map_sector[i] != sector)
    i = (i + 1) & (j->map_slots - 1);
  j->map_sector[i] = sector;
  j->map_pos[i] = pos;
}

static bool
map_get (const struct integrity_journal *j, uint64_t sector, uint32_t *pos)
{
  size_t i = map_slot (j, sector);

  while (j->map_sector[i] != UINT64_MAX) {
    if (j->map_sector[i] == sector) {
      *pos = j->map_pos[i];
      return true;
    }
    i = (i + 1) & (j->map_slots - 1);
  }
  return false;
}

static void
map_clear (struct integrity_journal *j)
{
  memset (j->map_sector, 0xff, j->map_slots * sizeof *j->map_sector);
}

int
integrity_journal_alloc (struct integrity_dev *d, char *err, size_t errlen)
{
  struct integrity_journal *j = &d->j;

  j->bytes = (size_t) integrity_geom_journal_sectors (&d->g) * 512;
  j->map_slots = 16;
  while (j->map_slots < 2 * (size_t) d->g.journal_entries)
    j->map_slots *= 2;
  j->buf = calloc (1, j->bytes);
  j->map_sector = malloc (j->map_slots * sizeof *j->map_sector);
  j->map_pos = malloc (j->map_slots * sizeof *j->map_pos);
  if (j->buf == NULL || j->map_sector == NULL || j->map_pos == NULL) {
    snprintf (err, errlen, "dm-integrity: no memory for a journal of %zu "
              "bytes", j->bytes);
    return -1;
  }
  map_clear (j);
  j->free_entries = d->g.journal_entries;
  return 0;
}

void
integrity_journal_free (struct integrity_journal *j)
{
  free (j->buf);
  free (j->map_sector);
  free (j->map_pos);
  memset (j, 0, sizeof *j);
}

/* write_journal: SECTIONS sections from START (wrapping), then a flush
 * (the kernel writes them with REQ_FUA). */
static int
write_sections (struct integrity_dev *d, uint32_t start, uint32_t sections)
{
  uint32_t to_end = d->g.journal_sections - start;
  uint64_t sss = d->g.journal_section_sectors;
  int r;

  if (sections > to_end) {
    r = write_sections (d, start, to_end);
    return r < 0 ? r : write_sections (d, 0, sections - to_end);
  }
  r = integrity_dev_pwrite (d, jsector (d, start, 0), sections * sss * 512,
                            integrity_geom_journal_byte (&d->g,
                                                         start * sss));
  return r < 0 ? r : integrity_dev_flush (d);
}

int
integrity_journal_init (struct integrity_dev *d, uint32_t start,
                        uint32_t sections, uint8_t seq)
{
  for (uint32_t n = 0; n < sections; n++) {
    uint32_t i = (start + n) % d->g.journal_sections;

    for (uint32_t s = 0; s < d->g.journal_section_sectors; s++) {
      uint8_t *js = jsector (d, i, s);

      memset (js, 0, INTEGRITY_JOURNAL_SECTOR_DATA);
      put_le64 (js + INTEGRITY_JOURNAL_SECTOR_DATA, commit_id (i, s, seq));
    }
    for (uint32_t e = 0; e < d->g.journal_section_entries; e++)
      entry_set_unused (jentry (d, i, e));
  }
  return sections ? write_sections (d, start, sections) : 0;
}

/* The replay of one entry (do_journal_write, from_replay): the tag
 * checked against the block with the internal hash, then the block and
 * its tag written in place, or, readonly, remembered. */
static int
replay_entry (struct integrity_dev *d, uint32_t section, uint32_t n,
              char *err, size_t errlen)
{
  uint8_t *je = jentry (d, section, n), *data = jdata (d, section, n);
  uint8_t check[INTEGRITY_MAX_TAG_SIZE];
  uint64_t sector = get_le64 (je);
  int r;

  if (sector & (d->g.sectors_per_block - 1)) {
    snprintf (err, errlen, "dm-integrity: invalid sector %llu in the "
              "journal", (unsigned long long) sector);
    return -EIO;
  }
  if (sector >= d->g.provided_data_sectors) {
    entry_set_unused (je);
    return 0;
  }
  restore_last_bytes (d, data, je);
  if (d->hash) {
    r = integrity_hash_tag (d->hash, d->salt, sector, data, d->block_bytes,
                            check, d->g.tag_size);
    if (r == 0 && memcmp (check, entry_tag (d, je), d->g.tag_size)) {
      snprintf (err, errlen, "dm-integrity: tag mismatch when replaying "
                "journal, at sector %llu", (unsigned long long) sector);
      return -EILSEQ;
    }
    if (r < 0)
      return r;
  }
  if (d->readonly) {
    map_put (&d->j, sector, section * d->g.journal_section_entries + n);
    return 0;
  }
  r = integrity_dev_write_in_place (d, sector, data, entry_tag (d, je));
  if (r == 0)
    entry_set_unused (je);
  else
    snprintf (err, errlen, "dm-integrity: cannot write the journal's "
              "block at sector %llu back: %s", (unsigned long long) sector,
              strerror (-r));
  return r;
}

static int
replay_sections (struct integrity_dev *d, uint32_t start, uint32_t sections,
                 char *err, size_t errlen)
{
  for (uint32_t k = 0; k < sections; k++) {
    uint32_t i = (start + k) % d->g.journal_sections;

    for (uint32_t n = 0; n < d->g.journal_section_entries; n++) {
      int r;

      if (entry_unused (jentry (d, i, n)))
        continue;
      r = replay_entry (d, i, n, err, errlen);
      if (r < 0)
        return r;
    }
  }
  return d->readonly ? 0 : integrity_dev_flush (d);
}

/* What replay_journal reads from the commit ids. */
struct journal_scan {
  bool empty;
  bool used[INTEGRITY_N_COMMIT_IDS];
  uint32_t max_section[INTEGRITY_N_COMMIT_IDS];
  uint8_t last_used, want_seq;
  uint32_t write_start, write_sections;
};

static int
find_seq (struct integrity_dev *d, uint32_t i, uint32_t s)
{
  uint64_t id = get_le64 (jsector (d, i, s) + INTEGRITY_JOURNAL_SECTOR_DATA);

  for (int k = 0; k < INTEGRITY_N_COMMIT_IDS; k++)
    if (commit_id (i, s, k) == id)
      return k;
  return -1;
}

static bool
section_empty (struct integrity_dev *d, uint32_t i)
{
  for (uint32_t n = 0; n < d->g.journal_section_entries; n++)
    if (!entry_unused (jentry (d, i, n)))
      return false;
  return true;
}

/* Which commit ids the sections use, the newest section of each, and
 * whether any entry is in use. */
static int
scan_ids (struct integrity_dev *d, struct journal_scan *sc, char *err,
          size_t errlen)
{
  memset (sc, 0, sizeof *sc);
  sc->empty = true;
  for (uint32_t i = 0; i < d->g.journal_sections; i++) {
    for (uint32_t s = 0; s < d->g.journal_section_sectors; s++) {
      int k = find_seq (d, i, s);

      if (k < 0) {
        snprintf (err, errlen, "dm-integrity: journal sector %u of section "
                  "%u has an unknown commit id", s, i);
        return -1;
      }
      sc->used[k] = true;
      sc->max_section[k] = i;
    }
    if (sc->empty && !section_empty (d, i))
      sc->empty = false;
  }
  return 0;
}

/* replay_journal's choice of the commit seq in use and of the first
 * section to replay. */
static int
choose_start (struct integrity_dev *d, struct journal_scan *sc, char *err,
              size_t errlen)
{
  uint8_t unused;

  if (!sc->used[INTEGRITY_N_COMMIT_IDS - 1]) {
    unused = INTEGRITY_N_COMMIT_IDS - 1;
    while (unused && !sc->used[unused - 1])
      unused--;
  } else {
    for (unused = 0; unused < INTEGRITY_N_COMMIT_IDS; unused++)
      if (!sc->used[unused])
        break;
    if (unused == INTEGRITY_N_COMMIT_IDS) {
      snprintf (err, errlen, "dm-integrity: the journal uses all four "
                "commit ids");
      return -1;
    }
  }
  sc->last_used = prev_seq (unused);
  sc->want_seq = prev_seq (sc->last_used);
  if (!sc->used[sc->want_seq] && sc->used[prev_seq (sc->want_seq)])
    sc->empty = true;
  sc->write_start = sc->max_section[sc->last_used] + 1;
  if (sc->write_start >= d->g.journal_sections) {
    sc->want_seq = next_seq (sc->want_seq);
    sc->write_start -= d->g.journal_sections;
  }
  return 0;
}

/* The run of sections from write_start whose every sector has the
 * commit id expected: what was committed whole.  Leaves want_seq as
 * the seq to go on with. */
static void
count_committed (struct integrity_dev *d, struct journal_scan *sc)
{
  uint32_t i = sc->write_start;

  for (sc->write_sections = 0; sc->write_sections < d->g.journal_sections;
       sc->write_sections++) {
    for (uint32_t s = 0; s < d->g.journal_section_sectors; s++)
      if (get_le64 (jsector (d, i, s) + INTEGRITY_JOURNAL_SECTOR_DATA)
          != commit_id (i, s, sc->want_seq))
        return;
    if (++i >= d->g.journal_sections) {
      sc->want_seq = next_seq (sc->want_seq);
      i = 0;
    }
  }
}

/* After the replay: go on where the journal is when it is whole (mode
 * J) or empty, else write it empty from the start of the replay. */
static int
continue_or_clear (struct integrity_dev *d, const struct journal_scan *sc)
{
  uint8_t erase_seq;
  int r;

  if (sc->write_sections == d->g.journal_sections
      && (d->mode == 'J' || sc->empty)) {
    d->j.free_section = d->j.uncommitted_section = sc->write_start;
    d->j.commit_seq = sc->want_seq;
    return 0;
  }
  erase_seq = prev_seq (prev_seq (sc->last_used));
  r = integrity_journal_init (d, sc->write_start, d->g.journal_sections,
                              erase_seq);
  d->j.free_section = d->j.uncommitted_section = 0;
  d->j.commit_seq = next_seq (erase_seq);
  return r;
}

int
integrity_journal_replay (struct integrity_dev *d, char *err, size_t errlen)
{
  struct journal_scan sc;
  int r;

  r = integrity_dev_pread (d, d->j.buf, d->j.bytes,
                           integrity_geom_journal_byte (&d->g, 0));
  if (r < 0) {
    snprintf (err, errlen, "dm-integrity: cannot read the journal: %s",
              strerror (-r));
    return -1;
  }
  if (scan_ids (d, &sc, err, errlen) == -1
      || choose_start (d, &sc, err, errlen) == -1)
    return -1;
  count_committed (d, &sc);
  if (!sc.empty) {
    r = replay_sections (d, sc.write_start, sc.write_sections, err, errlen);
    if (r < 0)
      return -1;
  }
  d->j.free_entry = 0;
  d->j.n_uncommitted_sections = 0;
  d->j.free_entries = d->g.journal_entries;
  if (d->readonly)
    return 0;
  r = continue_or_clear (d, &sc);
  if (r < 0) {
    snprintf (err, errlen, "dm-integrity: cannot clear the journal: %s",
              strerror (-r));
    return -1;
  }
  return 0;
}

bool
integrity_journal_lookup (struct integrity_dev *d, uint64_t sector,
                          uint8_t *data, uint8_t *tag)
{
  uint32_t pos, section, n;
  uint8_t *je;

  if (d->j.buf == NULL || !map_get (&d->j, sector, &pos))
    return false;
  section = pos / d->g.journal_section_entries;
  n = pos % d->g.journal_section_entries;
  je = jentry (d, section, n);
  memcpy (data, jdata (d, section, n), d->block_bytes);
  restore_last_bytes (d, data, je);
  if (tag)
    memcpy (tag, entry_tag (d, je), d->g.tag_size);
  return true;
}

/* __journal_read_write for a write: the block into the next free
 * entry's sectors, the last bytes of its sectors and its tag into the
 * entry. */
int
integrity_journal_add (struct integrity_dev *d, uint64_t sector,
                       const uint8_t *data, const uint8_t *tag)
{
  struct integrity_journal *j = &d->j;
  uint8_t *je, *jd;
  int r;

  if (j->free_entries == 0) {
    r = integrity_journal_commit (d);
    if (r < 0)
      return r;
  }
  je = jentry (d, j->free_section, j->free_entry);
  jd = jdata (d, j->free_section, j->free_entry);
  memcpy (jd, data, d->block_bytes);
  for (uint32_t s = 0; s < d->g.sectors_per_block; s++)
    memcpy (je + 8 + 8 * s, jd + s * 512 + INTEGRITY_JOURNAL_SECTOR_DATA, 8);
  memcpy (entry_tag (d, je), tag, d->g.tag_size);
  put_le64 (je, sector);
  map_put (j, sector,
           j->free_section * d->g.journal_section_entries + j->free_entry);
  j->free_entries--;
  if (++j->free_entry == d->g.journal_section_entries) {
    j->free_entry = 0;
    j->free_section = (j->free_section + 1) % d->g.journal_sections;
    j->n_uncommitted_sections++;
  }
  return 0;
}

/* pad_uncommitted: a section partly filled is committed as it is, its
 * other entries unused. */
static void
pad_uncommitted (struct integrity_dev *d)
{
  struct integrity_journal *j = &d->j;

  if (j->free_entry == 0)
    return;
  j->free_entries -= d->g.journal_section_entries - j->free_entry;
  j->free_entry = 0;
  j->free_section = (j->free_section + 1) % d->g.journal_sections;
  j->n_uncommitted_sections++;
}

/* integrity_commit's stamping: every sector of the sections gets the
 * commit id of its place, the seq moving on past the last section. */
static void
stamp_sections (struct integrity_dev *d, uint32_t start, uint32_t sections)
{
  uint32_t i = start;

  for (uint32_t k = 0; k < sections; k++) {
    for (uint32_t s = 0; s < d->g.journal_section_sectors; s++)
      put_le64 (jsector (d, i, s) + INTEGRITY_JOURNAL_SECTOR_DATA,
                commit_id (i, s, d->j.commit_seq));
    if (++i >= d->g.journal_sections) {
      d->j.commit_seq = next_seq (d->j.commit_seq);
      i = 0;
    }
  }
}

/* Blocks that follow each other in the journal and on the device, in
 * one area, go down as one run: their data in one write, their tags
 * in another. */
#define WRITE_BACK_RUN_BLOCKS 256

struct run
{
  uint64_t first;                   /* its first block's sector */
  uint32_t blocks;
  uint8_t *data, *tags;             /* WRITE_BACK_RUN_BLOCKS of each */
};

static int
run_flush (struct integrity_dev *d, struct run *run)
{
  int r = 0;

  if (run->blocks == 0)
    return 0;
  r = integrity_dev_pwrite (d, run->data,
                            (uint64_t) run->blocks * d->block_bytes,
                            integrity_geom_data_byte (&d->g, run->first));
  if (r == 0)
    r = integrity_dev_pwrite (d, run->tags,
                              (uint64_t) run->blocks * d->g.tag_size,
                              integrity_geom_tag_byte (&d->g, run->first));
  run->blocks = 0;
  return r;
}

/* SECTOR's block joins RUN if it is the next block of the same area. */
static bool
run_extends (const struct integrity_dev *d, const struct run *run,
             uint64_t sector)
{
  uint64_t next = run->first
    + ((uint64_t) run->blocks << d->g.log2_sectors_per_block);

  return run->blocks > 0 && run->blocks < WRITE_BACK_RUN_BLOCKS
    && sector == next
    && integrity_geom_blocks_to_area_end (&d->g, run->first) > run->blocks;
}

static int
run_add (struct integrity_dev *d, struct run *run, uint64_t sector,
         const uint8_t *data, const uint8_t *tag)
{
  int r;

  if (!run_extends (d, run, sector) && (r = run_flush (d, run)) < 0)
    return r;
  if (run->blocks == 0)
    run->first = sector;
  memcpy (run->data + (size_t) run->blocks * d->block_bytes, data,
          d->block_bytes);
  memcpy (run->tags + (size_t) run->blocks * d->g.tag_size, tag,
          d->g.tag_size);
  run->blocks++;
  return 0;
}

/* integrity_writer's do_journal_write: each entry's block and tag in
 * place, in journal order (a later entry of a block wins), then a
 * flush. */
static int
write_back (struct integrity_dev *d, uint32_t start, uint32_t sections)
{
  struct run run = { .blocks = 0 };
  int r = 0;

  run.data = malloc ((size_t) WRITE_BACK_RUN_BLOCKS * d->block_bytes);
  run.tags = malloc ((size_t) WRITE_BACK_RUN_BLOCKS * d->g.tag_size);
  if (run.data == NULL || run.tags == NULL)
    r = -ENOMEM;
  for (uint32_t k = 0; r == 0 && k < sections; k++) {
    uint32_t i = (start + k) % d->g.journal_sections;

    for (uint32_t n = 0; r == 0 && n < d->g.journal_section_entries; n++) {
      uint8_t *je = jentry (d, i, n), *jd = jdata (d, i, n);

      if (entry_unused (je))
        continue;
      restore_last_bytes (d, jd, je);
      r = run_add (d, &run, get_le64 (je), jd, entry_tag (d, je));
      entry_set_unused (je);
    }
  }
  if (r == 0)
    r = run_flush (d, &run);
  free (run.data);
  free (run.tags);
  return r < 0 ? r : integrity_dev_flush (d);
}

int
integrity_journal_commit (struct integrity_dev *d)
{
  struct integrity_journal *j = &d->j;
  uint32_t start, sections;
  int r;

  pad_uncommitted (d);
  start = j->uncommitted_section;
  sections = j->n_uncommitted_sections;
  if (sections == 0)
    return 0;
  j->wrote = true;
  stamp_sections (d, start, sections);
  r = write_sections (d, start, sections);
  if (r == 0)
    r = write_back (d, start, sections);
  if (r < 0)
    return r;
  map_clear (j);
  j->uncommitted_section = j->free_section;
  j->n_uncommitted_sections = 0;
  j->free_entries = d->g.journal_entries;
  return 0;
}

int
integrity_journal_close (struct integrity_dev *d)
{
  struct integrity_journal *j = &d->j;
  int r = integrity_journal_commit (d);

  if (r < 0 || !j->wrote)
    return r;
  r = integrity_journal_init (d, j->free_section,
                              d->g.journal_sections - j->free_section,
                              j->commit_seq);
  if (r == 0 && j->free_section)
    r = integrity_journal_init (d, 0, j->free_section,
                                next_seq (j->commit_seq));
  return r;
}
