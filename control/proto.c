/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control protocol's messages: build, send, receive, parse. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../crypto/secmem.h"
#include "proto.h"

#define BUF_SIZE (CTL_MAX_MESSAGE + 1)     /* room for a final NUL */

int
ctl_msg_init (struct ctl_message *m)
{
  memset (m, 0, sizeof *m);
  m->buf = secmem_alloc (BUF_SIZE);
  return m->buf ? 0 : -1;
}

void
ctl_msg_free (struct ctl_message *m)
{
  secmem_free (m->buf, BUF_SIZE);
  memset (m, 0, sizeof *m);
}

static bool
valid_key (const char *key, size_t len)
{
  size_t i;

  if (len == 0 || len > CTL_MAX_KEY)
    return false;
  for (i = 0; i < len; i++)
    if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9')
          || key[i] == '_' || key[i] == '.'))
      return false;
  return true;
}

int
ctl_add (struct ctl_message *m, const char *key, const char *value)
{
  size_t klen = strlen (key), vlen = strlen (value);

  if (!valid_key (key, klen) || memchr (value, '\n', vlen)) {
    errno = EINVAL;
    return -1;
  }
  /* key, space, value, newline; one byte kept for the final newline. */
  if (klen + vlen + 2 > CTL_MAX_MESSAGE - 1 - m->len) {
    errno = EMSGSIZE;
    return -1;
  }
  memcpy (m->buf + m->len, key, klen);
  m->buf[m->len + klen] = ' ';
  memcpy (m->buf + m->len + klen + 1, value, vlen);
  m->len += klen + vlen + 2;
  m->buf[m->len - 1] = '\n';
  return 0;
}

int
ctl_addf (struct ctl_message *m, const char *key, const char *fmt, ...)
{
  char value[1024];
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (value, sizeof value, fmt, ap);
  va_end (ap);
  if (n < 0 || (size_t) n >= sizeof value) {
    errno = EMSGSIZE;
    return -1;
  }
  return ctl_add (m, key, value);
}

int
ctl_send (int fd, struct ctl_message *m)
{
  size_t done = 0;
  ssize_t r;

  m->buf[m->len++] = '\n';            /* the empty line that ends it */
  while (done < m->len) {
    r = send (fd, m->buf + done, m->len - done, MSG_NOSIGNAL);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      m->len--;
      return -1;
    }
    done += r;
  }
  m->len--;
  return 0;
}

/* Offset just past the empty line that ends a message in BUF[0..LEN),
 * searching from FROM; 0 if there is none yet. */
static size_t
find_end (const char *buf, size_t len, size_t from)
{
  size_t i;

  if (len > 0 && buf[0] == '\n')
    return 1;
  for (i = from ? from - 1 : 0; i + 1 < len; i++)
    if (buf[i] == '\n' && buf[i + 1] == '\n')
      return i + 2;
  return 0;
}

static int
wait_readable (int fd, long long deadline)
{
  struct pollfd pfd = { .fd = fd, .events = POLLIN };
  long long left = deadline - monotonic_ms ();
  int r;

  if (left <= 0) {
    errno = ETIMEDOUT;
    return -1;
  }
  r = poll (&pfd, 1, left > 60000 ? 60000 : (int) left);
  if (r == 0)
    errno = ETIMEDOUT;
  return r > 0 ? 0 : r == 0 || errno != EINTR ? -1 : 0;
}

int
ctl_recv (int fd, struct ctl_message *m, int timeout_ms)
{
  long long deadline = monotonic_ms () + timeout_ms;
  size_t end = 0;
  ssize_t r;

  m->len = 0;
  m->nfields = 0;
  while (end == 0) {
    if (m->len == CTL_MAX_MESSAGE) {
      errno = EMSGSIZE;
      return -1;
    }
    if (wait_readable (fd, deadline) == -1)
      return -1;
    r = recv (fd, m->buf + m->len, CTL_MAX_MESSAGE - m->len, MSG_DONTWAIT);
    if (r == -1 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (r == -1)
      return -1;
    if (r == 0) {
      errno = ECONNRESET;
      return -1;
    }
    end = find_end (m->buf, m->len + r, m->len);
    m->len += r;
  }
  m->len = end;               /* bytes after the message are ignored */
  return ctl_parse (m);
}

int
ctl_parse (struct ctl_message *m)
{
  char *line = m->buf, *stop = m->buf + m->len, *nl, *sp;

  m->nfields = 0;
  while (line < stop && *line != '\n') {
    nl = memchr (line, '\n', stop - line);
    if (nl == NULL || m->nfields == CTL_MAX_FIELDS
        || memchr (line, '\0', nl - line))
      goto bad;
    *nl = '\0';
    sp = strchr (line, ' ');
    if (!valid_key (line, sp ? (size_t) (sp - line) : strlen (line)))
      goto bad;
    if (sp)
      *sp = '\0';
    m->field[m->nfields].key = line;
    m->field[m->nfields].value = sp ? sp + 1 : nl;
    m->nfields++;
    line = nl + 1;
  }
  return 0;

 bad:
  m->nfields = 0;
  errno = EPROTO;
  return -1;
}

const char *
ctl_get (const struct ctl_message *m, const char *key)
{
  size_t i;

  for (i = 0; i < m->nfields; i++)
    if (strcmp (m->field[i].key, key) == 0)
      return m->field[i].value;
  return NULL;
}

bool
ctl_get_bool (const struct ctl_message *m, const char *key)
{
  const char *v = ctl_get (m, key);

  return v && strcmp (v, "1") == 0;
}

int
ctl_get_u64 (const struct ctl_message *m, const char *key, uint64_t *value)
{
  const char *v = ctl_get (m, key);
  uint64_t n = 0;

  if (v == NULL || *v == '\0')
    return -1;
  for (; *v; v++) {
    if (*v < '0' || *v > '9' || n > (UINT64_MAX - (*v - '0')) / 10)
      return -1;
    n = n * 10 + (*v - '0');
  }
  *value = n;
  return 0;
}
