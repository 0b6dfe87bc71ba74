/* kern/neon/q_gemm — AArch64 integer kernels: the 8-bit GEMM micro-kernel on int16 (s16
 * format, SMLAL by lane: int16 x int16 accumulated into int32, nothing saturates), the
 * dot-product micro-kernel (ss format, SDOT: four int8 x int8 products per int32 lane, both
 * operands made signed by the packing with the zero-point compensation of kern/gemm.c), the
 * compensation and requantization. NEON is baseline AArch64; SDOT (FEAT_DotProd) functions
 * carry a target attribute and run only when the hwcaps have it, so the binary runs on plain
 * armv8-a. The drivers (packing, zero points, threads) are in kern/gemm.c. */
#if defined(__aarch64__)

#define QR__K_DOT __attribute__((target("arch=armv8.2-a+dotprod")))

/* QrS32RequantFn on NEON: 8 lanes per step: (acc + bias) -> float (SCVTF, nearest even) * mult,
 * clamp (FMAXNM gives lo for NaN), FCVTNS (round half to even), + zp, saturating narrows that
 * never change the in-range values; the remainder runs the ref loop. */
static void qr_s32_requant__neon(int64_t n, const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                                 const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi, void *y,
                                 int y_bytes) {
    const float32x4_t flo = vdupq_n_f32((float)(lo - zp)), fhi = vdupq_n_f32((float)(hi - zp));
    const int32x4_t vzp = vdupq_n_s32(zp), vb = vdupq_n_s32(bias ? bias[0] : 0);
    const float32x4_t vm = vdupq_n_f32(mult[0]);
    const bool is_signed = lo < 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int32x4_t q[2];
        for (int u = 0; u < 2; u++) {
            const int64_t e = i + 4 * u;
            int32x4_t a = vld1q_s32(acc + e);
            if (bias) a = vaddq_s32(a, bias_stride ? vld1q_s32(bias + e) : vb);
            float32x4_t v = vmulq_f32(vcvtq_f32_s32(a), mult_stride ? vld1q_f32(mult + e) : vm);
            v = vminq_f32(vmaxnmq_f32(v, flo), fhi);
            q[u] = vaddq_s32(vcvtnq_s32_f32(v), vzp);
        }
        const int16x8_t h = vcombine_s16(vqmovn_s32(q[0]), vqmovn_s32(q[1]));
        if (y_bytes == 1) {
            if (is_signed) vst1_s8((int8_t *)y + i, vqmovn_s16(h));
            else vst1_u8((uint8_t *)y + i, vqmovun_s16(h));
        } else {
            if (is_signed) vst1q_s16((int16_t *)y + i, h);
            else vst1q_u16((uint16_t *)y + i, vcombine_u16(vqmovun_s32(q[0]), vqmovun_s32(q[1])));
        }
    }
    if (i < n)
        qr_s32_requant__ref(n - i, acc + i, bias ? bias + i * bias_stride : NULL, bias_stride, mult + i * mult_stride,
                            mult_stride, zp, lo, hi, y_bytes == 1 ? (void *)((uint8_t *)y + i) : (void *)((uint16_t *)y + i),
                            y_bytes);
}

/* 8-bit GEMM, s16 format, 8x8: c (8, 8) (+)= a [ng][8][2] @ b [ng][8][2] (int16 pairs).
 * 16 accumulators; per K pair a de-interleaving load splits b into its two rows. */
static void qr__k_q8_neon_ukr(int64_t ng, const void *av, const void *bv, int32_t *c, int64_t ldc, bool add) {
    const int16_t *a = av, *b = bv;
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    int32x4_t c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
#define QR__K_ROW(r, av_, l)                                                           \
    c##r##0 = vmlal_laneq_s16(c##r##0, vget_low_s16(bb.val[0]), av_, 2 * (l));         \
    c##r##1 = vmlal_high_laneq_s16(c##r##1, bb.val[0], av_, 2 * (l));                  \
    c##r##0 = vmlal_laneq_s16(c##r##0, vget_low_s16(bb.val[1]), av_, 2 * (l) + 1);     \
    c##r##1 = vmlal_high_laneq_s16(c##r##1, bb.val[1], av_, 2 * (l) + 1);
    for (int64_t g = 0; g < ng; g++) {
        const int16x8x2_t bb = vld2q_s16(b);
        const int16x8_t a0 = vld1q_s16(a), a1 = vld1q_s16(a + 8);
        QR__K_ROW(0, a0, 0) QR__K_ROW(1, a0, 1) QR__K_ROW(2, a0, 2) QR__K_ROW(3, a0, 3)
        QR__K_ROW(4, a1, 0) QR__K_ROW(5, a1, 1) QR__K_ROW(6, a1, 2) QR__K_ROW(7, a1, 3)
        a += 16;
        b += 16;
    }
#undef QR__K_ROW
#define QR__K_OUT(r)                                                                   \
    {                                                                                  \
        int32_t *cr = c + (r) * ldc;                                                   \
        if (add) {                                                                     \
            c##r##0 = vaddq_s32(c##r##0, vld1q_s32(cr));                               \
            c##r##1 = vaddq_s32(c##r##1, vld1q_s32(cr + 4));                           \
        }                                                                              \
        vst1q_s32(cr, c##r##0);                                                        \
        vst1q_s32(cr + 4, c##r##1);                                                    \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5) QR__K_OUT(6) QR__K_OUT(7)
#undef QR__K_OUT
}

static const QrKQ8Isa qr__k_q8_neon_isa = { 8, 8, 512, QR__K_Q8_FMT_S16, qr__k_q8_neon_ukr, NULL, NULL, NULL, NULL,
                                            qr_s32_requant__neon, NULL };

/* QrQ8PackAFn on NEON. */
static size_t qr_q8_pack_a__neon(int64_t M, int64_t K, const QrQOperand *A, bool b_signed, void *dst) {
    return qr__k_q8_pack_a(&qr__k_q8_neon_isa, M, K, A, b_signed, dst);
}

/* QrQ8GemmFn, QrQ8GemmRqFn, QrQ8ConvGemmFn on NEON (int16, SMLAL). */
/* Generates qr_q8_gemm__neon, qr_q8_gemm_rq__neon, qr_q8_conv_gemm__neon
 * (kern/gemm.c QR__K_Q8_ENTRIES). */
QR__K_Q8_ENTRIES(neon, qr__k_q8_neon_isa)

/* 8-bit GEMM, ss format, 8x12: c (8, 12) (+)= a [ng][8][4] @ b [ng][12][4] (int8 quads):
 * SDOT by lane, 24 accumulators + 3 B + 2 A registers. */
QR__K_DOT static void qr__k_q8_dot_ukr(int64_t ng, const void *av, const void *bv, int32_t *c, int64_t ldc, bool add) {
    const int8_t *a = av, *b = bv;
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00, c20 = c00, c21 = c00;
    int32x4_t c22 = c00, c30 = c00, c31 = c00, c32 = c00, c40 = c00, c41 = c00, c42 = c00, c50 = c00, c51 = c00;
    int32x4_t c52 = c00, c60 = c00, c61 = c00, c62 = c00, c70 = c00, c71 = c00, c72 = c00;
#define QR__K_ROW(r, av_, l)                                   \
    c##r##0 = vdotq_laneq_s32(c##r##0, b0, av_, l);            \
    c##r##1 = vdotq_laneq_s32(c##r##1, b1, av_, l);            \
    c##r##2 = vdotq_laneq_s32(c##r##2, b2, av_, l);
    for (int64_t g = 0; g < ng; g++) {
        const int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32);
        const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
        QR__K_ROW(0, a0, 0) QR__K_ROW(1, a0, 1) QR__K_ROW(2, a0, 2) QR__K_ROW(3, a0, 3)
        QR__K_ROW(4, a1, 0) QR__K_ROW(5, a1, 1) QR__K_ROW(6, a1, 2) QR__K_ROW(7, a1, 3)
        a += 32;
        b += 48;
    }
#undef QR__K_ROW
#define QR__K_OUT(r)                                                                   \
    {                                                                                  \
        int32_t *cr = c + (r) * ldc;                                                   \
        if (add) {                                                                     \
            c##r##0 = vaddq_s32(c##r##0, vld1q_s32(cr));                               \
            c##r##1 = vaddq_s32(c##r##1, vld1q_s32(cr + 4));                           \
            c##r##2 = vaddq_s32(c##r##2, vld1q_s32(cr + 8));                           \
        }                                                                              \
        vst1q_s32(cr, c##r##0);                                                        \
        vst1q_s32(cr + 4, c##r##1);                                                    \
        vst1q_s32(cr + 8, c##r##2);                                                    \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5) QR__K_OUT(6) QR__K_OUT(7)
#undef QR__K_OUT
}

/* QrKQ8Comp: c[i] += v[i] * ra + u * w[i] (mod 2^32: MLA wraps). */
static void qr__k_q8_neon_comp(int32_t *c, int64_t n, int32_t ra, int32_t u, const int32_t *v, const int32_t *w) {
    const int32x4_t vra = vdupq_n_s32(ra), vu = vdupq_n_s32(u);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_s32(c + i, vmlaq_s32(vmlaq_s32(vld1q_s32(c + i), vld1q_s32(v + i), vra), vld1q_s32(w + i), vu));
    for (; i < n; i++) c[i] = (int32_t)((uint32_t)c[i] + (uint32_t)v[i] * (uint32_t)ra + (uint32_t)u * (uint32_t)w[i]);
}

static const QrKQ8Isa qr__k_q8_dot_isa = { 8, 12, 1024, QR__K_Q8_FMT_SS, qr__k_q8_dot_ukr, NULL, NULL, NULL,
                                           qr__k_q8_neon_comp, qr_s32_requant__neon, NULL };

/* QrQ8PackAFn with the dot-product instructions. */
static size_t qr_q8_pack_a__dot(int64_t M, int64_t K, const QrQOperand *A, bool b_signed, void *dst) {
    return qr__k_q8_pack_a(&qr__k_q8_dot_isa, M, K, A, b_signed, dst);
}

/* QrQ8GemmFn, QrQ8GemmRqFn, QrQ8ConvGemmFn with SDOT. */
/* Generates qr_q8_gemm__dot, qr_q8_gemm_rq__dot, qr_q8_conv_gemm__dot
 * (kern/gemm.c QR__K_Q8_ENTRIES). */
QR__K_Q8_ENTRIES(dot, qr__k_q8_dot_isa)

#endif
