/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a trace.  What a trace may hold: event lines in blkparse's
 * default layout ("maj,min cpu seq time pid action rwbs ..."), message
 * lines ("m N text"; "m N dmcrypt-run ..." starts a run), blank lines
 * and blkparse's closing summary (from "CPU<n> (" or "Total (" on).
 * Anything else is not a trace, and saying so at its first line beats
 * statistics of nothing. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace.h"

#define SNIPPET 40              /* characters of a bad line quoted */
#define RUN_WORD "dmcrypt-run"

static const char luks_magic[6] = { 'L', 'U', 'K', 'S', '\xba', '\xbe' };

static void __attribute__ ((format (printf, 2, 3)))
report (const struct trace_reader *r, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "dmcrypt-trace: %s", r->name);
  if (r->lineno)
    fprintf (stderr, ":%lu", r->lineno);
  fputs (": ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

int
reader_open (struct trace_reader *r, const char *path)
{
  struct stat st;

  r->name = strcmp (path, "-") == 0 ? "(standard input)" : path;
  r->lineno = 0;
  r->in_summary = false;
  r->fp = strcmp (path, "-") == 0 ? stdin : fopen (path, "r");
  if (r->fp == NULL) {
    report (r, "%s", strerror (errno));
    return -1;
  }
  if (fstat (fileno (r->fp), &st) == 0 && S_ISDIR (st.st_mode)) {
    report (r, "is a directory, not a trace file");
    reader_close (r);
    return -1;
  }
  return 0;
}

void
reader_close (struct trace_reader *r)
{
  if (r->fp && r->fp != stdin)
    fclose (r->fp);
  r->fp = NULL;
}

/* One line into r->line, without its newline: 1, 0 at the end, -1 for
 * a line too long (its first r->len bytes kept), -2 after a read error
 * (reported). */
static int
read_line (struct trace_reader *r)
{
  int c = EOF;

  r->len = 0;
  while (r->len < TRACE_MAX_LINE - 1 && (c = getc_unlocked (r->fp)) != EOF
         && c != '\n')
    r->line[r->len++] = c;
  r->line[r->len] = '\0';
  if (ferror (r->fp)) {
    report (r, "read: %s", strerror (errno));
    return -2;
  }
  if (c == EOF && r->len == 0)
    return 0;
  r->lineno++;
  return c == EOF || c == '\n' ? 1 : -1;
}

static bool
is_binary (const char *line, size_t n)
{
  const unsigned char *p = (const unsigned char *) line;

  for (; n--; p++)
    if ((*p < 0x20 && *p != '\t' && *p != '\r') || *p == 0x7f)
      return true;
  return false;
}

/* A line that cannot be text, reported: true. */
static bool
reported_binary (const struct trace_reader *r)
{
  if (r->lineno == 1 && r->len >= sizeof luks_magic
      && memcmp (r->line, luks_magic, sizeof luks_magic) == 0)
    report (r, "a LUKS image, not a trace");
  else if (is_binary (r->line, r->len))
    report (r, "binary data, not a trace event");
  else
    return false;
  return true;
}

/* The start of a text line that is not an event, quoted and escaped. */
static void
snippet (const char *line, char *out)
{
  const unsigned char *p = (const unsigned char *) line;
  int i;

  for (i = 0; p[i] && i < SNIPPET; i++)
    if (p[i] == '"' || p[i] == '\\')
      out += sprintf (out, "\\%c", p[i]);
    else if (p[i] < 0x20 || p[i] >= 0x7f)
      out += sprintf (out, "\\x%02x", p[i]);
    else
      *out++ = p[i];
  strcpy (out, p[i] ? "..." : "");
}

/* A line that is neither event nor message: the start of blkparse's
 * summary, inside it, blank, or an error. */
static bool
skippable (struct trace_reader *r)
{
  const char *s = r->line;
  unsigned cpu;
  char open;

  if (strncmp (s, "Total (", 7) == 0
      || (sscanf (s, "CPU%u %c", &cpu, &open) == 2 && open == '('))
    r->in_summary = true;
  s += strspn (s, " \t\r");
  return r->in_summary || *s == '\0';
}

struct field
{
  const char *p;
  size_t n;
};

static const char *
next_field (const char *s, struct field *f)
{
  s += strspn (s, " \t\r");
  f->p = s;
  f->n = strcspn (s, " \t\r");
  return s + f->n;
}

/* N characters of F, all passing IS (and at least one). */
static bool
all_of (const char *p, size_t n, int (*is) (int))
{
  if (n == 0)
    return false;
  while (n--)
    if (!is ((unsigned char) *p++))
      return false;
  return true;
}

/* "A<SEP>B", both non-empty and of IS. */
static bool
pair_of (const struct field *f, char sep, int (*is) (int))
{
  const char *at = memchr (f->p, sep, f->n);

  return at && all_of (f->p, at - f->p, is)
    && all_of (at + 1, f->p + f->n - at - 1, is);
}

/* "seconds.fraction" (digits checked) in ns, exactly: sums of times
 * stay exact.  Digits past the ninth are dropped.  False if it does not
 * fit in 64 bits (584 years). */
static bool
parse_time (const struct field *f, uint64_t *ns)
{
  const char *p = f->p, *end = f->p + f->n;
  uint64_t sec = 0, frac = 0;
  int digits = 0;

  for (; *p != '.'; p++) {
    if (sec > (UINT64_MAX / 1000000000 - 9) / 10)
      return false;
    sec = 10 * sec + (*p - '0');
  }
  for (p++; p < end && digits < 9; p++, digits++)
    frac = 10 * frac + (*p - '0');
  for (; digits < 9; digits++)
    frac *= 10;
  *ns = sec * 1000000000 + frac;
  return true;
}

/* The header "maj,min cpu seq time pid action rwbs"; *REST is left at
 * what follows.  Fills EV's time, action and rwbs. */
static bool
parse_header (const char *s, struct trace_event *ev, const char **rest)
{
  struct field f[7];
  int i;

  for (i = 0; i < 7; i++)
    s = next_field (s, &f[i]);
  if (!pair_of (&f[0], ',', isdigit) || !all_of (f[1].p, f[1].n, isdigit)
      || !all_of (f[2].p, f[2].n, isdigit) || !pair_of (&f[3], '.', isdigit)
      || !all_of (f[4].p, f[4].n, isdigit) || f[5].n > 2
      || !all_of (f[5].p, f[5].n, isalpha) || f[6].n >= sizeof ev->rwbs
      || !all_of (f[6].p, f[6].n, isupper)
      || !parse_time (&f[3], &ev->time_ns))
    return false;
  ev->time = ev->time_ns / 1e9;
  memcpy (ev->action, f[5].p, f[5].n);
  ev->action[f[5].n] = '\0';
  memcpy (ev->rwbs, f[6].p, f[6].n);
  ev->rwbs[f[6].n] = '\0';
  *rest = s + strspn (s, " \t\r");
  return true;
}

/* Classifies the line just read: a LINE_*, or SKIP. */
enum { SKIP = LINE_ERROR + 1 };

static int
classify (struct trace_reader *r, struct trace_event *ev, const char **run)
{
  char quoted[4 * SNIPPET + 8];
  const char *rest;
  unsigned long long sector, nsect;

  if (reported_binary (r))
    return LINE_ERROR;
  if (!parse_header (r->line, ev, &rest)) {
    if (skippable (r))
      return SKIP;
    snippet (r->line, quoted);
    report (r, "not a trace event (maj,min cpu seq time pid action rwbs "
            "...): \"%s\"", quoted);
    return LINE_ERROR;
  }
  r->in_summary = false;
  if (strcmp (ev->action, "m") == 0) {
    if (strncmp (rest, RUN_WORD, strlen (RUN_WORD)) != 0
        || (rest[strlen (RUN_WORD)] != '\0'
            && !isspace ((unsigned char) rest[strlen (RUN_WORD)])))
      return SKIP;              /* another message */
    rest += strlen (RUN_WORD);
    *run = rest + strspn (rest, " \t");
    return LINE_RUN;
  }
  ev->has_sectors = sscanf (rest, "%llu + %llu", &sector, &nsect) == 2;
  ev->sector = ev->has_sectors ? sector : 0;
  ev->nsect = ev->has_sectors ? nsect : 0;
  return LINE_EVENT;
}

enum line_kind
reader_next (struct trace_reader *r, struct trace_event *ev,
             const char **run)
{
  int got, kind;

  while ((got = read_line (r)) != 0) {
    if (got == -2)
      return LINE_ERROR;
    if (got == -1) {
      if (!reported_binary (r))
        report (r, "a line longer than %d bytes, not a trace event",
                TRACE_MAX_LINE - 1);
      return LINE_ERROR;
    }
    kind = classify (r, ev, run);
    if (kind != SKIP)
      return kind;
  }
  return LINE_END;
}
