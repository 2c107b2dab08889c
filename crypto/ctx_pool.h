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

/* The same with a keyed MAC context besides (owned likewise), of which
 * each thread gets its copy too. */
struct ctx_pool *ctx_pool_new_mac (EVP_CIPHER_CTX *templates[CTX_POOL_SLOTS],
                                   EVP_MAC_CTX *mac_template);

/* Frees the templates and every thread's copies.  No thread may be
 * using the pool at the time. */
void ctx_pool_free (struct ctx_pool *pool);

/* The calling thread's copies, slot for slot as the templates (NULL
 * where the template was NULL).  Lock free after the thread's first
 * call.  Returns NULL with errno set on failure. */
EVP_CIPHER_CTX *const *ctx_pool_get (struct ctx_pool *pool);

/* The calling thread's copy of the MAC template (ctx_pool_new_mac), as
 * ctx_pool_get; NULL with errno set on failure or without one.  The
 * copy keeps its key: EVP_MAC_init with a NULL key starts it over. */
EVP_MAC_CTX *ctx_pool_get_mac (struct ctx_pool *pool);

#endif /* DMCRYPT_CTX_POOL_H */
