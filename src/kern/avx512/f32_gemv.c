/* kern/avx512/f32_gemv — the batch-1 product against packed rows (QrF32GemvPackedFn) with
 * AVX-512: sixteen rows per zmm, one chain of fused multiply-adds per lane in k order from +0
 * per K block, four panels (64 rows) side by side so that four chains hide the multiply-add's
 * latency; the panels are read front to back, one stream each. The bits of the avx512 level's
 * QrF32GemmFn on one column (kern/gemm.c's 16-row dot products, which transpose the unpacked
 * rows in registers) and of qr_f32_gemv_packed__ref. */
#if defined(__x86_64__)

/* NP panels from row r (a multiple of 16), rows below r1 stored. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_gemv_p512(const int NP, int64_t r, int64_t r1, int64_t K, const float *Ap, const float *b, float *y,
                bool accumulate) {
    const float *a = Ap + (r / 16) * K * 16;
    __mmask16 m[4];
#pragma GCC unroll 4
    for (int p = 0; p < NP; p++) {
        const int64_t n = r1 - (r + 16 * p);
        m[p] = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
    }
    for (int64_t pc = 0; pc < K; pc += QR_KERN_F32_KC) {
        const int64_t ke = QR_MIN(K, pc + QR_KERN_F32_KC);
        __m512 acc[4];
#pragma GCC unroll 4
        for (int p = 0; p < NP; p++) acc[p] = _mm512_setzero_ps();
        for (int64_t k = pc; k < ke; k++) {
            const __m512 bk = _mm512_set1_ps(b[k]);
#pragma GCC unroll 4
            for (int p = 0; p < NP; p++) acc[p] = _mm512_fmadd_ps(_mm512_loadu_ps(a + (p * K + k) * 16), bk, acc[p]);
        }
#pragma GCC unroll 4
        for (int p = 0; p < NP; p++) {
            float *yp = y + r + 16 * p;
            const __m512 s = pc == 0 && !accumulate ? acc[p] : _mm512_add_ps(_mm512_maskz_loadu_ps(m[p], yp), acc[p]);
            _mm512_mask_storeu_ps(yp, m[p], s);
        }
    }
}

QR__K_AVX512 static void qr_f32_gemv_packed__avx512(int64_t r0, int64_t r1, int64_t K, const float *Ap, const float *b,
                                                   float *y, bool accumulate) {
    int64_t r = r0;
    for (; r + 48 < r1; r += 64) qr__k_gemv_p512(4, r, r1, K, Ap, b, y, accumulate);
    for (; r < r1; r += 16) qr__k_gemv_p512(1, r, r1, K, Ap, b, y, accumulate);
}

#endif
