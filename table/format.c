/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Printing a crypt table as "dmsetup table [--showkeys]" does (the
 * kernel's crypt_status, STATUSTYPE_TABLE). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../crypto/secmem.h"
#include "crypt_table.h"
#include "segments.h"

/* Optional arguments in the order crypt_status prints them, whatever
 * order the table gave them in; sector_size:N goes between the
 * workqueue flags and iv_large_sectors. */
static const struct
{
  unsigned flag;
  const char *word;
} flags_before_sector_size[] = {
  { CT_ALLOW_DISCARDS, "allow_discards" },
  { CT_SAME_CPU_CRYPT, "same_cpu_crypt" },
  { CT_HIGH_PRIORITY, "high_priority" },
  { CT_SUBMIT_FROM_CRYPT_CPUS, "submit_from_crypt_cpus" },
  { CT_NO_READ_WORKQUEUE, "no_read_workqueue" },
  { CT_NO_WRITE_WORKQUEUE, "no_write_workqueue" },
};

/* Output is made twice: once with BUF NULL to measure it, then into a
 * buffer of exactly that size, so the key never sits in a temporary. */
struct line_writer
{
  char *buf;
  size_t size;      /* bytes at BUF, with the terminating NUL */
  size_t len;       /* bytes produced so far */
};

static void
put_text (struct line_writer *w, const char *fmt, ...)
{
  char *dst = NULL;
  size_t room = 0;
  va_list ap;
  int n;

  if (w->buf) {
    dst = w->buf + w->len;
    room = w->size - w->len;
  }
  va_start (ap, fmt);
  n = vsnprintf (dst, room, fmt, ap);
  va_end (ap);
  if (n > 0)
    w->len += (size_t) n;
}

static void
put_char (struct line_writer *w, char c)
{
  if (w->buf && w->len + 1 < w->size) {
    w->buf[w->len] = c;
    w->buf[w->len + 1] = '\0';
  }
  w->len++;
}

/* Lower-case hex like the kernel's hex2asc, or as many '0' digits. */
static void
put_key (struct line_writer *w, const struct crypt_table *t, bool showkeys)
{
  static const char digits[] = "0123456789abcdef";
  size_t i;

  if (t->key_size == 0) {
    put_char (w, '-');
    return;
  }
  for (i = 0; i < t->key_size; i++) {
    put_char (w, showkeys ? digits[t->key[i] >> 4] : '0');
    put_char (w, showkeys ? digits[t->key[i] & 0xf] : '0');
  }
}

static void
put_options (struct line_writer *w, const struct crypt_table *t)
{
  unsigned count = 0;
  size_t i;

  for (i = 0; i < sizeof flags_before_sector_size
         / sizeof flags_before_sector_size[0]; i++)
    count += (t->flags & flags_before_sector_size[i].flag) != 0;
  count += t->integrity_tag_size != 0;
  count += t->sector_size != 512;
  count += (t->flags & CT_IV_LARGE_SECTORS) != 0;
  if (count == 0)
    return;

  put_text (w, " %u", count);
  for (i = 0; i < sizeof flags_before_sector_size
         / sizeof flags_before_sector_size[0]; i++)
    if (t->flags & flags_before_sector_size[i].flag)
      put_text (w, " %s", flags_before_sector_size[i].word);
  /* crypt_status (6.1) prints integrity:N:TYPE after the workqueue
   * flags and before sector_size. */
  if (t->integrity_tag_size != 0)
    put_text (w, " integrity:%u:%s", t->integrity_tag_size,
              t->integrity_type);
  if (t->sector_size != 512)
    put_text (w, " sector_size:%u", t->sector_size);
  if (t->flags & CT_IV_LARGE_SECTORS)
    put_text (w, " iv_large_sectors");
}

static void
put_line (struct line_writer *w, const struct crypt_table *t,
          bool showkeys, const char *device)
{
  put_text (w, "%" PRIu64 " %" PRIu64 " crypt %s ",
            t->start, t->length, t->cipher);
  put_key (w, t, showkeys);
  put_text (w, " %" PRIu64 " %s %" PRIu64, t->iv_offset, device, t->offset);
  put_options (w, t);
}

/* The table alone: a list of its one crypt segment. */
char *
crypt_table_format (const struct crypt_table *t, bool showkeys,
                    const char *device)
{
  struct segment_list one = {
    .count = 1,
    .seg[0] = { SEGMENT_CRYPT, t->start, t->length, t->offset,
                t->iv_offset, 0 },
  };

  return segment_list_format (&one, t, showkeys, device);
}

void
crypt_table_free_line (char *line)
{
  char *mem;
  size_t alloc_size;

  if (line == NULL)
    return;
  mem = line - sizeof alloc_size;
  memcpy (&alloc_size, mem, sizeof alloc_size);
  secmem_free (mem, alloc_size);
}

/* One line per segment, '\n' between them: a crypt line is the
 * segment's table seen at the segment's place. */
static void
put_segments (struct line_writer *w, const struct segment_list *l,
              const struct crypt_table *const *tables, bool showkeys,
              const char *device)
{
  struct crypt_table seg_table;
  unsigned i;

  for (i = 0; i < l->count; i++) {
    const struct segment *s = &l->seg[i];

    if (i > 0)
      put_char (w, '\n');
    /* dmsetup prints a space before the (empty) parameters. */
    if (s->type == SEGMENT_ZERO) {
      put_text (w, "%" PRIu64 " %" PRIu64 " zero ", s->start, s->length);
      continue;
    }
    /* dm-linear's linear_status (drivers/md/dm-linear.c): "DEV START". */
    if (s->type == SEGMENT_LINEAR) {
      put_text (w, "%" PRIu64 " %" PRIu64 " linear %s %" PRIu64, s->start,
                s->length, device, s->offset);
      continue;
    }
    seg_table = *tables[s->table];
    seg_table.start = s->start;
    seg_table.length = s->length;
    seg_table.iv_offset = s->iv_offset;
    seg_table.offset = s->offset;
    put_line (w, &seg_table, showkeys, device);
  }
}

static bool
printable (const struct crypt_table *t)
{
  return t->cipher != NULL && (t->key_size == 0 || t->key != NULL);
}

/* Every line lives in secmem behind a header holding the allocation's
 * size, so crypt_table_free_line can wipe it whatever SHOWKEYS was. */
char *
segment_list_format_tables (const struct segment_list *l,
                            const struct crypt_table *const *tables,
                            unsigned n_tables, bool showkeys,
                            const char *device)
{
  struct line_writer w = { NULL, 0, 0 };
  size_t alloc_size;
  unsigned i;
  char *mem;

  if (device == NULL)
    device = tables[0]->device;
  for (i = 0; i < l->count; i++)
    if (l->seg[i].type != SEGMENT_ZERO
        && (l->seg[i].table >= n_tables
            || !printable (tables[l->seg[i].table])))
      device = NULL;
  if (device == NULL || n_tables == 0 || !printable (tables[0])) {
    errno = EINVAL;
    return NULL;
  }
  put_segments (&w, l, tables, showkeys, device);
  alloc_size = sizeof alloc_size + w.len + 1;
  mem = secmem_alloc (alloc_size);
  if (mem == NULL)
    return NULL;
  memcpy (mem, &alloc_size, sizeof alloc_size);
  w.buf = mem + sizeof alloc_size;
  w.size = w.len + 1;
  w.len = 0;
  put_segments (&w, l, tables, showkeys, device);
  return w.buf;
}

char *
segment_list_format (const struct segment_list *l,
                     const struct crypt_table *t, bool showkeys,
                     const char *device)
{
  return segment_list_format_tables (l, &t, 1, showkeys, device);
}
