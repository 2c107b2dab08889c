/* SPDX-License-Identifier: GPL-2.0-or-later */
/* From parameters to a running volume (volume.h): open and lock the
 * backing file, make the crypt table, key the cipher and build the
 * engine; and the way back. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/integrity.h"
#include "../backend/trace.h"
#include "internal.h"

struct dmcrypt_volume *
volume_new (bool filter)
{
  struct dmcrypt_volume *v = calloc (1, sizeof *v);

  if (v == NULL) {
    nbdkit_error ("calloc: %m");
    return NULL;
  }
  params_init (&v->params);
  v->filter = filter;
  image_locks_init (&v->locks);
  return v;
}

/* trace=: blkparse-style events of every backend IO, after a marker
 * that names this run.  A file that already holds earlier runs is
 * appended to, and the user is told: an analysis that mixed two runs'
 * events would be wrong without a word. */
static int
open_trace (struct dmcrypt_volume *v)
{
  const char *file = volume_image_file (v), *trace = v->params.trace;
  struct backend *b = v->backend;
  char *image;
  uint64_t earlier;

  if (trace == NULL)
    return 0;
  image = file ? realpath (file, NULL) : NULL;
  b->trace = trace_open (trace, b->dev_major, b->dev_minor,
                         image ? image : v->image);
  free (image);
  if (b->trace == NULL)
    return -1;
  lab_attach_trace (v);
  earlier = trace_existing_bytes (b->trace);
  if (earlier > 0)
    dmcrypt_notice ("appending to trace %s, which holds %" PRIu64
                    " bytes of earlier runs: this run starts at its "
                    "dmcrypt-run marker (pid %d)", trace, earlier,
                    (int) getpid ());
  return 0;
}

int
volume_check_params (struct dmcrypt_volume *v)
{
  return params_check (&v->params, !v->filter) == -1
    || lab_check_params (&v->params) == -1 ? -1 : 0;
}

void
volume_set_lower (struct dmcrypt_volume *v, struct backend *lower,
                  const char *label, const char *data_path)
{
  v->lower = lower;
  v->image = v->params.layer_file ? v->params.layer_file : label;
  v->data_path = data_path;
}

int
volume_open (struct dmcrypt_volume *v)
{
  if (!v->filter)
    v->image = v->data_path = v->params.file;
  if (volume_check_params (v) == -1 || image_open (v) == -1
      || open_trace (v) == -1 || table_make (v) == -1)
    return -1;
  return mapping_open (v);
}

int
volume_start (struct dmcrypt_volume *v)
{
  return lab_start (v) == -1 || dm_start (v->dm) == -1 ? -1 : 0;
}

void
volume_log_stats (const struct dmcrypt_volume *v)
{
  struct engine_stats st;
  char line[1024];

  if (v == NULL || v->dm == NULL)
    return;
  dm_get_stats (v->dm, &st);
  nbdkit_debug ("stats: %s", engine_format_stats (&st, line, sizeof line));
}

/* Back to what volume_new and the parameters made: the filter's flag,
 * the parameters and the control server are the volume's still. */
void
volume_close (struct dmcrypt_volume *v)
{
  struct dmcrypt_params params = v->params;
  struct volume_control *control = v->control;
  bool filter = v->filter;

  dm_free (v->dm);
  /* Its journal is written back while the image is still ours. */
  if (v->integrity)
    backend_integrity_finish (v->integrity);
  image_close (v);
  backend_close (v->backend);
  crypt_table_free (&v->table);
  crypt_table_free (&v->luks.second);
  memset (v, 0, sizeof *v);
  v->params = params;
  v->control = control;
  v->filter = filter;
  image_locks_init (&v->locks);
}

void
volume_free (struct dmcrypt_volume *v)
{
  if (v == NULL)
    return;
  volume_close (v);
  params_free (&v->params);
  free (v);
}
