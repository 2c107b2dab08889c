/* "dmsetup message": dm-crypt's key messages, as the kernel's
 * crypt_message parses them, and dmcrypt's own tunables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../crypto/secmem.h"
#include "dmcrypt.h"
#include "live.h"

#define MAX_WORDS 8
#define MAX_WORKERS 1024

bool
live_known_policy (const char *name)
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
key_message (int argc, char **argv, struct live_err *err)
{
  uint8_t *key;
  size_t key_size;

  if (!gate_is_closed ()) {
    live_fail (err, EINVAL, "not suspended during key manipulation");
    return -1;
  }
  if (argc == 2 && strcasecmp (argv[1], "wipe") == 0) {
    live_key_wipe ();
    return 0;
  }
  if (argc != 3 || strcasecmp (argv[1], "set") != 0) {
    live_fail (err, EINVAL, "unrecognised message received");
    return -1;
  }
  if (argv[2][0] == ':') {
    live_fail (err, EINVAL, "keyring keys are not supported");
    return -1;
  }
  /* The key size may not change, as in the kernel. */
  if (hex_decode (argv[2], &key, &key_size) == -1
      || key_size != volume.table.key_size) {
    secmem_free (key, key_size);
    live_fail (err, EINVAL, "key set: the key must be %zu bytes in hex",
               volume.table.key_size);
    return -1;
  }
  return live_key_set (key, err);
}

/* "scheduler POLICY", "workers N". */
static int
tunable_message (int argc, char **argv, struct live_err *err)
{
  char *scheduler = NULL, *end;
  unsigned long workers = 0;
  bool is_workers = strcasecmp (argv[0], "workers") == 0;

  if (argc != 2) {
    live_fail (err, EINVAL, "unrecognised message received");
    return -1;
  }
  if (is_workers) {
    errno = 0;
    workers = strtoul (argv[1], &end, 10);
    if (errno || *end || workers < 1 || workers > MAX_WORKERS) {
      live_fail (err, EINVAL, "workers: must be between 1 and %d",
                 MAX_WORKERS);
      return -1;
    }
  }
  else if (!live_known_policy (argv[1])) {
    live_fail (err, EINVAL, "scheduler: expected one of: %s",
               engine_policy_names ());
    return -1;
  }
  else if ((scheduler = strdup (argv[1])) == NULL) {
    live_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  if (live_set_tunables (scheduler, is_workers, workers, err) == -1) {
    free (scheduler);
    return -1;
  }
  return 0;
}

int
live_message (uint64_t sector, const char *text, struct live_err *err)
{
  char *copy, *words[MAX_WORDS], *save = NULL, *w;
  size_t len = strlen (text) + 1;
  int argc = 0, r;

  if (sector >= volume.table.length) {
    live_fail (err, EINVAL, "no target at sector %llu",
               (unsigned long long) sector);
    return -1;
  }
  /* The text may hold a key. */
  if ((copy = secmem_dup (text, len)) == NULL) {
    live_fail (err, ENOMEM, "out of memory");
    return -1;
  }
  for (w = strtok_r (copy, " \t", &save); w && argc < MAX_WORDS;
       w = strtok_r (NULL, " \t", &save))
    words[argc++] = w;
  if (argc >= 2 && strcasecmp (words[0], "key") == 0)
    r = key_message (argc, words, err);
  else if (argc >= 1 && (strcasecmp (words[0], "scheduler") == 0
                         || strcasecmp (words[0], "workers") == 0))
    r = tunable_message (argc, words, err);
  else {
    live_fail (err, EINVAL, "unrecognised message received");
    r = -1;
  }
  secmem_free (copy, len);
  return r;
}
