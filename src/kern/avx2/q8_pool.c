/* kern/avx2/q8_pool — max pooling of one 8-bit plane with AVX2 on the padded phase planes of
 * kern/ref/q8_pool.c: 32 outputs per step, one vpmaxub / vpmaxsb per tap inside x's rows. Exact. */
#if defined(__x86_64__)

QR__K_AVX2 static void qr_q8_maxpool2d__avx2(const QrQ8Win *p, void *y, void *scratch) {
    const QrKMpLayout l = qr__k_mp_layout(p);
    if (!l.ok) {
        qr_q8_maxpool2d__ref(p, y, scratch);
        return;
    }
    uint8_t *planes = scratch, *tail = planes + l.plane * p->sw;
    qr__k_mp_fill(p, &l, planes);
    const uint8_t *src[QR__K_MP_MAXKW];
    for (int64_t kw = 0; kw < p->KW; kw++) src[kw] = planes + (kw * p->dw) % p->sw * l.plane + (kw * p->dw) / p->sw;
    const __m256i lowest = _mm256_set1_epi8(p->x_signed ? (char)0x80 : 0);
    uint8_t *yb = y;
    for (int64_t oh = 0; oh < p->OH; oh++) {
        uint8_t *yr = yb + oh * p->OW;
        int64_t h0, h1;   /* the window rows inside x (at least one: covered) */
        qr_kern_win_taps(oh * p->sh - p->ph, p->KH, p->dh, p->H, &h0, &h1);
        for (int64_t ow = 0; ow < p->OW; ow += 32) {
            __m256i m = lowest;
            for (int64_t kh = h0; kh < h1; kh++) {
                const int64_t ro = (oh * p->sh - p->ph + kh * p->dh) * l.wq + ow;
                for (int64_t kw = 0; kw < p->KW; kw++) {
                    __m256i v = _mm256_loadu_si256((const __m256i *)(src[kw] + ro));
                    m = p->x_signed ? _mm256_max_epi8(m, v) : _mm256_max_epu8(m, v);
                }
            }
            if (ow + 32 <= p->OW) {
                _mm256_storeu_si256((__m256i *)(yr + ow), m);
            } else {
                _mm256_storeu_si256((__m256i *)tail, m);
                memcpy(yr + ow, tail, (size_t)(p->OW - ow));
            }
        }
    }
}

#endif
