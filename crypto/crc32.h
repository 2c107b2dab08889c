/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The two CRCs the kernel's crypto API offers as "crc32" and "crc32c"
 * (dm-integrity's internal hashes, tcw's whitening, TrueCrypt's header
 * checksums): reflected CRC-32 with the IEEE polynomial and with
 * Castagnoli's, without any inversion here (the callers apply their
 * seeds and final inversions). */
#ifndef DMCRYPT_CRC32_H
#define DMCRYPT_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_le (uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_le (uint32_t crc, const void *buf, size_t len);

#endif /* DMCRYPT_CRC32_H */
