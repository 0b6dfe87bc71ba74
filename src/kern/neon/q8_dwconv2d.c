/* kern/neon/q8_dwconv2d — depthwise 2-D convolution of one 8-bit plane with NEON on the phase
 * planes of kern/ref/q8_dwconv2d.c: one SMLAL (int16 x int16 into int32) per tap and 4 lanes,
 * 8 flattened outputs per step. Bit-exact with qr_q8_dwconv2d__ref. */
#if defined(__aarch64__)

static void qr_q8_dwconv2d__neon(const QrQ8Win *p, const int16_t *w, int32_t *y, void *scratch) {
    enum { MAXT = 256 };
    if (p->KH * p->KW > MAXT) {
        qr_q8_dwconv2d__ref(p, w, y, scratch);
        return;
    }
    const QrKDwLayout l = qr__k_dw_layout(p);
    int16_t *planes = scratch;
    int32_t *acc = (int32_t *)((unsigned char *)scratch + (size_t)(l.plane * p->sh * p->sw) * sizeof(int16_t));
    qr__k_dw_fill(p, &l, planes, qr__k_dw_fill_row);
    int64_t off[MAXT];
    int16_t wt[MAXT];
    int nt = 0;
    for (int64_t kh = 0; kh < p->KH; kh++)
        for (int64_t kw = 0; kw < p->KW; kw++) {
            const int64_t a = kh * p->dh % p->sh, b = kw * p->dw % p->sw;
            off[nt] = (a * p->sw + b) * l.plane + kh * p->dh / p->sh * l.wq + kw * p->dw / p->sw;
            wt[nt++] = w[kh * p->KW + kw];
        }
    const int64_t n = p->OH * l.wq;
    for (int64_t q = 0; q < n; q += 8) {
        int32x4_t lo = vdupq_n_s32(0), hi = lo;
        for (int i = 0; i < nt; i++) {
            const int16x8_t v = vld1q_s16(planes + off[i] + q);
            lo = vmlal_n_s16(lo, vget_low_s16(v), wt[i]);
            hi = vmlal_high_n_s16(hi, v, wt[i]);
        }
        vst1q_s32(acc + q, lo);
        vst1q_s32(acc + q + 4, hi);
    }
    if (l.wq == p->OW) memcpy(y, acc, (size_t)(p->OH * p->OW) * sizeof *y);
    else for (int64_t oh = 0; oh < p->OH; oh++) memcpy(y + oh * p->OW, acc + oh * l.wq, (size_t)p->OW * sizeof *y);
}

#endif
