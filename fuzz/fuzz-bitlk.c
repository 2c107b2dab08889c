/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the BitLocker metadata reader and layout (luks/bitlk-*.c),
 * whose every offset and length comes from the image: the input is an
 * image (reads beyond it refused), the device as long as the volume
 * size its metadata claims.
 *
 * Rules checked beyond "no crash, no out-of-bounds read": a refusal
 * gives a reason on one line; an accepted image has a volume header
 * and a sector size of 512 or 4096; an accepted layout passes the
 * segment list's own check (segment_list_check), the two independent
 * readings of what a mapping may be agreeing. */

#include "../luks/bitlk.h"
#include "fuzz.h"

static void
check_layout (const struct bitlk_metadata *m)
{
  static uint8_t key[32];
  struct crypt_table t = {
    .length = m->volume_size / 512, .cipher = (char *) "aes-xts-plain64",
    .key = key, .key_size = sizeof key, .device = (char *) "dev",
    .sector_size = m->sector_size,
  };
  struct segment_list l;
  char why[256] = "";

  if (bitlk_segments (m, m->volume_size, &l, why, sizeof why) == -1) {
    fuzz_check_reason (why);
    return;
  }
  /* Sector alignment is the kernel's rule, not the layout's: only a
   * 512-byte table must always pass. */
  t.sector_size = 512;
  if (segment_list_check (&l, &t, m->volume_size, why, sizeof why) == -1)
    fuzz_fail ("a layout its own check refuses: %s", why);
}

int
fuzz_bitlk (const uint8_t *data, size_t size)
{
  struct fuzz_image im = { data, size };
  struct bitlk_metadata m;
  char why[256] = "";

  if (bitlk_read_metadata (fuzz_image_read, &im, &m, why, sizeof why) == -1) {
    fuzz_check_reason (why);
    return 0;
  }
  if (m.volume_header_size == 0
      || (m.sector_size != 512 && m.sector_size != 4096))
    fuzz_fail ("accepted header size %llu, sector size %u",
               (unsigned long long) m.volume_header_size, m.sector_size);
  check_layout (&m);
  return 0;
}

FUZZ_ENTRY (fuzz_bitlk)
