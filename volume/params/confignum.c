/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The numeric parameters of .config, and the last word on a key that
 * is none of ours.  Every number is read here, and a refusal names the
 * parameter and the value: nbdkit's parsers (nbdkit_parse_unsigned and
 * friends) say "empty string where we expected a number" without
 * either value or range. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "params.h"

/* VALUE as nbdkit 1.32 reads a whole number (server/public.c): blanks
 * first, no minus sign, then strtoull in base 0 (decimal, 0x hex,
 * 0 octal) to the end of the string. */
static bool
whole_number (const char *value, uint64_t *n)
{
  const char *p = value;
  unsigned long long v;
  char *end;

  while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
    p++;
  if (*p == '-')
    return false;
  errno = 0;
  v = strtoull (p, &end, 0);
  if (errno || end == p || *end)
    return false;
  *n = v;
  return true;
}

/* KEY=VALUE, a whole number from MIN to MAX, into *DST.  Returns 0, or
 * -1 after one error line naming KEY, VALUE and the range. */
int
config_number (const char *key, const char *value, uint64_t min,
               uint64_t max, uint64_t *dst)
{
  uint64_t n;

  if (whole_number (value, &n) && n >= min && n <= max) {
    *dst = n;
    return 0;
  }
  if (min == 0 && max == UINT64_MAX)
    nbdkit_error ("%s: '%s' is not a whole number", key, value);
  else
    nbdkit_error ("%s: '%s' is not a whole number from %" PRIu64 " to %"
                  PRIu64, key, value, min, max);
  return -1;
}

/* The byte count of a size's suffix, as nbdkit_parse_size of nbdkit
 * 1.32 takes them (server/public.c): none or b, s (512-byte sectors),
 * k, m, g, t, p, e (powers of 1024), either case; 0 for any other. */
static uint64_t
size_scale (const char *suffix)
{
  static const char powers[] = "kmgtpe";
  const char *p;
  uint64_t scale = 1;
  char c = suffix[0] | 0x20;         /* lower case */
  size_t i;

  if (suffix[0] == '\0')
    return 1;
  if (suffix[1] != '\0')
    return 0;
  if (c == 'b')
    return 1;
  if (c == 's')
    return 512;
  if ((p = strchr (powers, c)) == NULL)
    return 0;
  for (i = 0; i <= (size_t) (p - powers); i++)
    scale *= 1024;
  return scale;
}

/* KEY=VALUE, a size in bytes of at least MIN (MIN_WORDS says it), as
 * nbdkit writes sizes: a decimal number and an optional suffix. */
int
config_size (const char *key, const char *value, uint64_t min,
             const char *min_words, uint64_t *dst)
{
  uint64_t scale, n;
  char *end;
  intmax_t v;

  errno = 0;
  v = strtoimax (value, &end, 10);
  if (end == value || v < 0 || errno
      || (scale = size_scale (end)) == 0 || INT64_MAX / scale < (uint64_t) v) {
    nbdkit_error ("%s: '%s' is not a size (bytes, or with a suffix: 512s, "
                  "4K, 1M, 2G)", key, value);
    return -1;
  }
  n = (uint64_t) v * scale;
  if (n < min) {
    nbdkit_error ("%s: '%s' is less than %s", key, value, min_words);
    return -1;
  }
  *dst = n;
  return 0;
}

/* config_number into an unsigned int. */
static int
set_unsigned (const char *key, const char *value, unsigned *dst,
              unsigned min, unsigned max)
{
  uint64_t n;

  if (config_number (key, value, min, max, &n) == -1)
    return -1;
  *dst = n;
  return 0;
}

static int
set_power_of_two (const char *key, const char *value, unsigned *dst)
{
  uint64_t n;

  if (!whole_number (value, &n) || n == 0 || n > 4096 || (n & (n - 1))) {
    nbdkit_error ("%s: '%s' is not a power of two from 1 to 4096, nor "
                  "'sector'", key, value);
    return -1;
  }
  *dst = n;
  return 0;
}

/* A time scale: a positive number, fractions allowed (0.5: half as
 * fast as the real device). */
static int
set_speed (struct dmcrypt_params *p, const char *value)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (value, &end);
  if (errno || end == value || *end || !(v > 0) || v > 1e9) {
    nbdkit_error ("device-speed: '%s' is not a positive number up to 1e9",
                  value);
    return -1;
  }
  p->device_speed = v;
  return 0;
}

static void
unknown_key (const char *key)
{
  char alt[64];

  if (params_respelt (key, alt, sizeof alt))
    nbdkit_error ("unknown parameter '%s': did you mean '%s'?", key, alt);
  else
    nbdkit_error ("unknown parameter '%s' (nbdkit dmcrypt --help lists "
                  "them)", key);
}

int
config_numeric (struct dmcrypt_params *p, const char *key,
                const char *value)
{
  uint64_t n;

  if (strcmp (key, "veracrypt-pim") == 0)
    return set_unsigned (key, value, &p->veracrypt_pim, 0, UINT_MAX);
  else if (strcmp (key, "keyfile-offset") == 0)
    return config_number (key, value, 0, UINT64_MAX, &p->keyfile_offset);
  else if (strcmp (key, "integrity-key-size") == 0)
    return config_number (key, value, 1, 4096, &p->integrity_key_size);
  else if (strcmp (key, "keyfile-size") == 0)
    return config_number (key, value, 0, UINT64_MAX, &p->keyfile_size);
  else if (strcmp (key, "key-slot") == 0) {
    if (config_number (key, value, 0, INT_MAX, &n) == -1)
      return -1;
    p->key_slot = n;
    return 0;
  }
  /* LUKS2 has 32 tokens (LUKS2_TOKENS_MAX, cryptsetup 2.6 lib/luks2/
   * luks2.h); on LUKS1 the number is Clevis's luksmeta slot, 0..7. */
  else if (strcmp (key, "token-id") == 0) {
    if (config_number (key, value, 0, 31, &n) == -1)
      return -1;
    p->token_id = n;
    return 0;
  }
  else if (strcmp (key, "sector-size") == 0)
    return set_unsigned (key, value, &p->sector_size, 0, UINT_MAX);
  else if (strcmp (key, "min-block-size") == 0) {
    if (strcmp (value, "sector") == 0) {
      p->min_block_size = MIN_BLOCK_SECTOR;
      return 0;
    }
    return set_power_of_two (key, value, &p->min_block_size);
  }
  else if (strcmp (key, "workers") == 0)
    return set_unsigned (key, value, &p->workers, 1, 1024);
  else if (strcmp (key, "max-write-rounds") == 0)
    return set_unsigned (key, value, &p->max_write_rounds, 0, 1024);
  else if (strcmp (key, "nr-requests") == 0)
    return set_unsigned (key, value, &p->nr_requests, 1, 65536);
  else if (strcmp (key, "device-speed") == 0)
    return set_speed (p, value);
  else if (strcmp (key, "hz") == 0)
    return set_unsigned (key, value, &p->hz, 24, 10000);
  else if (strcmp (key, "key-size") == 0) {
    if (set_unsigned (key, value, &p->key_bits, 8, 8192) == -1)
      return -1;
    if (p->key_bits % 8) {
      nbdkit_error ("key-size: %u bits is not a whole number of bytes",
                    p->key_bits);
      return -1;
    }
    return 0;
  }
  unknown_key (key);
  return -1;
}
