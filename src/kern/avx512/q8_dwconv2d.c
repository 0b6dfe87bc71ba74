/* kern/avx512/q8_dwconv2d — depthwise 2-D convolution of one 8-bit plane with AVX-512BW: as the
 * AVX2 kernel (phase planes, vpmaddwd tap pairs, even / odd accumulators) with 32 flattened
 * outputs per step. Bit-exact with qr_q8_dwconv2d__ref. */
#if defined(__x86_64__)

QR__K_AVX512BW static void qr_q8_dwconv2d__avx512(const QrQ8Win *p, const int16_t *w, int32_t *y, void *scratch) {
    const QrKDwLayout l = qr__k_dw_layout(p);
    QrKDwTaps t;
    if (!qr__k_dw_taps(p, &l, w, &t)) {
        qr_q8_dwconv2d__ref(p, w, y, scratch);
        return;
    }
    int16_t *planes = scratch;
    int32_t *acc = (int32_t *)((unsigned char *)scratch + (size_t)(l.plane * p->sh * p->sw) * sizeof(int16_t));
    qr__k_dw_fill(p, &l, planes, qr__k_dw_fill_row_avx2);
    const __m512i i0 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i i1 = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const int64_t nt = p->KH * t.np, n = p->OH * l.wq;
    for (int64_t q = 0; q < n; q += 32) {
        __m512i e = _mm512_setzero_si512(), o = e;
        for (int64_t i = 0; i < nt; i++) {
            const int16_t *src = planes + t.off[i] + q;
            const __m512i wv = _mm512_set1_epi32(t.wp[i]);
            e = _mm512_add_epi32(e, _mm512_madd_epi16(_mm512_loadu_si512(src), wv));
            o = _mm512_add_epi32(o, _mm512_madd_epi16(_mm512_loadu_si512(src + 1), wv));
        }
        _mm512_storeu_si512(acc + q, _mm512_permutex2var_epi32(e, i0, o));
        _mm512_storeu_si512(acc + q + 16, _mm512_permutex2var_epi32(e, i1, o));
    }
    qr__k_dw_compact(p, &l, acc, y);
}

#endif
