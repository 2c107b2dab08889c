/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The volume key as cryptsetup open finds it (src/cryptsetup.c
 * action_open_luks, 2.6.1): the header's tokens first, in the order of
 * their ids (LUKS2_token_open_and_activate, lib/luks2/luks2_token.c),
 * then the passphrase or key file unless --token-only.  A LUKS2
 * "clevis" token is Clevis's: its JWE goes to clevis decrypt and the
 * passphrase printed opens the keyslots the token names.  Any other
 * type goes through libcryptsetup's own token API, which runs its
 * built-in luks2-keyring and the external plugins it finds
 * (systemd-tpm2, systemd-fido2, systemd-pkcs11).  LUKS1 has no tokens:
 * Clevis keeps its bindings in luksmeta slots, one a keyslot. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libcryptsetup.h>

#include "../common/log.h"
#include "clevis.h"
#include "internal.h"
#include "token.h"

#define TOKENS_MAX 32           /* LUKS2_TOKENS_MAX, cryptsetup 2.6 */
#define WHY_SIZE 256

/* The tokens tried so far; the last failure is said when the next
 * attempt starts, or by the final error when nothing follows. */
struct tried
{
  const struct luks_unlock_params *p;
  int count;
  char last[64 + WHY_SIZE];     /* "token 0 (clevis): why" */
  uint32_t luksmeta_slots;      /* LUKS1: Clevis's, for messages */
};

static const char *
header_name (const struct luks_unlock_params *p)
{
  return p->header_path ? p->header_path : luks_data_name (p);
}

static void
say (const struct luks_unlock_params *p, const char *line)
{
  if (p->notice)
    p->notice ("%s", line);
  else
    nbdkit_debug ("%s", line);
}

static void
attempt (struct tried *tried, const char *label)
{
  if (tried->count++ > 0)
    say (tried->p, tried->last);
  snprintf (tried->last, sizeof tried->last, "%s", label);
}

static void
failed (struct tried *tried, const char *why)
{
  size_t n = strlen (tried->last);

  snprintf (tried->last + n, sizeof tried->last - n, " cannot unlock: %s",
            why);
}

/* The passphrase Clevis gives opens the keyslots PLAN names.  Returns
 * the slot, -2 with WHY, or -1 after nbdkit_error. */
static int
unlock_clevis (struct crypt_device *cd, const struct luks_unlock_params *p,
               const struct luks_token_plan *plan, struct crypt_table *t,
               char *why)
{
  size_t pass_bytes, key_size;
  char *pass;
  int slot, r = -EPERM;

  if (clevis_decrypt (plan->jwe, &pass, &pass_bytes, why, WHY_SIZE) == -1)
    return -2;
  for (slot = 0; slot < TOKENS_MAX && r < 0 && r != LUKS_KEY_REPORTED;
       slot++)
    {
      if (!(plan->keyslots & (UINT32_C (1) << slot))
          || (crypt_keyslot_status (cd, slot) != CRYPT_SLOT_ACTIVE
              && crypt_keyslot_status (cd, slot) != CRYPT_SLOT_ACTIVE_LAST))
        continue;
      key_size = t->key_size;
      r = luks_key_by_secret (cd, p, slot, pass, pass_bytes, t->key,
                              &key_size);
      if (r >= 0 && key_size != t->key_size)
        r = -EINVAL;
    }
  clevis_pass_free (pass);
  if (r == LUKS_KEY_REPORTED)
    return -1;
  if (r >= 0)
    return r;
  snprintf (why, WHY_SIZE, "the passphrase clevis decrypt gave opens none "
            "of the token's keyslots");
  return -2;
}

/* libcryptsetup's words for its token errors (crypt_activate_by_token_pin
 * in libcryptsetup.h, 2.6.1; tools_token_error_msg, src/utils_tools.c). */
static void
library_why (int r, const char *type, char *why)
{
  const char *log = luks_log_last_error ();

  if (r == -ENOANO)
    snprintf (why, WHY_SIZE, "it needs a PIN, which dmcrypt does not ask "
              "for (give passphrase= or keyfile=)");
  else if (r == -EAGAIN)
    snprintf (why, WHY_SIZE, "a device or resource it needs is missing "
              "(no TPM, security key or smart card?)%s%s",
              log ? ": " : "", log ? log : "");
  else if (r == -EPERM)
    snprintf (why, WHY_SIZE, "its keyslots did not accept what it gave");
  else if (r == -ENOENT && crypt_token_external_path () == NULL)
    snprintf (why, WHY_SIZE, "this libcryptsetup loads no token plugins");
  else if (r == -ENOENT)
    snprintf (why, WHY_SIZE, "no libcryptsetup plugin for type %s "
              "(libcryptsetup-token-%s.so in %s)", type, type,
              crypt_token_external_path ());
  else
    snprintf (why, WHY_SIZE, "%s", log ? log : strerror (-r));
}

/* Returns the slot, -2 with WHY, or -1 after nbdkit_error. */
static int
unlock_library (struct crypt_device *cd, int id, const char *type,
                struct crypt_table *t, char *why)
{
  struct crypt_keyslot_context *kc = NULL;
  size_t key_size = t->key_size;
  int r;

  if (crypt_token_status (cd, id, NULL) == CRYPT_TOKEN_EXTERNAL_UNKNOWN)
    {
      library_why (-ENOENT, type, why);
      return -2;
    }
  r = crypt_keyslot_context_init_by_token (cd, id, NULL, NULL, 0, NULL,
                                           &kc);
  if (r == 0)
    r = crypt_volume_key_get_by_keyslot_context (cd, CRYPT_ANY_SLOT,
                                                 (char *) t->key,
                                                 &key_size, kc);
  crypt_keyslot_context_free (kc);
  if (r >= 0 && key_size != t->key_size)
    r = -EINVAL;
  if (r >= 0)
    return r;
  library_why (r, type, why);
  return -2;
}

/* LUKS2 token ID: returns the slot, -2 when it failed (said in
 * TRIED), -1 after nbdkit_error. */
static int
try_luks2_token (struct crypt_device *cd, const struct luks_unlock_params *p,
                 int id, const char *type, struct crypt_table *t,
                 struct tried *tried)
{
  struct luks_token_plan plan;
  const char *json = NULL;
  char label[64], why[WHY_SIZE];
  int r = -2;

  snprintf (label, sizeof label, "token %d (%s)", id, type);
  attempt (tried, label);
  if (crypt_token_json_get (cd, id, &json) < 0 || json == NULL)
    snprintf (why, sizeof why, "its JSON cannot be read");
  else if (luks_token_plan (json, strlen (json), &plan, why, sizeof why)
           == 0)
    {
      if (plan.keyslots == 0)
        snprintf (why, sizeof why, "it is assigned to no keyslot");
      else if (plan.way == LUKS_TOKEN_CLEVIS)
        r = unlock_clevis (cd, p, &plan, t, why);
      else
        r = unlock_library (cd, id, type, t, why);
      luks_token_plan_free (&plan);
    }
  if (r != -2)
    return r;
  failed (tried, why);
  return -2;
}

static int
luks2_tokens (struct crypt_device *cd, const struct luks_unlock_params *p,
              struct crypt_table *t, struct tried *tried)
{
  const char *type;
  crypt_token_info status;
  int id, r;

  for (id = 0; id < TOKENS_MAX; id++)
    {
      if (p->token_id_given && id != p->token_id)
        continue;
      status = crypt_token_status (cd, id, &type);
      if (status == CRYPT_TOKEN_INVALID || status == CRYPT_TOKEN_INACTIVE
          || type == NULL
          || (p->token_type && strcmp (type, p->token_type) != 0))
        continue;
      r = try_luks2_token (cd, p, id, type, t, tried);
      if (r != -2)
        return r;
    }
  return -2;
}

/* One LUKS1 Clevis binding, luksmeta slot SLOT of PATH. */
static int
try_luksmeta_slot (struct crypt_device *cd,
                   const struct luks_unlock_params *p, const char *path,
                   int slot, struct crypt_table *t, struct tried *tried)
{
  struct luks_token_plan plan;
  char label[64], why[WHY_SIZE], *data;
  size_t n;
  int r = -2;

  snprintf (label, sizeof label, "luksmeta slot %d (clevis)", slot);
  attempt (tried, label);
  if (clevis_luksmeta_load (path, slot, &data, &n, why, sizeof why) == 0)
    {
      if (luks_token_plan_luksmeta (data, n, slot, &plan, why, sizeof why)
          == 0)
        {
          r = unlock_clevis (cd, p, &plan, t, why);
          luks_token_plan_free (&plan);
        }
      free (data);
    }
  if (r == -2)
    failed (tried, why);
  return r;
}

static int
luks1_clevis (struct crypt_device *cd, const struct luks_unlock_params *p,
              struct crypt_table *t, struct tried *tried)
{
  const char *path = p->header_path ? p->header_path : p->data_path;
  char why[WHY_SIZE];
  uint32_t slots;
  int slot, r;

  if (p->token_type && strcmp (p->token_type, "clevis") != 0)
    return -2;
  if (clevis_luksmeta_slots (path, &slots, why, sizeof why) == -1)
    {
      attempt (tried, "LUKS1 Clevis bindings");
      snprintf (tried->last, sizeof tried->last, "LUKS1 Clevis bindings "
                "cannot be read: %s", why);
      return -2;
    }
  tried->luksmeta_slots = slots;
  for (slot = 0; slot < 8; slot++)
    if ((slots & (UINT32_C (1) << slot))
        && (!p->token_id_given || slot == p->token_id))
      {
        r = try_luksmeta_slot (cd, p, path, slot, t, tried);
        if (r != -2)
          return r;
      }
  return -2;
}

/* The ids of the LUKS2 header's tokens with their types ("0 clevis, 1
 * systemd-tpm2"), or "none", for messages. */
static void
token_list (struct crypt_device *cd, char *buf, size_t size)
{
  const char *type;
  size_t n = 0;
  int id;

  buf[0] = '\0';
  for (id = 0; id < TOKENS_MAX && n < size; id++)
    if (crypt_token_status (cd, id, &type) > CRYPT_TOKEN_INACTIVE && type)
      n += snprintf (buf + n, size - n, "%s%d %s", n ? ", " : "", id, type);
  if (buf[0] == '\0')
    snprintf (buf, size, "none");
}

/* Nothing tried: no token the parameters allow. */
static void
report_no_token (struct crypt_device *cd, const struct luks_unlock_params *p,
                 bool luks1, uint32_t luksmeta_slots)
{
  char list[512];
  size_t n;
  int slot;

  if (luks1)
    {
      n = snprintf (list, sizeof list, "LUKS1 Clevis bindings in luksmeta "
                    "slots:%s", luksmeta_slots ? "" : " none");
      for (slot = 0; slot < 8; slot++)
        if (luksmeta_slots & (UINT32_C (1) << slot))
          n += snprintf (list + n, sizeof list - n, " %d", slot);
    }
  else
    {
      memcpy (list, "tokens: ", 9);
      token_list (cd, list + 8, sizeof list - 8);
    }
  if (p->token_id_given)
    nbdkit_error ("%s: token-id=%d: no such token (%s)",
                  header_name (p), p->token_id, list);
  else if (p->token_type)
    nbdkit_error ("%s: token-type=%s: no token of that type (%s)",
                  header_name (p), p->token_type, list);
  else if (p->token_only)
    nbdkit_error ("%s: token-only=true, but the header has no token to "
                  "unlock it with (%s)", header_name (p), list);
  else
    nbdkit_error ("%s: no passphrase= or keyfile=, and the header has no "
                  "token to unlock it with (%s)", header_name (p), list);
}

static bool
tokens_wanted (const struct luks_unlock_params *p)
{
  return p->token_id_given || p->token_type || p->token_only
         || (p->passphrase == NULL && p->keyfile == NULL);
}

/* FileVault2 and BitLocker have no tokens. */
static int
check_format (struct crypt_device *cd, const struct luks_unlock_params *p)
{
  const char *type = crypt_get_type (cd);
  const char *name = strcmp (type, CRYPT_BITLK) == 0 ? "BitLocker"
                     : strcmp (type, CRYPT_FVAULT2) == 0 ? "FileVault2"
                     : type;

  if (strcmp (type, CRYPT_LUKS1) == 0 || strcmp (type, CRYPT_LUKS2) == 0)
    return 0;
  if (p->passphrase == NULL && p->keyfile == NULL)
    nbdkit_error ("%s: a %s volume has no tokens: give passphrase= or "
                  "keyfile=", header_name (p), name);
  else
    nbdkit_error ("token-id, token-type and token-only are for LUKS; %s "
                  "is a %s volume", header_name (p), name);
  return -1;
}

int
luks_fetch_key (struct crypt_device *cd, const struct luks_unlock_params *p,
                struct crypt_table *t)
{
  struct tried tried = { .p = p };
  bool luks1, fallback = (p->passphrase || p->keyfile) && !p->token_only;
  int r;

  if (!tokens_wanted (p))
    return luks_fetch_volume_key (cd, p, t);
  if (check_format (cd, p) == -1)
    return -1;
  if (crypt_get_volume_key_size (cd) == 0)
    {
      nbdkit_error ("LUKS header declares no volume key size");
      return -1;
    }
  if (luks_table_key_alloc (t, crypt_get_volume_key_size (cd)) == -1)
    return -1;
  luks1 = strcmp (crypt_get_type (cd), CRYPT_LUKS1) == 0;
  r = luks1 ? luks1_clevis (cd, p, t, &tried)
            : luks2_tokens (cd, p, t, &tried);
  if (r >= 0)
    nbdkit_debug ("unlocked by %s", tried.last);
  if (r != -2)
    return r;
  if (fallback)
    {
      if (tried.count > 0)
        say (p, tried.last);
      return luks_fetch_volume_key (cd, p, t);
    }
  if (tried.count == 0)
    report_no_token (cd, p, luks1, tried.luksmeta_slots);
  else
    nbdkit_error ("%s: %s%s", header_name (p), tried.last,
                  p->token_only ? " (token-only=true)"
                  : "; give passphrase= or keyfile=");
  return -1;
}
