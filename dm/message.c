/* SPDX-License-Identifier: GPL-2.0-or-later */
/* "dmsetup message" (dm.h): dm-crypt's key messages, as the kernel's
 * crypt_message parses them, and dmcrypt's own tunables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../crypto/secmem.h"
#include "dmint.h"

#define MAX_WORDS 8

bool
dm_known_policy (const char *name)
{
  const char *p = engine_policy_names ();
  size_t len = strlen (name), n;

  while (*p) {
    n = strcspn (p, " ");
    if (n == len && strncmp (p, name, n) == 0)
      return true;
    p += n + (p[n] == ' ');
  }
  return false;
}

/* "key set HEX" and "key wipe" (argv[0] is "key"). */
static int
key_message (struct dm_mapping *m, int argc, char **argv,
             struct dm_err *err)
{
  uint8_t *key;
  size_t key_size;

  if (!gate_is_closed (m)) {
    dm_fail (err, EINVAL, "not suspended during key manipulation");
    return -1;
  }
  /* The authenticated mapping's key lives with its tags, below the
   * engine (backend/integrity.h). */
  if (m->live.table.integrity_tag_size != 0) {
    dm_fail (err, EOPNOTSUPP, "key messages are not supported on a "
             "mapping with integrity (integrity:%u:%s)",
             m->live.table.integrity_tag_size,
             m->live.table.integrity_type);
    return -1;
  }
  if (argc == 2 && strcasecmp (argv[1], "wipe") == 0) {
    mapping_key_wipe (m);
    return 0;
  }
  if (argc != 3 || strcasecmp (argv[1], "set") != 0) {
    dm_fail (err, EINVAL, "unrecognised message received");
    return -1;
  }
  if (argv[2][0] == ':') {
    dm_fail (err, EINVAL, "keyring keys are not supported");
    return -1;
  }
  /* The key size may not change, as in the kernel. */
  if (hex_decode (argv[2], &key, &key_size) == -1
      || key_size != m->live.table.key_size) {
    secmem_free (key, key_size);
    dm_fail (err, EINVAL, "key set: the key must be %zu bytes in hex",
             m->live.table.key_size);
    return -1;
  }
  return mapping_key_set (m, key, err);
}

/* "scheduler POLICY", "workers N". */
static int
tunable_message (struct dm_mapping *m, int argc, char **argv,
                 struct dm_err *err)
{
  struct dm_tunables tun = { .scheduler = NULL };
  unsigned long workers;
  char *end;

  if (argc != 2) {
    dm_fail (err, EINVAL, "unrecognised message received");
    return -1;
  }
  if (strcasecmp (argv[0], "workers") == 0) {
    errno = 0;
    workers = strtoul (argv[1], &end, 10);
    if (errno || *end || workers < 1 || workers > DM_MAX_WORKERS) {
      dm_fail (err, EINVAL, "workers: must be between 1 and %d",
               DM_MAX_WORKERS);
      return -1;
    }
    tun.set_workers = true;
    tun.workers = workers;
  }
  else if (!dm_known_policy (argv[1])) {
    dm_fail (err, EINVAL, "scheduler: expected one of: %s",
             engine_policy_names ());
    return -1;
  }
  else
    tun.scheduler = argv[1];
  return mapping_set_tunables (m, &tun, err);
}

int
dm_message (struct dm_mapping *m, uint64_t sector, const char *text,
            struct dm_err *err)
{
  char *copy, *words[MAX_WORDS], *save = NULL, *w;
  size_t len = strlen (text) + 1;
  int argc = 0, r;

  if (sector >= m->live.table.length) {
    dm_fail (err, EINVAL, "no target at sector %llu",
             (unsigned long long) sector);
    return -1;
  }
  /* The text may hold a key. */
  if ((copy = secmem_dup (text, len)) == NULL) {
    dm_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  for (w = strtok_r (copy, " \t", &save); w && argc < MAX_WORDS;
       w = strtok_r (NULL, " \t", &save))
    words[argc++] = w;
  /* Two keys and two engines, or a keyless linear part: one message
   * cannot say which key or engine it means. */
  if (m->reencrypt) {
    dm_fail (err, EOPNOTSUPP, "messages are not supported on a mapping "
             "of a LUKS2 re-encryption's segments");
    r = -1;
  }
  else if (argc >= 2 && strcasecmp (words[0], "key") == 0)
    r = key_message (m, argc, words, err);
  else if (argc >= 1 && (strcasecmp (words[0], "scheduler") == 0
                         || strcasecmp (words[0], "workers") == 0))
    r = tunable_message (m, argc, words, err);
  else {
    dm_fail (err, EINVAL, "unrecognised message received");
    r = -1;
  }
  secmem_free (copy, len);
  return r;
}
