/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hex text to key bytes, for the <key> field of a table and for key=. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../crypto/secmem.h"
#include "crypt_table.h"

/* Like the kernel's hex_to_bin: both cases are accepted. */
static int
hex_digit_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Decodes HEX into a fresh secmem buffer of strlen(HEX)/2 bytes.  The
 * kernel would silently drop an odd last digit; we refuse it, as it is
 * always a typing error.  An empty string gives *OUT = NULL, *SIZE = 0.
 * Reports nothing, so that the caller names the field: returns -1 with
 * errno EINVAL (odd count, not a hex digit) or ENOMEM. */
int
hex_decode (const char *hex, uint8_t **out, size_t *size)
{
  size_t ndigits = strlen (hex);
  size_t nbytes = ndigits / 2;
  uint8_t *bytes;
  size_t i;

  *out = NULL;
  *size = 0;
  if (ndigits % 2 != 0) {
    errno = EINVAL;
    return -1;
  }
  if (nbytes == 0)
    return 0;

  bytes = secmem_alloc (nbytes);
  if (bytes == NULL)
    return -1;
  for (i = 0; i < nbytes; i++) {
    int high = hex_digit_value (hex[2 * i]);
    int low = hex_digit_value (hex[2 * i + 1]);

    if (high < 0 || low < 0) {
      secmem_free (bytes, nbytes);
      errno = EINVAL;
      return -1;
    }
    bytes[i] = (uint8_t) (high << 4 | low);
  }

  *out = bytes;
  *size = nbytes;
  return 0;
}
