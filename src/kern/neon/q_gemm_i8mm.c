/* kern/neon/q_gemm_i8mm — the AArch64 8-bit GEMM on SMMLA (FEAT_I8MM: Armv8.6, optional from
 * Armv8.2): one instruction multiplies a 2x8 int8 block of A by an 8x2 block of B into a 2x2
 * int32 block, 32 multiply-adds. Both operands are made signed (uint8 - 128) with the ss-mode
 * zero-point compensation of kern/gemm.c, so the sums are the exact int32 ones (mod 2^32) and
 * the kernel is bit-identical to qr_q8_gemm__ref. Level i8mm = dot + these GEMMs; the
 * functions carry a target attribute and run only when the hwcaps have HWCAP2_I8MM.
 *
 * mm format (QR__K_Q8_FMT_MM): K in groups of 8, each group of a panel holding its rows (A)
 * or columns (B) one after the other, 8 consecutive K values each:
 *   A panel [K/8][MR][8],  B panel [K/8][NR][8]
 * so rows 2i, 2i+1 of a group are one 16-byte SMMLA operand, and so are columns 2j, 2j+1. */
#if defined(__aarch64__)

#define QR__K_I8MM __attribute__((target("arch=armv8.2-a+i8mm")))
#define QR__K_MM_MR 8
#define QR__K_MM_NR 8

/* QrKQ8PackA, mm format: all of A panel p (K padded to 8 with zeros; rows past M zero), a' = a
 * - alpha as int8 (uint8 ^ 0x80 when alpha is 128), each row's sum of a' added to ra. */
static int64_t qr__k_q8_mm_pack_a(const QrKQ8Job *j, int64_t p, void *dst) {
    const int MR = QR__K_MM_MR;
    const uint8_t flip = j->alpha ? 0x80 : 0x00;
    int8_t *d = dst;
    memset(d, 0, (size_t)(j->kp * MR));
    for (int r = 0; r < MR; r++) {
        const int64_t m = p * MR + r;
        if (m >= j->M) break;
        const uint8_t *a = (const uint8_t *)j->A->data + m * j->A->ld;
        int32_t sum = 0;
        for (int64_t k0 = 0; k0 < j->K; k0 += 8) {   /* row r of K group k0 / 8: 8 bytes */
            const int n = (int)QR_MIN(8, j->K - k0);
            int8_t *dg = d + (k0 / 8 * MR + r) * 8;
            for (int t = 0; t < n; t++) {
                dg[t] = (int8_t)(a[k0 + t] ^ flip);
                sum += dg[t];
            }
        }
        j->ra[m] += sum;
    }
    return j->kp;
}

/* dst[q*8 + t] = rows[t][q] ^ flip for an 8x8 byte block (rows t of 8 columns q): three
 * rounds of TRN; column sums of the signed results added to sums. */
static void qr__k_mm_tr8(const uint8_t *const *rows, uint8_t flip, int8_t *dst, int32_t *sums) {
    const uint8x8_t f = vdup_n_u8(flip);
    uint8x8_t r[8];
    for (int t = 0; t < 8; t++) r[t] = veor_u8(vld1_u8(rows[t]), f);
    uint16x4_t a[8];
    for (int t = 0; t < 8; t += 2) {   /* a[t]: even columns of rows t, t+1; a[t+1]: odd ones */
        a[t] = vreinterpret_u16_u8(vtrn1_u8(r[t], r[t + 1]));
        a[t + 1] = vreinterpret_u16_u8(vtrn2_u8(r[t], r[t + 1]));
    }
    uint32x2_t b[8];   /* b[c]: columns c and c + 4 of rows 0-3 (c < 4) or 4-7 (b[c + 4]) */
    for (int h = 0; h < 8; h += 4) {
        b[h + 0] = vreinterpret_u32_u16(vtrn1_u16(a[h + 0], a[h + 2]));
        b[h + 2] = vreinterpret_u32_u16(vtrn2_u16(a[h + 0], a[h + 2]));
        b[h + 1] = vreinterpret_u32_u16(vtrn1_u16(a[h + 1], a[h + 3]));
        b[h + 3] = vreinterpret_u32_u16(vtrn2_u16(a[h + 1], a[h + 3]));
    }
    for (int c = 0; c < 4; c++) {
        const int8x8_t lo = vreinterpret_s8_u32(vtrn1_u32(b[c], b[c + 4]));   /* column c */
        const int8x8_t hi = vreinterpret_s8_u32(vtrn2_u32(b[c], b[c + 4]));   /* column c + 4 */
        vst1_s8(dst + 8 * c, lo);
        vst1_s8(dst + 8 * (c + 4), hi);
        sums[c] += vaddlv_s8(lo);
        sums[c + 4] += vaddlv_s8(hi);
    }
}

/* QrKQ8PackB, mm format: B rows [k0, k0 + 8*ng) (zero past K) x columns [n0, n0 + nr) (zero past
 * nr) as b' = b - beta (int8), from the matrix or the convolution's implicit im2col; column sums
 * of b' added to cb (not NULL). Full panels transpose 8x8 blocks (qr__k_mm_tr8). */
static void qr__k_q8_mm_pack_b(const QrKQ8Job *j, int64_t k0, int64_t ng, int64_t n0, int nr, void *dst, int32_t *cb) {
    const int NR = QR__K_MM_NR;
    const uint8_t flip = j->beta ? 0x80 : 0x00;
    const int64_t kn = QR_MIN(j->K, k0 + ng * 8) - k0;
    uint8_t tmp[8][QR__K_MM_NR], pad[QR__K_MM_NR];
    memset(pad, flip, sizeof pad);   /* rows past K: b' = 0 */
    int8_t *d = dst;
    int32_t sums[QR__K_MM_NR] = { 0 };
    if (nr < NR) memset(d, 0, (size_t)(ng * 8 * NR));
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t *rows[8];
        for (int t = 0; t < 8; t++) {
            const int64_t k = g * 8 + t;
            if (k >= kn) rows[t] = pad;
            else if (!j->conv) rows[t] = (const uint8_t *)j->B->data + (k0 + k) * j->B->ld + n0;
            else {
                qr__k_q8_conv_row(j->conv, k0 + k, n0, nr, tmp[t]);
                rows[t] = tmp[t];
            }
        }
        int8_t *dg = d + g * 8 * NR;
        if (nr == NR) {
            qr__k_mm_tr8(rows, flip, dg, sums);
            continue;
        }
        for (int t = 0; t < 8; t++)
            for (int q = 0; q < nr; q++) {
                const int8_t v = (int8_t)(rows[t][q] ^ flip);
                dg[q * 8 + t] = v;
                sums[q] += v;
            }
    }
    if (cb)
        for (int q = 0; q < nr; q++) cb[q] += sums[q];
}

/* 8-bit GEMM, mm format, 8x8: c (8, 8) (+)= a [ng][8][8] @ b [ng][8][8]^T (int8). 16 accumulators,
 * each the 2x2 block (rows 2i, 2i+1) x (columns 2j, 2j+1) as [r0c0, r0c1, r1c0, r1c1]. */
QR__K_I8MM static void qr__k_q8_i8mm_ukr(int64_t ng, const void *av, const void *bv, int32_t *c, int64_t ldc, bool add) {
    const int8_t *a = av, *b = bv;
    int32x4_t acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int q = 0; q < 4; q++) acc[i][q] = vdupq_n_s32(0);
    for (int64_t g = 0; g < ng; g++) {
        const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16), a2 = vld1q_s8(a + 32), a3 = vld1q_s8(a + 48);
        const int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32), b3 = vld1q_s8(b + 48);
#define QR__K_MM_ROW(i, ai)                           \
        acc[i][0] = vmmlaq_s32(acc[i][0], ai, b0);    \
        acc[i][1] = vmmlaq_s32(acc[i][1], ai, b1);    \
        acc[i][2] = vmmlaq_s32(acc[i][2], ai, b2);    \
        acc[i][3] = vmmlaq_s32(acc[i][3], ai, b3);
        QR__K_MM_ROW(0, a0) QR__K_MM_ROW(1, a1) QR__K_MM_ROW(2, a2) QR__K_MM_ROW(3, a3)
#undef QR__K_MM_ROW
        a += 64;
        b += 64;
    }
    for (int i = 0; i < 4; i++) {
        int32_t *r0 = c + (2 * i) * ldc, *r1 = r0 + ldc;
        for (int h = 0; h < 2; h++) {   /* columns 4h .. 4h + 3 from blocks 2h, 2h + 1 */
            const int64x2_t p = vreinterpretq_s64_s32(acc[i][2 * h]), q = vreinterpretq_s64_s32(acc[i][2 * h + 1]);
            int32x4_t lo = vreinterpretq_s32_s64(vzip1q_s64(p, q)), hi = vreinterpretq_s32_s64(vzip2q_s64(p, q));
            if (add) {
                lo = vaddq_s32(lo, vld1q_s32(r0 + 4 * h));
                hi = vaddq_s32(hi, vld1q_s32(r1 + 4 * h));
            }
            vst1q_s32(r0 + 4 * h, lo);
            vst1q_s32(r1 + 4 * h, hi);
        }
    }
}

static const QrKQ8Isa qr__k_q8_i8mm_isa = { QR__K_MM_MR, QR__K_MM_NR, 1024, QR__K_Q8_FMT_MM, qr__k_q8_i8mm_ukr, NULL,
                                            qr__k_q8_mm_pack_b, qr__k_q8_mm_pack_a, qr__k_q8_neon_comp,
                                            qr_s32_requant__neon, NULL };

/* QrQ8GemmFn, QrQ8GemmRqFn, QrQ8ConvGemmFn with SMMLA (FEAT_I8MM). */
/* Generates qr_q8_gemm__i8mm, qr_q8_gemm_rq__i8mm, qr_q8_conv_gemm__i8mm
 * (kern/gemm.c QR__K_Q8_ENTRIES). */
QR__K_Q8_ENTRIES(i8mm, qr__k_q8_i8mm_isa)

#endif
