/* The nbdkit filter's own files: the front end (filter.c), the backend
 * over the next layer (nextback.h) and the header copy. */
#ifndef DMCRYPT_FILTER_H
#define DMCRYPT_FILTER_H

#include <stddef.h>

#include "../backend/backend.h"

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

#endif /* DMCRYPT_FILTER_H */
