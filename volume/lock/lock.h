/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One writer or any number of readers per image, the rule the kernel
 * keeps for a block device in use.  A second writer on one ciphertext
 * is two caches of truth, the classic way to destroy a file system.
 *
 * lock.c takes and changes one image's lock; holder.c finds the process
 * that holds a conflicting one; instance.c asks the user's running
 * dmcrypt instances which of them serves the image (through the
 * registry, control/registry.h); reason.c says all that in one line;
 * locks.c keeps a volume's locks, on its image and its detached header,
 * as its tables want them.
 *
 * Files: an open-file-description (OFD) lock on the whole file, F_WRLCK
 * for a writer, F_RDLCK for a reader.  It belongs to one open of the
 * file, goes away with it (also when the process is killed), and
 * conflicts with qemu's image locks, which are OFD locks on single
 * bytes.  A write lock needs a descriptor opened for writing.
 * Block devices: the same, plus, for a writer, a descriptor opened with
 * O_EXCL, which fails while the device is mounted, mapped by
 * device-mapper or opened exclusively by another program. */
#ifndef DMCRYPT_VOLUME_LOCK_H
#define DMCRYPT_VOLUME_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../../backend/backend.h"

struct image_lock;

/* Who holds a conflicting lock, as far as it can be known. */
struct image_lock_holder
{
  bool known;                 /* a lock was seen (not an O_EXCL claim) */
  bool writer;                /* the holder's lock is a write lock */
  pid_t pid;                  /* 0 when no process could be found */
  char comm[32];              /* the process's name, when pid != 0 */
  dev_t dev;                  /* the locked file, for finding the */
  ino_t ino;                  /* dmcrypt instance that holds it */
};

/* Locks the file open on FD (PATH names it, for O_EXCL and messages):
 * exclusively or shared.  Returns the lock, or NULL with errno: EAGAIN
 * when another holder conflicts (HOLDER filled in), EBUSY when a block
 * device is in use, anything else from the system. */
struct image_lock *image_lock_acquire (int fd, const char *path,
                                       bool exclusive,
                                       struct image_lock_holder *holder);

/* Turns a held lock exclusive or shared.  Returns 0, or -1 with errno
 * and HOLDER as above; a failed change keeps the lock as it was. */
int image_lock_change (struct image_lock *l, bool exclusive,
                       struct image_lock_holder *holder);

bool image_lock_is_exclusive (const struct image_lock *l);

/* The O_EXCL descriptor of an exclusively locked block device, or -1.
 * Discards must go through it: the kernel drops a range's page cache
 * on discard only for the device's exclusive holder. */
int image_lock_claim_fd (const struct image_lock *l);

/* Drops the lock (the descriptor given to acquire stays open).  L may
 * be NULL. */
void image_lock_release (struct image_lock *l);

/* holder.c, for lock.c: HOLDER filled for the file of ST, open on FD,
 * that could not be locked EXCLUSIVE or shared.  HOLDER may be NULL. */
void image_lock_find_holder (const struct stat *st, int fd, bool exclusive,
                             struct image_lock_holder *holder);

/* ---- instance.c: which dmcrypt instance holds an image ---- */

#define IMAGE_INSTANCE_TIMEOUT_MS 500   /* per instance: connect, reply */
#define IMAGE_INSTANCE_BUDGET_MS  2000  /* the whole search */

/* Asks every instance in the user's registry (control/registry.h) for
 * its "info" and compares the image identity it reports (image_dev,
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
 * at most IMAGE_INSTANCE_TIMEOUT_MS to accept and answer, the whole
 * search IMAGE_INSTANCE_BUDGET_MS: stale, foreign or hung sockets are
 * passed over, never waited for.
 *
 * Returns 0 with the volume's name in NAME (cut to NAME_SIZE - 1 bytes)
 * and its server's pid in *PID, or -1 with errno ENOENT when no running
 * instance of this user serves the image (or the time ran out). */
int image_lock_find_instance (dev_t dev, ino_t ino, char *name,
                              size_t name_size, long *pid);

/* ---- reason.c ---- */

/* The one line that says why PATH could not be locked EXCLUSIVE (or
 * shared), ERR being the errno of image_lock_acquire or _change and
 * HOLDER what they found: the dmcrypt volume and pid that holds it
 * when one of the user's instances does, else the process, else
 * "another program"; a block device in use by a mount or device-mapper
 * (EBUSY) says so. */
void image_lock_reason (const char *path, bool exclusive, int err,
                        const struct image_lock_holder *holder, char *why,
                        size_t size);

/* ---- locks.c: a volume's locks ---- */

/* Exclusive for a writable volume, shared for a read-only one, and
 * following its tables after that (dm_host.locks_follow).  Everything
 * the struct points to is the caller's and outlives it. */
struct image_locks
{
  struct backend *file;           /* the image's file backend, or NULL */
  const char *image_path;         /* for messages and O_EXCL */
  struct image_lock *image;
  const char *header_path;        /* the detached header, or NULL */
  int header_fd;                  /* opened to hold its lock, or -1 */
  struct image_lock *header;
};

void image_locks_init (struct image_locks *l);
/* Locks the image of FILE (made by backend_file_open of PATH) on its
 * own descriptor, before anything wraps it.  Returns 0, or -1 after
 * nbdkit_error with the reason. */
int image_locks_take_image (struct image_locks *l, struct backend *file,
                            const char *path, bool exclusive);
/* Opens the detached header PATH (for writing when WRITABLE and the
 * user may) and locks it, exclusively only if EXCLUSIVE and it could be
 * opened for writing: the header is only read, but it is the volume's
 * as much as the data.  Returns 0, or -1 after nbdkit_error. */
int image_locks_take_header (struct image_locks *l, const char *path,
                             bool writable, bool exclusive);
/* Makes the locks exclusive when WRITABLE (a read-write table live or
 * loaded), shared otherwise.  Returns 0, or -1 with errno EBUSY and a
 * one-line reason in WHY; on failure both stay as they were. */
int image_locks_follow (struct image_locks *l, bool writable, char *why,
                        size_t why_size);
/* Drops both locks and closes the header's descriptor. */
void image_locks_release (struct image_locks *l);

#endif /* DMCRYPT_VOLUME_LOCK_H */
