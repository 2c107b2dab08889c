/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fault rules language (see fault.h): parsing a rules file, and
 * deciding what a rule set does to one backend operation. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cleanup.h"
#include "../common/log.h"
#include "fault.h"

#define MAX_RULES 256

static const struct { const char *name; unsigned ops; } op_names[] = {
  { "read", FAULT_READ }, { "write", FAULT_WRITE },
  { "sync", FAULT_SYNC }, { "flush", FAULT_SYNC },
  { "discard", FAULT_DISCARD }, { "trim", FAULT_DISCARD },
  { "all", FAULT_READ | FAULT_WRITE | FAULT_SYNC | FAULT_DISCARD },
};

/* The errors a storage stack returns; numbers are accepted too. */
static const struct { const char *name; int errnum; } errno_names[] = {
  { "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
  { "EFBIG", EFBIG }, { "EROFS", EROFS }, { "EPERM", EPERM },
  { "EACCES", EACCES }, { "ENOMEM", ENOMEM }, { "EINVAL", EINVAL },
  { "ENODEV", ENODEV }, { "ENXIO", ENXIO }, { "ETIMEDOUT", ETIMEDOUT },
  { "EAGAIN", EAGAIN }, { "EBUSY", EBUSY }, { "ENODATA", ENODATA },
  { "EILSEQ", EILSEQ }, { "EOPNOTSUPP", EOPNOTSUPP },
};

struct parse
{
  const char *where;
  unsigned line;
};

static int __attribute__ ((format (printf, 2, 3)))
bad (const struct parse *p, const char *fmt, ...)
{
  char msg[256];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  nbdkit_error ("fault rules %s line %u: %s", p->where, p->line, msg);
  return -1;
}

static int
parse_ops (const struct parse *p, char *word, unsigned *ops)
{
  char *save = NULL, *name;
  size_t i;

  *ops = 0;
  for (name = strtok_r (word, ",", &save); name;
       name = strtok_r (NULL, ",", &save)) {
    for (i = 0; i < ARRAY_SIZE (op_names); i++)
      if (strcmp (name, op_names[i].name) == 0)
        break;
    if (i == ARRAY_SIZE (op_names))
      return bad (p, "unknown operation '%s'", name);
    *ops |= op_names[i].ops;
  }
  return *ops ? 0 : bad (p, "no operation in '%s'", word);
}

/* A plain decimal number, nothing after it. */
static int
parse_u64 (const char *s, uint64_t *v, char **end)
{
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  *v = strtoull (s, end, 10);
  return errno ? -1 : 0;
}

/* Bytes, with an optional K, M or G (binary) suffix. */
static int
parse_size (const struct parse *p, const char *s, uint64_t *v)
{
  unsigned shift = 0;
  char *end;

  if (parse_u64 (s, v, &end) == -1)
    return bad (p, "bad size '%s'", s);
  switch (*end) {
  case 'K': case 'k': shift = 10; end++; break;
  case 'M': case 'm': shift = 20; end++; break;
  case 'G': case 'g': shift = 30; end++; break;
  }
  if (*end || (*v << shift) >> shift != *v)
    return bad (p, "bad size '%s'", s);
  *v <<= shift;
  return 0;
}

/* Milliseconds by default, or with a us, ms or s unit; into µs. */
static int
parse_delay (const struct parse *p, const char *s, uint64_t *us)
{
  uint64_t v, scale = 1000;
  char *end;

  if (parse_u64 (s, &v, &end) == -1)
    return bad (p, "bad delay '%s'", s);
  if (strcmp (end, "us") == 0)
    scale = 1;
  else if (strcmp (end, "s") == 0)
    scale = 1000000;
  else if (*end && strcmp (end, "ms") != 0)
    return bad (p, "bad delay unit in '%s'", s);
  if (v > UINT64_MAX / scale)
    return bad (p, "delay too long: '%s'", s);
  *us = v * scale;
  return 0;
}

static int
parse_errno (const struct parse *p, const char *s, int *errnum)
{
  uint64_t v;
  char *end;
  size_t i;

  for (i = 0; i < ARRAY_SIZE (errno_names); i++)
    if (strcmp (s, errno_names[i].name) == 0) {
      *errnum = errno_names[i].errnum;
      return 0;
    }
  if (parse_u64 (s, &v, &end) == -1 || *end || v == 0 || v > 4095)
    return bad (p, "unknown error '%s'", s);
  *errnum = v;
  return 0;
}

/* Range keys, which fill R's range and *LENGTH. */
static int
parse_range_key (const struct parse *p, struct fault_rule *r,
                 const char *key, const char *val, bool *have_end,
                 uint64_t *length)
{
  r->ranged = true;
  if (strcmp (key, "start") == 0)
    return parse_size (p, val, &r->start);
  if (*have_end)
    return bad (p, "end or length given twice");
  *have_end = true;
  if (strcmp (key, "end") == 0)
    return parse_size (p, val, &r->end);
  return parse_size (p, val, length);
}

/* One "key=value" or "flag" word into R. */
static int
parse_word (const struct parse *p, struct fault_rule *r, char *word,
            bool *have_end, uint64_t *length)
{
  char *val = strchr (word, '=');
  char *end;

  if (val)
    *val++ = '\0';
  if (!val && strcmp (word, "stall") == 0) {
    r->stall = true;
    return 0;
  }
  if (!val && strcmp (word, "short") == 0) {
    r->short_to_start = true;
    return 0;
  }
  if (!val || !*val)
    return bad (p, "expected key=value, got '%s'", word);
  if (strcmp (word, "start") == 0 || strcmp (word, "end") == 0
      || strcmp (word, "length") == 0)
    return parse_range_key (p, r, word, val, have_end, length);
  if (strcmp (word, "short") == 0) {
    r->short_fixed = true;
    return parse_size (p, val, &r->short_bytes);
  }
  if (strcmp (word, "error") == 0)
    return parse_errno (p, val, &r->error);
  if (strcmp (word, "delay") == 0)
    return parse_delay (p, val, &r->delay_us);
  if (strcmp (word, "nth") == 0 || strcmp (word, "count") == 0) {
    uint64_t *dst = word[0] == 'n' ? &r->nth : &r->count;
    if (parse_u64 (val, dst, &end) == -1 || *end || *dst == 0)
      return bad (p, "expected a number from 1, got '%s'", val);
    return 0;
  }
  return bad (p, "unknown key '%s'", word);
}

/* Defaults and the checks that need the whole line. */
static int
finish_rule (const struct parse *p, struct fault_rule *r, bool have_end,
             uint64_t length, bool have_nth)
{
  if (have_end && length) {
    if (r->start > UINT64_MAX - length)
      return bad (p, "range beyond 2^64 bytes");
    r->end = r->start + length;
  }
  if (!have_end)
    r->end = UINT64_MAX;
  if (r->end <= r->start)
    return bad (p, "empty range");
  if (have_nth && r->count == 0)
    r->count = 1;
  if (r->nth == 0)
    r->nth = 1;
  if ((r->short_to_start || r->short_fixed) && r->error == 0)
    r->error = EIO;
  if (r->short_to_start && r->short_fixed)
    return bad (p, "both short and short=SIZE");
  if (r->short_to_start && !r->ranged)
    return bad (p, "short needs a range (start=)");
  if (r->ops == FAULT_SYNC && (r->short_to_start || r->short_fixed))
    return bad (p, "short on sync, which transfers no bytes");
  if (r->ops == FAULT_SYNC && r->ranged)
    return bad (p, "a range on sync, which has none");
  if (!r->error && !r->delay_us && !r->stall)
    return bad (p, "no action (error=, short, delay=, stall)");
  return 0;
}

static int
parse_line (const struct parse *p, char *line, struct fault_rule *r)
{
  char *save = NULL, *word;
  bool have_end = false;
  uint64_t length = 0;

  memset (r, 0, sizeof *r);
  word = strtok_r (line, " \t\r", &save);
  if (parse_ops (p, word, &r->ops) == -1)
    return -1;
  while ((word = strtok_r (NULL, " \t\r", &save)) != NULL)
    if (parse_word (p, r, word, &have_end, &length) == -1)
      return -1;
  return finish_rule (p, r, have_end, length, r->nth != 0);
}

/* Cuts a comment off and says whether anything but blanks is left. */
static bool
has_content (char *line)
{
  char *hash = strchr (line, '#');

  if (hash)
    *hash = '\0';
  return line[strspn (line, " \t\r")] != '\0';
}

int
fault_rules_parse (const char *text, const char *where,
                   struct fault_rules **out)
{
  struct parse p = { .where = where };
  CLEANUP_FREE char *copy = strdup (text);
  struct fault_rules *rules = calloc (1, sizeof *rules);
  char *line, *next;

  *out = NULL;
  if (copy == NULL || rules == NULL
      || (rules->rule = calloc (MAX_RULES, sizeof *rules->rule)) == NULL) {
    nbdkit_error ("fault rules: %m");
    fault_rules_free (rules);
    return -1;
  }
  for (line = copy; line; line = next) {
    next = strchr (line, '\n');
    if (next)
      *next++ = '\0';
    p.line++;
    if (!has_content (line))
      continue;
    if (rules->n == MAX_RULES) {
      bad (&p, "more than %d rules", MAX_RULES);
      goto err;
    }
    if (parse_line (&p, line, &rules->rule[rules->n]) == -1)
      goto err;
    rules->n++;
  }
  if (rules->n == 0)
    fault_rules_free (rules);
  else
    *out = rules;
  return 0;

 err:
  fault_rules_free (rules);
  return -1;
}

void
fault_rules_free (struct fault_rules *rules)
{
  if (rules == NULL)
    return;
  free (rules->rule);
  free (rules);
}

/* Does R's range (if any) overlap [OFFSET, OFFSET+COUNT) of OP? */
static bool
in_range (const struct fault_rule *r, enum fault_op op, uint64_t count,
          uint64_t offset)
{
  if (!r->ranged)
    return true;
  if (op == FAULT_SYNC)
    return false;
  return offset < r->end && r->start < offset + count;
}

/* Bytes R lets through before its error. */
static uint64_t
transfer_before (const struct fault_rule *r, uint64_t count,
                 uint64_t offset)
{
  if (r->short_fixed)
    return r->short_bytes < count ? r->short_bytes : count;
  if (r->short_to_start && r->start > offset)
    return r->start - offset;
  return 0;
}

void
fault_rules_judge (struct fault_rules *rules, enum fault_op op,
                   uint64_t count, uint64_t offset, struct fault_verdict *v)
{
  struct fault_rule *r;
  uint64_t n;
  size_t i;

  memset (v, 0, sizeof *v);
  for (i = 0; rules && i < rules->n; i++) {
    r = &rules->rule[i];
    if (!(r->ops & op) || !in_range (r, op, count, offset))
      continue;
    n = atomic_fetch_add (&r->matched, 1) + 1;
    if (n < r->nth || (r->count && n - r->nth >= r->count))
      continue;
    v->delay_us += r->delay_us;
    v->stall |= r->stall;
    if (v->error == 0 && r->error) {
      v->error = r->error;
      v->transfer = op == FAULT_SYNC ? 0 : transfer_before (r, count, offset);
    }
  }
}
