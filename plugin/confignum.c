/* The numeric parameters of .config, and the last word on a key that
 * is none of ours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "dmcrypt.h"

int config_numeric (const char *key, const char *value);

static int
set_power_of_two (const char *key, const char *value, unsigned *dst)
{
  if (nbdkit_parse_unsigned (key, value, dst) == -1)
    return -1;
  if (*dst == 0 || *dst > 4096 || (*dst & (*dst - 1))) {
    nbdkit_error ("%s: must be a power of two from 1 to 4096", key);
    return -1;
  }
  return 0;
}

static int
set_in_range (const char *key, const char *value, unsigned *dst,
              unsigned min, unsigned max)
{
  if (nbdkit_parse_unsigned (key, value, dst) == -1)
    return -1;
  if (*dst < min || *dst > max) {
    nbdkit_error ("%s: must be between %u and %u", key, min, max);
    return -1;
  }
  return 0;
}

/* A time scale: a positive number, fractions allowed (0.5: half as
 * fast as the real device). */
static int
set_speed (const char *value)
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
  params.device_speed = v;
  return 0;
}

/* dm's spellings (allow_discards) and cryptsetup's (key_size) are the
 * usual slips: ours, when KEY is one of them. */
const char *
dmcrypt_param_respelt (const char *key, char *alt, size_t size)
{
  size_t i;

  snprintf (alt, size, "%s", key);
  for (i = 0; alt[i]; i++)
    if (alt[i] == '_')
      alt[i] = '-';
  return strcmp (alt, key) != 0 && dmcrypt_is_param_name (alt) ? alt : NULL;
}

static void
unknown_key (const char *key)
{
  char alt[64];

  if (dmcrypt_param_respelt (key, alt, sizeof alt))
    nbdkit_error ("unknown parameter '%s': did you mean '%s'?", key, alt);
  else
    nbdkit_error ("unknown parameter '%s' (nbdkit dmcrypt --help lists "
                  "them)", key);
}

int
config_numeric (const char *key, const char *value)
{
  if (strcmp (key, "veracrypt-pim") == 0)
    return nbdkit_parse_unsigned (key, value, &params.veracrypt_pim);
  else if (strcmp (key, "keyfile-offset") == 0)
    return nbdkit_parse_uint64_t (key, value, &params.keyfile_offset);
  else if (strcmp (key, "keyfile-size") == 0)
    return nbdkit_parse_uint64_t (key, value, &params.keyfile_size);
  else if (strcmp (key, "key-slot") == 0) {
    if (nbdkit_parse_int (key, value, &params.key_slot) == -1)
      return -1;
    if (params.key_slot < 0) {
      nbdkit_error ("key-slot: must be 0 or more");
      return -1;
    }
    return 0;
  }
  else if (strcmp (key, "sector-size") == 0)
    return nbdkit_parse_unsigned (key, value, &params.sector_size);
  else if (strcmp (key, "min-block-size") == 0) {
    if (strcmp (value, "sector") == 0) {
      params.min_block_size = MIN_BLOCK_SECTOR;
      return 0;
    }
    return set_power_of_two (key, value, &params.min_block_size);
  }
  else if (strcmp (key, "workers") == 0)
    return set_in_range (key, value, &params.workers, 1, 1024);
  else if (strcmp (key, "max-write-rounds") == 0)
    return set_in_range (key, value, &params.max_write_rounds, 0, 1024);
  else if (strcmp (key, "nr-requests") == 0)
    return set_in_range (key, value, &params.nr_requests, 1, 65536);
  else if (strcmp (key, "device-speed") == 0)
    return set_speed (value);
  else if (strcmp (key, "hz") == 0)
    return set_in_range (key, value, &params.hz, 24, 10000);
  else if (strcmp (key, "key-size") == 0) {
    if (set_in_range (key, value, &params.key_bits, 8, 8192) == -1)
      return -1;
    if (params.key_bits % 8) {
      nbdkit_error ("key-size: %u bits is not a whole number of bytes",
                    params.key_bits);
      return -1;
    }
    return 0;
  }
  unknown_key (key);
  return -1;
}
