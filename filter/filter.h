/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The nbdkit filter's own files: the front end (filter.c), its
 * parameters (config.c), nbdkit's command line as it needs it
 * (server.c), the backend over the next layer (nextback.h) and the
 * header copy (header.c).  The volume they serve is the layer both
 * front ends share (volume/volume.h). */
#ifndef DMCRYPT_FILTER_H
#define DMCRYPT_FILTER_H

#include <stddef.h>

#include <nbdkit-filter.h>

#include "../backend/backend.h"
#include "../volume/params/cmdline.h"
#include "../volume/params/params.h"

/* What the volume's data is called where the plugin shows a file name:
 * in messages, dmcryptctl's image field, table device fields. */
#define FILTER_IMAGE_LABEL "nbdkit-next-layer"

/* header.c: a memfd holding LOWER's header area (the whole LUKS header
 * with its keyslots; the first 64 KiB of anything else), its path for
 * libcryptsetup into PATH.  Returns the descriptor, or -1 after
 * nbdkit_error. */
int header_copy (struct backend *lower, char *path, size_t size);

/* The same for a TrueCrypt/VeraCrypt volume, which has no magic to say
 * how much to copy: the first 64 KiB and a sector (the normal, system
 * and hidden headers) and the last 128 KiB (the backup headers and
 * TrueCrypt 5's hidden one), in a sparse copy as long as LOWER. */
int header_copy_tcrypt (struct backend *lower, char *path, size_t size);

/* config.c: the filter's .config.  dmcrypt-KEY= goes into P; file=
 * and keys that are none of dmcrypt's go to NEXT (the plugin), file=
 * naming P->layer_file when it is the only one; a bare KEY= that both
 * take waits for filter_config_apply.  Returns 0 or -1 after
 * nbdkit_error. */
int filter_config_key (struct dmcrypt_params *p, nbdkit_next_config *next,
                       nbdkit_backend *nxdata, const char *key,
                       const char *value);
/* .config_complete: each waiting KEY= into P, or to the plugin when
 * dmcrypt-KEY= was given too.  Returns 0 or -1. */
int filter_config_apply (struct dmcrypt_params *p);
/* .unload */
void filter_config_free (void);

/* server.c: nbdkit's command line into SERVER (.get_ready, before
 * nbdkit leaves its working directory), the socket and PID file made
 * absolute; what cannot be read is taken as absent. */
void server_facts_read (struct cmdline_facts *server);
/* Removes the Unix socket of -U and the PID file of -P when they are
 * this server's, as one that ends in .after_fork must (nbdkit 1.32
 * leaves both). */
void server_files_remove (const struct cmdline_facts *server);

#endif /* DMCRYPT_FILTER_H */
