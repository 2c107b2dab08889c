/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dm-integrity images made by the kernel (tests/data/integrity/, made
 * by tests/kernel/make-integrity-images.sh under Linux 6.1): each one
 * opened readonly must show the kernel's table and status lines and
 * provide its number of sectors; a standalone one must read as the
 * kernel read it (its sha256), the one left with a dirty journal
 * included -- replayed in memory without a write, then replayed in
 * place and read again.  LUKS2 images are checked at the dm-integrity
 * layer (their tags come from dm-crypt above).  Skips when the folder
 * is absent; DMCRYPT_INTEGRITY_IMAGES names another. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "check.h"
#include "integrity-memdev.h"

static char dir[PATH_MAX + 32];

/* Field KEY of a MANIFEST line (TAB-separated KEY=VALUE), copied into
 * OUT; false when absent. */
static bool
field (const char *line, const char *key, char *out, size_t len)
{
  size_t klen = strlen (key);
  const char *p = line;

  while (p && *p) {
    if (strncmp (p, key, klen) == 0 && p[klen] == '=') {
      const char *v = p + klen + 1;
      size_t n = strcspn (v, "\t\n");

      snprintf (out, len, "%.*s", (int) n, v);
      return true;
    }
    p = strchr (p, '\t');
    p = p ? p + 1 : NULL;
  }
  return false;
}

static bool
load_image (const char *file, struct memdev *m, uint64_t bytes)
{
  char cmd[sizeof dir + 256];
  FILE *fp;
  size_t n;

  memdev_init (m, bytes);
  snprintf (cmd, sizeof cmd, "xz -dc '%s/%s'", dir, file);
  fp = popen (cmd, "r");
  if (fp == NULL)
    return false;
  n = fread (m->buf, 1, bytes, fp);
  pclose (fp);
  return n == bytes;
}

/* The table's words after "start len integrity DEV", the internal
 * hash's key left out (the kernel prints it, masked here). */
static void
expected_table (const char *table, char *out, size_t len, char *hash,
                size_t hash_len)
{
  const char *p = table;
  char *h;

  for (int i = 0; i < 4 && p; i++) {
    p = strchr (p, ' ');
    p = p ? p + 1 : NULL;
  }
  snprintf (out, len, "%s", p ? p : "");
  hash[0] = '\0';
  /* The table keeps the key as dmsetup masks it; the hash's name is
   * what comes before it. */
  h = strstr (out, "internal_hash:");
  if (h) {
    char *alg = h + strlen ("internal_hash:");
    char *key = strchr (alg, ')') ? strchr (strchr (alg, ')'), ':')
      : strchr (alg, ':');
    size_t n = key ? (size_t) (key - alg) : strlen (alg);

    snprintf (hash, hash_len, "%.*s", (int) n, alg);
  }
}

static bool
read_key (const char *line, uint8_t *key, size_t *key_bytes)
{
  char name[256], path[sizeof dir + sizeof name + 2];
  FILE *fp;

  *key_bytes = 0;
  if (!field (line, "key_file", name, sizeof name))
    return true;
  snprintf (path, sizeof path, "%s/%s", dir, name);
  fp = fopen (path, "rb");
  if (fp == NULL)
    return false;
  *key_bytes = fread (key, 1, 64, fp);
  fclose (fp);
  return *key_bytes > 0;
}

/* The sha256 of the whole device as read, in hex; false on an error. */
static bool
sha256_of (struct integrity_dev *d, char *hex)
{
  uint64_t blocks = integrity_data_sectors (d) * 512
    / integrity_block_bytes (d), bad;
  uint32_t bb = integrity_block_bytes (d), chunk = 64;
  uint8_t *buf = malloc ((size_t) chunk * bb), md[32];
  uint8_t *tags = malloc ((size_t) chunk * integrity_tag_size (d));
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  bool ok = buf && tags && ctx && EVP_DigestInit_ex (ctx, EVP_sha256 (), NULL);

  for (uint64_t b = 0; ok && b < blocks; b += chunk) {
    uint32_t n = blocks - b < chunk ? blocks - b : chunk;
    int r = integrity_read (d, b, n, buf, tags, &bad);

    if (r < 0)
      fprintf (stderr, "read at block %llu: %s (block %llu)\n",
               (unsigned long long) b, strerror (-r),
               (unsigned long long) bad);
    ok = r == 0 && EVP_DigestUpdate (ctx, buf, (size_t) n * bb);
  }
  ok = ok && EVP_DigestFinal_ex (ctx, md, NULL);
  for (int i = 0; ok && i < 32; i++)
    sprintf (hex + 2 * i, "%02x", md[i]);
  EVP_MD_CTX_free (ctx);
  free (buf);
  free (tags);
  return ok;
}

struct image {
  char name[64], kind[16], file[128], table[1024], status[256], sum[80];
  uint64_t bytes, mapped;
  char want_table[1024], hash[64];
  uint8_t key[64];
  size_t key_bytes;
  struct integrity_options opt;
};

static bool
parse_line (const char *line, struct image *im)
{
  char num[32], mapped[32];
  const char *p;

  memset (im, 0, sizeof *im);
  if (!field (line, "name", im->name, sizeof im->name)
      || !field (line, "kind", im->kind, sizeof im->kind)
      || !field (line, "file", im->file, sizeof im->file)
      || !field (line, "table.integrity", im->table, sizeof im->table)
      || !field (line, "status.integrity", im->status, sizeof im->status)
      || !field (line, "image_bytes", num, sizeof num)
      || !field (line, "mapped_bytes", mapped, sizeof mapped)
      || !read_key (line, im->key, &im->key_bytes))
    return false;
  field (line, "sha256", im->sum, sizeof im->sum);
  im->bytes = strtoull (num, NULL, 10);
  im->mapped = strtoull (mapped, NULL, 10);
  expected_table (im->table, im->want_table, sizeof im->want_table,
                  im->hash, sizeof im->hash);
  im->opt.offset_bytes = strtoull (im->want_table, NULL, 10) * 512;
  im->opt.device_bytes = im->bytes - im->opt.offset_bytes;
  p = strchr (im->want_table, ' ');
  im->opt.tag_size = p ? strtoul (p + 1, NULL, 10) : 0;
  p = p ? strchr (p + 1, ' ') : NULL;
  im->opt.mode = p ? p[1] : 'J';
  im->opt.readonly = true;
  im->opt.internal_hash = im->hash[0] ? im->hash : NULL;
  im->opt.internal_hash_key = im->key_bytes ? im->key : NULL;
  im->opt.internal_hash_key_bytes = im->key_bytes;
  return true;
}

/* The readonly open: the kernel's lines, its size, its bytes. */
static void
check_readonly (struct image *im, struct memdev *m)
{
  struct integrity_io io = memdev_io (m);
  char err[256], line[1024], hex[65];
  const char *status = im->status;
  struct integrity_dev *d = integrity_open (&io, &im->opt, err, sizeof err);

  if (!check_that (d != NULL, "%s: %s", im->name, err))
    return;
  integrity_table (d, line, sizeof line);
  CHECK_MSG (strcmp (line, im->want_table) == 0, "%s: table \"%s\", the "
             "kernel's \"%s\"", im->name, line, im->want_table);
  for (int i = 0; i < 3 && status; i++) {
    status = strchr (status, ' ');
    status = status ? status + 1 : NULL;
  }
  integrity_status (d, line, sizeof line);
  CHECK_MSG (status && strcmp (line, status) == 0, "%s: status \"%s\"",
             im->name, line);
  CHECK_MSG (integrity_data_sectors (d) * 512 == im->mapped,
             "%s: %llu sectors", im->name,
             (unsigned long long) integrity_data_sectors (d));
  if (im->opt.internal_hash) {
    CHECK_MSG (sha256_of (d, hex) && strcmp (hex, im->sum) == 0,
               "%s: read sha256 %s", im->name, hex);
    printf ("%s: read as the kernel read it\n", im->name);
  }
  else
    CHECK_MSG (sha256_of (d, hex), "%s: read failed", im->name);
  CHECK_MSG (m->writes == 0, "%s: %u writes readonly", im->name, m->writes);
  integrity_close (d);
}

/* A journal left dirty holds what the kernel read: mode R, which
 * replays nothing, reads otherwise. */
static void
check_journal_matters (struct image *im, struct memdev *m)
{
  struct integrity_io io = memdev_io (m);
  struct integrity_options opt = im->opt;
  char err[256], hex[65] = "";
  struct integrity_dev *d;

  opt.mode = 'R';
  d = integrity_open (&io, &opt, err, sizeof err);
  if (!check_that (d != NULL, "%s: %s", im->name, err))
    return;
  CHECK_MSG (sha256_of (d, hex) && strcmp (hex, im->sum) != 0,
             "%s: the same bytes without the journal", im->name);
  integrity_close (d);
}

/* Writable: the journal replayed in place, then read again. */
static void
check_replayed (struct image *im, struct memdev *m)
{
  struct integrity_io io = memdev_io (m);
  char err[256], hex[65];
  struct integrity_dev *d;

  im->opt.readonly = false;
  d = integrity_open (&io, &im->opt, err, sizeof err);
  if (!check_that (d != NULL, "%s: %s", im->name, err))
    return;
  CHECK_MSG (integrity_close (d) == 0, "%s: close", im->name);
  im->opt.readonly = true;
  d = integrity_open (&io, &im->opt, err, sizeof err);
  if (!check_that (d != NULL, "%s: %s", im->name, err))
    return;
  CHECK_MSG (sha256_of (d, hex) && strcmp (hex, im->sum) == 0,
             "%s: after the replay sha256 %s", im->name, hex);
  integrity_close (d);
}

static unsigned
run_manifest (FILE *fp)
{
  char line[8192];
  unsigned n = 0;
  struct image im;

  while (fgets (line, sizeof line, fp)) {
    struct memdev m;

    if (line[0] == '#' || !parse_line (line, &im))
      continue;
    if (!check_that (load_image (im.file, &m, im.bytes), "%s: cannot load",
                     im.name))
      continue;
    unsigned writes_before = m.writes;
    check_readonly (&im, &m);
    if (strstr (line, "journal left dirty"))
      check_journal_matters (&im, &m);
    if (strcmp (im.kind, "integrity") == 0 && m.writes == writes_before)
      check_replayed (&im, &m);
    free (m.buf);
    n++;
  }
  return n;
}

int
main (void)
{
  char top[PATH_MAX], manifest[sizeof dir + 16];
  const char *env = getenv ("DMCRYPT_INTEGRITY_IMAGES");
  FILE *fp;
  unsigned images;

  REQUIRE (check_topdir (top, sizeof top), "readlink /proc/self/exe");
  if (env)
    snprintf (dir, sizeof dir, "%s", env);
  else
    snprintf (dir, sizeof dir, "%s/tests/data/integrity", top);
  snprintf (manifest, sizeof manifest, "%s/MANIFEST", dir);
  fp = fopen (manifest, "r");
  if (fp == NULL) {
    printf ("SKIP: no %s (the kernel's images)\n", manifest);
    return 77;
  }
  images = run_manifest (fp);
  fclose (fp);
  CHECK_MSG (images > 0, "no image in %s", manifest);
  printf ("%u images\n", images);
  return failures != 0;
}
