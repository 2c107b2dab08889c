/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the FileVault2 metadata reader (luks/fvault2-*.c), whose every
 * offset and length comes from the image.  The first byte picks what
 * the rest is:
 *   0  a volume header (fvault2_parse_header),
 *   1  a decrypted metadata block (fvault2_parse_block: the property
 *      list's offset and length, the size's digits),
 *   2+ a whole image (fvault2_read_layout, reads beyond it refused).
 * Short inputs are padded with zeros.
 *
 * Rules checked beyond "no crash, no out-of-bounds read": a refusal
 * gives a reason on one line; an accepted block or image gives a size
 * that is neither 0 nor all ones; an accepted image has read both the
 * size and the offset. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../luks/fvault2.h"
#include "fuzz.h"

static void
check_size (const struct fvault2_layout *l)
{
  if (l->volume_size == 0 || l->volume_size == ULLONG_MAX)
    fuzz_fail ("accepted volume size %llu",
               (unsigned long long) l->volume_size);
}

static void
fuzz_block (const uint8_t *data, size_t size)
{
  uint8_t *block = fuzz_padded (data, size, FVAULT2_BLOCK_BYTES);
  struct fvault2_layout l = { .block_size = 4096 };
  unsigned found = 0;
  char why[256] = "";

  if (fvault2_parse_block (block, &l, &found, why, sizeof why) == -1)
    fuzz_check_reason (why);
  else if (found & FVAULT2_FOUND_SIZE)
    check_size (&l);
  free (block);
}

static void
fuzz_header (const uint8_t *data, size_t size)
{
  uint8_t *head = fuzz_padded (data, size, FVAULT2_HEADER_BYTES);
  struct fvault2_header h;
  char why[256] = "";

  if (fvault2_parse_header (head, &h, why, sizeof why) == -1)
    fuzz_check_reason (why);
  else if (h.block_size == 0)
    fuzz_fail ("accepted block size 0");
  free (head);
}

int
fuzz_fvault2 (const uint8_t *data, size_t size)
{
  struct fuzz_image im = { data + 1, size ? size - 1 : 0 };
  struct fvault2_layout l;
  char why[256] = "";

  if (size == 0)
    return 0;
  if (data[0] == 0)
    fuzz_header (im.data, im.size);
  else if (data[0] == 1)
    fuzz_block (im.data, im.size);
  else if (fvault2_read_layout (fuzz_image_read, &im, &l, why, sizeof why) == -1)
    fuzz_check_reason (why);
  else
    check_size (&l);
  return 0;
}

FUZZ_ENTRY (fuzz_fvault2)
