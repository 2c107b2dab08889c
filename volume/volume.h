/* State shared by the plugin's files: the parameters as given, and the
 * volume built from them in .config_complete. */
#ifndef DMCRYPT_PLUGIN_H
#define DMCRYPT_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../backend/backend.h"
#include "../crypto/cipher.h"
#include "../dm/dm.h"
#include "../luks/luks.h"
#include "../scheduler/engine.h"
#include "../table/crypt_table.h"
#include "lock/lock.h"

/* min-block-size=sector: the live table's encryption sector size. */
#define MIN_BLOCK_SECTOR (~0u)

enum volume_type { VT_UNSET, VT_LUKS, VT_LUKS1, VT_LUKS2, VT_PLAIN,
                   VT_FVAULT2, VT_TCRYPT, VT_BITLK };

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
  uint64_t keyfile_offset;       /* bytes */
  uint64_t keyfile_size;         /* bytes, 0 = to EOF */
  int key_slot;                  /* -1 = any */
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
};

struct dmcrypt_volume
{
  /* The nbdkit filter: the data is the next layer's (LOWER), not a
   * file the volume opens. */
  bool filter;
  struct backend *lower;
  const char *image;             /* the data's name in messages and
                                    dmcryptctl: the image file, or the
                                    filter's label */
  const char *data_path;         /* what libcryptsetup reads: params.file,
                                    or the filter's copy of the header */
  bool server_readonly;          /* nbdkit -r: nothing may ever write */
  struct backend *file_backend;  /* the image, under any wrapper */
  struct image_locks locks;      /* the image's and the header's */
  struct crypt_table table;      /* the table being made; the mapping
                                    takes it */
  struct luks_info luks;         /* valid when is_luks */
  bool is_luks;
  struct backend *backend;
  struct dm_mapping *dm;         /* the live table, its engine, reload,
                                    suspend: dm/dm.h */
};

extern struct dmcrypt_params params;
extern struct dmcrypt_volume volume;

/* config.c */
int dmcrypt_config (const char *key, const char *value);
void dmcrypt_params_free (void);
extern const char dmcrypt_config_help[];
extern const char dmcrypt_filter_config_help[];
/* Every parameter name, NULL-terminated. */
extern const char *const dmcrypt_param_names[];
bool dmcrypt_is_param_name (const char *name);
const char *dmcrypt_param_respelt (const char *key, char *alt,
                                   size_t size);

/* secrets.c: passphrase=, table=, key= (the forms that keep a secret
 * off the command line: +FILE, -FD, - to ask). */
int secret_passphrase (const char *value);
int secret_table (const char *value);
int secret_key (const char *value);

/* secretread.c: +FILE, -FD or - (VALUE) read into secmem of *SIZE + 1
 * bytes, NUL-terminated; WHAT names the parameter in errors. */
char *secret_read (const char *what, const char *value, size_t *size);

/* keysource.c: the plain-mode key from passphrase= (hashed) or
 * key-file=, into params.key, when cipher= is used without key=. */
int plain_key_derive (void);

/* notice.c: a one-line notice on stderr (not an error). */
void dmcrypt_notice (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/* keysource.c: the parameters that go together for PLAIN or LUKS. */
int check_key_combinations (bool plain);

/* image.c: opens the image (read-only under nbdkit -r or when the
 * user may not write it) and the detached header, and locks both:
 * exclusively for a writable volume, shared for a read-only one. */
int image_open (void);
void image_close (void);

/* lab.c: device=... checked, and the simulated device put over the
 * image (volume.backend), its clock given to the trace. */
int lab_check_params (void);
int lab_wrap_backend (void);
/* .after_fork: the simulated device's threads. */
int lab_start (void);
void lab_attach_trace (void);

/* io.c: a client connection, the handle of both front ends: its index
 * from 0 in the order connections were opened.  A client process is a
 * connection: its requests are submitted with io_context INDEX + 1 and,
 * under kernel=, from modelled CPU INDEX modulo the CPUs (workers=)
 * (backend/submitter.h).  NULL after nbdkit_error. */
struct dmcrypt_conn
{
  unsigned index;
};
struct dmcrypt_conn *dmcrypt_conn_new (void);
void dmcrypt_conn_free (struct dmcrypt_conn *conn);

/* io.c: a request of CONN through the mapping's gate and the engine.
 * Returns 0, or -1 with *ERR the errno for nbdkit (after nbdkit_error
 * when the engine failed). */
enum io_op { IO_READ = DM_IO_READ, IO_WRITE = DM_IO_WRITE,
             IO_ZERO = DM_IO_ZERO, IO_TRIM = DM_IO_TRIM,
             IO_FLUSH = DM_IO_FLUSH };
int dmcrypt_io (const struct dmcrypt_conn *conn, enum io_op op, void *buf,
                uint32_t count, uint64_t offset, bool fua, int *err);
/* The minimum and preferred block sizes both front ends advertise, in
 * bytes, from min-block-size= and the live table's sector size. */
void dmcrypt_block_sizes (uint32_t *minimum, uint32_t *preferred);

/* volume.c */
/* The parameters checked alone, before anything is opened. */
int volume_check_params (void);
const char *volume_image_file (void);
int volume_open (void);
void volume_close (void);

/* mapping.c: volume.dm from volume.table (consumed) and the engine's
 * parameters.  Returns 0 or -1 after nbdkit_error. */
int mapping_open (void);
/* The table's device field: "major:minor" of a block device, the
 * image's absolute path otherwise. */
const char *mapping_device (void);

#endif /* DMCRYPT_PLUGIN_H */
