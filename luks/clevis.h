/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Clevis's tools: clevis decrypt, and luksmeta for LUKS1 (clevis.c). */
#ifndef DMCRYPT_LUKS_CLEVIS_H
#define DMCRYPT_LUKS_CLEVIS_H

#include <stddef.h>
#include <stdint.h>

/* clevis luks bind makes a 256-bit passphrase (pwmake), printed in
 * some 40 to 60 characters: far under this. */
#define CLEVIS_PASS_MAX 4096

/* "clevis decrypt" given JWE (compact form, NUL-terminated): the
 * passphrase it prints into *PASS (secmem, NUL-terminated; free with
 * clevis_pass_free), *PASS_BYTES long.  Returns 0, or -1 with why in
 * WHY (clevis's own last line when it said one). */
int clevis_decrypt (const char *jwe, char **pass, size_t *pass_bytes,
                    char *why, size_t why_size);
void clevis_pass_free (char *pass);

/* LUKS1: the keyslots whose luksmeta slot holds a Clevis binding, as a
 * mask (0 when PATH has no luksmeta area).  Returns 0, or -1 with
 * WHY. */
int clevis_luksmeta_slots (const char *path, uint32_t *slots, char *why,
                           size_t why_size);
/* The data of Clevis's binding in luksmeta slot SLOT of PATH into
 * *DATA (malloc'd, *DATA_BYTES long, not NUL-terminated).  Returns 0,
 * or -1 with WHY. */
int clevis_luksmeta_load (const char *path, int slot, char **data,
                          size_t *data_bytes, char *why, size_t why_size);

#endif /* DMCRYPT_LUKS_CLEVIS_H */
