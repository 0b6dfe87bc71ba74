/* deploy/extract — implementation. See extract.h. */
#include <ftw.h>

static int qr__ex_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    QR_UNUSED(sb);
    QR_UNUSED(flag);
    QR_UNUSED(f);
    return remove(p);
}

static void qr_extract_rmtree(const char *dir) { nftw(dir, qr__ex_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

static int qr_extract_find(const QrSession *se, const char *name, QrArena *ar) {
    const QrMatchResult *m = &se->m;
    for (int i = 0; i < m->n; i++) if (!strcmp(se->b->nodes[m->m[i].b_node].name, name)) return i;
    for (int i = 0; i < m->n; i++) if (m->m[i].a_node >= 0 && !strcmp(se->a->nodes[m->m[i].a_node].name, name)) return i;
    const char **names = qr_arena_array(ar, 2 * (size_t)m->n + 1, sizeof *names);
    if (!names) { qr_errf(QR_ERR_NOMEM, "out of memory"); return -1; }
    for (int i = 0; i < m->n; i++) {
        names[2 * i] = se->b->nodes[m->m[i].b_node].name;
        names[2 * i + 1] = m->m[i].a_node >= 0 ? se->a->nodes[m->m[i].a_node].name : NULL;
    }
    qr_errf(QR_ERR_INVALID, "no compute node '%s' in %s or %s%s", name, se->b->path, se->a->path,
            qr_dump_suggest(ar, name, names, 2 * m->n));
    return -1;
}

#define QR__EX_MAX_CUT 64

typedef struct QrExCut {
    int b_value;             /* baseline value at the cut */
    int a_value;             /* analysis value its consumers see there */
    int match;               /* -1: a graph input (gi) */
    int gi;
    int quant;               /* integer analysis value: its quantizer in se->qa (a QuantizeLinear is added), else -1 */
    const char *a_name;      /* the analysis sub-model's input name */
} QrExCut;

typedef struct QrExCap { const bool *need; QrTensor *vals; int n; } QrExCap;

static QrStatus qr__ex_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g);
    QR_UNUSED(node);
    QrExCap *c = user;
    if (value >= c->n || !c->need[value] || c->vals[value].data || !t->data) return QR_OK;
    QR_TRY(qr_tensor_set_shape(&c->vals[value], t->dtype, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(&c->vals[value]));
    memcpy(c->vals[value].data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

/* Is value v of the baseline a matched value (the analysis has it) — a place the pair can be cut? */
static int qr__ex_match_of(const QrSession *se, int v) {
    for (int i = 0; i < se->m.n; i++)
        if (se->m.m[i].b_value == v && se->m.m[i].a_node >= 0 && se->m.m[i].a_value >= 0 && se->base[i].data) return i;
    return -1;
}

/* Adds node p and the producers of every constant it reads (weights through Q/DQ, Constant nodes). */
static void qr__ex_add_const_chain(const QrGraph *g, int p, bool *in) {
    if (p < 0 || in[p]) return;
    in[p] = true;
    const QrNode *n = &g->nodes[p];
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v >= 0 && g->values[v].is_const && !g->values[v].is_init) qr__ex_add_const_chain(g, g->values[v].producer, in);
    }
}

static QrStatus qr__ex_write_npy(const char *dir, const char *name, const QrTensor *t) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return qr_npy_write(p, t);
}

/* One extraction: the row, the two node sets and the cut between them. */
typedef struct QrExPlan {
    QrSession *se;
    const QrExtractOpts *o;
    int mi;                  /* the row's match */
    const QrMatch *tm;
    bool *in_b, *in_a;       /* per node of the baseline / analysis model: in the sub-model */
    QrExCut cut[QR__EX_MAX_CUT];
    int n_cut;
    QrArena *ar;
} QrExPlan;

/* The baseline side: the node and `radius` producers above it, cut at matched values (and graph
 * inputs) into p->cut. */
static QrStatus qr__ex_base_side(QrExPlan *p) {
    const QrSession *se = p->se;
    const QrGraph *b = se->b, *a = se->a;
    const QrMatch *tm = p->tm;
    bool *in_b = p->in_b;
    QrExCut *cut = p->cut;
    int *depth = malloc(((size_t)b->n_nodes + 1) * sizeof *depth), *queue = malloc(((size_t)b->n_nodes + 1) * sizeof *queue);
    QrStatus st = depth && queue ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    int qh = 0, qt = 0;
    if (st == QR_OK) {
        for (int k = 0; k < b->n_nodes; k++) depth[k] = -1;
        in_b[tm->b_node] = true;
        depth[tm->b_node] = 0;
        queue[qt++] = tm->b_node;
    }
    while (st == QR_OK && qh < qt) {
        int n = queue[qh++];
        const QrNode *nd = &b->nodes[n];
        for (int k = 0; st == QR_OK && k < nd->n_in; k++) {
            int v = nd->in[k];
            if (v < 0 || b->values[v].is_init) continue;
            const QrValue *val = &b->values[v];
            if (val->is_const && !val->is_input) { qr__ex_add_const_chain(b, val->producer, in_b); continue; }
            int pr = val->producer;
            if (pr >= 0 && in_b[pr]) continue;
            bool dup = false;
            for (int c2 = 0; c2 < p->n_cut; c2++) dup |= cut[c2].b_value == v;
            if (dup) continue;
            int mj = val->is_input ? -1 : qr__ex_match_of(se, v);
            if (val->is_input || (depth[n] >= p->o->radius && mj >= 0)) {
                if (p->n_cut == QR__EX_MAX_CUT) { st = qr_errf(QR_ERR_UNSUPPORTED, "more than %d cut inputs", QR__EX_MAX_CUT); break; }
                QrExCut *ct = &cut[p->n_cut++];
                ct->b_value = v;
                ct->match = mj;
                ct->gi = -1;
                ct->quant = -1;
                if (val->is_input) {
                    for (int gi = 0; gi < b->n_inputs; gi++) if (b->inputs[gi] == v) ct->gi = gi;
                    ct->a_value = ct->gi >= 0 && ct->gi < a->n_inputs ? a->inputs[ct->gi] : -1;
                } else ct->a_value = se->m.m[mj].a_value;
                if (ct->a_value < 0) { st = qr_errf(QR_ERR_INVALID, "graph input '%s' has no analysis counterpart", val->name); break; }
                continue;
            }
            if (pr < 0) { st = qr_errf(QR_ERR_INVALID, "value '%s' has no producer", val->name); break; }
            in_b[pr] = true;
            depth[pr] = depth[n] + 1;
            queue[qt++] = pr;
        }
    }
    free(depth);
    free(queue);
    return st;
}

/* The analysis side: the cut's analysis values (an integer one gets its QuantizeLinear), then
 * everything the node's visible output needs above them into p->in_a. */
static QrStatus qr__ex_analysis_side(QrExPlan *p) {
    const QrSession *se = p->se;
    const QrGraph *a = se->a;
    QrExCut *cut = p->cut;
    bool *in_a = p->in_a;
    int *cut_of_a = malloc(((size_t)a->n_values + 1) * sizeof *cut_of_a), *stack = malloc(((size_t)a->n_nodes + 1) * sizeof *stack);
    QrStatus st = cut_of_a && stack ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; st == QR_OK && v < a->n_values; v++) cut_of_a[v] = -1;
    for (int k = 0; st == QR_OK && k < p->n_cut; k++) {
        int v = cut[k].a_value;
        if (cut_of_a[v] >= 0) { st = qr_errf(QR_ERR_UNSUPPORTED, "two baseline cut values map to analysis value '%s'", a->values[v].name); break; }
        cut_of_a[v] = k;
        cut[k].a_name = a->values[v].name;
        if (!qr_dtype_is_float(a->values[v].t.dtype)) {      /* integer (QOperator): quantize at the cut */
            int q = qr_dump_inherited(a, &se->qa, v);   /* its own, or the one an integer MaxPool passes on */
            const QrQuantizer *qq = q >= 0 ? &se->qa.q[q] : NULL;
            if (!qq || qq->scale_value < 0 || !a->values[qq->scale_value].t.data || a->values[qq->scale_value].t.numel != 1) {
                st = qr_errf(QR_ERR_UNSUPPORTED, "cut value '%s' holds integers without a per-tensor quantizer; try another "
                             "--radius", a->values[v].name);
                break;
            }
            cut[k].quant = q;
            cut[k].a_name = qr_arena_printf(p->ar, "%s_float", a->values[v].name);
        }
    }
    int sp = 0;
    if (st == QR_OK) {
        int pr = a->values[p->tm->a_value].producer;
        if (cut_of_a[p->tm->a_value] >= 0 || pr < 0) st = qr_errf(QR_ERR_INVALID, "node '%s': nothing to extract", p->o->node);
        else { in_a[pr] = true; stack[sp++] = pr; }
    }
    while (st == QR_OK && sp) {
        const QrNode *nd = &a->nodes[stack[--sp]];
        for (int k = 0; st == QR_OK && k < nd->n_in; k++) {
            int v = nd->in[k];
            if (v < 0 || a->values[v].is_init || cut_of_a[v] >= 0) continue;
            const QrValue *val = &a->values[v];
            if (val->is_const && !val->is_input) { qr__ex_add_const_chain(a, val->producer, in_a); continue; }
            if (val->is_input || val->producer < 0) {
                st = qr_errf(QR_ERR_INVALID, "the analysis node '%s' reads '%s', which the baseline's cut does not provide; "
                             "try another --radius", nd->name, val->name);
                break;
            }
            if (!in_a[val->producer]) { in_a[val->producer] = true; stack[sp++] = val->producer; }
        }
    }
    free(cut_of_a);
    free(stack);
    return st;
}

/* base_sub.onnx and analysis_sub.onnx: the cut values as graph inputs (an integer one through its
 * QuantizeLinear), the node sets in topological order, the row's values as outputs. */
static QrStatus qr__ex_write_models(const QrExPlan *p, const char *dir, QrExtractInfo *info) {
    const QrSession *se = p->se;
    const QrGraph *b = se->b, *a = se->a;
    const QrExCut *cut = p->cut;
    QrOnnxOut xb, xa;
    bool have_x = false;
    QrStatus st = qr_onnxw_init(&xb, b, "base_sub");
    if (st == QR_OK) st = qr_onnxw_init(&xa, a, "analysis_sub");
    have_x = st == QR_OK;
    for (int k = 0; st == QR_OK && k < p->n_cut; k++) {
        const QrValue *bv = &b->values[cut[k].b_value], *av = &a->values[cut[k].a_value];
        st = qr_onnxw_input(&xb, bv->name, bv->t.dtype, bv->t.rank, bv->t.dims);
        if (st == QR_OK) st = qr_onnxw_input(&xa, cut[k].a_name, qr_dtype_is_float(av->t.dtype) ? av->t.dtype : QR_DT_F32,
                                          av->t.rank, av->t.dims);
        if (st == QR_OK && cut[k].quant >= 0) {
            const QrQuantizer *q = &se->qa.q[cut[k].quant];
            const char *ins[3] = { cut[k].a_name, a->values[q->scale_value].name, q->zp_value >= 0 ? a->values[q->zp_value].name : "" };
            const char *outs[1] = { av->name };
            st = qr_onnxw_node(&xa, qr_arena_printf(p->ar, "%s_QuantizeLinear", av->name), "QuantizeLinear", "",
                            q->zp_value >= 0 ? 3 : 2, ins, 1, outs, 0, NULL);
        }
    }
    for (int k = 0; st == QR_OK && k < b->n_nodes; k++) {
        int n = b->order[k];
        if (p->in_b[n]) { st = qr_onnxw_node_from(&xb, n, NULL); info->n_base_nodes++; }
    }
    for (int k = 0; st == QR_OK && k < a->n_nodes; k++) {
        int n = a->order[k];
        if (p->in_a[n]) { st = qr_onnxw_node_from(&xa, n, NULL); info->n_analysis_nodes++; }
    }
    const QrValue *bo = &b->values[p->tm->b_value], *ao = &a->values[p->tm->a_value];
    if (st == QR_OK) st = qr_onnxw_output(&xb, bo->name, bo->t.dtype, bo->t.rank, bo->t.dims);
    if (st == QR_OK) st = qr_onnxw_output(&xa, ao->name, ao->t.dtype, ao->t.rank, ao->t.dims);
    if (st == QR_OK) st = qr_onnxw_used_inits(&xb);
    if (st == QR_OK) st = qr_onnxw_used_inits(&xa);
    char path[4096];
    if (st == QR_OK) { snprintf(path, sizeof path, "%s/" QR_BF_REPRO_BASE, dir); st = qr_onnxw_write(&xb, path); }
    if (st == QR_OK) { snprintf(path, sizeof path, "%s/" QR_BF_REPRO_ANAL, dir); st = qr_onnxw_write(&xa, path); }
    if (have_x) { qr_onnxw_free(&xb); qr_onnxw_free(&xa); }
    return st;
}

/* The cut inputs of both models (the analysis model's dequantized at an integer cut) and the
 * outputs each computed in the full run (vals: the analysis run's values). */
static QrStatus qr__ex_write_values(const QrExPlan *p, const QrTensor *vals, const char *dir) {
    const QrSession *se = p->se;
    const QrGraph *a = se->a;
    const QrExCut *cut = p->cut;
    QrStatus st = QR_OK;
    for (int k = 0; st == QR_OK && k < p->n_cut; k++) {
        const QrTensor *bt = cut[k].match >= 0 ? &se->base[cut[k].match] : &se->inputs[cut[k].gi];
        st = qr__ex_write_npy(dir, qr_arena_printf(p->ar, QR_BF_REPRO_BASE_IN "%d.npy", k), bt);
        const QrTensor *at = &vals[cut[k].a_value];
        if (st == QR_OK && !at->data) st = qr_errf(QR_ERR_INVALID, "value '%s' was not computed", a->values[cut[k].a_value].name);
        if (st == QR_OK && cut[k].quant >= 0) {
            QrTensor f = { 0 };
            st = qr_match_dequantize_value(a, &se->qa.q[cut[k].quant], at, &f);
            if (st == QR_OK) st = qr__ex_write_npy(dir, qr_arena_printf(p->ar, QR_BF_REPRO_ANAL_IN "%d.npy", k), &f);
            qr_tensor_free_data(&f);
        } else if (st == QR_OK) st = qr__ex_write_npy(dir, qr_arena_printf(p->ar, QR_BF_REPRO_ANAL_IN "%d.npy", k), at);
    }
    if (st == QR_OK) st = qr__ex_write_npy(dir, QR_BF_REPRO_BASE_EXP, &se->base[p->mi]);
    if (st == QR_OK && !vals[p->tm->a_value].data) st = qr_errf(QR_ERR_INVALID, "value '%s' was not computed", a->values[p->tm->a_value].name);
    if (st == QR_OK) st = qr__ex_write_npy(dir, QR_BF_REPRO_ANAL_EXP, &vals[p->tm->a_value]);
    return st;
}

/* repro.json: the node, the files, the full run's metrics and the command (cmd). */
static QrStatus qr__ex_write_json(const QrExPlan *p, const QrExtractInfo *info, const char *cmd, const char *dir) {
    const QrGraph *b = p->se->b;
    const QrExCut *cut = p->cut;
    int n_cut = p->n_cut;
    QrArena *ar = p->ar;
    char path[4096];
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "node", info->b_node);
    qr_json_kv_str(&j, "analysis_node", info->a_node);
    qr_json_kv_int(&j, "radius", p->o->radius);
    qr_json_kv_str(&j, "base_model", QR_BF_REPRO_BASE);
    qr_json_kv_str(&j, "analysis_model", QR_BF_REPRO_ANAL);
    qr_json_key(&j, "base_inputs");
    qr_json_obj_begin(&j);
    for (int k = 0; k < n_cut; k++)
        qr_json_kv_str(&j, b->values[cut[k].b_value].name, qr_arena_printf(ar, QR_BF_REPRO_BASE_IN "%d.npy", k));
    qr_json_obj_end(&j);
    qr_json_key(&j, "analysis_inputs");
    qr_json_obj_begin(&j);
    for (int k = 0; k < n_cut; k++) qr_json_kv_str(&j, cut[k].a_name, qr_arena_printf(ar, QR_BF_REPRO_ANAL_IN "%d.npy", k));
    qr_json_obj_end(&j);
    qr_json_key(&j, "expected_outputs");
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "base", QR_BF_REPRO_BASE_EXP);
    qr_json_kv_str(&j, "analysis", QR_BF_REPRO_ANAL_EXP);
    qr_json_obj_end(&j);
    qr_json_key(&j, "metrics");
    qr_json_obj_begin(&j);
    if (info->has_local) {
        qr_json_kv_num(&j, "local_Cosine", info->local.cosine);
        qr_json_kv_num(&j, "local_SQNR", info->local.sqnr);
        qr_json_kv_num(&j, "local_L1", info->local.l1);
        qr_json_kv_num(&j, "local_MSE", info->local.mse);
    }
    if (info->has_m) {
        qr_json_kv_num(&j, "Cosine", info->m.cosine);
        qr_json_kv_num(&j, "SQNR", info->m.sqnr);
    }
    qr_json_obj_end(&j);
    qr_json_kv_str(&j, "command", cmd);
    qr_json_obj_end(&j);
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_json_finish(&j, &txt, &len);
    if (st == QR_OK) { snprintf(path, sizeof path, "%s/" QR_BF_REPRO_JSON, dir); st = qr_file_write_atomic(path, txt, len); }
    free(txt);
    qr_json_free(&j);
    return st;
}

/* README.txt: what each file is, the metrics, and the commands that reproduce them (cmd). */
static QrStatus qr__ex_write_readme(const QrExPlan *p, const QrExtractInfo *info, const char *cmd, const char *dir) {
    const QrGraph *a = p->se->a;
    const QrExtractOpts *o = p->o;
    int n_cut = p->n_cut;
    char path[4096];
    char *t = NULL;
    size_t tl = 0, tc = 0;
    QrStatus st = qr_buf_printf(&t, &tl, &tc,
                       "qreport repro: node '%s' (analysis model: '%s'), %d upstream level%s\n\n"
                       QR_BF_REPRO_BASE "      the float baseline's node%s (%d nodes, weights included)\n"
                       QR_BF_REPRO_ANAL "  the quantized model's node with its Q/DQ or QOperator form (%d nodes)\n"
                       QR_BF_REPRO_BASE_IN "<k>.npy    the baseline's values at the cut (graph inputs, in order)\n"
                       QR_BF_REPRO_ANAL_IN "<k>.npy  the quantized model's values there, as its consumers saw them\n"
                       QR_BF_REPRO_BASE_EXP " / " QR_BF_REPRO_ANAL_EXP "  the outputs each model computed in the full run\n\n"
                       "Local metrics of this node in the full run (the layer computed from the baseline's inputs):\n"
                       "  Cosine %.9g  SQNR %.6g dB  L1 %.9g  MSE %.9g\n"
                       "Metrics of the node in the full run (with the error of everything before it): Cosine %.9g  SQNR %.6g dB\n\n"
                       "Reproduce (the row of '%s' shows the local metrics above as local_Cosine / local_SQNR):\n  %s\n"
                       "Run the quantized layer on what it saw (output = " QR_BF_REPRO_ANAL_EXP "):\n  qreport run " QR_BF_REPRO_ANAL,
                       info->b_node, info->a_node, o->radius, o->radius == 1 ? "" : "s", o->radius ? " and its producers" : "",
                       info->n_base_nodes, info->n_analysis_nodes, info->local.cosine, info->local.sqnr, info->local.l1,
                       info->local.mse, info->m.cosine, info->m.sqnr, info->b_node, cmd);
    for (int k = 0; st == QR_OK && k < n_cut; k++) st = qr_buf_printf(&t, &tl, &tc, " -i " QR_BF_REPRO_ANAL_IN "%d.npy", k);
    if (st == QR_OK)
        st = qr_buf_printf(&t, &tl, &tc, "\nAny ONNX runtime (e.g. ONNX Runtime) runs both models on these inputs; the models\n"
                           "are plain ONNX (opset %lld%s).\n", (long long)a->opset, a->opset_ms ? ", com.microsoft" : "");
    if (st == QR_OK) { snprintf(path, sizeof path, "%s/" QR_BF_REPRO_README, dir); st = qr_file_write_atomic(path, t, tl); }
    free(t);
    return st;
}

static QrStatus qr_extract_write(QrSession *se, const QrCompare *c, const QrExtractOpts *o, const char *dir,
                                 QrExtractInfo *info) {
    const QrGraph *b = se->b, *a = se->a;
    memset(info, 0, sizeof *info);
    QrArena ar = { 0 };
    int mi = qr_extract_find(se, o->node, &ar);
    if (mi < 0) { qr_arena_free(&ar); return QR_ERR_INVALID; }
    const QrMatch *tm = &se->m.m[mi];
    if (tm->a_node < 0 || tm->a_value < 0) {
        qr_arena_free(&ar);
        return qr_errf(QR_ERR_INVALID, "node '%s' has no counterpart in %s%s%s; extract one of the nodes it matches", o->node,
                       a->path, tm->note ? ": " : "", tm->note ? tm->note : "");
    }
    if (!se->base) QR_TRY(qr_session_run_baseline(se));
    info->match = mi;
    info->b_node = b->nodes[tm->b_node].name;
    info->a_node = a->nodes[tm->a_node].name;
    for (int k = 0; c && k < c->n; k++)
        if (c->rows[k].match == mi) {
            info->local = c->rows[k].local;
            info->has_local = c->rows[k].has_local;
            info->m = c->rows[k].m;
            info->has_m = c->rows[k].has_m;
        }
    QrExPlan p = { .se = se, .o = o, .mi = mi, .tm = tm, .ar = &ar };
    p.in_b = calloc((size_t)b->n_nodes + 1, sizeof *p.in_b);
    p.in_a = calloc((size_t)a->n_nodes + 1, sizeof *p.in_a);
    QrStatus st = p.in_b && p.in_a ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr__ex_base_side(&p);
    if (st == QR_OK) st = qr__ex_analysis_side(&p);
    /* ---- the values to write: cut inputs (both models) and expected outputs ---- */
    bool *need = st == QR_OK ? calloc((size_t)a->n_values + 1, sizeof *need) : NULL;
    QrTensor *vals = st == QR_OK ? calloc((size_t)a->n_values + 1, sizeof *vals) : NULL;
    if (st == QR_OK && (!need || !vals)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int k = 0; k < p.n_cut; k++) need[p.cut[k].a_value] = true;
        need[tm->a_value] = true;
        QrExCap cap = { need, vals, a->n_values };
        QrRunOpts ro = { .tap = qr__ex_tap, .tap_user = &cap, .tap_only = need };
        st = qr_run(a, se->inputs, &ro, NULL);
    }
    if (st == QR_OK) st = qr__ex_write_models(&p, dir, info);
    if (st == QR_OK) st = qr__ex_write_values(&p, vals, dir);
    info->n_cut = p.n_cut;
    /* repro.json and README.txt */
    char cmd[8192];
    size_t cl = (size_t)snprintf(cmd, sizeof cmd, "qreport compare " QR_BF_REPRO_BASE " " QR_BF_REPRO_ANAL);
    for (int k = 0; k < p.n_cut && cl < sizeof cmd; k++)
        cl += (size_t)snprintf(cmd + cl, sizeof cmd - cl, " -i " QR_BF_REPRO_BASE_IN "%d.npy", k);
    if (cl < sizeof cmd) snprintf(cmd + cl, sizeof cmd - cl, " -o compare_out");
    if (st == QR_OK) st = qr__ex_write_json(&p, info, cmd, dir);
    if (st == QR_OK) st = qr__ex_write_readme(&p, info, cmd, dir);
    if (vals) for (int v = 0; v < a->n_values; v++) qr_tensor_free_data(&vals[v]);
    free(vals);
    free(need);
    free(p.in_b);
    free(p.in_a);
    qr_arena_free(&ar);
    return st;
}

static QrStatus qr_extract_to(QrSession *se, const QrCompare *c, const QrExtractOpts *o, const char *dir,
                              QrExtractInfo *info) {
    struct stat sb;
    bool existed = stat(dir, &sb) == 0;
    QR_TRY(qr_dump_outdir(dir));                 /* missing -> created, or empty */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial-XXXXXX", dir);
    if (!mkdtemp(tmp)) return qr_errf(QR_ERR_IO, "cannot create a folder next to %s: %s", dir, strerror(errno));
    QrStatus st = qr_extract_write(se, c, o, tmp, info);
    if (st == QR_OK && (rmdir(dir) != 0 || rename(tmp, dir) != 0))
        st = qr_errf(QR_ERR_IO, "cannot move the repro into %s: %s", dir, strerror(errno));
    if (st != QR_OK) {
        char msg[4096];
        snprintf(msg, sizeof msg, "%s", qr_err_msg());
        qr_extract_rmtree(tmp);
        if (!existed) rmdir(dir);                   /* the folder created above */
        else mkdir(dir, 0777);                      /* the empty folder given, as it was */
        qr_errf(st, "%s", msg);
    }
    return st;
}
