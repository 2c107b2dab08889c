/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory for key material: locked (mlock), kept out of core dumps
 * (MADV_DONTDUMP) and wiped (explicit_bzero) when freed. */
#ifndef DMCRYPT_SECMEM_H
#define DMCRYPT_SECMEM_H

#include <stddef.h>

/* Returns zeroed memory of SIZE bytes, or NULL with errno set.  Locking
 * is best effort: an unprivileged user over RLIMIT_MEMLOCK still gets
 * the memory, excluded from core dumps. */
void *secmem_alloc (size_t size);

/* Wipes SIZE bytes at PTR and releases them.  PTR may be NULL. */
void secmem_free (void *ptr, size_t size);

/* Duplicate SIZE bytes into a new secmem allocation. */
void *secmem_dup (const void *src, size_t size);

#endif /* DMCRYPT_SECMEM_H */
