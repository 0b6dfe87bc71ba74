/* base/sha256 — SHA-256 (FIPS 180-4), written from the specification.
 * One-shot, incremental (init/update/final) and streaming over a file in fixed
 * chunks, so a model of any size is hashed without loading it whole. */
#ifndef QR_SHA256_H
#define QR_SHA256_H

#define QR_SHA256_LEN 32

typedef struct QrSha256 {
    uint32_t h[8];            /* chaining state H0..H7 */
    uint64_t total;           /* bytes absorbed so far */
    uint8_t block[64];        /* pending partial block */
    uint32_t n_block;         /* bytes in block[] (< 64) */
} QrSha256;

static void qr_sha256_init(QrSha256 *s);
/* Absorbs `len` bytes; any split of the input gives the same digest. */
static void qr_sha256_update(QrSha256 *s, const void *data, size_t len);
/* Pads, writes the 32-byte digest to `out` and leaves `s` unusable until the next init. */
static void qr_sha256_final(QrSha256 *s, uint8_t out[QR_SHA256_LEN]);
/* The digest of one buffer (init, update, final). */
static void qr_sha256(const void *data, size_t len, uint8_t out[QR_SHA256_LEN]);
/* Hashes a file read in 64 KiB chunks. Fails with QR_ERR_IO naming the file. */
static QrStatus qr_sha256_file(const char *path, uint8_t out[QR_SHA256_LEN]);
/* Lower-case hex of a digest into `hex` (65 bytes with the terminating NUL). */
static void qr_sha256_hex(const uint8_t digest[QR_SHA256_LEN], char hex[2 * QR_SHA256_LEN + 1]);

#endif
