/* kern/ref/q_gemm — plain C integer GEMMs and requantization, the oracles for the SIMD
 * variants (which must match them bit for bit). */

static inline int32_t qr__k_q8_at(const QrQOperand *o, int64_t i) {
    return o->is_signed ? (int32_t)((const int8_t *)o->data)[i] : (int32_t)((const uint8_t *)o->data)[i];
}
static inline int32_t qr__k_q16_at(const QrQOperand *o, int64_t i) {
    return o->is_signed ? (int32_t)((const int16_t *)o->data)[i] : (int32_t)((const uint16_t *)o->data)[i];
}
static inline int32_t qr__k_zp_at(const QrQOperand *o, int64_t i) { return o->zp ? o->zp[i * o->zp_stride] : 0; }

/* C (M,N) [+]= sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n]) mod 2^32 (QrQ8GemmFn). The
 * products are formed in int64 and summed in uint32, so wrapping is defined. */
static void qr_q8_gemm__ref(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int32_t *C,
                            int64_t ldc, bool accumulate) {
    for (int64_t m = 0; m < M; m++) {
        int64_t za = qr__k_zp_at(A, m);
        for (int64_t n = 0; n < N; n++) {
            int64_t zb = qr__k_zp_at(B, n);
            uint32_t s = accumulate ? (uint32_t)C[m * ldc + n] : 0u;
            for (int64_t k = 0; k < K; k++)
                s += (uint32_t)(((int64_t)qr__k_q8_at(A, m * A->ld + k) - za) *
                                ((int64_t)qr__k_q8_at(B, k * B->ld + n) - zb));
            C[m * ldc + n] = (int32_t)s;
        }
    }
}

/* C (M,N) [+]= sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n]) exactly in int64 (QrQ16GemmFn). */
static void qr_q16_gemm__ref(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int64_t *C,
                             int64_t ldc, bool accumulate) {
    for (int64_t m = 0; m < M; m++) {
        int64_t za = qr__k_zp_at(A, m);
        for (int64_t n = 0; n < N; n++) {
            int64_t zb = qr__k_zp_at(B, n);
            int64_t s = accumulate ? C[m * ldc + n] : 0;
            for (int64_t k = 0; k < K; k++)
                s += ((int64_t)qr__k_q16_at(A, m * A->ld + k) - za) * ((int64_t)qr__k_q16_at(B, k * B->ld + n) - zb);
            C[m * ldc + n] = s;
        }
    }
}

/* Requantization (QrS32RequantFn): float multiply, clamp in float, round half to even,
 * add the zero point — the order of ops/quant.c's qr_quant_requantize. */
static void qr_s32_requant__ref(int64_t n, const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                                const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi, void *y,
                                int y_bytes) {
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    for (int64_t i = 0; i < n; i++) {
        int32_t a = (int32_t)((uint32_t)acc[i] + (uint32_t)(bias ? bias[i * bias_stride] : 0));
        float v = (float)a * mult[i * mult_stride];
        if (!(v >= flo)) v = flo;
        if (v > fhi) v = fhi;
        int32_t q = (int32_t)rintf(v) + zp;
        if (y_bytes == 1) ((uint8_t *)y)[i] = (uint8_t)q;
        else ((uint16_t *)y)[i] = (uint16_t)q;
    }
}
