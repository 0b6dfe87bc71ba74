/* tests/llm — LLMs as onnxruntime-genai's model builder writes them (issue 26; fixtures/make_llm.py):
 * the on-disk form (model.onnx + model.onnx.data), qreport's run of the decoder against ONNX Runtime's
 * outputs, symbolic dims bound in every command, and the per-token columns of compare_outputs against
 * a computation written here from the two logits tensors and against the fixture script's numpy values. */

#define QT_LLM "fixtures/llm"

/* Reads fixtures' "key\tvalue" lines; NaN when the key is missing. */
static double qt_llm_tsv(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    char line[512];
    double v = NAN;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == '\t') { v = strtod(line + kl + 1, NULL); break; }
    fclose(f);
    return v;
}

/* Splits one CSV line (RFC 4180 quotes; no newlines inside cells) into cells, in place. */
static int qt_llm_csv_split(char *line, char **cells, int cap) {
    int n = 0;
    char *w = line, *p = line;
    while (n < cap) {
        cells[n++] = w;
        bool q = *p == '"';
        if (q) p++;
        for (;;) {
            if (q && *p == '"' && p[1] == '"') { *w++ = '"'; p += 2; continue; }
            if (q && *p == '"') { q = false; p++; continue; }
            if (!*p || *p == '\r' || *p == '\n' || (!q && *p == ',')) break;
            *w++ = *p++;
        }
        bool more = *p == ',';
        *w++ = 0;
        if (!more) break;
        p++;
    }
    return n;
}

/* The cell of column col in the row whose first cell is row (compare_outputs.csv); false when missing. */
static bool qt_llm_csv(const char *path, const char *row, const char *col, char *out, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char head[4096], line[4096], *hc[64], *rc[64];
    bool ok = false;
    int ci = -1;
    if (fgets(head, sizeof head, f)) {
        int nh = qt_llm_csv_split(head, hc, 64);
        for (int k = 0; k < nh; k++) if (!strcmp(hc[k], col)) ci = k;
    }
    while (ci >= 0 && !ok && fgets(line, sizeof line, f)) {
        int nc = qt_llm_csv_split(line, rc, 64);
        if (nc > ci && !strcmp(rc[0], row)) { snprintf(out, n, "%s", rc[ci]); ok = true; }
    }
    fclose(f);
    return ok;
}

static bool qt_llm_close(double a, double b, double rel) {
    return fabs(a - b) <= rel * fmax(1e-12, fmax(fabs(a), fabs(b)));
}

/* Loads the graph inputs of a fixture step folder (prompt/ or decode/: <input name>.npy). */
static QrStatus qt_llm_inputs(const QrGraph *g, const char *dir, QrTensor *in) {
    for (int i = 0; i < g->n_inputs; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s.npy", dir, g->values[g->inputs[i]].name);
        QR_TRY(qr_npy_read(p, &in[i]));
    }
    return QR_OK;
}

/* ---- the on-disk form ------------------------------------------------------------------------- */

static void test_llm_external_data(void) {
    QrGraph *g = NULL;
    QT_OK(qr_run_load(QT_LLM "/fp32/model.onnx", &g));
    /* every initializer is external in the file; the loaded cos_cache must be cos(p * theta^(-2i/h)),
     * computed here, and the embedding table as large as declared */
    int cv = qr_graph_find(g, "cos_cache"), sv = qr_graph_find(g, "sin_cache"), ev = qr_graph_find(g, "model.embed_tokens.weight");
    bool ok = cv >= 0 && sv >= 0 && ev >= 0;
    double worst = 0;
    const QrTensor *c = ok ? &g->values[cv].t : NULL, *s = ok ? &g->values[sv].t : NULL;
    for (int64_t p = 0; ok && p < c->dims[0]; p++)
        for (int64_t i = 0; i < c->dims[1]; i++) {
            float inv = (float)(1.0 / pow(10000.0, (double)(2 * i) / (double)(2 * c->dims[1])));
            double ang = (double)((float)p * inv);
            worst = fmax(worst, fabs(qr_tensor_get_f64(c, p * c->dims[1] + i) - cos(ang)));
            worst = fmax(worst, fabs(qr_tensor_get_f64(s, p * c->dims[1] + i) - sin(ang)));
        }
    int64_t vocab = ok ? g->values[ev].t.dims[0] : 0;
    qr_graph_free(g);
    free(g);
    QT_CHECKF(ok && worst < 1e-5 && vocab == 256, "cos/sin caches off by %g, vocab %lld", worst, (long long)vocab);
    /* the int4 twin: packed MatMulNBits weights from the data file */
    QT_OK(qr_run_load(QT_LLM "/int4_sym/model.onnx", &g));
    int n_nb = 0;
    for (int i = 0; i < g->n_nodes; i++) n_nb += !strcmp(g->nodes[i].op_type, "MatMulNBits");
    qr_graph_free(g);
    free(g);
    QT_CHECKF(n_nb == 2 * 5 + 1, "%d MatMulNBits nodes", n_nb);
    /* a data file cut short: the error names the tensor and the file */
    char dir[512], cmd[1200];
    snprintf(dir, sizeof dir, "%s/llm_trunc", qt_tmpdir());
    qt_fmt(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp " QT_LLM "/fp32/model.onnx '%s/' && head -c 100000 "
             QT_LLM "/fp32/model.onnx.data > '%s/model.onnx.data'", dir, dir, dir, dir);
    QT_CHECK(system(cmd) == 0);
    char path[600];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    QrStatus st = qr_run_load(path, &g);
    QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "past the end of 'model.onnx.data'") && strstr(qr_err_msg(), "tensor '"),
              "%s", qr_err_msg());
    qr_err_clear();
}

/* ---- qreport's run against ONNX Runtime ------------------------------------------------------------ */

/* The model variant on a step's inputs against ORT's outputs there: the largest |diff| over the
 * range of ORT's value, per output. */
static QrStatus qt_llm_vs_ort(const char *variant, const char *step, double *worst, char *worst_name, size_t wn) {
    char path[512];
    snprintf(path, sizeof path, QT_LLM "/%s/model.onnx", variant);
    QrGraph *g = NULL;
    QR_TRY(qr_run_load(path, &g));
    QrTensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in), *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    char dir[256];
    snprintf(dir, sizeof dir, QT_LLM "/%s", step);
    QrStatus st = in && out ? qt_llm_inputs(g, dir, in) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_run_infer(g, in);
    if (st == QR_OK) st = qr_run(g, in, NULL, out);
    *worst = 0;
    for (int j = 0; st == QR_OK && j < g->n_outputs; j++) {
        const char *name = g->values[g->outputs[j]].name;
        QrTensor ref = {0};
        snprintf(path, sizeof path, QT_LLM "/%s/ort_%s/%s.npy", step, variant, name);
        st = qr_npy_read(path, &ref);
        if (st == QR_OK && ref.numel != out[j].numel)
            st = qr_errf(QR_ERR_SHAPE, "%s: %lld elements, ORT %lld", name, (long long)out[j].numel, (long long)ref.numel);
        double lo = INFINITY, hi = -INFINITY, d = 0;
        for (int64_t e = 0; st == QR_OK && e < ref.numel; e++) {
            double r = qr_tensor_get_f64(&ref, e), q = qr_tensor_get_f64(&out[j], e);
            lo = fmin(lo, r);
            hi = fmax(hi, r);
            d = fmax(d, fabs(r - q));
        }
        if (st == QR_OK && d / fmax(hi - lo, 1e-30) > *worst) {
            *worst = d / fmax(hi - lo, 1e-30);
            snprintf(worst_name, wn, "%s", name);
        }
        qr_tensor_free_data(&ref);
    }
    for (int i = 0; in && i < g->n_inputs; i++) qr_tensor_free_data(&in[i]);
    for (int j = 0; out && j < g->n_outputs; j++) qr_tensor_free_data(&out[j]);
    free(in);
    free(out);
    qr_graph_free(g);
    free(g);
    return st;
}

static void test_llm_run_vs_ort(void) {
    static const char *const need[][2] = { { "com.microsoft", "GroupQueryAttention" }, { "", "SimplifiedLayerNormalization" },
                                           { "com.microsoft", "SkipSimplifiedLayerNormalization" } };
    for (int k = 0; k < QR_ARRAY_LEN(need); k++)
        if (!qr_op_find(need[k][0], need[k][1]))
            QT_SKIP("%s%s%s is not implemented yet (issue 26's operators land from the llmops branch)", need[k][0],
                    *need[k][0] ? "." : "", need[k][1]);
    static const char *const variants[] = { "fp32", "int4_sym", "int4_asym", "qdq8" };
    static const char *const steps[] = { "prompt", "decode" };
    for (int v = 0; v < QR_ARRAY_LEN(variants); v++)
        for (int s = 0; s < 2; s++) {
            double w;
            char name[128] = "";
            QT_OK(qt_llm_vs_ort(variants[v], steps[s], &w, name, sizeof name));
            /* ORT sums in other orders than qreport in places (MLAS GEMM tails, the attention softmax): a local merge with
             * the llmops operators measured at most 2.5e-7 of the range (int4_asym prompt), 8x below this bound */
            QT_CHECKF(w < 2e-6, "%s %s: output '%s' differs from ONNX Runtime by %g of its range", variants[v], steps[s], name, w);
        }
}

/* ---- per-token columns ------------------------------------------------------------------------------ */

typedef struct QtTokRef {
    int64_t tokens;
    double top1, top5, kmean, kp90, kp99, kmax, dp_rms, nll_b, nll_a;
    int64_t nll_n, kmax_at;
} QtTokRef;

static int qt_llm_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The definitions of docs/REPORT.md written out plainly: softmax by division, the top 5 by sorting
 * indices (ties: lower index), percentiles by linear interpolation. labels: one id per token, < 0 skipped. */
static void qt_llm_tok_ref(const float *x, const float *y, const int64_t *labels, int64_t T, int64_t V, QtTokRef *r) {
    double *kl = calloc((size_t)T, sizeof *kl), *pb = calloc((size_t)V, sizeof *pb), *pa = calloc((size_t)V, sizeof *pa);
    memset(r, 0, sizeof *r);
    double dp2 = 0, top5 = 0;
    for (int64_t t = 0; t < T; t++) {
        const float *xb = x + t * V, *ya = y + t * V;
        double mb = xb[0], ma = ya[0], zb = 0, za = 0;
        for (int64_t i = 1; i < V; i++) { mb = fmax(mb, xb[i]); ma = fmax(ma, ya[i]); }
        for (int64_t i = 0; i < V; i++) { pb[i] = exp(xb[i] - mb); pa[i] = exp(ya[i] - ma); zb += pb[i]; za += pa[i]; }
        for (int64_t i = 0; i < V; i++) { pb[i] /= zb; pa[i] /= za; }
        for (int64_t i = 0; i < V; i++) if (pb[i] > 0) kl[t] += pb[i] * log(pb[i] / pa[i]);
        int64_t sb[5], sa[5];
        for (int k = 0; k < 5; k++) {
            sb[k] = sa[k] = -1;
            for (int64_t i = 0; i < V; i++) {
                bool ub = false, ua = false;
                for (int q = 0; q < k; q++) { ub |= sb[q] == i; ua |= sa[q] == i; }
                if (!ub && (sb[k] < 0 || xb[i] > xb[sb[k]])) sb[k] = i;
                if (!ua && (sa[k] < 0 || ya[i] > ya[sa[k]])) sa[k] = i;
            }
        }
        int hits = 0;
        for (int p = 0; p < 5; p++) for (int q = 0; q < 5; q++) hits += sb[p] == sa[q];
        top5 += hits / 5.0;
        r->top1 += sb[0] == sa[0];
        dp2 += (pa[sb[0]] - pb[sb[0]]) * (pa[sb[0]] - pb[sb[0]]);
        if (labels && labels[t] >= 0) { r->nll_n++; r->nll_b -= log(pb[labels[t]]); r->nll_a -= log(pa[labels[t]]); }
        r->kmean += kl[t];
        if (kl[t] > kl[r->kmax_at]) r->kmax_at = t;
    }
    r->tokens = T;
    r->top1 /= (double)T;
    r->top5 = top5 / (double)T;
    r->kmean /= (double)T;
    r->dp_rms = sqrt(dp2 / (double)T);
    if (r->nll_n) { r->nll_b /= (double)r->nll_n; r->nll_a /= (double)r->nll_n; }
    qsort(kl, (size_t)T, sizeof *kl, qt_llm_cmp_d);
    double q90 = 0.90 * (double)(T - 1), q99 = 0.99 * (double)(T - 1);
    int64_t l90 = (int64_t)q90, l99 = (int64_t)q99;
    r->kp90 = kl[l90] + (l90 + 1 < T ? (kl[l90 + 1] - kl[l90]) * (q90 - (double)l90) : 0);
    r->kp99 = kl[l99] + (l99 + 1 < T ? (kl[l99 + 1] - kl[l99]) * (q99 - (double)l99) : 0);
    r->kmax = kl[T - 1];
    free(kl);
    free(pb);
    free(pa);
}

/* qr_tok_* on ORT's two logits tensors against the plain computation above and the numpy values. */
static void test_llm_tokens_unit(void) {
    static const char *const cases[][4] = {
        { QT_LLM "/std/ort_base/logits.npy", QT_LLM "/std/ort_analysis/logits.npy", QT_LLM "/std/tokmetrics.tsv", NULL },
        { QT_LLM "/std/ort_base/logits.npy", QT_LLM "/std/ort_analysis/logits.npy", QT_LLM "/std/tokmetrics_labels.tsv",
          QT_LLM "/std/labels.npy" },
        { QT_LLM "/prompt/ort_fp32/logits.npy", QT_LLM "/prompt/ort_int4_sym/logits.npy", QT_LLM "/tokmetrics_int4_sym.tsv", NULL },
        { QT_LLM "/prompt/ort_fp32/logits.npy", QT_LLM "/prompt/ort_qdq8/logits.npy", QT_LLM "/tokmetrics_qdq8.tsv", NULL },
    };
    for (int c = 0; c < QR_ARRAY_LEN(cases); c++) {
        QrTensor x = {0}, y = {0}, lab = {0}, ids = {0};
        QT_OK(qr_npy_read(cases[c][0], &x));
        QT_OK(qr_npy_read(cases[c][1], &y));
        int64_t V = x.dims[2], T = x.numel / V, B = x.dims[0], S = x.dims[1];
        /* labels: the file, or input_ids shifted (as qr_tok_labels is documented) */
        int64_t *lv = calloc((size_t)T, sizeof *lv);
        QT_CHECK(lv);
        if (cases[c][3]) {
            QT_OK(qr_npy_read(cases[c][3], &lab));
            for (int64_t t = 0; t < T; t++) lv[t] = qr_tensor_get_i64(&lab, t);
        } else {
            char p[256];
            snprintf(p, sizeof p, "%s", cases[c][0]);
            *strstr(p, "/ort_") = 0;
            strcat(p, "/input_ids.npy");
            QT_OK(qr_npy_read(p, &ids));
            for (int64_t b = 0; b < B; b++)
                for (int64_t s = 0; s < S; s++) lv[b * S + s] = s + 1 < S ? qr_tensor_get_i64(&ids, b * S + s + 1) : -1;
            int64_t d1[1] = { T };
            QT_OK(qr_tensor_set_shape(&lab, QR_DT_S64, 1, d1));
            QT_OK(qr_tensor_alloc_data(&lab));
            for (int64_t t = 0; t < T; t++) qr_tensor_set_i64(&lab, t, lv[t]);
        }
        QtTokRef r;
        qt_llm_tok_ref(x.data, y.data, lv, T, V, &r);
        QrTokAcc acc = {0};
        QT_OK(qr_tok_add(&acc, &x, &y, &lab, 0));
        QrTokStats s;
        qr_tok_stats(&acc, &s);
        const char *tsv = cases[c][2];
        struct { const char *k; double mine, ref; } cols[] = {
            { "top1_agree", s.top1_agree, r.top1 }, { "top5_overlap", s.top5_overlap, r.top5 },
            { "kld_mean", s.kld_mean, r.kmean }, { "kld_p90", s.kld_p90, r.kp90 }, { "kld_p99", s.kld_p99, r.kp99 },
            { "kld_max", s.kld_max, r.kmax }, { "dp_rms", s.dp_rms, r.dp_rms }, { "nll_base", s.nll_base, r.nll_b },
            { "nll_analysis", s.nll_analysis, r.nll_a }, { "ln_ppl_ratio", s.ln_ppl_ratio, r.nll_a - r.nll_b },
        };
        for (int k = 0; k < QR_ARRAY_LEN(cols); k++) {
            double np = qt_llm_tsv(tsv, cols[k].k);
            QT_CHECKF(qt_llm_close(cols[k].mine, cols[k].ref, 1e-9) && qt_llm_close(cols[k].mine, np, 1e-6),
                      "%s %s: qreport %.10g, test %.10g, numpy %.10g", tsv, cols[k].k, cols[k].mine, cols[k].ref, np);
        }
        QT_CHECKF(s.tokens == T && s.tokens == (int64_t)qt_llm_tsv(tsv, "tokens") && s.nll_tokens == r.nll_n &&
                  s.nll_tokens == (int64_t)qt_llm_tsv(tsv, "nll_tokens"), "%s: tokens %lld / %lld", tsv,
                  (long long)s.tokens, (long long)s.nll_tokens);
        QT_CHECKF(acc.n_worst > 0 && acc.worst[0].batch * S + acc.worst[0].pos == r.kmax_at &&
                  r.kmax_at == (int64_t)qt_llm_tsv(tsv, "kld_argmax"), "%s: worst token", tsv);
        qr_tok_free(&acc);
        free(lv);
        qr_tensor_free_data(&x);
        qr_tensor_free_data(&y);
        qr_tensor_free_data(&lab);
        qr_tensor_free_data(&ids);
    }
}

/* compare on the standard-op pair: compare_outputs.csv's per-token columns are the numpy values
 * of ORT's logits (qreport's own logits agree with ORT's to float rounding) */
static void test_llm_compare_outputs(void) {
    QtCli r;
    const char *S = QT_LLM "/std";
    for (int lab = 0; lab < 2; lab++) {
        char dir[512], csv[600];
        snprintf(dir, sizeof dir, "%s/llm_cmp%d", qt_tmpdir(), lab);
        qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy %s%s -o %s", S, S, S,
               lab ? "--labels " : "", lab ? QT_LLM "/std/labels.npy" : "", dir);
        QT_CHECKF(r.code == 0 && strstr(r.out, "logits per token: 16 tokens"), "exit %d: %s%s", r.code, r.err, r.out);
        snprintf(csv, sizeof csv, "%s/compare_outputs.csv", dir);
        const char *tsv = lab ? QT_LLM "/std/tokmetrics_labels.tsv" : QT_LLM "/std/tokmetrics.tsv";
        static const char *const cols[] = { "tokens", "top1_agree", "top5_overlap", "kld_mean", "kld_p90", "kld_p99", "kld_max",
                                            "dp_rms", "nll_tokens", "nll_base", "nll_analysis", "ln_ppl_ratio" };
        for (int k = 0; k < QR_ARRAY_LEN(cols); k++) {
            char cell[128];
            QT_CHECKF(qt_llm_csv(csv, "logits", cols[k], cell, sizeof cell), "%s: no column %s", csv, cols[k]);
            double want = qt_llm_tsv(tsv, cols[k]), got = strtod(cell, NULL);
            /* the KL of two near-equal distributions is a small difference: relative 1e-3 of it is
             * float rounding of the logits; the others are counts or well-conditioned */
            QT_CHECKF(qt_llm_close(got, want, 1e-3), "%s %s: %s, numpy on ORT's logits %.9g", csv, cols[k], cell, want);
        }
        char worst[256];
        QT_CHECKF(qt_llm_csv(csv, "logits", "worst_tokens", worst, sizeof worst) && !strncmp(worst, "b0:t3 ", 6),
                  "worst_tokens %s (numpy: token %g)", worst, qt_llm_tsv(tsv, "kld_argmax"));
    }
    /* a labels file of the wrong size is refused, named */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy --labels %s/ort_base/logits.npy -o %s/llm_cmpx",
           S, S, S, S, qt_tmpdir());
    QT_CLI_FAILS(r, "--labels", "token ids must be integers");
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy --labels %s/labels.npy -o %s/llm_cmpy", S, S, S, S,
           qt_tmpdir());
    QT_CHECKF(r.code == 2 && strstr(r.err, "--labels FILE gives the token ids of one input"), "exit %d: %s", r.code, r.err);
}

/* compare --data over two samples (the std input's two rows): the per-token columns pool every token of
 * both samples (the same tokens as the batch of two: numpy's values), and two shards merged give the
 * same files, byte for byte; runall writes compare_outputs and summary.json "tokens" */
static void test_llm_tokens_data(void) {
    QtCli r;
    const char *S = QT_LLM "/std", *T = qt_tmpdir();
    char dd[512], cmd[1400], p[700];
    snprintf(dd, sizeof dd, "%s/llm_tdata", T);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/input_ids'", dd, dd);
    QT_CHECK(system(cmd) == 0);
    QrTensor ids = {0};
    QT_OK(qr_npy_read(QT_LLM "/std/input_ids.npy", &ids));
    for (int k = 0; k < 2; k++) {
        QrTensor one = {0};
        int64_t d1[2] = { 1, ids.dims[1] };
        QT_OK(qr_tensor_set_shape(&one, QR_DT_S64, 2, d1));
        QT_OK(qr_tensor_alloc_data(&one));
        for (int64_t e = 0; e < one.numel; e++) qr_tensor_set_i64(&one, e, qr_tensor_get_i64(&ids, k * one.numel + e));
        snprintf(p, sizeof p, "%s/input_ids/%d.npy", dd, k);
        QT_OK(qr_npy_write(p, &one));
        qr_tensor_free_data(&one);
    }
    qr_tensor_free_data(&ids);
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s -o %s/llm_td --quiet", S, S, dd, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_td/compare_outputs.csv", T);
    static const char *const cols[] = { "tokens", "top1_agree", "top5_overlap", "kld_mean", "kld_p90", "kld_p99", "kld_max",
                                        "dp_rms", "nll_tokens", "nll_base", "nll_analysis", "ln_ppl_ratio" };
    for (int k = 0; k < QR_ARRAY_LEN(cols); k++) {
        char cell[128];
        QT_CHECKF(qt_llm_csv(p, "logits", cols[k], cell, sizeof cell), "%s: no column %s", p, cols[k]);
        double want = qt_llm_tsv(QT_LLM "/std/tokmetrics.tsv", cols[k]);
        QT_CHECKF(qt_llm_close(strtod(cell, NULL), want, 1e-3), "%s %s: %s, numpy %.9g", p, cols[k], cell, want);
    }
    char worst[512];
    QT_CHECKF(qt_llm_csv(p, "logits", "worst_tokens", worst, sizeof worst) && !strncmp(worst, "0.npy:b0:t3 ", 12), "%s", worst);
    for (int k = 0; k < 2; k++) {
        qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s --shard %d/2 -o %s/llm_td%d.qrpart --quiet", S, S, dd, k, T, k);
        QT_CHECKF(r.code == 0, "%s", r.err);
    }
    qt_cli(&r, "merge %s/llm_td0.qrpart %s/llm_td1.qrpart -o %s/llm_tdm --quiet", T, T, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(cmd, sizeof cmd, "cmp -s %s/llm_td/compare_outputs.csv %s/llm_tdm/compare_outputs.csv && "
             "cmp -s %s/llm_td/compare_outputs.txt %s/llm_tdm/compare_outputs.txt", T, T, T, T);
    QT_CHECKF(system(cmd) == 0, "merged shards differ from one process");
    /* runall: compare_outputs in the bundle, summary.json "tokens", the HTML section */
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy --labels %s/labels.npy -o %s/llm_ra.zip "
           "--keep-dir %s/llm_ra --quiet", S, S, S, S, T, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_ra/summary.json", T);
    char *js = malloc(1 << 20);
    QT_CHECK(js);
    qt_slurp(p, js, 1 << 20);
    const char *tk = strstr(js, "\"tokens\": [");
    const char *lp = tk ? strstr(tk, "\"ln_ppl_ratio\": ") : NULL;
    double lpr = lp ? strtod(lp + 16, NULL) : NAN, want = qt_llm_tsv(QT_LLM "/std/tokmetrics_labels.tsv", "ln_ppl_ratio");
    free(js);
    QT_CHECKF(tk && qt_llm_close(lpr, want, 1e-3), "summary.json tokens: ln_ppl_ratio %g, numpy %g", lpr, want);
    snprintf(p, sizeof p, "%s/llm_ra/compare_outputs.csv", T);
    char cell[64];
    QT_CHECKF(qt_llm_csv(p, "logits", "nll_tokens", cell, sizeof cell) && !strcmp(cell, "15"), "nll_tokens %s", cell);
    snprintf(p, sizeof p, "%s/llm_ra/index.html", T);
    char *html = malloc(1 << 22);
    QT_CHECK(html);
    qt_slurp(p, html, 1 << 22);
    bool sec = strstr(html, "Per-token output comparison") && strstr(html, "Top-1 agreement");
    QT_CHECK(sec);
    /* runall --data over the two samples: the per-token section's table is the worst sample's, from the
     * tokens stage (the report stage found the baseline's outputs dropped by the data-set stages and
     * crashed: SIGSEGV) */
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s -o %s/llm_rd.zip --keep-dir %s/llm_rd --quiet", S, S, dd, T, T);
    QT_CHECKF(r.code == 0, "runall --data on logits outputs: exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/llm_rd/index.html", T);
    html[0] = 0;
    qt_slurp(p, html, 1 << 22);
    const char *ts = strstr(html, "id=\"tokens\""), *te = ts ? strstr(ts, "</section>") : NULL;
    const char *row = ts ? strstr(ts, ">logits</td>") : NULL;
    QT_CHECKF(ts && row && (!te || row < te), "runall --data: no per-token table in %s", p);
    free(html);
}

/* --metric KLD ranks sensitivity by the mean token KL: the only row of the lm_head-only pair carries numpy's
 * kld_mean of ORT's logits; on the full pair the rows come sorted by it; refused where it cannot rank */
static void test_llm_metric_kld(void) {
    QtCli r;
    const char *S = QT_LLM "/std", *T = qt_tmpdir();
    char p[600], cell[128];
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis_lm.onnx -i %s/input_ids.npy --metric KLD --rank-output logits "
           "-o %s/llm_kld1 --quiet", S, S, S, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_kld1/sensitive_ops.csv", T);
    double want = qt_llm_tsv(QT_LLM "/std/tokmetrics_lm.tsv", "kld_mean");
    QT_CHECKF(qt_llm_csv(p, "/lm_head/MatMul_Q4", "KLD", cell, sizeof cell) && qt_llm_close(strtod(cell, NULL), want, 1e-3),
              "KLD %s, numpy %.9g", cell, want);
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy --metric KLD -o %s/llm_kld2 --quiet", S, S, S, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_kld2/sensitive_ops.csv", T);
    FILE *f = fopen(p, "r");
    QT_CHECK(f);
    char line[2048], *cells[64];
    int kc = -1, rows = 0;
    double prev = INFINITY;
    bool sorted = true;
    while (fgets(line, sizeof line, f)) {
        int n = qt_llm_csv_split(line, cells, 64);
        if (kc < 0) { for (int k = 0; k < n; k++) if (!strcmp(cells[k], "KLD")) kc = k; continue; }
        if (kc >= n) break;
        double v = strtod(cells[kc], NULL);
        sorted &= v <= prev && v > 0;
        prev = v;
        rows++;
    }
    fclose(f);
    QT_CHECKF(kc >= 0 && rows == 2 && sorted, "KLD column %d, %d rows, sorted %d", kc, rows, sorted);
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy --metric KLD -o %s/llm_kld3", S, S, S, T);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--metric KLD ranks sensitivity"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "sensitivity fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -i "
           "fixtures/qpairs/ort_qdq/input.npy --metric KLD -o %s/llm_kld4", T);
    QT_CLI_FAILS(r, "--metric KLD: the model has no logits output");
}

/* ---- --generate --------------------------------------------------------------------------------------- */

/* The integer cells of one column of generation.csv, in row order; returns how many. */
static int qt_llm_gen_col(const char *csv, const char *col, int64_t *v, int cap) {
    FILE *f = fopen(csv, "r");
    if (!f) return 0;
    char line[1024], *cells[16];
    int c = -1, n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        int nc = qt_llm_csv_split(line, cells, 16);
        if (c < 0) { for (int k = 0; k < nc; k++) if (!strcmp(cells[k], col)) c = k; if (c < 0) break; continue; }
        if (c < nc) v[n++] = strtoll(cells[c], NULL, 10);
    }
    fclose(f);
    return n;
}

/* compare --generate on the standard-op pair (no cache: whole sequences re-run): every baseline token is the
 * arg-max of the baseline run here on the prompt and the tokens before it; step 0's KL is the KL at the
 * prompt's last position computed here from ORT's logits; the first divergence is the first differing token */
static void test_llm_generate_std(void) {
    QtCli r;
    const char *S = QT_LLM "/std", *T = qt_tmpdir();
    char in[600], csv[600];
    snprintf(in, sizeof in, "%s/llm_gen_prompt.npy", T);
    QrTensor ids = {0}, p = {0};
    QT_OK(qr_npy_read(QT_LLM "/std/input_ids.npy", &ids));
    int64_t S0 = ids.dims[1], d1[2] = { 1, S0 };
    QT_OK(qr_tensor_set_shape(&p, QR_DT_S64, 2, d1));
    QT_OK(qr_tensor_alloc_data(&p));
    for (int64_t e = 0; e < S0; e++) qr_tensor_set_i64(&p, e, qr_tensor_get_i64(&ids, e));
    QT_OK(qr_npy_write(in, &p));
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s --generate 4 -o %s/llm_gen --quiet", S, S, in, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(csv, sizeof csv, "%s/llm_gen/generation.csv", T);
    int64_t bt[8], at[8];
    QT_CHECK(qt_llm_gen_col(csv, "baseline_token", bt, 8) == 4 && qt_llm_gen_col(csv, "analysis_token", at, 8) == 4);
    QrGraph *g = NULL;
    QT_OK(qr_run_load(QT_LLM "/std/base.onnx", &g));
    for (int k = 0; k < 4; k++) {
        QrTensor x = {0}, out = {0};
        int64_t dk[2] = { 1, S0 + k };
        QT_OK(qr_tensor_set_shape(&x, QR_DT_S64, 2, dk));
        QT_OK(qr_tensor_alloc_data(&x));
        for (int64_t e = 0; e < S0; e++) qr_tensor_set_i64(&x, e, qr_tensor_get_i64(&p, e));
        for (int j = 0; j < k; j++) qr_tensor_set_i64(&x, S0 + j, bt[j]);
        QT_OK(qr_run_infer(g, &x));
        QT_OK(qr_run(g, &x, NULL, &out));
        int64_t V = out.dims[2], best = 0;
        const float *row = (const float *)out.data + out.numel - V;
        for (int64_t i = 1; i < V; i++) if (row[i] > row[best]) best = i;
        qr_tensor_free_data(&x);
        qr_tensor_free_data(&out);
        QT_CHECKF(best == bt[k], "step %d: baseline token %lld, arg-max here %lld", k, (long long)bt[k], (long long)best);
    }
    qr_graph_free(g);
    free(g);
    /* step 0: the prompt's last position, from ORT's logits of both models (row 0 of the batch) */
    QrTensor lb = {0}, la = {0};
    QT_OK(qr_npy_read(QT_LLM "/std/ort_base/logits.npy", &lb));
    QT_OK(qr_npy_read(QT_LLM "/std/ort_analysis/logits.npy", &la));
    int64_t V = lb.dims[2];
    QtTokRef ref;
    qt_llm_tok_ref((const float *)lb.data + (S0 - 1) * V, (const float *)la.data + (S0 - 1) * V, NULL, 1, V, &ref);
    char cell[64];
    QT_CHECKF(qt_llm_csv(csv, "0", "kld", cell, sizeof cell) && qt_llm_close(strtod(cell, NULL), ref.kmean, 1e-3),
              "step 0 KL %s, here %.9g", cell, ref.kmean);
    int first = -1;
    for (int k = 0; k < 4 && first < 0; k++) if (bt[k] != at[k]) first = k;
    char txt[600], body[4096];
    snprintf(txt, sizeof txt, "%s/llm_gen/generation.txt", T);
    qt_slurp(txt, body, sizeof body);
    char want[128];
    if (first >= 0) snprintf(want, sizeof want, "diverge at generated token %d.", first);
    else snprintf(want, sizeof want, "the same tokens.");
    QT_CHECKF(strstr(body, want), "generation.txt lacks '%s'", want);
    qr_tensor_free_data(&lb);
    qr_tensor_free_data(&la);
    qr_tensor_free_data(&ids);
    qr_tensor_free_data(&p);
    /* refused where it cannot follow a generation */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s/input_ids.npy --generate 2 -o %s/llm_gen2", S, S, S, T);
    QT_CLI_FAILS(r, "--generate needs input_ids of shape [1, sequence]", "input_ids has batch 2");
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx -i %s --generate 2 -o %s/llm_gen3", S, S, in, T);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--generate N follows a generation"), "exit %d: %s", r.code, r.err);
}

/* runall --generate on the decoder (past_key_values fed from present): the first two baseline tokens are
 * ORT's arg-max on the prompt and on the decode step (fp32's token and presents), the analysis model's first
 * token ORT's int4 arg-max, step 0's KL the KL of ORT's two prompt logits; summary.json "generation" */
static void test_llm_generate_decoder(void) {
    if (!qr_op_find("com.microsoft", "GroupQueryAttention"))
        QT_SKIP("com.microsoft.GroupQueryAttention is not implemented yet (issue 26's operators land from the llmops branch)");
    QtCli r;
    const char *P = QT_LLM "/prompt", *T = qt_tmpdir();
    char ins[2048];
    size_t n = (size_t)snprintf(ins, sizeof ins, "-i input_ids=%s/input_ids.npy -i attention_mask=%s/attention_mask.npy", P, P);
    for (int l = 0; l < 2; l++)
        n += (size_t)snprintf(ins + n, sizeof ins - n, " -i past_key_values.%d.key=%s/past_key_values.%d.key.npy"
                              " -i past_key_values.%d.value=%s/past_key_values.%d.value.npy", l, P, l, l, P, l);
    qt_cli(&r, "runall " QT_LLM "/fp32/model.onnx " QT_LLM "/int4_sym/model.onnx %s --generate 4 -o %s/llm_rg.zip "
           "--keep-dir %s/llm_rg --quiet", ins, T, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    char csv[600];
    snprintf(csv, sizeof csv, "%s/llm_rg/generation.csv", T);
    int64_t bt[8], at[8];
    QT_CHECK(qt_llm_gen_col(csv, "baseline_token", bt, 8) == 4 && qt_llm_gen_col(csv, "analysis_token", at, 8) == 4);
    QrTensor lp = {0}, ld = {0}, la = {0};
    QT_OK(qr_npy_read(QT_LLM "/prompt/ort_fp32/logits.npy", &lp));
    QT_OK(qr_npy_read(QT_LLM "/decode/ort_fp32/logits.npy", &ld));
    QT_OK(qr_npy_read(QT_LLM "/prompt/ort_int4_sym/logits.npy", &la));
    int64_t V = lp.dims[2];
    const float *rp = (const float *)lp.data + lp.numel - V, *rd = (const float *)ld.data + ld.numel - V,
                *ra = (const float *)la.data + la.numel - V;
    int64_t ap = 0, ad = 0, aa = 0;
    for (int64_t i = 1; i < V; i++) { if (rp[i] > rp[ap]) ap = i; if (rd[i] > rd[ad]) ad = i; if (ra[i] > ra[aa]) aa = i; }
    QtTokRef ref;
    qt_llm_tok_ref(rp, ra, NULL, 1, V, &ref);
    char cell[64];
    bool kl_ok = qt_llm_csv(csv, "0", "kld", cell, sizeof cell) && qt_llm_close(strtod(cell, NULL), ref.kmean, 1e-3);
    qr_tensor_free_data(&lp);
    qr_tensor_free_data(&ld);
    qr_tensor_free_data(&la);
    QT_CHECKF(bt[0] == ap && bt[1] == ad && at[0] == aa, "tokens %lld %lld / %lld, ORT %lld %lld / %lld", (long long)bt[0],
              (long long)bt[1], (long long)at[0], (long long)ap, (long long)ad, (long long)aa);
    QT_CHECKF(kl_ok, "step 0 KL %s, ORT's logits %.9g", cell, ref.kmean);
    char p[600];
    snprintf(p, sizeof p, "%s/llm_rg/summary.json", T);
    char *js = malloc(1 << 20);
    QT_CHECK(js);
    qt_slurp(p, js, 1 << 20);
    bool keys = strstr(js, "\"generation\"") && strstr(js, "\"baseline_tokens\"") && strstr(js, "\"analysis_tokens\"") &&
                strstr(js, "\"first_divergence\"");
    free(js);
    QT_CHECK(keys);
    /* weight-only advice (issue 26 section 4): the int4 decoder's sensitive nodes are MatMulNBits nodes, for
     * which int16 does not apply: the recommended action is a measured float step (tests/test_contrib.c),
     * and check counts and lists every MatMulNBits node as a weight quantizer */
    char msg[1024] = "";
    snprintf(p, sizeof p, "%s/llm_rg", T);
    QT_CHECKF(qt_wq_advice_check(p, false, msg, sizeof msg), "%s", msg);
    qt_cli(&r, "check " QT_LLM "/int4_sym/model.onnx %s -o %s/llm_wq_chk --quiet", ins, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    QrGraph *g = NULL;
    QT_OK(qr_run_load(QT_LLM "/int4_sym/model.onnx", &g));
    snprintf(p, sizeof p, "%s/llm_wq_chk/model_check_result.txt", T);
    bool listed = qt_wq_check_lists(g, p, msg, sizeof msg);
    qr_graph_free(g);
    free(g);
    QT_CHECKF(listed, "%s", msg);
}


/* Arg-max of the last position of g's logits output (output 0) run on in. */
static QrStatus qt_llm_last_argmax(QrGraph *g, const QrTensor *in, int64_t *best) {
    QR_TRY(qr_run_infer(g, in));
    QrTensor *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    if (!out) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = qr_run(g, in, NULL, out);
    if (st == QR_OK) {
        int64_t V = out[0].dims[out[0].rank - 1];
        const float *row = (const float *)out[0].data + out[0].numel - V;
        *best = 0;
        for (int64_t i = 1; i < V; i++) if (row[i] > row[*best]) *best = i;
    }
    for (int j = 0; j < g->n_outputs; j++) qr_tensor_free_data(&out[j]);
    free(out);
    return st;
}

/* Writes ids (n tokens) as input_ids [1, n], attention_mask ones [1, n] and each cache input (rank 4) empty
 * [1, kv, 0, hd] (kv from the model's declared shape; hd 16 in both fixtures) into dir. */
static QrStatus qt_llm_prompt(const QrGraph *g, const int64_t *ids, int n, const char *dir) {
    char p[600];
    QrTensor t = {0}, m = {0};
    int64_t d[2] = { 1, n };
    QR_TRY(qr_mkdir_p(dir));
    QR_TRY(qr_tensor_set_shape(&t, QR_DT_S64, 2, d));
    QR_TRY(qr_tensor_alloc_data(&t));
    QR_TRY(qr_tensor_set_shape(&m, QR_DT_S64, 2, d));
    QR_TRY(qr_tensor_alloc_data(&m));
    for (int k = 0; k < n; k++) { qr_tensor_set_i64(&t, k, ids[k]); qr_tensor_set_i64(&m, k, 1); }
    snprintf(p, sizeof p, "%s/input_ids.npy", dir);
    QrStatus st = qr_npy_write(p, &t);
    snprintf(p, sizeof p, "%s/attention_mask.npy", dir);
    if (st == QR_OK) st = qr_npy_write(p, &m);
    qr_tensor_free_data(&t);
    qr_tensor_free_data(&m);
    for (int i = 0; st == QR_OK && i < g->n_inputs; i++) {
        const QrValue *v = &g->values[g->inputs[i]];
        if (!v->has_decl || v->decl_rank != 4) continue;
        QrTensor c = {0};
        int64_t dc[4] = { 1, v->decl_dims[1], 0, 16 };
        st = qr_tensor_set_shape(&c, QR_DT_F32, 4, dc);
        snprintf(p, sizeof p, "%s/%s.npy", dir, v->name);
        if (st == QR_OK) st = qr_npy_write(p, &c);
        qr_tensor_free_data(&c);
    }
    return st;
}

/* The first divergent step's per-layer comparison (issue 26 section 3): its inputs are the baseline's
 * context at that step — the prompt and the baseline tokens before it, the mask extended, the past as given
 * — and on them the baseline's arg-max is its token of that step and the analysis model's its own token
 * (each checked by a run here); the table and generation.txt's pointer to it exist. */
static void test_llm_generate_divergence(void) {
    if (!qr_op_find("com.microsoft", "GroupQueryAttention")) QT_SKIP("com.microsoft.GroupQueryAttention is not implemented");
    const int64_t prompt[6] = { 138, 201, 227, 212, 106, 109 };   /* a prompt whose greedy tokens agree for a few steps */
    const char *T = qt_tmpdir();
    char pd[600], od[600], p[700];
    snprintf(pd, sizeof pd, "%s/llm_gd_prompt", T);
    snprintf(od, sizeof od, "%s/llm_gd", T);
    QrGraph *gb = NULL, *ga = NULL;
    QT_OK(qr_run_load(QT_LLM "/fp32/model.onnx", &gb));
    QT_OK(qr_run_load(QT_LLM "/int4_sym/model.onnx", &ga));
    QT_OK(qt_llm_prompt(gb, prompt, 6, pd));
    char ins[2048];
    size_t n = (size_t)snprintf(ins, sizeof ins, "-i %s", pd);
    QT_CHECK(n < sizeof ins);
    QtCli r;
    qt_cli(&r, "compare " QT_LLM "/fp32/model.onnx " QT_LLM "/int4_sym/model.onnx %s --generate 5 -o %s --quiet", ins, od);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/generation.csv", od);
    int64_t bt[8], at[8];
    QT_CHECK(qt_llm_gen_col(p, "baseline_token", bt, 8) == 5 && qt_llm_gen_col(p, "analysis_token", at, 8) == 5);
    int t = -1;
    for (int k = 0; k < 5 && t < 0; k++) if (bt[k] != at[k]) t = k;
    QT_CHECKF(t >= 0, "the fixture's prompt no longer diverges within 5 tokens");
    QrTensor *in = calloc((size_t)gb->n_inputs + 1, sizeof *in);
    QT_CHECK(in);
    snprintf(p, sizeof p, "%s/generation_divergence", od);
    QT_OK(qt_llm_inputs(gb, p, in));
    bool ids_ok = true, mask_ok = true, past_ok = true;
    for (int i = 0; i < gb->n_inputs; i++) {
        const char *nm = gb->values[gb->inputs[i]].name;
        const QrTensor *x = &in[i];
        if (!strcmp(nm, "input_ids")) {
            ids_ok = x->rank == 2 && x->dims[0] == 1 && x->dims[1] == 6 + t;
            for (int k = 0; ids_ok && k < 6 + t; k++) ids_ok = qr_tensor_get_i64(x, k) == (k < 6 ? prompt[k] : bt[k - 6]);
        } else if (!strcmp(nm, "attention_mask")) {
            mask_ok = x->rank == 2 && x->dims[1] == 6 + t;
            for (int k = 0; mask_ok && k < 6 + t; k++) mask_ok = qr_tensor_get_i64(x, k) == 1;
        } else {
            past_ok &= x->rank == 4 && x->dims[2] == 0;
        }
    }
    QT_CHECKF(ids_ok && mask_ok && past_ok, "step %d's inputs: ids %d mask %d past %d", t, ids_ok, mask_ok, past_ok);
    int64_t xb = -1, xa = -1;
    QT_OK(qt_llm_last_argmax(gb, in, &xb));
    QT_OK(qt_llm_last_argmax(ga, in, &xa));
    QT_CHECKF(xb == bt[t] && xa == at[t], "step %d: arg-max on the saved inputs %lld / %lld, generation %lld / %lld", t,
              (long long)xb, (long long)xa, (long long)bt[t], (long long)at[t]);
    for (int i = 0; i < gb->n_inputs; i++) qr_tensor_free_data(&in[i]);
    free(in);
    qr_graph_free(gb);
    free(gb);
    qr_graph_free(ga);
    free(ga);
    snprintf(p, sizeof p, "%s/generation_divergence/compare_per_layer_out.csv", od);
    char body[8192];
    qt_slurp(p, body, sizeof body);
    QT_CHECKF(strstr(body, "/model/layers.0/attn/GroupQueryAttention"), "%s: no per-layer rows", p);
    snprintf(p, sizeof p, "%s/generation.txt", od);
    qt_slurp(p, body, sizeof body);
    QT_CHECKF(strstr(body, "generation_divergence/compare_per_layer_out.txt"), "generation.txt: %.300s", body);
}

/* --kv-map: the cache named kv_in.N.* / kv_out.N.* (fixtures/llm/kvmap) is fed back with --kv-map
 * 'kv_in.*=kv_out.*' — every baseline token is the arg-max of a full re-run here (no cache) on the prompt
 * and the tokens before it; without --kv-map the input is named; bad syntax and batch 2 are refused */
static void test_llm_generate_kvmap(void) {
    if (!qr_op_find("com.microsoft", "GroupQueryAttention")) QT_SKIP("com.microsoft.GroupQueryAttention is not implemented");
    const int64_t prompt[5] = { 7, 33, 2, 61, 18 };
    const char *T = qt_tmpdir(), *K = QT_LLM "/kvmap";
    char pd[600], p[700];
    snprintf(pd, sizeof pd, "%s/llm_kv_prompt", T);
    QrGraph *g = NULL;
    QT_OK(qr_run_load(QT_LLM "/kvmap/base.onnx", &g));
    QT_OK(qt_llm_prompt(g, prompt, 5, pd));
    QtCli r;
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s --generate 4 --kv-map 'kv_in.*=kv_out.*' -o %s/llm_kv --quiet",
           K, K, pd, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_kv/generation.csv", T);
    int64_t bt[8];
    QT_CHECK(qt_llm_gen_col(p, "baseline_token", bt, 8) == 4);
    char body[4096];
    snprintf(p, sizeof p, "%s/llm_kv/generation.txt", T);
    qt_slurp(p, body, sizeof body);
    QT_CHECKF(strstr(body, "past_key_values fed from present"), "not cached: %.200s", body);
    for (int k = 0; k < 4; k++) {
        int64_t ids[16];
        for (int j = 0; j < 5 + k; j++) ids[j] = j < 5 ? prompt[j] : bt[j - 5];
        char d[700];
        snprintf(d, sizeof d, "%s/llm_kv_full%d", T, k);
        QT_OK(qt_llm_prompt(g, ids, 5 + k, d));
        QrTensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
        QT_CHECK(in);
        QT_OK(qt_llm_inputs(g, d, in));
        int64_t best = -1;
        QT_OK(qt_llm_last_argmax(g, in, &best));
        for (int i = 0; i < g->n_inputs; i++) qr_tensor_free_data(&in[i]);
        free(in);
        QT_CHECKF(best == bt[k], "step %d: token %lld, full re-run %lld", k, (long long)bt[k], (long long)best);
    }
    qr_graph_free(g);
    free(g);
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s --generate 2 -o %s/llm_kv2", K, K, pd, T);
    QT_CLI_FAILS(r, "cannot extend input 'kv_in.0.", "--kv-map IN=OUT");
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s --generate 2 --kv-map 'kv_in.*=kv_out' -o %s/llm_kv3", K, K, pd, T);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--kv-map kv_in.*=kv_out: expected IN=OUT"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s --generate 2 --kv-map 'kv_in.*=nothing.*' -o %s/llm_kv4", K, K, pd,
           T);
    QT_CLI_FAILS(r, "cache input 'kv_in.0.", "from output 'nothing.0.");
}


/* ---- weight_blocks: output-error share, outlier weights (issue 26 section 4) ---------------------------- */

static const QrTensor *qt_llm_init(const QrGraph *g, const char *name) {
    for (int v = 0; v < g->n_values; v++) if (!strcmp(g->values[v].name, name) && g->values[v].t.data) return &g->values[v].t;
    return NULL;
}

/* fixtures/llm/outlier: x [1, 16, 64] -> MatMul W [64, 32], its int4 symmetric MatMulNBits twin (block 32) with a
 * planted outlier W[5, 3]. Computed here from the fixture's float weight, the twin's packed codes and scales
 * (dequantized by MatMulNBits' definition: (code - 8) * scale, low nibble first) and x: every block's share of
 * the output error, sum over its rows k of E[x_k^2] (w - w_hat)^2 over all blocks. weight_blocks.csv's shares
 * must be these, its first row the largest (the planted block, named by its scale-setting value [5, 3]) though
 * at least 3 blocks have a lower SQNR; the advisor flags the planted weight (block_outlier_weight). */
static void test_llm_weight_blocks_outlier(void) {
    const char *O = QT_LLM "/outlier", *T = qt_tmpdir();
    QrGraph *gb = NULL, *ga = NULL;
    QT_OK(qr_run_load(QT_LLM "/outlier/base.onnx", &gb));
    QT_OK(qr_run_load(QT_LLM "/outlier/analysis.onnx", &ga));
    const QrTensor *w = qt_llm_init(gb, "fc.weight"), *codes = qt_llm_init(ga, "fc.weight_Q4"),
                   *sc = qt_llm_init(ga, "fc.weight_scales");
    QT_CHECK(w && codes && sc && w->dims[0] == 64 && w->dims[1] == 32);
    QrTensor x = {0};
    QT_OK(qr_npy_read(QT_LLM "/outlier/x.npy", &x));
    enum { K = 64, N = 32, NB = 2, BS = 32 };
    double ex2[K] = {0}, share[N][NB] = {{0}}, sqnr[N][NB], total = 0;
    int64_t rows = x.numel / K;
    for (int64_t t = 0; t < rows; t++)
        for (int k = 0; k < K; k++) { double v = ((const float *)x.data)[t * K + k]; ex2[k] += v * v / (double)rows; }
    const uint8_t *cb = codes->data;
    for (int n = 0; n < N; n++)
        for (int b = 0; b < NB; b++) {
            double sx = 0, se = 0;
            for (int j = 0; j < BS; j++) {
                int k = b * BS + j;
                uint8_t byte = cb[(n * NB + b) * (BS / 2) + j / 2];
                int code = j % 2 ? byte >> 4 : byte & 15;
                double wv = ((const float *)w->data)[k * N + n];
                double wh = (double)(float)((float)(code - 8) * ((const float *)sc->data)[n * NB + b]);
                sx += wv * wv;
                se += (wv - wh) * (wv - wh);
                share[n][b] += ex2[k] * (wv - wh) * (wv - wh);
            }
            sqnr[n][b] = 10 * log10(sx / se);
            total += share[n][b];
        }
    int bn = 0, bb = 0;
    for (int n = 0; n < N; n++)
        for (int b = 0; b < NB; b++) {
            share[n][b] /= total;
            if (share[n][b] > share[bn][bb]) { bn = n; bb = b; }
        }
    int lower = 0;
    for (int n = 0; n < N; n++) for (int b = 0; b < NB; b++) lower += sqnr[n][b] < sqnr[bn][bb];
    qr_tensor_free_data(&x);
    qr_graph_free(gb);
    free(gb);
    qr_graph_free(ga);
    free(ga);
    QtCli r;
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/x.npy -o %s/llm_wb.zip --keep-dir %s/llm_wb --quiet", O, O, O, T, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    char csv[600], cell[128], el[128], idx[16];
    snprintf(csv, sizeof csv, "%s/llm_wb/weight_blocks.csv", T);
    int checked = 0;
    for (int row = 0; row < 2 * QR_WEIGHT_WORST_BLOCKS; row++) {
        snprintf(idx, sizeof idx, "%d", row);
        if (!qt_llm_csv(csv, idx, "elements", el, sizeof el) || !qt_llm_csv(csv, idx, "output_error_share", cell, sizeof cell))
            break;
        int k0 = -1, k1 = -1, n = -1;
        QT_CHECKF(sscanf(el, "[%d:%d] x [%d]", &k0, &k1, &n) == 3 && k1 - k0 == BS && n >= 0 && n < N, "row %d: %s", row, el);
        double want = share[n][k0 / BS], got = strtod(cell, NULL);
        QT_CHECKF(qt_llm_close(got, want, 1e-5), "row %d (%s): output_error_share %s, computed here %.9g", row, el, cell, want);
        if (row == 0) {
            QT_CHECKF(n == bn && k0 / BS == bb, "first row %s, largest share here [%d:%d] x [%d]", el, bb * BS, bb * BS + BS, bn);
            QT_CHECK(qt_llm_csv(csv, idx, "scale_set_by", cell, sizeof cell));
            QT_CHECKF(!strncmp(cell, "[5, 3] = ", 9), "first row's scale_set_by %s (the planted W[5, 3])", cell);
        }
        checked++;
    }
    QT_CHECKF(checked >= QR_WEIGHT_WORST_BLOCKS, "weight_blocks.csv: %d rows", checked);
    QT_CHECKF(lower >= QR_WEIGHT_WORST_BLOCKS, "the planted block has only %d blocks of lower SQNR", lower);
    char adv[600], *body = malloc(1 << 18);
    QT_CHECK(body);
    snprintf(adv, sizeof adv, "%s/llm_wb/abnormal_layer_advisor.txt", T);
    qt_slurp(adv, body, 1 << 18);
    const char *f = strstr(body, "block_outlier_weight");
    bool named = f && strstr(f, "weight 'fc.weight' [5, 3] = 0.6 is ") && strstr(f, "(rank 1 of 64 blocks)");
    free(body);
    QT_CHECKF(named, "abnormal_layer_advisor.txt: no block_outlier_weight finding naming fc.weight [5, 3] at rank 1");
}


/* A number after "key": in text from p on (NaN when missing). */
static double qt_llm_json_num(const char *p, const char *key) {
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *q = p ? strstr(p, k) : NULL;
    return q ? strtod(q + strlen(k), NULL) : NAN;
}

/* The weight-only what-if (issue 26 section 4) on fixtures/llm/outlier: mixed_precision.json's weight_only
 * runs — the MatMulNBits weight with 8-bit codes (block 32) and with block 16 (4 bits), both by MLAS's
 * symmetric rule — against the output computed here: the float weight re-quantized by that rule in this test,
 * x @ W_q against x @ W in double, the MSE. */
static void test_llm_whatif_weight_only(void) {
    const char *O = QT_LLM "/outlier", *T = qt_tmpdir();
    QrGraph *gb = NULL;
    QT_OK(qr_run_load(QT_LLM "/outlier/base.onnx", &gb));
    const QrTensor *w = qt_llm_init(gb, "fc.weight");
    QT_CHECK(w);
    QrTensor x = {0};
    QT_OK(qr_npy_read(QT_LLM "/outlier/x.npy", &x));
    enum { K = 64, N = 32 };
    int64_t rows = x.numel / K;
    double want[2];
    for (int v = 0; v < 2; v++) {
        int bits = v ? 4 : 8, bs = v ? 16 : 32;
        float wq[K * N];
        const float *wf = w->data, mid = (float)(1 << (bits - 1)), qmax = (float)((1 << bits) - 1);
        for (int n = 0; n < N; n++)
            for (int k0 = 0; k0 < K; k0 += bs) {
                float vmax = 0;
                for (int k = k0; k < k0 + bs; k++) if (fabsf(wf[k * N + n]) > fabsf(vmax)) vmax = wf[k * N + n];
                float sc = vmax / -mid;
                for (int k = k0; k < k0 + bs; k++) {
                    float c = fminf(fmaxf(rintf(wf[k * N + n] * (1.0f / sc)) + mid, 0.0f), qmax);
                    wq[k * N + n] = (c - mid) * sc;
                }
            }
        double se = 0;
        for (int64_t t = 0; t < rows; t++)
            for (int n = 0; n < N; n++) {
                double yb = 0, yq = 0;
                for (int k = 0; k < K; k++) {
                    double xv = ((const float *)x.data)[t * K + k];
                    yb += xv * wf[k * N + n];
                    yq += xv * wq[k * N + n];
                }
                se += (yb - yq) * (yb - yq);
            }
        want[v] = se / (double)(rows * N);
    }
    qr_tensor_free_data(&x);
    qr_graph_free(gb);
    free(gb);
    QtCli r;
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/x.npy -o %s/llm_wi.zip --keep-dir %s/llm_wi --quiet", O, O, O, T, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    char p[600], *js = malloc(1 << 20);
    QT_CHECK(js);
    snprintf(p, sizeof p, "%s/llm_wi/mixed_precision.json", T);
    qt_slurp(p, js, 1 << 20);
    const char *wo = strstr(js, "\"weight_only\":"), *i8 = wo ? strstr(wo, "\"int8\":") : NULL,
               *hb = wo ? strstr(wo, "\"half_block\":") : NULL;
    double got8 = qt_llm_json_num(i8, "MSE"), goth = qt_llm_json_num(hb, "MSE");
    double bs8 = qt_llm_json_num(i8, "block_size"), bsh = qt_llm_json_num(hb, "block_size"), bh = qt_llm_json_num(hb, "bits");
    free(js);
    QT_CHECKF(bs8 == 32 && bsh == 16 && bh == 4, "block sizes %g / %g, bits %g", bs8, bsh, bh);
    QT_CHECKF(qt_llm_close(got8, want[0], 1e-3), "8-bit codes: output MSE %.9g, computed here %.9g", got8, want[0]);
    QT_CHECKF(qt_llm_close(goth, want[1], 1e-3), "block 16: output MSE %.9g, computed here %.9g", goth, want[1]);
}

/* qr_whatif_requant_into into a new float32 tensor of w's shape. */
static QrStatus qt_llm_requant_copy(const QrTensor *w, int bs, int bits, bool asym, QrTensor *out) {
    memset(out, 0, sizeof *out);
    QR_TRY(qr_tensor_set_shape(out, QR_DT_F32, w->rank, w->dims));
    QR_TRY(qr_tensor_alloc_data(out));
    return qr_whatif_requant_into(w, 0, bs, bits, asym, out->data);
}

/* The weight-only what-if runs as they were before they edited the dequantized weight in place (whatif.c
 * qr__wi_wq_run): every re-quantized weight of the plan made as a float copy (qr_whatif_requant_into) and
 * substituted for its node's dequantized weight, all of them alive during the run. */
static QrStatus qt_llm_wq_copies(QrSession *s, const QrWiStepPlan *p, int kind, QrMetrics *m, int *changed) {
    int nq = s->qt.n;
    QrTensor *tw = calloc((size_t)nq + 1, sizeof *tw);
    bool *mask = malloc((size_t)nq + 1);
    QrOverrides ov = {0};
    QrStatus rc = tw && mask ? qr_session_overrides_alloc(s, &ov) : QR_ERR_NOMEM;
    *changed = 0;
    for (int i = 0; rc == QR_OK && i < nq; i++) {
        int bits, bs;
        bool asym;
        mask[i] = true;
        if (p->state[i] != 1 || !qr__wi_wq_of(s, i, &bits, &asym, &bs) || (kind == 0 ? bits >= 8 : bs < 32)) continue;
        rc = qt_llm_requant_copy(s->fw[i], kind == 0 ? bs : bs / 2, kind == 0 ? 8 : bits, asym, &tw[i]);
        mask[i] = false;
        ++*changed;
    }
    if (rc == QR_OK) {
        qr_session_overrides(s, mask, &ov);
        for (int i = 0; i < nq; i++) if (tw[i].data) ov.subst[s->qt.q[i].out_value] = &tw[i];
        QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
        rc = qr__wi_run_out(s, &s->tw.g, &ro, m);
    }
    for (int i = 0; tw && i < nq; i++) qr_tensor_free_data(&tw[i]);
    free(tw);
    free(mask);
    qr_session_overrides_free(&ov);
    return rc;
}

/* qr__wi_wq_run (the dequantized weight re-quantized in place, qr__wi_wq_edit) gives the metrics of the float
 * copies substituted (qt_llm_wq_copies), bit for bit: 8 bits and half the block, every weight-only weight and
 * the last one alone, whole-graph and incremental runs. inputs: a .npy (one graph input) or a folder. */
static void qt_llm_wq_same(const char *label, const char *base, const char *analysis, const char *inputs) {
    QrGraph *b = NULL, *a = NULL;
    QrSession s = {0};
    QrTensor *in = NULL;
    char msg[512] = "";
    int n_in = 0, n_cmp = 0;
    QrStatus st = qr_run_load(base, &b);
    if (st == QR_OK) st = qr_run_load(analysis, &a);
    if (st == QR_OK) {
        n_in = b->n_inputs;
        in = calloc((size_t)n_in + 1, sizeof *in);
        st = !in ? QR_ERR_NOMEM : strstr(inputs, ".npy") ? qr_npy_read(inputs, &in[0]) : qt_llm_inputs(b, inputs, in);
    }
    if (st == QR_OK) st = qr_run_infer(b, in);
    if (st == QR_OK) st = qr_run_infer(a, in);
    if (st == QR_OK) st = qr_session_open(&s, b, a, in);
    if (st == QR_OK) st = qr_session_run_baseline(&s);
    int nq = st == QR_OK ? s.qt.n : 0, last = -1, n_wq = 0;
    QrWiStepPlan p = { calloc((size_t)nq + 1, sizeof(int)), NULL };
    for (int i = 0; p.state && i < nq; i++) {
        int bits, bs;
        bool asym;
        if (qr__wi_wq_of(&s, i, &bits, &asym, &bs)) { last = i; n_wq++; }
    }
    if (st == QR_OK && (!p.state || last < 0)) { st = QR_ERR_INVALID; snprintf(msg, sizeof msg, "no weight-only weight"); }
    for (int inc = 0; st == QR_OK && inc < 2 && !msg[0]; inc++) {
        s.no_incremental = !inc;
        if (inc) st = qr_session_ref(&s, NULL, NULL, NULL, NULL);
        for (int sel = 0; st == QR_OK && sel < 2 && !msg[0]; sel++) {
            for (int i = 0; i < nq; i++) {
                int bits, bs;
                bool asym;
                p.state[i] = (sel ? i == last : true) && qr__wi_wq_of(&s, i, &bits, &asym, &bs);
            }
            for (int kind = 0; st == QR_OK && kind < 2 && !msg[0]; kind++) {
                QrMetrics now, copies;
                int changed = 0;
                st = qr__wi_wq_run(&s, &p, kind, &now);
                if (st == QR_OK) st = qt_llm_wq_copies(&s, &p, kind, &copies, &changed);
                if (st != QR_OK || !changed) continue;
                n_cmp++;
                if (memcmp(&now, &copies, sizeof now) || !(now.cosine == now.cosine))
                    snprintf(msg, sizeof msg, "%s, %s, %s: Cosine %.17g MSE %.9g, with float copies %.17g / %.9g",
                             inc ? "incremental" : "whole graph", sel ? "last weight" : "every weight",
                             kind ? "half the block" : "8 bits", now.cosine, now.mse, copies.cosine, copies.mse);
            }
        }
    }
    if (st == QR_OK && !msg[0] && n_cmp < 4) snprintf(msg, sizeof msg, "only %d runs changed a weight (%d weights)", n_cmp, n_wq);
    qt_record(label, st == QR_OK && !msg[0], "%s %s", st == QR_OK ? "" : qr_err_msg(), msg);
    free(p.state);
    if (s.b) qr_session_close(&s);
    for (int i = 0; in && i < n_in; i++) qr_tensor_free_data(&in[i]);
    free(in);
    if (b) { qr_graph_free(b); free(b); }
    if (a) { qr_graph_free(a); free(a); }
}

static void test_llm_whatif_wq_edit(void) {
    /* the decoder: int8-activation MatMulNBits (the packed BlockDequant switched to the float product) */
    qt_llm_wq_same("llm/whatif_wq_edit/int4_sym", QT_LLM "/fp32/model.onnx", QT_LLM "/int4_sym/model.onnx", QT_LLM "/prompt");
    qt_llm_wq_same("llm/whatif_wq_edit/int4_asym", QT_LLM "/fp32/model.onnx", QT_LLM "/int4_asym/model.onnx", QT_LLM "/prompt");
    /* blocked DequantizeLinear twins (no accuracy_level), one 8-bit node: its 8-bit run changes nothing */
    qt_llm_wq_same("llm/whatif_wq_edit/wonly_pair", "fixtures/contrib/wonly_pair/base.onnx",
                   "fixtures/contrib/wonly_pair/analysis.onnx", "fixtures/contrib/wonly_pair/input.npy");
}

/* The weight comparison of a session with y (the dequantized weight) whole (panel 0) and a panel of
 * QR_KERN_STATS_BLOCK elements; *peak: the most y elements the panel run held, *big: rows with a float
 * weight larger than the panel. */
static QrStatus qt_llm_wt_modes(const QrSession *s, QrWeightCmp *whole, QrWeightCmp *panel, int64_t *peak, int *big) {
    int64_t keep = qr__wt_panel;
    qr__wt_panel = 0;
    QrStatus st = qr_weights_compare(s, whole);
    qr__wt_panel = QR_KERN_STATS_BLOCK;
    qr__wt_y_peak = 0;
    if (st == QR_OK) st = qr_weights_compare(s, panel);
    *peak = qr__wt_y_peak;
    qr__wt_panel = keep;
    *big = 0;
    for (int k = 0; st == QR_OK && k < panel->n; k++) *big += panel->rows[k].has_m && panel->rows[k].n > QR_KERN_STATS_BLOCK;
    return st;
}

/* The first row that differs (bytes of QrWeightRow), -1 when none. */
static int qt_llm_wt_diff(const QrWeightCmp *a, const QrWeightCmp *b) {
    if (a->n != b->n) return 0;
    for (int k = 0; k < a->n; k++) if (memcmp(&a->rows[k], &b->rows[k], sizeof a->rows[k])) return k;
    return -1;
}

/* The distributions (qr_dist_collect) of the weights of w larger than a panel, with y whole (one loop) and a panel of
 * QR_KERN_STATS_BLOCK elements (a chunk task each, on the pool, or one after another in the weight's own panel): the first difference into msg (counts, ranges, histograms), *n the weights, *peak the
 * most y elements the panel run held. */
static QrStatus qt_llm_dist_modes(QrSession *s, const QrWeightCmp *w, char *msg, size_t cap, int *n, int64_t *peak) {
    const char *names[64];
    *n = 0;
    for (int k = 0; k < w->n && *n < 64; k++) if (w->rows[k].has_m && w->rows[k].n > QR_KERN_STATS_BLOCK) names[(*n)++] = w->rows[k].name;
    QrDistSet ds[3];
    memset(ds, 0, sizeof ds);
    int64_t keep = qr__dist_panel, keep_par = qr__dist_par_min;
    QrStatus st = QR_OK;
    int64_t pk = 0;
    for (int m = 0; m < 3 && st == QR_OK; m++) {   /* whole y; panels as chunk tasks on the pool; panels one after another */
        qr__dist_panel = m ? QR_KERN_STATS_BLOCK : 0;
        qr__dist_par_min = m == 1 ? 0 : INT64_MAX;
        qr__wt_y_peak = 0;
        st = qr_dist_collect(s, NULL, names, *n, 16, &ds[m]);
        if (m) pk = QR_MAX(pk, qr__wt_y_peak);   /* (the panel modes) */
    }
    *peak = pk;
    qr__dist_panel = keep;
    qr__dist_par_min = keep_par;
    for (int m = 1; m < 3; m++)
        for (int k = 0; st == QR_OK && !msg[0] && k < ds[0].n; k++) {
            const QrDist *a = &ds[0].d[k], *b = &ds[m].d[k];
            size_t hb = (size_t)a->n_bins * sizeof(int64_t);
            if (ds[m].n != ds[0].n || a->n != b->n || a->n_nonfinite != b->n_nonfinite || a->lo != b->lo || a->hi != b->hi ||
                a->err_lo != b->err_lo || a->err_hi != b->err_hi || a->absmax_anal != b->absmax_anal ||
                memcmp(a->h_base, b->h_base, hb) || memcmp(a->h_anal, b->h_anal, hb) || memcmp(a->h_err, b->h_err, hb) ||
                !(a->clip_hi == b->clip_hi || a->clip_hi != a->clip_hi))
                snprintf(msg, cap, "distribution of '%s' differs with y a panel (%s; err_hi %.17g, whole %.17g)", a->name,
                         m == 1 ? "on the pool" : "one after another", b->err_hi, a->err_hi);
        }
    qr_dist_free(&ds[0]);
    qr_dist_free(&ds[2]);
    qr_dist_free(&ds[1]);
    return st;
}

/* The weight comparison computes the dequantized weight a panel at a time (an LLM's lm_head: no 196 MB copy):
 * every row (metrics, counts, block statistics and the output-error shares of the activations) equals the
 * whole-weight one byte for byte, while no y held more than the panel; and again with a NaN planted in the
 * largest float weight (the metrics then take the whole-array path). The same for the distributions of those
 * weights (qr_dist_collect: two passes over y, both filling the panels). blocked: the weights are blocked
 * (MatMulNBits), so some row has the activations' shares. */
static void qt_llm_wt_panel(const char *label, const char *base, const char *analysis, const char *inputs, bool blocked) {
    QrGraph *b = NULL, *a = NULL;
    QrSession s = {0};
    QrTensor *in = NULL;
    QrWeightCmp w0 = {0}, w1 = {0};
    char msg[512] = "";
    int n_in = 0;
    QrStatus st = qr_run_load(base, &b);
    if (st == QR_OK) st = qr_run_load(analysis, &a);
    if (st == QR_OK) {
        n_in = b->n_inputs;
        in = calloc((size_t)n_in + 1, sizeof *in);
        st = !in ? QR_ERR_NOMEM : strstr(inputs, ".npy") ? qr_npy_read(inputs, &in[0]) : qt_llm_inputs(b, inputs, in);
    }
    if (st == QR_OK) st = qr_run_infer(b, in);
    if (st == QR_OK) st = qr_run_infer(a, in);
    if (st == QR_OK) st = qr_session_open(&s, b, a, in);
    if (st == QR_OK) st = qr_session_run_baseline(&s);
    for (int nan = 0; st == QR_OK && nan < 2 && !msg[0]; nan++) {
        int64_t peak = 0;
        int big = 0, d, act = 0;
        if (nan) {   /* the largest float32 weight gets a NaN in its second panel */
            QrTensor *t = NULL;
            for (int k = 0; k < w1.n; k++) {
                const QrWeightRow *r = &w1.rows[k];
                if (r->src == QR_FW_BASELINE && s.fw[r->q]->dtype == QR_DT_F32 && (!t || s.fw[r->q]->numel > t->numel))
                    t = (QrTensor *)s.fw[r->q];
            }
            if (!t || t->numel <= QR_KERN_STATS_BLOCK + 7) { snprintf(msg, sizeof msg, "no float32 weight to plant a NaN in"); break; }
            ((float *)t->data)[QR_KERN_STATS_BLOCK + 7] = NAN;
            qr_weights_free(&w0);
            qr_weights_free(&w1);
        }
        st = qt_llm_wt_modes(&s, &w0, &w1, &peak, &big);
        for (int k = 0; st == QR_OK && k < w1.n; k++) act += w1.rows[k].has_act;
        if (st != QR_OK) break;
        if ((d = qt_llm_wt_diff(&w0, &w1)) >= 0)
            snprintf(msg, sizeof msg, "%s: weight '%s' differs with y a panel (SQNR %.17g, whole %.17g)", nan ? "NaN" : "finite",
                     d < w1.n ? w1.rows[d].name : "?", d < w1.n ? w1.rows[d].m.sqnr : NAN, d < w0.n ? w0.rows[d].m.sqnr : NAN);
        else if (peak > QR_KERN_STATS_BLOCK || !big || (blocked && !nan && !act))
            snprintf(msg, sizeof msg, "y held %lld elements (panel %d), %d weights larger than it, %d with activations", (long long)peak,
                     QR_KERN_STATS_BLOCK, big, act);
        int nd = 0;
        int64_t dpeak = 0;
        if (!msg[0]) st = qt_llm_dist_modes(&s, &w1, msg, sizeof msg, &nd, &dpeak);
        if (st == QR_OK && !msg[0] && (dpeak > QR_KERN_STATS_BLOCK || nd < 1))
            snprintf(msg, sizeof msg, "distributions: y held %lld elements (panel %d), %d weights", (long long)dpeak,
                     QR_KERN_STATS_BLOCK, nd);
    }
    qt_record(label, st == QR_OK && !msg[0], "%s %s", st == QR_OK ? "" : qr_err_msg(), msg);
    qr_weights_free(&w0);
    qr_weights_free(&w1);
    if (s.b) qr_session_close(&s);
    for (int i = 0; in && i < n_in; i++) qr_tensor_free_data(&in[i]);
    free(in);
    if (b) { qr_graph_free(b); free(b); }
    if (a) { qr_graph_free(a); free(a); }
}

static void test_llm_weights_panel(void) {
    qt_llm_wt_panel("llm/weights_panel/int4_sym", QT_LLM "/fp32/model.onnx", QT_LLM "/int4_sym/model.onnx", QT_LLM "/prompt", true);
    qt_llm_wt_panel("llm/weights_panel/int4_asym", QT_LLM "/fp32/model.onnx", QT_LLM "/int4_asym/model.onnx", QT_LLM "/prompt",
                    true);
    /* per-channel QDQ: y is the fake-quant of the float weight */
    qt_llm_wt_panel("llm/weights_panel/qdq8", QT_LLM "/fp32/model.onnx", QT_LLM "/qdq8/model.onnx", QT_LLM "/prompt", false);
}

/* ---- symbolic dims ------------------------------------------------------------------------------------ */

static void test_llm_dims(void) {
    QtCli r;
    const char *S = QT_LLM "/std", *P = QT_LLM "/prompt";
    /* run without -i: the dims from --dim */
    qt_cli(&r, "run %s/base.onnx --dim batch_size=3 --dim sequence_length=5 -o %s/llm_run --quiet", S, qt_tmpdir());
    QT_CHECKF(r.code == 0, "%s", r.err);
    char p[512];
    snprintf(p, sizeof p, "%s/llm_run/logits.npy", qt_tmpdir());
    QrTensor t = {0};
    QT_OK(qr_npy_read(p, &t));
    bool shape_ok = t.rank == 3 && t.dims[0] == 3 && t.dims[1] == 5 && t.dims[2] == 256;
    qr_tensor_free_data(&t);
    QT_CHECK(shape_ok);
    /* check without -i: the dim it cannot bind is named, with the options that bind it */
    qt_cli(&r, "check %s/analysis.onnx -o %s/llm_chk", S, qt_tmpdir());
    QT_CLI_FAILS(r, "input 'input_ids'", "'batch_size'", "--dim batch_size=N");
    qt_cli(&r, "check %s/analysis.onnx --dim batch_size=1 --dim sequence_length=4 -o %s/llm_chk --quiet", S, qt_tmpdir());
    QT_CHECKF(r.code == 0, "%s", r.err);
    /* compare and check on the decoder with only input_ids and attention_mask: batch_size and
     * total_sequence_length come from them, past_sequence_length = total - sequence_length; kv_cache_dim
     * is bound by nothing given: named */
    qt_cli(&r, "compare " QT_LLM "/fp32/model.onnx " QT_LLM "/int4_sym/model.onnx -i input_ids=%s/input_ids.npy "
           "-i attention_mask=%s/attention_mask.npy -o %s/llm_c2", P, P, qt_tmpdir());
    QT_CLI_FAILS(r, "input 'past_key_values.0.key'", "dimension 3 ('kv_cache_dim')", "--dim kv_cache_dim=N");
    /* check on the builder's model without -i: every dimension it needs, in one message; given, it runs */
    qt_cli(&r, "check " QT_LLM "/int4_sym/model.onnx -o %s/llm_c8", qt_tmpdir());
    QT_CLI_FAILS(r, "every dimension the inputs given leave unbound: --dim batch_size=N --dim sequence_length=N "
                 "--dim past_sequence_length=N --dim kv_cache_dim=N; total_sequence_length = past_sequence_length + "
                 "sequence_length");
    qt_cli(&r, "check " QT_LLM "/int4_sym/model.onnx --dim batch_size=1 --dim sequence_length=8 --dim past_sequence_length=0 "
           "--dim kv_cache_dim=16 -o %s/llm_c9 --quiet", qt_tmpdir());
    QT_CHECKF(r.code == 0, "%s", r.err);
    qt_cli(&r, "check " QT_LLM "/int4_sym/model.onnx -i input_ids=%s/input_ids.npy -o %s/llm_c3", P, qt_tmpdir());
    QT_CLI_FAILS(r, "input 'attention_mask'", "'total_sequence_length'");
    /* two inputs binding one dim differently */
    int64_t d2[2] = { 2, 8 };
    snprintf(p, sizeof p, "%s/llm_mask2.npy", qt_tmpdir());
    QrTensor m = {0};
    QT_OK(qr_tensor_set_shape(&m, QR_DT_S64, 2, d2));
    QT_OK(qr_tensor_alloc_data(&m));
    for (int64_t e = 0; e < m.numel; e++) qr_tensor_set_i64(&m, e, 1);
    QT_OK(qr_npy_write(p, &m));
    qr_tensor_free_data(&m);
    qt_cli(&r, "run " QT_LLM "/fp32/model.onnx -i input_ids=%s/input_ids.npy -i attention_mask=%s --dim kv_cache_dim=16 "
           "-o %s/llm_c4", P, p, qt_tmpdir());
    QT_CLI_FAILS(r, "('batch_size') cannot be bound", "input 'input_ids' has it 1", "input 'attention_mask' 2");
    /* -i DIR: <input name>.npy of every input found there (the std folder holds input_ids.npy [2, 8]) */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i %s -o %s/llm_c6 --quiet", S, S, S, qt_tmpdir());
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_c6/compare_outputs.csv", qt_tmpdir());
    char c6[64];
    QT_CHECKF(qt_llm_csv(p, "logits", "tokens", c6, sizeof c6) && !strcmp(c6, "16"), "tokens %s", c6);
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx -i " QT_LLM " -o %s/llm_c7", S, S, qt_tmpdir());
    QT_CLI_FAILS(r, "-i " QT_LLM ": the folder holds no <input name>.npy/.pb", "'input_ids'");
    /* compare without -i, dims given: a random input of the bound shape */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --dim batch_size=1 --dim sequence_length=6 -o %s/llm_c5 --quiet",
           S, S, qt_tmpdir());
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(p, sizeof p, "%s/llm_c5/compare_outputs.csv", qt_tmpdir());
    char cell[64];
    QT_CHECKF(qt_llm_csv(p, "logits", "tokens", cell, sizeof cell) && !strcmp(cell, "6"), "tokens %s", cell);
    /* find-bad-case --data binds the dims from the first sample, as runall --data (no --shape) */
    char dd[512], cmd[1400];
    snprintf(dd, sizeof dd, "%s/llm_data", qt_tmpdir());
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/input_ids'", dd, dd);
    QT_CHECK(system(cmd) == 0);
    QrTensor ids = {0};
    QT_OK(qr_npy_read(QT_LLM "/std/input_ids.npy", &ids));
    for (int k = 0; k < 2; k++) {
        QrTensor one = {0};
        int64_t d1[2] = { 1, ids.dims[1] };
        QT_OK(qr_tensor_set_shape(&one, QR_DT_S64, 2, d1));
        QT_OK(qr_tensor_alloc_data(&one));
        for (int64_t e = 0; e < one.numel; e++) qr_tensor_set_i64(&one, e, qr_tensor_get_i64(&ids, k * one.numel + e));
        qt_fmt(p, sizeof p, "%s/input_ids/%d.npy", dd, k);
        QT_OK(qr_npy_write(p, &one));
        qr_tensor_free_data(&one);
    }
    qr_tensor_free_data(&ids);
    qt_cli(&r, "find-bad-case %s/base.onnx %s/analysis.onnx --data %s -o %s/llm_bc --quiet", S, S, dd, qt_tmpdir());
    QT_CHECKF(r.code == 0, "%s", r.err);
}

static void qt_llm_all(void) {
    QT_RUN(test_llm_external_data);
    QT_RUN(test_llm_run_vs_ort);
    QT_RUN(test_llm_tokens_unit);
    QT_RUN(test_llm_compare_outputs);
    QT_RUN(test_llm_tokens_data);
    QT_RUN(test_llm_metric_kld);
    QT_RUN(test_llm_generate_std);
    QT_RUN(test_llm_generate_decoder);
    QT_RUN(test_llm_generate_divergence);
    QT_RUN(test_llm_generate_kvmap);
    QT_RUN(test_llm_weight_blocks_outlier);
    QT_RUN(test_llm_whatif_weight_only);
    QT_RUN(test_llm_whatif_wq_edit);
    QT_RUN(test_llm_weights_panel);
    QT_RUN(test_llm_dims);
}
