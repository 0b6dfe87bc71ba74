/* tests/incr — the shortcuts that make runall fast give the bits of the plain computations:
 * cumulative error and what-if from the all-on reference (cone re-runs, recomputing what the
 * reference did not keep, the memo of output metrics) against whole-graph runs, the
 * sensitivity reference run done ahead, baseline values dropped and brought back, tap masks,
 * the runs that serve two analyses (baseline statistics, compare + analysis statistics, the
 * equivalence check on the session's baseline values), parallel jobs, the selection-based
 * box statistics, the Rtol filter, the weight comparison's run-wise loop and the integer
 * statistics path, each against a plain implementation written here. */

static const char *const qt_incr_pairs[] = { "qat_fakequant", "ort_qdq", "qoperator", "int16_mixed", "integer_ops", "culprit" };

/* Bitwise equality of metrics (NaN == NaN when the bits are the same). */
static bool qt_incr_same_m(const QrMetrics *a, const QrMetrics *b) { return !memcmp(a, b, sizeof *a); }

/* ==== cumulative error and what-if: incremental == whole-graph runs =================== */

static QrStatus qt_incr_analyses(const char *pair, bool full, bool off_one, QrSensResult *sr, QrAccum *acc, QrWhatIf *wi) {
    QtPair p;
    QrSession se;
    QrStatus st = qt_session_pair(pair, &p, &se);
    se.no_incremental = full;
    QrSensOpts so = { .off_one = off_one, .metric = QR_METRIC_L1 };
    int topk[] = { 1, 2, 3 }, ks[] = { 1, 2, 4 };
    if (st == QR_OK) st = qr_sens_run(&se, &so, sr);
    if (st == QR_OK) st = qr_accum_run(&se, sr, topk, 3, off_one ? QR_METRIC_KL : QR_METRIC_COSINE, acc);
    if (st == QR_OK) st = qr_whatif_run(&se, sr, ks, 3, 0.9999999, wi);
    if (se.b) qr_session_close(&se);
    qt_pair_free(&p);
    return st;
}

static void qt_incr_accum_whatif_pair(const char *pair, bool off_one) {
    char name[128], msg[256] = "";
    snprintf(name, sizeof name, "incr/accum_whatif/%s/%s", pair, off_one ? "off-one" : "one-on");
    QrSensResult s1 = {0}, s2 = {0};
    QrAccum a1 = {0}, a2 = {0};
    QrWhatIf w1 = {0}, w2 = {0};
    QrStatus st = qt_incr_analyses(pair, false, off_one, &s1, &a1, &w1);
    if (st == QR_OK) st = qt_incr_analyses(pair, true, off_one, &s2, &a2, &w2);
    bool ok = st == QR_OK && a1.n_settings == a2.n_settings && a1.n_settings > 3 && w1.n_steps == w2.n_steps && w1.n_steps > 0;
    for (int k = 0; ok && k < a1.n_settings; k++)   /* (the per-match table: test_incr_accum_table) */
        if (!qt_incr_same_m(&a1.out[k], &a2.out[k])) { ok = false; snprintf(msg, sizeof msg, "setting %s: output", a1.setting[k]); }
    if (ok && !qt_incr_same_m(&w1.as_is, &w2.as_is)) { ok = false; snprintf(msg, sizeof msg, "what-if as is"); }
    for (int t = 0; ok && t < w1.n_steps; t++)
        if (w1.steps[t].k != w2.steps[t].k || !qt_incr_same_m(&w1.steps[t].int16, &w2.steps[t].int16) ||
            !qt_incr_same_m(&w1.steps[t].fp, &w2.steps[t].fp)) {
            ok = false;
            snprintf(msg, sizeof msg, "what-if step k=%d", w1.steps[t].k);
        }
    qt_record(name, ok, "%s %s", st == QR_OK ? "" : qr_err_msg(), msg);
    qr_whatif_free(&w1);
    qr_whatif_free(&w2);
    qr_accum_free(&a1);
    qr_accum_free(&a2);
    qr_sens_free(&s1);
    qr_sens_free(&s2);
}

/* The per-match table too (needs the session for the number of matches). */
static void test_incr_accum_table(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        QtPair p;
        QrSession se;
        QrSensResult sr = {0};
        QrAccum inc = {0}, full = {0};
        int topk[] = { 1, 3 };
        QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
        QrSensOpts so = { .metric = QR_METRIC_L1 };
        QrStatus st = qr_sens_run(&se, &so, &sr);
        if (st == QR_OK) st = qr_accum_run(&se, &sr, topk, 2, QR_METRIC_SQNR, &inc);
        se.no_incremental = true;
        if (st == QR_OK) st = qr_accum_run(&se, &sr, topk, 2, QR_METRIC_SQNR, &full);
        bool same = st == QR_OK && inc.n_settings == full.n_settings &&
                    !memcmp(inc.val, full.val, (size_t)se.m.n * (size_t)inc.n_settings * sizeof(double));
        int nm = se.m.n;
        qr_accum_free(&inc);
        qr_accum_free(&full);
        qr_sens_free(&sr);
        qr_session_close(&se);
        qt_pair_free(&p);
        QT_OK(st);
        QT_CHECKF(same, "%s: per-match cumulative error differs (%d matches)", qt_incr_pairs[pi], nm);
    }
}

/* ==== re-runs that recompute what the reference did not keep ========================== */

/* Every quantizer off, and each weight quantizer off alone, from a reference that kept
 * nothing (or only every other value): outputs equal a whole-graph run. */
static void test_incr_closure(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        QtPair p;
        QrSession se;
        QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
        const QrGraph *g = &se.tw.g;
        QrStatus st = qr_session_ref(&se, NULL, NULL, NULL, NULL);
        bool *mask = malloc((size_t)se.qt.n + 1);
        QrOverrides ov = {0};
        if (st == QR_OK) st = mask ? qr_session_overrides_alloc(&se, &ov) : qr_errf(QR_ERR_NOMEM, "oom");
        QrTensor *o1 = calloc((size_t)g->n_outputs + 1, sizeof *o1), *o2 = calloc((size_t)g->n_outputs + 1, sizeof *o2);
        bool same = true;
        int cases = 0;
        char msg[256] = "";
        for (int drop = 0; drop < 2 && st == QR_OK; drop++) {
            /* drop 0: every other kept value; 1: everything the reference kept */
            for (int v = 0; v < g->n_values; v++)
                if (se.ref->vals[v].data && (drop || v % 2)) qr_tensor_free_data(&se.ref->vals[v]);
            for (int c = -1; c < se.qt.n && st == QR_OK; c++) {
                if (c >= 0 && se.qt.q[c].kind != QR_QK_WEIGHT) continue;
                for (int i = 0; i < se.qt.n; i++) mask[i] = c >= 0 && i != c;
                qr_session_overrides(&se, mask, &ov);
                QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
                st = qr_session_run_inc(&se, g, &ro, o1, NULL);
                if (st == QR_OK) st = qr_run(g, se.inputs, &ro, o2);
                for (int k = 0; st == QR_OK && k < g->n_outputs; k++)
                    if (qr_tensor_nbytes(&o1[k]) != qr_tensor_nbytes(&o2[k]) || memcmp(o1[k].data, o2[k].data, qr_tensor_nbytes(&o1[k]))) {
                        if (same) snprintf(msg, sizeof msg, "drop %d, quantizer %d: output %d differs", drop, c, k);
                        same = false;
                    }
                for (int k = 0; k < g->n_outputs; k++) { qr_tensor_free_data(&o1[k]); qr_tensor_free_data(&o2[k]); }
                cases++;
            }
        }
        free(o1);
        free(o2);
        free(mask);
        qr_session_overrides_free(&ov);
        qr_session_close(&se);
        qt_pair_free(&p);
        QT_OK(st);
        QT_CHECKF(same && cases > 2, "%s: %s (%d cases)", qt_incr_pairs[pi], msg, cases);
    }
}

/* ==== what the all-on reference keeps ================================================ */

/* The reference keeps (qr__se_ref_cones) only values some quantizer's cone reads from outside, of
 * those the plain rule (qr__se_ref_needed: read with another non-constant input, by a QuantizeLinear,
 * or a graph output) keeps: never more bytes than the plain rule, fewer on at least one pair (the
 * memory); disabling any one quantizer, the incremental run (which recomputes what the reference
 * dropped) gives the whole-graph run's outputs bit for bit; the nodes it recomputes outside the
 * quantizer's cone (computed here) are counted and reported with -v. */
static void test_incr_ref_kept(void) {
    int fewer = 0;
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        QtPair p;
        QrSession se;
        QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
        const QrGraph *g = &se.tw.g;
        QrStatus st = qr_session_ref(&se, NULL, NULL, NULL, NULL);
        int nn = g->n_nodes, cases = 0, bad_q = -1, bad_node = -1;
        size_t kept = 0, plain = 0;
        for (int v = 0; st == QR_OK && v < g->n_values; v++) {
            bool pl = g->values[v].producer >= 0 && qr__se_ref_needed(g, v) && !qr_run_uncached(g, v) &&
                      !qr_run_cache_get(se.ref->consts, v);
            plain += pl ? qr_tensor_nbytes(&g->values[v].t) : 0;
            kept += se.ref->vals[v].data ? qr_tensor_nbytes(&se.ref->vals[v]) : 0;
        }
        bool *mask = malloc((size_t)se.qt.n + 1), *live = malloc((size_t)nn + 1), *cone = malloc((size_t)nn + 1);
        int *stack = malloc(((size_t)nn + 1) * sizeof *stack);
        QrOverrides ov = {0};
        QrTensor *o1 = calloc((size_t)g->n_outputs + 1, sizeof *o1), *o2 = calloc((size_t)g->n_outputs + 1, sizeof *o2);
        int extra_nodes = 0;
        if (st == QR_OK) st = mask && live && cone && stack && o1 && o2 ? qr_session_overrides_alloc(&se, &ov) : qr_errf(QR_ERR_NOMEM, "oom");
        for (int c = 0; st == QR_OK && c < se.qt.n && bad_q < 0; c++) {
            if (se.qt.q[c].kind == QR_QK_BIAS || !se.qt.q[c].can_disable) continue;
            for (int i = 0; i < se.qt.n; i++) mask[i] = i != c;
            qr_session_overrides(&se, mask, &ov);
            memset(cone, 0, (size_t)nn);
            int sp = 0;
            for (int v = 0; v < g->n_values; v++) {
                if (ov.alias[v] < 0 && !ov.subst[v]) continue;
                int pr = g->values[v].producer;
                if (pr >= 0 && !cone[pr]) { cone[pr] = true; stack[sp++] = pr; }
                const QrUse *u;
                int nu = qr_graph_readers(g, v, &u);
                for (int k = 0; k < nu; k++) if (!cone[u[k].node]) { cone[u[k].node] = true; stack[sp++] = u[k].node; }
            }
            qr__se_downstream(g, cone, stack, sp);
            QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
            st = qr_session_run_inc(&se, g, &ro, o1, live);
            if (st == QR_OK) st = qr_run(g, se.inputs, &ro, o2);
            for (int k = 0; st == QR_OK && k < g->n_outputs && bad_q < 0; k++)
                if (qr_tensor_nbytes(&o1[k]) != qr_tensor_nbytes(&o2[k]) || memcmp(o1[k].data, o2[k].data, qr_tensor_nbytes(&o1[k])))
                    bad_q = c, bad_node = -2 - k;
            for (int n = 0; st == QR_OK && n < nn; n++) extra_nodes += live[n] && !cone[n];
            for (int k = 0; k < g->n_outputs; k++) { qr_tensor_free_data(&o1[k]); qr_tensor_free_data(&o2[k]); }
            cases++;
        }
        free(mask);
        free(live);
        free(cone);
        free(stack);
        free(o1);
        free(o2);
        qr_session_overrides_free(&ov);
        char msg[256];
        snprintf(msg, sizeof msg, "%s: kept %zu bytes, the plain rule %zu; quantizer %d: output %d differs from the whole "
                 "run; %d nodes recomputed outside the cones (%d cases)", qt_incr_pairs[pi], kept, plain, bad_q,
                 bad_node < -1 ? -2 - bad_node : -1, extra_nodes, cases);
        if (qt_verbose) printf("     %s\n", msg);
        fewer += kept < plain;
        qr_session_close(&se);
        qt_pair_free(&p);
        QT_OK(st);
        QT_CHECKF(kept <= plain && bad_q < 0 && cases > 0, "%s", msg);
    }
    QT_CHECKF(fewer > 0, "the reference kept as many values as the plain rule on every pair");
}

/* ==== tap masks and runs that serve two analyses ===================================== */

/* Per-match metrics of qr_sens_eval_mask (a masked, fusing run) equal those computed here
 * from a run that taps every value (nothing fused). */
typedef struct QtIncrAll { QrSession *s; QrMetrics *pm; } QtIncrAll;
static QrStatus qt_incr_all_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtIncrAll *c = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    for (int i = 0; i < c->s->m.n; i++) {
        if (c->s->vis[i] != value || !c->s->base[i].data) continue;
        QrTensor f = {0};
        if (qr_session_visible_f32(c->s, i, t, &f) != QR_OK) { qr_err_clear(); continue; }
        if (f.numel == c->s->base[i].numel) qr_metrics_compute_ex(c->s->base[i].data, f.data, f.numel, true, &c->pm[i]);
        qr_tensor_free_data(&f);
    }
    return QR_OK;
}

static void test_incr_tap_mask(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        QtPair p;
        QrSession se;
        QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
        QrStatus st = qr_session_run_baseline(&se);
        QrMetrics out, *pm1 = calloc((size_t)se.m.n + 1, sizeof *pm1), *pm2 = calloc((size_t)se.m.n + 1, sizeof *pm2);
        if (st == QR_OK) st = qr_sens_eval_mask(&se, NULL, &out, pm1, true);
        QrOverrides ov = {0};
        if (st == QR_OK) st = qr_session_overrides_alloc(&se, &ov);
        if (st == QR_OK) {
            qr_session_overrides(&se, NULL, &ov);
            QtIncrAll c = { &se, pm2 };
            QrRunOpts ro = qr_session_run_opts(&ov, qt_incr_all_tap, &c);
            st = qr_run(&se.tw.g, se.inputs, &ro, NULL);
        }
        int n_cmp = 0, bad = -1;
        for (int i = 0; st == QR_OK && i < se.m.n; i++) {
            if (!pm2[i].n) continue;
            n_cmp++;
            if (!qt_incr_same_m(&pm1[i], &pm2[i]) && bad < 0) bad = i;
        }
        qr_session_overrides_free(&ov);
        free(pm1);
        free(pm2);
        qr_session_close(&se);
        qt_pair_free(&p);
        QT_OK(st);
        QT_CHECKF(bad < 0 && n_cmp > 0, "%s: match %d differs (%d compared)", qt_incr_pairs[pi], bad, n_cmp);
    }
}

/* The baseline run's statistics, compare's run with the analysis statistics, and the
 * equivalence check on the session's baseline values (the verification run's result, kept
 * when it moved no pair: session.h eq_kept) equal their stand-alone versions. */
static void test_incr_shared_runs(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        const char *pair = qt_incr_pairs[pi];
        QtPair p;
        QrSession s1, s2;
        QT_OK(qt_session_pair(pair, &p, &s1));
        QrStatus st = qr_session_open(&s2, p.b, p.a, &p.in);
        int nb = p.b->n_values, na = p.a->n_values;
        QrStats *bs1 = calloc((size_t)nb + 1, sizeof *bs1), *bs2 = calloc((size_t)nb + 1, sizeof *bs2);
        QrStats *as1 = calloc((size_t)na + 1, sizeof *as1), *as2 = calloc((size_t)na + 1, sizeof *as2);
        bool *bn1 = calloc((size_t)nb + 1, 1), *bn2 = calloc((size_t)nb + 1, 1), *an1 = calloc((size_t)na + 1, 1), *an2 = calloc((size_t)na + 1, 1);
        QrEquivResult e1 = {0}, e2 = {0};
        QrCompare c1 = {0}, c2 = {0};
        bool extra = false;
        char msg[256] = "";
        /* s1: the shared runs (baseline statistics during the baseline run, equivalence from s1.base) */
        if (st == QR_OK) st = qr_session_run_baseline_ex(&s1, &(QrBaseRunOpts){ .stats = bs1, .seen = bn1 });
        if (st == QR_OK) st = qr_session_equivalence(&s1, &e1);
        QrStatsCollect sc = { as1, an1 };
        if (st == QR_OK) st = qr_compare_mode_ex(&s1, "sim", 0.99, qr_stats_tap, &sc, &extra, &c1);
        if (st == QR_OK && extra) qr_stats_inits(p.a, as1, an1);
        /* s2: each on its own (the equivalence runs the baseline itself: no base yet) */
        if (st == QR_OK) st = qr_session_equivalence(&s2, &e2);
        if (st == QR_OK) st = qr_stats_collect(p.b, &p.in, bs2, bn2);
        if (st == QR_OK) st = qr_stats_collect(p.a, &p.in, as2, an2);
        if (st == QR_OK) st = qr_compare_run(&s2, p.a, 0.99, &c2);
        bool ok = st == QR_OK && extra;
        if (ok && !s1.m.n_repaired && !s1.eq_kept) { ok = false; snprintf(msg, sizeof msg, "verification result not kept"); }
        if (ok && (memcmp(bn1, bn2, (size_t)nb) || memcmp(an1, an2, (size_t)na))) { ok = false; snprintf(msg, sizeof msg, "seen differ"); }
        for (int v = 0; ok && v < nb; v++)
            if (bn1[v] && memcmp(&bs1[v], &bs2[v], sizeof bs1[v])) { ok = false; snprintf(msg, sizeof msg, "baseline stats of %s", p.b->values[v].name); }
        for (int v = 0; ok && v < na; v++)
            if (an1[v] && memcmp(&as1[v], &as2[v], sizeof as1[v])) { ok = false; snprintf(msg, sizeof msg, "analysis stats of %s", p.a->values[v].name); }
        if (ok && (e1.equivalent != e2.equivalent || e1.worst_rel != e2.worst_rel || e1.worst_match != e2.worst_match ||
                   memcmp(e1.max_abs, e2.max_abs, (size_t)s1.m.n * sizeof(double)) ||
                   memcmp(e1.ref_absmax, e2.ref_absmax, (size_t)s1.m.n * sizeof(double)))) {
            ok = false;
            snprintf(msg, sizeof msg, "equivalence differs");
        }
        if (ok && (c1.n != c2.n || c1.first_drop != c2.first_drop || !qt_incr_same_m(&c1.out, &c2.out))) { ok = false; snprintf(msg, sizeof msg, "compare differs"); }
        for (int k = 0; ok && k < c1.n; k++)
            if (c1.rows[k].has_m != c2.rows[k].has_m || c1.rows[k].has_local != c2.rows[k].has_local ||
                (c1.rows[k].has_m && !qt_incr_same_m(&c1.rows[k].m, &c2.rows[k].m)) ||
                (c1.rows[k].has_local && !qt_incr_same_m(&c1.rows[k].local, &c2.rows[k].local))) {
                ok = false;
                snprintf(msg, sizeof msg, "compare row %d differs", k);
            }
        if (st == QR_OK) { qr_match_equiv_free(&e1); qr_match_equiv_free(&e2); }
        qr_compare_free(&c1);
        qr_compare_free(&c2);
        free(bs1); free(bs2); free(as1); free(as2); free(bn1); free(bn2); free(an1); free(an2);
        qr_session_close(&s1);
        if (s2.b) qr_session_close(&s2);
        qt_pair_free(&p);
        QT_OK(st);
        QT_CHECKF(ok, "%s: %s", pair, msg);
    }
}

/* qr_sens_run with its reference run done ahead (qr_sens_reference) gives
 * the rows, the reference metrics and the node-execution counts of a plain qr_sens_run; a
 * reference made for the other mode is not used (and stays until the session closes). */
static void test_incr_sens_reference(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++)
        for (int off = 0; off < 2; off++) {
            QtPair p;
            QrSession se;
            QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
            QrSensOpts o = { .off_one = off, .metric = QR_METRIC_MSE }, other = o;
            other.off_one = !off;
            QrSensResult a = {0}, b = {0}, c = {0};
            QrStatus st = qr_sens_run(&se, &o, &a);
            if (st == QR_OK) st = qr_sens_reference(&se, &o);
            bool made = se.input_cache != NULL;
            if (st == QR_OK) st = qr_sens_run(&se, &o, &b);
            bool taken = se.input_cache == NULL;
            if (st == QR_OK) st = qr_sens_reference(&se, &other);
            if (st == QR_OK) st = qr_sens_run(&se, &o, &c);
            bool kept = se.input_cache != NULL;
            bool same = st == QR_OK && a.n == b.n && a.n == c.n && a.n_exec == b.n_exec && a.n_exec == c.n_exec &&
                        qt_incr_same_m(&a.reference, &b.reference) && qt_incr_same_m(&a.reference, &c.reference);
            for (int k = 0; same && k < a.n; k++)
                same = a.rows[k].type == b.rows[k].type && !strcmp(a.rows[k].name, b.rows[k].name) &&
                       qt_incr_same_m(&a.rows[k].m, &b.rows[k].m) && qt_incr_same_m(&a.rows[k].m, &c.rows[k].m) &&
                       a.rows[k].n_exec == b.rows[k].n_exec;
            qr_sens_free(&a);
            qr_sens_free(&b);
            qr_sens_free(&c);
            qr_session_close(&se);
            qt_pair_free(&p);
            QT_OK(st);
            QT_CHECKF(made && taken && kept && same, "%s %s: made %d taken %d kept %d same %d", qt_incr_pairs[pi],
                      off ? "off-one" : "one-on", made, taken, kept, same);
        }
}

/* runall's order: the cumulative error's settings run whole (no all-on reference), then the
 * what-if builds the reference and runs incrementally. The whole runs leave their output metrics
 * in the session's memo (one entry per setting), and the what-if takes them: its results and
 * its model runs (qr_run_count) are those of the all-incremental order. */
static QrStatus qt_incr_memo_flow(const char *pair, bool whole_accum, QrWhatIf *wi, int *n_memo, int64_t *wi_runs) {
    QtPair p;
    QrSession se;
    QrSensResult sr = {0};
    QrAccum acc = {0};
    QrStatus st = qt_session_pair(pair, &p, &se);
    QrSensOpts so = { .metric = QR_METRIC_L1 };
    int topk[] = { 1, 2, 3 }, ks[] = { 1, 2, 4 };
    if (st == QR_OK) st = qr_sens_run(&se, &so, &sr);
    se.no_incremental = whole_accum;
    if (st == QR_OK) st = qr_accum_run(&se, &sr, topk, 3, QR_METRIC_COSINE, &acc);
    se.no_incremental = false;
    *n_memo = st == QR_OK && se.memo ? se.memo->n - acc.n_settings : -1;   /* 0: one entry per setting */
    int64_t before = qr_run_count.graphs;
    if (st == QR_OK) st = qr_whatif_run(&se, &sr, ks, 3, 0.9999999, wi);
    *wi_runs = qr_run_count.graphs - before - (whole_accum ? 1 : 0);   /* (the reference's own run, made there) */
    qr_accum_free(&acc);
    qr_sens_free(&sr);
    if (se.b) qr_session_close(&se);
    qt_pair_free(&p);
    return st;
}

static void test_incr_memo_whole(void) {
    const char *pairs[] = { "ort_qdq", "culprit" };
    for (int pi = 0; pi < QR_ARRAY_LEN(pairs); pi++) {
        QrWhatIf w1 = {0}, w2 = {0};
        int m1 = -1, m2 = -1;
        int64_t r1 = 0, r2 = 0;
        QrStatus st = qt_incr_memo_flow(pairs[pi], false, &w1, &m1, &r1);
        if (st == QR_OK) st = qt_incr_memo_flow(pairs[pi], true, &w2, &m2, &r2);
        bool same = st == QR_OK && w1.n_steps == w2.n_steps && w1.n_steps > 0 && qt_incr_same_m(&w1.as_is, &w2.as_is);
        for (int t = 0; same && t < w1.n_steps; t++)
            same = w1.steps[t].k == w2.steps[t].k && qt_incr_same_m(&w1.steps[t].int16, &w2.steps[t].int16) &&
                   qt_incr_same_m(&w1.steps[t].fp, &w2.steps[t].fp);
        qr_whatif_free(&w1);
        qr_whatif_free(&w2);
        QT_OK(st);
        QT_CHECKF(same && m2 == 0 && r1 == r2, "%s: same %d, memo entries beyond the settings %d, what-if runs %lld vs %lld",
                  pairs[pi], same, m2, (long long)r1, (long long)r2);
    }
}

/* ==== baseline values dropped and brought back ======================================= */

/* One session's check: drop every match but i % 3 == 0, then bring back i % 3 == 1, then all
 * (qr_session_base_need): each value comes back with the bits of the session's first baseline
 * run, the others stay dropped meanwhile (also through qr_session_run_baseline). */
static void qt_incr_base_drop_check(const char *label, QrSession *se) {
    char msg[256] = "";
    QrStatus st = qr_session_run_baseline(se);
    int n = se->m.n, filled = 0, back = 0;
    QrTensor *copy = calloc((size_t)n + 1, sizeof *copy);
    bool *keep = calloc((size_t)n + 1, sizeof *keep), *want = calloc((size_t)n + 1, sizeof *want);
    if (st == QR_OK && (!copy || !keep || !want)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < n; i++) {
        keep[i] = i % 3 == 0;
        want[i] = i % 3 == 1;
        if (se->base[i].data) { filled++; st = qr_tensor_to_f32(&se->base[i], &copy[i]); }
    }
    for (int pass = 0; st == QR_OK && pass < 3 && !msg[0]; pass++) {
        if (pass == 0) { qr_session_base_drop(se, keep); st = qr_session_run_baseline(se); }
        else st = qr_session_base_need(se, pass == 1 ? want : NULL);
        for (int i = 0; st == QR_OK && i < n && !msg[0]; i++) {
            bool there = i % 3 == 0 || (pass >= 1 && i % 3 == 1) || pass == 2;
            const QrTensor *t = &se->base[i];
            if (!copy[i].data) { if (t->data) snprintf(msg, sizeof msg, "pass %d match %d: a value it never had", pass, i); continue; }
            if (!there != !t->data) snprintf(msg, sizeof msg, "pass %d match %d: %s", pass, i, t->data ? "not dropped" : "missing");
            else if (t->data && (t->numel != copy[i].numel || memcmp(t->data, copy[i].data, (size_t)t->numel * sizeof(float))))
                snprintf(msg, sizeof msg, "pass %d match %d: other bits", pass, i);
            else back += pass == 2 && t->data;
        }
    }
    for (int i = 0; copy && i < n; i++) qr_tensor_free_data(&copy[i]);
    free(copy);
    free(keep);
    free(want);
    QT_OK(st);
    QT_CHECKF(!msg[0] && filled > 3 && back == filled, "%s: %s (%d values, %d back)", label, msg, filled, back);
}

static void test_incr_base_drop(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        QtPair p;
        QrSession se;
        QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
        qt_incr_base_drop_check(qt_incr_pairs[pi], &se);
        qr_session_close(&se);
        qt_pair_free(&p);
    }
    /* the single-model form: the baseline runs under overrides (every quantizer off) */
    QtPair p;
    QrSession se;
    QrGraph *b = NULL;
    QrStatus st = qt_pair_load(&p, "ort_qdq", NULL);
    if (st == QR_OK) st = qr_run_load("fixtures/qpairs/ort_qdq/analysis.onnx", &b);
    if (st == QR_OK) st = qr_run_infer(b, &p.in);
    if (st == QR_OK) st = qr_session_open(&se, b, p.a, &p.in);
    QT_OK(st);
    if (st == QR_OK) {
        qr_session_single_model(&se);
        qt_incr_base_drop_check("ort_qdq single model", &se);
        qr_session_close(&se);
    }
    if (b) { qr_graph_free(b); free(b); }
    qt_pair_free(&p);
}

/* The one tap both baseline refills use (session.c qr__se_fill_tap: the quantizers-off run into
 * base_off, qr_session_base_need into base with base_gone): a float value of an empty match is
 * copied and its 'gone' flag cleared; a filled match, an unmatched value and a non-float value are
 * left alone; without flags (base_off) only the copy is made. */
static void test_incr_fill_tap(void) {
    for (int flags = 0; flags < 2; flags++) {
        QrTensor dst[3] = {{0}}, f = {0}, q = {0}, old = {0};
        uint8_t gone[3] = { 1, 1, 1 };
        int match_of[4] = { 0, 1, -1, 2 };
        int64_t dims[1] = { 3 };
        QT_OK(qr_tensor_set_shape(&f, QR_DT_F32, 1, dims));
        QT_OK(qr_tensor_alloc_data(&f));
        QT_OK(qr_tensor_set_shape(&q, QR_DT_S8, 1, dims));
        QT_OK(qr_tensor_alloc_data(&q));
        QT_OK(qr_tensor_set_shape(&old, QR_DT_F32, 1, dims));
        QT_OK(qr_tensor_alloc_data(&old));
        for (int e = 0; e < 3; e++) { ((float *)f.data)[e] = 1.5f * (float)e; ((float *)old.data)[e] = -1.0f; }
        dst[1] = old;                    /* match 1 already filled: kept */
        QrSeFillTap ft = { dst, flags ? gone : NULL, match_of };
        for (int v = 0; v < 3; v++) QT_OK(qr__se_fill_tap(&ft, NULL, 0, v, &f));
        QT_OK(qr__se_fill_tap(&ft, NULL, 0, 3, &q));
        QT_CHECKF(dst[0].data && dst[0].dtype == QR_DT_F32 && dst[0].numel == 3 && ((float *)dst[0].data)[2] == 3.0f,
                  "flags %d: match 0 not filled from its float value", flags);
        QT_CHECKF(dst[1].data == old.data && ((float *)dst[1].data)[0] == -1.0f, "flags %d: a filled match was overwritten", flags);
        QT_CHECKF(!dst[2].data, "flags %d: a non-float value was copied", flags);
        QT_CHECKF(gone[0] == !flags && gone[1] == 1 && gone[2] == 1, "flags %d: gone %d %d %d", flags, gone[0], gone[1], gone[2]);
        qr_tensor_free_data(&dst[0]);
        qr_tensor_free_data(&f);
        qr_tensor_free_data(&q);
        qr_tensor_free_data(&old);
    }
}

/* ==== parallel jobs ================================================================= */

typedef struct QtIncrJobs { int ran[64]; } QtIncrJobs;
static QrStatus qt_incr_job(void *ctx, int k, int tid) {
    QtIncrJobs *j = ctx;
    QR_UNUSED(tid);
    j->ran[k]++;
    if (k == 5) return qr_errf(QR_ERR_IO, "job five failed");
    if (k == 3) return qr_errf(QR_ERR_INVALID, "job three failed");
    return QR_OK;
}

/* Every job runs once; the error is the lowest failing job's, whatever the thread count. */
static void test_incr_jobs(void) {
    for (int threads = 1; threads <= 3; threads++) {
        QT_OK(qr_pool_init(threads));
        QtIncrJobs j = {0};
        QtStepLog lg = { .monotone = true };
        QrStepHook h = { qt_step_log, &lg };
        QrStatus st = qr_session_jobs(NULL, 40, qt_incr_job, &j, &h);
        bool once = true;
        for (int k = 0; k < 40; k++) once &= j.ran[k] == 1;
        QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "job three failed"), "%d threads: %s", threads, qr_err_msg());
        qr_err_clear();
        QT_CHECKF(once && lg.calls == 40 && lg.monotone && lg.last_done == 39 && lg.total == 40, "%d threads", threads);
        QT_OK(qr_session_jobs(NULL, 0, qt_incr_job, &j, NULL));
    }
    QT_OK(qr_pool_init(0));
}

/* ==== selection-based box statistics ================================================ */

static int qt_incr_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static double qt_incr_quantile(const double *a, int64_t n, double q) {
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo >= n - 1) return a[n - 1];
    return a[lo] + (a[lo + 1] - a[lo]) * (pos - (double)lo);
}

/* qr__dist_box equals sorting (stable, as glibc's qsort) and reading the quartiles off,
 * bit for bit, on data with ties, runs of zeros of both signs and single values. */
static void test_incr_box(void) {
    uint64_t rng = 77;
    static const int64_t sizes[] = { 1, 2, 3, 4, 5, 7, 15, 16, 17, 33, 100, 1000, 4097, 20000 };
    for (int si = 0; si < QR_ARRAY_LEN(sizes); si++)
        for (int kind = 0; kind < 6; kind++) {
            int64_t n = sizes[si];
            double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
            QT_CHECK(a && b);
            for (int64_t i = 0; i < n; i++) {
                double v = qr_rng_normal(&rng);
                if (kind == 1) v = (double)(int)(v * 3);                       /* many ties */
                if (kind == 2) v = v < 0.3 ? ((qr_rng_next(&rng) & 1) ? -0.0 : 0.0) : v;   /* ReLU-like, signed zeros */
                if (kind == 3) v = 1.5;                                         /* all equal */
                if (kind == 4) v = (double)(float)(v * 1e-30);                  /* tiny */
                if (kind == 5) v = v < 0.3 ? ((qr_rng_next(&rng) & 1) ? -0.0 : 0.0) : -fabs(v);   /* the maximum is a zero */
                a[i] = b[i] = (double)(float)v;
            }
            QrChannelBox box;
            qr__dist_box(a, n, &box);
            qsort(b, (size_t)n, sizeof *b, qt_incr_cmp_d);
            double want[5] = { b[0], qt_incr_quantile(b, n, 0.25), qt_incr_quantile(b, n, 0.5), qt_incr_quantile(b, n, 0.75), b[n - 1] };
            double got[5] = { box.min, box.q1, box.median, box.q3, box.max };
            bool same = !memcmp(want, got, sizeof want);
            free(a);
            free(b);
            QT_CHECKF(same, "n %lld kind %d: min/q1/median/q3/max %.17g %.17g %.17g %.17g %.17g, want %.17g %.17g %.17g %.17g %.17g",
                      (long long)n, kind, got[0], got[1], got[2], got[3], got[4], want[0], want[1], want[2], want[3], want[4]);
        }
}

/* ==== metrics: the Rtol filter and the optional metrics ============================== */

static void test_incr_rtol(void) {
    uint64_t rng = 5;
    enum { N = 3000 };
    float x[N], y[N];
    for (int kind = 0; kind < 4; kind++) {
        for (int i = 0; i < N; i++) {
            x[i] = (float)qr_rng_normal(&rng);
            y[i] = x[i] + (float)(qr_rng_normal(&rng) * 1e-3);
            if (kind == 1 && i % 7 == 0) x[i] = 0;                              /* d/0 = FLT_MAX */
            if (kind == 2) y[i] = x[i];                                          /* all 0 */
            if (kind == 3) { x[i] *= (float)exp(qr_rng_normal(&rng) * 20); y[i] = x[i] * (1 + (float)qr_rng_normal(&rng) * 1e-5f); }
        }
        double naive = qt_rtol_naive(x, y, N);
        double got = qr_f32_rtol__ref(x, y, N);
        QT_CHECKF(!memcmp(&got, &naive, sizeof got), "kind %d: %.17g vs %.17g", kind, got, naive);
        qr_kern_init();
        got = qr_kern.f32_rtol(x, y, N);     /* the dispatched level (test_kern checks every level) */
        QT_CHECKF(!memcmp(&got, &naive, sizeof got), "kind %d, %s: %.17g vs %.17g", kind, qr_isa_name(qr_kern.isa), got, naive);
        QrMetrics all, some;
        qr_metrics_compute(x, y, N, &all);
        qr_metrics_compute_opts(x, y, N, false, false, &some);
        QT_CHECK(!memcmp(&all.rtol, &naive, sizeof naive));
        QT_CHECK(some.kl != some.kl && some.rtol != some.rtol);
        some.kl = all.kl;
        some.rtol = all.rtol;
        QT_CHECKF(qt_incr_same_m(&all, &some), "kind %d: the other metrics differ without KL / Rtol", kind);
    }
}

/* ==== statistics of integer tensors ================================================== */

static void test_incr_stats_int8(void) {
    uint64_t rng = 11;
    for (int dt = 0; dt < 2; dt++) {
        QrTensor t = {0};
        int64_t dims[1] = { 10000 };
        QT_OK(qr_tensor_set_shape(&t, dt ? QR_DT_U8 : QR_DT_S8, 1, dims));
        QT_OK(qr_tensor_alloc_data(&t));
        for (int64_t i = 0; i < t.numel; i++) ((uint8_t *)t.data)[i] = (uint8_t)(qr_rng_next(&rng) >> 7);
        QrStats got, want;
        qr_stats_init(&got);
        qr_stats_tensor(&got, &t);
        /* the plain computation: blocks of 4096, the integer sums S1, S2 and min / max, mean = S1 / n,
         * m2 = (n S2 - S1^2) / n (exact integers, one rounding), Chan's merge */
        qr_stats_init(&want);
        for (int64_t base = 0; base < t.numel; base += 4096) {
            int64_t end = QR_MIN(t.numel, base + 4096);
            QrStats b;
            qr_stats_init(&b);
            int64_t s1 = 0, s2 = 0;
            for (int64_t i = base; i < end; i++) {
                int64_t v = qr_tensor_get_i64(&t, i);
                b.n++;
                s1 += v;
                s2 += v * v;
                if ((double)v < b.min) b.min = (double)v;
                if ((double)v > b.max) b.max = (double)v;
            }
            b.mean = (double)s1 / (double)b.n;
            b.m2 = (double)(b.n * s2 - s1 * s1) / (double)b.n;
            qr_stats_merge(&want, &b);
        }
        qr_tensor_free_data(&t);
        QT_CHECKF(!memcmp(&got, &want, sizeof got), "%s: mean %.17g/%.17g m2 %.17g/%.17g", dt ? "uint8" : "int8", got.mean,
                  want.mean, got.m2, want.m2);
    }
}

/* ==== the weight comparison's data, run by run ======================================== */

/* qr_weights_wdata equals the element-by-element computation (parameter index, scale and zero
 * point per element, QuantizeLinear's rounding) for every weight quantizer of the pairs. */
static void test_incr_wdata(void) {
    for (int pi = 0; pi < QR_ARRAY_LEN(qt_incr_pairs); pi++) {
        QtPair p;
        QrSession se;
        QT_OK(qt_session_pair(qt_incr_pairs[pi], &p, &se));
        const QrGraph *g = &se.tw.g;
        int checked = 0;
        char msg[256] = "";
        for (int qi = 0; qi < se.qt.n && !msg[0]; qi++) {
            const QrQuantizer *q = &se.qt.q[qi];
            if (q->kind != QR_QK_WEIGHT) continue;
            QrWtData d;
            QT_OK(qr_weights_wdata_panel(&se, qi, 0, &d));
            if (!d.ok) { qr_weights_wdata_free(&d); continue; }
            const QrTensor *sc = &g->values[q->scale_value].t;
            const QrTensor *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
            QrQuantRange range;
            qr_quant_range(q->dtype, &range);
            int64_t n_sat = 0, n_zero = 0, n_bad = 0, n_diff = 0;
            for (int64_t i = 0; i < d.n && !msg[0]; i++) {
                int64_t pidx = qr_weights_param_index(d.shape->rank, d.shape->dims, q->axis, q->block_size, sc->numel, i);
                float s1 = (float)qr_tensor_get_f64(sc, pidx);
                int32_t z = zp && zp->data ? (int32_t)qr_tensor_get_i64(zp, zp->numel > 1 ? pidx : 0) : 0;
                int32_t qv = 0;
                float xv = 0;
                if (d.w) {
                    xv = (float)qr_tensor_get_f64(d.w, i);
                    float dv = xv / s1;
                    if (!isfinite(xv) || !isfinite(dv)) n_bad++;
                    else if (rintf(dv) + (float)z < (float)range.lo || rintf(dv) + (float)z > (float)range.hi) n_sat++;
                    qv = qr_quant_quantize_f32(xv, s1, z, range);
                    if (xv != 0 && qv == z) n_zero++;
                }
                if (d.iw) {
                    int32_t stored = (int32_t)qr_tensor_get_i64(d.iw, i);
                    if (d.w && stored != qv) n_diff++;
                    qv = stored;
                }
                float yv = (float)(qv - z) * s1;
                if (!d.w) xv = yv;
                if (memcmp(&yv, &d.y[i], sizeof yv) || memcmp(&xv, &d.x[i], sizeof xv))
                    snprintf(msg, sizeof msg, "%s element %lld", g->values[q->int_value >= 0 ? q->int_value : q->float_value].name, (long long)i);
            }
            if (!msg[0] && (n_sat != d.n_sat || n_zero != d.n_zero || n_bad != d.n_nonfinite || n_diff != d.n_requant_diff))
                snprintf(msg, sizeof msg, "quantizer %d: counts %lld/%lld %lld/%lld", qi, (long long)d.n_sat, (long long)n_sat,
                         (long long)d.n_zero, (long long)n_zero);
            qr_weights_wdata_free(&d);
            checked++;
        }
        qr_session_close(&se);
        qt_pair_free(&p);
        QT_CHECKF(!msg[0] && checked > 0, "%s: %s (%d weights)", qt_incr_pairs[pi], msg, checked);
    }
}

/* ==== runall's one pass: the runs that served two analyses ============================= */

/* The cumulative error's full setting taken from the per-layer comparison's run (runall's
 * qr__ra_acc_full, settings run whole as runall runs them) gives the table of the cumulative error
 * that runs it, bit for bit, with one model run fewer (qr_run_count) on the pairs whose twin is a
 * plain copy; a QOperator twin is refused (the comparison ran the integer model). */
static void test_incr_accum_full(void) {
    int bad = 0, used = 0, refused = 0;
    char msg[256] = "";
    for (int k = 0; k < QR_ARRAY_LEN(qt_incr_pairs); k++) {
        QrAccum a[2];
        memset(a, 0, sizeof a);
        int64_t runs[2] = { 0, 0 };
        bool have = false;
        for (int pass = 0; pass < 2; pass++) {
            QtPair p;
            QrSession se;
            memset(&se, 0, sizeof se);
            QrStatus st = qt_session_pair(qt_incr_pairs[k], &p, &se);
            QrSensOpts so = { .metric = QR_METRIC_L1 };
            QrSensResult sr = { 0 };
            QrCompare c = { 0 };
            int topk[] = { 1, 2 };
            if (st == QR_OK) st = qr_sens_run(&se, &so, &sr);
            if (st == QR_OK) st = qr_compare_mode(&se, "sim", 0.99, &c);
            se.no_incremental = true;
            QrAccFull full;
            QrMetrics *pm = NULL;
            if (st == QR_OK && pass == 1) have = qr__ra_acc_full(&se, &c, "sim", QR_METRIC_COSINE, &full, &pm);
            int64_t r0 = qr_run_count.graphs;
            if (st == QR_OK) st = qr_accum_run_full(&se, &sr, topk, 2, NULL, QR_METRIC_COSINE, have ? &full : NULL, &a[pass]);
            runs[pass] = qr_run_count.graphs - r0;
            free(pm);
            if (st != QR_OK && !bad++) qt_fmt(msg, sizeof msg, "%s: %s", qt_incr_pairs[k], qr_err_msg());
            qr_err_clear();
            qr_compare_free(&c);
            qr_sens_free(&sr);
            if (se.b) qr_session_close(&se);
            qt_pair_free(&p);
        }
        used += have;
        refused += !have && !strcmp(qt_incr_pairs[k], "qoperator");
        int nv = a[0].n_settings * (a[0].val ? 1 : 0);
        bool same = a[0].n_settings == a[1].n_settings && a[0].val && a[1].val && runs[1] == runs[0] - (have ? 1 : 0);
        for (int s = 0; same && s < a[0].n_settings; s++) same = !memcmp(&a[0].out[s], &a[1].out[s], sizeof a[0].out[s]);
        QtPair q;
        int nm = 0;
        if (same && qt_pair_load(&q, qt_incr_pairs[k], NULL) == QR_OK) {
            QrSession se2;
            memset(&se2, 0, sizeof se2);
            if (qr_session_open(&se2, q.b, q.a, &q.in) == QR_OK) nm = se2.m.n;
            if (se2.b) qr_session_close(&se2);
            qt_pair_free(&q);
        }
        if (same) same = nm > 0 && !memcmp(a[0].val, a[1].val, (size_t)nm * (size_t)nv * sizeof(double));
        if (!same && !bad++)
            qt_fmt(msg, sizeof msg, "%s: tables or runs differ (%lld runs vs %lld, full %s)", qt_incr_pairs[k], (long long)runs[0],
                   (long long)runs[1], have ? "taken" : "refused");
        qr_accum_free(&a[0]);
        qr_accum_free(&a[1]);
    }
    QT_CHECKF(bad == 0, "%s", msg);
    QT_CHECKF(used >= 4 && refused == 1, "the comparison's run served %d pairs, refused on qoperator: %d", used, refused);
}

/* The distributions' baseline rows kept where runall drops the baseline values (qr_dist_base_want):
 * the distributions then make the model runs (qr_run_count) and give the results they make with every
 * baseline value there — no baseline run to bring their rows back. */
static void test_incr_dist_keep(void) {
    int bad = 0;
    char msg[256] = "";
    int64_t base_runs[2] = { -1, -2 };
    QrDistSet d[2];
    memset(d, 0, sizeof d);
    for (int pass = 0; pass < 2; pass++) {
        QtPair p;
        QrSession se;
        memset(&se, 0, sizeof se);
        QrStatus st = qt_session_pair("ort_qdq", &p, &se);
        QrSensOpts so = { .metric = QR_METRIC_L1 };
        QrSensResult sr = { 0 };
        if (st == QR_OK) st = qr_sens_run(&se, &so, &sr);
        bool *keep = calloc((size_t)se.m.n + 1, sizeof *keep);
        if (st == QR_OK && pass == 1) st = keep ? qr_dist_base_want(&se, &sr, NULL, 0, keep) : QR_ERR_NOMEM;
        if (st == QR_OK && pass == 1) qr_session_base_drop(&se, keep);
        int64_t r0 = qr_run_count.graphs;
        if (st == QR_OK) st = qr_dist_collect(&se, &sr, NULL, 0, 0, &d[pass]);
        base_runs[pass] = qr_run_count.graphs - r0;
        if (st != QR_OK && !bad++) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
        qr_err_clear();
        free(keep);
        qr_sens_free(&sr);
        if (se.b) qr_session_close(&se);
        qt_pair_free(&p);
    }
    bool same = !bad && d[0].n == d[1].n && d[0].n > 0;
    for (int k = 0; same && k < d[0].n; k++) {
        const QrDist *x = &d[0].d[k], *y = &d[1].d[k];
        same = !strcmp(x->name, y->name) && !memcmp(&x->clip_lo, &y->clip_lo, sizeof x->clip_lo) &&
               !memcmp(&x->clip_hi, &y->clip_hi, sizeof x->clip_hi) && x->n_bins == y->n_bins &&
               !memcmp(x->h_base, y->h_base, (size_t)x->n_bins * sizeof *x->h_base) &&
               !memcmp(x->h_anal, y->h_anal, (size_t)x->n_bins * sizeof *x->h_anal);
    }
    qr_dist_free(&d[0]);
    qr_dist_free(&d[1]);
    QT_CHECKF(bad == 0, "%s", msg);
    QT_CHECKF(base_runs[1] == base_runs[0], "model runs of the distributions: %lld with every baseline value, %lld with their rows kept",
              (long long)base_runs[0], (long long)base_runs[1]);
    QT_CHECKF(same, "the distributions differ between the rows kept and every value (%d vs %d)", d[0].n, d[1].n);
}

/* The distributions' activations captured by the all-on reference's run (qr_dist_ride_begin,
 * qr_session_ref_ride; runall's what-if stage builds it so): the collection then makes no model run
 * (qr_run_count) and gives what its own run gives, bit for bit. */
static void test_incr_dist_ride(void) {
    int bad = 0;
    char msg[256] = "";
    int64_t runs[2] = { -1, -1 };
    QrDistSet d[2];
    memset(d, 0, sizeof d);
    for (int pass = 0; pass < 2; pass++) {
        QtPair p;
        QrSession se;
        memset(&se, 0, sizeof se);
        QrStatus st = qt_session_pair("ort_qdq", &p, &se);
        QrSensOpts so = { .metric = QR_METRIC_L1 };
        QrSensResult sr = { 0 };
        QrDistRide *ride = NULL;
        if (st == QR_OK) st = qr_sens_run(&se, &so, &sr);
        if (st == QR_OK && pass == 1) {
            QrTapFn tap = NULL;
            void *user = NULL;
            const bool *only = NULL;
            bool built = false;
            st = qr_dist_ride_begin(&se, &sr, NULL, 0, &ride, &tap, &user, &only);
            if (st == QR_OK) st = qr_session_ref_ride(&se, tap, user, only, NULL, NULL, &built);
            if (st == QR_OK && !built) st = qr_errf(QR_ERR_INVALID, "the reference was there already");
        }
        int64_t r0 = qr_run_count.graphs;
        if (st == QR_OK) st = qr_dist_collect_axis(&se, &sr, NULL, 0, 0, false, 0, ride, &d[pass]);
        runs[pass] = qr_run_count.graphs - r0;
        if (st != QR_OK && !bad++) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
        qr_err_clear();
        qr_dist_ride_free(ride);
        qr_sens_free(&sr);
        if (se.b) qr_session_close(&se);
        qt_pair_free(&p);
    }
    bool same = !bad && d[0].n == d[1].n && d[0].n > 0;
    for (int k = 0; same && k < d[0].n; k++) {
        const QrDist *x = &d[0].d[k], *y = &d[1].d[k];
        same = !strcmp(x->name, y->name) && x->n_bins == y->n_bins && !memcmp(&x->clip_lo, &y->clip_lo, sizeof x->clip_lo) &&
               !memcmp(x->h_base, y->h_base, (size_t)x->n_bins * sizeof *x->h_base) &&
               !memcmp(x->h_anal, y->h_anal, (size_t)x->n_bins * sizeof *x->h_anal) &&
               (!x->h_err || !memcmp(x->h_err, y->h_err, (size_t)x->n_bins * sizeof *x->h_err));
    }
    qr_dist_free(&d[0]);
    qr_dist_free(&d[1]);
    QT_CHECKF(bad == 0, "%s", msg);
    QT_CHECKF(runs[0] == 1 && runs[1] == 0, "model runs of the distributions: %lld on their own, %lld after the ride",
              (long long)runs[0], (long long)runs[1]);
    QT_CHECKF(same, "the distributions differ between the ride and their own run (%d vs %d)", d[0].n, d[1].n);
}

static void qt_incr_all(void) {
    for (int i = 0; i < QR_ARRAY_LEN(qt_incr_pairs); i++)
        for (int off = 0; off < 2; off++) qt_incr_accum_whatif_pair(qt_incr_pairs[i], off);
    QT_RUN(test_incr_accum_table);
    QT_RUN(test_incr_accum_full);
    QT_RUN(test_incr_dist_keep);
    QT_RUN(test_incr_dist_ride);
    QT_RUN(test_incr_closure);
    QT_RUN(test_incr_ref_kept);
    QT_RUN(test_incr_tap_mask);
    QT_RUN(test_incr_sens_reference);
    QT_RUN(test_incr_base_drop);
    QT_RUN(test_incr_fill_tap);
    QT_RUN(test_incr_memo_whole);
    QT_RUN(test_incr_shared_runs);
    QT_RUN(test_incr_jobs);
    QT_RUN(test_incr_box);
    QT_RUN(test_incr_rtol);
    QT_RUN(test_incr_stats_int8);
    QT_RUN(test_incr_wdata);
}
