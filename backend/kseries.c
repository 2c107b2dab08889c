/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel series of kernel= (kseries.h). */
#include <stddef.h>
#include <string.h>

#include "kseries.h"

static const char *const names[] = {
  [KSERIES_NONE] = "none", [KSERIES_2_6_32] = "2.6.32",
  [KSERIES_3_16] = "3.16", [KSERIES_4_0] = "4.0", [KSERIES_6_1] = "6.1",
};

int
kernel_series_parse (const char *name)
{
  size_t i;

  if (name == NULL)
    return KSERIES_NONE;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (name, names[i]) == 0)
      return (int) i;
  return -1;
}

const char *
kernel_series_name (enum kernel_series k)
{
  return (size_t) k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *
kernel_series_names (void)
{
  return "2.6.32 3.16 4.0 6.1";
}
