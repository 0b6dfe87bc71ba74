/* analysis/stats — implementation. See stats.h. */

static void qr_stats_init(QrStats *s) {
    memset(s, 0, sizeof *s);
    s->min = INFINITY;
    s->max = -INFINITY;
}

static void qr_stats_merge(QrStats *a, const QrStats *b) {
    a->n_nan += b->n_nan;
    a->n_posinf += b->n_posinf;
    a->n_neginf += b->n_neginf;
    if (b->n == 0) return;
    if (a->n == 0) { int64_t nn = a->n_nan, np = a->n_posinf, ng = a->n_neginf; *a = *b;
                     a->n_nan = nn; a->n_posinf = np; a->n_neginf = ng; return; }
    double n = (double)(a->n + b->n), d = b->mean - a->mean;
    a->m2 += b->m2 + d * d * (double)a->n * (double)b->n / n;
    a->mean += d * (double)b->n / n;
    a->n += b->n;
    a->min = QR_MIN(a->min, b->min);
    a->max = QR_MAX(a->max, b->max);
}

/* ==== pair statistics over the thread pool ======================================== */

/* Blocks per round (the per-block results sit on the stack until they are merged) and per
 * task (a task is ~4 blocks' worth of work: 16K elements, well above the claim's cost). */
enum { QR__STATS_ROUND = 128, QR__STATS_TASK = 4 };

typedef struct QrStatsParJob {
    const float *x, *y;
    int64_t n;                 /* elements from x (and y) of this round */
    QrF32PairStats *b;         /* per block of the round */
} QrStatsParJob;

#ifdef QR_TESTING
static _Atomic int64_t qr__stats_par_tasks;   /* tasks run by the pooled path (tests: it did run) */
#endif

static void qr__stats_pair_task(void *ctx, int64_t task, int tid) {
    const QrStatsParJob *j = ctx;
    QR_UNUSED(tid);
#ifdef QR_TESTING
    qr__stats_par_tasks++;
#endif
    if (!j->y) {               /* one array: its blocks' moments in one call (a level may run them side by side) */
        const int64_t k0 = task * QR__STATS_TASK, i0 = k0 * QR_KERN_STATS_BLOCK;
        QrF32Moments m[QR__STATS_TASK];
        qr_kern.f32_moment_blocks(j->x + i0, QR_MIN((int64_t)QR__STATS_TASK * QR_KERN_STATS_BLOCK, j->n - i0), m);
        for (int64_t k = k0; k < k0 + QR__STATS_TASK && k * QR_KERN_STATS_BLOCK < j->n; k++) {
            qr_f32_pair_stats_init(&j->b[k]);
            j->b[k].x = m[k - k0];
        }
        return;
    }
    for (int64_t k = task * QR__STATS_TASK; k < (task + 1) * QR__STATS_TASK; k++) {
        int64_t i0 = k * QR_KERN_STATS_BLOCK;
        if (i0 >= j->n) break;
        /* one block into an empty accumulator: the block's own values (merging into an empty
         * one copies the moments and adds the sums to +0, which no later merge tells apart) */
        qr_f32_pair_stats_init(&j->b[k]);
        qr_kern.f32_pair_stats(j->x + i0, j->y ? j->y + i0 : NULL, QR_MIN(QR_KERN_STATS_BLOCK, j->n - i0), &j->b[k]);
    }
}

static void qr_stats_pair(const float *x, const float *y, int64_t n, QrF32PairStats *s) {
    qr_kern_init();                            /* idempotent: callers need not have run a model */
    if (n < QR_STATS_PAR_MIN || qr_pool_threads() < 2) {
        qr_kern.f32_pair_stats(x, y, n, s);
        return;
    }
    QrF32PairStats b[QR__STATS_ROUND];
    for (int64_t r0 = 0; r0 < n; r0 += (int64_t)QR__STATS_ROUND * QR_KERN_STATS_BLOCK) {
        QrStatsParJob j = { x + r0, y ? y + r0 : NULL, QR_MIN((int64_t)QR__STATS_ROUND * QR_KERN_STATS_BLOCK, n - r0), b };
        int64_t nb = (j.n + QR_KERN_STATS_BLOCK - 1) / QR_KERN_STATS_BLOCK;
        qr_pool_for((nb + QR__STATS_TASK - 1) / QR__STATS_TASK, qr__stats_pair_task, &j);
        for (int64_t k = 0; k < nb; k++) qr_f32_pair_stats_merge(s, &b[k]);   /* the one call's order */
    }
}

/* One block [base, end) of 8-bit integers (sgn: int8, else uint8; at most 4096 of them) into b
 * (fresh): min, max, mean = S1 / n and m2 = (n·S2 − S1²) / n from the block's exact integer sums
 * S1 = Σv and S2 = Σv² (qr_kern.q8_stats; n·S2 and S1² < 2^41), so m2 is Σ(v − mean)² exactly,
 * rounded once — where the generic loop below adds rounded squares in order. */
static inline void qr__stats_bytes(QrStats *b, const void *p, bool sgn, int64_t base, int64_t end) {
    QrQ8Stats q;
    const int64_t n = end - base;
    qr_kern.q8_stats((const uint8_t *)p + base, sgn, n, &q);
    b->n = n;
    b->min = q.mn;
    b->max = q.mx;
    b->mean = (double)q.s1 / (double)n;
    b->m2 = (double)(n * q.s2 - q.s1 * q.s1) / (double)n;
}

/* Blocks of 4096 values are summed exactly in double, then merged (Chan). */
static void qr_stats_tensor(QrStats *s, const QrTensor *t) {
    if (t->dtype == QR_DT_F32 && t->numel > 0) {   /* the SIMD moments kernel: same fields, same blocking */
        QrF32PairStats ps;
        qr_f32_pair_stats_init(&ps);
        qr_stats_pair(t->data, NULL, t->numel, &ps);
        QrStats b = { ps.x.n, ps.x.n_nan, ps.x.n_posinf, ps.x.n_neginf, ps.x.min, ps.x.max, ps.x.mean, ps.x.m2 };
        if (!b.n) b.min = INFINITY, b.max = -INFINITY;
        qr_stats_merge(s, &b);
        return;
    }
    enum { BLOCK = 4096 };
    const bool bytes = t->dtype == QR_DT_S8 || t->dtype == QR_DT_U8;
    if (bytes) qr_kern_init();                 /* idempotent: callers need not have run a model */
    for (int64_t base = 0; base < t->numel; base += BLOCK) {
        int64_t end = QR_MIN(t->numel, base + BLOCK);
        QrStats b;
        qr_stats_init(&b);
        if (bytes) {
            qr__stats_bytes(&b, t->data, t->dtype == QR_DT_S8, base, end);
            qr_stats_merge(s, &b);
            continue;
        }
        double sum = 0;
        for (int64_t i = base; i < end; i++) {
            double v = qr_tensor_get_f64(t, i);
            if (v != v) { b.n_nan++; continue; }
            if (v == INFINITY) { b.n_posinf++; continue; }
            if (v == -INFINITY) { b.n_neginf++; continue; }
            b.n++;
            sum += v;
            if (v < b.min) b.min = v;
            if (v > b.max) b.max = v;
        }
        if (b.n) {
            b.mean = sum / (double)b.n;
            for (int64_t i = base; i < end; i++) {
                double v = qr_tensor_get_f64(t, i);
                if (isfinite(v)) b.m2 += (v - b.mean) * (v - b.mean);
            }
        }
        qr_stats_merge(s, &b);
    }
}

static double qr_stats_var(const QrStats *s) { return s->n ? s->m2 / (double)s->n : NAN; }

/* ==== profile ===================================================================== */

typedef struct QrProfileRow {
    int node;            /* topological index */
    int layer;           /* row group number (layers shown, in order) */
    int value;
    const char *attr;    /* input / output / weight / bias */
    QrStats st;
    QrDType dtype;
    int rank;
    int64_t dims[QR_MAX_RANK];
} QrProfileRow;

static QrStatus qr_stats_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrStatsCollect *c = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    qr_stats_init(&c->stats[value]);
    qr_stats_tensor(&c->stats[value], t);
    c->seen[value] = true;
    return QR_OK;
}

typedef struct QrStatsInitsJob { const QrGraph *g; QrStats *stats; const int *vals; } QrStatsInitsJob;

static void qr__stats_inits_task(void *ctx, int64_t task, int tid) {
    const QrStatsInitsJob *j = ctx;
    QR_UNUSED(tid);
    int v = j->vals[task];
    qr_stats_init(&j->stats[v]);
    qr_stats_tensor(&j->stats[v], &j->g->values[v].t);
}

/* The initializers' statistics, one task each (each its own value's: the same bits on any
 * thread count), when they hold QR_STATS_PAR_MIN elements or more together. */
static void qr_stats_inits(const QrGraph *g, QrStats *stats, bool *seen) {
    int *vals = malloc(((size_t)g->n_values + 1) * sizeof *vals), nv = 0;
    int64_t total = 0;
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].is_init && !seen[v]) {
            if (vals) vals[nv++] = v;
            total += g->values[v].t.numel;
        }
    if (vals && total >= QR_STATS_PAR_MIN && qr_pool_threads() > 1) {
        QrStatsInitsJob j = { g, stats, vals };
        qr_kern_init();                        /* before the tasks: they only read the table */
        qr_pool_for(nv, qr__stats_inits_task, &j);
        for (int k = 0; k < nv; k++) seen[vals[k]] = true;
        free(vals);
        return;
    }
    free(vals);
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].is_init && !seen[v]) {
            qr_stats_init(&stats[v]);
            qr_stats_tensor(&stats[v], &g->values[v].t);
            seen[v] = true;
        }
}

static QrStatus qr_stats_collect(const QrGraph *g, const QrTensor *inputs, QrStats *stats, bool *seen) {
    QrStatsCollect c = { stats, seen };
    QrRunOpts opts = { .tap = qr_stats_tap, .tap_user = &c };
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = qr_run(g, inputs, &opts, outs);
    for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
    free(outs);
    if (st == QR_OK) qr_stats_inits(g, stats, seen);
    return st;
}

/* Which initializer inputs are biases (by op and input position). */
static bool qr__stats_is_bias_input(const QrNode *n, int k) {
    const char *op = n->op_type;
    if (k == 2 && (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "Gemm"))) return true;
    if (k == 8 && !strcmp(op, "QLinearConv")) return true;
    if (!strcmp(op, "BatchNormalization") || !strcmp(op, "LayerNormalization") ||
        !strcmp(op, "InstanceNormalization")) return k == 2;
    return false;
}

static void qr__stats_fmt_stat(char *buf, size_t n, double v) {
    if (v != v) snprintf(buf, n, "nan");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, "%.7f", v);
}

/* Whether the comma-separated list has an entry e with match(e). */
static bool qr__stats_pf_list_any(const char *list, const char *name, bool prefix) {
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n) {
            if (prefix && (!strncmp(name, p, n) || (name[0] == '/' && !strncmp(name + 1, p, n)))) return true;
            if (!prefix && strlen(name) == n && !strncasecmp(name, p, n)) return true;
        }
        p += n;
        if (*p == ',') p++;
    }
    return false;
}

static bool qr__stats_pf_keep(const QrProfileSel *sel, const QrNode *n) {
    if (!sel) return true;
    if (sel->prefixes && !qr__stats_pf_list_any(sel->prefixes, n->name, true)) return false;
    if (sel->types && !qr__stats_pf_list_any(sel->types, n->op_type, false)) return false;
    return true;
}

static QrStatus qr_profile_sel_check(const QrGraph *g, const QrProfileSel *sel) {
    for (int pass = 0; pass < 2; pass++) {
        const char *list = pass ? sel->types : sel->prefixes;
        for (const char *p = list; p && *p;) {
            size_t n = strcspn(p, ",");
            char one[512];
            snprintf(one, sizeof one, "%.*s", (int)n, p);
            bool hit = false;
            for (int i = 0; i < g->n_nodes && !hit && n; i++)
                hit = qr__stats_pf_list_any(one, pass ? g->nodes[i].op_type : g->nodes[i].name, !pass);
            if (n && !hit) {
                const char **c = malloc(((size_t)g->n_nodes + 1) * sizeof *c);
                char sug[512] = "";
                if (c) {
                    for (int i = 0; i < g->n_nodes; i++) c[i] = pass ? g->nodes[i].op_type : g->nodes[i].name;
                    qr_str_suggest(one, c, g->n_nodes, sug, sizeof sug);
                    free(c);
                }
                return qr_errf(QR_ERR_INVALID, "%s '%s': no node of %s %s%s", pass ? "--types" : "--prefixes", one,
                               g->path ? g->path : "the model", pass ? "has this op type" : "has a name starting with it", sug);
            }
            p += n;
            if (*p == ',') p++;
        }
    }
    return QR_OK;
}

static QrStatus qr_profile_write(const QrGraph *g, const QrTensor *inputs, const QrStats *stats, const bool *seen_in,
                                 const char *dir, const char *prefix, int *n_nonfinite) {
    return qr_profile_write_sel(g, inputs, stats, seen_in, dir, prefix, NULL, n_nonfinite);
}

static QrStatus qr_profile_write_sel(const QrGraph *g, const QrTensor *inputs, const QrStats *stats, const bool *seen_in,
                                     const char *dir, const char *prefix, const QrProfileSel *sel, int *n_nonfinite) {
    return qr_profile_write_ex(g, inputs, stats, seen_in, dir, prefix, sel, NULL, n_nonfinite);
}

static QrStatus qr_profile_write_ex(const QrGraph *g, const QrTensor *inputs, const QrStats *stats, const bool *seen_in,
                                   const char *dir, const char *prefix, const QrProfileSel *sel, const char *head,
                                   int *n_nonfinite) {
    QrStats *own_stats = stats ? NULL : calloc((size_t)g->n_values + 1, sizeof *own_stats);
    bool *own_seen = stats ? NULL : calloc((size_t)g->n_values + 1, sizeof *own_seen);
    const QrStats *val_stats = stats ? stats : own_stats;
    const bool *seen = stats ? seen_in : own_seen;
    QrProfileRow *rows = NULL;
    int *order = NULL;
    double *range = NULL;
    char *txt = NULL, *csv = NULL;
    size_t tl = 0, tc = 0, cl = 0, cc = 0;
    QrTable tab = {0};
    QrStatus st = !val_stats || !seen ? qr_errf(QR_ERR_NOMEM, "out of memory")
                : stats ? QR_OK : qr_stats_collect(g, inputs, own_stats, own_seen);
    int n_rows = 0, cap = 0, layer = -1;
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        /* Constants and shape arithmetic on constants are not layers. */
        bool all_folded = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && !g->values[n->out[k]].is_const) all_folded = false;
        if (!strcmp(n->op_type, "Constant") || all_folded) continue;
        layer++;
        if (!qr__stats_pf_keep(sel, n)) continue;
        for (int pass = 0; pass < 2; pass++) {
            int cnt = pass ? n->n_out : n->n_in;
            for (int k = 0; k < cnt; k++) {
                int v = pass ? n->out[k] : n->in[k];
                if (v < 0 || !seen[v]) continue;
                const QrValue *val = &g->values[v];
                const QrTensor *t = &val->t;
                const char *attr = pass ? "output" : val->is_init ? (qr__stats_is_bias_input(n, k) ? "bias" : "weight") : "input";
                if (val->is_init && (t->dtype == QR_DT_S64 || (t->dtype == QR_DT_S32 && strcmp(attr, "bias"))))
                    continue;   /* shape/axes parameters, not data */
                if (!pass && val->is_const && !val->is_init) {
                    if (!qr_dtype_is_float(t->dtype) || t->numel <= 8) continue;   /* scalar parameters (Clip bounds, scales) */
                    attr = "weight";
                }
                if (n_rows == cap) {
                    cap = cap ? cap * 2 : 256;
                    QrProfileRow *nr = realloc(rows, (size_t)cap * sizeof *rows);
                    if (!nr) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
                    rows = nr;
                }
                QrProfileRow *r = &rows[n_rows++];
                r->node = oi;
                r->layer = layer;
                r->value = v;
                r->attr = attr;
                r->st = val_stats[v];
                r->dtype = t->dtype;
                r->rank = t->rank;
                memcpy(r->dims, t->dims, sizeof r->dims);
            }
        }
    }
    static const char *const cols[] = { "Index", "Op Name", "Mod Name", "Attr", "Dtype", "Scale", "Min", "Max", "Mean",
                                  "Var", "Shape", "Tensor", "NaN", "Inf" };
    if (st == QR_OK) st = qr_table_init(&tab, QR_ARRAY_LEN(cols), cols);
    /* Scale column: the quantizer whose integer or dequantized value a row shows. */
    QrQuantTable qt = {0};
    if (st == QR_OK) st = qr_qtable_build(g, &qt);
    int nonfinite = 0;
    for (int i = 0; st == QR_OK && i < n_rows; i++) {
        const QrProfileRow *r = &rows[i];
        const QrNode *n = &g->nodes[g->order[r->node]];
        int row = 0;
        char b[64], sh[256];
        st = qr_table_add_row(&tab, &row);
        if (st != QR_OK) break;
        qr_table_setf(&tab, row, 0, "%d", r->layer);
        qr_table_set(&tab, row, 1, n->op_type);
        qr_table_set(&tab, row, 2, n->name);
        qr_table_set(&tab, row, 3, r->attr);
        qr_table_set(&tab, row, 4, qr_dtype_name(r->dtype));
        int qi = qt.by_value ? qt.by_value[r->value] : -1;
        if (qi >= 0 && qt.q[qi].n_scales == 1) qr_table_setf(&tab, row, 5, "%.7g", qt.q[qi].scale_min);
        else if (qi >= 0 && qt.q[qi].n_scales > 1)
            qr_table_setf(&tab, row, 5, "%.3g..%.3g (%lld)", qt.q[qi].scale_min, qt.q[qi].scale_max, (long long)qt.q[qi].n_scales);
        qr__stats_fmt_stat(b, sizeof b, r->st.n ? r->st.min : NAN); qr_table_set(&tab, row, 6, b);
        qr__stats_fmt_stat(b, sizeof b, r->st.n ? r->st.max : NAN); qr_table_set(&tab, row, 7, b);
        qr__stats_fmt_stat(b, sizeof b, r->st.n ? r->st.mean : NAN); qr_table_set(&tab, row, 8, b);
        qr__stats_fmt_stat(b, sizeof b, qr_stats_var(&r->st)); qr_table_set(&tab, row, 9, b);
        qr_table_set(&tab, row, 10, qr_shape_str_brackets(sh, sizeof sh, r->rank, r->dims));
        qr_table_set(&tab, row, 11, g->values[r->value].name);
        qr_table_setf(&tab, row, 12, "%lld", (long long)r->st.n_nan);
        st = qr_table_setf(&tab, row, 13, "%lld", (long long)(r->st.n_posinf + r->st.n_neginf));
        if (r->st.n_nan || r->st.n_posinf || r->st.n_neginf) nonfinite++;
    }
    /* Second table: by range (max - min), descending; rows without finite values last. */
    order = malloc((size_t)(n_rows + 1) * sizeof *order);
    range = malloc((size_t)(n_rows + 1) * sizeof *range);
    if (st == QR_OK && (!order || !range)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int i = 0; i < n_rows; i++) {
            order[i] = i;
            range[i] = rows[i].st.n ? rows[i].st.max - rows[i].st.min : -1;
        }
        for (int i = 1; i < n_rows; i++) {          /* stable insertion sort */
            int o = order[i], j = i;
            while (j > 0 && range[order[j - 1]] < range[o]) { order[j] = order[j - 1]; j--; }
            order[j] = o;
        }
    }
    if (st == QR_OK && head) st = qr_buf_printf(&txt, &tl, &tc, "%s", head);
    if (st == QR_OK) st = qr_table_render_txt(&tab, NULL, NULL, &txt, &tl, &tc);
    if (st == QR_OK) st = qr_buf_printf(&txt, &tl, &tc, "\nStatistics sorted by range (max - min), descending:\n");
    if (st == QR_OK) st = qr_table_render_txt(&tab, NULL, order, &txt, &tl, &tc);
    if (st == QR_OK && nonfinite) {
        st = qr_buf_printf(&txt, &tl, &tc, "\nWARNING: %d row%s contain NaN or Inf values; Min/Max/Mean/Var are over "
                           "the finite values only:\n", nonfinite, nonfinite == 1 ? "" : "s");
        for (int i = 0; st == QR_OK && i < n_rows; i++)
            if (rows[i].st.n_nan || rows[i].st.n_posinf || rows[i].st.n_neginf)
                st = qr_buf_printf(&txt, &tl, &tc, "  %s '%s' of node '%s': %lld NaN, %lld +Inf, %lld -Inf\n",
                                   rows[i].attr, g->values[rows[i].value].name, g->nodes[g->order[rows[i].node]].name,
                                   (long long)rows[i].st.n_nan, (long long)rows[i].st.n_posinf,
                                   (long long)rows[i].st.n_neginf);
    }
    if (st == QR_OK) st = qr_table_render_csv(&tab, NULL, &csv, &cl, &cc);
    if (st == QR_OK) {
        QrArena a = {0};
        char *pt = qr_arena_printf(&a, "%s/%s" QR_BF_STATISTIC ".txt", dir, prefix);
        char *pc = qr_arena_printf(&a, "%s/%s" QR_BF_STATISTIC ".csv", dir, prefix);
        st = qr_file_write_atomic(pt, txt, tl);
        if (st == QR_OK) st = qr_file_write_atomic(pc, csv, cl);
        qr_arena_free(&a);
    }
    if (n_nonfinite) *n_nonfinite = nonfinite;
    qr_table_free(&tab);
    qr_qtable_free(&qt);
    free(txt);
    free(csv);
    free(order);
    free(range);
    free(rows);
    free(own_stats);
    free(own_seen);
    return st;
}
