/* kern/avx2/f32_gemm — AVX2+FMA float32 GEMM pieces run by kern/gemm.c's driver: the
 * 6x16 micro-kernel (12 ymm accumulators, 2 for B, 1 broadcast of A, no spills), the
 * sequential dot products (N = 1), and the B packers (matrix; convolution input, implicit im2col). */
#if defined(__x86_64__)
#include <immintrin.h>

#define QR__K_AVX2 __attribute__((target("avx2,fma")))

/* c (mr, 16) (+)= a (mr, kc; row stride lda) @ b ([kc] x 16, row stride bs). mr is a
 * compile-time constant after inlining, so unused rows cost nothing. Rows are addressed
 * from two bases (rows 0-2 and 3-5) as base + {0, 1, 2} * lda, which x86 addressing
 * encodes (index lda, scale 4 or 8): with one pointer per row GCC runs out of integer
 * registers and spills. K is unrolled by 2 with constant displacements. */
QR__K_AVX2 static inline __attribute__((always_inline)) void
qr__k_f32_avx2_ukr(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t bs, float *c,
                   int64_t ldc, int nr, const QrKF32Out *o) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *a0 = a, *a3 = a + 3 * lda;
#define QR__K_ROW(r, base, off)                                           \
    if (mr > r) {                                                         \
        __m256 av = _mm256_broadcast_ss(base + off);                      \
        c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                       \
        c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                       \
    }
#define QR__K_STEP(u)                                                                    \
    {                                                                                    \
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);                     \
        QR__K_ROW(0, a0, u) QR__K_ROW(1, a0, lda + u) QR__K_ROW(2, a0, 2 * lda + u)      \
        QR__K_ROW(3, a3, u) QR__K_ROW(4, a3, lda + u) QR__K_ROW(5, a3, 2 * lda + u)      \
        b += bs;                                                                         \
    }
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        QR__K_STEP(0) QR__K_STEP(1)
        a0 += 2;
        a3 += 2;
    }
    if (k < kc) QR__K_STEP(0)
#undef QR__K_STEP
#undef QR__K_ROW
    const bool add = o->add, clamp = o->clamp, relu = o->relu, rf = o->res_first;
    const __m256 lo = _mm256_set1_ps(o->lo), hi = _mm256_set1_ps(o->hi), zero = _mm256_setzero_ps();
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), idx), m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), idx);
    /* max(lo, s) / min(hi, s) return s when it is NaN; relu keeps lanes > 0 or NaN (-0 -> +0) */
#define QR__K_RELU256(v) _mm256_and_ps(v, _mm256_or_ps(_mm256_cmp_ps(v, zero, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
#define QR__K_OUT(r)                                                                                 \
    if (mr > r) {                                                                                    \
        float *cr = c + r * ldc;                                                                     \
        if (o->bias && !o->bias_after) {                                                             \
            __m256 bv = _mm256_broadcast_ss(o->bias + r);                                            \
            c##r##0 = _mm256_add_ps(c##r##0, bv);                                                    \
            c##r##1 = _mm256_add_ps(c##r##1, bv);                                                    \
        }                                                                                            \
        if (add) {                                                                                   \
            c##r##0 = _mm256_add_ps(nr == 16 ? _mm256_loadu_ps(cr) : _mm256_maskload_ps(cr, m0), c##r##0);          \
            c##r##1 = _mm256_add_ps(nr == 16 ? _mm256_loadu_ps(cr + 8) : _mm256_maskload_ps(cr + 8, m1), c##r##1);  \
        }                                                                                            \
        if (o->bias && o->bias_after) {                                                              \
            __m256 bv = _mm256_broadcast_ss(o->bias + r);                                            \
            c##r##0 = _mm256_add_ps(c##r##0, bv);                                                    \
            c##r##1 = _mm256_add_ps(c##r##1, bv);                                                    \
        }                                                                                            \
        if (o->res) {                                                                                \
            const float *rr = o->res + r * o->ldres;                                                 \
            __m256 r0 = nr == 16 ? _mm256_loadu_ps(rr) : _mm256_maskload_ps(rr, m0);                 \
            __m256 r1 = nr == 16 ? _mm256_loadu_ps(rr + 8) : _mm256_maskload_ps(rr + 8, m1);         \
            c##r##0 = rf ? _mm256_add_ps(r0, c##r##0) : _mm256_add_ps(c##r##0, r0);                 \
            c##r##1 = rf ? _mm256_add_ps(r1, c##r##1) : _mm256_add_ps(c##r##1, r1);                 \
        }                                                                                            \
        if (clamp) {                                                                                 \
            c##r##0 = _mm256_min_ps(hi, _mm256_max_ps(lo, c##r##0));                                 \
            c##r##1 = _mm256_min_ps(hi, _mm256_max_ps(lo, c##r##1));                                 \
        }                                                                                            \
        if (relu) {                                                                                  \
            c##r##0 = QR__K_RELU256(c##r##0);                                                        \
            c##r##1 = QR__K_RELU256(c##r##1);                                                        \
        }                                                                                            \
        if (nr == 16) {                                                                              \
            _mm256_storeu_ps(cr, c##r##0);                                                           \
            _mm256_storeu_ps(cr + 8, c##r##1);                                                       \
        } else {                                                                                     \
            _mm256_maskstore_ps(cr, m0, c##r##0);                                                    \
            _mm256_maskstore_ps(cr + 8, m1, c##r##1);                                                \
        }                                                                                            \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5)
#undef QR__K_OUT
#undef QR__K_RELU256
}

#define QR__K_AVX2_UKR(m)                                                                                     \
    QR__K_AVX2 static void qr__k_f32_avx2_ukr##m(int64_t kc, const float *a, int64_t lda, const float *b,     \
                                                 int64_t bs, float *c, int64_t ldc, int nr, const QrKF32Out *o) { \
        qr__k_f32_avx2_ukr(m, kc, a, lda, b, bs, c, ldc, nr, o);                                                  \
    }
/* Generates qr__k_f32_avx2_ukr1 .. qr__k_f32_avx2_ukr6. */
QR__K_AVX2_UKR(1)
QR__K_AVX2_UKR(2)
QR__K_AVX2_UKR(3)
QR__K_AVX2_UKR(4)
QR__K_AVX2_UKR(5)
QR__K_AVX2_UKR(6)
#undef QR__K_AVX2_UKR

/* QrKF32DotSeq with the FMA instruction (the shared body, compiled for this target). */
QR__K_AVX2 static void qr__k_f32_avx2_dotseq(const float *A, int64_t lda, const float *b, int64_t kc, int64_t rows,
                                            float *out) {
    qr__k_f32_dotseq_body(A, lda, b, kc, rows, out);
}

/* dst (kc, 16) = B block (kc rows of nr <= 16 columns, stride ldb), zero past nr. */
QR__K_AVX2 static void qr__k_f32_avx2_pack_b(const float *b, int64_t ldb, int64_t kc, int nr, float *dst) {
    if (nr == 16) {
        for (int64_t k = 0; k < kc; k++, b += ldb, dst += 16) {
            _mm256_storeu_ps(dst, _mm256_loadu_ps(b));
            _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(b + 8));
        }
        return;
    }
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), idx), m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), idx);
    for (int64_t k = 0; k < kc; k++, b += ldb, dst += 16) {
        _mm256_storeu_ps(dst, _mm256_maskload_ps(b, m0));
        _mm256_storeu_ps(dst + 8, _mm256_maskload_ps(b + 8, m1));
    }
}

/* Lanes 8h .. 8h+7 of a 32-bit mask as a vector mask. */
QR__K_AVX2 static inline __m256i qr__k_vmask(uint32_t m, int h) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i v = _mm256_and_si256(_mm256_set1_epi32((int)(m >> (8 * h) & 0xff)), bit);
    return _mm256_cmpeq_epi32(v, bit);
}

/* Convolution panel (16 columns) of the implicit im2col, as the AVX-512 one: masked loads
 * (vmaskmovps never reads masked-off lanes) merged per output-row run; stride 2 takes the
 * even elements of two masked loads. */
QR__K_AVX2 static void qr__k_f32_avx2_pack_conv(const QrF32ConvB *b, int64_t k0, int64_t kc, int64_t n0, int nr,
                                                float *dst) {
    if (b->sw > 2) {
        qr__k_conv_pack_c(b, k0, kc, n0, nr, 16, dst);
        return;
    }
    QrKConvSeg seg[16];
    int ns = qr__k_conv_segs(b, n0, nr, seg);
    const int64_t KK = b->KH * b->KW, W = b->W, sw = b->sw;
    int64_t c = k0 / KK, kh = k0 % KK / b->KW, kw = k0 % b->KW;
    for (int64_t k = 0; k < kc; k++, dst += 16) {
        __m256 v0 = _mm256_setzero_ps(), v1 = v0;
        for (int si = 0; si < ns; si++) {
            const QrKConvSeg *g = &seg[si];
            int64_t ih = g->oh * b->sh - b->ph + kh * b->dh;
            if (ih < 0 || ih >= b->H) continue;
            const float *row = b->x + (c * b->H + ih) * W;
            int64_t t = g->ow0 * sw - b->pw + kw * b->dw - sw * g->q0;   /* input column of lane 0 */
            if (sw == 1) {
                uint32_t m = qr__k_bits(-t, W - t, 0, 16) & qr__k_bits(g->q0, g->q0 + g->len, 0, 16);
                if (m & 0xff) v0 = _mm256_or_ps(v0, _mm256_maskload_ps(row + t, qr__k_vmask(m, 0)));
                if (m >> 8) v1 = _mm256_or_ps(v1, _mm256_maskload_ps(row + t + 8, qr__k_vmask(m, 1)));
            } else {
                uint32_t m = qr__k_bits(g->q0, g->q0 + g->len, 0, 16) &
                             qr__k_bits(-qr__k_fdiv(t, 2), qr__k_fdiv(W - 1 - t, 2) + 1, 0, 16);
                for (int h = 0; h < 2; h++) {
                    if (!(m >> (8 * h) & 0xff)) continue;
                    uint32_t raw = qr__k_bits(-t, W - t, 16 * h, 16);
                    __m256 r0 = _mm256_maskload_ps(row + t + 16 * h, qr__k_vmask(raw, 0));
                    __m256 r1 = _mm256_maskload_ps(row + t + 16 * h + 8, qr__k_vmask(raw, 1));
                    __m256 e = _mm256_shuffle_ps(r0, r1, _MM_SHUFFLE(2, 0, 2, 0));
                    e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
                    e = _mm256_and_ps(e, _mm256_castsi256_ps(qr__k_vmask(m, h)));
                    if (h == 0) v0 = _mm256_or_ps(v0, e);
                    else v1 = _mm256_or_ps(v1, e);
                }
            }
        }
        _mm256_storeu_ps(dst, v0);
        _mm256_storeu_ps(dst + 8, v1);
        if (++kw == b->KW) { kw = 0; if (++kh == b->KH) { kh = 0; c++; } }
    }
}

/* dst (kc, 16) = the B block whose transpose is nr <= 16 rows of kc floats of Bt (row stride
 * ldb), zero past nr (QrKF32Isa.pack_bt). */
QR__K_AVX2 static void qr__k_f32_avx2_pack_bt(const float *b, int64_t ldb, int64_t kc, int nr, float *dst) {
    qr__k_pack_bt_c(b, ldb, kc, nr, 16, dst);
}

/* QrKF32DeqPanel with AVX2 (kern/gemm.c): a full panel's 16 columns as two vectors a row
 * (vpmovsx/zxbd, the zero point subtracted as int32, vcvtdq2ps, the scale multiplied: DequantizeLinear's
 * one rounding), the row 16 ahead prefetched (a weight's rows come from memory, further apart than
 * the hardware's stride prefetcher follows); a narrow panel in plain C. */
QR__K_AVX2 static void qr__k_f32_avx2_deq_panel(const void *q, bool sg, int64_t ldq, int64_t kc, int nr,
                                                const int32_t *z, const float *s, float *dst) {
    if (nr < 16) {
        qr__k_deq_panel_c(q, sg, ldq, kc, nr, z, s, 16, dst);
        return;
    }
    const __m256i z0 = _mm256_loadu_si256((const __m256i *)z), z1 = _mm256_loadu_si256((const __m256i *)(z + 8));
    const __m256 s0 = _mm256_loadu_ps(s), s1 = _mm256_loadu_ps(s + 8);
    const unsigned char *p = q;
    for (int64_t k = 0; k < kc; k++, p += ldq, dst += 16) {
        _mm_prefetch((const char *)((uintptr_t)p + (uintptr_t)(16 * ldq)), _MM_HINT_T0);
        const __m128i b0 = _mm_loadl_epi64((const __m128i *)p), b1 = _mm_loadl_epi64((const __m128i *)(p + 8));
        const __m256i d0 = sg ? _mm256_cvtepi8_epi32(b0) : _mm256_cvtepu8_epi32(b0);
        const __m256i d1 = sg ? _mm256_cvtepi8_epi32(b1) : _mm256_cvtepu8_epi32(b1);
        _mm256_storeu_ps(dst, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(d0, z0)), s0));
        _mm256_storeu_ps(dst + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(d1, z1)), s1));
    }
}

static const QrKF32Isa qr__k_f32_avx2_isa = {
    6, 16, QR_KERN_F32_KC,
    { qr__k_f32_avx2_ukr1, qr__k_f32_avx2_ukr2, qr__k_f32_avx2_ukr3, qr__k_f32_avx2_ukr4, qr__k_f32_avx2_ukr5,
      qr__k_f32_avx2_ukr6 },
    qr__k_f32_avx2_dotseq,
    qr__k_f32_avx2_pack_b,
    qr__k_f32_avx2_pack_bt,
    qr__k_f32_avx2_pack_conv,
    { NULL },
    { NULL },
    qr__k_f32_avx2_deq_panel,
    NULL,   /* no coc tasks: the GEMM path */
    { NULL },
    NULL,
};

/* QrF32GemmFn / QrF32GemmExFn / QrF32ConvGemmFn and their fused forms (kern/gemm.c). */
/* Generates qr_f32_gemm__avx2, qr_f32_gemm_ex__avx2, qr_f32_gemm_fused__avx2,
 * qr_f32_conv_gemm__avx2, qr_f32_conv_gemm_fused__avx2 (kern/gemm.c QR__K_F32_ENTRIES). */
QR__K_F32_ENTRIES(avx2, qr__k_f32_avx2_isa)

#endif
