/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the fuzzers share: their entry point, the error log of the
 * nbdkit stand-ins in stubs.c, and a way to stop on a broken rule.
 *
 * Each fuzz-NAME.c defines "int fuzz_NAME (const uint8_t *, size_t)".
 * Built for libFuzzer, FUZZ_ENTRY turns it into LLVMFuzzerTestOneInput;
 * built with FUZZ_REPLAY_ALL (tests/unit/test-fuzz-regressions.c links
 * all of them into one program) it adds nothing. */
#ifndef DMCRYPT_FUZZ_H
#define DMCRYPT_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef FUZZ_REPLAY_ALL
#define FUZZ_ENTRY(fn)
#else
#define FUZZ_ENTRY(fn)                                                  \
  int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);        \
  int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)         \
  {                                                                     \
    return fn (data, size);                                             \
  }
#endif

int fuzz_table (const uint8_t *data, size_t size);
int fuzz_cipher_spec (const uint8_t *data, size_t size);
int fuzz_params (const uint8_t *data, size_t size);
int fuzz_control_proto (const uint8_t *data, size_t size);
int fuzz_fvault2 (const uint8_t *data, size_t size);
int fuzz_tcrypt (const uint8_t *data, size_t size);
int fuzz_cipher_bulk (const uint8_t *data, size_t size);
int fuzz_bitlk (const uint8_t *data, size_t size);
int fuzz_integrity (const uint8_t *data, size_t size);
int fuzz_reencrypt (const uint8_t *data, size_t size);
int fuzz_token (const uint8_t *data, size_t size);

/* An image in memory for the metadata readers: reads beyond SIZE are
 * refused (-1), as a read_fn of luks/fvault2.h or luks/bitlk.h. */
struct fuzz_image
{
  const uint8_t *data;
  size_t size;
};
int fuzz_image_read (void *opaque, void *buf, size_t len, uint64_t offset);
/* A refusal's reason must be there and on one line. */
void fuzz_check_reason (const char *why);

/* Errors reported through the nbdkit_error stand-in since the last
 * fuzz_log_reset: their number, and all of them, each line ended by a
 * newline (truncated to FUZZ_LOG_BYTES). */
#define FUZZ_LOG_BYTES 16384
void fuzz_log_reset (void);
unsigned fuzz_log_errors (void);
const char *fuzz_log_text (void);

/* Whether any error since the reset held a newline of its own.  The
 * contract wants one line per error; user text that holds a newline is
 * echoed as it is, so callers only check inputs without one. */
bool fuzz_log_multiline (void);

/* A rule of the code under test was broken: print WHY and abort, so
 * that libFuzzer keeps the input as a crash. */
void fuzz_fail (const char *why, ...)
  __attribute__ ((noreturn, format (printf, 1, 2)));

/* DATA as a NUL-terminated malloc'd string (a NUL inside ends it);
 * aborts when out of memory. */
char *fuzz_strndup (const uint8_t *data, size_t size);

/* The first SIZE bytes of DATA (N bytes), zeros after its end, in a
 * malloc'd buffer; aborts when out of memory. */
uint8_t *fuzz_padded (const uint8_t *data, size_t n, size_t size);

#endif /* DMCRYPT_FUZZ_H */
