/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A mapping of several targets, as device-mapper stacks them: crypt
 * segments and zero segments (dm-zero: reads give zeros, writes are
 * dropped) side by side, each covering its own range of the mapping.
 * cryptsetup activates BitLocker so (lib/bitlk/bitlk.c, _activate).
 *
 * Every crypt segment shares one crypt table's cipher, key, sector size
 * and flags, and one engine: a crypt segment whose device offset and IV
 * offset differ from the table's by the same amount is the table's own
 * range seen at another place, so a request is only moved, never
 * re-keyed.  A mapping of one segment has no list at all and takes no
 * detour.
 *
 * A LUKS2 volume in the middle of a re-encryption is mapped by
 * cryptsetup with a line per segment, each with its own cipher and key
 * (lib/luks2/luks2_json_metadata.c, LUKS2_assembly_multisegment_dmd,
 * 2.6.1): there a segment names which of the mapping's tables serves
 * it, the old volume key's or the new one's.  A linear segment (the
 * plaintext part of an encryption or decryption in progress) is served
 * by a table of cipher_null-ecb with no key, which reads and writes the
 * bytes as they are, as dm-linear does, and is printed as dm-linear's
 * line. */
#ifndef DMCRYPT_SEGMENTS_H
#define DMCRYPT_SEGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypt_table.h"

enum segment_type { SEGMENT_CRYPT, SEGMENT_ZERO, SEGMENT_LINEAR };

struct segment
{
  enum segment_type type;
  uint64_t start;           /* 512-byte sectors of the mapping */
  uint64_t length;          /* 512-byte sectors */
  uint64_t offset;          /* crypt: 512-byte sectors into the device */
  uint64_t iv_offset;       /* crypt: 512-byte sectors */
  unsigned table;           /* crypt, linear: which of the mapping's
                               tables serves it (0: the first) */
};

/* Old and new key: a re-encryption needs no more. */
#define SEGMENT_TABLES_MAX 2

/* cryptsetup 2.6 builds at most 10 for BitLocker (MAX_BITLK_SEGMENTS). */
#define SEGMENT_MAX 16

struct segment_list
{
  unsigned count;           /* 0: no list, the table alone */
  struct segment seg[SEGMENT_MAX];
};

/* Checks L against its tables (TABLES[0..N_TABLES), N_TABLES at most
 * SEGMENT_TABLES_MAX): each crypt or linear segment names one of them
 * and is that table's range moved (device offset and IV offset at the
 * same distance from the table's; a linear one's device offset only),
 * aligned to that table's sector size, inside the device; the segments
 * are sorted and contiguous from 0 to TABLES[0]->length.  Every table
 * is used.  Returns 0, or -1 with a short reason in WHY. */
int segment_list_check_tables (const struct segment_list *l,
                               const struct crypt_table *const *tables,
                               unsigned n_tables, uint64_t device_bytes,
                               char *why, size_t why_size);

/* Checks L against the crypt table T that its crypt segments share:
 * sorted, contiguous from 0 to T->length, none empty, each aligned to
 * T->sector_size, every crypt segment inside the device of DEVICE_BYTES
 * and at the same distance from T's device offset as from its IV
 * offset.  Returns 0, or -1 with a short reason in WHY. */
int segment_list_check (const struct segment_list *l,
                        const struct crypt_table *t, uint64_t device_bytes,
                        char *why, size_t why_size);

/* The part of a request that one segment serves. */
struct segment_piece
{
  enum segment_type type;
  unsigned table;           /* crypt, linear: the segment's table */
  uint64_t count;           /* bytes, from the request's start */
  uint64_t table_offset;    /* crypt: bytes into T's own range, where the
                               engine built from T finds it */
};

/* The piece of the request of COUNT bytes at byte OFFSET (inside the
 * mapping, COUNT > 0) that starts it, for the table T the segments
 * share: the caller serves it and asks again for the rest. */
void segment_list_piece (const struct segment_list *l,
                         const struct crypt_table *t, uint64_t offset,
                         uint64_t count, struct segment_piece *piece);
/* The same over several tables (segment_list_check_tables). */
void segment_list_piece_tables (const struct segment_list *l,
                                const struct crypt_table *const *tables,
                                uint64_t offset, uint64_t count,
                                struct segment_piece *piece);

/* L's lines as "dmsetup table" prints them, one per segment, joined by
 * '\n': crypt lines as crypt_table_format prints T with the segment's
 * start, length, IV offset and device offset; "START LENGTH zero " (with
 * dmsetup's space before the empty parameters).
 * Free with crypt_table_free_line.  NULL with errno on failure. */
char *segment_list_format (const struct segment_list *l,
                           const struct crypt_table *t, bool showkeys,
                           const char *device);
/* The same over several tables: each crypt line with its own table's
 * cipher, key, sector size and flags; a linear segment as dmsetup
 * prints dm-linear, "START LENGTH linear DEVICE OFFSET". */
char *segment_list_format_tables (const struct segment_list *l,
                                  const struct crypt_table *const *tables,
                                  unsigned n_tables, bool showkeys,
                                  const char *device);

#endif /* DMCRYPT_SEGMENTS_H */
