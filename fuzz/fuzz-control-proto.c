/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the control socket's message decoder (control/proto.c): the
 * input is what a client sends, received with ctl_recv from a socket.
 *
 * Byte 0 picks how the bytes arrive: 0 as one stream write, N > 0 as
 * records of N bytes on a SOCK_SEQPACKET pair, so that a message split
 * anywhere (the empty line across two reads) is received too.
 *
 * Rules checked beyond "no crash, no leak":
 *   - the outcome and the fields equal those of a small independent
 *     reading of docs/control.md's grammar (model_read below);
 *   - the fields, sent again with ctl_add and ctl_send, come back the
 *     same through ctl_recv;
 *   - ctl_get_u64 agrees with a plain decimal reading. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../control/proto.h"
#include "fuzz.h"

enum { TIMEOUT_MS = 2000, MAX_RECORDS = 200 };

struct model
{
  int error;                    /* 0, EMSGSIZE, EPROTO or ECONNRESET */
  size_t nfields;
  size_t key_at[CTL_MAX_FIELDS], key_len[CTL_MAX_FIELDS];
  size_t value_at[CTL_MAX_FIELDS], value_len[CTL_MAX_FIELDS];
};

static bool
key_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
    || c == '.';
}

/* Where the message in D[0..N) ends (just past its empty line), or 0. */
static size_t
model_end (const char *d, size_t n)
{
  size_t i;

  if (n > 0 && d[0] == '\n')
    return 1;
  for (i = 0; i + 1 < n; i++)
    if (d[i] == '\n' && d[i + 1] == '\n')
      return i + 2;
  return 0;
}

/* One line D[0..LEN) as a field.  Returns false when malformed. */
static bool
model_line (const char *d, size_t at, size_t len, struct model *m)
{
  const char *line = d + at, *space = memchr (line, ' ', len);
  size_t key_len = space ? (size_t) (space - line) : len, i;

  if (memchr (line, '\0', len) || key_len == 0 || key_len > CTL_MAX_KEY
      || m->nfields == CTL_MAX_FIELDS)
    return false;
  for (i = 0; i < key_len; i++)
    if (!key_char (line[i]))
      return false;
  m->key_at[m->nfields] = at;
  m->key_len[m->nfields] = key_len;
  m->value_at[m->nfields] = space ? at + key_len + 1 : at + len;
  m->value_len[m->nfields] = space ? len - key_len - 1 : 0;
  m->nfields++;
  return true;
}

static void
model_read (const char *d, size_t n, struct model *m)
{
  size_t readable = n < CTL_MAX_MESSAGE ? n : CTL_MAX_MESSAGE;
  size_t end = model_end (d, readable), at, nl;

  memset (m, 0, sizeof *m);
  if (end == 0) {
    m->error = n >= CTL_MAX_MESSAGE ? EMSGSIZE : ECONNRESET;
    return;
  }
  for (at = 0; d[at] != '\n'; at = nl + 1) {
    nl = at;
    while (d[nl] != '\n')
      nl++;
    if (!model_line (d, at, nl - at, m)) {
      m->nfields = 0;
      m->error = EPROTO;
      return;
    }
  }
}

/* Sends D[0..N) to one end of a new socket pair in the chosen way,
 * closes it, and returns the other end. */
static int
deliver (const char *d, size_t n, size_t record_bytes)
{
  int sv[2], type = record_bytes ? SOCK_SEQPACKET : SOCK_STREAM;
  size_t done = 0, len;
  ssize_t r;

  if (socketpair (AF_UNIX, type, 0, sv) == -1)
    fuzz_fail ("socketpair: %s", strerror (errno));
  fcntl (sv[0], F_SETFL, O_NONBLOCK);
  while (done < n) {
    len = record_bytes && record_bytes < n - done ? record_bytes : n - done;
    r = send (sv[0], d + done, len, MSG_NOSIGNAL);
    if (r <= 0)
      fuzz_fail ("cannot queue %zu bytes of input: %s", n,
                 strerror (errno));
    done += r;
  }
  close (sv[0]);
  return sv[1];
}

static bool
field_is (const struct ctl_message *m, size_t i, const char *d,
          const struct model *o)
{
  return strlen (m->field[i].key) == o->key_len[i]
    && memcmp (m->field[i].key, d + o->key_at[i], o->key_len[i]) == 0
    && strlen (m->field[i].value) == o->value_len[i]
    && memcmp (m->field[i].value, d + o->value_at[i], o->value_len[i]) == 0;
}

static void
check_u64 (const struct ctl_message *m, const char *key)
{
  const char *v = ctl_get (m, key);
  uint64_t got, want = 0;
  bool ok = v && *v;
  const char *p;

  for (p = v; ok && *p; p++) {
    if (*p < '0' || *p > '9' || want > (UINT64_MAX - (*p - '0')) / 10)
      ok = false;
    else
      want = want * 10 + (*p - '0');
  }
  if ((ctl_get_u64 (m, key, &got) == 0) != ok || (ok && got != want))
    fuzz_fail ("ctl_get_u64 (%s) disagrees with a decimal reading", key);
}

/* The fields of M sent again: the receiver must see the same ones. */
static void
check_resend (const struct ctl_message *m)
{
  struct ctl_message out, back;
  int sv[2];
  size_t i;

  if (ctl_msg_init (&out) == -1 || ctl_msg_init (&back) == -1)
    fuzz_fail ("ctl_msg_init: %s", strerror (errno));
  for (i = 0; i < m->nfields; i++)
    if (ctl_add (&out, m->field[i].key, m->field[i].value) == -1) {
      if (errno != EMSGSIZE)    /* key-only lines grow by a space */
        fuzz_fail ("ctl_add refused a received field");
      goto out;
    }
  if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) == -1)
    fuzz_fail ("socketpair: %s", strerror (errno));
  if (ctl_send (sv[0], &out) == -1)
    fuzz_fail ("ctl_send: %s", strerror (errno));
  close (sv[0]);
  if (ctl_recv (sv[1], &back, TIMEOUT_MS) == -1)
    fuzz_fail ("a resent message was refused: %s", strerror (errno));
  close (sv[1]);
  if (back.nfields != m->nfields)
    fuzz_fail ("resent: %zu fields, not %zu", back.nfields, m->nfields);
  for (i = 0; i < m->nfields; i++)
    if (strcmp (back.field[i].key, m->field[i].key) != 0
        || strcmp (back.field[i].value, m->field[i].value) != 0)
      fuzz_fail ("resent field %zu differs", i);
 out:
  ctl_msg_free (&out);
  ctl_msg_free (&back);
}

int
fuzz_control_proto (const uint8_t *data, size_t size)
{
  const char *d = (const char *) data + 1;
  size_t n = size - 1, record_bytes, i;
  struct ctl_message m;
  struct model o;
  int fd, r;

  if (size < 1)
    return 0;
  if (n > CTL_MAX_MESSAGE + 4096)   /* what a socket buffer surely holds */
    n = CTL_MAX_MESSAGE + 4096;
  /* Records are capped in number (each costs socket buffer) and the
   * record form in size: a record beyond the buffer would be cut. */
  record_bytes = data[0];
  if (record_bytes && (n + MAX_RECORDS - 1) / MAX_RECORDS > record_bytes)
    record_bytes = (n + MAX_RECORDS - 1) / MAX_RECORDS;
  if (n > CTL_MAX_MESSAGE)
    record_bytes = 0;
  model_read (d, n, &o);
  if (ctl_msg_init (&m) == -1)
    fuzz_fail ("ctl_msg_init: %s", strerror (errno));
  fd = deliver (d, n, record_bytes);
  errno = 0;
  r = ctl_recv (fd, &m, TIMEOUT_MS);
  close (fd);
  if (r == -1 && errno != o.error)
    fuzz_fail ("ctl_recv failed with \"%s\", the model says \"%s\"",
               strerror (errno), strerror (o.error));
  if (r == 0 && o.error != 0)
    fuzz_fail ("ctl_recv accepted, the model says \"%s\"",
               strerror (o.error));
  if (r == 0) {
    if (m.nfields != o.nfields)
      fuzz_fail ("%zu fields, the model says %zu", m.nfields, o.nfields);
    for (i = 0; i < m.nfields; i++) {
      if (!field_is (&m, i, d, &o))
        fuzz_fail ("field %zu differs from the model", i);
      check_u64 (&m, m.field[i].key);
      (void) ctl_get_bool (&m, m.field[i].key);
    }
    check_resend (&m);
  }
  ctl_msg_free (&m);
  return 0;
}

FUZZ_ENTRY (fuzz_control_proto)
