/* SPDX-License-Identifier: GPL-2.0-or-later */
/* device-params=: a model's parameters from "k=v,k=v" or from "+FILE"
 * (one k=v a line, '#' starts a comment), with units.
 *
 * A value is a number with an optional unit of the param's kind; without
 * one it is in the param's own unit.  Sizes follow dd(1): K, M, G, T and
 * KiB, MiB, GiB, TiB are powers of 1024, kB (or KB), MB, GB, TB powers
 * of 1000 (disk makers' capacities).  Rates likewise: kB/s, KB/s, MB/s,
 * GB/s decimal, KiB/s, MiB/s, GiB/s binary.  Units are case-sensitive,
 * so that Mb/s (megabits) is refused rather than misread.  A choice
 * ("read-policy=nearest") is one of the param's names, held as its
 * index. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/cleanup.h"
#include "model.h"

#define MAX_PARAMS 64

enum unit_kind { TIME, SIZE, RATE, RPM, COUNT, BOOL, CHOICE };

static const char *const kind_names[] = {
  [TIME] = "a time: ns, us, ms, s",
  [SIZE] = "a size: B, K, KiB, kB, M, MiB, MB, G, GiB, GB, T, TiB, TB",
  [RATE] = "a rate: B/s, kB/s, KiB/s, MB/s, MiB/s, GB/s, GiB/s",
  [RPM] = "a speed: rpm",
  [COUNT] = "a whole number, no unit",
  [BOOL] = "0/1, true/false, yes/no, on/off",
  [CHOICE] = "one of its names",
};

static const struct unit
{
  const char *name;
  enum unit_kind kind;
  double scale;                   /* in ns, bytes, bytes/s, rpm */
} units[] = {
  { "ns", TIME, 1 }, { "us", TIME, 1e3 }, { "ms", TIME, 1e6 },
  { "s", TIME, 1e9 },
  { "B", SIZE, 1 },
  { "K", SIZE, 1024. }, { "KiB", SIZE, 1024. },
  { "M", SIZE, 1024. * 1024 }, { "MiB", SIZE, 1024. * 1024 },
  { "G", SIZE, 1024. * 1024 * 1024 }, { "GiB", SIZE, 1024. * 1024 * 1024 },
  { "T", SIZE, 1024. * 1024 * 1024 * 1024 },
  { "TiB", SIZE, 1024. * 1024 * 1024 * 1024 },
  { "kB", SIZE, 1e3 }, { "KB", SIZE, 1e3 }, { "MB", SIZE, 1e6 },
  { "GB", SIZE, 1e9 }, { "TB", SIZE, 1e12 },
  { "B/s", RATE, 1 }, { "kB/s", RATE, 1e3 }, { "KB/s", RATE, 1e3 },
  { "MB/s", RATE, 1e6 }, { "GB/s", RATE, 1e9 },
  { "KiB/s", RATE, 1024. }, { "MiB/s", RATE, 1024. * 1024 },
  { "GiB/s", RATE, 1024. * 1024 * 1024 },
  { "rpm", RPM, 1 },
};

static const struct { const char *word; bool value; } bool_words[] = {
  { "0", false }, { "1", true }, { "false", false }, { "true", true },
  { "no", false }, { "yes", true }, { "off", false }, { "on", true },
};

static int __attribute__ ((format (printf, 3, 4)))
fail (char *why, size_t why_size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, why_size, fmt, ap);
  va_end (ap);
  return -1;
}

/* The kind and scale of a param's unit ("" is a count, "bool",
 * "choice"). */
static const struct unit *
param_unit (const struct model_param *param)
{
  static const struct unit count = { "", COUNT, 1 }, boolean = { "", BOOL, 1 };
  static const struct unit choice = { "", CHOICE, 1 };
  size_t i;

  if (strcmp (param->unit, "") == 0)
    return &count;
  if (strcmp (param->unit, "bool") == 0)
    return &boolean;
  if (strcmp (param->unit, "choice") == 0)
    return &choice;
  for (i = 0; i < ARRAY_SIZE (units); i++)
    if (strcmp (units[i].name, param->unit) == 0)
      return &units[i];
  return NULL;
}

static int
parse_bool (const struct model_param *param, const char *text, double *v,
            char *why, size_t why_size)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (bool_words); i++)
    if (strcasecmp (text, bool_words[i].word) == 0) {
      *v = bool_words[i].value;
      return 0;
    }
  return fail (why, why_size, "%s: '%s' is not %s", param->key, text,
               kind_names[BOOL]);
}

/* The index of NAME in PARAM's '|'-separated choices, or -1. */
static int
choice_index (const struct model_param *param, const char *name)
{
  const char *p = param->choices;
  size_t len = strlen (name);
  int i;

  for (i = 0; p && *p; i++) {
    size_t n = strcspn (p, "|");

    if (n == len && strncmp (p, name, n) == 0)
      return i;
    p += n + (p[n] == '|');
  }
  return -1;
}

static int
parse_choice (const struct model_param *param, const char *text, double *v,
              char *why, size_t why_size)
{
  int i = choice_index (param, text);

  if (i < 0)
    return fail (why, why_size, "%s: '%s' is not one of %s", param->key,
                 text, param->choices);
  *v = i;
  return 0;
}

/* TEXT ("8.5ms", "150", "4 MiB") in PARAM's unit into *V. */
static int
parse_number (const struct model_param *param, const struct unit *own,
              const char *text, double *v, char *why, size_t why_size)
{
  const char *suffix;
  char *end;
  size_t i;

  errno = 0;
  *v = strtod (text, &end);
  if (end == text || errno == ERANGE || !isfinite (*v))
    return fail (why, why_size, "%s: '%s' is not a number (%s)", param->key,
                 text, kind_names[own->kind]);
  for (suffix = end; isspace ((unsigned char) *suffix); suffix++)
    ;
  if (*suffix == '\0')
    return 0;
  for (i = 0; i < ARRAY_SIZE (units); i++)
    if (units[i].kind == own->kind && strcmp (units[i].name, suffix) == 0) {
      *v = *v * units[i].scale / own->scale;
      return 0;
    }
  return fail (why, why_size, "%s: unknown unit '%s' in '%s' (%s)",
               param->key, suffix, text, kind_names[own->kind]);
}

static int
parse_value (const struct model_param *param, const char *text, double *v,
             char *why, size_t why_size)
{
  const struct unit *own = param_unit (param);

  if (own == NULL)
    return fail (why, why_size, "%s: the model's unit '%s' is unknown",
                 param->key, param->unit);
  if (own->kind == BOOL)
    return parse_bool (param, text, v, why, why_size);
  if (own->kind == CHOICE)
    return parse_choice (param, text, v, why, why_size);
  if (parse_number (param, own, text, v, why, why_size) == -1)
    return -1;
  if (own->kind == COUNT && *v != floor (*v))
    return fail (why, why_size, "%s: '%s' is not %s", param->key, text,
                 kind_names[COUNT]);
  if (*v < param->min || *v > param->max)
    return fail (why, why_size, "%s: %s is out of range: %g to %g%s%s",
                 param->key, text, param->min, param->max,
                 *param->unit ? " " : "", param->unit);
  return 0;
}

static char *
trim (char *s)
{
  char *end;

  while (isspace ((unsigned char) *s))
    s++;
  end = s + strlen (s);
  while (end > s && isspace ((unsigned char) end[-1]))
    *--end = '\0';
  return s;
}

static int
unknown_key (const struct device_model *model, const char *key, char *why,
             size_t why_size)
{
  char keys[512] = "";
  size_t i;

  for (i = 0; model->params[i].key; i++) {
    if (i > 0)
      strncat (keys, ", ", sizeof keys - strlen (keys) - 1);
    strncat (keys, model->params[i].key, sizeof keys - strlen (keys) - 1);
  }
  return fail (why, why_size, "unknown key '%s' (%s keys: %s)", key,
               model->name, keys);
}

/* One "key=value" (ITEM is modified) into VALUES; SEEN: keys given. */
static int
parse_assignment (const struct device_model *model, char *item,
                  double *values, uint64_t *seen, char *why, size_t why_size)
{
  char *eq = strchr (item, '='), *key, *value;
  size_t i;

  if (eq == NULL)
    return fail (why, why_size, "%s: expected key=value", trim (item));
  *eq = '\0';
  key = trim (item);
  value = trim (eq + 1);
  for (i = 0; model->params[i].key; i++)
    if (strcmp (model->params[i].key, key) == 0)
      break;
  if (model->params[i].key == NULL)
    return unknown_key (model, key, why, why_size);
  if (*seen & (UINT64_C (1) << i))
    return fail (why, why_size, "%s: given twice", key);
  *seen |= UINT64_C (1) << i;
  if (*value == '\0')
    return fail (why, why_size, "%s: no value", key);
  return parse_value (&model->params[i], value, &values[i], why, why_size);
}

static int
parse_list (const struct device_model *model, const char *text,
            double *values, char *why, size_t why_size)
{
  CLEANUP_FREE char *copy = strdup (text);
  char *save = NULL, *item;
  uint64_t seen = 0;

  if (copy == NULL)
    return fail (why, why_size, "device-params: out of memory");
  for (item = strtok_r (copy, ",", &save); item;
       item = strtok_r (NULL, ",", &save))
    if (*trim (item) != '\0'
        && parse_assignment (model, item, values, &seen, why,
                             why_size) == -1)
      return -1;
  return 0;
}

static int
parse_file (const struct device_model *model, const char *path,
            double *values, char *why, size_t why_size)
{
  FILE *fp = fopen (path, "r");
  CLEANUP_FREE char *line = NULL;
  size_t size = 0;
  unsigned lineno = 0;
  uint64_t seen = 0;
  char reason[256];
  int r = 0;

  if (fp == NULL)
    return fail (why, why_size, "%s: %s", path, strerror (errno));
  while (r == 0 && getline (&line, &size, fp) != -1) {
    lineno++;
    line[strcspn (line, "#")] = '\0';
    if (*trim (line) != '\0'
        && parse_assignment (model, line, values, &seen, reason,
                             sizeof reason) == -1)
      r = fail (why, why_size, "%s line %u: %s", path, lineno, reason);
  }
  if (r == 0 && ferror (fp))
    r = fail (why, why_size, "%s: %s", path, strerror (errno));
  fclose (fp);
  return r;
}

int
model_params_parse (const struct device_model *model, const char *text,
                    double *values, char *why, size_t why_size)
{
  double parsed[MAX_PARAMS];
  size_t i, n = model_param_count (model);
  int r;

  if (n > MAX_PARAMS)
    return fail (why, why_size, "%s: more than %d parameters", model->name,
                 MAX_PARAMS);
  for (i = 0; i < n; i++)
    parsed[i] = model->params[i].value;
  if (text == NULL || *text == '\0')
    r = 0;
  else if (text[0] == '+')
    r = parse_file (model, text + 1, parsed, why, why_size);
  else
    r = parse_list (model, text, parsed, why, why_size);
  if (r == 0)
    memcpy (values, parsed, n * sizeof *values);
  return r;
}

/* The name of PARAM's choice VALUE into BUF. */
static void
choice_name (const struct model_param *param, double value, char *buf,
             size_t size)
{
  const char *p = param->choices;
  int i;

  for (i = 0; i < value && p && *p; i++)
    p += strcspn (p, "|") + 1;
  snprintf (buf, size, "%.*s", (int) strcspn (p ? p : "", "|"), p ? p : "");
}

void
model_params_describe (const struct device_model *model, FILE *fp)
{
  const struct model_param *p;
  char value[32];

  fprintf (fp, "%s: %s (queue depth %u, requests up to %u KiB)\n",
           model->name, model->summary, model->queue_depth,
           device_model_max_sectors (model) / 2);
  for (p = model->params; p->key; p++) {
    if (strcmp (p->unit, "bool") == 0)
      snprintf (value, sizeof value, "%s", p->value ? "on" : "off");
    else if (strcmp (p->unit, "choice") == 0)
      choice_name (p, p->value, value, sizeof value);
    else
      snprintf (value, sizeof value, "%g%s", p->value, p->unit);
    fprintf (fp, "  %-14s %-10s %s\n", p->key, value, p->doc);
  }
}
