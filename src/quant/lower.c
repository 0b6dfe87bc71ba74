/* quant/lower — implementation. See lower.h.
 *
 * Map: the build (values the lowered graph adds, value access) · Q/DQ and activation
 * recognition · bias · accumulator report · one recogniser per op type · MaxPool moved into
 * the integer domain · qr_lower_graph · int vs sim comparison. */

/* ==== the build =================================================================== */

/* A DequantizeLinear feeding an op: x (integer), scale, zero point (-1 if absent). */
typedef struct QrLwDq {
    int node, x, scale, zp;
    QrDType dt;
    int axis;               /* normalized; -1 per-tensor */
    int64_t n_scales;
} QrLwDq;

/* A value the lowered graph adds after g's: a constant (integer bias, zero point; t owns its
 * data) or an integer activation (t has dtype and shape only). */
typedef struct QrLwNew { const char *name; QrTensor t; bool is_const; } QrLwNew;

/* A MaxPool whose DequantizeLinear input moves behind it: QMaxPool on the integers, then a
 * DequantizeLinear writing the MaxPool's float output (max commutes with a monotone DQ). */
typedef struct QrLwProp { int op; QrLwDq dq; int int_out, zp; } QrLwProp;

typedef struct QrLwBuild {
    const QrGraph *g;
    QrArena *arena;                   /* info's arena (names, notes, lists) */
    int n_new, cap_new;
    QrLwNew *news;
    int n_prop;
    QrLwProp *props;                  /* at most one per node */
    int *vdq;                         /* per value of g: the QrLwProp whose DQ now writes it, or -1 */
    bool int16_integer;               /* 16-bit groups lowered too (qr_lower_graph) */
} QrLwBuild;

/* The tensor behind value v of the lowered graph (g's, or one the build adds). */
static const QrTensor *qr__lw_tensor(const QrLwBuild *b, int v) {
    if (v < 0) return NULL;
    return v < b->g->n_values ? &b->g->values[v].t : &b->news[v - b->g->n_values].t;
}

/* Initializers, values folded from them during shape inference, and constants the build made. */
static bool qr__lw_const(const QrLwBuild *b, int v) {
    if (v < 0) return false;
    if (v >= b->g->n_values) return b->news[v - b->g->n_values].is_const;
    const QrValue *val = &b->g->values[v];
    return val->t.data != NULL && (val->is_init || val->is_const);
}

static float qr__lw_f(const QrLwBuild *b, int v, int64_t i) { return (float)qr_tensor_get_f64(qr__lw_tensor(b, v), i); }
static int32_t qr__lw_i(const QrLwBuild *b, int v, int64_t i) {
    return v >= 0 ? (int32_t)qr_tensor_get_i64(qr__lw_tensor(b, v), i) : 0;
}

/* Adds a value (a zeroed constant when is_const, else shape only); returns its index. */
static QrStatus qr__lw_new(QrLwBuild *b, const char *base, bool is_const, QrDType dt, int rank, const int64_t *dims,
                           int *value) {
    if (b->n_new == b->cap_new) {
        int cap = b->cap_new ? 2 * b->cap_new : 16;
        QrLwNew *nc = qr_arena_array(b->arena, (size_t)cap, sizeof *nc);
        if (!nc) return qr_errf(QR_ERR_NOMEM, "out of memory");
        if (b->n_new) memcpy(nc, b->news, (size_t)b->n_new * sizeof *nc);
        b->news = nc;
        b->cap_new = cap;
    }
    QrLwNew *c = &b->news[b->n_new];
    memset(c, 0, sizeof *c);
    c->is_const = is_const;
    c->name = qr_arena_printf(b->arena, "%s__qreport_int_%d", base, b->n_new);
    if (!c->name) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR_TRY(qr_tensor_set_shape(&c->t, dt, rank, dims));
    if (is_const) QR_TRY(qr_tensor_alloc_data(&c->t));
    *value = b->g->n_values + b->n_new++;
    return QR_OK;
}

/* Drops the values added since mark (a candidate that was not lowered after all). */
static void qr__lw_rollback(QrLwBuild *b, int mark) {
    while (b->n_new > mark) qr_tensor_free_data(&b->news[--b->n_new].t);
}

/* ==== recognition ================================================================= */

static bool qr__lw_is(const QrNode *n, const char *op) {
    return strcmp(n->op_type, op) == 0 && (!n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

/* QuantizeLinear / DequantizeLinear in the ONNX or the com.microsoft domain. */
static bool qr__lw_is_qdq(const QrNode *n, const char *op) {
    return strcmp(n->op_type, op) == 0 && (!n->domain[0] || !strcmp(n->domain, "ai.onnx") ||
                                           !strcmp(n->domain, "com.microsoft"));
}

/* The only node reading v (through one input), with v not a graph output; -1 otherwise. */
static int qr__lw_sole_reader(const QrGraph *g, int v) {
    const QrUse *u;
    if (v < 0 || g->values[v].is_output || qr_graph_readers(g, v, &u) != 1) return -1;
    return u[0].node;
}

/* Recognises value v as the output of a DequantizeLinear with constant scale and zero point,
 * float32 output, no blocks; per-axis allowed only with `per_axis`. A MaxPool output whose DQ
 * moved behind it (b->vdq) counts as that DQ. Returns the reason when not. */
static const char *qr__lw_dq(const QrLwBuild *b, int v, bool per_axis, QrLwDq *d) {
    const QrGraph *g = b->g;
    memset(d, 0, sizeof *d);
    d->node = d->x = d->scale = d->zp = -1;
    if (v >= 0 && b->vdq[v] >= 0) { *d = b->props[b->vdq[v]].dq; d->x = b->props[b->vdq[v]].int_out; return NULL; }
    int p = v >= 0 ? g->values[v].producer : -1;
    if (p < 0 || !qr__lw_is_qdq(&g->nodes[p], "DequantizeLinear")) return "an input is not a DequantizeLinear output";
    const QrNode *n = &g->nodes[p];
    d->node = p;
    d->x = n->in[0];
    d->scale = n->n_in > 1 ? n->in[1] : -1;
    d->zp = n->n_in > 2 ? n->in[2] : -1;
    d->dt = g->values[d->x].t.dtype;
    if (d->scale < 0 || !qr__lw_const(b, d->scale) || (d->zp >= 0 && !qr__lw_const(b, d->zp)))
        return "a DequantizeLinear has a non-constant scale or zero point";
    if (!qr_dtype_is_float(g->values[d->scale].t.dtype)) return "a DequantizeLinear scale is not float";
    if (g->values[n->out[0]].t.dtype != QR_DT_F32) return "a DequantizeLinear output is not float32";
    if (qr_attr_int(n, "block_size", 0) != 0) return "blocked quantization";
    d->n_scales = g->values[d->scale].t.numel;
    d->axis = -1;
    if (d->n_scales != 1) {
        if (!per_axis) return "a per-axis DequantizeLinear on an activation";
        int rank = g->values[d->x].t.rank;
        int64_t ax = qr_attr_int(n, "axis", 1);
        if (ax < 0) ax += rank;
        if (ax < 0 || ax >= rank || g->values[d->scale].t.rank != 1) return "an unsupported per-axis layout";
        d->axis = (int)ax;
    }
    return NULL;
}

/* The output QuantizeLinear: per-tensor, constant parameters, 8/16-bit output. */
typedef struct QrLwQ { int node, x, out, scale, zp; QrDType dt; } QrLwQ;

static const char *qr__lw_q(const QrLwBuild *b, int node, QrLwQ *q) {
    const QrGraph *g = b->g;
    const QrNode *n = &g->nodes[node];
    memset(q, 0, sizeof *q);
    q->node = node;
    q->x = n->in[0];
    q->out = n->out[0];
    q->scale = n->n_in > 1 ? n->in[1] : -1;
    q->zp = n->n_in > 2 ? n->in[2] : -1;
    q->dt = q->out >= 0 ? g->values[q->out].t.dtype : QR_DT_UNDEF;
    if (q->out < 0 || q->scale < 0) return "the QuantizeLinear has no output or scale";
    if (!qr__lw_const(b, q->scale) || (q->zp >= 0 && !qr__lw_const(b, q->zp)))
        return "the QuantizeLinear has a non-constant scale or zero point";
    if (g->values[q->scale].t.numel != 1 || qr_attr_int(n, "block_size", 0) != 0)
        return "the output QuantizeLinear is per-axis or blocked";
    if (!qr_quant_is_act(q->dt)) return "the output type is not int8/uint8/int16/uint16";
    int64_t prec = qr_attr_int(n, "precision", 0);
    if (prec != 0 && prec != QR_DT_F32) return "the QuantizeLinear computes in reduced precision";
    return NULL;
}

/* Bounds of a Relu / Clip (float; NaN = none). False when they are not constants. */
static bool qr__lw_act_bounds(const QrLwBuild *b, const QrNode *n, float *lo, float *hi) {
    *lo = *hi = NAN;
    if (qr__lw_is(n, "Relu")) { *lo = 0.0f; return true; }
    if (!qr__lw_is(n, "Clip")) return false;
    if (n->opset < 11) {
        *lo = qr_attr_float(n, "min", -FLT_MAX);
        *hi = qr_attr_float(n, "max", FLT_MAX);
        return true;
    }
    for (int k = 1; k <= 2; k++) {
        int v = k < n->n_in ? n->in[k] : -1;
        if (v < 0) continue;
        const QrTensor *t = qr__lw_tensor(b, v);
        if (!qr__lw_const(b, v) || t->numel != 1 || !qr_dtype_is_float(t->dtype)) return false;
        *(k == 1 ? lo : hi) = qr__lw_f(b, v, 0);
    }
    return !(*lo > *hi);
}

/* ==== the group being built ==================================================== */

#define QR__LW_MAX_IN 64      /* inputs of one integer node (Concat of 20 tensors) */

typedef struct QrLwGroup {
    int op, act, q;                   /* nodes of g (act -1) */
    QrLwQ oq;
    float act_lo, act_hi;
    const char *op_type;              /* internal op */
    const char *note;
    int n_in;
    int in[QR__LW_MAX_IN];
    QrDType in_dt, w_dt;
    QrQuantAcc acc;
    int32_t qmin, qmax;
    bool copy_attrs;                  /* the op's attributes go onto the integer node */
    const char *domain;               /* the integer node's domain: NULL = QR_QUANT_INT_DOMAIN (with qmin / qmax) */
    int64_t opset_attr;               /* > 0: an `opset` attribute is added (QLinearSoftmax) */
} QrLwGroup;

/* Output side: the QuantizeLinear reading op_out (through a Relu / Clip when allow_act), the
 * clamp [qmin, qmax] = the output type's range narrowed by the activation's bounds (self_act: the
 * op is itself a Relu / Clip), quantized with the output's parameters (quantization is monotone,
 * so clamping after it equals clamping before), and a zero point value for the output type. */
static const char *qr__lw_output(QrLwBuild *b, QrLwGroup *gr, int op_out, bool allow_act, const QrNode *self_act,
                                 QrStatus *st) {
    const QrGraph *g = b->g;
    int r = qr__lw_sole_reader(g, op_out);
    if (r < 0) return "its output is read by several nodes or is a graph output";
    gr->act = -1;
    gr->act_lo = gr->act_hi = NAN;
    if (self_act && !qr__lw_act_bounds(b, self_act, &gr->act_lo, &gr->act_hi)) return "a Clip with non-constant bounds";
    if (allow_act && (qr__lw_is(&g->nodes[r], "Relu") || qr__lw_is(&g->nodes[r], "Clip"))) {
        if (!qr__lw_act_bounds(b, &g->nodes[r], &gr->act_lo, &gr->act_hi)) return "a Clip with non-constant bounds";
        gr->act = r;
        r = qr__lw_sole_reader(g, g->nodes[r].out[0]);
        if (r < 0) return "the activation's output is read by several nodes or is a graph output";
    }
    if (!qr__lw_is_qdq(&g->nodes[r], "QuantizeLinear")) return "its output is not quantized (no QuantizeLinear)";
    const char *why = qr__lw_q(b, r, &gr->oq);
    if (why) return why;
    gr->q = r;
    QrQuantRange rg;
    qr_quant_range(gr->oq.dt, &rg);
    float ys = qr__lw_f(b, gr->oq.scale, 0);
    int32_t yz = qr__lw_i(b, gr->oq.zp, 0);
    if (!(ys > 0)) return "the output scale is not positive";
    gr->qmin = rg.lo;
    gr->qmax = rg.hi;
    if (gr->act_lo == gr->act_lo) gr->qmin = qr_quant_quantize_f32(gr->act_lo, ys, yz, rg);
    if (gr->act_hi == gr->act_hi) gr->qmax = qr_quant_quantize_f32(gr->act_hi, ys, yz, rg);
    if (gr->oq.zp < 0) {            /* the integer ops take the output type from the zero point */
        *st = qr__lw_new(b, g->values[gr->oq.out].name, true, gr->oq.dt, 0, NULL, &gr->oq.zp);
        if (*st != QR_OK) return "out of memory";
    }
    return NULL;
}

/* Appends (x, scale, zp) of a DQ to the node's inputs. */
static void qr__lw_push_dq(QrLwGroup *gr, const QrLwDq *d) {
    gr->in[gr->n_in++] = d->x;
    gr->in[gr->n_in++] = d->scale;
    gr->in[gr->n_in++] = d->zp;
}

/* ==== bias ======================================================================== */

/* The int32 bias of a Conv (per output channel, M values) or Gemm (C, any broadcastable shape,
 * column index = last dim) in the accumulator's scale x_scale * w_scale[col]:
 *  - DequantizeLinear of an int32 constant whose scale is that product (as float32, ONNX Runtime's
 *    bias scale): the integers as they are (ORT's QDQ fusion passes them on);
 *  - another scale: rescaled, round_half_even(b * b_scale / (x_scale * w_scale)) in double;
 *  - a float constant: round_half_even(b / (x_scale * w_scale)) in float32, ONNX Runtime's
 *    WeightBiasQuantization (Mul, Div, Round, Cast).
 * *value = the int32 value to use (-1 when there is no bias). */
static const char *qr__lw_bias(QrLwBuild *b, QrLwGroup *gr, int bias_v, const QrLwDq *x, const QrLwDq *w,
                               int64_t ncols, QrStatus *st, int *value) {
    const QrGraph *g = b->g;
    *value = -1;
    if (bias_v < 0) return NULL;
    float xs = qr__lw_f(b, x->scale, 0);
    QrLwDq bd;
    bool from_dq = qr__lw_dq(b, bias_v, true, &bd) == NULL;
    const QrTensor *src;
    if (from_dq) {
        if (bd.dt != QR_DT_S32) return "the bias DequantizeLinear is not int32";
        for (int64_t i = 0; bd.zp >= 0 && i < qr__lw_tensor(b, bd.zp)->numel; i++)
            if (qr__lw_i(b, bd.zp, i) != 0) return "the bias has a nonzero zero point";
        src = qr__lw_tensor(b, bd.x);
    } else {
        if (!qr__lw_const(b, bias_v) || !qr_dtype_is_float(g->values[bias_v].t.dtype))
            return "the bias is neither a DequantizeLinear nor a float constant";
        src = &g->values[bias_v].t;
    }
    if (!src->data) return "the bias is not constant";
    if (src->rank > 2 || (src->rank >= 1 && src->dims[src->rank - 1] != ncols && src->dims[src->rank - 1] != 1))
        return "the bias shape does not fit the output channels";
    int64_t cols = src->rank >= 1 ? src->dims[src->rank - 1] : 1;
    if (from_dq && bd.n_scales != 1 && bd.n_scales != cols) return "the bias scale does not fit the bias";
    bool direct = from_dq;
    for (int64_t i = 0; direct && i < src->numel; i++) {
        int64_t col = cols == 1 ? 0 : i % cols;
        float acc_scale = xs * qr__lw_f(b, w->scale, w->n_scales == 1 ? 0 : col);
        direct = qr__lw_f(b, bd.scale, bd.n_scales == 1 ? 0 : col) == acc_scale;
    }
    if (direct) { *value = bd.x; return NULL; }
    int v;
    *st = qr__lw_new(b, g->values[bias_v].name, true, QR_DT_S32, src->rank, src->dims, &v);
    if (*st != QR_OK) return "out of memory";
    QrTensor *t = &b->news[v - g->n_values].t;
    src = from_dq ? qr__lw_tensor(b, bd.x) : &g->values[bias_v].t;     /* news may have moved */
    for (int64_t i = 0; i < src->numel; i++) {
        int64_t col = cols == 1 ? 0 : i % cols;
        float acc_scale = xs * qr__lw_f(b, w->scale, w->n_scales == 1 ? 0 : col);
        double q;
        if (from_dq) {
            double bs = qr__lw_f(b, bd.scale, bd.n_scales == 1 ? 0 : col);
            q = nearbyint((double)qr_tensor_get_i64(src, i) * bs / (double)acc_scale);
        } else {
            q = qr_quant_round_f32((float)qr_tensor_get_f64(src, i) / acc_scale);
        }
        if (!(q >= -2147483648.0 && q <= 2147483647.0)) return "the bias does not fit int32 in the accumulator's scale";
        ((int32_t *)t->data)[i] = (int32_t)q;
    }
    gr->note = from_dq ? "bias rescaled to x_scale * w_scale" : "float bias quantized to int32 (x_scale * w_scale), as "
                                                                "ONNX Runtime's WeightBiasQuantization";
    *value = v;
    return NULL;
}

/* ==== accumulator reported for a product ========================================= */

/* What the integer op will choose (qr_quant_acc_choose) for x times weights w, K terms per output
 * column, ncols columns; constant weights laid out [ncols][K] (rows_are_cols: Conv, Gemm with
 * transB) or [K][ncols]; wt NULL (not constant): the worst case K * amax * bmax over the types. */
static QrQuantAcc qr__lw_acc(const QrLwBuild *b, const QrLwDq *x, const QrLwDq *w, const QrTensor *wt, int64_t K,
                             int64_t ncols, bool rows_are_cols, const QrTensor *bias) {
    if (qr_quant_is_8bit(x->dt) && qr_quant_is_8bit(w->dt)) return QR_QACC_S32;
    int32_t xz = qr__lw_i(b, x->zp, 0);
    int64_t amax = qr_quant_absmax(x->dt, xz), bound = 0, bmax = 0, wmax = 0;
    bool fit = qr_quant_fits_s16(x->dt, xz);
    int64_t nwz = w->zp >= 0 ? qr__lw_tensor(b, w->zp)->numel : 1;
    for (int64_t i = 0; i < nwz; i++) {
        int32_t z = qr__lw_i(b, w->zp, i);
        fit = fit && qr_quant_fits_s16(w->dt, z);
        wmax = QR_MAX(wmax, qr_quant_absmax(w->dt, z));
    }
    for (int64_t i = 0; bias && i < bias->numel; i++) {
        int64_t v = qr_tensor_get_i64(bias, i);
        bmax = QR_MAX(bmax, v < 0 ? -v : v);
    }
    if (!wt || !wt->data)
        return qr_quant_acc_choose(false, fit, qr_quant_bound_madd(qr_quant_bound_madd(K, amax, 0), wmax, bmax));
    for (int64_t n = 0; n < ncols; n++) {
        int64_t sum = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t d = qr_tensor_get_i64(wt, rows_are_cols ? n * K + k : k * ncols + n) -
                        qr__lw_i(b, w->zp, nwz == 1 ? 0 : n);
            sum += d < 0 ? -d : d;
        }
        bound = QR_MAX(bound, qr_quant_bound_madd(sum, amax, bmax));
    }
    return qr_quant_acc_choose(false, fit, bound);
}

/* ==== recognisers: fill the group's integer-node inputs or say why not ==================== */

/* Value v computed from constants by a QuantizeLinear (QAT weights: float initializer -> Q ->
 * DQ) is computed now, as ONNX Runtime folds it when it creates a session, into a new constant:
 * *folded receives its index (v itself when v is a constant already; -1 when it is neither). */
static QrStatus qr__lw_fold_q(QrLwBuild *b, int v, int *folded) {
    const QrGraph *g = b->g;
    *folded = qr__lw_const(b, v) ? v : -1;
    int p = v >= 0 && v < g->n_values ? g->values[v].producer : -1;
    if (*folded >= 0 || p < 0 || !qr__lw_is_qdq(&g->nodes[p], "QuantizeLinear")) return QR_OK;
    const QrNode *n = &g->nodes[p];
    const QrTensor *in[3] = { NULL, NULL, NULL };
    if (n->n_in > 3 || n->n_out != 1 || n->out[0] != v) return QR_OK;
    for (int k = 0; k < n->n_in; k++) {
        if (n->in[k] >= 0 && !qr__lw_const(b, n->in[k])) return QR_OK;
        in[k] = n->in[k] >= 0 ? qr__lw_tensor(b, n->in[k]) : NULL;
    }
    QrTensor t = {0};
    if (qr_run_node(g, p, in, &t) != QR_OK) { qr_err_clear(); return QR_OK; }   /* left to the run */
    int nv;
    QrStatus st = qr__lw_new(b, g->values[v].name, false, t.dtype, t.rank, t.dims, &nv);
    if (st != QR_OK) { qr_tensor_free_data(&t); return st; }
    QrLwNew *c = &b->news[nv - g->n_values];
    c->t = t;
    c->is_const = true;
    *folded = nv;
    return QR_OK;
}

/* Constant 8-bit weights of an ungrouped, non-depthwise convolution packed once for this
 * level's channels-last convolution (qr_kern.q8_conv_nhwc_pack) or, where that does not apply,
 * its 8-bit GEMM (qr_kern.q8_pack_a), as the integer node's input 9, so that runs do not pack
 * them again (the op checks that the packing fits the kernels it runs on, and packs itself
 * otherwise). Adds nothing where the level has no packed form. */
static const char *qr__lw_pack_conv(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, const QrLwDq *x, const QrLwDq *w,
                                    QrStatus *st) {
    const QrTensor *wt = qr__lw_tensor(b, w->x);
    if (!qr_quant_is_8bit(x->dt) || !qr_quant_is_8bit(w->dt) || !qr__lw_const(b, w->x) || !wt->data || wt->rank < 3 ||
        wt->dims[0] < 1 || qr_attr_int(n, "group", 1) != 1)
        return NULL;
    qr_kern_init();
    const int64_t M = wt->dims[0], K = wt->numel / M;
    /* the channels-last kernel's form (2-D, every w - wz fits int8), else the GEMM's */
    const bool cx = qr_kern.q8_conv_nhwc_pack && wt->rank == 4;
    const int64_t nwz = w->zp >= 0 ? qr__lw_tensor(b, w->zp)->numel : 0;
    int32_t *wz = calloc((size_t)QR_MAX(nwz, 1), sizeof *wz);
    if (!wz) { *st = qr_errf(QR_ERR_NOMEM, "out of memory"); return "out of memory"; }
    for (int64_t i = 0; i < nwz; i++) wz[i] = qr__lw_i(b, w->zp, i);
    QrQOperand A = { wt->data, K, w->dt == QR_DT_S8, NULL, 0, NULL };
    for (int form = cx ? 0 : 1; form < 2 && *st == QR_OK; form++) {
        int64_t bytes = form == 0 ? (int64_t)qr_kern.q8_conv_nhwc_pack(M, wt->dims[1], wt->dims[2], wt->dims[3], NULL,
                                                                      w->dt == QR_DT_S8, wz, nwz > 1 ? 1 : 0, NULL)
                      : qr_kern.q8_pack_a ? (int64_t)qr_kern.q8_pack_a(M, K, &A, x->dt == QR_DT_S8, NULL) : 0;
        int v = -1;
        if (bytes <= 0 || (*st = qr__lw_new(b, b->g->values[w->x].name, true, QR_DT_U8, 1, &bytes, &v)) != QR_OK) continue;
        wt = qr__lw_tensor(b, w->x);   /* news may have moved */
        A.data = wt->data;
        void *d = b->news[v - b->g->n_values].t.data;
        size_t got = form == 0 ? qr_kern.q8_conv_nhwc_pack(M, wt->dims[1], wt->dims[2], wt->dims[3], wt->data,
                                                           w->dt == QR_DT_S8, wz, nwz > 1 ? 1 : 0, d)
                               : qr_kern.q8_pack_a(M, K, &A, x->dt == QR_DT_S8, d);
        if (got == (size_t)bytes) { gr->in[gr->n_in++] = v; break; }
        qr__lw_rollback(b, v - b->g->n_values);   /* w - wz leaves int8 (then the GEMM's form), or no scratch */
    }
    free(wz);
    return *st == QR_OK ? NULL : "out of memory";
}

static const char *qr__lw_conv(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    QrLwDq x, w;
    const char *why;
    if (n->n_in < 2) return "Conv without weight";
    if ((why = qr__lw_dq(b, n->in[0], false, &x))) return why;
    if ((why = qr__lw_dq(b, n->in[1], true, &w))) return why;
    const QrTensor *wt = qr__lw_tensor(b, w.x);
    if (!qr_quant_is_act(x.dt) || !qr_quant_is_wt(w.dt)) return "operand types other than 8/16-bit integers";
    if (wt->rank < 3) return "the weight's rank is below 3";
    if (qr_quant_is_8bit(x.dt) && qr_quant_is_8bit(w.dt) && qr_attr_int(n, "group", 1) == 1 && !qr__lw_const(b, w.x)) {
        int fw;   /* weights to be packed once: computed now when they come from constants */
        if ((*st = qr__lw_fold_q(b, w.x, &fw)) != QR_OK) return "out of memory";
        if (fw >= 0) { w.x = fw; wt = qr__lw_tensor(b, w.x); }
    }
    if (w.axis >= 0 && (w.axis != 0 || w.n_scales != wt->dims[0])) return "weight quantized along an axis other than 0";
    if ((why = qr__lw_output(b, gr, n->out[0], true, NULL, st))) return why;
    int bias = -1;
    if ((why = qr__lw_bias(b, gr, n->n_in > 2 ? n->in[2] : -1, &x, &w, wt->dims[0], st, &bias))) return why;
    wt = qr__lw_tensor(b, w.x);
    qr__lw_push_dq(gr, &x);
    qr__lw_push_dq(gr, &w);
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    gr->in[gr->n_in++] = bias;
    gr->op_type = "QLinearConv";
    gr->copy_attrs = true;
    gr->in_dt = x.dt;
    gr->w_dt = w.dt;
    int64_t K = wt->numel / (wt->dims[0] ? wt->dims[0] : 1);
    gr->acc = qr__lw_acc(b, &x, &w, qr__lw_const(b, w.x) ? wt : NULL, K, wt->dims[0], true, qr__lw_tensor(b, bias));
    if ((why = qr__lw_pack_conv(b, n, gr, &x, &w, st))) return why;
    return NULL;
}

static const char *qr__lw_gemm(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    QrLwDq a, w;
    const char *why;
    if ((why = qr__lw_dq(b, n->in[0], false, &a))) return why;
    if ((why = qr__lw_dq(b, n->in[1], true, &w))) return why;
    const QrTensor *at = qr__lw_tensor(b, a.x), *wt = qr__lw_tensor(b, w.x);
    if (!qr_quant_is_act(a.dt) || !qr_quant_is_wt(w.dt)) return "operand types other than 8/16-bit integers";
    if (at->rank != 2 || wt->rank != 2) return "A or B is not 2-D";
    bool tb = qr_attr_int(n, "transB", 0) != 0;
    int64_t N = tb ? wt->dims[0] : wt->dims[1], K = tb ? wt->dims[1] : wt->dims[0];
    if (w.axis >= 0 && (w.axis != (tb ? 0 : 1) || w.n_scales != N)) return "B quantized along the K axis";
    int cv = n->n_in > 2 ? n->in[2] : -1;
    if (cv >= 0 && qr_attr_float(n, "beta", 1.0f) != 1.0f) return "beta != 1 with a bias";
    if ((why = qr__lw_output(b, gr, n->out[0], true, NULL, st))) return why;
    int bias = -1;
    if ((why = qr__lw_bias(b, gr, cv, &a, &w, N, st, &bias))) return why;
    wt = qr__lw_tensor(b, w.x);
    qr__lw_push_dq(gr, &a);
    qr__lw_push_dq(gr, &w);
    gr->in[gr->n_in++] = bias;
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    gr->op_type = "QGemm";
    gr->copy_attrs = true;
    gr->in_dt = a.dt;
    gr->w_dt = w.dt;
    gr->acc = qr__lw_acc(b, &a, &w, qr__lw_const(b, w.x) ? wt : NULL, K, N, tb, qr__lw_tensor(b, bias));
    return NULL;
}

static const char *qr__lw_matmul(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    QrLwDq a, w;
    const char *why;
    if ((why = qr__lw_dq(b, n->in[0], false, &a))) return why;
    if ((why = qr__lw_dq(b, n->in[1], true, &w))) return why;
    const QrTensor *wt = qr__lw_tensor(b, w.x);
    if (!qr_quant_is_act(a.dt) || !qr_quant_is_wt(w.dt)) return "operand types other than 8/16-bit integers";
    if (w.axis >= 0 && (wt->rank < 2 || w.axis != wt->rank - 1)) return "B quantized along an axis other than the last";
    if ((why = qr__lw_output(b, gr, n->out[0], true, NULL, st))) return why;
    wt = qr__lw_tensor(b, w.x);
    qr__lw_push_dq(gr, &a);
    qr__lw_push_dq(gr, &w);
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    gr->op_type = "QLinearMatMul";
    gr->in_dt = a.dt;
    gr->w_dt = w.dt;
    int64_t N = wt->rank >= 2 ? wt->dims[wt->rank - 1] : 1, K = wt->rank >= 2 ? wt->dims[wt->rank - 2] : wt->dims[0];
    bool one = qr__lw_const(b, w.x) && wt->rank <= 2;   /* batched B: the worst case */
    gr->acc = qr__lw_acc(b, &a, &w, one ? wt : NULL, K, N, false, NULL);
    return NULL;
}

/* Add, Mul: both inputs dequantized per-tensor. */
static const char *qr__lw_binary(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    QrLwDq x, y;
    const char *why;
    if (n->n_in != 2) return "not two inputs";
    if ((why = qr__lw_dq(b, n->in[0], false, &x)) || (why = qr__lw_dq(b, n->in[1], false, &y))) return why;
    if (!qr_quant_is_act(x.dt) || !qr_quant_is_act(y.dt)) return "operand types other than 8/16-bit integers";
    if ((why = qr__lw_output(b, gr, n->out[0], true, NULL, st))) return why;
    qr__lw_push_dq(gr, &x);
    qr__lw_push_dq(gr, &y);
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    gr->op_type = qr__lw_is(n, "Add") ? "QLinearAdd" : "QLinearMul";
    gr->in_dt = x.dt;
    gr->w_dt = y.dt;
    gr->acc = QR_QACC_F32;
    return NULL;
}

static const char *qr__lw_concat(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    const char *why;
    if (2 + 3 * n->n_in > QR__LW_MAX_IN) return "too many inputs";
    QrLwDq d[QR__LW_MAX_IN / 3];
    for (int k = 0; k < n->n_in; k++) {
        if ((why = qr__lw_dq(b, n->in[k], false, &d[k]))) return why;
        if (!qr_quant_is_act(d[k].dt)) return "operand types other than 8/16-bit integers";
    }
    if ((why = qr__lw_output(b, gr, n->out[0], true, NULL, st))) return why;
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    for (int k = 0; k < n->n_in; k++) qr__lw_push_dq(gr, &d[k]);
    gr->op_type = "QLinearConcat";
    gr->copy_attrs = true;
    gr->in_dt = d[0].dt;
    gr->acc = QR_QACC_NONE;
    return NULL;
}

/* MaxPool's Indices output is read (or is a graph output). */
static bool qr__lw_indices_used(const QrGraph *g, const QrNode *n) {
    return n->n_out > 1 && n->out[1] >= 0 && g->values[n->out[1]].n_uses > 0;
}

/* GlobalAveragePool, AveragePool, MaxPool, and a Relu / Clip on its own: (X, x_scale, x_zp,
 * y_scale, y_zp). */
static const char *qr__lw_unary(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    QrLwDq x;
    const char *why;
    if ((why = qr__lw_dq(b, n->in[0], false, &x))) return why;
    if (!qr_quant_is_act(x.dt)) return "operand type other than 8/16-bit integers";
    bool act = qr__lw_is(n, "Relu") || qr__lw_is(n, "Clip");
    if (qr__lw_is(n, "MaxPool") && qr__lw_indices_used(b->g, n)) return "MaxPool's Indices output is used";
    if (qr__lw_is(n, "AveragePool")) {
        const int64_t *dl;
        int nd = qr_attr_ints(n, "dilations", &dl);
        for (int i = 0; i < nd; i++) if (dl[i] != 1) return "AveragePool with dilations";
    }
    if ((why = qr__lw_output(b, gr, n->out[0], !act, act ? n : NULL, st))) return why;
    qr__lw_push_dq(gr, &x);
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    gr->in_dt = x.dt;
    gr->copy_attrs = !act;
    if (qr__lw_is(n, "GlobalAveragePool")) {
        gr->op_type = "QLinearGlobalAveragePool";
        gr->copy_attrs = false;
        gr->acc = qr_quant_is_8bit(x.dt) ? QR_QACC_S32 : QR_QACC_S64;
    } else if (qr__lw_is(n, "AveragePool")) {
        gr->op_type = "QLinearAveragePool";
        gr->acc = QR_QACC_F32;
    } else if (qr__lw_is(n, "MaxPool")) {
        gr->op_type = "QMaxPool";
        gr->acc = QR_QACC_NONE;
    } else {
        gr->op_type = "QRequantize";
        gr->acc = QR_QACC_NONE;
    }
    return NULL;
}

/* Softmax between an 8-bit per-tensor DequantizeLinear and a QuantizeLinear of the same type:
 * com.microsoft.QLinearSoftmax (ops/contrib_int.c: ONNX Runtime's lookup-table kernel), with the
 * Softmax's attributes and `opset` = its opset, exactly what ORT's QDQ transformer does at level
 * 'all' (UnarySelector: one DQ, one Q, input and output types equal, 8-bit; the action copies the
 * attributes and adds opset; so an opset < 13 Softmax without `axis` runs along the last axis, the
 * contrib schema's default, as in ORT). 16-bit groups stay float (ORT has no 16-bit kernel). */
static const char *qr__lw_softmax(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st) {
    QrLwDq x;
    const char *why;
    if ((why = qr__lw_dq(b, n->in[0], false, &x))) return why;
    if (!qr_quant_is_8bit(x.dt)) return "QLinearSoftmax is 8-bit only (ONNX Runtime runs other Softmax groups in float)";
    if ((why = qr__lw_output(b, gr, n->out[0], false, NULL, st))) return why;
    if (gr->oq.dt != x.dt) return "the QuantizeLinear's type differs from the input's (ONNX Runtime keeps it float)";
    qr__lw_push_dq(gr, &x);
    gr->in[gr->n_in++] = gr->oq.scale;
    gr->in[gr->n_in++] = gr->oq.zp;
    gr->op_type = "QLinearSoftmax";
    gr->domain = "com.microsoft";
    gr->opset_attr = n->opset > 0 ? n->opset : 13;
    gr->copy_attrs = true;
    gr->in_dt = x.dt;
    gr->acc = QR_QACC_F32;
    gr->note = "ONNX Runtime's QLinearSoftmax: a 256-entry exp table of the input codes, float32 sum, y = round(t * "
               "floor(1 / y_scale) / sum) + y_zp";
    return NULL;
}

typedef const char *(*QrLwRecog)(QrLwBuild *b, const QrNode *n, QrLwGroup *gr, QrStatus *st);
static const struct { const char *op; QrLwRecog fn; } qr__lw_recogs[] = {
    { "Conv", qr__lw_conv }, { "Gemm", qr__lw_gemm }, { "MatMul", qr__lw_matmul },
    { "Add", qr__lw_binary }, { "Mul", qr__lw_binary }, { "Concat", qr__lw_concat },
    { "GlobalAveragePool", qr__lw_unary }, { "AveragePool", qr__lw_unary }, { "MaxPool", qr__lw_unary },
    { "Relu", qr__lw_unary }, { "Clip", qr__lw_unary }, { "Softmax", qr__lw_softmax },
};

/* A node is a candidate when it reads a DequantizeLinear output or feeds a QuantizeLinear
 * (directly or through a Relu / Clip): it sits between quantizers. */
static bool qr__lw_candidate(const QrLwBuild *b, const QrNode *n) {
    const QrGraph *g = b->g;
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k], p = v >= 0 ? g->values[v].producer : -1;
        if (p >= 0 && (qr__lw_is_qdq(&g->nodes[p], "DequantizeLinear") || b->vdq[v] >= 0)) return true;
    }
    const QrUse *u;
    int nu = n->n_out > 0 && n->out[0] >= 0 ? qr_graph_readers(g, n->out[0], &u) : 0;
    for (int i = 0; i < nu; i++)
        if (qr__lw_is_qdq(&g->nodes[u[i].node], "QuantizeLinear")) return true;
    return false;
}

static bool qr__lw_is16(QrDType dt) { return dt == QR_DT_U16 || dt == QR_DT_S16; }

/* Group gr of node n quantizes something to 16 bits: its output or one of its inputs. */
static bool qr__lw_group16(const QrLwBuild *b, const QrNode *n, const QrLwGroup *gr) {
    if (qr__lw_is16(gr->oq.dt)) return true;
    for (int k = 0; k < n->n_in; k++) {
        QrLwDq d;
        if (n->in[k] >= 0 && !qr__lw_dq(b, n->in[k], true, &d) && qr__lw_is16(d.dt)) return true;
    }
    return false;
}

/* A MaxPool reading a per-tensor DequantizeLinear whose output is not quantized: pool the
 * integers and dequantize after (exact: max commutes with x -> (x - zp) * scale, scale > 0), so
 * that the ops reading it see a DequantizeLinear and can be lowered (as ONNX Runtime's QDQ
 * propagation does). Returns false (nothing changed) when that does not apply. */
static QrStatus qr__lw_propagate(QrLwBuild *b, int ni, bool *done) {
    const QrGraph *g = b->g;
    const QrNode *n = &g->nodes[ni];
    QrLwDq x;
    *done = false;
    if (!qr__lw_is(n, "MaxPool") || n->out[0] < 0 || qr__lw_indices_used(g, n) || g->values[n->out[0]].is_output)
        return QR_OK;
    if (qr__lw_dq(b, n->in[0], false, &x) || !qr_quant_is_act(x.dt) || !(qr__lw_f(b, x.scale, 0) > 0)) return QR_OK;
    if (qr__lw_is16(x.dt) && !b->int16_integer) return QR_OK;   /* 16-bit: stays float */
    QrLwProp *p = &b->props[b->n_prop];
    memset(p, 0, sizeof *p);
    p->op = ni;
    p->dq = x;
    p->zp = x.zp;
    const QrTensor *y = &g->values[n->out[0]].t;
    if (p->zp < 0) QR_TRY(qr__lw_new(b, g->values[n->out[0]].name, true, x.dt, 0, NULL, &p->zp));
    p->dq.zp = p->zp;
    QR_TRY(qr__lw_new(b, g->values[n->out[0]].name, false, x.dt, y->rank, y->dims, &p->int_out));
    b->vdq[n->out[0]] = b->n_prop++;
    *done = true;
    return QR_OK;
}

/* ==== qr_lower_graph ============================================================== */

static void qr_lower_info_free(QrLowerInfo *info) {
    if (!info) return;
    qr_arena_free(&info->arena);
    memset(info, 0, sizeof *info);
}

/* Failure: frees what the build, the lowered graph and the info hold; returns st. */
static QrStatus qr__lw_fail(QrGraph *out, QrLwBuild *b, QrLowerInfo *info, QrStatus st) {
    if (b) qr__lw_rollback(b, 0);
    if (out) { qr_graph_free(out); memset(out, 0, sizeof *out); }
    qr_lower_info_free(info);
    return st;
}

/* Appends a node to the lowered graph (arrays in out's arena; attributes copied from `attrs`,
 * followed by qmin / qmax when with_clamp). */
static QrStatus qr__lw_add_node(QrGraph *out, int *no, const char *name, const char *domain, const char *op,
                                const int *in, int n_in, int y, const QrAttr *attrs, int n_attr, bool with_clamp,
                                int32_t qmin, int32_t qmax) {
    int na = n_attr + (with_clamp ? 2 : 0);
    QrAttr *at = qr_arena_array(&out->arena, (size_t)na + 1, sizeof *at);
    if (!at) return qr_errf(QR_ERR_NOMEM, "out of memory");
    if (n_attr) memcpy(at, attrs, (size_t)n_attr * sizeof *at);
    if (with_clamp) {
        at[n_attr] = (QrAttr){ .name = "qmin", .type = QR_ATTR_INT, .i = qmin };
        at[n_attr + 1] = (QrAttr){ .name = "qmax", .type = QR_ATTR_INT, .i = qmax };
    }
    out->n_nodes = *no;                               /* kept nodes are copied in place up to here */
    QR_TRY(qr_run_add_node(out, name, op, domain, n_in, in, 1, &y, na, at, NULL));
    *no = out->n_nodes;
    return QR_OK;
}

/* A float Gemm left out of the integer groups whose B is DequantizeLinear of a constant 8-bit
 * matrix [N, K] (transB, per-tensor or per row along axis 0, float32 scale; a QAT weight's
 * QuantizeLinear of constants is folded now, as for the convolutions): it becomes
 * qreport.int.DqGemm(A, Bq, b_scale, b_zp, C) (ops/qdq.c), the same float arithmetic on
 * the weight dequantized in registers (MobileNetV2's classifier: 1.3 MB read per run
 * instead of the 5 MB float copy). Fills in[5] and sets *ok when n is such a Gemm. */
static QrStatus qr__lw_dqgemm(QrLwBuild *b, const QrNode *n, int *in, bool *ok) {
    const QrGraph *g = b->g;
    QrLwDq d;
    *ok = false;
    if (!qr__lw_is(n, "Gemm") || n->n_out != 1 || n->out[0] < 0 || n->n_in < 2 || n->in[0] < 0) return QR_OK;
    if (qr_attr_int(n, "transA", 0) || !qr_attr_int(n, "transB", 0)) return QR_OK;
    if (qr__lw_dq(b, n->in[1], true, &d) || d.node < 0 || !qr_quant_is_8bit(d.dt)) return QR_OK;
    const QrTensor *a = qr__lw_tensor(b, n->in[0]);
    if (a->dtype != QR_DT_F32 || a->rank != 2 || g->values[d.scale].t.dtype != QR_DT_F32) return QR_OK;
    if ((d.zp >= 0 && g->values[d.zp].t.dtype != d.dt) || (n->n_in > 2 && n->in[2] >= 0 && g->values[n->in[2]].t.dtype != QR_DT_F32))
        return QR_OK;
    int x;
    QR_TRY(qr__lw_fold_q(b, d.x, &x));
    if (x < 0) return QR_OK;
    const QrTensor *xt = qr__lw_tensor(b, x);
    if (xt->rank != 2 || xt->dtype != d.dt || (d.axis >= 0 && (d.axis != 0 || d.n_scales != xt->dims[0]))) return QR_OK;
    in[0] = n->in[0];
    in[1] = x;
    in[2] = d.scale;
    in[3] = d.zp;
    in[4] = n->n_in > 2 ? n->in[2] : -1;
    *ok = true;
    return QR_OK;
}

/* A MaxPool on integers (qr__lw_propagate's QrLwProp p, source node ni) and the DequantizeLinear
 * moved behind it, appended to out at *no (advanced), recorded as a group of info. */
static QrStatus qr__lw_emit_prop(QrGraph *out, int *no, QrLowerInfo *info, const QrLwProp *p, int ni, const QrNode *n) {
    int in[5] = { p->dq.x, p->dq.scale, p->zp, p->dq.scale, p->zp };
    int dq_in[3] = { p->int_out, p->dq.scale, p->zp };
    QrQuantRange rg;
    qr_quant_range(p->dq.dt, &rg);
    QrLowerGroup *lg = &info->groups[info->n_groups++];
    memset(lg, 0, sizeof *lg);
    lg->op_node = ni;
    lg->name = n->name;
    lg->pattern = "DQ-MaxPool => MaxPool-DQ";
    lg->int_op = QR_QUANT_INT_DOMAIN ".QMaxPool";
    lg->act_node = lg->q_node = -1;
    lg->out_value = p->int_out;
    lg->out_quantizer = -1;
    lg->node = *no;
    lg->in_dtype = lg->out_dtype = p->dq.dt;
    lg->acc = QR_QACC_NONE;
    lg->qmin = rg.lo;
    lg->qmax = rg.hi;
    lg->note = "DequantizeLinear moved behind the MaxPool (max commutes with it): its readers can be lowered";
    info->node_map[ni] = *no;
    info->node_origin[*no] = ni;
    QrStatus st = qr__lw_add_node(out, no, n->name, QR_QUANT_INT_DOMAIN, "QMaxPool", in, 5, p->int_out, n->attr,
                                  n->n_attr, true, rg.lo, rg.hi);
    const char *dq_name = qr_arena_printf(&out->arena, "%s/DequantizeLinear__qreport_int", n->name);
    info->node_origin[*no] = ni;
    if (st == QR_OK && !dq_name) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK)
        st = qr__lw_add_node(out, no, dq_name, "", "DequantizeLinear", dq_in, 3, n->out[0], NULL, 0, false, 0,
                             0);
    return st;
}

/* Group gr's integer node (DQ -> op [-> activation] -> Q of g, t: g's quantizer table) appended to
 * out at *no (advanced), in its QuantizeLinear's place, recorded in info->groups (A: info's arena). */
static QrStatus qr__lw_emit_group(QrGraph *out, int *no, QrLowerInfo *info, QrArena *A, const QrGraph *g,
                                  const QrQuantTable *t, const QrLwGroup *gr) {
    const QrNode *op = &g->nodes[gr->op];
    info->node_origin[*no] = gr->op;
    QrLowerGroup *lg = &info->groups[info->n_groups++];
    lg->op_node = gr->op;
    lg->name = op->name;
    lg->pattern = qr_arena_printf(A, "DQ-%s%s%s-Q", op->op_type, gr->act >= 0 ? "-" : "",
                                  gr->act >= 0 ? g->nodes[gr->act].op_type : "");
    lg->int_op = qr_arena_printf(A, "%s.%s", gr->domain ? gr->domain : QR_QUANT_INT_DOMAIN, gr->op_type);
    lg->act_node = gr->act;
    lg->q_node = gr->q;
    lg->out_value = gr->oq.out;
    lg->out_quantizer = t && t->by_value ? t->by_value[gr->oq.out] : -1;
    lg->node = *no;
    lg->in_dtype = gr->in_dt;
    lg->w_dtype = gr->w_dt;
    lg->out_dtype = gr->oq.dt;
    lg->acc = gr->acc;
    lg->qmin = gr->qmin;
    lg->qmax = gr->qmax;
    lg->note = gr->note;
    QrStatus st = !lg->pattern || !lg->int_op ? qr_errf(QR_ERR_NOMEM, "out of memory") : QR_OK;
    const QrAttr *attrs = op->attr;
    int n_attr = gr->copy_attrs ? op->n_attr : 0;
    if (st == QR_OK && gr->opset_attr > 0) {          /* the op's attributes and `opset` */
        QrAttr *at = qr_arena_array(&out->arena, (size_t)n_attr + 1, sizeof *at);
        if (!at) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        else {
            if (n_attr) memcpy(at, op->attr, (size_t)n_attr * sizeof *at);
            at[n_attr++] = (QrAttr){ .name = "opset", .type = QR_ATTR_INT, .i = gr->opset_attr };
            attrs = at;
        }
    }
    if (st == QR_OK)
        st = qr__lw_add_node(out, no, op->name, gr->domain ? gr->domain : QR_QUANT_INT_DOMAIN, gr->op_type, gr->in,
                             gr->n_in, gr->oq.out, attrs, n_attr, !gr->domain, gr->qmin, gr->qmax);
    return st;
}

static QrStatus qr_lower_graph(const QrGraph *g, const QrQuantTable *t, bool int16_integer, QrGraph *out,
                               QrLowerInfo *info) {
    memset(out, 0, sizeof *out);
    memset(info, 0, sizeof *info);
    QrArena *A = &info->arena;
    QrLwBuild b = { .g = g, .arena = A, .int16_integer = int16_integer };
    const char *path = g->path ? g->path : "model";
    int nn = g->n_nodes;
    info->n_nodes_in = nn;
    QrLwGroup *groups = qr_arena_array(A, (size_t)nn + 1, sizeof *groups);
    int *group_of = qr_arena_array(A, (size_t)nn + 1, sizeof *group_of);     /* node -> group, -1 */
    int *prop_of = qr_arena_array(A, (size_t)nn + 1, sizeof *prop_of);       /* node -> QrLwProp, -1 */
    bool *removed = qr_arena_array(A, (size_t)nn + 1, sizeof *removed);
    b.props = qr_arena_array(A, (size_t)nn + 1, sizeof *b.props);
    b.vdq = qr_arena_array(A, (size_t)g->n_values + 1, sizeof *b.vdq);
    info->skipped = qr_arena_array(A, (size_t)nn + 1, sizeof *info->skipped);
    info->node_map = qr_arena_array(A, (size_t)nn + 1, sizeof *info->node_map);
    if (!groups || !group_of || !prop_of || !removed || !b.props || !b.vdq || !info->skipped || !info->node_map)
        return qr__lw_fail(NULL, NULL, info, qr_errf(QR_ERR_NOMEM, "out of memory lowering '%s'", path));
    for (int i = 0; i < nn; i++) group_of[i] = prop_of[i] = -1;
    for (int v = 0; v < g->n_values; v++) b.vdq[v] = -1;
    int ng = 0;
    for (int oi = 0; oi < nn; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (removed[ni]) continue;                  /* an activation absorbed by its producer */
        QrLwRecog fn = NULL;
        for (int r = 0; r < QR_ARRAY_LEN(qr__lw_recogs) && !fn; r++)
            if (qr__lw_is(n, qr__lw_recogs[r].op)) fn = qr__lw_recogs[r].fn;
        if (!fn || !qr__lw_candidate(&b, n)) continue;
        QrLwGroup *gr = &groups[ng];
        memset(gr, 0, sizeof *gr);
        gr->op = ni;
        gr->act = gr->q = -1;
        QrStatus st = QR_OK;
        int mark = b.n_new;
        const char *why = n->n_out < 1 || n->out[0] < 0 ? "no output" : fn(&b, n, gr, &st);
        if (st != QR_OK) return qr__lw_fail(NULL, &b, info, st);
        if (!why && (removed[gr->q] || (gr->act >= 0 && removed[gr->act])))
            why = "its QuantizeLinear belongs to another group";
        if (!why && !b.int16_integer && qr__lw_group16(&b, n, gr))
            why = "a 16-bit Q/DQ group: float, as ONNX Runtime's CPU provider runs it (--int16 integer lowers it)";
        if (why) {
            qr__lw_rollback(&b, mark);
            bool moved = false;
            st = qr__lw_propagate(&b, ni, &moved);
            if (st != QR_OK) return qr__lw_fail(NULL, &b, info, st);
            if (moved) { prop_of[ni] = b.n_prop - 1; removed[ni] = true; continue; }
            QrLowerSkip *s = &info->skipped[info->n_skipped++];
            s->node = ni;
            s->name = n->name;
            s->op_type = n->op_type;
            s->why = why;
            continue;
        }
        removed[ni] = removed[gr->q] = true;
        group_of[ni] = group_of[gr->q] = ng;
        if (gr->act >= 0) { removed[gr->act] = true; group_of[gr->act] = ng; }
        ng++;
    }
    /* DequantizeLinear of constants that only fused nodes read are dropped. */
    for (int ni = 0; ni < nn; ni++) {
        const QrNode *n = &g->nodes[ni];
        if (removed[ni] || !qr__lw_is_qdq(n, "DequantizeLinear") || n->out[0] < 0 || !qr__lw_const(&b, n->in[0]))
            continue;
        const QrUse *u;
        int nu = qr_graph_readers(g, n->out[0], &u);
        bool all = !g->values[n->out[0]].is_output;
        for (int i = 0; all && i < nu; i++) all = removed[u[i].node] && prop_of[u[i].node] < 0;
        if (all && nu > 0) removed[ni] = true;
    }

    /* float Gemms on quantized weights (qr__lw_dqgemm): before the new values are committed */
    int (*dqg)[5] = qr_arena_array(A, (size_t)nn + 1, sizeof *dqg);
    bool *is_dqg = qr_arena_array(A, (size_t)nn + 1, sizeof *is_dqg);
    if (!dqg || !is_dqg) return qr__lw_fail(NULL, &b, info, qr_errf(QR_ERR_NOMEM, "out of memory lowering '%s'", path));
    for (int ni = 0; ni < nn; ni++) {
        QrStatus st = removed[ni] ? QR_OK : qr__lw_dqgemm(&b, &g->nodes[ni], dqg[ni], &is_dqg[ni]);
        if (st != QR_OK) return qr__lw_fail(NULL, &b, info, st);
    }

    /* ---- the lowered graph: g's values (same indices), then the new ones ---- */
    int cap_nodes = nn + b.n_prop;
    QrStatus st = qr_graph_clone_values(g, out, cap_nodes + 1);
    info->groups = qr_arena_array(A, (size_t)(ng + b.n_prop) + 1, sizeof *info->groups);
    info->node_origin = qr_arena_array(A, (size_t)cap_nodes + 1, sizeof *info->node_origin);
    if (st == QR_OK && (!info->groups || !info->node_origin)) st = qr_errf(QR_ERR_NOMEM, "out of memory lowering '%s'", path);
    for (int i = 0; st == QR_OK && i < b.n_new; i++) {
        int v;
        st = qr_graph_value(out, b.news[i].name, &v);
        if (st == QR_OK && v != g->n_values + i)
            st = qr_errf(QR_ERR_INVALID, "lowering '%s': new value '%s' collides with an existing name", path, b.news[i].name);
        if (st == QR_OK && b.news[i].is_const) {
            out->values[v].t = b.news[i].t;              /* owned by out from here on */
            out->values[v].is_init = out->values[v].is_const = true;
            memset(&b.news[i].t, 0, sizeof b.news[i].t);
        }
    }
    if (st != QR_OK) return qr__lw_fail(out, &b, info, st);
    b.n_new = 0;

    int no = 0;
    for (int ni = 0; ni < nn && st == QR_OK; ni++) {
        info->node_map[ni] = -1;
        const QrNode *n = &g->nodes[ni];
        if (!removed[ni]) {
            if (is_dqg[ni]) {   /* a float Gemm on a quantized weight */
                info->node_map[ni] = no;
                info->node_origin[no] = ni;
                st = qr__lw_add_node(out, &no, n->name, QR_QUANT_INT_DOMAIN, "DqGemm", dqg[ni], 5, n->out[0], n->attr,
                                     n->n_attr, false, 0, 0);
                continue;
            }
            out->nodes[no] = *n;
            info->node_map[ni] = no;
            info->node_origin[no++] = ni;
            continue;
        }
        if (prop_of[ni] >= 0) {                          /* MaxPool on integers, then DequantizeLinear */
            st = qr__lw_emit_prop(out, &no, info, &b.props[prop_of[ni]], ni, n);
            continue;
        }
        int gi = group_of[ni];
        if (gi < 0 || groups[gi].q != ni) continue;      /* the integer node takes its Q's place */
        st = qr__lw_emit_group(out, &no, info, A, g, t, &groups[gi]);
    }
    if (st != QR_OK) return qr__lw_fail(out, NULL, info, st);
    out->n_nodes = no;
    for (int i = 0; i < info->n_groups; i++) {
        const QrLowerGroup *lg = &info->groups[i];
        info->node_map[lg->op_node] = lg->node;
        if (lg->q_node >= 0) info->node_map[lg->q_node] = lg->node;
        if (lg->act_node >= 0) info->node_map[lg->act_node] = lg->node;
    }
    st = qr_graph_finalize(out);
    if (st != QR_OK) return qr__lw_fail(out, NULL, info, qr_err_wrap(st, "lowering '%s' to integer ops", path));
    QrTensor *shapes = calloc((size_t)g->n_inputs + 1, sizeof *shapes);
    if (!shapes) return qr__lw_fail(out, NULL, info, qr_errf(QR_ERR_NOMEM, "out of memory"));
    for (int i = 0; i < g->n_inputs; i++) {
        shapes[i] = g->values[g->inputs[i]].t;
        shapes[i].owned = false;
    }
    st = qr_run_infer(out, shapes);
    free(shapes);
    if (st != QR_OK) return qr__lw_fail(out, NULL, info, qr_err_wrap(st, "lowering '%s' to integer ops", path));
    return QR_OK;
}

/* ==== int vs sim per layer ======================================================== */

static void qr_lower_cmp_free(QrLowerCmp *c) {
    if (!c) return;
    for (int i = 0; c->kept && i < c->n; i++) qr_tensor_free_data(&c->kept[i]);
    for (int i = 0; c->tie_dist && i < c->n; i++) free(c->tie_dist[i]);
    qr_arena_free(&c->arena);
    memset(c, 0, sizeof *c);
}

static QrStatus qr_lower_cmp_init(QrLowerCmp *c, const QrGraph *g, const QrQuantTable *t, double tie_tol) {
    memset(c, 0, sizeof *c);
    c->g = g;
    c->t = t;
    c->tie_tol = tie_tol > 0 ? tie_tol : QR_LOWER_TIE_TOL;
    int nv = g->n_values;
    c->layers = qr_arena_array(&c->arena, (size_t)t->n + 1, sizeof *c->layers);
    c->layer_of = qr_arena_array(&c->arena, (size_t)nv + 1, sizeof *c->layer_of);
    c->kept = qr_arena_array(&c->arena, (size_t)t->n + 1, sizeof *c->kept);
    c->tie_dist = qr_arena_array(&c->arena, (size_t)t->n + 1, sizeof *c->tie_dist);
    if (!c->layers || !c->layer_of || !c->kept || !c->tie_dist) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; v < nv; v++) c->layer_of[v] = -1;
    for (int i = 0; i < t->n; i++) {
        const QrQuantizer *q = &t->q[i];
        if (q->kind != QR_QK_ACTIVATION || q->int_value < 0 || c->layer_of[q->int_value] >= 0) continue;
        if (q->form != QR_QF_QDQ && q->form != QR_QF_Q_ONLY && q->form != QR_QF_QOP_OUT && q->form != QR_QF_DYNAMIC)
            continue;
        QrLowerLayerCmp *l = &c->layers[c->n];
        memset(l, 0, sizeof *l);
        l->value = q->int_value;
        l->quantizer = i;
        l->name = g->values[q->int_value].name;
        l->layer = q->owner >= 0 ? g->nodes[q->owner].name : "-";
        l->dtype = g->values[q->int_value].t.dtype;
        l->max_tie_dist = -1;
        c->layer_of[q->int_value] = c->n++;
    }
    return QR_OK;
}

/* The layer whose QuantizeLinear reads float value v (per-tensor scale only), or -1. */
static int qr__lw_tie_layer(const QrLowerCmp *c, int v, float *scale) {
    const QrGraph *g = c->g;
    const QrUse *u;
    int nu = qr_graph_readers(g, v, &u);
    for (int i = 0; i < nu; i++) {
        const QrNode *n = &g->nodes[u[i].node];
        if (u[i].input != 0 || !qr__lw_is_qdq(n, "QuantizeLinear") || n->out[0] < 0) continue;
        int l = c->layer_of[n->out[0]];
        if (l < 0 || n->n_in < 2 || n->in[1] < 0) continue;
        const QrValue *sv = &g->values[n->in[1]];
        if (!sv->t.data || !(sv->is_init || sv->is_const) || sv->t.numel != 1) continue;
        *scale = (float)qr_tensor_get_f64(&sv->t, 0);
        return l;
    }
    return -1;
}

/* Compares layer l's two tensors (a: int run, b: sim run). */
static QrStatus qr__lw_cmp_layer(QrLowerCmp *c, int l, const QrTensor *a, const QrTensor *b) {
    QrLowerLayerCmp *L = &c->layers[l];
    if (a->numel != b->numel || a->dtype != b->dtype)
        return qr_errf(QR_ERR_SHAPE, "value '%s': the int and sim modes give %lld x %s and %lld x %s", L->name,
                       (long long)a->numel, qr_dtype_name(a->dtype), (long long)b->numel, qr_dtype_name(b->dtype));
    const float *dist = c->tie_dist[l];
    for (int64_t i = 0; i < a->numel; i++) {
        int64_t d = (int64_t)qr_quant_geti(a, i) - qr_quant_geti(b, i);
        if (!d) continue;
        if (d < 0) d = -d;
        L->n_diff++;
        if (d > L->max_lsb) L->max_lsb = d;
        if (dist) {
            if (dist[i] <= c->tie_tol) L->n_tie++;
            if (dist[i] > L->max_tie_dist) L->max_tie_dist = dist[i];
        }
    }
    L->n += a->numel;
    return QR_OK;
}

/* Keeps a copy of t for layer l, or compares with the copy the other run left. */
static QrStatus qr__lw_cmp_take(QrLowerCmp *c, int l, const QrTensor *t, bool from_int) {
    QrLowerLayerCmp *L = &c->layers[l];
    bool *mine = from_int ? &L->seen_int : &L->seen_sim, other = from_int ? L->seen_sim : L->seen_int;
    if (*mine) return QR_OK;      /* a value is produced once per run; ignore repeats */
    *mine = true;
    QrTensor *k = &c->kept[l];
    if (!other) {
        QR_TRY(qr_tensor_set_shape(k, t->dtype, t->rank, t->dims));
        QR_TRY(qr_tensor_alloc_data(k));
        memcpy(k->data, t->data, qr_tensor_nbytes(t));
        return QR_OK;
    }
    QrStatus st = from_int ? qr__lw_cmp_layer(c, l, t, k) : qr__lw_cmp_layer(c, l, k, t);
    qr_tensor_free_data(k);
    free(c->tie_dist[l]);
    c->tie_dist[l] = NULL;
    return st;
}

static QrStatus qr_lower_cmp_tap_int(void *user, const QrGraph *lowered, int node, int value, const QrTensor *v) {
    QrLowerCmp *c = user;
    QR_UNUSED(lowered);
    QR_UNUSED(node);
    if (value >= c->g->n_values || c->layer_of[value] < 0) return QR_OK;
    return qr__lw_cmp_take(c, c->layer_of[value], v, true);
}

static QrStatus qr_lower_cmp_tap_sim(void *user, const QrGraph *g, int node, int value, const QrTensor *v) {
    QrLowerCmp *c = user;
    QR_UNUSED(node);
    if (value >= c->g->n_values) return QR_OK;
    float scale;
    int tl = v->dtype == QR_DT_F32 ? qr__lw_tie_layer(c, value, &scale) : -1;
    if (tl >= 0 && !c->tie_dist[tl]) {
        /* sim: its QuantizeLinear rounds x / scale; how far that lies from a rounding boundary */
        float *d = malloc((size_t)(v->numel ? v->numel : 1) * sizeof *d);
        if (!d) return qr_errf(QR_ERR_NOMEM, "out of memory");
        const float *x = v->data;
        for (int64_t i = 0; i < v->numel; i++) {
            float u = x[i] / scale;
            d[i] = (float)fabs(u - floor(u) - 0.5);
        }
        c->tie_dist[tl] = d;
    }
    if (c->layer_of[value] < 0) return QR_OK;
    QR_UNUSED(g);
    return qr__lw_cmp_take(c, c->layer_of[value], v, false);
}

static void qr_lower_cmp_finish(QrLowerCmp *c) {
    const QrGraph *g = c->g;
    int nv = g->n_values;
    int *seen = calloc((size_t)nv + 1, sizeof *seen), *stack = malloc(((size_t)nv + 1) * sizeof *stack);
    if (!seen || !stack) { free(seen); free(stack); return; }
    for (int l = 0; l < c->n; l++) {
        QrLowerLayerCmp *L = &c->layers[l];
        int sp = 0, stamp = l + 1;
        stack[sp++] = L->value;
        seen[L->value] = stamp;
        while (sp > 0 && !L->upstream_differs) {
            int v = stack[--sp], p = g->values[v].producer;
            if (p < 0) continue;
            const QrNode *n = &g->nodes[p];
            for (int k = 0; k < n->n_in; k++) {
                int w = n->in[k];
                if (w < 0 || seen[w] == stamp) continue;
                seen[w] = stamp;
                int ul = c->layer_of[w];
                if (ul >= 0) { if (c->layers[ul].n_diff > 0) L->upstream_differs = true; continue; }
                stack[sp++] = w;
            }
        }
    }
    free(seen);
    free(stack);
}

static QrStatus qr_lower_compare(const QrGraph *g, const QrQuantTable *t, const QrGraph *lowered,
                                 const QrTensor *inputs, double tie_tol, QrLowerCmp *out) {
    QR_TRY(qr_lower_cmp_init(out, g, t, tie_tol));
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrRunOpts oi = { .tap = qr_lower_cmp_tap_int, .tap_user = out };
    QrRunOpts os = { .tap = qr_lower_cmp_tap_sim, .tap_user = out };
    QrStatus st = qr_run(lowered, inputs, &oi, outs);
    for (int i = 0; st == QR_OK && i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
    if (st == QR_OK) st = qr_run(g, inputs, &os, outs);
    for (int i = 0; st == QR_OK && i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
    free(outs);
    if (st == QR_OK) qr_lower_cmp_finish(out);
    return st;
}
