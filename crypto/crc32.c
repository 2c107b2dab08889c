/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Table-driven reflected CRC-32s, eight bytes a step ("slicing by
 * 8": table k gives a byte's effect k bytes further on).  The tables
 * are made once, from the polynomials: 0xedb88320 (IEEE 802.3, the
 * kernel's crc32_le) and 0x82f63b78 (Castagnoli, its crc32c). */
#include <pthread.h>

#include "crc32.h"

static uint32_t table_ieee[8][256], table_castagnoli[8][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void
make_table (uint32_t table[8][256], uint32_t poly)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;

    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ poly : c >> 1;
    table[0][i] = c;
  }
  for (int k = 1; k < 8; k++)
    for (uint32_t i = 0; i < 256; i++)
      table[k][i] = (table[k - 1][i] >> 8)
        ^ table[0][table[k - 1][i] & 0xff];
}

static void
make_tables (void)
{
  make_table (table_ieee, 0xedb88320);
  make_table (table_castagnoli, 0x82f63b78);
}

static uint32_t
load_le32 (const uint8_t *p)
{
  return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint32_t
crc_update (const uint32_t t[8][256], uint32_t crc, const uint8_t *p,
            size_t len)
{
  for (; len >= 8; p += 8, len -= 8) {
    uint32_t lo = crc ^ load_le32 (p), hi = load_le32 (p + 4);

    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff]
      ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24]
      ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff]
      ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  while (len--)
    crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t
crc32_le (uint32_t crc, const void *buf, size_t len)
{
  pthread_once (&tables_once, make_tables);
  return crc_update (table_ieee, crc, buf, len);
}

uint32_t
crc32c_le (uint32_t crc, const void *buf, size_t len)
{
  pthread_once (&tables_once, make_tables);
  return crc_update (table_castagnoli, crc, buf, len);
}
