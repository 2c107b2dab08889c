/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The image and its detached header: opened read-only where nothing may
 * be written, and locked so that one image has one writer or any number
 * of readers (lock/lock.h); the backends stacked over the image. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../backend/fault.h"
#include "params/cmdline.h"
#include "internal.h"

/* nbdkit -r and images the user may only read are opened O_RDONLY, so
 * nothing can reach them. */
static bool
open_writable (struct dmcrypt_volume *v)
{
  const char *file;
  int err;

  if (cmdline_proc_readonly (&v->server_readonly) == -1)
    nbdkit_debug ("cannot read /proc/self/cmdline: assuming no -r");
  if (v->server_readonly)
    return false;
  file = volume_image_file (v);
  if (v->filter && !v->lower->readonly)
    return true;
  if (v->filter && (file == NULL || access (file, W_OK) == 0)) {
    dmcrypt_notice ("the layer below is read-only: serving it read-only");
    return false;
  }
  if (access (file, W_OK) == 0)
    return true;
  err = errno;
  if (err != ENOENT)
    dmcrypt_notice ("%s is not writable (%s): serving it read-only",
                    file, strerror (err));
  return false;
}

/* Locked on the file's own descriptor, before anything can wrap it.
 * The filter's next layer is not a file to lock: its plugin keeps its
 * own rules (nbdkit's file plugin takes no lock either). */
static int
open_file (struct dmcrypt_volume *v, bool writable, bool exclusive)
{
  v->backend = backend_file_open (v->params.file, !writable);
  if (v->backend == NULL)
    return -1;
  v->file_backend = v->backend;
  return image_locks_take_image (&v->locks, v->backend, v->params.file,
                                 exclusive);
}

static int
open_backend (struct dmcrypt_volume *v, bool writable,
              bool exclusive)
{
  struct backend *faulty;

  if (v->filter)
    v->backend = v->lower;
  else if (open_file (v, writable, exclusive) == -1)
    return -1;
  if (v->params.fault_rules) {
    /* fault-rules=: the test facility sits right under the trace point,
     * so traces show the injected errors as the device's. */
    faulty = backend_fault_wrap (v->backend, v->params.fault_rules);
    if (faulty == NULL)
      return -1;
    v->backend = faulty;
  }
  return lab_wrap_backend (v);
}

int
image_open (struct dmcrypt_volume *v)
{
  struct dmcrypt_params *p = &v->params;
  bool writable = open_writable (v);
  bool exclusive = writable && !p->readonly;

  image_locks_init (&v->locks);
  if (!v->filter && access (p->file, F_OK) == -1 && errno == ENOENT
      && params_is_name (p->file)) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", p->file, p->file);
    return -1;
  }
  if (open_backend (v, writable, exclusive) == -1
      || (p->header
          && image_locks_take_header (&v->locks, p->header, writable,
                                      exclusive) == -1))
    return -1;
  if (v->server_readonly || !writable)
    p->readonly = true;
  return 0;
}

void
image_close (struct dmcrypt_volume *v)
{
  image_locks_release (&v->locks);
}
