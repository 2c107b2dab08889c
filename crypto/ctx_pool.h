/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Keyed OpenSSL contexts for many threads: a set of template contexts is
 * keyed once, and each thread that asks gets its own copy, made on its
 * first call by copying the expanded key schedules.  Internal to
 * crypto/. */
#ifndef DMCRYPT_CTX_POOL_H
#define DMCRYPT_CTX_POOL_H

#include <openssl/evp.h>

#define CTX_POOL_SLOTS 6

struct ctx_pool;

/* Takes ownership of TEMPLATES (entries may be NULL) even on failure.
 * Returns NULL after nbdkit_error. */
struct ctx_pool *ctx_pool_new (EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS]);

/* Frees the templates and every thread's copies.  No thread may be
 * using the pool at the time. */
void ctx_pool_free (struct ctx_pool *pool);

/* The calling thread's copies, slot for slot as the templates (NULL
 * where the template was NULL).  Lock free after the thread's first
 * call.  Returns NULL with errno set on failure. */
EVP_CIPHER_CTX *const *ctx_pool_get (struct ctx_pool *pool);

#endif /* DMCRYPT_CTX_POOL_H */
