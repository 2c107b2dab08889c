/* SPDX-License-Identifier: GPL-2.0-or-later */
/* BitLocker (BITLK) metadata, read without libcryptsetup: what
 * cryptsetup 2.6 needs to activate a volume but does not export -- the
 * three FVE metadata areas and the volume header that its mapping turns
 * into zero segments, the volume header's size, the volume's type and
 * state and how its keys are protected.  libcryptsetup still loads the
 * volume and unwraps the key (bitlk.c).  Every offset and length in the
 * image is checked before use; nothing here writes.  No nbdkit or
 * libcryptsetup calls: the unit tests and the fuzzer drive it directly. */
#ifndef DMCRYPT_BITLK_H
#define DMCRYPT_BITLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../table/segments.h"

#define BITLK_HEADER_BYTES   512           /* what bitlk_has_magic needs */
#define BITLK_METADATA_BYTES (64 * 1024)   /* one FVE metadata area */

/* Reads LEN bytes at byte OFFSET of the image into BUF.  Returns 0, or
 * -1 when they cannot all be read (beyond the end included). */
typedef int bitlk_read_fn (void *opaque, void *buf, size_t len,
                           uint64_t offset);

enum bitlk_kind { BITLK_NORMAL, BITLK_EOW, BITLK_UNKNOWN_KIND };

/* Bits of bitlk_metadata.protections: the VMKs there are. */
enum bitlk_protection
{
  BITLK_PROT_CLEAR_KEY    = 1 << 0,
  BITLK_PROT_TPM          = 1 << 1,
  BITLK_PROT_STARTUP_KEY  = 1 << 2,
  BITLK_PROT_TPM_PIN      = 1 << 3,
  BITLK_PROT_RECOVERY     = 1 << 4,
  BITLK_PROT_PASSPHRASE   = 1 << 5,
  BITLK_PROT_SMART_CARD   = 1 << 6,
  BITLK_PROT_UNKNOWN      = 1 << 7,
};

struct bitlk_metadata
{
  bool togo;                        /* BitLocker To Go (FAT-looking) */
  unsigned sector_size;             /* bytes: 512 or 4096 */
  enum bitlk_kind kind;             /* by the superblock's GUID */
  bool state_normal;                /* fully encrypted, nothing pending */
  uint16_t encryption;              /* 0x8000..0x8005 */
  uint64_t volume_size;             /* bytes, as the metadata says */
  uint64_t metadata_offset[3];      /* bytes: the FVE metadata areas */
  uint64_t volume_header_offset;    /* bytes: where the first sectors
                                       of the volume were moved */
  uint64_t volume_header_size;      /* bytes */
  unsigned protections;             /* enum bitlk_protection */
};

/* True when HEAD (SIZE bytes from byte 0) starts like a BitLocker
 * volume: the "-FVE-FS-" signature, or To Go's "MSWIN4.1" (which FAT
 * file systems have too) with a BitLocker GUID where To Go keeps it. */
bool bitlk_has_magic (const void *head, size_t size);

/* Reads the volume header, the superblock and the first FVE metadata
 * area through READ, as libcryptsetup 2.6 does, into *M.  Returns 0, or
 * -1 with a short reason in WHY. */
int bitlk_read_metadata (bitlk_read_fn *read, void *opaque,
                         struct bitlk_metadata *m,
                         char *why, size_t why_size);

/* The segments cryptsetup 2.6 activates (lib/bitlk/bitlk.c, _activate)
 * over a device of DEVICE_BYTES: the metadata areas and the volume
 * header as zero segments, the volume header's sectors served at
 * sector 0, every other range as itself, IV offset equal to device
 * offset.  Returns 0, or -1 with WHY when they overlap, leave the
 * device or need more than cryptsetup's 10 segments. */
int bitlk_segments (const struct bitlk_metadata *m, uint64_t device_bytes,
                    struct segment_list *l, char *why, size_t why_size);

#endif /* DMCRYPT_BITLK_H */
