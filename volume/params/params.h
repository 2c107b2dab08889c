/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A volume's parameters: nbdkit's key=value pairs read into one object,
 * every refusal one line that names the parameter (nbdkit_error).
 * Secrets (passphrase=, table=, key=) are read from their +FILE, -FD
 * or - forms straight into locked memory (crypto/secmem.h) and wiped
 * when dropped.
 *
 * config.c reads a pair, confignum.c the numbers, secrets.c and
 * secretread.c the secrets, names.c knows every name and the help,
 * keysource.c checks which parameters go together and derives a plain
 * key; cmdline.h reads nbdkit's own command line. */
#ifndef DMCRYPT_VOLUME_PARAMS_H
#define DMCRYPT_VOLUME_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../crypto/cipher.h"

/* min-block-size=sector: the live table's encryption sector size. */
#define MIN_BLOCK_SECTOR (~0u)

enum volume_type { VT_UNSET, VT_LUKS, VT_LUKS1, VT_LUKS2, VT_PLAIN,
                   VT_FVAULT2, VT_TCRYPT, VT_BITLK, VT_LOOPAES,
                   VT_INTEGRITY };

/* A boolean parameter that was given or not: unset leaves the table's
 * (or LUKS2 header's) own flag alone. */
enum tristate { TRI_UNSET = -1, TRI_FALSE = 0, TRI_TRUE = 1 };

struct dmcrypt_params
{
  char *file;
  /* The filter: the file the layer below serves, when the command line
   * names exactly one (the plugin's file=); NULL otherwise. */
  char *layer_file;
  char *header;
  enum volume_type type;
  bool type_given;               /* type= was on the command line */
  char *passphrase;              /* secmem, passphrase_size bytes + NUL */
  size_t passphrase_size;
  char *passphrase_file_hint;    /* a literal passphrase= that names an
                                    existing file: it meant +FILE */
  char *keyfile;                 /* keyfile= or key-file= */
  char **keyfiles;               /* every keyfile= in order (TCRYPT
                                    takes several), keyfiles_count */
  size_t keyfiles_count;
  /* type=tcrypt */
  bool tcrypt_hidden, tcrypt_system, tcrypt_backup;
  unsigned veracrypt_pim;        /* 0 = none */
  char *tcrypt_hash;             /* NULL = try every hash */
  /* type=integrity (integritysetup open): the tags' hash, NULL =
   * crc32c; a keyed hash's key file, read whole or its first
   * integrity_key_size bytes. */
  char *integrity;
  char *integrity_key_file;
  uint64_t integrity_key_size;   /* bytes, 0 = the whole file */
  /* integrity-mode=: 'J' (journal), 'B' (bitmap), 'D' (direct), 'R'
   * (recovery), for type=integrity and LUKS2 with integrity; 0 = J. */
  char integrity_mode;
  uint64_t keyfile_offset;       /* bytes */
  uint64_t keyfile_size;         /* bytes, 0 = to EOF */
  int key_slot;                  /* -1 = any */
  /* LUKS tokens, as cryptsetup open's --token-id, --token-type and
   * --token-only: tried first when one of them is given or when there
   * is no passphrase= or keyfile=. */
  int token_id;                  /* -1 = any */
  char *token_type;              /* NULL = any */
  bool token_only;               /* no passphrase fallback */
  char *table;                   /* secmem copy of the table= line */
  char *cipher;
  uint8_t *key;                  /* secmem */
  size_t key_size;               /* bytes */
  char *hash;                    /* plain passphrase hash, NULL = default */
  unsigned key_bits;             /* key-size=, bits; 0 = unset */
  bool have_offset, have_iv_offset;
  uint64_t offset;               /* 512-byte sectors */
  uint64_t iv_offset;            /* 512-byte sectors */
  unsigned sector_size;          /* bytes, 0 = unset */
  enum tristate flag[7];         /* indexed by log2 of crypt_table_flag */
  unsigned workers;
  char *scheduler;
  char *trace;
  char *fault_rules;             /* test facility: backend/fault.h */
  char *control;
  char *name;
  bool readonly;
  uint64_t max_read_size, max_write_size;   /* bytes, 0 = default */
  unsigned min_block_size;       /* bytes advertised, 0 = 1 (default);
                                    MIN_BLOCK_SECTOR: the encryption
                                    sector size */
  uint64_t max_inflight;         /* bytes of ciphertext, 0 = default */
  unsigned max_write_rounds;     /* 0 = no limit */
  enum tristate caller_crypt;    /* unset = true */
  enum sector_cipher_library cipher_library;   /* 0: auto */
  /* The scheduling lab: a simulated device under the engine. */
  char *device;                  /* NULL or "none": the image as it is */
  char *device_params;
  double device_speed;           /* 0: real time */
  unsigned nr_requests;          /* 0: the elevator's default */
  char *elevator;
  char *elevator_params;         /* "key=value,...": its tunables */
  /* kernel=: the kernel series whose pipeline the lab models
   * (backend/kseries.h), for the engine's threads and the simulated
   * block layer; KSERIES_NONE: dmcrypt's own. */
  int kernel;
  unsigned hz;                   /* hz=: the modelled kernel's ticks a
                                    second; 0: the series' default */
  /* kcryptd-io=: read clones submitted by a kcryptd_io thread (2.6.32)
   * or by the reader (2.6.38 on); unset: the series' way. */
  enum tristate kcryptd_io;
  /* Not a parameter: the front end's -D dmcrypt.* flags, as
   * ENGINE_DEBUG_* bits (scheduler/engine.h), for the engine. */
  unsigned engine_debug;
};

/* ---- config.c ---- */

/* P with nothing given: every field unset. */
void params_init (struct dmcrypt_params *p);
/* KEY=VALUE of nbdkit's .config into P (dmcrypt-KEY= as KEY=).
 * Returns 0, or -1 after one nbdkit_error naming the parameter. */
int params_config (struct dmcrypt_params *p, const char *key,
                   const char *value);
/* Frees what P holds, secrets wiped, and leaves P as params_init
 * does. */
void params_free (struct dmcrypt_params *p);

/* ---- names.c ---- */

/* --help of the plugin (with file=) and of the filter (without: its
 * data is the layer below). */
extern const char dmcrypt_config_help[];
extern const char dmcrypt_filter_config_help[];
/* Every parameter name, NULL-terminated. */
extern const char *const dmcrypt_param_names[];
bool params_is_name (const char *name);
/* dm's spelling (allow_discards) or cryptsetup's (key_size) of one of
 * ours: the name as we spell it in ALT (SIZE bytes), or NULL. */
const char *params_respelt (const char *key, char *alt, size_t size);

/* ---- keysource.c ---- */

/* The volume's type settled: plain with table= or cipher=, else LUKS
 * (whose format is found by its magic).  True for plain. */
bool params_plain (struct dmcrypt_params *p);
/* The parameters that must, or must not, go together for the type;
 * file= unless NEED_FILE is false (the filter's data is the layer
 * below).  Returns 0, or -1 after nbdkit_error. */
int params_check (struct dmcrypt_params *p, bool need_file);
/* The plain-mode key from passphrase= (hashed) or key-file= into
 * P->key, with cryptsetup's plain defaults, when cipher= comes without
 * key=; the passphrase is dropped.  Returns 0 or -1. */
int plain_key_derive (struct dmcrypt_params *p);

/* ---- Between the files ---- */

/* secrets.c: passphrase=, table= and key= into P. */
int secret_passphrase (struct dmcrypt_params *p, const char *value);
int secret_table (struct dmcrypt_params *p, const char *value);
int secret_key (struct dmcrypt_params *p, const char *value);

/* secretread.c: +FILE, -FD or - (VALUE) read into secmem of *SIZE + 1
 * bytes, NUL-terminated; WHAT names the parameter in errors. */
char *secret_read (const char *what, const char *value, size_t *size);

/* confignum.c: the numeric parameters into P, and the refusal of a
 * key that is none of ours.  Returns 0 or -1 after nbdkit_error. */
int config_numeric (struct dmcrypt_params *p, const char *key,
                    const char *value);
/* KEY=VALUE, a whole number from MIN to MAX, into *DST. */
int config_number (const char *key, const char *value, uint64_t min,
                   uint64_t max, uint64_t *dst);
/* KEY=VALUE, a size in bytes (512s, 4K, 1M ...) of at least MIN, which
 * MIN_WORDS says in words, into *DST. */
int config_size (const char *key, const char *value, uint64_t min,
                 const char *min_words, uint64_t *dst);

#endif /* DMCRYPT_VOLUME_PARAMS_H */
