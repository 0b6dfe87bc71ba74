/* kern/neon/q8_stats — QrQ8StatsFn with AArch64 Advanced SIMD: 16 values at a time as unsigned
 * bytes u (int8 shifted by +128, undone on the integer results), byte min/max, pairwise widening
 * adds for Σu and Σu² in chunks of 64K values (32-bit lanes: exact); the same exact integers as
 * the ref; the tail runs the ref. */
#if defined(__aarch64__)

static void qr_q8_stats__neon(const void *p, bool sgn, int64_t n, QrQ8Stats *s) {
    const uint8_t *u = p;
    const uint8x16_t flip = vdupq_n_u8(sgn ? 0x80 : 0);
    uint8x16_t vmn = vdupq_n_u8(0xff), vmx = vdupq_n_u8(0);
    int64_t su = 0, su2 = 0, i = 0;
    const int64_t n16 = n & ~(int64_t)15;
    while (i < n16) {
        const int64_t end = QR_MIN(n16, i + 65536);
        uint32x4_t s1 = vdupq_n_u32(0), s2 = vdupq_n_u32(0);
        for (; i < end; i += 16) {
            uint8x16_t v = veorq_u8(vld1q_u8(u + i), flip);
            vmn = vminq_u8(vmn, v);
            vmx = vmaxq_u8(vmx, v);
            s1 = vpadalq_u16(s1, vpaddlq_u8(v));
            s2 = vpadalq_u16(s2, vmull_u8(vget_low_u8(v), vget_low_u8(v)));
            s2 = vpadalq_u16(s2, vmull_u8(vget_high_u8(v), vget_high_u8(v)));
        }
        su += (int64_t)vaddlvq_u32(s1);
        su2 += (int64_t)vaddlvq_u32(s2);
    }
    QrQ8Stats r;
    qr_q8_stats__ref(u + i, sgn, n - i, &r);
    if (i == 0) { *s = r; return; }
    const int64_t off = sgn ? 128 : 0;
    *s = (QrQ8Stats){ su - off * i + r.s1, su2 - 2 * off * su + off * off * i + r.s2,
                      (int32_t)vminvq_u8(vmn) - (int32_t)off, (int32_t)vmaxvq_u8(vmx) - (int32_t)off };
    if (i < n) { s->mn = QR_MIN(s->mn, r.mn); s->mx = QR_MAX(s->mx, r.mx); }
}

#endif
