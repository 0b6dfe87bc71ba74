/* kern/ref/q8_stats — QrQ8StatsFn in plain C: the exact integer sums of a block of 8-bit values. */

static void qr_q8_stats__ref(const void *p, bool sgn, int64_t n, QrQ8Stats *s) {
    int64_t s1 = 0, s2 = 0;
    int32_t mn = 255, mx = -128;
    for (int64_t i = 0; i < n; i++) {
        int32_t x = sgn ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
        s1 += x;
        s2 += x * x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    *s = (QrQ8Stats){ s1, s2, n ? mn : 0, n ? mx : 0 };
}
