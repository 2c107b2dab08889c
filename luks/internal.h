/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the files of luks/ only; the interface is luks.h. */
#ifndef DMCRYPT_LUKS_INTERNAL_H
#define DMCRYPT_LUKS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libcryptsetup.h>

#include "luks.h"

/* log.c: libcryptsetup's messages go to nbdkit_debug, never to the
 * terminal.  The last error line of the calling thread is kept so that
 * our own one-line errors can quote it. */
void luks_log_start (void);
const char *luks_log_last_error (void);   /* NULL when there was none */

/* luks2.c: what the LUKS2 JSON metadata says about the data segment. */
struct luks2_segment
{
  char *encryption;         /* cipher spec exactly as stored */
  bool dynamic;             /* size "dynamic": up to the end of the device */
  uint64_t size_bytes;      /* fixed size, when !dynamic */
  char integrity[32];       /* its integrity type ("hmac(sha256)",
                               "aead", "poly1305"), or "" */
};

/* Refuses (one nbdkit_error naming HDR_PATH) what we cannot serve:
 * re-encryption, unknown requirements, several or non-crypt segments,
 * integrity/AEAD.  Fills SEG otherwise.  Returns 0 or -1. */
int luks2_check_segment (struct crypt_device *cd, const char *hdr_path,
                         struct luks2_segment *seg);
void luks2_segment_free (struct luks2_segment *seg);

/* params.c: every table field except the key, and INFO's integrity.
 * Returns 0 or -1. */
int luks_fill_params (struct crypt_device *cd,
                      const struct luks_unlock_params *p,
                      uint64_t data_size, struct crypt_table *t,
                      struct luks_info *info);
/* What messages call the data: p->data_name, else p->data_path. */
const char *luks_data_name (const struct luks_unlock_params *p);
/* "name-mode" from crypt_get_cipher and crypt_get_cipher_mode, as
 * dm-crypt wants it (LUKS1 and FileVault2 keep the two apart).  Malloc'd,
 * or NULL. */
char *luks_name_mode_spec (struct crypt_device *cd);
/* t->cipher = CIPHER (taken; NULL means out of memory) and t->device,
 * then the spec checked against the volume key size.  Returns 0 or -1. */
int luks_set_cipher (struct crypt_device *cd,
                     const struct luks_unlock_params *p, char *cipher,
                     struct crypt_table *t);

/* fdread.c: reads LEN bytes at byte OFFSET of the file whose descriptor
 * OPAQUE points to, into BUF: fvault2_read_fn and bitlk_read_fn over a
 * file.  Returns 0, or -1 when they cannot all be read. */
int luks_fd_read (void *opaque, void *buf, size_t len, uint64_t offset);

/* fvault2.c: crypt_load of a FileVault2 volume, a failure explained by
 * our own reading of the metadata (libcryptsetup says why only in its
 * debug log).  Returns 0 or -1. */
int fvault2_load (struct crypt_device *cd,
                  const struct luks_unlock_params *p);
/* The table cryptsetup activates for it, minus the key: aes-xts-plain64,
 * 512-byte sectors, the logical volume's offset and size.  Returns 0 or
 * -1. */
int fvault2_fill_params (struct crypt_device *cd,
                         const struct luks_unlock_params *p,
                         uint64_t data_size, struct crypt_table *t);

/* tcrypt.c: luks_unlock for LUKS_TCRYPT: finds the header's key by
 * PBKDF2 over the hashes and iteration counts TrueCrypt and VeraCrypt
 * use, decrypts the header (tcrypt.h) and fills T as cryptsetup would
 * map the volume.  Returns 0 or -1. */
int tcrypt_unlock (const struct luks_unlock_params *p, uint64_t data_size,
                   struct crypt_table *t, struct luks_info *info);

/* tcrypt-lib.c: the header through libcryptsetup (crypt_load with
 * CRYPT_TCRYPT), as far as it can read it here.  Returns 1 with *LIB
 * filled, 0 when it cannot (a cipher it lacks, a wrong passphrase:
 * libcryptsetup says which only in its log). */
struct tcrypt_lib
{
  char spec[64];                /* "aes-xts-plain64" */
  uint8_t key[192];             /* crypt_volume_key_get's */
  size_t key_size;              /* bytes */
  uint64_t offset, iv_offset;   /* 512-byte sectors */
};
int tcrypt_lib_load (const struct luks_unlock_params *p,
                     struct tcrypt_lib *lib);

/* bitlk.c: crypt_load of a BitLocker volume, after our own reading of
 * its metadata refused what cryptsetup cannot activate.  Returns 0 or
 * -1. */
int bitlk_load (struct crypt_device *cd,
                const struct luks_unlock_params *p);
/* The table the crypt segments share (the whole device as itself, the
 * key aside) and SEGMENTS, cryptsetup's mapping of it.  Returns 0 or
 * -1. */
int bitlk_fill_params (struct crypt_device *cd,
                       const struct luks_unlock_params *p,
                       uint64_t data_size, struct crypt_table *t,
                       struct segment_list *segments);

/* key.c: unlocks a keyslot into t->key / t->key_size (secmem).
 * Returns the keyslot that opened, or -1. */
int luks_fetch_volume_key (struct crypt_device *cd,
                           const struct luks_unlock_params *p,
                           struct crypt_table *t);
/* The volume key from SECRET through keyslot SLOT (CRYPT_ANY_SLOT:
 * any) into KEY, *KEY_SIZE bytes (the volume key's size; the slot's on
 * return), with our own unlock where libcryptsetup cannot decrypt the
 * keyslot.  Returns the slot; a negative errno, nothing said (-EPERM:
 * a wrong secret, -ENOENT: the slot cannot open the data); or
 * LUKS_KEY_REPORTED after nbdkit_error. */
#define LUKS_KEY_REPORTED (-100000)
int luks_key_by_secret (struct crypt_device *cd,
                        const struct luks_unlock_params *p, int slot,
                        const char *secret, size_t secret_size,
                        uint8_t *key, size_t *key_size);
/* t->key allocated in secmem for KEY_SIZE bytes, t->key_size set, when
 * there is none yet.  Returns 0, or -1 after nbdkit_error. */
int luks_table_key_alloc (struct crypt_table *t, size_t key_size);

/* token.c: the volume key into T as cryptsetup open finds it: the
 * header's tokens first when P asks for them (a token parameter, or no
 * passphrase and no key file), then the passphrase or key file unless
 * P->token_only.  Returns the keyslot that opened, or -1 after one
 * nbdkit_error (each token that failed said in P->notice first). */
int luks_fetch_key (struct crypt_device *cd,
                    const struct luks_unlock_params *p,
                    struct crypt_table *t);

/* key.c: the passphrase, or the key file's contents read as
 * cryptsetup --key-file reads them into *TO_FREE (free with
 * crypt_safe_free; NULL for a passphrase).  Returns 0 or -1. */
int luks_read_secret (struct crypt_device *cd,
                      const struct luks_unlock_params *p,
                      const char **secret, size_t *secret_size,
                      char **to_free);

/* params.c: the LUKS2 persistent activation flags as
 * enum crypt_table_flag. */
unsigned luks2_activation_flags (struct crypt_device *cd);

/* luks2-reenc.c: a LUKS2 header in re-encryption (reenc.h): returns 0
 * when it is not (nothing filled), 1 with T (the first segment's table,
 * with its key) and INFO (the segments and the second table) filled as
 * cryptsetup 2.6.1 activates it, -1 after nbdkit_error. */
int luks2_reenc_unlock (struct crypt_device *cd,
                        const struct luks_unlock_params *p,
                        uint64_t data_size, struct crypt_table *t,
                        struct luks_info *info);

/* kdf.c: PBKDF2 (OpenSSL, any hash of its default or legacy provider,
 * by LUKS's name: "sha256", "whirlpool") and Argon2 (libargon2, TYPE
 * "argon2i" or "argon2id", MEMORY_KIB in KiB).  OUT gets OUT_BYTES.
 * Return 0, or -1 after nbdkit_error. */
int luks_pbkdf2 (const char *hash, const void *secret, size_t secret_bytes,
                 const uint8_t *salt, size_t salt_bytes, uint32_t iterations,
                 uint8_t *out, size_t out_bytes);
int luks_argon2 (const char *type, const void *secret, size_t secret_bytes,
                 const uint8_t *salt, size_t salt_bytes, uint32_t time_cost,
                 uint32_t memory_kib, uint32_t threads, uint8_t *out,
                 size_t out_bytes);
/* The hash LUKS calls NAME, from the same library context as PBKDF2;
 * NULL if OpenSSL has none.  Free with EVP_MD_free. */
struct evp_md_st *luks_kdf_fetch_hash (const char *name);

/* af.c: merges STRIPES blocks of KEY_BYTES at SPLIT into KEY with
 * HASH's diffusion.  Returns 0, or -1 after nbdkit_error. */
int luks_af_merge (const char *hash, const uint8_t *split, size_t key_bytes,
                   unsigned stripes, uint8_t *key);

/* keyslot.c: a keyslot as our own unlock needs it.  Strings point into
 * storage that outlives the call. */
#define LUKS_OWN_SALT_MAX 64
#define LUKS_OWN_DIGEST_MAX 64
struct luks_own_keyslot
{
  int slot;
  const char *kdf;              /* CRYPT_KDF_PBKDF2, _ARGON2I, _ARGON2ID */
  const char *kdf_hash;         /* PBKDF2's hash */
  uint32_t iterations;          /* PBKDF2 iterations, Argon2 time cost */
  uint32_t memory_kib, threads; /* Argon2 */
  uint8_t salt[LUKS_OWN_SALT_MAX];
  size_t salt_bytes;
  const char *cipher;           /* the area's dm-crypt cipher spec */
  size_t area_key_bytes;        /* its key size */
  uint64_t area_offset;         /* bytes, in the header device */
  size_t area_bytes;
  unsigned stripes;
  const char *af_hash;
};
struct luks_own_digest
{
  const char *hash;             /* PBKDF2's */
  uint32_t iterations;
  uint8_t salt[LUKS_OWN_SALT_MAX];
  size_t salt_bytes;
  uint8_t digest[LUKS_OWN_DIGEST_MAX];
  size_t digest_bytes;
};
/* Unlocks KS of the header at PATH with SECRET into VOLUME_KEY
 * (KEY_BYTES).  Returns 1 when the key matches digest D, 0 when it
 * does not (a wrong passphrase), -1 after nbdkit_error. */
int luks_own_keyslot_open (const char *path, const struct luks_own_keyslot *ks,
                           const struct luks_own_digest *d,
                           const char *secret, size_t secret_bytes,
                           uint8_t *volume_key, size_t key_bytes);

/* own-unlock.c: tries P's keyslot, or every active one, with our own
 * unlock.  Returns the slot that opened, -2 when none matched, -1 after
 * nbdkit_error. */
int luks_own_unlock (struct crypt_device *cd,
                     const struct luks_unlock_params *p, const char *secret,
                     size_t secret_bytes, uint8_t *volume_key,
                     size_t key_bytes);

/* luks2-json.c: the same for a LUKS2 header, from its JSON metadata.
 * PATH is the header device; ONLY_SLOT a slot or CRYPT_ANY_SLOT. */
int luks2_own_unlock (struct crypt_device *cd, const char *path,
                      int only_slot, const char *secret,
                      size_t secret_bytes, uint8_t *volume_key,
                      size_t key_bytes);

/* luks2-json.c: a LUKS2 keyslot and a digest (by its id) as our own
 * unlock needs them, from the parsed JSON ROOT (struct json_object).
 * Strings point into ROOT.  Return 0, or -1. */
struct json_object;
int luks2_json_keyslot (struct crypt_device *cd, struct json_object *root,
                        int slot, struct luks_own_keyslot *ks,
                        struct crypt_pbkdf_type *pbkdf);
int luks2_json_digest (struct json_object *root, int digest,
                       struct luks_own_digest *d);

#endif /* DMCRYPT_LUKS_INTERNAL_H */
