/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a dm-crypt target line with the rules of the kernel's
 * constructor (drivers/md/dm-crypt.c crypt_ctr, crypt_ctr_optional). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/log.h"
#include "../crypto/secmem.h"
#include "crypt_table.h"

/* The fixed fields, in order. */
enum table_field
{
  F_START, F_LENGTH, F_TYPE, F_CIPHER, F_KEY, F_IV_OFFSET, F_DEVICE,
  F_OFFSET, F_COUNT
};

/* crypt_ctr_optional's limit on <#opt_params> (9 since high_priority). */
#define MAX_OPTIONAL_ARGS 9

static const struct
{
  const char *word;
  unsigned flag;
} flag_words[] = {
  { "allow_discards", CT_ALLOW_DISCARDS },
  { "same_cpu_crypt", CT_SAME_CPU_CRYPT },
  { "high_priority", CT_HIGH_PRIORITY },
  { "submit_from_crypt_cpus", CT_SUBMIT_FROM_CRYPT_CPUS },
  { "no_read_workqueue", CT_NO_READ_WORKQUEUE },
  { "no_write_workqueue", CT_NO_WRITE_WORKQUEUE },
  { "iv_large_sectors", CT_IV_LARGE_SECTORS },
};

/* Unsigned decimal digits only: the kernel's sscanf("%llu") refuses a
 * sign too.  Unlike the kernel we refuse values that wrap.  Returns 0,
 * EINVAL (not a number) or ERANGE (too large). */
static int
parse_decimal (const char *s, uint64_t *value)
{
  uint64_t v = 0;

  if (*s == '\0')
    return EINVAL;
  for (; *s; s++) {
    unsigned digit = (unsigned) (*s - '0');

    if (digit > 9)
      return EINVAL;
    if (v > (UINT64_MAX - digit) / 10)
      return ERANGE;
    v = v * 10 + digit;
  }
  *value = v;
  return 0;
}

static int
parse_sectors (const char *field, const char *word, uint64_t *sectors)
{
  int r = parse_decimal (word, sectors);

  if (r == EINVAL)
    nbdkit_error ("table %s '%s' is not an unsigned decimal number",
                  field, word);
  else if (r == ERANGE)
    nbdkit_error ("table %s '%s' does not fit in 64 bits", field, word);
  return r == 0 ? 0 : -1;
}

static int
parse_key (const char *word, struct crypt_table *t)
{
  size_t hex_length;

  /* ":<size>:<type>:<description>" names a key in the kernel keyring
   * (LUKS2 tables without --disable-keyring); userspace cannot read it. */
  if (word[0] == ':') {
    nbdkit_error ("table key %s: key in kernel keyring is not supported; "
                  "give the key in hex", word);
    return -1;
  }
  /* A hyphen is the kernel's spelling of an empty key (cipher_null). */
  if (strcmp (word, "-") == 0)
    return 0;
  /* The messages give positions, never digits: they are key material. */
  hex_length = strspn (word, "0123456789abcdefABCDEF");
  if (word[hex_length] != '\0') {
    nbdkit_error ("table key: character %zu is not a hex digit",
                  hex_length + 1);
    return -1;
  }
  if (hex_length % 2 != 0) {
    nbdkit_error ("table key: odd number of hex digits (%zu)", hex_length);
    return -1;
  }
  if (hex_decode (word, &t->key, &t->key_size) == -1) {
    nbdkit_error ("table key: %m");
    return -1;
  }
  return 0;
}

static int
parse_sector_size_option (const char *word, struct crypt_table *t)
{
  uint64_t size;

  if (parse_decimal (word + strlen ("sector_size:"), &size) != 0
      || size < 512 || size > 4096 || (size & (size - 1)) != 0) {
    nbdkit_error ("table option '%s': Invalid feature value for "
                  "sector_size (a power of two from 512 to 4096)", word);
    return -1;
  }
  t->sector_size = (unsigned) size;
  return 0;
}

/* Flags match case-insensitively, as the kernel's strcasecmp does;
 * a repeated flag is harmless there and here. */
static int
parse_option (const char *word, struct crypt_table *t)
{
  size_t i;

  for (i = 0; i < sizeof flag_words / sizeof flag_words[0]; i++) {
    if (strcasecmp (word, flag_words[i].word) == 0) {
      t->flags |= flag_words[i].flag;
      return 0;
    }
  }
  if (strncmp (word, "sector_size:", strlen ("sector_size:")) == 0)
    return parse_sector_size_option (word, t);
  if (strncmp (word, "integrity:", strlen ("integrity:")) == 0) {
    nbdkit_error ("table option '%s': integrity/AEAD is not supported",
                  word);
    return -1;
  }
  nbdkit_error ("table option '%s': Invalid feature arguments "
                "(unknown optional argument)", word);
  return -1;
}

/* WORDS[0] is <#opt_params>.  Words beyond the count are ignored, as the
 * kernel ignores them (dmsetup then prints only the counted ones). */
static int
parse_options (char **words, size_t nwords, struct crypt_table *t)
{
  uint64_t count;
  size_t i;

  if (parse_decimal (words[0], &count) != 0 || count > MAX_OPTIONAL_ARGS) {
    nbdkit_error ("table optional argument count '%s': Invalid number of "
                  "feature args (0 to %d)", words[0], MAX_OPTIONAL_ARGS);
    return -1;
  }
  if (count > nwords - 1) {
    nbdkit_error ("table optional argument count '%s': Not enough "
                  "feature arguments (%zu given)", words[0], nwords - 1);
    return -1;
  }
  for (i = 1; i <= count; i++)
    if (parse_option (words[i], t) == -1)
      return -1;
  if (nwords - 1 > count)
    nbdkit_debug ("table: ignoring %zu words after the %" PRIu64
                  " optional arguments, as the kernel does",
                  nwords - 1 - count, count);
  return 0;
}

static int
parse_words (char **words, size_t nwords, struct crypt_table *t)
{
  if (nwords < F_COUNT) {
    nbdkit_error ("table has %zu fields, needs at least 8: <start> "
                  "<length> crypt <cipher> <key> <iv_offset> <device> "
                  "<offset>", nwords);
    return -1;
  }
  if (parse_sectors ("start", words[F_START], &t->start) == -1)
    return -1;
  if (t->start != 0) {
    nbdkit_error ("table start must be 0, not %s", words[F_START]);
    return -1;
  }
  if (parse_sectors ("length", words[F_LENGTH], &t->length) == -1)
    return -1;
  if (strcmp (words[F_TYPE], "crypt") != 0) {
    nbdkit_error ("table target type must be crypt, not '%s'",
                  words[F_TYPE]);
    return -1;
  }
  t->cipher = strdup (words[F_CIPHER]);
  t->device = strdup (words[F_DEVICE]);
  if (t->cipher == NULL || t->device == NULL) {
    nbdkit_error ("table: strdup: %m");
    return -1;
  }
  if (parse_key (words[F_KEY], t) == -1
      || parse_sectors ("iv_offset", words[F_IV_OFFSET],
                        &t->iv_offset) == -1
      || parse_sectors ("offset", words[F_OFFSET], &t->offset) == -1)
    return -1;
  t->sector_size = 512;
  if (nwords > F_COUNT)
    return parse_options (words + F_COUNT, nwords - F_COUNT, t);
  return 0;
}

/* Counts the words of TEXT, split at white space as the kernel's
 * dm_split_args does.  With WORDS non-NULL, also cuts TEXT in place and
 * stores pointers to the words; without, TEXT is left unchanged. */
static size_t
split_words (char *text, char **words)
{
  size_t n = 0;
  char *p = text;

  for (;;) {
    while (*p && isspace ((unsigned char) *p))
      p++;
    if (*p == '\0')
      return n;
    if (words)
      words[n] = p;
    n++;
    while (*p && !isspace ((unsigned char) *p))
      p++;
    if (*p && words)
      *p++ = '\0';
  }
}

/* One line holds one target; a second line would be a second target. */
static int
check_single_line (const char *line)
{
  const char *newline = strchr (line, '\n');

  if (newline == NULL)
    return 0;
  for (newline++; *newline; newline++) {
    if (!isspace ((unsigned char) *newline)) {
      nbdkit_error ("table has more than one line: only a single crypt "
                    "target is supported");
      return -1;
    }
  }
  return 0;
}

/* The line is split in a secmem copy, wiped when freed: the hex key text
 * is not needed after decoding (crypt_set_key wipes it too). */
static int
parse_line (const char *line, struct crypt_table *t)
{
  size_t work_size = strlen (line) + 1;
  char *work;
  char **words = NULL;
  size_t nwords;
  int r = -1;

  work = secmem_alloc (work_size);
  if (work == NULL) {
    nbdkit_error ("table: secmem_alloc: %m");
    return -1;
  }
  memcpy (work, line, work_size);
  nwords = split_words (work, NULL);
  if (nwords == 0)
    nbdkit_error ("table is empty");
  else if ((words = calloc (nwords, sizeof *words)) == NULL)
    nbdkit_error ("table: calloc: %m");
  else {
    split_words (work, words);
    r = parse_words (words, nwords, t);
  }
  free (words);
  secmem_free (work, work_size);
  return r;
}

int
crypt_table_parse (const char *line, struct crypt_table *t)
{
  memset (t, 0, sizeof *t);
  if (check_single_line (line) == -1
      || parse_line (line, t) == -1
      || crypt_table_validate (t) == -1) {
    crypt_table_free (t);
    return -1;
  }
  return 0;
}
