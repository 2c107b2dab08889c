/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bulk paths against OpenSSL's own modes, one sector and one EVP
 * call at a time: XTS built on ECB (crypto/xts_bulk.c), with and
 * without the AVX-512 whitening, and interleaved CBC encryption
 * (crypto/cbc_multi.c), and libgcrypt's AES-XTS over runs of sectors
 * and its AES-ECB under both (columns of 64 sectors and more),
 * at every sector size, key size and IV generator they serve, with
 * iv_offset and iv_large_sectors, over random keys, data, start sectors
 * and lengths, some runs with an IV sector that wraps past 2^64.  Then
 * more threads than CPUs share one cipher, as nbdkit's do: a CPU's
 * scratch area (crypto/cpu_scratch.c) must serve one call at a time,
 * also when a thread is preempted in the middle of one. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "../../common/cleanup.h"
#include "../../crypto/cipher.h"
#include "../../crypto/xts.h"

#include "../../fuzz/cipher-reference.h"
#include "check.h"

#define MAX_BYTES (64 * 1024)
#define ROUNDS 40

static enum sector_cipher_library library;

static unsigned
random_below (unsigned n)
{
  unsigned r;

  RAND_bytes ((unsigned char *) &r, sizeof r);
  return r % n;
}

/* One random run of MC in both directions, in place and not. */
static void
check_round (const struct mode_case *mc, uint8_t *in, uint8_t *got,
             uint8_t *want)
{
  unsigned sector_size = 512u << random_below (4), spu = sector_size / 512;
  bool large = random_below (2) == 1;
  uint64_t iv_offset = (uint64_t) random_below (1000) * spu;
  uint64_t sector = ((uint64_t) random_below (1u << 30) << 4) * spu;
  size_t nbytes = (1 + random_below (MAX_BYTES / sector_size)) *
    (size_t) sector_size;
  struct sector_cipher_params p = {
    .spec = mc->spec, .key_size = mc->key_bytes, .sector_size = sector_size,
    .iv_large_sectors = large, .library = library,
  };
  uint8_t key[64];
  struct sector_cipher *c;
  int dir;

  /* One round in 8: an iv_offset that takes sector + iv_offset past
   * 2^64 inside the run, which the kernel wraps before it shifts. */
  if (random_below (8) == 0) {
    unsigned units = 2 + random_below (MAX_BYTES / sector_size - 1);

    nbytes = (size_t) units * sector_size;
    sector = (uint64_t) random_below (64) * spu;
    iv_offset = 0 - sector - (uint64_t) (1 + random_below (units - 1)) * spu;
  }
  p.iv_offset = iv_offset;

  RAND_bytes (key, sizeof key);
  RAND_bytes (in, nbytes);
  p.key = key;
  c = sector_cipher_new (&p);
  if (!check_that (c != NULL, "%s: no cipher", mc->spec))
    return;
  for (dir = 0; dir < 2; dir++) {
    reference (mc, key, dir == 0, sector_size, iv_offset, large, want, in,
               nbytes, sector);
    CHECK ((dir == 0 ? sector_cipher_encrypt : sector_cipher_decrypt)
           (c, got, in, nbytes, sector) == 0);
    CHECK_MSG (memcmp (got, want, nbytes) == 0,
               "%s %zu-byte key, %s %zu bytes at sector %" PRIu64 ", %u-byte "
               "sectors, iv_offset %" PRIu64 "%s, %s: differs from "
               "OpenSSL's %s", mc->spec, mc->key_bytes,
               dir == 0 ? "encrypt" : "decrypt", nbytes, sector, sector_size,
               iv_offset, large ? ", iv_large_sectors" : "",
               sector_cipher_library (c), mc->spec);
    memcpy (got, in, nbytes);               /* in place */
    CHECK ((dir == 0 ? sector_cipher_encrypt : sector_cipher_decrypt)
           (c, got, got, nbytes, sector) == 0);
    CHECK (memcmp (got, want, nbytes) == 0);
  }
  sector_cipher_free (c);
}

static void
check_all (enum sector_cipher_library lib)
{
  uint8_t *in = malloc (MAX_BYTES), *got = malloc (MAX_BYTES);
  uint8_t *want = malloc (MAX_BYTES);
  size_t i;
  int round;

  library = lib;
  for (i = 0; i < ARRAY_SIZE (reference_cases); i++)
    for (round = 0; round < ROUNDS; round++)
      check_round (&reference_cases[i], in, got, want);
  free (in);
  free (got);
  free (want);
}

#define THREADS 12
#define THREAD_ROUNDS 400
#define THREAD_BYTES (128 * 1024)

struct worker
{
  struct sector_cipher *c;
  uint8_t *in, *want;
  uint64_t sector;
  pthread_t id;
};

static atomic_uint thread_mismatches;

static void *
encrypt_again (void *arg)
{
  struct worker *w = arg;
  uint8_t *got = malloc (THREAD_BYTES);
  unsigned i;

  for (i = 0; got && i < THREAD_ROUNDS; i++) {
    memset (got, 0, THREAD_BYTES);
    if (sector_cipher_encrypt (w->c, got, w->in, THREAD_BYTES,
                               w->sector) != 0 ||
        memcmp (got, w->want, THREAD_BYTES) != 0 ||
        sector_cipher_decrypt (w->c, got, got, THREAD_BYTES,
                               w->sector) != 0 ||
        memcmp (got, w->in, THREAD_BYTES) != 0)
      atomic_fetch_add (&thread_mismatches, 1);
  }
  free (got);
  return NULL;
}

/* THREADS threads, each encrypting and decrypting its own bytes with
 * one shared cipher over and over, every ciphertext against the one
 * made before they start. */
static void
check_threads (const char *spec, size_t key_bytes, unsigned sector_size)
{
  struct sector_cipher_params p = {
    .spec = spec, .key_size = key_bytes, .sector_size = sector_size,
    .library = SECTOR_CIPHER_LIB_AUTO,
  };
  struct worker w[THREADS];
  uint8_t key[64];
  unsigned t, started = 0;

  RAND_bytes (key, sizeof key);
  p.key = key;
  w[0].c = sector_cipher_new (&p);
  if (!check_that (w[0].c != NULL, "%s: no cipher", spec))
    return;
  atomic_store (&thread_mismatches, 0);
  for (t = 0; t < THREADS; t++) {
    w[t].c = w[0].c;
    w[t].in = malloc (THREAD_BYTES);
    w[t].want = malloc (THREAD_BYTES);
    w[t].sector = (uint64_t) t * (THREAD_BYTES / 512);
    REQUIRE (w[t].in != NULL && w[t].want != NULL, "out of memory");
    RAND_bytes (w[t].in, THREAD_BYTES);
    REQUIRE (sector_cipher_encrypt (w[t].c, w[t].want, w[t].in, THREAD_BYTES,
                                    w[t].sector) == 0, "%s: encrypt", spec);
  }
  for (t = 0; t < THREADS; t++)
    if (pthread_create (&w[t].id, NULL, encrypt_again, &w[t]) == 0)
      started++;
    else
      break;
  for (t = 0; t < started; t++)
    pthread_join (w[t].id, NULL);
  CHECK_MSG (started == THREADS, "%s: %u of %u threads started", spec,
             started, THREADS);
  CHECK_MSG (atomic_load (&thread_mismatches) == 0,
             "%s %zu-byte key, %u-byte sectors, %u threads sharing it: %u "
             "of %u round trips differ from one thread's", spec, key_bytes,
             sector_size, THREADS, atomic_load (&thread_mismatches),
             THREADS * THREAD_ROUNDS);
  for (t = 0; t < THREADS; t++) {
    free (w[t].in);
    free (w[t].want);
  }
  sector_cipher_free (w[0].c);
}

int
main (void)
{
  bool vector = xts_use_vector (true);

  check_all (SECTOR_CIPHER_LIB_LIBGCRYPT);
  check_all (SECTOR_CIPHER_LIB_OPENSSL);
  check_threads ("aes-xts-plain64", 32, 512);
  check_threads ("aes-xts-plain64", 64, 512);
  check_threads ("aes-cbc-essiv:sha256", 32, 4096);
  if (vector) {
    xts_use_vector (false);
    check_all (SECTOR_CIPHER_LIB_OPENSSL);
  }
  printf ("AES: libgcrypt's and OpenSSL's; XTS whitening: %s\n",
          vector ? "AVX-512 and portable"
          : "portable only (no AVX-512 with VPCLMULQDQ here)");
  if (failures > 0) {
    fprintf (stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf ("cipher-bulk: %u checks passed\n", checks);
  return 0;
}
