/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TrueCrypt and VeraCrypt (TCRYPT) volume headers, read by our own code
 * the way cryptsetup 2.6 reads them (lib/tcrypt/tcrypt.c): libcryptsetup
 * decrypts a header only in AES here (every other cipher needs the
 * kernel's AF_ALG sockets, which these machines lack), so the header is
 * decrypted with our sector ciphers (crypto/cipher.h).
 *
 * A header is one 512-byte sector: a 64-byte salt, then 448 bytes
 * encrypted with the header key (PBKDF2 of the passphrase, 192 bytes)
 * in the volume's own cipher chain at sector 0.  Decrypted, it starts
 * with "TRUE" or "VERA" and carries two CRC-32s, the volume's sizes and
 * offsets (big-endian, bytes) and 256 bytes of key material.  No nbdkit
 * or libcryptsetup calls: the unit tests and the fuzzer drive it
 * directly. */
#ifndef DMCRYPT_TCRYPT_H
#define DMCRYPT_TCRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCRYPT_HDR_BYTES        512     /* one header sector */
#define TCRYPT_SALT_BYTES       64
#define TCRYPT_ENC_BYTES        448     /* the encrypted part */
#define TCRYPT_HDR_KEY_BYTES    192     /* the derived header key */
#define TCRYPT_KEYS_BYTES       256     /* key material in the header */
#define TCRYPT_VOLUME_KEY_MAX   192     /* three ciphers of 64 bytes */

/* Where the headers are, in bytes (negative: from the device's end). */
#define TCRYPT_HIDDEN_OFFSET        65536
#define TCRYPT_HIDDEN_OFFSET_OLD    (-1536)
#define TCRYPT_BACKUP_OFFSET        (-131072)
#define TCRYPT_HIDDEN_BACKUP_OFFSET (-65536)
#define TCRYPT_SYSTEM_OFFSET        31744   /* sector 62 */

/* One cipher chain as TrueCrypt and VeraCrypt define it: the cipher
 * names top layer first (cryptsetup's order: "serpent-twofish-aes"),
 * and where each layer's keys lie in the key material. */
#define TCRYPT_CHAIN_MAX 3
struct tcrypt_chain
{
  const char *cipher;           /* "serpent-twofish-aes" */
  const char *mode;             /* "xts-plain64", "lrw-benbi", "cbc-tcw" */
  unsigned layers;
  struct
  {
    const char *name;           /* kernel cipher name */
    unsigned key_offset;        /* bytes into the key material */
    unsigned tweak_offset;      /* XTS: the second key's offset; cbc-tcw:
                                   the IV seed's, then the whitening */
    unsigned key_bytes;         /* cbc-tcw: the cipher's key; else 0 (32) */
    unsigned extra_bytes;       /* cbc-tcw: IV seed + 16-byte whitening */
  } layer[TCRYPT_CHAIN_MAX];
};

/* A decrypted, checked header (sizes and offsets in bytes). */
struct tcrypt_header
{
  const struct tcrypt_chain *chain;
  bool veracrypt;               /* magic "VERA" */
  uint16_t version;             /* header format version */
  uint16_t version_tc;          /* program version needed */
  uint64_t hidden_volume_size;
  uint64_t volume_size;
  uint64_t mk_offset;           /* the data area's start (0 read as 512) */
  uint64_t mk_size;
  uint32_t flags;
  uint32_t sector_size;         /* 0 read as 512 */
  uint8_t keys[TCRYPT_KEYS_BYTES];
};

/* Checks a decrypted header PLAIN (TCRYPT_ENC_BYTES): the magic ("VERA"
 * only when VERACRYPT), the header CRC (versions above 3) and the keys'
 * CRC.  Fills *H but its chain.  Returns 0, or -1 with a short reason
 * in WHY. */
int tcrypt_parse_header (const uint8_t *plain, bool veracrypt,
                         struct tcrypt_header *h, char *why,
                         size_t why_size);

/* Decrypts SECTOR (TCRYPT_HDR_BYTES, as on disk) with the header key
 * KEY (TCRYPT_HDR_KEY_BYTES) in every chain we have, as cryptsetup
 * tries them.  Returns 1 with *H filled for the first that gives a
 * valid header, 0 when none does, -1 after nbdkit_error. */
int tcrypt_decrypt_header (const uint8_t *sector, const uint8_t *key,
                           bool veracrypt, struct tcrypt_header *h);

/* tcrypt-legacy.c: TrueCrypt's CBC headers (before 4.1) with a single
 * cipher ("aes-cbc-tcw"), which the kernel maps with its tcw IV mode:
 * as tcrypt_decrypt_header, for these chains. */
int tcrypt_legacy_decrypt_header (const uint8_t *sector, const uint8_t *key,
                                  struct tcrypt_header *h);

/* The chains cryptsetup knows that we cannot decrypt (Kuznyechik), as
 * text for messages: "kuznyechik". */
extern const char tcrypt_unavailable_ciphers[];

/* The volume key as libcryptsetup's crypt_volume_key_get gives it: each
 * layer's key in the chain's order (XTS: key, then tweak key; LRW: key,
 * then the 16-byte tweak key).  Returns its size in bytes. */
size_t tcrypt_volume_key (const struct tcrypt_header *h, uint8_t *out);

/* The dm-crypt cipher spec of the whole chain ("serpent-twofish-aes-
 * xts-plain64", a cascade: crypto/cascade.h) into BUF.  Returns 0, or
 * -1 when BUF is too small. */
int tcrypt_cipher_spec (const struct tcrypt_header *h, char *buf,
                        size_t size);

/* CRC-32 (IEEE 802.3, as zlib's crc32) of LEN bytes; key files are
 * mixed with its raw update step (crypto/crc32.h's crc32_le). */
uint32_t tcrypt_crc32 (const uint8_t *p, size_t len);

/* Key files: TrueCrypt's pool is 64 bytes, VeraCrypt's 128 when the
 * passphrase is longer than 64 bytes.  Only the first
 * TCRYPT_KEYFILE_MAX bytes of a key file count. */
#define TCRYPT_POOL_BYTES      64
#define VERACRYPT_POOL_BYTES   128
#define TCRYPT_KEYFILE_MAX     (1024 * 1024)

/* Mixes one key file's LEN bytes DATA into POOL (POOL_BYTES, a
 * multiple of 4): each byte's running CRC-32 added to four bytes of
 * the pool in turn, as TrueCrypt does. */
void tcrypt_pool_add_keyfile (uint8_t *pool, size_t pool_bytes,
                              const uint8_t *data, size_t len);

#endif /* DMCRYPT_TCRYPT_H */
