/* kern/avx2/q8_stats — QrQ8StatsFn with AVX2: 32 values at a time as unsigned bytes u (int8
 * shifted by +128, undone on the integer results), byte min/max, Σu by sad against zero, Σu² by
 * 16-bit multiply-adds into 32-bit lanes, in chunks of 64K values (a lane then holds at most
 * 8192 squares of 255: exact); the same exact integers as the ref; the tail runs the ref. */
#if defined(__x86_64__)

QR__K_AVX2 static void qr_q8_stats__avx2(const void *p, bool sgn, int64_t n, QrQ8Stats *s) {
    const uint8_t *u = p;
    const __m256i flip = _mm256_set1_epi8(sgn ? (char)0x80 : 0), zero = _mm256_setzero_si256();
    __m256i vmn = _mm256_set1_epi8((char)0xff), vmx = zero;
    int64_t su = 0, su2 = 0, i = 0;
    const int64_t n32 = n & ~(int64_t)31;
    while (i < n32) {
        const int64_t end = QR_MIN(n32, i + 65536);
        __m256i s1 = zero, s2 = zero;
        for (; i < end; i += 32) {
            __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(u + i)), flip);
            vmn = _mm256_min_epu8(vmn, v);
            vmx = _mm256_max_epu8(vmx, v);
            s1 = _mm256_add_epi64(s1, _mm256_sad_epu8(v, zero));
            __m256i lo = _mm256_unpacklo_epi8(v, zero), hi = _mm256_unpackhi_epi8(v, zero);
            s2 = _mm256_add_epi32(s2, _mm256_add_epi32(_mm256_madd_epi16(lo, lo), _mm256_madd_epi16(hi, hi)));
        }
        int64_t q1[4];
        int32_t q2[8];
        _mm256_storeu_si256((__m256i *)q1, s1);
        _mm256_storeu_si256((__m256i *)q2, s2);
        su += q1[0] + q1[1] + q1[2] + q1[3];
        for (int k = 0; k < 8; k++) su2 += q2[k];
    }
    uint8_t bmn[32], bmx[32];
    _mm256_storeu_si256((__m256i *)bmn, vmn);
    _mm256_storeu_si256((__m256i *)bmx, vmx);
    _mm256_zeroupper();
    int32_t mn = 255, mx = 0;
    for (int k = 0; k < 32; k++) { mn = bmn[k] < mn ? bmn[k] : mn; mx = bmx[k] > mx ? bmx[k] : mx; }
    QrQ8Stats r;
    qr_q8_stats__ref(u + i, sgn, n - i, &r);
    if (i == 0) { *s = r; return; }
    /* back from u = x + 128 (int8): Σx = Σu − 128·i, Σx² = Σu² − 256·Σu + 16384·i */
    const int64_t off = sgn ? 128 : 0;
    *s = (QrQ8Stats){ su - off * i + r.s1, su2 - 2 * off * su + off * off * i + r.s2, mn - (int32_t)off, mx - (int32_t)off };
    if (i < n) { s->mn = QR_MIN(s->mn, r.mn); s->mx = QR_MAX(s->mx, r.mx); }
}

#endif
