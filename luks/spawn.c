/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running a helper (clevis decrypt, luksmeta) without a shell: its
 * input on stdin, its output into the caller's buffer (locked memory
 * for a secret), the last line it wrote to stderr kept as the reason
 * when it fails.  Its stdin is a socket so that its early exit is an
 * EPIPE here, not a SIGPIPE; it runs in its own process group, killed
 * whole when it outlives the time limit (a Tang server that never
 * answers). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "helper.h"

extern char **environ;

struct child
{
  pid_t pid;
  int in, out, errfd;          /* our ends; -1 when closed */
};

static void
close_fd (int *fd)
{
  if (*fd != -1)
    close (*fd);
  *fd = -1;
}

/* posix_spawn reports a program that cannot be run (ENOENT: not
 * installed) as its own error, glibc 2.24 on. */
static int
start (const char *const argv[], struct child *c, char *err,
       size_t err_size)
{
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 }, r;

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1
      || pipe2 (po, O_CLOEXEC) == -1 || pipe2 (pe, O_CLOEXEC) == -1)
    {
      snprintf (err, err_size, "cannot make pipes: %s", strerror (errno));
      close_fd (&sv[0]), close_fd (&sv[1]), close_fd (&po[0]);
      close_fd (&po[1]), close_fd (&pe[0]), close_fd (&pe[1]);
      return -1;
    }
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2 (&fa, po[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, pe[1], 2);
  posix_spawn_file_actions_addclosefrom_np (&fa, 3);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP);
  r = posix_spawnp (&c->pid, argv[0], &fa, &attr, (char *const *) argv,
                    environ);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  close_fd (&sv[1]), close_fd (&po[1]), close_fd (&pe[1]);
  c->in = sv[0], c->out = po[0], c->errfd = pe[0];
  if (r != 0)
    {
      snprintf (err, err_size, "%s cannot run: %s", argv[0],
                r == ENOENT ? "not installed" : strerror (r));
      close_fd (&c->in), close_fd (&c->out), close_fd (&c->errfd);
      return -1;
    }
  return 0;
}

/* Appends what FD has to BUF (CAP bytes, *N used); a full BUF keeps
 * only its last half, the line that matters being the last. */
static int
drain_err (int *fd, char *buf, size_t cap, size_t *n)
{
  ssize_t r;

  if (*n + 1 >= cap)
    {
      memmove (buf, buf + cap / 2, *n - cap / 2);
      *n -= cap / 2;
    }
  r = read (*fd, buf + *n, cap - 1 - *n);
  if (r <= 0)
    close_fd (fd);
  else
    *n += r;
  return 0;
}

/* Copies the last non-empty line of TEXT (N bytes) into ERR. */
static void
last_line (char *text, size_t n, char *err, size_t err_size)
{
  size_t end = n, start;

  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r'
                     || text[end - 1] == ' '))
    end--;
  start = end;
  while (start > 0 && text[start - 1] != '\n')
    start--;
  snprintf (err, err_size, "%.*s", (int) (end - start), text + start);
}

struct io
{
  const char *input;
  size_t input_bytes, sent;
  char *out;
  size_t out_cap, out_bytes;
  char errtext[1024];
  size_t err_bytes;
  bool overflow;
};

/* One poll round.  Returns 0, or -1 when the time is up. */
static int
pump (struct child *c, struct io *io, long long deadline)
{
  struct pollfd fds[3] = { { c->in, POLLOUT, 0 }, { c->out, POLLIN, 0 },
                           { c->errfd, POLLIN, 0 } };
  long long left = deadline - monotonic_ms ();
  ssize_t r;

  if (io->sent == io->input_bytes)
    close_fd (&c->in), fds[0].fd = -1;
  if (left <= 0 || poll (fds, 3, (int) left) == 0)
    return -1;
  if (fds[0].revents)
    {
      r = send (c->in, io->input + io->sent, io->input_bytes - io->sent,
                MSG_NOSIGNAL | MSG_DONTWAIT);
      if (r > 0)
        io->sent += r;
      else if (errno != EAGAIN && errno != EINTR)
        close_fd (&c->in), io->sent = io->input_bytes;
    }
  if (fds[1].revents)
    {
      if (io->out_bytes == io->out_cap)
        {
          io->overflow = true;
          close_fd (&c->out);
        }
      else if ((r = read (c->out, io->out + io->out_bytes,
                          io->out_cap - io->out_bytes)) <= 0)
        close_fd (&c->out);
      else
        io->out_bytes += r;
    }
  if (fds[2].revents)
    drain_err (&c->errfd, io->errtext, sizeof io->errtext, &io->err_bytes);
  return 0;
}

/* Waits for PID, killed (its whole group) once DEADLINE has passed: a
 * helper that closed its output may still not end.  Returns 0 with
 * *STATUS, or -1 with errno. */
static int
reap (pid_t pid, long long deadline, int *status, bool *timed_out)
{
  const struct timespec tick = { 0, 10 * 1000 * 1000 };
  pid_t w;

  while ((w = waitpid (pid, status, WNOHANG)) == 0)
    {
      if (monotonic_ms () >= deadline && !*timed_out)
        {
          *timed_out = true;
          kill (-pid, SIGKILL);
        }
      nanosleep (&tick, NULL);
    }
  if (w == -1 && errno == EINTR)
    return reap (pid, deadline, status, timed_out);
  return w == -1 ? -1 : 0;
}

int
luks_spawn (const char *const argv[], const char *input, size_t input_bytes,
            char *out, size_t out_cap, size_t *out_bytes, char *err,
            size_t err_size)
{
  struct child c = { -1, -1, -1, -1 };
  struct io io = { .input = input, .input_bytes = input_bytes,
                   .out = out, .out_cap = out_cap };
  long long deadline = monotonic_ms () + LUKS_SPAWN_TIMEOUT_MS;
  bool timed_out = false;
  int status;

  *out_bytes = 0;
  if (start (argv, &c, err, err_size) == -1)
    return -1;
  while (c.out != -1 || c.errfd != -1)
    if (pump (&c, &io, deadline) == -1)
      {
        timed_out = true;
        kill (-c.pid, SIGKILL);
        break;
      }
  close_fd (&c.in), close_fd (&c.out), close_fd (&c.errfd);
  if (reap (c.pid, deadline, &status, &timed_out) == -1)
    {
      snprintf (err, err_size, "cannot wait for %s: %s", argv[0],
                strerror (errno));
      return -1;
    }
  *out_bytes = io.out_bytes;
  if (timed_out)
    snprintf (err, err_size, "%s gave no answer in %d seconds", argv[0],
              LUKS_SPAWN_TIMEOUT_MS / 1000);
  else if (io.overflow)
    snprintf (err, err_size, "%s printed more than %zu bytes", argv[0],
              out_cap);
  else if (!WIFEXITED (status))
    snprintf (err, err_size, "%s was killed by signal %d", argv[0],
              WTERMSIG (status));
  else
    {
      last_line (io.errtext, io.err_bytes, err, err_size);
      return WEXITSTATUS (status);
    }
  return -1;
}
