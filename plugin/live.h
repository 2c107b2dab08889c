/* The volume as device-mapper sees it: a live table, an optional
 * inactive table loaded by "reload", and a suspend gate that every
 * request passes through.  "resume" swaps the inactive table in while
 * no request is inside: a new cipher and a new engine are built from
 * it and the old ones freed.  gate.c holds the gate, live.c the tables
 * and commands, message.c the "message" language, reload.c the checks
 * of a new table.
 *
 * The request side (live_enter/live_leave and the live_* getters) is
 * lock-free and may run in any thread.  Everything else is called by
 * the control thread alone, one command at a time. */
#ifndef DMCRYPT_PLUGIN_LIVE_H
#define DMCRYPT_PLUGIN_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../scheduler/engine.h"
#include "../table/crypt_table.h"

/* dmcrypt.c: the live table's read-only flag, and the NBD connections
 * open now (dmsetup's "Open count"). */
extern atomic_bool live_readonly;
extern atomic_uint open_count;

/* Why a control command failed: an errno value (what dmsetup prints
 * after "ioctl failed:") and a sentence for the user. */
struct live_err
{
  int errnum;
  char msg[256];
};
void live_fail (struct live_err *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Called in .config_complete after volume_open; .unload. */
int live_init (void);
void live_free (void);

/* Every request callback brackets its work with these.  live_enter
 * holds the caller while the volume is suspended, then refuses writes
 * (WRITE) while the live table is read-only (EROFS) and ranges beyond
 * the live table's end.  Returns 0, or -1 after nbdkit_set_error; only
 * after 0 must live_leave be called. */
int live_enter (uint64_t offset, uint64_t count, bool write);
void live_leave (void);

/* The live table's geometry, for the connection-time callbacks. */
uint64_t live_size (void);           /* bytes of plaintext */
unsigned live_flags (void);          /* enum crypt_table_flag */
unsigned live_sector_size (void);    /* bytes */

struct live_state
{
  bool suspended;
  bool inactive;             /* an inactive table is loaded */
  bool readonly;             /* the live table's flag */
  bool key_valid;            /* false after "key wipe" */
  unsigned inflight;         /* requests inside the gate now */
};
void live_get_state (struct live_state *s);

/* The table's device field: "major:minor" of a block device, the
 * image's absolute path otherwise. */
const char *live_device (void);

/* The live or inactive table as dmsetup prints it, in secmem (free
 * with crypt_table_free_line); NULL with errno ENXIO when there is no
 * inactive table. */
char *live_format_table (bool inactive, bool showkeys);

/* The engine's counters since start, across table swaps. */
void live_get_stats (struct engine_stats *st);

struct live_reload
{
  const char *line;          /* one crypt target line */
  bool readonly;             /* dmsetup reload --readonly */
  bool force;                /* allow changes of the data's meaning */
  const char *scheduler;     /* NULL: keep the live one */
  bool set_workers;
  unsigned workers;
};

/* The commands.  Each returns 0, or -1 with ERR filled in; a failed
 * command leaves both tables as they were. */
int live_reload (const struct live_reload *r, struct live_err *err);
void live_clear (void);
int live_suspend (bool noflush, struct live_err *err);
int live_resume (struct live_err *err);
int live_message (uint64_t sector, const char *text, struct live_err *err);

/* ---- Between the files of this part ---- */

/* reload.c: checks a new table against the live one and the image.
 * Fills T (freed on failure).  Returns 0 or -1 with ERR. */
int reload_init (void);
int reload_check (const struct live_reload *r, struct crypt_table *t,
                  struct live_err *err);

/* gate.c: publishes T's geometry to the getters above; closes the gate
 * and waits until no request is inside (a minute at most, then it opens
 * again and returns -1 with errno ETIMEDOUT); opens it. */
void gate_publish (const struct crypt_table *t);
int gate_close (void);
void gate_open (void);
bool gate_is_closed (void);
unsigned gate_inflight (void);

/* live.c, for message.c.  While suspended: wipes the live key and frees
 * cipher and engine; makes KEY (secmem, the live key's size, consumed
 * on success) the live key.  Changes the write-out policy (SCHEDULER,
 * consumed on success) and/or the worker count, suspending a running
 * volume for the swap. */
void live_key_wipe (void);
int live_key_set (uint8_t *key, struct live_err *err);
int live_set_tunables (char *scheduler, bool set_workers, unsigned workers,
                       struct live_err *err);
/* message.c: NAME is one of engine_policy_names(). */
bool live_known_policy (const char *name);

#endif /* DMCRYPT_PLUGIN_LIVE_H */
