/* SPDX-License-Identifier: GPL-2.0-or-later */
/* OpenSSL's own memory, kept out of core dumps: see ossl_heap.c.
 * Internal to crypto/. */
#ifndef DMCRYPT_OSSL_HEAP_H
#define DMCRYPT_OSSL_HEAP_H

/* Says through nbdkit_debug whether OpenSSL allocates from the
 * non-dumpable arena, and how much of it is in use. */
void ossl_heap_report (void);

#endif /* DMCRYPT_OSSL_HEAP_H */
