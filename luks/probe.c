/* Is there a LUKS header at the start of an image?  Plain mode over a
 * LUKS image would overwrite the header with its first writes. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "internal.h"
#include "luks.h"

/* LUKS1 and a LUKS2 primary header both start with it. */
static const char luks_magic[6] = { 'L', 'U', 'K', 'S', '\xba', '\xbe' };

static int
has_magic (const char *path)
{
  char head[sizeof luks_magic];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd == -1)
    return -1;
  n = pread (fd, head, sizeof head, 0);
  close (fd);
  if (n == -1)
    return -1;
  return n == sizeof head && memcmp (head, luks_magic, sizeof head) == 0;
}

int
luks_probe_header (const char *path, uint64_t *data_offset)
{
  struct crypt_device *cd = NULL;
  int r = has_magic (path);

  *data_offset = 0;
  if (r != 1)
    return r;
  luks_log_start ();
  /* Off, so that loading never repairs (writes) the header. */
  crypt_metadata_locking (NULL, 0);
  if (crypt_init (&cd, path) == 0 && crypt_load (cd, CRYPT_LUKS, NULL) == 0)
    *data_offset = crypt_get_data_offset (cd) * 512;
  crypt_free (cd);
  return 1;
}
