/* kern/ref/f32_gemm — plain C single-precision GEMM, the oracle for SIMD variants. */

/* C (M,N) [+]= A (M,K) @ B (K,N), row-major, row strides lda/ldb/ldc. */
static void qr_f32_gemm__ref(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                             int64_t ldb, float *C, int64_t ldc, bool accumulate) {
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (!accumulate) for (int64_t j = 0; j < N; j++) c[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * lda + k];
            const float *b = B + k * ldb;
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}
