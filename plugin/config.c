/* nbdkit's .config: every key=value of the command line into params. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "../crypto/secmem.h"
#include "dmcrypt.h"

struct dmcrypt_params params = { .key_slot = -1,
  .caller_crypt = TRI_UNSET,
  .flag = { TRI_UNSET, TRI_UNSET, TRI_UNSET, TRI_UNSET, TRI_UNSET,
            TRI_UNSET, TRI_UNSET } };

const char dmcrypt_config_help[] =
  "file=<FILENAME>     (required) The LUKS image, plain image or block device.\n"
  "passphrase=<PASSWORD>  LUKS passphrase: literal, +FILE, - (ask) or -FD.\n"
  "keyfile=<FILENAME>  LUKS key file (cryptsetup --key-file semantics).\n"
  "keyfile-offset=<N>  Bytes to skip at the start of the key file.\n"
  "keyfile-size=<N>    Bytes to read from the key file (default: all).\n"
  "key-slot=<N>        Try only this LUKS keyslot.\n"
  "header=<FILENAME>   Detached LUKS header.\n"
  "type=luks|luks1|luks2|plain  Volume type (default: by the other keys).\n"
  "table=<LINE>        Plain mode: a dm-crypt table line with the key.\n"
  "cipher=<SPEC>       Plain mode: cipher spec, e.g. aes-xts-plain64.\n"
  "key=<HEX>|+FILE     Plain mode: the key in hex.\n"
  "offset=<SECTORS>    Plain mode: data offset, 512-byte sectors.\n"
  "iv-offset=<SECTORS> Plain mode: IV offset, 512-byte sectors.\n"
  "sector-size=<BYTES> Plain mode: encryption sector size (512..4096).\n"
  "allow-discards=<BOOL>  Pass trims down as holes in the backing file.\n"
  "same-cpu-crypt=<BOOL>  Keep a request's crypto on one worker.\n"
  "submit-from-crypt-cpus=<BOOL>  Dispatch writes as workers finish.\n"
  "no-read-workqueue=<BOOL>  Decrypt in the calling thread.\n"
  "no-write-workqueue=<BOOL> Encrypt and write in the calling thread.\n"
  "iv-large-sectors=<BOOL>   IVs count encryption sectors, not 512 bytes.\n"
  "high-priority=<BOOL>   Raise worker and writer thread priority.\n"
  "min-block-size=<N> Minimum block size advertised (default: the\n"
  "                    encryption sector size; 1 for clients like nbdfuse).\n"
  "workers=<N>         Crypto worker threads (default: online CPUs).\n"
  "scheduler=sorted|fifo  Write-out ordering policy.\n"
  "max-read-size=<SIZE>   Largest read chunk (default 128K).\n"
  "max-write-size=<SIZE>  Largest write chunk (default 128K).\n"
  "max-inflight=<SIZE>    Cap on encrypted bytes in flight (default 64M).\n"
  "caller-crypt=<BOOL>    Request thread crypts too (default true).\n"
  "trace=<FILENAME>    Append blkparse-style backend IO events.\n"
  "fault-rules=<FILENAME>  Tests: inject backend faults by these rules.\n"
  "control=<SOCKET>    Control socket for dmcryptctl.\n"
  "name=<NAME>         Volume name for dmcryptctl.\n"
  "readonly=<BOOL>     Open with a read-only live table.";

static const char *const flag_keys[] = {
  "allow-discards", "same-cpu-crypt", "submit-from-crypt-cpus",
  "no-read-workqueue", "no-write-workqueue", "iv-large-sectors",
  "high-priority",
};

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
set_passphrase (const char *value)
{
  char *pw = NULL;

  if (params.passphrase) {
    nbdkit_error ("passphrase given more than once");
    return -1;
  }
  if (nbdkit_read_password (value, &pw) == -1)
    return -1;
  params.passphrase_size = strlen (pw);
  params.passphrase = secmem_dup (pw, params.passphrase_size + 1);
  explicit_bzero (pw, params.passphrase_size);
  free (pw);
  if (params.passphrase == NULL) {
    nbdkit_error ("passphrase: %m");
    return -1;
  }
  return 0;
}

static int
set_type (const char *value)
{
  static const struct { const char *name; enum volume_type type; } types[] = {
    { "luks", VT_LUKS }, { "luks1", VT_LUKS1 }, { "luks2", VT_LUKS2 },
    { "plain", VT_PLAIN },
  };
  size_t i;

  for (i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp (value, types[i].name) == 0) {
      params.type = types[i].type;
      return 0;
    }
  nbdkit_error ("type: unknown volume type '%s' "
                "(expected luks, luks1, luks2 or plain)", value);
  return -1;
}

static int
set_sectors (const char *key, const char *value, uint64_t *dst, bool *have)
{
  if (nbdkit_parse_uint64_t (key, value, dst) == -1)
    return -1;
  *have = true;
  return 0;
}

static int
set_size (const char *key, const char *value, uint64_t *dst)
{
  int64_t r = nbdkit_parse_size (value);

  if (r == -1)
    return -1;
  if (r == 0) {
    nbdkit_error ("%s: must be greater than zero", key);
    return -1;
  }
  *dst = r;
  return 0;
}

int key_param_parse (const char *value);   /* keyparam.c */
int config_numeric (const char *key, const char *value);

int
dmcrypt_config (const char *key, const char *value)
{
  size_t i;
  int b;

  for (i = 0; i < sizeof flag_keys / sizeof flag_keys[0]; i++)
    if (strcmp (key, flag_keys[i]) == 0) {
      if ((b = nbdkit_parse_bool (value)) == -1)
        return -1;
      params.flag[i] = b ? TRI_TRUE : TRI_FALSE;
      return 0;
    }

  if (strcmp (key, "file") == 0)
    return set_string (&params.file, key, value);
  else if (strcmp (key, "header") == 0)
    return set_string (&params.header, key, value);
  else if (strcmp (key, "keyfile") == 0)
    return set_string (&params.keyfile, key, value);
  else if (strcmp (key, "cipher") == 0)
    return set_string (&params.cipher, key, value);
  else if (strcmp (key, "scheduler") == 0) {
    /* The last one wins, so a test harness can force a policy. */
    free (params.scheduler);
    params.scheduler = NULL;
    return set_string (&params.scheduler, key, value);
  }
  else if (strcmp (key, "trace") == 0)
    return set_string (&params.trace, key, value);
  else if (strcmp (key, "fault-rules") == 0)
    return set_string (&params.fault_rules, key, value);
  else if (strcmp (key, "control") == 0)
    return set_string (&params.control, key, value);
  else if (strcmp (key, "name") == 0)
    return set_string (&params.name, key, value);
  else if (strcmp (key, "passphrase") == 0)
    return set_passphrase (value);
  else if (strcmp (key, "type") == 0)
    return set_type (value);
  else if (strcmp (key, "table") == 0) {
    if (params.table) {
      nbdkit_error ("table given more than once");
      return -1;
    }
    params.table = secmem_dup (value, strlen (value) + 1);
    return params.table ? 0 : -1;
  }
  else if (strcmp (key, "key") == 0)
    return key_param_parse (value);
  else if (strcmp (key, "offset") == 0)
    return set_sectors (key, value, &params.offset, &params.have_offset);
  else if (strcmp (key, "iv-offset") == 0)
    return set_sectors (key, value, &params.iv_offset,
                        &params.have_iv_offset);
  else if (strcmp (key, "max-read-size") == 0)
    return set_size (key, value, &params.max_read_size);
  else if (strcmp (key, "max-write-size") == 0)
    return set_size (key, value, &params.max_write_size);
  else if (strcmp (key, "max-inflight") == 0)
    return set_size (key, value, &params.max_inflight);
  else if (strcmp (key, "caller-crypt") == 0) {
    if ((b = nbdkit_parse_bool (value)) == -1)
      return -1;
    params.caller_crypt = b ? TRI_TRUE : TRI_FALSE;
    return 0;
  }
  else
    return config_numeric (key, value);
}

int
config_numeric (const char *key, const char *value)
{
  uint64_t v;

  if (strcmp (key, "keyfile-offset") == 0)
    return nbdkit_parse_uint64_t (key, value, &params.keyfile_offset);
  else if (strcmp (key, "keyfile-size") == 0)
    return nbdkit_parse_uint64_t (key, value, &params.keyfile_size);
  else if (strcmp (key, "key-slot") == 0) {
    if (nbdkit_parse_int (key, value, &params.key_slot) == -1)
      return -1;
    if (params.key_slot < 0) {
      nbdkit_error ("key-slot: must be 0 or more");
      return -1;
    }
    return 0;
  }
  else if (strcmp (key, "sector-size") == 0) {
    if (nbdkit_parse_unsigned (key, value, &params.sector_size) == -1)
      return -1;
    return 0;
  }
  else if (strcmp (key, "min-block-size") == 0) {
    if (nbdkit_parse_unsigned (key, value, &params.min_block_size) == -1)
      return -1;
    if (params.min_block_size == 0 || params.min_block_size > 4096
        || (params.min_block_size & (params.min_block_size - 1))) {
      nbdkit_error ("min-block-size: must be a power of two from 1 "
                    "to 4096");
      return -1;
    }
    return 0;
  }
  else if (strcmp (key, "workers") == 0) {
    if (nbdkit_parse_uint64_t (key, value, &v) == -1)
      return -1;
    if (v < 1 || v > 1024) {
      nbdkit_error ("workers: must be between 1 and 1024");
      return -1;
    }
    params.workers = v;
    return 0;
  }
  else if (strcmp (key, "readonly") == 0) {
    int b = nbdkit_parse_bool (value);
    if (b == -1)
      return -1;
    params.readonly = b;
    return 0;
  }
  nbdkit_error ("unknown parameter '%s'", key);
  return -1;
}

void
dmcrypt_params_free (void)
{
  if (params.passphrase)
    secmem_free (params.passphrase, params.passphrase_size + 1);
  if (params.table)
    secmem_free (params.table, strlen (params.table) + 1);
  if (params.key)
    secmem_free (params.key, params.key_size);
  free (params.file);
  free (params.header);
  free (params.keyfile);
  free (params.cipher);
  free (params.scheduler);
  free (params.trace);
  free (params.fault_rules);
  free (params.control);
  free (params.name);
  memset (&params, 0, sizeof params);
}
