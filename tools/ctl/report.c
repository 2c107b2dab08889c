/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmsetup's layouts: "info" (dmsetup's _display_info_long), "info -c"
 * (its report: the same fields, headings, widths and alignment), and
 * one line per volume for "ls". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define MAX_COLUMNS 32
#define VALUE_SIZE  256        /* bytes of one printed value */

static const char *
get (const struct ctl_message *m, const char *key)
{
  const char *v = ctl_get (m, key);

  return v ? v : "";
}

static const char *
state (const struct ctl_message *m)
{
  static char buf[64];

  snprintf (buf, sizeof buf, "%s%s",
            ctl_get_bool (m, "suspended") ? "SUSPENDED" : "ACTIVE",
            ctl_get_bool (m, "readonly") ? " (READ-ONLY)" : "");
  return buf;
}

void
print_info_long (const struct ctl_message *m)
{
  bool live = ctl_get_bool (m, "live");
  bool inactive = ctl_get_bool (m, "inactive");

  printf ("Name:              %s\n", get (m, "name"));
  printf ("State:             %s\n", state (m));
  printf ("Read Ahead:        %s\n", get (m, "read_ahead"));
  if (!live && !inactive)
    printf ("Tables present:    None\n");
  else
    printf ("Tables present:    %s%s%s\n", live ? "LIVE" : "",
            live && inactive ? " & " : "", inactive ? "INACTIVE" : "");
  printf ("Open count:        %s\n", get (m, "open"));
  printf ("Event number:      %s\n", get (m, "event"));
  printf ("Major, minor:      %s, %s\n", get (m, "major"), get (m, "minor"));
  printf ("Number of targets: %s\n", get (m, "targets"));
  if (*get (m, "uuid"))
    printf ("UUID: %s\n", get (m, "uuid"));
  printf ("\n");
}

void
print_ls_line (const struct ctl_message *m)
{
  /* dmsetup ls's "name\t(major:minor)", then what dmcrypt adds. */
  printf ("%s\t(%s:%s)\t%s\t%s\t%s\n", get (m, "name"), get (m, "major"),
          get (m, "minor"), get (m, "type"), state (m), get (m, "image"));
}

/* ---- info -c ---- */

struct field
{
  const char *id, *heading;
  unsigned width;              /* dmsetup's default, characters */
  bool numeric;                /* right-aligned */
  const char *key;             /* reply field, or NULL: computed */
};

static const struct field fields[] = {
  { "name", "Name", 16, false, "name" },
  { "uuid", "UUID", 32, false, "uuid" },
  { "read_ahead", "RAhead", 6, true, "read_ahead" },
  { "attr", "Stat", 4, false, NULL },
  { "tables_loaded", "Tables", 6, false, NULL },
  { "suspended", "Suspended", 9, false, NULL },
  { "readonly", "Read-only", 9, false, NULL },
  { "devno", "DevNo", 5, false, NULL },
  { "major", "Maj", 3, true, "major" },
  { "minor", "Min", 3, true, "minor" },
  { "open", "Open", 4, true, "open" },
  { "segments", "Targ", 4, true, "targets" },
  { "events", "Event", 6, true, "event" },
  /* dmcrypt's own: the LUKS keyslot that opened, and those in use. */
  { "keyslot", "KeySlot", 7, true, "key_slot" },
  { "keyslots", "KeySlots", 8, false, "key_slots" },
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static void
value_of (const struct field *f, const struct ctl_message *m, char *out)
{
  bool live = ctl_get_bool (m, "live");
  bool inactive = ctl_get_bool (m, "inactive");
  bool susp = ctl_get_bool (m, "suspended"), ro = ctl_get_bool (m, "readonly");

  if (f->key)
    snprintf (out, VALUE_SIZE, "%s", get (m, f->key));
  else if (strcmp (f->id, "attr") == 0)
    snprintf (out, VALUE_SIZE, "%c%c%c%c", live ? 'L' : '-',
              inactive ? 'I' : '-', susp ? 's' : '-', ro ? 'r' : 'w');
  else if (strcmp (f->id, "tables_loaded") == 0)
    snprintf (out, VALUE_SIZE, "%s", live && inactive ? "Both" : live ? "Live"
              : inactive ? "Inactive" : "None");
  else if (strcmp (f->id, "suspended") == 0)
    snprintf (out, VALUE_SIZE, "%s", susp ? "Suspended" : "Active");
  else if (strcmp (f->id, "readonly") == 0)
    snprintf (out, VALUE_SIZE, "%s", ro ? "Read-only" : "Writeable");
  else
    snprintf (out, VALUE_SIZE, "%s:%s", get (m, "major"), get (m, "minor"));
}

/* Parses "-o" (a list, or "+list" to add to the default) into COLS. */
static int
choose_fields (const struct ctl_options *o, const struct field **cols,
               size_t *ncols)
{
  static const char default_fields[] =
    "name,major,minor,attr,open,segments,events,uuid";
  char list[1024], *save = NULL, *id;
  size_t i;

  if (o->fields == NULL)
    snprintf (list, sizeof list, "%s", default_fields);
  else if (o->fields[0] == '+')
    snprintf (list, sizeof list, "%s,%s", default_fields, o->fields + 1);
  else
    snprintf (list, sizeof list, "%s", o->fields);
  *ncols = 0;
  for (id = strtok_r (list, ",", &save); id;
       id = strtok_r (NULL, ",", &save)) {
    for (i = 0; i < NFIELDS && strcmp (fields[i].id, id) != 0; i++)
      ;
    if (i == NFIELDS) {
      fprintf (stderr, "Unrecognised field: %s\n", id);
      return -1;
    }
    if (*ncols == MAX_COLUMNS)
      return -1;
    cols[(*ncols)++] = &fields[i];
  }
  return 0;
}

static void
print_row (const struct ctl_options *o, const char **cells,
           const struct field **cols, size_t ncols, const size_t *width,
           bool heading)
{
  const char *sep = o->separator ? o->separator
    : o->noheadings ? ":" : " ";
  bool aligned = !o->noheadings && !o->separator;
  size_t i;

  for (i = 0; i < ncols; i++) {
    if (i > 0)
      fputs (sep, stdout);
    if (!aligned)
      fputs (cells[i], stdout);
    else if (cols[i]->numeric && !heading)
      printf ("%*s", (int) width[i], cells[i]);
    else
      printf ("%-*s", (int) width[i], cells[i]);
  }
  putchar ('\n');
}

int
print_info_columns (const struct ctl_options *o,
                    struct ctl_message *infos, size_t n)
{
  const struct field *cols[MAX_COLUMNS];
  char (*values)[MAX_COLUMNS][VALUE_SIZE];
  const char *cells[MAX_COLUMNS];
  size_t ncols, width[MAX_COLUMNS], i, j;

  if (choose_fields (o, cols, &ncols) == -1)
    return -1;
  values = calloc (n ? n : 1, sizeof *values);
  if (values == NULL)
    return -1;
  for (j = 0; j < ncols; j++) {
    width[j] = cols[j]->width > strlen (cols[j]->heading)
      ? cols[j]->width : strlen (cols[j]->heading);
    cells[j] = cols[j]->heading;
  }
  for (i = 0; i < n; i++)
    for (j = 0; j < ncols; j++) {
      value_of (cols[j], &infos[i], values[i][j]);
      if (strlen (values[i][j]) > width[j])
        width[j] = strlen (values[i][j]);
    }
  if (!o->noheadings)
    print_row (o, cells, cols, ncols, width, true);
  for (i = 0; i < n; i++) {
    for (j = 0; j < ncols; j++)
      cells[j] = values[i][j];
    print_row (o, cells, cols, ncols, width, false);
  }
  free (values);
  return 0;
}
