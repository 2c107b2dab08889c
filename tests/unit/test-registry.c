/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The user's registry of running volumes (control/registry.c) and the
 * image holder lookup (volume/lock/instance.c), against fake instances in
 * child processes: DMCRYPT_RUNTIME_DIR chooses the registry; entries
 * are listed, and those nobody listens behind (stale sockets, dangling
 * symlinks) swept while live ones and foreign files stay; the holder of
 * a file or a block device is found by its identity, past a hung
 * socket, and the caller's own instance is never its own holder.
 *
 * "test-registry holder FILE" prints the name and pid of the running
 * instance serving FILE, for tests/test-control-registry.sh. */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../volume/lock/lock.h"
#include "../../control/proto.h"
#include "../../control/registry.h"
#include "../../control/sockdir.h"

#include "check.h"

#define MAX_FAKES 8

static char top[64];                /* the test's scratch directory */
static char reg[128];               /* its registry */
static pid_t fakes[MAX_FAKES];
static int nfakes;

struct identity
{
  const char *name;
  uint64_t dev, ino, rdev;
};

static int
listen_at (const char *path, bool listening)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);

  snprintf (sun.sun_path, sizeof sun.sun_path, "%s", path);
  REQUIRE (fd >= 0 && bind (fd, (struct sockaddr *) &sun, sizeof sun) == 0
           && (!listening || listen (fd, 4) == 0), "socket %s: %m", path);
  return fd;
}

/* Answers every "info" on FD as an instance serving ID would. */
static void
answer_info (int fd, const struct identity *id)
{
  struct ctl_message req, rep;
  int c;

  while ((c = accept (fd, NULL, NULL)) >= 0) {
    if (ctl_msg_init (&req) == 0 && ctl_msg_init (&rep) == 0
        && ctl_recv (c, &req, 2000) == 0) {
      ctl_add (&rep, "name", id->name);
      ctl_addf (&rep, "pid", "%ld", (long) getpid ());
      ctl_addf (&rep, "image_dev", "%" PRIu64, id->dev);
      ctl_addf (&rep, "image_ino", "%" PRIu64, id->ino);
      ctl_addf (&rep, "image_rdev", "%" PRIu64, id->rdev);
      ctl_add (&rep, "result", "0");
      ctl_send (c, &rep);
      ctl_msg_free (&rep);
      ctl_msg_free (&req);
    }
    close (c);
  }
}

/* A fake instance in a child process on PATH: answering as ID, or with
 * ID NULL listening and never accepting (a hung server).  The child
 * listens itself, so that its socket names it (SO_PEERCRED), and says
 * when it does.  Returns its pid. */
static pid_t
start_fake (const char *path, const struct identity *id)
{
  int ready[2], fd;
  pid_t pid;
  char c;

  REQUIRE (pipe (ready) == 0 && (pid = fork ()) >= 0, "fork: %m");
  if (pid == 0) {
    fd = listen_at (path, true);
    if (write (ready[1], "r", 1) != 1)
      _exit (1);
    if (id)
      answer_info (fd, id);
    else
      pause ();
    _exit (0);
  }
  REQUIRE (read (ready[0], &c, 1) == 1, "the fake on %s did not start",
           path);
  close (ready[0]);
  close (ready[1]);
  REQUIRE (nfakes < MAX_FAKES, "too many fakes");
  fakes[nfakes++] = pid;
  return pid;
}

static void
stop_fakes (void)
{
  int i;

  for (i = 0; i < nfakes; i++) {
    kill (fakes[i], SIGKILL);
    waitpid (fakes[i], NULL, 0);
  }
}

static void
path_in (char *path, size_t size, const char *dir, const char *file)
{
  snprintf (path, size, "%s/%s", dir, file);
}

static void
test_directory (void)
{
  char dirs[CTL_MAX_CANDIDATES][CTL_PATH_MAX], dir[CTL_PATH_MAX], why[256];
  struct stat st;

  setenv (CTL_RUNTIME_ENV, "relative/dir", 1);
  CHECK (ctl_registry_candidates (dirs, CTL_MAX_CANDIDATES) >= 1
         && strcmp (dirs[0], "relative/dir") != 0);
  setenv (CTL_RUNTIME_ENV, reg, 1);
  CHECK (ctl_registry_candidates (dirs, CTL_MAX_CANDIDATES) == 1
         && strcmp (dirs[0], reg) == 0);
  /* Missing: the server makes it, private. */
  CHECK (ctl_registry_server_dir (dir, sizeof dir, why, sizeof why) == 0
         && strcmp (dir, reg) == 0);
  CHECK (stat (reg, &st) == 0 && S_ISDIR (st.st_mode)
         && (st.st_mode & 0777) == 0700);
  CHECK (ctl_registry_client_dir (dir, sizeof dir) == 0
         && strcmp (dir, reg) == 0);
  /* Sockets by default: XDG_RUNTIME_DIR's first, then the registry. */
  unsetenv ("XDG_RUNTIME_DIR");
  CHECK (ctl_dir_candidates (dirs, CTL_MAX_CANDIDATES) == 1
         && strcmp (dirs[0], reg) == 0);
  setenv ("XDG_RUNTIME_DIR", top, 1);
  CHECK (ctl_dir_candidates (dirs, CTL_MAX_CANDIDATES) == 2
         && strcmp (dirs[1], reg) == 0);
  unsetenv ("XDG_RUNTIME_DIR");
}

static const struct identity file_image = { "vol", 1, 2, 0 };
static const struct identity disk_image = { "disk", 5, 6, 0x803 };
static pid_t file_pid, disk_pid;

/* Entries of every kind, the fakes behind the live ones. */
static void
populate (void)
{
  char path[256], other[256];

  path_in (path, sizeof path, reg, "vol.sock");
  file_pid = start_fake (path, &file_image);
  /* An instance with its socket elsewhere, and a hung one. */
  path_in (other, sizeof other, top, "disk-elsewhere.sock");
  disk_pid = start_fake (other, &disk_image);
  path_in (path, sizeof path, reg, "disk.sock");
  REQUIRE (symlink (other, path) == 0, "symlink: %m");
  path_in (other, sizeof other, top, "hung-elsewhere.sock");
  start_fake (other, NULL);
  path_in (path, sizeof path, reg, "a-hung.sock");
  REQUIRE (symlink (other, path) == 0, "symlink: %m");
  /* What killed instances leave: a socket nobody listens on, a symlink
   * to a socket gone with its directory. */
  path_in (path, sizeof path, reg, "stale.sock");
  close (listen_at (path, false));
  path_in (path, sizeof path, reg, "dangling.sock");
  REQUIRE (symlink ("/nonexistent/x.sock", path) == 0, "symlink: %m");
  /* Not entries. */
  path_in (path, sizeof path, reg, "file.sock");
  fclose (fopen (path, "w"));
  path_in (path, sizeof path, reg, ".hidden.sock");
  REQUIRE (symlink (other, path) == 0, "symlink: %m");
  path_in (path, sizeof path, reg, "noext");
  REQUIRE (symlink (other, path) == 0, "symlink: %m");
}

static void
names_are (const char *want)
{
  char **names = ctl_registry_names (reg), got[512] = "";
  size_t i;

  REQUIRE (names != NULL, "ctl_registry_names: %m");
  for (i = 0; names[i]; i++)
    snprintf (got + strlen (got), sizeof got - strlen (got), "%s ",
              names[i]);
  if (strcmp (got, want) != 0)
    fprintf (stderr, "names: '%s', wanted '%s'\n", got, want);
  CHECK (strcmp (got, want) == 0);
  ctl_names_free (names);
}

static void
test_entries (void)
{
  char path[256];
  int lock;

  populate ();
  names_are ("a-hung dangling disk stale vol ");
  lock = ctl_dir_lock (reg, true);
  CHECK (lock >= 0);
  /* Held: a second lock does not wait. */
  CHECK (ctl_dir_lock (reg, false) == -1 && errno == EWOULDBLOCK);
  ctl_registry_sweep (reg);
  ctl_dir_unlock (lock);
  names_are ("a-hung disk vol ");
  path_in (path, sizeof path, reg, "file.sock");
  CHECK (access (path, F_OK) == 0);
  path_in (path, sizeof path, reg, "disk.sock");
  CHECK (ctl_socket_live (path, 500));
  path_in (path, sizeof path, reg, "nothing.sock");
  CHECK (!ctl_socket_live (path, 500));
}

/* An instance of our own, served by a thread: it answers, but is never
 * the holder of its own image. */
static void *
self_server (void *arg)
{
  static const struct identity self_image = { "self", 9, 9, 0 };

  answer_info (*(int *) arg, &self_image);
  return NULL;
}

static void
test_holder (void)
{
  char name[CTL_MAX_NAME + 1], path[256];
  pthread_t thread;
  long pid = 0;
  int fd;

  CHECK (image_lock_find_instance (1, 2, name, sizeof name, &pid) == 0
         && strcmp (name, "vol") == 0 && pid == file_pid);
  /* A block device by its st_rdev, or by the node it was opened by. */
  CHECK (image_lock_find_instance (0x803, 0, name, sizeof name, &pid) == 0
         && strcmp (name, "disk") == 0 && pid == disk_pid);
  CHECK (image_lock_find_instance (5, 6, name, sizeof name, &pid) == 0
         && strcmp (name, "disk") == 0);
  /* A file whose st_dev happens to be the disk's number is not it. */
  CHECK (image_lock_find_instance (0x803, 2, name, sizeof name, &pid) == -1
         && errno == ENOENT);
  CHECK (image_lock_find_instance (1, 3, name, sizeof name, &pid) == -1
         && errno == ENOENT);
  /* NAME is cut to its size. */
  CHECK (image_lock_find_instance (1, 2, name, 3, &pid) == 0
         && strcmp (name, "vo") == 0);
  path_in (path, sizeof path, reg, "self.sock");
  fd = listen_at (path, true);
  REQUIRE (pthread_create (&thread, NULL, self_server, &fd) == 0, "thread");
  CHECK (image_lock_find_instance (9, 9, name, sizeof name, &pid) == -1
         && errno == ENOENT);
  shutdown (fd, SHUT_RDWR);
  pthread_join (thread, NULL);
  close (fd);
}

static int
remove_one (const char *path, const struct stat *st, int type,
            struct FTW *ftw)
{
  (void) st; (void) type; (void) ftw;
  return remove (path);
}

static int
print_holder (const char *file)
{
  char name[CTL_MAX_NAME + 1];
  struct stat st;
  long pid;

  if (stat (file, &st) == -1) {
    perror (file);
    return 2;
  }
  if (S_ISBLK (st.st_mode) ? image_lock_find_instance (st.st_rdev, 0, name,
                                                       sizeof name, &pid)
      : image_lock_find_instance (st.st_dev, st.st_ino, name,
                                  sizeof name, &pid)) {
    printf ("none\n");
    return 1;
  }
  printf ("%s %ld\n", name, pid);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *tmpdir = getenv ("TMPDIR");

  if (argc == 3 && strcmp (argv[1], "holder") == 0)
    return print_holder (argv[2]);
  /* Short: socket paths hold 108 bytes. */
  if (tmpdir == NULL || strlen (tmpdir) > 24)
    tmpdir = "/tmp";
  snprintf (top, sizeof top, "%s/test-registry.XXXXXX", tmpdir);
  REQUIRE (mkdtemp (top), "mkdtemp: %m");
  path_in (reg, sizeof reg, top, "registry");
  test_directory ();
  test_entries ();
  test_holder ();
  stop_fakes ();
  nftw (top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  if (failures) {
    fprintf (stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf ("registry and holder lookup: all checks passed\n");
  return 0;
}
