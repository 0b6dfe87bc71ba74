/* tests/exact — what is bit-exact, per operator family. Every node of the fixture models
 * (float fixtures, the baselines and sim runs of the quantized pairs, the transformer pairs)
 * is run on ONNX Runtime's own inputs to it (the goldens of its producers; ORT single-threaded,
 * optimizations disabled) and its outputs are compared with ORT's: each family is either exact
 * (every output element has ORT's bits) or within tolerance (the largest difference relative to
 * the output's largest magnitude is reported). The table below is the claim: the README quotes
 * it, and this test fails when a family marked exact is not, when a family's status changes
 * either way (so the table is kept true), or when an operator of the fixtures is missing from
 * it. x86-64 only (aarch64 sums in NEON order: within float rounding, see test_golden.c). Each
 * model runs with the Softmax / Exp kernels of the ORT its goldens came from (golden/ort_cpu.txt:
 * "avx512f", its AVX-512F kernels; no file: an AVX2 CPU, the older fixtures).
 * QT_EX_DEBUG=1 also prints every node output that differs from ORT's. */

typedef struct QtExClaim {
    const char *op;             /* op_type, "domain.op_type" outside the default domain */
    bool exact;                 /* the claim */
} QtExClaim;

typedef struct QtExFamily {     /* measured */
    int nodes, exact_nodes;
    int64_t elems, diff_elems;
    double max_rel;             /* largest |qreport - ORT| / max |ORT| over the family's outputs */
    bool seen;
} QtExFamily;

#if defined(__x86_64__)   /* the exactness table is measured on the x86-64 levels only (test_exact_families) */
/* The claim (README "Exactness"). Families within tolerance say so; every other is exact. */
static const QtExClaim qt_ex_table[] = {
    { "Add", true }, { "AveragePool", true }, { "BatchNormalization", true }, { "Cast", true },
    { "Clip", true }, { "Concat", true }, { "Constant", true }, { "Conv", true }, { "ConvInteger", true },
    { "ConvTranspose", false },
    { "DequantizeLinear", true }, { "Div", true }, { "DynamicQuantizeLinear", true }, { "Erf", true }, { "Exp", true },
    { "Flatten", true }, { "Gelu", true }, { "Gemm", true }, { "GlobalAveragePool", true }, { "HardSigmoid", true },
    { "HardSwish", true }, { "Identity", true }, { "LayerNormalization", true }, { "LogSoftmax", true }, { "MatMul", true },
    { "MatMulInteger", true }, { "MaxPool", true }, { "Mul", true }, { "Pad", true }, { "QLinearConv", true },
    { "Pow", true }, { "QuantizeLinear", true }, { "ReduceMean", true }, { "Relu", true }, { "Reshape", true }, { "Resize", false },
    { "Shape", true }, { "Sigmoid", true }, { "Slice", true }, { "Softmax", true }, { "Sqrt", true }, { "Sub", true },
    { "Tanh", true }, { "Transpose", true },
    { "com.microsoft.MatMulNBits", true }, { "com.microsoft.QGemm", true },
    { "com.microsoft.QLinearAdd", true }, { "com.microsoft.QLinearGlobalAveragePool", true },
};

static QtExFamily qt_ex_meas[QR_ARRAY_LEN(qt_ex_table)];

static QtExFamily *qt_ex_family(const QrNode *n) {
    char key[160];
    snprintf(key, sizeof key, "%s%s%s", n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type);
    for (int i = 0; i < QR_ARRAY_LEN(qt_ex_table); i++) if (!strcmp(qt_ex_table[i].op, key)) return &qt_ex_meas[i];
    return NULL;
}

/* One model: each node on ORT's inputs, outputs against ORT's. *unknown receives an op missing
 * from the table. */
static QrStatus qt_ex_model(const char *model, const char *input, const char *golden, char *unknown, size_t un) {
    char path[1024];
    QrGraph *g = NULL;
    QrTensor x = {0};
    QrArena ar = {0};
    QrStrMap idx;
    unsigned char *buf = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/index.tsv", golden);
    QrStatus st = qr_file_read(path, 0, &buf, &len);
    int lines = 0;
    for (size_t i = 0; st == QR_OK && i < len; i++) lines += buf[i] == '\n';
    char **files = st == QR_OK ? qr_arena_array(&ar, (size_t)lines + 1, sizeof(char *)) : NULL;
    if (st == QR_OK) st = files ? qr_strmap_init(&idx, &ar, (uint32_t)lines + 1) : qr_errf(QR_ERR_NOMEM, "oom");
    int nf = 0;
    for (char *line = (char *)buf; st == QR_OK && line && *line;) {
        char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (nl) *nl = 0;
        if (!tab) { st = qr_errf(QR_ERR_PARSE, "%s: bad line", path); break; }
        *tab = 0;
        files[nf] = qr_arena_strdup(&ar, tab + 1);
        st = qr_strmap_put(&idx, &ar, qr_arena_strdup(&ar, line), nf);
        nf++;
        line = nl ? nl + 1 : NULL;
    }
    /* the ORT the goldens came from: golden/ort_cpu.txt "avx512f" (its AVX-512F Softmax / Exp
     * kernels), else an AVX2 CPU (every fixture made before that file existed) */
    unsigned char *cpu = NULL;
    size_t cpu_len = 0;
    snprintf(path, sizeof path, "%s/ort_cpu.txt", golden);
    qr_kern.ort_wide = st == QR_OK && qr_file_read(path, 0, &cpu, &cpu_len) == QR_OK && cpu_len >= 7 &&
                       !memcmp(cpu, "avx512f", 7);
    qr_err_clear();
    qr_aligned_free(cpu);
    if (st == QR_OK) st = qr_run_load(model, &g);
    if (st == QR_OK) st = qr_npy_read(input, &x);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    QrTensor *held = st == QR_OK ? calloc((size_t)g->n_values + 1, sizeof *held) : NULL;   /* goldens read */
    if (st == QR_OK && !held) st = qr_errf(QR_ERR_NOMEM, "oom");
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        QtExFamily *fam = qt_ex_family(n);
        if (!fam) {
            if (!unknown[0]) snprintf(unknown, un, "%s%s%s (node '%s' of %s)", n->domain, n->domain[0] ? "." : "",
                                      n->op_type, n->name, model);
            continue;
        }
        const QrTensor *in[16];
        bool ok = n->n_in <= 16;
        for (int k = 0; ok && k < n->n_in; k++) {
            int v = n->in[k];
            in[k] = NULL;
            if (v < 0) continue;
            const QrValue *val = &g->values[v];
            if (val->is_input) { in[k] = &x; continue; }
            if (val->is_init) { in[k] = &val->t; continue; }
            int row = qr_strmap_get(&idx, val->name);
            if (row < 0) { ok = false; break; }
            if (!held[v].data) {
                snprintf(path, sizeof path, "%s/%s", golden, files[row]);
                st = qr_npy_read(path, &held[v]);
                if (st != QR_OK) break;
            }
            in[k] = &held[v];
        }
        if (st != QR_OK || !ok) continue;
        QrTensor out[8];
        if (n->n_out > 8) continue;
        st = qr_run_node(g, g->order[oi], in, out);
        if (st != QR_OK) { st = qr_err_wrap(st, "%s: node '%s'", model, n->name); break; }
        bool node_exact = true, any = false;
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k], row = v >= 0 ? qr_strmap_get(&idx, g->values[v].name) : -1;
            if (row < 0) continue;
            QrTensor want = {0};
            snprintf(path, sizeof path, "%s/%s", golden, files[row]);
            st = qr_npy_read(path, &want);
            if (st != QR_OK) break;
            any = true;
            if (want.dtype != out[k].dtype || want.numel != out[k].numel) {
                st = qr_errf(QR_ERR_INVALID, "%s: node '%s' output %d: %s x %lld, ORT %s x %lld", model, n->name, k,
                             qr_dtype_name(out[k].dtype), (long long)out[k].numel, qr_dtype_name(want.dtype),
                             (long long)want.numel);
                qr_tensor_free_data(&want);
                break;
            }
            double amax = 0, dmax = 0;
            int64_t nd = 0;
            for (int64_t e = 0; e < want.numel; e++) {
                double a = qr_tensor_get_f64(&out[k], e), b = qr_tensor_get_f64(&want, e);
                bool same = qr_dtype_is_float(want.dtype) ? !memcmp((const char *)out[k].data + e * qr_dtype_size(want.dtype),
                                                                    (const char *)want.data + e * qr_dtype_size(want.dtype),
                                                                    qr_dtype_size(want.dtype)) || (a != a && b != b)
                                                          : a == b;
                if (!same) { nd++; dmax = fmax(dmax, fabs(a - b)); }
                if (isfinite(b)) amax = fmax(amax, fabs(b));
            }
            fam->elems += want.numel;
            fam->diff_elems += nd;
            if (nd && getenv("QT_EX_DEBUG")) printf("    differs: %s node %s output %d: %lld of %lld\n", model, n->name, k, (long long)nd, (long long)want.numel);
            if (nd) { node_exact = false; fam->max_rel = fmax(fam->max_rel, amax > 0 ? dmax / amax : dmax); }
            qr_tensor_free_data(&want);
        }
        for (int k = 0; k < n->n_out; k++) qr_tensor_free_data(&out[k]);
        if (any) { fam->seen = true; fam->nodes++; fam->exact_nodes += node_exact; }
    }
    for (int v = 0; held && v < g->n_values; v++) qr_tensor_free_data(&held[v]);
    free(held);
    qr_tensor_free_data(&x);
    if (g) { qr_graph_free(g); free(g); }
    qr_aligned_free(buf);
    qr_arena_free(&ar);
    return st;
}
#endif

static void test_exact_families(void) {
#if defined(__x86_64__)
    static const char *const models[][3] = {
        { "fixtures/cnn_residual/model.onnx", "fixtures/cnn_residual/input.npy", "fixtures/cnn_residual/golden" },
        { "fixtures/resize_concat/model.onnx", "fixtures/resize_concat/input.npy", "fixtures/resize_concat/golden" },
        { "fixtures/transformer/model.onnx", "fixtures/transformer/input.npy", "fixtures/transformer/golden" },
        { "fixtures/convt_reduce/model.onnx", "fixtures/convt_reduce/input.npy", "fixtures/convt_reduce/golden" },
        { "fixtures/qpairs/qat_fakequant/base.onnx", "fixtures/qpairs/qat_fakequant/input.npy", "fixtures/qpairs/qat_fakequant/golden_base" },
        { "fixtures/qpairs/qat_fakequant/analysis.onnx", "fixtures/qpairs/qat_fakequant/input.npy", "fixtures/qpairs/qat_fakequant/golden_sim" },
        { "fixtures/qpairs/ort_qdq/analysis.onnx", "fixtures/qpairs/ort_qdq/input.npy", "fixtures/qpairs/ort_qdq/golden_sim" },
        { "fixtures/qpairs/qoperator/analysis.onnx", "fixtures/qpairs/qoperator/input.npy", "fixtures/qpairs/qoperator/golden_sim" },
        { "fixtures/qpairs/int16_mixed/analysis.onnx", "fixtures/qpairs/int16_mixed/input.npy", "fixtures/qpairs/int16_mixed/golden_sim" },
        { "fixtures/qpairs/integer_ops/analysis.onnx", "fixtures/qpairs/integer_ops/input.npy", "fixtures/qpairs/integer_ops/golden_sim" },
        { "fixtures/qpairs/ort_qdq/base.onnx", "fixtures/qpairs/ort_qdq/input.npy", "fixtures/qpairs/ort_qdq/golden_base" },
        { "fixtures/tpairs/static_int8/base.onnx", "fixtures/tpairs/static_int8/input.npy", "fixtures/tpairs/static_int8/golden_base" },
        { "fixtures/tpairs/static_int8/analysis.onnx", "fixtures/tpairs/static_int8/input.npy", "fixtures/tpairs/static_int8/golden_sim" },
        { "fixtures/tpairs/int4_nbits/analysis.onnx", "fixtures/tpairs/int4_nbits/input.npy", "fixtures/tpairs/int4_nbits/golden_sim" },
        { "fixtures/tblock/model.onnx", "fixtures/tblock/input.npy", "fixtures/tblock/golden" },
        { "fixtures/tblock/op20/model.onnx", "fixtures/tblock/op20/input.npy", "fixtures/tblock/op20/golden" },
        { "fixtures/tblock/ln/model.onnx", "fixtures/tblock/ln/input.npy", "fixtures/tblock/ln/golden" },
        { "fixtures/tblock/mm/model.onnx", "fixtures/tblock/mm/input.npy", "fixtures/tblock/mm/golden" },
        { "fixtures/tblock/gelu20/model.onnx", "fixtures/tblock/gelu20/input.npy", "fixtures/tblock/gelu20/golden" },
        { "fixtures/tblock/wide/model.onnx", "fixtures/tblock/wide/input.npy", "fixtures/tblock/wide/golden" },
    };
    static const QrIsa levels[] = { QR_ISA_AVX2, QR_ISA_AVX512 };
    const QrKernels saved_k = qr_kern;
    const int saved = qr_pool_threads();
    char bad[512] = "";
    int ran = 0;
    for (int l = 0; l < QR_ARRAY_LEN(levels) && !bad[0]; l++) {
        if (qr_kern_table(levels[l], &qr_kern) != QR_OK) { qr_err_clear(); continue; }
        ran++;
        memset(qt_ex_meas, 0, sizeof qt_ex_meas);
        qr_pool_init(1);
        char unknown[512] = "";
        QrStatus st = QR_OK;
        for (int m = 0; st == QR_OK && m < QR_ARRAY_LEN(models); m++)
            st = qt_ex_model(models[m][0], models[m][1], models[m][2], unknown, sizeof unknown);
        qr_pool_init(saved);
        qr_kern = saved_k;
        QT_OK(st);
        QT_CHECKF(!unknown[0], "an operator the exactness table does not list: %s", unknown);
        printf("exactness per operator family (each node on ONNX Runtime's inputs, kernels %s):\n", qr_isa_name(levels[l]));
        for (int i = 0; i < QR_ARRAY_LEN(qt_ex_table); i++) {
            const QtExFamily *f = &qt_ex_meas[i];
            const QtExClaim *c = &qt_ex_table[i];
            if (!f->seen) continue;
            bool exact = f->diff_elems == 0;
            printf("  %-42s %-17s %3d nodes, %8lld elements%s", c->op, exact ? "exact" : "within tolerance", f->nodes,
                   (long long)f->elems, exact ? "\n" : "");
            if (!exact) printf(", %lld differ, max |diff| %.2g of the output's max |value|\n", (long long)f->diff_elems, f->max_rel);
            if (exact != c->exact && !bad[0])
                snprintf(bad, sizeof bad, "%s is %s but the table says %s: update the table and the README", c->op,
                         exact ? "exact" : "not exact", c->exact ? "exact" : "within tolerance");
            if (!exact && f->max_rel > 1e-4 && !bad[0])
                snprintf(bad, sizeof bad, "%s differs by %.3g of its output range (tolerance 1e-4)", c->op, f->max_rel);
        }
    }
    qr_kern = saved_k;
    QT_CHECKF(!bad[0], "%s", bad);
    if (!ran) QT_SKIP("no x86-64 SIMD level on this CPU");
#else
    QT_SKIP("the exactness table is for x86-64 (aarch64 sums in NEON order)");
#endif
}

/* The same claim against the ONNX Runtime of this machine, whose bits depend on the CPU (the
 * goldens above come from an AVX2 CPU; on a CPU with AVX-512F ORT sums long Softmax rows in 16
 * lanes): each model whose operators are all exact families runs whole in ORT ('disabled', one
 * thread; fixtures/ort_golden.js) and in qreport at every x86-64 kernel level the CPU has, with
 * the ORT variant qreport picks for this CPU (as `qreport run` does); every output must have
 * ORT's bits. Skipped without node + onnxruntime-node. */
static void test_exact_live(void) {
#if defined(__x86_64__)
    static const char *const models[][2] = {
        { "fixtures/tblock/model.onnx", "fixtures/tblock/input.npy" },
        { "fixtures/tblock/op20/model.onnx", "fixtures/tblock/op20/input.npy" },
        { "fixtures/tblock/ln/model.onnx", "fixtures/tblock/ln/input.npy" },
        { "fixtures/tblock/mm/model.onnx", "fixtures/tblock/mm/input.npy" },
        { "fixtures/tblock/gelu20/model.onnx", "fixtures/tblock/gelu20/input.npy" },
        { "fixtures/tblock/wide/model.onnx", "fixtures/tblock/wide/input.npy" },
        { "fixtures/transformer/model.onnx", "fixtures/transformer/input.npy" },
        { "fixtures/tpairs/static_int8/base.onnx", "fixtures/tpairs/static_int8/input.npy" },
        { "fixtures/tpairs/static_int8/analysis.onnx", "fixtures/tpairs/static_int8/input.npy" },
        { "fixtures/tpairs/int4_nbits/analysis.onnx", "fixtures/tpairs/int4_nbits/input.npy" },
        { "fixtures/qpairs/ort_qdq/base.onnx", "fixtures/qpairs/ort_qdq/input.npy" },
        { "fixtures/qpairs/ort_qdq/analysis.onnx", "fixtures/qpairs/ort_qdq/input.npy" },
        { "fixtures/cnn_residual/model.onnx", "fixtures/cnn_residual/input.npy" },
    };
    const char *mods = getenv("ORT_NODE_MODULES");
    char p[1200];
    qt_fmt(p, sizeof p, "%s/onnxruntime-node", mods ? mods : "/tmp/ort/node_modules");
    if (access(p, F_OK) != 0 || system("node -e 0 >/dev/null 2>&1") != 0)
        QT_SKIP("no node + onnxruntime-node (tests/tools.sh installs them)");
    static const QrIsa levels[] = { QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI };
    /* the variant of this CPU, not one QR_ORT_SOFTMAX emulates (with the other variant forced,
     * 291 of tblock's 768 output elements differ on an AVX-512F machine) */
    const char *ov = getenv("QR_ORT_SOFTMAX");
    char ov_saved[32] = "";
    if (ov) { qt_fmt(ov_saved, sizeof ov_saved, "%s", ov); unsetenv("QR_ORT_SOFTMAX"); }
    const QrKernels saved_k = qr_kern;
    const int saved = qr_pool_threads();
    char bad[1024] = "", skipped[512] = "";
    int compared = 0, levels_ran = 0;
    bool wide = false;
    QrStatus st = QR_OK;
    for (int m = 0; st == QR_OK && m < QR_ARRAY_LEN(models) && !bad[0]; m++) {
        QrGraph *g = NULL;
        QrTensor x = {0}, *outs = NULL, want = {0};
        st = qr_run_load(models[m][0], &g);
        if (st == QR_OK) st = qr_npy_read(models[m][1], &x);
        if (st == QR_OK) st = qr_run_infer(g, &x);
        const char *loose = NULL;            /* an operator of a family within tolerance */
        for (int i = 0; st == QR_OK && i < g->n_nodes && !loose; i++) {
            const QtExFamily *f = qt_ex_family(&g->nodes[i]);
            if (!f || !qt_ex_table[f - qt_ex_meas].exact) loose = g->nodes[i].op_type;
        }
        char dir[700], cmd[2200];
        qt_fmt(dir, sizeof dir, "%s/exact_live_%d", qt_tmpdir(), m);
        if (st == QR_OK && !loose) {
            qr_mkdir_p(dir);
            qt_fmt(cmd, sizeof cmd, "node fixtures/ort_golden.js outputs '%s' '%s' '%s' disabled >'%s/ort.log' 2>&1",
                   models[m][0], models[m][1], dir, dir);
            if (system(cmd) != 0) st = qr_errf(QR_ERR_IO, "ONNX Runtime failed on %s (see %s/ort.log)", models[m][0], dir);
        }
        if (st == QR_OK && loose) {
            size_t l = strlen(skipped);
            snprintf(skipped + l, sizeof skipped - l, "%s%s (%s)", l ? ", " : "", models[m][0], loose);
        }
        if (st == QR_OK && !loose && !(outs = calloc((size_t)g->n_outputs + 1, sizeof *outs))) st = qr_errf(QR_ERR_NOMEM, "oom");
        for (int l = 0; st == QR_OK && !loose && l < QR_ARRAY_LEN(levels) && !bad[0]; l++) {
            if (qr_kern_table(levels[l], &qr_kern) != QR_OK) { qr_err_clear(); continue; }
            wide = qr_kern.ort_wide;
            levels_ran += m == 0;
            qr_pool_init(1);
            st = qr_run(g, &x, &(QrRunOpts){0}, outs);
            qr_pool_init(saved);
            qr_kern = saved_k;
            for (int j = 0; st == QR_OK && j < g->n_outputs && !bad[0]; j++) {
                qt_fmt(p, sizeof p, "%s/output_%d.npy", dir, j);
                st = qr_npy_read(p, &want);
                if (st != QR_OK) break;
                int64_t nd = -1;
                if (want.dtype == outs[j].dtype && want.numel == outs[j].numel) {
                    size_t es = qr_dtype_size(want.dtype);
                    nd = 0;
                    for (int64_t e = 0; e < want.numel; e++) {
                        double a = qr_tensor_get_f64(&outs[j], e), b = qr_tensor_get_f64(&want, e);
                        nd += memcmp((const char *)outs[j].data + e * es, (const char *)want.data + e * es, es) &&
                              !(a != a && b != b);
                    }
                }
                if (nd)
                    snprintf(bad, sizeof bad, "%s, output '%s', kernels %s (ORT variant %s): %lld of %lld elements differ "
                             "from this machine's ORT", models[m][0], g->values[g->outputs[j]].name,
                             qr_isa_name(levels[l]), wide ? "wide" : "narrow", (long long)nd, (long long)want.numel);
                qr_tensor_free_data(&want);
                compared++;
            }
            for (int j = 0; outs && j < g->n_outputs; j++) qr_tensor_free_data(&outs[j]);
        }
        free(outs);
        qr_tensor_free_data(&x);
        if (g) { qr_graph_free(g); free(g); }
    }
    if (ov_saved[0]) setenv("QR_ORT_SOFTMAX", ov_saved, 1);
    qr_kern = saved_k;
    QT_OK(st);
    QT_CHECKF(!bad[0], "%s", bad);
    if (!levels_ran) QT_SKIP("no x86-64 SIMD level on this CPU");
    printf("exactness against this machine's ORT (Softmax variant %s): %d outputs bit-identical over %d kernel level%s%s%s\n",
           wide ? "wide: AVX-512F" : "narrow: FMA3", compared, levels_ran, levels_ran == 1 ? "" : "s",
           skipped[0] ? "; not compared (a family within tolerance): " : "", skipped);
    QT_CHECKF(compared >= 10, "only %d outputs compared", compared);
#else
    QT_SKIP("the exactness table is for x86-64 (aarch64 sums in NEON order)");
#endif
}

static void qt_exact_all(void) {
    QT_RUN(test_exact_families);
    QT_RUN(test_exact_live);
}
