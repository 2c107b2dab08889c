/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The device-mapper core: one mapping of a crypt table over a backend,
 * as the kernel's device-mapper keeps it.  A mapping has a live table
 * (with the cipher and engine built from it), an optional inactive
 * table loaded by reload, a read-only flag, an open count and a suspend
 * gate that every request passes.  resume swaps the inactive table in
 * while no request is inside.  A failed command leaves both tables as
 * they were.
 *
 * Everything a mapping needs comes in through dm_new: the table, the
 * backend, the engine's settings and what the front end must do for it
 * (dm_host).  The front ends (the nbdkit plugin and filter) only turn
 * their callbacks into these calls.
 *
 * The request side (dm_enter/dm_leave and the getters) is lock-free and
 * may run in any thread.  The commands are called by one control thread
 * at a time. */
#ifndef DMCRYPT_DM_H
#define DMCRYPT_DM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../backend/backend.h"
#include "../crypto/cipher.h"
#include "../scheduler/engine.h"
#include "../table/crypt_table.h"
#include "../table/segments.h"

struct dm_mapping;

/* Why a command failed: an errno value (what dmsetup prints after
 * "ioctl failed:") and a sentence for the user. */
struct dm_err
{
  int errnum;
  char msg[256];
};
void dm_fail (struct dm_err *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* What the front end provides.  Copied by dm_new. */
struct dm_host
{
  struct backend *backend;         /* under the engine; outlives the
                                      mapping */
  /* The table's device field as dmsetup shows it ("major:minor" or the
   * image's absolute path), and whether FIELD (of a reloaded table)
   * names the same device.  SAME_DEVICE NULL: string equality. */
  const char *device;
  bool (*same_device) (void *arg, const char *field);
  /* The image's locks follow the tables: exclusive while a writable
   * table is live or loaded.  Returns 0, or -1 with errno and a
   * one-line reason in WHY.  NULL: nothing to lock. */
  int (*locks_follow) (void *arg, bool writable, char *why, size_t size);
  /* Called while a request waits at a closed gate, to sleep a little;
   * -1 fails the request with ESHUTDOWN (the server is going away). */
  int (*hold) (void *arg);
  void *arg;
  bool server_readonly;            /* nothing may ever write (nbdkit -r) */
  enum sector_cipher_library cipher_library;   /* every table's */
  /* The engine's settings that no table carries (max sizes, in-flight
   * cap, offload, debug); the rest is filled from each table. */
  struct engine_config engine;
};

/* Tunables a table does not carry: reload and message may change
 * them. */
struct dm_tunables
{
  const char *scheduler;           /* NULL: keep (dm_new: "sorted") */
  bool set_workers;
  unsigned workers;                /* 0: online CPUs */
};

#define DM_MAX_WORKERS 1024

/* A mapping of T (consumed on success), read-only if READONLY, with
 * its cipher and engine built.  NULL with ERR filled on failure. */
struct dm_mapping *dm_new (const struct dm_host *host, struct crypt_table *t,
                           bool readonly, const struct dm_tunables *tun,
                           struct dm_err *err);
/* Makes the mapping one of the segments in L (copied), which share the
 * live table's cipher and engine; before dm_start, once.  Such a
 * mapping refuses reload.  Returns 0, or -1 with ERR filled. */
int dm_set_segments (struct dm_mapping *m, const struct segment_list *l,
                     uint64_t device_bytes, struct dm_err *err);
/* The same, with SECOND (consumed on success) as the mapping's second
 * table: segments naming table 1 go to its own cipher and engine.  Such
 * a mapping refuses reload, key and tunable messages.  SECOND NULL:
 * dm_set_segments. */
int dm_set_segment_tables (struct dm_mapping *m, const struct segment_list *l,
                           struct crypt_table *second, uint64_t device_bytes,
                           struct dm_err *err);
/* Whether the mapping has a second table. */
bool dm_has_second_table (const struct dm_mapping *m);
/* The segment list, or NULL for a mapping of the table alone. */
const struct segment_list *dm_segments (const struct dm_mapping *m);
/* The live table, which the segments' crypt lines share. */
const struct crypt_table *dm_live_table (const struct dm_mapping *m);

/* Starts the engine's threads (after nbdkit forks). */
int dm_start (struct dm_mapping *m);
void dm_free (struct dm_mapping *m);

/* ---- Requests ---- */

/* Every request brackets its work with these.  dm_enter holds the
 * caller while the mapping is suspended, then refuses writes (WRITE)
 * while the live table is read-only (EROFS) and ranges beyond its end
 * (ENOSPC for writes, EIO for reads).  Returns 0, or an errno value;
 * only after 0 must dm_leave be called.  The engine is valid until
 * dm_leave (a mapping whose key was wiped stays suspended until a key
 * is set: inside the gate there is always an engine). */
int dm_enter (struct dm_mapping *m, uint64_t offset, uint64_t count,
              bool write);
void dm_leave (struct dm_mapping *m);
struct engine *dm_engine (struct dm_mapping *m);

/* Between dm_enter and dm_leave: OP on COUNT bytes at OFFSET (bytes of
 * the mapping; a flush is of everything) through the live engine,
 * split at the boundaries of the mapping's segments (dm_set_segments).
 * Returns 0, or -1 with errno. */
enum dm_io_op { DM_IO_READ, DM_IO_WRITE, DM_IO_ZERO, DM_IO_TRIM,
                DM_IO_FLUSH };
int dm_io (struct dm_mapping *m, enum dm_io_op op, void *buf, uint32_t count,
           uint64_t offset, bool fua);

/* The live table's geometry and flags, for connection-time answers. */
uint64_t dm_size (const struct dm_mapping *m);          /* bytes */
unsigned dm_flags (const struct dm_mapping *m);         /* crypt_table */
unsigned dm_sector_size (const struct dm_mapping *m);   /* bytes */
bool dm_readonly (const struct dm_mapping *m);

/* Connections open now: dmsetup's "Open count". */
void dm_opened (struct dm_mapping *m);
void dm_closed (struct dm_mapping *m);

/* ---- Queries (control thread) ---- */

struct dm_state
{
  bool suspended;
  bool inactive;             /* an inactive table is loaded */
  bool readonly;             /* the live table's flag */
  bool key_valid;            /* false after "key wipe" */
  unsigned inflight;         /* requests inside the gate now */
  unsigned open;             /* connections */
  uint64_t length;           /* the live table's, 512-byte sectors */
  unsigned targets;          /* segments, 1 for the table alone */
  const char *scheduler;     /* the live write-out policy */
  const char *cipher_library;  /* sector_cipher_library of the live
                                  table's cipher; "none" while its key
                                  is wiped */
  unsigned workers;          /* 0: online CPUs */
};
void dm_get_state (const struct dm_mapping *m, struct dm_state *s);

/* The live or inactive table as dmsetup prints it, in secmem (free
 * with crypt_table_free_line); NULL with errno ENXIO when there is no
 * inactive table. */
char *dm_format_table (const struct dm_mapping *m, bool inactive,
                       bool showkeys);

/* The engine's counters since dm_new, across table swaps. */
void dm_get_stats (const struct dm_mapping *m, struct engine_stats *st);

/* ---- Commands (control thread) ---- */

struct dm_reload
{
  const char *line;          /* one crypt target line */
  bool readonly;             /* dmsetup reload --readonly */
  bool force;                /* allow changes of the data's meaning */
  struct dm_tunables tun;
};

/* Each returns 0, or -1 with ERR filled. */
int dm_reload (struct dm_mapping *m, const struct dm_reload *r,
               struct dm_err *err);
void dm_clear (struct dm_mapping *m);
int dm_suspend (struct dm_mapping *m, bool noflush, struct dm_err *err);
int dm_resume (struct dm_mapping *m, struct dm_err *err);
/* dm-crypt's "key set HEX", "key wipe", and dmcrypt's "scheduler NAME"
 * and "workers N". */
int dm_message (struct dm_mapping *m, uint64_t sector, const char *text,
                struct dm_err *err);

#endif /* DMCRYPT_DM_H */
