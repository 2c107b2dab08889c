/* Which of the user's running instances serves an image: for an
 * instance that finds its image locked by another process, so that its
 * error can name the volume and the pid holding it. */
#ifndef DMCRYPT_CONTROL_HOLDER_H
#define DMCRYPT_CONTROL_HOLDER_H

#include <stddef.h>
#include <sys/types.h>

#define CTL_HOLDER_TIMEOUT_MS 500   /* per instance: connect and reply */
#define CTL_HOLDER_BUDGET_MS  2000  /* the whole search */

/* Asks every instance in the user's registry (registry.h) for its
 * "info" and compares the image identity it reports (image_dev,
 * image_ino, image_rdev: a stat of the image taken when it opened).
 *
 * The image is given by identity, not by path:
 *   a regular file:  DEV = st_dev, INO = st_ino;
 *   a block device:  DEV = st_rdev (the device itself, whichever node
 *                    names it), INO = 0.
 * An instance serving a block device also matches the st_dev and
 * st_ino of the very device node it opened.
 *
 * The calling process's own instance is skipped.  Each instance gets
 * at most CTL_HOLDER_TIMEOUT_MS to accept and answer, the whole search
 * CTL_HOLDER_BUDGET_MS: stale, foreign or hung sockets are passed over,
 * never waited for.
 *
 * Returns 0 with the volume's name in NAME (cut to NAME_SIZE - 1 bytes)
 * and its server's pid in *PID, or -1 with errno ENOENT when no running
 * instance of this user serves the image (or the time ran out). */
int ctl_find_image_holder (dev_t dev, ino_t ino, char *name,
                           size_t name_size, long *pid);

#endif /* DMCRYPT_CONTROL_HOLDER_H */
