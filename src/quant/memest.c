/* quant/memest — implementation. See memest.h.
 *
 * A command's peak is the largest of its phases; a phase is what is alive at once:
 *
 *   every phase        runtime + models (b, a, twin) + tables + inputs
 *   loading            + the last model's file buffer and decoded protobuf (before its tables)
 *   bad-case search    + samples (current, worst) + one execution + both models' outputs
 *   prepare            + baseline values (the session cache fills during a baseline run)
 *   equivalence        + baseline values + their second copy + one execution
 *   compare            + baseline values + one execution (+ lowering for --mode int/both)
 *   sensitivity        + baseline values + analysis values (reference run cached) + one execution
 *   fragility          + baseline values + the unperturbed quantizer outputs (<= analysis values) + one execution
 *   weights / what-if / distributions / report   + baseline values + their own buffers
 *
 * Sizes are allocation sizes (64-byte aligned tensors with their padding), taken from the
 * inferred shapes and dtypes; the executor's live set is simulated over the topological
 * order exactly as qr_run frees values after their last reader. */

/* Fixed costs, measured on the static x86-64 build (peak RSS of `qreport --version` is
 * ~1.3 MiB; a small `run` ~1.6 MiB): code, libc, thread stacks and kernel packing scratch. */
#define QR__HM_RUNTIME ((uint64_t)2 << 20)
/* Per value and per node of every graph: statistics (64 B), match rows, executor slots
 * and use counts, override arrays, feed/cache pointers and QrTensor headers (~100 B each). */
#define QR__HM_PER_VALUE 512
#define QR__HM_PER_NODE 256
/* The largest plot canvas is 900 x 700 RGB; PNG encoding adds a filtered copy and the
 * deflate hash chains (about one more canvas). HTML/JSON text and zip state: 1 MiB. */
#define QR__HM_CANVAS ((uint64_t)900 * 700 * 3)
#define QR__HM_REPORT (3 * QR__HM_CANVAS + ((uint64_t)1 << 20))

static const char *qr_mem_part_name(QrMemPart p) {
    static const char *const names[QR_MEM_N_PARTS] = {
        "runtime", "models", "tables", "inputs", "loading", "baseline values", "baseline copy", "analysis values",
        "execution", "samples", "lowering", "weights", "distributions", "report",
    };
    return p >= 0 && p < QR_MEM_N_PARTS ? names[p] : "?";
}

/* Bytes qr_aligned_alloc takes for an n-byte tensor: padded to 64 with 64 readable bytes
 * past the end, then rounded up to pages (a block) or plus the heap's header. */
static uint64_t qr__hm_alloc(uint64_t n) {
    uint64_t padded = (n + 2 * QR_ALIGN - 1) & ~(uint64_t)(QR_ALIGN - 1);
    return qr__blk_is((size_t)padded) ? qr__blk_bytes((size_t)padded) : padded + 16;
}

/* Allocation bytes of value v's tensor in its inferred dtype (0 when unknown). */
static uint64_t qr__hm_value(const QrGraph *g, int v, int *n_dynamic) {
    const QrValue *val = &g->values[v];
    if (val->is_dynamic) { if (n_dynamic) (*n_dynamic)++; return 0; }
    if (!qr_dtype_supported(val->t.dtype) || val->t.numel < 0) return 0;
    return qr__hm_alloc(qr_tensor_nbytes(&val->t));
}

/* The same value as a float32 copy (qr_tensor_to_f32). */
static uint64_t qr__hm_value_f32(const QrGraph *g, int v) {
    const QrValue *val = &g->values[v];
    if (val->is_dynamic || !qr_dtype_supported(val->t.dtype) || val->t.numel < 0) return 0;
    return qr__hm_alloc((uint64_t)val->t.numel * 4);
}

/* Initializers and folded constants (owned tensor data) plus the graph arena. Values below
 * `first_own` borrow their data from another graph (the twin borrows the source's). */
static uint64_t qr__hm_model(const QrGraph *g, int first_own) {
    uint64_t s = g->arena.total;
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if ((val->is_init && v >= first_own) || val->is_folded) s += qr__hm_value(g, v, NULL);
    }
    return s;
}

/* Int32 accumulators of integer-arithmetic operators (ops/qdq.c scratch). */
static uint64_t qr__hm_scratch(const QrGraph *g, const QrNode *n) {
    const char *op = n->op_type;
    if (strncmp(op, "QLinear", 7) && !strstr(op, "Integer") && strcmp(op, "QGemm")) return 0;
    uint64_t s = 0;
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !g->values[n->out[k]].is_dynamic && g->values[n->out[k]].t.numel > 0)
            s += qr__hm_alloc((uint64_t)g->values[n->out[k]].t.numel * 4);
    return s;
}

/* Peak bytes of one qr_run of g beyond its inputs and initializers: computed values are
 * alive from their producer to their last reader (graph outputs to the end), each node's
 * outputs and scratch are added while it runs, and the graph outputs are copied at the end.
 * With `disabled`, as in runs with every quantizer off (equivalence check, the sensitivity
 * reference): a DequantizeLinear fed by a QuantizeLinear or an initializer is skipped and its
 * readers read the QuantizeLinear's input (or a substituted weight), which lives longer.
 * uses and res: scratch of n_values ints each. */
static uint64_t qr__hm_run_peak(const QrGraph *g, bool disabled, int *uses, int *res) {
    for (int v = 0; v < g->n_values; v++) { uses[v] = 0; res[v] = v; }
    for (int oi = 0; disabled && oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        if (strcmp(n->op_type, "DequantizeLinear") || n->n_in < 1 || n->in[0] < 0 || n->n_out < 1 || n->out[0] < 0) continue;
        const QrValue *x = &g->values[n->in[0]];
        int p = x->producer;
        if (x->is_init) res[n->out[0]] = -1;                          /* a substituted weight: not allocated */
        else if (p >= 0 && !strcmp(g->nodes[p].op_type, "QuantizeLinear") && g->nodes[p].n_in > 0 && g->nodes[p].in[0] >= 0)
            res[n->out[0]] = res[g->nodes[p].in[0]];
    }
    for (int ni = 0; ni < g->n_nodes; ni++)
        for (int k = 0; k < g->nodes[ni].n_in; k++)
            if (g->nodes[ni].in[k] >= 0 && res[g->nodes[ni].in[k]] >= 0) uses[res[g->nodes[ni].in[k]]]++;
    for (int i = 0; i < g->n_outputs; i++) if (res[g->outputs[i]] >= 0) uses[res[g->outputs[i]]]++;
    uint64_t live = 0, peak = 0;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        uint64_t out = 0;
        bool skip = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && res[n->out[k]] == n->out[k]) skip = false;
        for (int k = 0; !skip && k < n->n_out; k++) if (n->out[k] >= 0) out += qr__hm_value(g, n->out[k], NULL);
        peak = QR_MAX(peak, live + out + (skip ? 0 : qr__hm_scratch(g, n)));
        live += out;
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k] >= 0 ? res[n->in[k]] : -1;
            if (v >= 0 && g->values[v].producer >= 0 && !g->values[v].is_init && --uses[v] == 0)
                live -= QR_MIN(live, qr__hm_value(g, v, NULL));
        }
        for (int k = 0; !skip && k < n->n_out; k++)
            if (n->out[k] >= 0 && uses[n->out[k]] == 0) live -= QR_MIN(live, qr__hm_value(g, n->out[k], NULL));
    }
    uint64_t copies = 0;
    for (int i = 0; i < g->n_outputs; i++) copies += qr__hm_value(g, g->outputs[i], NULL);
    return QR_MAX(peak, live + copies);
}

/* Sum over the values a node produces: bytes as they are (f32 = false) or as float32 copies
 * (f32 = true, float values only: what the session's baseline cache keeps). */
static uint64_t qr__hm_produced(const QrGraph *g, bool f32, int *n_dynamic) {
    uint64_t s = 0;
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (val->producer < 0 || val->is_init) continue;
        if (!f32) s += qr__hm_value(g, v, n_dynamic);
        else if (qr_dtype_is_float(val->t.dtype) || val->is_dynamic) s += val->is_dynamic ? 0 : qr__hm_value_f32(g, v);
    }
    return s;
}

typedef struct QrHmGraph {
    const QrGraph *g;
    uint64_t model, exec, out_f32, max_f32, max_numel, init_bytes, int_init_bytes, max_w_numel, int_values;
    uint64_t prep;   /* the packed weights `run`'s cache keeps (qr_run_cache_keep_prep); 0 for other commands */
} QrHmGraph;

static void qr__hm_measure(QrHmGraph *m, const QrGraph *g, int first_own, bool quantized, int *uses, int *res) {
    memset(m, 0, sizeof *m);
    m->g = g;
    m->model = qr__hm_model(g, first_own);
    m->exec = qr__hm_run_peak(g, false, uses, res);
    if (quantized) m->exec = QR_MAX(m->exec, qr__hm_run_peak(g, true, uses, res));
    for (int i = 0; i < g->n_outputs; i++) m->out_f32 += qr__hm_value_f32(g, g->outputs[i]);
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (val->is_dynamic || !qr_dtype_supported(val->t.dtype)) continue;
        uint64_t n = (uint64_t)QR_MAX(val->t.numel, 0);
        m->max_f32 = QR_MAX(m->max_f32, qr__hm_value_f32(g, v));
        m->max_numel = QR_MAX(m->max_numel, n);
        if (val->is_init) {
            uint64_t b = qr__hm_value(g, v, NULL);
            m->init_bytes += b;
            if (!qr_dtype_is_float(val->t.dtype)) m->int_init_bytes += b;
            m->max_w_numel = QR_MAX(m->max_w_numel, n);
        } else if (val->producer >= 0 && !qr_dtype_is_float(val->t.dtype)) {
            m->int_values += qr__hm_value(g, v, NULL) + qr__hm_alloc(n * 4);
        }
    }
}

/* One phase: parts, summed; the estimate keeps the largest. */
typedef struct QrHmPhase { const char *name; uint64_t part[QR_MEM_N_PARTS]; } QrHmPhase;

static void qr__hm_take(QrMemEstimate *e, const QrHmPhase *p) {
    uint64_t t = 0;
    for (int k = 0; k < QR_MEM_N_PARTS; k++) t += p->part[k];
    if (e->phase && t <= e->total) return;
    e->total = t;
    e->phase = p->name;
    memcpy(e->part, p->part, sizeof e->part);
}

static uint64_t qr__hm_file(const char *path) {
    uint64_t sz = 0;
    if (!path || qr_file_size(path, &sz) != QR_OK) { qr_err_clear(); return 0; }
    return sz;
}

/* The phases of o->cmd (see the map above) into e. */
static void qr__hm_phases(const QrMemOpts *o, const QrHmGraph *mb, const QrHmGraph *ma, const QrHmGraph *mt, bool two,
                          uint64_t twin_model, uint64_t in_bytes, uint64_t tables, uint64_t base_vals, uint64_t ana_vals,
                          uint64_t load_file, QrMemEstimate *e) {
    bool runall = o->cmd == QR_MEM_RUNALL;
    QrHmPhase base = { .name = "run" };
    base.part[QR_MEM_P_RUNTIME] = QR__HM_RUNTIME;
    base.part[QR_MEM_P_MODELS] = mb->model + ma->model + twin_model;
    base.part[QR_MEM_P_TABLES] = tables;
    base.part[QR_MEM_P_INPUTS] = in_bytes + (runall && o->data_search ? in_bytes : 0);   /* + the worst sample */
    QrHmPhase p;

    /* loading the last model: its file and decoded protobuf next to its initializers */
    p = (QrHmPhase){ .name = "loading" };
    p.part[QR_MEM_P_RUNTIME] = QR__HM_RUNTIME;
    p.part[QR_MEM_P_MODELS] = mb->model + ma->model;
    p.part[QR_MEM_P_INPUTS] = two ? in_bytes : 0;
    p.part[QR_MEM_P_LOADING] = 2 * load_file;
    qr__hm_take(e, &p);

    if (!two) {
        p = base;
        p.name = o->cmd == QR_MEM_RUN ? "run" : o->cmd == QR_MEM_PROFILE ? "profile" : "check";
        if (!o->no_exec) p.part[QR_MEM_P_EXEC] = mb->exec;
        if (o->cmd == QR_MEM_RUN) p.part[QR_MEM_P_MODELS] += mb->prep;   /* its cache keeps packed weights */
        qr__hm_take(e, &p);
        return;
    }
    uint64_t ex_b = mb->exec + mb->max_f32, ex_t = mt->exec + QR_MAX(mt->max_f32, mb->max_f32);
    if (o->cmd == QR_MEM_BADCASE || (runall && o->data_search)) {
        p = base;
        p.name = "bad-case search";
        p.part[QR_MEM_P_MODELS] = mb->model + ma->model;          /* no twin yet */
        p.part[QR_MEM_P_INPUTS] = in_bytes;
        p.part[QR_MEM_P_SAMPLES] = 2 * in_bytes;
        p.part[QR_MEM_P_EXEC] = QR_MAX(mb->exec, ma->exec + mb->out_f32) + mb->out_f32 + ma->out_f32;
        qr__hm_take(e, &p);
        if (o->cmd == QR_MEM_BADCASE) return;
    }
    if (o->cmd == QR_MEM_MATCH || runall) {
        p = base;
        p.name = "equivalence check";
        p.part[QR_MEM_P_BASE_COPY] = base_vals;
        p.part[QR_MEM_P_BASE_VALUES] = runall ? base_vals : 0;
        p.part[QR_MEM_P_EXEC] = QR_MAX(ex_b, ex_t);
        qr__hm_take(e, &p);
        if (o->cmd == QR_MEM_MATCH) return;
    }
    base.part[QR_MEM_P_BASE_VALUES] = base_vals;
    p = base;
    p.name = "baseline run";
    p.part[QR_MEM_P_EXEC] = mb->exec;
    qr__hm_take(e, &p);
    if (o->cmd == QR_MEM_COMPARE || runall) {
        bool lowered = o->mode && (!strcmp(o->mode, "int") || !strcmp(o->mode, "both"));
        p = base;
        p.name = "compare";
        p.part[QR_MEM_P_EXEC] = QR_MAX(ma->exec + ma->max_f32, ex_t);
        if (lowered) p.part[QR_MEM_P_LOWERING] = ma->init_bytes + (strcmp(o->mode, "both") ? 0 : ma->int_values);
        qr__hm_take(e, &p);
    }
    if (o->cmd == QR_MEM_SENSITIVITY || runall) {
        p = base;
        p.name = "sensitivity";
        p.part[QR_MEM_P_ANALYSIS_VALUES] = ana_vals;
        p.part[QR_MEM_P_EXEC] = mt->exec + mt->out_f32;        /* + the outputs as float32 for the metrics */
        qr__hm_take(e, &p);
        p = base;
        p.name = "accumulated error";
        p.part[QR_MEM_P_EXEC] = ex_t;
        qr__hm_take(e, &p);
    }
    if (!runall) return;
    /* fragility: the unperturbed value of every activation quantizer (at most every twin value),
     * one perturbed run at a time (--max-memory: QrFragOpts.serial) and its outputs */
    p = base;
    p.name = "fragility";
    p.part[QR_MEM_P_ANALYSIS_VALUES] = ana_vals;
    p.part[QR_MEM_P_EXEC] = mt->exec + mt->out_f32;
    qr__hm_take(e, &p);
    p = base;
    p.name = "check and profiles";
    p.part[QR_MEM_P_EXEC] = QR_MAX(ma->exec, mb->exec);
    qr__hm_take(e, &p);
    /* weight comparison: float and dequantized copy plus per-channel doubles of the largest
     * weight; what-if: int16 copies of the integer weights of the promoted nodes (at most all) */
    p = base;
    p.name = "weights and what-if";
    p.part[QR_MEM_P_WEIGHTS] = QR_MAX(2 * qr__hm_alloc(mt->max_w_numel * 4) + qr__hm_alloc(mt->max_w_numel * 8),
                                      2 * mt->int_init_bytes);
    p.part[QR_MEM_P_EXEC] = mt->exec;
    qr__hm_take(e, &p);
    p = base;
    p.name = "distributions";
    p.part[QR_MEM_P_DIST] = QR_MEM_DIST_VALUES * QR_MAX(mt->max_f32, mb->max_f32) +
                            qr__hm_alloc(QR_MAX(mt->max_numel, mb->max_numel) * 8);
    p.part[QR_MEM_P_EXEC] = mt->exec;
    qr__hm_take(e, &p);
    p = base;
    p.name = "report";
    p.part[QR_MEM_P_REPORT] = QR__HM_REPORT;
    qr__hm_take(e, &p);
}

static QrStatus qr_mem_estimate(const QrGraph *b, const QrGraph *a, const QrTensor *inputs, const QrMemOpts *o,
                                QrMemEstimate *e) {
    memset(e, 0, sizeof *e);
    QrTwin tw;
    bool have_tw = false;
    if (a && o->cmd != QR_MEM_BADCASE) {       /* find-bad-case opens no session */
        have_tw = qr_twin_build(a, inputs, &tw) == QR_OK;
        if (!have_tw) qr_err_clear();          /* the session reports it; size the twin as a */
    }
    const QrGraph *t = have_tw ? &tw.g : a;
    int nv = QR_MAX(b->n_values, a ? QR_MAX(a->n_values, t->n_values) : 0);
    int *uses = malloc(((size_t)nv + 1) * 2 * sizeof *uses);
    if (!uses) { if (have_tw) qr_twin_free(&tw); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    QrHmGraph mb, ma = {0}, mt = {0};
    qr__hm_measure(&mb, b, 0, false, uses, uses + nv + 1);
    if (o->cmd == QR_MEM_RUN) mb.prep = qr_run_prep_bytes(b);   /* only run's cache keeps them */
    if (a) {
        qr__hm_measure(&ma, a, 0, false, uses, uses + nv + 1);
        /* the twin borrows a's initializers; it runs with quantizers off too */
        qr__hm_measure(&mt, t, have_tw ? a->n_values : t->n_values, true, uses, uses + nv + 1);
    }
    free(uses);
    uint64_t in_bytes = 0;
    for (int i = 0; i < b->n_inputs; i++) in_bytes += qr__hm_alloc(qr_tensor_nbytes(&inputs[i]));
    int nvals = b->n_values + (a ? a->n_values + (have_tw ? t->n_values : 0) : 0);
    int nnodes = b->n_nodes + (a ? a->n_nodes + (have_tw ? t->n_nodes : 0) : 0);
    uint64_t tables = (uint64_t)QR__HM_PER_VALUE * (uint64_t)nvals + (uint64_t)QR__HM_PER_NODE * (uint64_t)nnodes;
    /* the session cache: float32 copies of the baseline node outputs and graph outputs */
    uint64_t base_vals = qr__hm_produced(b, true, NULL) + mb.out_f32;
    /* the sensitivity cache: every value the twin's reference run taps, graph inputs too */
    int n_dyn = 0;
    uint64_t ana_vals = a ? qr__hm_produced(t, false, &n_dyn) + in_bytes : 0;
    qr__hm_produced(b, false, &n_dyn);
    e->n_dynamic = n_dyn;
    bool runall = o->cmd == QR_MEM_RUNALL;
    if (o->cmd == QR_MEM_COMPARE || o->cmd == QR_MEM_SENSITIVITY || runall) e->base_values = base_vals;
    if (o->cmd == QR_MEM_SENSITIVITY || runall) e->analysis_values = ana_vals;
    qr__hm_phases(o, &mb, &ma, &mt, a != NULL, have_tw ? mt.model : 0, in_bytes, tables, base_vals, ana_vals,
                  qr__hm_file(a ? a->path : b->path), e);
    if (have_tw) qr_twin_free(&tw);
    return QR_OK;
}

static void qr_mem_estimate_files(const char *const *paths, int n, QrMemEstimate *e) {
    memset(e, 0, sizeof *e);
    uint64_t loaded = 0;
    for (int i = 0; i < n; i++) {
        uint64_t f = qr__hm_file(paths[i]);
        QrHmPhase p = { .name = "loading" };
        p.part[QR_MEM_P_RUNTIME] = QR__HM_RUNTIME;
        p.part[QR_MEM_P_MODELS] = loaded + f;       /* its initializers: about its file size */
        p.part[QR_MEM_P_LOADING] = 2 * f;           /* the file and its decoded protobuf */
        qr__hm_take(e, &p);
        loaded += f;
    }
}

static char *qr_mem_size_str(char *buf, size_t n, uint64_t bytes) {
    double v = (double)bytes;
    if (bytes < 1024) snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
    else if (v < 1048576.0) snprintf(buf, n, "%.0f KiB", v / 1024);
    else if (v < 10 * 1048576.0) snprintf(buf, n, "%.1f MiB", v / 1048576);
    else if (v < 1073741824.0) snprintf(buf, n, "%.0f MiB", v / 1048576);
    else if (v < 10 * 1073741824.0) snprintf(buf, n, "%.1f GiB", v / 1073741824);
    else snprintf(buf, n, "%.0f GiB", v / 1073741824);
    return buf;
}

static char *qr_mem_describe(const QrMemEstimate *e, char *buf, size_t n) {
    /* what the user controls first, the fixed costs last */
    static const QrMemPart order[] = {
        QR_MEM_P_MODELS, QR_MEM_P_INPUTS, QR_MEM_P_LOADING, QR_MEM_P_BASE_VALUES, QR_MEM_P_BASE_COPY,
        QR_MEM_P_ANALYSIS_VALUES, QR_MEM_P_EXEC, QR_MEM_P_SAMPLES, QR_MEM_P_LOWERING, QR_MEM_P_WEIGHTS, QR_MEM_P_DIST,
        QR_MEM_P_REPORT, QR_MEM_P_TABLES, QR_MEM_P_RUNTIME,
    };
    char s[32];
    size_t o = (size_t)snprintf(buf, n, "%s (", qr_mem_size_str(s, sizeof s, e->total));
    int listed = 0;
    for (int k = 0; k < QR_ARRAY_LEN(order) && o < n; k++) {
        if (!e->part[order[k]]) continue;
        o += (size_t)snprintf(buf + o, n - o, "%s%s %s", listed++ ? ", " : "", qr_mem_part_name(order[k]),
                              qr_mem_size_str(s, sizeof s, e->part[order[k]]));
    }
    if (o < n) o += (size_t)snprintf(buf + o, n - o, "; peak during %s", e->phase ? e->phase : "?");
    if (e->n_dynamic && o < n)
        o += (size_t)snprintf(buf + o, n - o, "; %d value%s of data-dependent size not counted", e->n_dynamic,
                              e->n_dynamic == 1 ? "" : "s");
    if (o < n) snprintf(buf + o, n - o, ")");
    return buf;
}

static QrStatus qr_mem_check(const QrMemEstimate *e, const char *what, int64_t limit) {
    if (limit <= 0 || e->total <= (uint64_t)limit) return QR_OK;
    char d[1024], l[32];
    return qr_errf(QR_ERR_NOMEM, "%s needs an estimated %s but --max-memory is %s", what,
                   qr_mem_describe(e, d, sizeof d), qr_mem_size_str(l, sizeof l, (uint64_t)limit));
}
