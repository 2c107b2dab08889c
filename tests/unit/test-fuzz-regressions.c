/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays every fuzzer's seed corpus and every input a fuzzer ever
 * crashed on (fuzz/corpus/NAME/, fuzz/regressions/NAME/) through the
 * same fuzz targets, built here with the ordinary compiler and flags
 * (under make check-asan: with ASan and UBSan).  A broken rule aborts,
 * which fails the test.
 *
 *   test-fuzz-regressions              every directory
 *   test-fuzz-regressions NAME FILE... those inputs to fuzzer NAME */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../fuzz/fuzz.h"
#include "check.h"

static const struct
{
  const char *name;
  int (*run) (const uint8_t *data, size_t size);
} targets[] = {
  { "table", fuzz_table },
  { "cipher-spec", fuzz_cipher_spec },
  { "params", fuzz_params },
  { "control-proto", fuzz_control_proto },
  { "fvault2", fuzz_fvault2 },
  { "tcrypt", fuzz_tcrypt },
  { "cipher-bulk", fuzz_cipher_bulk },
  { "bitlk", fuzz_bitlk },
  { "integrity", fuzz_integrity },
  { "reencrypt", fuzz_reencrypt },
  { "token", fuzz_token },
};
#define NTARGETS (sizeof targets / sizeof targets[0])

/* Runs the input in PATH through target T; false if unreadable. */
static bool
replay_file (size_t t, const char *path)
{
  FILE *fp = fopen (path, "rb");
  uint8_t *data = NULL;
  size_t size = 0, cap = 0, n;

  if (fp == NULL)
    return false;
  do {
    if (size == cap) {
      cap = cap ? cap * 2 : 4096;
      data = realloc (data, cap);
      if (data == NULL)
        abort ();
    }
    n = fread (data + size, 1, cap - size, fp);
    size += n;
  } while (n > 0);
  fclose (fp);
  targets[t].run (data, size);
  free (data);
  return true;
}

/* Every regular file in DIR; returns how many, or -1 on a read error.
 * A missing directory counts 0. */
static int
replay_dir (size_t t, const char *dir)
{
  char path[PATH_MAX + 512];    /* DIR, '/', a d_name of 256 bytes */
  struct dirent *e;
  DIR *d = opendir (dir);
  int n = 0;

  if (d == NULL)
    return 0;
  while ((e = readdir (d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
    if (!replay_file (t, path)) {
      perror (path);
      closedir (d);
      return -1;
    }
    n++;
  }
  closedir (d);
  return n;
}

/* TOP/fuzz, from this program's path TOP/tests/unit/NAME. */
static void
fuzz_dir (char *out, size_t len)
{
  char top[PATH_MAX];

  if (!check_topdir (top, sizeof top))
    abort ();
  snprintf (out, len, "%s/fuzz", top);
}

static int
replay_named (const char *name, int nfiles, char **files)
{
  size_t t;
  int i;

  for (t = 0; t < NTARGETS; t++)
    if (strcmp (targets[t].name, name) == 0)
      break;
  if (t == NTARGETS) {
    fprintf (stderr, "unknown fuzzer %s\n", name);
    return 2;
  }
  for (i = 0; i < nfiles; i++)
    if (!replay_file (t, files[i])) {
      perror (files[i]);
      return 1;
    }
  printf ("%d inputs replayed through %s\n", nfiles, name);
  return 0;
}

int
main (int argc, char **argv)
{
  static const char *const kinds[] = { "corpus", "regressions" };
  char top[PATH_MAX + 8], dir[PATH_MAX + 64];
  int n, seeds = 0;
  size_t t, k;

  if (argc > 1)
    return replay_named (argv[1], argc - 2, argv + 2);
  fuzz_dir (top, sizeof top);
  if (access (top, R_OK) != 0) {
    printf ("SKIP: %s is absent\n", top);
    return 77;
  }
  for (t = 0; t < NTARGETS; t++)
    for (k = 0; k < 2; k++) {
      snprintf (dir, sizeof dir, "%.*s/%s/%s", PATH_MAX, top, kinds[k],
                targets[t].name);
      n = replay_dir (t, dir);
      if (n < 0)
        return 1;
      printf ("%-14s %-12s %4d inputs\n", targets[t].name, kinds[k], n);
      if (k == 0)
        seeds += n > 0;
    }
  if (seeds != (int) NTARGETS) {
    printf ("FAIL: a fuzzer has no seed corpus\n");
    return 1;
  }
  printf ("PASS\n");
  return 0;
}
