/* kern/avx2/q8_dwconv2d — depthwise 2-D convolution of one 8-bit plane with AVX2: the phase
 * planes of kern/ref/q8_dwconv2d.c, tap pairs by vpmaddwd (int16 x int16 summed in pairs into
 * int32: |x - xz| <= 255, |w| <= 255, nothing saturates), 16 flattened outputs per step as an
 * even and an odd accumulator interleaved at the end. Bit-exact with qr_q8_dwconv2d__ref (sums
 * mod 2^32). */
#if defined(__x86_64__)

/* qr__k_dw_fill_row with the run inside x converted 16 (stride 1) or 16 of every other byte
 * (stride 2) at a time; loads stay inside the row. */
QR__K_AVX2 static void qr__k_dw_fill_row_avx2(const QrQ8Win *p, const QrKDwLayout *l, int64_t ih, int64_t b,
                                              int16_t *d) {
    const int64_t s = p->sw;
    if (s > 2 || ih < 0 || ih >= p->H) {
        qr__k_dw_fill_row(p, l, ih, b, d);
        return;
    }
    /* columns q with 0 <= q*s + b - pw < W (s is 1 or 2: shifts, no divisions) */
    const int64_t t = b - p->pw, sh = s - 1;
    int64_t q0 = t >= 0 ? 0 : (-t + sh) >> sh;
    int64_t q1 = p->W - 1 - t < 0 ? 0 : ((p->W - 1 - t) >> sh) + 1;
    q1 = QR_MIN(QR_MAX(q1, q0), l->wq);
    q0 = QR_MIN(q0, q1);
    for (int64_t q = 0; q < q0; q++) d[q] = 0;
    const int64_t c0 = q0 * s + t, nq = q1 - q0;
    const uint8_t *xr = (const uint8_t *)p->x + ih * p->W + c0;
    /* bytes readable from xr: the rest of the plane (a vector may run into the next row; the
     * values past q1 are overwritten with zeros below, stores past wq land in the next row or
     * in the plane's slack, both written afterwards) */
    const int64_t avail = (p->H - ih) * p->W - c0;
    const __m256i vz = _mm256_set1_epi16((int16_t)p->xz);
    int64_t q = 0;
    if (s == 1) {
        for (; q < nq && q + 16 <= avail; q += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(xr + q));
            __m256i w = p->x_signed ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
            _mm256_storeu_si256((__m256i *)(d + q0 + q), _mm256_sub_epi16(w, vz));
        }
    } else {
        for (; q < nq && 2 * q + 32 <= avail; q += 16) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(xr + 2 * q));
            __m256i e = p->x_signed ? _mm256_srai_epi16(_mm256_slli_epi16(v, 8), 8)
                                    : _mm256_and_si256(v, _mm256_set1_epi16(0xff));
            _mm256_storeu_si256((__m256i *)(d + q0 + q), _mm256_sub_epi16(e, vz));
        }
    }
    const int16_t z = (int16_t)p->xz;
    if (p->x_signed) for (; q < nq; q++) d[q0 + q] = (int16_t)(((const int8_t *)xr)[q * s] - z);
    else for (; q < nq; q++) d[q0 + q] = (int16_t)(xr[q * s] - z);
    for (int64_t k = q1; k < l->wq; k++) d[k] = 0;
}

/* The taps of p as (source offset, weight pair) lists, one per kernel row: n[kh] pairs with
 * plane offsets off[kh][i] (from the planes' start) and weights wp[kh][i]. */
typedef struct QrKDwTaps {
    int np;                                    /* pairs per kernel row */
    int64_t off[QR__K_DW_MAXKW * 4];
    int32_t wp[QR__K_DW_MAXKW * 4];
} QrKDwTaps;

/* Fills t for p and w: false when the kernel is too large for it (then the ref runs). */
static bool qr__k_dw_taps(const QrQ8Win *p, const QrKDwLayout *l, const int16_t *w, QrKDwTaps *t) {
    if (p->KW > QR__K_DW_MAXKW) return false;
    QrKDwPairs pr;
    qr__k_dw_pairs(p, &pr);
    if (p->KH * pr.n > QR__K_DW_MAXKW * 4) return false;
    t->np = pr.n;
    for (int64_t kh = 0; kh < p->KH; kh++) {
        const int64_t a = kh * p->dh % p->sh, ro = kh * p->dh / p->sh * l->wq;
        for (int i = 0; i < pr.n; i++) {
            t->off[kh * pr.n + i] = (a * p->sw + pr.phase[i]) * l->plane + ro + pr.off[i];
            t->wp[kh * pr.n + i] = qr__k_dw_wpair(w + kh * p->KW, pr.a[i], pr.b[i]);
        }
    }
    return true;
}

/* The flattened accumulators acc[oh*wq + ow] compacted into y (OH, OW). */
static void qr__k_dw_compact(const QrQ8Win *p, const QrKDwLayout *l, const int32_t *acc, int32_t *y) {
    if (l->wq == p->OW) memcpy(y, acc, (size_t)(p->OH * p->OW) * sizeof *y);
    else for (int64_t oh = 0; oh < p->OH; oh++) memcpy(y + oh * p->OW, acc + oh * l->wq, (size_t)p->OW * sizeof *y);
}

QR__K_AVX2 static void qr_q8_dwconv2d__avx2(const QrQ8Win *p, const int16_t *w, int32_t *y, void *scratch) {
    const QrKDwLayout l = qr__k_dw_layout(p);
    QrKDwTaps t;
    if (!qr__k_dw_taps(p, &l, w, &t)) {
        qr_q8_dwconv2d__ref(p, w, y, scratch);
        return;
    }
    int16_t *planes = scratch;
    int32_t *acc = (int32_t *)((unsigned char *)scratch + (size_t)(l.plane * p->sh * p->sw) * sizeof(int16_t));
    qr__k_dw_fill(p, &l, planes, qr__k_dw_fill_row_avx2);
    const int64_t nt = p->KH * t.np, n = p->OH * l.wq;
    for (int64_t q = 0; q < n; q += 16) {
        __m256i e = _mm256_setzero_si256(), o = e;
        for (int64_t i = 0; i < nt; i++) {
            const int16_t *src = planes + t.off[i] + q;
            const __m256i wv = _mm256_set1_epi32(t.wp[i]);
            e = _mm256_add_epi32(e, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)src), wv));
            o = _mm256_add_epi32(o, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(src + 1)), wv));
        }
        __m256i lo = _mm256_unpacklo_epi32(e, o), hi = _mm256_unpackhi_epi32(e, o);
        _mm256_storeu_si256((__m256i *)(acc + q), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(acc + q + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    qr__k_dw_compact(p, &l, acc, y);
}

#endif
