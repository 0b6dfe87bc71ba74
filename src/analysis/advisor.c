/* analysis/advisor — implementation. See advisor.h.
 *
 * Map: defaults and names · finding builder · activation statistics of one quantizer ·
 * checks (inputs, layers from the comparison, activations, weights, Concat/Add scales,
 * outputs, sensitivity) · abnormal_layer_advisor.txt. */

static void qr_advisor_defaults(QrAdvisorOpts *o) {
    *o = (QrAdvisorOpts){ .cos_threshold = 0.99, .sqnr_threshold = 20.0, .sat_threshold = 0.01, .zero_threshold = 0.5,
                          .min_levels = 2.0, .outlier_k = QR_OUTLIER_K, .scale_ratio = 2.0, .input_absmax = 32.0,
                          .top_sensitive = 5, .softmax_rel = 0.05, .block_k = QR_OUTLIER_K, .block_share = 0.25 };
}

static const char *qr_adv_kind_name(QrAdvKind k) {
    static const char *const names[QR_ADV_COUNT] = { "nonfinite", "low_similarity", "inherited_error", "outlier_channels",
                                                     "saturation", "rounded_to_zero", "range_too_large", "scale_mismatch",
                                                     "input_not_normalized", "output_not_high_precision", "sensitive",
                                                     "activation_outlier_migration", "softmax_input_grid",
                                                     "block_error_dominant", "weight_error", "input_error",
                                                     "rounding_noise", "block_outlier_weight" };
    return (unsigned)k < QR_ADV_COUNT ? names[k] : "?";
}

static const char *qr_severity_name(QrSeverity s) {
    return s == QR_SEV_ERROR ? "error" : s == QR_SEV_WARNING ? "warning" : "info";
}

/* ==== builder ====================================================================== */

#define QR__ADV_TEXT QR_ADVK_TEXT

/* A new finding about an activation (in qr__adv_check_act) / a weight row (in qr__adv_check_weights). */
#define QR__ADV_NEW(kind, sev)                                                      \
    do {                                                                           \
        f = qr_advk_find(b, kind, sev, node, op);                                   \
        if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");                     \
        f->base_node = base_node;                                                  \
        f->value = value;                                                          \
        f->match = match;                                                          \
        f->q = qi;                                                                 \
    } while (0)
#define QR__ADV_WNEW(kind)                                                          \
    do {                                                                           \
        f = qr_advk_find(b, kind, QR_SEV_WARNING, r->node, r->op_type);             \
        if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");                     \
        f->value = r->name;                                                        \
        f->base_node = bnode;                                                      \
        f->q = r->q;                                                               \
    } while (0)

/* ==== activation statistics ========================================================= */

typedef struct QrAdvAct {
    int64_t n, n_sat, n_zero, n_nonzero, n_nonfinite;
    double xmin, xmax, rms, scale, levels;
    QrWtSpread sp;
} QrAdvAct;

/* Does every reader of value v run a Relu first? Then values a quantizer clips below zero
 * are discarded anyway (ORT gives a Conv output the range of the Relu after it). */
static bool qr__adv_relu_follows(const QrGraph *g, int v) {
    const QrUse *u;
    int nu = v >= 0 ? qr_graph_readers(g, v, &u) : 0;
    for (int r = 0; r < nu; r++) if (strcmp(g->nodes[u[r].node].op_type, "Relu")) return false;
    return nu > 0;
}

/* Lower bound below which clipping is by design: the activation the quantizer implements
 * (removed Relu), 0 when a Relu follows, else NAN. */
static float qr__adv_implied_lo(const QrGraph *g, const QrQuantizer *q) {
    if (q->implied_lo == q->implied_lo) return q->implied_lo;
    return qr__adv_relu_follows(g, q->out_value) ? 0.0f : NAN;
}

/* Statistics of x (float32) under activation quantizer q of the twin: clipped share
 * (values beyond an activation the quantizer implements, e.g. ORT's removed Relu, or below
 * zero before a Relu, do not count), zero share, RMS / scale and the channel spread along axis 1. */
static QrStatus qr__adv_act_stats(const QrGraph *g, const QrQuantizer *q, const QrTensor *x, double k, QrAdvAct *st) {
    memset(st, 0, sizeof *st);
    st->xmin = INFINITY;
    st->xmax = -INFINITY;
    const QrTensor *sc = q->scale_value >= 0 ? &g->values[q->scale_value].t : NULL;
    const QrTensor *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    QrQuantRange range;
    if (!sc || !sc->data || !qr_quant_range(q->dtype, &range) || x->dtype != QR_DT_F32) return QR_OK;
    const float *px = x->data;
    double ss = 0;
    float ilo = qr__adv_implied_lo(g, q), ihi = q->implied_hi;
    st->scale = q->scale_max;
    /* consecutive elements on one quantization parameter (per-tensor: all; per-axis: the
     * elements after the axis; blocked: one) */
    int64_t np = sc->numel, run = 1, n = x->numel;
    if (np <= 1 || x->rank == 0) {
        run = n;
    } else if (q->block_size <= 0) {
        int ax = q->axis < 0 ? q->axis + x->rank : q->axis;
        for (int d = ax + 1; ax >= 0 && ax < x->rank && d < x->rank; d++) run *= x->dims[d];
    }
    const float lo = (float)range.lo, hi = (float)range.hi;
    for (int64_t i0 = 0; i0 < n;) {
        int64_t len = QR_MIN(QR_MAX(run, 1), n - i0);
        int64_t p = qr_weights_param_index(x->rank, x->dims, q->axis, q->block_size, np, i0);
        float s1 = (float)qr_tensor_get_f64(sc, p);
        int32_t z = zp && zp->data ? (int32_t)qr_tensor_get_i64(zp, zp->numel > 1 ? p : 0) : 0;
        const float fz = (float)z;
        for (int64_t i = i0; i < i0 + len; i++) {
            float xv = px[i];
            if (!isfinite(xv)) { st->n_nonfinite++; continue; }
            st->n++;
            ss += (double)xv * xv;
            st->xmin = QR_MIN(st->xmin, xv);
            st->xmax = QR_MAX(st->xmax, xv);
            float dv = xv / s1, rd = rintf(dv);
            bool implied = (ilo == ilo && xv < ilo) || (ihi == ihi && xv > ihi);
            if (!implied && isfinite(rd) && (rd + fz < lo || rd + fz > hi)) st->n_sat++;
            if (xv != 0 && !implied) {
                st->n_nonzero++;
                if (qr_quant_saturate_round(dv, z, range) == z) st->n_zero++;   /* = qr_quant_quantize_f32(xv, s1, ...) */
            }
        }
        i0 += len;
    }
    st->rms = st->n ? sqrt(ss / (double)st->n) : 0;
    st->levels = st->scale > 0 ? st->rms / st->scale : INFINITY;
    /* channels along axis 1 that hold more than one value each (a classifier's [1, C] logits have none) */
    if (x->rank >= 2 && x->dims[1] > 0 && x->numel / x->dims[1] > 1) return qr_weights_spread(px, x->rank, x->dims, 1, k, NULL, &st->sp);
    st->sp.worst = -1;
    return QR_OK;
}

/* The activation statistics of every match whose analysis value has an activation quantizer
 * (qr_dist_act_quant_of), whose pair is verified and whose baseline value is kept, made side by side on the thread pool
 * before the checks (each one qr__adv_act_stats of its own value: the bits of one at a time); the
 * cause and activation checks read them instead of making them, the cause check's twice over.
 * ok[i]: made (st[i] holds it); rc[i] / msg[i]: its failure. */
typedef struct QrAdvActs {
    const QrSession *s;
    double k;
    QrAdvAct *st;
    bool *ok;
    QrStatus *rc;
    char **msg;              /* malloc'd */
} QrAdvActs;

static void qr__adv_acts_task(void *ctx, int64_t i, int tid) {
    QR_UNUSED(tid);
    QrAdvActs *c = ctx;
    const QrSession *s = c->s;
    int qi = s->base[i].data && qr_match_verified(&s->m.m[i]) ? qr_dist_act_quant_of(s, s->vis[i]) : -1;
    if (qi < 0) return;
    c->rc[i] = qr__adv_act_stats(&s->tw.g, &s->qt.q[qi], &s->base[i], c->k, &c->st[i]);
    c->ok[i] = c->rc[i] == QR_OK;
    if (!c->ok[i]) { c->msg[i] = strdup(qr_err_msg()); qr_err_clear(); }
}

static void qr__adv_acts_free(QrAdvActs *c) {
    for (int i = 0; c->msg && i < c->s->m.n; i++) free(c->msg[i]);
    free(c->msg);
    free(c->st);
    free(c->ok);
    free(c->rc);
}

static QrStatus qr__adv_acts_make(const QrSession *s, double k, QrAdvActs *c) {
    size_t n = (size_t)s->m.n + 1;
    *c = (QrAdvActs){ .s = s, .k = k, .st = calloc(n, sizeof *c->st), .ok = calloc(n, sizeof *c->ok),
                      .rc = calloc(n, sizeof *c->rc), .msg = calloc(n, sizeof *c->msg) };
    if (!c->st || !c->ok || !c->rc || !c->msg) {
        qr__adv_acts_free(c);
        *c = (QrAdvActs){ 0 };
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    qr_pool_for(s->m.n, qr__adv_acts_task, c);
    return QR_OK;
}

/* Match i's statistics from the cache (QR_OK with *out NULL: none made), or its failure. */
static QrStatus qr__adv_acts_get(const QrAdvActs *c, int i, const QrAdvAct **out) {
    *out = NULL;
    if (c->rc[i] != QR_OK) return qr_errf(c->rc[i], "%s", c->msg[i] ? c->msg[i] : "out of memory");
    if (c->ok[i]) *out = &c->st[i];
    return QR_OK;
}

/* Findings of one quantized activation (x = the baseline's value, float32). */
static QrStatus qr__adv_check_act(QrAdvList *b, const QrSession *s, int qi, int match, const char *node, const char *base_node,
                                 const char *op, const char *value, const QrTensor *x, const QrAdvAct *pre) {
    const QrAdvisorOpts *o = &b->a->opts;
    const QrQuantizer *q = &s->qt.q[qi];
    QrAdvAct st;
    if (pre) st = *pre;
    else QR_TRY(qr__adv_act_stats(&s->tw.g, q, x, o->outlier_k, &st));
    if (!st.n) return QR_OK;
    const char *dt = qr_dtype_name(q->dtype);
    QrFinding *f;
    double sat = (double)st.n_sat / (double)st.n, zero = st.n_nonzero ? (double)st.n_zero / (double)st.n_nonzero : 0;
    if (sat > o->sat_threshold && b->skip != QR_ADV_SATURATION) {
        QR__ADV_NEW(QR_ADV_SATURATION, QR_SEV_WARNING);
        double lo, hi;
        qr_weights_clip_range(&s->tw.g, q, &lo, &hi);
        QR__ADV_TEXT(b->a, f->reason, "%.2f%% of the values of '%s' are clipped by its %s quantizer (grid [%.6g, %.6g], "
                    "baseline range [%.6g, %.6g])", 100 * sat, value, dt, lo, hi, st.xmin, st.xmax);
        QR__ADV_TEXT(b->a, f->fix, "calibrate this tensor on data that covers the bad case (max or a 99.99%% percentile "
                    "range instead of a tighter one), or give it int16");
        qr_advk_ev(f, "clipped_share", sat);
        qr_advk_ev(f, "grid_lo", lo);
        qr_advk_ev(f, "grid_hi", hi);
        qr_advk_ev(f, "min", st.xmin);
        qr_advk_ev(f, "max", st.xmax);
    }
    if (zero > o->zero_threshold && b->skip != QR_ADV_ZERO) {
        QR__ADV_NEW(QR_ADV_ZERO, QR_SEV_WARNING);
        QR__ADV_TEXT(b->a, f->reason, "%.1f%% of the non-zero values of '%s' quantize to zero: the %s step %.6g is coarse "
                    "for values of RMS %.6g", 100 * zero, value, dt, st.scale, st.rms);
        QR__ADV_TEXT(b->a, f->fix, "narrow this tensor's range (clip rare large values during calibration) or give it int16");
        qr_advk_ev(f, "zero_share", zero);
        qr_advk_ev(f, "scale", st.scale);
        qr_advk_ev(f, "rms", st.rms);
    }
    if (st.levels < o->min_levels && st.n_nonzero > 0 && b->skip != QR_ADV_RANGE) {   /* an all-zero value (dead layer) has no range */
        QR__ADV_NEW(QR_ADV_RANGE, QR_SEV_WARNING);
        QR__ADV_TEXT(b->a, f->reason, "the range of '%s' is too large for %s: its RMS %.6g is only %.2f quantization steps "
                    "(scale %.6g, range [%.6g, %.6g])", value, dt, st.rms, st.levels, st.scale, st.xmin, st.xmax);
        QR__ADV_TEXT(b->a, f->fix, "give this tensor int16, or clip its outliers during calibration (percentile / KL "
                    "calibration instead of min-max)");
        qr_advk_ev(f, "steps_per_rms", st.levels);
        qr_advk_ev(f, "scale", st.scale);
        qr_advk_ev(f, "rms", st.rms);
    }
    if (st.sp.n_outlier > 0 && q->n_scales <= 1 && b->skip != QR_ADV_OUTLIER_CHANNELS) {
        QR__ADV_NEW(QR_ADV_OUTLIER_CHANNELS, QR_SEV_WARNING);
        double ratio = st.sp.median > 0 ? st.sp.max / st.sp.median : INFINITY;
        QR__ADV_TEXT(b->a, f->reason, "'%s' is quantized per-tensor (%s) but %d of its %d channels are outliers: channel %d "
                    "reaches %.6g, %.1fx the median channel abs-max %.6g, so the other channels get few levels",
                    value, dt, st.sp.n_outlier, st.sp.n_ch, st.sp.worst, st.sp.max, ratio, st.sp.median);
        QR__ADV_TEXT(b->a, f->fix, "equalize the channel ranges (cross-layer equalization: scale channel %d of the producing "
                    "layer down and the consumer's weights up), use per-channel quantization where the runtime supports "
                    "it, or give this tensor int16", st.sp.worst);
        qr_advk_ev(f, "ratio", ratio);
        qr_advk_ev(f, "channel", st.sp.worst);
        qr_advk_ev(f, "n_outliers", st.sp.n_outlier);
        qr_advk_ev(f, "channels", st.sp.n_ch);
    }
    return QR_OK;
}

static bool qr__adv_low(const QrAdvisorOpts *o, const QrMetrics *m) {
    return m->cosine < o->cos_threshold || m->sqnr < o->sqnr_threshold;
}

static int qr__adv_dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ==== the cause of a layer's own error (the error split, analysis/compare) ============ */

/* What a cause finding is built from: the layer's row, its split and its output value's statistics. */
typedef struct QrAdvCause {
    QrAdvList *b;
    QrSession *s;
    const QrLayerRow *r;
    const char *node, *base_node, *op, *value, *dt;   /* dt: the output quantizer's type name ("" when none) */
    int match, qi;                                      /* qi: the output value's quantizer, -1 when none */
    QrSplitView v;
    QrAdvAct st;
    bool have_st, outlier;
    double zero, share, part, sum;                      /* part: the dominant part; share = part / sum of the parts */
} QrAdvCause;

/* A new warning of KIND about the layer, on quantizer Q (its output's, its weight's or its input's). */
static QrFinding *qr__adv_cause_new(const QrAdvCause *c, QrAdvKind kind, int q) {
    QrFinding *f = qr_advk_find(c->b, kind, QR_SEV_WARNING, c->node, c->op);
    if (!f) return NULL;
    f->base_node = c->base_node;
    f->value = c->value;
    f->match = c->match;
    f->q = q;
    return f;
}

/* Clipping: the range is too narrow. */
static QrStatus qr__adv_cause_clip(const QrAdvCause *c, QrFinding **fo) {
    double lo, hi;
    qr_weights_clip_range(&c->s->tw.g, &c->s->qt.q[c->qi], &lo, &hi);
    double far = c->have_st ? QR_MAX(hi > 0 ? c->st.xmax / hi : 0, lo < 0 ? c->st.xmin / lo : 0) : NAN;
    QrFinding *f = qr__adv_cause_new(c, QR_ADV_SATURATION, c->qi);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR__ADV_TEXT(c->b->a, f->reason, "cause: the %s range of '%s' is too narrow — clipping makes %.0f%% of this layer's own "
                "error (measured: MSE %.6g of %.6g in the parts): %.2f%% of its values lie outside the grid [%.6g, %.6g], "
                "reaching %.2fx its end (baseline range [%.6g, %.6g])", c->dt, c->value, 100 * c->share, c->part, c->sum,
                100 * c->v.clip_frac, lo, hi, far, c->have_st ? c->st.xmin : NAN, c->have_st ? c->st.xmax : NAN);
    QR__ADV_TEXT(c->b->a, f->fix, "widen the range: calibrate this tensor on data that covers the bad case (max, or a "
                "99.99%% percentile instead of a tighter one), or give it int16");
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "clip_frac", c->v.clip_frac);
    qr_advk_ev(f, "overshoot", far);
    qr_advk_ev(f, "err_output_clip", c->v.err_clip);
    *fo = f;
    return QR_OK;
}

/* Rounding, a few channels far above the rest. */
static QrStatus qr__adv_cause_outlier(const QrAdvCause *c, QrFinding **fo) {
    double ratio = c->st.sp.median > 0 ? c->st.sp.max / c->st.sp.median : INFINITY;
    QrFinding *f = qr__adv_cause_new(c, QR_ADV_OUTLIER_CHANNELS, c->qi);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR__ADV_TEXT(c->b->a, f->reason, "cause: outlier channels — rounding makes %.0f%% of this layer's own error (measured: MSE "
                "%.6g of %.6g in the parts) because '%s' is quantized per-tensor (%s) while %d of its %d channels are "
                "outliers: channel %d reaches %.6g, %.1fx the median channel abs-max %.6g; so the other channels get few "
                "levels and %.1f%% of the non-zero values round to zero", 100 * c->share, c->part, c->sum, c->value, c->dt,
                c->st.sp.n_outlier, c->st.sp.n_ch, c->st.sp.worst, c->st.sp.max, ratio, c->st.sp.median, 100 * c->zero);
    QR__ADV_TEXT(c->b->a, f->fix, "equalize the channel ranges (cross-layer equalization: scale channel %d of the producing "
                "layer down and the consumer's weights up), use per-channel quantization where the runtime supports "
                "it, or give this tensor int16", c->st.sp.worst);
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "ratio", ratio);
    qr_advk_ev(f, "channel", c->st.sp.worst);
    qr_advk_ev(f, "zero_share", c->zero);
    *fo = f;
    return QR_OK;
}

/* Rounding on a grid too coarse: range too wide. */
static QrStatus qr__adv_cause_wide(const QrAdvCause *c, QrFinding **fo) {
    QrFinding *f = qr__adv_cause_new(c, QR_ADV_RANGE, c->qi);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR__ADV_TEXT(c->b->a, f->reason, "cause: the %s range of '%s' is too wide — rounding makes %.0f%% of this layer's own "
                "error (measured: MSE %.6g of %.6g in the parts, %.2fx the uniform-rounding expectation): its values "
                "span only %.2f quantization steps (RMS / scale %.6g), no outlier channel holds the range, nothing is "
                "clipped (%.2f%%)", c->dt, c->value, 100 * c->share, c->part, c->sum, c->v.noise_ratio, c->v.steps_rms,
                c->s->qt.q[c->qi].scale_max, 100 * c->v.clip_frac);
    QR__ADV_TEXT(c->b->a, f->fix, "narrow the range to the values seen (recalibrate: min-max or a percentile on "
                "representative data; a range set by hand or by a rare outlier is too wide), or give it int16");
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "steps_rms", c->v.steps_rms);
    qr_advk_ev(f, "noise_ratio", c->v.noise_ratio);
    qr_advk_ev(f, "err_output_round", c->v.err_round);
    *fo = f;
    return QR_OK;
}

/* Rounding on a fitting range: the bit width. */
static QrStatus qr__adv_cause_rounding(const QrAdvCause *c, QrFinding **fo) {
    QrFinding *f = qr__adv_cause_new(c, QR_ADV_ROUNDING, c->qi);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR__ADV_TEXT(c->b->a, f->reason, "cause: %s rounding of '%s' — it makes %.0f%% of this layer's own error (measured: MSE "
                "%.6g of %.6g in the parts); the range fits (%.1f steps per RMS, %.2f%% clipped, no outlier channel) and "
                "the noise is %.2fx the uniform-rounding expectation", c->dt, c->value, 100 * c->share, c->part, c->sum, c->v.steps_rms,
                100 * c->v.clip_frac, c->v.noise_ratio);
    QR__ADV_TEXT(c->b->a, f->fix, "the grid itself is too coarse for this layer: give this tensor int16 (" QR_BF_WHATIF
                " measures the gain)");
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "steps_rms", c->v.steps_rms);
    qr_advk_ev(f, "noise_ratio", c->v.noise_ratio);
    *fo = f;
    return QR_OK;
}

/* A per-tensor weight. */
static QrStatus qr__adv_cause_weight_tensor(const QrAdvCause *c, QrFinding **fo) {
    int wq = c->r->sp.w_quant;
    const QrQuantizer *q = &c->s->qt.q[wq];
    const char *wname = c->s->tw.g.values[q->int_value >= 0 ? q->int_value : q->out_value].name;
    const QrTensor *fw = c->s->fw[wq];
    if (!fw && q->float_value >= 0) fw = &c->s->tw.g.values[q->float_value].t;
    /* the float weight's abs-max in steps, and the output channel (axis 0) that sets it */
    double am = 0, med = NAN;
    int worst = -1, nch = 0;
    if (fw && fw->data && fw->dtype == QR_DT_F32 && fw->rank >= 2 && fw->dims[0] > 1) {
        nch = (int)fw->dims[0];
        int64_t per = fw->numel / nch;
        double *cm = calloc((size_t)nch, sizeof *cm);
        if (!cm) return qr_errf(QR_ERR_NOMEM, "out of memory");
        const float *w = fw->data;
        for (int ch = 0; ch < nch; ch++) {
            for (int64_t i = 0; i < per; i++) cm[ch] = QR_MAX(cm[ch], fabs((double)w[ch * per + i]));
            if (cm[ch] > am) { am = cm[ch]; worst = ch; }
        }
        qsort(cm, (size_t)nch, sizeof *cm, qr__adv_dcmp);
        med = nch % 2 ? cm[nch / 2] : (cm[nch / 2 - 1] + cm[nch / 2]) / 2;
        free(cm);
    }
    double steps = q->scale_max > 0 && am > 0 ? am / q->scale_max : NAN;
    double ratio = med > 0 ? am / med : NAN;
    int full = q->dtype == QR_DT_S8 ? 127 : q->dtype == QR_DT_U8 ? 255 : q->dtype == QR_DT_S16 ? 32767 : q->dtype == QR_DT_U16 ? 65535 : 0;
    bool coarse = full > 0 && steps < 0.5 * full;
    /* one output channel far above the rest sets the one scale: an outlier channel (the weight checks' kind) */
    QrFinding *f = qr__adv_cause_new(c, ratio >= 4 ? QR_ADV_OUTLIER_CHANNELS : QR_ADV_WEIGHT_ERROR, wq);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    f->value = wname;
    QR__ADV_TEXT(c->b->a, f->reason, "cause: %s — its quantization makes %.0f%% of this layer's own error (measured: "
                "MSE %.6g of %.6g in the parts); '%s' is quantized per-tensor (%s, one scale %.6g for its %d output "
                "channels): its abs-max %.6g spans %.1f of the %d steps%s", ratio >= 4 ? "an outlier channel of the weight" :
                "the weight", 100 * c->share, c->part, c->sum, wname, qr_dtype_name(q->dtype), q->scale_max, nch, am, steps, full,
                ratio >= 4 ? qr_arena_printf(&c->b->a->arena, ", set by output channel %d at %.1fx the median channel's "
                                             "abs-max %.6g (the other channels get few steps)", worst, ratio, med) : "");
    if (coarse) QR__ADV_TEXT(c->b->a, f->fix, "the scale is too coarse for this weight: recompute it from the weight's abs-max "
                            "(%.6g / %d), quantize it per-channel (axis 0), or give it int16", am, full);
    else QR__ADV_TEXT(c->b->a, f->fix, "quantize this weight per-channel (axis 0)%s, or give it int16",
                     ratio >= 4 ? " so the large channel no longer sets every channel's step" : "");
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "err_weight", c->v.err_w);
    qr_advk_ev(f, "steps", steps);
    if (ratio >= 4) qr_advk_ev(f, "channel", worst);
    *fo = f;
    return QR_OK;
}

/* A per-channel weight. */
static QrStatus qr__adv_cause_weight_channel(const QrAdvCause *c, QrFinding **fo) {
    int wq = c->r->sp.w_quant;
    const QrQuantizer *q = wq >= 0 ? &c->s->qt.q[wq] : NULL;
    const char *wname = q ? c->s->tw.g.values[q->int_value >= 0 ? q->int_value : q->out_value].name : "?";
    QrFinding *f = qr__adv_cause_new(c, QR_ADV_WEIGHT_ERROR, wq);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    f->value = wname;
    if (q && q->n_scales > 1 && c->r->sp.w_channel >= 0)
        QR__ADV_TEXT(c->b->a, f->reason, "cause: the weight — its quantization makes %.0f%% of this layer's own error "
                    "(measured: MSE %.6g of %.6g in the parts); '%s' is quantized per-channel (%s) and channel %d carries "
                    "%.0f%% of its squared quantization error", 100 * c->share, c->part, c->sum, wname, qr_dtype_name(q->dtype),
                    c->r->sp.w_channel, 100 * c->r->sp.w_channel_share);
    else
        QR__ADV_TEXT(c->b->a, f->reason, "cause: the weight — its quantization makes %.0f%% of this layer's own error "
                    "(measured: MSE %.6g of %.6g in the parts); '%s' is quantized %s (%s)", 100 * c->share, c->part, c->sum, wname,
                    q && q->n_scales > 1 ? "per-channel" : "per-tensor", q ? qr_dtype_name(q->dtype) : "?");
    if (q && q->n_scales > 1 && c->r->sp.w_channel >= 0)
        QR__ADV_TEXT(c->b->a, f->fix, "recompute channel %d's scale from its abs-max (or its percentile), or give this "
                    "weight int16", c->r->sp.w_channel);
    else QR__ADV_TEXT(c->b->a, f->fix, "quantize this weight per-channel, or give it int16");
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "err_weight", c->v.err_w);
    if (c->r->sp.w_channel >= 0) qr_advk_ev(f, "channel", c->r->sp.w_channel);
    *fo = f;
    return QR_OK;
}

/* The input's quantizers: the producer's range. */
static QrStatus qr__adv_cause_input(const QrAdvCause *c, QrFinding **fo) {
    int iq = c->r->sp.i_quant;
    const QrQuantizer *q = iq >= 0 ? &c->s->qt.q[iq] : NULL;
    const QrGraph *g = &c->s->tw.g;
    int fv = q ? q->float_value : -1, pr = fv >= 0 ? g->values[fv].producer : -1;
    const char *in = fv >= 0 ? g->values[fv].name : "?";
    const char *prod = pr >= 0 ? qr_dist_node_name(c->s, pr) : NULL;
    QrFinding *f = qr__adv_cause_new(c, QR_ADV_INPUT_ERROR, iq);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    f->value = in;
    QR__ADV_TEXT(c->b->a, f->reason, "cause: the input — the quantizer on its input '%s' (%s, scale %.6g) makes %.0f%% of this "
                "layer's own error (measured: MSE %.6g of %.6g in the parts)", in, q ? qr_dtype_name(q->dtype) : "?",
                q ? q->scale_max : NAN, 100 * c->share, c->part, c->sum);
    if (prod) QR__ADV_TEXT(c->b->a, f->fix, "look at the producer '%s': its output range and this quantizer's calibration "
                          "(clipping or a range too wide there), or give this input int16", prod);
    else QR__ADV_TEXT(c->b->a, f->fix, "look at the model input '%s': normalize it or recalibrate its quantizer, or give it "
                     "int16", in);
    qr_advk_ev(f, "share", c->share);
    qr_advk_ev(f, "err_input", c->v.err_i);
    *fo = f;
    return QR_OK;
}

/* The layer's first specific finding: its largest measured part, named as a cause. Emitted for
 * a layer whose own error is low by the thresholds or whose output value has a symptom finding
 * (clipping, rounding to zero, a range too large, outlier channels); *kind gets the finding's
 * kind (the activation check then leaves out its own finding of that kind), -1 when none or when the cause is
 * the weight (the value's symptoms stay). */
static QrStatus qr__adv_check_cause(QrAdvList *b, QrSession *s, const QrAdvActs *acts, const QrLayerRow *r, const char *node,
                                   const char *base_node, const char *op, const char *value, int *kind) {
    const QrAdvisorOpts *o = &b->a->opts;
    *kind = -1;
    QrSplitView v;
    if (!qr_compare_split(&r->sp, &v) || v.dom < 0) return QR_OK;
    const int match = r->match;
    int qi = qr_dist_act_quant_of(s, s->vis[match]);
    QrAdvAct st = {0};
    bool have_st = false;
    if (qi >= 0 && s->base[match].data) {
        const QrAdvAct *pre;
        QR_TRY(qr__adv_acts_get(acts, match, &pre));
        if (pre) st = *pre;
        else QR_TRY(qr__adv_act_stats(&s->tw.g, &s->qt.q[qi], &s->base[match], o->outlier_k, &st));
        have_st = st.n > 0;
    }
    double sat = have_st ? (double)st.n_sat / (double)st.n : 0;
    double zero = have_st && st.n_nonzero ? (double)st.n_zero / (double)st.n_nonzero : 0;
    bool outlier = have_st && st.sp.n_outlier > 0 && s->qt.q[qi].n_scales <= 1;
    bool symptom = have_st && (sat > o->sat_threshold || zero > o->zero_threshold || (st.levels < o->min_levels && st.n_nonzero > 0) || outlier);
    bool low = r->has_local && qr__adv_low(o, &r->local);
    if (!low && !symptom) return QR_OK;
    double sum = v.err_w + v.err_i + v.err_round + v.err_clip, part = v.dom == 0 ? v.err_w : v.dom == 1 ? v.err_i :
                 v.dom == 2 ? v.err_round : v.err_clip;
    double share = sum > 0 ? part / sum : NAN;
    const char *dt = qi >= 0 ? qr_dtype_name(s->qt.q[qi].dtype) : "";
    QrAdvCause c = {.b = b, .s = s, .r = r, .node = node, .base_node = base_node, .op = op, .value = value, .dt = dt,
                    .match = match, .qi = qi, .v = v, .st = st, .have_st = have_st, .outlier = outlier, .zero = zero,
                    .share = share, .part = part, .sum = sum};
    QrFinding *f = NULL;
    if (v.dom == 3 && qi >= 0) QR_TRY(qr__adv_cause_clip(&c, &f));
    else if (v.dom == 2 && qi >= 0 && outlier) QR_TRY(qr__adv_cause_outlier(&c, &f));
    else if (v.dom == 2 && qi >= 0 && v.steps_rms < o->min_levels) QR_TRY(qr__adv_cause_wide(&c, &f));
    else if (v.dom == 2 && qi >= 0) QR_TRY(qr__adv_cause_rounding(&c, &f));
    else if (v.dom == 0 && r->sp.w_quant >= 0 && s->qt.q[r->sp.w_quant].n_scales <= 1) QR_TRY(qr__adv_cause_weight_tensor(&c, &f));
    else if (v.dom == 0 && r->sp.w_quant >= 0 && s->qt.q[r->sp.w_quant].n_scales > 1) QR_TRY(qr__adv_cause_weight_channel(&c, &f));
    else if (v.dom == 1) QR_TRY(qr__adv_cause_input(&c, &f));
    else return QR_OK;
    f->cause = 1 + v.dom;
    f->share = share;
    /* a weight's cause is about the weight: the output value's own symptom findings of the kind stay */
    *kind = v.dom == 0 ? -1 : (int)f->kind;
    return QR_OK;
}

/* ==== checks ======================================================================= */

static QrStatus qr__adv_check_inputs(QrAdvList *b, QrSession *s) {
    const QrAdvisorOpts *o = &b->a->opts;
    const QrGraph *g = &s->tw.g;
    for (int k = 0; k < s->b->n_inputs; k++) {
        const QrTensor *x = &s->inputs[k];
        const char *name = s->b->values[s->b->inputs[k]].name;
        if (!qr_dtype_is_float(x->dtype) || !x->data) continue;
        QrStats st;
        qr_stats_init(&st);
        qr_stats_tensor(&st, x);
        double am = st.n ? QR_MAX(fabs(st.min), fabs(st.max)) : 0;
        QrFinding *f;
        if (am > o->input_absmax) {
            f = qr_advk_find(b, QR_ADV_INPUT_NOT_NORMALIZED, QR_SEV_WARNING, "", "Input");
            if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
            f->value = name;
            QR__ADV_TEXT(b->a, f->reason, "model input '%s' is not normalized: range [%.6g, %.6g], mean %.6g, std %.6g",
                        name, st.min, st.max, st.mean, sqrt(qr_stats_var(&st)));
            QR__ADV_TEXT(b->a, f->fix, "normalize the input ((x - mean) / std, e.g. to [-1, 1]) in preprocessing, or fold "
                        "the normalization into the first layer before quantizing");
            qr_advk_ev(f, "min", st.min);
            qr_advk_ev(f, "max", st.max);
            qr_advk_ev(f, "mean", st.mean);
        }
        if (st.n_nan + st.n_posinf + st.n_neginf) {
            f = qr_advk_find(b, QR_ADV_NONFINITE, QR_SEV_ERROR, "", "Input");
            if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
            f->value = name;
            QR__ADV_TEXT(b->a, f->reason, "model input '%s' contains %lld NaN and %lld Inf values", name, (long long)st.n_nan,
                        (long long)(st.n_posinf + st.n_neginf));
            QR__ADV_TEXT(b->a, f->fix, "fix the input data; every metric downstream ignores the non-finite elements");
            qr_advk_ev(f, "nan", (double)st.n_nan);
        }
        /* The input's own quantizer (matched values have no row for graph inputs). */
        int v = g->inputs[k];
        int qi = s->qt.by_float[v];
        if (qi >= 0 && qr_dtype_is_float(x->dtype)) {
            QrTensor xf = {0};
            QR_TRY(qr_tensor_to_f32(x, &xf));
            QrStatus st2 = qr__adv_check_act(b, s, qi, -1, "", NULL, "Input", name, &xf, NULL);
            qr_tensor_free_data(&xf);
            QR_TRY(st2);
        }
    }
    return QR_OK;
}


static QrStatus qr__adv_check_layers(QrAdvList *b, QrSession *s, const QrAdvActs *acts, const QrCompare *cmp) {
    const QrAdvisorOpts *o = &b->a->opts;
    for (int k = 0; k < cmp->n; k++) {
        const QrLayerRow *r = &cmp->rows[k];
        const QrMatch *mm = &s->m.m[r->match];
        if (!qr_match_verified(mm)) continue;     /* nothing built on an unproven pair */
        const char *node = s->a->nodes[mm->a_node].name, *bnode = s->b->nodes[mm->b_node].name;
        const char *op = s->a->nodes[mm->a_node].op_type, *value = s->b->values[mm->b_value].name;
        QrFinding *f;
        if (r->has_m && r->m.n_nonfinite > 0) {
            const QrTensor *x = &s->base[r->match];
            int64_t nb = 0;
            if (x->data) for (int64_t i = 0; i < x->numel; i++) nb += !isfinite(((const float *)x->data)[i]);
            f = qr_advk_find(b, QR_ADV_NONFINITE, QR_SEV_ERROR, node, op);
            if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
            f->base_node = bnode; f->value = value; f->match = r->match;
            QR__ADV_TEXT(b->a, f->reason, "%lld of %lld elements of '%s' are NaN/Inf (%lld in the baseline): %s",
                        (long long)r->m.n_nonfinite, (long long)(r->m.n + r->m.n_nonfinite), value, (long long)nb,
                        nb ? "the float model itself produces them" : "only the quantized model produces them");
            QR__ADV_TEXT(b->a, f->fix, nb ? "fix the float model or the input first (division by zero, log of 0, overflow)"
                                         : "check this layer's scales for zeros/denormals and its inputs' ranges");
            qr_advk_ev(f, "nonfinite", (double)r->m.n_nonfinite);
            qr_advk_ev(f, "in_baseline", (double)nb);
        }
        if (!r->has_m) continue;
        /* A value clamped at zero by its quantizer and read only by a Relu (ORT's "clamped" Conv
         * outputs) differs from the baseline by design; the Relu's row compares what matters. */
        int vq = qr_dist_act_quant_of(s, s->vis[r->match]);
        if (vq >= 0 && s->qt.q[vq].implied_lo != s->qt.q[vq].implied_lo && qr__adv_relu_follows(&s->tw.g, s->vis[r->match])) {
            double lo, hi;
            qr_weights_clip_range(&s->tw.g, &s->qt.q[vq], &lo, &hi);
            if (lo >= 0) continue;
        }
        int ck;
        QR_TRY(qr__adv_check_cause(b, s, acts, r, node, bnode, op, value, &ck));
        if (b->cause_kind) b->cause_kind[r->match] = ck;
        const QrMetrics *own = r->has_local ? &r->local : &r->m;
        if (qr__adv_low(o, own)) {
            f = qr_advk_find(b, QR_ADV_LOW_SIMILARITY, QR_SEV_WARNING, node, op);
            if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
            f->base_node = bnode; f->value = value; f->match = r->match; f->q = -1;
            QR__ADV_TEXT(b->a, f->reason, "low similarity%s: Cosine %.6f, SQNR %.2f dB (thresholds %.4g, %.4g dB)%s",
                        r->has_local ? " of this layer's own error (fed with the baseline's inputs)" : "", own->cosine,
                        own->sqnr, o->cos_threshold, o->sqnr_threshold,
                        r->has_local ? "" : "; no local comparison, so the error may be inherited");
            QR__ADV_TEXT(b->a, f->fix, "see the other findings for this layer; give it int16 or keep it in float "
                        "(" QR_BF_WHATIF " measures the effect)");
            qr_advk_ev(f, "cosine", own->cosine);
            qr_advk_ev(f, "sqnr_db", own->sqnr);
            qr_advk_ev(f, "full_cosine", r->m.cosine);
        } else if (r->has_local && qr__adv_low(o, &r->m)) {
            /* Upstream layer with the lowest local similarity. */
            int up = -1;
            for (int j = 0; j < k; j++)
                if (cmp->rows[j].has_local && (up < 0 || cmp->rows[j].local.cosine < cmp->rows[up].local.cosine)) up = j;
            const QrMatch *um = up >= 0 ? &s->m.m[cmp->rows[up].match] : NULL;
            const char *upn = um ? s->a->nodes[um->a_node].name : NULL, *upb = um ? s->b->nodes[um->b_node].name : NULL;
            f = qr_advk_find(b, QR_ADV_INHERITED, QR_SEV_INFO, node, op);
            if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
            f->base_node = bnode; f->value = value; f->match = r->match;
            QR__ADV_TEXT(b->a, f->reason, "inherited error: own error small (local Cosine %.6f, SQNR %.2f dB) but the full "
                        "comparison is low (Cosine %.6f, SQNR %.2f dB)", r->local.cosine, r->local.sqnr, r->m.cosine,
                        r->m.sqnr);
            if (upn) QR__ADV_TEXT(b->a, f->fix, "look upstream: '%s'%s%s%s has the lowest local similarity before it (Cosine %.6f)",
                                 upn, strcmp(upn, upb) ? " (baseline '" : "", strcmp(upn, upb) ? upb : "",
                                 strcmp(upn, upb) ? "')" : "", cmp->rows[up].local.cosine);
            else f->fix = "look upstream (the inputs or their quantizers)";
            qr_advk_ev(f, "local_cosine", r->local.cosine);
            qr_advk_ev(f, "cosine", r->m.cosine);
        }
    }
    return QR_OK;
}

static QrStatus qr__adv_check_acts(QrAdvList *b, QrSession *s, const QrAdvActs *acts) {
    for (int i = 0; i < s->m.n; i++) {
        const QrMatch *mm = &s->m.m[i];
        if (!qr_match_verified(mm) || !s->base[i].data) continue;   /* baseline values of an unproven pair: not its own */
        int qi = qr_dist_act_quant_of(s, s->vis[i]);
        if (qi < 0) continue;
        b->skip = b->cause_kind ? b->cause_kind[i] : -1;
        const QrAdvAct *pre;
        QrStatus st = qr__adv_acts_get(acts, i, &pre);
        if (st == QR_OK)
            st = qr__adv_check_act(b, s, qi, i, s->a->nodes[mm->a_node].name, s->b->nodes[mm->b_node].name,
                                   s->a->nodes[mm->a_node].op_type, s->b->values[mm->b_value].name, &s->base[i], pre);
        b->skip = -1;
        QR_TRY(st);
    }
    return QR_OK;
}

static QrStatus qr__adv_check_weights(QrAdvList *b, const QrSession *s, const QrWeightCmp *w) {
    const QrAdvisorOpts *o = &b->a->opts;
    for (int k = 0; k < w->n; k++) {
        const QrWeightRow *r = &w->rows[k];
        QrFinding *f;
        const char *dt = qr_dtype_name(r->dtype);
        const char *bnode = qr_advk_base_node_of(s, s->qt.q[r->q].owner);
        double ratio = r->ch_absmax_median > 0 ? r->ch_absmax_max / r->ch_absmax_median : INFINITY;
        int n_out = 0;
        if (r->n_ch > 1 && r->ch_absmax_max > 0) {
            /* Recount with the configured k (rows use QR_OUTLIER_K). */
            n_out = r->n_outlier_ch;
            if (o->outlier_k != QR_OUTLIER_K) n_out = ratio > o->outlier_k ? QR_MAX(1, r->n_outlier_ch) : 0;
        }
        if (n_out > 0 && r->axis < 0) {
            QR__ADV_WNEW(QR_ADV_OUTLIER_CHANNELS);
            QR__ADV_TEXT(b->a, f->reason, "weight '%s' is quantized per-tensor (%s) but has outlier channels: channel %d "
                        "reaches %.6g, %.1fx the median channel abs-max %.6g, so the other channels keep only a few "
                        "levels (weight SQNR %.2f dB, %.1f%% of the weights rounded to 0)", r->name, dt, r->ch_worst,
                        r->ch_absmax_max, ratio, r->ch_absmax_median, r->has_m ? r->m.sqnr : NAN,
                        r->n ? 100.0 * (double)r->n_zero / (double)r->n : 0.0);
            QR__ADV_TEXT(b->a, f->fix, "quantize this weight per-channel (axis %d), or equalize the channel ranges "
                        "(cross-layer equalization) before quantizing", r->ch_axis);
            qr_advk_ev(f, "ratio", ratio);
            qr_advk_ev(f, "channel", r->ch_worst);
            qr_advk_ev(f, "n_outliers", n_out);
            qr_advk_ev(f, "sqnr_db", r->has_m ? r->m.sqnr : NAN);
        }
        if (!r->has_m || !r->n) continue;
        /* Saturation counts the values clipped by more than one quantization step: one clipped by
         * less errs by about a rounding error (torch's symmetric qint8 weights put the positive
         * abs-max at 127.5 steps, which rounds to 128 and clips to 127: not a scale too small). */
        double sat = (double)r->n_sat_far / (double)r->n, zero = (double)r->n_zero / (double)r->n;
        if (sat > o->sat_threshold) {
            QR__ADV_WNEW(QR_ADV_SATURATION);
            QR__ADV_TEXT(b->a, f->reason, "%.2f%% of weight '%s' is clipped by more than one step of its %s grid (scale "
                        "%.6g..%.6g; %.2f%% clipped in all)", 100 * sat, r->name, dt, r->scale_min, r->scale_max,
                        100.0 * (double)r->n_sat / (double)r->n);
            QR__ADV_TEXT(b->a, f->fix, "recompute the weight scale from the weight's abs-max (the scale is too small)");
            qr_advk_ev(f, "clipped_share", sat);
            qr_advk_ev(f, "clipped_any_share", (double)r->n_sat / (double)r->n);
        }
        if (zero > o->zero_threshold) {
            QR__ADV_WNEW(QR_ADV_ZERO);
            QR__ADV_TEXT(b->a, f->reason, "%.1f%% of weight '%s' rounds to zero with %s%s", 100 * zero, r->name, dt,
                        r->axis < 0 ? " per-tensor" : "");
            QR__ADV_TEXT(b->a, f->fix, "%s", r->axis < 0 ? "quantize this weight per-channel, or give it int16"
                                                        : "give this weight int16, or check the weight's training (many tiny weights)");
            qr_advk_ev(f, "zero_share", zero);
        }
        if (qr__adv_low(o, &r->m) && !(n_out > 0 && r->axis < 0)) {
            QR__ADV_WNEW(QR_ADV_LOW_SIMILARITY);
            QR__ADV_TEXT(b->a, f->reason, "weight '%s' is poorly represented by %s: SQNR %.2f dB, Cosine %.6f", r->name, dt,
                        r->m.sqnr, r->m.cosine);
            QR__ADV_TEXT(b->a, f->fix, "%s", r->axis < 0 ? "quantize this weight per-channel, or give it int16"
                                                        : "give this weight int16");
            qr_advk_ev(f, "sqnr_db", r->m.sqnr);
            qr_advk_ev(f, "cosine", r->m.cosine);
        }
    }
    return QR_OK;
}

static QrStatus qr__adv_check_scales(QrAdvList *b, const QrSession *s) {
    const QrAdvisorOpts *o = &b->a->opts;
    const QrGraph *g = &s->tw.g;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (strcmp(n->op_type, "Concat") && strcmp(n->op_type, "Add") && strcmp(n->op_type, "Sum")) continue;
        double lo = INFINITY, hi = 0;
        int ilo = -1, ihi = -1, nq = 0;
        for (int k = 0; k < n->n_in; k++) {
            int qi = qr_dist_act_quant_of(s, n->in[k]);
            if (qi < 0 || s->qt.q[qi].n_scales != 1 || !(s->qt.q[qi].scale_min > 0)) continue;
            double sc = s->qt.q[qi].scale_min;
            nq++;
            if (sc < lo) { lo = sc; ilo = k; }
            if (sc > hi) { hi = sc; ihi = k; }
        }
        if (nq < 2 || hi / lo <= o->scale_ratio) continue;
        const char *name = qr_dist_node_name(s, ni);
        int src = s->tw.origin[ni];
        /* Concat requantizes every input to the output scale: any large gap costs precision. At an
         * Add the branches legitimately differ (residuals): info unless far apart. */
        QrSeverity sev = !strcmp(n->op_type, "Concat") || hi / lo > 4 * o->scale_ratio ? QR_SEV_WARNING : QR_SEV_INFO;
        QrFinding *f = qr_advk_find(b, QR_ADV_SCALE_MISMATCH, sev, name, src >= 0 ? s->a->nodes[src].op_type : n->op_type);
        if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
        f->value = g->values[n->in[ihi]].name;
        QR__ADV_TEXT(b->a, f->reason, "the quantized inputs of this %s have scales %.6g ('%s') to %.6g ('%s'), %.1fx apart: "
                    "after requantization to one scale the fine input loses its resolution", n->op_type, lo,
                    g->values[n->in[ilo]].name, hi, g->values[n->in[ihi]].name, hi / lo);
        QR__ADV_TEXT(b->a, f->fix, "bring the input ranges closer (rescale one branch, e.g. with a BatchNorm before the %s), "
                    "share one calibration range for all inputs, or give this node int16", n->op_type);
        qr_advk_ev(f, "ratio", hi / lo);
        qr_advk_ev(f, "scale_min", lo);
        qr_advk_ev(f, "scale_max", hi);
    }
    return QR_OK;
}

static QrStatus qr__adv_check_outputs(QrAdvList *b, const QrSession *s) {
    const QrGraph *g = &s->tw.g;
    for (int k = 0; k < g->n_outputs; k++) {
        int v = g->outputs[k];
        int qi = s->qt.by_value[v];
        if (qi < 0 || s->qt.q[qi].out_value != v || qr_dtype_size(s->qt.q[qi].dtype) > 1) continue;
        const QrQuantizer *q = &s->qt.q[qi];
        int src = q->owner >= 0 ? s->tw.origin[q->owner] : -1;
        QrFinding *f = qr_advk_find(b, QR_ADV_OUTPUT_LOW_PRECISION, QR_SEV_WARNING, qr_dist_node_name(s, q->owner),
                                   src >= 0 ? s->a->nodes[src].op_type : "");
        if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
        f->value = g->values[v].name;
        f->q = qi;
        QR__ADV_TEXT(b->a, f->reason, "model output '%s' is quantized to %s (scale %.6g): the output is not high precision",
                    g->values[v].name, qr_dtype_name(q->dtype), q->scale_max);
        QR__ADV_TEXT(b->a, f->fix, "leave the last layer's output unquantized (int32 accumulator / float output), or give "
                    "it int16");
        qr_advk_ev(f, "scale", q->scale_max);
    }
    return QR_OK;
}

static QrStatus qr__adv_check_sens(QrAdvList *b, const QrSession *s, const QrSensResult *sens) {
    const QrAdvisorOpts *o = &b->a->opts;
    const char *seen[64];
    int n_seen = 0;
    QrMetricKind mk = sens->opts.metric;
    int *idx = malloc(((size_t)sens->n + 1) * sizeof(int));
    if (!idx) return qr_errf(QR_ERR_NOMEM, "out of memory");
    qr_sens_order(sens, idx);
    for (int k = 0; k < sens->n && n_seen < o->top_sensitive && n_seen < QR_ARRAY_LEN(seen); k++) {
        const QrSensRow *row = &sens->rows[idx[k]];
        bool dup = false;
        for (int j = 0; j < n_seen; j++) dup |= !strcmp(seen[j], row->name);
        if (dup) continue;
        seen[n_seen++] = row->name;
        QrFinding *f = qr_advk_find(b, QR_ADV_SENSITIVE, QR_SEV_INFO, row->node >= 0 ? qr_dist_node_name(s, row->node) : "",
                                   row->op_type);
        if (!f) { free(idx); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
        f->value = row->node >= 0 ? NULL : row->name;
        f->q = row->n_q ? row->q[0] : -1;
        const char *what = row->type == QR_SENS_BOTH ? "weight and output" : row->type == QR_SENS_WEIGHT ? "weight" : "output";
        if (sens->opts.off_one)
            QR__ADV_TEXT(b->a, f->reason, "#%d in quantization sensitivity: with everything quantized except %s's %s, the "
                        "model output has %s %.6g, Cosine %.6f", n_seen, row->name, what, qr_metric_name(mk),
                        qr_metric_get(&row->m, mk), row->m.cosine);
        else
            QR__ADV_TEXT(b->a, f->reason, "#%d in quantization sensitivity: with only %s's %s quantized, the model output "
                        "has %s %.6g, Cosine %.6f", n_seen, row->name, what, qr_metric_name(mk), qr_metric_get(&row->m, mk),
                        row->m.cosine);
        if (row->op_type && (!strcmp(row->op_type, "MatMulNBits") || !strcmp(row->op_type, "MatMulBnb4")
                             || !strcmp(row->op_type, "GatherBlockQuantized")))
            QR__ADV_TEXT(b->a, f->fix, "candidate for float, 8-bit codes or a smaller block: int16 does not apply to a "
                        "weight-only node (" QR_BF_WHATIF " gives the measured gains; weight_only for MatMulNBits)");
        else QR__ADV_TEXT(b->a, f->fix, "candidate for int16 or float (" QR_BF_WHATIF " gives the measured gain)");
        qr_advk_ev(f, "rank", n_seen);
        qr_advk_ev(f, qr_metric_name(mk), qr_metric_get(&row->m, mk));
        qr_advk_ev(f, "cosine", row->m.cosine);
    }
    free(idx);
    return QR_OK;
}

/* Does analysis node `from` produce an input of analysis node `to` (through Q/DQ, Identity,
 * Cast: qr_match_transparent)? */
static bool qr__adv_feeds(const QrGraph *a, const char *from, const char *to) {
    for (int t = 0; from && to && t < a->n_nodes; t++) {
        if (!a->nodes[t].name || strcmp(a->nodes[t].name, to)) continue;
        for (int i = 0; i < a->nodes[t].n_in; i++) {
            int v = a->nodes[t].in[i], p = v >= 0 ? a->values[v].producer : -1;
            while (p >= 0 && qr_match_transparent(&a->nodes[p]) && a->nodes[p].n_in && a->nodes[p].in[0] >= 0)
                p = a->values[a->nodes[p].in[0]].producer;
            if (p >= 0 && a->nodes[p].name && !strcmp(a->nodes[p].name, from)) return true;
        }
    }
    return false;
}

/* The main finding is the one with the largest measured effect on the model output: a finding
 * on the node (or one of its quantizers) that ranks first in quantization sensitivity, the most
 * severe of them; it moves to f[0]. A cause found upstream comes before the node's own symptoms:
 * an activation outlier (QR_ADV_ACT_OUTLIER_MIGRATE) on the value that feeds the top node is
 * what its error comes from (the weight-only case: the outlier channel amplifies the weight's
 * quantization error). Without a sensitivity ranking, the first by severity. */
static void qr__adv_pick_main(const QrSession *s, const QrSensResult *sens, QrAdvice *out) {
    out->main_how = "no sensitivity ranking: the first finding by severity (errors, warnings, info; graph order)";
    if (!out->n || !sens || !sens->n) return;
    int *idx = malloc(((size_t)sens->n + 1) * sizeof(int));
    if (!idx) return;
    qr_sens_order(sens, idx);
    const QrSensRow *top = &sens->rows[idx[0]];
    free(idx);
    const char *name = top->node >= 0 ? qr_dist_node_name(s, top->node) : top->name;
    int best = -1;
    bool cause = false;
    for (int k = 0; k < out->n && best < 0; k++)
        if (out->f[k].kind == QR_ADV_ACT_OUTLIER_MIGRATE && qr__adv_feeds(s->a, out->f[k].node, name)) best = k, cause = true;
    /* on the node (or one of its quantizers): its cause from the error split first, else the most severe */
    for (int pass = 0; pass < 2 && best < 0; pass++)
        for (int k = 0; k < out->n && best < 0; k++) {
            const QrFinding *f = &out->f[k];
            bool on = f->node && name && !strcmp(f->node, name);
            for (int j = 0; !on && f->q >= 0 && j < top->n_q; j++) on = f->q == top->q[j];
            if (on && (pass || (f->cause && f->sev >= QR_SEV_WARNING))) best = k;
        }
    if (best < 0) return;
    QrFinding main = out->f[best];
    memmove(&out->f[1], &out->f[0], (size_t)best * sizeof *out->f);
    out->f[0] = main;
    static const char *const part[4] = { "weight", "input", "output rounding", "output clipping" };
    if (main.cause)
        QR__ADV_TEXT(out, out->main_how, "the cause of the error of '%s', #1 in quantization sensitivity (%s: the largest "
                    "measured effect on the model output%s): %s, %.0f%% of that layer's measured error", top->name,
                    sens->opts.off_one ? "off-one" : "one-on", sens->opts.off_one ? ", gain over all on" : "",
                    part[(main.cause - 1) & 3], 100 * main.share);
    else
        QR__ADV_TEXT(out, out->main_how, "%s '%s', #1 in quantization sensitivity (%s: the largest measured effect on the "
                    "model output%s)", cause ? "the activation outlier feeding" : "the most severe finding on", top->name,
                    sens->opts.off_one ? "off-one" : "one-on", sens->opts.off_one ? ", gain over all on" : "");
}

static int qr__adv_find_cmp(const void *pa, const void *pb) {
    const QrFinding *a = pa, *b = pb;
    if (a->sev != b->sev) return a->sev > b->sev ? -1 : 1;
    return a->seq - b->seq;
}

static QrStatus qr_advisor_run(QrSession *s, const QrCompare *cmp, const QrSensResult *sens, const QrWeightCmp *w,
                               const QrAdvisorOpts *o, QrAdvice *out) {
    memset(out, 0, sizeof *out);
    if (o) out->opts = *o;
    else qr_advisor_defaults(&out->opts);
    QR_TRY(qr_session_run_baseline(s));
    QrAdvList b = { out, 0, malloc(((size_t)s->m.n + 1) * sizeof(int)), -1 };
    for (int i = 0; b.cause_kind && i < s->m.n; i++) b.cause_kind[i] = -1;
    QrWeightCmp own = {0};
    QrAdvActs acts = {0};
    QrStatus st = qr__adv_acts_make(s, out->opts.outlier_k, &acts);
    if (st == QR_OK && !w) { st = qr_weights_compare(s, &own); w = &own; }
    if (st == QR_OK) st = qr__adv_check_inputs(&b, s);
    if (st == QR_OK && cmp) st = qr__adv_check_layers(&b, s, &acts, cmp);
    if (st == QR_OK) st = qr__adv_check_acts(&b, s, &acts);
    if (st == QR_OK) st = qr_advtf_transformer(&b, s);
    if (st == QR_OK) st = qr__adv_check_weights(&b, s, w);
    if (st == QR_OK) st = qr_advtf_blocks(&b, s, w);
    if (st == QR_OK) st = qr_advtf_block_outliers(&b, s, w);
    if (st == QR_OK) st = qr__adv_check_scales(&b, s);
    if (st == QR_OK) st = qr__adv_check_outputs(&b, s);
    if (st == QR_OK && sens) st = qr__adv_check_sens(&b, s, sens);
    qr_weights_free(&own);
    if (acts.s) qr__adv_acts_free(&acts);
    free(b.cause_kind);
    if (st != QR_OK) { qr_advice_free(out); return qr_err_wrap(st, "advisor"); }
    /* Strings borrowed from the session/weights are copied so the advice outlives them. */
    for (int k = 0; k < out->n; k++) {
        QrFinding *f = &out->f[k];
        if (f->value) f->value = qr_arena_strdup(&out->arena, f->value);
        if (f->base_node) f->base_node = qr_arena_strdup(&out->arena, f->base_node);
        out->n_by_sev[f->sev]++;
    }
    if (out->n) qsort(out->f, (size_t)out->n, sizeof *out->f, qr__adv_find_cmp);
    qr__adv_pick_main(s, sens, out);
    return QR_OK;
}

static void qr_advice_free(QrAdvice *a) {
    qr_arena_free(&a->arena);
    memset(a, 0, sizeof *a);
}

static void qr_advisor_json(QrJson *j, const QrAdvice *a) {
    qr_json_arr_begin(j);
    for (int k = 0; k < a->n; k++) {
        const QrFinding *f = &a->f[k];
        qr_json_obj_begin(j);
        qr_json_kv_str(j, "severity", qr_severity_name(f->sev));
        qr_json_kv_str(j, "kind", qr_adv_kind_name(f->kind));
        qr_json_kv_str(j, "node", f->node);
        qr_json_kv_str(j, "baseline_node", f->base_node);
        qr_json_kv_str(j, "op_type", f->op_type);
        qr_json_kv_str(j, "value", f->value);
        qr_json_kv_str(j, "reason", f->reason);
        qr_json_kv_str(j, "fix", f->fix);
        qr_json_key(j, "evidence");
        qr_json_obj_begin_compact(j);
        for (int e = 0; e < f->n_ev; e++) qr_json_kv_num(j, f->ev_name[e], f->ev[e]);
        qr_json_obj_end(j);
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
}

/* ==== abnormal_layer_advisor.txt ===================================================== */

static QrStatus qr_advisor_write(const QrSession *s, const QrAdvice *a, const char *dir) {
    char *b = NULL;
    size_t len = 0, cap = 0;
    const QrAdvisorOpts *o = &a->opts;
    QrStatus st = qr_buf_printf(&b, &len, &cap,
        "Abnormal layers of %s (baseline %s)\n"
        "Thresholds: Cosine < %g or SQNR < %g dB = low similarity (local error when available); clipped share > %g "
        "(weights: by more than one step); rounded-to-zero share > %g;\nRMS < %g quantization steps = range too large; channel abs-max > %g x median = "
        "outlier channel; Concat/Add input scales > %gx apart; model input beyond +-%g = not normalized.\n"
        "%d finding%s: %d error%s, %d warning%s, %d info.\n",
        s->a->path ? s->a->path : "", s->b->path ? s->b->path : "", o->cos_threshold, o->sqnr_threshold, o->sat_threshold,
        o->zero_threshold, o->min_levels, o->outlier_k, o->scale_ratio, o->input_absmax, a->n, a->n == 1 ? "" : "s",
        a->n_by_sev[QR_SEV_ERROR], a->n_by_sev[QR_SEV_ERROR] == 1 ? "" : "s", a->n_by_sev[QR_SEV_WARNING],
        a->n_by_sev[QR_SEV_WARNING] == 1 ? "" : "s", a->n_by_sev[QR_SEV_INFO]);
    if (st == QR_OK && !a->n) st = qr_buf_printf(&b, &len, &cap, "\nNo abnormal layer found.\n");
    if (st == QR_OK && a->n && a->main_how)
        st = qr_buf_printf(&b, &len, &cap, "Main finding (the first below): %s.\n", a->main_how);
    for (int k = 0; st == QR_OK && k < a->n; k++) {
        const QrFinding *f = &a->f[k];
        char who[600];
        if (f->node[0]) snprintf(who, sizeof who, "%s", f->node);
        else snprintf(who, sizeof who, "model input '%s'", f->value ? f->value : "?");
        st = qr_buf_printf(&b, &len, &cap, "\n[%s] %s%s%s%s (%s): %s\n  reason: %s\n  fix:    %s\n",
                           qr_severity_name(f->sev), who,
                           f->base_node && strcmp(f->base_node, f->node) ? " [baseline " : "",
                           f->base_node && strcmp(f->base_node, f->node) ? f->base_node : "",
                           f->base_node && strcmp(f->base_node, f->node) ? "]" : "", f->op_type, qr_adv_kind_name(f->kind),
                           f->reason ? f->reason : "", f->fix ? f->fix : "");
        for (int e = 0; st == QR_OK && e < f->n_ev; e++)
            st = qr_buf_printf(&b, &len, &cap, "%s%s=%.9g%s", e ? " " : "  evidence: ", f->ev_name[e], f->ev[e],
                               e == f->n_ev - 1 ? "\n" : "");
    }
    if (st == QR_OK) {
        QrArena ar = {0};
        st = qr_file_write_atomic(qr_arena_printf(&ar, "%s/" QR_BF_ADVISOR, dir), b, len);
        qr_arena_free(&ar);
    }
    free(b);
    return st;
}
