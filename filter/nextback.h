/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The backend (backend/backend.h) over the next layer of an nbdkit
 * filter: the plugin below dmcrypt, and any filters between. */
#ifndef DMCRYPT_FILTER_NEXTBACK_H
#define DMCRYPT_FILTER_NEXTBACK_H

#include <stdbool.h>

#include "../backend/backend.h"

struct nbdkit_next_ops;

/* NEXT is a context open for the life of the backend (closing the
 * backend leaves it open).  SERIALISE: the layer's thread model is
 * below parallel, so no two calls may overlap.  READONLY: never write,
 * whatever the layer allows.  NULL after nbdkit_error. */
struct backend *backend_next_open (struct nbdkit_next_ops *next,
                                   bool serialise, bool readonly);

#endif /* DMCRYPT_FILTER_NEXTBACK_H */
