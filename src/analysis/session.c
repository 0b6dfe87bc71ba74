/* analysis/session — implementation. See session.h. */

/* A quantized baseline's weight as it is with the baseline's own quantizers off: the float
 * weight its fake-quantizer (Q -> DQ, QAT) reads; v itself otherwise (a float weight, or an
 * integer-stored one, whose folded DequantizeLinear output is all the baseline has). */
static int qr__se_base_weight(const QrSession *s, int v) {
    int j = s->qb.by_value ? s->qb.by_value[v] : -1;
    if (j < 0) return v;
    const QrQuantizer *q = &s->qb.q[j];
    if (q->form == QR_QF_QDQ && q->kind != QR_QK_ACTIVATION && q->out_value == v && q->float_value >= 0 &&
        s->b->values[q->float_value].t.data && qr_dtype_is_float(s->b->values[q->float_value].t.dtype))
        return q->float_value;
    return v;
}

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
                int bw = qr__se_base_weight(s, bn->in[q->owner_input]);
                const QrTensor *w = &s->b->values[bw].t;
                QrTensor aw_shape;   /* one code per element (4-bit codes may be packed two per byte) */
                qr_qtable_codes_shape(tg, q, &aw_shape);
                const QrTensor *aw = &aw_shape;
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
                    if (qr_match_weight_consistent(tg, q, w)) { s->fw[i] = w; s->fw_src[i] = bw; }
                    else s->n_weight_mismatch++;
                }
            }
            break;
        }
    }
}

/* The twin value match i's consumers see, and the quantizer to dequantize it with. */
static void qr__se_set_vis(QrSession *s, int i) {
    const QrGraph *tg = &s->tw.g;
    const QrMatch *mm = &s->m.m[i];
    s->vis[i] = s->vis_quant[i] = -1;
    if (mm->a_node < 0 || mm->a_value < 0) return;
    int v = mm->a_value, q = s->qt.by_value[v];
    /* An integer value whose twin quantizer has a DequantizeLinear: consumers read that. */
    if (q >= 0 && s->qt.q[q].int_value == v && s->qt.q[q].out_value >= 0) v = s->qt.q[q].out_value;
    s->vis[i] = v;
    if (!qr_dtype_is_float(tg->values[v].t.dtype)) s->vis_quant[i] = s->qt.by_value[v];
}

static QrStatus qr__se_verify(QrSession *s);

/* Drops the equivalence result kept from the verification run (s->eq_kept). */
static void qr__se_eq_kept_free(QrSession *s) {
    if (!s->eq_kept) return;
    qr_match_equiv_free(s->eq_kept);
    free(s->eq_kept);
    s->eq_kept = NULL;
}

static bool qr__se_read_by_relu(const QrGraph *g, int v) {
    const QrUse *u;
    int nu = v >= 0 ? qr_graph_readers(g, v, &u) : 0;
    for (int k = 0; k < nu; k++) if (!strcmp(g->nodes[u[k].node].op_type, "Relu")) return true;
    return false;
}

/* Single-model form: an activation quantizer whose zero point is its type's minimum clips at 0
 * (ONNX Runtime removes the Relu it implements); disabled, it keeps that clip. */
static void qr__se_imply_relu(const QrGraph *g, QrQuantTable *t) {
    for (int i = 0; i < t->n; i++) {
        QrQuantizer *q = &t->q[i];
        if (q->kind != QR_QK_ACTIVATION || q->implied_lo == q->implied_lo || q->zp_value < 0) continue;
        if (qr__se_read_by_relu(g, q->out_value)) continue;     /* the Relu is still there: nothing was removed */
        const QrTensor *z = &g->values[q->zp_value].t;
        if (!z->data || z->numel != 1) continue;
        int64_t zp = qr_tensor_get_i64(z, 0);
        int64_t lo = q->dtype == QR_DT_S8 ? -128 : q->dtype == QR_DT_S16 ? -32768 : q->dtype == QR_DT_U8 || q->dtype == QR_DT_U16 ? 0 : 1;
        if (zp == lo) q->implied_lo = 0;
    }
}

static const char *qr__se_form(const QrSession *s, char *buf, size_t n);

static void qr_session_single_model(QrSession *s) {
    s->base_quant_off = true;
    /* b_vis stays the value after each quantizer: with them off it is the producer's output, clamped where a
     * quantizer implements the Relu ONNX Runtime removed (the analysis side sees the same) */
    char buf[128];
    s->m.form = qr_arena_printf(&s->m.arena, "%s", qr__se_form(s, buf, sizeof buf));
    qr__se_imply_relu(s->a, &s->qa);
    qr__se_imply_relu(&s->tw.g, &s->qt);
}

/* Quantized baseline: the value each baseline node's consumers see (after its own Q -> DQ), and
 * the activations the quantizers of both models implement, as in the single-model form: with every
 * quantizer off, one whose zero point is its type's minimum keeps its clip at 0 on either side (the
 * Relu ONNX Runtime removed into it), so the two off-runs compute the same function. A float
 * baseline keeps b_vis = b_value and nothing else changes. */
static void qr__se_base_quantized(QrSession *s) {
    for (int i = 0; i < s->m.n; i++) {
        int v = s->m.m[i].b_value, q, w;
        bool is_int;
        s->b_vis[i] = v;
        if (!s->base_quant) continue;
        w = qr_match_visible_in(s->b, &s->qb, v, &q, &is_int);
        if (!is_int && w >= 0 && qr_dtype_is_float(s->b->values[w].t.dtype)) s->b_vis[i] = w;
    }
    if (!s->base_quant) return;
    qr__se_imply_relu(s->b, &s->qb);
    qr__se_imply_relu(s->a, &s->qa);
    qr__se_imply_relu(&s->tw.g, &s->qt);
}

static const char *qr__se_bits(const QrQuantTable *t, const char **fmt) {
    int bits = 0;
    bool qop = false, dyn = false;
    for (int i = 0; i < t->n; i++) {
        const QrQuantizer *q = &t->q[i];
        if (q->kind == QR_QK_BIAS) continue;
        int b = qr_dtype_size(q->dtype) * 8;
        if (q->dtype == QR_DT_S4 || q->dtype == QR_DT_U4) b = 4;
        if (b > bits) bits = b;
        qop |= q->form == QR_QF_QOP_OUT || q->form == QR_QF_QOP_WEIGHT;
        dyn |= q->form == QR_QF_DYNAMIC;
    }
    *fmt = dyn ? " integer-op" : qop ? " QOperator" : "";
    return bits == 4 ? "int4" : bits == 16 ? "int16" : bits == 32 ? "int32" : "int8";
}

/* The baseline form (qr_session_baseline_form) as s's fields give it: a literal, or buf (n bytes). */
static const char *qr__se_form(const QrSession *s, char *buf, size_t n) {
    if (s->base_quant_off) return "single model: quantizers off vs on";
    if (!s->base_quant) return "float vs quantized";
    bool fake_w = false, int_w = false;
    for (int i = 0; i < s->qb.n; i++)
        fake_w |= s->qb.q[i].kind == QR_QK_WEIGHT && s->qb.q[i].form == QR_QF_QDQ && s->qb.q[i].float_value >= 0;
    for (int i = 0; i < s->qa.n; i++)
        int_w |= s->qa.q[i].kind == QR_QK_WEIGHT && (s->qa.q[i].form == QR_QF_DQ_INIT || s->qa.q[i].form == QR_QF_QOP_WEIGHT);
    if (fake_w && int_w) return "QAT vs quantized";
    const char *fb, *fa, *bb = qr__se_bits(&s->qb, &fb), *ba = qr__se_bits(&s->qa, &fa);
    snprintf(buf, n, "quantized vs quantized (%s%s vs %s%s)", bb, fb, ba, fa);
    return buf;
}

static const char *qr_session_baseline_form(const QrSession *s) { return s->m.form ? s->m.form : ""; }

static const char *qr_session_baseline_form_text(const QrSession *s) {
    if (s->base_quant_off)
        return "the baseline is the analysis model itself with every quantizer disabled (integer weights without a float "
               "counterpart stay at their dequantized values).";
    if (!s->base_quant)
        return "the baseline is a float model; pairs are proven with every quantizer of the analysis model disabled.";
    return "the baseline is itself quantized: pairs are proven with every quantizer of both models disabled, and every "
           "metric compares the values each model's consumers see (after its own quantizers); the baseline keeps its "
           "quantizers in every analysis, and disabling a quantizer of the analysis model makes that value float (a weight: "
           "the baseline's weight before its own quantizer).";
}

static QrStatus qr_session_open(QrSession *s, const QrGraph *b, const QrGraph *a, const QrTensor *inputs) {
    memset(s, 0, sizeof *s);
    s->b = b;
    s->a = a;
    s->inputs = inputs;
    QR_TRY(qr_qtable_build(a, &s->qa));
    QrStatus st = qr_qtable_build(b, &s->qb);
    for (int i = 0; st == QR_OK && i < s->qb.n; i++) s->base_quant |= s->qb.q[i].kind != QR_QK_BIAS;
    if (st == QR_OK) st = qr_match(b, a, &s->qa, &s->m);
    if (st == QR_OK) st = qr_twin_build(a, inputs, &s->tw);
    if (st == QR_OK) st = qr_qtable_build(&s->tw.g, &s->qt);
    if (st == QR_OK) {
        s->fw = calloc((size_t)s->qt.n + 1, sizeof *s->fw);
        s->fw_owned = calloc((size_t)s->qt.n + 1, sizeof *s->fw_owned);
        s->fw_src = malloc(((size_t)s->qt.n + 1) * sizeof *s->fw_src);
        s->vis = malloc(((size_t)s->m.n + 1) * sizeof(int));
        s->vis_quant = malloc(((size_t)s->m.n + 1) * sizeof(int));
        s->b_vis = malloc(((size_t)s->m.n + 1) * sizeof(int));
        if (!s->fw || !s->fw_owned || !s->fw_src || !s->vis || !s->vis_quant || !s->b_vis) st = qr_errf(QR_ERR_NOMEM, "out of memory");
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
    if ((s->memo = calloc(1, sizeof *s->memo))) pthread_mutex_init(&s->memo->mu, NULL);   /* NULL: no memo */
    qr__se_float_weights(s);
    for (int i = 0; i < s->m.n; i++) qr__se_set_vis(s, i);
    qr__se_base_quantized(s);
    char buf[128];
    s->m.form = qr_arena_printf(&s->m.arena, "%s", qr__se_form(s, buf, sizeof buf));
    return QR_OK;
}

typedef struct QrBaseTap { QrSession *s; int *match_of; QrStatsCollect stats; uint8_t *filled; QrTapFn tap; void *tap_user; } QrBaseTap;

/* t as float32 into *d: into d's own buffer when it already has t's shape (a stale baseline
 * value of the previous sample), else a new one. */
static QrStatus qr__se_f32_into(const QrTensor *t, QrTensor *d) {
    if (d->data && d->owned && d->dtype == QR_DT_F32 && qr_tensor_same_shape(d, t)) {
        if (t->dtype != QR_DT_F32) return qr_tensor_convert(t, d);
        /* the baseline run's tap, while the other threads wait for the next node: the copy split among them */
        qr_pool_memcpy(d->data, t->data, qr_tensor_nbytes(t));
        return QR_OK;
    }
    qr_tensor_free_data(d);
    return qr_tensor_to_f32(t, d);
}

static QrStatus qr__se_base_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrBaseTap *bt = user;
    if (bt->stats.stats) QR_TRY(qr_stats_tap(&bt->stats, g, node, value, t));
    if (bt->tap) QR_TRY(bt->tap(bt->tap_user, g, node, value, t));
    int mi = bt->match_of[value];
    if (mi < 0 || !qr_dtype_is_float(t->dtype) || bt->filled[mi]) return QR_OK;
    bt->filled[mi] = 1;
    return qr__se_f32_into(t, &bt->s->base[mi]);
}

static void qr__se_input_cache_free(QrSession *s) {
    if (s->input_cache && s->input_cache_free) s->input_cache_free(s->input_cache, s->tw.g.n_values);
    s->input_cache = NULL;
    s->input_cache_free = NULL;
}

static void qr_session_next_inputs(QrSession *s, const QrTensor *inputs) {
    s->inputs = inputs;
    s->base_stale = s->base != NULL;
    s->base_off_stale = s->base_off != NULL;
    qr_session_ref_free(s);
    qr__se_input_cache_free(s);
    qr__se_eq_kept_free(s);
}

/* Overrides that disable every quantizer of the baseline: integer-stored weights and biases
 * stay at their dequantized values (they have no float counterpart there). Refused, naming the
 * baseline, when a quantizer cannot be disabled (QOperator / integer-op nodes). */
static QrStatus qr__se_base_off_overrides(const QrSession *s, QrOverrides *ob) {
    size_t nv = (size_t)s->b->n_values + 1;
    const QrQuantTable *qb = &s->qb;
    ob->alias = malloc(nv * sizeof(int));
    ob->subst = calloc(nv, sizeof *ob->subst);
    ob->clamp_lo = malloc(nv * sizeof(float));
    ob->clamp_hi = malloc(nv * sizeof(float));
    bool *off = calloc((size_t)qb->n + 1, sizeof(bool));
    QrStatus st = ob->alias && ob->subst && ob->clamp_lo && ob->clamp_hi && off ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    int stuck = 0;
    for (int i = 0; st == QR_OK && i < qb->n; i++) stuck += !qb->q[i].can_disable;
    if (st == QR_OK && stuck && s->base_quant_off)
        st = qr_errf(QR_ERR_UNSUPPORTED, "single-model form: %d quantizer%s of %s cannot be disabled (QOperator / "
                     "integer-op nodes), so the model has no float baseline of its own; give the float model too",
                     stuck, stuck == 1 ? "" : "s", s->b->path ? s->b->path : "the model");
    else if (st == QR_OK && stuck)
        st = qr_errf(QR_ERR_UNSUPPORTED, "quantized baseline %s: %d quantizer%s cannot be disabled (QOperator / integer-op "
                     "nodes), so no pair can be proven on it; give its QDQ form (or the float model) as the baseline",
                     s->b->path ? s->b->path : "", stuck, stuck == 1 ? "" : "s");
    if (st == QR_OK) {
        for (int i = 0; i < qb->n; i++) off[i] = qb->q[i].form == QR_QF_DQ_INIT;   /* "enabled": stays dequantized */
        qr_qtable_overrides(s->b, qb, off, NULL, ob->alias, ob->subst, ob->clamp_lo, ob->clamp_hi);
    }
    free(off);
    if (st != QR_OK) qr_session_overrides_free(ob);
    return st;
}

/* A baseline run's tap that fills one per-match array: value v of the run, when match_of[v] names
 * a match i whose dst[i] is still empty and v is float, becomes dst[i] (a float32 copy) and gone[i]
 * (optional) is cleared. The quantizers-off run (base_off) and qr_session_base_need (base, with
 * base_gone) use it. */
typedef struct QrSeFillTap { QrTensor *dst; uint8_t *gone; int *match_of; } QrSeFillTap;

static QrStatus qr__se_fill_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrSeFillTap *ft = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    int mi = ft->match_of[value];
    if (mi < 0 || !qr_dtype_is_float(t->dtype) || ft->dst[mi].data) return QR_OK;
    if (ft->gone) ft->gone[mi] = 0;
    return qr_tensor_to_f32(t, &ft->dst[mi]);
}

static void qr__se_base_off_free(QrSession *s) {
    if (s->base_off) for (int i = 0; i < s->m.n; i++) qr_tensor_free_data(&s->base_off[i]);
    free(s->base_off);
    s->base_off = NULL;
}

#ifdef QR_TESTING
QR_TESTAPI int64_t qr_session_base_off_runs;
#endif

/* The quantized baseline with every one of its quantizers off: per match, its value (s->base_off). */
static QrStatus qr__se_run_base_off(QrSession *s) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_session_base_off_runs, 1, __ATOMIC_RELAXED);
#endif
    s->base_off_stale = false;
    qr__se_base_off_free(s);
    s->base_off = calloc((size_t)s->m.n + 1, sizeof(QrTensor));
    QrSeFillTap bt = { s->base_off, NULL, malloc(((size_t)s->b->n_values + 1) * sizeof(int)) };
    bool *only = calloc((size_t)s->b->n_values + 1, sizeof *only);
    QrTensor *outs = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    QrOverrides ob = {0};
    QrStatus st = s->base_off && bt.match_of && only && outs ? qr__se_base_off_overrides(s, &ob) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int v = 0; v < s->b->n_values; v++) bt.match_of[v] = -1;
        /* at the value the baseline's consumers see: with its quantizers off that is its producer's output, clamped
         * where a quantizer implements an activation (qr__se_base_quantized) */
        for (int i = 0; i < s->m.n; i++) bt.match_of[s->b_vis[i]] = i, only[s->b_vis[i]] = true;
        QrRunOpts o = { .tap = qr__se_fill_tap, .tap_user = &bt, .tap_only = only, .alias = ob.alias, .subst = ob.subst,
                        .clamp_lo = ob.clamp_lo, .clamp_hi = ob.clamp_hi };
        st = qr_run(s->b, s->inputs, &o, outs);
        if (st != QR_OK) st = qr_err_wrap(st, "running the baseline with its quantizers off");
    }
    if (outs) for (int k = 0; k < s->b->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    free(only);
    free(bt.match_of);
    qr_session_overrides_free(&ob);
    if (st != QR_OK) qr__se_base_off_free(s);
    return st;
}

static QrStatus qr_session_run_baseline(QrSession *s) { return qr_session_run_baseline_ex(s, &(QrBaseRunOpts){0}); }

/* qr_session_run_baseline_ex's run for o->want: the baseline up to the wanted matches' values, which are
 * filled as a whole run fills them (the same match_of: a value named by several matches fills the last). */
static QrStatus qr__se_run_base_want(QrSession *s, const uint8_t *want) {
    QrBaseTap bt = { s, malloc(((size_t)s->b->n_values + 1) * sizeof(int)), { NULL, NULL }, calloc((size_t)s->m.n + 1, 1),
                     NULL, NULL };
    bool *only = calloc((size_t)s->b->n_values + 1, sizeof *only);
    QrOverrides ob = {0};
    QrStatus st = bt.match_of && bt.filled && only ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK && s->base_quant_off) st = qr__se_base_off_overrides(s, &ob);   /* as the whole run */
    if (st == QR_OK) {
        for (int v = 0; v < s->b->n_values; v++) bt.match_of[v] = -1;
        for (int i = 0; i < s->m.n; i++) bt.match_of[s->b_vis[i]] = i;
        for (int i = 0; i < s->m.n; i++) if (want[i]) only[s->b_vis[i]] = true;
        QrRunOpts o = { .tap = qr__se_base_tap, .tap_user = &bt, .tap_only = only, .alias = ob.alias, .subst = ob.subst,
                        .clamp_lo = ob.clamp_lo, .clamp_hi = ob.clamp_hi };
        st = qr_run(s->b, s->inputs, &o, NULL);      /* no outputs: the nodes after the wanted values do not run */
        if (st != QR_OK) st = qr_err_wrap(st, "running the baseline %s", s->b->path ? s->b->path : "");
    }
    qr_session_overrides_free(&ob);
    free(only);
    free(bt.match_of);
    free(bt.filled);
    return st;
}

static QrStatus qr_session_run_baseline_ex(QrSession *s, const QrBaseRunOpts *ro) {
    if (s->base && !s->base_stale) return QR_OK;
    qr__se_eq_kept_free(s);     /* it belongs to the values about to be replaced */
    if (ro->want && s->base && s->match_fixed && !ro->stats && !ro->tap) return qr__se_run_base_want(s, ro->want);
    if (s->b->n_outputs != s->tw.g.n_outputs)
        return qr_errf(QR_ERR_INVALID, "the baseline has %d outputs but the analysis model has %d", s->b->n_outputs,
                       s->tw.g.n_outputs);
    const bool refill = s->base != NULL;     /* the next sample: the stale values' buffers are reused */
    s->base_stale = false;
    if (!refill) {
        s->base = calloc((size_t)s->m.n + 1, sizeof(QrTensor));
        s->base_out = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    }
    QrBaseTap bt = { s, malloc(((size_t)s->b->n_values + 1) * sizeof(int)), { ro->stats && ro->seen ? ro->stats : NULL, ro->seen },
                     calloc((size_t)s->m.n + 1, 1), ro->tap, ro->tap_user };
    QrTensor *outs = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    QrStatus st = s->base && s->base_out && bt.match_of && bt.filled && outs ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int v = 0; v < s->b->n_values; v++) bt.match_of[v] = -1;
        for (int i = 0; i < s->m.n; i++) bt.match_of[s->b_vis[i]] = i;
        bool *only = NULL;       /* without statistics only the matched values */
        if (!bt.stats.stats && !bt.tap && (only = calloc((size_t)s->b->n_values + 1, sizeof *only)))
            for (int i = 0; i < s->m.n; i++) only[s->b_vis[i]] = true;
        /* a quantized baseline: first with its quantizers off (what the pairs are proven on; once the match is
         * fixed, only the equivalence check reads them: qr_session_base_off_need) */
        if (s->base_quant && !s->base_quant_off && !s->match_fixed) st = qr__se_run_base_off(s);
        else if (s->base_quant && !s->base_quant_off) s->base_off_stale = true;
        QrRunOpts o = { .tap = qr__se_base_tap, .tap_user = &bt, .n_exec = &s->n_base_exec, .tap_only = only };
        /* single-model form: the baseline is the same graph with every quantizer disabled */
        QrOverrides ob = {0};
        if (s->base_quant_off) {
            st = qr__se_base_off_overrides(s, &ob);
            o.alias = ob.alias;
            o.subst = ob.subst;
            o.clamp_lo = ob.clamp_lo;
            o.clamp_hi = ob.clamp_hi;
        }
        if (st == QR_OK) st = qr_run(s->b, s->inputs, &o, outs);
        qr_session_overrides_free(&ob);
        free(only);
        if (st == QR_OK && bt.stats.stats) qr_stats_inits(s->b, bt.stats.stats, bt.stats.seen);
    }
    /* a refill: a value this run did not produce must not keep the previous sample's data */
    for (int i = 0; st == QR_OK && refill && i < s->m.n; i++) if (!bt.filled[i]) qr_tensor_free_data(&s->base[i]);
    if (st == QR_OK && s->base_gone) memset(s->base_gone, 0, (size_t)s->m.n);   /* every value filled again */
    for (int k = 0; st == QR_OK && k < s->b->n_outputs; k++) st = qr__se_f32_into(&outs[k], &s->base_out[k]);
    if (outs) for (int k = 0; k < s->b->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    free(bt.match_of);
    free(bt.filled);
    if (st != QR_OK) {
        /* no half-filled cache: a later call must run again, not report success */
        if (s->base) for (int i = 0; i < s->m.n; i++) qr_tensor_free_data(&s->base[i]);
        if (s->base_out) for (int k = 0; k < s->b->n_outputs; k++) qr_tensor_free_data(&s->base_out[k]);
        free(s->base);
        free(s->base_out);
        s->base = s->base_out = NULL;
        st = qr_err_wrap(st, "running the baseline %s", s->b->path ? s->b->path : "");
    }
    /* Every pair is proven before any analysis uses it (names are only hints). A failing
     * verification run leaves the pairs unchecked: nothing is then a headline. */
    if (st == QR_OK && !s->match_fixed && qr__se_verify(s) != QR_OK) qr_err_clear();
    return st;
}

static QrStatus qr_session_base_off_need(QrSession *s) {
    if (!s->base_quant || s->base_quant_off || !s->base || s->base_stale || (s->base_off && !s->base_off_stale)) return QR_OK;
    return qr__se_run_base_off(s);
}

static bool qr_session_base_swap(QrSession *s, QrTensor *base, QrTensor *base_out, QrTensor *base_off) {
    if (!s->base || !s->base_out || !s->base_stale || !base || !base_out) return false;
    QrTensor t;
    for (int i = 0; i < s->m.n; i++) t = s->base[i], s->base[i] = base[i], base[i] = t;
    for (int k = 0; k < s->b->n_outputs; k++) t = s->base_out[k], s->base_out[k] = base_out[k], base_out[k] = t;
    for (int i = 0; s->base_off && base_off && i < s->m.n; i++) t = s->base_off[i], s->base_off[i] = base_off[i], base_off[i] = t;
    s->base_off_stale = !(s->base_off && base_off);   /* else run when read (qr_session_base_off_need) */
    qr__se_eq_kept_free(s);
    if (s->base_gone) memset(s->base_gone, 0, (size_t)s->m.n);
    s->base_stale = false;
    return true;
}

static void qr_session_base_drop(QrSession *s, const bool *keep) {
    if (!s->base) return;
    if (!s->base_gone && !(s->base_gone = calloc((size_t)s->m.n + 1, 1))) return;   /* out of memory: nothing dropped */
    for (int i = 0; i < s->m.n; i++) {
        if ((keep && keep[i]) || !s->base[i].data) continue;
        qr_tensor_free_data(&s->base[i]);
        s->base_gone[i] = 1;
    }
}

static QrStatus qr_session_base_need(QrSession *s, const bool *want) {
    if (!s->base || s->base_stale) return qr_session_run_baseline(s);
    int n = 0;
    for (int i = 0; s->base_gone && i < s->m.n; i++) n += s->base_gone[i] && (!want || want[i]);
    if (!n) return QR_OK;
    QrSeFillTap bt = { s->base, s->base_gone, malloc(((size_t)s->b->n_values + 1) * sizeof(int)) };
    bool *only = calloc((size_t)s->b->n_values + 1, sizeof *only);
    QrStatus st = bt.match_of && only ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    QrOverrides ob = {0};
    if (st == QR_OK && s->base_quant_off) st = qr__se_base_off_overrides(s, &ob);   /* as qr_session_run_baseline ran it */
    if (st == QR_OK) {
        /* the value each match was filled from there: its b_vis, which the last match naming it takes */
        for (int v = 0; v < s->b->n_values; v++) bt.match_of[v] = -1;
        for (int i = 0; i < s->m.n; i++) bt.match_of[s->b_vis[i]] = i;
        for (int i = 0; i < s->m.n; i++) {
            int mi = bt.match_of[s->b_vis[i]];
            if (mi == i && s->base_gone[i] && (!want || want[i])) only[s->b_vis[i]] = true;
            else if (mi == i) bt.match_of[s->b_vis[i]] = -1;    /* kept, or not wanted: untouched */
        }
        QrRunOpts o = { .tap = qr__se_fill_tap, .tap_user = &bt, .tap_only = only, .alias = ob.alias, .subst = ob.subst,
                        .clamp_lo = ob.clamp_lo, .clamp_hi = ob.clamp_hi };
        st = qr_run(s->b, s->inputs, &o, NULL);
        if (st != QR_OK) st = qr_err_wrap(st, "running the baseline %s again", s->b->path ? s->b->path : "");
    }
    qr_session_overrides_free(&ob);
    free(only);
    free(bt.match_of);
    return st;
}

static void qr_session_close(QrSession *s) {
    qr__se_eq_kept_free(s);
    qr_session_ref_free(s);
    if (s->memo) pthread_mutex_destroy(&s->memo->mu);
    free(s->memo);
    s->memo = NULL;
    qr__se_input_cache_free(s);
    if (s->base) for (int i = 0; i < s->m.n; i++) qr_tensor_free_data(&s->base[i]);
    if (s->base_out) for (int i = 0; i < s->b->n_outputs; i++) qr_tensor_free_data(&s->base_out[i]);
    free(s->base);
    free(s->base_out);
    free(s->base_gone);
    qr__se_base_off_free(s);             /* before the match: it counts the rows */
    qr_twin_free(&s->tw);
    qr_match_free(&s->m);
    qr_qtable_free(&s->qa);
    free(s->fw);
    if (s->fw_owned) for (int i = 0; i < s->qt.n; i++) qr_tensor_free_data(&s->fw_owned[i]);
    free(s->fw_owned);
    free(s->fw_src);
    qr_qtable_free(&s->qt);
    free(s->vis);
    free(s->vis_quant);
    free(s->b_vis);
    qr_qtable_free(&s->qb);
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
    qr_qtable_overrides(&s->tw.g, &s->qt, enabled, s->fw, o->alias, o->subst, o->clamp_lo, o->clamp_hi);
}

static QrRunOpts qr_session_run_opts(const QrOverrides *o, QrTapFn tap, void *user) {
    return (QrRunOpts){ .tap = tap, .tap_user = user, .alias = o->alias, .subst = o->subst,
                        .clamp_lo = o->clamp_lo, .clamp_hi = o->clamp_hi };
}

static QrStatus qr_session_visible_view(const QrSession *s, int i, const QrTensor *t, QrTensor *tmp, const float **data) {
    memset(tmp, 0, sizeof *tmp);
    *data = NULL;
    if (t->dtype == QR_DT_F32) { *data = t->data; return QR_OK; }
    QR_TRY(qr_session_visible_f32(s, i, t, tmp));
    *data = tmp->data;
    return QR_OK;
}

static QrStatus qr_session_visible_f32(const QrSession *s, int i, const QrTensor *t, QrTensor *out) {
    if (s->vis_quant[i] >= 0 && !qr_dtype_is_float(t->dtype))
        return qr_match_dequantize_value(&s->tw.g, &s->qt.q[s->vis_quant[i]], t, out);
    return qr_tensor_to_f32(t, out);
}

/* ==== equivalence check ============================================================ */

/* Alternative analysis values for the pairs (qr__se_verify): per candidate, its match, the
 * value tapped in the run with every quantizer off, and the distance found there. */
typedef struct QrSeCands {
    int n, cap;
    int *match, *value, *next;
    double *max_abs;
    int *head;                       /* per twin value: its first candidate, -1 */
} QrSeCands;

typedef struct QrEquivTap {
    const QrSession *s;
    int *match_of_b, *match_of_a;    /* value -> match index */
    QrTensor *base_vals;             /* per match: copy of the baseline value */
    const QrTensor *base_ref;        /* or the session's (then base_vals stays empty) */
    QrEquivResult *r;
    bool analysis_pass;
    QrSeCands *c;                    /* or NULL */
} QrEquivTap;

/* max |x - y|; NaN where both are NaN and equal infinities count as the same value. One run of it. */
static double qr__se_maxdiff_run(const float *px, const float *py, int64_t n) {
    double mx = 0;
    /* the common case, a pair that reproduces its value bit for bit: every element is skipped
     * below (equal, or the same NaN), so 0 without the per-element branches */
    if (n > 0 && !memcmp(px, py, (size_t)n * sizeof *px)) return 0;
    /* every pair finite (the common case): the statistics kernel's max |x - y| in double is this
     * maximum (the same exact differences; equal pairs add 0), vectorized — the verification run
     * compares every candidate of every pair this way, serially in its tap (1.3 s of ViT-B/16's run) */
    QrF32PairStats ps;
    qr_f32_pair_stats_init(&ps);
    qr_kern.f32_pair_stats(px, py, n, &ps);   /* one run: qr__se_scan splits a long value over the pool */
    if (ps.n == n) return ps.maxad;
    for (int64_t i = 0; i < n; i++) {
        if (px[i] == py[i] || (px[i] != px[i] && py[i] != py[i])) continue;
        double d = fabs((double)px[i] - (double)py[i]);
        if (d > mx || d != d) mx = d;
    }
    return mx;
}

/* max |x[i]| over x[0..n) (NaN skipped, infinities counted); 0 for none. */
static double qr__se_absmax_run(const float *px, int64_t n) {
    double ref = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(px[i]) > ref) ref = fabs(px[i]);
    return ref;
}

/* The verification's scans of a value in runs of QR__SE_CHUNK elements side by side on the pool (the
 * worker idles while the twin's tap runs): per run its maximum difference (y given) or its largest
 * magnitude (y NULL), merged in run order. */
#define QR__SE_CHUNK 65536
typedef struct QrSeScan { const float *x, *y; int64_t n; double *out; } QrSeScan;

static void qr__se_scan_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrSeScan *sc = ctx;
    int64_t i0 = t * QR__SE_CHUNK, len = QR_MIN(QR__SE_CHUNK, sc->n - i0);
    sc->out[t] = sc->y ? qr__se_maxdiff_run(sc->x + i0, sc->y + i0, len) : qr__se_absmax_run(sc->x + i0, len);
}

/* qr__se_maxdiff_run (y) or qr__se_absmax_run (y NULL) of x[0..n), the runs of a long array side by
 * side: a maximum, so the same number whatever the split (qr__se_maxdiff_run's NaN wins, as one NaN
 * pair makes the whole array's NaN). */
static double qr__se_scan(const float *px, const float *py, int64_t n) {
    int64_t nt = (n + QR__SE_CHUNK - 1) / QR__SE_CHUNK;
    double *out = nt > 1 && qr_pool_threads() > 1 ? malloc((size_t)nt * sizeof *out) : NULL;
    if (!out) return py ? qr__se_maxdiff_run(px, py, n) : qr__se_absmax_run(px, n);
    qr_pool_for(nt, qr__se_scan_task, &(QrSeScan){ px, py, n, out });
    double mx = out[0];
    for (int64_t t = 1; t < nt; t++)
        if (out[t] > mx || out[t] != out[t]) mx = out[t];
    free(out);
    return mx;
}

static double qr__se_maxdiff(const float *px, const float *py, int64_t n) { return qr__se_scan(px, py, n); }

static QrStatus qr__se_equiv_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrEquivTap *e = user;
    QR_UNUSED(node);
    QR_UNUSED(g);
    if (!e->analysis_pass) {
        int mi = e->match_of_b[value];
        if (mi < 0 || !qr_dtype_is_float(t->dtype)) return QR_OK;
        return qr_tensor_to_f32(t, &e->base_vals[mi]);
    }
    for (int k = e->c ? e->c->head[value] : -1; k >= 0; k = e->c->next[k]) {
        const QrTensor *x = &e->base_ref[e->c->match[k]];
        if (x->data && t->dtype == QR_DT_F32 && t->numel == x->numel) e->c->max_abs[k] = qr__se_maxdiff(x->data, t->data, t->numel);
    }
    int mi = e->match_of_a[value];
    const QrTensor *x = mi < 0 ? NULL : e->base_ref ? &e->base_ref[mi] : &e->base_vals[mi];
    if (!x || !x->data) return QR_OK;
    QrTensor f;
    const float *py;
    if (qr_session_visible_view(e->s, mi, t, &f, &py) != QR_OK) { qr_err_clear(); return QR_OK; }
    if (t->numel == x->numel) {
        double mx = qr__se_maxdiff(x->data, py, x->numel), ref = qr__se_scan(x->data, NULL, x->numel);
        e->r->max_abs[mi] = mx;
        e->r->ref_absmax[mi] = ref;
    }
    qr_tensor_free_data(&f);
    return QR_OK;
}

static QrStatus qr__se_equiv(const QrSession *s, QrEquivResult *r, QrSeCands *c);
static QrStatus qr_session_equivalence(const QrSession *s, QrEquivResult *r) {
    const QrEquivResult *k = s->eq_kept;
    if (!k) return qr__se_equiv(s, r, NULL);
    /* the verification run's result (its pairs unchanged since): a copy */
    size_t n = ((size_t)s->m.n + 1) * sizeof(double);
    *r = *k;
    r->max_abs = malloc(n);
    r->ref_absmax = malloc(n);
    r->substituted = k->substituted ? strdup(k->substituted) : NULL;
    if (!r->max_abs || !r->ref_absmax || (k->substituted && !r->substituted)) {
        qr_match_equiv_free(r);
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    memcpy(r->max_abs, k->max_abs, n);
    memcpy(r->ref_absmax, k->ref_absmax, n);
    return QR_OK;
}

static QrStatus qr__se_equiv(const QrSession *s, QrEquivResult *r, QrSeCands *c) {
    const QrGraph *b = s->b, *tg = &s->tw.g;
    const QrMatchResult *m = &s->m;
    memset(r, 0, sizeof *r);
    r->max_abs = calloc((size_t)m->n + 1, sizeof(double));
    r->ref_absmax = calloc((size_t)m->n + 1, sizeof(double));
    QrEquivTap e = { s, NULL, NULL, NULL, NULL, r, false, c && s->base ? c : NULL };
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
        if (s->base) {
            /* the baseline values are those of the session's baseline run (a quantized one's with its quantizers off) */
            e.base_ref = s->base_off ? s->base_off : s->base;
        } else {
            QrRunOpts ob = { .tap = qr__se_equiv_tap, .tap_user = &e };
            st = qr_run(b, s->inputs, &ob, bout);
        }
    }
    if (st == QR_OK) {
        e.analysis_pass = true;
        QrRunOpts oa = qr_session_run_opts(&ov, qr__se_equiv_tap, &e);
        bool *only = calloc((size_t)tg->n_values + 1, sizeof *only);
        for (int v = 0; only && v < tg->n_values; v++) only[v] = e.match_of_a[v] >= 0 || (e.c && e.c->head[v] >= 0);
        oa.tap_only = only;
        st = qr_run(tg, s->inputs, &oa, aout);
        free(only);
    }
    if (st == QR_OK) {
        r->worst_rel = 0;
        r->worst_match = -1;
        for (int i = 0; i < m->n; i++) {
            bool is_out = b->values[m->m[i].b_value].is_output || (s->b_vis && b->values[s->b_vis[i]].is_output);
            if (!is_out || r->max_abs[i] != r->max_abs[i]) continue;
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
    if (st != QR_OK) qr_match_equiv_free(r);
    return st;
}

/* ==== pair verification ========================================================== */

/* Input index through which node n carries a value unchanged or affinely (Identity, Reshape,
 * Cast, Q/DQ, BatchNormalization, arithmetic with a constant), or clipped (Relu: a quantized
 * baseline whose Relu ONNX Runtime removed into its quantizer, against an analysis model that
 * keeps it), or -1. */
static int qr__se_affine_in(const QrGraph *a, const QrNode *n) {
    static const char *const pass[] = { "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast", "Dropout",
                                        "QuantizeLinear", "DequantizeLinear", "BatchNormalization", "Relu", NULL };
    if (n->n_in < 1 || n->n_out < 1 || n->out[0] < 0) return -1;
    if (qr_match_in(n->op_type, pass)) return 0;
    bool c0 = qr_match_const_in(a, n, 0), c1 = n->n_in > 1 && qr_match_const_in(a, n, 1);
    if (n->n_in != 2 || c0 == c1) return -1;
    if (!strcmp(n->op_type, "Div")) return c1 ? 0 : -1;          /* x / c, not c / x */
    if (!strcmp(n->op_type, "Mul") || !strcmp(n->op_type, "Add") || !strcmp(n->op_type, "Sub")) return c1 ? 0 : 1;
    return -1;
}

static QrStatus qr__se_cand_add(QrSeCands *c, int match, int value) {
    for (int k = c->head[value]; k >= 0; k = c->next[k]) if (c->match[k] == match) return QR_OK;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        int *m = realloc(c->match, (size_t)cap * sizeof(int)), *v = m ? realloc(c->value, (size_t)cap * sizeof(int)) : NULL;
        if (m) c->match = m;
        if (v) c->value = v;
        int *nx = v ? realloc(c->next, (size_t)cap * sizeof(int)) : NULL;
        if (nx) c->next = nx;
        double *d = nx ? realloc(c->max_abs, (size_t)cap * sizeof(double)) : NULL;
        if (!d) return qr_errf(QR_ERR_NOMEM, "out of memory");
        c->max_abs = d;
        c->cap = cap;
    }
    c->match[c->n] = match;
    c->value[c->n] = value;
    c->max_abs[c->n] = NAN;
    c->next[c->n] = c->head[value];
    c->head[value] = c->n++;
    return QR_OK;
}

/* Candidates of match i: the float values reachable from its value along single-consumer
 * chains of value-preserving / affine nodes, upstream and downstream (at most 8 steps each). */
static QrStatus qr__se_cands_of(const QrSession *s, int i, QrSeCands *c) {
    const QrGraph *a = s->a;
    int v0 = s->m.m[i].a_value;
    if (v0 < 0) return QR_OK;
    if (qr_dtype_is_float(a->values[v0].t.dtype)) QR_TRY(qr__se_cand_add(c, i, v0));   /* itself (values two pairs claim) */
    for (int dir = 0; dir < 2; dir++) {
        int v = v0;
        for (int step = 0; step < 8; step++) {
            int next = -1;
            if (dir == 0) {                       /* upstream: v's producer carries its data input */
                int p = a->values[v].producer;
                int k = p >= 0 ? qr__se_affine_in(a, &a->nodes[p]) : -1;
                int u = k >= 0 ? a->nodes[p].in[k] : -1;
                if (u >= 0 && !qr_match_isconst(a, u) && qr_graph_single_reader(a, u) == p) next = u;
            } else {                              /* downstream: v's only reader carries it */
                int r = qr_graph_single_reader(a, v);
                int k = r >= 0 ? qr__se_affine_in(a, &a->nodes[r]) : -1;
                if (k >= 0 && a->nodes[r].in[k] == v && !a->values[v].is_output) next = a->nodes[r].out[0];
            }
            if (next < 0) break;
            v = next;
            if (qr_dtype_is_float(a->values[v].t.dtype)) QR_TRY(qr__se_cand_add(c, i, v));
        }
    }
    return QR_OK;
}

static double qr__se_range(const QrTensor *x) {
    const float *p = x->data;
    double lo = INFINITY, hi = -INFINITY, amax = 0;
    for (int64_t k = 0; k < x->numel; k++) {
        if (!isfinite(p[k])) continue;
        if (p[k] < lo) lo = p[k];
        if (p[k] > hi) hi = p[k];
        if (fabs(p[k]) > amax) amax = fabs(p[k]);
    }
    double r = hi - lo;
    return r > 0 ? r : amax > 0 ? amax : 1.0;
}

/* range[i] = qr__se_range of pair i's baseline value (a quantized baseline's with its quantizers off), NaN
 * without one: one pair a task. */
typedef struct QrSeRanges { const QrSession *s; double *range; } QrSeRanges;

static void qr__se_range_task(void *ctx, int64_t i, int tid) {
    QR_UNUSED(tid);
    const QrSeRanges *r = ctx;
    const QrTensor *bv = r->s->base_off ? &r->s->base_off[i] : &r->s->base[i];
    r->range[i] = bv->data ? qr__se_range(bv) : NAN;
}

/* The other direction (a quantized baseline that keeps what the analysis model folded, e.g. QAT's
 * Conv -> Div -> BatchNormalization against the converted model's one Conv): for each pair, the
 * baseline rows without a pair downstream of it along a single-consumer chain of value-preserving /
 * affine nodes (8 steps) become candidates for the pair's analysis value. */
static QrStatus qr__se_base_chain_cands(const QrSession *s, QrSeCands *c) {
    const QrGraph *b = s->b;
    int *row = malloc(((size_t)b->n_values + 1) * sizeof(int));
    if (!row) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; v < b->n_values; v++) row[v] = -1;
    for (int i = 0; i < s->m.n; i++) row[s->m.m[i].b_value] = i;
    QrStatus st = QR_OK;
    for (int i = 0; st == QR_OK && i < s->m.n; i++) {
        const QrMatch *m = &s->m.m[i];
        if (m->a_node < 0 || m->a_value < 0 || !qr_dtype_is_float(s->tw.g.values[m->a_value].t.dtype)) continue;
        int v = m->b_value;
        for (int step = 0; st == QR_OK && step < 8; step++) {
            int r = qr_graph_single_reader(b, v);
            int k = r >= 0 ? qr__se_affine_in(b, &b->nodes[r]) : -1;
            if (k < 0 || b->nodes[r].in[k] != v || b->values[v].is_output || b->nodes[r].out[0] < 0) break;
            v = b->nodes[r].out[0];
            int j = row[v];
            const QrTensor *bv = j >= 0 ? (s->base_off ? &s->base_off[j] : &s->base[j]) : NULL;
            if (j >= 0 && s->m.m[j].a_node < 0 && bv->data) st = qr__se_cand_add(c, j, m->a_value);
        }
    }
    free(row);
    return st;
}

/* Pair i is not equivalent: when a baseline row downstream of it without a pair (qr__se_base_chain_cands)
 * reproduces i's analysis value, the pair moves there and row i (and the rows between) are noted as
 * folded into the analysis node. */
static bool qr__se_base_move(QrSession *s, const QrSeCands *c, int i, const double *range, double rel) {
    QrMatchResult *mr = &s->m;
    QrMatch *m = &mr->m[i];
    int best = -1;
    for (int k = 0; k < c->n; k++) {
        int j = c->match[k];
        if (j == i || c->value[k] != m->a_value || mr->m[j].a_node >= 0 || c->max_abs[k] != c->max_abs[k]) continue;
        if (c->max_abs[k] / range[j] <= QR_EQUIV_TOL && (best < 0 || j < best)) best = j;
    }
    if (best < 0) return false;
    QrMatch *t = &mr->m[best];
    const char *an = s->a->nodes[m->a_node].name;
    const char *note = qr_arena_printf(&mr->arena, "folded into '%s' (paired at '%s')", an, s->b->nodes[t->b_node].name);
    for (int k = 0; k < c->n; k++) {
        int j = c->match[k];
        if (j != best && c->value[k] == m->a_value && mr->m[j].a_node < 0 && j > i && j < best) mr->m[j].note = note;
    }
    int b_node = t->b_node, b_value = t->b_value;
    *t = *m;
    t->b_node = b_node;                  /* b_twin stays the baseline node computing the op (its weights) */
    t->b_value = b_value;
    t->note = qr_arena_printf(&mr->arena, "moved from baseline '%s' (differs by %.3g of the range with every quantizer off): "
                              "the analysis model folded what lies between", s->b->nodes[m->b_node].name, rel);
    m->a_node = m->a_value = m->a_quant = m->a_op = -1;
    m->a_is_int = false;
    m->method = QR_MM_NONE;
    m->note = note;
    m->verify = QR_MV_NONE;
    m->equiv_rel = NAN;
    qr__se_set_vis(s, i);
    qr__se_set_vis(s, best);
    mr->n_repaired++;
    return true;
}

/* Proves every pair: one run of the twin with every quantizer disabled, compared with the
 * baseline run. A pair whose value is not the baseline's within QR_EQUIV_TOL of its range
 * moves to the equivalent value nearby (qr__se_cands_of) when one exists (e.g. QAT's
 * Conv -> Div -> BatchNormalization, whose BN output is the baseline's folded Conv), else it
 * stays, marked UNVERIFIED with its distance. */
static QrStatus qr__se_verify(QrSession *s) {
    QrMatchResult *mr = &s->m;
    const QrGraph *a = s->a;
    QrSeCands c = {0};
    QrEquivResult r;
    memset(&r, 0, sizeof r);
    c.head = malloc(((size_t)s->tw.g.n_values + 1) * sizeof(int));
    bool *used = calloc((size_t)a->n_values + 1, sizeof(bool));
    double *range = calloc((size_t)mr->n + 1, sizeof(double));
    QrStatus st = c.head && used && range ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; st == QR_OK && v < s->tw.g.n_values; v++) c.head[v] = -1;
    if (st == QR_OK) qr_pool_for(mr->n, qr__se_range_task, &(QrSeRanges){ s, range });   /* the pairs side by side */
    for (int i = 0; st == QR_OK && i < mr->n; i++) {
        if (mr->m[i].a_value >= 0) used[mr->m[i].a_value] = true;
        const QrTensor *bv = s->base_off ? &s->base_off[i] : &s->base[i];   /* a quantized baseline: with its quantizers off */
        if (bv->data) st = qr__se_cands_of(s, i, &c);
    }
    if (st == QR_OK) st = qr__se_base_chain_cands(s, &c);
    if (st == QR_OK) st = qr__se_equiv(s, &r, &c);
    if (st == QR_OK) {
        mr->n_verified = mr->n_unverified = mr->n_repaired = 0;
        for (int i = 0; i < mr->n; i++) {
            QrMatch *m = &mr->m[i];
            m->verify = QR_MV_NONE;
            m->equiv_rel = NAN;
            if (m->a_node < 0 || range[i] != range[i]) continue;
            double rel = r.max_abs[i] == r.max_abs[i] ? r.max_abs[i] / range[i] : INFINITY;
            for (int k = 0; rel != rel || rel == INFINITY ? k < c.n : 0; k++)
                if (c.match[k] == i && c.value[k] == m->a_value && c.max_abs[k] == c.max_abs[k]) rel = c.max_abs[k] / range[i];
            if (!(rel <= QR_EQUIV_TOL)) {
                int best = -1, best_vis = -1, best_q = -1;
                double best_rel = INFINITY;
                for (int k = 0; k < c.n; k++) {
                    if (c.match[k] != i || c.max_abs[k] != c.max_abs[k]) continue;
                    int q;
                    bool is_int;
                    int vis = qr_match_visible_in(a, &s->qa, c.value[k], &q, &is_int);
                    double cr = c.max_abs[k] / range[i];
                    if (is_int || vis == m->a_value || used[vis] || !(cr <= QR_EQUIV_TOL) || cr >= best_rel) continue;
                    best = k, best_vis = vis, best_q = q, best_rel = cr;
                }
                if (best < 0 && qr__se_base_move(s, &c, i, range, rel)) continue;   /* row i folded: a later row has the pair */
                if (best >= 0) {
                    int old_node = m->a_node, old_value = m->a_value;
                    int v = c.value[best], p = a->values[v].producer;
                    while (p >= 0 && qr_match_transparent(&a->nodes[p]) && a->nodes[p].n_in && a->nodes[p].in[0] >= 0) {
                        int u = a->nodes[p].in[0];
                        if (a->values[u].producer < 0) break;
                        p = a->values[u].producer;
                    }
                    used[old_value] = false;
                    used[best_vis] = true;
                    m->a_node = p >= 0 ? p : old_node;
                    m->a_value = best_vis;
                    m->a_quant = best_q;
                    m->a_is_int = false;
                    m->note = qr_arena_printf(&mr->arena, "moved from '%s' (differs by %.3g of the range with every quantizer "
                                              "off) to its equivalent value", a->values[old_value].name, rel);
                    qr__se_set_vis(s, i);
                    rel = best_rel;
                    mr->n_repaired++;
                    /* the node left without a pair is listed as such; the new one is no longer unmatched */
                    bool still = false;
                    for (int j = 0; j < mr->n; j++) still |= mr->m[j].a_node == old_node;
                    int w = 0;
                    for (int k = 0; k < mr->n_unmatched_a; k++) {
                        if (mr->unmatched_a[k] == m->a_node) continue;
                        mr->unmatched_a[w] = mr->unmatched_a[k];
                        mr->unmatched_why[w++] = mr->unmatched_why[k];
                    }
                    mr->n_unmatched_a = w;
                    if (!still && w < a->n_nodes) {
                        mr->unmatched_a[w] = old_node;
                        mr->unmatched_why[w] = qr_arena_printf(&mr->arena, "inside the pair of baseline '%s' (its value "
                                                               "before '%s', which the baseline folded)",
                                                               s->b->nodes[m->b_node].name, a->nodes[m->a_node].name);
                        mr->n_unmatched_a++;
                    }
                }
            }
            m->equiv_rel = rel;
            m->verify = rel <= QR_EQUIV_TOL ? QR_MV_VERIFIED : QR_MV_UNVERIFIED;
            if (m->verify == QR_MV_VERIFIED) mr->n_verified++; else mr->n_unverified++;
        }
        mr->verified_run = true;
        /* no pair moved: this run was the equivalence check's (same pairs, same configuration) */
        if (!mr->n_repaired && (s->eq_kept = malloc(sizeof *s->eq_kept)) != NULL) {
            *s->eq_kept = r;
            memset(&r, 0, sizeof r);
        }
    }
    qr_match_equiv_free(&r);
    free(c.head); free(c.match); free(c.value); free(c.next); free(c.max_abs);
    free(used);
    free(range);
    return st;
}

/* ==== the all-on reference ========================================================= */

typedef struct QrSeRefTap {
    QrSeRef *ref;
    const bool *copy;        /* per value: keep a copy */
    QrTapFn tap;             /* the caller's */
    void *user;
    const bool *tap_only;
} QrSeRefTap;

/* Whether a re-run may read value v of the twin from the reference: when the node or
 * output reading it can run while v's producer does not. A reader R runs in a re-run when it
 * reads an overridden value (a disabled quantizer's DequantizeLinear output, a substituted
 * weight or bias, what-if's promoted scales, which only QuantizeLinear / DequantizeLinear
 * nodes read) or is downstream of a node that runs; so v is needed when it is a graph output,
 * read by a QuantizeLinear, or read by a node with another input that is not a constant.
 * Not needed, e.g.: a Conv output read only by its Relu / Clip, a QuantizeLinear output read
 * only by its DequantizeLinear (a promotion re-runs both). Should a re-run still miss a
 * value, qr_session_run_inc also runs the nodes that compute it. */
static bool qr__se_ref_needed(const QrGraph *g, int v) {
    if (g->values[v].is_output) return true;
    const QrUse *u;
    int nu = qr_graph_readers(g, v, &u);
    for (int k = 0; k < nu; k++) {
        const QrNode *r = &g->nodes[u[k].node];
        if (!strcmp(r->op_type, "QuantizeLinear")) return true;
        for (int j = 0; j < r->n_in; j++) {
            int w = r->in[j];
            if (w >= 0 && w != v && !g->values[w].is_const) return true;
        }
    }
    return false;
}

/* Marks live every node downstream of the sp nodes on stack (already marked live); stack has
 * room for every node of g. */
static void qr__se_downstream(const QrGraph *g, bool *live, int *stack, int sp) {
    while (sp) {
        const QrNode *nd = &g->nodes[stack[--sp]];
        for (int o = 0; o < nd->n_out; o++) {
            if (nd->out[o] < 0) continue;
            const QrUse *u;
            int nu = qr_graph_readers(g, nd->out[o], &u);
            for (int k = 0; k < nu; k++) if (!live[u[k].node]) { live[u[k].node] = true; stack[sp++] = u[k].node; }
        }
    }
}

/* The values a re-run may read from the reference, by cones (copy[v], computed values only): every
 * override a re-run makes is at a quantizer (a disabled one's DequantizeLinear output or switch, a
 * substituted weight, what-if's scales, which its QuantizeLinear / DequantizeLinear read), so a
 * re-run executes a union of quantizer cones — all nodes downstream of the quantizer's Q, DQ and
 * switched nodes. With cnt[x] = the quantizers whose cone holds node x, a reader n of v runs while
 * v's producer p does not only when cnt[n] > cnt[p] (cones are closed downstream). Readers see
 * through aliases (a disabled quantizer's DequantizeLinear output reads its QuantizeLinear's
 * input), so what an alias chain from a read value reaches, with every quantizer off, counts as
 * read. The reference keeps what both this and qr__se_ref_needed (the plain rule it had) keep:
 * never more than before, and e.g. a GELU's Div / Erf / Add outputs (a transformer's MLP: 4 x its
 * width per token, each read with another non-constant) no longer. False when out of memory (the
 * plain rule alone). A value missed costs time, never other numbers: qr_session_run_inc computes
 * what the reference lacks. */
static bool qr__se_ref_cones(const QrSession *s, bool *copy) {
    const QrGraph *g = &s->tw.g;
    const QrQuantTable *qt = &s->qt;
    int nn = g->n_nodes, nv = g->n_values;
    int *cnt = calloc((size_t)nn + 1, sizeof *cnt), *stack = malloc(((size_t)nn + 1) * sizeof *stack);
    bool *live = malloc((size_t)nn + 1), *off = calloc((size_t)qt->n + 1, 1);
    QrOverrides inv = { 0 };
    bool ok = cnt && stack && live && off && qr_session_overrides_alloc(s, &inv) == QR_OK;
    if (ok) {
        qr_session_overrides(s, off, &inv);   /* every quantizer disabled: the alias chains */
        for (int i = 0; i < qt->n; i++) {
            const QrQuantizer *q = &qt->q[i];
            memset(live, 0, (size_t)nn);
            int sp = 0, start[QR_QUANT_MAX_DQ + 2], ns = 0;
            for (int d = 0; d < q->n_dq; d++) start[ns++] = q->dq_nodes[d];
            if (q->q_node >= 0) start[ns++] = q->q_node;
            if (q->sel_value >= 0 && g->values[q->sel_value].producer >= 0) start[ns++] = g->values[q->sel_value].producer;
            for (int k = 0; k < ns; k++) if (!live[start[k]]) { live[start[k]] = true; stack[sp++] = start[k]; }
            qr__se_downstream(g, live, stack, sp);
            for (int n = 0; n < nn; n++) cnt[n] += live[n];
        }
        memset(copy, 0, (size_t)nv);
        for (int w = 0; w < nv; w++) {
            const QrUse *u;
            int nu = qr_graph_readers(g, w, &u);
            if (!nu && !g->values[w].is_output) continue;
            int chain[66], nc = 0;   /* w and the values its alias chain reaches */
            chain[nc++] = w;
            for (int c = 0; c < nc && nc < 64; c++) {
                int t = inv.alias[chain[c]];
                bool dup = t < 0;
                for (int d = 0; !dup && d < nc; d++) dup = chain[d] == t;
                if (!dup) chain[nc++] = t;
            }
            for (int c = 0; c < nc; c++) {
                int x = chain[c], p = g->values[x].producer;
                if (p < 0) continue;
                bool nd = g->values[w].is_output;
                for (int k = 0; !nd && k < nu; k++) nd = cnt[u[k].node] > cnt[p];
                if (nd) copy[x] = true;
            }
        }
    }
    qr_err_clear();
    qr_session_overrides_free(&inv);
    free(cnt);
    free(stack);
    free(live);
    free(off);
    return ok;
}

/* Keeps each computed value (constants stay in the run cache), then the caller's tap. */
static QrStatus qr__se_ref_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrSeRefTap *rt = user;
    QrTensor *d = &rt->ref->vals[value];
    if (rt->copy[value] && !d->data && !qr_run_cache_get(rt->ref->consts, value)) {
        QR_TRY(qr_tensor_set_shape(d, t->dtype, t->rank, t->dims));
        QR_TRY(qr_tensor_alloc_data(d));
        memcpy(d->data, t->data, qr_tensor_nbytes(t));
    }
    if (rt->tap && (!rt->tap_only || rt->tap_only[value])) return rt->tap(rt->user, g, node, value, t);
    return QR_OK;
}

static void qr__se_memo_clear(QrSeMemo *m) {
    if (!m) return;
    for (int k = 0; k < m->n; k++) qr_session_overrides_free(&m->e[k].ov);
    m->n = 0;
}

static void qr_session_ref_free(QrSession *s) {
    qr__se_memo_clear(s->memo);          /* it belongs to the same inputs */
    QrSeRef *r = s->ref;
    if (!r) return;
    if (r->vals) for (int v = 0; v < s->tw.g.n_values; v++) qr_tensor_free_data(&r->vals[v]);
    free(r->vals);
    qr_run_cache_free(r->consts);
    free(r->per_match);
    free(r);
    s->ref = NULL;
}

static bool qr__se_ov_equal(int nv, const QrOverrides *a, const QrOverrides *b) {
    return !memcmp(a->alias, b->alias, (size_t)nv * sizeof *a->alias) && !memcmp(a->subst, b->subst, (size_t)nv * sizeof *a->subst) &&
           !memcmp(a->clamp_lo, b->clamp_lo, (size_t)nv * sizeof *a->clamp_lo) &&
           !memcmp(a->clamp_hi, b->clamp_hi, (size_t)nv * sizeof *a->clamp_hi);
}

static void qr_session_memo_put(QrSession *s, const QrOverrides *ov, const QrMetrics *out) {
    QrSeMemo *r = s->memo;
    int nv = s->tw.g.n_values;
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    if (r->n < QR_ARRAY_LEN(r->e) && qr_session_overrides_alloc(s, &r->e[r->n].ov) == QR_OK) {
        QrOverrides *m = &r->e[r->n].ov;
        memcpy(m->alias, ov->alias, (size_t)nv * sizeof *m->alias);
        memcpy(m->subst, ov->subst, (size_t)nv * sizeof *m->subst);
        memcpy(m->clamp_lo, ov->clamp_lo, (size_t)nv * sizeof *m->clamp_lo);
        memcpy(m->clamp_hi, ov->clamp_hi, (size_t)nv * sizeof *m->clamp_hi);
        r->e[r->n++].out = *out;
    }
    qr_err_clear();
    pthread_mutex_unlock(&r->mu);
}

static bool qr_session_memo_get(QrSession *s, const QrOverrides *ov, QrMetrics *out) {
    QrSeMemo *r = s->memo;
    bool hit = false;
    if (!r) return false;
    pthread_mutex_lock(&r->mu);
    for (int k = 0; !hit && k < r->n; k++)
        if (qr__se_ov_equal(s->tw.g.n_values, &r->e[k].ov, ov)) { *out = r->e[k].out; hit = true; }
    pthread_mutex_unlock(&r->mu);
    return hit;
}

static QrStatus qr_session_ref(QrSession *s, QrTapFn tap, void *user, const bool *tap_only, bool *built) {
    return qr_session_ref_ride(s, tap, user, tap_only, NULL, NULL, built);
}

static QrStatus qr_session_ref_ride(QrSession *s, QrTapFn tap, void *user, const bool *tap_only, const QrRunOpts *ride,
                                    QrTensor *outs_keep, bool *built) {
    if (built) *built = false;
    if (s->ref) return QR_OK;
    QR_TRY(qr_session_run_baseline(s));
    const QrGraph *g = &s->tw.g;
    QrSeRef *r = calloc(1, sizeof *r);
    bool *keep = malloc((size_t)g->n_values + 1), *copy = malloc((size_t)g->n_values + 1);
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QrStatus st = r && keep && copy && outs ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        r->vals = calloc((size_t)g->n_values + 1, sizeof *r->vals);
        r->consts = qr_run_cache_new(g);
        if (!r->vals || !r->consts) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK) {
        /* computed values that a re-run may read (graph inputs are given to every run) */
        bool cones = qr__se_ref_cones(s, copy);
        for (int v = 0; v < g->n_values; v++) {
            copy[v] = g->values[v].producer >= 0 && (!cones || copy[v]) && qr__se_ref_needed(g, v) && !qr_run_uncached(g, v);
            keep[v] = copy[v] || (tap_only ? tap_only[v] : tap != NULL);
        }
        QrSeRefTap rt = { r, copy, tap, user, tap_only };
        QrRunOpts ro = { .tap = qr__se_ref_tap, .tap_user = &rt, .tap_only = keep, .cache = r->consts };
        if (ride) { ro.edit = ride->edit; ro.edit_user = ride->edit_user; ro.edit_on = ride->edit_on; }
        st = qr_run(g, s->inputs, &ro, outs);
        if (st == QR_OK) st = qr_session_compare_outputs(s, outs, &r->out);
        for (int k = 0; st == QR_OK && outs_keep && k < g->n_outputs; k++) { outs_keep[k] = outs[k]; memset(&outs[k], 0, sizeof outs[k]); }
        if (st != QR_OK) st = qr_err_wrap(st, "running the analysis model with every quantizer on");
    }
    if (outs) for (int k = 0; k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    free(keep);
    free(copy);
    s->ref = r;
    if (st != QR_OK) { qr_session_ref_free(s); return st; }
    if (built) *built = true;
    return QR_OK;
}

/* Where the data a reader of value v sees in a run with o's overrides and feeds and the live
 * nodes `live` comes from: -1 when it exists (a substitution or feed, an initializer or graph
 * input, or the output of a live node; an alias followed as the executor does, a clamped
 * alias materialized from its source), else the node that would have to run to compute it
 * (-2: an alias chain too long). */
static int qr__se_inc_missing(const QrGraph *g, const QrRunOpts *o, const bool *live, int v) {
    for (int hops = 0; hops < 64; hops++) {
        if ((o->subst && o->subst[v]) || (o->feed && o->feed[v])) return -1;
        int p = g->values[v].producer;
        bool aliased = o->alias && o->alias[v] >= 0;
        bool clamped = aliased && o->clamp_lo && (o->clamp_lo[v] == o->clamp_lo[v] || o->clamp_hi[v] == o->clamp_hi[v]);
        if (!aliased) return p < 0 || live[p] ? -1 : p;
        if (clamped && p >= 0 && live[p]) return -1;
        v = o->alias[v];
    }
    return -2;
}

/* Makes live every node whose output a live node, a graph output or a clamped alias reads
 * and nobody gives (the reference did not keep it): upstream until everything read exists.
 * feed[v] (twin values < ntv) is rebuilt from the reference for values of nodes not live.
 * False on an alias chain it cannot follow. */
static bool qr__se_inc_close(const QrSession *s, const QrGraph *g, QrRunOpts *o, bool *live, const QrTensor **feed) {
    const QrSeRef *ref = s->ref;
    int ntv = s->tw.g.n_values;
    for (;;) {
        for (int v = 0; v < ntv; v++) {
            int p = g->values[v].producer;
            feed[v] = p < 0 || live[p] ? NULL : ref->vals[v].data ? &ref->vals[v] : qr_run_cache_get(ref->consts, v);
        }
        int added = 0;
        for (int n = 0; n < g->n_nodes; n++) {
            const QrNode *nd = &g->nodes[n];
            if (!live[n]) continue;
            bool skipped = nd->n_out > 0;   /* every output overridden: the executor skips it */
            for (int k = 0; k < nd->n_out; k++)
                if (nd->out[k] >= 0 && !((o->alias && o->alias[nd->out[k]] >= 0) || (o->subst && o->subst[nd->out[k]]))) skipped = false;
            for (int k = 0; !skipped && k < nd->n_in; k++) {
                int m = nd->in[k] >= 0 ? qr__se_inc_missing(g, o, live, nd->in[k]) : -1;
                if (m == -2) return false;
                if (m >= 0 && !live[m]) { live[m] = true; added++; }
            }
        }
        for (int i = 0; i < g->n_outputs; i++) {
            int m = qr__se_inc_missing(g, o, live, g->outputs[i]);
            if (m == -2) return false;
            if (m >= 0 && !live[m]) { live[m] = true; added++; }
        }
        for (int v = 0; o->alias && o->clamp_lo && v < g->n_values; v++) {
            if (o->alias[v] < 0 || !(o->clamp_lo[v] == o->clamp_lo[v] || o->clamp_hi[v] == o->clamp_hi[v])) continue;
            int m = qr__se_inc_missing(g, o, live, o->alias[v]);
            if (m == -2) return false;
            if (m >= 0 && !live[m]) { live[m] = true; added++; }
        }
        if (!added) return true;
    }
}

static QrStatus qr_session_run_inc(const QrSession *s, const QrGraph *g, const QrRunOpts *ro, QrTensor *outs, bool *live_out) {
    const QrSeRef *ref = s->ref;
    int ntv = s->tw.g.n_values, nv = g->n_values, nn = g->n_nodes;
    if (!ref) return qr_errf(QR_ERR_INVALID, "incremental run without a reference");
    if (nn != s->tw.g.n_nodes || nv < ntv) return qr_errf(QR_ERR_INVALID, "incremental run of a graph that is no copy of the twin");
    bool *live = live_out ? live_out : malloc((size_t)nn + 1);
    int *stack = malloc(((size_t)nn + 1) * sizeof(int));
    const QrTensor **feed = calloc((size_t)nv + 1, sizeof *feed);
    bool *tap_only = ro->tap ? malloc((size_t)nv + 1) : NULL;
    QrStatus st = live && stack && feed && (tap_only || !ro->tap) ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        /* the cone: producers and readers of every overridden or edited value, and downstream */
        memset(live, 0, (size_t)nn);
        int sp = 0;
        for (int v = 0; v < nv; v++) {
            if (!((ro->alias && ro->alias[v] >= 0) || (ro->subst && ro->subst[v]) || (ro->edit && ro->edit_on && ro->edit_on[v])))
                continue;
            int p = g->values[v].producer;
            if (p >= 0 && !live[p]) { live[p] = true; stack[sp++] = p; }
            const QrUse *u;
            int nu = qr_graph_readers(g, v, &u);
            for (int k = 0; k < nu; k++) if (!live[u[k].node]) { live[u[k].node] = true; stack[sp++] = u[k].node; }
        }
        qr__se_downstream(g, live, stack, sp);
        /* everything else as the reference has it (the twin's values; a copy's own values are
         * initializers), computing upstream what it did not keep */
        QrRunOpts o = *ro;
        o.feed = feed;
        bool ok = qr__se_inc_close(s, g, &o, live, feed);
        o.live = ok ? live : NULL;
        if (!ok) {   /* an alias chain it cannot follow: the whole graph */
            memset(feed, 0, ((size_t)nv + 1) * sizeof *feed);
            memset(live, 1, (size_t)nn);
        }
        for (int v = 0; tap_only && v < nv; v++) {
            int p = g->values[v].producer;
            tap_only[v] = (!ro->tap_only || ro->tap_only[v]) && (p < 0 ? false : live[p]);
        }
        o.tap_only = ok ? tap_only : ro->tap_only;
        o.cache = g == &s->tw.g ? ref->consts : NULL;
        st = qr_run(g, s->inputs, &o, outs);
    }
    if (!live_out) free(live);
    free(stack);
    free(feed);
    free(tap_only);
    return st;
}

/* ==== parallel jobs ================================================================ */

typedef struct QrSeJobs {
    QrSeJobFn fn;
    void *ctx;
    const QrStepHook *progress;
    int n;
    QrStatus *st;            /* per job */
    char **msg;              /* per job: its error message (malloc'd) */
    pthread_mutex_t mu;
    int started;
} QrSeJobs;

static void qr__se_job_task(void *ctx, int64_t k, int tid) {
    QrSeJobs *j = ctx;
    if (j->progress && j->progress->fn) {
        pthread_mutex_lock(&j->mu);
        qr_step(j->progress, j->started++, j->n);
        pthread_mutex_unlock(&j->mu);
    }
    QrStatus st = j->fn(j->ctx, (int)k, tid);
    if (st != QR_OK) {
        j->msg[k] = strdup(qr_err_msg());
        qr_err_clear();
    }
    j->st[k] = st;
}

static void qr_session_low_memory(QrSession *s) { s->low_memory = s->no_incremental = true; }

static QrStatus qr_session_jobs(const QrSession *s, int n, QrSeJobFn fn, void *ctx, const QrStepHook *progress) {
    if (n <= 0) return QR_OK;
    if (s && s->low_memory) {     /* one at a time, in order, on this thread */
        for (int k = 0; k < n; k++) {
            qr_step(progress, k, n);
            QR_TRY(fn(ctx, k, 0));
        }
        return QR_OK;
    }
    QrSeJobs j = { fn, ctx, progress, n, calloc((size_t)n, sizeof(QrStatus)), calloc((size_t)n, sizeof(char *)),
                   PTHREAD_MUTEX_INITIALIZER, 0 };
    QrStatus st = j.st && j.msg ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) qr_pool_for_queue(n, qr__se_job_task, &j);
    for (int k = 0; st == QR_OK && k < n; k++)
        if (j.st[k] != QR_OK) st = qr_errf(j.st[k], "%s", j.msg[k] ? j.msg[k] : "out of memory");
    for (int k = 0; j.msg && k < n; k++) free(j.msg[k]);
    free(j.st);
    free(j.msg);
    return st;
}

/* ==== model-output metrics ========================================================== */

static QrStatus qr_session_compare_outputs(const QrSession *s, const QrTensor *outs, QrMetrics *m) {
    return qr_session_compare_outputs_sel(s, outs, -1, m);
}

static QrStatus qr_session_compare_outputs_sel(const QrSession *s, const QrTensor *outs, int only, QrMetrics *m) {
    QrMetricAcc acc;
    qr_metric_acc_init(&acc);
    double kld_sum = 0;
    int64_t kld_n = 0;
    for (int k = 0; k < s->b->n_outputs; k++) {
        if (only >= 0 && k != only) continue;
        QrTensor f = {0};
        QR_TRY(qr_tensor_to_f32(&outs[k], &f));
        const QrTensor *x = &s->base_out[k];
        QrStatus st = f.numel == x->numel ? QR_OK
                    : qr_errf(QR_ERR_SHAPE, "output %d ('%s') has %lld elements in the analysis model but %lld in the "
                              "baseline", k, s->b->values[s->b->outputs[k]].name, (long long)f.numel, (long long)x->numel);
        if (st == QR_OK) qr_metric_acc_add(&acc, x->data, f.data, x->numel);
        if (st == QR_OK && qr_metric_is_logits(s->b->values[s->b->outputs[k]].name, x)) {   /* KLD: per token */
            int64_t V = x->dims[x->rank - 1];
            for (int64_t t = 0; t < x->numel / V; t++) {
                double kl = qr_metric_token_kl((const float *)x->data + t * V, (const float *)f.data + t * V, V);
                if (kl == kl) { kld_sum += kl; kld_n++; }
            }
        }
        qr_tensor_free_data(&f);
        QR_TRY(st);
    }
    qr_metric_acc_finish(&acc, m);
    m->kld = kld_n ? kld_sum / (double)kld_n : NAN;
    return QR_OK;
}
