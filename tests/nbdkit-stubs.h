/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the unit tests' nbdkit stand-ins (nbdkit-stubs.c) kept of the
 * errors reported through them. */
#ifndef DMCRYPT_TEST_NBDKIT_STUBS_H
#define DMCRYPT_TEST_NBDKIT_STUBS_H

/* Forgets the errors so far. */
void stub_errors_reset (void);
/* nbdkit_error calls since the last reset. */
unsigned stub_errors (void);
/* The last error's text ("" after a reset); valid until the next
 * error.  Read it from the thread that caused it. */
const char *stub_last_error (void);

#endif /* DMCRYPT_TEST_NBDKIT_STUBS_H */
