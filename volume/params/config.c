/* nbdkit's .config: every key=value of the command line into params,
 * each refusal one line that names the parameter. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../../backend/kseries.h"
#include "../../crypto/secmem.h"
#include "../volume.h"

struct dmcrypt_params params = { .key_slot = -1,
  .caller_crypt = TRI_UNSET, .kcryptd_io = TRI_UNSET,
  .flag = { TRI_UNSET, TRI_UNSET, TRI_UNSET, TRI_UNSET, TRI_UNSET,
            TRI_UNSET, TRI_UNSET } };

/* Every parameter but file=, which is the plugin's own (the filter's
 * image is the layer below). */
#define PARAMS_HELP \
  "passphrase=<PASSWORD>  Passphrase: literal, +FILE, - (ask) or -FD.\n" \
  "keyfile=<FILENAME>  Key file (cryptsetup --key-file; also key-file=);\n" \
  "                    TCRYPT: repeatable, mixed into the passphrase.\n" \
  "keyfile-offset=<N>  Bytes to skip at the start of the key file.\n" \
  "keyfile-size=<N>    LUKS: bytes to read from the key file (default: all).\n" \
  "key-slot=<N>        Try only this LUKS keyslot.\n" \
  "header=<FILENAME>   Detached LUKS header.\n" \
  "type=luks|luks1|luks2|plain|fvault2|tcrypt|bitlk  Volume type (default:\n" \
  "                    plain with table= or cipher=, else LUKS, FileVault2\n" \
  "                    or BitLocker by magic; TrueCrypt/VeraCrypt needs\n" \
  "                    type=tcrypt).\n" \
  "tcrypt-hidden=<BOOL>  TCRYPT: open the hidden volume.\n" \
  "tcrypt-system=<BOOL>  TCRYPT: a system volume (header in sector 62).\n" \
  "tcrypt-backup=<BOOL>  TCRYPT: use the backup header near the end.\n" \
  "veracrypt-pim=<N>   TCRYPT: VeraCrypt's personal iteration multiplier.\n" \
  "tcrypt-hash=<HASH>  TCRYPT: try only this PBKDF2 hash (default: all).\n" \
  "table=<LINE>|+FILE|-FD|-  Plain mode: a dm-crypt table line with the key.\n" \
  "cipher=<SPEC>       Plain mode: cipher spec, e.g. aes-xts-plain64.\n" \
  "key=<HEX>|+FILE|-FD|-  Plain mode: the key in hex.\n" \
  "key-size=<BITS>     Plain mode: key size for passphrase= or key-file=.\n" \
  "hash=<HASH>         Plain mode: passphrase hash (default ripemd160).\n" \
  "offset=<SECTORS>    Plain mode: data offset, 512-byte sectors.\n" \
  "iv-offset=<SECTORS> Plain mode: IV offset, 512-byte sectors.\n" \
  "sector-size=<BYTES> Plain mode: encryption sector size (512..4096).\n" \
  "allow-discards=<BOOL>  Pass trims down to the image (allow_discards).\n" \
  "same-cpu-crypt=<BOOL>  Keep a request's crypto on one worker.\n" \
  "submit-from-crypt-cpus=<BOOL>  Dispatch writes as workers finish.\n" \
  "no-read-workqueue=<BOOL>  Decrypt in the calling thread.\n" \
  "no-write-workqueue=<BOOL> Encrypt and write in the calling thread.\n" \
  "iv-large-sectors=<BOOL>   IVs count encryption sectors, not 512 bytes.\n" \
  "high-priority=<BOOL>   Raise worker and writer thread priority.\n" \
  "min-block-size=<N>|sector  Minimum block size advertised (default 1:\n" \
  "                    any alignment; sector: the encryption sector size).\n" \
  "workers=<N>         Crypto worker threads (default: online CPUs).\n" \
  "scheduler=sorted|fifo|batch|rbtree  Write-out ordering policy.\n" \
  "max-read-size=<SIZE>   Largest read chunk (default 128K).\n" \
  "max-write-size=<SIZE>  Largest write chunk (default 128K).\n" \
  "max-inflight=<SIZE>    Cap on encrypted bytes in flight (default 64M).\n" \
  "max-write-rounds=<N>   Write-out rounds written at once (default 0:\n" \
  "                    no limit; 1: one write at a time).\n" \
  "caller-crypt=<BOOL>    Request thread crypts too (default true).\n" \
  "cipher-library=auto|openssl|libgcrypt  Whose AES-XTS to use (default\n" \
  "                    auto: libgcrypt where it has VAES, else OpenSSL).\n" \
  "trace=<FILENAME>    Append blkparse-style backend IO events.\n" \
  "fault-rules=<FILENAME>  Tests: inject backend faults by these rules.\n" \
  "device=none|hdd|usb|ssd|x25e-raid10|sas15k-raid10  Lab: a simulated\n" \
  "                    device under the engine.\n" \
  "device-params=<K=V,...>|+FILE  Lab: the device model's parameters.\n" \
  "device-speed=<N>    Lab: run the device model N times faster.\n" \
  "nr-requests=<N>     Lab: block-queue depth (default: the elevator's).\n" \
  "elevator=none|deadline|cfq  Lab: the block queue's elevator.\n" \
  "elevator-params=<K=V,...>  Lab: the elevator's tunables (sysfs names).\n" \
  "kernel=2.6.32|3.16|4.0|6.1  Lab: model that kernel's dm-crypt threads\n" \
  "                    and block layer (default: dmcrypt's own).\n" \
  "hz=<N>              Lab: the modelled kernel's timer ticks a second.\n" \
  "kcryptd-io=<BOOL>   Lab: read clones submitted by kcryptd_io (default\n" \
  "                    true under kernel=2.6.32, false after it).\n" \
  "control=<SOCKET>    Control socket for dmcryptctl.\n" \
  "name=<NAME>         Volume name for dmcryptctl.\n" \
  "readonly=<BOOL>     Open with a read-only live table."

const char dmcrypt_config_help[] =
  "file=<FILENAME>     (required) The image or block device: LUKS1, LUKS2,\n"
  "                    plain dm-crypt, BitLocker, TrueCrypt/VeraCrypt or\n"
  "                    FileVault2.\n"
  PARAMS_HELP;
/* The filter's data is the layer below: no file=. */
const char dmcrypt_filter_config_help[] =
  PARAMS_HELP "\n"
  "Each also as dmcrypt-KEY=, e.g. dmcrypt-offset=, beside a KEY= of the "
  "plugin.";

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
  STRING_KEY ("hash", hash), STRING_KEY ("trace", trace),
  STRING_KEY ("fault-rules", fault_rules), STRING_KEY ("control", control),
  STRING_KEY ("name", name),
};
#undef STRING_KEY

const char *const dmcrypt_param_names[] = {
  "file", "passphrase", "keyfile", "key-file", "keyfile-offset",
  "keyfile-size", "key-slot", "header", "type", "table", "cipher", "key",
  "key-size", "hash", "offset", "iv-offset", "sector-size",
  "allow-discards", "same-cpu-crypt", "submit-from-crypt-cpus",
  "no-read-workqueue", "no-write-workqueue", "iv-large-sectors",
  "high-priority", "min-block-size", "workers", "scheduler",
  "max-read-size", "max-write-size", "max-inflight", "caller-crypt",
  "max-write-rounds", "cipher-library", "trace", "fault-rules", "control", "name",
  "readonly", "device", "device-params", "device-speed", "nr-requests",
  "elevator", "elevator-params", "kernel", "hz", "kcryptd-io",
  "tcrypt-hidden", "tcrypt-system", "tcrypt-backup", "veracrypt-pim",
  "tcrypt-hash", NULL,
};

bool
dmcrypt_is_param_name (const char *name)
{
  size_t i;

  for (i = 0; dmcrypt_param_names[i]; i++)
    if (strcmp (name, dmcrypt_param_names[i]) == 0)
      return true;
  return false;
}

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
set_file (const char *value)
{
  const char *word = NULL;

  if (params.file && dmcrypt_is_param_name (value))
    word = value;
  else if (params.file && dmcrypt_is_param_name (params.file))
    word = params.file;
  if (word) {
    nbdkit_error ("'%s' needs a value: %s=VALUE", word, word);
    return -1;
  }
  return set_string (&params.file, "file", value);
}

/* nbdkit's boolean forms, checked here first so that a bad value gets
 * one error that names the parameter. */
int
config_bool (const char *key, const char *value, int *b)
{
  static const char *const forms[] = {
    "1", "true", "t", "yes", "y", "on", "0", "false", "f", "no", "n", "off",
  };
  size_t i;

  for (i = 0; i < sizeof forms / sizeof forms[0]; i++)
    if (strcasecmp (value, forms[i]) == 0) {
      *b = nbdkit_parse_bool (value);
      return *b == -1 ? -1 : 0;
    }
  nbdkit_error ("%s: '%s' is not a boolean (use true/false, yes/no, "
                "on/off or 1/0)", key, value);
  return -1;
}

static int
set_type (const char *value)
{
  static const struct { const char *name; enum volume_type type; } types[] = {
    { "luks", VT_LUKS }, { "luks1", VT_LUKS1 }, { "luks2", VT_LUKS2 },
    { "plain", VT_PLAIN }, { "fvault2", VT_FVAULT2 },
    { "tcrypt", VT_TCRYPT }, { "bitlk", VT_BITLK },
  };
  size_t i;

  for (i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp (value, types[i].name) == 0) {
      params.type = types[i].type;
      params.type_given = true;
      return 0;
    }
  nbdkit_error ("type: unknown volume type '%s' "
                "(expected luks, luks1, luks2, plain, fvault2, tcrypt or "
                "bitlk)", value);
  return -1;
}

/* confignum.c: every number of the command line. */
int config_number (const char *key, const char *value, uint64_t min,
                   uint64_t max, uint64_t *dst);
int config_size (const char *key, const char *value, uint64_t min,
                 const char *min_words, uint64_t *dst);

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
 * notice (mapping.c). */
static int
set_chunk_size (const char *key, const char *value, uint64_t *dst)
{
  return config_size (key, value, 512, "one 512-byte sector", dst);
}

/* tcrypt-hidden=, tcrypt-system=, tcrypt-backup=.  Returns 1 when KEY
 * is none of them. */
static int
config_tcrypt_bool (const char *key, const char *value)
{
  bool *dst = strcmp (key, "tcrypt-hidden") == 0 ? &params.tcrypt_hidden
    : strcmp (key, "tcrypt-system") == 0 ? &params.tcrypt_system
    : strcmp (key, "tcrypt-backup") == 0 ? &params.tcrypt_backup : NULL;
  int b;

  if (dst == NULL)
    return 1;
  if (config_bool (key, value, &b) == -1)
    return -1;
  *dst = b;
  return 0;
}

/* keyfile= (key-file=): the first is the LUKS and plain key file;
 * TCRYPT takes several, and check_key_combinations refuses more than
 * one for the others. */
static int
add_keyfile (const char *value)
{
  char **more = realloc (params.keyfiles,
                         (params.keyfiles_count + 1) * sizeof *more);

  if (more == NULL) {
    nbdkit_error ("realloc: %m");
    return -1;
  }
  params.keyfiles = more;
  more[params.keyfiles_count] = strdup (value);
  if (more[params.keyfiles_count] == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  params.keyfile = more[0];
  params.keyfiles_count++;
  return 0;
}

/* The flags and the other booleans.  Returns 1 when KEY is not one. */
static int
config_bool_key (const char *key, const char *value)
{
  size_t i;
  int b;

  for (i = 0; i < sizeof flag_keys / sizeof flag_keys[0]; i++)
    if (strcmp (key, flag_keys[i]) == 0) {
      if (config_bool (key, value, &b) == -1)
        return -1;
      params.flag[i] = b ? TRI_TRUE : TRI_FALSE;
      return 0;
    }
  if (strcmp (key, "caller-crypt") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    params.caller_crypt = b ? TRI_TRUE : TRI_FALSE;
    return 0;
  }
  if (strcmp (key, "kcryptd-io") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    params.kcryptd_io = b ? TRI_TRUE : TRI_FALSE;
    return 0;
  }
  if (strcmp (key, "readonly") == 0) {
    if (config_bool (key, value, &b) == -1)
      return -1;
    params.readonly = b;
    return 0;
  }
  return config_tcrypt_bool (key, value);
}

/* Returns 1 when KEY is not a string parameter. */
static int
config_string_key (const char *key, const char *value)
{
  size_t i;

  for (i = 0; i < sizeof string_keys / sizeof string_keys[0]; i++)
    if (strcmp (key, string_keys[i].key) == 0)
      return set_string ((char **) ((char *) &params
                                    + string_keys[i].offset), key, value);
  /* The engine's and the lab's settings: the last one wins, so that a
   * test harness can force them on a whole suite. */
  if (strcmp (key, "scheduler") == 0)
    return replace_string (&params.scheduler, key, value);
  if (strcmp (key, "device") == 0)
    return replace_string (&params.device, key, value);
  if (strcmp (key, "device-params") == 0)
    return replace_string (&params.device_params, key, value);
  if (strcmp (key, "elevator") == 0)
    return replace_string (&params.elevator, key, value);
  if (strcmp (key, "elevator-params") == 0)
    return replace_string (&params.elevator_params, key, value);
  if (strcmp (key, "kernel") == 0) {
    if ((params.kernel = kernel_series_parse (value)) >= 0)
      return 0;
    params.kernel = KSERIES_NONE;
    nbdkit_error ("kernel: '%s' is not a kernel series the lab models "
                  "(expected %s)", value, kernel_series_names ());
    return -1;
  }
  if (strcmp (key, "cipher-library") == 0) {
    if (sector_cipher_parse_library (value, &params.cipher_library) == 0)
      return 0;
    nbdkit_error ("cipher-library: '%s' is not auto, openssl or libgcrypt",
                  value);
    return -1;
  }
  return 1;
}

int config_numeric (const char *key, const char *value);   /* confignum.c */

int
dmcrypt_config (const char *key, const char *value)
{
  int r;

  /* dmcrypt-KEY=: the filter's way to name a parameter that the plugin
   * below takes too; the plugin accepts it alike. */
  if (strncmp (key, "dmcrypt-", 8) == 0 && dmcrypt_is_param_name (key + 8))
    key += 8;
  if ((r = config_bool_key (key, value)) != 1
      || (r = config_string_key (key, value)) != 1)
    return r;
  if (strcmp (key, "file") == 0)
    return set_file (value);
  else if (strcmp (key, "keyfile") == 0 || strcmp (key, "key-file") == 0)
    return add_keyfile (value);
  else if (strcmp (key, "passphrase") == 0)
    return secret_passphrase (value);
  else if (strcmp (key, "table") == 0)
    return secret_table (value);
  else if (strcmp (key, "key") == 0)
    return secret_key (value);
  else if (strcmp (key, "type") == 0)
    return set_type (value);
  else if (strcmp (key, "offset") == 0)
    return set_sectors (key, value, &params.offset, &params.have_offset);
  else if (strcmp (key, "iv-offset") == 0)
    return set_sectors (key, value, &params.iv_offset,
                        &params.have_iv_offset);
  else if (strcmp (key, "max-read-size") == 0)
    return set_chunk_size (key, value, &params.max_read_size);
  else if (strcmp (key, "max-write-size") == 0)
    return set_chunk_size (key, value, &params.max_write_size);
  else if (strcmp (key, "max-inflight") == 0)
    return config_size (key, value, 1, "one byte", &params.max_inflight);
  return config_numeric (key, value);
}

void
dmcrypt_params_free (void)
{
  size_t i;

  if (params.passphrase)
    secmem_free (params.passphrase, params.passphrase_size + 1);
  if (params.table)
    secmem_free (params.table, strlen (params.table) + 1);
  if (params.key)
    secmem_free (params.key, params.key_size);
  free (params.passphrase_file_hint);
  free (params.file);
  free (params.layer_file);
  free (params.header);
  for (i = 0; i < params.keyfiles_count; i++)
    free (params.keyfiles[i]);
  free (params.keyfiles);
  free (params.tcrypt_hash);
  free (params.cipher);
  free (params.hash);
  free (params.scheduler);
  free (params.trace);
  free (params.fault_rules);
  free (params.control);
  free (params.name);
  free (params.device);
  free (params.device_params);
  free (params.elevator);
  free (params.elevator_params);
  memset (&params, 0, sizeof params);
}
