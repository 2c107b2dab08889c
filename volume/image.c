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
#include "volume.h"

/* nbdkit -r and images the user may only read are opened O_RDONLY, so
 * nothing can reach them. */
static bool
open_writable (void)
{
  const char *file;
  int err;

  if (cmdline_proc_readonly (&volume.server_readonly) == -1)
    nbdkit_debug ("cannot read /proc/self/cmdline: assuming no -r");
  if (volume.server_readonly)
    return false;
  file = volume_image_file ();
  if (volume.filter && !volume.lower->readonly)
    return true;
  if (volume.filter && (file == NULL || access (file, W_OK) == 0)) {
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
open_file (bool writable, bool exclusive)
{
  volume.backend = backend_file_open (params.file, !writable);
  if (volume.backend == NULL)
    return -1;
  volume.file_backend = volume.backend;
  return image_locks_take_image (&volume.locks, volume.backend, params.file,
                                 exclusive);
}

static int
open_backend (bool writable, bool exclusive)
{
  struct backend *faulty;

  if (volume.filter)
    volume.backend = volume.lower;
  else if (open_file (writable, exclusive) == -1)
    return -1;
  if (params.fault_rules) {
    /* fault-rules=: the test facility sits right under the trace point,
     * so traces show the injected errors as the device's. */
    faulty = backend_fault_wrap (volume.backend, params.fault_rules);
    if (faulty == NULL)
      return -1;
    volume.backend = faulty;
  }
  return lab_wrap_backend ();
}

int
image_open (void)
{
  bool writable = open_writable ();
  bool exclusive = writable && !params.readonly;

  image_locks_init (&volume.locks);
  if (!volume.filter && access (params.file, F_OK) == -1 && errno == ENOENT
      && dmcrypt_is_param_name (params.file)) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", params.file, params.file);
    return -1;
  }
  if (open_backend (writable, exclusive) == -1
      || (params.header
          && image_locks_take_header (&volume.locks, params.header, writable,
                                      exclusive) == -1))
    return -1;
  if (volume.server_readonly || !writable)
    params.readonly = true;
  return 0;
}

void
image_close (void)
{
  image_locks_release (&volume.locks);
}
