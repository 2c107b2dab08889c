/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LUKS tokens without a LUKS header: a token's JSON read into what to
 * run (luks/token-json.c), the helper runner (luks/spawn.c) and Clevis's
 * tools (luks/clevis.c).  The compact JWE is checked against jose's own
 * (jose jwe fmt -c, as Clevis's unlockers make it), and a JWE made by
 * "clevis encrypt null" must decrypt to what was encrypted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../luks/clevis.h"
#include "../../luks/helper.h"
#include "../../luks/token.h"
#include "../nbdkit-stubs.h"
#include "check.h"

/* CMD's whole stdout, trailing newline dropped, into BUF; false when
 * it could not run or failed. */
static bool
run (const char *cmd, char *buf, size_t size)
{
  FILE *fp = popen (cmd, "r");
  size_t n;

  if (fp == NULL)
    return false;
  n = fread (buf, 1, size - 1, fp);
  buf[n] = '\0';
  if (n > 0 && buf[n - 1] == '\n')
    buf[n - 1] = '\0';
  return pclose (fp) == 0 && n > 0;
}

static void
plan_ok (const char *json, struct luks_token_plan *plan)
{
  char err[256] = "";

  CHECK_MSG (luks_token_plan (json, strlen (json), plan, err, sizeof err)
             == 0, "%s: refused: %s", json, err);
}

static void
plan_refused (const char *json, const char *words)
{
  struct luks_token_plan plan;
  char err[256] = "";

  CHECK_MSG (luks_token_plan (json, strlen (json), &plan, err, sizeof err)
             == -1 && strstr (err, words) && plan.jwe == NULL,
             "%s: '%s' lacks '%s'", json, err, words);
}

static void
test_plans (void)
{
  struct luks_token_plan plan;

  plan_ok ("{\"type\":\"systemd-tpm2\",\"keyslots\":[\"0\",\"7\",\"31\"]}",
           &plan);
  CHECK (plan.way == LUKS_TOKEN_LIBRARY && plan.jwe == NULL);
  CHECK (plan.keyslots == ((1u << 0) | (1u << 7) | (1u << 31)));
  CHECK (strcmp (plan.type, "systemd-tpm2") == 0);
  luks_token_plan_free (&plan);
  plan_refused ("{\"type\":\"x\",\"keyslots\":[\"32\"]}", "0 to 31");
  plan_refused ("{\"type\":\"x\",\"keyslots\":[\"-1\"]}", "0 to 31");
  plan_refused ("{\"type\":\"x\",\"keyslots\":[1]}", "0 to 31");
  plan_refused ("{\"type\":\"x\"}", "no keyslots");
  plan_refused ("{\"keyslots\":[]}", "no type");
  plan_refused ("{\"type\":\"a b\",\"keyslots\":[]}", "not printable");
  plan_refused ("[1]", "not a JSON object");
  plan_refused ("{\"type\":\"clevis\",\"keyslots\":[\"1\"]}", "no jwe");
  plan_refused ("{\"type\":\"clevis\",\"keyslots\":[\"1\"],\"jwe\":"
                "{\"protected\":\"e30\",\"iv\":\"aXY\",\"ciphertext\":"
                "\"Y3Q\",\"tag\":\"dGFn\",\"header\":{}}}", "compact");
  plan_refused ("{\"type\":\"clevis\",\"keyslots\":[\"1\"],\"jwe\":"
                "{\"protected\":\"e3.0\",\"iv\":\"aXY\",\"ciphertext\":"
                "\"Y3Q\",\"tag\":\"dGFn\"}}", "base64url");
  /* RFC 7516 7.1's order, the encrypted key empty (ECDH-ES). */
  plan_ok ("{\"type\":\"clevis\",\"keyslots\":[\"1\"],\"jwe\":"
           "{\"tag\":\"dGFn\",\"ciphertext\":\"Y3Q\",\"iv\":\"aXY\","
           "\"protected\":\"e30\"}}", &plan);
  CHECK (plan.way == LUKS_TOKEN_CLEVIS && plan.keyslots == 2u);
  CHECK_MSG (plan.jwe && strcmp (plan.jwe, "e30..aXY.Y3Q.dGFn") == 0,
             "compact JWE: %s", plan.jwe);
  luks_token_plan_free (&plan);
}

static void
test_luksmeta_plans (void)
{
  struct luks_token_plan plan;
  char err[256] = "";
  const char *ok = "e30..aXY.Y3Q.dGFn";

  CHECK (luks_token_plan_luksmeta (ok, strlen (ok), 3, &plan, err,
                                   sizeof err) == 0);
  CHECK (plan.keyslots == 8u && strcmp (plan.jwe, ok) == 0);
  luks_token_plan_free (&plan);
  CHECK (luks_token_plan_luksmeta (ok, strlen (ok), 8, &plan, err,
                                   sizeof err) == -1);
  CHECK (luks_token_plan_luksmeta ("a.b.c.d", 7, 0, &plan, err,
                                   sizeof err) == -1);
  CHECK (luks_token_plan_luksmeta ("a.b.c.d.e\n", 10, 0, &plan, err,
                                   sizeof err) == -1);
}

static void
test_spawn (void)
{
  const char *const sh[] = { "sh", "-c", "cat; echo one >&2; "
                             "echo last >&2; exit 3", NULL };
  const char *const none[] = { "dmcrypt-no-such-program", NULL };
  const char *const chatty[] = { "head", "-c", "100", "/dev/zero", NULL };
  const char *const deaf[] = { "true", NULL };
  static char big[1 << 20];
  char out[64], err[256];
  size_t n;

  CHECK (luks_spawn (sh, "in", 2, out, sizeof out, &n, err, sizeof err)
         == 3);
  CHECK (n == 2 && memcmp (out, "in", 2) == 0);
  CHECK_MSG (strcmp (err, "last") == 0, "stderr's last line: %s", err);
  CHECK (luks_spawn (none, "", 0, out, sizeof out, &n, err, sizeof err)
         == -1);
  CHECK_MSG (strstr (err, "not installed") != NULL, "%s", err);
  CHECK (luks_spawn (chatty, "", 0, out, 10, &n, err, sizeof err) == -1);
  CHECK_MSG (strstr (err, "more than 10 bytes") != NULL, "%s", err);
  /* A helper that reads nothing: no SIGPIPE here. */
  CHECK (luks_spawn (deaf, big, sizeof big, out, sizeof out, &n, err,
                     sizeof err) == 0);
}

/* clevis encrypt null (no server, no TPM): its JWE, through jose's JSON
 * form and back through our compact form, decrypts to the secret. */
static void
test_clevis_null (void)
{
  char compact[8192], flat[8192], json[9000], *pass = NULL, why[256];
  struct luks_token_plan plan;
  size_t n;

  if (!run ("printf %s 's3cret pass' | clevis encrypt null '{}' "
            "2>/dev/null", compact, sizeof compact)
      || !run ("printf %s 'x' | clevis encrypt null '{}' 2>/dev/null "
               "| jose jwe fmt -i- 2>/dev/null", flat, sizeof flat))
    {
      printf ("SKIP (clevis null pin): clevis or jose cannot run\n");
      return;
    }
  CHECK (clevis_decrypt (compact, &pass, &n, why, sizeof why) == 0);
  CHECK_MSG (pass && n == 11 && memcmp (pass, "s3cret pass", 11) == 0,
             "clevis decrypt: %s", pass ? pass : why);
  clevis_pass_free (pass);
  snprintf (json, sizeof json, "{\"type\":\"clevis\",\"keyslots\":[\"4\"],"
            "\"jwe\":%s}", flat);
  plan_ok (json, &plan);
  if (plan.jwe == NULL)
    return;
  CHECK (clevis_decrypt (plan.jwe, &pass, &n, why, sizeof why) == 0);
  CHECK_MSG (pass && n == 1 && pass[0] == 'x', "the token's JWE: %s",
             pass ? pass : why);
  clevis_pass_free (pass);
  /* jose's own compact form of the same JWE. */
  snprintf (json, sizeof json, "printf '%%s' '%s' | jose jwe fmt -i- -c",
            flat);
  if (run (json, compact, sizeof compact))
    CHECK_MSG (strcmp (compact, plan.jwe) == 0, "jose: %s, ours: %s",
               compact, plan.jwe);
  luks_token_plan_free (&plan);
  CHECK (clevis_decrypt ("e30..aXY.Y3Q.dGFn", &pass, &n, why, sizeof why)
         == -1 && pass == NULL && why[0] != '\0');
}

int
main (void)
{
  test_plans ();
  test_luksmeta_plans ();
  test_spawn ();
  test_clevis_null ();
  printf ("token: %u checks, %d failed\n", checks, failures);
  return failures != 0;
}
