/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON helpers shared by reenc-layout.c and reenc-digest.c. */
#ifndef DMCRYPT_LUKS_REENC_JSON_H
#define DMCRYPT_LUKS_REENC_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

/* OBJ.KEY as a string, or NULL. */
const char *reenc_json_str (json_object *obj, const char *key);
/* S itself when it is printable ASCII, so that a message quoting it
 * stays one line; else "(not printable)". */
const char *reenc_json_shown (const char *s);
/* OBJ.KEY as a decimal string of an unsigned 64-bit number, as LUKS2
 * stores offsets and sizes.  Returns 0, or -1. */
int reenc_json_u64 (json_object *obj, const char *key, uint64_t *out);
/* Whether SEGMENT's flags hold one starting with PREFIX. */
bool reenc_json_has_flag (json_object *segment, const char *prefix);
/* Segment N of SEGMENTS (its key the decimal N), or NULL. */
json_object *reenc_json_segment (json_object *segments, unsigned n);
/* The segment flagged FLAG, or NULL. */
json_object *reenc_json_segment_by_flag (json_object *segments,
                                         const char *flag);
/* The id of the digest whose "segments" (or "keyslots", with KEYSLOTS)
 * list ID, or -1. */
int reenc_json_digest_of (json_object *root, const char *id, bool keyslots);
/* The id of the keyslot of type "reencrypt", or -1, with its object. */
int reenc_json_reencrypt_keyslot (json_object *root, json_object **ks);

#endif /* DMCRYPT_LUKS_REENC_JSON_H */
