/* kern — dispatch. See kern.h.
 * Levels nest: avx2 = AVX2+FMA; avx512 = avx2 + AVX-512F/BW/VL; vnni = avx512 +
 * AVX-512 VNNI; on AArch64 dot = neon + FEAT_DotProd, i8mm = dot + FEAT_I8MM (the 8-bit GEMMs on
 * SMMLA). A level keeps the kernels of the level below where it has none of its own. */

static bool qr__k_ready;
static QrStatus qr__k_status;
static char qr__k_msg[2048];   /* the error buffer's size: the message is kept whole */

static bool qr_kern_isa_parse(const char *s, QrIsa *out) {
    static const QrIsa all[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT,
                                 QR_ISA_I8MM };
    for (int i = 0; i < QR_ARRAY_LEN(all); i++)
        if (s && strcmp(s, qr_isa_name(all[i])) == 0) { *out = all[i]; return true; }
    return false;
}

/* What a level needs that `cpu` lacks, or NULL when the CPU has it (and this build has
 * kernels for it). */
static const char *qr__k_missing(QrIsa isa, const QrCpu *cpu) {
    switch (isa) {
    case QR_ISA_REF: return NULL;
#if defined(__x86_64__)
    case QR_ISA_VNNI:
        if (!cpu->avx512vnni) return "AVX-512 VNNI";
        /* fall through */
    case QR_ISA_AVX512:
        if (!cpu->avx512f || !cpu->avx512bw || !cpu->avx512vl) return "AVX-512F/BW/VL";
        /* fall through */
    case QR_ISA_AVX2:
        if (!cpu->avx2 || !cpu->fma) return "AVX2 and FMA";
        return NULL;
#endif
#if defined(__aarch64__)
    case QR_ISA_I8MM:
        if (!cpu->i8mm) return "the int8 matrix-multiply instructions (FEAT_I8MM)";
        /* fall through */
    case QR_ISA_DOT:
        if (!cpu->dotprod) return "the dot-product instructions (FEAT_DotProd)";
        /* fall through */
    case QR_ISA_NEON:
        return cpu->neon ? NULL : "Advanced SIMD (NEON)";
#endif
    default:
        QR_UNUSED(cpu);
        return "kernels for this architecture (not in this build)";
    }
}

/* The x86-64 levels' entries over the ref's (kernels of a lower level stay where a higher one has none). */
static void qr__k_table_x86(QrIsa isa, QrKernels *k) {
#if defined(__x86_64__)
    if (isa >= QR_ISA_AVX2 && isa <= QR_ISA_VNNI) {
        k->isa = QR_ISA_AVX2;
        k->f32_gemm = qr_f32_gemm__avx2;
        k->f32_gemm_ex = qr_f32_gemm_ex__avx2;
        k->f32_conv_gemm = qr_f32_conv_gemm__avx2;
        k->f32_gemm_fused = qr_f32_gemm_fused__avx2;
        k->f32_gemm_bt_fused = qr_f32_gemm_bt_fused__avx2;
        k->f32_conv_gemm_fused = qr_f32_conv_gemm_fused__avx2;
        k->f32_conv_pack_bytes = qr_f32_conv_pack_bytes__avx2;
        k->f32_conv_pack = qr_f32_conv_pack__avx2;
        k->f32_conv_m1 = qr_f32_conv_m1__avx2;
        k->f32_conv_m1_act = NULL;   /* no fused form: the steps run after the planes' kernel */
        k->f32_gemv_m1t = qr_f32_gemv_m1t__avx2;
        k->f32_gemv_m1t_q8 = qr_f32_gemv_m1t_q8__avx2;
        k->f32_gemv_m1 = qr_f32_gemv_m1__avx2;
        k->f32_maxpool2d = qr_f32_maxpool2d__avx2;
        k->q8_gemm = qr_q8_gemm__avx2;
        k->q8_conv_gemm = qr_q8_conv_gemm__avx2;
        k->q8_gemm_rq = qr_q8_gemm_rq__avx2;
        k->q8_pack_a = qr_q8_pack_a__avx2;
        k->q16_gemm = qr_q16_gemm__avx2;
        k->s32_requant = qr_s32_requant__avx2;
        k->q8_dwconv2d = qr_q8_dwconv2d__avx2;
        k->q8_maxpool2d = qr_q8_maxpool2d__avx2;
        k->q8_quantize = qr_q8_quantize__avx2;
        k->q8_dequantize = qr_q8_dequantize__avx2;
        k->q8_add = qr_q8_add__avx2;
        k->f32_pair_stats = qr_f32_pair_stats__avx2;
        k->f32_moment_blocks = qr_f32_moment_blocks__avx2;
        k->f32_rtol = qr_f32_rtol__avx2;
        k->f32_exp_sub = qr_f32_exp_sub__avx2;
        k->f32_kl_sides = qr_f32_kl_sides__avx2;
        k->f32_sqerr_split = qr_f32_sqerr_split__avx2;
        k->f32_clip_sq = qr_f32_clip_sq__avx2;
        k->q8_stats = qr_q8_stats__avx2;
        k->f32_wquant = NULL;        /* analysis/weights.c's four-lane loop */
        k->f32_hist = qr_f32_hist__avx2;
        k->f32_fake_quant = qr_f32_fake_quant__avx2;
        k->f32_steps = qr_f32_steps__avx2;
        k->f32_softmax = qr_f32_softmax__avx2;   /* the avx512 level keeps these three */
        k->f32_map = qr_f32_map__avx2;
        k->f32_layernorm = qr_f32_layernorm__avx2;
    }
    if (isa >= QR_ISA_AVX512 && isa <= QR_ISA_VNNI) {
        k->isa = QR_ISA_AVX512;
        k->f32_gemm = qr_f32_gemm__avx512;
        k->f32_gemm_ex = qr_f32_gemm_ex__avx512;
        k->f32_conv_gemm = qr_f32_conv_gemm__avx512;
        k->q8_dwconv2d = qr_q8_dwconv2d__avx512;
        k->s32_requant = qr_s32_requant__avx512;
        k->f32_gemm_fused = qr_f32_gemm_fused__avx512;
        k->f32_gemm_bt_fused = qr_f32_gemm_bt_fused__avx512;
        k->f32_maxpool2d = qr_f32_maxpool2d__avx512;
        k->f32_pair_stats = qr_f32_pair_stats__avx512;   /* the avx2 kernel's bits, fused passes */
        k->f32_moment_blocks = qr_f32_moment_blocks__avx512;   /* the avx2 kernel's bits, blocks side by side */
        k->f32_conv_gemm_fused = qr_f32_conv_gemm_fused__avx512;
        k->f32_conv_pack_bytes = qr_f32_conv_pack_bytes__avx512;
        k->f32_conv_pack = qr_f32_conv_pack__avx512;
        k->f32_steps = qr_f32_steps__avx512;
        k->f32_exp_sub = qr_f32_exp_sub__avx512;
        k->f32_kl_sides = qr_f32_kl_sides__avx512;
        k->f32_sqerr_split = qr_f32_sqerr_split__avx512;
        k->f32_clip_sq = qr_f32_clip_sq__avx512;
        k->f32_wquant = qr_f32_wquant__avx512;
        k->f32_tie_scan = qr_f32_tie_scan__avx512;
        k->f32_conv_m1 = qr_f32_conv_m1__avx512;
        k->f32_conv_m1_act = qr_f32_conv_m1_act__avx512;
        k->f32_gemv_packed = qr_f32_gemv_packed__avx512;
        k->q8_to_nhwc = qr_q8_to_nhwc__avx512;
    }
    if (isa == QR_ISA_VNNI) {
        k->isa = QR_ISA_VNNI;
        k->q8_gemm = qr_q8_gemm__vnni;
        k->q8_conv_gemm = qr_q8_conv_gemm__vnni;
        k->q8_gemm_rq = qr_q8_gemm_rq__vnni;
        k->q8_pack_a = qr_q8_pack_a__vnni;
        k->q8_conv_nhwc_pack = qr_q8_conv_nhwc_pack__vnni;
        k->q8_conv_nhwc_rq = qr_q8_conv_nhwc_rq__vnni;
        k->q8_dwconv2d_rq = qr_q8_dwconv2d_rq__vnni;
    }
#else
    QR_UNUSED(isa);
    QR_UNUSED(k);
#endif
}

/* The AArch64 levels' entries over the ref's. */
static void qr__k_table_arm(QrIsa isa, QrKernels *k) {
#if defined(__aarch64__)
    if (isa == QR_ISA_NEON || isa == QR_ISA_DOT || isa == QR_ISA_I8MM) {
        k->isa = QR_ISA_NEON;
        k->f32_gemm = qr_f32_gemm__neon;
        k->f32_conv_m1 = qr_f32_conv_m1__neon;
        k->f32_conv_m1_act = NULL;
        k->f32_gemv_m1t = qr_f32_gemv_m1t__neon;
        k->q8_gemm = qr_q8_gemm__neon;
        k->q8_conv_gemm = qr_q8_conv_gemm__neon;
        k->q8_gemm_rq = qr_q8_gemm_rq__neon;
        k->q8_pack_a = qr_q8_pack_a__neon;
        k->q8_dwconv2d = qr_q8_dwconv2d__neon;
        k->s32_requant = qr_s32_requant__neon;
        k->f32_exp_sub = qr_f32_exp_sub__neon;
        k->f32_kl_sides = qr_f32_kl_sides__neon;
        k->q8_stats = qr_q8_stats__neon;
        k->f32_wquant = NULL;        /* analysis/weights.c's four-lane loop */
    }
    if (isa == QR_ISA_DOT || isa == QR_ISA_I8MM) {
        k->isa = QR_ISA_DOT;
        k->q8_gemm = qr_q8_gemm__dot;
        k->q8_conv_gemm = qr_q8_conv_gemm__dot;
        k->q8_gemm_rq = qr_q8_gemm_rq__dot;
        k->q8_pack_a = qr_q8_pack_a__dot;
    }
    if (isa == QR_ISA_I8MM) {
        k->isa = QR_ISA_I8MM;
        k->q8_gemm = qr_q8_gemm__i8mm;
        k->q8_conv_gemm = qr_q8_conv_gemm__i8mm;
        k->q8_gemm_rq = qr_q8_gemm_rq__i8mm;
    }
#else
    QR_UNUSED(isa);
    QR_UNUSED(k);
#endif
}

static QrStatus qr_kern_table(QrIsa isa, QrKernels *k) {
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    const char *miss = qr__k_missing(isa, &cpu);
    if (miss) return qr_errf(QR_ERR_UNSUPPORTED, "kernel level '%s' needs %s, which this CPU lacks", qr_isa_name(isa), miss);
    *k = (QrKernels){
        .isa = QR_ISA_REF,
        .f32_gemm = qr_f32_gemm__ref,
        .f32_gemm_ex = qr_f32_gemm_ex__ref,
        .f32_conv_gemm = qr_f32_conv_gemm__ref,
        .f32_gemm_fused = qr_f32_gemm_fused__ref,
        .f32_gemm_bt_fused = qr_f32_gemm_bt_fused__ref,
        .f32_conv_gemm_fused = qr_f32_conv_gemm_fused__ref,
        .f32_conv_pack_bytes = qr_f32_conv_pack_bytes__ref,
        .f32_conv_pack = qr_f32_conv_pack__ref,
        .f32_conv_m1 = qr_f32_conv_m1__ref,
        .f32_conv_m1_act = qr_f32_conv_m1_act__ref,
        .f32_gemv_m1t = qr_f32_gemv_m1t__ref,
        .f32_gemv_m1t_q8 = qr_f32_gemv_m1t_q8__ref,
        .f32_gemv_m1 = qr_f32_gemv_m1__ref,
        .f32_maxpool2d = qr_f32_maxpool2d__ref,
        .q8_gemm = qr_q8_gemm__ref,
        .q8_conv_gemm = qr_q8_conv_gemm__ref,
        .q8_gemm_rq = qr_q8_gemm_rq__ref,
        .q8_pack_a = NULL,
        .q8_conv_nhwc_pack = NULL,
        .q8_conv_nhwc_rq = NULL,
        .q8_to_nhwc = qr_q8_to_nhwc__ref,
        .q16_gemm = qr_q16_gemm__ref,
        .s32_requant = qr_s32_requant__ref,
        .s64_requant = qr_s64_requant__ref,
        .q8_dwconv2d = qr_q8_dwconv2d__ref,
        .q8_dwconv2d_rq = NULL,
        .q8_maxpool2d = qr_q8_maxpool2d__ref,
        .q8_quantize = qr_q8_quantize__ref,
        .q8_dequantize = qr_q8_dequantize__ref,
        .q8_add = qr_q8_add__ref,
        .f32_pair_stats = qr_f32_pair_stats__ref,
        .f32_moment_blocks = qr_f32_moment_blocks__ref,
        .f32_rtol = qr_f32_rtol__ref,
        .f32_exp_sub = qr_f32_exp_sub__ref,
        .f32_kl_sides = qr_f32_kl_sides__ref,
        .f32_sqerr_split = qr_f32_sqerr_split__ref,
        .f32_clip_sq = qr_f32_clip_sq__ref,
        .f32_wquant = qr_f32_wquant__ref,
        .f32_tie_scan = qr_f32_tie_scan__ref,
        .q8_stats = qr_q8_stats__ref,
        .f32_hist = qr_f32_hist__ref,
        .f32_fake_quant = qr_f32_fake_quant__ref,
        .f32_steps = qr_f32_steps__ref,
        .f32_softmax = qr_f32_softmax__ref,
        .f32_map = qr_f32_map__ref,
        .f32_layernorm = qr_f32_layernorm__ref,
        .ort_wide = cpu.avx512f,
    };
    const char *ow = getenv("QR_ORT_SOFTMAX");
    if (ow && strcmp(ow, "wide") == 0) k->ort_wide = true;
    if (ow && strcmp(ow, "narrow") == 0) k->ort_wide = false;
    qr__k_table_x86(isa, k);
    qr__k_table_arm(isa, k);
    return QR_OK;
}

/* The best level this CPU has. */
static QrIsa qr__k_best(void) {
    static const QrIsa order[] = { QR_ISA_VNNI, QR_ISA_AVX512, QR_ISA_AVX2, QR_ISA_I8MM, QR_ISA_DOT, QR_ISA_NEON };
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    for (int i = 0; i < QR_ARRAY_LEN(order); i++)
        if (!qr__k_missing(order[i], &cpu)) return order[i];
    return QR_ISA_REF;
}

static QrStatus qr_kern_init(void) {
    if (qr__k_ready) {
        if (qr__k_status != QR_OK) return qr_errf(qr__k_status, "%s", qr__k_msg);
        return QR_OK;
    }
    QrIsa best = qr__k_best(), want = best;
    const char *force = getenv("QR_ISA");
    qr__k_status = QR_OK;
    if (force && *force) {
        if (!qr_kern_isa_parse(force, &want)) {
            qr__k_status = qr_errf(QR_ERR_UNSUPPORTED, "QR_ISA='%s' is not one of ref, avx2, avx512, vnni, neon, dot, i8mm",
                                      force);
            want = best;
        } else {
            QrKernels tmp;
            if (qr_kern_table(want, &tmp) != QR_OK) {
                qr__k_status = qr_err_wrap(QR_ERR_UNSUPPORTED, "QR_ISA=%s (using %s)", force, qr_isa_name(best));
                want = best;
            }
        }
        if (qr__k_status != QR_OK) snprintf(qr__k_msg, sizeof qr__k_msg, "%s", qr_err_msg());
    }
    if (qr_kern_table(want, &qr_kern) != QR_OK) qr_kern_table(QR_ISA_REF, &qr_kern);
    qr__k_ready = true;
    return qr__k_status;
}

static QrIsa qr_kern_isa(void) { qr_kern_init(); return qr_kern.isa; }
