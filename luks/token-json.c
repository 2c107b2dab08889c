/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A token's JSON into what to run (token.h).  A LUKS2 token is an
 * object with a "type" and the "keyslots" it opens, as strings
 * (LUKS2_token_validate, cryptsetup 2.6 lib/luks2/luks2_json_metadata.c).
 * Clevis adds "jwe", a JWE in RFC 7516's flattened JSON form
 * (clevis-luks-bind: jose jwe fmt); clevis decrypt reads the compact
 * form (clevis-luks-common-functions: jose jwe fmt -c), which is the
 * same five base64url fields joined by dots in the order RFC 7516 7.1
 * gives: protected header, encrypted key, IV, ciphertext, tag.  Nothing
 * is decoded or decrypted here. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "token.h"

/* LUKS2_TOKENS_MAX and LUKS2_KEYSLOTS_MAX (cryptsetup 2.6 luks2.h). */
#define KEYSLOTS_MAX 32

static int
fail (char *err, size_t err_size, const char *why)
{
  snprintf (err, err_size, "%s", why);
  return -1;
}

static bool
base64url (const char *s, bool empty_ok)
{
  if (*s == '\0')
    return empty_ok;
  for (; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')
          || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
      return false;
  return true;
}

static const char *
string_member (json_object *obj, const char *key)
{
  json_object *val;

  if (!json_object_object_get_ex (obj, key, &val)
      || !json_object_is_type (val, json_type_string))
    return NULL;
  return json_object_get_string (val);
}

/* "keyslots": ["0", "3"]. */
static int
read_keyslots (json_object *root, uint32_t *mask, char *err, size_t err_size)
{
  json_object *slots, *one;
  const char *s;
  size_t i, n;
  char *end;
  long v;

  if (!json_object_object_get_ex (root, "keyslots", &slots)
      || !json_object_is_type (slots, json_type_array))
    return fail (err, err_size, "the token has no keyslots array");
  n = json_object_array_length (slots);
  for (i = 0; i < n; i++)
    {
      one = json_object_array_get_idx (slots, i);
      s = json_object_is_type (one, json_type_string)
          ? json_object_get_string (one) : NULL;
      if (s == NULL || *s < '0' || *s > '9' || strlen (s) > 2)
        return fail (err, err_size, "the token names a keyslot that is "
                     "not a number from 0 to 31");
      v = strtol (s, &end, 10);
      if (*end != '\0' || v >= KEYSLOTS_MAX)
        return fail (err, err_size, "the token names a keyslot that is "
                     "not a number from 0 to 31");
      *mask |= UINT32_C (1) << v;
    }
  return 0;
}

/* The compact form of Clevis's flattened JWE, or -1 with ERR. */
static int
compact_jwe (json_object *root, char **jwe, char *err, size_t err_size)
{
  static const char *const parts[] = { "protected", "encrypted_key", "iv",
                                       "ciphertext", "tag" };
  static const char *const json_only[] = { "header", "unprotected", "aad",
                                           "recipients" };
  const char *value[5];
  json_object *obj;
  size_t i, len = 0;

  if (!json_object_object_get_ex (root, "jwe", &obj)
      || !json_object_is_type (obj, json_type_object))
    return fail (err, err_size, "the clevis token has no jwe object");
  for (i = 0; i < sizeof json_only / sizeof json_only[0]; i++)
    if (json_object_object_get_ex (obj, json_only[i], NULL))
      return fail (err, err_size, "the clevis token's jwe has members "
                   "that its compact form cannot hold");
  for (i = 0; i < 5; i++)
    {
      value[i] = string_member (obj, parts[i]);
      /* ECDH-ES (Tang) agrees on the key: no encrypted key. */
      if (value[i] == NULL && i == 1)
        value[i] = "";
      if (value[i] == NULL || !base64url (value[i], i == 1))
        return fail (err, err_size, "the clevis token's jwe lacks a "
                     "base64url protected, iv, ciphertext or tag");
      len += strlen (value[i]) + 1;
    }
  *jwe = malloc (len);
  if (*jwe == NULL)
    return fail (err, err_size, "out of memory");
  snprintf (*jwe, len, "%s.%s.%s.%s.%s", value[0], value[1], value[2],
            value[3], value[4]);
  return 0;
}

static int
read_type (json_object *root, struct luks_token_plan *plan, char *err,
           size_t err_size)
{
  const char *type = string_member (root, "type");
  size_t i;

  if (type == NULL || *type == '\0' || strlen (type) >= sizeof plan->type)
    return fail (err, err_size, "the token has no type (or one over 63 "
                 "bytes)");
  for (i = 0; type[i]; i++)
    if (type[i] <= ' ' || type[i] > '~')
      return fail (err, err_size, "the token's type is not printable");
  snprintf (plan->type, sizeof plan->type, "%s", type);
  return 0;
}

static json_object *
parse (const char *json, size_t json_bytes)
{
  json_tokener *tok;
  json_object *root;

  if (json_bytes > LUKS_TOKEN_JSON_MAX)
    return NULL;
  tok = json_tokener_new ();
  if (tok == NULL)
    return NULL;
  root = json_tokener_parse_ex (tok, json, (int) json_bytes);
  if (root != NULL && (json_tokener_get_error (tok) != json_tokener_success
                       || !json_object_is_type (root, json_type_object)))
    {
      json_object_put (root);
      root = NULL;
    }
  json_tokener_free (tok);
  return root;
}

int
luks_token_plan (const char *json, size_t json_bytes,
                 struct luks_token_plan *plan, char *err, size_t err_size)
{
  json_object *root;
  int r;

  memset (plan, 0, sizeof *plan);
  root = parse (json, json_bytes);
  if (root == NULL)
    return fail (err, err_size, "the token is not a JSON object");
  r = read_type (root, plan, err, err_size);
  if (r == 0)
    r = read_keyslots (root, &plan->keyslots, err, err_size);
  if (r == 0 && strcmp (plan->type, "clevis") == 0)
    {
      plan->way = LUKS_TOKEN_CLEVIS;
      r = compact_jwe (root, &plan->jwe, err, err_size);
    }
  else
    plan->way = LUKS_TOKEN_LIBRARY;
  json_object_put (root);
  if (r == -1)
    luks_token_plan_free (plan);
  return r;
}

int
luks_token_plan_luksmeta (const char *data, size_t data_bytes, int slot,
                          struct luks_token_plan *plan, char *err,
                          size_t err_size)
{
  size_t i, dots = 0;

  memset (plan, 0, sizeof *plan);
  if (slot < 0 || slot >= 8)
    return fail (err, err_size, "LUKS1 has keyslots 0 to 7");
  /* luksmeta load prints the data as saved; a newline would not be
   * Clevis's. */
  for (i = 0; i < data_bytes; i++)
    if (data[i] == '.')
      dots++;
    else if (!((data[i] >= 'A' && data[i] <= 'Z')
               || (data[i] >= 'a' && data[i] <= 'z')
               || (data[i] >= '0' && data[i] <= '9') || data[i] == '-'
               || data[i] == '_'))
      return fail (err, err_size, "the luksmeta data is not a compact "
                   "JWE");
  if (dots != 4 || data_bytes == 0 || data[0] == '.')
    return fail (err, err_size, "the luksmeta data is not a compact JWE "
                 "(five fields)");
  plan->jwe = strndup (data, data_bytes);
  if (plan->jwe == NULL)
    return fail (err, err_size, "out of memory");
  plan->way = LUKS_TOKEN_CLEVIS;
  snprintf (plan->type, sizeof plan->type, "clevis");
  plan->keyslots = UINT32_C (1) << slot;
  return 0;
}

void
luks_token_plan_free (struct luks_token_plan *plan)
{
  free (plan->jwe);
  memset (plan, 0, sizeof *plan);
}
