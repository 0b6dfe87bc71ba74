/* tests/quant — the quantization helpers and operators of src/ops/qdq.c, run directly through
 * their op table entries on hand-made tensors. Expected values come from hand computation or a
 * plain reference formula written here (dequantize -> exact arithmetic -> rint -> clamp), with
 * scales chosen as powers of two where ORT's float evaluation order would otherwise matter. */

/* ---- small harness: tensors freed per test, ops run through shape + exec ---------------- */

#define QT_Q_MAX_TENSORS 64
static QrTensor *qt_q_bag[QT_Q_MAX_TENSORS];
static int qt_q_nbag;

static void qt_q_cleanup(void) {
    for (int i = 0; i < qt_q_nbag; i++) { qr_tensor_free_data(qt_q_bag[i]); free(qt_q_bag[i]); }
    qt_q_nbag = 0;
}

/* A tensor of dtype/shape holding vals (converted with qr_tensor_set_f64); vals may be NULL. */
static QrTensor *qt_q_t(QrDType dt, int rank, const int64_t *dims, const double *vals) {
    QrTensor *t = calloc(1, sizeof *t);
    if (!t || qt_q_nbag == QT_Q_MAX_TENSORS) { free(t); return NULL; }
    qt_q_bag[qt_q_nbag++] = t;
    if (qr_tensor_set_shape(t, dt, rank, dims) != QR_OK || qr_tensor_alloc_data(t) != QR_OK) return NULL;
    for (int64_t i = 0; vals && i < t->numel; i++) qr_tensor_set_f64(t, i, vals[i]);
    return t;
}

static QrTensor *qt_q_scalar(QrDType dt, double v) { return qt_q_t(dt, 0, NULL, &v); }
static QrTensor *qt_q_vec(QrDType dt, int64_t n, const double *vals) { return qt_q_t(dt, 1, &n, vals); }

static QrAttr qt_q_ai(const char *name, int64_t v) {
    QrAttr a = { 0 }; a.name = name; a.type = QR_ATTR_INT; a.i = v; return a;
}
static QrAttr qt_q_af(const char *name, float v) {
    QrAttr a = { 0 }; a.name = name; a.type = QR_ATTR_FLOAT; a.f = v; return a;
}
static QrAttr qt_q_as(const char *name, const char *v) {
    QrAttr a = { 0 }; a.name = name; a.type = QR_ATTR_STRING; a.s = v; a.s_len = strlen(v); return a;
}
static QrAttr qt_q_aints(const char *name, int n, int64_t *v) {
    QrAttr a = { 0 }; a.name = name; a.type = QR_ATTR_INTS; a.n = n; a.ints = v; return a;
}

/* Runs domain.op on `in` (NULL = omitted input); the output tensor goes into the bag. */
static QrStatus qt_q_run(const char *domain, const char *op, QrAttr *attrs, int n_attr, const QrTensor **in,
                         int n_in, QrTensor **out, int n_out) {
    const QrOpDef *d = qr_op_find(domain, op);
    if (!d) return qr_errf(QR_ERR_UNSUPPORTED, "no operator %s.%s", domain, op);
    QrNode node = { 0 };
    node.name = "t";
    node.op_type = op;
    node.domain = domain;
    node.opset = 21;
    node.def = d;
    node.n_in = n_in;
    node.n_out = n_out;
    node.attr = attrs;
    node.n_attr = n_attr;
    QrGraph g = { 0 };
    QrArena scratch = { 0 };
    QrTensor *outs[4] = { 0 };
    for (int k = 0; k < n_out; k++) {
        outs[k] = calloc(1, sizeof(QrTensor));
        if (!outs[k] || qt_q_nbag == QT_Q_MAX_TENSORS) { free(outs[k]); return qr_errf(QR_ERR_NOMEM, "bag"); }
        qt_q_bag[qt_q_nbag++] = outs[k];
        out[k] = outs[k];
    }
    QrOpCtx c = { &g, &node, n_in, n_out, in, outs, &scratch, NULL, NULL, NULL };
    QrStatus st = d->shape(&c);
    for (int k = 0; st == QR_OK && k < n_out; k++) st = qr_tensor_alloc_data(outs[k]);
    if (st == QR_OK) st = d->exec(&c);
    qr_arena_free(&scratch);
    return st;
}

/* Spec-order reference: clamp(rint(v) + zp) computed in double from an exact value. */
static int64_t qt_q_ref_q(double v, int64_t zp, int64_t lo, int64_t hi) {
    double r = nearbyint(v) + (double)zp;
    return r < lo ? lo : r > hi ? hi : (int64_t)r;
}

/* ---- core helpers ---------------------------------------------------------------------- */

static void test_quant_round_helpers(void) {
    const float in[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4999998f, 3.5f, -3.5f, 1e9f };
    const float want[] = { 0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 2.f, 4.f, -4.f, 1e9f };
    for (int i = 0; i < QR_ARRAY_LEN(in); i++) QT_CHECKF(qr_quant_round_f32(in[i]) == want[i], "i=%d", i);
    QrQuantRange u8, s8, s4, u16;
    QT_CHECK(qr_quant_range(QR_DT_U8, &u8) && qr_quant_range(QR_DT_S8, &s8) && qr_quant_range(QR_DT_S4, &s4) &&
             qr_quant_range(QR_DT_U16, &u16));
    QT_CHECK(!qr_quant_range(QR_DT_F32, &u8) && !qr_quant_range(QR_DT_S32, &u8));
    /* x / scale exactly .5 -> even, then the zero point */
    QT_CHECK(qr_quant_quantize_f32(5.0f, 2.0f, 0, u8) == 2);     /* 2.5 -> 2 */
    QT_CHECK(qr_quant_quantize_f32(7.0f, 2.0f, 0, u8) == 4);     /* 3.5 -> 4 */
    QT_CHECK(qr_quant_quantize_f32(5.0f, 2.0f, 1, u8) == 3);     /* round first, then + zp */
    QT_CHECK(qr_quant_quantize_f32(-5.0f, 2.0f, -3, s8) == -5);  /* -2.5 -> -2, -2 - 3 */
    QT_CHECK(qr_quant_quantize_f32(-7.0f, 2.0f, -3, s8) == -7);  /* -3.5 -> -4 */
    /* saturation at both ends, with a negative zero point shifting the window */
    QT_CHECK(qr_quant_quantize_f32(1000.0f, 1.0f, 10, u8) == 255);
    QT_CHECK(qr_quant_quantize_f32(-1000.0f, 1.0f, 10, u8) == 0);
    QT_CHECK(qr_quant_quantize_f32(-125.0f, 1.0f, -3, s8) == -128);
    QT_CHECK(qr_quant_quantize_f32(-124.6f, 1.0f, -3, s8) == -128);
    QT_CHECK(qr_quant_quantize_f32(130.0f, 1.0f, -3, s8) == 127);
    QT_CHECK(qr_quant_quantize_f32(129.5f, 1.0f, -3, s8) == 127);
    QT_CHECK(qr_quant_quantize_f32(8.4f, 1.0f, 0, s4) == 7 && qr_quant_quantize_f32(-8.6f, 1.0f, 0, s4) == -8);
    QT_CHECK(qr_quant_quantize_f32(70000.0f, 1.0f, 0, u16) == 65535);
    QT_CHECK(qr_quant_quantize_f32(NAN, 1.0f, 7, u8) == 0);
    QT_CHECK(qr_quant_quantize_f32(INFINITY, 1.0f, 7, u8) == 255 && qr_quant_quantize_f32(-INFINITY, 1.0f, 7, u8) == 0);
    QT_CHECK(qr_quant_quantize_f32(1.0f, 0.0f, 0, s8) == 127);  /* x / 0 = +inf saturates */
    /* a true float32 division, not a multiplication by the reciprocal: here x / s is exactly -187.5
     * (a tie, -> -188) while x * (1 / s) is -187.49998 (-> -187) */
    volatile float x = -0x1.48ccccp+4f, s = 0x1.c0ebeep-4f;
    QT_CHECK(x / s == -187.5f && x * (1.0f / s) != -187.5f);
    QrQuantRange s16;
    qr_quant_range(QR_DT_S16, &s16);
    QT_CHECK(qr_quant_quantize_f32(x, s, 0, s16) == -188);
    /* requantization: float(acc) * mult, rounding ties to even */
    QT_CHECK(qr_quant_requantize(5, 0.5f, 0, u8) == 2);
    QT_CHECK(qr_quant_requantize(7, 0.5f, 0, u8) == 4);
    QT_CHECK(qr_quant_requantize(-7, 0.5f, -100, s8) == -104);
    QT_CHECK(qr_quant_requantize(1 << 20, 1.0f, 0, s8) == 127 && qr_quant_requantize(-(1 << 20), 1.0f, 0, s8) == -128);
    QT_CHECK(qr_quant_multiplier(0.5f, 0.25f, 2.0f) == 0.0625f);
    float sc;
    int32_t zp;
    const float dq[] = { 0.f, 2.f, -3.f, -2.5f, 1.34f, 0.5f };
    qr_op_dynamic_params(dq, 6, &sc, &zp);
    QT_CHECK(sc == 5.0f / 255.0f && zp == 153);
    const float zeros[3] = { 0 };
    qr_op_dynamic_params(zeros, 3, &sc, &zp);
    QT_CHECK(sc == 1.0f && zp == 0);
}

static void test_quant_layout(void) {
    int64_t xd[3] = { 2, 5, 3 }, sd[3] = { 2, 3, 3 }, pd = 5, bad[3] = { 2, 2, 3 };
    QrTensor *x = qt_q_t(QR_DT_F32, 3, xd, NULL), *sb = qt_q_t(QR_DT_F32, 3, sd, NULL);
    QrTensor *sa = qt_q_t(QR_DT_F32, 1, &pd, NULL), *one = qt_q_scalar(QR_DT_F32, 1);
    QrTensor *sbad = qt_q_t(QR_DT_F32, 3, bad, NULL);
    QT_CHECK(x && sb && sa && one && sbad);
    QrNode node = { 0 };
    node.name = "t";
    node.op_type = "QuantizeLinear";
    QrOpCtx c = { 0 };
    c.node = &node;
    QrQuantLayout l;
    QT_OK(qr_op_layout(&c, x, one, 7, 0, &l));           /* per-tensor ignores the axis */
    QT_CHECK(l.outer == 1 && l.axis_len == 1 && l.inner == 30 && l.so == 0 && l.sk == 0 && l.sn == 0);
    QT_OK(qr_op_layout(&c, x, sa, -2, 0, &l));           /* per-axis, negative axis */
    QT_CHECK(l.outer == 2 && l.axis_len == 5 && l.inner == 3 && qr_op_layout_index(&l, 1, 4, 2) == 4);
    QT_OK(qr_op_layout(&c, x, sb, 1, 2, &l));            /* blocked: ceil(5 / 2) = 3 blocks */
    QT_CHECK(qr_op_layout_index(&l, 1, 4, 2) == 1 * 9 + 2 * 3 + 2);
    QT_CHECK(qr_op_layout_index(&l, 0, 3, 1) == 1 * 3 + 1);
    QT_CHECK(qr_op_layout(&c, x, sbad, 1, 2, &l) == QR_ERR_SHAPE);
    QT_CHECK(qr_op_layout(&c, x, sa, 0, 0, &l) == QR_ERR_SHAPE);
    QT_CHECK(qr_op_layout(&c, x, sa, 3, 0, &l) == QR_ERR_INVALID);
    QT_CHECK(qr_op_layout(&c, x, sb, 1, -1, &l) == QR_ERR_INVALID);
    qt_q_cleanup();
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------------------------- */

static void test_quant_quantize_per_tensor(void) {
    const double xv[] = { 0, 1, 2.5, 3, 5, 7, -5, -7, 254, 300, -1000, 1e30, -0.5, 0.5, 1.5 };
    int64_t n = QR_ARRAY_LEN(xv);
    QrTensor *x = qt_q_vec(QR_DT_F32, n, xv), *s = qt_q_scalar(QR_DT_F32, 2.0), *zu = qt_q_scalar(QR_DT_U8, 3),
             *zs = qt_q_scalar(QR_DT_S8, -3), *y;
    QT_CHECK(x && s && zu && zs);
    const QrTensor *in[3] = { x, s, zu };
    QT_OK(qt_q_run("", "QuantizeLinear", NULL, 0, in, 3, &y, 1));
    QT_CHECK(y->dtype == QR_DT_U8 && y->numel == n);
    for (int64_t i = 0; i < n; i++)
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(xv[i] / 2, 3, 0, 255), "u8 i=%lld got %lld", (long long)i,
                  (long long)qr_tensor_get_i64(y, i));
    in[2] = zs;
    QT_OK(qt_q_run("", "QuantizeLinear", NULL, 0, in, 3, &y, 1));
    QT_CHECK(y->dtype == QR_DT_S8);
    for (int64_t i = 0; i < n; i++)
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(xv[i] / 2, -3, -128, 127), "s8 i=%lld", (long long)i);
    /* no zero point -> uint8; output_dtype picks the type when the zero point is absent */
    QT_OK(qt_q_run("", "QuantizeLinear", NULL, 0, in, 2, &y, 1));
    QT_CHECK(y->dtype == QR_DT_U8 && qr_tensor_get_i64(y, 2) == 1 && qr_tensor_get_i64(y, 6) == 0);
    QrAttr od = qt_q_ai("output_dtype", QR_DT_S16);
    QT_OK(qt_q_run("", "QuantizeLinear", &od, 1, in, 2, &y, 1));
    QT_CHECK(y->dtype == QR_DT_S16 && qr_tensor_get_i64(y, 9) == 150 && qr_tensor_get_i64(y, 11) == 32767 &&
             qr_tensor_get_i64(y, 10) == -500);
    QT_CHECK(qt_q_run("", "QuantizeLinear", &od, 1, in, 3, &y, 1) == QR_ERR_INVALID);  /* mismatch with zp */
    /* float16 input with float16 scale */
    QrTensor *xh = qt_q_vec(QR_DT_F16, n, xv), *sh = qt_q_scalar(QR_DT_F16, 2.0);
    const QrTensor *inh[3] = { xh, sh, zs };
    QT_OK(qt_q_run("", "QuantizeLinear", NULL, 0, inh, 3, &y, 1));
    for (int64_t i = 0; i < n; i++) {
        double xr = qr_f16_to_f32(qr_tensor_f32_to_f16((float)xv[i]));
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(xr / 2, -3, -128, 127), "f16 i=%lld", (long long)i);
    }
    qt_q_cleanup();
}

static void test_quant_quantize_per_axis_blocked(void) {
    /* x [2, 3, 2], per-axis on axis 1 (also as -2), int8 with negative zero points */
    double xv[12], sv[3] = { 0.5, 1.0, 4.0 }, zv[3] = { -1, 0, -128 };
    for (int i = 0; i < 12; i++) xv[i] = (i - 6) * 1.25;
    int64_t xd[3] = { 2, 3, 2 };
    QrTensor *x = qt_q_t(QR_DT_F32, 3, xd, xv), *s = qt_q_vec(QR_DT_F32, 3, sv), *z = qt_q_vec(QR_DT_S8, 3, zv), *y;
    QT_CHECK(x && s && z);
    const QrTensor *in[3] = { x, s, z };
    for (int pass = 0; pass < 2; pass++) {
        QrAttr ax = qt_q_ai("axis", pass ? -2 : 1);
        QT_OK(qt_q_run("", "QuantizeLinear", &ax, 1, in, 3, &y, 1));
        for (int i = 0; i < 12; i++) {
            int k = (i / 2) % 3;
            QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(xv[i] / sv[k], (int64_t)zv[k], -128, 127), "i=%d", i);
        }
    }
    QrAttr ax0 = qt_q_ai("axis", 0);
    QT_CHECK(qt_q_run("", "QuantizeLinear", &ax0, 1, in, 3, &y, 1) == QR_ERR_SHAPE);  /* length 3 vs dim 2 */
    /* blocked: x [2, 5], axis 1, block 2 -> scale [2, 3] (last block ragged); uint4 */
    double bx[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 40 }, bs[6] = { 1, 2, 4, 0.5, 1, 2 }, bz[6] = { 0, 1, 2, 3, 4, 5 };
    int64_t bxd[2] = { 2, 5 }, bsd[2] = { 2, 3 };
    QrTensor *x2 = qt_q_t(QR_DT_F32, 2, bxd, bx), *s2 = qt_q_t(QR_DT_F32, 2, bsd, bs);
    QrTensor *z2 = qt_q_t(QR_DT_U4, 2, bsd, bz);
    QT_CHECK(x2 && s2 && z2);
    const QrTensor *in2[3] = { x2, s2, z2 };
    QrAttr at[2] = { qt_q_ai("axis", 1), qt_q_ai("block_size", 2) };
    QT_OK(qt_q_run("", "QuantizeLinear", at, 2, in2, 3, &y, 1));
    QT_CHECK(y->dtype == QR_DT_U4);
    for (int i = 0; i < 10; i++) {
        int p = (i / 5) * 3 + (i % 5) / 2;
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(bx[i] / bs[p], (int64_t)bz[p], 0, 15), "blk i=%d got %lld", i,
                  (long long)qr_tensor_get_i64(y, i));
    }
    at[1] = qt_q_ai("block_size", 1);  /* ceil(5/1) = 5 != 3 */
    QT_CHECK(qt_q_run("", "QuantizeLinear", at, 2, in2, 3, &y, 1) == QR_ERR_SHAPE);
    /* int4 saturates to [-8, 7] */
    double iv[4] = { -100, -8.5, 7.5, 100 };
    QrTensor *x3 = qt_q_vec(QR_DT_F32, 4, iv), *s3 = qt_q_scalar(QR_DT_F32, 1), *z3 = qt_q_scalar(QR_DT_S4, 0);
    const QrTensor *in3[3] = { x3, s3, z3 };
    QT_OK(qt_q_run("", "QuantizeLinear", NULL, 0, in3, 3, &y, 1));
    QT_CHECK(qr_tensor_get_i64(y, 0) == -8 && qr_tensor_get_i64(y, 1) == -8 && qr_tensor_get_i64(y, 2) == 7 &&
             qr_tensor_get_i64(y, 3) == 7);
    qt_q_cleanup();
}

static void test_quant_dequantize(void) {
    double xv[6] = { -128, -1, 0, 1, 100, 127 }, sv[2] = { 0.5, 3.0 }, zv[2] = { -3, 5 };
    int64_t xd[2] = { 2, 3 };
    QrTensor *x = qt_q_t(QR_DT_S8, 2, xd, xv), *s = qt_q_vec(QR_DT_F32, 2, sv), *z = qt_q_vec(QR_DT_S8, 2, zv), *y;
    QT_CHECK(x && s && z);
    const QrTensor *in[3] = { x, s, z };
    QrAttr ax = qt_q_ai("axis", 0);
    QT_OK(qt_q_run("", "DequantizeLinear", &ax, 1, in, 3, &y, 1));
    QT_CHECK(y->dtype == QR_DT_F32);
    for (int i = 0; i < 6; i++)
        QT_CHECKF(qr_tensor_get_f64(y, i) == (xv[i] - zv[i / 3]) * sv[i / 3], "i=%d", i);
    /* float16 scale -> float16 output; output_dtype overrides */
    QrTensor *sh = qt_q_vec(QR_DT_F16, 2, sv);
    in[1] = sh;
    QT_OK(qt_q_run("", "DequantizeLinear", &ax, 1, in, 3, &y, 1));
    QT_CHECK(y->dtype == QR_DT_F16 && qr_tensor_get_f64(y, 0) == -62.5 && qr_tensor_get_f64(y, 5) == 366);
    QrAttr at[2] = { ax, qt_q_ai("output_dtype", QR_DT_F32) };
    QT_OK(qt_q_run("", "DequantizeLinear", at, 2, in, 3, &y, 1));
    QT_CHECK(y->dtype == QR_DT_F32 && qr_tensor_get_f64(y, 4) == 285);
    /* int32 without zero point; mismatched zero point type is rejected */
    double iv[3] = { -2147483648.0, 7, 2147483647.0 };
    QrTensor *xi = qt_q_vec(QR_DT_S32, 3, iv), *s1 = qt_q_scalar(QR_DT_F32, 0.25);
    const QrTensor *in2[2] = { xi, s1 };
    QT_OK(qt_q_run("", "DequantizeLinear", NULL, 0, in2, 2, &y, 1));
    QT_CHECK(qr_tensor_get_f64(y, 0) == -536870912.0 && qr_tensor_get_f64(y, 1) == 1.75);
    const QrTensor *in3[3] = { x, s1, qt_q_scalar(QR_DT_U8, 1) };
    QT_CHECK(qt_q_run("", "DequantizeLinear", NULL, 0, in3, 3, &y, 1) == QR_ERR_INVALID);
    qt_q_cleanup();
}

/* DequantizeLinear of an 8-bit [R, N] along its last axis (a MatMul weight: one scale and zero
 * point per column) for N around the 16-element blocks of qr__qdq_dq_row8: every element's bits
 * equal (float)(x - z) * s, signed and unsigned, extreme values and zero points. */
static void test_quant_dequantize_rows(void) {
    uint64_t rng = 7;
    for (int sg = 0; sg < 2; sg++)
        for (int64_t N = 1; N <= 50; N += N < 20 ? 1 : 7) {
            const int64_t R = 3;
            double *xv = malloc((size_t)(R * N) * sizeof(double)), *sv = malloc((size_t)N * sizeof(double));
            double *zv = malloc((size_t)N * sizeof(double));
            for (int64_t i = 0; i < R * N; i++) xv[i] = (double)(int)(qr_rng_next(&rng) % 256) - (sg ? 128 : 0);
            xv[0] = sg ? -128 : 0;
            xv[R * N - 1] = sg ? 127 : 255;
            for (int64_t j = 0; j < N; j++) {
                sv[j] = (float)(0.001 + (double)(qr_rng_next(&rng) % 1000) / 997.0);
                zv[j] = (double)(int)(qr_rng_next(&rng) % 256) - (sg ? 128 : 0);
            }
            int64_t xd[2] = { R, N };
            QrDType dt = sg ? QR_DT_S8 : QR_DT_U8;
            QrTensor *x = qt_q_t(dt, 2, xd, xv), *s = qt_q_vec(QR_DT_F32, N, sv), *z = qt_q_vec(dt, N, zv), *y = NULL;
            const QrTensor *in[3] = { x, s, z };
            QrAttr ax = qt_q_ai("axis", 1);
            QT_OK(qt_q_run("", "DequantizeLinear", &ax, 1, in, 3, &y, 1));
            for (int64_t i = 0; y && i < R * N; i++) {
                float want = (float)((int32_t)xv[i] - (int32_t)zv[i % N]) * (float)sv[i % N];
                float got = ((const float *)y->data)[i];
                QT_CHECKF(memcmp(&want, &got, sizeof want) == 0, "%s N=%lld i=%lld: %.9g vs %.9g", sg ? "s8" : "u8",
                          (long long)N, (long long)i, got, want);
            }
            free(xv);
            free(sv);
            free(zv);
            qt_q_cleanup();
        }
}

/* DequantizeLinear of large 8-bit tensors split over the pool (qr__qdq_dq_run, 64K elements a
 * task, boundaries inside rows): a Conv weight [64, 48, 5, 5] per output channel (axis 0), one
 * scale for [300, 700], one per column of [200, 700] (axis 1) and blocks of 32 along that axis;
 * at 1, 2 and 3 threads every element's bits equal (float)(x - z) * s. */
static void test_quant_dequantize_threads(void) {
    uint64_t rng = 11;
    const int saved = qr_pool_threads();
    static const int64_t shapes[4][4] = { { 64, 48, 5, 5 }, { 300, 700, 0, 0 }, { 200, 700, 0, 0 }, { 200, 700, 0, 0 } };
    for (int c = 0; c < 4; c++) {
        const int rank = shapes[c][2] ? 4 : 2, sg = c % 2;
        const int64_t *xd = shapes[c], n = xd[0] * xd[1] * (rank == 4 ? xd[2] * xd[3] : 1);
        const int64_t ax = c == 0 ? 0 : 1, np = c == 0 ? 64 : c == 1 ? 1 : c == 2 ? 700 : 200 * 22;
        const int64_t row = n / xd[0];   /* elements per row of axis 0 */
        double *xv = malloc((size_t)n * sizeof(double)), *sv = malloc((size_t)np * sizeof(double));
        double *zv = malloc((size_t)np * sizeof(double));
        for (int64_t i = 0; i < n; i++) xv[i] = (double)(int)(qr_rng_next(&rng) % 256) - (sg ? 128 : 0);
        for (int64_t j = 0; j < np; j++) {
            sv[j] = (float)(0.001 + (double)(qr_rng_next(&rng) % 1000) / 997.0);
            zv[j] = (double)(int)(qr_rng_next(&rng) % 256) - (sg ? 128 : 0);
        }
        const QrDType dt = sg ? QR_DT_S8 : QR_DT_U8;
        int64_t bd[2] = { 200, 22 };
        QrTensor *x = qt_q_t(dt, rank, xd, xv), *s, *z;
        if (c == 1) { s = qt_q_scalar(QR_DT_F32, sv[0]); z = qt_q_scalar(dt, zv[0]); }
        else if (c == 3) { s = qt_q_t(QR_DT_F32, 2, bd, sv); z = qt_q_t(dt, 2, bd, zv); }
        else { s = qt_q_vec(QR_DT_F32, np, sv); z = qt_q_vec(dt, np, zv); }
        const QrTensor *in[3] = { x, s, z };
        QrAttr at[2] = { qt_q_ai("axis", ax), qt_q_ai("block_size", 32) };
        for (int th = 1; th <= 3; th++) {
            qr_pool_init(th);
            QrTensor *y = NULL;
            QT_OK(qt_q_run("", "DequantizeLinear", at, c == 3 ? 2 : 1, in, 3, &y, 1));
            int64_t bad = -1;
            for (int64_t i = 0; y && i < n && bad < 0; i++) {
                const int64_t p = c == 0 ? i / row : c == 1 ? 0 : c == 2 ? i % 700 : (i / 700) * 22 + (i % 700) / 32;
                const float want = (float)((int32_t)xv[i] - (int32_t)zv[p]) * (float)sv[p], got = ((const float *)y->data)[i];
                if (memcmp(&want, &got, sizeof want)) bad = i;
            }
            QT_CHECKF(y && bad < 0, "case %d, %d threads: element %lld differs", c, th, (long long)bad);
        }
        free(xv);
        free(sv);
        free(zv);
        qt_q_cleanup();
    }
    qr_pool_init(saved);
}

static void test_quant_dynamic(void) {
    /* the ONNX documentation's example */
    double xv[6] = { 0, 2, -3, -2.5, 1.34, 0.5 };
    QrTensor *x = qt_q_vec(QR_DT_F32, 6, xv), *out[3];
    QT_CHECK(x);
    const QrTensor *in[1] = { x };
    QT_OK(qt_q_run("", "DynamicQuantizeLinear", NULL, 0, in, 1, out, 3));
    const int64_t want[6] = { 153, 255, 0, 26, 221, 179 };
    for (int i = 0; i < 6; i++) QT_CHECKF(qr_tensor_get_i64(out[0], i) == want[i], "i=%d", i);
    QT_CHECK(out[1]->rank == 0 && ((float *)out[1]->data)[0] == 5.0f / 255.0f);
    QT_CHECK(out[2]->dtype == QR_DT_U8 && qr_tensor_get_i64(out[2], 0) == 153);
    /* all positive: min adjusted to 0, zero point 0 */
    double pv[3] = { 1, 2, 255 };
    QrTensor *p = qt_q_vec(QR_DT_F32, 3, pv);
    in[0] = p;
    QT_OK(qt_q_run("", "DynamicQuantizeLinear", NULL, 0, in, 1, out, 3));
    QT_CHECK(qr_tensor_get_i64(out[2], 0) == 0 && qr_tensor_get_i64(out[0], 0) == 1);
    QT_CHECK(qr_tensor_get_i64(out[0], 2) == 255);
    qt_q_cleanup();
}

/* ---- matmul family ----------------------------------------------------------------------- */

static void test_quant_qlinear_matmul(void) {
    /* a [2, 2, 3] uint8 with per-row zero point [2, 1]... broadcast against b [3, 4] int8, b per-column scale */
    enum { B = 2, M = 2, K = 3, N = 4 };
    double av[B * M * K], bv[K * N], azv[M] = { 3, 250 }, bsv[N] = { 0.5, 0.25, 1, 2 }, bzv[N] = { 0, -1, 2, -128 };
    for (int i = 0; i < B * M * K; i++) av[i] = (i * 37) % 256;
    for (int i = 0; i < K * N; i++) bv[i] = ((i * 53) % 256) - 128;
    int64_t ad[3] = { B, M, K }, bd[2] = { K, N }, azd[2] = { M, 1 };
    QrTensor *a = qt_q_t(QR_DT_U8, 3, ad, av), *as = qt_q_scalar(QR_DT_F32, 0.125), *az = qt_q_t(QR_DT_U8, 2, azd, azv);
    QrTensor *b = qt_q_t(QR_DT_S8, 2, bd, bv), *bs = qt_q_vec(QR_DT_F32, N, bsv), *bz = qt_q_vec(QR_DT_S8, N, bzv);
    QrTensor *ys = qt_q_scalar(QR_DT_F32, 64), *yz = qt_q_scalar(QR_DT_S8, -5), *y;
    QT_CHECK(a && as && az && b && bs && bz && ys && yz);
    const QrTensor *in[8] = { a, as, az, b, bs, bz, ys, yz };
    QT_OK(qt_q_run("", "QLinearMatMul", NULL, 0, in, 8, &y, 1));
    QT_CHECK(y->dtype == QR_DT_S8 && y->rank == 3 && y->dims[0] == B && y->dims[1] == M && y->dims[2] == N);
    for (int bt = 0; bt < B; bt++)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                int64_t acc = 0;
                for (int k = 0; k < K; k++)
                    acc += (int64_t)(av[(bt * M + m) * K + k] - azv[m]) * (int64_t)(bv[k * N + n] - bzv[n]);
                /* scales are powers of two: the multiplier and the product are exact */
                int64_t want = qt_q_ref_q((double)acc * 0.125 * bsv[n] / 64, -5, -128, 127);
                QT_CHECKF(qr_tensor_get_i64(y, (bt * M + m) * N + n) == want, "b%d m%d n%d acc %lld", bt, m, n,
                          (long long)acc);
            }
    /* MatMulInteger: same zero points, int32 output */
    const QrTensor *mi[4] = { a, b, az, bz };
    QT_OK(qt_q_run("", "MatMulInteger", NULL, 0, mi, 4, &y, 1));
    QT_CHECK(y->dtype == QR_DT_S32);
    for (int bt = 0; bt < B; bt++)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                int64_t acc = 0;
                for (int k = 0; k < K; k++)
                    acc += (int64_t)(av[(bt * M + m) * K + k] - azv[m]) * (int64_t)(bv[k * N + n] - bzv[n]);
                QT_CHECK(qr_tensor_get_i64(y, (bt * M + m) * N + n) == acc);
            }
    /* per-row 1-D a zero point of length M and a bad per-column length */
    QrTensor *az1 = qt_q_vec(QR_DT_U8, M, azv), *bzbad = qt_q_vec(QR_DT_S8, 3, bzv);
    const QrTensor *mi2[4] = { a, b, az1, bz };
    QrTensor *y2;
    QT_OK(qt_q_run("", "MatMulInteger", NULL, 0, mi2, 4, &y2, 1));
    QT_CHECK(memcmp(y2->data, y->data, qr_tensor_nbytes(y)) == 0);
    mi2[3] = bzbad;
    QT_CHECK(qt_q_run("", "MatMulInteger", NULL, 0, mi2, 4, &y2, 1) == QR_ERR_SHAPE);
    /* a size that uses the 4 x 16 register tiles and both edges, int8 x int8 with negative zero points */
    enum { M2 = 9, K2 = 23, N2 = 37 };
    double a2v[M2 * K2], b2v[K2 * N2];
    for (int i = 0; i < M2 * K2; i++) a2v[i] = ((i * 151) % 256) - 128;
    for (int i = 0; i < K2 * N2; i++) b2v[i] = ((i * 89 + 5) % 256) - 128;
    int64_t a2d[2] = { M2, K2 }, b2d[2] = { K2, N2 };
    QrTensor *a2 = qt_q_t(QR_DT_S8, 2, a2d, a2v), *b2 = qt_q_t(QR_DT_S8, 2, b2d, b2v);
    QrTensor *a2z = qt_q_scalar(QR_DT_S8, -7), *b2z = qt_q_scalar(QR_DT_S8, 127);
    const QrTensor *mi4[4] = { a2, b2, a2z, b2z };
    QT_OK(qt_q_run("", "MatMulInteger", NULL, 0, mi4, 4, &y2, 1));
    for (int m = 0; m < M2; m++)
        for (int n = 0; n < N2; n++) {
            int64_t acc = 0;
            for (int k = 0; k < K2; k++) acc += (int64_t)(a2v[m * K2 + k] + 7) * (int64_t)(b2v[k * N2 + n] - 127);
            QT_CHECKF(qr_tensor_get_i64(y2, m * N2 + n) == acc, "tile m%d n%d", m, n);
        }
    /* 1-D a (vector-matrix): output drops M */
    double vv[K] = { 1, 2, 3 };
    QrTensor *v = qt_q_vec(QR_DT_U8, K, vv);
    const QrTensor *mi3[2] = { v, b };
    QT_OK(qt_q_run("", "MatMulInteger", NULL, 0, mi3, 2, &y2, 1));
    QT_CHECK(y2->rank == 1 && y2->dims[0] == N);
    for (int n = 0; n < N; n++)
        QT_CHECK(qr_tensor_get_i64(y2, n) == (int64_t)(bv[n] + 2 * bv[N + n] + 3 * bv[2 * N + n]));
    qt_q_cleanup();
}

static void test_quant_qgemm(void) {
    enum { M = 3, K = 4, N = 2 };
    double at[K * M], bt[N * K], cv[N] = { 100, -7 }, bsv[N] = { 0.5, 2 };
    for (int i = 0; i < K * M; i++) at[i] = (i * 29) % 256;
    for (int i = 0; i < N * K; i++) bt[i] = (i * 71) % 256;
    int64_t ad[2] = { K, M }, bd[2] = { N, K };
    QrTensor *a = qt_q_t(QR_DT_U8, 2, ad, at), *as = qt_q_scalar(QR_DT_F32, 0.25), *az = qt_q_scalar(QR_DT_U8, 128);
    QrTensor *b = qt_q_t(QR_DT_U8, 2, bd, bt), *bs = qt_q_vec(QR_DT_F32, N, bsv), *bz = qt_q_scalar(QR_DT_U8, 3);
    QrTensor *cc = qt_q_vec(QR_DT_S32, N, cv), *ys = qt_q_scalar(QR_DT_F32, 8), *yz = qt_q_scalar(QR_DT_U8, 10), *y;
    QT_CHECK(a && as && az && b && bs && bz && cc && ys && yz);
    QrAttr attrs[3] = { qt_q_ai("transA", 1), qt_q_ai("transB", 1), qt_q_af("alpha", 2.0f) };
    const QrTensor *in[9] = { a, as, az, b, bs, bz, cc, ys, yz };
    QT_OK(qt_q_run("com.microsoft", "QGemm", attrs, 3, in, 9, &y, 1));
    QT_CHECK(y->dtype == QR_DT_U8 && y->dims[0] == M && y->dims[1] == N);
    double accs[M][N];
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int64_t acc = (int64_t)cv[n];
            for (int k = 0; k < K; k++) acc += (int64_t)(at[k * M + m] - 128) * (int64_t)(bt[n * K + k] - 3);
            accs[m][n] = (double)acc;
            int64_t want = qt_q_ref_q(acc * 2 * 0.25 * bsv[n] / 8, 10, 0, 255);
            QT_CHECKF(qr_tensor_get_i64(y, m * N + n) == want, "m%d n%d", m, n);
        }
    /* without y_scale / y_zero_point the output is float32 acc * alpha * a_scale * b_scale */
    QT_OK(qt_q_run("com.microsoft", "QGemm", attrs, 3, in, 7, &y, 1));
    QT_CHECK(y->dtype == QR_DT_F32);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) QT_CHECK(qr_tensor_get_f64(y, m * N + n) == accs[m][n] * 2 * 0.25 * bsv[n]);
    qt_q_cleanup();
}

/* ---- convolution --------------------------------------------------------------------------- */

/* Plain reference: 2-D NCHW conv of (x - xz) and (w - wz[m]) with explicit pads / strides /
 * dilations / groups; padded taps contribute 0. */
static int64_t qt_q_ref_conv(const double *x, const double *w, int64_t C, int64_t H, int64_t W, int64_t Cg,
                             int64_t KH, int64_t KW, int64_t G, int64_t Mg, int64_t n, int64_t m, int64_t oh,
                             int64_t ow,
                             const int64_t *st, const int64_t *dl, const int64_t *pads, double xz, double wz) {
    int64_t g = m / Mg, acc = 0;
    for (int64_t ci = 0; ci < Cg; ci++)
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                int64_t ih = oh * st[0] - pads[0] + kh * dl[0], iw = ow * st[1] - pads[1] + kw * dl[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                double xv = x[((n * C + g * Cg + ci) * H + ih) * W + iw];
                double wv = w[((m * Cg + ci) * KH + kh) * KW + kw];
                acc += (int64_t)(xv - xz) * (int64_t)(wv - wz);
            }
    QR_UNUSED(G);
    return acc;
}

static void test_quant_qlinear_conv(void) {
    enum { N = 2, C = 4, H = 5, W = 6, G = 2, M = 4, KH = 3, KW = 2 };
    const int64_t Cg = C / G, Mg = M / G;
    double xv[N * C * H * W], wv[M * Cg * KH * KW], wsv[M] = { 0.5, 0.25, 1, 2 }, bv[M] = { 1000, -1000, 3, 0 };
    for (int i = 0; i < N * C * H * W; i++) xv[i] = (i * 97 + 13) % 256;
    for (int i = 0; i < M * Cg * KH * KW; i++) wv[i] = ((i * 61) % 256) - 128;
    int64_t xd[4] = { N, C, H, W }, wd[4] = { M, Cg, KH, KW };
    int64_t st[2] = { 2, 1 }, dl[2] = { 1, 2 }, pads[4] = { 1, 2, 2, 0 };
    QrTensor *x = qt_q_t(QR_DT_U8, 4, xd, xv), *xs = qt_q_scalar(QR_DT_F32, 0.0625), *xz = qt_q_scalar(QR_DT_U8, 131);
    QrTensor *w = qt_q_t(QR_DT_S8, 4, wd, wv), *ws = qt_q_vec(QR_DT_F32, M, wsv), *wz = qt_q_scalar(QR_DT_S8, 0);
    QrTensor *ys = qt_q_scalar(QR_DT_F32, 4), *yz = qt_q_scalar(QR_DT_U8, 128), *bias = qt_q_vec(QR_DT_S32, M, bv), *y;
    QT_CHECK(x && xs && xz && w && ws && wz && ys && yz && bias);
    QrAttr attrs[4] = { qt_q_aints("strides", 2, st), qt_q_aints("dilations", 2, dl), qt_q_aints("pads", 4, pads),
                        qt_q_ai("group", G) };
    const QrTensor *in[9] = { x, xs, xz, w, ws, wz, ys, yz, bias };
    QT_OK(qt_q_run("", "QLinearConv", attrs, 4, in, 9, &y, 1));
    int64_t OH = (H + 1 + 2 - 3) / 2 + 1, OW = (W + 2 + 0 - 3) / 1 + 1;
    QT_CHECK(y->rank == 4 && y->dims[0] == N && y->dims[1] == M && y->dims[2] == OH && y->dims[3] == OW);
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t acc = qt_q_ref_conv(xv, wv, C, H, W, Cg, KH, KW, G, Mg, n, m, oh, ow, st, dl, pads, 131, 0);
                    int64_t want = qt_q_ref_q((double)(acc + (int64_t)bv[m]) * 0.0625 * wsv[m] / 4, 128, 0, 255);
                    QT_CHECKF(qr_tensor_get_i64(y, ((n * M + m) * OH + oh) * OW + ow) == want, "n%lld m%lld %lld,%lld",
                              (long long)n, (long long)m, (long long)oh, (long long)ow);
                }
    /* ConvInteger with per-channel weight zero points, SAME_UPPER */
    double wzv[M] = { 1, -2, 0, 5 };
    QrTensor *wzm = qt_q_vec(QR_DT_S8, M, wzv), *y2;
    QrAttr a2[2] = { qt_q_as("auto_pad", "SAME_UPPER"), qt_q_ai("group", G) };
    const QrTensor *in2[4] = { x, w, xz, wzm };
    QT_OK(qt_q_run("", "ConvInteger", a2, 2, in2, 4, &y2, 1));
    QT_CHECK(y2->dtype == QR_DT_S32 && y2->dims[2] == H && y2->dims[3] == W);
    int64_t st1[2] = { 1, 1 }, dl1[2] = { 1, 1 }, pads_same[4] = { 1, 0, 1, 1 };   /* total pads 2 and 1 */
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < H; oh++)
                for (int64_t ow = 0; ow < W; ow++) {
                    int64_t acc = qt_q_ref_conv(xv, wv, C, H, W, Cg, KH, KW, G, Mg, n, m, oh, ow, st1, dl1, pads_same,
                                                131, wzv[m]);
                    QT_CHECK(qr_tensor_get_i64(y2, ((n * M + m) * H + oh) * W + ow) == acc);
                }
    /* com.microsoft channels_last: same numbers, NHWC layout */
    double xn[N * H * W * C];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < H * W; p++) xn[(n * H * W + p) * C + c] = xv[(n * C + c) * H * W + p];
    int64_t xnd[4] = { N, H, W, C };
    QrTensor *x3 = qt_q_t(QR_DT_U8, 4, xnd, xn), *y3;
    QrAttr a3[5] = { attrs[0], attrs[1], attrs[2], attrs[3], qt_q_ai("channels_last", 1) };
    in[0] = x3;
    QT_OK(qt_q_run("com.microsoft", "QLinearConv", a3, 5, in, 9, &y3, 1));
    QT_CHECK(y3->dims[1] == OH && y3->dims[2] == OW && y3->dims[3] == M);
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t p = 0; p < OH * OW; p++)
                QT_CHECK(qr_tensor_get_i64(y3, (n * OH * OW + p) * M + m) ==
                         qr_tensor_get_i64(y, (n * M + m) * OH * OW + p));
    /* errors: kernel larger than the padded input, group that does not divide C */
    int64_t bigp[4] = { 0, 0, 0, 0 }, ks[2] = { 9, 9 };
    int64_t wbd[4] = { M, Cg, 9, 9 };
    QrTensor *wb = qt_q_t(QR_DT_S8, 4, wbd, NULL);
    QrAttr a4[3] = { qt_q_aints("pads", 4, bigp), qt_q_aints("kernel_shape", 2, ks), qt_q_ai("group", G) };
    const QrTensor *in4[4] = { x, wb, NULL, NULL };
    QT_CHECK(qt_q_run("", "ConvInteger", a4, 3, in4, 4, &y2, 1) == QR_ERR_SHAPE);
    QrAttr a5 = qt_q_ai("group", 3);
    QT_CHECK(qt_q_run("", "ConvInteger", &a5, 1, in2, 4, &y2, 1) == QR_ERR_SHAPE);
    qt_q_cleanup();
}

/* ---- com.microsoft elementwise --------------------------------------------------------------- */

static void test_quant_qlinear_add_mul(void) {
    /* A [2, 3] int8, B [3] (row broadcast); power-of-two scales keep ORT's float steps exact */
    double av[6] = { -128, -1, 0, 5, 100, 127 }, bv[3] = { -128, 3, 127 };
    int64_t ad[2] = { 2, 3 };
    const float sa = 0.5f, sb = 0.25f, sc = 0.5f;
    const int za = -3, zb = 1, zc = -2;
    QrTensor *a = qt_q_t(QR_DT_S8, 2, ad, av), *as = qt_q_scalar(QR_DT_F32, sa), *az = qt_q_scalar(QR_DT_S8, za);
    QrTensor *b = qt_q_vec(QR_DT_S8, 3, bv), *bs = qt_q_scalar(QR_DT_F32, sb), *bz = qt_q_scalar(QR_DT_S8, zb);
    QrTensor *cs = qt_q_scalar(QR_DT_F32, sc), *cz = qt_q_scalar(QR_DT_S8, zc), *y;
    QT_CHECK(a && as && az && b && bs && bz && cs && cz);
    const QrTensor *in[8] = { a, as, az, b, bs, bz, cs, cz };
    QT_OK(qt_q_run("com.microsoft", "QLinearAdd", NULL, 0, in, 8, &y, 1));
    QT_CHECK(y->dtype == QR_DT_S8 && y->rank == 2);
    for (int i = 0; i < 6; i++) {
        double v = (sa * (av[i] - za) + sb * (bv[i % 3] - zb)) / sc;   /* .5 ties land on even */
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(v, zc, -128, 127), "add i=%d got %lld want %lld", i,
                  (long long)qr_tensor_get_i64(y, i), (long long)qt_q_ref_q(v, zc, -128, 127));
    }
    /* scalar B, and scalar A (ORT's swapped loop) */
    QrTensor *b1 = qt_q_scalar(QR_DT_S8, 6);
    in[3] = b1;
    QT_OK(qt_q_run("com.microsoft", "QLinearAdd", NULL, 0, in, 8, &y, 1));
    for (int i = 0; i < 6; i++)
        QT_CHECK(qr_tensor_get_i64(y, i) == qt_q_ref_q((sa * (av[i] - za) + sb * (6 - zb)) / sc, zc, -128, 127));
    const QrTensor *sw[8] = { b1, bs, bz, a, as, az, cs, cz };
    QT_OK(qt_q_run("com.microsoft", "QLinearAdd", NULL, 0, sw, 8, &y, 1));
    for (int i = 0; i < 6; i++)
        QT_CHECK(qr_tensor_get_i64(y, i) == qt_q_ref_q((sa * (av[i] - za) + sb * (6 - zb)) / sc, zc, -128, 127));
    /* QLinearMul with column broadcast B [2, 1], uint8 */
    double ua[6] = { 0, 1, 2, 3, 200, 255 }, ub[2] = { 4, 255 };
    int64_t bd[2] = { 2, 1 };
    QrTensor *ua_t = qt_q_t(QR_DT_U8, 2, ad, ua), *ub_t = qt_q_t(QR_DT_U8, 2, bd, ub);
    QrTensor *uz1 = qt_q_scalar(QR_DT_U8, 1), *uz2 = qt_q_scalar(QR_DT_U8, 3), *uz3 = qt_q_scalar(QR_DT_U8, 7);
    const QrTensor *mi[8] = { ua_t, as, uz1, ub_t, bs, uz2, cs, uz3 };
    QT_OK(qt_q_run("com.microsoft", "QLinearMul", NULL, 0, mi, 8, &y, 1));
    for (int i = 0; i < 6; i++) {
        double v = (ua[i] - 1) * (ub[i / 3] - 3) * sa * sb / sc;
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(v, 7, 0, 255), "mul i=%d got %lld", i,
                  (long long)qr_tensor_get_i64(y, i));
    }
    /* mixed types are rejected */
    mi[3] = b;
    QT_CHECK(qt_q_run("com.microsoft", "QLinearMul", NULL, 0, mi, 8, &y, 1) == QR_ERR_UNSUPPORTED);
    qt_q_cleanup();
}

static void test_quant_qlinear_lookup(void) {
    /* LeakyRelu with alpha 0.25 and power-of-two scales: exact, ties included */
    double xv[256];
    for (int i = 0; i < 256; i++) xv[i] = i - 128;
    QrTensor *x = qt_q_vec(QR_DT_S8, 256, xv), *xs = qt_q_scalar(QR_DT_F32, 0.5), *xz = qt_q_scalar(QR_DT_S8, -4);
    QrTensor *ys = qt_q_scalar(QR_DT_F32, 1.0), *yz = qt_q_scalar(QR_DT_S8, 5), *y;
    QT_CHECK(x && xs && xz && ys && yz);
    QrAttr alpha = qt_q_af("alpha", 0.25f);
    const QrTensor *in[5] = { x, xs, xz, ys, yz };
    QT_OK(qt_q_run("com.microsoft", "QLinearLeakyRelu", &alpha, 1, in, 5, &y, 1));
    for (int i = 0; i < 256; i++) {
        double d = 0.5 * (xv[i] + 4), f = d >= 0 ? d : 0.25 * d;
        QT_CHECKF(qr_tensor_get_i64(y, i) == qt_q_ref_q(f, 5, -128, 127), "leaky x=%g", xv[i]);
    }
    /* Sigmoid: MLAS's approximation stays within 1e-6 of the true logistic... */
    for (float v = -20.0f; v <= 20.0f; v += 0.0625f) {
        double t = 1.0 / (1.0 + exp(-(double)QR_MIN(QR_MAX(v, -18.0f), 18.0f)));
        QT_CHECKF(fabs(qr_op_logistic_f32(v, 0) - t) < 2e-7 + 1e-6 * t, "v=%g", v);
    }
    QT_CHECK(qr_op_logistic_f32(0.0f, 0) == 0.5f);
    /* ...so the quantized table matches the exact formula except possibly at rounding boundaries */
    QrTensor *ys2 = qt_q_scalar(QR_DT_F32, 1.0 / 256), *yz2 = qt_q_scalar(QR_DT_S8, -128);
    const QrTensor *in2[5] = { x, xs, xz, ys2, yz2 };
    QT_OK(qt_q_run("com.microsoft", "QLinearSigmoid", NULL, 0, in2, 5, &y, 1));
    int exact = 0;
    for (int i = 0; i < 256; i++) {
        double d = 0.5 * (xv[i] + 4), want = (double)qt_q_ref_q(256.0 / (1.0 + exp(-d)), -128, -128, 127);
        int64_t got = qr_tensor_get_i64(y, i);
        QT_CHECKF(llabs(got - (int64_t)want) <= 1, "sigmoid x=%g got %lld want %g", xv[i], (long long)got, want);
        exact += got == (int64_t)want;
    }
    QT_CHECK(exact >= 250);
    QT_CHECK(qr_tensor_get_i64(y, 124) == 0);   /* x = -4 = zero point -> sigmoid(0) = 0.5 -> 128 - 128 */
    qt_q_cleanup();
}

static void test_quant_qlinear_concat(void) {
    /* axis -1: A [2, 2] with Y's parameters (copied), B [2, 3] requantized */
    double av[4] = { 0, 10, 200, 255 }, bv[6] = { 0, 1, 2, 3, 250, 255 };
    int64_t ad[2] = { 2, 2 }, bd[2] = { 2, 3 };
    QrTensor *ys = qt_q_scalar(QR_DT_F32, 0.5), *yz = qt_q_scalar(QR_DT_U8, 10);
    QrTensor *a = qt_q_t(QR_DT_U8, 2, ad, av), *b = qt_q_t(QR_DT_U8, 2, bd, bv);
    QrTensor *bs = qt_q_scalar(QR_DT_F32, 0.25), *bz = qt_q_scalar(QR_DT_U8, 3), *y;
    QT_CHECK(ys && yz && a && b && bs && bz);
    QrAttr ax = qt_q_ai("axis", -1);
    const QrTensor *in[8] = { ys, yz, a, ys, yz, b, bs, bz };
    QT_OK(qt_q_run("com.microsoft", "QLinearConcat", &ax, 1, in, 8, &y, 1));
    QT_CHECK(y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 5);
    for (int r = 0; r < 2; r++) {
        for (int j = 0; j < 2; j++) QT_CHECK(qr_tensor_get_i64(y, r * 5 + j) == (int64_t)av[r * 2 + j]);
        for (int j = 0; j < 3; j++) {
            double v = 0.25 * (bv[r * 3 + j] - 3) / 0.5;   /* .5 ties: 1 - 3 -> -1 -> 10 - 1 */
            QT_CHECKF(qr_tensor_get_i64(y, r * 5 + 2 + j) == qt_q_ref_q(v, 10, 0, 255), "r%d j%d", r, j);
        }
    }
    QT_CHECK(qt_q_run("com.microsoft", "QLinearConcat", NULL, 0, in, 8, &y, 1) == QR_ERR_INVALID);  /* no axis */
    QrAttr ax0 = qt_q_ai("axis", 0);
    QT_CHECK(qt_q_run("com.microsoft", "QLinearConcat", &ax0, 1, in, 8, &y, 1) == QR_ERR_SHAPE);
    QT_CHECK(qt_q_run("com.microsoft", "QLinearConcat", &ax, 1, in, 7, &y, 1) == QR_ERR_INVALID);  /* broken triple */
    qt_q_cleanup();
}

static void test_quant_qlinear_pools(void) {
    enum { N = 2, C = 3, H = 4, W = 5 };
    double xv[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++) xv[i] = (i * 83 + 7) % 256 - 128;
    int64_t xd[4] = { N, C, H, W };
    QrTensor *x = qt_q_t(QR_DT_S8, 4, xd, xv), *xs = qt_q_scalar(QR_DT_F32, 0.5), *xz = qt_q_scalar(QR_DT_S8, -2);
    QrTensor *ys = qt_q_scalar(QR_DT_F32, 0.25), *yz = qt_q_scalar(QR_DT_S8, 3), *y;
    QT_CHECK(x && xs && xz && ys && yz);
    const QrTensor *in[5] = { x, xs, xz, ys, yz };
    /* global average: x_scale / (y_scale * 20) = 0.1 is inexact, so compute it the same way in float */
    QT_OK(qt_q_run("com.microsoft", "QLinearGlobalAveragePool", NULL, 0, in, 5, &y, 1));
    QT_CHECK(y->rank == 4 && y->dims[1] == C && y->dims[2] == 1 && y->dims[3] == 1);
    float mult = 0.5f / (0.25f * (float)(H * W));
    double sums[N][C];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            int64_t s = 0;
            for (int p = 0; p < H * W; p++) s += (int64_t)xv[(n * C + c) * H * W + p] + 2;
            sums[n][c] = (double)s;
            int64_t want = qt_q_ref_q((double)((float)s * mult), 3, -128, 127);
            QT_CHECKF(qr_tensor_get_i64(y, n * C + c) == want, "n%d c%d", n, c);
        }
    /* channels_last gives the same numbers */
    double xn[N * H * W * C];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int p = 0; p < H * W; p++) xn[(n * H * W + p) * C + c] = xv[(n * C + c) * H * W + p];
    int64_t xnd[4] = { N, H, W, C };
    QrTensor *x2 = qt_q_t(QR_DT_S8, 4, xnd, xn), *y2;
    QrAttr cl = qt_q_ai("channels_last", 1);
    const QrTensor *in2[5] = { x2, xs, xz, ys, yz };
    QT_OK(qt_q_run("com.microsoft", "QLinearGlobalAveragePool", &cl, 1, in2, 5, &y2, 1));
    QT_CHECK(y2->dims[1] == 1 && y2->dims[2] == 1 && y2->dims[3] == C);
    QT_CHECK(memcmp(y->data, y2->data, (size_t)(N * C)) == 0);
    QR_UNUSED(sums);
    /* average pool 2x2 stride 2 with pads [1, 1, 1, 1]: window sums are multiples of 0.5, the divisor 4
     * or the clipped count; the reference uses the same float steps */
    int64_t k[2] = { 2, 2 }, s2[2] = { 2, 2 }, pads[4] = { 1, 1, 1, 1 };
    for (int inc = 0; inc < 2; inc++) {
        QrAttr at[4] = { qt_q_aints("kernel_shape", 2, k), qt_q_aints("strides", 2, s2), qt_q_aints("pads", 4, pads),
                         qt_q_ai("count_include_pad", inc) };
        QT_OK(qt_q_run("com.microsoft", "QLinearAveragePool", at, 4, in, 5, &y, 1));
        int64_t OH = (H + 2 - 2) / 2 + 1, OW = (W + 2 - 2) / 2 + 1;
        QT_CHECK(y->dims[2] == OH && y->dims[3] == OW);
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++)
                for (int oh = 0; oh < OH; oh++)
                    for (int ow = 0; ow < OW; ow++) {
                        float sum = 0.0f;
                        int cnt = 0;
                        for (int kh = 0; kh < 2; kh++)
                            for (int kw = 0; kw < 2; kw++) {
                                int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                sum += 0.5f * (float)(xv[((n * C + c) * H + ih) * W + iw] + 2);
                                cnt++;
                            }
                        /* ORT's QLinearAveragePool rounds after adding the zero point: with an odd
                         * zero point a .5 average rounds the other way than the spec order would */
                        float avg = sum / (float)(inc ? 4 : cnt);
                        int64_t want = qt_q_ref_q((double)(avg / 0.25f + 3.0f), 0, -128, 127);
                        QT_CHECKF(qr_tensor_get_i64(y, ((n * C + c) * OH + oh) * OW + ow) == want, "inc%d n%d c%d %d,%d",
                                  inc, n, c, oh, ow);
                    }
    }
    /* ceil_mode drops a last window that would start in the padding */
    int64_t k3[2] = { 3, 3 }, s3[2] = { 3, 3 };
    QrAttr at3[3] = { qt_q_aints("kernel_shape", 2, k3), qt_q_aints("strides", 2, s3), qt_q_ai("ceil_mode", 1) };
    QT_OK(qt_q_run("com.microsoft", "QLinearAveragePool", at3, 3, in, 5, &y, 1));
    QT_CHECK(y->dims[2] == 2 && y->dims[3] == 2);
    QrAttr nok = qt_q_aints("strides", 2, s3);
    QT_CHECK(qt_q_run("com.microsoft", "QLinearAveragePool", &nok, 1, in, 5, &y, 1) == QR_ERR_INVALID);  /* no kernel */
    qt_q_cleanup();
}

/* Hostile attributes and shapes fail with a status instead of crashing or overflowing. */
static void test_quant_bad_inputs(void) {
    int64_t xd[4] = { 1, 2, 5, 5 }, wd[4] = { 2, 2, 3, 3 }, w3[3] = { 2, 2, 3 };
    QrTensor *x = qt_q_t(QR_DT_U8, 4, xd, NULL), *w = qt_q_t(QR_DT_U8, 4, wd, NULL);
    QrTensor *w3t = qt_q_t(QR_DT_U8, 3, w3, NULL);
    QrTensor *f = qt_q_t(QR_DT_F32, 4, xd, NULL), *s = qt_q_scalar(QR_DT_F32, 1), *z = qt_q_scalar(QR_DT_U8, 0), *y;
    QT_CHECK(x && w && w3t && f && s && z);
    int64_t huge[4] = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX }, zero2[2] = { 0, 0 }, neg4[4] = { -1, 0, 0, 0 };
    int64_t one2[2] = { 1, 1 }, three[3] = { 1, 1, 1 };
    QrAttr cases[][2] = {
        { qt_q_aints("pads", 4, huge), qt_q_ai("group", 1) },
        { qt_q_aints("strides", 2, zero2), qt_q_ai("group", 1) },
        { qt_q_aints("dilations", 2, huge), qt_q_ai("group", 1) },
        { qt_q_aints("pads", 4, neg4), qt_q_ai("group", 1) },
        { qt_q_aints("strides", 3, three), qt_q_ai("group", 1) },
        { qt_q_aints("kernel_shape", 2, one2), qt_q_ai("group", 1) },
        { qt_q_as("auto_pad", "SIDEWAYS"), qt_q_ai("group", 1) },
        { qt_q_ai("group", 0), qt_q_ai("group", 0) },
        { qt_q_ai("group", INT64_MAX), qt_q_ai("group", INT64_MAX) },
    };
    const QrTensor *ci[4] = { x, w, z, z };
    for (int i = 0; i < QR_ARRAY_LEN(cases); i++)
        QT_CHECKF(qt_q_run("", "ConvInteger", cases[i], 2, ci, 4, &y, 1) != QR_OK, "conv case %d", i);
    ci[1] = w3t;   /* rank mismatch */
    QT_CHECK(qt_q_run("", "ConvInteger", NULL, 0, ci, 4, &y, 1) == QR_ERR_SHAPE);
    ci[1] = f;     /* float weight */
    QT_CHECK(qt_q_run("", "ConvInteger", NULL, 0, ci, 4, &y, 1) == QR_ERR_UNSUPPORTED);
    int64_t bigk[2] = { (int64_t)1 << 31, (int64_t)1 << 31 }, k2[2] = { 2, 2 };
    QrAttr pool[2][1] = { { qt_q_aints("kernel_shape", 2, bigk) }, { qt_q_aints("kernel_shape", 2, huge) } };
    const QrTensor *pi[5] = { x, s, z, s, z };
    for (int i = 0; i < 2; i++)
        QT_CHECKF(qt_q_run("com.microsoft", "QLinearAveragePool", pool[i], 1, pi, 5, &y, 1) != QR_OK, "pool %d", i);
    QrAttr dil[2] = { qt_q_aints("kernel_shape", 2, k2), qt_q_aints("dilations", 2, k2) };
    /* dilations are supported (issue 17; tests/test_contrib.c checks their values) */
    QT_CHECK(qt_q_run("com.microsoft", "QLinearAveragePool", dil, 2, pi, 5, &y, 1) == QR_OK);
    /* QuantizeLinear: block_size huge / negative, axis out of range, float8-like output_dtype, bad precision */
    int64_t sd[4] = { 1, 1, 5, 5 };
    QrTensor *sb = qt_q_t(QR_DT_F32, 4, sd, NULL);
    const QrTensor *qi[2] = { f, sb };
    QrAttr qa[][2] = {
        { qt_q_ai("block_size", INT64_MAX), qt_q_ai("axis", 2) },   /* 1 block, but the scale has 5 */
        { qt_q_ai("block_size", -2), qt_q_ai("axis", 1) },
        { qt_q_ai("block_size", 2), qt_q_ai("axis", 9) },
    };
    for (int i = 0; i < QR_ARRAY_LEN(qa); i++)
        QT_CHECKF(qt_q_run("", "QuantizeLinear", qa[i], 2, qi, 2, &y, 1) != QR_OK, "quantize case %d", i);
    QrAttr ok_blk[2] = { qt_q_ai("block_size", INT64_MAX), qt_q_ai("axis", 1) };   /* ceil(2 / huge) = 1 block */
    QT_OK(qt_q_run("", "QuantizeLinear", ok_blk, 2, qi, 2, &y, 1));
    qi[1] = s;
    QrAttr od = qt_q_ai("output_dtype", 24), pr = qt_q_ai("precision", QR_DT_S8);
    QT_CHECK(qt_q_run("", "QuantizeLinear", &od, 1, qi, 2, &y, 1) == QR_ERR_UNSUPPORTED);
    QT_CHECK(qt_q_run("", "QuantizeLinear", &pr, 1, qi, 2, &y, 1) == QR_ERR_UNSUPPORTED);
    const QrTensor *q2[2] = { x, s };   /* integer input to QuantizeLinear */
    QT_CHECK(qt_q_run("", "QuantizeLinear", NULL, 0, q2, 2, &y, 1) == QR_ERR_UNSUPPORTED);
    /* matmul: rank 0, inner mismatch, per-tensor-only output parameters */
    QrTensor *sc0 = qt_q_scalar(QR_DT_U8, 1);
    const QrTensor *mm[2] = { sc0, x };
    QT_CHECK(qt_q_run("", "MatMulInteger", NULL, 0, mm, 2, &y, 1) == QR_ERR_SHAPE);
    const QrTensor *mm2[2] = { x, w };
    QT_CHECK(qt_q_run("", "MatMulInteger", NULL, 0, mm2, 2, &y, 1) == QR_ERR_SHAPE);
    qt_q_cleanup();
}

/* Runs a test and frees its tensors, also when it stopped at a failed check. */
#define QT_Q_RUN(fn) do { QT_RUN(fn); qt_q_cleanup(); } while (0)

static void qt_quant_all(void) {
    QT_Q_RUN(test_quant_round_helpers);
    QT_Q_RUN(test_quant_layout);
    QT_Q_RUN(test_quant_quantize_per_tensor);
    QT_Q_RUN(test_quant_quantize_per_axis_blocked);
    QT_Q_RUN(test_quant_dequantize);
    QT_Q_RUN(test_quant_dequantize_rows);
    QT_Q_RUN(test_quant_dequantize_threads);
    QT_Q_RUN(test_quant_dynamic);
    QT_Q_RUN(test_quant_qlinear_matmul);
    QT_Q_RUN(test_quant_qgemm);
    QT_Q_RUN(test_quant_qlinear_conv);
    QT_Q_RUN(test_quant_qlinear_add_mul);
    QT_Q_RUN(test_quant_qlinear_lookup);
    QT_Q_RUN(test_quant_qlinear_concat);
    QT_Q_RUN(test_quant_qlinear_pools);
    QT_Q_RUN(test_quant_bad_inputs);
}
