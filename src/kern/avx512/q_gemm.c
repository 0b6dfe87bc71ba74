/* kern/avx512/q_gemm — AVX-512 VNNI 8-bit GEMM micro-kernels (vpdpbusd: four u8 x s8
 * products summed into each int32 lane, no saturation), 8x32 tiles: 16 zmm accumulators.
 * The packing (unsigned shift, row/column sums, zero-point compensation) is in
 * kern/gemm.c. */
#if defined(__x86_64__)

#define QR__K_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

/* c (8, 32) (+)= a [ng][8][4] @ b [ng][32][4] (bytes). b_unsigned selects which operand
 * is the unsigned one of vpdpbusd (constant after inlining). */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_q8_vnni_body(const bool b_unsigned, int64_t ng, const unsigned char *a, const unsigned char *b, int32_t *c,
                   int64_t ldc, bool add) {
    __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    __m512i c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
#define QR__K_ROW(r)                                                                   \
    {                                                                                  \
        int32_t q;                                                                     \
        memcpy(&q, a + 4 * r, 4);                                                      \
        __m512i ar = _mm512_set1_epi32(q);                                             \
        if (b_unsigned) {                                                              \
            c##r##0 = _mm512_dpbusd_epi32(c##r##0, b0, ar);                            \
            c##r##1 = _mm512_dpbusd_epi32(c##r##1, b1, ar);                            \
        } else {                                                                       \
            c##r##0 = _mm512_dpbusd_epi32(c##r##0, ar, b0);                            \
            c##r##1 = _mm512_dpbusd_epi32(c##r##1, ar, b1);                            \
        }                                                                              \
    }
    for (int64_t g = 0; g < ng; g++) {
        __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);
        QR__K_ROW(0) QR__K_ROW(1) QR__K_ROW(2) QR__K_ROW(3) QR__K_ROW(4) QR__K_ROW(5) QR__K_ROW(6) QR__K_ROW(7)
        a += 32;
        b += 128;
    }
#undef QR__K_ROW
#define QR__K_OUT(r)                                                                   \
    {                                                                                  \
        int32_t *cr = c + r * ldc;                                                     \
        if (add) {                                                                     \
            c##r##0 = _mm512_add_epi32(c##r##0, _mm512_loadu_si512(cr));               \
            c##r##1 = _mm512_add_epi32(c##r##1, _mm512_loadu_si512(cr + 16));          \
        }                                                                              \
        _mm512_storeu_si512(cr, c##r##0);                                              \
        _mm512_storeu_si512(cr + 16, c##r##1);                                         \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5) QR__K_OUT(6) QR__K_OUT(7)
#undef QR__K_OUT
}

QR__K_VNNI static void qr__k_q8_vnni_ukr_au(int64_t ng, const void *a, const void *b, int32_t *c, int64_t ldc,
                                            bool add) {
    qr__k_q8_vnni_body(false, ng, a, b, c, ldc, add);
}

QR__K_VNNI static void qr__k_q8_vnni_ukr_bu(int64_t ng, const void *a, const void *b, int32_t *c, int64_t ldc,
                                            bool add) {
    qr__k_q8_vnni_body(true, ng, a, b, c, ldc, add);
}

/* Full vnni-format B panel (32 columns): per K quad, four rows (shifted by flipping the
 * top bit when the mode needs it) interleaved byte-wise into [32][4]. Rows past K are
 * zero. Column sums of b' (only when cb is set) by vpdpbusd with a vector of ones. */
QR__K_VNNI static void qr__k_q8_vnni_pack_b(const QrKQ8Job *j, int64_t k0, int64_t ng, int64_t n0, void *dst,
                                            int32_t *cb) {
    const QrQOperand *B = j->B;
    const unsigned char *base = (const unsigned char *)B->data + n0;
    const __m256i flip = _mm256_set1_epi8(j->beta ? (char)0x80 : 0);
    unsigned char *d = dst;
    const int64_t kn = QR_MIN(j->K, k0 + 4 * ng);
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i s0 = _mm512_setzero_si512(), s1 = s0;
    for (int64_t k = k0; k < k0 + 4 * ng; k += 4) {
        __m256i r[4];
        for (int i = 0; i < 4; i++)
            r[i] = k + i < kn ? _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(base + (k + i) * B->ld)), flip)
                              : _mm256_setzero_si256();
        __m256i t0 = _mm256_unpacklo_epi8(r[0], r[1]), t1 = _mm256_unpackhi_epi8(r[0], r[1]);
        __m256i t2 = _mm256_unpacklo_epi8(r[2], r[3]), t3 = _mm256_unpackhi_epi8(r[2], r[3]);
        __m256i q0 = _mm256_unpacklo_epi16(t0, t2), q1 = _mm256_unpackhi_epi16(t0, t2);   /* cols 0-3 | 16-19, 4-7 | 20-23 */
        __m256i q2 = _mm256_unpacklo_epi16(t1, t3), q3 = _mm256_unpackhi_epi16(t1, t3);   /* cols 8-11 | 24-27, 12-15 | 28-31 */
        _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(q0, q1, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 32), _mm256_permute2x128_si256(q2, q3, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 64), _mm256_permute2x128_si256(q0, q1, 0x31));
        _mm256_storeu_si256((__m256i *)(d + 96), _mm256_permute2x128_si256(q2, q3, 0x31));
        d += 128;
        if (cb) {   /* column sums of the four rows: vpdpbusd against ones */
            __m512i lo = _mm512_loadu_si512(d - 128), hi = _mm512_loadu_si512(d - 64);
            if (j->mode == QR__K_Q8_AU) {   /* b' is int8 */
                s0 = _mm512_dpbusd_epi32(s0, ones, lo);
                s1 = _mm512_dpbusd_epi32(s1, ones, hi);
            } else {                         /* b' is uint8 */
                s0 = _mm512_dpbusd_epi32(s0, lo, ones);
                s1 = _mm512_dpbusd_epi32(s1, hi, ones);
            }
        }
    }
    if (cb) {
        _mm512_storeu_si512(cb, _mm512_add_epi32(_mm512_loadu_si512(cb), s0));
        _mm512_storeu_si512(cb + 16, _mm512_add_epi32(_mm512_loadu_si512(cb + 16), s1));
    }
}

/* vnni-format A panel (8 rows), 32 K positions at a time: each row's 32 bytes (top bit
 * flipped when the mode shifts A) are 8 quads, the 8x8 int32 transpose gives [quad][row].
 * Row sums of a' by vpsadbw (unsigned bytes; signed ones summed as byte ^ 0x80 minus 128
 * each). */
QR__K_VNNI static int64_t qr__k_q8_vnni_pack_a(const QrKQ8Job *j, int64_t p, void *dst) {
    const QrQOperand *A = j->A;
    const int64_t kend = j->K - j->K % 32;
    const bool a_signed = j->mode == QR__K_Q8_BU;   /* a' is int8 in mode BU, uint8 in mode AU */
    const __m256i flip = _mm256_set1_epi8(j->alpha ? (char)0x80 : 0), sgn = _mm256_set1_epi8((char)0x80);
    const __m256i zero = _mm256_setzero_si256();
    const unsigned char *row[8];
    __m256i sum[8];
    for (int r = 0; r < 8; r++) {
        int64_t m = p * 8 + r;
        row[r] = m < j->M ? (const unsigned char *)A->data + m * A->ld : NULL;
        sum[r] = zero;
    }
    unsigned char *d = dst;
    for (int64_t k = 0; k < kend; k += 32) {
        __m256i v[8];
        for (int r = 0; r < 8; r++) {
            v[r] = row[r] ? _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row[r] + k)), flip) : zero;
            sum[r] = _mm256_add_epi64(sum[r], _mm256_sad_epu8(a_signed ? _mm256_xor_si256(v[r], sgn) : v[r], zero));
        }
        qr__k_tr8x8(v);
        for (int i = 0; i < 8; i++) _mm256_storeu_si256((__m256i *)(d + (k / 4 + i) * 32), v[i]);
    }
    for (int r = 0; r < 8; r++) {
        int64_t m = p * 8 + r;
        if (m >= j->M) continue;
        __m128i h = _mm_add_epi64(_mm256_castsi256_si128(sum[r]), _mm256_extracti128_si256(sum[r], 1));
        int64_t s = _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
        j->ra[m] += (int32_t)(a_signed ? s - 128 * kend : s);
    }
    return kend;
}

/* QrKQ8Comp with 16 lanes of vpmulld (the low 32 bits of the product: mod 2^32). */
QR__K_VNNI static void qr__k_q8_vnni_comp(int32_t *c, int64_t n, int32_t ra, int32_t u, const int32_t *v, const int32_t *w) {
    const __m512i vra = _mm512_set1_epi32(ra), vu = _mm512_set1_epi32(u);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, v + i), vra),
                                     _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, w + i), vu));
        _mm512_mask_storeu_epi32(c + i, m, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, c + i), t));
    }
}

static const QrKQ8Isa qr__k_q8_vnni_isa = { 8, 32, 1024, true, qr__k_q8_vnni_ukr_au, qr__k_q8_vnni_ukr_bu,
                                            qr__k_q8_vnni_pack_b, qr__k_q8_vnni_pack_a, qr__k_q8_vnni_comp };

/* QrQ8GemmFn on AVX-512 VNNI (vpdpbusd with the unsigned shift and compensation). */
static void qr_q8_gemm__vnni(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int32_t *C,
                             int64_t ldc, bool accumulate) {
    qr__k_q8_gemm(&qr__k_q8_vnni_isa, M, N, K, A, B, C, ldc, accumulate);
}

#endif
