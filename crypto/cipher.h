/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sector encryption as dm-crypt does it: a cipher spec in dm-crypt's
 * grammar ("aes-xts-plain64", "aes-cbc-essiv:sha256", "capi:xts(aes)-plain64")
 * keyed once, then any run of encryption sectors encrypted or decrypted
 * with the IV that the kernel would use for each of them.
 *
 * Units: every "sector" argument counts 512-byte sectors from the start of
 * the mapping (the dm target's own sector numbers); sizes are in bytes. */
#ifndef DMCRYPT_CIPHER_H
#define DMCRYPT_CIPHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sector_cipher;

/* Whose AES the sector loop calls for the data (XTS, and the ECB that
 * the XTS construction, CBC across sectors, ecb and lrw are built on);
 * every other cipher has one home (block_cipher.c).  OpenSSL 3.0's AES
 * uses AES-NI on 128-bit registers; libgcrypt 1.10's XTS has a VAES
 * path on 256-bit vectors, about twice as fast where the CPU has VAES,
 * and its ECB is that XTS with a zero tweak (gcrypt_provider.c).  AUTO
 * takes libgcrypt where that path runs (its "hwflist" names
 * intel-vaes-vpclmul), else OpenSSL.  Both give the same bytes. */
enum sector_cipher_library
{
  SECTOR_CIPHER_LIB_AUTO,
  SECTOR_CIPHER_LIB_OPENSSL,
  SECTOR_CIPHER_LIB_LIBGCRYPT,
};

struct sector_cipher_params
{
  const char *spec;          /* dm-crypt cipher spec, as in a table */
  const uint8_t *key;        /* volume key bytes (copied) */
  size_t key_size;           /* bytes */
  unsigned sector_size;      /* encryption sector size, bytes: 512..4096 */
  uint64_t iv_offset;        /* 512-byte sectors added to every IV sector */
  bool iv_large_sectors;     /* IV counts sector_size units, not 512 */
  enum sector_cipher_library library;       /* 0: auto */
};

/* "auto", "openssl" or "libgcrypt" into *LIB; -1 for any other NAME. */
int sector_cipher_parse_library (const char *name,
                                 enum sector_cipher_library *lib);

/* What AUTO means on this machine: "libgcrypt" or "openssl". */
const char *sector_cipher_auto_library (void);

/* Parses and checks SPEC against KEY_SIZE without keying anything.
 * Returns 0, or -1 after nbdkit_error with a one-line reason such as
 * "unsupported cipher: serpent" or "aes-xts needs a 32 or 64 byte key". */
int sector_cipher_check_spec (const char *spec, size_t key_size);

/* Keys the cipher once.  Returns NULL after nbdkit_error on failure. */
struct sector_cipher *sector_cipher_new (const struct sector_cipher_params *p);

/* Wipes and frees the cipher and every per-thread context made from it.
 * No thread may be inside encrypt/decrypt at the time. */
void sector_cipher_free (struct sector_cipher *c);

/* Encrypt or decrypt NBYTES (a multiple of the sector size) from SRC to
 * DST (which may equal SRC).  SECTOR is the 512-byte sector number of the
 * first encryption sector, relative to the start of the mapping, and must
 * be a multiple of sector_size/512.  Thread-safe: each calling thread uses
 * its own keyed OpenSSL contexts, made on first use by copying the
 * already-expanded key schedule.  Returns 0, or -1 with errno set. */
int sector_cipher_encrypt (struct sector_cipher *c, uint8_t *dst,
                           const uint8_t *src, size_t nbytes,
                           uint64_t sector);
int sector_cipher_decrypt (struct sector_cipher *c, uint8_t *dst,
                           const uint8_t *src, size_t nbytes,
                           uint64_t sector);

/* Encrypts the NPIECES pieces of plaintext that follow each other at
 * SRC, piece i (LENS[i] bytes, whole sectors) into DSTS[i], the first
 * at SECTOR: as a sector_cipher_encrypt of each, but where the cipher
 * gains from longer calls (sector_cipher_batch_bytes), in one. */
int sector_cipher_encrypt_pieces (struct sector_cipher *c,
                                  uint8_t *const *dsts, const size_t *lens,
                                  size_t npieces, const uint8_t *src,
                                  uint64_t sector);

/* The bytes up to which an encryption call gets cheaper per byte,
 * beyond what one call usually holds: CBC interleaves that many bytes
 * of sectors' chains in its ECB calls (cbc_multi.c).  0 where length
 * makes no difference. */
size_t sector_cipher_batch_bytes (const struct sector_cipher *c);

unsigned sector_cipher_sector_size (const struct sector_cipher *c);

/* The library that ciphers the data: "openssl", "libgcrypt", or
 * "none" for cipher_null; for a cascade, its layers' joined by "+" where
 * they differ ("openssl+libgcrypt"). */
const char *sector_cipher_library (const struct sector_cipher *c);

/* true for cipher_null: encryption is a copy, and in place a no-op. */
bool sector_cipher_is_identity (const struct sector_cipher *c);

#endif /* DMCRYPT_CIPHER_H */
