/* kern/avx2/q8_pool — max pooling of one 8-bit plane with AVX2 on the padded phase planes of
 * kern/ref/q8_pool.c (stride-2 planes split with byte shuffles): 32 outputs per step, one
 * vpmaxub / vpmaxsb per tap inside x's rows. Exact. */
#if defined(__x86_64__)

/* QrKMpEvenFn with AVX2: 32 bytes to 16 per step (vpshufb gathers each 128-bit lane's even
 * bytes into its low half, vpermq joins the halves); the last few one by one, so nothing past
 * s[2n-2] is read. */
QR__K_AVX2 static void qr__k_mp_even_bytes(const uint8_t *s, int64_t n, uint8_t *d) {
    const __m256i sh = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    int64_t q = 0;
    for (; q + 16 <= n && 2 * q + 32 <= 2 * n - 1; q += 16) {
        const __m256i v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(s + 2 * q)), sh), 0xd8);
        _mm_storeu_si128((__m128i *)(d + q), _mm256_castsi256_si128(v));
    }
    for (; q < n; q++) d[q] = s[2 * q];
}

QR__K_AVX2 static void qr_q8_maxpool2d__avx2(const QrQ8Win *p, void *y, void *scratch) {
    const QrKMpLayout l = qr__k_mp_layout(p);
    if (!l.ok) {
        qr_q8_maxpool2d__ref(p, y, scratch);
        return;
    }
    uint8_t *planes = scratch, *tail = planes + l.plane * p->sw;
    qr__k_mp_fill(p, &l, planes, qr__k_mp_even_bytes);   /* the ref copies stride-2 rows byte by byte */
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
