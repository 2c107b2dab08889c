/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Between the files of the device-mapper core (dm.h): mapping.c builds
 * and swaps tables, gate.c lets requests in, reload.c checks a new
 * table, message.c parses messages. */
#ifndef DMCRYPT_DM_INT_H
#define DMCRYPT_DM_INT_H

#include <stdatomic.h>

#include "dm.h"
#include "../table/segments.h"

/* The suspend gate: a count of requests inside and a "closed" flag,
 * both sequentially consistent: a request raises the count before it
 * reads the flag, suspend raises the flag before it reads the count,
 * so one of the two always sees the other. */
struct dm_gate
{
  atomic_uint inflight;
  atomic_bool closed;
  _Atomic uint64_t size;           /* bytes */
  atomic_uint flags;               /* enum crypt_table_flag */
  atomic_uint sector_size;         /* bytes */
};

struct dm_live
{
  struct crypt_table table;
  struct sector_cipher *cipher;    /* NULL after "key wipe" */
  struct engine *engine;           /* NULL after "key wipe" */
  char *scheduler;                 /* the policy's name */
  unsigned workers;
};

struct dm_inactive
{
  bool loaded;
  struct crypt_table table;
  bool readonly;
  char *scheduler;                 /* NULL: keep the live one */
  bool set_workers;
  unsigned workers;
};

struct dm_mapping
{
  struct dm_host host;
  struct dm_gate gate;
  atomic_bool readonly;
  atomic_uint open;
  bool started;                    /* dm_start ran: engines get threads */
  bool key_valid;                  /* false after "key wipe" */
  struct dm_live live;
  struct dm_inactive inactive;
  struct segment_list segments;    /* count 0: the live table alone */
  bool reencrypt;                  /* segments of a LUKS2 re-encryption:
                                      a second table or a linear part */
  /* A second table of the segments' (dm_set_segment_tables): the other
   * volume key of a re-encryption, with its own cipher and engine; its
   * engine NULL when the live table is the only one. */
  struct dm_live second;
  struct engine_stats retired;     /* engines already freed */
};

/* gate.c */
void gate_publish (struct dm_mapping *m);
/* Closes the gate and waits until no request is inside (a minute at
 * most, then it opens again and returns -1 with errno ETIMEDOUT). */
int gate_close (struct dm_mapping *m);
void gate_open (struct dm_mapping *m);
bool gate_is_closed (const struct dm_mapping *m);

/* reload.c: T from R's line, checked against the mapping: the
 * kernel's constructor rules, this device, its size, read-only, and no
 * change of the data's meaning unless forced.  Returns 0 (T filled) or
 * -1 with ERR (T empty). */
int reload_check (const struct dm_mapping *m, const struct dm_reload *r,
                  struct crypt_table *t, struct dm_err *err);
bool dm_known_policy (const char *name);

/* mapping.c: makes T (consumed on success) the live table with a new
 * cipher and engine, SCHEDULER (consumed on success; NULL keeps the
 * policy) and, if SET_WORKERS, WORKERS threads; only while the gate is
 * closed.  On failure everything stays as it was. */
int mapping_install (struct dm_mapping *m, struct crypt_table *t,
                     char *scheduler, bool set_workers, unsigned workers,
                     struct dm_err *err);

/* mapping.c, for message.c: while suspended, wipes the live key and
 * frees cipher and engine; makes KEY (secmem of the live key's size,
 * consumed on success) the live key; changes the tunables, suspending a
 * running mapping for the swap. */
void mapping_key_wipe (struct dm_mapping *m);
int mapping_key_set (struct dm_mapping *m, uint8_t *key, struct dm_err *err);
int mapping_set_tunables (struct dm_mapping *m, const struct dm_tunables *tun,
                          struct dm_err *err);

#endif /* DMCRYPT_DM_INT_H */
