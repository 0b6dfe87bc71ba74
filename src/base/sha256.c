/* base/sha256 — implementation. See sha256.h. Section numbers refer to FIPS 180-4. */

/* 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t qr__sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t qr__sha_rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* 6.2.2: one 512-bit block into the chaining state. */
static void qr__sha_block(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = qr__sha_rotr(w[t - 15], 7) ^ qr__sha_rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = qr__sha_rotr(w[t - 2], 17) ^ qr__sha_rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = s1 + w[t - 7] + s0 + w[t - 16];
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = qr__sha_rotr(e, 6) ^ qr__sha_rotr(e, 11) ^ qr__sha_rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = hh + S1 + ch + qr__sha_k[t] + w[t];
        uint32_t S0 = qr__sha_rotr(a, 2) ^ qr__sha_rotr(a, 13) ^ qr__sha_rotr(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        hh = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

#if defined(__x86_64__)
#include <immintrin.h>
/* The same block function on the SHA extensions (SHA-NI): the state lives as (A,B,E,F)
 * and (C,D,G,H) lanes, sha256rnds2 does two rounds, sha256msg1/msg2 the schedule. */
__attribute__((target("sha,sse4.1")))
static void qr__sha_blocks_ni(uint32_t h[8], const uint8_t *p, size_t n_blocks) {
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i t = _mm_loadu_si128((const __m128i *)h);          /* D C B A */
    __m128i s1 = _mm_loadu_si128((const __m128i *)(h + 4));   /* H G F E */
    t = _mm_shuffle_epi32(t, 0xB1);                           /* C D A B */
    s1 = _mm_shuffle_epi32(s1, 0x1B);                         /* E F G H */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);                   /* A B E F */
    s1 = _mm_blend_epi16(s1, t, 0xF0);                        /* C D G H */
    for (; n_blocks; n_blocks--, p += 64) {
        __m128i a0 = s0, a1 = s1, w[4];
        for (int i = 0; i < 4; i++) w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
        for (int r = 0; r < 16; r++) {                        /* rounds 4r .. 4r+3 */
            if (r >= 4) {
                /* W[i..i+3] from W[i-16..], W[i-15..] (msg1), W[i-7..i-4], W[i-2], W[i-1] (msg2) */
                __m128i v = _mm_sha256msg1_epu32(w[r & 3], w[(r + 1) & 3]);
                v = _mm_add_epi32(v, _mm_alignr_epi8(w[(r + 3) & 3], w[(r + 2) & 3], 4));
                w[r & 3] = _mm_sha256msg2_epu32(v, w[(r + 3) & 3]);
            }
            __m128i m = _mm_add_epi32(w[r & 3], _mm_loadu_si128((const __m128i *)(qr__sha_k + 4 * r)));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
        }
        s0 = _mm_add_epi32(s0, a0);
        s1 = _mm_add_epi32(s1, a1);
    }
    t = _mm_shuffle_epi32(s0, 0x1B);                          /* F E B A */
    s1 = _mm_shuffle_epi32(s1, 0xB1);                         /* D C H G */
    s0 = _mm_blend_epi16(t, s1, 0xF0);                        /* D C B A */
    s1 = _mm_alignr_epi8(s1, t, 8);                           /* H G F E */
    _mm_storeu_si128((__m128i *)h, s0);
    _mm_storeu_si128((__m128i *)(h + 4), s1);
}
#endif

/* 0: not known yet, 1: SHA extensions, -1: portable. QR_SHA256_PORTABLE forces the latter. */
static int qr__sha_ni;

/* n_blocks whole blocks at p, on the SHA extensions when the CPU has them. */
static void qr__sha_blocks(uint32_t h[8], const uint8_t *p, size_t n_blocks) {
#if defined(__x86_64__)
    if (!qr__sha_ni) {
        QrCpu cpu;
        qr_cpu_detect(&cpu);
        qr__sha_ni = cpu.sha && !getenv("QR_SHA256_PORTABLE") ? 1 : -1;
    }
    if (qr__sha_ni > 0) { qr__sha_blocks_ni(h, p, n_blocks); return; }
#else
    QR_UNUSED(qr__sha_ni);
#endif
    for (; n_blocks; n_blocks--, p += 64) qr__sha_block(h, p);
}

static void qr_sha256_init(QrSha256 *s) {
    /* 5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes. */
    static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(s->h, h0, sizeof h0);
    s->total = 0;
    s->n_block = 0;
}

static void qr_sha256_update(QrSha256 *s, const void *data, size_t len) {
    const uint8_t *p = data;
    s->total += len;
    if (s->n_block) {
        size_t take = QR_MIN(len, 64 - (size_t)s->n_block);
        memcpy(s->block + s->n_block, p, take);
        s->n_block += (uint32_t)take;
        p += take; len -= take;
        if (s->n_block < 64) return;
        qr__sha_blocks(s->h, s->block, 1);
        s->n_block = 0;
    }
    qr__sha_blocks(s->h, p, len / 64);
    p += len / 64 * 64;
    len %= 64;
    if (len) { memcpy(s->block, p, len); s->n_block = (uint32_t)len; }
}

static void qr_sha256_final(QrSha256 *s, uint8_t out[QR_SHA256_LEN]) {
    /* 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the message length in bits, big-endian. */
    uint64_t bits = s->total * 8;
    uint8_t pad[72] = { 0x80 };
    size_t npad = (s->n_block < 56 ? 56 : 120) - s->n_block;
    for (int i = 0; i < 8; i++) pad[npad + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    qr_sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24); out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8); out[4 * i + 3] = (uint8_t)s->h[i];
    }
    memset(s, 0, sizeof *s);
}

static void qr_sha256(const void *data, size_t len, uint8_t out[QR_SHA256_LEN]) {
    QrSha256 s;
    qr_sha256_init(&s);
    qr_sha256_update(&s, data, len);
    qr_sha256_final(&s, out);
}

static QrStatus qr_sha256_file(const char *path, uint8_t out[QR_SHA256_LEN]) {
    QR__FILE_WATCH(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return qr_errf(QR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    enum { CHUNK = 1 << 16 };
    uint8_t *buf = malloc(CHUNK);
    if (!buf) { close(fd); return qr_errf(QR_ERR_NOMEM, "out of memory hashing %s", path); }
    QrSha256 s;
    qr_sha256_init(&s);
    for (;;) {
        ssize_t r = read(fd, buf, CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            QrStatus st = qr_errf(QR_ERR_IO, "%s: read failed: %s", path, strerror(errno));
            free(buf); close(fd);
            return st;
        }
        if (r == 0) break;
        qr_sha256_update(&s, buf, (size_t)r);
    }
    free(buf);
    close(fd);
    qr_sha256_final(&s, out);
    return QR_OK;
}

static void qr_sha256_hex(const uint8_t digest[QR_SHA256_LEN], char hex[2 * QR_SHA256_LEN + 1]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < QR_SHA256_LEN; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[2 * QR_SHA256_LEN] = 0;
}
