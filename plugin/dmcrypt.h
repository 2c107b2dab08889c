/* State shared by the plugin's files: the parameters as given, and the
 * volume built from them in .config_complete. */
#ifndef DMCRYPT_PLUGIN_H
#define DMCRYPT_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../backend/backend.h"
#include "../crypto/cipher.h"
#include "../luks/luks.h"
#include "../scheduler/engine.h"
#include "../table/crypt_table.h"

enum volume_type { VT_UNSET, VT_LUKS, VT_LUKS1, VT_LUKS2, VT_PLAIN };

/* A boolean parameter that was given or not: unset leaves the table's
 * (or LUKS2 header's) own flag alone. */
enum tristate { TRI_UNSET = -1, TRI_FALSE = 0, TRI_TRUE = 1 };

struct dmcrypt_params
{
  char *file;
  char *header;
  enum volume_type type;
  char *passphrase;              /* secmem, passphrase_size bytes + NUL */
  size_t passphrase_size;
  char *keyfile;
  uint64_t keyfile_offset;       /* bytes */
  uint64_t keyfile_size;         /* bytes, 0 = to EOF */
  int key_slot;                  /* -1 = any */
  char *table;                   /* secmem copy of the table= line */
  char *cipher;
  uint8_t *key;                  /* secmem */
  size_t key_size;               /* bytes */
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
  unsigned min_block_size;       /* bytes advertised, 0 = sector size */
  uint64_t max_inflight;         /* bytes of ciphertext, 0 = default */
  enum tristate caller_crypt;    /* unset = true */
};

struct dmcrypt_volume
{
  struct crypt_table table;      /* the live table */
  struct luks_info luks;         /* valid when is_luks */
  bool is_luks;
  uint64_t size;                 /* bytes of plaintext exported */
  struct backend *backend;
  struct sector_cipher *cipher;
  struct engine *engine;
};

extern struct dmcrypt_params params;
extern struct dmcrypt_volume volume;

/* config.c */
int dmcrypt_config (const char *key, const char *value);
void dmcrypt_params_free (void);
extern const char dmcrypt_config_help[];

/* volume.c */
int volume_open (void);
void volume_close (void);
/* A new volume.cipher and volume.engine from volume.table, volume.size
 * and params.scheduler/workers.  Returns 0 or -1 after nbdkit_error. */
int volume_build_engine (void);

#endif /* DMCRYPT_PLUGIN_H */
