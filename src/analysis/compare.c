/* analysis/compare — implementation. See compare.h.
 *
 *   full run:   exec graph (analysis as given, or its int lowering) → tap each matched value
 *   shadow run: twin graph with every matched value *fed* by the baseline's value, so each
 *               layer computes from exact inputs → tap its output = its own error only */

static const char *qr_compare_describe_quantizer(QrArena *a, const QrGraph *g, const QrQuantizer *q, const char **dtype) {
    if (dtype) *dtype = qr_dtype_name(q->dtype);
    if (q->scale_value < 0 || !g->values[q->scale_value].t.data) return "dynamic";
    if (q->n_scales <= 1 || q->scale_min == q->scale_max) return qr_arena_printf(a, "%.9g", q->scale_min);
    return qr_arena_printf(a, "[%.6g, %.6g] (%lld %s)", q->scale_min, q->scale_max, (long long)q->n_scales,
                           q->block_size ? "blocks" : "channels");
}

/* A float32 buffer reused from value to value by one run's taps (one thread at a time): grown to the
 * largest value, never zeroed (every element is written before it is read). The integer values a
 * tap dequantizes to compare went into a fresh zeroed allocation each, which for a value above
 * malloc's mmap threshold also meant fresh pages every sample: 3-4 ms of CPU per MobileNetV2 sample
 * in memset and page faults, in the full run. */
typedef struct QrCmpBuf { float *p; int64_t cap; } QrCmpBuf;

#ifdef QR_TESTING
static int64_t qr__cmp_deq_calls, qr__cmp_deq_grows;   /* tests: values dequantized into a buffer, buffers (re)allocated */
#endif

static float *qr__cmp_buf(QrCmpBuf *b, int64_t n) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr__cmp_deq_calls, 1, __ATOMIC_RELAXED);
    if (n > b->cap) __atomic_add_fetch(&qr__cmp_deq_grows, 1, __ATOMIC_RELAXED);
#endif
    if (n > b->cap) {
        qr_aligned_free(b->p);
        b->cap = 0;
        if (!(b->p = qr_aligned_alloc((size_t)QR_MAX(n, 1) * sizeof(float)))) return NULL;
        b->cap = n;
    }
    return b->p;
}

static void qr__cmp_buf_free(QrCmpBuf *b) {
    qr_aligned_free(b->p);
    b->p = NULL;
    b->cap = 0;
}

/* Integer value t dequantized by quantizer q of graph g into b: *y its float32 values. */
static QrStatus qr__cmp_deq(QrCmpBuf *b, const QrGraph *g, const QrQuantizer *q, const QrTensor *t, const float **y) {
    float *p = qr__cmp_buf(b, t->numel);
    if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR_TRY(qr_match_dequantize_into(g, q, t, p));
    *y = p;
    return QR_OK;
}

/* Match mi's twin value t as the shadow and split runs compare it (qr_session_visible_view's values):
 * t's own data, its integers dequantized into b, or another float type converted into *f. */
static QrStatus qr__cmp_visible(QrCmpBuf *b, const QrSession *s, int mi, const QrTensor *t, QrTensor *f, const float **y) {
    if (s->vis_quant[mi] >= 0 && !qr_dtype_is_float(t->dtype))
        return qr__cmp_deq(b, &s->tw.g, &s->qt.q[s->vis_quant[mi]], t, y);
    return qr_session_visible_view(s, mi, t, f, y);
}

typedef struct QrCmpTap {
    QrSession *s;
    QrCompare *c;
    const QrGraph *g;
    int *first_match;        /* per exec value: first match tapped there, -1 */
    int *next_match;         /* per match: next match sharing the value */
    int *quant_of;           /* per match: analysis quantizer to dequantize with, -1 = value is float */
    int *row_of;             /* per match: its row in c->rows */
    bool shadow;
    QrTapFn extra;           /* also called on every value of the full run (qr_compare_mode_ex) */
    void *extra_user;
    QrMetricAcc *acc;        /* data sets (qr_compare_ds_run): per match, the full run's and the shadow run's */
    QrCmpMatchFn match_fn;   /* data sets (qr_compare_ds_open's hooks): each pair of the full run */
    void *match_user;
    const uint8_t *pairs_of; /* hooks' pairs_of: only these matches, no metrics */
    QrCmpBuf deq;            /* the dequantized integer values (qr__cmp_deq) */
} QrCmpTap;

/* A float32 copy of y (t's shape) into *d (compare --save-values). */
static QrStatus qr__cmp_keep(QrTensor *d, const QrTensor *t, const float *y) {
    qr_tensor_free_data(d);
    QR_TRY(qr_tensor_set_shape(d, QR_DT_F32, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(d));
    memcpy(d->data, y, (size_t)t->numel * sizeof(float));
    return QR_OK;
}

static QrStatus qr__cmp_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrCmpTap *ct = user;
    if (ct->extra && !ct->shadow) QR_TRY(ct->extra(ct->extra_user, g, node, value, t));
    for (int mi = ct->first_match[value]; mi >= 0; mi = ct->next_match[mi]) {
        const QrTensor *x = &ct->s->base[mi];
        if (!x->data || (ct->pairs_of && !ct->pairs_of[mi])) continue;
        QrTensor f = {0};
        const float *y = NULL;   /* t's own data, or f's */
        QrStatus st = QR_OK;
        if (ct->shadow) st = qr__cmp_visible(&ct->deq, ct->s, mi, t, &f, &y);
        else if (t->dtype == QR_DT_F32) y = t->data;
        else if (ct->quant_of[mi] >= 0 && !qr_dtype_is_float(t->dtype))
            st = qr__cmp_deq(&ct->deq, g, &ct->s->qa.q[ct->quant_of[mi]], t, &y);
        else if (!qr_dtype_is_float(t->dtype) && ct->s->qt.by_value[value] >= 0)
            /* an integer value without a quantizer of its own (MaxPool on uint8): the twin's re-quantizer knows its scale */
            st = qr__cmp_deq(&ct->deq, &ct->s->tw.g, &ct->s->qt.q[ct->s->qt.by_value[value]], t, &y);
        else if (!qr_dtype_is_float(t->dtype)) st = qr_errf(QR_ERR_UNSUPPORTED, "no scale for integer value");
        else st = qr_tensor_to_f32(t, &f);
        if (st != QR_OK) { qr_err_clear(); continue; }
        if (!y) y = f.data;
        if (ct->pairs_of) {      /* the hooks' pairs only */
            if (t->numel == x->numel) st = ct->match_fn(ct->match_user, mi, x->data, y, x->numel);
            qr_tensor_free_data(&f);
            QR_TRY(st);
            continue;
        }
        QrLayerRow *r = &ct->c->rows[ct->row_of[mi]];
        if (ct->s->keep_vals && t->numel == x->numel) st = qr__cmp_keep(&ct->s->keep_vals[2 * mi + ct->shadow], t, y);
        if (st != QR_OK) { qr_tensor_free_data(&f); return st; }
        if (t->numel == x->numel) {
            QrMetricAcc ma;          /* as qr_metrics_compute(_ex): KL for the full run only; */
            /* data sets (acc) keep no Rtol of the shadow run: their tables show only its Cosine and SQNR */
            qr_metric_acc_init_opts(&ma, !ct->shadow, !(ct->shadow && ct->acc));
            qr_metric_acc_add(&ma, x->data, y, x->numel);
            if (ct->shadow) { qr_metric_acc_finish(&ma, &r->local); r->has_local = true; }
            else { qr_metric_acc_finish(&ma, &r->m); r->has_m = true; }
            if (ct->acc) ct->acc[2 * mi + ct->shadow] = ma;
            if (ct->match_fn && !ct->shadow) st = ct->match_fn(ct->match_user, mi, x->data, y, x->numel);
        }
        if (st != QR_OK) { qr_tensor_free_data(&f); return st; }
        qr_tensor_free_data(&f);
    }
    return QR_OK;
}

/* ==== the comparison in steps ========================================================= */


typedef struct QrCmpSplitPlan QrCmpSplitPlan;

struct QrCmpPlan {
    QrSession *s;
    QrCompare *c;
    double cos_threshold;
    const QrGraph *exec;     /* the analysis model as given, or its integer lowering */
    QrGraph low;             /* int / both modes: the lowering */
    QrLowerInfo info;
    bool have_low, both;
    QrCmpTap ct, sh;         /* the full run's taps, the shadow run's */
    QrTensor *outs;
    const QrTensor **feed;
    bool *only, *sh_only;
    QrRunOpts o[2];
    QrTensor *keep_outs;     /* qr_compare_ds_run: receives the full run's outputs */
    QrBaseRunOpts base;      /* data sets: what every sample's baseline run feeds (qr_compare_ds_open's base) */
    bool pairs_only;         /* hooks' pairs_of: the full run computes the graph up to those pairs' values only */
    int n_outs;              /* exec's outputs (outs) */
    QrCmpSplitPlan *split;   /* the error split's runs (after the shadow run), or NULL */
};

/* ==== error split ======================================================================
 * Three more runs of the twin, fed like the shadow run (every matched value's readers see the
 * baseline's), each with one part's quantizers on: the weight and bias quantizers; the
 * activation quantizers that are no row's output quantizer (a layer's input quantizers: those
 * between the values fed to it and its output); the rows' output quantizers. Each run executes
 * only the layers (the nodes between a row's fed inputs and its value) of the rows that have
 * quantizers of its part. A row's value in a run is compared with the baseline like the shadow
 * run's; the output-only run also reads each output quantizer's input u, to split the error by
 * element into clipped (u outside the quantizer's range) and rounded, and the weight-only run
 * reads each per-channel weight after its quantizer, to name the worst channel. */

enum { QR__CMP_Y, QR__CMP_U, QR__CMP_WT };

typedef struct QrCmpSlot { int row, next; uint8_t role; } QrCmpSlot;

typedef struct QrCmpSplitRun {
    struct QrCmpSplitPlan *sp;
    int part;                /* 0 weight, 1 input, 2 output */
    bool any;                /* some row has quantizers of this part */
    QrOverrides ov;
    bool *live;              /* per twin node */
    bool *tap_only;          /* per twin value */
    int *first;              /* per twin value: first slot, -1 */
    QrCmpSlot *slots;
    int n_slots;
    int *yv;                 /* per row: the value holding its output in this run, -1 when not measured */
    int64_t n_exec;          /* nodes this run executed (added to QrCompare.split_exec after the runs) */
    QrCmpBuf deq;            /* its dequantized integer values (qr__cmp_deq) */
} QrCmpSplitRun;

struct QrCmpSplitPlan {
    QrSession *s;
    QrCompare *c;
    const QrTensor **feed;   /* the shadow run's */
    QrCmpSplitRun run[3];
    int *oq;                 /* per row: output quantizer (twin), -1 */
    int *wq;                 /* per row: its first weight quantizer (twin), -1 */
    int *iq;                 /* per row: its first input quantizer (twin), -1 */
    uint8_t *parts;          /* per row: QR_SPLIT_* */
    uint8_t **mask;          /* per row: clipped elements of the output-only run (while it runs) */
    size_t *mask_cap;        /* per row: mask's bytes (0: not from qr__cmp_mask_get; NULL: none kept) */
    int *wt_node;            /* per row: the DequantizeLinear whose integers give its weight's worst channel
                              * (qr__cmp_split_wt_dq) instead of a tap of the weight-only run, -1 */
    int *wt_ch;              /* per row with wt_node: that worst channel (constants only: computed once); */
    double *wt_share;        /* and its share; also a tapped weight's, when wt_kept */
    bool *wt_const;          /* per row: its tapped weight is a constant of this sample's weight-only run */
    bool *wt_kept;           /* per row: wt_ch / wt_share hold that constant weight's worst channel */
    bool *st0;               /* per twin value: a constant of the weight-only run (qr_run_statics) */
    struct QrCmpQp **qp;     /* per row: its output quantizer's parameters (qr__cmp_split_u), made once */
    uint8_t *spare[2];       /* masks given back, for the next rows of the output-only run; */
    size_t spare_cap[2];     /* their bytes */
    int todo[3], n_todo;     /* the parts whose runs this comparison makes (qr__cmp_split_begin) */
    int next;                /* the next of them a job takes (atomic) */
};

static void qr__cmp_split_free(QrCmpSplitPlan *sp) {
    if (!sp) return;
    for (int r = 0; r < 3; r++) {
        QrCmpSplitRun *u = &sp->run[r];
        qr_session_overrides_free(&u->ov);
        free(u->live); free(u->tap_only); free(u->first); free(u->slots); free(u->yv);
        qr__cmp_buf_free(&u->deq);
    }
    for (int k = 0; sp->mask && k < sp->c->n; k++) free(sp->mask[k]);
    for (int k = 0; sp->qp && k < sp->c->n; k++) free(sp->qp[k]);
    for (int j = 0; j < QR_ARRAY_LEN(sp->spare); j++) free(sp->spare[j]);
    free(sp->mask); free(sp->mask_cap); free(sp->oq); free(sp->wq); free(sp->iq); free(sp->parts); free(sp->wt_node);
    free(sp->wt_ch); free(sp->wt_share); free(sp->wt_const); free(sp->wt_kept); free(sp->st0); free(sp->qp);
    free(sp);
}

static bool qr__cmp_clamped(const QrOverrides *o, int v) {
    return o->alias[v] >= 0 && (o->clamp_lo[v] == o->clamp_lo[v] || o->clamp_hi[v] == o->clamp_hi[v]);
}

static QrStatus qr__cmp_slot(QrCmpSplitRun *u, int v, int row, uint8_t role) {
    if (u->n_slots % 64 == 0) {
        QrCmpSlot *ns = realloc(u->slots, ((size_t)u->n_slots + 64) * sizeof *ns);
        if (!ns) return qr_errf(QR_ERR_NOMEM, "out of memory");
        u->slots = ns;
    }
    u->slots[u->n_slots] = (QrCmpSlot){ row, u->first[v], role };
    u->first[v] = u->n_slots++;
    u->tap_only[v] = true;
    return QR_OK;
}

/* Gives row k's mask back: a spare in an empty place or in place of a smaller one, else freed (and a
 * mask not from qr__cmp_mask_get is freed). */
static void qr__cmp_mask_put(QrCmpSplitPlan *sp, int k) {
    uint8_t *m = sp->mask[k];
    const size_t cap = sp->mask_cap ? sp->mask_cap[k] : 0;
    sp->mask[k] = NULL;
    if (sp->mask_cap) sp->mask_cap[k] = 0;
    if (!m || !cap) { free(m); return; }
    int j = 0;
    for (int i = 1; i < QR_ARRAY_LEN(sp->spare) && sp->spare[j]; i++)
        if (!sp->spare[i] || sp->spare_cap[i] < sp->spare_cap[j]) j = i;
    if (sp->spare[j] && sp->spare_cap[j] >= cap) { free(m); return; }
    free(sp->spare[j]);
    sp->spare[j] = m;
    sp->spare_cap[j] = cap;
}

/* Row k's clip mask for n elements from the plan's spares (the smallest that holds them) or new
 * (its user writes every byte); NULL when out of memory. A mask lives from the row's u to its value
 * (qr__cmp_split_y), so a few buffers serve every row of the output-only run. */
static uint8_t *qr__cmp_mask_get(QrCmpSplitPlan *sp, int k, int64_t n) {
    const size_t need = (size_t)n + 1;
    qr__cmp_mask_put(sp, k);
    int best = -1;
    for (int j = 0; j < QR_ARRAY_LEN(sp->spare); j++)
        if (sp->spare[j] && sp->spare_cap[j] >= need && (best < 0 || sp->spare_cap[j] < sp->spare_cap[best])) best = j;
    size_t cap = need;
    uint8_t *m;
    if (best >= 0) {
        m = sp->spare[best];
        cap = sp->spare_cap[best];
        sp->spare[best] = NULL;
    } else m = malloc(need);
    sp->mask[k] = m;
    if (sp->mask_cap) sp->mask_cap[k] = m ? cap : 0;
    return m;
}

/* Element i's quantization parameter under q for a value of shape dims (per-tensor, per-axis). */
static int64_t qr__cmp_param(const QrQuantizer *q, int rank, const int64_t *dims, int64_t np, int64_t i) {
    if (np <= 1 || rank == 0) return 0;
    int ax = q->axis < 0 ? q->axis + rank : q->axis;
    if (ax < 0 || ax >= rank) return 0;
    int64_t inner = 1;
    for (int d = ax + 1; d < rank; d++) inner *= dims[d];
    return (i / QR_MAX(inner, 1)) % QR_MAX(dims[ax], 1) % np;
}

static int qr__cmp_dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The per-channel median of RMS / step of an output quantizer (cu2: per channel, the sum of
 * squares; cn: the count; NaN when no channel counts). cu2 is reused as scratch. */
static double qr__cmp_steps_med(const QrTensor *sc, int64_t np, double *cu2, const int64_t *cn) {
    int m = 0;
    for (int64_t c = 0; c < np; c++) {
        double st = qr_tensor_get_f64(sc, c);
        if (cn[c] > 0 && st > 0) cu2[m++] = sqrt(cu2[c] / (double)cn[c]) / st;
    }
    if (!m) return NAN;
    qsort(cu2, (size_t)m, sizeof *cu2, qr__cmp_dcmp);
    return m % 2 ? cu2[m / 2] : 0.5 * (cu2[m / 2 - 1] + cu2[m / 2]);
}

/* The error split's output-only statistics one element at a time, each element's quantization
 * parameter looked up on its own: the definition qr__cmp_split_u computes channel by channel
 * (it falls back to this when the value's dims do not tile its elements; the tests compare). */
static QrStatus qr__cmp_split_u_ref(QrCmpSplitPlan *sp, int k, const QrTensor *t, const float *u) {
    const QrSession *s = sp->s;
    const QrQuantizer *q = &s->qt.q[sp->oq[k]];
    QrErrSplit *e = &sp->c->rows[k].sp;
    const QrGraph *g = &s->tw.g;
    const QrTensor *sc = &g->values[q->scale_value].t, *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    QrQuantRange range;
    if (!sc->data || !qr_quant_range(q->dtype, &range)) return QR_OK;
    int64_t np = QR_MAX(sc->numel, 1), n = t->numel;
    qr__cmp_mask_put(sp, k);
    sp->mask[k] = calloc((size_t)n + 1, 1);
    double *cu2 = np > 1 ? calloc((size_t)np, sizeof *cu2) : NULL;
    int64_t *cn = np > 1 ? calloc((size_t)np, sizeof *cn) : NULL;
    if (!sp->mask[k] || (np > 1 && (!cu2 || !cn))) { free(cu2); free(cn); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    const float ilo = q->implied_lo, ihi = q->implied_hi;
    for (int64_t i = 0; i < n; i++) {
        int64_t pi = qr__cmp_param(q, t->rank, t->dims, np, i);
        double st = qr_tensor_get_f64(sc, pi);
        double z = zp && zp->data ? (double)qr_tensor_get_i64(zp, zp->numel > 1 ? pi : 0) : 0;
        double v = u[i];
        if (ilo == ilo && v < ilo) v = ilo;     /* the activation the quantizer implements (removed Relu) */
        if (ihi == ihi && v > ihi) v = ihi;
        if (!isfinite(v) || !(st > 0)) continue;
        double lo = ((double)range.lo - z) * st, hi = ((double)range.hi - z) * st;
        if (v < lo || v > hi) { sp->mask[k][i] = 1; e->n_clip++; }
        else e->s_noise += st * st / 12.0;
        if (np > 1) { cu2[pi] += v * v; cn[pi]++; }
        else e->su2 += (v / st) * (v / st);
    }
    e->steps_med = np > 1 ? qr__cmp_steps_med(sc, np, cu2, cn) : NAN;
    free(cu2);
    free(cn);
    return QR_OK;
}

/* One output-quantizer parameter's constants, as qr__cmp_split_u_ref computes them per element. */
typedef struct QrCmpQp {
    double st, lo, hi, noise;
} QrCmpQp;

/* s after k additions s = s + c one at a time (round to nearest, ties to even): the bits of that
 * loop, in a few steps per binade the sum passes through. While s and the exact s + c stay inside
 * one binade [2^e, 2^(e+1)), where the doubles are the multiples of u = 2^(e-52) (below 2^-1021:
 * of 2^-1074), every addition adds the same D * u, c rounded to the nearest multiple of u, unless
 * c lies half-way between two multiples (then the parity of s decides: one addition at a time); so
 * such a run of additions is one exact addition of j * D * u. Other s or c (s <= 0, c <= 0, NaN,
 * Inf) and short runs take one addition at a time. The rounding expectation s_noise adds the same
 * step^2 / 12 for every element of a channel that is not clipped (qr__cmp_split_u_run). */
static double qr__cmp_add_n(double s, double c, int64_t k) {
    if (k <= 16) {
        for (int64_t i = 0; i < k; i++) s += c;
        return s;
    }
    while (k > 0) {
        double t = s + c;
        k--;
        if (!(s > 0) || !(c > 0) || !isfinite(t)) { s = t; continue; }
        if (t == s) return s;                 /* s + c rounds to s: so does every later addition */
        s = t;
        int e = ilogb(s);
        if (k == 0 || e >= 1023) continue;
        if (e < -1022) e = -1022;             /* subnormal: the spacing of the lowest binade */
        double u = ldexp(1.0, e - 52), r = ldexp(1.0, e + 1) - s;   /* exact: the room left in the binade */
        if (!(c < r)) continue;               /* the next addition leaves the binade */
        double m = c / u, mf = floor(m);      /* exact: m < r / u <= 2^52 */
        if (m - mf == 0.5) continue;          /* half-way */
        int64_t d = (int64_t)mf + (m - mf > 0.5), ru = (int64_t)(r / u);
        if (d == 0) return s;
        int64_t j = (ru - (int64_t)mf - 1) / d + 1;   /* additions i = 0..j-1 with i*d*u + c < r */
        if (j > k) j = k;
        s += (double)(j * d) * u;             /* exact: a multiple of u, at most 2^(e+1) */
        k -= j;
    }
    return s;
}

/* The channel run of qr__cmp_split_u: elements [i0, i0 + len) under parameter p, in element order
 * (qr_kern.f32_clip_sq: every mask byte written, each sum in element order; s_noise's additions of
 * the one p->noise by qr__cmp_add_n), so the bits of qr__cmp_split_u_ref's loop. */
static void qr__cmp_split_u_run(QrErrSplit *e, uint8_t *mask, const QrCmpQp *p, int64_t i0, int64_t len, const float *u,
                                float ilo, float ihi, bool per_ch, double *cu2, int64_t *cn) {
    if (!(p->st > 0)) {
        memset(mask + i0, 0, (size_t)len);
        return;
    }
    QrF32ClipSq r = { 0, 0, 0, per_ch ? *cu2 : e->su2 };
    qr_kern.f32_clip_sq(u + i0, len, ilo, ihi, p->lo, p->hi, p->st, !per_ch, mask + i0, &r);
    e->s_noise = qr__cmp_add_n(e->s_noise, p->noise, r.n_in);
    e->n_clip += r.n_clip;
    if (per_ch) { *cu2 = r.s; *cn += r.n_fin; }
    else e->su2 = r.s;
}

/* Row k's output quantizer's parameters, np of them (scale sc, zero point zp, range): the plan's,
 * made on its first use (they are constants of the twin), or into *own when the plan keeps none
 * (the caller frees it). NULL when out of memory. */
static const QrCmpQp *qr__cmp_split_qp(QrCmpSplitPlan *sp, int k, const QrTensor *sc, const QrTensor *zp,
                                       const QrQuantRange *range, int64_t np, QrCmpQp **own) {
    *own = NULL;
    if (sp->qp && sp->qp[k]) return sp->qp[k];
    QrCmpQp *qp = calloc((size_t)np, sizeof *qp);
    if (!qp) return NULL;
    for (int64_t c = 0; c < np; c++) {
        double st = qr_tensor_get_f64(sc, c);
        double z = zp && zp->data ? (double)qr_tensor_get_i64(zp, zp->numel > 1 ? c : 0) : 0;
        qp[c] = (QrCmpQp){ st, ((double)range->lo - z) * st, ((double)range->hi - z) * st, st * st / 12.0 };
    }
    if (sp->qp) sp->qp[k] = qp;
    else *own = qp;
    return qp;
}

/* The output-only run's u of row k (the output quantizer's input as the quantizer reads it):
 * clipped elements, the rounding expectation and the steps. Each sum adds the elements in
 * their order, as qr__cmp_split_u_ref does one element at a time, so the bits are its bits; the
 * quantizer's parameters are read once per channel instead of once per element. */
static QrStatus qr__cmp_split_u(QrCmpSplitPlan *sp, int k, const QrTensor *t, const float *u) {
    const QrSession *s = sp->s;
    const QrQuantizer *q = &s->qt.q[sp->oq[k]];
    QrErrSplit *e = &sp->c->rows[k].sp;
    const QrGraph *g = &s->tw.g;
    const QrTensor *sc = &g->values[q->scale_value].t, *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    QrQuantRange range;
    if (!sc->data || !qr_quant_range(q->dtype, &range)) return QR_OK;
    int64_t np = QR_MAX(sc->numel, 1), n = t->numel;
    int ax = t->rank == 0 || np <= 1 ? -1 : q->axis < 0 ? q->axis + t->rank : q->axis;
    if (ax >= t->rank) ax = -1;
    int64_t inner = 1, nch = ax >= 0 ? QR_MAX(t->dims[ax], 1) : 1;
    for (int d = ax + 1; ax >= 0 && d < t->rank; d++) inner *= t->dims[d];
    inner = ax >= 0 ? QR_MAX(inner, 1) : QR_MAX(n, 1);
    if (n % (inner * nch)) return qr__cmp_split_u_ref(sp, k, t, u);   /* dims that do not tile the elements */
    QrCmpQp *own;
    const QrCmpQp *qp = qr__cmp_split_qp(sp, k, sc, zp, &range, np, &own);
    uint8_t *mask = qr__cmp_mask_get(sp, k, n);
    double *cu2 = np > 1 ? calloc((size_t)np, sizeof *cu2) : NULL;
    int64_t *cn = np > 1 ? calloc((size_t)np, sizeof *cn) : NULL;
    if (!mask || !qp || (np > 1 && (!cu2 || !cn))) { free(own); free(cu2); free(cn); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    mask[n] = 0;
    double d2 = 0;
    int64_t dn = 0;
    for (int64_t i = 0; i < n;)
        for (int64_t c = 0; c < nch; c++, i += inner) {
            int64_t p = ax >= 0 ? c % np : 0;
            qr__cmp_split_u_run(e, mask, &qp[p], i, inner, u, q->implied_lo, q->implied_hi, np > 1,
                                np > 1 ? &cu2[p] : &d2, np > 1 ? &cn[p] : &dn);
        }
    e->steps_med = np > 1 ? qr__cmp_steps_med(sc, np, cu2, cn) : NAN;
    free(own);
    free(cu2);
    free(cn);
    return QR_OK;
}

/* Row k's value y in the run of part `part`: its squared error against the baseline. */
static void qr__cmp_split_y(QrCmpSplitPlan *sp, int part, int k, const float *y, int64_t n) {
    QrLayerRow *r = &sp->c->rows[k];
    const QrTensor *x = &sp->s->base[r->match];
    if (!x->data || x->numel != n) { r->sp.has = false; return; }
    const float *px = x->data;
    const uint8_t *mask = part == 2 ? sp->mask[k] : NULL;
    double s[2] = { 0, 0 };   /* (y - x)^2 over the finite pairs, s[1] where the mask is set, in element order */
    qr_kern.f32_sqerr_split(px, y, mask, n, s);
    if (part == 0) r->sp.sw = s[0];
    else if (part == 1) r->sp.si = s[0];
    else { r->sp.s_round = s[0]; r->sp.s_clip = s[1]; }
    if (mask) qr__cmp_mask_put(sp, k);
}

/* qr__cmp_split_wt's definition, each element's channel looked up on its own (it falls back to
 * this when the weight's dims do not tile its elements; the tests compare). */
static void qr__cmp_split_wt_ref(QrCmpSplitPlan *sp, int k, const QrTensor *t, const float *w) {
    const QrSession *s = sp->s;
    int j = sp->wq[k];
    const QrQuantizer *q = &s->qt.q[j];
    const QrTensor *f = s->fw[j];
    if (!f && q->float_value >= 0) f = &s->tw.g.values[q->float_value].t;
    QrErrSplit *e = &sp->c->rows[k].sp;
    if (!f || !f->data || f->dtype != QR_DT_F32 || f->numel != t->numel || q->n_scales <= 1) return;
    int64_t np = q->n_scales;
    double *ce = calloc((size_t)np, sizeof *ce), tot = 0;
    if (!ce) return;
    const float *pf = f->data;
    for (int64_t i = 0; i < t->numel; i++) {
        double d = (double)w[i] - (double)pf[i];
        if (d != d) continue;
        ce[qr__cmp_param(q, t->rank, t->dims, np, i)] += d * d;
        tot += d * d;
    }
    int best = 0;
    for (int64_t c = 1; c < np; c++) if (ce[c] > ce[best]) best = (int)c;
    e->w_channel = tot > 0 ? best : -1;
    e->w_channel_share = tot > 0 ? ce[best] / tot : NAN;
    free(ce);
}

/* The weight-only run's per-channel weight of row k after its quantizer: the channel along the
 * quantizer's axis with the largest squared error against the float weight. Channel by channel,
 * each sum in element order: the bits of qr__cmp_split_wt_ref. */
/* The float weight the weight-only run's per-channel weight of row k is compared with (qr__cmp_split_wt),
 * or NULL when there is none of t's size. */
static const float *qr__cmp_split_wt_float(const QrCmpSplitPlan *sp, int k, int64_t numel) {
    const QrSession *s = sp->s;
    const QrQuantizer *q = &s->qt.q[sp->wq[k]];
    const QrTensor *f = s->fw[sp->wq[k]];
    if (!f && q->float_value >= 0) f = &s->tw.g.values[q->float_value].t;
    if (!f || !f->data || f->dtype != QR_DT_F32 || f->numel != numel || q->n_scales <= 1) return NULL;
    return f->data;
}

/* The weight as DequantizeLinear gives it (ops/qdq.c: (float)(x - zp[c]) * scale[c]), read from its 8-bit
 * integers: x (signed: sg), per parameter p its scale s[p] and zero point z[p]. w: the float copy instead. */
typedef struct QrCmpWt { const float *w; const void *x; bool sg; const float *s; const int32_t *z; } QrCmpWt;

/* Row k's worst channel from the squared errors of its weight (elements on channel c's parameter c % np
 * along axis ax, inner elements a run; ax -1: one run) against the float weight pf, channel by channel,
 * each sum in element order: the bits of qr__cmp_split_wt_ref. */
static void qr__cmp_split_wt_sums(QrCmpSplitPlan *sp, int k, const QrCmpWt *src, const float *pf, int64_t n, int64_t np,
                                  int ax, int64_t nch, int64_t inner) {
    QrErrSplit *e = &sp->c->rows[k].sp;
    double *ce = calloc((size_t)np, sizeof *ce), tot = 0;
    if (!ce) return;
    const int8_t *xs = src->x;
    const uint8_t *xu = src->x;
    if (inner == 1 && np == nch && ax >= 0 && !src->w) {   /* rows of channels (a MatMul weight): a row in one loop */
        for (int64_t i = 0; i < n; i += nch)
            for (int64_t c = 0; c < nch; c++) {
                float y = (float)((src->sg ? (int32_t)xs[i + c] : (int32_t)xu[i + c]) - src->z[c]) * src->s[c];
                double d = (double)y - (double)pf[i + c];
                if (d != d) continue;
                ce[c] += d * d;
                tot += d * d;
            }
    }
    for (int64_t i = inner == 1 && np == nch && ax >= 0 && !src->w ? n : 0; i < n;)
        for (int64_t c = 0; c < nch; c++) {
            int64_t p = ax < 0 ? 0 : c < np ? c : c % np;   /* no division per channel (a MatMul's: per element) */
            double cp = ce[p];
            if (src->w) {
                for (int64_t end = i + inner; i < end; i++) {
                    double d = (double)src->w[i] - (double)pf[i];
                    if (d != d) continue;
                    cp += d * d;
                    tot += d * d;
                }
            } else {
                const float sc = src->s[p];
                const int32_t z = src->z[p];
                for (int64_t end = i + inner; i < end; i++) {
                    float y = (float)((src->sg ? (int32_t)xs[i] : (int32_t)xu[i]) - z) * sc;
                    double d = (double)y - (double)pf[i];
                    if (d != d) continue;
                    cp += d * d;
                    tot += d * d;
                }
            }
            ce[p] = cp;
        }
    int best = 0;
    for (int64_t c = 1; c < np; c++) if (ce[c] > ce[best]) best = (int)c;
    e->w_channel = tot > 0 ? best : -1;
    e->w_channel_share = tot > 0 ? ce[best] / tot : NAN;
    free(ce);
}

/* The weight-only run's per-channel weight of row k after its quantizer: the channel along the
 * quantizer's axis with the largest squared error against the float weight. Channel by channel,
 * each sum in element order: the bits of qr__cmp_split_wt_ref. */
static void qr__cmp_split_wt(QrCmpSplitPlan *sp, int k, const QrTensor *t, const float *w) {
    const QrQuantizer *q = &sp->s->qt.q[sp->wq[k]];
    const float *pf = qr__cmp_split_wt_float(sp, k, t->numel);
    if (!pf) return;
    int64_t np = q->n_scales, n = t->numel;
    int ax = t->rank == 0 ? -1 : q->axis < 0 ? q->axis + t->rank : q->axis;
    if (ax >= t->rank) ax = -1;
    int64_t inner = 1, nch = ax >= 0 ? QR_MAX(t->dims[ax], 1) : 1;
    for (int d = ax + 1; ax >= 0 && d < t->rank; d++) inner *= t->dims[d];
    inner = ax >= 0 ? QR_MAX(inner, 1) : QR_MAX(n, 1);
    if (n % (inner * nch)) { qr__cmp_split_wt_ref(sp, k, t, w); return; }
    qr__cmp_split_wt_sums(sp, k, &(QrCmpWt){ .w = w }, pf, n, np, ax, nch, inner);
}

#ifdef QR_TESTING
static bool qr__cmp_wt_tapped;    /* tests: every row's weight tapped in the weight-only run, as before */
static bool qr__cmp_wt_every;     /* tests: a tapped constant weight's worst channel computed every sample, as before */
static int64_t qr__cmp_wt_taps;   /* tests: worst channels of tapped weights computed */
#endif

/* The DequantizeLinear node that gives row k's weight quantizer's value in run u, when the run can skip
 * materializing it for row k: an 8-bit initializer dequantized along one axis (float32 scales, 8-bit zero
 * points or none, one parameter per channel as the quantizer has them) that runs in u (live) and that u
 * neither feeds nor overrides, whose value qr__cmp_split_wt would compare. Its elements are then computed
 * from the integers (qr__cmp_split_wt_dq) and the run need not materialize the weight (its
 * DequantizeLinear may fuse into the MatMul / Gemm reading it, run.c qr__run_plan_dq). -1 otherwise. */
static int qr__cmp_split_wt_node(const QrCmpSplitPlan *sp, const QrCmpSplitRun *u, int k) {
#ifdef QR_TESTING
    if (qr__cmp_wt_tapped) return -1;
#endif
    const QrSession *s = sp->s;
    const QrGraph *g = &s->tw.g;
    const QrQuantizer *q = &s->qt.q[sp->wq[k]];
    int v = q->out_value, pr = v >= 0 ? g->values[v].producer : -1;
    if (pr < 0 || !u->live[pr] || sp->feed[v] || u->ov.alias[v] >= 0 || u->ov.subst[v]) return -1;
    const QrNode *nd = &g->nodes[pr];
    if (strcmp(nd->op_type, "DequantizeLinear") || strcmp(nd->domain, "") || nd->n_in < 2 || qr_attr_int(nd, "block_size", 0))
        return -1;
    for (int i = 0; i < nd->n_in && i < 3; i++) {
        int w = nd->in[i];
        if (w >= 0 && (g->values[w].producer >= 0 || !g->values[w].t.data || sp->feed[w] || u->ov.alias[w] >= 0 || u->ov.subst[w]))
            return -1;
    }
    const QrTensor *x = &g->values[nd->in[0]].t, *sc = &g->values[nd->in[1]].t;
    const QrTensor *zp = nd->n_in > 2 && nd->in[2] >= 0 ? &g->values[nd->in[2]].t : NULL;
    if ((x->dtype != QR_DT_S8 && x->dtype != QR_DT_U8) || sc->dtype != QR_DT_F32 || (zp && zp->dtype != x->dtype) ||
        g->values[v].t.dtype != QR_DT_F32 || x->rank < 1 || sc->rank != 1 || sc->numel != q->n_scales || q->n_scales <= 1 ||
        (zp && zp->numel != sc->numel))
        return -1;
    int ax = (int)qr_attr_int(nd, "axis", 1), qax = q->axis;
    ax = ax < 0 ? ax + x->rank : ax;
    qax = qax < 0 ? qax + x->rank : qax;
    if (ax < 0 || ax >= x->rank || ax != qax || x->dims[ax] != sc->numel) return -1;
    return qr__cmp_split_wt_float(sp, k, x->numel) ? pr : -1;
}
/* qr__cmp_split_wt for row k's weight from its DequantizeLinear's integers (qr__cmp_split_wt_node): the
 * same elements, the same sums. */
static void qr__cmp_split_wt_dq(QrCmpSplitPlan *sp, int k) {
    const QrGraph *g = &sp->s->tw.g;
    const QrQuantizer *q = &sp->s->qt.q[sp->wq[k]];
    const QrNode *nd = &g->nodes[sp->wt_node[k]];
    const QrTensor *x = &g->values[nd->in[0]].t, *sc = &g->values[nd->in[1]].t;
    const QrTensor *zp = nd->n_in > 2 && nd->in[2] >= 0 ? &g->values[nd->in[2]].t : NULL;
    const float *pf = qr__cmp_split_wt_float(sp, k, x->numel);
    const int64_t np = q->n_scales, n = x->numel;
    int32_t *z = malloc((size_t)np * sizeof *z);
    if (!pf || !z) { free(z); return; }
    for (int64_t p = 0; p < np; p++)
        z[p] = !zp ? 0 : zp->dtype == QR_DT_S8 ? ((const int8_t *)zp->data)[p] : ((const uint8_t *)zp->data)[p];
    int ax = q->axis < 0 ? q->axis + x->rank : q->axis;
    int64_t inner = 1;
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    QrCmpWt src = { .x = x->data, .sg = x->dtype == QR_DT_S8, .s = sc->data, .z = z };
    qr__cmp_split_wt_sums(sp, k, &src, pf, n, np, ax, QR_MAX(x->dims[ax], 1), QR_MAX(inner, 1));
    free(z);
}

typedef struct QrCmpWtJob { QrCmpSplitPlan *sp; const int *rows; } QrCmpWtJob;

static void qr__cmp_split_wt_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrCmpWtJob *j = ctx;
    qr__cmp_split_wt_dq(j->sp, j->rows[t]);
}

static QrStatus qr__cmp_split_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g);
    QR_UNUSED(node);
    QrCmpSplitRun *u = user;
    QrCmpSplitPlan *sp = u->sp;
    for (int k = u->first[value]; k >= 0; k = u->slots[k].next) {
        const QrCmpSlot *sl = &u->slots[k];
        QrTensor f = {0};
        const float *y = NULL;
        QrStatus st = QR_OK;
        if (t->dtype == QR_DT_F32) y = t->data;
        else if (sl->role == QR__CMP_Y && sp->s->vis[sp->c->rows[sl->row].match] == value)
            st = qr__cmp_visible(&u->deq, sp->s, sp->c->rows[sl->row].match, t, &f, &y);
        else if (qr_dtype_is_float(t->dtype)) st = qr_tensor_to_f32(t, &f);
        else continue;
        if (st == QR_OK && !y) y = f.data;
        if (st == QR_OK && sl->role == QR__CMP_Y) qr__cmp_split_y(sp, u->part, sl->row, y, t->numel);
        else if (st == QR_OK && sl->role == QR__CMP_U) st = qr__cmp_split_u(sp, sl->row, t, y);
        else if (st == QR_OK && !(sp->wt_kept[sl->row] && sp->wt_const[sl->row])) {   /* else set by qr__cmp_split_begin */
#ifdef QR_TESTING
            __atomic_add_fetch(&qr__cmp_wt_taps, 1, __ATOMIC_RELAXED);
#endif
            const int k = sl->row;
            qr__cmp_split_wt(sp, k, t, y);
            sp->wt_kept[k] = sp->wt_const[k];
            sp->wt_ch[k] = sp->c->rows[k].sp.w_channel;
            sp->wt_share[k] = sp->c->rows[k].sp.w_channel_share;
        }
        qr_tensor_free_data(&f);
        QR_TRY(st);
    }
    return QR_OK;
}

/* Row k's layer: the twin nodes between the values fed to it and its value (stamp[n] == k marks
 * them; the nodes pushed are added to every live[] given); the quantizers met on the way. */
static void qr__cmp_split_walk(QrCmpSplitPlan *sp, int k, int *stamp, int *stack, bool *const live[3], const bool use[3]) {
    const QrSession *s = sp->s;
    const QrGraph *g = &s->tw.g;
    int v0 = s->vis[sp->c->rows[k].match], sp_n = 0;
    int p0 = g->values[v0].producer;
    if (p0 < 0) return;
    stamp[p0] = k;
    stack[sp_n++] = p0;
    while (sp_n) {
        const QrNode *nd = &g->nodes[stack[--sp_n]];
        for (int r = 0; r < 3; r++) if (use[r]) live[r][nd - g->nodes] = true;
        for (int i = 0; i < nd->n_in; i++) {
            int w = nd->in[i];
            if (w < 0) continue;
            int j = s->qt.by_value[w];
            if (j >= 0 && j != sp->oq[k]) {
                const QrQuantizer *q = &s->qt.q[j];
                if (q->kind != QR_QK_ACTIVATION) {
                    sp->parts[k] |= QR_SPLIT_W;
                    if (q->kind == QR_QK_WEIGHT && !q->block_size && sp->wq[k] < 0 && q->out_value >= 0) sp->wq[k] = j;
                } else {
                    sp->parts[k] |= QR_SPLIT_I;
                    if (sp->iq[k] < 0) sp->iq[k] = j;
                }
            }
            if (sp->feed[w]) continue;
            int pr = g->values[w].producer;
            if (pr < 0 || stamp[pr] == k) continue;
            stamp[pr] = k;
            stack[sp_n++] = pr;
        }
    }
}

/* The split's runs for the plan's rows (after qr__cmp_plan_feed). Not for a quantized baseline
 * (its own quantizers stay on, so no run of one part alone compares with it) nor when the session
 * asks for none (--no-error-split): p->split stays NULL. */
static QrStatus qr__cmp_split_plan(QrCmpPlan *p) {
    QrSession *s = p->s;
    const QrGraph *g = &s->tw.g;
    if (s->no_error_split || (s->base_quant && !s->base_quant_off)) return QR_OK;
    QrCmpSplitPlan *sp = calloc(1, sizeof *sp);
    if (!sp) return qr_errf(QR_ERR_NOMEM, "out of memory");
    p->split = sp;
    sp->s = s;
    sp->c = p->c;
    sp->feed = p->feed;
    int n = p->c->n, nv = g->n_values, nn = g->n_nodes, nq = s->qt.n;
    sp->oq = malloc(((size_t)n + 1) * sizeof *sp->oq);
    sp->wq = malloc(((size_t)n + 1) * sizeof *sp->wq);
    sp->iq = malloc(((size_t)n + 1) * sizeof *sp->iq);
    sp->parts = calloc((size_t)n + 1, 1);
    sp->mask = calloc((size_t)n + 1, sizeof *sp->mask);
    sp->mask_cap = calloc((size_t)n + 1, sizeof *sp->mask_cap);
    sp->qp = calloc((size_t)n + 1, sizeof *sp->qp);
    sp->wt_node = malloc(((size_t)n + 1) * sizeof *sp->wt_node);
    sp->wt_ch = malloc(((size_t)n + 1) * sizeof *sp->wt_ch);
    sp->wt_share = malloc(((size_t)n + 1) * sizeof *sp->wt_share);
    sp->wt_const = calloc((size_t)n + 1, sizeof *sp->wt_const);
    sp->wt_kept = calloc((size_t)n + 1, sizeof *sp->wt_kept);
    sp->st0 = calloc((size_t)nv + 1, sizeof *sp->st0);
    bool *is_out = calloc((size_t)nq + 1, 1), *en = calloc((size_t)nq + 1, 1);
    int *stamp = malloc(((size_t)nn + 1) * sizeof *stamp), *stack = malloc(((size_t)nn + 1) * sizeof *stack);
    QrStatus st = sp->oq && sp->wq && sp->iq && sp->parts && sp->mask && sp->mask_cap && sp->qp && sp->wt_node && sp->wt_ch &&
                  sp->wt_share && sp->wt_const && sp->wt_kept && sp->st0 && is_out && en && stamp && stack ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int r = 0; st == QR_OK && r < 3; r++) {
        QrCmpSplitRun *u = &sp->run[r];
        u->sp = sp;
        u->part = r;
        u->live = calloc((size_t)nn + 1, 1);
        u->tap_only = calloc((size_t)nv + 1, 1);
        u->first = malloc(((size_t)nv + 1) * sizeof *u->first);
        u->yv = malloc(((size_t)n + 1) * sizeof *u->yv);
        st = u->live && u->tap_only && u->first && u->yv ? qr_session_overrides_alloc(s, &u->ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int v = 0; st == QR_OK && v < nv; v++) u->first[v] = -1;
        for (int k = 0; st == QR_OK && k < n; k++) u->yv[k] = -1;
    }
    /* each row's output quantizer: the activation quantizer whose DequantizeLinear gives its value */
    for (int k = 0; st == QR_OK && k < n; k++) {
        int v = s->vis[p->c->rows[k].match], j = v >= 0 ? s->qt.by_value[v] : -1;
        sp->oq[k] = sp->wq[k] = sp->iq[k] = sp->wt_node[k] = -1;
        if (j >= 0 && s->qt.q[j].kind == QR_QK_ACTIVATION && s->qt.q[j].out_value == v && s->qt.q[j].float_value >= 0 &&
            s->qt.q[j].scale_value >= 0 && s->qt.q[j].can_disable && !s->qt.q[j].block_size) {
            sp->oq[k] = j;
            is_out[j] = true;
            sp->parts[k] |= QR_SPLIT_O;
        }
    }
    for (int k = 0; st == QR_OK && k < nn; k++) stamp[k] = -1;
    for (int k = 0; st == QR_OK && k < n; k++) {
        if (s->vis[p->c->rows[k].match] < 0) continue;
        bool *live[3] = { sp->run[0].live, sp->run[1].live, sp->run[2].live };
        bool none[3] = { false, false, false };
        qr__cmp_split_walk(sp, k, stamp, stack, live, none);   /* the parts it has */
        bool use[3] = { sp->parts[k] & QR_SPLIT_W, sp->parts[k] & QR_SPLIT_I, sp->parts[k] & QR_SPLIT_O };
        uint8_t keep = sp->parts[k];
        int keep_wq = sp->wq[k], keep_iq = sp->iq[k];
        for (int j = 0; j < nn; j++) if (stamp[j] == k) stamp[j] = -1;
        qr__cmp_split_walk(sp, k, stamp, stack, live, use);   /* again, marking its layer live where measured */
        sp->parts[k] = keep;
        sp->wq[k] = keep_wq;
        sp->iq[k] = keep_iq;
        for (int r = 0; r < 3; r++) sp->run[r].any |= use[r];
    }
    /* the masks: weight, input, output quantizers */
    for (int r = 0; st == QR_OK && r < 3; r++) {
        QrCmpSplitRun *u = &sp->run[r];
        for (int j = 0; j < nq; j++) {
            const QrQuantizer *q = &s->qt.q[j];
            en[j] = r == 0 ? q->kind != QR_QK_ACTIVATION : r == 1 ? q->kind == QR_QK_ACTIVATION && !is_out[j] : is_out[j];
        }
        qr_session_overrides(s, en, &u->ov);
        /* an activation a disabled quantizer implements is materialized (clamp of its source) after its
         * node even when the node does not run: not for nodes outside the run's layers, which nothing
         * live reads (a live reader of their values reads the feed) */
        for (int v = 0; v < nv; v++) {
            int pr = g->values[v].producer;
            if (pr >= 0 && !u->live[pr] && qr__cmp_clamped(&u->ov, v)) {
                u->ov.alias[v] = -1;
                u->ov.clamp_lo[v] = u->ov.clamp_hi[v] = NAN;
            }
        }
        for (int k = 0; st == QR_OK && k < n && u->any; k++) {
            int v = s->vis[p->c->rows[k].match];
            if (v < 0 || !(sp->parts[k] & (1 << r))) continue;
            /* with its output quantizer off, the row's value is that quantizer's input (clamped where it
             * implements an activation); the fed value it stands for is not computed */
            while (u->ov.alias[v] >= 0 && !qr__cmp_clamped(&u->ov, v)) v = u->ov.alias[v];
            if (v != s->vis[p->c->rows[k].match] && sp->feed[v]) continue;
            u->yv[k] = v;
            st = qr__cmp_slot(u, v, k, QR__CMP_Y);
            if (st == QR_OK && r == 2) {
                int uv = s->qt.q[sp->oq[k]].float_value;
                if (sp->feed[uv]) continue;        /* the quantizer reads a fed value: u is not computed */
                st = qr__cmp_slot(u, uv, k, QR__CMP_U);
            }
            /* the weight's worst channel: from its integers when they give it (no weight materialized), else tapped */
            if (st == QR_OK && r == 0 && sp->wq[k] >= 0 && s->qt.q[sp->wq[k]].n_scales > 1 &&
                (sp->wt_node[k] = qr__cmp_split_wt_node(sp, u, k)) < 0)
                st = qr__cmp_slot(u, s->qt.q[sp->wq[k]].out_value, k, QR__CMP_WT);
        }
    }
    /* the weights' worst channels from their integers: constants of the twin, so once for every sample
     * (side by side, one weight a task) */
    int *wrows = st == QR_OK ? malloc(((size_t)n + 1) * sizeof *wrows) : NULL, nw = 0;
    if (st == QR_OK && !wrows) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && sp->run[0].any && k < n; k++) {
        if (sp->wt_node[k] < 0) continue;
        QrErrSplit *e = &p->c->rows[k].sp;
        e->w_channel = -1;
        e->w_channel_share = NAN;
        wrows[nw++] = k;
    }
    if (nw) qr_pool_for(nw, qr__cmp_split_wt_task, &(QrCmpWtJob){ sp, wrows });
    for (int j = 0; j < nw; j++) {
        const QrErrSplit *e = &p->c->rows[wrows[j]].sp;
        sp->wt_ch[wrows[j]] = e->w_channel;
        sp->wt_share[wrows[j]] = e->w_channel_share;
    }
    free(wrows);
    free(is_out);
    free(en);
    free(stamp);
    free(stack);
    if (st != QR_OK) { qr__cmp_split_free(sp); p->split = NULL; }
    return st;
}

/* The split's rows made ready for its runs: the weights' worst channels that need no run from the
 * plan (from their integers) or an earlier sample (a tapped constant weight), the rest reset. The runs
 * then go to the comparison's jobs (qr__cmp_split_part), beside the full and shadow runs: a row's
 * has_local, which the shadow run sets, is taken after them (qr__cmp_split_end). qr_compare_prepare
 * calls it and a data-set run again for each sample (the first sample twice: it is idempotent). */
static QrStatus qr__cmp_split_begin(QrCmpPlan *p) {
    QrCmpSplitPlan *sp = p->split;
    if (!sp) return QR_OK;
    QrSession *s = p->s;
    QrCmpSplitRun *u0 = &sp->run[0];
    if (u0->any) {   /* a tapped weight computed from constants alone: every sample's is the first's */
        QrRunOpts o = qr_session_run_opts(&u0->ov, NULL, NULL);
        o.feed = p->feed;
        o.live = u0->live;
        qr_run_statics(&s->tw.g, &o, sp->st0);
    }
    for (int k = 0; k < p->c->n; k++) {
        sp->wt_const[k] = u0->any && sp->wt_node[k] < 0 && sp->wq[k] >= 0 && s->qt.q[sp->wq[k]].out_value >= 0 &&
                          sp->st0[s->qt.q[sp->wq[k]].out_value];
#ifdef QR_TESTING
        if (qr__cmp_wt_every) sp->wt_const[k] = false;
#endif
        if (!sp->wt_const[k]) sp->wt_kept[k] = false;
    }
    for (int k = 0; k < p->c->n; k++) {
        QrErrSplit *e = &p->c->rows[k].sp;
        const QrTensor *x = &s->base[p->c->rows[k].match];
        memset(e, 0, sizeof *e);
        e->w_channel = -1;
        e->w_channel_share = e->steps_med = NAN;
        e->parts = sp->parts[k];
        e->w_quant = sp->wq[k];
        e->i_quant = sp->iq[k];
        e->has = x->data && s->vis[p->c->rows[k].match] >= 0;
        e->n = x->data ? x->numel : 0;
        if (u0->any && (sp->wt_node[k] >= 0 || (sp->wt_kept[k] && sp->wt_const[k]))) {   /* by the plan, an earlier sample */
            e->w_channel = sp->wt_ch[k];
            e->w_channel_share = sp->wt_share[k];
        }
    }
    sp->n_todo = 0;
    for (int r = 0; r < 3; r++) {
        sp->run[r].n_exec = 0;
        if (sp->run[r].any) sp->todo[sp->n_todo++] = r;
    }
    sp->next = 0;
    return QR_OK;
}

/* The run of part r (0 weight, 1 input, 2 output) and its rows' sums. The parts write disjoint
 * fields of the rows (and part 2 alone the clip masks), so they may run at the same time as each
 * other and as the full and shadow runs. */
static QrStatus qr__cmp_split_part(QrCmpPlan *p, int r) {
    QrCmpSplitPlan *sp = p->split;
    QrSession *s = p->s;
    QrCmpSplitRun *u = &sp->run[r];
    /* values the quantizers of a row read from a fed value (nothing computes them) */
    for (int k = 0; r == 2 && k < p->c->n; k++) {
        if (sp->oq[k] < 0 || u->yv[k] < 0) continue;
        int uv = s->qt.q[sp->oq[k]].float_value;
        if (sp->feed[uv]) QR_TRY(qr__cmp_split_u(sp, k, sp->feed[uv], sp->feed[uv]->data));
    }
    QrRunOpts o = qr_session_run_opts(&u->ov, qr__cmp_split_tap, u);
    o.feed = p->feed;
    o.live = u->live;
    o.tap_only = u->tap_only;
    o.n_exec = &u->n_exec;
    QrStatus st = qr_run(&s->tw.g, s->inputs, &o, NULL);
    for (int k = 0; r == 2 && k < p->c->n; k++) qr__cmp_mask_put(sp, k);   /* (the masks are the output-only run's) */
    for (int j = 0; r == 2 && j < QR_ARRAY_LEN(sp->spare); j++) { free(sp->spare[j]); sp->spare[j] = NULL; }
    if (st != QR_OK) return qr_err_wrap(st, "error split: the run with only the %s quantizers on",
                                        r == 0 ? "weight" : r == 1 ? "input" : "output");
    return QR_OK;
}

/* The split's runs a job takes after its own run, one at a time, until none is left. */
static QrStatus qr__cmp_split_take(QrCmpPlan *p) {
    QrCmpSplitPlan *sp = p->split;
    if (!sp) return QR_OK;
    for (;;) {
        int t = __atomic_fetch_add(&sp->next, 1, __ATOMIC_RELAXED);
        if (t >= sp->n_todo) return QR_OK;
        QR_TRY(qr__cmp_split_part(p, sp->todo[t]));
    }
}

/* After the runs: a row without a local comparison, or whose layer was not measured for a part it
 * has (its value fed), gets no split; the runs' node counts. */
static void qr__cmp_split_end(QrCmpPlan *p) {
    QrCmpSplitPlan *sp = p->split;
    if (!sp) return;
    for (int k = 0; k < p->c->n; k++) {
        QrErrSplit *e = &p->c->rows[k].sp;
        if (!p->c->rows[k].has_local) e->has = false;
        for (int r = 0; r < 3; r++)
            if ((sp->parts[k] & (1 << r)) && sp->run[r].yv[k] < 0) e->has = false;
    }
    for (int r = 0; r < 3; r++) p->c->split_exec += sp->run[r].n_exec;
    sp->n_todo = 0;              /* (a run without them, the distributions' second pass, takes none) */
}

static bool qr_compare_split(const QrErrSplit *sp, QrSplitView *v) {
    v->err_w = v->err_i = v->err_round = v->err_clip = v->clip_frac = v->steps_rms = v->noise_ratio = NAN;
    v->dominant = "";
    v->dom = -1;
    if (!sp->has || sp->n <= 0) return false;
    double n = (double)sp->n;
    v->err_w = sp->sw / n;
    v->err_i = sp->si / n;
    v->err_round = sp->s_round / n;
    v->err_clip = sp->s_clip / n;
    if (sp->parts & QR_SPLIT_O) {
        v->clip_frac = (double)sp->n_clip / n;
        v->steps_rms = sp->steps_med == sp->steps_med ? sp->steps_med : sqrt(sp->su2 / n);   /* su2 NaN: not pooled */
        v->noise_ratio = sp->s_noise > 0 ? sp->s_round / sp->s_noise : NAN;
    }
    double e[4] = { v->err_w, v->err_i, v->err_round, v->err_clip }, best = 0;
    static const char *const names[4] = { "weight", "input", "output_round", "output_clip" };
    for (int j = 0; j < 4; j++) if (e[j] > best) { best = e[j]; v->dom = j; }
    if (v->dom >= 0) v->dominant = names[v->dom];
    return true;
}

static void qr__cmp_plan_free(QrCmpPlan *p) {
    if (!p) return;
    qr__cmp_split_free(p->split);
    if (p->outs) for (int k = 0; k < p->n_outs; k++) qr_tensor_free_data(&p->outs[k]);
    free(p->outs);
    free(p->feed);
    free(p->only);
    free(p->sh_only);
    free(p->ct.first_match);
    free(p->ct.next_match);
    qr__cmp_buf_free(&p->ct.deq);
    qr__cmp_buf_free(&p->sh.deq);
    free(p->sh.first_match);
    free(p->sh.next_match);
    free(p->ct.quant_of);
    free(p->ct.row_of);
    if (p->have_low) { qr_graph_free(&p->low); qr_lower_info_free(&p->info); }
    free(p);
}

/* The shadow run's feeds: readers of each matched twin value see the baseline's (the
 * session's current baseline values; refreshed per sample by qr_compare_ds_run). */
static void qr__cmp_plan_feed(QrCmpPlan *p) {
    const QrSession *s = p->s;
    const QrCompare *c = p->c;
    for (int k = 0; k < c->n; k++) {
        int v = s->vis[c->rows[k].match];
        if (v >= 0) p->feed[v] = NULL;
    }
    for (int k = c->n - 1; k >= 0; k--) {
        int i = c->rows[k].match, v = s->vis[i];
        if (v < 0) continue;
        const QrTensor *tv = &s->tw.g.values[v].t;
        if (s->base[i].data && qr_dtype_is_float(tv->dtype) && tv->numel == s->base[i].numel) p->feed[v] = &s->base[i];
    }
}

/* Rows, taps and run options of a comparison of exec (p->exec set) into p->c. */
static QrStatus qr__cmp_plan(QrCmpPlan *p, QrTapFn extra, void *extra_user) {
    QrSession *s = p->s;
    QrCompare *c = p->c;
    const QrGraph *exec = p->exec;
    memset(c, 0, sizeof *c);
    c->first_drop = -1;
    QR_TRY(qr_session_run_baseline(s));
    c->rows = calloc((size_t)s->m.n + 1, sizeof *c->rows);
    if (!c->rows) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->m.n; i++)
        if (s->m.m[i].a_node >= 0 && s->m.m[i].a_value >= 0) c->rows[c->n++].match = i;
    int nv = QR_MAX(exec->n_values, s->tw.g.n_values);
    QrCmpTap *ct = &p->ct, *sh = &p->sh;
    *ct = (QrCmpTap){ s, c, exec, malloc(((size_t)nv + 1) * sizeof(int)), malloc(((size_t)s->m.n + 1) * sizeof(int)),
                      malloc(((size_t)s->m.n + 1) * sizeof(int)), malloc(((size_t)s->m.n + 1) * sizeof(int)), false,
                      extra, extra_user, NULL, NULL, NULL, NULL, { NULL, 0 } };
    *sh = *ct;               /* the shadow run's: its own value -> match lists */
    sh->first_match = malloc(((size_t)nv + 1) * sizeof(int));
    sh->next_match = malloc(((size_t)s->m.n + 1) * sizeof(int));
    sh->shadow = true;
    sh->g = &s->tw.g;
    p->n_outs = exec->n_outputs;
    p->outs = calloc((size_t)exec->n_outputs + 1, sizeof(QrTensor));
    p->feed = calloc((size_t)s->tw.g.n_values + 1, sizeof *p->feed);
    p->only = calloc((size_t)nv + 1, sizeof *p->only);
    p->sh_only = calloc((size_t)nv + 1, sizeof *p->sh_only);
    if (!ct->first_match || !ct->next_match || !ct->quant_of || !ct->row_of || !sh->first_match || !sh->next_match ||
        !p->outs || !p->feed || !p->only || !p->sh_only)
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < c->n; k++) ct->row_of[c->rows[k].match] = k;
    /* Full run: tap the integer value of a matched quantizer when it has one
     * (in int mode the DequantizeLinear may have been folded away). */
    for (int v = 0; v < nv; v++) ct->first_match[v] = -1;
    for (int k = c->n - 1; k >= 0; k--) {
        int i = c->rows[k].match;
        const QrMatch *mm = &s->m.m[i];
        int v = mm->a_value;
        ct->quant_of[i] = mm->a_is_int ? mm->a_quant : -1;
        if (mm->a_quant >= 0) {
            const QrQuantizer *q = &s->qa.q[mm->a_quant];
            if (q->int_value >= 0 && q->n_scales <= 1 && q->scale_value >= 0 && (q->out_value == v || q->int_value == v)) {
                v = q->int_value;
                ct->quant_of[i] = mm->a_quant;
            }
        }
        ct->next_match[i] = ct->first_match[v];
        ct->first_match[v] = i;
    }
    for (int v = 0; v < nv; v++) p->only[v] = ct->first_match[v] >= 0;
    /* Shadow run on the twin: readers of each matched value see the baseline's. */
    for (int v = 0; v < nv; v++) sh->first_match[v] = -1;
    for (int k = c->n - 1; k >= 0; k--) {
        int i = c->rows[k].match, v = s->vis[i];
        if (v < 0) continue;
        sh->next_match[i] = sh->first_match[v];
        sh->first_match[v] = i;
    }
    qr__cmp_plan_feed(p);
    QR_TRY(qr__cmp_split_plan(p));
    for (int v = 0; v < nv; v++) p->sh_only[v] = sh->first_match[v] >= 0;
    p->o[0] = (QrRunOpts){ .tap = qr__cmp_tap, .tap_user = ct, .tap_only = extra ? NULL : p->only };
    p->o[1] = (QrRunOpts){ .tap = qr__cmp_tap, .tap_user = sh, .feed = p->feed, .tap_only = p->sh_only };
    return QR_OK;
}

static QrStatus qr_compare_prepare(QrSession *s, const char *mode, double cos_threshold, QrTapFn extra, void *extra_user,
                                   bool *extra_done, QrCompare *c, QrCmpPlan **out) {
    *out = NULL;
    if (extra_done) *extra_done = false;
    memset(c, 0, sizeof *c);
    QrCmpPlan *p = calloc(1, sizeof *p);
    if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
    p->s = s;
    p->c = c;
    p->cos_threshold = cos_threshold;
    p->exec = s->a;
    QrStatus st = QR_OK;
    if (mode && strcmp(mode, "sim")) {
        st = qr_lower_graph(s->a, &s->qa, s->int16_integer, &p->low, &p->info);
        p->have_low = st == QR_OK;
        if (st != QR_OK) st = qr_err_wrap(st, "--mode %s: lowering to integer kernels", mode);
        p->both = !strcmp(mode, "both");
        if (!p->both) p->exec = &p->low;
    }
    if (p->exec != s->a) extra = NULL;   /* int mode: the lowering's values are not the analysis model's */
    if (st == QR_OK) st = qr__cmp_plan(p, extra, extra_user);
    if (st == QR_OK) st = qr__cmp_split_begin(p);
    if (st != QR_OK) { qr__cmp_plan_free(p); qr_compare_free(c); return st; }
    if (extra_done) *extra_done = extra != NULL;
    *out = p;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI int64_t qr_compare_steps[2];
#endif

/* The full run, its outputs kept as asked and compared with the baseline's. */
static QrStatus qr__cmp_step_full(QrCmpPlan *p) {
    QR_TRY(qr_run(p->exec, p->s->inputs, &p->o[0], p->outs));
    for (int o = 0; p->s->keep_outs && o < p->s->b->n_outputs && o < p->exec->n_outputs; o++) {
        qr_tensor_free_data(&p->s->keep_outs[o]);
        QR_TRY(qr_tensor_to_f32(&p->outs[o], &p->s->keep_outs[o]));
    }
    QR_TRY(qr_session_compare_outputs(p->s, p->outs, &p->c->out));
    for (int j = 0; p->keep_outs && j < p->exec->n_outputs; j++) {
        p->keep_outs[j] = p->outs[j];
        memset(&p->outs[j], 0, sizeof p->outs[j]);
    }
    return QR_OK;
}

static QrStatus qr_compare_step(QrCmpPlan *p, int k) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_compare_steps[k != 0], 1, __ATOMIC_RELAXED);
#endif
    if (k == 0 && p->pairs_only) return qr_run(p->exec, p->s->inputs, &p->o[0], NULL);   /* no outputs: a prefix */
    if (k == 0) {
        QR_TRY(qr__cmp_step_full(p));
        return qr__cmp_split_take(p);
    }
    QrStatus st = qr_run(&p->s->tw.g, p->s->inputs, &p->o[1], NULL);
    if (st != QR_OK) return qr_err_wrap(st, "shadow run (local error)");
    return qr__cmp_split_take(p);
}

static void qr_compare_first_drop(const QrSession *s, QrCompare *c, double cos_threshold) {
    c->first_drop = -1;
    for (int k = 0; k < c->n; k++)
        if (c->rows[k].has_m && c->rows[k].m.cosine < cos_threshold && qr_match_verified(&s->m.m[c->rows[k].match])) {
            c->first_drop = k;   /* a headline: verified pairs only */
            break;
        }
}

static QrStatus qr_compare_finish(QrCmpPlan *p, QrStatus st) {
    if (!p) return st;
    QrCompare *c = p->c;
    QrSession *s = p->s;
    if (st == QR_OK) qr__cmp_split_end(p);
    if (st == QR_OK) qr_compare_first_drop(s, c, p->cos_threshold);
    if (st == QR_OK && p->both) {
        QrLowerCmp lc = {0};
        st = qr_lower_compare(s->a, &s->qa, &p->low, s->inputs, 0, &lc);
        if (st == QR_OK) qr_compare_attach_lsb(c, s, &lc);
        qr_lower_cmp_free(&lc);
    }
    qr__cmp_plan_free(p);
    if (st != QR_OK) qr_compare_free(c);
    return st;
}

static QrStatus qr__cmp_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    return qr_compare_step(ctx, k);
}

/* ==== data sets: one plan, many inputs ================================================ */

static QrStatus qr_compare_ds_open(QrSession *s, const char *mode, QrCmpHooks *hooks, const QrBaseRunOpts *base, QrCompare *c,
                                   QrCmpPlan **out) {
    if (base) QR_TRY(qr_session_run_baseline_ex(s, base));   /* the first sample's, before the plan reads it */
    QR_TRY(qr_compare_prepare(s, mode, 0.0, hooks ? hooks->tap : NULL, hooks ? hooks->user : NULL,
                              hooks ? &hooks->tap_done : NULL, c, out));
    QrCmpPlan *p = *out;
    if (base) p->base = *base;
    if (hooks && hooks->match) { p->ct.match_fn = hooks->match; p->ct.match_user = hooks->user; }
    if (hooks && hooks->match && hooks->pairs_of && !hooks->tap) {   /* tap only the wanted matches' values */
        p->ct.pairs_of = hooks->pairs_of;
        /* both runs stop at the last wanted value (no outputs, no output metrics: no one reads them) */
        p->pairs_only = true;
        p->base.want = hooks->pairs_of;
        int nv = QR_MAX(p->exec->n_values, s->tw.g.n_values);
        for (int v = 0; v < nv; v++) {
            p->only[v] = false;
            for (int mi = p->ct.first_match[v]; mi >= 0 && !p->only[v]; mi = p->ct.next_match[mi]) p->only[v] = hooks->pairs_of[mi];
        }
    }
    return QR_OK;
}

static QrStatus qr__cmp_ds_run(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs, bool shadow) {
    QrSession *s = p->s;
    QrCompare *c = p->c;
    QR_TRY(qr_session_run_baseline_ex(s, &p->base));      /* this sample's (refilled in place) */
    qr__cmp_plan_feed(p);
    for (int k = 0; k < c->n; k++) {
        QrLayerRow *r = &c->rows[k];
        int match = r->match;
        memset(r, 0, sizeof *r);
        r->match = match;
    }
    memset(&c->out, 0, sizeof c->out);
    c->first_drop = -1;
    for (int j = 0; j < p->n_outs; j++) qr_tensor_free_data(&p->outs[j]);
    p->ct.acc = p->sh.acc = acc;
    p->keep_outs = outs;
    QrStatus st = shadow ? qr__cmp_split_begin(p) : QR_OK;   /* (the split's rows, before the runs take its runs) */
    if (!shadow && p->split) p->split->n_todo = 0;          /* a full run alone takes none of them */
    if (st == QR_OK) st = shadow ? qr_session_jobs(p->s, 2, qr__cmp_job, p, NULL) : qr_compare_step(p, 0);
    if (st == QR_OK && shadow) qr__cmp_split_end(p);
    p->keep_outs = NULL;
    if (st == QR_OK && shadow && p->both) {
        QrLowerCmp lc = {0};
        st = qr_lower_compare(s->a, &s->qa, &p->low, s->inputs, 0, &lc);
        if (st == QR_OK) qr_compare_attach_lsb(c, s, &lc);
        qr_lower_cmp_free(&lc);
    }
    return st;
}

static QrStatus qr_compare_ds_run(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs) { return qr__cmp_ds_run(p, acc, outs, true); }

static QrStatus qr_compare_ds_run_full(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs) {
    return qr__cmp_ds_run(p, acc, outs, false);
}

static void qr_compare_ds_close(QrCmpPlan *p) { qr__cmp_plan_free(p); }

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_compare_run(QrSession *s, const QrGraph *exec, double cos_threshold, QrCompare *c) {
    QrCmpPlan *p = calloc(1, sizeof *p);
    if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
    *p = (QrCmpPlan){ .s = s, .c = c, .cos_threshold = cos_threshold, .exec = exec };
    QrStatus st = qr__cmp_plan(p, NULL, NULL);
    if (st == QR_OK) st = qr__cmp_split_begin(p);
    if (st == QR_OK) st = qr_session_jobs(p->s, 2, qr__cmp_job, p, NULL);   /* the runs two at a time */
    return qr_compare_finish(p, st);
}
#endif

static void qr_compare_free(QrCompare *c) {
    free(c->rows);
    memset(c, 0, sizeof *c);
}

/* %.7f in .txt, %.9g in .csv (docs/REPORT.md); inf/nan spelled out. */
static void qr_compare_num(QrTable *t, int row, int col, double v, bool csv) {
    if (v != v) qr_table_set(t, row, col, "nan");
    else if (isinf(v)) qr_table_set(t, row, col, v > 0 ? "inf" : "-inf");
    else if (csv) qr_table_setf(t, row, col, "%.9g", v);
    else qr_table_setf(t, row, col, "%.7f", v);
}

static QrStatus qr_compare_table(const QrSession *s, const QrCompare *c, bool csv, bool with_lsb, QrTable *t) {
    static const char *const cols[] = {
        "Index", "mod_name", "base_op_type", "analy_op_type", "shape", "quant_dtype", "qscale", "Cosine", "MSE", "L1", "KL",
        "SQNR", "Atol", "Rtol", "base_model_min", "analy_model_min", "base_model_max", "analy_model_max", "base_model_mean",
        "analy_model_mean", "base_model_var", "analy_model_var", "base_tensor", "analy_tensor", "local_Cosine", "local_SQNR",
        "nonfinite", "err_weight", "err_input", "err_output_round", "err_output_clip", "clip_frac", "steps_rms",
        "noise_ratio", "dominant", "lsb_max", "lsb_diff", "lsb_ties" };
    QR_TRY(qr_table_init(t, with_lsb ? QR_ARRAY_LEN(cols) : QR_ARRAY_LEN(cols) - 3, cols));
    for (int k = 0; k < c->n; k++) {
        const QrLayerRow *r = &c->rows[k];
        const QrMatch *mm = &s->m.m[r->match];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        const QrTensor *bt = &s->b->values[mm->b_value].t;
        char shape[128] = "";
        size_t o = 0;
        for (int d = 0; d < bt->rank && o < sizeof shape; d++)
            o += (size_t)snprintf(shape + o, sizeof shape - o, "%s%lld", d ? "x" : "", (long long)bt->dims[d]);
        qr_table_setf(t, row, 0, "%d", k);
        if (s->m.verified_run && !qr_match_verified(mm))     /* marked in every table that uses it */
            qr_table_setf(t, row, 1, "%s [UNVERIFIED pair]", s->b->nodes[mm->b_node].name);
        else qr_table_set(t, row, 1, s->b->nodes[mm->b_node].name);
        qr_table_set(t, row, 2, s->b->nodes[mm->b_node].op_type);
        qr_table_set(t, row, 3, s->a->nodes[mm->a_node].op_type);
        qr_table_set(t, row, 4, shape);
        if (mm->a_quant >= 0) {
            const char *dt;
            const char *sc = qr_compare_describe_quantizer(&t->arena, s->a, &s->qa.q[mm->a_quant], &dt);
            qr_table_set(t, row, 5, dt);
            qr_table_set(t, row, 6, sc);
        }
        const QrMetrics *m = &r->m;
        if (r->has_m) {
            double v[] = { m->cosine, m->mse, m->l1, m->kl, m->sqnr, m->atol, m->rtol, m->x_min, m->y_min, m->x_max,
                           m->y_max, m->x_mean, m->y_mean, m->x_var, m->y_var };
            for (int j = 0; j < QR_ARRAY_LEN(v); j++) qr_compare_num(t, row, 7 + j, v[j], csv);
        }
        qr_table_set(t, row, 22, s->b->values[mm->b_value].name);
        qr_table_set(t, row, 23, s->a->values[mm->a_value].name);
        if (r->has_local) {
            qr_compare_num(t, row, 24, r->local.cosine, csv);
            qr_compare_num(t, row, 25, r->local.sqnr, csv);
        }
        if (r->has_m) qr_table_setf(t, row, 26, "%lld", (long long)m->n_nonfinite);
        QrSplitView sv;
        if (qr_compare_split(&r->sp, &sv)) {
            double v[] = { sv.err_w, sv.err_i, sv.err_round, sv.err_clip, sv.clip_frac, sv.steps_rms, sv.noise_ratio };
            for (int j = 0; j < QR_ARRAY_LEN(v); j++)
                if (v[j] == v[j]) qr_compare_num(t, row, 27 + j, v[j], csv);   /* NaN: not defined (no output quantizer) */
            qr_table_set(t, row, 34, sv.dominant);
        }
        if (with_lsb && r->has_lsb) {
            qr_table_setf(t, row, 35, "%lld", (long long)r->lsb_max);
            qr_table_setf(t, row, 36, "%lld/%lld", (long long)r->lsb_diff, (long long)r->lsb_n);
            qr_table_setf(t, row, 37, "%lld", (long long)r->lsb_ties);
        }
    }
    return QR_OK;
}

static QrStatus qr_compare_write(const QrSession *s, const QrCompare *c, const char *dir) {
    bool with_lsb = false;
    for (int k = 0; k < c->n; k++) with_lsb |= c->rows[k].has_lsb;
    char *txt = NULL, *csv = NULL;
    size_t tl = 0, tc = 0, cl = 0, cc = 0;
    QrTable tt = {0}, tcsv = {0};
    QrStatus st = qr_compare_table(s, c, false, with_lsb, &tt);
    if (st == QR_OK) st = qr_compare_table(s, c, true, with_lsb, &tcsv);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tc, "Baseline: %s\nAnalysis: %s\nBaseline form: %s\nModel output: Cosine %.7f, SQNR "
                           "%.4f dB, L1 %.7g, MSE %.7g, KL %.7g\n\n", s->b->path, s->a->path, qr_session_baseline_form(s),
                           c->out.cosine, c->out.sqnr, c->out.l1, c->out.mse, c->out.kl);
    if (st == QR_OK) st = qr_table_render_txt(&tt, NULL, NULL, &txt, &tl, &tc);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tc, "\nlocal_*: each layer re-run on the baseline's inputs (its own error, without "
                           "what it inherits from upstream layers).\nerr_weight .. dominant: %s\n", s->no_error_split
                           ? "empty: the error split was not measured (--no-error-split)."
                           : "that own error measured in parts, the layer re-run with only its weight / input / output "
                             "quantizers on (MSE; output split into clipped and rounded elements; docs/REPORT.md \"Error split\").");
    if (st == QR_OK) st = qr_table_render_csv(&tcsv, NULL, &csv, &cl, &cc);
    if (st == QR_OK) {
        QrArena a = {0};
        st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_COMPARE ".txt", dir), txt, tl);
        if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_COMPARE ".csv", dir), csv, cl);
        qr_arena_free(&a);
    }
    qr_table_free(&tt);
    qr_table_free(&tcsv);
    free(txt);
    free(csv);
    return st;
}

static void qr_compare_attach_lsb(QrCompare *c, const QrSession *s, const QrLowerCmp *lc) {
    for (int k = 0; k < c->n; k++) {
        const QrMatch *mm = &s->m.m[c->rows[k].match];
        if (mm->a_quant < 0) continue;
        int iv = s->qa.q[mm->a_quant].int_value;
        for (int l = 0; l < lc->n; l++) {
            const QrLowerLayerCmp *L = &lc->layers[l];
            if (L->value != iv || !L->seen_int || !L->seen_sim) continue;
            QrLayerRow *r = &c->rows[k];
            r->has_lsb = true;
            r->lsb_n = L->n;
            r->lsb_diff = L->n_diff;
            r->lsb_max = L->max_lsb;
            r->lsb_ties = L->n_tie;
        }
    }
}

static QrStatus qr_compare_mode(QrSession *s, const char *mode, double cos_threshold, QrCompare *c) {
    return qr_compare_mode_ex(s, mode, cos_threshold, NULL, NULL, NULL, c);
}

static QrStatus qr_compare_mode_ex(QrSession *s, const char *mode, double cos_threshold, QrTapFn extra, void *extra_user,
                                   bool *extra_done, QrCompare *c) {
    QrCmpPlan *p;
    QR_TRY(qr_compare_prepare(s, mode, cos_threshold, extra, extra_user, extra_done, c, &p));
    return qr_compare_finish(p, qr_session_jobs(p->s, 2, qr__cmp_job, p, NULL));
}
