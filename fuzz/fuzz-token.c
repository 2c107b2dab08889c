/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzzes the reading of a LUKS token (luks/token-json.c): the JSON of a
 * LUKS2 token or the luksmeta data of a LUKS1 Clevis binding, both
 * straight from the header, into what to run.  The first byte chooses:
 * even, a LUKS2 token's JSON (the rest); odd, luksmeta data of slot
 * (byte >> 1) - 2, slots out of range included.
 *
 * Rules checked beyond "no crash, no out-of-bounds read": a refusal
 * gives a reason on one line; an accepted token has a printable type;
 * a Clevis plan's JWE, what clevis decrypt is given on its stdin, is
 * five base64url fields joined by four dots with a protected header,
 * and nothing else is; a luksmeta binding names exactly its own slot,
 * one of LUKS1's eight. */

#include <string.h>

#include "../luks/token.h"
#include "fuzz.h"

static bool
is_b64url (char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
         || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static void
check_jwe (const char *jwe)
{
  size_t i, dots = 0;

  if (jwe == NULL || !is_b64url (jwe[0]))
    fuzz_fail ("a clevis plan without a protected header");
  for (i = 0; jwe[i]; i++)
    if (jwe[i] == '.')
      dots++;
    else if (!is_b64url (jwe[i]))
      fuzz_fail ("a JWE for clevis decrypt with byte 0x%02x",
                 (unsigned char) jwe[i]);
  if (dots != 4)
    fuzz_fail ("a JWE for clevis decrypt with %zu dots", dots);
}

static void
check_plan (const struct luks_token_plan *plan, int slot)
{
  size_t i, n = strnlen (plan->type, sizeof plan->type);

  if (n == 0 || n == sizeof plan->type)
    fuzz_fail ("an accepted token without a type");
  for (i = 0; i < n; i++)
    if (plan->type[i] <= ' ' || plan->type[i] > '~')
      fuzz_fail ("a token type with byte 0x%02x",
                 (unsigned char) plan->type[i]);
  if (plan->way == LUKS_TOKEN_CLEVIS)
    check_jwe (plan->jwe);
  else if (plan->jwe != NULL || strcmp (plan->type, "clevis") == 0)
    fuzz_fail ("a library token with a JWE, or a clevis one without");
  if (slot >= 0
      && (slot > 7 || plan->keyslots != UINT32_C (1) << slot))
    fuzz_fail ("luksmeta slot %d gave keyslots 0x%x", slot,
               (unsigned) plan->keyslots);
}

int
fuzz_token (const uint8_t *data, size_t size)
{
  struct luks_token_plan plan;
  char err[256] = "";
  int slot = -1, r;

  if (size == 0)
    return 0;
  if (data[0] & 1)
    {
      slot = (data[0] >> 1) - 2;
      r = luks_token_plan_luksmeta ((const char *) data + 1, size - 1,
                                    slot, &plan, err, sizeof err);
      if (r == 0 && slot < 0)
        fuzz_fail ("luksmeta slot %d accepted", slot);
    }
  else
    r = luks_token_plan ((const char *) data + 1, size - 1, &plan, err,
                         sizeof err);
  if (r == -1)
    {
      fuzz_check_reason (err);
      if (plan.jwe != NULL || plan.type[0] != '\0')
        fuzz_fail ("a refused token left a plan");
      return 0;
    }
  check_plan (&plan, slot < 0 ? -1 : slot);
  luks_token_plan_free (&plan);
  return 0;
}

FUZZ_ENTRY (fuzz_token)
