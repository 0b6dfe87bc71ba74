/* ops/contrib_llm — the operators onnxruntime-genai's model builder writes for decoder LLMs on
 * ONNX Runtime's CPU provider: SimplifiedLayerNormalization (RMSNorm, ai.onnx domain as ORT
 * registers it), com.microsoft SkipSimplifiedLayerNormalization / SkipLayerNormalization,
 * RotaryEmbedding, GroupQueryAttention and MultiHeadAttention. float32 only.
 *
 * The arithmetic follows ONNX Runtime 1.30's CPU kernels step by step on an x86-64 machine with
 * AVX2 + FMA, so the float results match ORT's bit for bit there (tests/test_llm_ops.c,
 * SkipLayerNormalization included):
 *   - SimplifiedLayerNormalization as MLAS's AVX2 layernorm kernel (rows of >= 8 values: sums in
 *     eight lanes, squares by FMA, y = x * (1 / rms) * gamma); the Skip norms as ORT's ComputeJob:
 *     SkipSimplified: sums of x*x left to right in float32, sqrtf(sum_sq / n + eps), x / rms * gamma;
 *     SkipLayerNormalization: Welford's mean and m2 in float32, sqrtf(m2 / n + eps),
 *     (x - mean) / rms * gamma + beta;
 *   - rotary embedding as MLAS's AVX2 kernel: real' = fma(real, cos, -(imag * sin)),
 *     imag' = fma(real, sin, imag * cos);
 *   - GroupQueryAttention without softcap as MLAS's flash kernel (prompt: scores by an FMA chain
 *     over the head dimension, then * scale; masked keys -FLT_MAX; exponentials by MLAS's
 *     polynomial, summed in eight lanes; the FMA-chained sum of w_t v_t times 1 / sum) and its
 *     decode kernel (one query token: the dot products and the weighted sum with products
 *     rounded on their own, MlasGQADecodeQK / MlasGQADecodeSV); with softcap ORT's plain path
 *     (tanhf as MlasComputeSoftcap, probabilities normalized before the product with V, MLAS's
 *     M = 1 SGEMM order for one query token);
 *   - MultiHeadAttention as ORT's flash kernel (no mask, bias, past or presents: the output divided
 *     by the exponentials' sum) or AttentionCPUBase (mask + bias, fma(q.k, scale, mask), MLAS's
 *     softmax, P V).
 *   - long attention in MLAS's blocks: flash key blocks sized from the L2 cache size as ORT sizes
 *     them (sysconf, qr__llm_l2) with the online-softmax rescaling (expf) between blocks, query
 *     blocks, and the K blocks of MLAS's SGEMM (qr__llm_sgemm_kc).
 * Other CPUs (aarch64) run other MLAS kernels: there the results agree within float32 rounding.
 *
 * Map: MLAS-order scalar pieces · SimplifiedLayerNormalization · Skip[Simplified]LayerNormalization
 * · RotaryEmbedding · GroupQueryAttention · MultiHeadAttention · table. */

/* Attention heads an attribute may ask for: far beyond any model's, small enough that the head
 * counts' sums and products (the packed QKV's N + 2 Nkv) stay exact in int64. */
enum { QR__LLM_MAX_HEADS = 1 << 20 };

/* ==== MLAS-order scalar pieces =========================================================== */

/* exp(x + negmax) as MLAS's MlasComputeSumExpVector with FMA (the AVX2 kernels'): range
 * reduction by the rounding-bias trick, a degree-6 polynomial, the exponent put back by integer
 * arithmetic on the biased value's bits. Masked scores (-FLT_MAX) give +0. */
static float qr__llm_exp(float x, float negmax) {
    float v = x + negmax;
    v = fmaxf(-88.3762626647949f, v);
    const float bias = 12582912.0f;
    float biased = fmaf(v, 1.44269504088896341f, bias);
    float m = biased - bias;
    v = fmaf(m, -6.93145752e-1f, v);
    v = fmaf(m, -1.42860677e-6f, v);
    uint32_t bits;
    memcpy(&bits, &biased, 4);
    uint32_t nb = (bits << 23) + 0x3F800000u;
    float normal;
    memcpy(&normal, &nb, 4);
    float p = 0x1.694000p-10f;
    p = fmaf(p, v, 0x1.125edcp-7f);
    p = fmaf(p, v, 0x1.555b5ap-5f);
    p = fmaf(p, v, 0x1.555450p-3f);
    p = fmaf(p, v, 0x1.fffff6p-2f);
    p = fmaf(p, v, 1.0f);
    p = fmaf(p, v, 1.0f);
    return p * normal;
}

/* p[i] = exp(p[i] - max) in place; returns their sum as MLAS's FMA3 kernel adds them: eight
 * lanes (lane l sums the elements l, l + 8, ...; a partial last vector adds +0 to the others), then
 * vhaddps twice in each 128-bit half and the halves added: ((l4 + l5) + (l6 + l7)) + ((l0 + l1) + (l2 + l3)). */
static float qr__llm_sumexp(float *p, int64_t n, float max) {
    float lane[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    for (int64_t i = 0; i < n; i++) {
        p[i] = qr__llm_exp(p[i], -max);
        lane[i & 7] += p[i];
    }
    float lo = (lane[0] + lane[1]) + (lane[2] + lane[3]), hi = (lane[4] + lane[5]) + (lane[6] + lane[7]);
    return hi + lo;
}

/* sum_k a[k] * b[k] as MLAS's M = 1 GEMV of ORT's GQA decode kernel (MlasGQADecodeQK, baseline ISA):
 * eight lanes over k in steps of eight (products rounded on their own), reduced
 * ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then the tail left to right. */
static float qr__llm_dot_lanes(const float *a, const float *b, int64_t k) {
    float l[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int64_t i = 0;
    for (; i + 8 <= k; i += 8)
        for (int j = 0; j < 8; j++) {
            float p = a[i + j] * b[i + j];
            QR_KERN_ROUNDED(p);
            l[j] += p;
        }
    float s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    for (; i < k; i++) {
        float p = a[i] * b[i];
        QR_KERN_ROUNDED(p);
        s += p;
    }
    return s;
}

/* sum_k a[k] * b[k] as a fused multiply-add chain from +0 (MLAS's FMA SGEMM micro-kernels). */
static float qr__llm_dot_fma(const float *a, const float *b, int64_t k) {
    float acc = 0.0f;
    for (int64_t i = 0; i < k; i++) acc = fmaf(a[i], b[i], acc);
    return acc;
}

/* The K stride MLAS's SGEMM (MlasSgemmOperation) sums a product of depth K over N columns in: 128,
 * halved while half still covers K (N >= K), or doubled while the N stride (128) can halve and still
 * cover N (N < K). Each K block is summed from zero and then added to C. */
static int64_t qr__llm_sgemm_kc(int64_t N, int64_t K) {
    int64_t sn = 128, sk = 128;
    if (N >= K) {
        while (sk / 2 >= K) { sn *= 2; sk /= 2; }
    } else {
        while (sn > 16 && sn / 2 >= N) { sk *= 2; sn /= 2; }
    }
    return sk;
}

/* One element of alpha * (a . b) [+ c0] as MLAS's FMA SGEMM with N columns in the product: each K
 * block an FMA chain from +0, the first stored as acc * alpha (or fma(acc, alpha, c0) when beta is 1,
 * has_c0), the next ones fma(acc, alpha, c). */
static float qr__llm_qk(const float *a, const float *b, int64_t K, int64_t N, float alpha, bool has_c0, float c0) {
    int64_t kc = qr__llm_sgemm_kc(N, K);
    float c = c0;
    bool first = !has_c0;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
        float acc = qr__llm_dot_fma(a + k0, b + k0, QR_MIN(kc, K - k0));
        c = first ? acc * alpha : fmaf(acc, alpha, c);
        first = false;
    }
    return K > 0 ? c : (has_c0 ? c0 : 0.0f);
}

/* out[h] (+)= sum_t p[t] V[t][h] (t < T, h < Hv) as MLAS's FMA SGEMM (one row of a product with Hv
 * columns, alpha 1): keys in K blocks of qr__llm_sgemm_kc(Hv, T), each an FMA chain from +0, the first
 * stored (accumulate false) or added to out, the next ones added. acc: Hv floats of scratch. */
static void qr__llm_pv_sgemm(const float *p, const float *V, int64_t T, int64_t Hv, bool accumulate, float *out,
                             float *acc) {
    int64_t kc = qr__llm_sgemm_kc(Hv, T);
    for (int64_t t0 = 0; t0 < T; t0 += kc) {
        for (int64_t h = 0; h < Hv; h++) acc[h] = 0.0f;
        for (int64_t t = t0; t < QR_MIN(T, t0 + kc); t++)
            for (int64_t h = 0; h < Hv; h++) acc[h] = fmaf(p[t], V[t * Hv + h], acc[h]);
        for (int64_t h = 0; h < Hv; h++) out[h] = (t0 == 0 && !accumulate) ? acc[h] : acc[h] + out[h];
    }
    if (T <= 0 && !accumulate)
        for (int64_t h = 0; h < Hv; h++) out[h] = 0.0f;
}

/* out[h] (+)= sum_t p[t] V[t][h] as MLAS's M = 1 SGEMM kernel (MlasSgemmKernelM1Avx; ORT's MatMul /
 * Gemm of one row with alpha 1 and beta 0 or 1): the keys in groups of four (then two, then one),
 * each group's products summed left to right without FMA, then added to the running value (+0, or
 * out when accumulating). */
static void qr__llm_pv_m1(const float *p, const float *V, int64_t T, int64_t Hv, bool accumulate, float *out) {
    for (int64_t h = 0; h < Hv; h++) {
        float a = accumulate ? out[h] : 0.0f;
        int64_t t = 0;
        while (t < T) {
            int64_t gsz = T - t >= 4 ? 4 : T - t >= 2 ? 2 : 1;
            float gs = p[t] * V[t * Hv + h];
            QR_KERN_ROUNDED(gs);
            for (int64_t i = 1; i < gsz; i++) {
                float pr = p[t + i] * V[(t + i) * Hv + h];
                QR_KERN_ROUNDED(pr);
                gs += pr;
            }
            a = gs + a;
            t += gsz;
        }
        out[h] = a;
    }
}

/* The L2 cache size ONNX Runtime sizes its attention blocks by (Env::GetL2CacheSize:
 * sysconf(_SC_LEVEL2_CACHE_SIZE)); <= 0 when unknown. */
static int64_t qr__llm_l2(void) {
#ifdef _SC_LEVEL2_CACHE_SIZE
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? (int64_t)v : 0;
#else
    return 0;
#endif
}

static QrStatus qr__llm_need_f32(const QrOpCtx *c, int i, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->dtype != QR_DT_F32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "%s has type %s (qreport runs this operator in float32 only)", what,
                          qr_dtype_name(t->dtype));
    return QR_OK;
}

/* ==== SimplifiedLayerNormalization ========================================================= */

/* X normalized over the dims from `axis` on: rows = prod(dims[:axis]), n = prod(dims[axis:]);
 * scale must hold n values (ORT's kernel does not broadcast it). */
static QrStatus qr__llm_sln_geom(const QrOpCtx *c, int64_t *rows, int64_t *n, int *axis) {
    const QrTensor *x = c->in[0], *s = c->in[1];
    QR_TRY(qr__llm_need_f32(c, 0, "X"));
    QR_TRY(qr__llm_need_f32(c, 1, "scale"));
    if (x->rank < 1) return qr_op_fail(c, QR_ERR_SHAPE, "X must have rank >= 1");
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", -1), x->rank, axis));
    *rows = 1;
    *n = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < *axis) *rows *= x->dims[i];
        else *n *= x->dims[i];
    }
    if (s->numel != *n)
        return qr_op_fail(c, QR_ERR_SHAPE, "scale has %lld elements, X's normalized dims (axis %d on) %lld",
                          (long long)s->numel, *axis, (long long)*n);
    return QR_OK;
}

static QrStatus qr__llm_sln_shape(QrOpCtx *c) {
    int64_t rows, n;
    int axis;
    QR_TRY(qr__llm_sln_geom(c, &rows, &n, &axis));
    const QrTensor *x = c->in[0];
    QR_TRY(qr_op_set_out(c, 0, QR_DT_F32, x->rank, x->dims));
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = i < axis ? x->dims[i] : 1;
    return qr_op_set_out(c, 1, QR_DT_F32, x->rank, d);   /* inv_std_var */
}

/* One row as ORT 1.30's scalar rows compute it (LayerNormImpl simplified, SkipLayerNorm): with
 * simplified, sums of x * x in float32 from 0 left to right, rms = sqrtf(sum_sq / n + eps),
 * y = x / rms * gamma; otherwise Welford in float32 from 0 (delta = x - mean, mean += delta / k,
 * m2 += delta * (x - mean)), rms = sqrtf(m2 / n + eps), y = (x - mean) / rms * gamma [+ beta];
 * every step rounded. Returns mean and 1 / rms. */
static void qr__llm_norm_row(const float *v, int64_t n, const float *gamma, const float *beta, float eps,
                             bool simplified, float *y, float *mean_out, float *inv_out) {
    float mean = 0.0f, sq = 0.0f;
    for (int64_t h = 0; h < n; h++) {
        if (simplified) {
            float p = v[h] * v[h];
            QR_KERN_ROUNDED(p);
            mean += v[h];
            sq += p;
        } else {
            const float delta = v[h] - mean;
            mean += delta / (float)(h + 1);
            float p = delta * (v[h] - mean);
            QR_KERN_ROUNDED(p);
            sq += p;
        }
    }
    float rms;
    if (simplified) {
        mean = mean / (float)n;
        rms = sqrtf(sq / (float)n + eps);
    } else {
        rms = sqrtf(sq / (float)n + eps);
    }
    for (int64_t h = 0; h < n; h++) {
        if (simplified) {
            y[h] = v[h] / rms * gamma[h];
        } else {
            float t = (v[h] - mean) / rms * gamma[h];
            QR_KERN_ROUNDED(t);
            y[h] = beta ? t + beta[h] : t;
        }
    }
    if (mean_out) *mean_out = mean;
    if (inv_out) *inv_out = 1.0f / rms;
}

/* Lanes of MLAS's horizontal add (layernorm kernel): (l0 + l4, .., l3 + l7), then (r0 + r2) + (r1 + r3). */
static float qr__llm_hsum8_ln(const float *l) {
    float r0 = l[0] + l[4], r1 = l[1] + l[5], r2 = l[2] + l[6], r3 = l[3] + l[7];
    return (r0 + r2) + (r1 + r3);
}

/* One row as MLAS's AVX2 LayerNorm/RMSNorm kernel (MlasLayerNormKernelAvx2, which ORT's LayerNormImpl
 * uses for float rows of >= 8 values on AVX2 machines): sum and sum of squares in eight lanes (the
 * squares by FMA), reduced as qr__llm_hsum8_ln, a scalar tail (squares by FMA), then
 * inv = 1 / sqrtf(sumsq / n + eps) and y = x * inv * gamma. */
static void qr__llm_rms_row_mlas(const float *x, int64_t n, const float *gamma, float eps, float *y, float *inv_out) {
    float ls[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, lq[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) {
            ls[j] += x[i + j];
            lq[j] = fmaf(x[i + j], x[i + j], lq[j]);
        }
    float sum = qr__llm_hsum8_ln(ls), sq = qr__llm_hsum8_ln(lq);
    for (; i < n; i++) {
        sum += x[i];
        sq = fmaf(x[i], x[i], sq);
    }
    (void)sum;
    float inv = 1.0f / sqrtf(sq / (float)n + eps);
    for (int64_t h = 0; h < n; h++) {
        float t = x[h] * inv;
        QR_KERN_ROUNDED(t);
        y[h] = t * gamma[h];
    }
    if (inv_out) *inv_out = inv;
}

static QrStatus qr__llm_sln_exec(QrOpCtx *c) {
    int64_t rows, n;
    int axis;
    QR_TRY(qr__llm_sln_geom(c, &rows, &n, &axis));
    const float *x = c->in[0]->data, *g = c->in[1]->data;
    float *y = c->out[0]->data;
    float *inv = c->n_out > 1 && c->out[1] ? c->out[1]->data : NULL;
    float eps = qr_attr_float(c->node, "epsilon", 1e-5f);
    for (int64_t r = 0; r < rows; r++) {
        if (n >= 8) qr__llm_rms_row_mlas(x + r * n, n, g, eps, y + r * n, inv ? inv + r : NULL);
        else qr__llm_norm_row(x + r * n, n, g, NULL, eps, true, y + r * n, NULL, inv ? inv + r : NULL);
    }
    return QR_OK;
}

/* ==== SkipSimplifiedLayerNormalization / SkipLayerNormalization ============================ */

/* input (..., H) [rank 2 or 3], skip the same shape or its trailing dims (ORT reads skip at
 * offset % skip_size), gamma (H), [beta (H)], [bias (H)]. SkipLayerNormalization: beta = input 3,
 * bias = input 4; SkipSimplifiedLayerNormalization: bias = input 3 (its schema). */
typedef struct QrLlmSkip { int64_t rows, H, skip_n; int beta_in, bias_in; } QrLlmSkip;

static QrStatus qr__llm_skip_geom(const QrOpCtx *c, bool simplified, QrLlmSkip *g) {
    const QrTensor *x = c->in[0], *sk = c->in[1];
    g->beta_in = simplified ? -1 : 3;
    g->bias_in = simplified ? 3 : 4;
    static const char *const names[5] = { "input", "skip", "gamma", "beta", "bias" };
    for (int i = 0; i < 5 && i < c->n_in; i++)
        QR_TRY(qr__llm_need_f32(c, i, simplified && i == 3 ? "bias" : names[i]));
    if (x->rank != 2 && x->rank != 3)
        return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank 2 or 3, got %d", x->rank);
    g->H = x->dims[x->rank - 1];
    g->rows = g->H > 0 ? x->numel / g->H : 0;
    if (sk->rank < 1 || sk->rank > x->rank || sk->dims[sk->rank - 1] != g->H)
        return qr_op_fail(c, QR_ERR_SHAPE, "skip must end in the hidden size %lld like input (rank <= %d)",
                          (long long)g->H, x->rank);
    for (int i = 0; i < sk->rank; i++) {
        int64_t xd = x->dims[x->rank - sk->rank + i];
        if (sk->dims[i] != xd && !(sk->dims[i] == 1 && i == 0 && sk->rank == x->rank))
            return qr_op_fail(c, QR_ERR_SHAPE, "skip dim %d is %lld, input's is %lld", i, (long long)sk->dims[i],
                              (long long)xd);
    }
    g->skip_n = sk->numel;
    if (g->skip_n == 0 && x->numel > 0) return qr_op_fail(c, QR_ERR_SHAPE, "skip is empty");
    const int ins[3] = { 2, g->beta_in, g->bias_in };
    for (int k = 0; k < 3; k++) {
        const QrTensor *t = ins[k] >= 0 ? qr_op_in(c, ins[k]) : NULL;
        if (t && (t->rank != 1 || t->dims[0] != g->H))
            return qr_op_fail(c, QR_ERR_SHAPE, "%s must be 1-D with the hidden size %lld",
                              k == 0 ? "gamma" : k == 1 ? "beta" : "bias", (long long)g->H);
    }
    return QR_OK;
}

static QrStatus qr__llm_skip_shape_as(QrOpCtx *c, bool simplified) {
    QrLlmSkip g;
    QR_TRY(qr__llm_skip_geom(c, simplified, &g));
    const QrTensor *x = c->in[0];
    QR_TRY(qr_op_set_out(c, 0, QR_DT_F32, x->rank, x->dims));
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = i < x->rank - 1 ? x->dims[i] : 1;
    QR_TRY(qr_op_set_out(c, 1, QR_DT_F32, x->rank, d));   /* mean */
    QR_TRY(qr_op_set_out(c, 2, QR_DT_F32, x->rank, d));   /* inv_std_var */
    return qr_op_set_out(c, 3, QR_DT_F32, x->rank, x->dims);   /* input_skip_bias_sum */
}
static QrStatus qr__llm_sskip_shape(QrOpCtx *c) { return qr__llm_skip_shape_as(c, true); }
static QrStatus qr__llm_skip_shape(QrOpCtx *c) { return qr__llm_skip_shape_as(c, false); }

/* v = input + skip (+ bias), each add rounded, as ORT's ComputeJob; then the row's norm. mean and
 * inv_std_var (outputs 1, 2) come from the same sums (the mean of v; 1 / rms). */
static QrStatus qr__llm_skip_exec_as(QrOpCtx *c, bool simplified) {
    QrLlmSkip g;
    QR_TRY(qr__llm_skip_geom(c, simplified, &g));
    const float *x = c->in[0]->data, *sk = c->in[1]->data, *gamma = c->in[2]->data;
    const QrTensor *bt = g.beta_in >= 0 ? qr_op_in(c, g.beta_in) : NULL, *bs = qr_op_in(c, g.bias_in);
    const float *beta = bt ? bt->data : NULL, *bias = bs ? bs->data : NULL;
    float *y = c->out[0]->data;
    float *mean = c->n_out > 1 && c->out[1] ? c->out[1]->data : NULL;
    float *inv = c->n_out > 2 && c->out[2] ? c->out[2]->data : NULL;
    float *sum = c->n_out > 3 && c->out[3] ? c->out[3]->data : NULL;
    float eps = qr_attr_float(c->node, "epsilon", 1e-12f);
    float *v = qr_arena_array(c->scratch, (size_t)QR_MAX(g.H, 1), sizeof(float));
    if (!v) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for a row of %lld values", (long long)g.H);
    for (int64_t r = 0; r < g.rows; r++) {
        int64_t off = r * g.H;
        const float *ps = sk + off % g.skip_n;
        for (int64_t h = 0; h < g.H; h++) {
            float t = x[off + h] + ps[h];
            if (bias) t += bias[h];
            v[h] = t;
            if (sum) sum[off + h] = t;
        }
        qr__llm_norm_row(v, g.H, gamma, beta, eps, simplified, y + off, mean ? mean + r : NULL, inv ? inv + r : NULL);
    }
    return QR_OK;
}
static QrStatus qr__llm_sskip_exec(QrOpCtx *c) { return qr__llm_skip_exec_as(c, true); }
static QrStatus qr__llm_skip_exec(QrOpCtx *c) { return qr__llm_skip_exec_as(c, false); }

/* ==== RotaryEmbedding ======================================================================= */

/* One row of `dim` rotated values (dim even) as MLAS's AVX2 kernel: non-interleaved pairs
 * (x[i], x[i + dim/2]), interleaved (x[2i], x[2i + 1]), with cos[i], sin[i]. */
static void qr__llm_rope_row(const float *x, const float *cs, const float *sn, int64_t dim, bool interleaved,
                             float *y) {
    int64_t half = dim / 2;
    for (int64_t i = 0; i < half; i++) {
        int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
        float re = x[a], im = x[b];
        float t1 = im * sn[i], t2 = im * cs[i];
        QR_KERN_ROUNDED(t1);
        QR_KERN_ROUNDED(t2);
        y[a] = fmaf(re, cs[i], -t1);
        y[b] = fmaf(re, sn[i], t2);
    }
}

/* input (B, S, N*H) or (B, N, S, H); position_ids (B, S), or one value: the position of token 0
 * (later tokens count on from it); cos_cache / sin_cache (max positions, rotary_dim / 2). */
typedef struct QrLlmRope {
    int64_t B, S, N, H, rot, max_pos;
    int64_t bstride, sstride, hstride;
    bool interleaved, pos_offset;
} QrLlmRope;

static QrStatus qr__llm_rope_geom(const QrOpCtx *c, QrLlmRope *g) {
    const QrTensor *x = c->in[0], *pos = c->in[1], *cs = c->in[2], *sn = c->in[3];
    QR_TRY(qr__llm_need_f32(c, 0, "input"));
    QR_TRY(qr__llm_need_f32(c, 2, "cos_cache"));
    QR_TRY(qr__llm_need_f32(c, 3, "sin_cache"));
    if (pos->dtype != QR_DT_S64)
        return qr_op_fail(c, QR_ERR_INVALID, "position_ids has type %s (int64)", qr_dtype_name(pos->dtype));
    if (cs->rank != 2 || sn->rank != 2 || cs->dims[0] != sn->dims[0] || cs->dims[1] != sn->dims[1])
        return qr_op_fail(c, QR_ERR_SHAPE, "cos_cache and sin_cache must both be (max positions, rotary_dim / 2)");
    int64_t nh = qr_attr_int(c->node, "num_heads", 0), rd = qr_attr_int(c->node, "rotary_embedding_dim", 0);
    if (qr_attr_int(c->node, "is_packed_batching", 0) != 0)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "is_packed_batching = 1 is not supported");
    if (rd > 0 && nh <= 0) return qr_op_fail(c, QR_ERR_INVALID, "num_heads must be given with rotary_embedding_dim");
    g->interleaved = qr_attr_int(c->node, "interleaved", 0) != 0;
    g->max_pos = cs->dims[0];
    g->B = x->rank >= 3 ? x->dims[0] : 0;
    if (x->rank == 4) {
        g->N = x->dims[1];
        g->S = x->dims[2];
        g->H = x->dims[3];
        g->sstride = g->H;
        g->hstride = g->S * g->H;
        g->bstride = g->N * g->hstride;
    } else if (x->rank == 3) {
        g->S = x->dims[1];
        int64_t D = x->dims[2];
        if (nh > 0) {
            if (D % nh != 0)
                return qr_op_fail(c, QR_ERR_SHAPE, "hidden size %lld is not a multiple of num_heads %lld", (long long)D,
                                  (long long)nh);
            g->N = nh;
            g->H = D / nh;
        } else {
            g->H = 2 * cs->dims[1];
            if (g->H <= 0 || D % g->H != 0)
                return qr_op_fail(c, QR_ERR_SHAPE, "hidden size %lld is not a multiple of the head size %lld (2 x "
                                  "cos_cache dim 1; give num_heads otherwise)", (long long)D, (long long)g->H);
            g->N = D / g->H;
        }
        g->hstride = g->H;
        g->sstride = g->N * g->H;
        g->bstride = g->S * g->sstride;
    } else {
        return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank 3 (batch, sequence, hidden) or 4 (batch, heads, "
                          "sequence, head_size), got %d", x->rank);
    }
    g->rot = rd > 0 ? rd : 2 * cs->dims[1];
    if (g->rot % 2 != 0 || g->rot > g->H || g->rot / 2 > cs->dims[1])
        return qr_op_fail(c, QR_ERR_SHAPE, "rotary_dim %lld must be even, <= head_size %lld and <= 2 x cos_cache dim 1 "
                          "(%lld)", (long long)g->rot, (long long)g->H, (long long)cs->dims[1]);
    if (pos->numel == 1) g->pos_offset = true;
    else if (pos->rank == 2 && pos->dims[0] == g->B && pos->dims[1] == g->S) g->pos_offset = false;
    else
        return qr_op_fail(c, QR_ERR_SHAPE, "position_ids must be (batch %lld, sequence %lld) or one value",
                          (long long)g->B, (long long)g->S);
    return QR_OK;
}

static QrStatus qr__llm_rope_shape(QrOpCtx *c) {
    QrLlmRope g;
    QR_TRY(qr__llm_rope_geom(c, &g));
    return qr_op_set_out(c, 0, QR_DT_F32, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__llm_rope_exec(QrOpCtx *c) {
    QrLlmRope g;
    QR_TRY(qr__llm_rope_geom(c, &g));
    const float *x = c->in[0]->data, *cs = c->in[2]->data, *sn = c->in[3]->data;
    const int64_t *pos = c->in[1]->data, half_c = c->in[2]->dims[1];
    float *y = c->out[0]->data;
    for (int64_t b = 0; b < g.B; b++)
        for (int64_t s = 0; s < g.S; s++) {
            int64_t p = g.pos_offset ? pos[0] + s : pos[b * g.S + s];
            if (p < 0 || p >= g.max_pos)
                return qr_op_fail(c, QR_ERR_INVALID, "position %lld (batch %lld, token %lld) is outside the cos/sin "
                                  "caches (%lld positions)", (long long)p, (long long)b, (long long)s,
                                  (long long)g.max_pos);
            for (int64_t n = 0; n < g.N; n++) {
                int64_t off = b * g.bstride + s * g.sstride + n * g.hstride;
                qr__llm_rope_row(x + off, cs + p * half_c, sn + p * half_c, g.rot, g.interleaved, y + off);
                for (int64_t h = g.rot; h < g.H; h++) y[off + h] = x[off + h];
            }
        }
    return QR_OK;
}

/* ==== GroupQueryAttention =================================================================== */

/* Inputs: query (B, S, N*H) or packed (B, S, (N + 2 Nkv) * H), key / value (B, S, Nkv*H) or
 * absent, past_key / past_value (B, Nkv, P, H) or absent (or P = 0), seqlens_k (B) int32 =
 * total length - 1 per batch, total_sequence_length (one int32), cos_cache / sin_cache
 * (max positions, rotary_dim / 2) with do_rotary, position_ids, attention_bias, head_sink
 * (not supported). Outputs: output (B, S, N*H), present_key / present_value (B, Nkv, T, H) with
 * T = max(total_sequence_length, P). */
typedef struct QrLlmGqa {
    int64_t B, S, N, Nkv, H, P, T, total, rot;
    bool packed, first_prompt, rotary, interleaved;
    float scale, softcap;
    int64_t window;   /* local_window_size, -1: none */
} QrLlmGqa;

static QrStatus qr__llm_gqa_geom(const QrOpCtx *c, QrLlmGqa *g) {
    memset(g, 0, sizeof *g);
    const QrTensor *q = c->in[0], *k = qr_op_in(c, 1), *v = qr_op_in(c, 2);
    const QrTensor *pk = qr_op_in(c, 3), *pv = qr_op_in(c, 4), *sl = c->in[5], *ts = c->in[6];
    const QrTensor *cs = qr_op_in(c, 7), *sn = qr_op_in(c, 8);
    g->N = qr_attr_int(c->node, "num_heads", 0);
    g->Nkv = qr_attr_int(c->node, "kv_num_heads", 0);
    if (g->N <= 0 || g->Nkv <= 0)
        return qr_op_fail(c, QR_ERR_INVALID, "attributes num_heads and kv_num_heads must be given and positive");
    if (g->N > QR__LLM_MAX_HEADS || g->Nkv > QR__LLM_MAX_HEADS)   /* (the packed QKV's head count, N + 2 Nkv, fits) */
        return qr_op_fail(c, QR_ERR_INVALID, "num_heads %lld / kv_num_heads %lld: more than %d heads", (long long)g->N,
                          (long long)g->Nkv, QR__LLM_MAX_HEADS);
    if (g->N % g->Nkv != 0)
        return qr_op_fail(c, QR_ERR_INVALID, "num_heads %lld is not a multiple of kv_num_heads %lld", (long long)g->N,
                          (long long)g->Nkv);
    static const char *const unsupported[] = { "smooth_softmax", "qk_output", "kv_cache_bit_width",
                                               "sliding_window_cache" };
    for (size_t i = 0; i < QR_ARRAY_LEN(unsupported); i++)
        if (qr_attr_int(c->node, unsupported[i], 0) != 0)
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "attribute %s is not supported", unsupported[i]);
    for (int i = 9; i < c->n_in; i++)
        if (c->in[i])
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d (%s) is not supported", i,
                              i == 9 ? "position_ids" : i == 10 ? "attention_bias" : "head_sink");
    if (c->n_out > 3 && c->out[3]) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output 3 (output_qk) is not supported");
    static const char *const names[9] = { "query", "key", "value", "past_key", "past_value", "", "", "cos_cache",
                                          "sin_cache" };
    for (int i = 0; i < 9; i++)
        if (i != 5 && i != 6) QR_TRY(qr__llm_need_f32(c, i, names[i]));
    if (q->rank != 3) return qr_op_fail(c, QR_ERR_SHAPE, "query must have rank 3 (batch, sequence, hidden), got %d", q->rank);
    g->B = q->dims[0];
    g->S = q->dims[1];
    g->packed = k == NULL;
    if (g->packed != (v == NULL))
        return qr_op_fail(c, QR_ERR_INVALID, "key and value must both be given, or both omitted (packed QKV)");
    int64_t D = q->dims[2], heads = g->packed ? g->N + 2 * g->Nkv : g->N;
    if (D % heads != 0)
        return qr_op_fail(c, QR_ERR_SHAPE, "query's hidden size %lld is not a multiple of %lld heads%s", (long long)D,
                          (long long)heads, g->packed ? " (num_heads + 2 kv_num_heads, packed QKV)" : "");
    g->H = D / heads;
    if (g->H <= 0) return qr_op_fail(c, QR_ERR_SHAPE, "head size is 0");
    if (!g->packed) {
        for (int i = 1; i <= 2; i++) {
            const QrTensor *t = c->in[i];
            if (t->rank != 3 || t->dims[0] != g->B || t->dims[1] != g->S || t->dims[2] != g->Nkv * g->H)
                return qr_op_fail(c, QR_ERR_SHAPE, "%s must be (batch %lld, sequence %lld, kv_num_heads x head_size %lld)",
                                  names[i], (long long)g->B, (long long)g->S, (long long)(g->Nkv * g->H));
        }
    }
    if ((pk == NULL) != (pv == NULL))
        return qr_op_fail(c, QR_ERR_INVALID, "past_key and past_value must both be given or both omitted");
    if (pk) {
        for (int i = 3; i <= 4; i++) {
            const QrTensor *t = c->in[i];
            if (t->rank != 4 || t->dims[0] != g->B || t->dims[1] != g->Nkv || t->dims[3] != g->H)
                return qr_op_fail(c, QR_ERR_SHAPE, "%s must be (batch %lld, kv_num_heads %lld, length, head_size %lld) "
                                  "(BNSH)", names[i], (long long)g->B, (long long)g->Nkv, (long long)g->H);
        }
        if (pk->dims[2] != pv->dims[2])
            return qr_op_fail(c, QR_ERR_SHAPE, "past_key and past_value have different lengths (%lld, %lld)",
                              (long long)pk->dims[2], (long long)pv->dims[2]);
        g->P = pk->dims[2];
    }
    if (sl->dtype != QR_DT_S32 || sl->numel != g->B)
        return qr_op_fail(c, QR_ERR_SHAPE, "seqlens_k must be %lld int32 values (one per batch)", (long long)g->B);
    if (ts->dtype != QR_DT_S32 || ts->numel != 1)
        return qr_op_fail(c, QR_ERR_SHAPE, "total_sequence_length must be one int32 value");
    QR_TRY(qr_op_need_data(c, 6));
    g->total = ((const int32_t *)ts->data)[0];
    if (g->total <= 0 || g->total < g->S)
        return qr_op_fail(c, QR_ERR_INVALID, "total_sequence_length %lld must be >= the query's sequence length %lld",
                          (long long)g->total, (long long)g->S);
    g->T = QR_MAX(g->total, g->P);
    /* ORT: a prompt is S == total; otherwise S must be 1 (token generation), or the batch 1 */
    g->first_prompt = g->S == g->total;
    if (!g->first_prompt && g->S != 1 && g->B != 1)
        return qr_op_fail(c, QR_ERR_INVALID, "batch must be 1 when the sequence length (%lld) is neither 1 nor "
                          "total_sequence_length (%lld)", (long long)g->S, (long long)g->total);
    g->rotary = qr_attr_int(c->node, "do_rotary", 0) != 0;
    g->interleaved = qr_attr_int(c->node, "rotary_interleaved", 0) != 0;
    if ((cs == NULL) != (sn == NULL))
        return qr_op_fail(c, QR_ERR_INVALID, "cos_cache and sin_cache must both be given or both omitted");
    if (g->rotary && !cs) return qr_op_fail(c, QR_ERR_INVALID, "do_rotary = 1 needs cos_cache and sin_cache");
    if (cs) {
        if (cs->rank != 2 || sn->rank != 2 || cs->dims[0] != sn->dims[0] || cs->dims[1] != sn->dims[1])
            return qr_op_fail(c, QR_ERR_SHAPE, "cos_cache and sin_cache must both be (max positions, rotary_dim / 2)");
        g->rot = 2 * cs->dims[1];
        if (g->rot > g->H)
            return qr_op_fail(c, QR_ERR_SHAPE, "cos_cache dim 1 (%lld) must be <= head_size / 2 (%lld)",
                              (long long)cs->dims[1], (long long)(g->H / 2));
        if (cs->dims[0] < g->total)
            return qr_op_fail(c, QR_ERR_SHAPE, "cos_cache has %lld positions, fewer than total_sequence_length %lld",
                              (long long)cs->dims[0], (long long)g->total);
    }
    g->scale = qr_attr_float(c->node, "scale", 0.0f);
    if (g->scale == 0.0f) g->scale = 1.0f / sqrtf((float)g->H);
    g->softcap = qr_attr_float(c->node, "softcap", 0.0f);
    g->window = qr_attr_int(c->node, "local_window_size", -1);
    char what[96];
    snprintf(what, sizeof what, "%lld heads x %lld x %lld scores x %lld", (long long)(g->B * g->N), (long long)g->S,
             (long long)g->T, (long long)g->H);
    return qr_op_check_work(c, 2.0 * (double)(g->B * g->N) * (double)g->S * (double)g->T * (double)g->H, what);
}

static QrStatus qr__llm_gqa_shape(QrOpCtx *c) {
    QrLlmGqa g;
    QR_TRY(qr__llm_gqa_geom(c, &g));
    int64_t od[3] = { g.B, g.S, g.N * g.H }, pd[4] = { g.B, g.Nkv, g.T, g.H };
    QR_TRY(qr_op_set_out(c, 0, QR_DT_F32, 3, od));
    QR_TRY(qr_op_set_out(c, 1, QR_DT_F32, 4, pd));
    return qr_op_set_out(c, 2, QR_DT_F32, 4, pd);
}

/* Token s, head n of the packed or separate inputs (BSNH rows): kind 0 query, 1 key, 2 value. */
static const float *qr__llm_gqa_row(const QrOpCtx *c, const QrLlmGqa *g, int kind, int64_t b, int64_t s, int64_t n) {
    if (g->packed) {
        int64_t heads = g->N + 2 * g->Nkv, first = kind == 0 ? 0 : kind == 1 ? g->N : g->N + g->Nkv;
        return (const float *)c->in[0]->data + ((b * g->S + s) * heads + first + n) * g->H;
    }
    int64_t heads = kind == 0 ? g->N : g->Nkv;
    return (const float *)c->in[kind]->data + ((b * g->S + s) * heads + n) * g->H;
}

/* Rotated copy of one query/key row at position p (rotary_dim leading values; the rest copied). */
static void qr__llm_gqa_rope(const QrOpCtx *c, const QrLlmGqa *g, const float *x, int64_t p, float *y) {
    const QrTensor *cs = c->in[7];
    int64_t half = cs->dims[1];
    qr__llm_rope_row(x, (const float *)cs->data + p * half, (const float *)c->in[8]->data + p * half, g->rot,
                     g->interleaved, y);
    for (int64_t h = g->rot; h < g->H; h++) y[h] = x[h];
}

/* The attention of one batch b (ORT's CPU kernel, in its order of arithmetic):
 *   present = past rows [0, past) then the S new (rotated) key / value rows, zeros after;
 *   past = 0 for a prompt (S == total_sequence_length), else seqlens_k[b] + 1 - S;
 *   query row s sees keys [lo, past + s + 1) capped at seqlens_k[b] + 1, lo = that end minus
 *   local_window_size (0 without a window);
 *   without softcap (ORT's flash path): w_t = exp(score_t - max), out = (sum_t w_t v_t) * (1 / sum w);
 *   with softcap: score = softcap * tanh(score / softcap), p_t = w_t * (1 / sum w), out = sum_t p_t v_t. */
static QrStatus qr__llm_gqa_batch(QrOpCtx *c, const QrLlmGqa *g, int64_t b, float *pk, float *pv, float *qbuf,
                                  float *scores, float *acc) {
    const int32_t *sl = c->in[5]->data;
    int64_t tot = (int64_t)sl[b] + 1;
    if (sl[b] < 0 || tot > g->T || (!g->first_prompt && tot < g->S))
        return qr_op_fail(c, QR_ERR_INVALID, "seqlens_k[%lld] = %d is out of range: total length seqlens_k + 1 must be "
                          "in [%lld, %lld]", (long long)b, sl[b], (long long)(g->first_prompt ? 1 : g->S),
                          (long long)g->T);
    int64_t past = g->first_prompt ? 0 : tot - g->S;
    if (past > g->P && g->S > 0 && !g->first_prompt && past > 0 && c->in[3] == NULL)
        return qr_op_fail(c, QR_ERR_INVALID, "seqlens_k[%lld] = %d implies %lld past tokens but no past_key is given",
                          (long long)b, sl[b], (long long)past);
    if (past > g->P)
        return qr_op_fail(c, QR_ERR_INVALID, "seqlens_k[%lld] = %d implies %lld past tokens, past_key holds %lld",
                          (long long)b, sl[b], (long long)past, (long long)g->P);
    const QrTensor *pkt = qr_op_in(c, 3), *pvt = qr_op_in(c, 4);
    int64_t H = g->H;
    /* present key / value of this batch */
    for (int64_t kh = 0; kh < g->Nkv; kh++) {
        float *dk = pk + (b * g->Nkv + kh) * g->T * H, *dv = pv + (b * g->Nkv + kh) * g->T * H;
        memset(dk, 0, (size_t)(g->T * H) * sizeof(float));
        memset(dv, 0, (size_t)(g->T * H) * sizeof(float));
        if (past > 0) {
            memcpy(dk, (const float *)pkt->data + (b * g->Nkv + kh) * g->P * H, (size_t)(past * H) * sizeof(float));
            memcpy(dv, (const float *)pvt->data + (b * g->Nkv + kh) * g->P * H, (size_t)(past * H) * sizeof(float));
        }
        for (int64_t s = 0; s < g->S; s++) {
            const float *kr = qr__llm_gqa_row(c, g, 1, b, s, kh), *vr = qr__llm_gqa_row(c, g, 2, b, s, kh);
            if (g->rotary) qr__llm_gqa_rope(c, g, kr, past + s, dk + (past + s) * H);
            else memcpy(dk + (past + s) * H, kr, (size_t)H * sizeof(float));
            memcpy(dv + (past + s) * H, vr, (size_t)H * sizeof(float));
        }
    }
    float *out = c->out[0]->data;
    int64_t group = g->N / g->Nkv, kvlen = tot;
    /* ORT's flash kernel needs no softcap, more than one token in all and the present outputs */
    bool flash = g->softcap == 0.0f && g->total > 1 && c->n_out > 2 && c->out[1] && c->out[2];
    int64_t kvb = QR_MAX(qr__llm_l2() / (int64_t)(sizeof(float) * 4 * 2 * H), 1);   /* MLAS's key block */
    for (int64_t n = 0; n < g->N; n++) {
        const float *K = pk + (b * g->Nkv + n / group) * g->T * H, *V = pv + (b * g->Nkv + n / group) * g->T * H;
        for (int64_t s = 0; s < g->S; s++) {
            const float *qr = qr__llm_gqa_row(c, g, 0, b, s, n);
            if (g->rotary) { qr__llm_gqa_rope(c, g, qr, past + s, qbuf); qr = qbuf; }
            float *o = out + ((b * g->S + s) * g->N + n) * H;
            int64_t end = QR_MIN(past + s + 1, tot);
            int64_t lo = g->window >= 0 && end > g->window ? end - g->window : 0;
            if (!flash) {   /* ORT's plain path: [softcap,] normalized probabilities, then P V */
                for (int64_t t = 0; t < kvlen; t++) scores[t] = 0.0f;
                float mx = -FLT_MAX;
                for (int64_t t = lo; t < end; t++) {
                    float sc = qr__llm_qk(qr, K + t * H, H, kvlen, g->scale, false, 0.0f);
                    if (g->softcap > 0.0f) sc = tanhf(sc / g->softcap) * g->softcap;   /* MlasComputeSoftcap: std::tanh */
                    scores[t] = sc;
                    mx = fmaxf(mx, sc);
                }
                float sum = qr__llm_sumexp(scores + lo, end - lo, mx), inv = 1.0f / sum;
                for (int64_t t = lo; t < end; t++) scores[t] *= inv;
                if (g->S == 1) qr__llm_pv_m1(scores, V, kvlen, H, false, o);
                else qr__llm_pv_sgemm(scores, V, kvlen, H, false, o, acc);
                continue;
            }
            if (g->S == 1) {   /* MLAS's decode kernel: one pass, products rounded on their own */
                float mx = -FLT_MAX;
                for (int64_t t = 0; t < kvlen; t++) {
                    scores[t] = t >= lo ? qr__llm_dot_lanes(qr, K + t * H, H) * g->scale : -FLT_MAX;
                    mx = fmaxf(mx, scores[t]);
                }
                if (mx == -FLT_MAX) { memset(o, 0, (size_t)H * sizeof(float)); continue; }
                float sum = qr__llm_sumexp(scores, kvlen, mx);
                for (int64_t h = 0; h < H; h++) acc[h] = 0.0f;
                for (int64_t t = 0; t < kvlen; t++)
                    for (int64_t h = 0; h < H; h++) {
                        float p = scores[t] * V[t * H + h];
                        QR_KERN_ROUNDED(p);
                        acc[h] += p;
                    }
                float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
                for (int64_t h = 0; h < H; h++) o[h] = acc[h] * inv;
                continue;
            }
            /* MLAS's flash prefill: key blocks of kvb with the online softmax (masked keys -FLT_MAX;
             * a block with nothing visible changes nothing), then * (1 / sum) */
            float m = -FLT_MAX, l = 0.0f;
            for (int64_t h = 0; h < H; h++) o[h] = 0.0f;
            for (int64_t ir = 0; ir < kvlen && ir < end; ir += kvb) {
                int64_t len = QR_MIN(kvb, kvlen - ir);
                float mx = -FLT_MAX;
                for (int64_t j = 0; j < len; j++) {
                    int64_t t = ir + j;
                    scores[j] = t >= lo && t < end ? qr__llm_qk(qr, K + t * H, H, len, g->scale, false, 0.0f) : -FLT_MAX;
                    mx = fmaxf(mx, scores[j]);
                }
                if (mx == -FLT_MAX) continue;
                float m_old = m;
                m = fmaxf(m, mx);
                float sum = qr__llm_sumexp(scores, len, m);
                if (ir != 0) {
                    float e = expf(m_old - m), t = e * l;
                    QR_KERN_ROUNDED(t);
                    l = t + sum;
                    for (int64_t h = 0; h < H; h++) o[h] *= e;
                } else {
                    l = sum;
                }
                qr__llm_pv_sgemm(scores, V + ir * H, len, H, ir != 0, o, acc);
            }
            float inv = l > 0.0f ? 1.0f / l : 0.0f;
            for (int64_t h = 0; h < H; h++) o[h] *= inv;
        }
    }
    return QR_OK;
}

static QrStatus qr__llm_gqa_exec(QrOpCtx *c) {
    QrLlmGqa g;
    QR_TRY(qr__llm_gqa_geom(c, &g));
    size_t kv = (size_t)(g.B * g.Nkv * g.T * g.H);
    float *pk = c->n_out > 1 && c->out[1] ? c->out[1]->data : qr_arena_array(c->scratch, QR_MAX(kv, 1), sizeof(float));
    float *pv = c->n_out > 2 && c->out[2] ? c->out[2]->data : qr_arena_array(c->scratch, QR_MAX(kv, 1), sizeof(float));
    float *qbuf = qr_arena_array(c->scratch, (size_t)g.H, sizeof(float));
    float *scores = qr_arena_array(c->scratch, (size_t)QR_MAX(g.T, 1), sizeof(float));
    float *acc = qr_arena_array(c->scratch, (size_t)g.H, sizeof(float));
    if (!pk || !pv || !qbuf || !scores || !acc) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the key/value cache");
    for (int64_t b = 0; b < g.B; b++) QR_TRY(qr__llm_gqa_batch(c, &g, b, pk, pv, qbuf, scores, acc));
    return QR_OK;
}

/* ==== MultiHeadAttention ==================================================================== */

/* Inputs: query (B, S, N*H), key (B, L, N*H), value (B, L, N*Hv), bias (N*H + N*H + N*Hv) or absent,
 * key_padding_mask (int32: (B) key lengths, (B, T) or (B, S, T) 1 = attend), attention_bias
 * (B or 1, N or 1, S, T), past_key / past_value (B, N, P, H / Hv); T = P + L. Outputs: output
 * (B, S, N*Hv), present_key / present_value (B, N, T, H / Hv). Not supported (as on ORT's CPU
 * provider or beyond it): packed QKV / KV, key / value already in BNSH, past_sequence_length,
 * cache_indirection, the qk output. */
typedef struct QrLlmMha {
    int64_t B, S, L, N, H, Hv, P, T;
    float scale, mfv;
    bool causal, flash;
} QrLlmMha;

static QrStatus qr__llm_mha_geom(const QrOpCtx *c, QrLlmMha *g) {
    memset(g, 0, sizeof *g);
    const QrTensor *q = c->in[0], *k = qr_op_in(c, 1), *v = qr_op_in(c, 2), *bias = qr_op_in(c, 3);
    const QrTensor *mask = qr_op_in(c, 4), *ab = qr_op_in(c, 5), *pk = qr_op_in(c, 6), *pv = qr_op_in(c, 7);
    g->N = qr_attr_int(c->node, "num_heads", 0);
    if (g->N <= 0) return qr_op_fail(c, QR_ERR_INVALID, "attribute num_heads must be given and positive");
    for (int i = 8; i < c->n_in; i++)
        if (c->in[i])
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d (%s) is not supported", i,
                              i == 8 ? "past_sequence_length" : "cache_indirection");
    if (c->n_out > 3 && c->out[3]) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output 3 (qk) is not supported");
    static const char *const names[8] = { "query", "key", "value", "bias", "", "attention_bias", "past_key",
                                          "past_value" };
    for (int i = 0; i < 8; i++)
        if (i != 4) QR_TRY(qr__llm_need_f32(c, i, names[i]));
    if (q->rank != 3)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "query must have rank 3 (batch, sequence, hidden), got %d (packed "
                          "QKV is not supported)", q->rank);
    if (!k || !v) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "key and value must both be given (packed QKV is not supported)");
    if (k->rank != 3 || v->rank != 3)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "key and value must have rank 3 (batch, length, hidden); BNSH or "
                          "packed key/value are not supported");
    g->B = q->dims[0];
    g->S = q->dims[1];
    g->L = k->dims[1];
    if (q->dims[2] % g->N != 0 || v->dims[2] % g->N != 0)
        return qr_op_fail(c, QR_ERR_SHAPE, "hidden sizes of query (%lld) and value (%lld) must be multiples of "
                          "num_heads %lld", (long long)q->dims[2], (long long)v->dims[2], (long long)g->N);
    g->H = q->dims[2] / g->N;
    g->Hv = v->dims[2] / g->N;
    if (k->dims[0] != g->B || v->dims[0] != g->B || k->dims[2] != q->dims[2] || v->dims[1] != g->L)
        return qr_op_fail(c, QR_ERR_SHAPE, "key must be (batch %lld, length, %lld) and value (batch %lld, the same "
                          "length, hidden)", (long long)g->B, (long long)q->dims[2], (long long)g->B);
    if (bias && (bias->rank != 1 || bias->dims[0] != 2 * g->N * g->H + g->N * g->Hv))
        return qr_op_fail(c, QR_ERR_SHAPE, "bias must hold %lld values (query, key and value hidden sizes)",
                          (long long)(2 * g->N * g->H + g->N * g->Hv));
    if ((pk == NULL) != (pv == NULL))
        return qr_op_fail(c, QR_ERR_INVALID, "past_key and past_value must both be given or both omitted");
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != g->B || pk->dims[1] != g->N || pk->dims[3] != g->H ||
            pv->dims[0] != g->B || pv->dims[1] != g->N || pv->dims[2] != pk->dims[2] || pv->dims[3] != g->Hv)
            return qr_op_fail(c, QR_ERR_SHAPE, "past_key / past_value must be (batch %lld, num_heads %lld, length, "
                              "head size %lld / %lld)", (long long)g->B, (long long)g->N, (long long)g->H,
                              (long long)g->Hv);
        g->P = pk->dims[2];
    }
    g->T = g->P + g->L;
    if (mask) {
        if (mask->dtype != QR_DT_S32) return qr_op_fail(c, QR_ERR_INVALID, "key_padding_mask must be int32");
        bool ok = (mask->rank == 1 && mask->dims[0] == g->B) ||
                  (mask->rank == 2 && mask->dims[0] == g->B && mask->dims[1] == g->T) ||
                  (mask->rank == 3 && mask->dims[0] == g->B && mask->dims[1] == g->S && mask->dims[2] == g->T);
        if (!ok)
            return qr_op_fail(c, QR_ERR_SHAPE, "key_padding_mask must be (batch %lld) key lengths, or (batch, total "
                              "length %lld) / (batch, sequence %lld, total length) of 0/1", (long long)g->B,
                              (long long)g->T, (long long)g->S);
    }
    if (ab && (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != g->B) || (ab->dims[1] != 1 && ab->dims[1] != g->N) ||
               ab->dims[2] != g->S || ab->dims[3] != g->T))
        return qr_op_fail(c, QR_ERR_SHAPE, "attention_bias must be (batch or 1, num_heads or 1, sequence %lld, total "
                          "length %lld)", (long long)g->S, (long long)g->T);
    g->scale = qr_attr_float(c->node, "scale", 0.0f);
    if (g->scale == 0.0f) g->scale = 1.0f / sqrtf((float)g->H);
    g->mfv = qr_attr_float(c->node, "mask_filter_value", -10000.0f);
    bool uni = qr_attr_int(c->node, "unidirectional", 0) != 0;
    g->causal = uni && g->S > 1;
    bool presents = (c->n_out > 1 && c->out[1]) || (c->n_out > 2 && c->out[2]);
    g->flash = !uni && !mask && !ab && !pk && !presents;
    char what[96];
    snprintf(what, sizeof what, "%lld heads x %lld x %lld scores x %lld", (long long)(g->B * g->N), (long long)g->S,
             (long long)g->T, (long long)(g->H + g->Hv));
    return qr_op_check_work(c, (double)(g->B * g->N) * (double)g->S * (double)g->T * (double)(g->H + g->Hv), what);
}

static QrStatus qr__llm_mha_shape(QrOpCtx *c) {
    QrLlmMha g;
    QR_TRY(qr__llm_mha_geom(c, &g));
    int64_t od[3] = { g.B, g.S, g.N * g.Hv }, kd[4] = { g.B, g.N, g.T, g.H }, vd[4] = { g.B, g.N, g.T, g.Hv };
    QR_TRY(qr_op_set_out(c, 0, QR_DT_F32, 3, od));
    QR_TRY(qr_op_set_out(c, 1, QR_DT_F32, 4, kd));
    return qr_op_set_out(c, 2, QR_DT_F32, 4, vd);
}

/* ORT's CPU MultiHeadAttention: Q, K, V (+ bias, each add rounded) to BNSH, K and V after the past
 * rows (present). Without mask, attention bias, past, presents or unidirectional, MLAS's flash
 * kernel (MlasFlashAttentionThreaded, one key block): scores = scale * (q . k) as an FMA chain,
 * exponentials by MLAS's polynomial minus the row maximum, summed in eight lanes, O = sum_t w_t v_t
 * (FMA chain; MLAS's M = 1 kernel when a query block has one row), output O / sum. Otherwise
 * AttentionCPUBase: a mask of 0 / mask_filter_value (key lengths or 0/1 padding, then the causal
 * positions set) plus the attention bias, scores = fma(q . k, scale, mask) [no mask: scale * (q . k)],
 * MLAS's softmax (w * (1 / sum)), then P V (MLAS's M = 1 kernel for one query token). */
static QrStatus qr__llm_mha_exec(QrOpCtx *c) {
    QrLlmMha g;
    QR_TRY(qr__llm_mha_geom(c, &g));
    const QrTensor *bias_t = qr_op_in(c, 3), *mask = qr_op_in(c, 4), *ab = qr_op_in(c, 5);
    const QrTensor *pk = qr_op_in(c, 6), *pv = qr_op_in(c, 7);
    const float *bias = bias_t ? bias_t->data : NULL;
    int64_t B = g.B, S = g.S, N = g.N, H = g.H, Hv = g.Hv, T = g.T, L = g.L, P = g.P;
    size_t nk = (size_t)(B * N * T * H), nv = (size_t)(B * N * T * Hv);
    float *K = c->n_out > 1 && c->out[1] ? c->out[1]->data : qr_arena_array(c->scratch, QR_MAX(nk, 1), sizeof(float));
    float *V = c->n_out > 2 && c->out[2] ? c->out[2]->data : qr_arena_array(c->scratch, QR_MAX(nv, 1), sizeof(float));
    float *Q = qr_arena_array(c->scratch, (size_t)QR_MAX(B * N * S * H, 1), sizeof(float));
    float *sc = qr_arena_array(c->scratch, (size_t)QR_MAX(S * T, 1), sizeof(float));
    float *acc = qr_arena_array(c->scratch, (size_t)QR_MAX(S * Hv, 1), sizeof(float));
    if (!K || !V || !Q || !sc || !acc) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the attention buffers");
    const float *qi = c->in[0]->data, *ki = c->in[1]->data, *vi = c->in[2]->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++) {
            float *Qh = Q + (b * N + n) * S * H, *Kh = K + (b * N + n) * T * H, *Vh = V + (b * N + n) * T * Hv;
            for (int64_t s = 0; s < S; s++)
                for (int64_t h = 0; h < H; h++) {
                    float x = qi[(b * S + s) * N * H + n * H + h];
                    Qh[s * H + h] = bias ? x + bias[n * H + h] : x;
                }
            if (P > 0) {
                memcpy(Kh, (const float *)pk->data + (b * N + n) * P * H, (size_t)(P * H) * sizeof(float));
                memcpy(Vh, (const float *)pv->data + (b * N + n) * P * Hv, (size_t)(P * Hv) * sizeof(float));
            }
            for (int64_t l = 0; l < L; l++) {
                for (int64_t h = 0; h < H; h++) {
                    float x = ki[(b * L + l) * N * H + n * H + h];
                    Kh[(P + l) * H + h] = bias ? x + bias[N * H + n * H + h] : x;
                }
                for (int64_t h = 0; h < Hv; h++) {
                    float x = vi[(b * L + l) * N * Hv + n * Hv + h];
                    Vh[(P + l) * Hv + h] = bias ? x + bias[2 * N * H + n * Hv + h] : x;
                }
            }
        }
    float *out = c->out[0]->data;
    bool has_mask = mask || g.causal || ab;
    int64_t l2 = qr__llm_l2();
    bool flash = g.flash && l2 > 0;   /* ORT runs the flash kernel only when it knows the L2 size */
    int64_t rkv = QR_MAX(l2 / (int64_t)(sizeof(float) * 4 * (H + Hv)), 1), rq = QR_MIN(QR_MIN(rkv, H + Hv), S);
    rkv = QR_MIN(rkv, L);
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++) {
            const float *Qh = Q + (b * N + n) * S * H, *Kh = K + (b * N + n) * T * H, *Vh = V + (b * N + n) * T * Hv;
            for (int64_t s = 0; s < S; s++) {
                float *row = sc + s * T, *o = out + ((b * S + s) * N + n) * Hv;
                if (flash) {   /* MLAS's flash kernel: query blocks of rq rows, key blocks of rkv */
                    bool m1 = QR_MIN(rq, S - s / rq * rq) == 1;   /* a one-row query block: the M = 1 kernel */
                    float m = -FLT_MAX, l = 0.0f;
                    for (int64_t ir = 0; ir < L; ir += rkv) {
                        int64_t len = QR_MIN(rkv, L - ir);
                        float mx = -FLT_MAX;
                        for (int64_t j = 0; j < len; j++) {
                            row[j] = qr__llm_qk(Qh + s * H, Kh + (ir + j) * H, H, len, g.scale, false, 0.0f);
                            mx = fmaxf(mx, row[j]);
                        }
                        float m_old = m;
                        m = fmaxf(m, mx);
                        float sum = qr__llm_sumexp(row, len, m);
                        if (ir != 0) {
                            float e = expf(m_old - m), t = e * l;
                            QR_KERN_ROUNDED(t);
                            l = t + sum;
                            for (int64_t h = 0; h < Hv; h++) o[h] = e * o[h];
                        } else {
                            l = sum;
                        }
                        if (m1) qr__llm_pv_m1(row, Vh + ir * Hv, len, Hv, ir != 0, o);
                        else qr__llm_pv_sgemm(row, Vh + ir * Hv, len, Hv, ir != 0, o, acc);
                    }
                    for (int64_t h = 0; h < Hv; h++) o[h] = o[h] / l;
                    continue;
                }
                for (int64_t t = 0; t < T; t++) {
                    if (!has_mask) { row[t] = qr__llm_qk(Qh + s * H, Kh + t * H, H, T, g.scale, false, 0.0f); continue; }
                    float m = 0.0f;   /* ORT's PrepareMask: padding, then the causal positions set */
                    if (mask) {
                        const int32_t *mk = mask->data;
                        bool keep = mask->rank == 1 ? t < mk[b] : mask->rank == 2 ? mk[b * T + t] > 0
                                                                                  : mk[(b * S + s) * T + t] > 0;
                        if (!keep) m = g.mfv;
                    }
                    if (g.causal && t > P + s) m = g.mfv;
                    if (ab) {
                        int64_t ob = ab->dims[0] == 1 ? 0 : b, on = ab->dims[1] == 1 ? 0 : n;
                        float a = ((const float *)ab->data)[((ob * ab->dims[1] + on) * S + s) * T + t];
                        m = (mask || g.causal) ? a + m : a;
                    }
                    row[t] = qr__llm_qk(Qh + s * H, Kh + t * H, H, T, g.scale, true, m);
                }
                float mx = -FLT_MAX;
                for (int64_t t = 0; t < T; t++) mx = fmaxf(mx, row[t]);
                float inv = 1.0f / qr__llm_sumexp(row, T, mx);
                for (int64_t t = 0; t < T; t++) row[t] *= inv;
                if (S == 1) qr__llm_pv_m1(row, Vh, T, Hv, false, o);
                else qr__llm_pv_sgemm(row, Vh, T, Hv, false, o, acc);
            }
        }
    return QR_OK;
}

/* ==== table ================================================================================= */

static const QrOpDef qr_ops_contrib_llm[] = {
    { "", "SimplifiedLayerNormalization", 2, 2, 1, 2, qr__llm_sln_shape, qr__llm_sln_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "SkipSimplifiedLayerNormalization", 3, 4, 1, 4, qr__llm_sskip_shape, qr__llm_sskip_exec,
      QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "SkipLayerNormalization", 3, 5, 1, 4, qr__llm_skip_shape, qr__llm_skip_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "RotaryEmbedding", 4, 4, 1, 1, qr__llm_rope_shape, qr__llm_rope_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "GroupQueryAttention", 7, 12, 1, 4, qr__llm_gqa_shape, qr__llm_gqa_exec, QR_OPF_WRITES_ALL,
      (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) },
    { "com.microsoft", "MultiHeadAttention", 1, 10, 1, 4, qr__llm_mha_shape, qr__llm_mha_exec, QR_OPF_WRITES_ALL, 0 },
};
