/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Image locks (volume/lock/lock.c): one writer or many readers, conversions
 * that keep the lock on failure, the holder found by its open files,
 * and a lock that dies with its process. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../volume/lock/lock.h"
#include "check.h"

static char path[] = "/tmp/dmcrypt-lock-XXXXXX";

static int
open_rw (void)
{
  int fd = open (path, O_RDWR | O_CLOEXEC);
  REQUIRE (fd >= 0, "open %s: %s", path, strerror (errno));
  return fd;
}

/* Acquire must fail with EAGAIN; returns the holder it found. */
static struct image_lock_holder
refused (int fd, bool exclusive)
{
  struct image_lock_holder h;
  struct image_lock *l;

  memset (&h, 0xff, sizeof h);
  l = image_lock_acquire (fd, path, exclusive, &h);
  CHECK (l == NULL && errno == EAGAIN);
  if (l)
    image_lock_release (l);
  return h;
}

static void
same_process (void)
{
  int a = open_rw (), b = open_rw (), c = open_rw ();
  struct image_lock *la, *lb, *lc;
  struct image_lock_holder h;

  la = image_lock_acquire (a, path, true, NULL);
  REQUIRE (la != NULL, "exclusive lock: %s", strerror (errno));
  CHECK (image_lock_is_exclusive (la));
  h = refused (b, false);
  CHECK (h.known && h.writer);
  CHECK (h.pid == 0);              /* ourselves: not reported */
  refused (b, true);

  /* Down to shared: readers may join; up again: refused while they
   * hold it, and the shared lock stays. */
  CHECK (image_lock_change (la, false, NULL) == 0);
  lb = image_lock_acquire (b, path, false, NULL);
  CHECK (lb != NULL);
  CHECK (image_lock_change (la, true, &h) == -1 && errno == EAGAIN);
  CHECK (h.known && !h.writer);
  CHECK (!image_lock_is_exclusive (la));
  refused (c, true);               /* la is still a reader */
  lc = image_lock_acquire (c, path, false, NULL);
  CHECK (lc != NULL);
  image_lock_release (lb);
  image_lock_release (lc);
  CHECK (image_lock_change (la, true, NULL) == 0);
  CHECK (image_lock_claim_fd (la) == -1);   /* a file: no O_EXCL claim */
  image_lock_release (la);
  lb = image_lock_acquire (b, path, true, NULL);
  CHECK (lb != NULL);              /* released means released */
  image_lock_release (lb);
  close (a); close (b); close (c);
}

static void
other_process (void)
{
  int pipefd[2], fd = open_rw ();
  struct image_lock_holder h;
  struct image_lock *l;
  char ready;
  pid_t child;

  REQUIRE (pipe (pipefd) == 0, "pipe");
  child = fork ();
  REQUIRE (child >= 0, "fork");
  if (child == 0) {
    int cfd = open_rw ();
    if (image_lock_acquire (cfd, path, true, NULL) == NULL)
      _exit (2);
    if (write (pipefd[1], "x", 1) != 1)
      _exit (3);
    pause ();
    _exit (0);
  }
  REQUIRE (read (pipefd[0], &ready, 1) == 1, "the child did not lock");
  h = refused (fd, false);
  CHECK (h.known && h.writer);
  CHECK (h.pid == child);
  CHECK (strncmp (h.comm, "test-lock", 9) == 0);

  /* SIGKILL: the kernel drops the lock with the last descriptor. */
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  l = image_lock_acquire (fd, path, true, NULL);
  CHECK (l != NULL);
  image_lock_release (l);
  close (fd);
  close (pipefd[0]); close (pipefd[1]);
}

int
main (void)
{
  int fd = mkstemp (path);

  REQUIRE (fd >= 0, "mkstemp: %s", strerror (errno));
  close (fd);
  same_process ();
  other_process ();
  unlink (path);
  if (failures == 0)
    printf ("lock: ok\n");
  return failures != 0;
}
