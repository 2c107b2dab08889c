/* SPDX-License-Identifier: GPL-2.0-or-later */
/* BitLocker metadata (bitlk.h): the on-disk layout as libcryptsetup 2.6
 * reads it (lib/bitlk/bitlk.c, BITLK_read_sb).  All fields are
 * little-endian. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitlk.h"

#define SIGNATURE          "-FVE-FS-"
#define SIGNATURE_TOGO     "MSWIN4.1"
#define SIGNATURE_AT       3
#define SECTOR_SIZE_AT     11
#define SUPERBLOCK_AT      160     /* GUID, then three FVE offsets */
#define SUPERBLOCK_AT_TOGO 424
#define SUPERBLOCK_BYTES   40
#define FVE_HEADERS_BYTES  112     /* block header 64 + metadata header 48 */
#define FVE_HEADER_BYTES   48
#define ENTRY_HEADER_BYTES 8
#define VMK_HEADER_BYTES   28
#define STATE_NORMAL       4
#define MAX_SEGMENTS       10      /* cryptsetup's MAX_BITLK_SEGMENTS */

enum { ENTRY_VMK = 0x0002, ENTRY_VOLUME_HEADER = 0x000f };

static const uint8_t guid_normal[16] = {
  0x3b, 0xd6, 0x67, 0x49, 0x29, 0x2e, 0xd8, 0x4a,
  0x83, 0x99, 0xf6, 0xa3, 0x39, 0xe3, 0xd0, 0x01 };
static const uint8_t guid_eow[16] = {
  0x3b, 0x4d, 0xa8, 0x92, 0x80, 0xdd, 0x0e, 0x4d,
  0x9e, 0x4e, 0xb1, 0xe3, 0x28, 0x4e, 0xae, 0xd8 };

static uint16_t
le16 (const uint8_t *p)
{
  return p[0] | p[1] << 8;
}

static uint32_t
le32 (const uint8_t *p)
{
  return le16 (p) | (uint32_t) le16 (p + 2) << 16;
}

static uint64_t
le64 (const uint8_t *p)
{
  return le32 (p) | (uint64_t) le32 (p + 4) << 32;
}

static bool
known_guid (const uint8_t *guid)
{
  return memcmp (guid, guid_normal, 16) == 0
    || memcmp (guid, guid_eow, 16) == 0;
}

bool
bitlk_has_magic (const void *head, size_t size)
{
  const uint8_t *h = head;

  if (size < SIGNATURE_AT + 8)
    return false;
  if (memcmp (h + SIGNATURE_AT, SIGNATURE, 8) == 0)
    return true;
  return size >= SUPERBLOCK_AT_TOGO + 16
    && memcmp (h + SIGNATURE_AT, SIGNATURE_TOGO, 8) == 0
    && known_guid (h + SUPERBLOCK_AT_TOGO);
}

static unsigned
protection_bit (uint16_t protection)
{
  switch (protection) {
  case 0x0000: return BITLK_PROT_CLEAR_KEY;
  case 0x0100: return BITLK_PROT_TPM;
  case 0x0200: return BITLK_PROT_STARTUP_KEY;
  case 0x0500: return BITLK_PROT_TPM_PIN;
  case 0x0800: return BITLK_PROT_RECOVERY;
  case 0x1000: return BITLK_PROT_SMART_CARD;
  case 0x2000: return BITLK_PROT_PASSPHRASE;
  default: return BITLK_PROT_UNKNOWN;
  }
}

/* The boot sector: signature, version, sector size; and the superblock
 * it leads to. */
static int
read_boot_sector (bitlk_read_fn *read, void *opaque,
                  struct bitlk_metadata *m, char *why, size_t why_size)
{
  uint8_t head[BITLK_HEADER_BYTES], *sb;
  unsigned i;

  if (read (opaque, head, sizeof head, 0) == -1) {
    snprintf (why, why_size, "cannot read the volume header");
    return -1;
  }
  if (!bitlk_has_magic (head, sizeof head)) {
    snprintf (why, why_size, "no BitLocker signature");
    return -1;
  }
  m->togo = memcmp (head + SIGNATURE_AT, SIGNATURE, 8) != 0;
  if (memcmp (head, "\xeb\x52\x90", 3) == 0) {
    snprintf (why, why_size, "BITLK version 1 is currently not supported");
    return -1;
  }
  if (memcmp (head, "\xeb\x58\x90", 3) != 0) {
    snprintf (why, why_size, "invalid or unknown boot signature");
    return -1;
  }
  m->sector_size = le16 (head + SECTOR_SIZE_AT);
  if (m->sector_size == 0)
    m->sector_size = 512;
  if (m->sector_size != 512 && m->sector_size != 4096) {
    snprintf (why, why_size, "unsupported sector size %u", m->sector_size);
    return -1;
  }
  sb = head + (m->togo ? SUPERBLOCK_AT_TOGO : SUPERBLOCK_AT);
  m->kind = memcmp (sb, guid_normal, 16) == 0 ? BITLK_NORMAL
    : memcmp (sb, guid_eow, 16) == 0 ? BITLK_EOW : BITLK_UNKNOWN_KIND;
  for (i = 0; i < 3; i++)
    m->metadata_offset[i] = le64 (sb + 16 + 8 * i);
  return 0;
}

/* One VMK entry: its protection (the nested entries hold keys, which
 * libcryptsetup reads). */
static int
parse_vmk (const uint8_t *e, size_t size, struct bitlk_metadata *m)
{
  if (size < ENTRY_HEADER_BYTES + VMK_HEADER_BYTES)
    return -1;
  m->protections |= protection_bit (le16 (e + ENTRY_HEADER_BYTES + 26));
  return 0;
}

static int
parse_entries (const uint8_t *e, size_t size, struct bitlk_metadata *m,
               char *why, size_t why_size)
{
  size_t at = 0, len;

  while (size - at >= 4) {
    len = le16 (e + at);
    if (len == 0)
      break;
    if (len > size - at) {
      snprintf (why, why_size, "metadata entry at %zu overruns the area",
                at);
      return -1;
    }
    switch (le16 (e + at + 2)) {
    case ENTRY_VMK:
      if (parse_vmk (e + at, len, m) == -1) {
        snprintf (why, why_size, "VMK entry at %zu is too short", at);
        return -1;
      }
      break;
    case ENTRY_VOLUME_HEADER:
      if (size - at < ENTRY_HEADER_BYTES + 16) {
        snprintf (why, why_size, "volume header entry is too short");
        return -1;
      }
      m->volume_header_offset = le64 (e + at + ENTRY_HEADER_BYTES);
      m->volume_header_size = le64 (e + at + ENTRY_HEADER_BYTES + 8);
      break;
    }
    at += len;
  }
  return 0;
}

/* The first FVE metadata area: block header, metadata header,
 * entries. */
static int
read_fve (bitlk_read_fn *read, void *opaque, struct bitlk_metadata *m,
          char *why, size_t why_size)
{
  uint8_t h[FVE_HEADERS_BYTES], *entries;
  uint32_t metadata_size;
  size_t entries_size;
  int r;

  if (read (opaque, h, sizeof h, m->metadata_offset[0]) == -1
      || memcmp (h, SIGNATURE, 8) != 0 || le16 (h + 10) != 2) {
    snprintf (why, why_size, "no FVE metadata at byte %" PRIu64,
              m->metadata_offset[0]);
    return -1;
  }
  m->state_normal = le16 (h + 12) == STATE_NORMAL
    && le16 (h + 14) == STATE_NORMAL;
  m->volume_size = le64 (h + 16);
  m->encryption = le16 (h + 100);
  metadata_size = le32 (h + 64);
  if (metadata_size < FVE_HEADER_BYTES + 4
      || metadata_size > BITLK_METADATA_BYTES - (FVE_HEADERS_BYTES
                                                 - FVE_HEADER_BYTES)) {
    snprintf (why, why_size, "FVE metadata size %" PRIu32 " is out of "
              "range", metadata_size);
    return -1;
  }
  entries_size = metadata_size - FVE_HEADER_BYTES;
  if ((entries = malloc (entries_size)) == NULL) {
    snprintf (why, why_size, "out of memory");
    return -1;
  }
  if (read (opaque, entries, entries_size,
            m->metadata_offset[0] + FVE_HEADERS_BYTES) == -1) {
    snprintf (why, why_size, "cannot read the FVE metadata entries");
    free (entries);
    return -1;
  }
  r = parse_entries (entries, entries_size, m, why, why_size);
  free (entries);
  return r;
}

int
bitlk_read_metadata (bitlk_read_fn *read, void *opaque,
                     struct bitlk_metadata *m, char *why, size_t why_size)
{
  memset (m, 0, sizeof *m);
  if (read_boot_sector (read, opaque, m, why, why_size) == -1
      || read_fve (read, opaque, m, why, why_size) == -1)
    return -1;
  if (m->volume_header_size == 0) {
    snprintf (why, why_size, "no volume header entry in the metadata");
    return -1;
  }
  return 0;
}
