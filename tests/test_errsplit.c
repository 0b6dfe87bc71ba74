/* tests/errsplit — the error split of compare_per_layer_out (issue 29) against an independent
 * reference: fixtures/make_errsplit.py plants a too-narrow range, a too-wide range, an outlier
 * channel and a coarse weight, and measures every part of those rows with ONNX Runtime on
 * one-layer models with only that part's quantizers (numpy on ORT's values; ref.tsv); a fifth row
 * plants a coarse per-tensor weight. The HTML table and the graph view draw each row's split as a
 * stacked bar whose segments are the parts' shares. */

typedef struct QtSplitRef {
    char name[64], planted[32], dominant[32];
    double v[4];             /* err_weight, err_input, err_output_round, err_output_clip */
    double clip_frac, steps, noise;
    long long n_clip;
    int worst_ch;
} QtSplitRef;

static int qt_split_ref_load(QtSplitRef *r, int cap) {
    FILE *f = fopen("fixtures/errsplit/ref.tsv", "r");
    if (!f) return -1;
    char line[2048];
    int n = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        QtSplitRef *x = &r[n];
        char *save = NULL, *tok = strtok_r(line, "\t\n", &save);
        int col = 0;
        for (; tok; tok = strtok_r(NULL, "\t\n", &save), col++) {
            if (col == 0) snprintf(x->name, sizeof x->name, "%s", tok);
            else if (col == 1) snprintf(x->planted, sizeof x->planted, "%s", tok);
            else if (col < 6) x->v[col - 2] = strtod(tok, NULL);
            else if (col == 6) x->clip_frac = strtod(tok, NULL);
            else if (col == 7) x->n_clip = strtoll(tok, NULL, 10);
            else if (col == 8) x->steps = strtod(tok, NULL);
            else if (col == 9) x->noise = strtod(tok, NULL);
            else if (col == 10) snprintf(x->dominant, sizeof x->dominant, "%s", tok);
            else if (col == 11) x->worst_ch = atoi(tok);
        }
        if (col == 12) n++;
    }
    fclose(f);
    return n;
}

typedef struct QtSplitPair {
    QtPair p;
    QrSession se;
    QrCompare c;
    bool open;
} QtSplitPair;

static QrStatus qt_split_open(QtSplitPair *sp) {
    memset(sp, 0, sizeof *sp);
    QR_TRY(qt_pair_load(&sp->p, "../errsplit", NULL));
    QR_TRY(qr_session_open(&sp->se, sp->p.b, sp->p.a, &sp->p.in));
    sp->open = true;
    return qr_compare_run(&sp->se, sp->p.a, 0.99, &sp->c);
}

static void qt_split_close(QtSplitPair *sp) {
    qr_compare_free(&sp->c);
    if (sp->open) qr_session_close(&sp->se);
    qt_pair_free(&sp->p);
}

static const QrLayerRow *qt_split_row(const QtSplitPair *sp, const char *name) {
    for (int k = 0; k < sp->c.n; k++)
        if (!strcmp(sp->p.b->nodes[sp->se.m.m[sp->c.rows[k].match].b_node].name, name)) return &sp->c.rows[k];
    return NULL;
}

/* Every part of every planted row equals the ORT/numpy reference (float execution noise: ORT and
 * qreport sum the convolutions in their own orders); clip_frac is the reference's direct count;
 * dominant names the planted fault; the coarse weight's worst channel is the planted one. */
static void test_errsplit_reference(void) {
    QtSplitRef ref[8];
    int n = qt_split_ref_load(ref, 8);
    if (n != 5) { qt_fail(__FILE__, __LINE__, "fixtures/errsplit/ref.tsv: %d rows (5 expected)", n); return; }
    QtSplitPair sp;
    QrStatus st = qt_split_open(&sp);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_split_close(&sp); return; }
    static const char *const part[4] = { "err_weight", "err_input", "err_output_round", "err_output_clip" };
    char msg[512] = "";
    int bad = 0;
    for (int i = 0; i < n; i++) {
        const QtSplitRef *x = &ref[i];
        const QrLayerRow *r = qt_split_row(&sp, x->name);
        QrSplitView v;
        if (!r || !qr_compare_split(&r->sp, &v)) { if (!bad++) snprintf(msg, sizeof msg, "%s: no split", x->name); continue; }
        double got[4] = { v.err_w, v.err_i, v.err_round, v.err_clip };
        for (int j = 0; j < 4; j++)
            if (!qt_close(got[j], x->v[j], 1e-4, 1e-10) && !bad++)
                snprintf(msg, sizeof msg, "%s %s: %.9g vs reference %.9g", x->name, part[j], got[j], x->v[j]);
        if (r->sp.n_clip != x->n_clip && !bad++)
            snprintf(msg, sizeof msg, "%s: %lld clipped vs a direct count of %lld", x->name, (long long)r->sp.n_clip, x->n_clip);
        if (!qt_close(v.clip_frac, x->clip_frac, 1e-12, 0) && !bad++)
            snprintf(msg, sizeof msg, "%s clip_frac: %.9g vs %.9g", x->name, v.clip_frac, x->clip_frac);
        if (!qt_close(v.steps_rms, x->steps, 1e-5, 0) && !bad++)
            snprintf(msg, sizeof msg, "%s steps_rms: %.9g vs %.9g", x->name, v.steps_rms, x->steps);
        if (!qt_close(v.noise_ratio, x->noise, 1e-4, 0) && !bad++)
            snprintf(msg, sizeof msg, "%s noise_ratio: %.9g vs %.9g", x->name, v.noise_ratio, x->noise);
        if ((strcmp(v.dominant, x->planted) || strcmp(x->dominant, x->planted)) && !bad++)
            snprintf(msg, sizeof msg, "%s: dominant %s, reference %s, planted %s", x->name, v.dominant, x->dominant, x->planted);
        if (!strcmp(x->planted, "weight") && r->sp.w_channel != x->worst_ch && !bad++)   /* per-tensor: -1 */
            snprintf(msg, sizeof msg, "%s: worst weight channel %d, reference %d", x->name, r->sp.w_channel, x->worst_ch);
    }
    /* layers without quantizers (GlobalAveragePool, Flatten) add no part and name none */
    for (int k = 0; k < sp.c.n; k++) {
        const QrLayerRow *r = &sp.c.rows[k];
        QrSplitView v;
        const char *op = sp.p.b->nodes[sp.se.m.m[r->match].b_node].op_type;
        if (strcmp(op, "GlobalAveragePool") && strcmp(op, "Flatten")) continue;
        if (qr_compare_split(&r->sp, &v) && (v.err_w != 0 || v.err_i != 0 || v.err_round != 0 || v.err_clip != 0 || v.dominant[0]) &&
            !bad++)
            snprintf(msg, sizeof msg, "%s: parts %g %g %g %g, dominant '%s'", op, v.err_w, v.err_i, v.err_round, v.err_clip, v.dominant);
    }
    qt_split_close(&sp);
    QT_CHECKF(bad == 0, "%d mismatches; first: %s", bad, msg);
}

/* The split's runs go to whichever of the comparison's two jobs is free (qr__cmp_split_take): every
 * row's split, bit for bit, and the nodes the runs executed are those of the runs one after another
 * on one thread (a session with low memory runs the jobs in order), at 1, 2 and 3 threads, five
 * times each (the parts write disjoint fields; a part that freed another's clip masks, or read a
 * row's has_local before the shadow run set it, would show here). */
static void test_errsplit_jobs(void) {
    const int saved = qr_pool_threads();
    QtSplitPair ref;
    memset(&ref, 0, sizeof ref);
    QrStatus st = qt_pair_load(&ref.p, "../errsplit", NULL);
    if (st == QR_OK) st = qr_session_open(&ref.se, ref.p.b, ref.p.a, &ref.p.in);
    ref.open = st == QR_OK;
    if (st == QR_OK) {
        qr_session_low_memory(&ref.se);
        st = qr_compare_run(&ref.se, ref.p.a, 0.99, &ref.c);
    }
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_split_close(&ref); return; }
    int n_has = 0;
    for (int k = 0; k < ref.c.n; k++) n_has += ref.c.rows[k].sp.has;
    QT_CHECKF(n_has >= 5 && ref.c.split_exec > 0, "the serial comparison split %d rows in %lld node runs", n_has,
              (long long)ref.c.split_exec);
    for (int threads = 1; threads <= 3; threads++) {
        qr_pool_init(threads);
        for (int rep = 0; rep < 5; rep++) {
            QtSplitPair sp;
            st = qt_split_open(&sp);
            int bad = st == QR_OK && sp.c.n == ref.c.n ? -1 : 0;
            for (int k = 0; bad < 0 && k < sp.c.n; k++)
                if (memcmp(&sp.c.rows[k].sp, &ref.c.rows[k].sp, sizeof sp.c.rows[k].sp)) bad = k;
            QT_CHECKF(bad < 0 && sp.c.split_exec == ref.c.split_exec,
                      "%d threads, run %d: row %d's split differs from the serial runs' (%lld vs %lld node runs)%s%s", threads,
                      rep, bad, (long long)sp.c.split_exec, (long long)ref.c.split_exec, st == QR_OK ? "" : ": ",
                      st == QR_OK ? "" : qr_err_msg());
            qt_split_close(&sp);
        }
    }
    qr_pool_init(saved);
    qt_split_close(&ref);
}

/* The columns in compare_per_layer_out.csv: the table shows the same numbers (%.9g). */
static void test_errsplit_csv(void) {
    QtSplitPair sp;
    QrStatus st = qt_split_open(&sp);
    QrTable t = {0};
    if (st == QR_OK) st = qr_compare_table(&sp.se, &sp.c, true, false, &t);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_split_close(&sp); qr_table_free(&t); return; }
    int cw = -1, cd = -1, cm = -1;
    for (int j = 0; j < t.n_cols; j++) {
        if (!strcmp(t.cols[j], "err_weight")) cw = j;
        if (!strcmp(t.cols[j], "dominant")) cd = j;
        if (!strcmp(t.cols[j], "mod_name")) cm = j;
    }
    bool ok = cw >= 0 && cd == cw + 7 && cm >= 0;
    char msg[256] = "columns missing";
    for (int r = 0; ok && r < t.n_rows; r++) {
        if (strcmp(t.rows[r][cm], "coarse_w")) continue;
        const QrLayerRow *row = qt_split_row(&sp, "coarse_w");
        QrSplitView v;
        qr_compare_split(&row->sp, &v);
        char want[64];
        snprintf(want, sizeof want, "%.9g", v.err_w);
        ok = !strcmp(t.rows[r][cw], want) && !strcmp(t.rows[r][cd], "weight");
        snprintf(msg, sizeof msg, "coarse_w: err_weight '%s' (want %s), dominant '%s'", t.rows[r][cw], want, t.rows[r][cd]);
    }
    qr_table_free(&t);
    qt_split_close(&sp);
    QT_CHECKF(ok, "%s", msg);
}

/* Data sets pool the parts over the samples: every pooled column is the samples' sums over
 * their elements together (the single-input runs' MSE x elements, added, over all elements). */
static void test_errsplit_dataset(void) {
    char dir[600], p[700];
    snprintf(dir, sizeof dir, "%s/es_set", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrTensor x = {0}, y = {0};
    QT_OK(qr_npy_read("fixtures/errsplit/input.npy", &x));
    QrStatus st = qr_tensor_to_f32(&x, &y);
    for (int64_t i = 0; st == QR_OK && i < y.numel; i++) ((float *)y.data)[i] *= 0.5f;   /* a second, quieter sample */
    snprintf(p, sizeof p, "%s/a.npy", dir);
    if (st == QR_OK) st = qr_npy_write(p, &x);
    snprintf(p, sizeof p, "%s/b.npy", dir);
    if (st == QR_OK) st = qr_npy_write(p, &y);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y);
    QT_OK(st);
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "compare fixtures/errsplit/base.onnx fixtures/errsplit/analysis.onnx --data %s -o %s/es_pool --quiet", dir, d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare fixtures/errsplit/base.onnx fixtures/errsplit/analysis.onnx -i %s/a.npy -o %s/es_a --quiet", dir, d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare fixtures/errsplit/base.onnx fixtures/errsplit/analysis.onnx -i %s/b.npy -o %s/es_b --quiet", dir, d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    QtCsv c[3];
    const char *sub[3] = { "es_pool", "es_a", "es_b" };
    int loaded = 0;
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s/compare_per_layer_out.csv", d, sub[k]);
        if (!qt_csv_load(p, &c[k])) break;
        loaded++;
    }
    static const char *const cols[] = { "err_weight", "err_input", "err_output_round", "err_output_clip", "clip_frac",
                                        "noise_ratio", "steps_rms" };
    int bad = 0, checked = 0;
    char msg[512] = "";
    for (int row = 1; loaded == 3 && row < c[0].n_rows; row++) {
        for (int j = 0; j < QR_ARRAY_LEN(cols); j++) {
            int k0 = qt_csv_col(&c[0], cols[j]), k1 = qt_csv_col(&c[1], cols[j]);
            if (k0 < 0 || k1 < 0 || row >= c[1].n_rows || row >= c[2].n_rows) { bad++; break; }
            const char *s0 = c[0].cell[row][k0], *s1 = c[1].cell[row][k1], *s2 = c[2].cell[row][k1];
            if (!s1 || !*s1) { if (s0 && *s0 && !bad++) snprintf(msg, sizeof msg, "row %d %s: pooled '%s' without samples", row, cols[j], s0); continue; }
            double a = strtod(s1, NULL), b = strtod(s2, NULL), want;
            if (j == 5) {        /* noise_ratio: rounding sums over expectation sums (expectation = rounding / ratio) */
                int kr = qt_csv_col(&c[1], "err_output_round");
                double ra = strtod(c[1].cell[row][kr], NULL), rb = strtod(c[2].cell[row][kr], NULL);
                if (!(ra > 0 && rb > 0)) continue;
                want = (ra + rb) / (ra / a + rb / b);
            } else if (j == 6) want = sqrt((a * a + b * b) / 2);   /* steps_rms: RMS over both samples' elements */
            else want = (a + b) / 2;                        /* equal element counts: the mean of the two MSEs */
            checked++;
            if (!qt_close(strtod(s0, NULL), want, 1e-7, 1e-15) && !bad++)
                snprintf(msg, sizeof msg, "row %d %s: pooled %s, samples %s and %s", row, cols[j], s0, s1, s2);
        }
    }
    for (int k = 0; k < loaded; k++) qt_csv_free(&c[k]);
    QT_CHECKF(loaded == 3 && bad == 0 && checked >= 20, "%d csv loaded, %d checked, %d bad; first: %s", loaded, checked, bad, msg);
}

/* The advisor: each planted layer's first specific finding (not the generic low similarity,
 * inherited error or sensitivity rank) is its cause from the error split, naming the planted
 * fault; no outlier-channel finding on the [1, 10] logits (one value per "channel"); the main
 * finding is the cause on the most sensitive layer, with its share. */
static void test_errsplit_advisor(void) {
    QtSplitPair sp;
    QrStatus st = qt_split_open(&sp);
    QrSensResult sr = {0};
    QrAdvice adv = {0};
    QrSensOpts so = { .metric = QR_METRIC_L1 };
    if (st == QR_OK) st = qr_sens_run(&sp.se, &so, &sr);
    if (st == QR_OK) st = qr_advisor_run(&sp.se, &sp.c, &sr, NULL, NULL, &adv);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qr_sens_free(&sr); qt_split_close(&sp); return; }
    static const struct { const char *node; QrAdvKind kind; int dom; } want[] = {
        { "narrow", QR_ADV_SATURATION, 3 }, { "wide", QR_ADV_RANGE, 2 }, { "outlier", QR_ADV_OUTLIER_CHANNELS, 2 },
        { "coarse_w", QR_ADV_WEIGHT_ERROR, 0 }, { "coarse_wt", QR_ADV_WEIGHT_ERROR, 0 } };
    char msg[512] = "";
    int bad = 0;
    for (int w = 0; w < QR_ARRAY_LEN(want); w++) {
        const QrFinding *first = NULL;
        for (int k = 0; k < adv.n && !first; k++) {
            const QrFinding *f = &adv.f[k];
            if (k == 0 || strcmp(f->node, want[w].node)) continue;     /* f[0] is the main finding, moved up */
            if (f->kind != QR_ADV_LOW_SIMILARITY && f->kind != QR_ADV_INHERITED && f->kind != QR_ADV_SENSITIVE) first = f;
        }
        if (!adv.n || !strcmp(adv.f[0].node, want[w].node)) {        /* the main finding is its first */
            const QrFinding *f = &adv.f[0];
            if (adv.n && f->kind != QR_ADV_LOW_SIMILARITY && f->kind != QR_ADV_INHERITED && f->kind != QR_ADV_SENSITIVE) first = f;
        }
        if (!first || first->kind != want[w].kind || first->cause != 1 + want[w].dom) {
            if (!bad++) snprintf(msg, sizeof msg, "%s: first specific finding %s (cause %d), want %s (cause %d)", want[w].node,
                                 first ? qr_adv_kind_name(first->kind) : "none", first ? first->cause : -1,
                                 qr_adv_kind_name(want[w].kind), 1 + want[w].dom);
        }
        if (first && w == 3 && !strstr(first->reason, "channel 3") && !bad++)
            snprintf(msg, sizeof msg, "coarse_w: the weight finding does not name channel 3: %s", first->reason);
        /* the per-tensor weight: named per-tensor, with its abs-max in steps (127 / 20 = 6.35: 6.3 or 6.4) and the
         * coarse-scale fix */
        if (first && w == 4 && (!strstr(first->reason, "per-tensor") || !strstr(first->reason, "spans 6.") ||
                                !strstr(first->fix, "too coarse")) && !bad++)
            snprintf(msg, sizeof msg, "coarse_wt: %s / fix: %s", first->reason, first->fix);
    }
    for (int k = 0; k < adv.n; k++)
        if (adv.f[k].kind == QR_ADV_OUTLIER_CHANNELS && !strcmp(adv.f[k].node, "logits") && !bad++)
            snprintf(msg, sizeof msg, "outlier-channel finding on the [1, 10] logits: %s", adv.f[k].reason);
    /* the main finding: the cause on the top sensitive layer, with its share */
    int idx[64];
    if (sr.n > 0 && sr.n <= 64) qr_sens_order(&sr, idx);
    const char *top = sr.n > 0 && sr.n <= 64 ? sr.rows[idx[0]].name : "";
    if ((!adv.n || !adv.f[0].cause || !strstr(top, adv.f[0].node) || !adv.main_how || !strstr(adv.main_how, "% of that layer")) && !bad++)
        snprintf(msg, sizeof msg, "main finding %s on %s (cause %d), top sensitive %s; how: %s", adv.n ? qr_adv_kind_name(adv.f[0].kind) : "-",
                 adv.n ? adv.f[0].node : "-", adv.n ? adv.f[0].cause : -1, top, adv.main_how ? adv.main_how : "-");
    qr_advice_free(&adv);
    qr_sens_free(&sr);
    qt_split_close(&sp);
    QT_CHECKF(bad == 0, "%d problems; first: %s", bad, msg);
}

/* Width (percent) of stacked-bar segment k in html[a, b): the "qr-sb<k>" span's style width, or
 * -1 when the segment is absent (a zero part). */
static double qt_split_bar_pct(const char *a, const char *b, int k) {
    char key[32];
    qt_fmt(key, sizeof key, "class=\"qr-sb%d\" style=\"width:", k);
    const char *p = strstr(a, key);
    return p && p < b ? strtod(p + strlen(key), NULL) : -1;
}

/* The split bars of a runall bundle: for every planted row, the per-layer table's bar segments
 * (percent of the four parts' sum, %.1f) and the graph view box's bar segments (px of the box's
 * width less 12) are the csv's parts' shares. */
static void test_errsplit_bars(void) {
    char dir[600], p[700];
    snprintf(dir, sizeof dir, "%s/es_bars", qt_tmpdir());
    QtCli r;
    qt_cli(&r, "runall fixtures/errsplit/base.onnx fixtures/errsplit/analysis.onnx -i fixtures/errsplit/input.npy -o %s.zip "
               "--keep-dir %s --quiet", dir, dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    QtCsv c;
    bool have_csv = qt_csv_load(p, &c);
    QT_CHECK(html && have_csv);
    static const char *const planted[] = { "narrow", "wide", "outlier", "coarse_w", "coarse_wt" };
    static const char *const cols[4] = { "err_weight", "err_input", "err_output_round", "err_output_clip" };
    int cn = qt_csv_col(&c, "mod_name"), ci[4], bad = 0, checked = 0;
    char msg[400] = "";
    for (int j = 0; j < 4; j++) ci[j] = qt_csv_col(&c, cols[j]);
    for (int w = 0; w < QR_ARRAY_LEN(planted); w++) {
        double part[4], sum = 0;
        int row = -1;
        for (int k = 1; k < c.n_rows && cn >= 0; k++) if (c.cell[k][cn] && !strcmp(c.cell[k][cn], planted[w])) row = k;
        if (row < 0 || ci[0] < 0 || ci[3] < 0) { if (!bad++) snprintf(msg, sizeof msg, "%s: no csv row", planted[w]); continue; }
        for (int j = 0; j < 4; j++) { part[j] = strtod(c.cell[row][ci[j]], NULL); sum += part[j]; }
        /* the table: the row whose mod_name cell is this name */
        char key[96];
        snprintf(key, sizeof key, "<td class=\"qr-wide\">%s</td>", planted[w]);
        const char *sec = strstr(html, "id=\"compare\""), *sec_end = sec ? strstr(sec, "<section") : NULL;
        const char *ta = sec ? strstr(sec, key) : NULL;
        if (!ta || (sec_end && ta > sec_end)) { snprintf(key, sizeof key, "<td>%s</td>", planted[w]); ta = sec ? strstr(sec, key) : NULL; }
        if (ta && sec_end && ta > sec_end) ta = NULL;
        const char *tb = ta ? strstr(ta, "</tr>") : NULL;
        /* the graph box */
        snprintf(key, sizeof key, "data-node=\"%s\"", planted[w]);
        const char *ga = strstr(html, key), *gb = ga ? strstr(ga, "</g>\n") : NULL, *wd = ga ? strstr(ga, "<rect width=\"") : NULL;
        double boxw = wd && wd < gb ? strtod(wd + 13, NULL) : NAN;
        if (!ta || !tb || !gb || !(boxw > 12)) { if (!bad++) snprintf(msg, sizeof msg, "%s: no table row or box", planted[w]); continue; }
        for (int j = 0; j < 4; j++) {
            double want = part[j] > 0 ? 100 * part[j] / sum : -1, got = qt_split_bar_pct(ta, tb, j);
            char gkey[40];
            snprintf(gkey, sizeof gkey, "class=\"qg-sb%d\" x=\"", j);
            const char *gs = strstr(ga, gkey), *gw = gs && gs < gb ? strstr(gs, "width=\"") : NULL;
            double gpx = gw ? strtod(gw + 7, NULL) : -1, gwant = part[j] > 0 ? (boxw - 12) * part[j] / sum : -1;
            checked++;
            if ((want < 0 ? got != -1 : fabs(got - want) > 0.051) && !bad++)
                snprintf(msg, sizeof msg, "%s %s: table bar %.1f%%, parts give %.3f%%", planted[w], cols[j], got, want);
            if ((gwant < 0 ? gpx != -1 : fabs(gpx - gwant) > 0.006) && !bad++)
                snprintf(msg, sizeof msg, "%s %s: graph bar %.2f px, parts give %.3f px", planted[w], cols[j], gpx, gwant);
        }
    }
    qt_csv_free(&c);
    free(html);
    QT_CHECKF(bad == 0 && checked == 20, "%d checked, %d bad; first: %s", checked, bad, msg);
}

/* --no-error-split skips the work and the columns. In-process: a session with no_error_split set
 * runs no part run (split_exec, the nodes the split's runs executed, stays 0 where the default
 * comparison of the same pair executes some), no row has a split, and the rows' other metrics are
 * the default comparison's. End to end: runall --no-error-split leaves every err_* .. dominant
 * cell of compare_per_layer_out.csv empty, summary.json without err_* keys and index.html without
 * split bars, where the default bundle of the same pair has them all; the other columns agree. */
static void test_errsplit_off(void) {
    QtSplitPair on, off;
    QrStatus st = qt_split_open(&on);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_split_close(&on); return; }
    memset(&off, 0, sizeof off);
    st = qt_pair_load(&off.p, "../errsplit", NULL);
    if (st == QR_OK) { st = qr_session_open(&off.se, off.p.b, off.p.a, &off.p.in); off.open = st == QR_OK; }
    off.se.no_error_split = true;
    if (st == QR_OK) st = qr_compare_run(&off.se, off.p.a, 0.99, &off.c);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_split_close(&on); qt_split_close(&off); return; }
    int split_on = 0, split_off = 0, differ = 0;
    for (int k = 0; k < on.c.n; k++) split_on += on.c.rows[k].sp.has;
    for (int k = 0; k < off.c.n; k++) split_off += off.c.rows[k].sp.has;
    for (int k = 0; k < on.c.n && on.c.n == off.c.n; k++) {
        const QrLayerRow *a = &on.c.rows[k], *b = &off.c.rows[k];
        differ += a->has_m != b->has_m || a->has_local != b->has_local || (a->has_m && memcmp(&a->m, &b->m, sizeof a->m)) ||
                  (a->has_local && memcmp(&a->local, &b->local, sizeof a->local));
    }
    QT_CHECKF(on.c.split_exec > 0 && split_on >= 5, "default: %lld nodes in the split's runs, %d rows with a split",
              (long long)on.c.split_exec, split_on);
    QT_CHECKF(off.c.split_exec == 0 && split_off == 0, "--no-error-split: %lld nodes in the split's runs, %d rows with a split",
              (long long)off.c.split_exec, split_off);
    QT_CHECKF(on.c.n == off.c.n && differ == 0, "rows %d vs %d, %d rows whose other metrics differ", on.c.n, off.c.n, differ);
    qt_split_close(&on);
    qt_split_close(&off);

    static const char *const cols[] = { "err_weight", "err_input", "err_output_round", "err_output_clip", "clip_frac",
                                        "steps_rms", "noise_ratio", "dominant" };
    static const char *const kept[] = { "Cosine", "MSE", "local_Cosine", "local_SQNR" };
    QtCsv c[2];
    int filled[2] = { 0, 0 }, json_keys[2] = { 0, 0 }, bars[2] = { 0, 0 }, loaded = 0, kept_diff = 0;
    for (int v = 0; v < 2; v++) {
        char dir[600], p[700];
        snprintf(dir, sizeof dir, "%s/es_off_%d", qt_tmpdir(), v);
        QtCli r;
        qt_cli(&r, "runall fixtures/errsplit/base.onnx fixtures/errsplit/analysis.onnx -i fixtures/errsplit/input.npy -o %s.zip "
                   "--keep-dir %s --quiet%s", dir, dir, v ? " --no-error-split" : "");
        QT_CHECKF(r.code == 0 && !r.crashed, "variant %d: exit %d: %s", v, r.code, r.err);
        snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
        if (!qt_csv_load(p, &c[v])) break;
        loaded++;
        for (int j = 0; j < QR_ARRAY_LEN(cols); j++) {
            int col = qt_csv_col(&c[v], cols[j]);
            if (col < 0) { filled[v] = -1; break; }      /* the columns stay, empty */
            for (int row = 1; row < c[v].n_rows; row++) filled[v] += c[v].cell[row][col] && *c[v].cell[row][col];
        }
        snprintf(p, sizeof p, "%s/summary.json", dir);
        char *js = qt_ra_read(p, NULL);
        for (const char *q = js; q && (q = strstr(q, "\"err_")); q++) json_keys[v]++;
        free(js);
        snprintf(p, sizeof p, "%s/index.html", dir);
        char *html = qt_ra_read(p, NULL);
        for (const char *q = html; q && (q = strstr(q, "<span class=\"qr-sbar\"")); q++) bars[v]++;
        for (const char *q = html; q && (q = strstr(q, "<g class=\"qg-sb\">")); q++) bars[v]++;
        free(html);
    }
    for (int j = 0; loaded == 2 && j < QR_ARRAY_LEN(kept); j++) {
        int c0 = qt_csv_col(&c[0], kept[j]), c1 = qt_csv_col(&c[1], kept[j]);
        if (c0 < 0 || c1 < 0 || c[0].n_rows != c[1].n_rows) { kept_diff++; continue; }
        for (int row = 1; row < c[0].n_rows; row++)
            kept_diff += strcmp(c[0].cell[row][c0] ? c[0].cell[row][c0] : "", c[1].cell[row][c1] ? c[1].cell[row][c1] : "") != 0;
    }
    for (int v = 0; v < loaded; v++) qt_csv_free(&c[v]);
    QT_CHECKF(loaded == 2, "%d csv loaded", loaded);
    QT_CHECKF(filled[0] > 20 && json_keys[0] >= 20 && bars[0] >= 10, "default bundle: %d split cells, %d err_* keys, %d bars",
              filled[0], json_keys[0], bars[0]);
    QT_CHECKF(filled[1] == 0 && json_keys[1] == 0 && bars[1] == 0, "--no-error-split: %d split cells, %d err_* keys, %d bars",
              filled[1], json_keys[1], bars[1]);
    QT_CHECKF(kept_diff == 0, "%d cells of Cosine / MSE / local_* differ between the bundles", kept_diff);
}

/* One case of test_errsplit_u_channels: the output-only statistics of u (shape dims) under a
 * quantizer with np scales on axis `axis`, by the channel loop and by the element-wise definition;
 * every field of the split and every clip flag must be the same bits. Then the squared errors of a
 * value y against a baseline x (qr__cmp_split_y) with those clip flags (output-only run) and without
 * (weight-only run) against the plain loop: (y - x)^2 over the finite pairs in element order. */
static int qt_split_u_case(int rank, const int64_t *dims, int axis, int64_t np, QrDType dt, float ilo, float ihi, char *msg,
                           size_t cap) {
    QrSession *s = calloc(1, sizeof *s);
    QrValue vals[3];
    memset(vals, 0, sizeof vals);
    const QrTensor *fw[1] = { NULL };
    QrQuantizer q;
    memset(&q, 0, sizeof q);
    q.dtype = dt; q.axis = axis; q.scale_value = 0; q.zp_value = dt == QR_DT_U8 ? 1 : -1; q.n_scales = np;
    q.implied_lo = ilo; q.implied_hi = ihi; q.float_value = 2;
    QrTensor u = {0}, x = {0}, y = {0};
    int64_t d1 = np;
    int bad = 0;
    if (!s || qr_tensor_set_shape(&vals[0].t, QR_DT_F32, 1, &d1) != QR_OK || qr_tensor_alloc_data(&vals[0].t) != QR_OK ||
        qr_tensor_set_shape(&vals[1].t, QR_DT_U8, 1, &d1) != QR_OK || qr_tensor_alloc_data(&vals[1].t) != QR_OK ||
        qr_tensor_set_shape(&u, QR_DT_F32, rank, dims) != QR_OK || qr_tensor_alloc_data(&u) != QR_OK ||
        qr_tensor_set_shape(&x, QR_DT_F32, rank, dims) != QR_OK || qr_tensor_alloc_data(&x) != QR_OK ||
        qr_tensor_set_shape(&y, QR_DT_F32, rank, dims) != QR_OK || qr_tensor_alloc_data(&y) != QR_OK ||
        qr_tensor_set_shape(&vals[2].t, QR_DT_F32, rank, dims) != QR_OK || qr_tensor_alloc_data(&vals[2].t) != QR_OK) {
        snprintf(msg, cap, "out of memory");
        bad = 1;
    }
    uint32_t r = 12345u + (uint32_t)np * 7u + (uint32_t)rank;
    for (int64_t c = 0; !bad && c < np; c++) {
        ((float *)vals[0].t.data)[c] = c == 2 ? 0.0f : 0.01f + 0.003f * (float)c;   /* a zero step: channel skipped */
        ((uint8_t *)vals[1].t.data)[c] = (uint8_t)(100 + 5 * c);
    }
    float *px = x.data, *py = y.data;
    for (int64_t i = 0; !bad && i < u.numel; i++) {
        r = r * 1664525u + 1013904223u;
        float v = ((float)(r >> 8) / 16777216.0f - 0.4f) * 4.0f;
        if (i % 7 == 3 || (i / 50) % 5 == 2) v = 0.0f;   /* zeros (a Relu's): +0 squares, alone and in runs */
        if (i % 97 == 5) v = NAN;
        if (i % 131 == 7) v = -INFINITY;
        ((float *)u.data)[i] = v;
        ((float *)vals[2].t.data)[i] = v * 0.7f + 0.013f * (float)((i * 37) % 101);   /* the float weight */
        px[i] = i % 89 == 11 ? INFINITY : v == v && isfinite(v) ? v : 0.5f;          /* a baseline and a value: */
        py[i] = i % 11 < 4 ? px[i] : px[i] + (float)((r >> 4) % 1000) * 1e-3f - 0.5f;  /* equal runs, then errors */
        if (i % 113 == 9) py[i] = NAN;
    }
    s->qt.q = &q;
    s->qt.n = 1;
    s->tw.g.values = vals;
    s->tw.g.n_values = 3;
    s->fw = fw;
    s->base = &x;
    QrLayerRow rows[2];
    memset(rows, 0, sizeof rows);
    QrCompare c = { .n = 2, .rows = rows };
    int oq[2] = { 0, 0 };
    uint8_t *mask[2] = { NULL, NULL };
    QrCmpSplitPlan sp;
    memset(&sp, 0, sizeof sp);
    sp.s = s; sp.c = &c; sp.oq = oq; sp.wq = oq; sp.mask = mask;
    if (!bad) {                  /* the weight-only run's worst channel, u taken as the quantized weight */
        qr__cmp_split_wt(&sp, 0, &u, u.data);
        qr__cmp_split_wt_ref(&sp, 1, &u, u.data);
        if (np > 1 && u.numel > 1 && rows[0].sp.w_channel < 0) {
            snprintf(msg, cap, "rank %d axis %d np %lld: no worst weight channel", rank, axis, (long long)np);
            bad = 1;
        }
    }
    if (!bad && (qr__cmp_split_u(&sp, 0, &u, u.data) != QR_OK || qr__cmp_split_u_ref(&sp, 1, &u, u.data) != QR_OK)) {
        snprintf(msg, cap, "%.400s", qr_err_msg());
        bad = 1;
    }
    if (!bad && memcmp(&rows[0].sp, &rows[1].sp, sizeof rows[0].sp)) {
        snprintf(msg, cap, "rank %d axis %d np %lld: n_clip %lld/%lld s_noise %.17g/%.17g su2 %.17g/%.17g steps %.17g/%.17g "
                 "w_channel %d/%d share %.17g/%.17g", rank, axis, (long long)np, (long long)rows[0].sp.n_clip,
                 (long long)rows[1].sp.n_clip, rows[0].sp.s_noise, rows[1].sp.s_noise, rows[0].sp.su2, rows[1].sp.su2,
                 rows[0].sp.steps_med, rows[1].sp.steps_med, rows[0].sp.w_channel, rows[1].sp.w_channel,
                 rows[0].sp.w_channel_share, rows[1].sp.w_channel_share);
        bad = 1;
    }
    if (!bad && (!mask[0] || !mask[1] || memcmp(mask[0], mask[1], (size_t)u.numel))) {
        snprintf(msg, cap, "rank %d axis %d np %lld: the clip flags differ", rank, axis, (long long)np);
        bad = 1;
    }
    double w[3] = { 0, 0, 0 };   /* the plain definition: round (flag clear), clip (flag set); all */
    for (int64_t i = 0; !bad && i < u.numel; i++) {
        if (!isfinite(px[i]) || !isfinite(py[i])) continue;
        double d = (double)py[i] - (double)px[i];
        w[mask[1][i] ? 1 : 0] += d * d;
        w[2] += d * d;
    }
    if (!bad) {
        qr__cmp_split_y(&sp, 2, 0, py, u.numel);   /* the output-only run: row 0's clip flags, then gives them back */
        qr__cmp_split_y(&sp, 0, 1, py, u.numel);   /* the weight-only run: no flags */
        if (memcmp(&rows[0].sp.s_round, &w[0], 8) || memcmp(&rows[0].sp.s_clip, &w[1], 8) || memcmp(&rows[1].sp.sw, &w[2], 8) ||
            mask[0] || !mask[1]) {
            snprintf(msg, cap, "rank %d axis %d np %lld: squared errors round %.17g/%.17g clip %.17g/%.17g weight-only %.17g/%.17g"
                     " (flags %s)", rank, axis, (long long)np, rows[0].sp.s_round, w[0], rows[0].sp.s_clip, w[1], rows[1].sp.sw,
                     w[2], mask[0] ? "kept" : "given back");
            bad = 1;
        }
    }
    free(mask[0]);
    free(mask[1]);
    qr_tensor_free_data(&u);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y);
    qr_tensor_free_data(&vals[0].t);
    qr_tensor_free_data(&vals[1].t);
    qr_tensor_free_data(&vals[2].t);
    free(s);
    return bad;
}

/* The error split's output-only statistics and the weight-only run's worst channel, computed channel
 * by channel (qr__cmp_split_u / _wt, one parameter lookup per channel), are those of the
 * element-wise definitions bit for bit, and its squared errors (qr__cmp_split_y) those of the plain
 * loop, at every kernel level (qr_kern.f32_clip_sq / f32_sqerr_split): per-tensor
 * and per-axis quantizers, negative and out-of-range axes, more channels than scales, a zero
 * step, NaN/-inf elements, zeros, an implied Relu / Relu6, signed and unsigned ranges, one element,
 * channel runs of 1, 5, 49 elements and none, a large per-tensor value (its rounding expectation
 * adds one step^2 / 12 tens of thousands of times: qr__cmp_add_n). */
static void test_errsplit_u_channels(void) {
    static const int64_t d4[4] = { 2, 6, 5, 7 }, d2[2] = { 9, 6 }, d1[1] = { 300 }, w4[4] = { 16, 4, 3, 3 };
    static const int64_t e1[1] = { 1 }, e2[2] = { 3, 5 }, e4[4] = { 2, 13, 1, 1 }, e3[3] = { 4, 3, 11 }, e5[4] = { 1, 16, 7, 7 };
    static const int64_t e6[4] = { 1, 1, 9, 17 }, big[4] = { 1, 24, 56, 56 }, e0[2] = { 3, 0 };
    struct { int rank; const int64_t *dims; int axis; int64_t np; QrDType dt; float lo, hi; } cs[] = {
        { 4, d4, -1, 1, QR_DT_U8, NAN, NAN },  { 4, d4, 1, 6, QR_DT_U8, NAN, NAN },  { 4, d4, -3, 6, QR_DT_S8, 0, 6 },
        { 4, d4, 1, 3, QR_DT_U8, 0, NAN },     { 4, d4, 0, 2, QR_DT_S8, NAN, NAN },  { 4, d4, 3, 7, QR_DT_U8, NAN, NAN },
        { 4, d4, 9, 6, QR_DT_U8, NAN, NAN },   { 2, d2, 1, 6, QR_DT_S8, NAN, 1.5f }, { 1, d1, 0, 4, QR_DT_U8, NAN, NAN },
        { 1, d1, -1, 1, QR_DT_S8, 0, NAN },
        { 4, w4, 1, 4, QR_DT_S8, NAN, NAN },  { 4, w4, 0, 16, QR_DT_S8, NAN, NAN }, { 4, w4, 3, 3, QR_DT_U8, NAN, NAN },
        { 1, e1, 0, 1, QR_DT_U8, 0, 6 },      { 2, e2, 0, 3, QR_DT_U8, NAN, NAN },  { 4, e4, 1, 13, QR_DT_S8, 0, NAN },
        { 3, e3, -1, 11, QR_DT_U8, NAN, NAN }, { 4, e5, 1, 16, QR_DT_U8, 0, 6 },   { 4, e6, 0, 1, QR_DT_S8, NAN, NAN },
        { 4, big, 1, 1, QR_DT_U8, 0, 6 },     { 4, big, 1, 24, QR_DT_S8, NAN, NAN }, { 2, e0, 0, 3, QR_DT_U8, NAN, NAN },
    };
    QrKernels lv[8];
    const int nl = qt__k_levels(lv, 8);
    const QrKernels saved = qr_kern;
    char msg[512] = "";
    int bad = 0;
    for (int l = 0; l < nl && !bad; l++) {
        qr_kern = lv[l];
        for (size_t i = 0; i < sizeof cs / sizeof cs[0] && !bad; i++)
            bad = qt_split_u_case(cs[i].rank, cs[i].dims, cs[i].axis, cs[i].np, cs[i].dt, cs[i].lo, cs[i].hi, msg, sizeof msg);
        if (bad) QT_CHECKF(0, "level %s: %s", qr_isa_name(lv[l].isa), msg);
    }
    qr_kern = saved;
    QT_CHECKF(nl >= 2, "levels: %d", nl);
}

/* qr__cmp_add_n (k additions of the same c in a few steps per binade) against the loop of k
 * additions, bit for bit: sums from +0, -0, inside a binade, just below a power of two, subnormal,
 * near the largest double (overflow to Inf); c with a full mantissa, with few bits (sums land on
 * the binade ends exactly), half-way between the multiples of a binade's spacing (ties, both
 * parities), too small to move the sum, subnormal, negative, NaN; counts up to 3e5. */
static void test_errsplit_add_n(void) {
    static const double cs[] = { 0.1, 1.0 / 12.0, 3.0 * 0x1p-10, 5.0 * 0x1p-7, 0x1p-5, 0.75, 1.0 + 0x1p-52, 3.0 + 0x1p-51,
                                 0x1.8p-40, 7.0e-5, 0x1p-1074 * 3.0, 1e-300, 2.5e307, 1e-17, -0.25, 0.0, NAN };
    static const double ss[] = { 0.0, -0.0, 1.0, 1.0 - 0x1p-53, 3.999, 0x1p-1074 * 17.0, 0x1p-1022 - 0x1p-1070, 1e308, 5e-310,
                                 -2.0, 0x1.fffffffffffffp+1 };
    static const int64_t ks[] = { 0, 1, 2, 16, 17, 100, 4095, 65537, 300000 };
    uint64_t rng = 5;
    int bad = 0, n = 0;
    char msg[256] = "";
    for (int ci = 0; ci < QR_ARRAY_LEN(cs) + 40 && !bad; ci++)
        for (int si = 0; si < QR_ARRAY_LEN(ss) + 3 && !bad; si++)
            for (int ki = 0; ki < QR_ARRAY_LEN(ks) && !bad; ki++) {
                double c = ci < QR_ARRAY_LEN(cs) ? cs[ci] : ldexp((double)(qr_rng_next(&rng) >> 11), -53 - (int)(qr_rng_next(&rng) % 40));
                if (ci >= QR_ARRAY_LEN(cs) && ci % 4 == 1) c = ldexp((double)(qr_rng_next(&rng) % 64 | 1), -(int)(qr_rng_next(&rng) % 30));
                double s0 = si < QR_ARRAY_LEN(ss) ? ss[si] : (double)(qr_rng_next(&rng) >> 11) * 0x1p-53 * 8.0;
                int64_t k = ks[ki];
                if (fabs(c) > 1e300 && k > 100) continue;   /* Inf after a few: the loop would only spin */
                double w = s0;
                for (int64_t i = 0; i < k; i++) w += c;
                double g = qr__cmp_add_n(s0, c, k);
                n++;
                if (memcmp(&g, &w, 8)) {
                    snprintf(msg, sizeof msg, "s %a + %lld x c %a: %a, the loop %a", s0, (long long)k, c, g, w);
                    bad = 1;
                }
            }
    QT_CHECKF(!bad, "%s", msg);
    QT_CHECKF(n > 5000, "%d cases", n);
}

/* The weight-only run's worst weight channels computed from the DequantizeLinear's integers (no tap of
 * the weight, so the run need not materialize it: compare.c qr__cmp_split_wt_node) are the bits the tap
 * of the dequantized weight gave: every row's split is the same bytes, no weight is tapped, and the
 * per-channel weights of the fixture do have a worst channel. */
static void test_errsplit_weight_direct(void) {
    QtSplitPair sp[2];
    int64_t taps[2];
    QrStatus st = QR_OK;
    for (int v = 0; v < 2; v++) {
        qr__cmp_wt_tapped = v == 1;
        qr__cmp_wt_taps = 0;
        QrStatus sv = qt_split_open(&sp[v]);
        taps[v] = qr__cmp_wt_taps;
        if (st == QR_OK && sv != QR_OK) st = sv;
    }
    qr__cmp_wt_tapped = false;
    int diff = 0, chans = 0, rows = st == QR_OK && sp[0].c.n == sp[1].c.n ? sp[0].c.n : -1;
    for (int k = 0; k < rows; k++) {
        diff += memcmp(&sp[0].c.rows[k].sp, &sp[1].c.rows[k].sp, sizeof sp[0].c.rows[k].sp) != 0;
        chans += sp[0].c.rows[k].sp.w_channel >= 0;
    }
    for (int v = 0; v < 2; v++) qt_split_close(&sp[v]);
    QT_CHECKF(st == QR_OK && rows > 0, "%s (rows %d)", st == QR_OK ? "" : qr_err_msg(), rows);
    QT_CHECKF(diff == 0, "%d of %d rows' splits differ between the integers and the tapped weight", diff, rows);
    QT_CHECKF(chans >= 2, "%d rows name a worst weight channel", chans);
    QT_CHECKF(taps[0] == 0 && taps[1] >= chans, "weights tapped: %lld from the integers, %lld tapped", (long long)taps[0],
              (long long)taps[1]);
}

/* A data set's samples: a tapped weight that is a constant of the weight-only run (the fixture's
 * per-channel weights, tapped: qr__cmp_wt_tapped) has its worst channel computed on the first sample
 * only and kept for the others (qr__cmp_split_run), with the bits of computing it on every sample
 * (qr__cmp_wt_every): every row's split is the same bytes, sample by sample, both ways. */
static void test_errsplit_weight_once(void) {
    enum { NS = 3 };
    QrErrSplit *got[2] = { NULL, NULL };
    int64_t taps[2][NS];
    int rows[2] = { -1, -1 };
    QrStatus st = QR_OK;
    for (int v = 0; v < 2 && st == QR_OK; v++) {
        qr__cmp_wt_tapped = true;
        qr__cmp_wt_every = v == 1;
        QtPair pr;
        QrSession se;
        QrCompare c;
        QrCmpPlan *plan = NULL;
        QrTensor in = {0}, in0 = {0};
        bool open = false;
        st = qt_pair_load(&pr, "../errsplit", NULL);
        if (st == QR_OK && (st = qr_session_open(&se, pr.b, pr.a, &pr.in)) == QR_OK) open = true;
        if (st == QR_OK) st = qr_compare_ds_open(&se, NULL, NULL, NULL, &c, &plan);
        if (st == QR_OK) st = qr_tensor_to_f32(&pr.in, &in0);
        if (st == QR_OK) st = qr_tensor_to_f32(&pr.in, &in);
        if (st == QR_OK) {
            rows[v] = c.n;
            got[v] = calloc((size_t)NS * (size_t)c.n + 1, sizeof *got[v]);
        }
        for (int j = 0; j < NS && st == QR_OK && got[v]; j++) {
            for (int64_t i = 0; i < in.numel; i++) ((float *)in.data)[i] = ((const float *)in0.data)[i] * (1.0f - 0.3f * (float)j);
            qr_session_next_inputs(&se, &in);
            qr__cmp_wt_taps = 0;
            st = qr_compare_ds_run(plan, NULL, NULL);
            taps[v][j] = qr__cmp_wt_taps;
            for (int k = 0; k < c.n; k++) got[v][j * c.n + k] = c.rows[k].sp;
        }
        if (plan) qr_compare_ds_close(plan);
        if (plan) qr_compare_free(&c);
        if (open) qr_session_close(&se);
        qr_tensor_free_data(&in);
        qr_tensor_free_data(&in0);
        qt_pair_free(&pr);
    }
    qr__cmp_wt_tapped = qr__cmp_wt_every = false;
    QT_CHECKF(st == QR_OK && got[0] && got[1] && rows[0] == rows[1] && rows[0] > 0, "%s", st == QR_OK ? "rows" : qr_err_msg());
    int diff = 0, chans = 0;
    for (int i = 0; st == QR_OK && got[0] && got[1] && rows[0] == rows[1] && i < NS * rows[0]; i++) {
        diff += memcmp(&got[0][i], &got[1][i], sizeof got[0][i]) != 0;
        chans += got[0][i].w_channel >= 0;
    }
    QT_CHECKF(diff == 0, "%d of %d rows' splits differ between the kept and the recomputed worst channels", diff, NS * rows[0]);
    QT_CHECKF(chans >= 2 * NS, "%d rows name a worst weight channel", chans);
    QT_CHECKF(st != QR_OK || (taps[0][0] >= 2 && taps[0][1] == 0 && taps[0][2] == 0 && taps[1][1] == taps[1][0] &&
                              taps[1][2] == taps[1][0]),
              "worst channels computed per sample: kept %lld %lld %lld, every sample %lld %lld %lld", (long long)taps[0][0],
              (long long)taps[0][1], (long long)taps[0][2], (long long)taps[1][0], (long long)taps[1][1], (long long)taps[1][2]);
    free(got[0]);
    free(got[1]);
}

/* qr__cmp_split_wt_sums on a weight's 8-bit integers (the MatMul layout, channels along the last axis, in
 * one loop per row; and along the first axis) against the element-wise definition qr__cmp_split_wt_ref on
 * the weight DequantizeLinear gives, (float)(q - zp) * scale: the same worst channel and share bits, with
 * NaN in the float weight, signed and unsigned integers. */
static void test_errsplit_weight_rows(void) {
    const int64_t dims[2] = { 33, 19 };
    int bad = 0;
    char msg[256] = "";
    for (int cfg = 0; cfg < 4 && !bad; cfg++) {
        int axis = cfg & 1;
        bool sg = cfg & 2;
        int64_t n = dims[0] * dims[1], np = dims[axis], inner = axis ? 1 : dims[1];
        QrSession *s = calloc(1, sizeof *s);
        QrValue vals[1];
        memset(vals, 0, sizeof vals);
        const QrTensor *fw[1] = { NULL };
        QrQuantizer q;
        memset(&q, 0, sizeof q);
        q.axis = axis; q.n_scales = np; q.float_value = 0;
        QrTensor wq = {0};
        uint8_t *x = malloc((size_t)n);
        float *sc = malloc((size_t)np * sizeof *sc);
        int32_t *zp = malloc((size_t)np * sizeof *zp);
        QT_CHECK(s && x && sc && zp);
        QT_OK(qr_tensor_set_shape(&vals[0].t, QR_DT_F32, 2, dims));
        QT_OK(qr_tensor_alloc_data(&vals[0].t));
        QT_OK(qr_tensor_set_shape(&wq, QR_DT_F32, 2, dims));
        QT_OK(qr_tensor_alloc_data(&wq));
        uint32_t r = 777u + (uint32_t)cfg;
        for (int64_t c = 0; c < np; c++) { sc[c] = 0.002f + 0.0007f * (float)c; zp[c] = sg ? (int32_t)(c % 7) - 3 : 120 + (int32_t)(c % 9); }
        for (int64_t i = 0; i < n; i++) {
            int64_t c = (i / inner) % np;
            r = r * 1664525u + 1013904223u;
            x[i] = (uint8_t)(r >> 24);
            int32_t qv = sg ? (int32_t)(int8_t)x[i] : (int32_t)x[i];
            ((float *)wq.data)[i] = (float)(qv - zp[c]) * sc[c];
            ((float *)vals[0].t.data)[i] = i % 53 == 4 ? NAN : ((float *)wq.data)[i] + (float)((r >> 8) % 1000) * 1e-6f * (float)(1 + c % 5);
        }
        s->qt.q = &q;
        s->qt.n = 1;
        s->tw.g.values = vals;
        s->tw.g.n_values = 1;
        s->fw = fw;
        QrLayerRow rows[2];
        memset(rows, 0, sizeof rows);
        QrCompare cmp = { .n = 2, .rows = rows };
        int wqi[2] = { 0, 0 };
        QrCmpSplitPlan sp;
        memset(&sp, 0, sizeof sp);
        sp.s = s; sp.c = &cmp; sp.wq = wqi;
        QrCmpWt src = { .x = x, .sg = sg, .s = sc, .z = zp };
        qr__cmp_split_wt_sums(&sp, 0, &src, vals[0].t.data, n, np, axis, np, inner);
        qr__cmp_split_wt_ref(&sp, 1, &wq, wq.data);
        if (rows[0].sp.w_channel < 0 || rows[0].sp.w_channel != rows[1].sp.w_channel ||
            memcmp(&rows[0].sp.w_channel_share, &rows[1].sp.w_channel_share, sizeof(double))) {
            bad = 1;
            snprintf(msg, sizeof msg, "axis %d %s: channel %d/%d share %.17g/%.17g", axis, sg ? "int8" : "uint8", rows[0].sp.w_channel,
                     rows[1].sp.w_channel, rows[0].sp.w_channel_share, rows[1].sp.w_channel_share);
        }
        qr_tensor_free_data(&vals[0].t);
        qr_tensor_free_data(&wq);
        free(x); free(sc); free(zp); free(s);
    }
    QT_CHECKF(!bad, "%s", msg);
}

static void qt_errsplit_all(void) {
    QT_RUN(test_errsplit_reference);
    QT_RUN(test_errsplit_jobs);
    QT_RUN(test_errsplit_csv);
    QT_RUN(test_errsplit_dataset);
    QT_RUN(test_errsplit_advisor);
    QT_RUN(test_errsplit_bars);
    QT_RUN(test_errsplit_off);
    QT_RUN(test_errsplit_u_channels);
    QT_RUN(test_errsplit_add_n);
    QT_RUN(test_errsplit_weight_direct);
    QT_RUN(test_errsplit_weight_once);
    QT_RUN(test_errsplit_weight_rows);
}
