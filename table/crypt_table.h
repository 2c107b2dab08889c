/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dm-crypt target line, the project's common currency:
 *
 *   <start> <length> crypt <cipher> <key> <iv_offset> <device> <offset>
 *       [<#opt_params> <opt_params>...]
 *
 * exactly as "dmsetup table --showkeys" prints it.  Parsing holds a line
 * to the kernel's constructor rules; formatting prints the optional
 * arguments in the kernel's fixed order. */
#ifndef DMCRYPT_CRYPT_TABLE_H
#define DMCRYPT_CRYPT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum crypt_table_flag
{
  CT_ALLOW_DISCARDS        = 1 << 0,
  CT_SAME_CPU_CRYPT        = 1 << 1,
  CT_SUBMIT_FROM_CRYPT_CPUS = 1 << 2,
  CT_NO_READ_WORKQUEUE     = 1 << 3,
  CT_NO_WRITE_WORKQUEUE    = 1 << 4,
  CT_IV_LARGE_SECTORS      = 1 << 5,
  CT_HIGH_PRIORITY         = 1 << 6,
};

struct crypt_table
{
  uint64_t start;         /* 512-byte sectors; we only accept 0 */
  uint64_t length;        /* 512-byte sectors: the mapping's size */
  char *cipher;           /* cipher spec as given */
  uint8_t *key;           /* volume key, secmem; NULL for key_size 0 */
  size_t key_size;        /* bytes */
  uint64_t iv_offset;     /* 512-byte sectors */
  char *device;           /* device field as given (informational) */
  uint64_t offset;        /* 512-byte sectors into the backing device */
  unsigned flags;         /* enum crypt_table_flag */
  unsigned sector_size;   /* bytes, 512 when not given */
  /* integrity:<bytes>:<type>: dm-crypt's authenticated encryption over a
   * dm-integrity device that stores TAG bytes a sector (the MAC or AEAD
   * tag and, for -random IVs, the IV); 0 without it.  The cipher is then
   * the kernel's capi: form and the engine moves plaintext only
   * (backend/integrity.h does the sealing). */
  unsigned integrity_tag_size;
  char integrity_type[8]; /* "aead" (what cryptsetup loads) */
};

/* Parses LINE into T (zeroed first).  Returns 0, or -1 after nbdkit_error
 * naming the problem, with T freed.  The cipher spec and key size are
 * checked with sector_cipher_check_spec. */
int crypt_table_parse (const char *line, struct crypt_table *t);

/* Checks the kernel's rules on a filled-in table (also used for tables
 * made from a LUKS header or from cipher=/key= parameters). */
int crypt_table_validate (const struct crypt_table *t);

/* Formats T as dmsetup does.  Without SHOWKEYS the key is printed as the
 * same number of '0' digits.  DEVICE, when non-NULL, replaces t->device
 * (e.g. "254:0").  Returns a malloc'd string (secmem when SHOWKEYS), or
 * NULL with errno set.  Free with crypt_table_free_line. */
char *crypt_table_format (const struct crypt_table *t, bool showkeys,
                          const char *device);
void crypt_table_free_line (char *line);

/* Deep copy (the key into fresh secmem). */
int crypt_table_copy (struct crypt_table *dst, const struct crypt_table *src);

/* Wipes the key and frees every field; T is left zeroed. */
void crypt_table_free (struct crypt_table *t);

/* Hex helpers: parse exactly 2*SIZE hex digits; format lower-case. */
int hex_decode (const char *hex, uint8_t **out, size_t *size);

#endif /* DMCRYPT_CRYPT_TABLE_H */
