/* kern/neon/f32_conv_m1 — AArch64 Advanced SIMD column kernel of the M = 1 convolutions
 * (depthwise channels; ORT's order, see QrF32ConvM1Fn): 4 output columns per vector, 16 at
 * a time in four independent sums; separate multiply and add (no FMA), so results are
 * bit-identical to ref. Compiled only for aarch64. */
#if defined(__aarch64__)
#include <arm_neon.h>

/* Four products of taps k..k+3 for the 4 columns at c (row stride ld), each rounded on its
 * own, summed ((p0 + p1) + p2) + p3 and added to s. */
static inline float32x4_t qr__k_m1_quad4(float32x4_t s, const float *c, int64_t ld, const float *w) {
    float32x4_t p0 = vmulq_n_f32(vld1q_f32(c), w[0]), p1 = vmulq_n_f32(vld1q_f32(c + ld), w[1]);
    float32x4_t p2 = vmulq_n_f32(vld1q_f32(c + 2 * ld), w[2]), p3 = vmulq_n_f32(vld1q_f32(c + 3 * ld), w[3]);
    QR__K_ROUNDED(p0);
    QR__K_ROUNDED(p1);
    QR__K_ROUNDED(p2);
    QR__K_ROUNDED(p3);
    return vaddq_f32(vaddq_f32(vaddq_f32(vaddq_f32(p0, p1), p2), p3), s);
}

/* The pair and single left after the groups of four (r = K % 4 taps). */
static inline float32x4_t qr__k_m1_rest4(float32x4_t s, const float *c, int64_t ld, const float *w, int64_t r) {
    if (r >= 2) {
        float32x4_t p0 = vmulq_n_f32(vld1q_f32(c), w[0]), p1 = vmulq_n_f32(vld1q_f32(c + ld), w[1]);
        QR__K_ROUNDED(p0);
        QR__K_ROUNDED(p1);
        s = vaddq_f32(vaddq_f32(p0, p1), s);
        c += 2 * ld;
        w += 2;
        r -= 2;
    }
    if (r) {
        float32x4_t p0 = vmulq_n_f32(vld1q_f32(c), w[0]);
        QR__K_ROUNDED(p0);
        s = vaddq_f32(p0, s);
    }
    return s;
}

/* QrKF32M1Cols with NEON. */
static void qr__k_f32_m1_cols__neon(int64_t K, int64_t n, const float *w, const float *col, int64_t ldcol, float bias,
                                    float *y) {
    const float32x4_t vb = vdupq_n_f32(bias);
    const int64_t K4 = K & ~(int64_t)3;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K4; k += 4) {
            const float *c = col + k * ldcol + j;
            s0 = qr__k_m1_quad4(s0, c, ldcol, w + k);
            s1 = qr__k_m1_quad4(s1, c + 4, ldcol, w + k);
            s2 = qr__k_m1_quad4(s2, c + 8, ldcol, w + k);
            s3 = qr__k_m1_quad4(s3, c + 12, ldcol, w + k);
        }
        const float *c = col + K4 * ldcol + j;
        vst1q_f32(y + j, vaddq_f32(qr__k_m1_rest4(s0, c, ldcol, w + K4, K - K4), vb));
        vst1q_f32(y + j + 4, vaddq_f32(qr__k_m1_rest4(s1, c + 4, ldcol, w + K4, K - K4), vb));
        vst1q_f32(y + j + 8, vaddq_f32(qr__k_m1_rest4(s2, c + 8, ldcol, w + K4, K - K4), vb));
        vst1q_f32(y + j + 12, vaddq_f32(qr__k_m1_rest4(s3, c + 12, ldcol, w + K4, K - K4), vb));
    }
    for (; j < n; j += 4) {   /* ldcol >= rup(n, 16): the last 4 columns are readable */
        float32x4_t s0 = vdupq_n_f32(0.0f);
        for (int64_t k = 0; k < K4; k += 4) s0 = qr__k_m1_quad4(s0, col + k * ldcol + j, ldcol, w + k);
        s0 = vaddq_f32(qr__k_m1_rest4(s0, col + K4 * ldcol + j, ldcol, w + K4, K - K4), vb);
        if (j + 4 <= n) {
            vst1q_f32(y + j, s0);
        } else {
            float tmp[4];
            vst1q_f32(tmp, s0);
            memcpy(y + j, tmp, (size_t)(n - j) * sizeof(float));
        }
    }
}

/* QrF32ConvM1Fn with NEON (kern/gemm.c's band driver). */
static void qr_f32_conv_m1__neon(const QrF32ConvB *b, const float *w, float bias, float *y) {
    qr__k_f32_conv_m1(qr__k_f32_m1_cols__neon, b, w, bias, y);
}
#endif
