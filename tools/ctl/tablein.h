/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading the table of a reload (tablein.c). */
#ifndef DMCRYPT_TOOLS_TABLEIN_H
#define DMCRYPT_TOOLS_TABLEIN_H

/* Reads SOURCE (NULL or "-": stdin; text with spaces: the table line
 * itself; else a file), keeps its one target line and checks it with
 * the kernel's rules.  Returns the line in locked memory (free with
 * table_input_free), or NULL after printing why. */
char *table_input (const char *source);
void table_input_free (char *line);

#endif /* DMCRYPT_TOOLS_TABLEIN_H */
