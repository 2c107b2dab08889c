/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nbdkit's .config: every key=value of the command line into the
 * parameters (params.h), each refusal one line that names the
 * parameter. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../backend/kseries.h"
#include "../../crypto/secmem.h"
#include "params.h"

void
params_init (struct dmcrypt_params *p)
{
  size_t i;

  memset (p, 0, sizeof *p);
  p->key_slot = -1;
  p->token_id = -1;
  p->caller_crypt = p->kcryptd_io = TRI_UNSET;
  for (i = 0; i < sizeof p->flag / sizeof p->flag[0]; i++)
    p->flag[i] = TRI_UNSET;
}

/* In the order of enum crypt_table_flag's bits. */
static const char *const flag_keys[] = {
  "allow-discards", "same-cpu-crypt", "submit-from-crypt-cpus",
  "no-read-workqueue", "no-write-workqueue", "iv-large-sectors",
  "high-priority",
};

/* Parameters holding a string that may be given once. */
#define STRING_KEY(k, field) { k, offsetof (struct dmcrypt_params, field) }
static const struct { const char *key; size_t offset; } string_keys[] = {
  STRING_KEY ("header", header), STRING_KEY ("cipher", cipher),
  STRING_KEY ("tcrypt-hash", tcrypt_hash),
  STRING_KEY ("token-type", token_type),
  STRING_KEY ("integrity", integrity),
  STRING_KEY ("integrity-key-file", integrity_key_file),
  STRING_KEY ("hash", hash), STRING_KEY ("trace", trace),
  STRING_KEY ("fault-rules", fault_rules), STRING_KEY ("control", control),
  STRING_KEY ("name", name),
};
#undef STRING_KEY

static int
set_string (char **dst, const char *key, const char *value)
{
  if (*dst) {
    nbdkit_error ("%s given more than once", key);
    return -1;
  }
  *dst = strdup (value);
  if (*dst == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  return 0;
}

static int
replace_string (char **dst, const char *key, const char *value)
{
  free (*dst);
  *dst = NULL;
  return set_string (dst, key, value);
}

/* nbdkit hands a bare word to the magic key, file=: "readonly" without
 * "=true" arrives as a second file. */
static int
set_file (struct dmcrypt_params *p, const char *value)
{
  const char *word = NULL;

  if (p->file && params_is_name (value))
    word = value;
  else if (p->file && params_is_name (p->file))
    word = p->file;
  if (word) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", word, word);
    return -1;
  }
  return set_string (&p->file, "file", value);
}

/* nbdkit_parse_bool's forms (nbdkit 1.32, server/public.c), the first
 * six true, read here so that a bad value gets one error that names
 * the parameter. */
static int
config_bool (const char *key, const char *value, int *b)
{
  static const char *const forms[] = {
    "1", "true", "t", "yes", "y", "on", "0", "false", "f", "no", "n", "off",
  };
  size_t i;

  for (i = 0; i < sizeof forms / sizeof forms[0]; i++)
    if (strcasecmp (value, forms[i]) == 0) {
      *b = i < 6;
      return 0;
    }
  nbdkit_error ("%s: '%s' is not a boolean (use true/false, yes/no, "
                "on/off or 1/0)", key, value);
  return -1;
}

static int
set_type (struct dmcrypt_params *p, const char *value)
{
  static const struct { const char *name; enum volume_type type; } types[] = {
    { "luks", VT_LUKS }, { "luks1", VT_LUKS1 }, { "luks2", VT_LUKS2 },
    { "plain", VT_PLAIN }, { "fvault2", VT_FVAULT2 },
    { "tcrypt", VT_TCRYPT }, { "bitlk", VT_BITLK },
    { "loopaes", VT_LOOPAES },
    { "integrity", VT_INTEGRITY },
  };
  size_t i;

  for (i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp (value, types[i].name) == 0) {
      p->type = types[i].type;
      p->type_given = true;
      return 0;
    }
  nbdkit_error ("type: unknown volume type '%s' "
                "(expected luks, luks1, luks2, plain, fvault2, tcrypt, "
                "bitlk, loopaes or integrity)", value);
  return -1;
}

static int
set_sectors (const char *key, const char *value, uint64_t *dst, bool *have)
{
  if (config_number (key, value, 0, UINT64_MAX, dst) == -1)
    return -1;
  *have = true;
  return 0;
}

/* A request is split into chunks of whole encryption sectors, which are
 * 512 bytes at least: a smaller chunk could hold no sector.  One under
 * the volume's own sector size, known later, takes a sector with a
 * notice (volume/mapping.c). */
static int
set_chunk_size (const char *key, const char *value, uint64_t *dst)
{
  return config_size (key, value, 512, "one 512-byte sector", dst);
}

/* tcrypt-hidden=, tcrypt-system=, tcrypt-backup=.  Returns 1 when KEY
 * is none of them. */
static int
config_tcrypt_bool (struct dmcrypt_params *p, const char *key,
                    const char *value)
{
  bool *dst = strcmp (key, "tcrypt-hidden") == 0 ? &p->tcrypt_hidden
    : strcmp (key, "tcrypt-system") == 0 ? &p->tcrypt_system
    : strcmp (key, "tcrypt-backup") == 0 ? &p->tcrypt_backup : NULL;
  int b;

  if (dst == NULL)
    return 1;
  if (config_bool (key, value, &b) == -1)
    return -1;
  *dst = b;
  return 0;
}

/* keyfile= (key-file=): the first is the LUKS and plain key file;
 * TCRYPT takes several, and params_check refuses more than one for the
 * others. */
static int
add_keyfile (struct dmcrypt_params *p, const char *value)
{
  char **more = realloc (p->keyfiles,
                         (p->keyfiles_count + 1) * sizeof *more);

  if (more == NULL) {
    nbdkit_error ("realloc: %m");
    return -1;
  }
  p->keyfiles = more;
  more[p->keyfiles_count] = strdup (value);
  if (more[p->keyfiles_count] == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  p->keyfile = more[0];
  p->keyfiles_count++;
  return 0;
}

/* The flags and the other booleans.  Returns 1 when KEY is not one. */
static int
config_bool_key (struct dmcrypt_params *p, const char *key,
                 const char *value)
{
  size_t i;
  int b;

  for (i = 0; i < sizeof flag_keys / sizeof flag_keys[0]; i++)
    if (strcmp (key, flag_keys[i]) == 0) {
      if (config_bool (key, value, &b) == -1)
        return -1;
      p->flag[i] = b ? TRI_TRUE : TRI_FALSE;
      return 0;
    }
  if (strcmp (key, "caller-crypt") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    p->caller_crypt = b ? TRI_TRUE : TRI_FALSE;
    return 0;
  }
  if (strcmp (key, "kcryptd-io") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    p->kcryptd_io = b ? TRI_TRUE : TRI_FALSE;
    return 0;
  }
  if (strcmp (key, "readonly") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    p->readonly = b;
    return 0;
  }
  if (strcmp (key, "token-only") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    p->token_only = b;
    return 0;
  }
  return config_tcrypt_bool (p, key, value);
}

/* integritysetup open's modes: the journal (the default), its
 * --integrity-bitmap-mode, --integrity-no-journal and
 * --integrity-recovery-mode; the kernel's letters too. */
static int
set_integrity_mode (struct dmcrypt_params *p, const char *value)
{
  static const struct { const char *name; char mode; } modes[] = {
    { "journal", 'J' }, { "bitmap", 'B' }, { "direct", 'D' },
    { "recovery", 'R' }, { "J", 'J' }, { "B", 'B' }, { "D", 'D' },
    { "R", 'R' },
  };
  size_t i;

  for (i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp (value, modes[i].name) == 0) {
      p->integrity_mode = modes[i].mode;
      return 0;
    }
  nbdkit_error ("integrity-mode: '%s' is not journal, bitmap, direct or "
                "recovery", value);
  return -1;
}

/* Returns 1 when KEY is not a string parameter. */
static int
config_string_key (struct dmcrypt_params *p, const char *key,
                   const char *value)
{
  size_t i;

  for (i = 0; i < sizeof string_keys / sizeof string_keys[0]; i++)
    if (strcmp (key, string_keys[i].key) == 0)
      return set_string ((char **) ((char *) p + string_keys[i].offset),
                         key, value);
  /* The engine's and the lab's settings: the last one wins, so that a
   * test harness can force them on a whole suite. */
  if (strcmp (key, "scheduler") == 0)
    return replace_string (&p->scheduler, key, value);
  if (strcmp (key, "device") == 0)
    return replace_string (&p->device, key, value);
  if (strcmp (key, "device-params") == 0)
    return replace_string (&p->device_params, key, value);
  if (strcmp (key, "elevator") == 0)
    return replace_string (&p->elevator, key, value);
  if (strcmp (key, "elevator-params") == 0)
    return replace_string (&p->elevator_params, key, value);
  if (strcmp (key, "kernel") == 0) {
    if ((p->kernel = kernel_series_parse (value)) >= 0)
      return 0;
    p->kernel = KSERIES_NONE;
    nbdkit_error ("kernel: '%s' is not a kernel series the lab models "
                  "(expected %s)", value, kernel_series_names ());
    return -1;
  }
  if (strcmp (key, "integrity-mode") == 0)
    return set_integrity_mode (p, value);
  if (strcmp (key, "cipher-library") == 0) {
    if (sector_cipher_parse_library (value, &p->cipher_library) == 0)
      return 0;
    nbdkit_error ("cipher-library: '%s' is not auto, openssl or libgcrypt",
                  value);
    return -1;
  }
  return 1;
}

int
params_config (struct dmcrypt_params *p, const char *key,
               const char *value)
{
  int r;

  /* dmcrypt-KEY=: the filter's way to name a parameter that the plugin
   * below takes too; the plugin accepts it alike. */
  if (strncmp (key, "dmcrypt-", 8) == 0 && params_is_name (key + 8))
    key += 8;
  if ((r = config_bool_key (p, key, value)) != 1
      || (r = config_string_key (p, key, value)) != 1)
    return r;
  if (strcmp (key, "file") == 0)
    return set_file (p, value);
  else if (strcmp (key, "keyfile") == 0 || strcmp (key, "key-file") == 0)
    return add_keyfile (p, value);
  else if (strcmp (key, "passphrase") == 0)
    return secret_passphrase (p, value);
  else if (strcmp (key, "table") == 0)
    return secret_table (p, value);
  else if (strcmp (key, "key") == 0)
    return secret_key (p, value);
  else if (strcmp (key, "type") == 0)
    return set_type (p, value);
  else if (strcmp (key, "offset") == 0)
    return set_sectors (key, value, &p->offset, &p->have_offset);
  else if (strcmp (key, "iv-offset") == 0)
    return set_sectors (key, value, &p->iv_offset,
                        &p->have_iv_offset);
  else if (strcmp (key, "max-read-size") == 0)
    return set_chunk_size (key, value, &p->max_read_size);
  else if (strcmp (key, "max-write-size") == 0)
    return set_chunk_size (key, value, &p->max_write_size);
  else if (strcmp (key, "max-inflight") == 0)
    return config_size (key, value, 1, "one byte", &p->max_inflight);
  return config_numeric (p, key, value);
}

void
params_free (struct dmcrypt_params *p)
{
  size_t i;

  if (p->passphrase)
    secmem_free (p->passphrase, p->passphrase_size + 1);
  if (p->table)
    secmem_free (p->table, strlen (p->table) + 1);
  if (p->key)
    secmem_free (p->key, p->key_size);
  free (p->passphrase_file_hint);
  free (p->file);
  free (p->layer_file);
  free (p->header);
  for (i = 0; i < p->keyfiles_count; i++)
    free (p->keyfiles[i]);
  free (p->keyfiles);
  free (p->tcrypt_hash);
  free (p->token_type);
  free (p->integrity);
  free (p->integrity_key_file);
  free (p->cipher);
  free (p->hash);
  free (p->scheduler);
  free (p->trace);
  free (p->fault_rules);
  free (p->control);
  free (p->name);
  free (p->device);
  free (p->device_params);
  free (p->elevator);
  free (p->elevator_params);
  params_init (p);
}
