/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control protocol between a running dmcrypt instance and
 * dmcryptctl, over a SOCK_STREAM Unix socket: one request, one reply,
 * then the server closes the connection.
 *
 * A message is a run of text lines "KEY VALUE\n" ended by an empty
 * line.  KEY is 1..CTL_MAX_KEY characters of [a-z0-9_.]; VALUE is
 * everything after the first space up to the newline (it may hold
 * spaces, e.g. a table line, but no newline and no NUL).  A request
 * carries "op NAME"; a reply carries "result 0", or "result -1" with
 * "errno N" and "error TEXT".  docs/control.md lists every field.
 *
 * Messages may hold key material (tables with --showkeys, "key set"),
 * so their buffer lives in locked memory and is wiped when freed.
 * Sizes are bounded: anything longer, malformed or too slow is refused
 * without harm to the reader. */
#ifndef DMCRYPT_CONTROL_PROTO_H
#define DMCRYPT_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_MAX_MESSAGE 65536   /* bytes, the whole message */
#define CTL_MAX_FIELDS  96
#define CTL_MAX_KEY     32      /* bytes */

struct ctl_field
{
  const char *key;
  const char *value;
};

struct ctl_message
{
  char *buf;                    /* secmem, CTL_MAX_MESSAGE + 1 bytes */
  size_t len;                   /* bytes used */
  size_t nfields;
  struct ctl_field field[CTL_MAX_FIELDS];  /* into buf, after parsing */
};

/* Prepares an empty message.  Returns 0, or -1 with errno set. */
int ctl_msg_init (struct ctl_message *m);
/* Wipes and frees the buffer; M may be re-initialised afterwards. */
void ctl_msg_free (struct ctl_message *m);

/* Appends one field.  Returns 0, or -1 with errno EINVAL (bad key, or a
 * newline in the value) or EMSGSIZE. */
int ctl_add (struct ctl_message *m, const char *key, const char *value);
int ctl_addf (struct ctl_message *m, const char *key, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Writes M and its terminating empty line.  Returns 0 or -1 (errno). */
int ctl_send (int fd, struct ctl_message *m);

/* Reads one message from FD into M (initialised), giving up after
 * TIMEOUT_MS milliseconds in all.  Returns 0, or -1 with errno:
 * EMSGSIZE, EPROTO (malformed), ETIMEDOUT, ECONNRESET (closed early). */
int ctl_recv (int fd, struct ctl_message *m, int timeout_ms);

/* Splits M's first LEN bytes (ended by the empty line) into fields, in
 * place.  Returns 0, or -1 with errno EPROTO.  Used by ctl_recv. */
int ctl_parse (struct ctl_message *m);

/* The first value of KEY, or NULL. */
const char *ctl_get (const struct ctl_message *m, const char *key);
/* KEY as "0"/"1"; absent means false. */
bool ctl_get_bool (const struct ctl_message *m, const char *key);
/* KEY as an unsigned decimal.  Returns 0, or -1 (absent or malformed). */
int ctl_get_u64 (const struct ctl_message *m, const char *key,
                 uint64_t *value);

#endif /* DMCRYPT_CONTROL_PROTO_H */
