/* kern/avx512/f32_gemm — AVX-512F float32 GEMM pieces run by kern/gemm.c's driver: the
 * 8x32 micro-kernel (16 zmm accumulators, 2 for B, 1 broadcast of A; 8 rows divide the
 * channel counts of common CNNs, 12x32 measured no faster on Zen 4), the dot product and
 * the B packers (masked loads for tails and for the convolution input). */
#if defined(__x86_64__)
#include <immintrin.h>

#define QR__K_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

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
    const bool add = o->add, clamp = o->clamp;
    const __m512 lo = _mm512_set1_ps(o->lo), hi = _mm512_set1_ps(o->hi);
    /* max(lo, s) / min(hi, s) return s when it is NaN */
#define QR__K_OUT(r, i)                                                                \
    if (mr > i) {                                                                      \
        float *cr = c + i * ldc;                                                       \
        if (o->bias) {                                                                 \
            __m512 bv = _mm512_set1_ps(o->bias[i]);                                    \
            c##r##0 = _mm512_add_ps(c##r##0, bv);                                      \
            c##r##1 = _mm512_add_ps(c##r##1, bv);                                      \
        }                                                                              \
        if (add) {                                                                     \
            c##r##0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), c##r##0);           \
            c##r##1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + 16), c##r##1);      \
        }                                                                              \
        if (clamp) {                                                                   \
            c##r##0 = _mm512_min_ps(hi, _mm512_max_ps(lo, c##r##0));                   \
            c##r##1 = _mm512_min_ps(hi, _mm512_max_ps(lo, c##r##1));                   \
        }                                                                              \
        _mm512_mask_storeu_ps(cr, m0, c##r##0);                                        \
        _mm512_mask_storeu_ps(cr + 16, m1, c##r##1);                                   \
    }
    QR__K_OUT(0, 0) QR__K_OUT(1, 1) QR__K_OUT(2, 2) QR__K_OUT(3, 3) QR__K_OUT(4, 4) QR__K_OUT(5, 5)
    QR__K_OUT(6, 6) QR__K_OUT(7, 7)
#undef QR__K_OUT
}

#define QR__K_A512_UKR(m)                                                                                      \
    QR__K_AVX512 static void qr__k_f32_avx512_ukr##m(int64_t kc, const float *a, int64_t lda, const float *b, \
                                                     int64_t bs, float *c, int64_t ldc, int nr, const QrKF32Out *o) { \
        qr__k_f32_avx512_ukr(m, kc, a, lda, b, bs, c, ldc, nr, o);                                                    \
    }
QR__K_A512_UKR(1)
QR__K_A512_UKR(2)
QR__K_A512_UKR(3)
QR__K_A512_UKR(4)
QR__K_A512_UKR(5)
QR__K_A512_UKR(6)
QR__K_A512_UKR(7)
QR__K_A512_UKR(8)
#undef QR__K_A512_UKR

/* sum a[i] * b[i] with four 16-lane accumulators; the tail is a masked load. */
QR__K_AVX512 static float qr__k_f32_avx512_dot(const float *a, const float *b, int64_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
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

/* Convolution panel (32 columns) of the implicit im2col, one K row at a time assembled in
 * two zmm: per output-row run, a masked load of the in-range inputs (stride 1), or two
 * masked loads and vpermt2ps picking the even elements (stride 2); other strides go
 * element by element. Masked-off lanes are never read, so nothing outside x is touched. */
QR__K_AVX512 static void qr__k_f32_avx512_pack_conv(const QrF32ConvB *b, int64_t k0, int64_t kc, int64_t n0, int nr,
                                                    float *dst) {
    if (b->sw > 2) {
        qr__k_conv_pack_c(b, k0, kc, n0, nr, 32, dst);
        return;
    }
    QrKConvSeg seg[32];
    int ns = qr__k_conv_segs(b, n0, nr, seg);
    const int64_t KK = b->KH * b->KW, W = b->W, sw = b->sw;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    int64_t c = k0 / KK, kh = k0 % KK / b->KW, kw = k0 % b->KW;
    for (int64_t k = 0; k < kc; k++, dst += 32) {
        __m512 v0 = _mm512_setzero_ps(), v1 = v0;
        for (int si = 0; si < ns; si++) {
            const QrKConvSeg *g = &seg[si];
            int64_t ih = g->oh * b->sh - b->ph + kh * b->dh;
            if (ih < 0 || ih >= b->H) continue;
            const float *row = b->x + (c * b->H + ih) * W;
            int64_t t = g->ow0 * sw - b->pw + kw * b->dw - sw * g->q0;   /* input column of lane 0 */
            if (sw == 1) {   /* lane l <- row[t + l] */
                uint32_t m = qr__k_bits(-t, W - t, 0, 32) & qr__k_bits(g->q0, g->q0 + g->len, 0, 32);
                v0 = _mm512_mask_loadu_ps(v0, (__mmask16)m, row + t);
                v1 = _mm512_mask_loadu_ps(v1, (__mmask16)(m >> 16), row + t + 16);
            } else {         /* lane l <- row[t + 2l] */
                uint32_t m = qr__k_bits(g->q0, g->q0 + g->len, 0, 32) &
                             qr__k_bits(-qr__k_fdiv(t, 2), qr__k_fdiv(W - 1 - t, 2) + 1, 0, 32);
                for (int h = 0; h < 2; h++) {
                    uint32_t mh = m >> (16 * h) & 0xffff;
                    if (!mh) continue;
                    uint32_t raw = qr__k_bits(-t, W - t, 32 * h, 32);   /* raw elements 32h .. 32h+31 in range */
                    __m512 r0 = _mm512_maskz_loadu_ps((__mmask16)raw, row + t + 32 * h);
                    __m512 r1 = _mm512_maskz_loadu_ps((__mmask16)(raw >> 16), row + t + 32 * h + 16);
                    __m512 e = _mm512_permutex2var_ps(r0, even, r1);
                    if (h == 0) v0 = _mm512_mask_mov_ps(v0, (__mmask16)mh, e);
                    else v1 = _mm512_mask_mov_ps(v1, (__mmask16)mh, e);
                }
            }
        }
        _mm512_storeu_ps(dst, v0);
        _mm512_storeu_ps(dst + 16, v1);
        if (++kw == b->KW) { kw = 0; if (++kh == b->KH) { kh = 0; c++; } }
    }
}

static const QrKF32Isa qr__k_f32_avx512_isa = {
    8, 32, 256,
    { qr__k_f32_avx512_ukr1, qr__k_f32_avx512_ukr2, qr__k_f32_avx512_ukr3, qr__k_f32_avx512_ukr4,
      qr__k_f32_avx512_ukr5, qr__k_f32_avx512_ukr6, qr__k_f32_avx512_ukr7, qr__k_f32_avx512_ukr8 },
    qr__k_f32_avx512_dot,
    qr__k_f32_avx512_pack_b,
    qr__k_f32_avx512_pack_conv,
};

/* QrF32GemmFn / QrF32GemmExFn / QrF32ConvGemmFn on AVX-512F (8x32 tiles, threaded). */
static void qr_f32_gemm__avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                                int64_t ldb, float *C, int64_t ldc, bool accumulate) {
    qr__k_f32_gemm(&qr__k_f32_avx512_isa, M, N, K, A, lda, B, ldb, C, ldc, accumulate, NULL);
}
static void qr_f32_conv_gemm__avx512(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *Y, int64_t ldy,
                                     const QrF32Epilogue *ep) {
    qr__k_f32_conv_gemm(&qr__k_f32_avx512_isa, M, A, lda, b, Y, ldy, ep);
}
static void qr_f32_gemm_ex__avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                                   int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Epilogue *ep) {
    qr__k_f32_gemm(&qr__k_f32_avx512_isa, M, N, K, A, lda, B, ldb, C, ldc, accumulate, ep);
}

#endif
