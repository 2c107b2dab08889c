/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every parameter's name and --help line, and the names people slip
 * into from dmsetup and cryptsetup. */
#include <stdio.h>
#include <string.h>

#include "params.h"

/* Every parameter but file=, which is the plugin's own (the filter's
 * image is the layer below). */
#define PARAMS_HELP \
  "passphrase=<PASSWORD>  Passphrase: literal, +FILE, - (ask) or -FD.\n" \
  "keyfile=<FILENAME>  Key file (cryptsetup --key-file; also key-file=);\n" \
  "                    TCRYPT: repeatable, mixed into the passphrase.\n" \
  "keyfile-offset=<N>  Bytes to skip at the start of the key file.\n" \
  "keyfile-size=<N>    LUKS, loop-AES: bytes to read from the key file" \
  " (default:\n" \
  "                    all).\n" \
  "key-slot=<N>        Try only this LUKS keyslot.\n" \
  "token-id=<N>        LUKS: try only this token (LUKS1: Clevis's\n" \
  "                    luksmeta slot) first (cryptsetup --token-id).\n" \
  "token-type=<TYPE>   LUKS: try only tokens of this type first, e.g.\n" \
  "                    clevis, systemd-tpm2 (cryptsetup --token-type).\n" \
  "token-only=<BOOL>   LUKS: tokens only, no passphrase fallback\n" \
  "                    (cryptsetup --token-only).  Without passphrase=\n" \
  "                    or keyfile=, a LUKS volume's tokens are tried.\n" \
  "header=<FILENAME>   Detached LUKS header.\n" \
  "type=luks|luks1|luks2|plain|fvault2|tcrypt|bitlk|loopaes|integrity\n" \
  "                    Volume type (default: plain with table= or\n" \
  "                    cipher=, else LUKS (with or without integrity),\n" \
  "                    FileVault2 or BitLocker by magic; TrueCrypt and\n" \
  "                    VeraCrypt need type=tcrypt, loop-AES type=loopaes\n" \
  "                    with keyfile=, dm-integrity alone type=integrity).\n" \
  "tcrypt-hidden=<BOOL>  TCRYPT: open the hidden volume.\n" \
  "tcrypt-system=<BOOL>  TCRYPT: a system volume (header in sector 62).\n" \
  "tcrypt-backup=<BOOL>  TCRYPT: use the backup header near the end.\n" \
  "veracrypt-pim=<N>   TCRYPT: VeraCrypt's personal iteration multiplier.\n" \
  "tcrypt-hash=<HASH>  TCRYPT: try only this PBKDF2 hash (default: all).\n" \
  "integrity=<ALG>     type=integrity: the tags' hash (default crc32c).\n" \
  "integrity-key-file=<FILENAME>  type=integrity: a keyed hash's key.\n" \
  "integrity-key-size=<BYTES>  type=integrity: bytes of that key file\n" \
  "                    (default: all of it).\n" \
  "integrity-mode=journal|bitmap|direct|recovery  dm-integrity's mode\n" \
  "                    (type=integrity, LUKS2 with integrity; default\n" \
  "                    journal).\n" \
  "table=<LINE>|+FILE|-FD|-  Plain mode: a dm-crypt table line with the" \
  " key.\n" \
  "cipher=<SPEC>       Plain mode: cipher spec, e.g. aes-xts-plain64;\n" \
  "                    loop-AES: the block cipher (default aes).\n" \
  "key=<HEX>|+FILE|-FD|-  Plain mode: the key in hex.\n" \
  "key-size=<BITS>     Plain mode: key size for passphrase= or key-file=;\n" \
  "                    loop-AES: each key's (default 256).\n" \
  "hash=<HASH>         Plain mode: passphrase hash (default ripemd160);\n" \
  "                    loop-AES: key hash (default by key-size: sha256,\n" \
  "                    sha384, sha512).\n" \
  "offset=<SECTORS>    Plain mode, loop-AES: data offset, 512-byte\n" \
  "                    sectors.\n" \
  "iv-offset=<SECTORS> Plain mode, loop-AES (--skip): IV offset, 512-byte\n" \
  "                    sectors (loop-AES default: offset=).\n" \
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

const char *const dmcrypt_param_names[] = {
  "file", "passphrase", "keyfile", "key-file", "keyfile-offset",
  "keyfile-size", "key-slot", "token-id", "token-type", "token-only",
  "header", "type", "table", "cipher", "key",
  "key-size", "hash", "offset", "iv-offset", "sector-size",
  "allow-discards", "same-cpu-crypt", "submit-from-crypt-cpus",
  "no-read-workqueue", "no-write-workqueue", "iv-large-sectors",
  "high-priority", "min-block-size", "workers", "scheduler",
  "max-read-size", "max-write-size", "max-inflight", "caller-crypt",
  "max-write-rounds", "cipher-library", "trace", "fault-rules", "control",
  "name",
  "readonly", "device", "device-params", "device-speed", "nr-requests",
  "elevator", "elevator-params", "kernel", "hz", "kcryptd-io",
  "tcrypt-hidden", "tcrypt-system", "tcrypt-backup", "veracrypt-pim",
  "tcrypt-hash", "integrity", "integrity-key-file", "integrity-key-size",
  "integrity-mode", NULL,
};

bool
params_is_name (const char *name)
{
  size_t i;

  for (i = 0; dmcrypt_param_names[i]; i++)
    if (strcmp (name, dmcrypt_param_names[i]) == 0)
      return true;
  return false;
}

/* dm's spellings (allow_discards) and cryptsetup's (key_size) are the
 * usual slips: ours, when KEY is one of them. */
const char *
params_respelt (const char *key, char *alt, size_t size)
{
  size_t i;

  snprintf (alt, size, "%s", key);
  for (i = 0; alt[i]; i++)
    if (alt[i] == '_')
      alt[i] = '-';
  return strcmp (alt, key) != 0 && params_is_name (alt) ? alt : NULL;
}
