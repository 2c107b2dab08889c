/* SPDX-License-Identifier: GPL-2.0-or-later */
/* luks/: unlock images made by cryptsetup and by other tools, and compare
 * every table field with what "cryptsetup luksDump --dump-volume-key"
 * says (an independent reading of the same header).
 *
 *   test-luks                  the whole test: exit 0 pass, 77 skip, 1 fail
 *   test-luks unlock [OPTIONS] IMAGE
 *                              unlock IMAGE and print the table fields;
 *                              options: --header H --type luks|luks1|luks2
 *                              --pass-file F --keyfile F --keyfile-offset N
 *                              --keyfile-size N --key-slot N --showkey
 *
 * As root, the whole test runs a second time as user nobody on a copy of
 * this program in a world-writable scratch directory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libcryptsetup.h>
#include <openssl/evp.h>

#include "../../luks/internal.h"
#include "../../luks/luks.h"
#include "../../table/crypt_table.h"
#include "check.h"

extern int dmcrypt_debug_luks;

static char scratch[PATH_MAX];      /* absolute; the current directory */
static char shared_dir[PATH_MAX + 64]; /* ../shared/testdata/cryptsetup */
static char self_exe[PATH_MAX];

/* ---- reporting ---------------------------------------------------- */

static void __attribute__ ((format (printf, 1, 2)))
note (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vprintf (fmt, ap);
  putchar ('\n');
  va_end (ap);
  fflush (stdout);
}

/* ---- shell and files ---------------------------------------------- */

/* Runs a shell command in the scratch directory; returns its exit
 * status, or -1. */
static int __attribute__ ((format (printf, 1, 2)))
sh (const char *fmt, ...)
{
  va_list ap;
  char *cmd;
  int status;

  va_start (ap, fmt);
  if (vasprintf (&cmd, fmt, ap) == -1)
    abort ();
  va_end (ap);
  fflush (stdout);
  status = system (cmd);
  free (cmd);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* Its standard output (malloc'd), or NULL when it failed. */
static char * __attribute__ ((format (printf, 1, 2)))
sh_output (const char *fmt, ...)
{
  va_list ap;
  char *cmd, *out = NULL;
  size_t size = 0;
  FILE *pipe, *mem;
  int c, status;

  va_start (ap, fmt);
  if (vasprintf (&cmd, fmt, ap) == -1)
    abort ();
  va_end (ap);
  fflush (stdout);
  pipe = popen (cmd, "r");
  mem = open_memstream (&out, &size);
  if (pipe == NULL || mem == NULL)
    abort ();
  while ((c = getc (pipe)) != EOF)
    putc (c, mem);
  fclose (mem);
  status = pclose (pipe);
  free (cmd);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      free (out);
      return NULL;
    }
  return out;
}

static void
write_file (const char *path, const void *data, size_t size)
{
  FILE *f = fopen (path, "w");

  if (f == NULL || fwrite (data, 1, size, f) != size || fclose (f) != 0)
    {
      perror (path);
      exit (1);
    }
}

static uint64_t
file_size (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0 ? (uint64_t) st.st_size : 0;
}

/* SHA-256 of a whole file as hex, "" when unreadable. */
static void
sha256_file (const char *path, char hex[65])
{
  unsigned char buf[65536], md[32];
  unsigned md_len, i;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  FILE *f = fopen (path, "r");
  size_t n;

  hex[0] = '\0';
  if (f == NULL || ctx == NULL)
    goto out;
  EVP_DigestInit_ex (ctx, EVP_sha256 (), NULL);
  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    EVP_DigestUpdate (ctx, buf, n);
  EVP_DigestFinal_ex (ctx, md, &md_len);
  for (i = 0; i < md_len; i++)
    sprintf (hex + 2 * i, "%02x", md[i]);
 out:
  if (f)
    fclose (f);
  EVP_MD_CTX_free (ctx);
}

static void
to_hex (const uint8_t *data, size_t size, char *hex)
{
  size_t i;

  for (i = 0; i < size; i++)
    sprintf (hex + 2 * i, "%02x", data[i]);
  hex[2 * size] = '\0';
}

/* ---- images ------------------------------------------------------- */

/* A fresh file IMG of SIZE (truncate syntax) formatted fast (no PBKDF
 * benchmark); ARGS name the secret and the device. */
static bool
format_with (const char *img, const char *type, const char *size,
             const char *args)
{
  /* Also for LUKS1: "--iter-time 1" still costs a 2 s benchmark. */
  const char *kdf = "--pbkdf pbkdf2 --pbkdf-force-iterations 1000";

  return check_that (sh ("rm -f %s && truncate -s %s %s && cryptsetup "
                    "luksFormat --batch-mode --type %s %s %s >/dev/null",
                    img, size, img, type, kdf, args) == 0,
                "luksFormat %s %s", type, args);
}

/* A fresh LUKS image with passphrase PW. */
static bool
format_image (const char *img, const char *type, const char *pw,
              const char *size, const char *extra)
{
  char args[256];

  write_file ("format.pw", pw, strlen (pw));
  snprintf (args, sizeof args, "--key-file format.pw %s %s", extra, img);
  return format_with (img, type, size, args);
}

static bool
add_key (const char *img, const char *old_pw, const char *new_pw, int slot)
{
  write_file ("old.pw", old_pw, strlen (old_pw));
  write_file ("new.pw", new_pw, strlen (new_pw));
  return check_that (sh ("cryptsetup luksAddKey --batch-mode --pbkdf pbkdf2 "
                    "--pbkdf-force-iterations 1000 --key-file old.pw "
                    "--key-slot %d %s new.pw", slot, img) == 0,
                "luksAddKey %s slot %d", img, slot);
}

/* ---- the independent reading: cryptsetup luksDump ----------------- */

struct oracle
{
  int version;
  char key_hex[1025];
  char cipher[128];
  char uuid[40];
  uint64_t offset;          /* 512-byte sectors */
  unsigned sector_size;     /* bytes */
  char flags[256];          /* LUKS2 "Flags:" line */
};

/* The rest of the line after LABEL at a line start (blanks allowed
 * before it), trimmed; "" when absent. */
static void
dump_value (const char *dump, const char *label, char *out, size_t size)
{
  const char *line, *s;
  size_t n;

  for (line = dump; line != NULL && *line; line = strchr (line, '\n'))
    {
      if (*line == '\n')
        line++;
      s = line + strspn (line, " \t");
      if (strncmp (s, label, strlen (label)) != 0)
        continue;
      s += strlen (label);
      s += strspn (s, " \t");
      n = strcspn (s, "\n");
      while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
      snprintf (out, size, "%.*s", (int) n, s);
      return;
    }
  out[0] = '\0';
}

/* "MK dump:" hex bytes, over several indented lines. */
static void
dump_key (const char *dump, char *hex, size_t size)
{
  const char *s = strstr (dump, "MK dump:");
  size_t n = 0;

  hex[0] = '\0';
  if (s == NULL)
    return;
  for (s += 8; *s && n + 2 < size; s++)
    {
      if (*s == '\n' && s[1] != ' ' && s[1] != '\t')
        break;
      if (strchr ("0123456789abcdef", *s) && *s)
        hex[n++] = *s;
    }
  hex[n] = '\0';
}

/* Reads IMG's header (or HEADER's) with cryptsetup; SECRET_ARGS are
 * the --key-file options. */
static bool
oracle_read (const char *img, const char *secret_args, struct oracle *o)
{
  char *vk_dump, *dump, buf[128], name[64], mode[64];

  memset (o, 0, sizeof *o);
  vk_dump = sh_output ("cryptsetup luksDump --dump-volume-key --batch-mode "
                       "%s %s 2>/dev/null", secret_args, img);
  dump = sh_output ("cryptsetup luksDump %s 2>/dev/null", img);
  if (vk_dump == NULL || dump == NULL)
    {
      free (vk_dump);
      free (dump);
      return false;
    }
  dump_key (vk_dump, o->key_hex, sizeof o->key_hex);
  dump_value (vk_dump, "UUID:", o->uuid, sizeof o->uuid);
  dump_value (vk_dump, "Payload offset:", buf, sizeof buf);
  o->offset = strtoull (buf, NULL, 10);
  dump_value (dump, "Version:", buf, sizeof buf);
  o->version = atoi (buf);
  o->sector_size = 512;
  if (o->version == 2)
    {
      dump_value (dump, "cipher:", o->cipher, sizeof o->cipher);
      dump_value (dump, "sector:", buf, sizeof buf);
      o->sector_size = atoi (buf);
      dump_value (dump, "Flags:", o->flags, sizeof o->flags);
    }
  else
    {
      dump_value (vk_dump, "Cipher name:", name, sizeof name);
      dump_value (vk_dump, "Cipher mode:", mode, sizeof mode);
      snprintf (o->cipher, sizeof o->cipher, "%s-%s", name, mode);
    }
  free (vk_dump);
  free (dump);
  return o->key_hex[0] != '\0';
}

/* A dynamic segment: up to the end of DATA, whole encryption sectors. */
static uint64_t
dynamic_length (const char *data, const struct oracle *o)
{
  uint64_t sectors = file_size (data) / 512 - o->offset;

  return sectors - sectors % (o->sector_size / 512);
}

/* ---- running luks_unlock with its output captured ----------------- */

struct outcome
{
  int r;
  char *output;             /* everything written to fd 1 and 2 */
  struct crypt_table t;
  struct luks_info info;
};

static void
run_unlock (const struct luks_unlock_params *p, struct outcome *o)
{
  int saved_out, saved_err, fd;
  char *out = NULL;
  size_t size = 0;
  FILE *f, *mem;
  int c;

  fflush (stdout);
  fflush (stderr);
  fd = open ("capture.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  saved_out = dup (1);
  saved_err = dup (2);
  if (fd == -1 || saved_out == -1 || saved_err == -1)
    abort ();
  dup2 (fd, 1);
  dup2 (fd, 2);
  close (fd);
  o->r = luks_unlock (p, file_size (p->data_path), &o->t, &o->info);
  fflush (stdout);
  fflush (stderr);
  dup2 (saved_out, 1);
  dup2 (saved_err, 2);
  close (saved_out);
  close (saved_err);
  f = fopen ("capture.out", "r");
  mem = open_memstream (&out, &size);
  while (f && (c = getc (f)) != EOF)
    putc (c, mem);
  fclose (mem);
  if (f)
    fclose (f);
  o->output = out;
}

static void
outcome_free (struct outcome *o)
{
  crypt_table_free (&o->t);
  free (o->output);
}

static struct luks_unlock_params
with_passphrase (const char *img, const char *pw)
{
  return (struct luks_unlock_params) {
    .data_path = img, .type = LUKS_ANY, .passphrase = pw,
    .passphrase_size = strlen (pw), .key_slot = -1, .readonly = true,
  };
}

/* Unlocking must succeed, print nothing, and give the oracle's table. */
static bool
expect_table (const char *name, const struct luks_unlock_params *p,
              const struct oracle *o, uint64_t length, int slot,
              unsigned flags)
{
  struct outcome out;
  char key_hex[1025] = "";
  bool ok;

  run_unlock (p, &out);
  if (!check_that (out.r == 0, "%s: unlock failed: %s", name, out.output))
    {
      outcome_free (&out);
      return false;
    }
  if (out.t.key_size <= 512)
    to_hex (out.t.key, out.t.key_size, key_hex);
  ok = check_that (out.output[0] == '\0', "%s: printed \"%s\"", name, out.output)
    & check_that (strcmp (key_hex, o->key_hex) == 0, "%s: key differs", name)
    & check_that (strcmp (out.t.cipher, o->cipher) == 0, "%s: cipher %s, not %s",
             name, out.t.cipher, o->cipher)
    & check_that (out.t.offset == o->offset, "%s: offset %" PRIu64 ", not %"
             PRIu64, name, out.t.offset, o->offset)
    & check_that (out.t.sector_size == o->sector_size, "%s: sector size %u, "
             "not %u", name, out.t.sector_size, o->sector_size)
    & check_that (out.t.length == length, "%s: length %" PRIu64 ", not %"
             PRIu64, name, out.t.length, length)
    & check_that (out.t.start == 0 && out.t.iv_offset == 0, "%s: start or iv "
             "offset not 0", name)
    & check_that (out.t.flags == flags, "%s: flags 0x%x, not 0x%x", name,
             out.t.flags, flags)
    & check_that (strcmp (out.t.device, p->data_path) == 0, "%s: device %s",
             name, out.t.device)
    & check_that (out.info.version == o->version, "%s: version %d", name,
             out.info.version)
    & check_that (strcmp (out.info.uuid, o->uuid) == 0, "%s: uuid %s, not %s",
             name, out.info.uuid, o->uuid)
    & check_that (slot == -1 || out.info.key_slot == slot, "%s: opened slot %d,"
             " not %d", name, out.info.key_slot, slot);
  if (ok)
    note ("ok: %s: %s %zu-bit key, offset %" PRIu64 ", length %" PRIu64
          ", sector %u, slot %d", name, out.t.cipher, out.t.key_size * 8,
          out.t.offset, out.t.length, out.t.sector_size, out.info.key_slot);
  outcome_free (&out);
  return ok;
}

/* Unlocking must fail with exactly one error line containing WANT, and
 * leave the table empty. */
static bool
expect_error (const char *name, const struct luks_unlock_params *p,
              const char *want)
{
  struct outcome out;
  const char *nl;
  bool ok;

  run_unlock (p, &out);
  nl = strchr (out.output, '\n');
  ok = check_that (out.r == -1, "%s: unlock succeeded", name)
    && check_that (strncmp (out.output, "error: ", 7) == 0
              && nl != NULL && nl[1] == '\0',
              "%s: not one error line: \"%s\"", name, out.output)
    && check_that (strstr (out.output, want) != NULL, "%s: \"%.*s\" does not "
              "say \"%s\"", name, (int) (nl - out.output), out.output, want)
    && check_that (out.t.key == NULL && out.t.cipher == NULL, "%s: table not "
              "emptied", name);
  if (ok)
    note ("ok: %s: %.*s", name, (int) (nl - out.output), out.output);
  outcome_free (&out);
  return ok;
}

/* A LUKS2 segment with integrity unlocks at this layer, its integrity
 * type kept for the volume, which opens dm-integrity under it
 * (volume/integrity.c); the table keeps the segment's cipher. */
static bool
expect_integrity (const char *name, const struct luks_unlock_params *p,
                  const char *type, const char *cipher)
{
  struct outcome out;
  bool ok;

  run_unlock (p, &out);
  ok = check_that (out.r == 0, "%s: unlock failed: %s", name, out.output)
    && check_that (strcmp (out.info.integrity, type) == 0,
                   "%s: integrity \"%s\", not \"%s\"", name,
                   out.info.integrity, type)
    && check_that (out.t.cipher && strcmp (out.t.cipher, cipher) == 0,
                   "%s: cipher \"%s\", not \"%s\"", name,
                   out.t.cipher ? out.t.cipher : "", cipher);
  outcome_free (&out);
  return ok;
}

/* ---- LUKS2 metadata surgery (test input only) --------------------- */

#define LUKS2_BIN_BYTES 4096
#define LUKS2_CSUM_OFFSET 448

static uint64_t
be64 (const unsigned char *p)
{
  uint64_t v = 0;
  int i;

  for (i = 0; i < 8; i++)
    v = v << 8 | p[i];
  return v;
}

/* Writes JSON into the header copy at OFFSET with a fresh SHA-256. */
static bool
write_header_copy (int fd, uint64_t offset, uint64_t hdr_size,
                   const char *json)
{
  unsigned char bin[LUKS2_BIN_BYTES], md[32];
  size_t area = hdr_size - LUKS2_BIN_BYTES;
  char *json_area = calloc (1, area);
  EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
  unsigned md_len;
  bool ok = false;

  if (json_area == NULL || ctx == NULL || strlen (json) >= area
      || pread (fd, bin, sizeof bin, offset) != sizeof bin)
    goto out;
  memcpy (json_area, json, strlen (json));
  memset (bin + LUKS2_CSUM_OFFSET, 0, 64);
  EVP_DigestInit_ex (ctx, EVP_sha256 (), NULL);
  EVP_DigestUpdate (ctx, bin, sizeof bin);
  EVP_DigestUpdate (ctx, json_area, area);
  EVP_DigestFinal_ex (ctx, md, &md_len);
  memcpy (bin + LUKS2_CSUM_OFFSET, md, md_len);
  ok = pwrite (fd, json_area, area, offset + sizeof bin) == (ssize_t) area
    && pwrite (fd, bin, sizeof bin, offset) == sizeof bin;
 out:
  free (json_area);
  EVP_MD_CTX_free (ctx);
  return ok;
}

/* Rewrites both LUKS2 header copies with the JSON that EDIT makes of the
 * current one: headers libcryptsetup would refuse to write itself. */
static bool
edit_luks2_json (const char *img, void (*edit) (json_object *, void *),
                 void *arg)
{
  unsigned char bin[LUKS2_BIN_BYTES];
  int fd = open (img, O_RDWR);
  json_object *root = NULL;
  char *json_area = NULL;
  uint64_t hdr_size;
  bool ok = false;

  if (fd == -1 || pread (fd, bin, sizeof bin, 0) != sizeof bin
      || memcmp (bin, "LUKS\xba\xbe\0\2", 8) != 0)
    goto out;
  hdr_size = be64 (bin + 8);
  json_area = calloc (1, hdr_size - LUKS2_BIN_BYTES + 1);
  if (json_area == NULL
      || pread (fd, json_area, hdr_size - LUKS2_BIN_BYTES, LUKS2_BIN_BYTES)
         != (ssize_t) (hdr_size - LUKS2_BIN_BYTES)
      || (root = json_tokener_parse (json_area)) == NULL)
    goto out;
  edit (root, arg);
  ok = write_header_copy (fd, 0, hdr_size, json_object_to_json_string (root))
    && write_header_copy (fd, hdr_size, hdr_size,
                          json_object_to_json_string (root));
 out:
  json_object_put (root);
  free (json_area);
  if (fd != -1)
    close (fd);
  return check_that (ok, "editing the LUKS2 metadata of %s", img);
}

static json_object *
segment0 (json_object *root)
{
  json_object *segments, *segment;

  json_object_object_get_ex (root, "segments", &segments);
  json_object_object_get_ex (segments, "0", &segment);
  return segment;
}

/* ARG: the integrity type, e.g. "hmac(sha256)" or "aead";
 * "journal-crypt": hmac(sha256) with an encrypted journal. */
static void
add_integrity (json_object *root, void *arg)
{
  json_object *integrity = json_object_new_object ();
  bool journal_crypt = strcmp (arg, "journal-crypt") == 0;

  json_object_object_add (integrity, "type",
                          json_object_new_string (journal_crypt
                                                  ? "hmac(sha256)" : arg));
  json_object_object_add (integrity, "journal_encryption",
                          json_object_new_string (journal_crypt
                                                  ? "aes" : "none"));
  json_object_object_add (integrity, "journal_integrity",
                          json_object_new_string ("none"));
  json_object_object_add (segment0 (root), "integrity", integrity);
  if (strcmp (arg, "aead") == 0)
    json_object_object_add (segment0 (root), "encryption",
                            json_object_new_string ("aes-gcm-random"));
}

/* ARG: the segment size in bytes, as a string. */
static void
set_segment_size (json_object *root, void *arg)
{
  json_object_object_add (segment0 (root), "size",
                          json_object_new_string (arg));
}

static bool
set_persistent_flags (const char *img, uint32_t flags)
{
  struct crypt_device *cd;
  int r, status;
  pid_t pid;

  /* In a child: metadata locking, off here for want of a lock directory
   * as an ordinary user, cannot be switched back on in this process, and
   * luks_unlock alone must turn it off. */
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      crypt_metadata_locking (NULL, 0);
      r = crypt_init (&cd, img);
      if (r == 0)
        {
          r = crypt_load (cd, CRYPT_LUKS2, NULL);
          if (r == 0)
            r = crypt_persistent_flags_set (cd, CRYPT_FLAGS_ACTIVATION,
                                            flags);
          crypt_free (cd);
        }
      _exit (r == 0 ? 0 : 1);
    }
  return check_that (pid > 0 && waitpid (pid, &status, 0) == pid
                && WIFEXITED (status) && WEXITSTATUS (status) == 0,
                "crypt_persistent_flags_set %s", img);
}

/* ---- images made here --------------------------------------------- */

static void
test_formats (void)
{
  static const struct {
    const char *name, *type, *extra, *grow;
    uint64_t length;               /* expected, 512-byte sectors */
  } cases[] = {
    /* 32 MiB, 16 MiB offset: as the kernel reference transcripts. */
    { "luks2-default", "luks2", "", NULL, 32768 },
    { "luks2-xts-256-sector-512", "luks2",
      "--cipher aes-xts-plain64 --key-size 256 --sector-size 512", NULL,
      32768 },
    { "luks2-xts-512-sector-4096", "luks2",
      "--cipher aes-xts-plain64 --key-size 512 --sector-size 4096", NULL,
      32768 },
    /* Grown by 1536 bytes after formatting: cut to whole 4 KiB sectors
     * (cryptsetup refuses to format such a size). */
    { "luks2-sector-4096-grown", "luks2", "--sector-size 4096",
      "33555968", 32768 },
    { "luks2-sector-512-grown", "luks2", "--sector-size 512",
      "33555968", 32771 },
    { "luks2-cbc-essiv", "luks2",
      "--cipher aes-cbc-essiv:sha256 --key-size 256", NULL, 32768 },
    { "luks1-default", "luks1", "", NULL, 61440 },
    { "luks1-xts-256", "luks1", "--cipher aes-xts-plain64 --key-size 256",
      NULL, 61440 },
    { "luks1-cbc-essiv", "luks1",
      "--cipher aes-cbc-essiv:sha256 --key-size 256", NULL, 61440 },
    { "luks1-grown", "luks1", "", "33555968", 61443 },
  };
  struct luks_unlock_params p;
  struct oracle o;
  size_t i;

  write_file ("pw.txt", "correct horse", 13);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      if (!format_image ("f.img", cases[i].type, "correct horse", "32M",
                         cases[i].extra)
          || (cases[i].grow && sh ("truncate -s %s f.img", cases[i].grow))
          || !check_that (oracle_read ("f.img", "--key-file pw.txt", &o),
                     "%s: luksDump", cases[i].name))
        continue;
      p = with_passphrase ("f.img", "correct horse");
      check_that (cases[i].length == dynamic_length ("f.img", &o),
             "%s: test table disagrees with luksDump", cases[i].name);
      expect_table (cases[i].name, &p, &o, cases[i].length, 0, 0);
      p.type = strcmp (cases[i].type, "luks1") == 0 ? LUKS_V1 : LUKS_V2;
      expect_table (cases[i].name, &p, &o, cases[i].length, 0, 0);
    }
}

static void
test_key_slots (const char *type, int max_slots)
{
  struct luks_unlock_params p;
  struct oracle o;
  char name[64];

  snprintf (name, sizeof name, "%s-slots", type);
  write_file ("pw.txt", "first", 5);
  if (!format_image ("s.img", type, "first", "32M", "")
      || !add_key ("s.img", "first", "second", 3)
      || !check_that (oracle_read ("s.img", "--key-file pw.txt", &o), "luksDump"))
    return;
  p = with_passphrase ("s.img", "second");
  expect_table (name, &p, &o, dynamic_length ("s.img", &o), 3, 0);
  p.key_slot = 3;
  expect_table (name, &p, &o, dynamic_length ("s.img", &o), 3, 0);
  p.key_slot = 0;
  expect_error (name, &p, "keyslot 0 did not accept the passphrase");
  p.key_slot = 5;
  expect_error (name, &p, "keyslot 5 is not in use");
  p.key_slot = max_slots;
  expect_error (name, &p, "out of range");
  p = with_passphrase ("s.img", "third");
  expect_error (name, &p, "wrong passphrase or key file: no keyslot matched");
  p = with_passphrase ("s.img", "");
  expect_error (name, &p, "no keyslot matched");
}

/* libcryptsetup would hand back an unbound slot's own key. */
static void
test_unbound_slot (void)
{
  struct luks_unlock_params p;

  write_file ("new.pw", "unbound", 7);
  if (!format_image ("u.img", "luks2", "bound", "32M", "")
      || !check_that (sh ("cryptsetup luksAddKey --batch-mode --unbound "
                     "--key-size 256 --pbkdf pbkdf2 --pbkdf-force-iterations "
                     "1000 --key-slot 4 u.img new.pw") == 0,
                 "luksAddKey --unbound"))
    return;
  p = with_passphrase ("u.img", "unbound");
  p.key_slot = 4;
  expect_error ("unbound slot", &p, "keyslot 4 is not bound");
  p.key_slot = -1;
  expect_error ("unbound slot, any", &p, "no keyslot matched");
}

static void
test_key_file (void)
{
  unsigned char key[4096];
  struct luks_unlock_params p = {
    .data_path = "k.img", .keyfile = "key.bin", .key_slot = -1,
    .readonly = true,
  };
  struct oracle o;
  size_t i;

  for (i = 0; i < sizeof key; i++)
    key[i] = (i * 131 + 7) ^ (i >> 4);
  key[200] = '\n';                  /* a newline is just another byte */
  write_file ("key.bin", key, sizeof key);
  if (!format_with ("k.img", "luks2", "32M", "--key-file key.bin "
                    "--keyfile-offset 100 --keyfile-size 300 k.img")
      || !check_that (oracle_read ("k.img", "--key-file key.bin --keyfile-offset "
                              "100 --keyfile-size 300", &o), "luksDump"))
    return;
  p.keyfile_offset = 100;
  p.keyfile_size = 300;
  expect_table ("keyfile offset+size", &p, &o, dynamic_length ("k.img", &o),
                0, 0);
  p.keyfile_offset = 101;
  expect_error ("keyfile wrong offset", &p, "no keyslot matched");
  p.keyfile_offset = 100;
  p.keyfile_size = 0;
  expect_error ("keyfile whole file", &p, "no keyslot matched");
  p.keyfile_offset = 4000;
  p.keyfile_size = 300;
  expect_error ("keyfile short", &p, "key file key.bin:");
  p.keyfile = "missing.bin";
  expect_error ("keyfile missing", &p,
                "key file missing.bin: No such file or directory");

  /* The whole file, as "cryptsetup --key-file key.bin" reads it. */
  if (!format_with ("k.img", "luks1", "32M", "--key-file key.bin k.img")
      || !check_that (oracle_read ("k.img", "--key-file key.bin", &o), "luksDump"))
    return;
  p.keyfile = "key.bin";
  p.keyfile_offset = 0;
  p.keyfile_size = 0;
  expect_table ("keyfile whole", &p, &o, dynamic_length ("k.img", &o), 0, 0);
  p.key_slot = 1;
  expect_error ("keyfile slot", &p, "keyslot 1 is not in use");
}

static void
test_detached_header (const char *type)
{
  struct luks_unlock_params p;
  struct oracle o;
  char name[64];

  snprintf (name, sizeof name, "%s-detached", type);
  write_file ("pw.txt", "hdr", 3);
  if (!check_that (sh ("rm -f hdr.img && truncate -s 8M data.img") == 0, "data")
      || !format_with ("hdr.img", type, "16M", "--key-file pw.txt "
                       "--header hdr.img data.img")
      || !check_that (oracle_read ("hdr.img", "--key-file pw.txt", &o),
                 "luksDump hdr.img"))
    return;
  p = with_passphrase ("data.img", "hdr");
  p.header_path = "hdr.img";
  check_that (o.offset == 0, "%s: detached header has offset %" PRIu64, name,
         o.offset);
  expect_table (name, &p, &o, 16384, 0, 0);
  p.header_path = NULL;
  expect_error (name, &p, "data.img: not a LUKS header");
  /* An in-image header may not put data over itself. */
  p.data_path = "hdr.img";
  expect_error (name, &p, "overlaps the header");
}

static void
test_persistent_flags (void)
{
  const uint32_t lib_flags = CRYPT_ACTIVATE_ALLOW_DISCARDS
    | CRYPT_ACTIVATE_SAME_CPU_CRYPT | CRYPT_ACTIVATE_SUBMIT_FROM_CRYPT_CPUS
    | CRYPT_ACTIVATE_NO_READ_WORKQUEUE | CRYPT_ACTIVATE_NO_WRITE_WORKQUEUE;
  const unsigned table_flags = CT_ALLOW_DISCARDS | CT_SAME_CPU_CRYPT
    | CT_SUBMIT_FROM_CRYPT_CPUS | CT_NO_READ_WORKQUEUE | CT_NO_WRITE_WORKQUEUE;
  struct luks_unlock_params p = with_passphrase ("pf.img", "flags");
  struct oracle o;

  write_file ("pw.txt", "flags", 5);
  if (!format_image ("pf.img", "luks2", "flags", "32M", "")
      || !set_persistent_flags ("pf.img", CRYPT_ACTIVATE_ALLOW_DISCARDS)
      || !check_that (oracle_read ("pf.img", "--key-file pw.txt", &o), "luksDump"))
    return;
  check_that (strcmp (o.flags, "allow-discards") == 0, "luksDump flags: %s",
         o.flags);
  expect_table ("flag allow-discards", &p, &o, 32768, 0, CT_ALLOW_DISCARDS);
  if (!set_persistent_flags ("pf.img", lib_flags)
      || !check_that (oracle_read ("pf.img", "--key-file pw.txt", &o), "luksDump"))
    return;
  check_that (strstr (o.flags, "same-cpu-crypt") && strstr (o.flags,
         "submit-from-crypt-cpus") && strstr (o.flags, "no-read-workqueue")
         && strstr (o.flags, "no-write-workqueue"), "luksDump flags: %s",
         o.flags);
  expect_table ("all persistent flags", &p, &o, 32768, 0, table_flags);
}

static void
test_bad_files (void)
{
  struct luks_unlock_params p = with_passphrase ("zero.img", "pw");
  struct oracle o;

  sh ("truncate -s 1M zero.img && head -c 1048576 /dev/urandom > rnd.img"
      " && : > empty.img");
  expect_error ("zeros", &p, "zero.img: not a LUKS header");
  p.data_path = "rnd.img";
  expect_error ("random", &p, "rnd.img: not a LUKS header");
  p.data_path = "empty.img";
  expect_error ("empty", &p, "empty.img: not a LUKS header");
  p.data_path = "absent.img";
  expect_error ("absent", &p, "absent.img: No such file or directory");
  p.data_path = ".";
  expect_error ("directory", &p, ".:");
  p.data_path = "zero.img";
  p.header_path = "absent.hdr";
  expect_error ("absent header", &p, "absent.hdr: No such file");

  /* Truncated: into the keyslots, then exactly at the data offset. */
  write_file ("pw.txt", "pw", 2);
  if (!format_image ("t.img", "luks2", "pw", "32M", "")
      || !check_that (oracle_read ("t.img", "--key-file pw.txt", &o), "luksDump"))
    return;
  p = with_passphrase ("t.img", "pw");
  sh ("truncate -s 16M t.img");
  expect_error ("luks2 no data", &p, "image too small for its LUKS data "
                "offset");
  sh ("truncate -s 16780800 t.img");     /* 16 MiB + 3.5 KiB */
  expect_error ("luks2 < 1 sector", &p, "image too small");
  sh ("truncate -s 8M t.img");
  expect_error ("luks2 truncated", &p, "t.img:");
  if (!format_image ("t.img", "luks1", "pw", "32M", ""))
    return;
  sh ("truncate -s 2M t.img");
  expect_error ("luks1 no data", &p, "image too small for its LUKS data "
                "offset");
  sh ("truncate -s 1M t.img");
  expect_error ("luks1 truncated", &p, "t.img:");
}

/* A LUKS header at the start of HEAD: magic, VERSION, and the field
 * that says how long it is (LUKS2's hdr_size). */
static void
put_header (unsigned char *head, int version, uint64_t hdr_size)
{
  int i;

  memset (head, 0, LUKS_HEAD_BYTES);
  memcpy (head, "LUKS\xba\xbe", 6);
  head[7] = version;
  for (i = 0; i < 8; i++)
    head[8 + i] = hdr_size >> (56 - 8 * i);
}

/* LUKS1 keyslot SLOT's key material at SECTOR (big-endian, +40). */
static void
put_slot (unsigned char *head, int slot, uint32_t sector)
{
  unsigned char *p = head + 208 + 48 * slot + 40;

  p[0] = sector >> 24; p[1] = sector >> 16; p[2] = sector >> 8; p[3] = sector;
}

/* luks_header_needs against the specifications' layouts, by hand. */
static void
test_header_needs (void)
{
  unsigned char head[LUKS_HEAD_BYTES];
  uint64_t needed = 0;

  /* LUKS2: hdr_size (16 KiB here), the primary binary header and JSON. */
  put_header (head, 2, 16384);
  check_that (luks_header_needs (head, sizeof head, &needed) == 2
              && needed == 16384, "luks2 16 KiB: %" PRIu64, needed);
  put_header (head, 2, 0x100000);
  check_that (luks_header_needs (head, 100, &needed) == 2
              && needed == 0x100000, "luks2 1 MiB: %" PRIu64, needed);
  /* Too short to hold hdr_size, or a nonsense one: the binary header. */
  check_that (luks_header_needs (head, 12, &needed) == 2
              && needed == 4096, "luks2 12 bytes: %" PRIu64, needed);
  put_header (head, 2, 7);
  check_that (luks_header_needs (head, sizeof head, &needed) == 2
              && needed == 4096, "luks2 hdr_size 7: %" PRIu64, needed);
  /* LUKS1: 64-byte keys, 4000 stripes = 256000 bytes = 500 sectors a
   * keyslot; the farthest keyslot counts, not the last one. */
  put_header (head, 1, 0);
  head[108 + 3] = 64;
  put_slot (head, 0, 8);
  put_slot (head, 3, 4100);
  put_slot (head, 7, 4000);
  check_that (luks_header_needs (head, sizeof head, &needed) == 1
              && needed == 4100 * 512 + 256000, "luks1 64-byte key: %"
              PRIu64, needed);
  /* 33-byte keys: 132000 bytes, rounded up to 258 sectors. */
  head[108 + 3] = 33;
  check_that (luks_header_needs (head, sizeof head, &needed) == 1
              && needed == 4100 * 512 + 258 * 512, "luks1 33-byte key: %"
              PRIu64, needed);
  /* A LUKS1 header cut inside its 592 bytes needs them first. */
  check_that (luks_header_needs (head, 300, &needed) == 1 && needed == 592,
              "luks1 cut at 300: %" PRIu64, needed);
  head[0] = 'X';
  check_that (luks_header_needs (head, sizeof head, &needed) == 0,
              "no magic taken for LUKS");
}

/* Images cut inside their LUKS header: named truncated, with the size. */
static void
test_truncated_header (void)
{
  struct luks_unlock_params p = with_passphrase ("th.img", "pw");

  if (!format_image ("th.img", "luks2", "pw", "32M", ""))
    return;
  sh ("truncate -s 4096 th.img");
  expect_error ("luks2 cut at 4 KiB", &p, "th.img: truncated: 4096 bytes, "
                "where its LUKS2 header needs 16384");
  if (!format_image ("th.img", "luks1", "pw", "32M", ""))
    return;
  sh ("truncate -s 1000 th.img");
  expect_error ("luks1 cut at 1000 bytes", &p, "th.img: truncated: 1000 "
                "bytes, where its LUKS1 header needs ");
}

static void
test_type_mismatch (void)
{
  struct luks_unlock_params p = with_passphrase ("m.img", "pw");

  if (!format_image ("m.img", "luks2", "pw", "32M", ""))
    return;
  p.type = LUKS_V1;
  expect_error ("luks1 wanted", &p, "m.img: not a LUKS1 header (found "
                "LUKS2)");
  if (!format_image ("m.img", "luks1", "pw", "32M", ""))
    return;
  p.type = LUKS_V2;
  expect_error ("luks2 wanted", &p, "m.img: not a LUKS2 header (found "
                "LUKS1)");
}

/* ---- nothing is ever written -------------------------------------- */

static bool
poke (const char *img, off_t offset, const char *bytes)
{
  int fd = open (img, O_WRONLY);
  bool ok = fd != -1 && pwrite (fd, bytes, strlen (bytes), offset)
                        == (ssize_t) strlen (bytes);

  if (fd != -1)
    close (fd);
  return check_that (ok, "corrupting %s", img);
}

/* libcryptsetup 2.6 rewrites a damaged LUKS2 header copy from the good
 * one while loading; with metadata locking off it must not.  The control
 * copy shows that cryptsetup itself does write, so a write would be
 * seen here. */
static void
test_no_header_repair (void)
{
  static const struct { const char *name; off_t offset; } damage[] = {
    { "primary checksum", LUKS2_CSUM_OFFSET },
    { "primary JSON", LUKS2_BIN_BYTES + 2 },
    { "secondary checksum", 16384 + LUKS2_CSUM_OFFSET },  /* 16 KiB hdr */
  };
  struct luks_unlock_params p = with_passphrase ("r.img", "repair");
  char before[65], after[65], name[64];
  struct oracle o;
  size_t i;

  write_file ("pw.txt", "repair", 6);
  for (i = 0; i < sizeof damage / sizeof damage[0]; i++)
    {
      snprintf (name, sizeof name, "damaged %s", damage[i].name);
      if (!format_image ("r.img", "luks2", "repair", "32M", "")
          || !check_that (oracle_read ("r.img", "--key-file pw.txt", &o), "dump")
          || !poke ("r.img", damage[i].offset, "XXXXXXXX"))
        continue;
      sh ("cp r.img control.img");
      sha256_file ("r.img", before);
      p.readonly = true;
      expect_table (name, &p, &o, 32768, 0, 0);
      p.readonly = false;
      expect_table (name, &p, &o, 32768, 0, 0);
      sha256_file ("r.img", after);
      check_that (strcmp (before, after) == 0, "%s: image written", name);
      sh ("cryptsetup luksDump control.img >/dev/null 2>&1");
      sha256_file ("control.img", after);
      check_that (strcmp (before, after) != 0, "%s: control: cryptsetup "
             "luksDump did not repair, so this test could not see a "
             "write", name);
    }
}

/* Every open of the image must be read-only, whatever libcryptsetup
 * would like to repair. */
static void
test_opens_read_only (void)
{
  char *log, *line, *end;
  int rc, opens = 0;

  if (sh ("strace -V >/dev/null 2>&1") != 0)
    {
      note ("SKIP part: strace is not installed: open flags not traced");
      return;
    }
  write_file ("pw.txt", "traced", 6);
  if (!format_image ("ro.img", "luks2", "traced", "32M", "")
      || !poke ("ro.img", LUKS2_CSUM_OFFSET, "XXXXXXXX"))
    return;
  /* LeakSanitizer cannot run under ptrace (make check-asan). */
  rc = sh ("ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" "
           "strace -f -qq -e trace=open,openat -o strace.log %s unlock "
           "--pass-file pw.txt ro.img >/dev/null 2>&1", self_exe);
  log = sh_output ("cat strace.log 2>/dev/null");
  if (rc != 0 && (log == NULL || strstr (log, "ro.img") == NULL))
    {
      note ("SKIP part: strace cannot trace here (exit %d)", rc);
      free (log);
      return;
    }
  check_that (rc == 0, "unlock under strace failed");
  for (line = log; line && *line; line = end)
    {
      end = strchr (line, '\n');
      if (end)
        *end++ = '\0';
      else
        end = line + strlen (line);
      if (strstr (line, "\"ro.img\"") == NULL || strstr (line, "= -1"))
        continue;
      opens++;
      check_that (strstr (line, "O_RDWR") == NULL
             && strstr (line, "O_WRONLY") == NULL,
             "image opened for writing: %s", line);
    }
  check_that (opens > 0, "strace saw no open of the image");
  note ("ok: the image was opened %d times, never for writing", opens);
  free (log);
}

/* ---- refused layouts ---------------------------------------------- */

static void
test_refused (void)
{
  struct luks_unlock_params p = with_passphrase ("x.img", "refuse");
  char before[65], after[65];
  char *dump;

  write_file ("pw.txt", "refuse", 6);
  if (format_image ("x.img", "luks2", "refuse", "32M", "")
      && check_that (sh ("cryptsetup reencrypt --init-only --batch-mode "
                    "--key-file pw.txt --pbkdf pbkdf2 "
                    "--pbkdf-force-iterations 1000 x.img >/dev/null") == 0,
                "cryptsetup reencrypt --init-only"))
    {
      struct outcome out;

      /* Initialised, not started: cryptsetup maps the old key's segment
       * alone, and so must we, without writing. */
      sha256_file ("x.img", before);
      run_unlock (&p, &out);
      check_that (out.r == 0, "re-encryption: not opened: %s", out.output);
      check_that (out.r == 0 && out.info.segments.count >= 1
                  && out.t.key != NULL && out.t.key_size == 64,
                  "re-encryption: no segments or no key");
      sha256_file ("x.img", after);
      check_that (strcmp (before, after) == 0, "re-encryption: image written");
      crypt_table_free (&out.t);
      crypt_table_free (&out.info.second);
      free (out.output);
    }

  /* cryptsetup cannot format integrity without dm-integrity, so the
   * segment is written into the metadata here; luksDump must accept it
   * for the case to count. */
  if (format_image ("x.img", "luks2", "refuse", "32M", "")
      && edit_luks2_json ("x.img", add_integrity, "hmac(sha256)"))
    {
      dump = sh_output ("cryptsetup luksDump x.img 2>&1");
      check_that (dump && strstr (dump, "integrity: hmac(sha256)"),
             "crafted integrity header not accepted by luksDump");
      free (dump);
      expect_integrity ("integrity", &p, "hmac(sha256)", "aes-xts-plain64");
    }
  if (format_image ("x.img", "luks2", "refuse", "32M", "")
      && edit_luks2_json ("x.img", add_integrity, "aead"))
    expect_integrity ("aead", &p, "aead", "aes-gcm-random");
  /* cryptsetup 2.6 formats no journal encryption for LUKS2. */
  if (format_image ("x.img", "luks2", "refuse", "32M", "")
      && edit_luks2_json ("x.img", add_integrity, "journal-crypt"))
    expect_error ("journal encryption", &p, "LUKS2 integrity with "
                  "journal_encryption \"aes\" is not supported");
}

/* A fixed-size segment maps its own size, not the rest of the file. */
static void
test_fixed_segment (void)
{
  struct luks_unlock_params p = with_passphrase ("fs.img", "fixed");
  struct oracle o;
  char *dump;

  write_file ("pw.txt", "fixed", 5);
  if (!format_image ("fs.img", "luks2", "fixed", "32M", "")
      || !edit_luks2_json ("fs.img", set_segment_size, "8388608")
      || !check_that (oracle_read ("fs.img", "--key-file pw.txt", &o), "dump"))
    return;
  dump = sh_output ("cryptsetup luksDump fs.img");
  check_that (dump && strstr (dump, "length: 8388608 [bytes]"),
         "luksDump does not show the fixed length");
  free (dump);
  expect_table ("fixed segment", &p, &o, 16384, 0, 0);
  if (!edit_luks2_json ("fs.img", set_segment_size, "16781312"))
    return;
  expect_error ("fixed segment too long", &p,
                "fs.img: image too small for its LUKS data segment");
}

/* With every debug message on, neither the passphrase nor the key may
 * appear in what is printed. */
static void
test_nothing_secret_logged (void)
{
  const char *pw = "Tr0ub4dor&3-secret";
  struct luks_unlock_params p = with_passphrase ("d.img", pw);
  struct outcome out;
  struct oracle o;
  char spaced[16];

  write_file ("pw.txt", pw, strlen (pw));
  if (!format_image ("d.img", "luks2", pw, "32M", "")
      || !check_that (oracle_read ("d.img", "--key-file pw.txt", &o), "dump"))
    return;
  snprintf (spaced, sizeof spaced, "%.2s %.2s %.2s", o.key_hex,
            o.key_hex + 2, o.key_hex + 4);
  setenv ("DMCRYPT_DEBUG", "1", 1);
  dmcrypt_debug_luks = 1;
  run_unlock (&p, &out);
  check_that (out.r == 0, "debug unlock failed: %s", out.output);
  check_that (strstr (out.output, "debug: libcryptsetup: ") != NULL,
         "libcryptsetup's messages do not reach nbdkit_debug");
  check_that (strstr (out.output, pw) == NULL, "passphrase in the log");
  check_that (strstr (out.output, o.key_hex) == NULL
         && strstr (out.output, o.key_hex + 32) == NULL
         && strstr (out.output, spaced) == NULL, "key in the log");
  outcome_free (&out);
  p.key_slot = 0;
  p.passphrase = "Tr0ub4dor&3-wrong";
  p.passphrase_size = strlen (p.passphrase);
  run_unlock (&p, &out);
  check_that (out.r == -1 && strstr (out.output, "Tr0ub4dor") == NULL,
         "wrong passphrase in the log");
  outcome_free (&out);
  unsetenv ("DMCRYPT_DEBUG");
  dmcrypt_debug_luks = 0;
  note ("ok: debug log without passphrase or key");
}

/* ---- images from the cryptsetup project (../shared) --------------- */

static bool
unpack (const char *file)
{
  const char *ext = strrchr (file, '.');

  if (ext && strcmp (ext, ".xz") == 0 && strstr (file, ".tar.") == NULL)
    return check_that (sh ("xz -dc '%s/%s' > '%.*s'", shared_dir, file,
                      (int) (ext - file), file) == 0, "unxz %s", file);
  return check_that (sh ("tar xJf '%s/%s'", shared_dir, file) == 0,
                "untar %s", file);
}

/* Unlocks IMG with P: the result must match cryptsetup's own reading
 * with SECRET_ARGS, or, where cryptsetup cannot unlock it here, come
 * from our own keyslot unlock.  The image must not change. */
static void
expect_like_cryptsetup (const char *name, const struct luks_unlock_params *p,
                        const char *secret_args)
{
  char before[65], after[65], *dump;
  struct outcome out = { 0 };
  struct oracle o;

  if (!check_that (file_size (p->data_path) > 0, "%s: missing", name))
    return;
  if (oracle_read (p->header_path ? p->header_path : p->data_path,
                   secret_args, &o))
    {
      sha256_file (p->data_path, before);
      expect_table (name, p, &o, dynamic_length (p->data_path, &o), -1, 0);
    }
  else
    {
      /* A keyslot cipher that libcryptsetup's userspace crypto lacks and
       * would decrypt through device-mapper: luks/keyslot.c unlocks it.
       * The key's proof is the file system that test-luks-ciphers.sh
       * finds in the decrypted image; here, the table's cipher. */
      dump = sh_output ("cryptsetup luksDump '%s' | sed -n "
                        "'s/^Cipher name:[[:space:]]*//p;"
                        "s/^Cipher mode:[[:space:]]*//p' | paste -sd-",
                        p->data_path);
      if (dump)
        dump[strcspn (dump, "\n")] = '\0';
      sha256_file (p->data_path, before);
      run_unlock (p, &out);
      if (check_that (out.r == 0, "%s: our own keyslot unlock failed: %s",
                      name, out.output ? out.output : ""))
        check_that (dump && strcmp (out.t.cipher, dump) == 0,
                    "%s: cipher %s, luksDump says %s", name, out.t.cipher,
                    dump ? dump : "?");
      note ("ok: %s: cryptsetup cannot unlock it here, we did (%s)", name,
            dump ? dump : "?");
      outcome_free (&out);
      free (dump);
    }
  sha256_file (p->data_path, after);
  check_that (strcmp (before, after) == 0, "%s: image written", name);
}

/* Our own keyslot unlock of IMG with PW, forced on a keyslot that
 * libcryptsetup opens too, must give libcryptsetup's volume key; a
 * wrong passphrase matches no keyslot. */
static void
expect_own_unlock (const char *img, const char *pw)
{
  struct luks_unlock_params p = with_passphrase (img, pw);
  struct crypt_device *cd;
  char theirs[128], ours[128], wrong[128];
  size_t size = sizeof theirs;
  int slot = -3, r = -1, bad = -3;

  fflush (stdout);
  if (crypt_init (&cd, img) == 0 && crypt_load (cd, CRYPT_LUKS, NULL) == 0)
    {
      r = crypt_volume_key_get (cd, CRYPT_ANY_SLOT, theirs, &size, pw,
                                strlen (pw));
      slot = luks_own_unlock (cd, &p, pw, strlen (pw), (uint8_t *) ours,
                              size);
      bad = luks_own_unlock (cd, &p, "wrong", 5, (uint8_t *) wrong, size);
    }
  crypt_free (cd);
  if (check_that (r >= 0 && slot == r, "%s: own unlock gave slot %d, "
                  "libcryptsetup %d", img, slot, r))
    check_that (memcmp (theirs, ours, size) == 0,
                "%s: own unlock gave another volume key", img);
  check_that (bad == -2, "%s: a wrong passphrase gave %d", img, bad);
  note ("ok: %s: our own keyslot unlock gives libcryptsetup's key", img);
}

static void
test_own_unlock (void)
{
  if (format_image ("own1.img", "luks1", "own", "4M", ""))
    expect_own_unlock ("own1.img", "own");
  if (format_image ("own2.img", "luks2", "own", "20M",
                    "--cipher aes-cbc-essiv:sha256 --key-size 256"))
    expect_own_unlock ("own2.img", "own");
  write_file ("format.pw", "own", 3);
  if (check_that (sh ("rm -f own3.img && truncate -s 20M own3.img && "
                      "cryptsetup luksFormat --batch-mode --type luks2 "
                      "--pbkdf argon2id --pbkdf-memory 64 "
                      "--pbkdf-force-iterations 4 --key-file format.pw "
                      "own3.img >/dev/null") == 0, "luksFormat argon2id"))
    expect_own_unlock ("own3.img", "own");
}

static void
test_luks1_images (void)
{
  const char *dir = "luks1-images";
  struct luks_unlock_params p = {
    .keyfile = "luks1-images/keyfile1", .key_slot = -1,
    .readonly = true,
  };
  char *list, *img, *save = NULL, args[128];
  int n = 0;

  if (!unpack ("luks1-images.tar.xz")
      || !(list = sh_output ("ls %s/*.img", dir)))
    return;
  snprintf (args, sizeof args, "--key-file %s", p.keyfile);
  for (img = strtok_r (list, "\n", &save); img;
       img = strtok_r (NULL, "\n", &save), n++)
    {
      p.data_path = img;
      expect_like_cryptsetup (img + strlen (dir) + 1, &p, args);
    }
  check_that (n >= 12, "only %d images in luks1-images.tar.xz", n);
  free (list);
}

static void
test_compat_images (void)
{
  static const char *images[] = {
    "compatimage.img", "compatimage2.img", "compatv10image.img",
  };
  static const char *wrong[] = {
    "93R4P4pIqAH8", "mymJeD8ivEhE", "ocMakf3fAcQO",
  };
  struct luks_unlock_params p;
  char file[64];
  size_t i, j;

  write_file ("pw.txt", "compatkey", 9);
  for (i = 0; i < sizeof images / sizeof images[0]; i++)
    {
      snprintf (file, sizeof file, "%s.xz", images[i]);
      if (!unpack (file))
        continue;
      p = with_passphrase (images[i], "compatkey");
      expect_like_cryptsetup (images[i], &p, "--key-file pw.txt");
      for (j = 0; j < sizeof wrong / sizeof wrong[0]; j++)
        {
          p = with_passphrase (images[i], wrong[j]);
          expect_error (images[i], &p, "no keyslot matched");
        }
    }
}

/* Malicious LUKS1 headers: one clean error each, and no write. */
static void
test_evil_headers (void)
{
  char *list, *file, *save = NULL, img[128], before[65], after[65];
  struct luks_unlock_params p;
  int n = 0;

  list = sh_output ("cd '%s' && ls evil_hdr-*.xz", shared_dir);
  for (file = list ? strtok_r (list, "\n", &save) : NULL; file;
       file = strtok_r (NULL, "\n", &save), n++)
    {
      if (!unpack (file))
        continue;
      snprintf (img, sizeof img, "%.*s", (int) strlen (file) - 3, file);
      sha256_file (img, before);
      p = with_passphrase (img, "compatkey");
      expect_error (img, &p, "");
      p.readonly = false;
      expect_error (img, &p, "");
      sha256_file (img, after);
      check_that (strcmp (before, after) == 0, "%s: image written", img);
    }
  check_that (n >= 5, "only %d evil_hdr images", n);
  free (list);
}

static void
test_luks2_images (void)
{
  static const int mda_kib[] = { 16, 32, 64, 128, 256, 512, 1024, 2048,
                                 4096 };
  struct luks_unlock_params p;
  char img[64];
  size_t i;

  write_file ("pw.txt", "Qx3qn46vq0v", 11);
  if (unpack ("luks2_mda_images.tar.xz"))
    for (i = 0; i < sizeof mda_kib / sizeof mda_kib[0]; i++)
      {
        snprintf (img, sizeof img, "test_image_%d", mda_kib[i]);
        p = with_passphrase (img, "Qx3qn46vq0v");
        expect_like_cryptsetup (img, &p, "--key-file pw.txt");
      }

  if (unpack ("luks2_header_requirements.tar.xz"))
    {
      p = with_passphrase ("luks2_header_requirements", "blablabl");
      expect_error ("requirements", &p, "LUKS2 header has unknown "
                    "requirements");
      /* The same header without them: a 4 MiB file, all header. */
      p.data_path = "luks2_header_requirements_free";
      expect_error ("no requirements", &p, "image too small");
      write_file ("pw.txt", "blablabl", 8);
      sh ("truncate -s 8M luks2_header_requirements_free");
      expect_like_cryptsetup ("no requirements, 8M", &p, "--key-file pw.txt");
    }

  write_file ("pw.txt", "93R4P4pIqAH8", 12);
  if (unpack ("luks2_invalid_cipher.img.xz"))
    {
      /* The keyslot is plain aes-xts; the segment names a kernel driver
       * that only a kernel could run: refused by name, before any key
       * is derived. */
      p = with_passphrase ("luks2_invalid_cipher.img", "93R4P4pIqAH8");
      expect_error ("invalid cipher", &p,
                    "unsupported cipher spec: capi:xts(ecb(aes-generic))");
    }

  if (unpack ("luks2_valid_hdr.img.xz"))
    {
      /* Its keyslots use the early "argon2" KDF name, which cryptsetup
       * 2.6 cannot open either; the header loads, the unlock fails. */
      p = with_passphrase ("luks2_valid_hdr.img", "not the passphrase");
      expect_error ("valid header", &p, "");
      p.type = LUKS_V1;
      expect_error ("valid header", &p, "not a LUKS1 header (found LUKS2)");
    }
}

static void
test_third_party (void)
{
  char readme[sizeof shared_dir + 16];

  snprintf (readme, sizeof readme, "%s/README.md", shared_dir);
  if (access (readme, R_OK) != 0)
    {
      note ("SKIP part: %s is absent: third-party images not tested",
            shared_dir);
      return;
    }
  test_own_unlock ();
  test_luks1_images ();
  test_compat_images ();
  test_evil_headers ();
  test_luks2_images ();
}

/* ---- as an ordinary user ------------------------------------------ */

/* Root runs everything again as nobody, from a copy of this program in
 * a world-writable scratch directory: no lock directory, no loop
 * devices, no device-mapper. */
static void
test_as_nobody (void)
{
  char dir[PATH_MAX + 32];
  int rc;

  if (geteuid () != 0)
    return;
  if (sh ("command -v setpriv >/dev/null") != 0)
    {
      note ("SKIP part: setpriv is not installed: no run as nobody");
      return;
    }
  snprintf (dir, sizeof dir, "%s/nobody.XXXXXX", scratch);
  if (!check_that (mkdtemp (dir) != NULL && chmod (scratch, 0755) == 0
              && chmod (dir, 01777) == 0, "scratch for nobody"))
    return;
  note ("--- again as user nobody ---");
  rc = sh ("cp '%s' '%s/test-luks' && chmod 0755 '%s/test-luks' && "
           "cd '%s' && TMPDIR='%s' DMCRYPT_TEST_SHARED='%s' setpriv "
           "--reuid=65534 --regid=65534 --clear-groups ./test-luks",
           self_exe, dir, dir, dir, dir, shared_dir);
  check_that (rc == 0, "the test as nobody exited %d", rc);
}

/* ---- unlock mode -------------------------------------------------- */

static char *
read_small_file (const char *path)
{
  char *text = sh_output ("cat '%s'", path);

  if (text == NULL)
    {
      fprintf (stderr, "%s: cannot read\n", path);
      exit (1);
    }
  return text;
}

static int
unlock_mode (int argc, char **argv)
{
  struct luks_unlock_params p = { .key_slot = -1, .readonly = true };
  struct crypt_table t;
  struct luks_info info;
  bool showkey = false;
  char *secret = NULL, key_hex[1025] = "";
  int i;

  for (i = 0; i < argc - 1; i++)
    if (strcmp (argv[i], "--header") == 0)
      p.header_path = argv[++i];
    else if (strcmp (argv[i], "--type") == 0)
      {
        i++;
        p.type = strcmp (argv[i], "luks1") == 0 ? LUKS_V1
          : strcmp (argv[i], "luks2") == 0 ? LUKS_V2 : LUKS_ANY;
      }
    else if (strcmp (argv[i], "--pass-file") == 0)
      {
        secret = read_small_file (argv[++i]);
        p.passphrase = secret;
        p.passphrase_size = strlen (secret);
      }
    else if (strcmp (argv[i], "--keyfile") == 0)
      p.keyfile = argv[++i];
    else if (strcmp (argv[i], "--keyfile-offset") == 0)
      p.keyfile_offset = strtoull (argv[++i], NULL, 0);
    else if (strcmp (argv[i], "--keyfile-size") == 0)
      p.keyfile_size = strtoull (argv[++i], NULL, 0);
    else if (strcmp (argv[i], "--key-slot") == 0)
      p.key_slot = atoi (argv[++i]);
    else if (strcmp (argv[i], "--showkey") == 0)
      showkey = true;
    else
      {
        fprintf (stderr, "unknown option %s\n", argv[i]);
        return 2;
      }
  if (argc < 1)
    return 2;
  p.data_path = argv[argc - 1];
  if (luks_unlock (&p, file_size (p.data_path), &t, &info) == -1)
    return 1;
  if (showkey && t.key_size <= 512)
    to_hex (t.key, t.key_size, key_hex);
  printf ("version=%d\nuuid=%s\nkey_slot=%d\ncipher=%s\nkey_bytes=%zu\n"
          "key=%s\niv_offset=%" PRIu64 "\ndevice=%s\noffset=%" PRIu64
          "\nsector_size=%u\nlength=%" PRIu64 "\nflags=0x%x\n",
          info.version, info.uuid, info.key_slot, t.cipher, t.key_size,
          showkey ? key_hex : "(hidden)", t.iv_offset, t.device, t.offset,
          t.sector_size, t.length, t.flags);
  crypt_table_free (&t);
  free (secret);
  return 0;
}

/* ---- main --------------------------------------------------------- */

static void
find_paths (void)
{
  const char *env = getenv ("DMCRYPT_TEST_SHARED");
  ssize_t n = readlink ("/proc/self/exe", self_exe, sizeof self_exe - 1);
  char top[PATH_MAX];

  if (n <= 0)
    abort ();
  self_exe[n] = '\0';
  /* This program is TOP/tests/unit/test-luks; the data is in
   * TOP/tests/data, a copy of what the tests need from TOP/../shared. */
  snprintf (top, sizeof top, "%s", self_exe);
  for (n = 0; n < 3 && strrchr (top, '/'); n++)
    *strrchr (top, '/') = '\0';
  if (env)
    snprintf (shared_dir, sizeof shared_dir, "%s", env);
  else {
    snprintf (shared_dir, sizeof shared_dir,
              "%s/tests/data/testdata/cryptsetup", top);
    if (access (shared_dir, R_OK) != 0)
      snprintf (shared_dir, sizeof shared_dir,
                "%s/../shared/testdata/cryptsetup", top);
  }
}

int
main (int argc, char **argv)
{
  const char *tmp = getenv ("TMPDIR");

  if (argc > 1 && strcmp (argv[1], "unlock") == 0)
    return unlock_mode (argc - 2, argv + 2);
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (sh ("cryptsetup --version >/dev/null 2>&1") != 0)
    {
      printf ("SKIP: cryptsetup is not installed\n");
      return 77;
    }
  find_paths ();
  snprintf (scratch, sizeof scratch, "%s/test-luks.XXXXXX",
            tmp ? tmp : "/tmp");
  if (mkdtemp (scratch) == NULL || chdir (scratch) != 0)
    {
      perror (scratch);
      return 1;
    }
  note ("running as uid %d in %s", (int) geteuid (), scratch);
  test_formats ();
  test_key_slots ("luks2", 32);
  test_key_slots ("luks1", 8);
  test_unbound_slot ();
  test_key_file ();
  test_detached_header ("luks2");
  test_detached_header ("luks1");
  test_persistent_flags ();
  test_bad_files ();
  test_header_needs ();
  test_truncated_header ();
  test_type_mismatch ();
  test_no_header_repair ();
  test_opens_read_only ();
  test_refused ();
  test_fixed_segment ();
  test_nothing_secret_logged ();
  test_third_party ();
  test_as_nobody ();
  if (chdir ("/") == 0)
    sh ("rm -rf '%s'", scratch);
  printf ("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
