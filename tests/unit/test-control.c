/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control protocol (control/proto.c) and socket names
 * (control/sockdir.c): messages survive a round trip byte for byte, and
 * every malformed, oversized, truncated or silent input is refused with
 * the documented errno. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../control/proto.h"
#include "../../control/sockdir.h"


#include "check.h"

/* Writes RAW (LEN bytes) into one end of a socket pair, closes it if
 * CLOSE, and receives from the other end.  Returns ctl_recv's result,
 * errno in *ERR. */
static int
recv_raw (const char *raw, size_t len, bool close_after,
          struct ctl_message *m, int *err)
{
  int sv[2], r;

  if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) == -1)
    abort ();
  if (len && write (sv[0], raw, len) != (ssize_t) len)
    abort ();
  if (close_after)
    shutdown (sv[0], SHUT_WR);
  r = ctl_recv (sv[1], m, 200);
  *err = errno;
  close (sv[0]);
  close (sv[1]);
  return r;
}

static void
test_round_trip (void)
{
  struct ctl_message out, in;
  uint64_t v;
  int sv[2];

  CHECK (ctl_msg_init (&out) == 0 && ctl_msg_init (&in) == 0);
  CHECK (ctl_add (&out, "op", "status") == 0);
  CHECK (ctl_add (&out, "status", "0 98304 crypt ") == 0);
  CHECK (ctl_addf (&out, "stat.reads", "%d", 42) == 0);
  CHECK (ctl_add (&out, "empty", "") == 0);
  CHECK (ctl_add (&out, "Bad", "x") == -1 && errno == EINVAL);
  CHECK (ctl_add (&out, "bad key", "x") == -1 && errno == EINVAL);
  CHECK (ctl_add (&out, "k", "two\nlines") == -1 && errno == EINVAL);
  CHECK (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  CHECK (ctl_send (sv[0], &out) == 0);
  CHECK (ctl_recv (sv[1], &in, 1000) == 0);
  CHECK (in.nfields == 4);
  CHECK (strcmp (ctl_get (&in, "op"), "status") == 0);
  /* The trailing space of a crypt status line survives. */
  CHECK (strcmp (ctl_get (&in, "status"), "0 98304 crypt ") == 0);
  CHECK (ctl_get_u64 (&in, "stat.reads", &v) == 0 && v == 42);
  CHECK (strcmp (ctl_get (&in, "empty"), "") == 0);
  CHECK (ctl_get (&in, "missing") == NULL);
  CHECK (!ctl_get_bool (&in, "missing"));
  close (sv[0]);
  close (sv[1]);
  ctl_msg_free (&out);
  ctl_msg_free (&in);
}

static void
test_size_limits (void)
{
  struct ctl_message m;
  char *big = malloc (CTL_MAX_MESSAGE);
  int i, n = 0;

  CHECK (ctl_msg_init (&m) == 0);
  memset (big, 'x', CTL_MAX_MESSAGE - 1);
  big[CTL_MAX_MESSAGE - 1] = '\0';
  CHECK (ctl_add (&m, "k", big) == -1 && errno == EMSGSIZE);
  CHECK (m.len == 0);
  for (i = 0; i < 100000 && ctl_add (&m, "k", "1234567890") == 0; i++)
    n++;
  CHECK (errno == EMSGSIZE && m.len < CTL_MAX_MESSAGE && n > 1000);
  ctl_msg_free (&m);
  free (big);
}

static void
test_malformed (void)
{
  struct ctl_message m;
  char *flood = malloc (CTL_MAX_MESSAGE + 100);
  char fields[CTL_MAX_FIELDS * 4 + 16];
  uint64_t v;
  int err, i;

  CHECK (ctl_msg_init (&m) == 0);
  CHECK (recv_raw ("op info\n\n", 9, true, &m, &err) == 0);
  CHECK (recv_raw ("\n", 1, true, &m, &err) == 0 && m.nfields == 0);
  CHECK (recv_raw ("OP info\n\n", 9, true, &m, &err) == -1
         && err == EPROTO);
  CHECK (recv_raw ("op\0info\n\n", 9, true, &m, &err) == -1
         && err == EPROTO);
  CHECK (recv_raw (" x\n\n", 4, true, &m, &err) == -1 && err == EPROTO);
  CHECK (recv_raw ("op info\n", 8, true, &m, &err) == -1
         && err == ECONNRESET);
  CHECK (recv_raw ("", 0, true, &m, &err) == -1 && err == ECONNRESET);
  /* Nothing sent, connection open: the deadline ends the wait. */
  CHECK (recv_raw ("op info", 7, false, &m, &err) == -1
         && err == ETIMEDOUT);
  memset (flood, 'a', CTL_MAX_MESSAGE + 100);
  CHECK (recv_raw (flood, CTL_MAX_MESSAGE + 100, true, &m, &err) == -1
         && err == EMSGSIZE);
  for (i = 0; i <= CTL_MAX_FIELDS; i++)
    memcpy (fields + 4 * i, "k v\n", 4);
  fields[4 * i] = '\n';
  CHECK (recv_raw (fields, 4 * i + 1, true, &m, &err) == -1
         && err == EPROTO);
  /* Bytes after the empty line are not part of the message. */
  CHECK (recv_raw ("a 1\n\nb 2\n\n", 10, true, &m, &err) == 0
         && m.nfields == 1);
  CHECK (recv_raw ("n 18446744073709551616\n\n", 25, true, &m, &err) == 0
         && ctl_get_u64 (&m, "n", &v) == -1);
  CHECK (recv_raw ("n -1\n\n", 6, true, &m, &err) == 0
         && ctl_get_u64 (&m, "n", &v) == -1);
  ctl_msg_free (&m);
  free (flood);
}

static void
test_names (void)
{
  char path[200], longname[CTL_MAX_NAME + 2];

  CHECK (ctl_name_valid ("ro1"));
  CHECK (ctl_name_valid ("disk-one_2.x"));
  CHECK (!ctl_name_valid (""));
  CHECK (!ctl_name_valid (".hidden"));
  CHECK (!ctl_name_valid ("a/b"));
  CHECK (!ctl_name_valid ("a b"));
  CHECK (!ctl_name_valid ("tab\t"));
  memset (longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK (!ctl_name_valid (longname));
  longname[CTL_MAX_NAME] = '\0';
  CHECK (ctl_name_valid (longname));
  CHECK (ctl_socket_path ("/run/dmcrypt", "ro1", path, sizeof path) == 0);
  CHECK (strcmp (path, "/run/dmcrypt/ro1.sock") == 0);
  /* A Unix socket address holds 108 bytes. */
  CHECK (ctl_socket_path ("/run/dmcrypt", longname, path, sizeof path) == -1
         && errno == ENAMETOOLONG);
}

int
main (void)
{
  test_round_trip ();
  test_size_limits ();
  test_malformed ();
  test_names ();
  if (failures) {
    fprintf (stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf ("control protocol: all checks passed\n");
  return 0;
}
