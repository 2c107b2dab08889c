/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The device models by name.  A new model is its own file plus one line
 * in the table below. */
#include <pthread.h>
#include <string.h>

#include "../../common/cleanup.h"
#include "model.h"

static const struct device_model *const models[] = {
  &device_model_hdd,
  &device_model_usb,
  &device_model_ssd,
  &device_model_x25e_raid10,
  &device_model_sas15k_raid10,
};

const struct device_model *
device_model_find (const char *name)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (models); i++)
    if (strcmp (models[i]->name, name) == 0)
      return models[i];
  return NULL;
}

uint32_t
device_model_max_sectors (const struct device_model *model)
{
  return model->max_sectors ? model->max_sectors : 2560;
}

static char names[128];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void
join_names (void)
{
  size_t i;

  for (i = 0; i < ARRAY_SIZE (models); i++) {
    if (i > 0)
      strncat (names, " ", sizeof names - strlen (names) - 1);
    strncat (names, models[i]->name, sizeof names - strlen (names) - 1);
  }
}

const char *
device_model_names (void)
{
  pthread_once (&names_once, join_names);
  return names;
}

size_t
model_param_count (const struct device_model *model)
{
  size_t n = 0;

  while (model->params[n].key)
    n++;
  return n;
}
