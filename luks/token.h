/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A LUKS token's JSON (LUKS2) or a Clevis luksmeta binding (LUKS1), as
 * the header holds it, read into what to run: Clevis's own "clevis
 * decrypt" with a compact JWE, or libcryptsetup's token API (its
 * built-in luks2-keyring and its external plugins, systemd-tpm2,
 * systemd-fido2, systemd-pkcs11).  No I/O: the fuzz target reaches it
 * with hostile text. */
#ifndef DMCRYPT_LUKS_TOKEN_H
#define DMCRYPT_LUKS_TOKEN_H

#include <stddef.h>
#include <stdint.h>

/* Clevis's luksmeta UUID for its LUKS1 bindings
 * (clevis-luks-common-functions, CLEVIS_UUID). */
#define CLEVIS_LUKSMETA_UUID "cb6e8904-81ff-40da-a84a-07ab9ab5715e"

/* LUKS2 metadata is at most 4 MiB less the binary header; a token's
 * JSON in it can be no longer (LUKS2_HDR_OFFSET_MAX, cryptsetup 2.6). */
#define LUKS_TOKEN_JSON_MAX (4u * 1024 * 1024)

enum luks_token_way
{
  LUKS_TOKEN_CLEVIS,     /* clevis decrypt < jwe: the keyslots' passphrase */
  LUKS_TOKEN_LIBRARY,    /* crypt_keyslot_context_init_by_token */
};

struct luks_token_plan
{
  enum luks_token_way way;
  char type[64];         /* the token's "type" */
  uint32_t keyslots;     /* bit N: the token names keyslot N */
  char *jwe;             /* LUKS_TOKEN_CLEVIS: the compact JWE that
                            clevis decrypt reads, malloc'd; else NULL */
};

/* Reads JSON (JSON_BYTES, no NUL needed), a LUKS2 token, into PLAN.
 * Returns 0, or -1 with why in ERR (ERR_SIZE bytes) and PLAN empty. */
int luks_token_plan (const char *json, size_t json_bytes,
                     struct luks_token_plan *plan, char *err,
                     size_t err_size);

/* A LUKS1 Clevis binding: the luksmeta data of slot SLOT (DATA,
 * DATA_BYTES), which clevis luks bind saves as a compact JWE, into
 * PLAN.  Returns 0, or -1 with ERR. */
int luks_token_plan_luksmeta (const char *data, size_t data_bytes, int slot,
                              struct luks_token_plan *plan, char *err,
                              size_t err_size);

void luks_token_plan_free (struct luks_token_plan *plan);

#endif /* DMCRYPT_LUKS_TOKEN_H */
