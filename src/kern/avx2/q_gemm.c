/* kern/avx2/q_gemm — AVX2 integer kernels: the 8-bit GEMM micro-kernel on int16
 * (vpmaddwd; no vpmaddubsw, whose int16 saturation loses products), the exact 16-bit GEMM
 * micro-kernel (byte-split B, int32 blocks widened to int64), and requantization. The
 * drivers (packing, zero points, threads) are in kern/gemm.c. */
#if defined(__x86_64__)

/* Broadcast of the int32 (a pair of int16 or a quad of bytes) at p. */
QR__K_AVX2 static inline __m256i qr__k_bcast32(const void *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

/* 8-bit GEMM, s16 format, 6x16: c (6, 16) (+)= a [ng][6][2] @ b [ng][16][2] (int16 pairs).
 * 12 accumulators + 2 B + 1 broadcast + 1 product = 16 ymm. */
QR__K_AVX2 static void qr__k_q8_avx2_ukr(int64_t ng, const void *av, const void *bv, int32_t *c, int64_t ldc,
                                         bool add) {
    const int16_t *a = av, *b = bv;
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
#define QR__K_ROW(r)                                                       \
    {                                                                      \
        __m256i ar = qr__k_bcast32(a + 2 * r);                             \
        c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(ar, b0));    \
        c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(ar, b1));    \
    }
    for (int64_t g = 0; g < ng; g++) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
        QR__K_ROW(0) QR__K_ROW(1) QR__K_ROW(2) QR__K_ROW(3) QR__K_ROW(4) QR__K_ROW(5)
        a += 12;
        b += 32;
    }
#undef QR__K_ROW
#define QR__K_OUT(r)                                                                           \
    {                                                                                          \
        __m256i *cr = (__m256i *)(c + r * ldc);                                                \
        if (add) {                                                                             \
            c##r##0 = _mm256_add_epi32(c##r##0, _mm256_loadu_si256(cr));                       \
            c##r##1 = _mm256_add_epi32(c##r##1, _mm256_loadu_si256(cr + 1));                   \
        }                                                                                      \
        _mm256_storeu_si256(cr, c##r##0);                                                      \
        _mm256_storeu_si256(cr + 1, c##r##1);                                                  \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5)
#undef QR__K_OUT
}

/* 16 bytes of an 8-bit row widened to int16. */
QR__K_AVX2 static inline __m256i qr__k_widen16(const void *p, bool sgn) {
    __m128i x = _mm_loadu_si128((const __m128i *)p);
    return sgn ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x);
}

/* s16-format B panel (16 columns, nr of them real): per K pair, two rows widened, minus the
 * column zero points, interleaved into [16][2]. Rows past K and columns past nr are zero. A
 * full panel of a matrix is loaded in place; a partial one or a convolution's rows are first
 * gathered into 16-byte rows. */
QR__K_AVX2 static void qr__k_q8_avx2_pack_b(const QrKQ8Job *j, int64_t k0, int64_t ng, int64_t n0, int nr, void *dst,
                                            int32_t *cb) {
    QR_UNUSED(cb);
    const QrQOperand *B = j->B;
    const bool sgn = B->is_signed, direct = !j->conv && nr == 16;
    const unsigned char *base = direct ? (const unsigned char *)B->data + n0 : NULL;
    __m256i zb = _mm256_setzero_si256();
    if (B->zp && B->zp_stride == 0) {
        zb = _mm256_set1_epi16((int16_t)B->zp[0]);
    } else if (B->zp) {
        int32_t z[16] = { 0 };
        memcpy(z, B->zp + n0, (size_t)nr * sizeof *z);
        __m256i z0 = _mm256_loadu_si256((const __m256i *)z), z1 = _mm256_loadu_si256((const __m256i *)(z + 8));
        zb = _mm256_permute4x64_epi64(_mm256_packs_epi32(z0, z1), _MM_SHUFFLE(3, 1, 2, 0));
    }
    /* columns past nr: value 0 and zero point 0 */
    const __m256i keep = _mm256_cmpgt_epi16(_mm256_set1_epi16((int16_t)nr), _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    int16_t *d = dst;
    const int64_t kn = QR_MIN(j->K, k0 + 2 * ng);
    uint8_t t[2][16];
    for (int64_t k = k0; k < k0 + 2 * ng; k += 2, d += 32) {
        __m256i r[2];
        for (int h = 0; h < 2; h++) {
            if (k + h >= kn) { r[h] = _mm256_setzero_si256(); continue; }
            const unsigned char *row;
            if (direct) {
                row = base + (k + h) * B->ld;
            } else {
                if (j->conv) qr__k_q8_conv_row(j->conv, k + h, n0, nr, t[h]);
                else memcpy(t[h], (const unsigned char *)B->data + (k + h) * B->ld + n0, (size_t)nr);
                row = t[h];
            }
            r[h] = _mm256_and_si256(_mm256_sub_epi16(qr__k_widen16(row, sgn), zb), keep);
        }
        __m256i lo = _mm256_unpacklo_epi16(r[0], r[1]), hi = _mm256_unpackhi_epi16(r[0], r[1]);
        _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
}

/* r[i] <- column i of the 8x8 int32 matrix whose rows are r[0..8). */
QR__K_AVX2 static inline void qr__k_tr8x8(__m256i *r) {
    __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    r[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
    r[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
    r[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
    r[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
    r[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
    r[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
    r[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
    r[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

/* s16-format A panel (6 rows), 16 K positions at a time: each row widened minus its zero
 * point (8 int32 pairs), the 8x8 int32 transpose (rows 6-7 zero) gives the [pair][row]
 * layout, stored 6 lanes wide. */
QR__K_AVX2 static int64_t qr__k_q8_avx2_pack_a(const QrKQ8Job *j, int64_t p, void *dst) {
    const QrQOperand *A = j->A;
    const int64_t kend = j->K - j->K % 16;
    const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
    int32_t *d = dst;
    const unsigned char *row[6];
    __m256i zp[6];
    for (int r = 0; r < 6; r++) {
        int64_t m = p * 6 + r;
        row[r] = m < j->M ? (const unsigned char *)A->data + m * A->ld : NULL;
        zp[r] = _mm256_set1_epi16((int16_t)(m < j->M ? qr__k_zp_at(A, m) : 0));
    }
    for (int64_t k = 0; k < kend; k += 16) {
        __m256i v[8];
        for (int r = 0; r < 6; r++)
            v[r] = row[r] ? _mm256_sub_epi16(qr__k_widen16(row[r] + k, A->is_signed), zp[r]) : _mm256_setzero_si256();
        v[6] = v[7] = _mm256_setzero_si256();
        qr__k_tr8x8(v);
        for (int i = 0; i < 8; i++) _mm256_maskstore_epi32(d + (k / 2 + i) * 6, six, v[i]);
    }
    return kend;
}

/* One step of qr_s32_requant__avx2: 32 (bytes) or 16 (halfwords) outputs from acc[0..step). */
QR__K_AVX2 static inline void qr__k_requant_step(const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                                                 const float *mult, int64_t mult_stride, __m256i vb, __m256 vm,
                                                 __m256 flo, __m256 fhi, __m256i vzp, bool is_signed, void *y,
                                                 int y_bytes) {
    __m256i q[4];
    for (int u = 0; u < (y_bytes == 1 ? 4 : 2); u++) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(acc + 8 * u));
        if (bias) a = _mm256_add_epi32(a, bias_stride ? _mm256_loadu_si256((const __m256i *)(bias + 8 * u)) : vb);
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), mult_stride ? _mm256_loadu_ps(mult + 8 * u) : vm);
        v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);   /* max(v, lo) gives lo for NaN */
        q[u] = _mm256_add_epi32(_mm256_cvtps_epi32(v), vzp);
    }
    if (y_bytes == 1) {
        __m256i p01 = _mm256_packs_epi32(q[0], q[1]), p23 = _mm256_packs_epi32(q[2], q[3]);
        __m256i b = is_signed ? _mm256_packs_epi16(p01, p23) : _mm256_packus_epi16(p01, p23);
        b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)y, b);
    } else {
        __m256i h = is_signed ? _mm256_packs_epi32(q[0], q[1]) : _mm256_packus_epi32(q[0], q[1]);
        _mm256_storeu_si256((__m256i *)y, _mm256_permute4x64_epi64(h, _MM_SHUFFLE(3, 1, 2, 0)));
    }
}

/* QrS32RequantFn on AVX2: 8 lanes of (acc + bias) -> float * mult -> clamp -> vcvtps2dq
 * (round half to even in the default MXCSR mode) -> + zp, packed 32 (bytes) or 16
 * (halfwords) at a time; the values are in range before packing (lo - zp <= v <= hi - zp),
 * so the saturating packs never change them (is_signed: lo < 0; a uint8/uint16 range has
 * lo >= 0, an int8/int16 range with lo >= 0 holds only values that both packs keep). A
 * remainder runs the same step on copies padded with zeros. */
QR__K_AVX2 static void qr_s32_requant__avx2(int64_t n, const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                                            const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi,
                                            void *y, int y_bytes) {
    const __m256 flo = _mm256_set1_ps((float)(lo - zp)), fhi = _mm256_set1_ps((float)(hi - zp));
    const __m256i vzp = _mm256_set1_epi32(zp);
    const __m256i vb = _mm256_set1_epi32(bias ? bias[0] : 0);
    const __m256 vm = _mm256_set1_ps(mult[0]);
    const bool is_signed = lo < 0;
    const int step = y_bytes == 1 ? 32 : 16;
    int64_t i = 0;
    for (; i + step <= n; i += step)
        qr__k_requant_step(acc + i, bias ? bias + i * bias_stride : NULL, bias_stride, mult + i * mult_stride,
                           mult_stride, vb, vm, flo, fhi, vzp, is_signed, (uint8_t *)y + i * y_bytes, y_bytes);
    if (i < n) {
        int32_t ta[32] = { 0 }, tb[32] = { 0 };
        float tm[32] = { 0 };
        uint8_t ty[64];
        const int64_t r = n - i;
        memcpy(ta, acc + i, (size_t)r * sizeof *ta);
        if (bias && bias_stride) memcpy(tb, bias + i, (size_t)r * sizeof *tb);
        if (mult_stride) memcpy(tm, mult + i, (size_t)r * sizeof *tm);
        qr__k_requant_step(ta, bias ? (bias_stride ? tb : bias) : NULL, bias_stride, mult_stride ? tm : mult,
                           mult_stride, vb, vm, flo, fhi, vzp, is_signed, ty, y_bytes);
        memcpy((uint8_t *)y + i * y_bytes, ty, (size_t)(r * y_bytes));
    }
}

static const QrKQ8Isa qr__k_q8_avx2_isa = { 6, 16, 512, QR__K_Q8_FMT_S16, qr__k_q8_avx2_ukr, NULL, qr__k_q8_avx2_pack_b,
                                            qr__k_q8_avx2_pack_a, NULL, qr_s32_requant__avx2, NULL };

/* QrQ8PackAFn on AVX2. */
static size_t qr_q8_pack_a__avx2(int64_t M, int64_t K, const QrQOperand *A, bool b_signed, void *dst) {
    return qr__k_q8_pack_a(&qr__k_q8_avx2_isa, M, K, A, b_signed, dst);
}

/* QrQ8GemmFn, QrQ8GemmRqFn, QrQ8ConvGemmFn on AVX2 (int16 pairs, vpmaddwd). */
/* Generates qr_q8_gemm__avx2, qr_q8_gemm_rq__avx2, qr_q8_conv_gemm__avx2
 * (kern/gemm.c QR__K_Q8_ENTRIES). */
QR__K_Q8_ENTRIES(avx2, qr__k_q8_avx2_isa)

/* 16-bit GEMM, 4x8: c (4, 8) int64 (+)= a [np][4][2] @ b [np][lo 8x2, hi 8x2]; np <= 128
 * keeps both int32 sums in range (see kern/gemm.c). */
QR__K_AVX2 static void qr__k_q16_avx2_ukr(int64_t np, const int16_t *a, const int16_t *b, int64_t *c, int64_t ldc,
                                          bool add) {
    __m256i l0 = _mm256_setzero_si256(), l1 = l0, l2 = l0, l3 = l0, h0 = l0, h1 = l0, h2 = l0, h3 = l0;
#define QR__K_ROW(r)                                                       \
    {                                                                      \
        __m256i ar = qr__k_bcast32(a + 2 * r);                             \
        l##r = _mm256_add_epi32(l##r, _mm256_madd_epi16(ar, blo));         \
        h##r = _mm256_add_epi32(h##r, _mm256_madd_epi16(ar, bhi));         \
    }
    for (int64_t p = 0; p < np; p++) {
        __m256i blo = _mm256_loadu_si256((const __m256i *)b), bhi = _mm256_loadu_si256((const __m256i *)(b + 16));
        QR__K_ROW(0) QR__K_ROW(1) QR__K_ROW(2) QR__K_ROW(3)
        a += 8;
        b += 32;
    }
#undef QR__K_ROW
#define QR__K_OUT(r)                                                                                          \
    {                                                                                                         \
        __m256i s0 = _mm256_add_epi64(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(h##r)), 8), \
                                      _mm256_cvtepi32_epi64(_mm256_castsi256_si128(l##r)));                    \
        __m256i s1 = _mm256_add_epi64(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(h##r, 1)), 8), \
                                      _mm256_cvtepi32_epi64(_mm256_extracti128_si256(l##r, 1)));               \
        __m256i *cr = (__m256i *)(c + r * ldc);                                                               \
        if (add) {                                                                                            \
            s0 = _mm256_add_epi64(s0, _mm256_loadu_si256(cr));                                                \
            s1 = _mm256_add_epi64(s1, _mm256_loadu_si256(cr + 1));                                            \
        }                                                                                                     \
        _mm256_storeu_si256(cr, s0);                                                                          \
        _mm256_storeu_si256(cr + 1, s1);                                                                      \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3)
#undef QR__K_OUT
}

/* Full 16-bit B panel (8 columns): per K pair, two rows made signed (uint16 ^ 0x8000),
 * split into lo = b & 0xff and hi = b >> 8 (arithmetic), each interleaved into [8][2].
 * Column sums of b' (when asked) from the same vectors, widened to int64 per pair. */
QR__K_AVX2 static void qr__k_q16_avx2_pack_b(const QrKQ16Job *j, int64_t k0, int64_t np, int64_t n0, int16_t *d,
                                             int64_t *cb) {
    const QrQOperand *B = j->B;
    const uint16_t *base = (const uint16_t *)B->data + n0;
    const __m128i flip = _mm_set1_epi16(B->is_signed ? 0 : (short)0x8000), lowmask = _mm_set1_epi16(0xff);
    const int64_t kn = QR_MIN(j->K, k0 + 2 * np);
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;   /* column sums, int64, columns 0-3 and 4-7 */
    for (int64_t k = k0; k < k0 + 2 * np; k += 2, d += 32) {
        __m128i r0 = k < kn ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(base + k * B->ld)), flip) : _mm_setzero_si128();
        __m128i r1 = k + 1 < kn ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(base + (k + 1) * B->ld)), flip)
                                : _mm_setzero_si128();
        __m128i l0 = _mm_and_si128(r0, lowmask), l1 = _mm_and_si128(r1, lowmask);
        __m128i h0 = _mm_srai_epi16(r0, 8), h1 = _mm_srai_epi16(r1, 8);
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(l0, l1));
        _mm_storeu_si128((__m128i *)(d + 8), _mm_unpackhi_epi16(l0, l1));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpacklo_epi16(h0, h1));
        _mm_storeu_si128((__m128i *)(d + 24), _mm_unpackhi_epi16(h0, h1));
        if (cb) {
            __m256i w = _mm256_add_epi32(_mm256_cvtepi16_epi32(r0), _mm256_cvtepi16_epi32(r1));
            s0 = _mm256_add_epi64(s0, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(w)));
            s1 = _mm256_add_epi64(s1, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(w, 1)));
        }
    }
    if (cb) {
        _mm256_storeu_si256((__m256i *)cb, _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)cb), s0));
        _mm256_storeu_si256((__m256i *)(cb + 4), _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(cb + 4)), s1));
    }
}

static const QrKQ16Isa qr__k_q16_avx2_isa = { 4, 8, qr__k_q16_avx2_ukr, qr__k_q16_avx2_pack_b };

/* QrQ16GemmFn on AVX2 (exact; see kern/gemm.c). */
static void qr_q16_gemm__avx2(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int64_t *C,
                              int64_t ldc, bool accumulate) {
    qr__k_q16_gemm(&qr__k_q16_avx2_isa, M, N, K, A, B, C, ldc, accumulate);
}

#endif
