/* tests/llm_ops — the LLM operators of ops/contrib_llm.c on the fixtures of
 * fixtures/make_llm_ops.py (fixtures/llm_ops/): one tiny model per case, every input a graph input,
 * run with qreport and compared output by output with ONNX Runtime 1.30 (graph optimization
 * 'disabled'). Every case is also compared with a reference computed here, in double precision,
 * from the operator's definition (and ORT's output with it, so the reference cannot drift into
 * agreeing with qreport alone); cases ORT refuses (index.tsv status "ref") are checked against that
 * reference only. "e2e" cases are small graphs around one operator (GroupQueryAttention fed by the
 * attention-mask subgraph of onnxruntime-genai's builder), compared with ORT output by output.
 * Bad inputs must fail with a message naming the node.
 *
 * Tolerances, relative to the output's largest magnitude:
 *   vs ORT on x86-64 (the goldens were made on an AVX2 + FMA machine, whose MLAS kernels qreport
 *   follows): 0, i.e. bit-identical, for SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization,
 *   SkipLayerNormalization, RotaryEmbedding, GroupQueryAttention and MultiHeadAttention (every case);
 *   elsewhere (aarch64: other MLAS kernels), and for the "l2:<bytes>" cases (more keys than one of
 *   MLAS's attention key blocks, whose size ORT takes from the L2 cache size) on a machine whose L2
 *   differs from the goldens' machine, QT_LLM_TOL_ORT;
 *   vs the definition: QT_LLM_TOL_REF (float32 arithmetic against double). */

#define QT_LLM_DIR "fixtures/llm_ops"
/* Another summation order than ORT's (aarch64's kernels; another L2, so other key blocks): float32
 * sums of up to 1030 softmax-weighted values in another order. Measured 2.02e-6 on mha_long under
 * qemu-aarch64 -cpu max; half of QT_LLM_TOL_REF, the bound of either against the exact value. */
#define QT_LLM_TOL_ORT 1e-5
#define QT_LLM_TOL_REF 2e-5
#define QT_LLM_MAX_IO 12

typedef struct QtLlmCase {
    QrGraph *g;
    const QrNode *node;
    int n_in, n_out;
    QrTensor in[QT_LLM_MAX_IO], out[QT_LLM_MAX_IO];
    const QrTensor *nin[QT_LLM_MAX_IO];   /* the node's inputs (NULL: omitted) */
} QtLlmCase;

static void qt_llm_free(QtLlmCase *k) {
    for (int i = 0; i < QT_LLM_MAX_IO; i++) {
        qr_tensor_free_data(&k->in[i]);
        qr_tensor_free_data(&k->out[i]);
    }
    if (k->g) { qr_graph_free(k->g); free(k->g); }
    memset(k, 0, sizeof *k);
}

/* Loads <name>.onnx and its inputs; runs it when run is true. */
static QrStatus qt_llm_load(const char *name, bool run, QtLlmCase *k) {
    memset(k, 0, sizeof *k);
    char path[512];
    snprintf(path, sizeof path, QT_LLM_DIR "/%s.onnx", name);
    QR_TRY(qr_run_load(path, &k->g));
    k->n_in = k->g->n_inputs;
    k->n_out = k->g->n_outputs;
    if (k->n_in > QT_LLM_MAX_IO || k->n_out > QT_LLM_MAX_IO || k->g->n_nodes < 1)
        return qr_errf(QR_ERR_INVALID, "%s: unexpected fixture layout", name);
    for (int i = 0; i < k->n_in; i++) {
        snprintf(path, sizeof path, QT_LLM_DIR "/%s.in%d.npy", name, i);
        QR_TRY(qr_npy_read(path, &k->in[i]));
    }
    k->node = &k->g->nodes[k->g->n_nodes - 1];   /* the operator under test (after an e2e case's subgraph) */
    for (int i = 0; i < k->node->n_in && i < QT_LLM_MAX_IO; i++)
        for (int j = 0; j < k->n_in; j++)
            if (k->node->in[i] >= 0 && k->node->in[i] == k->g->inputs[j]) k->nin[i] = &k->in[j];
    if (!run) return QR_OK;
    QR_TRY(qr_run_infer(k->g, k->in));
    return qr_run(k->g, k->in, NULL, k->out);
}

/* The node output graph output j is (its index among the node's outputs). */
static int qt_llm_out_index(const QtLlmCase *k, int j) {
    for (int o = 0; o < k->node->n_out; o++)
        if (k->node->out[o] == k->g->outputs[j]) return o;
    return -1;
}

static const float *qt_llm_f(const QrTensor *t) { return t ? (const float *)t->data : NULL; }

/* ---- references from the operator definitions (double) ------------------------------------ */

/* Skip[Simplified]LayerNormalization / SimplifiedLayerNormalization: out 0 y, 1 mean, 2 inv_std_var,
 * 3 the sum (index: node output). */
static bool qt_llm_ref_norm(const QtLlmCase *k, int oi, double *ref, int64_t n) {
    const char *op = k->node->op_type;
    bool plain = !strcmp(op, "SimplifiedLayerNormalization"), simp = plain || strstr(op, "Simplified") != NULL;
    const QrTensor *x = k->nin[0];
    const QrTensor *sk = plain ? NULL : k->nin[1], *gm = plain ? k->nin[1] : k->nin[2];
    const QrTensor *beta = !simp ? k->nin[3] : NULL, *bias = simp ? (plain ? NULL : k->nin[3]) : k->nin[4];
    int64_t H;
    if (plain) {
        int axis = (int)qr_attr_int(k->node, "axis", -1);
        if (axis < 0) axis += x->rank;
        H = 1;
        for (int i = axis; i < x->rank; i++) H *= x->dims[i];
        if (oi == 1) oi = 2;   /* SimplifiedLayerNormalization's output 1 is inv_std_var */
    } else {
        H = x->dims[x->rank - 1];
    }
    double eps = qr_attr_float(k->node, "epsilon", plain ? 1e-5f : 1e-12f);
    int64_t rows = x->numel / H, expect = oi == 0 || oi == 3 ? x->numel : rows;
    if (n != expect) return false;
    double *v = malloc((size_t)H * sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        double mean = 0, sq = 0;
        for (int64_t h = 0; h < H; h++) {
            double t = qt_llm_f(x)[r * H + h];
            if (sk) t += qt_llm_f(sk)[(r * H + h) % sk->numel];
            if (bias) t += qt_llm_f(bias)[h];
            v[h] = t;
            mean += t;
            sq += t * t;
        }
        mean /= (double)H;
        double var = simp ? sq / (double)H : sq / (double)H - mean * mean, rms = sqrt(var + eps);
        if (oi == 1) ref[r] = mean;
        else if (oi == 2) ref[r] = 1.0 / rms;
        else
            for (int64_t h = 0; h < H; h++)
                ref[r * H + h] = oi == 3 ? v[h]
                                         : (simp ? v[h] : v[h] - mean) / rms * qt_llm_f(gm)[h] +
                                               (beta ? qt_llm_f(beta)[h] : 0.0);
    }
    free(v);
    return true;
}

/* Rotary embedding of one row of `rot` values at cache row c, s (double). */
static void qt_llm_ref_rope_row(const float *x, const float *c, const float *s, int64_t rot, bool il, double *y) {
    int64_t half = rot / 2;
    for (int64_t i = 0; i < half; i++) {
        int64_t a = il ? 2 * i : i, b = il ? 2 * i + 1 : i + half;
        y[a] = (double)x[a] * c[i] - (double)x[b] * s[i];
        y[b] = (double)x[a] * s[i] + (double)x[b] * c[i];
    }
}

static bool qt_llm_ref_rope(const QtLlmCase *k, double *ref, int64_t n) {
    const QrTensor *x = k->nin[0], *pos = k->nin[1], *cs = k->nin[2], *sn = k->nin[3];
    if (n != x->numel) return false;
    bool il = qr_attr_int(k->node, "interleaved", 0) != 0;
    int64_t nh = qr_attr_int(k->node, "num_heads", 0), rd = qr_attr_int(k->node, "rotary_embedding_dim", 0);
    int64_t B = x->dims[0], S, N, H;
    bool bnsh = x->rank == 4;
    if (bnsh) { N = x->dims[1]; S = x->dims[2]; H = x->dims[3]; }
    else { S = x->dims[1]; H = nh > 0 ? x->dims[2] / nh : 2 * cs->dims[1]; N = x->dims[2] / H; }
    int64_t rot = rd > 0 ? rd : 2 * cs->dims[1], half = cs->dims[1];
    double *y = malloc((size_t)H * sizeof(double));
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            const int64_t *pp = pos->data;
            int64_t p = pos->numel == 1 ? pp[0] + s : pp[b * S + s];
            for (int64_t h = 0; h < N; h++) {
                int64_t off = bnsh ? ((b * N + h) * S + s) * H : ((b * S + s) * N + h) * H;
                const float *xr = qt_llm_f(x) + off;
                qt_llm_ref_rope_row(xr, qt_llm_f(cs) + p * half, qt_llm_f(sn) + p * half, rot, il, y);
                for (int64_t i = 0; i < H; i++) ref[off + i] = i < rot ? y[i] : xr[i];
            }
        }
    free(y);
    return true;
}

/* GroupQueryAttention from its definition (ORT's conventions): total_b = seqlens_k[b] + 1; a prompt
 * (S == total_sequence_length) has no past, else past_b = total_b - S; present = past rows then the
 * new (rotated at positions past_b + s) rows, zeros after; query row s attends keys
 * [max(0, end - local_window_size), end), end = min(past_b + s + 1, total_b), with
 * softmax(scale * q.k [softcapped]) over them. Output j: 0 output, 1 present_key, 2 present_value. */
static bool qt_llm_ref_gqa(const QtLlmCase *k, int oi, double *ref, int64_t n) {
    const QrNode *nd = k->node;
    int64_t N = qr_attr_int(nd, "num_heads", 0), Nkv = qr_attr_int(nd, "kv_num_heads", 0);
    bool rotary = qr_attr_int(nd, "do_rotary", 0) != 0, il = qr_attr_int(nd, "rotary_interleaved", 0) != 0;
    double softcap = qr_attr_float(nd, "softcap", 0.0f);
    int64_t window = qr_attr_int(nd, "local_window_size", -1);
    const QrTensor *q = k->nin[0], *kk = k->nin[1], *vv = k->nin[2], *pk = k->nin[3], *pv = k->nin[4];
    const QrTensor *sl = k->nin[5], *ts = k->nin[6], *cs = k->nin[7], *sn = k->nin[8];
    bool packed = kk == NULL;
    int64_t B = q->dims[0], S = q->dims[1], H = q->dims[2] / (packed ? N + 2 * Nkv : N);
    int64_t P = pk ? pk->dims[2] : 0, total = ((const int32_t *)ts->data)[0], T = total > P ? total : P;
    double scale = qr_attr_float(nd, "scale", 0.0f);
    if (scale == 0) scale = 1.0 / sqrt((double)H);
    int64_t want = oi == 0 ? B * S * N * H : B * Nkv * T * H;
    if (n != want) return false;
    bool prompt = S == total;
    double *K = calloc((size_t)(B * Nkv * T * H), sizeof(double)), *V = calloc((size_t)(B * Nkv * T * H), sizeof(double));
    double *qr = malloc((size_t)H * sizeof(double)), *w = malloc((size_t)T * sizeof(double));
#define QT_ROW(kind, b, s, h) (packed ? qt_llm_f(q) + (((b) * S + (s)) * (N + 2 * Nkv) + (kind == 0 ? 0 : kind == 1 ? N : N + Nkv) + (h)) * H \
                                      : qt_llm_f(kind == 0 ? q : kind == 1 ? kk : vv) + (((b) * S + (s)) * (kind == 0 ? N : Nkv) + (h)) * H)
    for (int64_t b = 0; b < B; b++) {
        int64_t tot = (int64_t)((const int32_t *)sl->data)[b] + 1, past = prompt ? 0 : tot - S;
        for (int64_t h = 0; h < Nkv; h++) {
            double *Kh = K + (b * Nkv + h) * T * H, *Vh = V + (b * Nkv + h) * T * H;
            for (int64_t t = 0; t < past; t++)
                for (int64_t i = 0; i < H; i++) {
                    Kh[t * H + i] = qt_llm_f(pk)[((b * Nkv + h) * P + t) * H + i];
                    Vh[t * H + i] = qt_llm_f(pv)[((b * Nkv + h) * P + t) * H + i];
                }
            for (int64_t s = 0; s < S; s++) {
                const float *kr = QT_ROW(1, b, s, h), *vr = QT_ROW(2, b, s, h);
                int64_t rot = rotary ? 2 * cs->dims[1] : 0, half = rotary ? cs->dims[1] : 0;
                if (rotary) qt_llm_ref_rope_row(kr, qt_llm_f(cs) + (past + s) * half, qt_llm_f(sn) + (past + s) * half, rot, il,
                                                Kh + (past + s) * H);
                for (int64_t i = rot; i < H; i++) Kh[(past + s) * H + i] = kr[i];
                for (int64_t i = 0; i < H; i++) Vh[(past + s) * H + i] = vr[i];
            }
        }
        if (oi != 0) continue;
        for (int64_t h = 0; h < N; h++)
            for (int64_t s = 0; s < S; s++) {
                const float *qf = QT_ROW(0, b, s, h);
                int64_t rot = rotary ? 2 * cs->dims[1] : 0, half = rotary ? cs->dims[1] : 0;
                if (rotary) qt_llm_ref_rope_row(qf, qt_llm_f(cs) + (past + s) * half, qt_llm_f(sn) + (past + s) * half, rot, il, qr);
                for (int64_t i = rot; i < H; i++) qr[i] = qf[i];
                const double *Kh = K + (b * Nkv + h / (N / Nkv)) * T * H, *Vh = V + (b * Nkv + h / (N / Nkv)) * T * H;
                int64_t end = past + s + 1 < tot ? past + s + 1 : tot, lo = window >= 0 && end > window ? end - window : 0;
                double mx = -INFINITY, sum = 0;
                for (int64_t t = lo; t < end; t++) {
                    double d = 0;
                    for (int64_t i = 0; i < H; i++) d += qr[i] * Kh[t * H + i];
                    d *= scale;
                    if (softcap > 0) d = softcap * tanh(d / softcap);
                    w[t] = d;
                    mx = fmax(mx, d);
                }
                for (int64_t t = lo; t < end; t++) { w[t] = exp(w[t] - mx); sum += w[t]; }
                double *o = ref + ((b * S + s) * N + h) * H;
                for (int64_t i = 0; i < H; i++) {
                    double a = 0;
                    for (int64_t t = lo; t < end; t++) a += w[t] / sum * Vh[t * H + i];
                    o[i] = a;
                }
            }
    }
#undef QT_ROW
    if (oi != 0) memcpy(ref, oi == 1 ? K : V, (size_t)n * sizeof(double));
    free(K);
    free(V);
    free(qr);
    free(w);
    return true;
}

/* MultiHeadAttention from its definition: q, k, v (+ bias) per head, k / v after the past rows;
 * score = scale * q.k + attention_bias, plus mask_filter_value where key_padding_mask excludes the
 * key (key lengths, or 0 in a (B, T) / (B, S, T) mask) or, unidirectional with S > 1, where the key
 * comes after the query's position (past + s); softmax over the T keys; output 0 the weighted sum of
 * v, 1 / 2 the present key / value. */
static bool qt_llm_ref_mha(const QtLlmCase *k, int oi, double *ref, int64_t n) {
    const QrNode *nd = k->node;
    int64_t N = qr_attr_int(nd, "num_heads", 0);
    const QrTensor *q = k->nin[0], *kk = k->nin[1], *vv = k->nin[2], *bias = k->nin[3], *mask = k->nin[4];
    const QrTensor *ab = k->nin[5], *pk = k->nin[6], *pv = k->nin[7];
    int64_t B = q->dims[0], S = q->dims[1], L = kk->dims[1], H = q->dims[2] / N, Hv = vv->dims[2] / N;
    int64_t P = pk ? pk->dims[2] : 0, T = P + L;
    double scale = qr_attr_float(nd, "scale", 0.0f), mfv = qr_attr_float(nd, "mask_filter_value", -10000.0f);
    if (scale == 0) scale = 1.0 / sqrt((double)H);
    bool causal = qr_attr_int(nd, "unidirectional", 0) != 0 && S > 1;
    if (n != (oi == 0 ? B * S * N * Hv : oi == 1 ? B * N * T * H : B * N * T * Hv)) return false;
    const float *bz = qt_llm_f(bias);
    double *Kh = malloc((size_t)(T * H) * sizeof(double)), *Vh = malloc((size_t)(T * Hv) * sizeof(double));
    double *w = malloc((size_t)T * sizeof(double));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < N; h++) {
            for (int64_t t = 0; t < T; t++) {
                for (int64_t i = 0; i < H; i++)
                    Kh[t * H + i] = t < P ? qt_llm_f(pk)[((b * N + h) * P + t) * H + i]
                                          : (double)qt_llm_f(kk)[((b * L + t - P) * N + h) * H + i] + (bz ? bz[N * H + h * H + i] : 0);
                for (int64_t i = 0; i < Hv; i++)
                    Vh[t * Hv + i] = t < P ? qt_llm_f(pv)[((b * N + h) * P + t) * Hv + i]
                                           : (double)qt_llm_f(vv)[((b * L + t - P) * N + h) * Hv + i] +
                                                 (bz ? bz[2 * N * H + h * Hv + i] : 0);
            }
            if (oi == 1) { memcpy(ref + (b * N + h) * T * H, Kh, (size_t)(T * H) * sizeof(double)); continue; }
            if (oi == 2) { memcpy(ref + (b * N + h) * T * Hv, Vh, (size_t)(T * Hv) * sizeof(double)); continue; }
            for (int64_t s = 0; s < S; s++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t t = 0; t < T; t++) {
                    double d = 0;
                    for (int64_t i = 0; i < H; i++)
                        d += ((double)qt_llm_f(q)[((b * S + s) * N + h) * H + i] + (bz ? bz[h * H + i] : 0)) * Kh[t * H + i];
                    d *= scale;
                    if (ab) d += qt_llm_f(ab)[(((ab->dims[0] == 1 ? 0 : b) * ab->dims[1] + (ab->dims[1] == 1 ? 0 : h)) * S + s) * T + t];
                    bool masked = causal && t > P + s;
                    if (mask) {
                        const int32_t *mk = mask->data;
                        masked |= mask->rank == 1 ? t >= mk[b] : mask->rank == 2 ? mk[b * T + t] == 0 : mk[(b * S + s) * T + t] == 0;
                    }
                    if (masked) d += mfv;
                    w[t] = d;
                    mx = fmax(mx, d);
                }
                for (int64_t t = 0; t < T; t++) { w[t] = exp(w[t] - mx); sum += w[t]; }
                for (int64_t i = 0; i < Hv; i++) {
                    double a = 0;
                    for (int64_t t = 0; t < T; t++) a += w[t] / sum * Vh[t * Hv + i];
                    ref[((b * S + s) * N + h) * Hv + i] = a;
                }
            }
        }
    free(Kh);
    free(Vh);
    free(w);
    return true;
}

static bool qt_llm_reference(const QtLlmCase *k, int oi, double *ref, int64_t n) {
    const char *op = k->node->op_type;
    if (strstr(op, "LayerNormalization")) return qt_llm_ref_norm(k, oi, ref, n);
    if (!strcmp(op, "RotaryEmbedding")) return oi == 0 && qt_llm_ref_rope(k, ref, n);
    if (!strcmp(op, "GroupQueryAttention")) return qt_llm_ref_gqa(k, oi, ref, n);
    if (!strcmp(op, "MultiHeadAttention")) return qt_llm_ref_mha(k, oi, ref, n);
    return false;
}

/* ---- the cases -------------------------------------------------------------------------------- */

/* "l2:<bytes>" cases: ORT sized its attention key blocks by that L2 cache size; on a machine with
 * another L2 the blocks (and so the float roundings) differ from the goldens'. */
static bool qt_llm_l2_other(const char *status) {
    return !strncmp(status, "l2:", 3) && qr__llm_l2() != strtoll(status + 3, NULL, 10);
}

static double qt_llm_tol_ort(const QtLlmCase *k, const char *status) {
    if (qt_llm_l2_other(status)) return QT_LLM_TOL_ORT;
#if defined(__x86_64__)
    QR_UNUSED(k);
    return 0.0;
#else
    QR_UNUSED(k);
    return QT_LLM_TOL_ORT;
#endif
}

static double qt_llm_rel(const QrTensor *a, const double *ref, int64_t n, int64_t *exact) {
    double mx = 0, d = 0;
    *exact = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = qr_tensor_get_f64(a, i);
        mx = fmax(mx, fabs(ref[i]));
        d = fmax(d, fabs(x - ref[i]));
        if (x == ref[i]) (*exact)++;
    }
    return mx > 0 ? d / mx : d;
}

static void qt_llm_case(const char *name, const char *status) {
    char what[160], msg[512] = "";
    snprintf(what, sizeof what, "llm_ops %s", name);
    QtLlmCase k;
    QrStatus st = qt_llm_load(name, true, &k);
    bool ok = st == QR_OK, e2e = !strcmp(status, "e2e"), ort = e2e || !strcmp(status, "ort") || !strncmp(status, "l2:", 3);
    if (!ok) qt_fmt(msg, sizeof msg, "run: %s: %s", qr_status_name(st), qr_err_msg());
    for (int j = 0; ok && j < k.n_out; j++) {
        QrTensor gold = {0};
        char path[512];
        snprintf(path, sizeof path, QT_LLM_DIR "/%s.out%d.npy", name, j);
        bool have = qr_npy_read(path, &gold) == QR_OK;
        int oi = qt_llm_out_index(&k, j);
        int64_t n = k.out[j].numel, exact = 0;
        double *ref = calloc((size_t)QR_MAX(n, 1), sizeof(double)), *gd = NULL;
        if (ort && !have) { ok = false; qt_fmt(msg, sizeof msg, "missing ORT output %s", path); }
        else if (have && gold.numel != n) {
            ok = false;
            snprintf(msg, sizeof msg, "output %d: %lld values, ORT %lld", j, (long long)n, (long long)gold.numel);
        }
        if (ok && have) {   /* vs ORT */
            gd = malloc((size_t)QR_MAX(n, 1) * sizeof(double));
            for (int64_t i = 0; i < n; i++) gd[i] = qr_tensor_get_f64(&gold, i);
            double r = qt_llm_rel(&k.out[j], gd, n, &exact), tol = qt_llm_tol_ort(&k, status);
            if (!(r <= tol)) {
                ok = false;
                snprintf(msg, sizeof msg, "output %d vs ORT: max rel %.3g (tolerance %.3g), %lld/%lld bit-identical", j, r,
                         tol, (long long)exact, (long long)n);
            } else if (qt_verbose) {
                printf("     %s out%d: vs ORT max rel %.3g, %lld/%lld bit-identical\n", name, j, r, (long long)exact,
                       (long long)n);
            }
        }
        if (ok && !e2e) {   /* vs the definition (and ORT vs the definition) */
            if (!qt_llm_reference(&k, oi, ref, n)) {
                ok = false;
                snprintf(msg, sizeof msg, "output %d: no reference from the definition", j);
            } else {
                double r = qt_llm_rel(&k.out[j], ref, n, &exact);
                if (!(r <= QT_LLM_TOL_REF)) {
                    ok = false;
                    snprintf(msg, sizeof msg, "output %d vs the definition: max rel %.3g", j, r);
                }
                if (ok && gd) {
                    double mx = 0, d = 0;
                    for (int64_t i = 0; i < n; i++) { mx = fmax(mx, fabs(ref[i])); d = fmax(d, fabs(gd[i] - ref[i])); }
                    if (!(d <= QT_LLM_TOL_REF * (mx > 0 ? mx : 1))) {
                        ok = false;
                        snprintf(msg, sizeof msg, "output %d: the test's reference differs from ORT: max rel %.3g", j,
                                 mx > 0 ? d / mx : d);
                    }
                }
            }
        }
        free(ref);
        free(gd);
        qr_tensor_free_data(&gold);
    }
    qt_record(what, ok, "%s", msg);
    qt_llm_free(&k);
}

/* Bad inputs: each must fail (shape inference or the run) with a message naming the node. */
static void qt_llm_bad_inputs(void) {
    static const struct { const char *model, *attr; int64_t v; int in; int64_t set; const char *want; } cases[] = {
        { "gqa_prompt", "kv_num_heads", 3, -1, 0, "not a multiple of kv_num_heads" },
        { "gqa_prompt", "num_heads", 5, -1, 0, "not a multiple" },
        { "gqa_decode", NULL, 0, 5, 7, "seqlens_k[0] = 7 is out of range" },
        { "gqa_decode", NULL, 0, 5, -1, "out of range" },
        { "gqa_prompt_rot", "do_rotary", 1, 7, -100, "needs cos_cache and sin_cache" },
        { "rope_3d_il0", NULL, 0, 1, 99, "outside the cos/sin caches" },
        { "rope_3d_nheads", "num_heads", 3, -1, 0, "not a multiple of num_heads" },
        { "sln_3d", "axis", 5, -1, 0, "axis" },
        { "mha_self", "num_heads", 3, -1, 0, "multiples of num_heads" },
    };
    for (size_t i = 0; i < QR_ARRAY_LEN(cases); i++) {
        QtLlmCase k;
        QT_OK(qt_llm_load(cases[i].model, false, &k));
        QrNode *nd = &k.g->nodes[0];
        if (cases[i].attr)
            for (int a = 0; a < nd->n_attr; a++)
                if (!strcmp(nd->attr[a].name, cases[i].attr)) nd->attr[a].i = cases[i].v;
        if (cases[i].in >= 0 && cases[i].set == -100) {
            nd->in[cases[i].in] = nd->in[cases[i].in + 1] = -1;   /* drop cos_cache and sin_cache */
        } else if (cases[i].in >= 0) {
            QrTensor *t = NULL;
            for (int j = 0; j < k.n_in; j++)
                if (k.g->inputs[j] == nd->in[cases[i].in]) t = &k.in[j];
            QT_CHECK(t != NULL);
            for (int64_t e = 0; e < t->numel; e++) qr_tensor_set_f64(t, e, (double)cases[i].set);
        }
        qr_err_clear();
        QrStatus st = qr_run_infer(k.g, k.in);
        if (st == QR_OK) st = qr_run(k.g, k.in, NULL, k.out);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", qr_err_msg());
        qt_llm_free(&k);
        QT_CHECKF(st != QR_OK && strstr(msg, cases[i].want) && strstr(msg, "_node"), "%s case %zu: %s (want '%s')",
                  cases[i].model, i, st == QR_OK ? "accepted" : msg, cases[i].want);
    }
}

static void qt_llm_ops_all(void) {
    QT_RUN(qt_llm_bad_inputs);
    unsigned char *buf = NULL;
    size_t len = 0;
    if (qr_file_read(QT_LLM_DIR "/index.tsv", 1 << 20, &buf, &len) != QR_OK) {
        qt_record("llm_ops index", false, "cannot read " QT_LLM_DIR "/index.tsv: %s", qr_err_msg());
        return;
    }
    char *s = (char *)buf, *save = NULL;
    int n = 0;
    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        char *status = tab + 1, *t2 = strchr(status, '\t');
        if (t2) *t2 = 0;
        if (!strcmp(status, "bad")) continue;   /* ORT's own refusal of a bad input: see qt_llm_bad_inputs */
        qt_llm_case(line, status);
        n++;
    }
    qt_record("llm_ops index", n > 0, "no cases in " QT_LLM_DIR "/index.tsv");
    free(buf);
}
