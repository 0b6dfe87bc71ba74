/* ops/q_conv — integer convolution: QLinearConv, ConvInteger, com.microsoft QLinearConv and the internal
 * QLinearConv. Shared helpers: ops/qdq.c (see its map). */

/* ==== integer convolution (QLinearConv, ConvInteger) ================================ */

/* Conv geometry in NCHW order (channels_last inputs are described the same way). */
typedef struct QrQConv {
    int nsp;                              /* spatial rank */
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[QR_MAX_RANK], out[QR_MAX_RANK], k[QR_MAX_RANK];
    int64_t st[QR_MAX_RANK], dl[QR_MAX_RANK], pb[QR_MAX_RANK];
    int64_t in_sz, out_sz, k_sz;
} QrQConv;

/* Reads an optional INTS attribute with `n` entries, each >= lo; absent gives `dflt`. */
/* Attribute values beyond this are refused so window arithmetic cannot overflow int64. */
#define QR_Q_MAX_WINDOW_ATTR ((int64_t)1 << 31)

static QrStatus qr_op_q_ints_attr(const QrOpCtx *c, const char *name, int n, int64_t lo, int64_t dflt, int64_t *out) {
    const int64_t *v;
    int cnt = qr_attr_ints(c->node, name, &v);
    if (cnt < 0) { for (int i = 0; i < n; i++) out[i] = dflt; return QR_OK; }
    if (cnt != n)
        return qr_op_fail(c, QR_ERR_INVALID, "attribute %s has %d values, expected %d", name, cnt, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > QR_Q_MAX_WINDOW_ATTR)
            return qr_op_fail(c, QR_ERR_INVALID, "attribute %s[%d] = %lld is out of range [%lld, %lld]", name, i,
                              (long long)v[i], (long long)lo, (long long)QR_Q_MAX_WINDOW_ATTR);
        out[i] = v[i];
    }
    return QR_OK;
}

/* Output size and begin pad of one spatial dim for explicit pads or auto_pad (ORT's
 * ConvAttributes / PoolAttributes): SAME_* pad (ceil(in/s) - 1) * s + eff_k - in in total,
 * the extra one at the end (UPPER) or start (LOWER). ceil_mode (pools) rounds the window
 * count up but drops a last window that would start in the end padding. */
static QrStatus qr_op_q_out_dim(const QrOpCtx *c, const char *auto_pad, int64_t in, int64_t k, int64_t s, int64_t d,
                              int64_t *pb, int64_t pe, bool ceil_mode, int64_t *out) {
    int64_t eff = (k - 1) * d + 1;
    if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
        int64_t o = (in + s - 1) / s;
        int64_t total = QR_MAX(0, (o - 1) * s + eff - in);
        *pb = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
        pe = total - *pb;
    } else if (!strcmp(auto_pad, "VALID")) {
        *pb = 0;
        pe = 0;
    } else if (strcmp(auto_pad, "NOTSET") != 0) {
        return qr_op_fail(c, QR_ERR_INVALID, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                          auto_pad);
    }
    int64_t num = in + *pb + pe - eff;
    if (num < 0)
        return qr_op_fail(c, QR_ERR_SHAPE, "window of %lld (kernel %lld, dilation %lld) is larger than the padded "
                          "input %lld", (long long)eff, (long long)k, (long long)d, (long long)(in + *pb + pe));
    *out = num / s + 1;
    if (ceil_mode) {
        *out = (num + s - 1) / s + 1;
        if ((*out - 1) * s >= in + *pb) (*out)--;
    }
    return QR_OK;
}

/* x: NCHW-ordered dims (rank xrank); w: [M, C/G, k...]. */
static QrStatus qr__qcv_conv_geom(const QrOpCtx *c, int xrank, const int64_t *xd, const QrTensor *w, QrQConv *g) {
    char s1[128], s2[128];
    memset(g, 0, sizeof *g);
    if (xrank < 3) return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank >= 3 (N, C, spatial...), got %d", xrank);
    if (w->rank != xrank)
        return qr_op_fail(c, QR_ERR_SHAPE, "weight %s must have the input's rank %d",
                          qr_shape_str_brackets(s1, sizeof s1, w->rank, w->dims), xrank);
    g->nsp = xrank - 2;
    g->N = xd[0];
    g->C = xd[1];
    g->M = w->dims[0];
    g->G = qr_attr_int(c->node, "group", 1);
    if (g->G < 1) return qr_op_fail(c, QR_ERR_INVALID, "group %lld must be >= 1", (long long)g->G);
    if (g->C % g->G || g->M % g->G || w->dims[1] != g->C / g->G)
        return qr_op_fail(c, QR_ERR_SHAPE, "input %s, weight %s and group %lld do not fit (C = C_w * group, M %% group "
                          "== 0)", qr_shape_str_brackets(s1, sizeof s1, xrank, xd),
                          qr_shape_str_brackets(s2, sizeof s2, w->rank, w->dims), (long long)g->G);
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    int64_t ks[QR_MAX_RANK], pads[2 * QR_MAX_RANK];
    QR_TRY(qr_op_q_ints_attr(c, "kernel_shape", g->nsp, 1, 0, ks));
    QR_TRY(qr_op_q_ints_attr(c, "strides", g->nsp, 1, 1, g->st));
    QR_TRY(qr_op_q_ints_attr(c, "dilations", g->nsp, 1, 1, g->dl));
    QR_TRY(qr_op_q_ints_attr(c, "pads", 2 * g->nsp, 0, 0, pads));
    const char *ap = qr_attr_str(c->node, "auto_pad", "NOTSET");
    g->in_sz = g->out_sz = g->k_sz = 1;
    for (int i = 0; i < g->nsp; i++) {
        g->in[i] = xd[2 + i];
        g->k[i] = w->dims[2 + i];
        if (g->k[i] < 1 || g->k[i] > QR_Q_MAX_WINDOW_ATTR)
            return qr_op_fail(c, QR_ERR_SHAPE, "weight kernel dim %d is %lld", i, (long long)g->k[i]);
        if (ks[i] && ks[i] != g->k[i])
            return qr_op_fail(c, QR_ERR_INVALID, "kernel_shape[%d] = %lld differs from the weight's %lld", i,
                              (long long)ks[i], (long long)g->k[i]);
        g->pb[i] = pads[i];
        QR_TRY(qr_op_q_out_dim(c, ap, g->in[i], g->k[i], g->st[i], g->dl[i], &g->pb[i], pads[g->nsp + i], false,
                             &g->out[i]));
        g->in_sz *= g->in[i];
        if (qr_mul_overflow_i64(g->k_sz, g->k[i], &g->k_sz))
            return qr_op_fail(c, QR_ERR_SHAPE, "the window size (kernel_shape product) overflows");
        if (qr_mul_overflow_i64(g->out_sz, g->out[i], &g->out_sz))
            return qr_op_fail(c, QR_ERR_SHAPE, "the output size overflows");
    }
    char what[160];
    const double pos = (double)g->N * (double)g->M * (double)g->out_sz, taps = (double)g->Cg * (double)g->k_sz;
    snprintf(what, sizeof what, "%.3g output positions x %.3g taps", pos, taps);
    return qr_op_check_work(c, pos * taps, what);
}

/* p[0..n) = v for elements of es bytes (1 or 2). */
static inline void qr__qcv_fill(unsigned char *p, int es, int64_t n, uint16_t v) {
    if (n <= 0) return;
    if (es == 1) { memset(p, (int)(uint8_t)v, (size_t)n); return; }
    uint16_t *q = (uint16_t *)p;
    for (int64_t i = 0; i < n; i++) q[i] = v;
}

/* Gathers the receptive fields of channels [c0, c1) of one image (group) x (Cg, in...) into
 * col[(ch*k_sz + kf)][out_sz] (im2col), elements of es bytes. Taps outside x get `pad`, the
 * zero point: ORT pads with it, and the GEMM subtracts it, so they contribute nothing. 2-D
 * convolutions copy whole runs of a row; other ranks go element by element. */
static void qr__qcv_im2col(const QrQConv *g, const void *x, int es, uint16_t pad, int64_t c0, int64_t c1, void *col) {
    const int64_t P = g->out_sz;
    unsigned char *cb = col;
    const unsigned char *xb = x;
    if (g->nsp == 2) {
        const int64_t H = g->in[0], W = g->in[1], KH = g->k[0], KW = g->k[1], OH = g->out[0], OW = g->out[1];
        const int64_t sh = g->st[0], sw = g->st[1], dh = g->dl[0], dw = g->dl[1], ph = g->pb[0], pw = g->pb[1];
        for (int64_t ch = c0; ch < c1; ch++)
            for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++) {
                    unsigned char *d = cb + ((ch * KH + kh) * KW + kw) * P * es;
                    /* output columns [lo, hi) read inside the row: 0 <= ow*sw + t < W */
                    const int64_t t = kw * dw - pw;
                    int64_t lo = t >= 0 ? 0 : (-t + sw - 1) / sw, hi = W - 1 - t < 0 ? 0 : (W - 1 - t) / sw + 1;
                    hi = QR_MIN(hi, OW);
                    lo = QR_MIN(lo, hi);
                    for (int64_t oh = 0; oh < OH; oh++, d += OW * es) {
                        const int64_t ih = oh * sh - ph + kh * dh;
                        if (ih < 0 || ih >= H) { qr__qcv_fill(d, es, OW, pad); continue; }
                        qr__qcv_fill(d, es, lo, pad);
                        const unsigned char *xr = xb + ((ch * H + ih) * W + lo * sw + t) * es;
                        if (sw == 1) memcpy(d + lo * es, xr, (size_t)((hi - lo) * es));
                        else if (es == 1) for (int64_t q = 0; q < hi - lo; q++) d[lo + q] = xr[q * sw];
                        else for (int64_t q = 0; q < hi - lo; q++) ((uint16_t *)d)[lo + q] = ((const uint16_t *)xr)[q * sw];
                        qr__qcv_fill(d + hi * es, es, OW - hi, pad);
                    }
                }
        return;
    }
    const int last = g->nsp - 1;
    const int64_t rows = g->out_sz / (g->out[last] ? g->out[last] : 1), ow_n = g->out[last];
    for (int64_t ci = c0; ci < c1; ci++) {
        int64_t kidx[QR_MAX_RANK] = { 0 };
        for (int64_t kf = 0; kf < g->k_sz; kf++) {
            unsigned char *dst = cb + (ci * g->k_sz + kf) * P * es;
            int64_t oidx[QR_MAX_RANK] = { 0 };
            for (int64_t r = 0; r < rows; r++, dst += ow_n * es) {
                int64_t base = 0;
                bool ok = true;
                for (int d = 0; d < last; d++) {
                    int64_t iv = oidx[d] * g->st[d] - g->pb[d] + kidx[d] * g->dl[d];
                    if (iv < 0 || iv >= g->in[d]) { ok = false; break; }
                    base = base * g->in[d] + iv;
                }
                if (!ok) {
                    qr__qcv_fill(dst, es, ow_n, pad);
                } else {
                    base = ci * g->in_sz + base * g->in[last];
                    int64_t off = kidx[last] * g->dl[last] - g->pb[last], s = g->st[last], w = g->in[last];
                    for (int64_t ow = 0; ow < ow_n; ow++) {
                        int64_t iw = ow * s + off;
                        uint16_t v = pad;
                        if (iw >= 0 && iw < w) v = es == 1 ? xb[base + iw] : ((const uint16_t *)xb)[base + iw];
                        if (es == 1) dst[ow] = (uint8_t)v;
                        else ((uint16_t *)dst)[ow] = v;
                    }
                }
                for (int d = last - 1; d >= 0; d--) {
                    if (++oidx[d] < g->out[d]) break;
                    oidx[d] = 0;
                }
            }
            for (int d = last; d >= 0; d--) {
                if (++kidx[d] < g->k[d]) break;
                kidx[d] = 0;
            }
        }
    }
}

/* What a convolution multiplies: x (8/16-bit; NCHW, or N, spatial..., C with nhwc), its zero
 * point, w [M][Cg*k_sz] and its zero points (wzs 0: wz[0] for all, 1: wz[m]). */
typedef struct QrQConvIn {
    const QrTensor *x, *w;
    bool nhwc;
    int32_t xz;
    const int32_t *wz;
    int64_t wzs;
    const void *w_packed;   /* w packed by q8_conv_nhwc_pack or q8_pack_a (the lowering's input 9), or NULL */
} QrQConvIn;

/* What it produces: y = requantize(acc + bias[m], mult[m]) into y's type and range (mult NULL:
 * acc itself as int32, ConvInteger), NCHW or channels last. */
typedef struct QrQConvOut {
    bool nhwc;
    QrQuantAcc kind;
    const int32_t *bias;        /* NULL = none */
    const float *mult;          /* per M (requantize), NULL = int32 output */
    int32_t yz;
    QrQuantRange r;
} QrQConvOut;

/* One pool job of a convolution: an image's im2col over channel chunks, its output rows, or
 * its depthwise planes. */
typedef struct QrQConvJob {
    QrOpCtx *c;
    const QrQConv *g;
    const QrQConvIn *in;
    const QrQConvOut *o;
    int64_t n;                  /* image */
    const void *x;              /* image (group) in NCHW, es bytes per element */
    int es;
    void *col;
    const void *acc;            /* int32 (narrow) or int64 accumulators [M][out_sz] */
    bool narrow;
    int64_t per_task;           /* channels / rows / planes per task */
    unsigned char *slots;       /* depthwise: per-thread scratch */
    size_t slot_bytes, dw_bytes;
    /* depthwise on qr_kern.q8_dwconv2d_rq (one input plane per output plane, every w - wz in
     * int8): w - wz per plane and the planes' requantizations; NULL: plane by plane */
    const int8_t *dwrq_w;
    const QrQ8PlaneRq *dwrq;
} QrQConvJob;

static void qr__qcv_im2col_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQConvJob *j = ctx;
    int64_t c0 = t * j->per_task, c1 = QR_MIN(j->g->Cg, c0 + j->per_task);
    qr__qcv_im2col(j->g, j->x, j->es, (uint16_t)j->in->xz, c0, c1, j->col);
}

/* Output m of image n from its accumulators acc[0..out_sz): requantized (or int32), with bias. */
static void qr__qcv_conv_emit_row(const QrQConvJob *j, int64_t m, const void *acc) {
    const QrQConv *g = j->g;
    const QrQConvOut *o = j->o;
    QrTensor *y = j->c->out[0];
    const int64_t P = g->out_sz;
    const int32_t b = o->bias ? o->bias[m] : 0;
    if (!o->nhwc && o->mult) {
        const int yb = qr_op_q_esize(y->dtype);
        unsigned char *py = (unsigned char *)y->data + (j->n * g->M + m) * P * yb;
        if (j->narrow) qr_kern.s32_requant(P, acc, o->bias ? o->bias + m : NULL, 0, o->mult + m, 0, o->yz, o->r.lo, o->r.hi, py, yb);
        else qr_kern.s64_requant(P, acc, o->bias ? o->bias + m : NULL, 0, o->mult + m, 0, o->yz, o->r.lo, o->r.hi, py, yb);
        return;
    }
    for (int64_t p = 0; p < P; p++) {
        int64_t v = qr_op_q_acc_add(o->kind, j->narrow ? ((const int32_t *)acc)[p] : ((const int64_t *)acc)[p], b);
        int64_t yi = o->nhwc ? (j->n * P + p) * g->M + m : (j->n * g->M + m) * P + p;
        if (o->mult) qr_quant_seti(y, yi, qr_quant_requantize_s64(v, o->mult[m], o->yz, o->r));
        else ((int32_t *)y->data)[yi] = (int32_t)v;
    }
}

static void qr__qcv_emit_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQConvJob *j = ctx;
    const int64_t P = j->g->out_sz;
    for (int64_t m = t * j->per_task; m < QR_MIN(j->g->M, (t + 1) * j->per_task); m++)
        qr__qcv_conv_emit_row(j, m, j->narrow ? (const void *)((const int32_t *)j->acc + m * P)
                                            : (const void *)((const int64_t *)j->acc + m * P));
}

/* Depthwise planes [t*per_task, ...) of image n: qr_kern.q8_dwconv2d into this thread's slot
 * (or straight into an int32 output), then the plane's requantization. */
static void qr__qcv_dw_task(void *ctx, int64_t t, int tid) {
    const QrQConvJob *j = ctx;
    const QrQConv *g = j->g;
    const QrQConvIn *in = j->in;
    unsigned char *slot = j->slots + (size_t)tid * j->slot_bytes;
    int32_t *plane = (int32_t *)(slot + j->dw_bytes);
    int16_t *w16 = (int16_t *)(slot + j->dw_bytes + ((size_t)g->out_sz * sizeof(int32_t) + 63) / 64 * 64);
    const int64_t m0 = t * j->per_task, m1 = QR_MIN(g->M, (t + 1) * j->per_task);
    if (j->dwrq) {   /* convolution and requantization in one pass (qr__qcv_conv_run checked the geometry) */
        QrQ8Win p = { (const unsigned char *)j->x + m0 * g->in_sz, qr_op_q_is_signed(in->x->dtype), in->xz,
                      g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                      g->pb[0], g->pb[1], g->out[0], g->out[1] };
        if (qr_kern.q8_dwconv2d_rq(&p, m1 - m0, g->in_sz, j->dwrq_w + m0 * g->k_sz, j->dwrq + m0,
                                   (uint8_t *)j->c->out[0]->data + (j->n * g->M + m0) * g->out_sz, g->out_sz, slot))
            return;
    }
    for (int64_t m = m0; m < m1; m++) {
        const int64_t ci = m / g->Mg;
        QrQ8Win p = { (const unsigned char *)j->x + ci * g->in_sz, qr_op_q_is_signed(in->x->dtype), in->xz,
                         g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                         g->pb[0], g->pb[1], g->out[0], g->out[1] };
        const int32_t wz = in->wz[m * in->wzs];
        for (int64_t k = 0; k < g->k_sz; k++) w16[k] = (int16_t)(qr_quant_geti(in->w, m * g->k_sz + k) - wz);
        const bool direct = !j->o->mult && !j->o->nhwc;
        int32_t *dst = direct ? (int32_t *)j->c->out[0]->data + (j->n * g->M + m) * g->out_sz : plane;
        qr_kern.q8_dwconv2d(&p, w16, dst, slot);
        if (!direct) qr__qcv_conv_emit_row(j, m, dst);
    }
}

/* Whether the padded phase planes of kern/ref/q8_dwconv2d.c for 2-D geometry g stay within a
 * few times the input plane plus the output (in double: the layout's own int64 sizes overflow
 * for absurd dilations and strides). */
static bool qr__qcv_dw_layout_sane(const QrQConv *g) {
    double hq = (double)g->out[0] + (double)(g->k[0] - 1) * (double)g->dl[0] / (double)g->st[0];
    double wq = (double)g->out[1] + (double)(g->k[1] - 1) * (double)g->dl[1] / (double)g->st[1];
    double planes = hq * wq * (double)g->st[0] * (double)g->st[1];
    return planes <= 8.0 * (double)g->in_sz + 4.0 * (double)g->out_sz + (double)(1 << 20);
}

/* The channels-last path of a 2-D convolution (qr_kern.q8_conv_nhwc_rq): 8-bit NCHW x, ungrouped,
 * requantized into 8-bit NCHW y. The kernel writes each image channels-last into the work buffer
 * (int8 flipped to uint8; QrQ8ConvNhwc.src: a 1x1 convolution's tasks each their own pixels), the
 * weights come packed (in->w_packed, the lowering's) or are packed here.
 * *done is false when the path does not apply (the caller runs the GEMM path). */
static QrStatus qr__qcv_conv_nhwc(QrOpCtx *c, const QrQConv *g, const QrQConvIn *in, const QrQConvOut *o, bool *done) {
    const QrTensor *x = in->x, *w = in->w;
    QrTensor *y = c->out[0];
    *done = false;
    if (!qr_kern.q8_conv_nhwc_rq || !qr_kern.q8_conv_nhwc_pack || in->nhwc || o->nhwc || !o->mult || g->nsp != 2 ||
        g->G != 1 || !qr_quant_is_8bit(x->dtype) || !qr_quant_is_8bit(w->dtype) || qr_op_q_esize(y->dtype) != 1)
        return QR_OK;
    const bool xs = qr_op_q_is_signed(x->dtype);
    const int64_t Cp = (g->C + 3) / 4 * 4, HW = g->in_sz, P = g->out_sz;
    const int32_t zp = in->xz + (xs ? 128 : 0);
    QrQ8ConvNhwc cx = { NULL, zp, g->C, Cp, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0],
                        g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1], NULL, false, NULL };
    const void *wp = in->w_packed;
    size_t wbytes = 0, tot = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (!wp || pass == 1) {   /* not packed by the lowering, or not for these kernels: pack now */
            wbytes = qr_kern.q8_conv_nhwc_pack(g->M, g->C, g->k[0], g->k[1], w->data, qr_op_q_is_signed(w->dtype), in->wz,
                                               in->wzs, NULL);
            if (!wbytes) return QR_OK;
        }
        tot = 0;
        const size_t o_w = qr_op_q_wadd(&tot, (int64_t)wbytes, 1), o_x = qr_op_q_wadd(&tot, HW * Cp, 1);
        unsigned char *wk;
        QR_TRY(qr_op_q_work(c, tot, &wk));
        if (wbytes) {
            if (!qr_kern.q8_conv_nhwc_pack(g->M, g->C, g->k[0], g->k[1], w->data, qr_op_q_is_signed(w->dtype), in->wz,
                                           in->wzs, wk + o_w))
                return QR_OK;   /* some w - wz leaves int8 */
            wp = wk + o_w;
        }
        cx.x = cx.fill = wk + o_x;
        cx.src_signed = xs;
        int64_t n = 0;
        for (; n < g->N; n++) {   /* the kernel writes the image channels-last (QrQ8ConvNhwc.src) */
            cx.src = (const uint8_t *)x->data + n * g->C * HW;
            QrQ8Requant rq = { o->bias, 1, 0, o->mult, 1, 0, o->yz, o->r.lo, o->r.hi,
                               (unsigned char *)y->data + n * g->M * P, P, 1 };
            if (!qr_kern.q8_conv_nhwc_rq(g->M, wp, &cx, &rq)) break;
        }
        if (n == g->N) { *done = true; return QR_OK; }
        if (n > 0 || wbytes) return QR_OK;   /* no scratch in the kernel: the GEMM path redoes it */
    }
    return QR_OK;
}

/* Sets j->dwrq_w / j->dwrq for a depthwise convolution that qr_kern.q8_dwconv2d_rq takes: one
 * input plane per output plane, requantized 8-bit NCHW output, every w - wz in int8, a geometry
 * the level's kernel handles (asked with zero planes); leaves them NULL otherwise. */
static QrStatus qr__qcv_dwrq_prep(QrOpCtx *c, const QrQConv *g, const QrQConvIn *in, const QrQConvOut *o, QrQConvJob *j) {
    const QrTensor *w = in->w, *y = c->out[0];
    j->dwrq_w = NULL;
    j->dwrq = NULL;
    QrQ8Win p = { NULL, qr_op_q_is_signed(in->x->dtype), in->xz, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1],
                  g->dl[0], g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1] };
    if (!qr_kern.q8_dwconv2d_rq || !o->mult || o->nhwc || qr_op_q_esize(y->dtype) != 1 || g->Mg != 1 ||
        !qr_kern.q8_dwconv2d_rq(&p, 0, 0, NULL, NULL, NULL, 0, NULL))
        return QR_OK;
    QrQ8PlaneRq *rq;
    QR_TRY(qr_op_q_alloc(c, (size_t)g->M, sizeof *rq, (void **)&rq));
    const bool ws = qr_op_q_is_signed(w->dtype);   /* one byte per weight: qr_op_q_narrow */
    bool wz0 = w->dtype == QR_DT_S8;   /* int8 weights with zero points 0 are w - wz already */
    for (int64_t m = 0; m < g->M; m++) {
        rq[m] = (QrQ8PlaneRq){ o->bias ? o->bias[m] : 0, o->mult[m], o->yz, o->r.lo, o->r.hi };
        wz0 = wz0 && in->wz[m * in->wzs] == 0;
    }
    int8_t *w8 = wz0 ? (int8_t *)w->data : NULL;
    if (!wz0) {
        QR_TRY(qr_op_q_alloc(c, (size_t)(g->M * g->k_sz), 1, (void **)&w8));
        for (int64_t m = 0; m < g->M; m++) {
            const int32_t wz = in->wz[m * in->wzs];
            for (int64_t k = 0; k < g->k_sz; k++) {
                const int64_t i = m * g->k_sz + k;
                const int32_t v = (ws ? (int32_t)((const int8_t *)w->data)[i] : (int32_t)((const uint8_t *)w->data)[i]) - wz;
                if (v < -128 || v > 127) return QR_OK;
                w8[i] = (int8_t)v;
            }
        }
    }
    j->dwrq_w = w8;
    j->dwrq = rq;
    return QR_OK;
}

/* Runs a convolution for every image: 8-bit operands (qr_op_q_narrow) on qr_kern.q8_dwconv2d
 * (2-D, one input channel per group) or per group on qr_kern.q8_gemm (weights as A with their
 * zero points; B the image itself for a 1x1 stride-1 convolution without padding, its im2col
 * otherwise); wider ones on qr_kern.q16_gemm with both operands widened to 16 bits. Then the
 * requantization (qr_kern.s32_requant / s64_requant per output channel) or the int32 output.
 * Work memory: qr_op_q_work; the pool splits im2col, output rows and depthwise planes. */
static QrStatus qr__qcv_conv_run(QrOpCtx *c, const QrQConv *g, const QrQConvIn *in, const QrQConvOut *o) {
    const QrTensor *x = in->x, *w = in->w;
    QrTensor *y = c->out[0];
    const int64_t kk = g->Cg * g->k_sz, P = g->out_sz, nx = g->C * g->in_sz;
    if (g->N == 0 || g->M == 0 || P == 0) return QR_OK;
    const bool narrow = qr_op_q_narrow(x->dtype, w->dtype, o->kind);
    const int es = narrow ? 1 : 2, xes = qr_op_q_esize(x->dtype);
    bool direct = true;   /* 1x1, stride 1, no padding: the image itself is the column matrix */
    for (int i = 0; i < g->nsp; i++)
        direct = direct && g->k[i] == 1 && g->st[i] == 1 && g->pb[i] == 0 && g->out[i] == g->in[i];
    /* depthwise kernels pad the plane for every tap the window declares: with a dilation of
     * 2^31 that is gigabytes of zeros, so such geometry takes the GEMM, which reads only x */
    const bool dw = narrow && g->nsp == 2 && g->Cg == 1 && qr__qcv_dw_layout_sane(g);
    if (narrow && !dw) {
        bool done;
        QR_TRY(qr__qcv_conv_nhwc(c, g, in, o, &done));
        if (done) return QR_OK;
    }
    const int threads = qr_pool_threads();
    QrQConvJob j = { .c = c, .g = g, .in = in, .o = o, .es = es, .narrow = narrow };
    size_t tot = 0, o_x = 0, o_w = 0, o_col = 0, o_acc = 0, o_dw = 0;
    const bool need_x = in->nhwc || es != xes, need_w = es != qr_op_q_esize(w->dtype);
    /* 8-bit NCHW requantization is fused into the GEMM; int32 outputs go straight to y */
    const bool need_acc = !dw && (o->nhwc || !narrow);
    if (need_x) o_x = qr_op_q_wadd(&tot, nx, (size_t)es);
    if (need_w) o_w = qr_op_q_wadd(&tot, g->M * kk, 2);
    const bool implicit = narrow && g->nsp == 2;   /* the GEMM gathers its B panels from the image */
    if (!dw && !direct && !implicit) o_col = qr_op_q_wadd(&tot, kk * P, (size_t)es);
    if (need_acc) o_acc = qr_op_q_wadd(&tot, g->M * P, narrow ? 4 : 8);
    if (dw) {
        QrQ8Win p = { NULL, false, 0, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                         g->pb[0], g->pb[1], g->out[0], g->out[1] };
        j.dw_bytes = (QR_MAX(qr_q8_dwconv2d_scratch(&p), qr_q8_dwconv2d_rq_scratch(&p)) + 63) / 64 * 64;
        size_t s = 0;
        qr_op_q_wadd(&s, (int64_t)j.dw_bytes, 1);
        qr_op_q_wadd(&s, P, sizeof(int32_t));
        qr_op_q_wadd(&s, g->k_sz, sizeof(int16_t));
        j.slot_bytes = s;
        o_dw = s == SIZE_MAX ? (tot = SIZE_MAX, 0) : qr_op_q_wadd(&tot, (int64_t)s, (size_t)threads);
    }
    unsigned char *wk;
    QR_TRY(qr_op_q_work(c, tot, &wk));
    const void *wdata = w->data;
    if (need_w) { qr_op_q_widen(w, 0, g->M * kk, (uint16_t *)(wk + o_w)); wdata = wk + o_w; }
    j.col = wk + o_col;
    j.acc = wk + o_acc;
    j.slots = wk + o_dw;
    for (int64_t n = 0; n < g->N; n++) {
        j.n = n;
        const void *xi = (const unsigned char *)x->data + n * nx * xes;
        if (need_x) {
            void *d = wk + o_x;
            if (!in->nhwc) qr_op_q_widen(x, n * nx, nx, d);
            else
                for (int64_t ch = 0; ch < g->C; ch++)
                    for (int64_t p = 0; p < g->in_sz; p++) {
                        int32_t v = qr_quant_geti(x, (n * g->in_sz + p) * g->C + ch);
                        if (es == 1) ((uint8_t *)d)[ch * g->in_sz + p] = (uint8_t)v;
                        else ((uint16_t *)d)[ch * g->in_sz + p] = (uint16_t)v;
                    }
            xi = d;
        }
        if (dw) {
            if (n == 0) QR_TRY(qr__qcv_dwrq_prep(c, g, in, o, &j));
            j.x = xi;
            j.per_task = QR_MAX(1, 16384 / QR_MAX(1, P * g->k_sz));   /* small tasks: the pool balances them */
            QrQ8Win pw = { NULL, false, 0, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                           g->pb[0], g->pb[1], g->out[0], g->out[1] };
            int64_t hp, wp;
            if (j.dwrq && qr_kern_dwc_small(&pw, &hp, &wp))   /* whole channels-last blocks per task */
                j.per_task = (j.per_task + QR_KERN_DWC_CB - 1) / QR_KERN_DWC_CB * QR_KERN_DWC_CB;
            qr_pool_for((g->M + j.per_task - 1) / j.per_task, qr__qcv_dw_task, &j);
            continue;
        }
        for (int64_t gr = 0; gr < g->G; gr++) {
            const unsigned char *xg = (const unsigned char *)xi + gr * g->Cg * g->in_sz * es;
            QrQOperand B = { xg, g->in_sz, qr_op_q_is_signed(x->dtype), &in->xz, 0, NULL };
            if (!direct && !implicit) {
                j.x = xg;
                j.per_task = QR_MAX(1, 65536 / QR_MAX(1, g->k_sz * P * es));
                int64_t nt = (g->Cg + j.per_task - 1) / j.per_task;
                if (nt > 1 && kk * P * es >= 65536) qr_pool_for(nt, qr__qcv_im2col_task, &j);
                else qr__qcv_im2col(g, xg, es, (uint16_t)in->xz, 0, g->Cg, j.col);
                B.data = j.col;
                B.ld = P;
            }
            QrQOperand A = { (const unsigned char *)wdata + gr * g->Mg * kk * es, kk, qr_op_q_is_signed(w->dtype),
                             in->wz + gr * g->Mg * in->wzs, in->wzs, g->G == 1 && narrow ? in->w_packed : NULL };
            if (narrow) {
                QrQ8ConvB cb = { xg, qr_op_q_is_signed(x->dtype), in->xz, g->Cg, g->in[0], g->in[1], g->k[0], g->k[1],
                                 g->st[0], g->st[1], g->dl[0], g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1] };
                const bool conv = implicit && !direct;
                if (!need_acc && o->mult) {
                    const int yb = qr_op_q_esize(y->dtype);
                    QrQ8Requant rq = { o->bias ? o->bias + gr * g->Mg : NULL, 1, 0, o->mult + gr * g->Mg, 1, 0, o->yz,
                                       o->r.lo, o->r.hi, (unsigned char *)y->data + (n * g->M + gr * g->Mg) * P * yb, P, yb };
                    qr_kern.q8_gemm_rq(g->Mg, P, kk, &A, conv ? NULL : &B, conv ? &cb : NULL, &rq);
                    continue;
                }
                int32_t *acc = need_acc ? (int32_t *)(wk + o_acc) + gr * g->Mg * P
                                        : (int32_t *)y->data + (n * g->M + gr * g->Mg) * P;
                if (conv) qr_kern.q8_conv_gemm(g->Mg, &A, &cb, acc, P);
                else qr_kern.q8_gemm(g->Mg, P, kk, &A, &B, acc, P, false);
            } else {
                qr_kern.q16_gemm(g->Mg, P, kk, &A, &B, (int64_t *)(wk + o_acc) + gr * g->Mg * P, P, false);
            }
        }
        if (need_acc) {
            j.per_task = QR_MAX(1, 65536 / P);
            int64_t nt = (g->M + j.per_task - 1) / j.per_task;
            if (nt > 1) qr_pool_for(nt, qr__qcv_emit_task, &j);
            else qr__qcv_emit_task(&j, 0, 0);
        }
    }
    return QR_OK;
}

/* Accumulator of a convolution with weights w ([M][kk]) minus their zero points wz (wzs 0: one,
 * 1: per M), input type xdt / zero point xzp and optional int32 bias: s32 for 8-bit operands,
 * else the bound max_m (amax * sum_k |w[m][k] - wz[m]| + |bias[m]|) decides (qr_quant_acc_choose). */
static QrQuantAcc qr_op_conv_acc(QrDType xdt, int32_t xzp, const QrTensor *w, const int32_t *wz, int64_t nwz,
                                    int64_t wzs, int64_t M, int64_t kk, const int32_t *bias) {
    if (qr_quant_is_8bit(xdt) && qr_quant_is_8bit(w->dtype)) return QR_QACC_S32;
    bool fit = qr_quant_fits_s16(xdt, xzp);
    int64_t amax = qr_quant_absmax(xdt, xzp), bound = 0;
    for (int64_t i = 0; i < nwz; i++) fit = fit && qr_quant_fits_s16(w->dtype, wz[i]);
    for (int64_t m = 0; m < M; m++) {
        int64_t sum = 0, b = bias ? bias[m] : 0;
        for (int64_t k = 0; k < kk; k++) {
            int64_t v = (int64_t)qr_quant_geti(w, m * kk + k) - wz[m * wzs];
            sum += v < 0 ? -v : v;
        }
        bound = QR_MAX(bound, qr_quant_bound_madd(sum, amax, b < 0 ? -b : b));
    }
    return qr_quant_acc_choose(false, fit, bound);
}

/* Validates a per-output-channel parameter: one element or 1-D of length M. */
static QrStatus qr__qcv_need_per_m(const QrOpCtx *c, int i, int64_t M, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->numel != 1 && !(t->rank == 1 && t->dims[0] == M)) {
        char a[128];
        return qr_op_fail(c, QR_ERR_SHAPE, "input %d (%s) must be a scalar or 1-D of length M=%lld, got %s", i, what,
                          (long long)M, qr_shape_str_brackets(a, sizeof a, t->rank, t->dims));
    }
    return QR_OK;
}

/* Conv input dims in NCHW order (from NHWC when channels_last). */
static void qr_op_q_nchw_dims(const QrTensor *x, bool nhwc, int64_t *d) {
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[i];
    if (nhwc && x->rank >= 3) {
        d[1] = x->dims[x->rank - 1];
        for (int i = 2; i < x->rank; i++) d[i] = x->dims[i - 1];
    }
}

/* Output dims N, M, out... (or N, out..., M when channels_last). */
static void qr__qcv_conv_out_dims(const QrQConv *g, bool nhwc, int64_t *d) {
    d[0] = g->N;
    for (int i = 0; i < g->nsp; i++) d[(nhwc ? 1 : 2) + i] = g->out[i];
    d[nhwc ? 1 + g->nsp : 1] = g->M;
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]) (ai.onnx 10 and
 * com.microsoft with channels_last): y = saturate(round((acc + B[m]) * (x_scale * w_scale[m]
 * / y_scale)) + y_zp), per-tensor or per-output-channel w parameters. */
static QrStatus qr__qcv_qlconv_check(QrOpCtx *c, QrQConv *g, bool *nhwc) {
    const QrTensor *x = c->in[0], *w = qr_op_in(c, 3), *bias = qr_op_in(c, 8), *yz = qr_op_in(c, 7);
    if (!w) return qr_op_fail(c, QR_ERR_INVALID, "input w is required");
    if (!qr_op_q_ok_act(c, x->dtype) || !qr_op_q_ok_wt(c, w->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "x and w have types %s and %s (%s)",
                          qr_dtype_name(x->dtype), qr_dtype_name(w->dtype), qr_op_q_types_msg(c));
    *nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    int64_t xd[QR_MAX_RANK];
    qr_op_q_nchw_dims(x, *nhwc, xd);
    QR_TRY(qr__qcv_conv_geom(c, x->rank, xd, w, g));
    QR_TRY(qr_op_q_need_scale(c, 1, "x_scale"));
    QR_TRY(qr_op_q_need_scale(c, 4, "w_scale"));
    QR_TRY(qr_op_q_need_scale(c, 6, "y_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 1, "x_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 2, "x_zero_point"));
    QR_TRY(qr_op_q_need_scalar(c, 6, "y_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 7, "y_zero_point"));
    QR_TRY(qr__qcv_need_per_m(c, 4, g->M, "w_scale"));
    QR_TRY(qr__qcv_need_per_m(c, 5, g->M, "w_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 5, w->dtype, "w_zero_point"));
    if (yz && !qr_op_q_ok_act(c, yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                          qr_op_q_types_msg(c));
    if (bias) {
        if (bias->dtype != QR_DT_S32) return qr_op_fail(c, QR_ERR_INVALID, "B has type %s (int32 expected)",
                                                        qr_dtype_name(bias->dtype));
        if (bias->numel != g->M)
            return qr_op_fail(c, QR_ERR_SHAPE, "B has %lld elements, expected M=%lld", (long long)bias->numel,
                              (long long)g->M);
    }
    return QR_OK;
}

static QrStatus qr__qcv_qlconv_shape(QrOpCtx *c) {
    QrQConv g;
    bool nhwc;
    QR_TRY(qr__qcv_qlconv_check(c, &g, &nhwc));
    int64_t d[QR_MAX_RANK];
    qr__qcv_conv_out_dims(&g, nhwc, d);
    const QrTensor *yz = qr_op_in(c, 7);
    return qr_op_set_out(c, 0, yz ? yz->dtype : c->in[0]->dtype, g.nsp + 2, d);
}

static QrStatus qr__qcv_qlconv_exec(QrOpCtx *c) {
    qr_op_q_kern_ready();
    QrQConv g;
    QrQConvOut o = { 0 };
    QR_TRY(qr__qcv_qlconv_check(c, &g, &o.nhwc));
    int32_t *wz;
    float *ws, *mult;
    QR_TRY(qr_op_q_load_scales(c, 4, &ws));
    QR_TRY(qr_op_q_load_zps(c, 5, 1, &wz));
    QR_TRY(qr_op_q_alloc(c, (size_t)g.M, sizeof *mult, (void **)&mult));
    float xs = qr_op_q_scalar_f(c, 1), ys = qr_op_q_scalar_f(c, 6);
    int64_t wss = c->in[4]->numel > 1 ? 1 : 0, nwz = qr_op_in(c, 5) ? c->in[5]->numel : 1;
    for (int64_t m = 0; m < g.M; m++) mult[m] = qr_quant_multiplier(xs, ws[m * wss], ys);
    o.mult = mult;
    o.bias = qr_op_in(c, 8) ? (const int32_t *)c->in[8]->data : NULL;
    o.yz = qr_op_q_scalar_zp(c, 7);
    QrQConvIn in = { c->in[0], c->in[3], o.nhwc, qr_op_q_scalar_zp(c, 2), wz, nwz > 1 ? 1 : 0, NULL };
    const QrTensor *pk = qr_op_q_is_int_op(c) ? qr_op_in(c, 9) : NULL;
    if (pk && pk->dtype == QR_DT_U8 && pk->rank == 1) in.w_packed = pk->data;
    o.kind = qr_op_conv_acc(in.x->dtype, in.xz, in.w, wz, nwz, in.wzs, g.M, g.Cg * g.k_sz, o.bias);
    QR_TRY(qr_op_q_out_range(c, c->out[0]->dtype, &o.r));
    return qr__qcv_conv_run(c, &g, &in, &o);
}

/* ConvInteger(x, w, [x_zero_point], [w_zero_point]) -> int32: the convolution of (x - x_zp)
 * with (w - w_zp[m]); x_zero_point per-tensor, w_zero_point per-tensor or per output channel. */
static QrStatus qr__qcv_convint_check(QrOpCtx *c, QrQConv *g) {
    const QrTensor *x = c->in[0], *w = qr_op_in(c, 1);
    if (!w) return qr_op_fail(c, QR_ERR_INVALID, "input w is required");
    if (!qr_quant_is_8bit(x->dtype) || !qr_quant_is_8bit(w->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "x and w have types %s and %s (int8/uint8 supported)",
                          qr_dtype_name(x->dtype), qr_dtype_name(w->dtype));
    QR_TRY(qr__qcv_conv_geom(c, x->rank, x->dims, w, g));
    QR_TRY(qr_op_q_need_scalar(c, 2, "x_zero_point"));
    QR_TRY(qr__qcv_need_per_m(c, 3, g->M, "w_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    return qr_op_q_need_zp_type(c, 3, w->dtype, "w_zero_point");
}

static QrStatus qr__qcv_convint_shape(QrOpCtx *c) {
    QrQConv g;
    QR_TRY(qr__qcv_convint_check(c, &g));
    int64_t d[QR_MAX_RANK];
    qr__qcv_conv_out_dims(&g, false, d);
    return qr_op_set_out(c, 0, QR_DT_S32, g.nsp + 2, d);
}

static QrStatus qr__qcv_convint_exec(QrOpCtx *c) {
    qr_op_q_kern_ready();
    QrQConv g;
    QR_TRY(qr__qcv_convint_check(c, &g));
    int32_t *wz;
    QR_TRY(qr_op_q_load_zps(c, 3, 1, &wz));
    int64_t nwz = qr_op_in(c, 3) ? c->in[3]->numel : 1;
    QrQConvIn in = { c->in[0], c->in[1], false, qr_op_q_scalar_zp(c, 2), wz, nwz > 1 ? 1 : 0, NULL };
    QrQConvOut o = { .kind = QR_QACC_S32 };
    return qr__qcv_conv_run(c, &g, &in, &o);
}

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_qconv[] = {
    /* QLinearConv's input 9 (optional): its weights packed by the lowering for this level's
     * channels-last convolution or 8-bit GEMM; checked, not trusted (packed again if it does not fit) */
    { "", "QLinearConv", 8, 9, 1, 1, qr__qcv_qlconv_shape, qr__qcv_qlconv_exec, 0, 0 },
    { "", "ConvInteger", 2, 4, 1, 1, qr__qcv_convint_shape, qr__qcv_convint_exec, 0, 0 },
    { "com.microsoft", "QLinearConv", 8, 9, 1, 1, qr__qcv_qlconv_shape, qr__qcv_qlconv_exec, 0,
      1u << 2 | 1u << 5 | 1u << 7 },
    { QR_QUANT_INT_DOMAIN, "QLinearConv", 8, 10, 1, 1, qr__qcv_qlconv_shape, qr__qcv_qlconv_exec, QR_OPF_WRITES_ALL, 0 },
};
