/* analysis/session — implementation. See session.h. */

/* Baseline float weight for each integer-weight quantizer of the twin, found
 * through the match of the source node the twin's owner stands for. */
static void qr__se_float_weights(QrSession *s) {
    const QrGraph *tg = &s->tw.g;
    for (int i = 0; i < s->qt.n; i++) {
        const QrQuantizer *q = &s->qt.q[i];
        s->fw[i] = NULL;
        s->fw_src[i] = -1;
        if (q->form != QR_QF_DQ_INIT || q->owner < 0) continue;
        int src = s->tw.origin[q->owner];
        for (int k = 0; k < s->m.n; k++) {
            if (s->m.m[k].a_node != src) continue;
            const QrNode *bn = &s->b->nodes[s->m.m[k].b_twin];
            if (q->owner_input < bn->n_in && bn->in[q->owner_input] >= 0) {
                const QrTensor *w = &s->b->values[bn->in[q->owner_input]].t;
                const QrTensor *aw = &tg->values[q->int_value].t;
                /* Gemm(transB=1) quantized as MatMul: the integer weight is the transpose. */
                if (w->data && qr_dtype_is_float(w->dtype) && w->rank == 2 && aw->rank == 2 && !qr_tensor_same_shape(w, aw) &&
                    w->dims[0] == aw->dims[1] && w->dims[1] == aw->dims[0] && !strcmp(bn->op_type, "Gemm") &&
                    qr_attr_int(bn, "transB", 0) && qr_tensor_to_f32(w, &s->fw_owned[i]) == QR_OK) {
                    QrTensor *t = &s->fw_owned[i];
                    float *tmp = malloc((size_t)t->numel * sizeof(float));
                    if (tmp) {
                        const float *src = t->data;
                        int64_t r = w->dims[0], c = w->dims[1];
                        for (int64_t y = 0; y < r; y++) for (int64_t x = 0; x < c; x++) tmp[x * r + y] = src[y * c + x];
                        memcpy(t->data, tmp, (size_t)t->numel * sizeof(float));
                        t->dims[0] = c;
                        t->dims[1] = r;
                        free(tmp);
                        w = t;
                    }
                }
                if (w->data && qr_dtype_is_float(w->dtype) && qr_tensor_same_shape(w, aw)) {
                    if (qr__m_weight_consistent(tg, q, w)) { s->fw[i] = w; s->fw_src[i] = bn->in[q->owner_input]; }
                    else s->n_weight_mismatch++;
                }
            }
            break;
        }
    }
}

static QrStatus qr_session_open(QrSession *s, const QrGraph *b, const QrGraph *a, const QrTensor *inputs) {
    memset(s, 0, sizeof *s);
    s->b = b;
    s->a = a;
    s->inputs = inputs;
    QR_TRY(qr_quant_table_build(a, &s->qa));
    QrStatus st = qr_match(b, a, &s->qa, &s->m);
    if (st == QR_OK) st = qr_quant_twin_build(a, inputs, &s->tw);
    if (st == QR_OK) st = qr_quant_table_build(&s->tw.g, &s->qt);
    if (st == QR_OK) {
        s->fw = calloc((size_t)s->qt.n + 1, sizeof *s->fw);
        s->fw_owned = calloc((size_t)s->qt.n + 1, sizeof *s->fw_owned);
        s->fw_src = malloc(((size_t)s->qt.n + 1) * sizeof *s->fw_src);
        s->vis = malloc(((size_t)s->m.n + 1) * sizeof(int));
        s->vis_quant = malloc(((size_t)s->m.n + 1) * sizeof(int));
        if (!s->fw || !s->fw_owned || !s->fw_src || !s->vis || !s->vis_quant) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st != QR_OK) { qr_session_close(s); return st; }
    /* Activations implemented by quantizers (ONNX Runtime's removed Relus), found by the match on a. */
    for (int i = 0; i < s->qa.n; i++) {
        const QrQuantizer *q = &s->qa.q[i];
        if (q->implied_lo != q->implied_lo && q->implied_hi != q->implied_hi) continue;
        int v = q->out_value >= 0 ? q->out_value : q->int_value;
        int j = v >= 0 ? s->qt.by_value[v] : -1;
        if (j >= 0) { s->qt.q[j].implied_lo = q->implied_lo; s->qt.q[j].implied_hi = q->implied_hi; }
    }
    qr__se_float_weights(s);
    const QrGraph *tg = &s->tw.g;
    for (int i = 0; i < s->m.n; i++) {
        const QrMatch *mm = &s->m.m[i];
        s->vis[i] = s->vis_quant[i] = -1;
        if (mm->a_node < 0 || mm->a_value < 0) continue;
        int v = mm->a_value, q = s->qt.by_value[v];
        /* An integer value whose twin quantizer has a DequantizeLinear: consumers read that. */
        if (q >= 0 && s->qt.q[q].int_value == v && s->qt.q[q].out_value >= 0) v = s->qt.q[q].out_value;
        s->vis[i] = v;
        if (!qr_dtype_is_float(tg->values[v].t.dtype)) s->vis_quant[i] = s->qt.by_value[v];
    }
    return QR_OK;
}

typedef struct QrBaseTap { QrSession *s; int *match_of; } QrBaseTap;

static QrStatus qr__se_base_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrBaseTap *bt = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    int mi = bt->match_of[value];
    if (mi < 0 || !qr_dtype_is_float(t->dtype) || bt->s->base[mi].data) return QR_OK;
    return qr_tensor_to_f32(t, &bt->s->base[mi]);
}

static QrStatus qr_session_run_baseline(QrSession *s) {
    if (s->base) return QR_OK;
    if (s->b->n_outputs != s->tw.g.n_outputs)
        return qr_errf(QR_ERR_INVALID, "the baseline has %d outputs but the analysis model has %d", s->b->n_outputs,
                       s->tw.g.n_outputs);
    s->base = calloc((size_t)s->m.n + 1, sizeof(QrTensor));
    s->base_out = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    QrBaseTap bt = { s, malloc(((size_t)s->b->n_values + 1) * sizeof(int)) };
    QrTensor *outs = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    QrStatus st = s->base && s->base_out && bt.match_of && outs ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int v = 0; v < s->b->n_values; v++) bt.match_of[v] = -1;
        for (int i = 0; i < s->m.n; i++) bt.match_of[s->m.m[i].b_value] = i;
        QrRunOpts o = { .tap = qr__se_base_tap, .tap_user = &bt, .n_exec = &s->n_base_exec };
        st = qr_run(s->b, s->inputs, &o, outs);
    }
    for (int k = 0; st == QR_OK && k < s->b->n_outputs; k++) st = qr_tensor_to_f32(&outs[k], &s->base_out[k]);
    if (outs) for (int k = 0; k < s->b->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    free(bt.match_of);
    if (st != QR_OK) {
        /* no half-filled cache: a later call must run again, not report success */
        if (s->base) for (int i = 0; i < s->m.n; i++) qr_tensor_free_data(&s->base[i]);
        if (s->base_out) for (int k = 0; k < s->b->n_outputs; k++) qr_tensor_free_data(&s->base_out[k]);
        free(s->base);
        free(s->base_out);
        s->base = s->base_out = NULL;
        st = qr_err_wrap(st, "running the baseline %s", s->b->path ? s->b->path : "");
    }
    return st;
}

static void qr_session_close(QrSession *s) {
    if (s->base) for (int i = 0; i < s->m.n; i++) qr_tensor_free_data(&s->base[i]);
    if (s->base_out) for (int i = 0; i < s->b->n_outputs; i++) qr_tensor_free_data(&s->base_out[i]);
    free(s->base);
    free(s->base_out);
    qr_quant_twin_free(&s->tw);
    qr_match_free(&s->m);
    qr_quant_table_free(&s->qa);
    free(s->fw);
    if (s->fw_owned) for (int i = 0; i < s->qt.n; i++) qr_tensor_free_data(&s->fw_owned[i]);
    free(s->fw_owned);
    free(s->fw_src);
    qr_quant_table_free(&s->qt);
    free(s->vis);
    free(s->vis_quant);
    memset(s, 0, sizeof *s);
}

static QrStatus qr_session_overrides_alloc(const QrSession *s, QrOverrides *o) {
    size_t n = (size_t)s->tw.g.n_values + 1;
    o->alias = malloc(n * sizeof(int));
    o->subst = calloc(n, sizeof *o->subst);
    o->clamp_lo = malloc(n * sizeof(float));
    o->clamp_hi = malloc(n * sizeof(float));
    if (o->alias && o->subst && o->clamp_lo && o->clamp_hi) return QR_OK;
    qr_session_overrides_free(o);
    return qr_errf(QR_ERR_NOMEM, "out of memory");
}

static void qr_session_overrides_free(QrOverrides *o) {
    free(o->alias);
    free(o->subst);
    free(o->clamp_lo);
    free(o->clamp_hi);
    memset(o, 0, sizeof *o);
}

static void qr_session_overrides(const QrSession *s, const bool *enabled, QrOverrides *o) {
    qr_quant_overrides(&s->tw.g, &s->qt, enabled, s->fw, o->alias, o->subst, o->clamp_lo, o->clamp_hi);
}

static QrRunOpts qr_session_run_opts(const QrOverrides *o, QrTapFn tap, void *user) {
    return (QrRunOpts){ .tap = tap, .tap_user = user, .alias = o->alias, .subst = o->subst,
                        .clamp_lo = o->clamp_lo, .clamp_hi = o->clamp_hi };
}

static QrStatus qr_session_visible_f32(const QrSession *s, int i, const QrTensor *t, QrTensor *out) {
    if (s->vis_quant[i] >= 0 && !qr_dtype_is_float(t->dtype))
        return qr_quant_dequantize_value(&s->tw.g, &s->qt.q[s->vis_quant[i]], t, out);
    return qr_tensor_to_f32(t, out);
}

/* ==== equivalence check ============================================================ */

typedef struct QrEquivTap {
    const QrSession *s;
    int *match_of_b, *match_of_a;    /* value -> match index */
    QrTensor *base_vals;             /* per match: copy of the baseline value */
    QrEquivResult *r;
    bool analysis_pass;
} QrEquivTap;

static QrStatus qr__equiv_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrEquivTap *e = user;
    QR_UNUSED(node);
    QR_UNUSED(g);
    if (!e->analysis_pass) {
        int mi = e->match_of_b[value];
        if (mi < 0 || !qr_dtype_is_float(t->dtype)) return QR_OK;
        return qr_tensor_to_f32(t, &e->base_vals[mi]);
    }
    int mi = e->match_of_a[value];
    if (mi < 0 || !e->base_vals[mi].data) return QR_OK;
    QrTensor f = {0};
    if (qr_session_visible_f32(e->s, mi, t, &f) != QR_OK) { qr_err_clear(); return QR_OK; }
    const QrTensor *x = &e->base_vals[mi];
    if (f.numel == x->numel) {
        double mx = 0, ref = 0;
        const float *px = x->data, *py = f.data;
        for (int64_t i = 0; i < x->numel; i++) {
            double d = fabs((double)px[i] - (double)py[i]);
            if (d > mx || d != d) mx = d;
            if (fabs(px[i]) > ref) ref = fabs(px[i]);
        }
        e->r->max_abs[mi] = mx;
        e->r->ref_absmax[mi] = ref;
    }
    qr_tensor_free_data(&f);
    return QR_OK;
}

static QrStatus qr_session_equivalence(const QrSession *s, QrEquivResult *r) {
    const QrGraph *b = s->b, *tg = &s->tw.g;
    const QrMatchResult *m = &s->m;
    memset(r, 0, sizeof *r);
    r->max_abs = calloc((size_t)m->n + 1, sizeof(double));
    r->ref_absmax = calloc((size_t)m->n + 1, sizeof(double));
    QrEquivTap e = { s, NULL, NULL, NULL, r, false };
    e.match_of_b = malloc((size_t)b->n_values * sizeof(int));
    e.match_of_a = malloc((size_t)tg->n_values * sizeof(int));
    e.base_vals = calloc((size_t)m->n + 1, sizeof(QrTensor));
    bool *enabled = calloc((size_t)s->qt.n + 1, sizeof(bool));
    QrOverrides ov = {0};
    QrTensor *bout = calloc((size_t)b->n_outputs + 1, sizeof *bout), *aout = calloc((size_t)tg->n_outputs + 1, sizeof *aout);
    QrStatus st = r->max_abs && r->ref_absmax && e.match_of_b && e.match_of_a && e.base_vals && enabled && bout && aout
                      ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int v = 0; v < b->n_values; v++) e.match_of_b[v] = -1;
        for (int v = 0; v < tg->n_values; v++) e.match_of_a[v] = -1;
        for (int i = 0; i < m->n; i++) {
            r->max_abs[i] = NAN;
            e.match_of_b[m->m[i].b_value] = i;
            if (s->vis[i] >= 0) e.match_of_a[s->vis[i]] = i;
        }
        r->n_weight_mismatch = s->n_weight_mismatch;
        for (int i = 0; i < s->qt.n; i++) {
            const QrQuantizer *q = &s->qt.q[i];
            if (!q->can_disable) r->n_not_disabled++;
            else if (q->form == QR_QF_DQ_INIT && q->kind != QR_QK_BIAS) {
                if (!s->fw[i]) { r->n_no_float_weight++; continue; }
                r->n_substituted++;
                const char *bname = s->fw_src[i] >= 0 ? b->values[s->fw_src[i]].name : "?";
                size_t cap = r->substituted ? strlen(r->substituted) : 0;
                const char *an = tg->values[q->int_value].name;
                size_t add = strlen(an) + strlen(bname) + 32;
                char *ns = realloc(r->substituted, cap + add + 1);
                if (!ns) continue;
                snprintf(ns + cap, add + 1, "  %s <- %s%s\n", an, bname, s->fw[i] == &s->fw_owned[i] ? " (transposed)" : "");
                r->substituted = ns;
            }
        }
        r->n_no_float_weight = QR_MAX(0, r->n_no_float_weight - r->n_weight_mismatch);
        qr_session_overrides(s, enabled, &ov);
        QrRunOpts ob = { .tap = qr__equiv_tap, .tap_user = &e };
        st = qr_run(b, s->inputs, &ob, bout);
    }
    if (st == QR_OK) {
        e.analysis_pass = true;
        QrRunOpts oa = qr_session_run_opts(&ov, qr__equiv_tap, &e);
        st = qr_run(tg, s->inputs, &oa, aout);
    }
    if (st == QR_OK) {
        r->worst_rel = 0;
        r->worst_match = -1;
        for (int i = 0; i < m->n; i++) {
            if (!b->values[m->m[i].b_value].is_output || r->max_abs[i] != r->max_abs[i]) continue;
            double rel = r->max_abs[i] / QR_MAX(r->ref_absmax[i], 1e-12);
            if (r->worst_match < 0 || rel > r->worst_rel) { r->worst_rel = rel; r->worst_match = i; }
        }
        r->equivalent = r->worst_match >= 0 && r->worst_rel <= 1e-3 && r->n_weight_mismatch == 0;
    }
    if (e.base_vals) for (int i = 0; i < m->n; i++) qr_tensor_free_data(&e.base_vals[i]);
    if (bout) for (int i = 0; i < b->n_outputs; i++) qr_tensor_free_data(&bout[i]);
    if (aout) for (int i = 0; i < tg->n_outputs; i++) qr_tensor_free_data(&aout[i]);
    free(bout); free(aout); free(e.match_of_a); free(e.match_of_b); free(e.base_vals); free(enabled);
    qr_session_overrides_free(&ov);
    if (st != QR_OK) qr_equiv_free(r);
    return st;
}

static void qr_equiv_free(QrEquivResult *r) {
    free(r->substituted);
    r->substituted = NULL;
    free(r->max_abs);
    free(r->ref_absmax);
    r->max_abs = r->ref_absmax = NULL;
}

static const char *qr_equiv_verdict(const QrGraph *b, const QrMatchResult *m, const QrEquivResult *r) {
    static _Thread_local char buf[1024];
    size_t o = 0;
    if (r->worst_match < 0) {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "Equivalence check: no model output could be compared.");
    } else if (r->equivalent || (r->n_weight_mismatch == 0 && r->worst_rel <= 1e-3)) {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "Equivalence check: PASS — with every quantizer disabled the analysis "
                              "model reproduces the baseline outputs (worst relative difference %.3g at '%s').",
                              r->worst_rel, b->values[m->m[r->worst_match].b_value].name);
    } else {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "Equivalence check: WARNING — with every quantizer disabled the "
                              "analysis model does NOT reproduce the baseline: output '%s' differs by %.3g of its range. "
                              "The two models differ beyond quantization; check that the right float model was given.",
                              b->values[m->m[r->worst_match].b_value].name, r->worst_rel);
    }
    if (r->n_weight_mismatch && o < sizeof buf)
        o += (size_t)snprintf(buf + o, sizeof buf - o, " %d baseline float weight%s do%s not quantize to the analysis "
                              "model's integer weights: the float model is not the one that was quantized.",
                              r->n_weight_mismatch, r->n_weight_mismatch == 1 ? "" : "s", r->n_weight_mismatch == 1 ? "es" : "");
    if (r->n_not_disabled && o < sizeof buf)
        o += (size_t)snprintf(buf + o, sizeof buf - o, " %d quantizer%s could not be disabled (integer nodes without a float twin), "
                              "so the check includes their quantization error.", r->n_not_disabled, r->n_not_disabled == 1 ? "" : "s");
    if (r->n_substituted && o < sizeof buf)
        o += (size_t)snprintf(buf + o, sizeof buf - o, " %d integer weight%s replaced by the matched baseline float weight.",
                              r->n_substituted, r->n_substituted == 1 ? " was" : "s were");
    if (r->n_no_float_weight && o < sizeof buf)
        snprintf(buf + o, sizeof buf - o, " %d integer weight%s no float counterpart and stay%s quantized.",
                 r->n_no_float_weight, r->n_no_float_weight == 1 ? " has" : "s have", r->n_no_float_weight == 1 ? "s" : "");
    return buf;
}
