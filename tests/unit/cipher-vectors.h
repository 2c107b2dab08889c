/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Known answers for test-cipher.c.
 *
 * ieee_vectors: IEEE Std 1619-2007 Annex B, XTS-AES vectors 1-4 (AES-128)
 * and 10 (AES-256).  A data unit sequence number is the 512-byte sector
 * number with plain64 IVs.  Vectors 1-3 have 32-byte data units: XTS
 * without ciphertext stealing treats each 16-byte block on its own (its
 * tweak is T * alpha^j), so they are checked as the first 32 bytes of a
 * 512-byte sector.  Vectors 4 and 10 encrypt the bytes 00..ff twice.
 * Values as published (also in Botan's src/tests/data/modes/xts.vec),
 * and re-checked against python3-cryptography's AES-XTS.
 *
 * digest_vectors: SHA-256 digests made by tests/cipher-vectors.py with
 * the test suite's oracle, tests/oracle.py: an independent Python model
 * of dm-crypt (IV generators, IV sector arithmetic, and XTS by hand where
 * OpenSSL's lacks the cipher or key, over a library's block ciphers).
 * See the script for the exact buffer, keys and parameter sweep.
 * Cascades ("serpent-twofish-aes-xts-plain64") are the oracle's layers
 * one after the other, as cryptsetup stacks TrueCrypt's chains.
 *
 * block_vectors: published vectors of the block ciphers that come from
 * libgcrypt, and of LRW, checked as the first bytes of sector 0.
 * Twofish: the Twofish paper's ECB_TBL.TXT (Schneier et al.), I=1 at
 * 128 and 256 bits.  Serpent: the kernel's crypto/testmgr.h
 * (serpent_tv_template, the 256-bit key 00..1f).  LRW-AES: IEEE
 * P1619/D16, Guyot's first vector, also the kernel's aes_lrw_tv_template
 * (block index 1: benbi's IV for the first block of sector 0).  Each is
 * re-checked by tests/oracle.py's selftest with nettle's ciphers. */
#ifndef DMCRYPT_TEST_CIPHER_VECTORS_H
#define DMCRYPT_TEST_CIPHER_VECTORS_H

#include <stdint.h>

struct ieee_vector
{
  int number;                /* IEEE 1619-2007 vector number */
  const char *key;           /* Key1 || Key2, hex */
  uint64_t sequence;         /* data unit sequence number */
  const char *plaintext;     /* hex; NULL: 00..ff 00..ff (512 bytes) */
  const char *ciphertext;    /* hex */
};

static const char vector4_ciphertext[] =
  "27a7479befa1d476489f308cd4cfa6e2a96e4bbe3208ff25287dd3819616e89c"
  "c78cf7f5e543445f8333d8fa7f56000005279fa5d8b5e4ad40e736ddb4d35412"
  "328063fd2aab53e5ea1e0a9f332500a5df9487d07a5c92cc512c8866c7e860ce"
  "93fdf166a24912b422976146ae20ce846bb7dc9ba94a767aaef20c0d61ad0265"
  "5ea92dc4c4e41a8952c651d33174be51a10c421110e6d81588ede82103a252d8"
  "a750e8768defffed9122810aaeb99f9172af82b604dc4b8e51bcb08235a6f434"
  "1332e4ca60482a4ba1a03b3e65008fc5da76b70bf1690db4eae29c5f1badd03c"
  "5ccf2a55d705ddcd86d449511ceb7ec30bf12b1fa35b913f9f747a8afd1b130e"
  "94bff94effd01a91735ca1726acd0b197c4e5b03393697e126826fb6bbde8ecc"
  "1e08298516e2c9ed03ff3c1b7860f6de76d4cecd94c8119855ef5297ca67e9f3"
  "e7ff72b1e99785ca0a7e7720c5b36dc6d72cac9574c8cbbc2f801e23e56fd344"
  "b07f22154beba0f08ce8891e643ed995c94d9a69c9f1b5f499027a78572aeebd"
  "74d20cc39881c213ee770b1010e4bea718846977ae119f7a023ab58cca0ad752"
  "afe656bb3c17256a9f6e9bf19fdd5a38fc82bbe872c5539edb609ef4f79c203e"
  "bb140f2e583cb2ad15b4aa5b655016a8449277dbd477ef2c8d6c017db738b18d"
  "eb4a427d1923ce3ff262735779a418f20a282df920147beabe421ee5319d0568";
static const char vector10_ciphertext[] =
  "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b"
  "5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd"
  "5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0"
  "c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca"
  "2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0"
  "b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f"
  "93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec"
  "583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a"
  "84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1"
  "505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae"
  "9be69a2ffeceb1bec9de244fbe15992b11b77c040f12bd8f6a975a44a0f90c29"
  "a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac"
  "6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f"
  "645e8b7e9bfdef33943054ff84011493c27b3429eaedb4ed5376441a77ed4385"
  "1ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa"
  "773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151";

static const struct ieee_vector ieee_vectors[] = {
  { 1, "00000000000000000000000000000000"
       "00000000000000000000000000000000", 0,
    "0000000000000000000000000000000000000000000000000000000000000000",
    "917cf69ebd68b2ec9b9fe9a3eadda692cd43d2f59598ed858c02c2652fbf922e" },
  { 2, "11111111111111111111111111111111"
       "22222222222222222222222222222222", UINT64_C (0x3333333333),
    "4444444444444444444444444444444444444444444444444444444444444444",
    "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0" },
  { 3, "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0"
       "22222222222222222222222222222222", UINT64_C (0x3333333333),
    "4444444444444444444444444444444444444444444444444444444444444444",
    "af85336b597afc1a900b2eb21ec949d292df4c047e0b21532186a5971a227a89" },
  { 4, "27182818284590452353602874713526"
       "31415926535897932384626433832795", 0, NULL, vector4_ciphertext },
  { 10, "2718281828459045235360287471352662497757247093699959574966967627"
        "3141592653589793238462643383279502884197169399375105820974944592",
    0xff, NULL, vector10_ciphertext },
};

enum key_style { KEY_PATTERN, KEY_DUP };

struct digest_vector
{
  const char *spec;
  unsigned key_bytes;
  enum key_style key_style;  /* KEY_DUP: second half repeats the first */
  const char *encrypt_sha256;
  const char *decrypt_sha256;
};

struct block_vector
{
  const char *spec;
  const char *key;           /* hex */
  const char *plaintext;     /* hex, the start of sector 0 */
  const char *ciphertext;    /* hex */
};

static const struct block_vector block_vectors[] = {
  { "twofish-ecb", "00000000000000000000000000000000",
    "00000000000000000000000000000000", "9f589f5cf6122c32b6bfec2f2ae8c35a" },
  { "twofish-ecb",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "00000000000000000000000000000000", "57ff739d4dc92c1bd7fc01700cc8216f" },
  { "serpent-ecb",
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "000102030405060708090a0b0c0d0e0f", "de269ff833e432b85b2e88d2701ce75c" },
  { "aes-lrw-benbi",
    "4562ac25f828176d4c268414b5680185258e2a05e73e9d03ee5a830ccc094c87",
    "30313233343536373839414243444546", "f1b273cd65a3df5fe95d489254634eb8" },
};

static const struct digest_vector digest_vectors[] = {
  { "aes-xts-plain64", 64, KEY_PATTERN,
    "f5b3f83bab95b9a124066312b522cc21791d456b1e4bd4b47cfa415ba868aef2",
    "d058d034549f1419388d915007d319a9f32ab8d7764bf87d44e2553f5ee63275" },
  { "aes-xts-plain64", 32, KEY_PATTERN,
    "23d5af349a2f0450aed053fe8ef6159d9ccecc3956e0357f98c306062ee1b3e4",
    "f0ed3f5666760c21a473e8abff738480aeeb8812542fc0064830fc7e1aaf1515" },
  { "aes-xts-plain64", 48, KEY_PATTERN,
    "2be69230c90782de03eb655ed47f402ffe8d87cdf9845a1e386fc080a652491f",
    "bc938c5fbbfc72646faf4583d908d5faa899a41e8651e7dd654ac200fbc13438" },
  { "aes-xts-plain64", 64, KEY_DUP,
    "608653c837135879f55b01ccce15cc49da1fb29bc2a367ed3787d42b845e04f2",
    "f4ffaeb0d0640469f4aeb5151895b76178dab69fa4378ec2fe05020ce081eb5e" },
  { "aes-xts-plain", 64, KEY_PATTERN,
    "0354e851f17275286196b50cba34dbcf47610f467a246139ac87a25ea9dcdaf6",
    "5e6cc65441b42672f5b86f965ccd021215ba3b029ec62d9a7d74741ba8d86633" },
  { "aes-xts-plain64be", 32, KEY_PATTERN,
    "4b134f728f35d1b948ce13b92d5aa0c26038433b9644c36ad1f41f633595fb9d",
    "a49180dc6fd6965aae41f9483a9b9cb83961aaea90e304ee2098495d8c74b212" },
  { "aes-xts-essiv:sha256", 64, KEY_PATTERN,
    "290a4d8c67c039ae1895f18f295cdedf6418e51675dd305349228807007c3a94",
    "19f0eecbb74319d4cbc2ea172cf6205b7ae6b88de85834df2a6a372a2928f017" },
  { "aes-xts-essiv:wp256", 32, KEY_PATTERN,
    "7ae1fe49ed026dd6e056201a606e3fe6931c3b97e2be9170309949d01091e354",
    "9531b7829fa64fa5bc6668291fce513f96dba0098ef1cc9e9c8e3ca9aae5473e" },
  { "aes-xts-benbi", 32, KEY_PATTERN,
    "9e5e365da0a897bc0dc21b717d6511876ea7d5b8d9f1b00ea5a515b0dae14581",
    "cddda27fae4f65e5cae6260cb8409c13efe4f003ccc2e5663c20f8a11f9d6302" },
  { "aes-xts-eboiv", 32, KEY_PATTERN,
    "0d1780fc0e0ff2822f79661a05421a48bda40a267fc84cf21fb321f26605821c",
    "fefc063911956165ebc825df8cfff8481db3299f5704310ff5370df71a284970" },
  { "aes-cbc-essiv:sha256", 32, KEY_PATTERN,
    "b54458ff84917cb6ffa784be0b8cd1d26e7b28bd23c17329ae1a58de11c96063",
    "aa425f1aba024203353e056a234e57d6f20c5d4de357f14440e0ee9845068bb8" },
  { "aes-cbc-plain64", 16, KEY_PATTERN,
    "bcda0ed06afd68e4a45a9beb4b33ffcfb53ea4e4fc46da0029514e68d7d48339",
    "b5829a59bf25533d692c88c284f353395dd6479e9c08e31d458bcd8f2afd1545" },
  { "aes-cbc-plain", 24, KEY_PATTERN,
    "66c4ce9fa79822a37350277ea04c905a587e721d43ce936b8af537f235f220e1",
    "0135b4d2b8ba057e3267ca331b0f360c6d950033457717f62ca1f955fdab83e2" },
  { "aes-cbc-null", 32, KEY_PATTERN,
    "c540885655260e3b13c33a2108407dc0eac7c04de58fd858ae418982f732bd79",
    "e49a017efcf4d00f4f834682549d7678fdbc1beed9f235cb5e27d19168d100d2" },
  { "aes-cbc-benbi", 16, KEY_PATTERN,
    "47271360b306769fd38b4dd04a285c690044ecf449ba90c52201aa39c9df442d",
    "7b037ecad45c75dde81895aae06952feca9fee74bebae9c644ce1fefa0fee6b9" },
  { "aes-cbc-eboiv", 32, KEY_PATTERN,
    "c92f202a848f76d624c175e95a01d285c2266996a7c6737e9a77976bcbb53e9d",
    "88e6e96c5397307d287bee78fc25afdfde4737f623a2b54d359f0e80abf37da2" },
  { "aes-cbc-elephant", 32, KEY_PATTERN,
    "80e2f413d41c8da9db9d83c1d399ad12bc5af35fda3eb66da2dbe1df28d10717",
    "5563785aba1a5bfae31f227876ba7097f34c2dabb8ac0358efcc6ff9891e20d3" },
  { "aes-cbc-elephant", 64, KEY_PATTERN,
    "9588b0fd0cb7e3e649a3eca4d50453156179832eef6ad4f4ecddd7a7f553bc0c",
    "52b5e6c4ee6b460607351d4dfda1eb63d053a77c6b930d1bca59b55a8383d1ca" },
  { "capi:cbc(aes)-elephant", 48, KEY_PATTERN,
    "0c79e2495ce51477dd65e665544649eebe9a198973350618073d3963eaeda768",
    "ec25ecfb68a6f64ed103193d8707fc9db511763ea24dd3d40f77e012c8d58343" },
  { "aes-ecb", 32, KEY_PATTERN,
    "bf2739a388e48ebe86c3468dae356d95cd583b57258044ccec4e28ce864a9a43",
    "5e59a2ff06e3af78befdf1971d3beefc656aa290fad53636ed57ac62a40c2b71" },
  { "camellia-xts-plain64", 64, KEY_PATTERN,
    "f2d4a8e8fa4c4fff9c49b0a78ba8705c248b42fdc93f3ed810013796f126c2bd",
    "4dd72c247911e1e1684b47e20230b7511b074b285351cd54fda7b52be1e1df7b" },
  { "camellia-cbc-essiv:sha256", 32, KEY_PATTERN,
    "81cf8c53c879fbef6d2f6f592934091aa030367dabd655d1234098d1b0885966",
    "014272b7ed37305e1b5b04263c4fd084f687a79b6528cca3449d7aa8040f4c7f" },
  { "aria-xts-plain64", 64, KEY_PATTERN,
    "904bdbf013dbb2f55684b8a9f8460e846def8dd1d6ea05c8c0a14a9eb1d30ee9",
    "78f947884cab35319a3e327d1a57f2550199e14980ca55cfaa4a60090566ce23" },
  { "sm4-xts-plain64", 32, KEY_PATTERN,
    "d9078b5839d705f879ebaa54e051346e1e9a1c35465815c2168513c09bcea2db",
    "2093ad03573ba24c99251e674d02f4194c1a9bb4700a8ab215624dd5a7257834" },
  { "des3_ede-cbc-plain64", 24, KEY_PATTERN,
    "1b4b68a82323c8eb83e4ef317f7c37b1238b6f5a6312f03b3469774de3c1081c",
    "eef88758bf47be6ccb077e900608479041064b02692f0fa841523282fdf49df2" },
  { "des3_ede-cbc-benbi", 24, KEY_PATTERN,
    "fd6a0b196b3cee63cb10e1a9f632518eebfe33b653dbd935fca08559505322a4",
    "a6011bffb854551708fd4d5bce5e2a4b4ab9c65d22c7581b4a157c36c82e4b20" },
  { "blowfish-cbc-plain64be", 56, KEY_PATTERN,
    "cbd443a4a7c237ddbac89570716328651968fa4e1f17419f73c2c652734823fa",
    "728dc0a1df98db9d3682cad602b8187e64e17c0688ed104213d5d0985b7b2541" },
  { "cast5-cbc-essiv:md5", 16, KEY_PATTERN,
    "6e5697a73e6ecf9f1febafc5f898176fe1aebe587c23839fbd03065ec440dbf4",
    "87b6958c74d64a2afc0164c1586f8ac63f3c8b575fc86566e0a4ec2c6b9c9446" },
  { "seed-cbc-plain64", 16, KEY_PATTERN,
    "04352d854e1b34ce78cf69dfa75a1fe7df31faa73309156fe3f104d594c5943e",
    "ff9e5d70e8184d66dc4906d68b939dca31d1970fc451155e0acec772595d2334" },
  { "serpent-xts-plain64", 64, KEY_PATTERN,
    "d93b58e154c8926dd121b3240939eb92f0ccef7db0ed422b9d6b4b10d1381fd6",
    "6f3d0edfe34a77a9add1ffe6524b4155400436a682481e838c9659e6807912d1" },
  { "serpent-xts-plain64", 32, KEY_PATTERN,
    "99aa572dd4f28a93be58001f84eed3685880e253593b855e0d20b98059e0db11",
    "cbcdafbb957ae54cf0226aa913b2a70115009abb3553702cfb59a3708e6ad267" },
  { "serpent-cbc-essiv:sha256", 32, KEY_PATTERN,
    "828cd68af519dbe6e5d236ddc53a8999d538cb6a785e94e6d0588e63ea86e570",
    "9e85a7857caa5308af5c5896e75b082350f7f0bac8aeefcfe560d02d62aa1ccf" },
  { "serpent-cbc-plain", 20, KEY_PATTERN,
    "3dda7fd2a12d9835cf772994fe4646b4cf9badd4159e02664dc1d8ddf571ec93",
    "959181ad930f2df9e9c396f244d728b4d16641249cffc1af5f5af62c3755335e" },
  { "twofish-xts-plain64", 64, KEY_PATTERN,
    "715fce3cad6b33aca14b6f79c46a1061ae5c1d37b51e932dcbc066b0256b48b8",
    "2f89a560b5d54948fceac998b12becd6ddf606186a28450ca615dd1bd429d763" },
  { "twofish-xts-essiv:wp256", 32, KEY_PATTERN,
    "73d08d1ba114664ef3bcd6d2e634304260790817a7ac65d50caf0fcbf6852915",
    "a95670f42418cb5765a11e01ed3fb4c880aff1ac4b3d6a11fea088d2cbd8b9f0" },
  { "twofish-cbc-essiv:sha256", 32, KEY_PATTERN,
    "c8d8884bbe7fde5807b1a5a1fa22b1ad3920b3c0ce42c3eac8b9089d1f4281b9",
    "17be84aadd4a1d9852a5651da94ddbe382324983e60ce0fd778ab4eea9015284" },
  { "twofish-cbc-plain64", 16, KEY_PATTERN,
    "02741314d095861ac03fac9d047853ee97dab0eab7fe43670eadc3660560769f",
    "d543b84ecd76a65f04651e7cb431ad4b32ad226cc41ba7e1063267ada2b76dac" },
  { "aes-lrw-plain64", 32, KEY_PATTERN,
    "f648ce58bef66e211d6c37ee85d5ca3c3d090d277ead984c2dffa9615c92732e",
    "9d6a5019f1b1340de97c390b50917b1fcd28227f06f11f7f22e86023902643d1" },
  { "aes-lrw-benbi", 48, KEY_PATTERN,
    "70e479d69d8a1ff22839262a30c5929a86a22b0778f048863d18a44e60bc4636",
    "3d72cdb983fb1e2f2e1a996c89071122a7d28e892002d05394ce8751d91ff223" },
  { "serpent-lrw-plain64", 48, KEY_PATTERN,
    "d17d2ef0a37c0f1eb715e779c61dae6b3bcad93e5c83aef820a7d04b8e8284ca",
    "5d97496e2ff26d1e93921d6bf7af3fbb87c1db2d148b50a86ff191399bf79479" },
  { "twofish-lrw-benbi", 32, KEY_PATTERN,
    "0dbac2ceb5375548c5e8c1474227ad545edf319c4a26fa3850fd8e3d07bbb187",
    "b66959cb3f73b165bcdd6205cf9da88e068785aef7051456fea30ed171ad0791" },
  { "twofish-aes-xts-plain64", 128, KEY_PATTERN,
    "350c63a20df59094178392c0782caa46c7c5bc377716e76329aab99f74f6c097",
    "6d88f8ca73e059f27b7498fc81421cc73a536d07ba1013e60b43f4654d23e5b0" },
  { "serpent-twofish-aes-xts-plain64", 192, KEY_PATTERN,
    "62296aa7a4df3475ef48db2700bd1b20a7f4f7d56eeeb3bd9b57c752b6f5cb77",
    "350de862d5a2a895746d6aa410cccdf0ab60bc464ebbe1ee91dcee998cecd2bb" },
  { "serpent-camellia-xts-plain64", 128, KEY_PATTERN,
    "9653692b893bf784ed1a93c68e4505654a25d6fde12cbdafa4d34ebbabe35b83",
    "1cba80f900b5cec90d4bb8740080bde83a5596dc8d9acc2cf604141a5f7e9c47" },
  { "aes-twofish-serpent-lrw-benbi", 144, KEY_PATTERN,
    "025d12b3492f8c3486f98d561738d6f185d3777b1cee3c703e589fcfd2f6a021",
    "6a01ec4ba18bba22f5b1d936fb199ca51537f7b8a1775933ea0ac77618e6161c" },
};

/* bitlk_vectors: the first sector of the relocated volume header (the
 * NTFS boot sector) of cryptsetup's BitLocker test images made by
 * Windows (tests/data/testdata/cryptsetup/bitlk-images.tar.xz), AES-CBC
 * with the Elephant diffuser, 512-byte sectors.  The volume key is
 * cryptsetup 2.6.1's "bitlkDump --dump-volume-key" with the passphrase
 * of images.conf; the sector lies at byte 44224512 of the image and its
 * IV sector is its own sector number there, as in cryptsetup's mapping.
 * The plaintext digest is tests/oracle.py's; its first bytes are
 * "\xebR\x90NTFS    " and it ends in 55 aa. */
struct bitlk_vector
{
  const char *image;
  const char *key_hex;
  uint64_t iv_sector;
  const char *cipher_hex;
  const char *plain_sha256;
};

static const struct bitlk_vector bitlk_vectors[] = {
  { "bitlk-aes-cbc-elephant-128.img",
    "9d2733e172dc85e13e3de5aaa0e0501bfd22a3f27966c51c94c8e3adce517b6e",
    86376,
    "2175c8446934efd6c9602aeb990295e92143dfe7918377df463951b7e0d32116"
    "a2999ee8962ce8e07006e94d6c68fd4ecb7276654ca2768f6126db515c4dd868"
    "d49c07174237b9ff703d97580467ec7624f75fa4be17838e8ab51aedc49c9a6a"
    "80b188cfd52aa1616b0c147cab782503d7f437e276827d385c948601f8045dc3"
    "62be605e9e6b2e4657842f43e75d0ea3efbe4b1b43936cc8256d4d7da06bc628"
    "ef1055309ebe575345464120c0d93ca0c7c09f1dc839a54a92ae074be5688149"
    "fd4b77b622b7b2042d6f07dd4d7a88e939feac607d871063165ad8e1e592b26d"
    "21e819f758d5a7191676bbb4e34be7ae57d04ef5008bc102f62080caca7e33de"
    "485bf6c03a949758ae4d763bd228042b5ef2983d48ab57ab8108026385144d79"
    "05027460b38b4ffdc55657975fd4a9f72205952e3690a500a589feb7f5e97fb2"
    "760b6822842b77161f434700f2dbae29e45f873cfc7657495c0bbc84bb687fa2"
    "c2467f2df8da9b3eacff1afb4a4bc3bbe2bc7115bd10f9772825b6643f25d47a"
    "447391b3c43adeb868fca7670a9e59194b1ca8be45bee55c5cb7b6a4cb68fe02"
    "386795eb8623f9f9c78e6ee964ed2d7dc14c3be6cd3fe6d92a5a26800751ac8c"
    "3019df834b5c2bcfd323b5149c8be75c01415482e84fd2216cd9781c18a1671f"
    "bbb1693bdca4391c58f8cdd67fe3e54cd414f7b67633cf927b31b4acb33dafbe",
    "9213805231509fcfe000e71dab8b13478e678ad1c06a7b59a72e3eca906d2197" },
  { "bitlk-aes-cbc-elephant-256.img",
    "9600409badade8e84efc4d7cd6576bf4c10897b49f1499bf37f083cb364a29a3"
    "290f3829c6c74ceae614c261235fcc3d910d53318c677463668d12c83413ec80",
    86376,
    "598506c2390d1b2a1f80e7b28f0d1e54d23b17c134a067aa6383a22b26f642dd"
    "da283f048baa05f5f418422228de0e5ee7392733fded1b72a720d0816081df31"
    "bc256e5ffa619f926ea875357bf83c91486f6cb7bfcc47cede766c5b7ba24d37"
    "6faa4168eec6bfbc1496070507610904996efd58ab80fdc90ab9820054262428"
    "e23f71f9c2069a4b24e37443dbe61aa0e7abbe8cd3069509a7049e2d5cee236e"
    "e9e00b7783107937f63cd8bf6e060812698916418358355617d303057f11302b"
    "ed2e1ff362e0a52d45ad77abbed783ef4f726225854babf1149a9544c309387c"
    "3c20c8ca31134c6c3fb8af8a64015761ce4b744b6dfa2d1d734be8d2c829731a"
    "59f011fcc34077864f037f25c08cbdd2f56925f376066a8bc4ca5d7fdbf2a7ca"
    "b829cf62eaa4b6a5a7c62844e313a95175275616eb7a258d3b4a42345f4d1ee7"
    "c4131dd1a47c39d9fb44935bf6abcda8837703fb394b92b201ae16d240ff71aa"
    "557f7d6c672ace563796a05eba043515013cfa30af6690dd828e1a6208baf8df"
    "3ec39336db025d0108df32e38a7fca5921ee60d6c3bc581e8880be45f5054ae0"
    "c88ea3e4d295c2f0e1f77511df1b589df27a505b41b008c53c08268b982a01bd"
    "1164e0a783debb0ae73319c25ffa9700ed9aed3890373aa6aa7742054e0e6724"
    "3a23e648dc484d04850dd42c3a757456bef0848b9bfe77b2c57e66d5ffc8adb0",
    "1e5fe8e4f0bfda9b83b5bc88f213ef87151ccfec6697c22e1a9a41a285582f66" },
};

#endif /* DMCRYPT_TEST_CIPHER_VECTORS_H */
