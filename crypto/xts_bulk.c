/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XTS on ECB a run at a time: every tweak of the run in one ECB call,
 * every data block in another, the whitening between them (xts.c). */
#include "block_cipher.h"
#include "cpu_scratch.h"
#include "xts.h"
#include "xts_bulk.h"

/* A run, its tweak table and its whitened copy fit a 48 KiB L1 data
 * cache; 16 KiB measured quicker than 8 and 32 with AES-NI, and no
 * slower than 8 since the whitened copy (tests/unit/test-cipher
 * --bench). */
#define XTS_RUN_BYTES 16384
_Static_assert (XTS_RUN_BYTES % 4096 == 0, "a run holds whole sectors");
#define XTS_MIN_UNIT_BYTES 512   /* the smallest sector */

/* What a run needs beside its source and destination: its tweaks, the
 * table of every block's tweak and the whitened copy. */
struct run_scratch
{
  uint8_t whitened[XTS_RUN_BYTES] __attribute__ ((aligned (64)));
  uint8_t table[XTS_RUN_BYTES];
  uint8_t tweaks[XTS_RUN_BYTES / XTS_MIN_UNIT_BYTES * XTS_BLOCK_BYTES];
};
_Static_assert (sizeof (struct run_scratch) <= CPU_SCRATCH_BYTES,
                "a run's scratch fits a CPU's area");

/* One run of LEN bytes, at most XTS_RUN_BYTES. */
static int
convert_run (const struct xts_bulk *x, struct run_scratch *s, uint8_t *dst,
             const uint8_t *src, size_t len, uint64_t iv_sector,
             uint64_t iv_step)
{
  size_t units = len / x->unit_bytes, tweak_bytes = units * XTS_BLOCK_BYTES;
  uint8_t *tweaks = s->tweaks;

  iv_generate_run (x->iv, iv_sector, iv_step, units, tweaks);
  if ((x->essiv != NULL &&
       block_cipher_update (x->essiv, tweaks, tweaks, tweak_bytes) == -1) ||
      block_cipher_update (x->tweak, tweaks, tweaks, tweak_bytes) == -1)
    return -1;
  /* Whitened into scratch that stays in cache, not into DST: DST is
   * often a buffer no core has touched lately, and its misses cost less
   * inside the ECB call, behind the rounds, than in a pass that does
   * nothing else. */
  xts_whiten_first_units (s->whitened, src, s->table, x->unit_bytes, units,
                          tweaks);
  if (block_cipher_update (x->data, dst, s->whitened, len) == -1)
    return -1;
  xts_whiten (dst, dst, s->table, len);
  return 0;
}

static int
convert_runs (const struct xts_bulk *x, struct run_scratch *s, uint8_t *dst,
              const uint8_t *src, size_t nbytes, uint64_t iv_sector,
              uint64_t iv_step)
{
  size_t off, len, run_units;

  for (off = 0; off < nbytes; off += len) {
    len = nbytes - off < XTS_RUN_BYTES ? nbytes - off : XTS_RUN_BYTES;
    run_units = len / x->unit_bytes;
    if (convert_run (x, s, dst + off, src + off, len, iv_sector,
                     iv_step) == -1)
      return -1;
    iv_sector += run_units * iv_step;
  }
  return 0;
}

int
xts_bulk_convert (const struct xts_bulk *x, uint8_t *dst, const uint8_t *src,
                  size_t nbytes, uint64_t iv_sector, uint64_t iv_step)
{
  struct run_scratch on_stack, *cpu_area;
  int slot, r;

  cpu_area = cpu_scratch_claim (&slot);
  r = convert_runs (x, cpu_area ? cpu_area : &on_stack, dst, src, nbytes,
                    iv_sector, iv_step);
  cpu_scratch_release (slot);
  return r;
}
