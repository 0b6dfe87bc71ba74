/* kern/neon/f32_gemv — QrF32GemvM1tFn with NEON: the definition's eight lanes as two 4-lane
 * vectors per row (a multiply and a separate add per step), two rows per pass. Bit-exact with
 * qr_f32_gemv_m1t__ref. */
#if defined(__aarch64__)

static void qr_f32_gemv_m1t__neon(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a, const float *B,
                                  int64_t ldb, float *y, bool accumulate) {
    const int64_t K8 = K & ~(int64_t)7;
    float l[2][8];
    int64_t n = n0;
    for (; n < n1; n += 2) {
        const bool two = n + 1 < n1;
        const float *b0 = B + n * ldb, *b1 = two ? b0 + ldb : b0;
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, t0 = s0, t1 = s0;
        for (int64_t k = 0; k < K8; k += 8) {
            const float32x4_t a0 = vld1q_f32(a + k), a1 = vld1q_f32(a + k + 4);
            float32x4_t p0 = vmulq_f32(a0, vld1q_f32(b0 + k)), p1 = vmulq_f32(a1, vld1q_f32(b0 + k + 4));
            float32x4_t q0 = vmulq_f32(a0, vld1q_f32(b1 + k)), q1 = vmulq_f32(a1, vld1q_f32(b1 + k + 4));
            QR_KERN_ROUNDED(p0);
            QR_KERN_ROUNDED(p1);
            QR_KERN_ROUNDED(q0);
            QR_KERN_ROUNDED(q1);
            s0 = vaddq_f32(s0, p0);
            s1 = vaddq_f32(s1, p1);
            t0 = vaddq_f32(t0, q0);
            t1 = vaddq_f32(t1, q1);
        }
        vst1q_f32(l[0], s0);
        vst1q_f32(l[0] + 4, s1);
        vst1q_f32(l[1], t0);
        vst1q_f32(l[1] + 4, t1);
        for (int i = 0; K8 + i < K; i++) {   /* the K tail, lane by lane as the definition */
            float p = a[K8 + i] * b0[K8 + i], q = a[K8 + i] * b1[K8 + i];
            QR_KERN_ROUNDED(p);
            QR_KERN_ROUNDED(q);
            l[0][i] = l[0][i] + p;
            l[1][i] = l[1][i] + q;
        }
        for (int i = 0; i < (two ? 2 : 1); i++) {
            const float s = qr__k_gemv_reduce(l[i], n + i, N);
            y[n + i] = s + (accumulate ? y[n + i] : 0.0f);
        }
    }
}

#endif
