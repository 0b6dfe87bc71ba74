/* tests/harden_geom — window geometry from hostile attributes: pools whose kernel_shape,
 * dilations or strides are 2^31 - 1 visit only the taps inside the input (every kernel level
 * against a brute force over input positions, the ops against closed forms of their ONNX
 * semantics), depthwise int8 convolutions with such dilations, and the per-node work limit
 * that refuses convolutions and pools whose arithmetic would run for days. */

#include <pthread.h>

#define QT_HG_BIG ((int64_t)2147483647)

/* ==== helpers ======================================================================= */

/* Output size of one axis with begin/end pads (floor mode), or -1 when the window does not
 * fit the padded input. */
static int64_t qt_hg_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    int64_t span = in + pb + pe - ((k - 1) * d + 1);
    return span < 0 ? -1 : span / s + 1;
}

/* Whether input index i is a tap of the window that starts at t (k taps, dilation d): found
 * from the input side, so it costs nothing for a kernel of 2^31 taps and shares no code with
 * qr_kern_win_taps. */
static bool qt_hg_is_tap(int64_t i, int64_t t, int64_t k, int64_t d) {
    return i >= t && (i - t) % d == 0 && (i - t) / d < k;
}

/* One 2-D window geometry (QrQ8Win order without the data). */
typedef struct QtHgWin { int64_t H, W, KH, KW, sh, sw, dh, dw, ph, pw, pe_h, pe_w; } QtHgWin;

/* Huge kernels, dilations, strides and pads; every one has at least one tap in x per window. */
static const QtHgWin qt_hg_wins[] = {
    { 32, 32, QT_HG_BIG, 2, 1, 1, 1, 1, (QT_HG_BIG - 1) / 2, 0, (QT_HG_BIG - 1) / 2, 1 },  /* SAME_UPPER [2^31-1, 2] */
    { 17, 23, 3, QT_HG_BIG, 2, 1, 1, 1, 1, QT_HG_BIG / 2, 1, QT_HG_BIG / 2 },
    { 9, 40, 2, 2, 1, 1, QT_HG_BIG, 1, QT_HG_BIG, 0, 0, 0 },              /* dilation 2^31-1: one row inside */
    { 12, 70, 2, 3, 1, QT_HG_BIG, 1, 1, 0, 0, 0, 0 },                     /* stride 2^31-1: one column */
    { 30, 5, QT_HG_BIG, QT_HG_BIG, 1, 1, 1, 1, QT_HG_BIG - 3, QT_HG_BIG - 2, 2, 1 },
    { 7, 66, 5, 2, 3, 1, 1, QT_HG_BIG, 1, QT_HG_BIG, 1, 0 },             /* the column dilation of the SIMD layout */
};

/* ==== float max pooling: every level ===================================================== */

/* qr_kern.f32_maxpool2d of every level on the huge windows against the maximum over the input
 * positions that are taps (random normal data: no ties), 0 for windows without any. */
static void test_hg_f32_maxpool_kernels(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 5;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt_hg_wins); wi++) {
        const QtHgWin *q = &qt_hg_wins[wi];
        int64_t OH = qt_hg_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), OW = qt_hg_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w);
        QT_CHECKF(OH > 0 && OW > 0 && OH * OW < 100000, "window %d: output %lld x %lld", wi, (long long)OH, (long long)OW);
        float *x = malloc((size_t)(q->H * q->W) * sizeof *x), *want = malloc((size_t)(OH * OW) * sizeof *want);
        float *y = malloc((size_t)(OH * OW + 16) * sizeof *y), *rb = malloc((size_t)(q->W + 16) * sizeof *rb);
        for (int64_t i = 0; i < q->H * q->W; i++) x[i] = qr_rng_normal(&rng);
        int64_t empty = 0;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                bool any = false;
                float best = 0;
                for (int64_t ih = 0; ih < q->H; ih++) {
                    if (!qt_hg_is_tap(ih, oh * q->sh - q->ph, q->KH, q->dh)) continue;
                    for (int64_t iw = 0; iw < q->W; iw++)
                        if (qt_hg_is_tap(iw, ow * q->sw - q->pw, q->KW, q->dw) && (!any || x[ih * q->W + iw] > best)) {
                            best = x[ih * q->W + iw];
                            any = true;
                        }
                }
                want[oh * OW + ow] = any ? best : 0.0f;
                empty += !any;
            }
        for (int l = 0; l < nl; l++) {
            for (int64_t i = 0; i < OH * OW + 16; i++) y[i] = -12345.0f;
            lv[l].f32_maxpool2d(x, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, y, OH, OW, rb);
            QT_CHECKF(!memcmp(y, want, (size_t)(OH * OW) * sizeof *y), "%s window %d differs from the brute force",
                      qr_isa_name(lv[l].isa), wi);
            QT_CHECKF(y[OH * OW] == -12345.0f, "%s wrote past y", qr_isa_name(lv[l].isa));
        }
        QT_CHECKF(empty < OH * OW, "window %d: every window empty (the case tests nothing)", wi);
        free(x); free(want); free(y); free(rb);
    }
}

/* ==== 8-bit max pooling: every level ===================================================== */

/* qr_q8_win_covered and qr_kern.q8_maxpool2d of every level on the huge windows against the
 * brute force; the scratch stays small (a layout padded for 2^31 taps was gigabytes). */
static void test_hg_q8_maxpool_kernels(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 9;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt_hg_wins); wi++)
        for (int sg = 0; sg < 2; sg++) {
            const QtHgWin *q = &qt_hg_wins[wi];
            int64_t OH = qt_hg_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h);
            int64_t OW = qt_hg_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w);
            uint8_t *x = malloc((size_t)(q->H * q->W)), *want = malloc((size_t)(OH * OW)), *y = malloc((size_t)(OH * OW) + 64);
            for (int64_t i = 0; i < q->H * q->W; i++) x[i] = (uint8_t)qr_rng_next(&rng);
            QrQ8Win p = { x, sg != 0, 0, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, OH, OW };
            bool all = true;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int32_t best = INT32_MIN;
                    for (int64_t ih = 0; ih < q->H; ih++)
                        for (int64_t iw = 0; iw < q->W; iw++)
                            if (qt_hg_is_tap(ih, oh * q->sh - q->ph, q->KH, q->dh) &&
                                qt_hg_is_tap(iw, ow * q->sw - q->pw, q->KW, q->dw)) {
                                int32_t v = sg ? (int8_t)x[ih * q->W + iw] : x[ih * q->W + iw];
                                best = QR_MAX(best, v);
                            }
                    all = all && best != INT32_MIN;
                    want[oh * OW + ow] = (uint8_t)best;
                }
            QT_CHECKF(all == qr_q8_win_covered(&p), "window %d: covered should be %d", wi, all);
            if (!all) { free(x); free(want); free(y); continue; }
            size_t sb = qr_q8_maxpool2d_scratch(&p);
            QT_CHECKF(sb < ((size_t)1 << 21), "window %d: %zu bytes of scratch", wi, sb);
            void *scratch = qr_aligned_alloc(sb);
            for (int l = 0; l < nl; l++) {
                memset(y, 0xa5, (size_t)(OH * OW) + 64);
                lv[l].q8_maxpool2d(&p, y, scratch);
                QT_CHECKF(!memcmp(y, want, (size_t)(OH * OW)), "%s window %d signed %d", qr_isa_name(lv[l].isa), wi, sg);
                QT_CHECKF(y[OH * OW] == 0xa5, "%s wrote past y", qr_isa_name(lv[l].isa));
            }
            qr_aligned_free(scratch);
            free(x); free(want); free(y);
        }
}

/* ==== the ops: closed forms of the ONNX semantics ========================================== */

/* Declares graph output `name` of type dt without a shape (inferred). */
static void qt_hg_output(QtModel *mb, const char *name, QrDType dt) {
    Onnx__ValueInfoProto *vi = qt_mb_value_info(mb, name, dt, 0, NULL);
    vi->type->tensor_type->shape = NULL;
    mb->outputs[mb->g.n_output++] = vi;
}

/* A model of one node `op` (attributes set by the caller) from x (dtype, 4-D dims) to y. */
static Onnx__NodeProto *qt_hg_model(QtModel *mb, const char *op, QrDType dt, const int64_t *dx) {
    qt_mb_init(mb, 17);
    qt_mb_input(mb, "x", dt, 4, dx);
    qt_hg_output(mb, "y", dt);
    return qt_mb_node(mb, op, "n", "x", "y");
}

static void qt_hg_str_attr(QtModel *mb, Onnx__NodeProto *n, const char *name, const char *v) {
    Onnx__AttributeProto *a = qt_mb_attr(mb, n, name, QR_ATTR_STRING);
    a->has_s = 1;
    a->s.data = (uint8_t *)qr_arena_strdup(&mb->a, v);
    a->s.len = strlen(v);
}

static void qt_hg_int_attr(QtModel *mb, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = qt_mb_attr(mb, n, name, QR_ATTR_INT);
    a->has_i = 1;
    a->i = v;
}

/* Runs `op` (kernel_shape ks, auto_pad SAME_UPPER, count_include_pad cip unless < 0) on x:
 * dims dx, standard normal values from seed. On success x and y[0] are the caller's to free;
 * on failure nothing is left allocated. */
static QrStatus qt_hg_pool_run(const char *op, const int64_t *dx, const int64_t *ks, int cip, uint64_t seed,
                               const char *file, QrTensor *x, QrTensor *y) {
    QtModel mb;
    Onnx__NodeProto *n = qt_hg_model(&mb, op, QR_DT_F32, dx);
    qt_mb_attr_ints(&mb, n, "kernel_shape", 2, ks);
    qt_hg_str_attr(&mb, n, "auto_pad", "SAME_UPPER");
    if (cip >= 0) qt_hg_int_attr(&mb, n, "count_include_pad", cip);
    memset(y, 0, sizeof *y);
    QrStatus st = qt_hd_tensor(x, QR_DT_F32, 4, dx, NULL);
    if (st == QR_OK) {
        float *xv = x->data;
        for (int64_t i = 0; i < x->numel; i++) xv[i] = qr_rng_normal(&seed);
        st = qt_hd_run(&mb, file, x, y);
        if (st != QR_OK) qr_tensor_free_data(x);
    }
    qt_mb_free(&mb);
    return st;
}

/* MaxPool SAME_UPPER [2^31-1, 2] on 1x3x32x32 (the fuzz timeout): every window holds all 32
 * rows, so y[c][oh][ow] = max over the rows of columns ow and ow + 1 (the last column alone). */
static void test_hg_maxpool_op(void) {
    int64_t dx[4] = { 1, 3, 32, 32 }, ks[2] = { QT_HG_BIG, 2 };
    QrTensor x, y[1];
    QT_OK(qt_hg_pool_run("MaxPool", dx, ks, -1, 3, "hg_maxpool.onnx", &x, y));
    const float *xv = x.data;
    bool ok = y[0].rank == 4 && y[0].dims[2] == 32 && y[0].dims[3] == 32;
    const float *yv = y[0].data;
    for (int64_t c = 0; ok && c < 3; c++)
        for (int64_t oh = 0; ok && oh < 32; oh++)
            for (int64_t ow = 0; ok && ow < 32; ow++) {
                float m = -INFINITY;
                for (int64_t ih = 0; ih < 32; ih++)
                    for (int64_t iw = ow; iw < QR_MIN(ow + 2, 32); iw++) m = QR_MAX(m, xv[(c * 32 + ih) * 32 + iw]);
                ok = yv[(c * 32 + oh) * 32 + ow] == m;
            }
    qr_tensor_free_data(&x);
    qt_hd_free(y, 1);
    QT_CHECK(ok);
}

/* AveragePool SAME_UPPER [3, 2^31-1] on 1x2x16x20: rows [oh-1, oh+1] and every column. The
 * divisor follows the ONNX spec: the taps inside x (count_include_pad 0), or the taps inside the
 * padded extent (1): 3 rows times 2^31 - 1 - (ow - (pad_begin + pad_end - 19)) ... computed here
 * as min(k, in + pe - t) per axis from the window start t. */
static void test_hg_avgpool_op(void) {
    int64_t dx[4] = { 1, 2, 16, 20 }, ks[2] = { 3, QT_HG_BIG };
    for (int cip = 0; cip < 2; cip++) {
        QrTensor x, y[1];
        QT_OK(qt_hg_pool_run("AveragePool", dx, ks, cip, 4, "hg_avgpool.onnx", &x, y));
        const float *xv = x.data;
        /* SAME_UPPER: total pad (out - 1) * s + k - in, the smaller half first */
        const int64_t tot_h = 15 + 3 - 16, tot_w = 19 + QT_HG_BIG - 20;
        const int64_t pb_h = tot_h / 2, pe_h = tot_h - pb_h, pb_w = tot_w / 2, pe_w = tot_w - pb_w;
        double worst = 0;
        const float *yv = y[0].data;
        for (int64_t c = 0; c < 2; c++)
            for (int64_t oh = 0; oh < 16; oh++)
                for (int64_t ow = 0; ow < 20; ow++) {
                    int64_t th = oh - pb_h, tw = ow - pb_w;
                    double sum = 0, sabs = 0, inside = 0;
                    for (int64_t ih = QR_MAX(th, 0); ih < QR_MIN(th + 3, 16); ih++)
                        for (int64_t iw = 0; iw < 20; iw++) {
                            sum += xv[(c * 16 + ih) * 20 + iw];
                            sabs += fabs(xv[(c * 16 + ih) * 20 + iw]);
                            inside++;
                        }
                    double padded = (double)QR_MIN(3, 16 + pe_h - th) * (double)QR_MIN(QT_HG_BIG, 20 + pe_w - tw);
                    double want = sum / (cip ? padded : inside);
                    /* the sum is float (ONNX Runtime's order): error relative to sum |x| / divisor */
                    double err = fabs(yv[(c * 16 + oh) * 20 + ow] - want) / (sabs / (cip ? padded : inside) + 1e-30);
                    worst = QR_MAX(worst, err);
                }
        qr_tensor_free_data(&x);
        qt_hd_free(y, 1);
        QT_CHECKF(worst < 64 * FLT_EPSILON, "count_include_pad=%d: relative error %g", cip, worst);
    }
}

/* LpPool (p = 2) SAME_UPPER [2^31-1, 2^31-1]: every window is the whole plane. */
static void test_hg_lppool_op(void) {
    int64_t dx[4] = { 1, 3, 9, 13 }, ks[2] = { QT_HG_BIG, QT_HG_BIG };
    QrTensor x, y[1];
    QT_OK(qt_hg_pool_run("LpPool", dx, ks, -1, 8, "hg_lppool.onnx", &x, y));
    const float *xv = x.data;
    double worst = 0;
    for (int64_t c = 0; c < 3; c++) {
        double s = 0;
        for (int64_t i = 0; i < 9 * 13; i++) s += (double)xv[c * 117 + i] * xv[c * 117 + i];
        for (int64_t i = 0; i < 9 * 13; i++) worst = QR_MAX(worst, fabs(((float *)y[0].data)[c * 117 + i] - sqrt(s)) / sqrt(s));
    }
    qr_tensor_free_data(&x);
    qt_hd_free(y, 1);
    QT_CHECKF(worst < 1e-6, "relative error %g", worst);
}

/* Depthwise QLinearConv, kernel 1x2 with dilation [1, 2^31-1] and begin pad 2^31-1 on the
 * columns: tap 0 always falls in the padding and tap 1 on column ow, so the output equals the
 * 1x1 depthwise convolution with the second weight of each channel. */
static void test_hg_qlconv_dilation(void) {
    enum { C = 4 };
    int64_t dx[4] = { 1, C, 8, 9 }, dw2[4] = { C, 1, 1, 2 }, dw1[4] = { C, 1, 1, 1 }, one = 1;
    int8_t w2[C * 2], w1[C];
    for (int i = 0; i < C * 2; i++) w2[i] = (int8_t)(i * 7 - 20);
    for (int i = 0; i < C; i++) w1[i] = w2[2 * i + 1];
    QrTensor x, y[2][1];
    memset(y, 0, sizeof y);
    QT_OK(qt_hd_tensor(&x, QR_DT_U8, 4, dx, NULL));
    uint64_t rng = 12;
    for (int64_t i = 0; i < x.numel; i++) ((uint8_t *)x.data)[i] = (uint8_t)qr_rng_next(&rng);
    QrStatus st = QR_OK;
    for (int v = 0; v < 2 && st == QR_OK; v++) {
        QtModel mb;
        qt_mb_init(&mb, 17);
        qt_mb_input(&mb, "x", QR_DT_U8, 4, dx);
        qt_hg_output(&mb, "y", QR_DT_U8);
        float s = 0.05f, ws = 0.02f, ys = 0.1f;
        uint8_t z = 7, yz = 100;
        int8_t wz = 0;
        qt_mb_init_raw(&mb, "s", QR_DT_F32, 0, &one, &s, 4);
        qt_mb_init_raw(&mb, "z", QR_DT_U8, 0, &one, &z, 1);
        qt_mb_init_raw(&mb, "ws", QR_DT_F32, 0, &one, &ws, 4);
        qt_mb_init_raw(&mb, "wz", QR_DT_S8, 0, &one, &wz, 1);
        qt_mb_init_raw(&mb, "ys", QR_DT_F32, 0, &one, &ys, 4);
        qt_mb_init_raw(&mb, "yz", QR_DT_U8, 0, &one, &yz, 1);
        qt_mb_init_raw(&mb, "w", QR_DT_S8, 4, v ? dw1 : dw2, v ? w1 : w2, v ? C : 2 * C);
        Onnx__NodeProto *n = qt_mb_node(&mb, "QLinearConv", "qc", "x,s,z,w,ws,wz,ys,yz", "y");
        qt_hg_int_attr(&mb, n, "group", C);
        if (!v) {
            int64_t dl[2] = { 1, QT_HG_BIG }, pads[4] = { 0, QT_HG_BIG, 0, 0 };
            qt_mb_attr_ints(&mb, n, "dilations", 2, dl);
            qt_mb_attr_ints(&mb, n, "pads", 4, pads);
        }
        st = qt_hd_run(&mb, v ? "hg_qlconv1.onnx" : "hg_qlconv2.onnx", &x, y[v]);
        qt_mb_free(&mb);
    }
    qr_tensor_free_data(&x);
    bool same = st == QR_OK && qr_tensor_same_shape(&y[0][0], &y[1][0]) && y[0][0].numel == C * 8 * 9 &&
                !memcmp(y[0][0].data, y[1][0].data, (size_t)y[0][0].numel);
    int distinct = 0;   /* the comparison must see real values, not a constant plane */
    for (int64_t i = 1; st == QR_OK && i < y[1][0].numel; i++) distinct += ((uint8_t *)y[1][0].data)[i] != ((uint8_t *)y[1][0].data)[0];
    qt_hd_free(y[0], 1);
    qt_hd_free(y[1], 1);
    QT_OK(st);
    QT_CHECK(same);
    QT_CHECK(distinct > 0);
}

/* ==== the per-node work limit ========================================================== */

/* Infers shapes of a built model from n_in input shapes of one dtype and rank (nothing runs). */
static QrStatus qt_hg_infer_n(QtModel *mb, const char *file, int n_in, QrDType dt, int rank, const int64_t *dims) {
    QrGraph *g = NULL;
    QR_TRY(qt_load_built(mb, file, &g));
    QrTensor shapes[2];
    memset(shapes, 0, sizeof shapes);
    QrStatus st = QR_OK;
    for (int i = 0; i < n_in && i < 2 && st == QR_OK; i++) st = qr_tensor_set_shape(&shapes[i], dt, rank, dims);
    if (st == QR_OK) st = qr_run_infer(g, shapes);
    qr_graph_free(g);
    free(g);
    return st;
}

static QrStatus qt_hg_infer(QtModel *mb, const char *file, QrDType dt, int rank, const int64_t *dims) {
    return qt_hg_infer_n(mb, file, 1, dt, rank, dims);
}

/* A float Conv of a 1x1x128x128 kernel with 16383 pads on a 1x1x1x1 input: 1.07e9 output
 * positions x 16384 taps = 1.8e13 multiply-adds (hours of arithmetic) and a 4 GB output: refused
 * while shapes are inferred, naming the node, before anything is allocated. The same for
 * QLinearConv, a ConvTranspose of 2^27 inputs x 2^14 taps, a 1-D MaxPool of up to 2^20 taps
 * inside the input for each of 2^21 - 1 positions and an Einsum of 2^40 products. With a lower
 * QR_MAX_NODE_WORK, an ordinary convolution is refused too (the limit is live). */
static void test_hg_work_limit(void) {
    enum { K = 128 };
    int64_t dx[4] = { 1, 1, 1, 1 }, dwt[4] = { 1, 1, K, K }, one = 1, pads[4] = { 16383, 16383, 16383, 16383 };
    float *wf = calloc(K * K, sizeof *wf);
    int8_t *wq = calloc(K * K, 1);
    for (int op = 0; op < 3; op++) {
        QtModel mb;
        qt_mb_init(&mb, 17);
        qt_mb_input(&mb, "x", op == 1 ? QR_DT_U8 : QR_DT_F32, 4, dx);
        qt_hg_output(&mb, "y", op == 1 ? QR_DT_U8 : QR_DT_F32);
        Onnx__NodeProto *n;
        if (op == 1) {
            float s = 0.5f;
            uint8_t z = 0;
            int8_t wz = 0;
            qt_mb_init_raw(&mb, "s", QR_DT_F32, 0, &one, &s, 4);
            qt_mb_init_raw(&mb, "z", QR_DT_U8, 0, &one, &z, 1);
            qt_mb_init_raw(&mb, "wz", QR_DT_S8, 0, &one, &wz, 1);
            qt_mb_init_raw(&mb, "w", QR_DT_S8, 4, dwt, wq, K * K);
            n = qt_mb_node(&mb, "QLinearConv", "huge_conv", "x,s,z,w,s,wz,s,z", "y");
        } else {
            qt_mb_init_raw(&mb, "w", QR_DT_F32, 4, dwt, wf, K * K * sizeof *wf);
            n = qt_mb_node(&mb, op ? "ConvTranspose" : "Conv", "huge_conv", "x,w", "y");
        }
        /* ConvTranspose: 2^27 input positions x 2^14 taps, no padding needed */
        int64_t dx2[4] = { 1, 1, 16384, 8192 };
        if (op == 2) mb.inputs[0] = qt_mb_value_info(&mb, "x", QR_DT_F32, 4, dx2);
        else qt_mb_attr_ints(&mb, n, "pads", 4, pads);
        QrStatus st = qt_hg_infer(&mb, "hg_huge_conv.onnx", op == 1 ? QR_DT_U8 : QR_DT_F32, 4, op == 2 ? dx2 : dx);
        qt_mb_free(&mb);
        QT_CHECKF(st == QR_ERR_NOMEM, "op %d: %s: %s", op, qr_status_name(st), qr_err_msg());
        QT_CHECKF(strstr(qr_err_msg(), "huge_conv") && strstr(qr_err_msg(), "multiply-adds") &&
                  strstr(qr_err_msg(), "QR_MAX_NODE_WORK"), "message: %s", qr_err_msg());
    }
    free(wf);
    free(wq);
    /* MaxPool 1-D: kernel 2^20 over 2^20 inputs padded to 2^21 - 1 outputs */
    QtModel mb;
    int64_t dp[3] = { 1, 1, 1 << 20 }, kp[1] = { 1 << 20 }, pp[2] = { (1 << 20) - 1, (1 << 20) - 1 };
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dp);
    qt_hg_output(&mb, "y", QR_DT_F32);
    Onnx__NodeProto *n = qt_mb_node(&mb, "MaxPool", "huge_pool", "x", "y");
    qt_mb_attr_ints(&mb, n, "kernel_shape", 1, kp);
    qt_mb_attr_ints(&mb, n, "pads", 2, pp);
    QrStatus st = qt_hg_infer(&mb, "hg_huge_pool.onnx", QR_DT_F32, 3, dp);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_NOMEM && strstr(qr_err_msg(), "huge_pool"), "MaxPool: %s: %s", qr_status_name(st), qr_err_msg());
    /* Einsum "ab,cd->": 2^40 products of two 1024x1024 inputs, each summed */
    int64_t de[2] = { 1024, 1024 };
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, de);
    qt_mb_input(&mb, "z", QR_DT_F32, 2, de);
    qt_hg_output(&mb, "y", QR_DT_F32);
    n = qt_mb_node(&mb, "Einsum", "huge_einsum", "x,z", "y");
    qt_hg_str_attr(&mb, n, "equation", "ab,cd->");
    st = qt_hg_infer_n(&mb, "hg_huge_einsum.onnx", 2, QR_DT_F32, 2, de);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_NOMEM && strstr(qr_err_msg(), "huge_einsum"), "Einsum: %s: %s", qr_status_name(st), qr_err_msg());
    /* the limit is live: 3x3 Conv on 1x1x8x8 is 6 * 6 * 9 = 324 multiply-adds */
    int64_t d8[4] = { 1, 1, 8, 8 }, d3[4] = { 1, 1, 3, 3 };
    float w9[9] = { 0 };
    for (int lim = 0; lim < 2; lim++) {
        qt_mb_init(&mb, 17);
        qt_mb_input(&mb, "x", QR_DT_F32, 4, d8);
        qt_hg_output(&mb, "y", QR_DT_F32);
        qt_mb_init_raw(&mb, "w", QR_DT_F32, 4, d3, w9, sizeof w9);
        qt_mb_node(&mb, "Conv", "small_conv", "x,w", "y");
        if (lim) setenv("QR_MAX_NODE_WORK", "300", 1);
        st = qt_hg_infer(&mb, "hg_small_conv.onnx", QR_DT_F32, 4, d8);
        unsetenv("QR_MAX_NODE_WORK");
        qt_mb_free(&mb);
        if (!lim) QT_OK(st);
        else QT_CHECKF(st == QR_ERR_NOMEM && strstr(qr_err_msg(), "small_conv"), "limit 300: %s", qr_err_msg());
    }
}

/* ==== int work buffer ================================================================= */

/* The int ops' work buffer is never NULL, even when a thread's first request is 0 bytes (a
 * fused QLinearConv needs none; callers add offsets to it: UB on NULL). A new thread has an
 * empty thread-local buffer. */
static void *qt_hg_work_thread(void *arg) {
    QrNode node;
    memset(&node, 0, sizeof node);
    node.name = "w";
    node.op_type = "QLinearConv";
    QrOpCtx c = { .node = &node };
    unsigned char *p = NULL;
    *(bool *)arg = qr_op_q_work(&c, 0, &p) == QR_OK && p != NULL;
    qr__qmm_work_release();   /* this thread's buffer */
    return NULL;
}

static void test_hg_work_buffer(void) {
    bool ok = false;
    pthread_t t;
    QT_CHECK(pthread_create(&t, NULL, qt_hg_work_thread, &ok) == 0);
    pthread_join(t, NULL);
    QT_CHECK(ok);
}

static void qt_harden_geom_all(void) {
    QT_RUN(test_hg_f32_maxpool_kernels);
    QT_RUN(test_hg_q8_maxpool_kernels);
    QT_RUN(test_hg_maxpool_op);
    QT_RUN(test_hg_avgpool_op);
    QT_RUN(test_hg_lppool_op);
    QT_RUN(test_hg_qlconv_dilation);
    QT_RUN(test_hg_work_limit);
    QT_RUN(test_hg_work_buffer);
}
