/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The two CRCs the kernel's crypto API offers dm-integrity as "crc32"
 * and "crc32c": reflected CRC-32 with the IEEE polynomial and with
 * Castagnoli's, without any inversion here (the callers apply the
 * kernel's seeds and final inversions). */
#ifndef DMCRYPT_INTEGRITY_CRC_H
#define DMCRYPT_INTEGRITY_CRC_H

#include <stddef.h>
#include <stdint.h>

uint32_t integrity_crc32_le (uint32_t crc, const void *buf, size_t len);
uint32_t integrity_crc32c_le (uint32_t crc, const void *buf, size_t len);

#endif /* DMCRYPT_INTEGRITY_CRC_H */
