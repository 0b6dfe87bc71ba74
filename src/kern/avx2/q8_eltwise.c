/* kern/avx2/q8_eltwise — AVX2 QuantizeLinear, DequantizeLinear and QLinearAdd on 8-bit
 * integers, 32 elements per step; remainders run the ref loops. The float operations are those
 * of kern/ref/q8_eltwise.c lane by lane (vdivps, vcvtps2dq rounding half to even in the default
 * MXCSR mode, vfmadd for fmaf), so results are bit-identical. */
#if defined(__x86_64__)

/* 32 int32 lanes (in range for an 8-bit type) packed to 32 bytes in order. */
QR__K_AVX2 static inline __m256i qr__k_pack32(const __m256i q[4], bool is_signed) {
    __m256i p01 = _mm256_packs_epi32(q[0], q[1]), p23 = _mm256_packs_epi32(q[2], q[3]);
    __m256i b = is_signed ? _mm256_packs_epi16(p01, p23) : _mm256_packus_epi16(p01, p23);
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

QR__K_AVX2 static void qr_q8_quantize__avx2(int64_t n, const float *x, float scale, int32_t zp, int32_t lo, int32_t hi,
                                            void *y) {
    const __m256 vs = _mm256_set1_ps(scale), flo = _mm256_set1_ps((float)(lo - zp)), fhi = _mm256_set1_ps((float)(hi - zp));
    const __m256i vzp = _mm256_set1_epi32(zp);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i q[4];
        for (int u = 0; u < 4; u++) {
            __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i + 8 * u), vs);
            v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);   /* max(v, lo) gives lo for NaN */
            q[u] = _mm256_add_epi32(_mm256_cvtps_epi32(v), vzp);
        }
        _mm256_storeu_si256((__m256i *)((uint8_t *)y + i), qr__k_pack32(q, lo < 0));
    }
    if (i < n) qr_q8_quantize__ref(n - i, x + i, scale, zp, lo, hi, (uint8_t *)y + i);
}

/* 8 bytes at p widened to int32. */
QR__K_AVX2 static inline __m256i qr__k_load8x32(const void *p, bool sgn) {
    __m128i b = _mm_loadl_epi64((const __m128i *)p);
    return sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

QR__K_AVX2 static void qr_q8_dequantize__avx2(int64_t n, const void *x, bool x_signed, int32_t zp, float scale,
                                              float *y) {
    const __m256 vs = _mm256_set1_ps(scale);
    const __m256i vzp = _mm256_set1_epi32(zp);
    const uint8_t *xb = x;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int u = 0; u < 4; u++) {
            __m256i d = _mm256_sub_epi32(qr__k_load8x32(xb + i + 8 * u, x_signed), vzp);
            _mm256_storeu_ps(y + i + 8 * u, _mm256_mul_ps(_mm256_cvtepi32_ps(d), vs));
        }
    if (i < n) qr_q8_dequantize__ref(n - i, xb + i, x_signed, zp, scale, y + i);
}

QR__K_AVX2 static void qr_q8_add__avx2(int64_t n, const void *a, int64_t as, const void *b, int64_t bs,
                                       const QrQ8AddParams *p, void *y) {
    const uint8_t *ab = a, *bb = b;
    const __m256 ra = _mm256_set1_ps(p->ra), rb = _mm256_set1_ps(p->rb), fixed = _mm256_set1_ps(p->fixed);
    const __m256i lo = _mm256_set1_epi32(p->lo), hi = _mm256_set1_epi32(p->hi);
    const __m256 a0 = _mm256_set1_ps((float)(p->a_signed ? (int)*(const int8_t *)a : (int)*ab));
    const __m256 b0 = _mm256_set1_ps((float)(p->b_signed ? (int)*(const int8_t *)b : (int)*bb));
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i q[4];
        for (int u = 0; u < 4; u++) {
            int64_t e = i + 8 * u;
            __m256 av = as ? _mm256_cvtepi32_ps(qr__k_load8x32(ab + e, p->a_signed)) : a0;
            __m256 bv = bs ? _mm256_cvtepi32_ps(qr__k_load8x32(bb + e, p->b_signed)) : b0;
            __m256 v;
            if (p->mode == 0) {
                v = _mm256_fmadd_ps(av, ra, _mm256_fmadd_ps(bv, rb, fixed));
            } else {
                __m256 prod = p->mode == 1 ? _mm256_mul_ps(av, ra) : _mm256_mul_ps(bv, rb);
                QR_KERN_ROUNDED(prod);   /* rounded on its own: no contraction into the add */
                __m256 k = _mm256_add_ps(fixed, prod);
                v = p->mode == 1 ? _mm256_fmadd_ps(bv, rb, k) : _mm256_fmadd_ps(av, ra, k);
            }
            q[u] = _mm256_min_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(v), lo), hi);
        }
        _mm256_storeu_si256((__m256i *)((uint8_t *)y + i), qr__k_pack32(q, p->lo < 0));
    }
    if (i < n) qr_q8_add__ref(n - i, ab + i * as, as, bb + i * bs, bs, p, (uint8_t *)y + i);
}

#endif
