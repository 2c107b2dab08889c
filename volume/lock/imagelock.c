/* The image and its detached header: opened read-only where nothing may
 * be written, and locked so that one image has one writer or any number
 * of readers (backend/lock.h).  A second writer on one ciphertext is two
 * caches of truth, the classic way to destroy a file system. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../backend/fault.h"
#include "../../control/holder.h"
#include "../../control/sockdir.h"
#include "../params/cmdline.h"
#include "../volume.h"

/* "dmcrypt volume 'vol' (pid 12)" when one of the user's instances
 * serves the image, else "qemu-img (pid 34)" or "another program" into
 * BUF. */
static void
describe_holder (const struct image_lock_holder *h, char *buf, size_t size)
{
  char name[CTL_MAX_NAME + 1];
  long pid;

  if (ctl_find_image_holder (h->dev, h->ino, name, sizeof name, &pid) == 0)
    snprintf (buf, size, "dmcrypt volume '%s' (pid %ld)", name, pid);
  else if (h->pid)
    snprintf (buf, size, "%s (pid %d)", h->comm, (int) h->pid);
  else
    snprintf (buf, size, "another program");
}

/* The one line that says why PATH cannot be locked as wanted. */
static void
conflict_reason (const char *path, bool exclusive, int err,
                 const struct image_lock_holder *h, char *why, size_t size)
{
  char who[CTL_MAX_NAME + 64];

  describe_holder (h, who, sizeof who);
  if (err == EBUSY && strncmp (who, "dmcrypt", 7) == 0)
    snprintf (why, size, "%s is in use: %s has it open read-write", path,
              who);
  else if (err == EBUSY)
    snprintf (why, size, "%s is in use: mounted, mapped by device-mapper "
              "or opened exclusively by another program", path);
  else if (err != EAGAIN)
    snprintf (why, size, "%s: cannot lock: %s", path, strerror (err));
  else if (exclusive)
    snprintf (why, size, "%s is in use: %s has it open%s; it can have "
              "one writer only (readers may share it: readonly=true or "
              "nbdkit -r)", path, who,
              h->known && !h->writer ? " read-only" : " read-write");
  else
    snprintf (why, size, "%s is in use: %s has it open read-write; it "
              "cannot be read while another writes it", path, who);
}

static void
report_conflict (const char *path, bool exclusive,
                 const struct image_lock_holder *h)
{
  char why[512];

  conflict_reason (path, exclusive, errno, h, why, sizeof why);
  nbdkit_error ("%s", why);
}

static struct image_lock *
lock_or_fail (int fd, const char *path, bool exclusive)
{
  struct image_lock_holder h = { 0 };
  struct image_lock *l = image_lock_acquire (fd, path, exclusive, &h);

  if (l == NULL)
    report_conflict (path, exclusive, &h);
  return l;
}

static bool
fd_is_writable (int fd)
{
  return fd >= 0 && (fcntl (fd, F_GETFL) & O_ACCMODE) == O_RDWR;
}

/* The header is only read, but it is the volume's as much as the data:
 * locked the same way, through a descriptor of its own. */
static int
open_header (bool writable, bool exclusive)
{
  int fd;

  if (params.header == NULL)
    return 0;
  fd = open (params.header, (writable && access (params.header, W_OK) == 0
                             ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd == -1) {
    nbdkit_error ("header: %s: %m", params.header);
    return -1;
  }
  volume.header_fd = fd;
  volume.header_lock = lock_or_fail (fd, params.header,
                                     exclusive && fd_is_writable (fd));
  return volume.header_lock ? 0 : -1;
}

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
  struct image_lock_holder h = { 0 };

  volume.backend = backend_file_open (params.file, !writable);
  if (volume.backend == NULL)
    return -1;
  volume.file_backend = volume.backend;
  if (backend_file_lock (volume.backend, exclusive, &h) == -1) {
    report_conflict (params.file, exclusive, &h);
    return -1;
  }
  return 0;
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

  volume.header_fd = -1;
  if (!volume.filter && access (params.file, F_OK) == -1 && errno == ENOENT
      && dmcrypt_is_param_name (params.file)) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", params.file, params.file);
    return -1;
  }
  if (open_backend (writable, exclusive) == -1
      || open_header (writable, exclusive) == -1)
    return -1;
  if (volume.server_readonly || !writable)
    params.readonly = true;
  return 0;
}

void
image_close (void)
{
  image_lock_release (volume.header_lock);
  if (volume.header_fd >= 0)
    close (volume.header_fd);
  volume.header_lock = NULL;
  volume.header_fd = -1;
}

/* The image's lock (L == NULL) or the header's. */
static int
follow_one (struct image_lock *l, const char *path, bool exclusive,
            char *why, size_t size)
{
  struct image_lock_holder h = { 0 };
  int r;

  if (l)
    r = image_lock_change (l, exclusive, &h);
  else
    r = backend_file_relock (volume.file_backend, exclusive, &h);
  if (r == 0)
    return 0;
  conflict_reason (path, exclusive, errno, &h, why, size);
  errno = EBUSY;
  return -1;
}

int
image_locks_follow (bool writable, char *why, size_t why_size)
{
  bool header_exclusive = writable && fd_is_writable (volume.header_fd);
  bool was_exclusive = volume.file_backend
    && backend_file_is_exclusive (volume.file_backend);
  char ignored[16];

  if (volume.file_backend
      && follow_one (NULL, params.file, writable, why, why_size) == -1)
    return -1;
  if (volume.header_lock
      && follow_one (volume.header_lock, params.header, header_exclusive,
                     why, why_size) == -1) {
    if (volume.file_backend)
      follow_one (NULL, params.file, was_exclusive, ignored,
                  sizeof ignored);
    errno = EBUSY;
    return -1;
  }
  return 0;
}
