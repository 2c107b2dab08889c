/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A dm-integrity device (integrity/integrity.h) as the engine's backend,
 * with dm-crypt's authenticated encryption (crypto/aead.h) above it when
 * the table asks for one: cryptsetup's activation of a LUKS2 volume with
 * integrity, crypt over integrity, or integritysetup's alone.
 *
 * The engine above moves plaintext (its table's cipher is cipher_null):
 * it splits requests, reads, modifies and writes partial sectors and
 * orders writes as it does for any table; here each whole sector is
 * sealed with a fresh tag on its way down and opened, its tag checked,
 * on its way up.  Offsets are bytes of the mapping (the dm-integrity
 * device's provided data), whole sectors of SECTOR_BYTES.
 *
 * A sector whose tag does not verify fails its read with EILSEQ, as the
 * kernel's dm-crypt (BLK_STS_PROTECTION) and dm-integrity do; no
 * unverified byte reaches the caller.  Each such sector is logged once
 * and counted. */
#ifndef DMCRYPT_BACKEND_INTEGRITY_H
#define DMCRYPT_BACKEND_INTEGRITY_H

#include <stdint.h>

#include "../crypto/aead.h"
#include "../integrity/integrity.h"
#include "backend.h"

/* What a dm-integrity device under the mapping reads and writes
 * through: LOWER's bytes (the image, under faults or the lab's device). */
struct integrity_io backend_integrity_io (struct backend *lower);

/* Takes DEV and AEAD (NULL: dm-integrity alone, its internal hash
 * checks the tags), and LOWER, which DEV reads and writes through and
 * which closes with the result.  NULL after nbdkit_error. */
struct backend *backend_integrity_wrap (struct backend *lower,
                                        struct integrity_dev *dev,
                                        struct aead_sector *aead);

/* Closes B's dm-integrity device (its journal committed, written back
 * and cleared) while the image is still locked, before B itself is
 * closed; no request may come after.  Returns 0, or -1 after
 * nbdkit_error.  Closing B without it does the same. */
int backend_integrity_finish (struct backend *b);

/* The dm-integrity device of B (made by backend_integrity_wrap). */
const struct integrity_dev *backend_integrity_dev (const struct backend *b);

/* Sectors whose tag did not verify since B opened: dm-crypt's AEAD
 * failures and dm-integrity's own mismatches. */
uint64_t backend_integrity_failures (const struct backend *b);

#endif /* DMCRYPT_BACKEND_INTEGRITY_H */
