/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One decrypted FileVault2 metadata block: the logical volume's size
 * (type 0x001a, in an XML property list) or its offset (type 0x0305).
 * The field positions are those cryptsetup 2.6's lib/fvault2/fvault2.c
 * reads; the lengths in the block are the image's and are checked
 * here, in 64 bits, against the block's own size. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fvault2.h"

#define BLOCK_TYPE       10      /* le16, after the checksum and version */
#define LV_XML_OFFSET    128     /* 0x001a: le32 byte offset in the block */
#define LV_XML_SIZE      132     /* 0x001a: le32 bytes */
#define LV_BLOCK_OFFSET  104     /* 0x0305: le32, in blocks */
#define KEYS_XML_OFFSET  112     /* 0x0019: le32 byte offset in the block */
#define KEYS_XML_SIZE    116     /* 0x0019: le32 bytes */

#define SIZE_KEY "com.apple.corestorage.lv.size"

static uint32_t
le32 (const uint8_t *p)
{
  return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t) p[3] << 24;
}

/* The bytes from P (before END) up to the first STOP: their count, or
 * END - P when there is no STOP. */
static size_t
span_to (const char *p, const char *end, char stop)
{
  const char *q = memchr (p, stop, end - p);

  return q ? (size_t) (q - p) : (size_t) (end - p);
}

/* The text of the first "<key>KEY</key><TYPE ...>TEXT</TYPE>" in XML
 * (LEN bytes, not NUL-terminated): the form cryptsetup matches, with
 * TEXT not empty and free of '<'.  *TEXT points into XML.  Returns the
 * length of TEXT, or 0 when there is none. */
static size_t
plist_value (const char *xml, size_t len, const char *key, const char *type,
             const char **text)
{
  char head[128], tail[32];
  size_t head_len, tail_len, attrs, n;
  const char *p, *v, *end = xml + len;

  head_len = snprintf (head, sizeof head, "<key>%s</key><%s", key, type);
  tail_len = snprintf (tail, sizeof tail, "</%s>", type);
  for (p = xml; (p = memmem (p, end - p, head, head_len)) != NULL; p++) {
    attrs = span_to (p + head_len, end, '>');
    if (p + head_len + attrs == end)
      return 0;                 /* no '>' left anywhere */
    v = p + head_len + attrs + 1;
    n = span_to (v, end, '<');
    if (n > 0 && (size_t) (end - (v + n)) >= tail_len
        && memcmp (v + n, tail, tail_len) == 0) {
      *text = v;
      return n;
    }
  }
  return 0;
}

/* The property list of a block (its offset and length at OFF_FIELD and
 * OFF_FIELD + 4) must lie inside it.  cryptsetup 2.6 adds the two in 32
 * bits, where a sum that wraps passes its check and it reads far
 * outside the block: refused here, before libcryptsetup sees it. */
static int
check_xml (const uint8_t *block, unsigned off_field, const char *what,
           char *why, size_t why_size)
{
  uint64_t off = le32 (block + off_field);
  uint64_t len = le32 (block + off_field + 4);

  if (off <= FVAULT2_BLOCK_BYTES && len <= FVAULT2_BLOCK_BYTES - off)
    return 0;
  snprintf (why, why_size, "its %s (%" PRIu64 " bytes at %" PRIu64 ") lies "
            "outside its block", what, len, off);
  return -1;
}

/* Type 0x001a: com.apple.corestorage.lv.size, hexadecimal digits as
 * cryptsetup reads them (strtoull base 16). */
static int
parse_size_block (const uint8_t *block, struct fvault2_layout *l,
                  char *why, size_t why_size)
{
  uint64_t off = le32 (block + LV_XML_OFFSET);
  uint64_t len = le32 (block + LV_XML_SIZE);
  const char *xml = (const char *) block + off, *text;
  char *digits;
  size_t n;

  if (check_xml (block, LV_XML_OFFSET, "volume description", why,
                 why_size) == -1)
    return -1;
  /* cryptsetup copies the text with strndup: a NUL ends it. */
  n = plist_value (xml, strnlen (xml, len), SIZE_KEY, "integer", &text);
  if (n == 0) {
    snprintf (why, why_size, "no volume size in its metadata");
    return -1;
  }
  if ((digits = strndup (text, n)) == NULL) {
    snprintf (why, why_size, "%s", strerror (errno));
    return -1;
  }
  l->volume_size = strtoull (digits, NULL, 16);
  /* The text is the image's: quoted in one line of printable bytes. */
  for (n = 0; digits[n]; n++)
    if (digits[n] < ' ' || digits[n] > '~')
      digits[n] = '?';
  if (l->volume_size == 0 || l->volume_size == ULLONG_MAX)
    snprintf (why, why_size, "volume size '%.32s' in its metadata is not "
              "valid", digits);
  free (digits);
  return l->volume_size == 0 || l->volume_size == ULLONG_MAX ? -1 : 0;
}

int
fvault2_parse_block (const uint8_t *block, struct fvault2_layout *l,
                     unsigned *found, char *why, size_t why_size)
{
  switch (block[BLOCK_TYPE] | block[BLOCK_TYPE + 1] << 8) {
  case 0x001a:
    if (parse_size_block (block, l, why, why_size) == -1)
      return -1;
    *found |= FVAULT2_FOUND_SIZE;
    return 0;
  case 0x0019:
    /* The wrapped keys: libcryptsetup's to read, but its bounds ours. */
    return check_xml (block, KEYS_XML_OFFSET, "key description", why,
                      why_size);
  case 0x0305:
    /* The product needs 64 bits: a 32-bit block offset times a 32-bit
     * block size never overflows them. */
    l->volume_offset = (uint64_t) le32 (block + LV_BLOCK_OFFSET)
                       * l->block_size;
    *found |= FVAULT2_FOUND_OFFSET;
    return 0;
  default:
    return 0;
  }
}
