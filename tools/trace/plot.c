/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --png: one run's dispatches as sector over time above its throughput
 * over time, as seekwatcher draws them, by gnuplot.  The title names
 * the run and ends with the device's busy time, HOST-LIMITED below 95 %
 * as the report says; the legend names only the directions the run
 * dispatched, above the plot, never on its points. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"

/* A title's line is broken between words after this many characters:
 * about what a 1000-px plot holds at gnuplot's default font. */
#define TITLE_COLUMNS 110

/* C inside a gnuplot string in double quotes: a backslash or a quote
 * escaped, a control character as a space. */
static void
put_char (FILE *gp, char c)
{
  if (c == '\\' || c == '"')
    fprintf (gp, "\\%c", c);
  else
    fputc ((unsigned char) c < ' ' ? ' ' : c, gp);
}

/* A file name as a gnuplot string. */
static void
put_path (FILE *gp, const char *path)
{
  fputc ('"', gp);
  for (; *path; path++)
    put_char (gp, *path);
  fputc ('"', gp);
}

/* S inside a gnuplot string, its lines broken where it has a line
 * break or the two characters \n, and between words to keep each
 * within TITLE_COLUMNS: a longer one would be cut off at the edges. */
static void
put_title_text (FILE *gp, const char *s)
{
  size_t column = 0;

  while (*s) {
    if (*s == '\n' || (s[0] == '\\' && s[1] == 'n')) {
      s += *s == '\n' ? 1 : 2;
      column = 0;
      fputs ("\\n", gp);
      continue;
    }
    if (*s == ' ' && column > 0
        && column + 1 + strcspn (s + 1, " \n") > TITLE_COLUMNS) {
      s++;
      column = 0;
      fputs ("\\n", gp);
      continue;
    }
    put_char (gp, *s++);
    column++;
  }
}

/* TITLE and a last line: the device's busy time and what limited the
 * run (print.c's verdict, at BUSY_DEVICE_LIMITED); no such line without
 * a busy time. */
static void
put_title (FILE *gp, const char *title, const struct analysis *a)
{
  double busy = analysis_busy (a);

  fputc ('"', gp);
  put_title_text (gp, title);
  if (!isnan (busy) && busy < BUSY_DEVICE_LIMITED)
    fprintf (gp, "\\ndevice busy %.1f %% of the run: HOST-LIMITED (below "
             "%.0f %%: the host, not the device, limited it)", 100 * busy,
             100 * BUSY_DEVICE_LIMITED);
  else if (!isnan (busy))
    fprintf (gp, "\\ndevice busy %.1f %% of the run: the device limited "
             "it", 100 * busy);
  fputc ('"', gp);
}

/* The sector panel's plot command: a term for each direction the run
 * dispatched (DATA's rows: time sector write bytes), and its legend
 * entry drawn apart, with a point large enough to see its colour. */
static void
put_sectors (FILE *gp, const char *data, const struct analysis *a)
{
  static const struct { int write; const char *colour, *name; } dirs[] = {
    { 1, "red", "write" }, { 0, "blue", "read" },
  };
  const char *sep = "plot ";
  size_t i;

  for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    if (a->dir[dirs[i].write].count == 0)
      continue;
    fputs (sep, gp);
    put_path (gp, data);
    fprintf (gp, " using 1:($3==%d?$2:1/0) with points pt 7 ps 0.3 "
             "lc rgb '%s' notitle, NaN with points pt 7 ps 1 lc rgb '%s' "
             "title '%s'", dirs[i].write, dirs[i].colour, dirs[i].colour,
             dirs[i].name);
    sep = ", ";
  }
  fputc ('\n', gp);
}

/* Over the run's span; ranges set, so that gnuplot has none to widen
 * (and warn of) when all points lie on one line. */
int
plot_png (struct analysis *a, const char *data, const char *png,
          const char *title)
{
  double first, last, bin;
  uint64_t sector_end;
  FILE *gp;

  analysis_finish (a);
  analysis_plot_range (a, &first, &last, &sector_end);
  if (last <= first)
    last = first + 0.001;
  bin = (last - first) / 100;
  gp = popen ("gnuplot", "w");
  if (gp == NULL) {
    perror ("dmcrypt-trace: gnuplot");
    return -1;
  }
  fprintf (gp, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
           "  set terminal pngcairo size 1000,800 noenhanced\n"
           "} else {\n  set terminal png size 1000,800 noenhanced\n}\n"
           "set output ");
  put_path (gp, png);
  fprintf (gp, "\nset multiplot layout 2,1 title ");
  put_title (gp, title, a);
  fprintf (gp, "\nset xrange [%.9f:%.9f]\n"
           "set lmargin 14\nset key tmargin right horizontal\n"
           "set ylabel 'sector (512 B)'\nset format y '%%.0f'\n"
           "set yrange [0:%" PRIu64 "]\n", first, last, sector_end);
  put_sectors (gp, data, a);
  fprintf (gp, "unset key\nset xlabel 'time (s)'\n"
           "set ylabel 'throughput (MB/s)'\nset format y '%%g'\n"
           "set yrange [0:*]\n"
           "bin(x)=%.9f*floor(x/%.9f)\nplot ", bin, bin);
  put_path (gp, data);
  fprintf (gp, " using (bin($1)):($4/%.9f/1e6) smooth frequency "
           "with steps notitle\nunset multiplot\n", bin);
  return pclose (gp) == 0 ? 0 : -1;
}
