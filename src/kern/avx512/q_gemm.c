/* kern/avx512/q_gemm — AVX-512 VNNI 8-bit GEMM micro-kernels (vpdpbusd: four u8 x s8
 * products summed into each int32 lane, no saturation), 8x32 tiles: 16 zmm accumulators.
 * The packing (unsigned shift, row/column sums, zero-point compensation) is in
 * kern/gemm.c. */
#if defined(__x86_64__)

#define QR__K_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#define QR__K_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

/* c (8, 32) (+)= a [ng][8][4] @ b [ng][32][4] (bytes). b_unsigned selects which operand
 * is the unsigned one of vpdpbusd (constant after inlining). */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_q8_vnni_body(const bool b_unsigned, int64_t ng, const unsigned char *a, const unsigned char *b, int32_t *c,
                   int64_t ldc, bool add) {
    __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    __m512i c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
#define QR__K_ROW(r)                                                                   \
    {                                                                                  \
        int32_t q;                                                                     \
        memcpy(&q, a + 4 * r, 4);                                                      \
        __m512i ar = _mm512_set1_epi32(q);                                             \
        if (b_unsigned) {                                                              \
            c##r##0 = _mm512_dpbusd_epi32(c##r##0, b0, ar);                            \
            c##r##1 = _mm512_dpbusd_epi32(c##r##1, b1, ar);                            \
        } else {                                                                       \
            c##r##0 = _mm512_dpbusd_epi32(c##r##0, ar, b0);                            \
            c##r##1 = _mm512_dpbusd_epi32(c##r##1, ar, b1);                            \
        }                                                                              \
    }
    for (int64_t g = 0; g < ng; g++) {
        __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);
        QR__K_ROW(0) QR__K_ROW(1) QR__K_ROW(2) QR__K_ROW(3) QR__K_ROW(4) QR__K_ROW(5) QR__K_ROW(6) QR__K_ROW(7)
        a += 32;
        b += 128;
    }
#undef QR__K_ROW
#define QR__K_OUT(r)                                                                   \
    {                                                                                  \
        int32_t *cr = c + r * ldc;                                                     \
        if (add) {                                                                     \
            c##r##0 = _mm512_add_epi32(c##r##0, _mm512_loadu_si512(cr));               \
            c##r##1 = _mm512_add_epi32(c##r##1, _mm512_loadu_si512(cr + 16));          \
        }                                                                              \
        _mm512_storeu_si512(cr, c##r##0);                                              \
        _mm512_storeu_si512(cr + 16, c##r##1);                                         \
    }
    QR__K_OUT(0) QR__K_OUT(1) QR__K_OUT(2) QR__K_OUT(3) QR__K_OUT(4) QR__K_OUT(5) QR__K_OUT(6) QR__K_OUT(7)
#undef QR__K_OUT
}

QR__K_VNNI static void qr__k_q8_vnni_ukr_au(int64_t ng, const void *a, const void *b, int32_t *c, int64_t ldc,
                                            bool add) {
    qr__k_q8_vnni_body(false, ng, a, b, c, ldc, add);
}

QR__K_VNNI static void qr__k_q8_vnni_ukr_bu(int64_t ng, const void *a, const void *b, int32_t *c, int64_t ldc,
                                            bool add) {
    qr__k_q8_vnni_body(true, ng, a, b, c, ldc, add);
}

/* Where the rows of a convolution's implicit B come from for one panel of columns (output
 * pixels) [n0, n0 + nr), worked out once per panel: the row (c, kh, kw) is gathered by one
 * masked load per segment, from xc + c*H*W + base[s] + (kh*dh - ph)*W + (kw*dw - pw), under the
 * lanes mask cm[s][kw] if row_ok[s][kh] (stride 2: the even bytes of a 64-byte load under
 * cm2[s][kw]). A segment is a run of lanes in one output row; with stride 1 and OW == W the
 * whole panel is one segment, its masks per lane. Masked-off bytes are never read. */
#define QR__K_VNNI_MAXK 64
typedef struct QrKVnniConvPanel {
    int ns;
    int64_t base[32];
    bool row_ok[32][QR__K_VNNI_MAXK];
    __mmask32 cm[32][QR__K_VNNI_MAXK];
    __mmask64 cm2[32][QR__K_VNNI_MAXK];
    __mmask32 rm[QR__K_VNNI_MAXK];   /* one segment: the lanes whose row kh is inside the image */
} QrKVnniConvPanel;

/* Lanes [lo, hi) of 32 as a mask (0 when empty). */
static inline uint32_t qr__k_lanes(int64_t lo, int64_t hi) {
    lo = QR_MAX(lo, 0);
    hi = QR_MIN(hi, 32);
    if (lo >= hi) return 0;
    return (uint32_t)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1));
}

/* Fills *pp for panel [n0, n0 + nr) of b (strides 1 and 2, KH and KW <= QR__K_VNNI_MAXK). */
static void qr__k_vnni_conv_panel(const QrQ8ConvB *b, int64_t n0, int nr, QrKVnniConvPanel *pp) {
    const int64_t s = b->sw;
    if (b->sh == 1 && s == 1 && b->OW == b->W) {   /* one segment, masks per lane */
        pp->ns = 1;
        pp->base[0] = n0;
        for (int64_t k = 0; k < QR_MAX(b->KH, b->KW); k++) {
            uint32_t rm = 0, cm = 0;
            for (int q = 0; q < nr; q++) {
                const int64_t p = n0 + q, oh = p / b->OW, ow = p % b->OW;
                const int64_t ih = oh - b->ph + k * b->dh, iw = ow - b->pw + k * b->dw;
                if (ih >= 0 && ih < b->H) rm |= 1u << q;
                if (iw >= 0 && iw < b->W) cm |= 1u << q;
            }
            if (k < b->KH) pp->rm[k] = (__mmask32)rm;
            if (k < b->KW) pp->cm[0][k] = (__mmask32)cm;
        }
        return;
    }
    int ns = 0;
    for (int q = 0; q < nr;) {
        const int64_t p = n0 + q, oh = p / b->OW, ow = p % b->OW;
        const int len = (int)QR_MIN((int64_t)(nr - q), b->OW - ow);
        pp->base[ns] = oh * b->sh * b->W + ow * s - (int64_t)q * s;
        for (int64_t kh = 0; kh < b->KH; kh++) {
            const int64_t ih = oh * b->sh - b->ph + kh * b->dh;
            pp->row_ok[ns][kh] = ih >= 0 && ih < b->H;
        }
        for (int64_t kw = 0; kw < b->KW; kw++) {
            const int64_t iw0 = ow * s - b->pw + kw * b->dw;   /* input column of lane q */
            /* lanes in [q, q + len) with 0 <= iw0 + (lane - q) * s < W */
            int64_t lo = q, hi = q + len;
            if (iw0 < 0) lo = QR_MAX(lo, q + (-iw0 + s - 1) / s);
            const int64_t room = b->W - 1 - iw0;
            hi = QR_MIN(hi, room < 0 ? q : q + room / s + 1);
            const uint32_t m = qr__k_lanes(lo, hi);
            pp->cm[ns][kw] = (__mmask32)m;
            uint64_t m2 = 0;
            if (s == 2)
                for (int l = 0; l < 32; l++) if (m >> l & 1) m2 |= (uint64_t)1 << (2 * l);
            pp->cm2[ns][kw] = (__mmask64)m2;
        }
        ns++;
        q += len;
    }
    pp->ns = ns;
}

/* Row (c, kh, kw) of the panel as 32 bytes (the zero point outside the image). */
QR__K_VNNI static inline __m256i qr__k_vnni_conv_row(const QrQ8ConvB *b, const QrKVnniConvPanel *pp, int64_t c,
                                                     int64_t kh, int64_t kw, __m256i pad) {
    const uintptr_t xc = (uintptr_t)b->x + (uintptr_t)(c * b->H * b->W + (kh * b->dh - b->ph) * b->W + kw * b->dw - b->pw);
    if (b->sh == 1 && b->sw == 1 && b->OW == b->W) {
        const __mmask32 m = pp->cm[0][kw] & pp->rm[kh];
        return _mm256_mask_loadu_epi8(pad, m, (const void *)(xc + (uintptr_t)pp->base[0]));
    }
    __m256i row = pad;
    for (int si = 0; si < pp->ns; si++) {
        if (!pp->row_ok[si][kh] || !pp->cm[si][kw]) continue;
        const uintptr_t r0 = xc + (uintptr_t)pp->base[si];   /* address of lane 0 (may lie outside x) */
        if (b->sw == 1) {
            row = _mm256_mask_loadu_epi8(row, pp->cm[si][kw], (const void *)r0);
        } else {
            __m256i v = _mm512_cvtepi16_epi8(_mm512_maskz_loadu_epi8(pp->cm2[si][kw], (const void *)r0));
            row = _mm256_mask_blend_epi8(pp->cm[si][kw], row, v);
        }
    }
    return row;
}

/* vnni-format B panel (32 columns, nr of them real): per K quad, four rows (shifted by
 * flipping the top bit when the mode needs it) interleaved byte-wise into [32][4]; a partial
 * panel loads its rows under a mask, a convolution gathers them from the image. Rows past K
 * are zero; columns past nr hold whatever the rows give (their results are never stored).
 * Column sums of b' (only when cb is set) by vpdpbusd with a vector of ones, stored for the
 * nr real columns only. */
QR__K_VNNI static void qr__k_q8_vnni_pack_b(const QrKQ8Job *j, int64_t k0, int64_t ng, int64_t n0, int nr, void *dst,
                                            int32_t *cb) {
    const QrQOperand *B = j->B;
    const QrQ8ConvB *conv = j->conv;
    const unsigned char *base = conv ? NULL : (const unsigned char *)B->data + n0;
    const __mmask32 cm = nr >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << nr) - 1);
    const __m256i flip = _mm256_set1_epi8(j->beta ? (char)0x80 : 0);
    unsigned char *d = dst;
    const int64_t kn = QR_MIN(j->K, k0 + 4 * ng);
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i s0 = _mm512_setzero_si512(), s1 = s0;
    int64_t c = 0, kh = 0, kw = 0;   /* row k of a convolution's B: (c, kh, kw), stepped along */
    const __m256i pad = _mm256_set1_epi8(conv ? (char)conv->zp : 0);
    QrKVnniConvPanel pp;
    const bool fast = conv && conv->sw <= 2 && conv->KH <= QR__K_VNNI_MAXK && conv->KW <= QR__K_VNNI_MAXK;
    if (conv) {
        if (fast) qr__k_vnni_conv_panel(conv, n0, nr, &pp);
        const int64_t KK = conv->KH * conv->KW;
        c = k0 / KK;
        kh = k0 % KK / conv->KW;
        kw = k0 % conv->KW;
    }
    for (int64_t k = k0; k < k0 + 4 * ng; k += 4) {
        __m256i r[4];
        for (int i = 0; i < 4; i++) {
            if (k + i >= kn) { r[i] = _mm256_setzero_si256(); continue; }
            __m256i v;
            if (fast) {
                v = qr__k_vnni_conv_row(conv, &pp, c, kh, kw, pad);
            } else if (conv) {
                uint8_t t[32];
                qr__k_q8_conv_row(conv, k + i, n0, nr, t);
                v = _mm256_mask_loadu_epi8(pad, cm, t);
            } else {
                v = nr == 32 ? _mm256_loadu_si256((const __m256i *)(base + (k + i) * B->ld))
                             : _mm256_maskz_loadu_epi8(cm, base + (k + i) * B->ld);
            }
            if (conv && ++kw == conv->KW) { kw = 0; if (++kh == conv->KH) { kh = 0; c++; } }
            r[i] = _mm256_xor_si256(v, flip);
        }
        __m256i t0 = _mm256_unpacklo_epi8(r[0], r[1]), t1 = _mm256_unpackhi_epi8(r[0], r[1]);
        __m256i t2 = _mm256_unpacklo_epi8(r[2], r[3]), t3 = _mm256_unpackhi_epi8(r[2], r[3]);
        __m256i q0 = _mm256_unpacklo_epi16(t0, t2), q1 = _mm256_unpackhi_epi16(t0, t2);   /* cols 0-3 | 16-19, 4-7 | 20-23 */
        __m256i q2 = _mm256_unpacklo_epi16(t1, t3), q3 = _mm256_unpackhi_epi16(t1, t3);   /* cols 8-11 | 24-27, 12-15 | 28-31 */
        _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(q0, q1, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 32), _mm256_permute2x128_si256(q2, q3, 0x20));
        _mm256_storeu_si256((__m256i *)(d + 64), _mm256_permute2x128_si256(q0, q1, 0x31));
        _mm256_storeu_si256((__m256i *)(d + 96), _mm256_permute2x128_si256(q2, q3, 0x31));
        d += 128;
        if (cb) {   /* column sums of the four rows: vpdpbusd against ones */
            __m512i lo = _mm512_loadu_si512(d - 128), hi = _mm512_loadu_si512(d - 64);
            if (j->mode == QR__K_Q8_AU) {   /* b' is int8 */
                s0 = _mm512_dpbusd_epi32(s0, ones, lo);
                s1 = _mm512_dpbusd_epi32(s1, ones, hi);
            } else {                         /* b' is uint8 */
                s0 = _mm512_dpbusd_epi32(s0, lo, ones);
                s1 = _mm512_dpbusd_epi32(s1, hi, ones);
            }
        }
    }
    if (cb) {
        const __mmask16 m0 = (__mmask16)cm, m1 = (__mmask16)(cm >> 16);
        _mm512_mask_storeu_epi32(cb, m0, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m0, cb), s0));
        _mm512_mask_storeu_epi32(cb + 16, m1, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m1, cb + 16), s1));
    }
}

/* vnni-format A panel (8 rows), 32 K positions at a time: each row's 32 bytes (top bit
 * flipped when the mode shifts A) are 8 quads, the 8x8 int32 transpose gives [quad][row].
 * Row sums of a' by vpsadbw (unsigned bytes; signed ones summed as byte ^ 0x80 minus 128
 * each). */
QR__K_VNNI static int64_t qr__k_q8_vnni_pack_a(const QrKQ8Job *j, int64_t p, void *dst) {
    const QrQOperand *A = j->A;
    const int64_t kend = j->K - j->K % 32;
    const bool a_signed = j->mode == QR__K_Q8_BU;   /* a' is int8 in mode BU, uint8 in mode AU */
    const __m256i flip = _mm256_set1_epi8(j->alpha ? (char)0x80 : 0), sgn = _mm256_set1_epi8((char)0x80);
    const __m256i zero = _mm256_setzero_si256();
    const unsigned char *row[8];
    __m256i sum[8];
    for (int r = 0; r < 8; r++) {
        int64_t m = p * 8 + r;
        row[r] = m < j->M ? (const unsigned char *)A->data + m * A->ld : NULL;
        sum[r] = zero;
    }
    unsigned char *d = dst;
    for (int64_t k = 0; k < kend; k += 32) {
        __m256i v[8];
        for (int r = 0; r < 8; r++) {
            v[r] = row[r] ? _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row[r] + k)), flip) : zero;
            sum[r] = _mm256_add_epi64(sum[r], _mm256_sad_epu8(a_signed ? _mm256_xor_si256(v[r], sgn) : v[r], zero));
        }
        qr__k_tr8x8(v);
        for (int i = 0; i < 8; i++) _mm256_storeu_si256((__m256i *)(d + (k / 4 + i) * 32), v[i]);
    }
    for (int r = 0; r < 8; r++) {
        int64_t m = p * 8 + r;
        if (m >= j->M) continue;
        __m128i h = _mm_add_epi64(_mm256_castsi256_si128(sum[r]), _mm256_extracti128_si256(sum[r], 1));
        int64_t s = _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
        j->ra[m] += (int32_t)(a_signed ? s - 128 * kend : s);
    }
    return kend;
}

/* QrKQ8Comp with 16 lanes of vpmulld (the low 32 bits of the product: mod 2^32). */
QR__K_VNNI static void qr__k_q8_vnni_comp(int32_t *c, int64_t n, int32_t ra, int32_t u, const int32_t *v, const int32_t *w) {
    const __m512i vra = _mm512_set1_epi32(ra), vu = _mm512_set1_epi32(u);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, v + i), vra),
                                     _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, w + i), vu));
        _mm512_mask_storeu_epi32(c + i, m, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, c + i), t));
    }
}

/* QrS32RequantFn on AVX-512: 16 lanes per step as the AVX2 kernel (vcvtps2dq rounds half to
 * even; values are in range before the saturating down-conversion), the remainder under a mask
 * (masked-off lanes are neither read nor written). */
QR__K_AVX512BW static void qr_s32_requant__avx512(int64_t n, const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                                                  const float *mult, int64_t mult_stride, int32_t zp, int32_t lo,
                                                  int32_t hi, void *y, int y_bytes) {
    const __m512 flo = _mm512_set1_ps((float)(lo - zp)), fhi = _mm512_set1_ps((float)(hi - zp));
    const __m512i vzp = _mm512_set1_epi32(zp), vb = _mm512_set1_epi32(bias ? bias[0] : 0);
    const __m512 vm = _mm512_set1_ps(mult[0]);
    const bool is_signed = lo < 0;
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i a = _mm512_maskz_loadu_epi32(m, acc + i);
        if (bias) a = _mm512_add_epi32(a, bias_stride ? _mm512_maskz_loadu_epi32(m, bias + i) : vb);
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), mult_stride ? _mm512_maskz_loadu_ps(m, mult + i) : vm);
        v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);   /* max(v, lo) gives lo for NaN */
        __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), vzp);
        if (y_bytes == 1) {
            __m128i b = is_signed ? _mm512_cvtsepi32_epi8(q) : _mm512_cvtusepi32_epi8(q);
            _mm_mask_storeu_epi8((uint8_t *)y + i, m, b);
        } else {
            __m256i h = is_signed ? _mm512_cvtsepi32_epi16(q) : _mm512_cvtusepi32_epi16(q);
            _mm256_mask_storeu_epi16((uint16_t *)y + i, m, h);
        }
    }
}

/* The end of a column panel (kern/gemm.c's qr__k_q8_panel_end) over its rows in one pass: per
 * row, the compensation c += v * ra + u * w (vpmulld: mod 2^32) and, with a fused
 * requantization, qr_s32_requant__avx512's arithmetic on the result, 2 x 16 lanes (masked for a
 * partial panel). */
QR__K_VNNI static void qr__k_q8_vnni_panel_end(const QrKQ8Job *j, int64_t i0, int64_t i1, int64_t jr, int nr,
                                               int32_t *c0, int64_t ldc, const int32_t *vv, const int32_t *ww) {
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);
    const __m512i v0 = _mm512_maskz_loadu_epi32(m0, vv), v1 = _mm512_maskz_loadu_epi32(m1, vv + 16);
    const __m512i w0 = _mm512_maskz_loadu_epi32(m0, ww), w1 = _mm512_maskz_loadu_epi32(m1, ww + 16);
    const QrQ8Requant *rq = j->rq;
    const int32_t *ra = j->ra, alpha = j->alpha;
    const QrQOperand *A = j->A;
    const bool crow = j->comp_row;
    const uint32_t cv = (uint32_t)j->v0;
    if (!rq) {
        for (int64_t m = i0; m < i1; m++) {
            int32_t *c = c0 + (m - i0) * ldc;
            __m512i t0, t1;
            if (crow) {   /* the row's constant v0 * RA[m] */
                t0 = t1 = _mm512_set1_epi32((int32_t)((uint32_t)ra[m] * cv));
            } else {
                const __m512i r = _mm512_set1_epi32(ra[m]), u = _mm512_set1_epi32(alpha - qr__k_zp_at(A, m));
                t0 = _mm512_add_epi32(_mm512_mullo_epi32(v0, r), _mm512_mullo_epi32(w0, u));
                t1 = _mm512_add_epi32(_mm512_mullo_epi32(v1, r), _mm512_mullo_epi32(w1, u));
            }
            _mm512_mask_storeu_epi32(c, m0, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m0, c), t0));
            _mm512_mask_storeu_epi32(c + 16, m1, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m1, c + 16), t1));
        }
        return;
    }
    /* the requantization's parameters in locals: the byte stores to y may alias anything */
    const int32_t *bias0 = rq->bias;
    const int64_t brs = rq->bias_rs, bcs = rq->bias_cs, mrs = rq->mult_rs, mcs = rq->mult_cs, ldy = rq->ldy;
    const float *mult0 = rq->mult;
    const int yb = rq->y_bytes;
    const bool sgn = rq->lo < 0;
    unsigned char *y0 = rq->y;
    const __m512 flo = _mm512_set1_ps((float)(rq->lo - rq->zp)), fhi = _mm512_set1_ps((float)(rq->hi - rq->zp));
    const __m512i vzp = _mm512_set1_epi32(rq->zp);
    for (int64_t m = i0; m < i1; m++) {
        const int32_t *c = c0 + (m - i0) * ldc;
        const int32_t *bias = bias0 ? bias0 + m * brs + jr * bcs : NULL;
        __m512i a[2];
        /* the row's constant v0 * RA[m] joins a scalar bias (one add per vector); otherwise the
         * compensation is added first */
        uint32_t rc = crow ? (uint32_t)ra[m] * cv : 0u;
        if (crow && bias && !bcs) rc += (uint32_t)*bias;
        if (crow) {
            a[0] = _mm512_maskz_loadu_epi32(m0, c);
            a[1] = _mm512_maskz_loadu_epi32(m1, c + 16);
        } else {
            const __m512i r = _mm512_set1_epi32(ra[m]), u = _mm512_set1_epi32(alpha - qr__k_zp_at(A, m));
            a[0] = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m0, c), _mm512_add_epi32(_mm512_mullo_epi32(v0, r), _mm512_mullo_epi32(w0, u)));
            a[1] = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m1, c + 16), _mm512_add_epi32(_mm512_mullo_epi32(v1, r), _mm512_mullo_epi32(w1, u)));
        }
        const float *mult = mult0 + m * mrs + jr * mcs;
        const __m512i bb = _mm512_set1_epi32(crow ? (int32_t)rc : bias ? *bias : 0);
        const __m512 mm = _mm512_set1_ps(*mult);
        unsigned char *y = y0 + (m * ldy + jr) * yb;
        for (int h = 0; h < 2; h++) {
            const __mmask16 mk = h ? m1 : m0;
            if (!mk) break;
            __m512i x = a[h];
            if (crow) x = _mm512_add_epi32(x, bias && bcs ? _mm512_add_epi32(bb, _mm512_maskz_loadu_epi32(mk, bias + 16 * h)) : bb);
            else if (bias) x = _mm512_add_epi32(x, bcs ? _mm512_maskz_loadu_epi32(mk, bias + 16 * h) : bb);
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(x), mcs ? _mm512_maskz_loadu_ps(mk, mult + 16 * h) : mm);
            v = _mm512_min_ps(_mm512_max_ps(v, flo), fhi);   /* max(v, lo) gives lo for NaN */
            const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), vzp);
            if (yb == 1) _mm_mask_storeu_epi8(y + 16 * h, mk, sgn ? _mm512_cvtsepi32_epi8(q) : _mm512_cvtusepi32_epi8(q));
            else _mm256_mask_storeu_epi16(y + 32 * h, mk, sgn ? _mm512_cvtsepi32_epi16(q) : _mm512_cvtusepi32_epi16(q));
        }
    }
}

static const QrKQ8Isa qr__k_q8_vnni_isa = { 8, 32, 1024, QR__K_Q8_FMT_VNNI, qr__k_q8_vnni_ukr_au, qr__k_q8_vnni_ukr_bu,
                                            qr__k_q8_vnni_pack_b, qr__k_q8_vnni_pack_a, qr__k_q8_vnni_comp,
                                            qr_s32_requant__avx512, qr__k_q8_vnni_panel_end };

/* QrQ8PackAFn on AVX-512 VNNI. */
static size_t qr_q8_pack_a__vnni(int64_t M, int64_t K, const QrQOperand *A, bool b_signed, void *dst) {
    return qr__k_q8_pack_a(&qr__k_q8_vnni_isa, M, K, A, b_signed, dst);
}

/* QrQ8GemmFn, QrQ8GemmRqFn, QrQ8ConvGemmFn on AVX-512 VNNI (vpdpbusd with the unsigned shift and compensation). */
/* Generates qr_q8_gemm__vnni, qr_q8_gemm_rq__vnni, qr_q8_conv_gemm__vnni
 * (kern/gemm.c QR__K_Q8_ENTRIES). */
QR__K_Q8_ENTRIES(vnni, qr__k_q8_vnni_isa)

#endif
