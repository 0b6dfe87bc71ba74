/* analysis/advisor_tf — the advisor's transformer diagnostics (see advisor.h):
 *  - activation outlier channels at LayerNorm / residual-Add outputs that feed quantized
 *    MatMuls (the SmoothQuant case when the activation is quantized per-tensor, the AWQ case
 *    when only the weights are), with the measured per-channel ratio and a migration
 *    strength alpha chosen on the measured ranges;
 *  - Softmax inputs (attention logits) whose quantization grid is too coarse: the measured
 *    relative error of the attention probabilities that rounding the logits causes;
 *  - block-quantized (int4 weight-only) weights whose error is carried by a few blocks: each named
 *    block's error energy is above block_k x the median block's and together they carry at least
 *    block_share of the weight's error energy (weights.c measures the blocks and the what-ifs).
 * Channels are the last axis (transformer activations are [batch, tokens, channels]). */

/* Baseline op types whose outputs are LayerNorm outputs. */
static bool qr__advtf_is_norm(const QrNode *n) {
    return !strcmp(n->op_type, "LayerNormalization") || !strcmp(n->op_type, "SimplifiedLayerNormalization") ||
           !strcmp(n->op_type, "SkipLayerNormalization") || !strcmp(n->op_type, "SkipSimplifiedLayerNormalization") ||
           !strcmp(n->op_type, "RMSNormalization");
}

/* A residual Add: both inputs computed (neither a constant). */
static bool qr__advtf_is_residual(const QrGraph *g, const QrNode *n) {
    if (n->domain[0] || strcmp(n->op_type, "Add") || n->n_in != 2) return false;
    for (int k = 0; k < 2; k++) if (n->in[k] < 0 || g->values[n->in[k]].is_const) return false;
    return true;
}

/* The constant weight of baseline node n read with the activation at input `slot`, as a
 * [K, N] matrix whose row j multiplies channel j (*trans: stored [N, K], Gemm transB). */
static const QrTensor *qr__advtf_weight(const QrGraph *g, const QrNode *n, int slot, int64_t K, bool *trans) {
    *trans = false;
    if (n->domain[0] || slot != 0 || n->n_in < 2 || n->in[1] < 0) return NULL;
    bool mm = !strcmp(n->op_type, "MatMul"), gemm = !strcmp(n->op_type, "Gemm");
    if (!mm && !gemm) return NULL;
    const QrValue *w = &g->values[n->in[1]];
    if (!w->is_const || !w->t.data || w->t.dtype != QR_DT_F32 || w->t.rank != 2) return NULL;
    if (gemm && qr_attr_int(n, "transA", 0)) return NULL;
    *trans = gemm && qr_attr_int(n, "transB", 0);
    return w->t.dims[*trans ? 1 : 0] == K ? &w->t : NULL;
}

/* How the analysis model computes baseline MatMul node bn: 2 weight-only (MatMulNBits /
 * MatMulBnb4, or a float activation times a DequantizeLinear weight), 1 with a quantized
 * weight and quantized activations, 0 not quantized / not matched. */
static int qr__advtf_quantized(const QrSession *s, int bn, const char **anode, const char **aop) {
    for (int i = 0; i < s->m.n; i++) {
        const QrMatch *mm = &s->m.m[i];
        if (mm->b_node != bn || mm->a_node < 0) continue;
        const QrNode *a = &s->a->nodes[mm->a_node];
        *anode = a->name;
        *aop = a->op_type;
        if (!strcmp(a->domain, "com.microsoft") && (!strcmp(a->op_type, "MatMulNBits") || !strcmp(a->op_type, "MatMulBnb4")))
            return 2;
        if (!strcmp(a->op_type, "QLinearMatMul") || !strcmp(a->op_type, "MatMulInteger") || !strcmp(a->op_type, "QGemm") ||
            !strcmp(a->op_type, "MatMulIntegerToFloat") || !strcmp(a->op_type, "DynamicQuantizeMatMul"))
            return 1;
        if (a->n_in < 2 || a->in[1] < 0) return 0;
        int pw = s->a->values[a->in[1]].producer, px = a->in[0] >= 0 ? s->a->values[a->in[0]].producer : -1;
        bool wq = pw >= 0 && !strcmp(s->a->nodes[pw].op_type, "DequantizeLinear");
        bool xq = px >= 0 && !strcmp(s->a->nodes[px].op_type, "DequantizeLinear");
        return wq ? (xq ? 1 : 2) : 0;
    }
    return 0;
}

static int qr__advtf_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* max / median of v[0..n) (INFINITY when the median is 0). */
static double qr__advtf_ratio(const double *v, int64_t n, double *tmp) {
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, qr__advtf_cmp_double);
    double med = n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
    return med > 0 ? tmp[n - 1] / med : INFINITY;
}

/* SmoothQuant's migration s_j = a_j^alpha / w_j^(1 - alpha) for alpha = 0.05 .. 0.95: the alpha
 * whose larger channel ratio (activation a/s, weight rows w*s, each max / median) is smallest. */
static double qr__advtf_alpha(const double *a, const double *w, int64_t C, double *ra_out, double *rw_out) {
    double *t = malloc((size_t)C * 3 * sizeof *t);
    if (!t) { *ra_out = *rw_out = NAN; return NAN; }
    double *xa = t, *xw = t + C, *tmp = t + 2 * C, best = INFINITY, best_alpha = NAN;
    for (int step = 1; step <= 19; step++) {
        double alpha = 0.05 * step;
        for (int64_t j = 0; j < C; j++) {
            double sj = a[j] > 0 && w[j] > 0 ? pow(a[j], alpha) / pow(w[j], 1 - alpha) : 1.0;
            xa[j] = a[j] / sj;
            xw[j] = w[j] * sj;
        }
        double ra = qr__advtf_ratio(xa, C, tmp), rw = qr__advtf_ratio(xw, C, tmp), worst = QR_MAX(ra, rw);
        if (worst < best) { best = worst; best_alpha = alpha; *ra_out = ra; *rw_out = rw; }
    }
    free(t);
    return best_alpha;
}

/* One LayerNorm / residual output (match i, baseline value x) feeding quantized MatMuls. */
static QrStatus qr__advtf_outlier(QrAdvList *b, const QrSession *s, int i, const QrTensor *x) {
    const QrGraph *g = s->b;
    const QrMatch *mm = &s->m.m[i];
    if (x->dtype != QR_DT_F32 || x->rank < 2 || !x->data) return QR_OK;
    const int64_t C = x->dims[x->rank - 1], T = C ? x->numel / C : 0;
    if (C < 4 || T < 1) return QR_OK;
    const QrUse *u;
    int nu = qr_graph_readers(g, mm->b_value, &u);
    double *a = calloc((size_t)C * 3, sizeof *a);
    if (!a) return qr_errf(QR_ERR_NOMEM, "out of memory");
    double *w = a + C, *tmp = a + 2 * C;
    const float *px = x->data;
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < C; j++) a[j] = QR_MAX(a[j], fabs((double)px[t * C + j]));
    int n_cons = 0, kind = 0;
    char names[512] = "";
    const char *aop = "MatMul";
    for (int r = 0; r < nu; r++) {
        bool trans;
        const QrNode *cn = &g->nodes[u[r].node];
        const QrTensor *wt = qr__advtf_weight(g, cn, u[r].input, C, &trans);
        const char *an = NULL, *op = NULL;
        int k = wt ? qr__advtf_quantized(s, u[r].node, &an, &op) : 0;
        if (!k) continue;
        kind = kind ? kind : k;
        aop = op;
        const float *pw = wt->data;
        int64_t N = wt->dims[trans ? 0 : 1];
        for (int64_t j = 0; j < C; j++)
            for (int64_t n = 0; n < N; n++) w[j] = QR_MAX(w[j], fabs((double)pw[trans ? n * C + j : j * N + n]));
        size_t o = strlen(names);
        if (n_cons < 4) snprintf(names + o, sizeof names - o, "%s'%s'", n_cons ? ", " : "", an);
        else if (n_cons == 4) snprintf(names + o, sizeof names - o, ", ...");
        n_cons++;
    }
    int worst = 0;
    for (int64_t j = 1; j < C; j++) if (a[j] > a[worst]) worst = (int)j;
    double ratio = n_cons ? qr__advtf_ratio(a, C, tmp) : 0;
    int qi = qr_dist_act_quant_of(s, s->vis[i]);
    const QrQuantizer *q = qi >= 0 ? &s->qt.q[qi] : NULL;
    bool per_tensor = q && q->n_scales <= 1;
    if (n_cons == 0 || !(ratio > b->a->opts.outlier_k) || (kind == 1 && !per_tensor)) { free(a); return QR_OK; }
    double ra = NAN, rw = NAN, rw0 = qr__advtf_ratio(w, C, tmp);
    double alpha = qr__advtf_alpha(a, w, C, &ra, &rw);
    const char *value = g->values[mm->b_value].name;
    QrFinding *f = qr_advk_find(b, QR_ADV_ACT_OUTLIER_MIGRATE, QR_SEV_WARNING, s->a->nodes[mm->a_node].name,
                               s->a->nodes[mm->a_node].op_type);
    if (!f) { free(a); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    f->base_node = g->nodes[mm->b_node].name;
    f->value = value;
    f->match = i;
    f->q = qi;
    double med = a[worst] / ratio;
    if (per_tensor) {
        QrQuantRange rg;
        double levels = qr_quant_range(q->dtype, &rg) ? (double)(rg.hi - rg.lo) : 255.0;
        QR_ADVK_TEXT(b->a, f->reason, "activation outlier channel %d of '%s' (%s output) reaches %.6g, %.1fx the median "
                    "channel abs-max %.6g; the tensor is quantized per-tensor (%s) and feeds the quantized %s %s, so a "
                    "typical channel gets about %.0f of its %.0f levels", worst, value, g->nodes[mm->b_node].op_type,
                    a[worst], ratio, med, qr_dtype_name(q->dtype), aop, names, levels / ratio, levels);
        QR_ADVK_TEXT(b->a, f->fix, "migrate the outlier into the weights (SmoothQuant): divide channel j of '%s' by "
                    "s_j = max|X_j|^alpha / max|W_j|^(1-alpha) and multiply row j of the weights of %s by s_j, with "
                    "alpha = %.2f (measured here: activation channel ratio %.1f -> %.1f, weight row ratio %.1f -> %.1f); "
                    "or quantize this tensor per channel or in int16", value, names, alpha, ratio, ra, rw0, rw);
    } else {
        QR_ADVK_TEXT(b->a, f->reason, "activation outlier channel %d of '%s' (%s output) reaches %.6g, %.1fx the median "
                    "channel abs-max %.6g; it multiplies the weight-only quantized weights of %s %s, whose row %d error "
                    "it amplifies %.1fx over a typical channel", worst, value, g->nodes[mm->b_node].op_type, a[worst],
                    ratio, med, aop, names, worst, ratio);
        QR_ADVK_TEXT(b->a, f->fix, "protect the salient channel (activation-aware weight quantization, AWQ): scale row j of "
                    "the weights of %s up by s_j before quantizing and channel j of '%s' down by it; SmoothQuant's "
                    "balance s_j = max|X_j|^alpha / max|W_j|^(1-alpha) with alpha = %.2f is a measured starting point "
                    "(activation channel ratio %.1f -> %.1f, weight row ratio %.1f -> %.1f); or a smaller block_size",
                    names, value, alpha, ratio, ra, rw0, rw);
    }
    qr_advk_ev(f, "ratio", ratio);
    qr_advk_ev(f, "channel", worst);
    qr_advk_ev(f, "alpha", alpha);
    qr_advk_ev(f, "act_ratio_after", ra);
    qr_advk_ev(f, "weight_ratio_after", rw);
    qr_advk_ev(f, "consumers", n_cons);
    free(a);
    return QR_OK;
}

/* Softmax along the last axis of row x[0..L) into p (double). */
static void qr__advtf_softmax(const double *x, int64_t L, double *p) {
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < L; k++) mx = QR_MAX(mx, x[k]);
    for (int64_t k = 0; k < L; k++) sum += (p[k] = exp(x[k] - mx));
    for (int64_t k = 0; k < L; k++) p[k] /= sum;
}

/* A Softmax whose input (match i, baseline logits x) is quantized per-tensor: the relative error
 * that rounding the logits to the grid causes in the probabilities that matter (p >= 1 / L),
 * measured on this input (the baseline logits quantized with the analysis quantizer's scale). */
static QrStatus qr__advtf_softmax_grid(QrAdvList *b, const QrSession *s, int i, const QrNode *sm, const QrTensor *x) {
    const QrMatch *mm = &s->m.m[i];
    int qi = qr_dist_act_quant_of(s, s->vis[i]);
    if (qi < 0 || s->qt.q[qi].n_scales > 1 || x->dtype != QR_DT_F32 || x->rank < 1 || !x->data) return QR_OK;
    int64_t ax = qr_attr_int(sm, "axis", sm->opset >= 13 ? -1 : 1);
    if (ax < 0) ax += x->rank;
    if (ax != x->rank - 1 && !(sm->opset < 13 && ax == 1 && x->rank == 2)) return QR_OK;
    const QrQuantizer *q = &s->qt.q[qi];
    const double scale = q->scale_max;
    const int64_t L = x->dims[x->rank - 1], R = L ? x->numel / L : 0;
    if (!(scale > 0) || L < 2) return QR_OK;
    double *buf = malloc((size_t)L * 4 * sizeof *buf);
    if (!buf) return qr_errf(QR_ERR_NOMEM, "out of memory");
    double *xr = buf, *xq = buf + L, *p = buf + 2 * L, *pq = buf + 3 * L, worst = 0;
    const float *px = x->data;
    for (int64_t r = 0; r < R; r++) {
        for (int64_t k = 0; k < L; k++) {
            xr[k] = px[r * L + k];
            xq[k] = nearbyint(xr[k] / scale) * scale;      /* the grid (no clipping: saturation is its own finding) */
        }
        qr__advtf_softmax(xr, L, p);
        qr__advtf_softmax(xq, L, pq);
        for (int64_t k = 0; k < L; k++)
            if (p[k] >= 1.0 / (double)L) worst = QR_MAX(worst, fabs(pq[k] - p[k]) / p[k]);
    }
    free(buf);
    const double limit = b->a->opts.softmax_rel;
    if (!(worst > limit)) return QR_OK;
    const char *value = s->b->values[mm->b_value].name;
    QrFinding *f = qr_advk_find(b, QR_ADV_SOFTMAX_GRID, QR_SEV_WARNING, s->a->nodes[mm->a_node].name,
                               s->a->nodes[mm->a_node].op_type);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    f->base_node = s->b->nodes[mm->b_node].name;
    f->value = value;
    f->match = i;
    f->q = qi;
    QR_ADVK_TEXT(b->a, f->reason, "the Softmax input '%s' (attention logits) is quantized with step %.6g (%s): rounding "
                "the logits to that grid changes the attention probabilities that matter (p >= 1/%lld) by up to %.1f%% "
                "on this input (limit %.1f%%; a half-step error e scales a probability by up to exp(2e) = %.1f%%)", value,
                scale, qr_dtype_name(q->dtype), (long long)L, 100 * worst, 100 * limit, 100 * (exp(scale) - 1));
    QR_ADVK_TEXT(b->a, f->fix, "give the attention logits int16 (or keep the Softmax input in float, as most NPU "
                "toolchains do), or narrow their calibrated range (percentile calibration) so the step shrinks");
    qr_advk_ev(f, "max_rel_error", worst);
    qr_advk_ev(f, "scale", scale);
    qr_advk_ev(f, "row_length", (double)L);
    return QR_OK;
}

static QrStatus qr_advtf_transformer(QrAdvList *b, QrSession *s) {
    for (int i = 0; i < s->m.n; i++) {
        const QrMatch *mm = &s->m.m[i];
        if (mm->a_node < 0 || mm->b_node < 0 || !s->base[i].data) continue;
        const QrNode *bn = &s->b->nodes[mm->b_node];
        if (qr__advtf_is_norm(bn) || qr__advtf_is_residual(s->b, bn)) QR_TRY(qr__advtf_outlier(b, s, i, &s->base[i]));
        const QrUse *u;
        int nu = qr_graph_readers(s->b, mm->b_value, &u);
        for (int r = 0; r < nu; r++) {
            const QrNode *sm = &s->b->nodes[u[r].node];
            if (!sm->domain[0] && !strcmp(sm->op_type, "Softmax")) {
                QR_TRY(qr__advtf_softmax_grid(b, s, i, sm, &s->base[i]));
                break;
            }
        }
    }
    return QR_OK;
}

/* Outlier weights in blocks: of the blocks of a blocked weight whose largest |w| is above
 * QR_WEIGHT_OUTLIER_SIGMA standard deviations of the whole float weight (that value sets the block's scale
 * and coarsens its other weights), the one with the largest share of the layer's output error. The finding
 * names the value, its sigma, the block's share and rank, and its SQNR's rank (the outlier's own energy
 * counts as signal, so the block's SQNR need not be among the lowest). */
static QrStatus qr_advtf_block_outliers(QrAdvList *b, const QrSession *s, const QrWeightCmp *w) {
    for (int k = 0; k < w->n; k++) {
        const QrWeightRow *r = &w->rows[k];
        const QrQuantizer *q = &s->qt.q[r->q];
        const QrWtBlk *o = &r->outlier;
        if (q->block_size <= 0 || r->n_outlier_blk < 1 || r->outlier_rank < 0 || !(o->set_sigma > QR_WEIGHT_OUTLIER_SIGMA))
            continue;
        int axis = q->axis < 0 ? q->axis + r->rank : q->axis;
        char where[256] = "", at[160] = "";
        if (axis >= 0 && axis < r->rank) qr_weights_block_where(r, axis, o->p, where, sizeof where);
        int64_t idx[QR_MAX_RANK], rem = o->set_by;
        for (int d = r->rank - 1; d >= 0; d--) { idx[d] = r->dims[d] > 0 ? rem % r->dims[d] : 0; rem = r->dims[d] > 0 ? rem / r->dims[d] : 0; }
        size_t len = (size_t)snprintf(at, sizeof at, "[");
        for (int d = 0; d < r->rank && len < sizeof at; d++)
            len += (size_t)snprintf(at + len, sizeof at - len, "%s%lld", d ? ", " : "", (long long)idx[d]);
        if (len < sizeof at) snprintf(at + len, sizeof at - len, "]");
        QrFinding *f = qr_advk_find(b, QR_ADV_BLOCK_OUTLIER, QR_SEV_WARNING, r->node, r->op_type);
        if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
        f->value = r->name;
        f->base_node = qr_advk_base_node_of(s, q->owner);
        f->q = r->q;
        double share = r->has_act ? o->out_share : o->err_share;
        QR_ADVK_TEXT(b->a, f->reason, "weight '%s' %s = %.6g is %.1f sigma of the weight's distribution (sigma %.6g; %lld "
                    "block%s hold a value above %.0f sigma, this one carries the most error): it sets the scale of block "
                    "%lld (elements %s, block_size %d) and coarsens the block's other weights; the block carries %.1f%% of "
                    "the %s (rank %lld of %lld blocks) while its own SQNR, %.2f dB, ranks %lld of %lld from the lowest "
                    "(the outlier's own energy counts as signal)", r->name, at, o->set_val, o->set_sigma, r->sigma,
                    (long long)r->n_outlier_blk, r->n_outlier_blk == 1 ? "" : "s", QR_WEIGHT_OUTLIER_SIGMA, (long long)o->p,
                    where, q->block_size, 100 * share,
                    r->has_act ? "layer's output error (block weight error x input energy on its rows)"
                               : "weight's error energy", (long long)r->outlier_rank + 1, (long long)r->n_blocks, o->sqnr,
                    (long long)r->outlier_sqnr_rank + 1, (long long)r->n_blocks);
        QR_ADVK_TEXT(b->a, f->fix, "keep the outlier out of the block's scale: quantize '%s' with a smaller block_size or 8 "
                    "bits (" QR_BF_WHATIF " measures both on the sensitive weight-only nodes), clip %s before quantizing, "
                    "or keep node '%s' in float", r->name, at, r->node);
        qr_advk_ev(f, "sigma_ratio", o->set_sigma);
        qr_advk_ev(f, "block", (double)o->p);
        qr_advk_ev(f, "share", share);
        qr_advk_ev(f, "share_rank", (double)r->outlier_rank);
        qr_advk_ev(f, "block_sqnr_db", o->sqnr);
        qr_advk_ev(f, "outlier_blocks", (double)r->n_outlier_blk);
    }
    return QR_OK;
}

/* Weights quantized in blocks (MatMulNBits, GatherBlockQuantized, blocked DequantizeLinear) whose
 * error energy is dominated by a few blocks (at most QR_WEIGHT_WORST_BLOCKS, each above block_k x
 * the median block's, together >= block_share of the weight's): the blocks, their measured SQNR and
 * share, and the fixes with their effect measured on the largest block (half the block size, 8 bits). */
static QrStatus qr_advtf_blocks(QrAdvList *b, const QrSession *s, const QrWeightCmp *w) {
    const QrAdvisorOpts *o = &b->a->opts;
    for (int k = 0; k < w->n; k++) {
        const QrWeightRow *r = &w->rows[k];
        const QrQuantizer *q = &s->qt.q[r->q];
        if (q->block_size <= 0 || r->n_blocks < 4 || r->n_dom < 1 || !(r->blk_err_total > 0)) continue;
        int named = 0;
        double share = 0;
        while (named < r->n_dom && r->dom_err[named] > o->block_k * r->blk_err_median && r->dom_err[named] > 0)
            share += r->dom_err[named++] / r->blk_err_total;
        if (!named || share < o->block_share) continue;
        int axis = q->axis < 0 ? q->axis + r->rank : q->axis;
        char list[768] = "";
        size_t len = 0;
        for (int j = 0; j < named; j++) {
            char where[256] = "";
            if (axis >= 0 && axis < r->rank) qr_weights_block_where(r, axis, r->dom_blk[j], where, sizeof where);
            len += (size_t)snprintf(list + len, sizeof list - QR_MIN(len, sizeof list), "%sblock %lld (elements %s: "
                                    "SQNR %.2f dB, %.1f%% of the error)", j ? ", " : "", (long long)r->dom_blk[j], where,
                                    r->dom_sqnr[j], 100 * r->dom_err[j] / r->blk_err_total);
        }
        QrFinding *f = qr_advk_find(b, QR_ADV_BLOCK_DOMINANT, QR_SEV_WARNING, r->node, r->op_type);
        if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
        f->value = r->name;
        f->base_node = qr_advk_base_node_of(s, q->owner);
        f->q = r->q;
        const char *dt = qr_dtype_name(r->dtype);
        QR_ADVK_TEXT(b->a, f->reason, "%d of the %lld blocks of weight '%s' (%s, block_size %d) %s %.1f%% of its "
                    "quantization error energy: %s; each above %g x the median block's error (weight SQNR %.2f dB); the "
                    "largest block's float values span [%.6g, %.6g]", named,
                    (long long)r->n_blocks, r->name, dt, q->block_size, named == 1 ? "carries" : "carry", 100 * share,
                    list, o->block_k,
                    r->has_m ? r->m.sqnr : NAN, r->dom_lo, r->dom_hi);
        QR_ADVK_TEXT(b->a, f->fix, "use a smaller block_size (measured on the largest block: %d instead of %d raises its "
                    "SQNR from %.2f to %.2f dB and the weight's from %.2f to %.2f dB), or keep '%s' in 8 bit (the block "
                    "at 8 bits: %.2f dB)%s", q->block_size / 2, q->block_size, r->dom_sqnr[0], r->dom_half_sqnr,
                    r->has_m ? r->m.sqnr : NAN, r->half_layer_sqnr, r->node, r->dom_8bit_sqnr,
                    q->zp_value < 0 ? ", or quantize with zero points (asymmetric: the block's range need not be "
                                      "centred on 0)" : "");
        qr_advk_ev(f, "share", share);
        qr_advk_ev(f, "block", (double)r->dom_blk[0]);
        qr_advk_ev(f, "block_sqnr_db", r->dom_sqnr[0]);
        qr_advk_ev(f, "half_block_sqnr_db", r->dom_half_sqnr);
        qr_advk_ev(f, "int8_block_sqnr_db", r->dom_8bit_sqnr);
        qr_advk_ev(f, "blocks_named", named);
    }
    return QR_OK;
}
