/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Between the files of the volume (volume.h). */
#ifndef DMCRYPT_VOLUME_INTERNAL_H
#define DMCRYPT_VOLUME_INTERNAL_H

#include "volume.h"

/* notice.c: a one-line notice on stderr (not an error). */
void dmcrypt_notice (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

/* image.c: opens the image (read-only under nbdkit -r or when the user
 * may not write it) and the detached header, and locks both:
 * exclusively for a writable volume, shared for a read-only one; then
 * the backends over it (faults, the lab's device).  Returns 0 or -1
 * after nbdkit_error. */
int image_open (struct dmcrypt_volume *v);
void image_close (struct dmcrypt_volume *v);

/* table.c: V->table (and V->luks) from the header or the plain
 * parameters, its flags as given, checked against the image.  Returns
 * 0 or -1 after nbdkit_error. */
int table_make (struct dmcrypt_volume *v);

/* integrity.c (from table_make): with integrity (a LUKS2 segment's, or type=integrity),
 * the dm-integrity device opened over V->backend and the sealing
 * backend put over it (V->backend, V->integrity); V->table becomes the
 * table over it.  Nothing without.  Returns 0 or -1 after nbdkit_error. */
int integrity_stack (struct dmcrypt_volume *v);
/* The image starts with a dm-integrity superblock (integritysetup's
 * device, which has no LUKS header to find). */
bool integrity_superblock_at_start (struct dmcrypt_volume *v);

/* lab.c: device=... checked, and the simulated device put over the
 * image (V->backend), its clock given to the trace. */
int lab_check_params (const struct dmcrypt_params *p);
int lab_wrap_backend (struct dmcrypt_volume *v);
/* .after_fork: the simulated device's threads. */
int lab_start (struct dmcrypt_volume *v);
void lab_attach_trace (struct dmcrypt_volume *v);

/* facts.c: a lab client's export name under kernel= -- "cpu=N",
 * "sync", comma-separated -- into F (cpu -1 and sync false when not
 * said); CPUS is the number of modelled CPUs.  Returns 0 or -1 after
 * nbdkit_error naming the export name. */
struct conn_facts
{
  int cpu;                      /* the submitting CPU; -1: by index */
  bool sync;                    /* its writes are REQ_SYNC */
};
int conn_facts_parse (const char *name, unsigned cpus, struct conn_facts *f);

/* mapping.c: V->dm from V->table (consumed) and the engine's
 * parameters.  Returns 0 or -1 after nbdkit_error. */
int mapping_open (struct dmcrypt_volume *v);

#endif /* DMCRYPT_VOLUME_INTERNAL_H */
