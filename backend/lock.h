/* One writer or any number of readers per image, the rule the kernel
 * keeps for a block device in use.
 *
 * Files: an open-file-description (OFD) lock on the whole file, F_WRLCK
 * for a writer, F_RDLCK for a reader.  It belongs to one open of the
 * file, goes away with it (also when the process is killed), and
 * conflicts with qemu's image locks, which are OFD locks on single
 * bytes.  A write lock needs a descriptor opened for writing.
 * Block devices: the same, plus, for a writer, a descriptor opened with
 * O_EXCL, which fails while the device is mounted, mapped by
 * device-mapper or opened exclusively by another program. */
#ifndef DMCRYPT_BACKEND_LOCK_H
#define DMCRYPT_BACKEND_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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

/* Drops the lock (the descriptor given to acquire stays open). */
void image_lock_release (struct image_lock *l);

#endif /* DMCRYPT_BACKEND_LOCK_H */
