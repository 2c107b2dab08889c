/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Table-driven reflected CRC-32s, one byte a step.  The tables are
 * made once, from the polynomials: 0xedb88320 (IEEE 802.3, the
 * kernel's crc32_le) and 0x82f63b78 (Castagnoli, its crc32c). */
#include <pthread.h>

#include "crc.h"

static uint32_t table_ieee[256], table_castagnoli[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void
make_table (uint32_t *table, uint32_t poly)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;

    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ poly : c >> 1;
    table[i] = c;
  }
}

static void
make_tables (void)
{
  make_table (table_ieee, 0xedb88320);
  make_table (table_castagnoli, 0x82f63b78);
}

static uint32_t
crc_update (const uint32_t *table, uint32_t crc, const uint8_t *p,
            size_t len)
{
  while (len--)
    crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t
integrity_crc32_le (uint32_t crc, const void *buf, size_t len)
{
  pthread_once (&tables_once, make_tables);
  return crc_update (table_ieee, crc, buf, len);
}

uint32_t
integrity_crc32c_le (uint32_t crc, const void *buf, size_t len)
{
  pthread_once (&tables_once, make_tables);
  return crc_update (table_castagnoli, crc, buf, len);
}
