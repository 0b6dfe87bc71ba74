/* kern/avx512/f32_gemm — AVX-512F float32 GEMM pieces run by kern/gemm.c's driver: the
 * 8x32 micro-kernel (16 zmm accumulators, 2 for B, 1 broadcast of A; 8 rows divide the
 * channel counts of common CNNs, 12x32 measured no faster on Zen 4), the sequential dot
 * products (16 rows per zmm, transposed in registers) and the B packers (masked loads for tails and for the convolution input). */
#if defined(__x86_64__)
#include <immintrin.h>

#define QR__K_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

/* ReLU of a computed sum (never a signaling NaN), as QrF32StepsFn defines it: v where
 * v > 0 or NaN, else +0. max(0, v) is v for NaN and for -0 (vmaxps returns its second
 * operand unless the first is greater), and adding +0 makes -0 +0 and leaves every other
 * value as it is: two instructions where two compares, a mask or and a masked move were
 * (MobileNetV2's 112x112x96 expansion: 480 -> 425 us). */
QR__K_AVX512 static inline __m512 qr__k_relu_sum512(__m512 v) {
    return _mm512_add_ps(_mm512_max_ps(_mm512_setzero_ps(), v), _mm512_setzero_ps());
}
QR__K_AVX512 static inline __m256 qr__k_relu_sum256(__m256 v) {
    return _mm256_add_ps(_mm256_max_ps(_mm256_setzero_ps(), v), _mm256_setzero_ps());
}

/* c (mr, 32) (+)= a (mr, kc; row stride lda) @ b ([kc] x 32, row stride bs); mr <= 8
 * constant. Rows from three bases (rows 0-2, 3-5, 6-7) as base + {0, 1, 2} * lda, see
 * the AVX2 kernel. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_f32_avx512_ukr(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t bs, float *c,
                     int64_t ldc, int nr, const QrKF32Out *o) {
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    __m512 c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    const float *a0 = a, *a3 = a + 3 * lda, *a6 = a + 6 * lda;
#define QR__K_ROW(r, i, base, off)                                        \
    if (mr > i) {                                                         \
        __m512 av = _mm512_set1_ps(base[off]);                            \
        c##r##0 = _mm512_fmadd_ps(av, b0, c##r##0);                       \
        c##r##1 = _mm512_fmadd_ps(av, b1, c##r##1);                       \
    }
#define QR__K_STEP(u)                                                                                   \
    {                                                                                                   \
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);                                   \
        QR__K_ROW(0, 0, a0, u) QR__K_ROW(1, 1, a0, lda + u) QR__K_ROW(2, 2, a0, 2 * lda + u)            \
        QR__K_ROW(3, 3, a3, u) QR__K_ROW(4, 4, a3, lda + u) QR__K_ROW(5, 5, a3, 2 * lda + u)            \
        QR__K_ROW(6, 6, a6, u) QR__K_ROW(7, 7, a6, lda + u)                                             \
        b += bs;                                                                                        \
    }
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        QR__K_STEP(0) QR__K_STEP(1)
        a0 += 2;
        a3 += 2;
        a6 += 2;
    }
    if (k < kc) QR__K_STEP(0)
#undef QR__K_STEP
#undef QR__K_ROW
    /* nr < 32 columns: masked loads and stores touch only those */
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : nr <= 16 ? (__mmask16)0 : (__mmask16)((1u << (nr - 16)) - 1);
    const bool add = o->add, clamp = o->clamp, relu = o->relu, rf = o->res_first;
    const __m512 lo = _mm512_set1_ps(o->lo), hi = _mm512_set1_ps(o->hi);
    /* max(lo, s) / min(hi, s) return s when it is NaN; relu keeps lanes > 0 or NaN (-0 -> +0) */
#define QR__K_RELU512(v) qr__k_relu_sum512(v)
#define QR__K_OUT(r, i)                                                                \
    if (mr > i) {                                                                      \
        float *cr = c + i * ldc;                                                       \
        if (o->bias && !o->bias_after) {                                               \
            __m512 bv = _mm512_set1_ps(o->bias[i]);                                    \
            c##r##0 = _mm512_add_ps(c##r##0, bv);                                      \
            c##r##1 = _mm512_add_ps(c##r##1, bv);                                      \
        }                                                                              \
        if (add) {                                                                     \
            c##r##0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), c##r##0);           \
            c##r##1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + 16), c##r##1);      \
        }                                                                              \
        if (o->bias && o->bias_after) {                                                \
            __m512 bv = _mm512_set1_ps(o->bias[i]);                                    \
            c##r##0 = _mm512_add_ps(c##r##0, bv);                                      \
            c##r##1 = _mm512_add_ps(c##r##1, bv);                                      \
        }                                                                              \
        if (o->res) {                                                                  \
            const float *rr = o->res + i * o->ldres;                                   \
            __m512 r0 = _mm512_maskz_loadu_ps(m0, rr), r1 = _mm512_maskz_loadu_ps(m1, rr + 16); \
            c##r##0 = rf ? _mm512_add_ps(r0, c##r##0) : _mm512_add_ps(c##r##0, r0);   \
            c##r##1 = rf ? _mm512_add_ps(r1, c##r##1) : _mm512_add_ps(c##r##1, r1);   \
        }                                                                              \
        if (clamp) {                                                                   \
            c##r##0 = _mm512_min_ps(hi, _mm512_max_ps(lo, c##r##0));                   \
            c##r##1 = _mm512_min_ps(hi, _mm512_max_ps(lo, c##r##1));                   \
        }                                                                              \
        if (relu) {                                                                    \
            c##r##0 = QR__K_RELU512(c##r##0);                                          \
            c##r##1 = QR__K_RELU512(c##r##1);                                          \
        }                                                                              \
        _mm512_mask_storeu_ps(cr, m0, c##r##0);                                        \
        _mm512_mask_storeu_ps(cr + 16, m1, c##r##1);                                   \
    }
    QR__K_OUT(0, 0) QR__K_OUT(1, 1) QR__K_OUT(2, 2) QR__K_OUT(3, 3) QR__K_OUT(4, 4) QR__K_OUT(5, 5)
    QR__K_OUT(6, 6) QR__K_OUT(7, 7)
#undef QR__K_OUT
#undef QR__K_RELU512
}

#define QR__K_A512_UKR(m)                                                                                      \
    QR__K_AVX512 static void qr__k_f32_avx512_ukr##m(int64_t kc, const float *a, int64_t lda, const float *b, \
                                                     int64_t bs, float *c, int64_t ldc, int nr, const QrKF32Out *o) { \
        qr__k_f32_avx512_ukr(m, kc, a, lda, b, bs, c, ldc, nr, o);                                                    \
    }
/* Generates qr__k_f32_avx512_ukr1 .. qr__k_f32_avx512_ukr8. */
QR__K_A512_UKR(1)
QR__K_A512_UKR(2)
QR__K_A512_UKR(3)
QR__K_A512_UKR(4)
QR__K_A512_UKR(5)
QR__K_A512_UKR(6)
QR__K_A512_UKR(7)
QR__K_A512_UKR(8)
#undef QR__K_A512_UKR

/* Narrow tails: c (mr, W) (+)= a @ b for W = 16 (one zmm per row) or 8 (one ymm per row,
 * AVX-512VL masks), nr <= W columns, b's rows W or more floats apart (the 32-wide packed
 * panel). On Zen 4 a ymm FMA takes one of the two 256-bit pipes and a zmm FMA both, so a
 * 17-column tail costs 1.5 zmm FMAs per row and k as 16 + 1 instead of 2 (N = 49 outputs of
 * a 7x7 layer: 3.5 instead of 4). Same epilogue order as the 32-wide kernel. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_f32_avx512_w16(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t bs, float *c,
                       int64_t ldc, int nr, const QrKF32Out *o) {
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    const float *a0 = a, *a3 = a + 3 * lda, *a6 = a + 6 * lda;
#define QR__K_ROW(r, base, off) if (mr > r) c##r = _mm512_fmadd_ps(_mm512_set1_ps(base[off]), b0, c##r);
#define QR__K_STEP(u)                                                                                   \
    {                                                                                                   \
        __m512 b0 = _mm512_loadu_ps(b);                                                                 \
        QR__K_ROW(0, a0, u) QR__K_ROW(1, a0, lda + u) QR__K_ROW(2, a0, 2 * lda + u)                     \
        QR__K_ROW(3, a3, u) QR__K_ROW(4, a3, lda + u) QR__K_ROW(5, a3, 2 * lda + u)                     \
        QR__K_ROW(6, a6, u) QR__K_ROW(7, a6, lda + u)                                                   \
        b += bs;                                                                                        \
    }
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        QR__K_STEP(0) QR__K_STEP(1)
        a0 += 2;
        a3 += 2;
        a6 += 2;
    }
    if (k < kc) QR__K_STEP(0)
#undef QR__K_STEP
#undef QR__K_ROW
    const __mmask16 m = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __m512 lo = _mm512_set1_ps(o->lo), hi = _mm512_set1_ps(o->hi);
#define QR__K_OUT(r)                                                                                    \
    if (mr > r) {                                                                                       \
        float *cr = c + r * ldc;                                                                        \
        if (o->bias && !o->bias_after) c##r = _mm512_add_ps(c##r, _mm512_set1_ps(o->bias[r]));          \
        if (o->add) c##r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, cr), c##r);                           \
        if (o->bias && o->bias_after) c##r = _mm512_add_ps(c##r, _mm512_set1_ps(o->bias[r]));           \
        if (o->res) {                                                                                   \
            __m512 rv = _mm512_maskz_loadu_ps(m, o->res + r * o->ldres);                                \
            c##r = o->res_first ? _mm512_add_ps(rv, c##r) : _mm512_add_ps(c##r, rv);                    \
        }                                                                                               \
        if (o->clamp) c##r = _mm512_min_ps(hi, _mm512_max_ps(lo, c##r));                                \
        if (o->relu) c##r = qr__k_relu_sum512(c##r);                                                    \
        _mm512_mask_storeu_ps(cr, m, c##r);                                                             \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5) QR__K_OUT(6) QR__K_OUT(7)
#undef QR__K_OUT
}

QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_f32_avx512_w8(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t bs, float *c,
                      int64_t ldc, int nr, const QrKF32Out *o) {
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    const float *a0 = a, *a3 = a + 3 * lda, *a6 = a + 6 * lda;
#define QR__K_ROW(r, base, off) if (mr > r) c##r = _mm256_fmadd_ps(_mm256_broadcast_ss(base + (off)), b0, c##r);
#define QR__K_STEP(u)                                                                                   \
    {                                                                                                   \
        __m256 b0 = _mm256_loadu_ps(b);                                                                 \
        QR__K_ROW(0, a0, u) QR__K_ROW(1, a0, lda + u) QR__K_ROW(2, a0, 2 * lda + u)                     \
        QR__K_ROW(3, a3, u) QR__K_ROW(4, a3, lda + u) QR__K_ROW(5, a3, 2 * lda + u)                     \
        QR__K_ROW(6, a6, u) QR__K_ROW(7, a6, lda + u)                                                   \
        b += bs;                                                                                        \
    }
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        QR__K_STEP(0) QR__K_STEP(1)
        a0 += 2;
        a3 += 2;
        a6 += 2;
    }
    if (k < kc) QR__K_STEP(0)
#undef QR__K_STEP
#undef QR__K_ROW
    const __mmask8 m = nr >= 8 ? (__mmask8)0xff : (__mmask8)((1u << nr) - 1);
    const __m256 lo = _mm256_set1_ps(o->lo), hi = _mm256_set1_ps(o->hi);
#define QR__K_OUT(r)                                                                                    \
    if (mr > r) {                                                                                       \
        float *cr = c + r * ldc;                                                                        \
        if (o->bias && !o->bias_after) c##r = _mm256_add_ps(c##r, _mm256_set1_ps(o->bias[r]));          \
        if (o->add) c##r = _mm256_add_ps(_mm256_maskz_loadu_ps(m, cr), c##r);                           \
        if (o->bias && o->bias_after) c##r = _mm256_add_ps(c##r, _mm256_set1_ps(o->bias[r]));           \
        if (o->res) {                                                                                   \
            __m256 rv = _mm256_maskz_loadu_ps(m, o->res + r * o->ldres);                                \
            c##r = o->res_first ? _mm256_add_ps(rv, c##r) : _mm256_add_ps(c##r, rv);                    \
        }                                                                                               \
        if (o->clamp) c##r = _mm256_min_ps(hi, _mm256_max_ps(lo, c##r));                                \
        if (o->relu) c##r = qr__k_relu_sum256(c##r);                                                    \
        _mm256_mask_storeu_ps(cr, m, c##r);                                                             \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5) QR__K_OUT(6) QR__K_OUT(7)
#undef QR__K_OUT
}

#define QR__K_A512_NARROW(w, m)                                                                                \
    QR__K_AVX512 static void qr__k_f32_avx512_w##w##_##m(int64_t kc, const float *a, int64_t lda, const float *b, \
                                                         int64_t bs, float *c, int64_t ldc, int nr,            \
                                                         const QrKF32Out *o) {                                 \
        qr__k_f32_avx512_w##w(m, kc, a, lda, b, bs, c, ldc, nr, o);                                             \
    }
/* Generates qr__k_f32_avx512_w16_1 .. qr__k_f32_avx512_w16_8, qr__k_f32_avx512_w8_1 .. qr__k_f32_avx512_w8_8. */
QR__K_A512_NARROW(16, 1) QR__K_A512_NARROW(16, 2) QR__K_A512_NARROW(16, 3) QR__K_A512_NARROW(16, 4)
QR__K_A512_NARROW(16, 5) QR__K_A512_NARROW(16, 6) QR__K_A512_NARROW(16, 7) QR__K_A512_NARROW(16, 8)
QR__K_A512_NARROW(8, 1) QR__K_A512_NARROW(8, 2) QR__K_A512_NARROW(8, 3) QR__K_A512_NARROW(8, 4)
QR__K_A512_NARROW(8, 5) QR__K_A512_NARROW(8, 6) QR__K_A512_NARROW(8, 7) QR__K_A512_NARROW(8, 8)
#undef QR__K_A512_NARROW

/* QrKF32UkrWide on AVX-512F: c (mr, 32 + nr2) (+)= a @ [b | b2], 24 zmm accumulators (mr <= 8
 * rows of three vectors), one broadcast of A per row and k for all of them, where the 32-wide
 * kernel and a narrow one broadcast it twice (the 16-wide one, 9 loads per 8 multiply-adds and
 * 8 chains, ran at about half the 32-wide kernel's speed per column). Same epilogue order. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_f32_avx512_ukw(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, const float *b2, float *c,
                     int64_t ldc, int nr2, const QrKF32Out *o) {
    __m512 acc[8][3];
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        const __m512 v0 = _mm512_loadu_ps(b + k * 32), v1 = _mm512_loadu_ps(b + k * 32 + 16), v2 = _mm512_loadu_ps(b2 + k * 32);
#pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            const __m512 av = _mm512_set1_ps(a[r * lda + k]);
            acc[r][0] = _mm512_fmadd_ps(av, v0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(av, v1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(av, v2, acc[r][2]);
        }
    }
    const __mmask16 mk[3] = { 0xffff, 0xffff, (__mmask16)(nr2 >= 16 ? 0xffffu : (1u << nr2) - 1) };
    const __m512 lo = _mm512_set1_ps(o->lo), hi = _mm512_set1_ps(o->hi);
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
#pragma GCC unroll 3
        for (int v = 0; v < 3; v++) {
            __m512 x = acc[r][v];
            if (o->bias && !o->bias_after) x = _mm512_add_ps(x, _mm512_set1_ps(o->bias[r]));
            if (o->add) x = _mm512_add_ps(_mm512_maskz_loadu_ps(mk[v], cr + 16 * v), x);
            if (o->bias && o->bias_after) x = _mm512_add_ps(x, _mm512_set1_ps(o->bias[r]));
            if (o->res) {
                const __m512 rv = _mm512_maskz_loadu_ps(mk[v], o->res + r * o->ldres + 16 * v);
                x = o->res_first ? _mm512_add_ps(rv, x) : _mm512_add_ps(x, rv);
            }
            if (o->clamp) x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
            if (o->relu) x = qr__k_relu_sum512(x);
            _mm512_mask_storeu_ps(cr + 16 * v, mk[v], x);
        }
    }
}

#define QR__K_A512_UKW(m)                                                                                      \
    QR__K_AVX512 static void qr__k_f32_avx512_ukw##m(int64_t kc, const float *a, int64_t lda, const float *b,   \
                                                     const float *b2, float *c, int64_t ldc, int nr2,          \
                                                     const QrKF32Out *o) {                                     \
        qr__k_f32_avx512_ukw(m, kc, a, lda, b, b2, c, ldc, nr2, o);                                            \
    }
/* Generates qr__k_f32_avx512_ukw1 .. qr__k_f32_avx512_ukw8. */
QR__K_A512_UKW(1) QR__K_A512_UKW(2) QR__K_A512_UKW(3) QR__K_A512_UKW(4)
QR__K_A512_UKW(5) QR__K_A512_UKW(6) QR__K_A512_UKW(7) QR__K_A512_UKW(8)
#undef QR__K_A512_UKW

/* t[j] (j < 16) = column j of the 16x16 block whose rows are t[0..15] on entry. */
QR__K_AVX512 static inline __attribute__((always_inline)) void qr__k_f32_avx512_t16(__m512 *t) {
    __m512 a[16], b[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {   /* row pairs interleaved per 128-bit lane */
        a[2 * i] = _mm512_unpacklo_ps(t[2 * i], t[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(t[2 * i], t[2 * i + 1]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {   /* b[4i + j], 128-bit lane L: rows 4i..4i+3 of column 4L + j */
        __m512d x0 = _mm512_castps_pd(a[4 * i]), x1 = _mm512_castps_pd(a[4 * i + 1]);
        __m512d x2 = _mm512_castps_pd(a[4 * i + 2]), x3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(x0, x2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x0, x2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(x1, x3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(x1, x3));
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {   /* lanes (L0, L2) / (L1, L3) of rows 0-7 and of rows 8-15, then across */
        __m512 c0 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88), d0 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xdd);
        __m512 c1 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88), d1 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xdd);
        t[j] = _mm512_shuffle_f32x4(c0, c1, 0x88);
        t[8 + j] = _mm512_shuffle_f32x4(c0, c1, 0xdd);
        t[4 + j] = _mm512_shuffle_f32x4(d0, d1, 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(d0, d1, 0xdd);
    }
}

/* ---- convolutions with the output channels along the vectors (kern/gemm.c qr__k_f32_coc_run) ----
 * One tile: P pixels of an output row (columns ow0 ..) x the 32 channels of a weight block,
 * acc[p][h] holding channels 16h .. 16h + 15 of pixel p. Per tap: the two weight vectors, then
 * each pixel's input broadcast (S: the stride along the row) and multiply-added into both. A
 * call sums K block [k0, k1) from +0 in registers and leaves the tile's running sums in t
 * (P x 32 floats): the first block's sums, each later block's added to them (t + s), so every
 * element gets the GEMM path's operations. Nothing else lives in the call: with the last block's
 * output code in the same function the accumulators got a stack copy, zeroed on every call, and
 * 12% of the function's samples fell outside its multiply-add loop (3% without; ResNet-18 on one
 * thread 37.6 -> 36.2 ms, Zen 4). The weights' rows are prefetched QR__K_COC_PF K steps (8 KB)
 * ahead: a tile's 32 weights per step come from memory in a model run, for the first tile of a
 * group (the others find them in L1); with the hardware's prefetch alone MobileNetV2's 7x7
 * 160 -> 960 layer ran 100 us with its weights cold against 67 hot, 72 with this (16 steps: 84,
 * 32: 77; Zen 5, one thread, bench_kern --conv). Past the block's last row it touches the next
 * block's first (the next task's), or beyond the packed weights: a prefetch never faults. */
#define QR__K_COC_PF 64
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_f32_avx512_coc_sum(const int P, const int S, const int32_t *off, const float *xb, const float *w, int64_t k0,
                         int64_t k1, float *t) {
    __m512 acc[QR__K_COC_MAXP][2];
#pragma GCC unroll 14
    for (int p = 0; p < P; p++) acc[p][0] = acc[p][1] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; k++) {
        const float *q = xb + off[k];
        _mm_prefetch((const char *)(w + (k + QR__K_COC_PF) * QR__K_COC_MB), _MM_HINT_T0);
        _mm_prefetch((const char *)(w + (k + QR__K_COC_PF) * QR__K_COC_MB + 16), _MM_HINT_T0);
        const __m512 w0 = _mm512_loadu_ps(w + k * QR__K_COC_MB), w1 = _mm512_loadu_ps(w + k * QR__K_COC_MB + 16);
#pragma GCC unroll 14
        for (int p = 0; p < P; p++) {
            const __m512 x = _mm512_set1_ps(q[p * S]);
            acc[p][0] = _mm512_fmadd_ps(x, w0, acc[p][0]);
            acc[p][1] = _mm512_fmadd_ps(x, w1, acc[p][1]);
        }
    }
    if (k0 > 0) {
#pragma GCC unroll 14
        for (int p = 0; p < P; p++) {
            acc[p][0] = _mm512_add_ps(_mm512_load_ps(t + p * 32), acc[p][0]);
            acc[p][1] = _mm512_add_ps(_mm512_load_ps(t + p * 32 + 16), acc[p][1]);
        }
    }
#pragma GCC unroll 14
    for (int p = 0; p < P; p++) {
        _mm512_store_ps(t + p * 32, acc[p][0]);
        _mm512_store_ps(t + p * 32 + 16, acc[p][1]);
    }
}

/* A tile's output once t holds its sums over all of K (qr__k_f32_avx512_coc_sum): the bias
 * after the last block, then residual, clamp, ReLU (QrKF32Out's order); transposed in registers,
 * 16 pixels by 16 channels, and stored a channel row at a time, masked to the tile's P pixels. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_f32_avx512_coc_out(const int P, const QrKCocJob *j, const float *t, int64_t m0, int64_t n0) {
    const QrF32Fused *f = j->f;
    const int64_t mv = QR_MIN((int64_t)QR__K_COC_MB, j->M - m0);
    const float *bias = f && f->ep.bias ? f->ep.bias + m0 : NULL;
    const bool clamp = f && (f->ep.lo > -INFINITY || f->ep.hi < INFINITY), relu = f && f->relu;
    const __m512 lo = _mm512_set1_ps(f ? f->ep.lo : -INFINITY), hi = _mm512_set1_ps(f ? f->ep.hi : INFINITY);
    const __mmask16 pm = (__mmask16)((1u << P) - 1);
    for (int h = 0; h < 2 && 16 * h < mv; h++) {
        const int nc = (int)QR_MIN((int64_t)16, mv - 16 * h);
        const __mmask16 cm = (__mmask16)(nc == 16 ? 0xffffu : (1u << nc) - 1);
        const __m512 bv = bias ? _mm512_maskz_loadu_ps(cm, bias + 16 * h) : _mm512_setzero_ps();
        __m512 r[16];
#pragma GCC unroll 16
        for (int p = 0; p < 16; p++) {
            const __m512 s = p < P ? _mm512_load_ps(t + p * 32 + 16 * h) : _mm512_setzero_ps();
            r[p] = bias && p < P ? _mm512_add_ps(s, bv) : s;
        }
        qr__k_f32_avx512_t16(r);
        for (int c = 0; c < nc; c++) {
            const int64_t m = m0 + 16 * h + c;
            __m512 v = r[c];
            if (f && f->res) {
                const __m512 rv = _mm512_maskz_loadu_ps(pm, f->res + m * f->ldres + n0);
                v = f->res_first ? _mm512_add_ps(rv, v) : _mm512_add_ps(v, rv);
            }
            if (clamp) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
            if (relu) v = qr__k_relu_sum512(v);
            _mm512_mask_storeu_ps(j->Y + m * j->ldy + n0, pm, v);
        }
    }
}

typedef void (*QrKCocTileFn)(const int32_t *off, const float *xb, const float *w, int64_t k0, int64_t k1, float *t);
typedef void (*QrKCocOutFn)(const QrKCocJob *j, const float *t, int64_t m0, int64_t n0);
#define QR__K_A512_COC(p, s)                                                                                    \
    QR__K_AVX512 static void qr__k_f32_avx512_coc##p##_s##s(const int32_t *off, const float *xb, const float *w, \
                                                            int64_t k0, int64_t k1, float *t) {                 \
        qr__k_f32_avx512_coc_sum(p, s, off, xb, w, k0, k1, t);                                                  \
    }
#define QR__K_A512_COC_S(s)                                                                                    \
    QR__K_A512_COC(1, s) QR__K_A512_COC(2, s) QR__K_A512_COC(3, s) QR__K_A512_COC(4, s) QR__K_A512_COC(5, s)   \
    QR__K_A512_COC(6, s) QR__K_A512_COC(7, s) QR__K_A512_COC(8, s) QR__K_A512_COC(9, s) QR__K_A512_COC(10, s)  \
    QR__K_A512_COC(11, s) QR__K_A512_COC(12, s) QR__K_A512_COC(13, s) QR__K_A512_COC(14, s)
#define QR__K_A512_COC_OUT(p)                                                                                  \
    QR__K_AVX512 static void qr__k_f32_avx512_coc_out##p(const QrKCocJob *j, const float *t, int64_t m0,       \
                                                         int64_t n0) {                                         \
        qr__k_f32_avx512_coc_out(p, j, t, m0, n0);                                                             \
    }
/* Generates qr__k_f32_avx512_coc_out1 .. qr__k_f32_avx512_coc_out14. */
QR__K_A512_COC_OUT(1) QR__K_A512_COC_OUT(2) QR__K_A512_COC_OUT(3) QR__K_A512_COC_OUT(4) QR__K_A512_COC_OUT(5)
QR__K_A512_COC_OUT(6) QR__K_A512_COC_OUT(7) QR__K_A512_COC_OUT(8) QR__K_A512_COC_OUT(9) QR__K_A512_COC_OUT(10)
QR__K_A512_COC_OUT(11) QR__K_A512_COC_OUT(12) QR__K_A512_COC_OUT(13) QR__K_A512_COC_OUT(14)
#undef QR__K_A512_COC_OUT
/* Generates qr__k_f32_avx512_coc1_s1 .. qr__k_f32_avx512_coc12_s2. */
QR__K_A512_COC_S(1)
QR__K_A512_COC_S(2)
#undef QR__K_A512_COC_S
#undef QR__K_A512_COC

/* QrKCocTask on AVX-512F: channel block t % nblk over tiles [tg*tiles, ...) with tg = t / nblk,
 * the tiles numbered row by row, each row in tiles of up to 14 pixels (as even as the row allows), taken
 * QR__K_COC_GROUP tiles at a time K block by K block, so that a block's weights (kc x 32
 * floats) stay in L1 across the tiles (tile by tile over all of K, ResNet-18's layer1 streamed
 * its 73 KB of weights from L2 for every tile); a group takes the task's tiles in row order
 * across rows (a 14- or 28-pixel row has only 1 or 2 tiles); then the fused post steps over
 * the task's block. */
#define QR__K_COC_GROUP 10
QR__K_AVX512 static void qr__k_f32_avx512_coc(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    static const QrKCocTileFn fn[2][QR__K_COC_MAXP] = {
        { qr__k_f32_avx512_coc1_s1, qr__k_f32_avx512_coc2_s1, qr__k_f32_avx512_coc3_s1, qr__k_f32_avx512_coc4_s1,
          qr__k_f32_avx512_coc5_s1, qr__k_f32_avx512_coc6_s1, qr__k_f32_avx512_coc7_s1, qr__k_f32_avx512_coc8_s1,
          qr__k_f32_avx512_coc9_s1, qr__k_f32_avx512_coc10_s1, qr__k_f32_avx512_coc11_s1, qr__k_f32_avx512_coc12_s1,
          qr__k_f32_avx512_coc13_s1, qr__k_f32_avx512_coc14_s1 },
        { qr__k_f32_avx512_coc1_s2, qr__k_f32_avx512_coc2_s2, qr__k_f32_avx512_coc3_s2, qr__k_f32_avx512_coc4_s2,
          qr__k_f32_avx512_coc5_s2, qr__k_f32_avx512_coc6_s2, qr__k_f32_avx512_coc7_s2, qr__k_f32_avx512_coc8_s2,
          qr__k_f32_avx512_coc9_s2, qr__k_f32_avx512_coc10_s2, qr__k_f32_avx512_coc11_s2, qr__k_f32_avx512_coc12_s2,
          qr__k_f32_avx512_coc13_s2, qr__k_f32_avx512_coc14_s2 },
    };
    static const QrKCocOutFn out[QR__K_COC_MAXP] = {
        qr__k_f32_avx512_coc_out1,  qr__k_f32_avx512_coc_out2,  qr__k_f32_avx512_coc_out3,  qr__k_f32_avx512_coc_out4,
        qr__k_f32_avx512_coc_out5,  qr__k_f32_avx512_coc_out6,  qr__k_f32_avx512_coc_out7,  qr__k_f32_avx512_coc_out8,
        qr__k_f32_avx512_coc_out9,  qr__k_f32_avx512_coc_out10, qr__k_f32_avx512_coc_out11, qr__k_f32_avx512_coc_out12,
        qr__k_f32_avx512_coc_out13, qr__k_f32_avx512_coc_out14,
    };
    const QrKCocJob *j = ctx;
    const int64_t OW = j->OW, nt = qr__k_cdiv(OW, QR__K_COC_MAXP), K = j->K;
    const int64_t blk = t % j->nblk, i0 = t / j->nblk * j->tiles, i1 = QR_MIN(j->OH * nt, i0 + j->tiles);
    const int64_t m0 = blk * QR__K_COC_MB;
    const float *w = j->wt + blk * K * QR__K_COC_MB;
    float tbuf[QR__K_COC_GROUP * QR__K_COC_MAXP * QR__K_COC_MB] __attribute__((aligned(64)));
    for (int64_t g0 = i0; g0 < i1; g0 += QR__K_COC_GROUP) {   /* tiles numbered row by row; a group may span rows */
        const int ng = (int)(QR_MIN(i1, g0 + QR__K_COC_GROUP) - g0);
        const float *xb[QR__K_COC_GROUP];   /* the group's tiles: input, width, first output pixel */
        int pw[QR__K_COC_GROUP];
        int64_t n0[QR__K_COC_GROUP];
        for (int g = 0; g < ng; g++) {
            const int64_t i = g0 + g, oh = i / nt, ti = i % nt, ow0 = ti * OW / nt;
            xb[g] = j->xp + oh * j->sh * j->rp + ow0 * j->sw;
            pw[g] = (int)((ti + 1) * OW / nt - ow0);
            n0[g] = oh * OW + ow0;
        }
        for (int64_t k0 = 0; k0 < K; k0 += j->kc) {
            const int64_t k1 = QR_MIN(K, k0 + j->kc);
            for (int g = 0; g < ng; g++)
                fn[j->sw - 1][pw[g] - 1](j->off, xb[g], w, k0, k1, tbuf + g * QR__K_COC_MAXP * QR__K_COC_MB);
        }
        for (int g = 0; g < ng; g++) out[pw[g] - 1](j, tbuf + g * QR__K_COC_MAXP * QR__K_COC_MB, m0, n0[g]);
    }
    const QrF32Fused *f = j->f;
    /* the task's pixels [p0, p1): whole rows, or a flat run's tiles */
    const int64_t p0 = i0 / nt * OW + i0 % nt * OW / nt, p1 = i1 / nt * OW + i1 % nt * OW / nt;
    if (f && f->post && p1 > p0)
        f->post(f->post_ctx, j->Y + m0 * j->ldy + p0, j->ldy, m0, QR_MIN((int64_t)QR__K_COC_MB, j->M - m0), p0, p1 - p0);
}

/* QrKCocPack on AVX-512F: 16 rows x 16 K values at a time (masked past K and mv, zero rows
 * past mv), transposed in registers into 16 K rows of the block's half; a copy. */
QR__K_AVX512 static void qr__k_f32_avx512_coc_pack(const float *a, int64_t lda, int64_t mv, int64_t K, float *dst) {
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
        const int n = (int)QR_MIN((int64_t)16, K - k0);
        const __mmask16 km = (__mmask16)(n == 16 ? 0xffffu : (1u << n) - 1);
        for (int h = 0; h < 2; h++) {
            __m512 t[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                t[i] = 16 * h + i < mv ? _mm512_maskz_loadu_ps(km, a + (16 * h + i) * lda + k0) : _mm512_setzero_ps();
            qr__k_f32_avx512_t16(t);
            for (int i = 0; i < n; i++) _mm512_storeu_ps(dst + (k0 + i) * QR__K_COC_MB + 16 * h, t[i]);
        }
    }
}

/* QrKF32DotSeq on AVX-512F: sixteen rows per zmm, one chain of fused multiply-adds per
 * lane in k order (the shared body's order), the rows' 16x16 blocks transposed in
 * registers (1000x1280 from the cache: 152 us against 253 for the scalar chains; in a
 * model run the weights mostly come from memory and the gain is smaller); rows past a
 * multiple of 16 by the shared body. */
QR__K_AVX512 static void qr__k_f32_avx512_dotseq(const float *A, int64_t lda, const float *b, int64_t kc, int64_t rows,
                                                float *out) {
    int64_t r = 0;
    for (; r + 16 <= rows; r += 16) {
        const float *a = A + r * lda;
        __m512 acc = _mm512_setzero_ps(), t[16];
        int64_t k = 0;
        for (; k + 16 <= kc; k += 16) {
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++) t[i] = _mm512_loadu_ps(a + i * lda + k);
            qr__k_f32_avx512_t16(t);
#pragma GCC unroll 16
            for (int j = 0; j < 16; j++) acc = _mm512_fmadd_ps(t[j], _mm512_set1_ps(b[k + j]), acc);
        }
        if (k < kc) {
            const int n = (int)(kc - k);
            const __mmask16 m = (__mmask16)((1u << n) - 1);
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++) t[i] = _mm512_maskz_loadu_ps(m, a + i * lda + k);
            qr__k_f32_avx512_t16(t);
            for (int j = 0; j < n; j++) acc = _mm512_fmadd_ps(t[j], _mm512_set1_ps(b[k + j]), acc);
        }
        _mm512_storeu_ps(out + r, acc);
    }
    if (r < rows) qr__k_f32_dotseq_body(A + r * lda, lda, b, kc, rows - r, out + r);
}

/* dst (kc, 32) = B block (kc rows of nr <= 32 columns, stride ldb), zero past nr. */
QR__K_AVX512 static void qr__k_f32_avx512_pack_b(const float *b, int64_t ldb, int64_t kc, int nr, float *dst) {
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : nr <= 16 ? (__mmask16)0 : (__mmask16)((1u << (nr - 16)) - 1);
    for (int64_t k = 0; k < kc; k++, b += ldb, dst += 32) {
        _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m0, b));
        _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(m1, b + 16));
    }
}

/* dst (kc, 32) = the B block whose transpose is nr <= 32 rows of kc floats of Bt (row stride
 * ldb), zero past nr (QrKF32Isa.pack_bt): 16x16 blocks of Bt transposed in registers, each
 * row of Bt read front to back. */
QR__K_AVX512 static void qr__k_f32_avx512_pack_bt(const float *b, int64_t ldb, int64_t kc, int nr, float *dst) {
    for (int h = 0; h < 2; h++) {   /* panel columns 16h .. 16h + 15: rows of Bt */
        const int rows = nr - 16 * h;
        const float *bh = b + 16 * h * ldb;
        for (int64_t k = 0; k < kc; k += 16) {
            const int n = (int)QR_MIN((int64_t)16, kc - k);
            const __mmask16 m = (__mmask16)(n == 16 ? 0xffffu : (1u << n) - 1);
            __m512 t[16];
            if (rows <= 0) {
                for (int i = 0; i < n; i++) _mm512_storeu_ps(dst + (k + i) * 32 + 16 * h, _mm512_setzero_ps());
                continue;
            }
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++) t[i] = i < rows ? _mm512_maskz_loadu_ps(m, bh + i * ldb + k) : _mm512_setzero_ps();
            qr__k_f32_avx512_t16(t);
            for (int i = 0; i < n; i++) _mm512_storeu_ps(dst + (k + i) * 32 + 16 * h, t[i]);
        }
    }
}

/* Convolution panel (32 columns) of the implicit im2col, one K row at a time assembled in
 * two zmm. The panel's columns split into output-row runs (segments); per segment and
 * kernel column kw, the lanes it fills and the input elements they read are fixed, so
 * those masks are computed once per panel, and a K row costs a row-pointer update and two
 * masked loads per segment (stride 1), or four and two vpermt2ps picking the even elements
 * (stride 2). Other strides go element by element. Masked-off lanes are never read, so
 * nothing outside x is touched. */
QR__K_AVX512 static void qr__k_f32_avx512_pack_conv(const QrF32ConvB *b, int64_t k0, int64_t kc, int64_t n0, int nr,
                                                    float *dst) {
    enum { MAXKW = 16 };
    if (b->sw > 2 || b->KW > MAXKW) {
        qr__k_conv_pack_c(b, k0, kc, n0, nr, 32, dst);
        return;
    }
    QrKConvSeg seg[32];
    const int ns = qr__k_conv_segs(b, n0, nr, seg);
    const int64_t KW = b->KW, KH = b->KH, W = b->W, H = b->H, sw = b->sw;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    uint32_t lane[32][MAXKW];   /* lanes segment s fills for kernel column kw */
    uint64_t raw[32][MAXKW];    /* stride 2: in-range elements t .. t+63 it reads */
    int64_t col[32][MAXKW];     /* input column of lane 0 (t) */
    for (int s = 0; s < ns; s++) {
        const QrKConvSeg *g = &seg[s];
        const uint32_t run = qr__k_bits(g->q0, g->q0 + g->len, 0, 32);
        for (int64_t kw = 0; kw < KW; kw++) {
            int64_t t = g->ow0 * sw - b->pw + kw * b->dw - sw * g->q0;
            col[s][kw] = t;
            if (sw == 1) {
                lane[s][kw] = run & qr__k_bits(-t, W - t, 0, 32);
            } else {
                lane[s][kw] = run & qr__k_bits(-qr__k_fdiv(t, 2), qr__k_fdiv(W - 1 - t, 2) + 1, 0, 32);
                raw[s][kw] = (uint64_t)qr__k_bits(-t, W - t, 0, 32) | (uint64_t)qr__k_bits(-t, W - t, 32, 32) << 32;
            }
        }
    }
    const float *rowp[32];
    int64_t c = k0 / (KH * KW), kh = k0 % (KH * KW) / KW, kw = k0 % KW;
    for (int64_t k = 0; k < kc;) {
        uint32_t valid = 0;   /* segments whose input row exists */
        for (int s = 0; s < ns; s++) {
            int64_t ih = seg[s].oh * b->sh - b->ph + kh * b->dh;
            if (ih < 0 || ih >= H) continue;
            valid |= 1u << s;
            rowp[s] = b->x + (c * H + ih) * W;
        }
        for (; kw < KW && k < kc; kw++, k++, dst += 32) {
            __m512 v0 = _mm512_setzero_ps(), v1 = v0;
            for (int s = 0; s < ns; s++) {
                if (!(valid >> s & 1)) continue;
                const uint32_t m = lane[s][kw];
                const float *p = rowp[s] + col[s][kw];
                if (sw == 1) {   /* lane l <- p[l] */
                    v0 = _mm512_mask_loadu_ps(v0, (__mmask16)m, p);
                    v1 = _mm512_mask_loadu_ps(v1, (__mmask16)(m >> 16), p + 16);
                    continue;
                }
                const uint64_t r = raw[s][kw];   /* lane l <- p[2l] */
                if (m & 0xffff) {
                    __m512 e = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)r, p), even,
                                                      _mm512_maskz_loadu_ps((__mmask16)(r >> 16), p + 16));
                    v0 = _mm512_mask_mov_ps(v0, (__mmask16)m, e);
                }
                if (m >> 16) {
                    __m512 e = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)(r >> 32), p + 32), even,
                                                      _mm512_maskz_loadu_ps((__mmask16)(r >> 48), p + 48));
                    v1 = _mm512_mask_mov_ps(v1, (__mmask16)(m >> 16), e);
                }
            }
            _mm512_storeu_ps(dst, v0);
            _mm512_storeu_ps(dst + 16, v1);
        }
        if (kw == KW) {
            kw = 0;
            if (++kh == KH) { kh = 0; c++; }
        }
    }
}

/* QrKF32DeqPanel with AVX-512 (kern/gemm.c): a full panel's 32 columns as two vectors a row
 * (vpmovsx/zxbd, the zero point subtracted as int32, vcvtdq2ps, the scale multiplied: DequantizeLinear's
 * one rounding), the row 16 ahead prefetched (a weight's rows come from memory, further apart than
 * the hardware's stride prefetcher follows); a narrow panel in plain C. */
QR__K_AVX512 static void qr__k_f32_avx512_deq_panel(const void *q, bool sg, int64_t ldq, int64_t kc, int nr,
                                                    const int32_t *z, const float *s, float *dst) {
    if (nr < 32) {
        qr__k_deq_panel_c(q, sg, ldq, kc, nr, z, s, 32, dst);
        return;
    }
    const __m512i z0 = _mm512_loadu_si512(z), z1 = _mm512_loadu_si512(z + 16);
    const __m512 s0 = _mm512_loadu_ps(s), s1 = _mm512_loadu_ps(s + 16);
    const unsigned char *p = q;
    for (int64_t k = 0; k < kc; k++, p += ldq, dst += 32) {
        _mm_prefetch((const char *)((uintptr_t)p + (uintptr_t)(16 * ldq)), _MM_HINT_T0);
        const __m128i b0 = _mm_loadu_si128((const __m128i *)p), b1 = _mm_loadu_si128((const __m128i *)(p + 16));
        const __m512i d0 = sg ? _mm512_cvtepi8_epi32(b0) : _mm512_cvtepu8_epi32(b0);
        const __m512i d1 = sg ? _mm512_cvtepi8_epi32(b1) : _mm512_cvtepu8_epi32(b1);
        _mm512_storeu_ps(dst, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(d0, z0)), s0));
        _mm512_storeu_ps(dst + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(d1, z1)), s1));
    }
}

static const QrKF32Isa qr__k_f32_avx512_isa = {
    8, 32, QR_KERN_F32_KC,
    { qr__k_f32_avx512_ukr1, qr__k_f32_avx512_ukr2, qr__k_f32_avx512_ukr3, qr__k_f32_avx512_ukr4,
      qr__k_f32_avx512_ukr5, qr__k_f32_avx512_ukr6, qr__k_f32_avx512_ukr7, qr__k_f32_avx512_ukr8 },
    qr__k_f32_avx512_dotseq,
    qr__k_f32_avx512_pack_b,
    qr__k_f32_avx512_pack_bt,
    qr__k_f32_avx512_pack_conv,
    { qr__k_f32_avx512_w16_1, qr__k_f32_avx512_w16_2, qr__k_f32_avx512_w16_3, qr__k_f32_avx512_w16_4,
      qr__k_f32_avx512_w16_5, qr__k_f32_avx512_w16_6, qr__k_f32_avx512_w16_7, qr__k_f32_avx512_w16_8 },
    { qr__k_f32_avx512_w8_1, qr__k_f32_avx512_w8_2, qr__k_f32_avx512_w8_3, qr__k_f32_avx512_w8_4,
      qr__k_f32_avx512_w8_5, qr__k_f32_avx512_w8_6, qr__k_f32_avx512_w8_7, qr__k_f32_avx512_w8_8 },
    qr__k_f32_avx512_deq_panel,
    qr__k_f32_avx512_coc,
    { qr__k_f32_avx512_ukw1, qr__k_f32_avx512_ukw2, qr__k_f32_avx512_ukw3, qr__k_f32_avx512_ukw4,
      qr__k_f32_avx512_ukw5, qr__k_f32_avx512_ukw6, qr__k_f32_avx512_ukw7, qr__k_f32_avx512_ukw8 },
    qr__k_f32_avx512_coc_pack,
};

/* QrF32GemmFn / QrF32GemmExFn / QrF32ConvGemmFn and their fused forms (kern/gemm.c). */
/* Generates qr_f32_gemm__avx512, qr_f32_gemm_ex__avx512, qr_f32_gemm_fused__avx512,
 * qr_f32_conv_gemm__avx512, qr_f32_conv_gemm_fused__avx512 (kern/gemm.c QR__K_F32_ENTRIES). */
QR__K_F32_ENTRIES(avx512, qr__k_f32_avx512_isa)

#endif
