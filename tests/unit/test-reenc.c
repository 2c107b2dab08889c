/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layout of a LUKS2 re-encryption from its JSON metadata
 * (luks/reenc.h): the header cryptsetup 2.6.1 left after an interrupted
 * "cryptsetup reencrypt" to aes-xts-plain64 with 4096-byte sectors, as
 * luksDump --dump-json-metadata printed it, then hostile variants of
 * it, each refused with its reason. */
#include <stdio.h>
#include <string.h>

#include "../../crypto/secmem.h"
#include "../../luks/reenc.h"
#include "check.h"

#define MiB (1024 * 1024ULL)
#define DEVICE (256 * MiB)

/* Segment 0 re-encrypted (20119552 bytes), segment 1 not yet. */
#define SEG0 "\"0\":{\"type\":\"crypt\",\"offset\":\"16777216\"," \
  "\"size\":\"20119552\",\"iv_tweak\":\"0\"," \
  "\"encryption\":\"aes-xts-plain64\",\"sector_size\":4096}"
#define SEG1 "\"1\":{\"type\":\"crypt\",\"offset\":\"36896768\"," \
  "\"size\":\"dynamic\",\"iv_tweak\":\"39296\"," \
  "\"encryption\":\"aes-cbc-essiv:sha256\",\"sector_size\":512}"
#define BACKUPS "\"2\":{\"type\":\"crypt\",\"offset\":\"16777216\"," \
  "\"size\":\"dynamic\",\"iv_tweak\":\"0\"," \
  "\"encryption\":\"aes-cbc-essiv:sha256\",\"sector_size\":512," \
  "\"flags\":[\"backup-previous\"]}," \
  "\"3\":{\"type\":\"crypt\",\"offset\":\"16777216\"," \
  "\"size\":\"dynamic\",\"iv_tweak\":\"0\"," \
  "\"encryption\":\"aes-xts-plain64\",\"sector_size\":4096," \
  "\"flags\":[\"backup-final\"]}"
#define DIGESTS "\"digests\":{" \
  "\"0\":{\"type\":\"pbkdf2\",\"keyslots\":[\"0\"]," \
  "\"segments\":[\"1\",\"2\"]}," \
  "\"1\":{\"type\":\"pbkdf2\",\"keyslots\":[\"1\"]," \
  "\"segments\":[\"0\",\"3\"]}," \
  "\"2\":{\"type\":\"pbkdf2\",\"keyslots\":[\"2\"],\"segments\":[]}}"
#define KEYSLOTS "\"keyslots\":{\"2\":{\"type\":\"reencrypt\"," \
  "\"mode\":\"reencrypt\",\"direction\":\"forward\",\"key_size\":1," \
  "\"area\":{\"type\":\"checksum\",\"offset\":\"421888\"," \
  "\"size\":\"16355328\",\"hash\":\"sha256\",\"sector_size\":4096}}}"
#define REQ(r) "\"config\":{\"requirements\":{\"mandatory\":[" r "]}}"
#define V2 "\"online-reencrypt-v2\""

static char json[8192];

static const char *
make (const char *segments, const char *digests, const char *config)
{
  snprintf (json, sizeof json, "{\"segments\":{%s},%s,%s,%s}", segments,
            digests, KEYSLOTS, config);
  return json;
}

static int
parse (const char *text, struct reenc_layout *l, char *why, size_t size)
{
  int r = reenc_layout_parse (text, DEVICE, l, why, size);

  if (r == -1)
    printf ("  refused: %s\n", why);
  return r;
}

static void
test_real_header (void)
{
  struct reenc_layout l;
  char why[300];
  const struct segment *s = l.segments.seg;

  REQUIRE (parse (make (SEG0 "," SEG1 "," BACKUPS, DIGESTS, REQ (V2)), &l,
                  why, sizeof why) == 1, "the real header: %s", why);
  CHECK (l.version == 2 && l.segments.count == 2 && l.n_tables == 2);
  CHECK (l.digest_old == 0 && l.digest_new == 1);
  /* The device past its 16 MiB header, in 512-byte sectors. */
  CHECK (l.length == (DEVICE - 16 * MiB) / 512);
  CHECK (s[0].type == SEGMENT_CRYPT && s[0].start == 0
         && s[0].length == 20119552 / 512 && s[0].offset == 32768
         && s[0].iv_offset == 0 && s[0].table == 0);
  CHECK (s[1].start == 39296 && s[1].length == l.length - 39296
         && s[1].offset == 72064 && s[1].iv_offset == 39296
         && s[1].table == 1);
  CHECK (strcmp (l.tables[0].cipher, "aes-xts-plain64") == 0
         && l.tables[0].sector_size == 4096 && l.tables[0].digest == 1);
  CHECK (strcmp (l.tables[1].cipher, "aes-cbc-essiv:sha256") == 0
         && l.tables[1].sector_size == 512 && l.tables[1].digest == 0);
  CHECK (strcmp (l.mode, "reencrypt") == 0
         && strcmp (l.resilience, "checksum") == 0);

  /* Not in re-encryption: no requirement. */
  CHECK (parse (make (SEG0, DIGESTS, "\"config\":{}"), &l, why,
                sizeof why) == 0);
}

/* Each variant must be refused, its reason containing WANT. */
static void
refused (const char *name, const char *text, const char *want)
{
  struct reenc_layout l;
  char why[300];

  CHECK_MSG (parse (text, &l, why, sizeof why) == -1, "%s: accepted",
             name);
  CHECK_MSG (strstr (why, want) != NULL, "%s: \"%s\" does not say \"%s\"",
             name, why, want);
  CHECK_MSG (l.segments.count == 0, "%s: segments left", name);
}

static void
test_hostile (void)
{
  static char many[6000];
  size_t n = 0;
  int i;

  refused ("crash", make (SEG0 "," "\"1\":{\"type\":\"crypt\","
           "\"offset\":\"36896768\",\"size\":\"dynamic\",\"iv_tweak\":"
           "\"39296\",\"encryption\":\"aes-cbc-essiv:sha256\","
           "\"sector_size\":512,\"flags\":[\"in-reencryption\"]},"
           BACKUPS, DIGESTS, REQ (V2)), "cryptsetup repair");
  refused ("unknown requirement", make (SEG0 "," SEG1 "," BACKUPS, DIGESTS,
           REQ (V2 ",\"frobnicate\"")), "unknown requirements (frobnicate)");
  refused ("first format", make (SEG0 "," SEG1 "," BACKUPS, DIGESTS,
           REQ ("\"online-reencrypt\"")), "first format");
  refused ("overlap", make (SEG0 "," "\"1\":{\"type\":\"crypt\","
           "\"offset\":\"36892672\",\"size\":\"dynamic\",\"iv_tweak\":"
           "\"39288\",\"encryption\":\"aes-cbc-essiv:sha256\","
           "\"sector_size\":512}," BACKUPS, DIGESTS, REQ (V2)), "overlap");
  refused ("gap in the numbers", make (SEG0 "," BACKUPS ",\"5\":{}",
           DIGESTS, REQ (V2)), "numbered");
  refused ("past the device", make ("\"0\":{\"type\":\"crypt\","
           "\"offset\":\"16777216\",\"size\":\"1099511627776\","
           "\"iv_tweak\":\"0\",\"encryption\":\"aes-xts-plain64\","
           "\"sector_size\":4096}," SEG1 "," BACKUPS, DIGESTS, REQ (V2)),
           "too small");
  refused ("no digest", make (SEG0 "," SEG1 "," BACKUPS, "\"digests\":{"
           "\"1\":{\"keyslots\":[\"1\"],\"segments\":[\"0\",\"3\"]}}",
           REQ (V2)), "no digest");
  refused ("misaligned", make ("\"0\":{\"type\":\"crypt\","
           "\"offset\":\"16777728\",\"size\":\"20119040\","
           "\"iv_tweak\":\"0\",\"encryption\":\"aes-xts-plain64\","
           "\"sector_size\":4096}," SEG1 "," BACKUPS, DIGESTS, REQ (V2)),
           "misaligned");
  refused ("bad sector size", make ("\"0\":{\"type\":\"crypt\","
           "\"offset\":\"16777216\",\"size\":\"20119552\","
           "\"iv_tweak\":\"0\",\"encryption\":\"aes-xts-plain64\","
           "\"sector_size\":1000}," SEG1 "," BACKUPS, DIGESTS, REQ (V2)),
           "sector size");
  refused ("integrity", make ("\"0\":{\"type\":\"crypt\","
           "\"offset\":\"16777216\",\"size\":\"20119552\","
           "\"iv_tweak\":\"0\",\"encryption\":\"aes-xts-plain64\","
           "\"sector_size\":4096,\"integrity\":{\"type\":\"aead\"}},"
           SEG1 "," BACKUPS, DIGESTS, REQ (V2)), "integrity");
  refused ("unknown flag", make (SEG0 "," "\"1\":{\"type\":\"crypt\","
           "\"offset\":\"36896768\",\"size\":\"dynamic\",\"iv_tweak\":"
           "\"39296\",\"encryption\":\"aes-cbc-essiv:sha256\","
           "\"sector_size\":512,\"flags\":[\"sparkle\"]}," BACKUPS,
           DIGESTS, REQ (V2)), "unknown flags");
  refused ("dynamic not last", make ("\"0\":{\"type\":\"crypt\","
           "\"offset\":\"16777216\",\"size\":\"dynamic\","
           "\"iv_tweak\":\"0\",\"encryption\":\"aes-xts-plain64\","
           "\"sector_size\":4096}," SEG1 "," BACKUPS, DIGESTS, REQ (V2)),
           "not the last");
  refused ("not JSON", "{\"segments\":", "JSON");
  /* Seventeen segments in use. */
  for (i = 0; i < 17; i++)
    n += (size_t) snprintf (many + n, sizeof many - n, "%s\"%d\":{\"type\":"
                            "\"linear\",\"offset\":\"%d\",\"size\":\"4096\"}",
                            i ? "," : "", i, (i + 1) * 1048576);
  refused ("too many", make (many, DIGESTS, REQ (V2)), "more than");
}

/* The reencrypt digest's input: "v" '0'+version, the old key, the new
 * key, then the keyslot's and the backup segments' fields. */
static void
test_verification_data (void)
{
  static const uint8_t old_key[32] = { 1 }, new_key[64] = { 2 };
  uint8_t *data;
  size_t bytes;
  char why[200];
  /* mode, direction, area type, offset, size, hash, sector size; then
   * two crypt segments (type, offset, "dynamic", iv_tweak, cipher,
   * sector size). */
  size_t want = 2 + 32 + 64 + 9 + 7 + 8 + 8 + 8 + 6 + 4
    + (5 + 8 + 7 + 8 + 20 + 4) + (5 + 8 + 7 + 8 + 15 + 4);

  REQUIRE (reenc_verification_data (make (SEG0 "," SEG1 "," BACKUPS,
                                          DIGESTS, REQ (V2)), 2, old_key,
                                    32, new_key, 64, &data, &bytes, why,
                                    sizeof why) == 0, "%s", why);
  CHECK (bytes == want);
  CHECK (data[0] == 'v' && data[1] == '2');
  CHECK (memcmp (data + 2, old_key, 32) == 0
         && memcmp (data + 34, new_key, 64) == 0);
  CHECK (memcmp (data + 98, "reencryptforwardchecksum", 24) == 0);
  secmem_free (data, bytes);
  /* Without a backup-final segment there is nothing to check. */
  CHECK (reenc_verification_data (make (SEG0, DIGESTS, REQ (V2)), 2,
                                  old_key, 32, NULL, 0, &data, &bytes, why,
                                  sizeof why) == -1 && data == NULL);
}

int
main (void)
{
  test_real_header ();
  test_hostile ();
  test_verification_data ();
  if (failures == 0)
    printf ("test-reenc: %u checks passed\n", checks);
  return failures != 0;
}
