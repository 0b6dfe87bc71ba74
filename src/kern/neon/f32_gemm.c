/* kern/neon/f32_gemm — single-precision GEMM with AArch64 Advanced SIMD (NEON, baseline on
 * every AArch64 CPU). Same contract as qr_f32_gemm__ref (QrF32GemmFn); compiled only for
 * aarch64. Products and sums are rounded separately (fmul + fadd, no fused multiply-add) and
 * every C element sums its K products in the same order as ref, so results are bit-identical
 * to ref: the quantized paths then round exactly as on x86-64. GCC's vmulq/vaddq are plain
 * vector operators, so this needs the build's -ffp-contract=off (Makefile: A64_FLAGS); the
 * tests compare with ref bit for bit and catch a build without it. */
#if defined(__aarch64__)
#include <arm_neon.h>

/* C rows i0..i0+R-1 (R <= 4), columns j0..j0+7: 4x8 register tile, K products in order. */
static inline void qr__k_gemm_tile_r8__neon(int R, int64_t K, const float *A, int64_t lda, const float *B,
                                              int64_t ldb, float *C, int64_t ldc, bool accumulate) {
    float32x4_t c0[4], c1[4];
    for (int r = 0; r < R; r++) {
        c0[r] = accumulate ? vld1q_f32(C + r * ldc) : vdupq_n_f32(0.0f);
        c1[r] = accumulate ? vld1q_f32(C + r * ldc + 4) : vdupq_n_f32(0.0f);
    }
    for (int64_t k = 0; k < K; k++) {
        const float32x4_t b0 = vld1q_f32(B + k * ldb), b1 = vld1q_f32(B + k * ldb + 4);
        for (int r = 0; r < R; r++) {
            const float32x4_t a = vdupq_n_f32(A[r * lda + k]);
            c0[r] = vaddq_f32(c0[r], vmulq_f32(a, b0));
            c1[r] = vaddq_f32(c1[r], vmulq_f32(a, b1));
        }
    }
    for (int r = 0; r < R; r++) {
        vst1q_f32(C + r * ldc, c0[r]);
        vst1q_f32(C + r * ldc + 4, c1[r]);
    }
}

/* C (M,N) [+]= A (M,K) @ B (K,N), row-major, row strides lda/ldb/ldc (elements).
 * Tiles of 4 rows x 8 columns, then 4-column and scalar column tails; never reads or
 * writes outside the given rows/columns. */
static void qr_f32_gemm__neon(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                              int64_t ldb, float *C, int64_t ldc, bool accumulate) {
    for (int64_t i = 0; i < M; i += 4) {
        const int R = (int)QR_MIN(4, M - i);
        const float *a = A + i * lda;
        float *c = C + i * ldc;
        int64_t j = 0;
        for (; j + 8 <= N; j += 8) qr__k_gemm_tile_r8__neon(R, K, a, lda, B + j, ldb, c + j, ldc, accumulate);
        for (; j + 4 <= N; j += 4) {
            float32x4_t acc[4];
            for (int r = 0; r < R; r++) acc[r] = accumulate ? vld1q_f32(c + r * ldc + j) : vdupq_n_f32(0.0f);
            for (int64_t k = 0; k < K; k++) {
                const float32x4_t b = vld1q_f32(B + k * ldb + j);
                for (int r = 0; r < R; r++) acc[r] = vaddq_f32(acc[r], vmulq_f32(vdupq_n_f32(a[r * lda + k]), b));
            }
            for (int r = 0; r < R; r++) vst1q_f32(c + r * ldc + j, acc[r]);
        }
        for (; j < N; j++)
            for (int r = 0; r < R; r++) {
                float s = accumulate ? c[r * ldc + j] : 0.0f;
                for (int64_t k = 0; k < K; k++) s += a[r * lda + k] * B[k * ldb + j];
                c[r * ldc + j] = s;
            }
    }
}
#endif
