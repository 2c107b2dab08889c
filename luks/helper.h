/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running a helper program with pipes, no shell (spawn.c). */
#ifndef DMCRYPT_LUKS_HELPER_H
#define DMCRYPT_LUKS_HELPER_H

#include <stdbool.h>
#include <stddef.h>

/* A helper that has not finished by then is killed: a network pin
 * (Tang) whose server never answers must not hang the open. */
#define LUKS_SPAWN_TIMEOUT_MS 120000

/* Runs ARGV (ARGV[0] found on PATH; NULL-terminated) with INPUT_BYTES
 * of INPUT on its stdin, at most OUT_CAP bytes of its stdout into OUT
 * (*OUT_BYTES of them).  Returns its exit status, with the last line
 * it wrote to stderr in ERR (ERR_SIZE bytes; "" when none); or -1 with
 * why in ERR: it could not run ("not installed"), was killed, timed
 * out, or printed more than OUT_CAP bytes. */
int luks_spawn (const char *const argv[], const char *input,
                size_t input_bytes, char *out, size_t out_cap,
                size_t *out_bytes, char *err, size_t err_size);

#endif /* DMCRYPT_LUKS_HELPER_H */
