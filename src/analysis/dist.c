/* analysis/dist — implementation. See dist.h.
 *
 * Map: the core on two arrays (histograms, channel boxes) · resolving requests (sens
 * ranking or names) to values · one twin run that captures the analysis values. */

/* ==== core ========================================================================= */

/* Moves the k-th smallest of a[lo..hi] (inclusive, lo <= k <= hi) to a[k], smaller-or-equal
 * values before it and greater-or-equal ones after (quickselect, median-of-three pivot,
 * Hoare partition: runs of equal values split evenly). */
static void qr__dist_select(double *a, int64_t lo, int64_t hi, int64_t k) {
    while (hi - lo >= 16) {
        int64_t mid = lo + (hi - lo) / 2;
        double t;
#define QR__DIST_SWAP(i, j) (t = a[i], a[i] = a[j], a[j] = t)
        if (a[mid] < a[lo]) QR__DIST_SWAP(lo, mid);
        if (a[hi] < a[lo]) QR__DIST_SWAP(lo, hi);
        if (a[hi] < a[mid]) QR__DIST_SWAP(mid, hi);
        double p = a[mid];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p) i++;
            while (a[j] > p) j--;
            if (i <= j) { QR__DIST_SWAP(i, j); i++; j--; }
        }
#undef QR__DIST_SWAP
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;             /* a[j+1..i-1] all equal p */
    }
    for (int64_t i = lo + 1; i <= hi; i++) {   /* short range: insertion sort */
        double v = a[i];
        int64_t j = i;
        while (j > lo && a[j - 1] > v) { a[j] = a[j - 1]; j--; }
        a[j] = v;
    }
}

/* Ordered 32-bit key of a float value (a double holding a float): the keys' unsigned order is
 * the numeric order, with -0.0 just below +0.0. */
static inline uint32_t qr__dist_fkey(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static inline double qr__dist_funkey(uint32_t k) {
    uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The values at ranks rank[0..nr) (nr <= 6, ascending) of the float values a[0..m) in key order, by
 * radix selection: one pass counts the top 12 bits of every key and one gathers the
 * buckets that hold a wanted rank; the next 12 and the last 8 bits of those resolve it.
 * False (nothing written) when out of memory or the ranks descend somewhere. */
static bool qr__dist_radix_ranks(const double *a, int64_t m, const int64_t *rank, int nr, double *out) {
    uint32_t *key = malloc((size_t)m * sizeof *key + 1), *sub = malloc((size_t)m * sizeof *sub + 1);
    int64_t *h1 = calloc(4096 + 1, sizeof *h1), *h2 = calloc(4096 + 1, sizeof *h2);
    bool ok = key && sub && h1 && h2;
    for (int j = 1; j < nr; j++) ok = ok && rank[j] >= rank[j - 1];
    if (ok) {
        for (int64_t i = 0; i < m; i++) { key[i] = qr__dist_fkey(a[i]); h1[key[i] >> 20]++; }
        /* the wanted buckets, each gathered into its own stretch of sub: rank j's is the first
         * whose keys reach past it (the last bucket at most), found in one walk over the counts
         * (the ranks ascend, as qr__dist_box asks them) */
        int bucket[6], nb = 0, slot_of[6];
        int64_t start[6], base[6], fill[6];
        int16_t slot[4096];
        for (int b = 0; b < 4096; b++) slot[b] = -1;
        int64_t cum = 0;
        for (int b = 0, j = 0; b < 4096 && j < nr; cum += h1[b++])
            for (; j < nr && (cum + h1[b] > rank[j] || b == 4095); j++) {
                if (slot[b] < 0) { slot[b] = (int16_t)nb; start[nb] = cum; bucket[nb++] = b; }
                slot_of[j] = slot[b];
            }
        int64_t off = 0;
        for (int k = 0; k < nb; k++) { base[k] = fill[k] = off; off += h1[bucket[k]]; }
        for (int64_t i = 0; i < m; i++) {
            int sl = slot[key[i] >> 20];
            if (sl >= 0) sub[fill[sl]++] = key[i];
        }
        /* per bucket: bits 19..8 counted once for every rank in it (h2 cleared entry by entry
         * afterwards: a bucket holds far fewer keys than h2 has entries), then 7..0 per rank */
        for (int k = 0; k < nb; k++) {
            const uint32_t *s1 = sub + base[k];
            const int64_t n1 = h1[bucket[k]];
            for (int64_t i = 0; i < n1; i++) h2[(s1[i] >> 8) & 0xfff]++;
            for (int j = 0; j < nr; j++) {
                if (slot_of[j] != k) continue;
                int64_t r = rank[j] - start[k];
                int b2 = 0;
                while (b2 < 4095 && h2[b2] <= r) r -= h2[b2++];
                int64_t h3[256] = {0};
                for (int64_t i = 0; i < n1; i++)
                    if (((s1[i] >> 8) & 0xfff) == (uint32_t)b2) h3[s1[i] & 0xff]++;
                int b3 = 0;
                while (b3 < 255 && h3[b3] <= r) r -= h3[b3++];
                out[j] = qr__dist_funkey(((uint32_t)bucket[k] << 20) | ((uint32_t)b2 << 8) | (uint32_t)b3);
            }
            for (int64_t i = 0; i < n1; i++) h2[(s1[i] >> 8) & 0xfff] = 0;
        }
    }
    free(key);
    free(sub);
    free(h1);
    free(h2);
    return ok;
}

/* Box statistics of the finite float values a[0..m) (reordered): what sorting a and reading
 * min / max and the quartiles (numpy's default: linear interpolation between the closest
 * ranks) off it gives, bit for bit. min and max are the first smallest and the last largest
 * in a's order, as a stable sort leaves them (which of -0.0 and 0.0); the quartiles
 * interpolate between order statistics found by selection (between zeros the interpolation
 * gives +0.0 whatever their signs, so their order among equal values does not matter):
 * radix selection for long channels, quickselect for short ones. */
static void qr__dist_box(double *a, int64_t m, QrChannelBox *b) {
    b->min = b->max = b->q1 = b->median = b->q3 = NAN;
    if (m <= 0) return;
    double mn = a[0], mx = a[0];
    for (int64_t i = 1; i < m; i++) {
        if (a[i] < mn) mn = a[i];
        if (a[i] >= mx) mx = a[i];
    }
    b->min = mn;
    b->max = mx;
    if (m == 1) { b->q1 = b->median = b->q3 = a[0]; return; }
    static const double qs[3] = { 0.25, 0.5, 0.75 };
    double *out[3] = { &b->q1, &b->median, &b->q3 };
    double pos[3];
    int64_t r[3], rank[6];
    int nr = 0;
    for (int k = 0; k < 3; k++) {
        pos[k] = qs[k] * (double)(m - 1);
        r[k] = (int64_t)floor(pos[k]);
        if (r[k] < m - 1) { rank[nr++] = r[k]; rank[nr++] = r[k] + 1; }
    }
    double v[6];
    if (m >= 512 && qr__dist_radix_ranks(a, m, rank, nr, v)) {
        for (int k = 0, j = 0; k < 3; k++) {
            if (r[k] >= m - 1) { *out[k] = mx; continue; }
            *out[k] = v[j] + (v[j + 1] - v[j]) * (pos[k] - (double)r[k]);
            j += 2;
        }
        return;
    }
    int64_t done = -1;           /* a[0..done] hold their order statistics */
    for (int k = 0; k < 3; k++) {
        if (r[k] >= m - 1) { *out[k] = mx; continue; }
        for (int64_t want = r[k]; want <= r[k] + 1; want++)
            if (want > done) { qr__dist_select(a, done + 1, m - 1, want); done = want; }
        *out[k] = a[r[k]] + (a[r[k] + 1] - a[r[k]]) * (pos[k] - (double)r[k]);
    }
}

/* Histogram edges for [lo, hi]; an empty or single-valued range is widened around its value. */
static void qr__dist_edges(double *lo, double *hi) {
    if (!(*lo <= *hi)) { *lo = -0.5; *hi = 0.5; return; }
    if (*lo == *hi) {
        double w = *lo != 0 ? 0.5 * fabs(*lo) : 0.5;
        *lo -= w;
        *hi += w;
    }
}

static inline int qr__dist_bin(double v, double lo, double hi, int n_bins) {
    int k = (int)((v - lo) / (hi - lo) * n_bins);
    return k < 0 ? 0 : k >= n_bins ? n_bins - 1 : k;
}

static QrStatus qr__dist_compute_wd(QrArena *a, const float *x, const float *y, QrWtData *wd, int rank, const int64_t *dims,
                                    int ch_axis, int n_bins, QrDist *d);

/* The per-channel boxes over the pool: channels in groups of about QR__DIST_CH_TASK values, a
 * group a task. A channel's box, mean and absmax depend on its values alone, so the bits are one
 * loop's over the channels at any thread count (tests/test_analysis_extra.c). */
enum { QR__DIST_CH_TASK = 1 << 16 };

typedef struct QrDistChJob {
    const float *x;          /* nch channels of inner values, n in all */
    int64_t n, nch, inner;
    int64_t each;            /* channels per task */
    QrChannelBox *ch;        /* [nch] */
    double *am;              /* [nch]: each channel's absmax */
    int oom;                 /* a task could not get its buffer */
} QrDistChJob;

static void qr__dist_ch_task(void *ctx, int64_t task, int tid) {
    QR_UNUSED(tid);
    QrDistChJob *j = ctx;
    const int64_t c0 = task * j->each, c1 = QR_MIN(j->nch, c0 + j->each);
    const int64_t outer = j->inner > 0 ? j->n / (j->nch * j->inner) : 0;
    double *buf = malloc(((size_t)(j->n / j->nch) + 1) * sizeof(double));
    if (!buf) { __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED); return; }
    for (int64_t c = c0; c < c1; c++) {
        int64_t m = 0;
        double sum = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < j->inner; i++) {
                double v = j->x[(o * j->nch + c) * j->inner + i];
                if (isfinite(v)) { buf[m++] = v; sum += v; }
            }
        QrChannelBox *b = &j->ch[c];
        qr__dist_box(buf, m, b);
        b->mean = m ? sum / (double)m : NAN;
        b->absmax = m ? QR_MAX(fabs(b->min), fabs(b->max)) : 0;
        j->am[c] = b->absmax;
    }
    free(buf);
}

static QrStatus qr_dist_compute(QrArena *a, const float *x, const float *y, int rank, const int64_t *dims, int ch_axis,
                                int n_bins, QrDist *d) {
    return qr__dist_compute_wd(a, x, y, NULL, rank, dims, ch_axis, n_bins, d);
}

/* Elements of a weight's dequantized value the distributions hold at once (qr_weights_wdata_panel; tests set it
 * smaller, 0: the whole weight). */
static int64_t qr__dist_panel = (int64_t)1 << 16;

/* The two passes of qr__dist_compute_wd over chunk c of x / y: pass 1 the finite pairs' count,
 * ranges and abs maxima, pass 2 their histograms (bins on the ranges pass 1 gave). */
enum { QR__DIST_CHUNK = 1 << 16 };
static int64_t qr__dist_par_min = (int64_t)1 << 18;   /* elements from which the chunks go to the pool (tests: 0) */
typedef struct QrDistPart { int64_t n, n_nonfinite; double lo, hi, elo, ehi, am_x, am_y; } QrDistPart;
typedef struct QrDistPassJob {
    const float *x, *y;
    const QrWtData *wd;      /* y's panels (NULL: y whole) */
    int64_t n, step;
    int n_bins;
    QrDistPart *part;        /* per chunk */
    int64_t *hist;           /* per chunk: base, analysis and error bins */
    double lo, hi, elo, ehi; /* pass 2's ranges */
    int pass, oom;
    bool par;                /* the chunks on the pool (else one after another, in wd's own panel) */
} QrDistPassJob;

static void qr__dist_pass_task(void *ctx, int64_t c, int tid) {
    QR_UNUSED(tid);
    QrDistPassJob *j = ctx;
    const int64_t i0 = c * j->step, len = QR_MIN(j->step, j->n - i0);
    const float *yp = j->y + i0;
    float *panel = NULL;
    if (j->wd && j->wd->ny < j->wd->n) {    /* a copy of wd fills the panel (wd's counts stay): wd's own one
                                             * chunk after chunk, one of the task's own on the pool */
        QrWtData t = *j->wd;
        if (j->par && !(t.y = panel = qr_aligned_alloc((size_t)len * sizeof(float)))) {
            __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED);
            return;
        }
        qr_weights_wdata_fill(&t, i0, len);
        yp = t.y;
    }
    const float *xp = j->x + i0;
    if (j->pass == 1) {
        QrDistPart q = { 0, 0, INFINITY, -INFINITY, INFINITY, -INFINITY, 0, 0 };
        for (int64_t i = 0; i < len; i++) {
            double xv = xp[i], yv = yp[i];
            if (!isfinite(xv) || !isfinite(yv)) { q.n_nonfinite++; continue; }
            q.n++;
            q.lo = QR_MIN(q.lo, QR_MIN(xv, yv));
            q.hi = QR_MAX(q.hi, QR_MAX(xv, yv));
            q.elo = QR_MIN(q.elo, yv - xv);
            q.ehi = QR_MAX(q.ehi, yv - xv);
            q.am_x = QR_MAX(q.am_x, fabs(xv));
            q.am_y = QR_MAX(q.am_y, fabs(yv));
        }
        j->part[c] = q;
    } else {
        const int nb = j->n_bins;
        int64_t *hb = j->hist + (size_t)c * 3 * (size_t)nb, *ha = hb + nb, *he = ha + nb;
        for (int64_t i = 0; i < len; i++) {
            double xv = xp[i], yv = yp[i];
            if (!isfinite(xv) || !isfinite(yv)) continue;
            hb[qr__dist_bin(xv, j->lo, j->hi, nb)]++;
            ha[qr__dist_bin(yv, j->lo, j->hi, nb)]++;
            he[qr__dist_bin(yv - xv, j->elo, j->ehi, nb)]++;
        }
    }
    qr_aligned_free(panel);
}

static void qr__dist_passes(QrDistPassJob *j, int64_t nc, int pass) {
    j->pass = pass;
    j->par = j->n >= qr__dist_par_min && qr_pool_threads() > 1;
    if (j->par) qr_pool_for(nc, qr__dist_pass_task, j);
    else for (int64_t c = 0; c < nc; c++) qr__dist_pass_task(j, c, 0);
}

/* qr_dist_compute, y given by wd when not NULL (y = wd->y, whole or a panel: both passes over y fill
 * the panels again, in element order, so the result is the whole y's). */
static QrStatus qr__dist_compute_wd(QrArena *a, const float *x, const float *y, QrWtData *wd, int rank, const int64_t *dims,
                                    int ch_axis, int n_bins, QrDist *d) {
    if (!y) y = x;
    if (n_bins <= 0) n_bins = QR_DIST_BINS;
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims[k];
    d->rank = rank;
    memcpy(d->dims, dims, (size_t)rank * sizeof(int64_t));
    d->n_bins = n_bins;
    d->h_base = qr_arena_array(a, (size_t)n_bins, sizeof(int64_t));
    d->h_anal = qr_arena_array(a, (size_t)n_bins, sizeof(int64_t));
    d->h_err = qr_arena_array(a, (size_t)n_bins, sizeof(int64_t));
    if (!d->h_base || !d->h_anal || !d->h_err) return qr_errf(QR_ERR_NOMEM, "out of memory");
    /* the two passes by chunks of `step` elements (a panel of y), on the pool for a long tensor:
     * ranges folded chunk after chunk (QR_MIN / QR_MAX keep the later of equal values, within a
     * chunk and across: one loop's result), histograms added */
    const int64_t step = wd && wd->ny < wd->n ? wd->ny : QR_MIN(QR_MAX(n, 1), QR__DIST_CHUNK);
    const int64_t nc = n > 0 ? (n + step - 1) / step : 0;
    QrDistPassJob j = { .x = x, .y = y, .wd = wd, .n = n, .step = step, .n_bins = n_bins };
    j.part = calloc((size_t)nc + 1, sizeof *j.part);
    if (!j.part) return qr_errf(QR_ERR_NOMEM, "out of memory");
    qr__dist_passes(&j, nc, 1);
    double lo = INFINITY, hi = -INFINITY, elo = INFINITY, ehi = -INFINITY;
    d->n = d->n_nonfinite = 0;
    d->absmax_base = d->absmax_anal = 0;
    for (int64_t c = 0; c < nc && !j.oom; c++) {
        const QrDistPart *q = &j.part[c];
        d->n += q->n;
        d->n_nonfinite += q->n_nonfinite;
        lo = QR_MIN(lo, q->lo);
        hi = QR_MAX(hi, q->hi);
        elo = QR_MIN(elo, q->elo);
        ehi = QR_MAX(ehi, q->ehi);
        d->absmax_base = QR_MAX(d->absmax_base, q->am_x);
        d->absmax_anal = QR_MAX(d->absmax_anal, q->am_y);
    }
    qr__dist_edges(&lo, &hi);
    qr__dist_edges(&elo, &ehi);
    d->lo = lo; d->hi = hi; d->err_lo = elo; d->err_hi = ehi;
    j.lo = lo; j.hi = hi; j.elo = elo; j.ehi = ehi;
    if (!j.oom) {
        j.hist = calloc((size_t)nc * 3 * (size_t)n_bins + 1, sizeof *j.hist);
        if (j.hist) qr__dist_passes(&j, nc, 2);
    }
    for (int64_t c = 0; j.hist && !j.oom && c < nc; c++)
        for (int b = 0; b < n_bins; b++) {
            const int64_t *h = j.hist + (size_t)c * 3 * (size_t)n_bins;
            d->h_base[b] += h[b];
            d->h_anal[b] += h[n_bins + b];
            d->h_err[b] += h[2 * n_bins + b];
        }
    bool oom = j.oom || !j.hist;
    free(j.part);
    free(j.hist);
    if (oom) return qr_errf(QR_ERR_NOMEM, "out of memory");
    /* Per-channel boxes of the baseline values. */
    if (ch_axis >= rank) ch_axis = -1;
    int64_t nch = ch_axis >= 0 ? dims[ch_axis] : 1, inner = 1;
    for (int k = ch_axis + 1; ch_axis >= 0 && k < rank; k++) inner *= dims[k];
    if (ch_axis < 0) inner = n;
    d->ch_axis = ch_axis;
    d->n_ch = (int)nch;
    d->n_outlier = 0;
    d->ch = qr_arena_array(a, (size_t)nch + 1, sizeof(QrChannelBox));
    double *am = malloc(((size_t)nch + 1) * sizeof(double));
    if (!d->ch || !am) { free(am); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    if (nch > 0) {
        int64_t per = n / nch, each = QR_MAX(1, QR__DIST_CH_TASK / QR_MAX(per, 1));
        QrDistChJob j = { x, n, nch, inner, each, d->ch, am, 0 };
        qr_pool_for((nch + each - 1) / each, qr__dist_ch_task, &j);
        if (j.oom) { free(am); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    }
    if (nch > 1) {
        double *tmp = malloc(((size_t)nch + 1) * sizeof(double));
        if (!tmp) { free(am); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
        memcpy(tmp, am, (size_t)nch * sizeof(double));
        double lim = qr_weights_outlier_limit(am, nch, qr_weights_median(tmp, nch), QR_OUTLIER_K);
        for (int64_t c = 0; c < nch; c++)
            if (am[c] > lim) { d->ch[c].outlier = true; d->n_outlier++; }
        free(tmp);
    }
    free(am);
    return QR_OK;
}

/* ==== requests ===================================================================== */

typedef struct QrDistReq {
    bool weight;
    int q;                   /* quantizer (weights: required; activations: -1 when none) */
    int match;               /* activations: match index, or -1 for a graph input */
    int input;               /* activations without a match: graph input index */
    int value;               /* activations: twin value captured from the analysis run */
    const char *name, *node;
    char own_name[256];      /* name when it is made here (a weight named after its node) */
} QrDistReq;

typedef struct QrDistReqs { QrDistReq r[256]; int n; } QrDistReqs;

static bool qr__dist_req_has(const QrDistReqs *rs, bool weight, int q, int match) {
    for (int k = 0; k < rs->n; k++)
        if (rs->r[k].weight == weight && (weight ? rs->r[k].q == q : (rs->r[k].match == match && rs->r[k].q == q))) return true;
    return false;
}

/* Whether a tensor name was made up by an exporter's constant folding ("onnx::Conv_12",
 * "onnx__QuantizeLinear_911", "471"): such weights are named after their node instead. */
static bool qr__dist_generated_name(const char *nm) {
    return !strncmp(nm, "onnx::", 6) || !strncmp(nm, "onnx__", 6) || isdigit((unsigned char)nm[0]);
}

/* Analysis node name of a twin node. */
static const char *qr_dist_node_name(const QrSession *s, int twin_node) {
    if (twin_node < 0) return "";
    int src = s->tw.origin[twin_node];
    return src >= 0 ? s->a->nodes[src].name : s->tw.g.nodes[twin_node].name;
}

/* Match whose visible value is v, -1 if none. */
static int qr_dist_match_of_value(const QrSession *s, int v) {
    for (int i = 0; i < s->m.n; i++) if (v >= 0 && s->vis[i] == v) return i;
    return -1;
}

/* Activation quantizer whose DequantizeLinear output is v, -1 if none. */
static int qr_dist_act_quant_of(const QrSession *s, int v) {
    int q = v >= 0 ? s->qt.by_value[v] : -1;
    return q >= 0 && s->qt.q[q].kind == QR_QK_ACTIVATION && s->qt.q[q].out_value == v ? q : -1;
}

static bool qr__dist_add_match(const QrSession *s, QrDistReqs *rs, int i) {
    if (rs->n == QR_ARRAY_LEN(rs->r) || s->vis[i] < 0) return false;
    int q = qr_dist_act_quant_of(s, s->vis[i]);
    if (qr__dist_req_has(rs, false, q, i)) return true;
    const QrMatch *mm = &s->m.m[i];
    rs->r[rs->n++] = (QrDistReq){ false, q, i, -1, s->vis[i], s->b->values[mm->b_value].name, s->a->nodes[mm->a_node].name, "" };
    return true;
}

/* Adds the request for quantizer q; returns false with a note when it has no data. */
static bool qr__dist_add_quant(const QrSession *s, QrDistReqs *rs, int qi, QrDistSet *out) {
    const QrQuantizer *q = &s->qt.q[qi];
    const QrGraph *g = &s->tw.g;
    if (rs->n == QR_ARRAY_LEN(rs->r)) return false;
    if (q->kind == QR_QK_WEIGHT) {
        if (qr__dist_req_has(rs, true, qi, -1)) return true;
        const char *nm = q->float_value >= 0 ? g->values[q->float_value].name : g->values[q->int_value].name;
        if (s->fw[qi]) { const char *b = qr_weights_base_name(s->b, s->fw[qi]); if (b) nm = b; }
        QrDistReq *r = &rs->r[rs->n++];
        *r = (QrDistReq){ true, qi, -1, -1, -1, nm, qr_dist_node_name(s, q->owner), "" };
        if (qr__dist_generated_name(nm) && r->node[0]) {
            /* a constant-folded tensor name says nothing: the node that uses the weight does */
            snprintf(r->own_name, sizeof r->own_name, "%s.weight", r->node);
            r->name = r->own_name;
        }
        return true;
    }
    if (q->kind != QR_QK_ACTIVATION || q->out_value < 0) {
        if (!out->note[0]) snprintf(out->note, sizeof out->note, "quantizer on '%s' has no dequantized value",
                                    g->values[q->int_value].name);
        return false;
    }
    int i = qr_dist_match_of_value(s, q->out_value);
    if (i >= 0) {
        if (qr__dist_req_has(rs, false, qi, i)) return true;
        const QrMatch *mm = &s->m.m[i];
        rs->r[rs->n++] = (QrDistReq){ false, qi, i, -1, q->out_value, s->b->values[mm->b_value].name, s->a->nodes[mm->a_node].name, "" };
        return true;
    }
    for (int k = 0; k < g->n_inputs; k++)
        if (g->inputs[k] == q->float_value) {
            rs->r[rs->n++] = (QrDistReq){ false, qi, -1, k, q->out_value, g->values[q->float_value].name, "", "" };
            return true;
        }
    if (!out->note[0])
        snprintf(out->note, sizeof out->note, "activation '%s' has no baseline counterpart", g->values[q->out_value].name);
    return false;
}

/* Resolves one user-given name (see dist.h). */
static QrStatus qr__dist_add_name(const QrSession *s, QrDistReqs *rs, const char *name, QrDistSet *out) {
    const QrGraph *g = &s->tw.g;
    if (rs->n == QR_ARRAY_LEN(rs->r))
        return qr_errf(QR_ERR_INVALID, "--plot-nodes: more than %d values requested", QR_ARRAY_LEN(rs->r));
    for (int i = 0; i < s->m.n; i++) {
        const QrMatch *mm = &s->m.m[i];
        if (!strcmp(s->b->nodes[mm->b_node].name, name) || (mm->a_node >= 0 && !strcmp(s->a->nodes[mm->a_node].name, name))) {
            if (qr__dist_add_match(s, rs, i)) return QR_OK;
        }
    }
    for (int n = 0; n < g->n_nodes; n++) {
        if (strcmp(g->nodes[n].name, name)) continue;
        bool any = false;
        for (int qi = 0; qi < s->qt.n; qi++)
            if (s->qt.q[qi].owner == n && s->qt.q[qi].kind != QR_QK_BIAS) any |= qr__dist_add_quant(s, rs, qi, out);
        if (any) return QR_OK;
    }
    int v = qr_graph_find(g, name);
    for (int qi = 0; v >= 0 && qi < s->qt.n; qi++) {
        const QrQuantizer *q = &s->qt.q[qi];
        if (q->kind != QR_QK_BIAS && (q->float_value == v || q->int_value == v || q->out_value == v) &&
            qr__dist_add_quant(s, rs, qi, out)) return QR_OK;
    }
    int vb = qr_graph_find(s->b, name);
    for (int i = 0; vb >= 0 && i < s->m.n; i++)
        if (s->m.m[i].b_value == vb && qr__dist_add_match(s, rs, i)) return QR_OK;
    for (int qi = 0; vb >= 0 && qi < s->qt.n; qi++)
        if (s->fw[qi] == &s->b->values[vb].t && qr__dist_add_quant(s, rs, qi, out)) return QR_OK;
    return qr_errf(QR_ERR_INVALID, "--plot-nodes: '%s' is no node, weight or value of %s or %s (or has no data to plot)",
                   name, s->b->path ? s->b->path : "the baseline", s->a->path ? s->a->path : "the analysis model");
}

/* The top QR_DIST_TOPK weights and activations of a sensitivity ranking. */
static QrStatus qr__dist_add_sens(const QrSession *s, QrDistReqs *rs, const QrSensResult *sens, QrDistSet *out) {
    int nw = 0, na = 0;
    int *idx = malloc(((size_t)sens->n + 1) * sizeof(int));
    if (!idx) return qr_errf(QR_ERR_NOMEM, "out of memory");
    qr_sens_order(sens, idx);
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < sens->n; k++) {
            const QrSensRow *row = &sens->rows[idx[k]];
            if ((row->type == QR_SENS_BOTH) != (pass == 1)) continue;
            for (int j = 0; j < row->n_q; j++) {
                int qi = row->q[j];
                bool w = s->qt.q[qi].kind == QR_QK_WEIGHT;
                if ((w ? nw : na) >= QR_DIST_TOPK) continue;
                if (qr__dist_req_has(rs, w, qi, w ? -1 : qr_dist_match_of_value(s, s->qt.q[qi].out_value))) continue;
                if (qr__dist_add_quant(s, rs, qi, out)) { if (w) nw++; else na++; }
                else out->n_skipped++;
            }
        }
    free(idx);
    return QR_OK;
}

/* ==== analysis run ================================================================= */

typedef struct QrDistCapture { const QrSession *s; const QrDistReqs *rs; QrTensor *vals; } QrDistCapture;

static QrStatus qr__dist_capture_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrDistCapture *c = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    for (int k = 0; k < c->rs->n; k++) {
        const QrDistReq *r = &c->rs->r[k];
        if (r->weight || r->value != value || c->vals[k].data) continue;
        if (r->match >= 0) QR_TRY(qr_session_visible_f32(c->s, r->match, t, &c->vals[k]));
        else QR_TRY(qr_tensor_to_f32(t, &c->vals[k]));
    }
    return QR_OK;
}

/* The distribution of request k into d[k] (memory from arenas[k]); skip[k] = 1 for a weight
 * without constant data / scale, 2 for a value not computed by both models (QrSeJobFn). */
typedef struct QrDistJob {
    const QrSession *s;
    const QrDistReqs *rs;
    const QrTensor *vals;    /* per request: the analysis value captured (activations) */
    int n_bins;
    QrDist *d;
    QrArena *arenas;
    int *skip;
    bool have_axis;          /* --channel-axis: the box plots' axis for every value (negative: from the end) */
    int axis;
} QrDistJob;

/* The channel axis of a value of rank `rank`: the one asked for, else dflt. */
static QrStatus qr__dist_axis(const QrDistJob *j, const char *name, int rank, int dflt, int *out) {
    *out = dflt;
    if (!j->have_axis) return QR_OK;
    int ax = j->axis < 0 ? j->axis + rank : j->axis;
    if (ax < 0 || ax >= rank)
        return qr_errf(QR_ERR_INVALID, "--channel-axis %d: '%s' has rank %d (axes %d..%d)", j->axis, name, rank, -rank,
                       rank - 1);
    *out = ax;
    return QR_OK;
}

static QrStatus qr__dist_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrDistJob *j = ctx;
    const QrSession *s = j->s;
    const QrDistReq *r = &j->rs->r[k];
    QrArena *ar = &j->arenas[k];
    QrDist *d = &j->d[k];
    memset(d, 0, sizeof *d);
    d->name = qr_arena_strdup(ar, r->name);
    d->node = qr_arena_strdup(ar, r->node);
    d->is_weight = r->weight;
    d->q = r->q;
    d->match = r->weight ? -1 : r->match;
    d->clip_lo = d->clip_hi = d->threshold = NAN;
    QrStatus st = QR_OK;
    if (r->weight) {
        QrWtData wd;
        QR_TRY(qr_weights_wdata_panel(s, r->q, qr__dist_panel, &wd));
        if (!wd.ok) {
            j->skip[k] = 1;
            qr_weights_wdata_free(&wd);
            return QR_OK;
        }
        int ax;
        st = qr__dist_axis(j, r->name, wd.shape->rank, qr_weight_channel_axis(&s->tw.g, &s->qt.q[r->q], wd.shape->rank), &ax);
        if (st == QR_OK) st = qr__dist_compute_wd(ar, wd.x, wd.y, &wd, wd.shape->rank, wd.shape->dims, ax, j->n_bins, d);
        d->clip_lo = wd.clip_lo;
        d->clip_hi = wd.clip_hi;
        qr_weights_wdata_free(&wd);
    } else {
        const QrTensor *x = r->match >= 0 ? &s->base[r->match] : &s->inputs[r->input];
        QrTensor xf = {0};
        const QrTensor *y = &j->vals[k];
        if (!x->data || !y->data || x->numel != y->numel) {
            j->skip[k] = 2;
            return QR_OK;
        }
        const float *px = x->data;
        if (x->dtype != QR_DT_F32) {
            st = qr_tensor_to_f32(x, &xf);
            px = xf.data;
        }
        int ax = -1;
        if (st == QR_OK) st = qr__dist_axis(j, r->name, x->rank, x->rank >= 2 ? 1 : -1, &ax);
        if (st == QR_OK) st = qr_dist_compute(ar, px, y->data, x->rank, x->dims, ax, j->n_bins, d);
        qr_tensor_free_data(&xf);
        if (st == QR_OK && r->q >= 0) qr_weights_clip_range(&s->tw.g, &s->qt.q[r->q], &d->clip_lo, &d->clip_hi);
    }
    if (st == QR_OK && d->clip_hi == d->clip_hi) d->threshold = d->clip_hi > 0 ? d->clip_hi : -d->clip_lo;
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_dist_collect(QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                                int n_bins, QrDistSet *out) {
    return qr_dist_collect_axis(s, sens, names, n_names, n_bins, false, 0, NULL, out);
}
#endif

/* The requests for sens / names (qr_dist_collect_axis) into rs, and into want (optional, per match)
 * the baseline values of their rows. */
static QrStatus qr__dist_reqs(const QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                              QrDistReqs *rs, bool *want, QrDistSet *out) {
    QrStatus st = QR_OK;
    if (n_names > 0) for (int k = 0; st == QR_OK && k < n_names; k++) st = qr__dist_add_name(s, rs, names[k], out);
    else if (sens) st = qr__dist_add_sens(s, rs, sens, out);
    for (int k = 0; st == QR_OK && want && k < rs->n; k++) if (!rs->r[k].weight && rs->r[k].match >= 0) want[rs->r[k].match] = true;
    return st;
}

static QrStatus qr_dist_base_want(const QrSession *s, const QrSensResult *sens, const char *const *names, int n_names, bool *want) {
    QrDistReqs *rs = calloc(1, sizeof *rs);
    QrDistSet tmp = { 0 };
    QrStatus st = rs ? qr__dist_reqs(s, sens, names, n_names, rs, want, &tmp) : qr_errf(QR_ERR_NOMEM, "out of memory");
    qr_dist_free(&tmp);
    free(rs);
    return st;
}

/* The activations of the distributions' rows, captured by a run made for something else (dist.h). */
struct QrDistRide {
    QrDistReqs rs;
    QrTensor *vals;          /* per request */
    bool *only;              /* per twin value: a request's */
    QrDistCapture cap;
};

static void qr_dist_ride_free(QrDistRide *f) {
    if (!f) return;
    for (int k = 0; f->vals && k < f->rs.n; k++) qr_tensor_free_data(&f->vals[k]);
    free(f->vals);
    free(f->only);
    free(f);
}

static QrStatus qr_dist_ride_begin(const QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                                   QrDistRide **out, QrTapFn *tap, void **user, const bool **tap_only) {
    *out = NULL;
    QrDistRide *f = calloc(1, sizeof *f);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrDistSet tmp = { 0 };
    QrStatus st = qr__dist_reqs(s, sens, names, n_names, &f->rs, NULL, &tmp);
    qr_dist_free(&tmp);
    f->vals = calloc((size_t)f->rs.n + 1, sizeof *f->vals);
    f->only = calloc((size_t)s->tw.g.n_values + 1, sizeof *f->only);
    if (st == QR_OK && (!f->vals || !f->only)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st != QR_OK) { qr_dist_ride_free(f); return st; }
    for (int k = 0; k < f->rs.n; k++) if (!f->rs.r[k].weight && f->rs.r[k].value >= 0) f->only[f->rs.r[k].value] = true;
    f->cap = (QrDistCapture){ s, &f->rs, f->vals };
    *tap = qr__dist_capture_tap;
    *user = &f->cap;
    *tap_only = f->only;
    *out = f;
    return QR_OK;
}

/* The ride's captured values into vals when it holds the same requests as rs (else nothing). */
static void qr__dist_ride_take(QrDistRide *f, const QrDistReqs *rs, QrTensor *vals) {
    if (!f || f->rs.n != rs->n) return;
    for (int k = 0; k < rs->n; k++) {
        const QrDistReq *a = &f->rs.r[k], *b = &rs->r[k];
        if (a->weight != b->weight || a->q != b->q || a->match != b->match || a->input != b->input || a->value != b->value) return;
    }
    for (int k = 0; k < rs->n; k++)
        if (f->vals[k].data && !vals[k].data) { vals[k] = f->vals[k]; memset(&f->vals[k], 0, sizeof f->vals[k]); }
}

static QrStatus qr_dist_collect_axis(QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                                     int n_bins, bool have_axis, int axis, QrDistRide *ride, QrDistSet *out) {
    memset(out, 0, sizeof *out);
    QR_TRY(qr_session_run_baseline(s));
    QrDistReqs *rs = calloc(1, sizeof *rs);
    if (!rs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bool *want = calloc((size_t)s->m.n + 1, sizeof *want);   /* the baseline values of its rows (qr_session_base_need) */
    QrStatus st = want ? qr__dist_reqs(s, sens, names, n_names, rs, want, out) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_session_base_need(s, want);
    free(want);
    QrTensor *vals = calloc((size_t)rs->n + 1, sizeof(QrTensor));
    out->d = qr_arena_array(&out->arena, (size_t)rs->n + 1, sizeof(QrDist));
    if (st == QR_OK && (!vals || !out->d)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    /* Activations: captured by the ride, else from the all-on reference when it kept them, else one run
     * that keeps them. */
    if (st == QR_OK) qr__dist_ride_take(ride, rs, vals);
    QrDistCapture cap = { s, rs, vals };
    bool need_run = false;
    for (int k = 0; st == QR_OK && k < rs->n; k++) {
        const QrDistReq *r = &rs->r[k];
        if (r->weight) continue;
        const QrTensor *t = s->ref && !s->no_incremental && r->value >= 0 ? &s->ref->vals[r->value] : NULL;
        if (vals[k].data) continue;
        if (t && t->data) st = qr__dist_capture_tap(&cap, &s->tw.g, s->tw.g.values[r->value].producer, r->value, t);
        else need_run = true;
    }
    bool *only = need_run ? calloc((size_t)s->tw.g.n_values + 1, sizeof *only) : NULL;
    if (st == QR_OK && need_run && !only) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK && need_run) {
        for (int k = 0; k < rs->n; k++) if (!rs->r[k].weight && rs->r[k].value >= 0) only[rs->r[k].value] = true;
        QrOverrides ov = {0};
        st = qr_session_overrides_alloc(s, &ov);
        if (st == QR_OK) {
            qr_session_overrides(s, NULL, &ov);
            QrRunOpts ro = qr_session_run_opts(&ov, qr__dist_capture_tap, &cap);
            ro.tap_only = only;
            if (s->ref) ro.cache = s->ref->consts;
            st = qr_run(&s->tw.g, s->inputs, &ro, NULL);
            if (st != QR_OK) st = qr_err_wrap(st, "distributions: running the analysis model");
        }
        qr_session_overrides_free(&ov);
    }
    free(only);
    /* One job per value; the set keeps the values computed, in request order. */
    QrDist *dk = calloc((size_t)rs->n + 1, sizeof *dk);
    int *skip = calloc((size_t)rs->n + 1, sizeof *skip);
    out->arenas = calloc((size_t)rs->n + 1, sizeof *out->arenas);
    out->n_arenas = out->arenas ? rs->n : 0;
    if (st == QR_OK && (!dk || !skip || !out->arenas)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    QrDistJob job = { s, rs, vals, n_bins, dk, out->arenas, skip, have_axis, axis };
    if (st == QR_OK) st = qr_session_jobs(s, rs->n, qr__dist_job, &job, &s->progress);
    for (int k = 0; st == QR_OK && k < rs->n; k++) {
        const QrDistReq *r = &rs->r[k];
        if (skip[k]) {
            out->n_skipped++;
            if (!out->note[0] && skip[k] == 1) snprintf(out->note, sizeof out->note, "weight '%s' has no constant data/scale", r->name);
            if (!out->note[0] && skip[k] == 2) snprintf(out->note, sizeof out->note, "value '%s' was not computed by both models", r->name);
            continue;
        }
        out->d[out->n++] = dk[k];
    }
    free(dk);
    free(skip);
    if (vals) for (int k = 0; k < rs->n; k++) qr_tensor_free_data(&vals[k]);
    free(vals);
    free(rs);
    if (st != QR_OK) qr_dist_free(out);
    return st;
}

static void qr_dist_free(QrDistSet *ds) {
    for (int k = 0; ds->arenas && k < ds->n_arenas; k++) qr_arena_free(&ds->arenas[k]);
    free(ds->arenas);
    qr_arena_free(&ds->arena);
    memset(ds, 0, sizeof *ds);
}

/* ==== over a data set ================================================================ */

static void qr_dist_acc_free(QrDistAcc *acc) {
    for (int i = 0; acc->a && i < acc->n; i++) {
        QrDistAcc1 *a = &acc->a[i];
        for (int c = 0; a->sk && c < a->n_ch; c++) qr_sketch_free(&a->sk[c]);
        free(a->sk);
        free(a->ch_sum);
        free(a->h);
    }
    free(acc->a);
    memset(acc, 0, sizeof *acc);
}

/* a's fixed bins from quantizer q's grid [clip_lo, clip_hi] (dist.h). */
static void qr__dist_acc_bins(QrDistAcc1 *a, const QrQuantizer *q, double clip_lo, double clip_hi) {
    a->n_bins = QR_DIST_BINS;
    double w = clip_hi - clip_lo, step = q->scale_max == q->scale_max && q->scale_max > 0 ? q->scale_max : w / 255;
    a->lo = clip_lo - w / 8;
    a->hi = clip_hi + w / 8;
    a->err_lo = -4 * step;
    a->err_hi = 4 * step;
}

/* a's geometry (a value of rank `rank`, channels n_ch along ch_axis as qr_dist_compute counts
 * them) and its per-channel sketches and sums. */
static QrStatus qr__dist_acc_geo(QrDistAcc1 *a, int ch_axis, int n_ch, int rank, const int64_t *dims) {
    a->ch_axis = ch_axis;
    a->n_ch = n_ch > 0 ? n_ch : 1;
    a->numel = 1;
    for (int k = 0; k < rank; k++) a->numel *= dims[k];
    a->inner = 1;
    for (int k = ch_axis + 1; ch_axis >= 0 && k < rank; k++) a->inner *= dims[k];
    if (ch_axis < 0) a->inner = a->numel;
    a->sk = calloc((size_t)a->n_ch, sizeof *a->sk);
    a->ch_sum = calloc((size_t)a->n_ch, sizeof *a->ch_sum);
    if (!a->sk || !a->ch_sum) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int c = 0; c < a->n_ch; c++) qr_sketch_init(&a->sk[c], QR_SKETCH_K);
    a->geo = true;
    return QR_OK;
}

static QrStatus qr_dist_acc_init(QrDistAcc *acc, const QrSession *s, const QrDistSet *ds) {
    memset(acc, 0, sizeof *acc);
    acc->a = calloc((size_t)ds->n + 1, sizeof *acc->a);
    if (!acc->a) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ds->n; i++) {
        const QrDist *d = &ds->d[i];
        if (d->is_weight || d->match < 0 || d->q < 0 || !(d->clip_hi > d->clip_lo)) continue;
        QrDistAcc1 *a = &acc->a[acc->n++];
        a->d = i;
        a->match = d->match;
        qr__dist_acc_bins(a, &s->qt.q[d->q], d->clip_lo, d->clip_hi);
        a->h = calloc(3 * ((size_t)a->n_bins + 2), sizeof *a->h);
        QrStatus st = a->h ? qr__dist_acc_geo(a, d->ch_axis, d->n_ch, d->rank, d->dims) : qr_errf(QR_ERR_NOMEM, "out of memory");
        if (st != QR_OK) { qr_dist_acc_free(acc); return st; }
    }
    return QR_OK;
}

static QrStatus qr_dist_acc_init_all(QrDistAcc *acc, const QrSession *s, bool have_axis, int axis, const char *const *names,
                                     int n_names) {
    memset(acc, 0, sizeof *acc);
    acc->have_axis = have_axis;
    acc->axis = axis;
    QrDistReqs *rs = calloc(1, sizeof *rs);
    QrDistSet notes = {0};       /* (the resolution's notes; the distributions stage reports them) */
    if (!rs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    /* a name that resolves to nothing fails the distributions stage later, with its message */
    for (int k = 0; k < n_names; k++) if (qr__dist_add_name(s, rs, names[k], &notes) != QR_OK) qr_err_clear();
    acc->a = calloc((size_t)rs->n + 1, sizeof *acc->a);
    if (!acc->a) { free(rs); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int k = 0; k < rs->n; k++) {
        const QrDistReq *r = &rs->r[k];
        double lo = NAN, hi = NAN;
        if (!r->weight && r->match >= 0 && r->q >= 0) qr_weights_clip_range(&s->tw.g, &s->qt.q[r->q], &lo, &hi);
        if (!(hi > lo)) continue;
        QrDistAcc1 *a = &acc->a[acc->n++];
        a->d = -1;
        a->match = r->match;
        qr__dist_acc_bins(a, &s->qt.q[r->q], lo, hi);
        a->h = calloc(3 * ((size_t)a->n_bins + 2), sizeof *a->h);
        if (!a->h) { free(rs); qr_dist_acc_free(acc); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    }
    free(rs);
    return QR_OK;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI QrStatus qr_dist_acc_init_like(QrDistAcc *acc, const QrDistAcc *like) {
    memset(acc, 0, sizeof *acc);
    acc->a = calloc((size_t)like->n + 1, sizeof *acc->a);
    if (!acc->a) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < like->n; i++) {
        const QrDistAcc1 *l = &like->a[i];
        QrDistAcc1 *a = &acc->a[acc->n++];
        *a = (QrDistAcc1){ .d = l->d, .match = l->match, .n_bins = l->n_bins, .lo = l->lo, .hi = l->hi, .err_lo = l->err_lo,
                           .err_hi = l->err_hi, .ch_axis = l->ch_axis, .n_ch = l->n_ch, .inner = l->inner, .numel = l->numel };
        a->h = calloc(3 * ((size_t)a->n_bins + 2), sizeof *a->h);
        a->sk = calloc((size_t)a->n_ch, sizeof *a->sk);
        a->ch_sum = calloc((size_t)a->n_ch, sizeof *a->ch_sum);
        if (!a->h || !a->sk || !a->ch_sum) { qr_dist_acc_free(acc); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
        for (int c = 0; c < a->n_ch; c++) qr_sketch_init(&a->sk[c], l->n_ch && l->sk ? l->sk[c].k : QR_SKETCH_K);
    }
    return QR_OK;
}
#endif

/* Bin of v on [lo, hi] in n bins, 0 below, n + 1 above (the last bin closed). */
static inline int qr__dist_bin2(double v, double lo, double hi, int n) {
    if (v < lo) return 0;
    if (v > hi) return n + 1;
    int k = (int)((v - lo) / (hi - lo) * n);
    return 1 + (k >= n ? n - 1 : k);
}

static QrStatus qr_dist_acc_pair(QrDistAcc *acc, int match, const float *x, const float *y, int64_t n) {
    for (int i = 0; i < acc->n; i++) {
        QrDistAcc1 *a = &acc->a[i];
        if (a->match != match || a->filled) continue;
        if (n != a->numel)
            return qr_errf(QR_ERR_SHAPE, "distribution of match %d: %lld values, %lld expected", match, (long long)n,
                           (long long)a->numel);
        int nb = a->n_bins;
        int64_t *hb = a->h, *ha = a->h + nb + 2, *he = a->h + 2 * (nb + 2);
        for (int64_t e = 0; e < n; e++) {
            double xv = x[e], yv = y[e];
            if (!isfinite(xv) || !isfinite(yv)) { a->n_nonfinite++; continue; }
            a->n++;
            hb[qr__dist_bin2(xv, a->lo, a->hi, nb)]++;
            ha[qr__dist_bin2(yv, a->lo, a->hi, nb)]++;
            he[qr__dist_bin2(yv - xv, a->err_lo, a->err_hi, nb)]++;
            if (fabs(xv) > a->absmax_base) a->absmax_base = fabs(xv);
            if (fabs(yv) > a->absmax_anal) a->absmax_anal = fabs(yv);
        }
        int64_t outer = n / ((int64_t)a->n_ch * a->inner);
        for (int c = 0; c < a->n_ch; c++) {
            double sum = 0;
            for (int64_t o = 0; o < outer; o++) {
                const float *p = x + (o * a->n_ch + c) * a->inner;
                QR_TRY(qr_sketch_add_f32(&a->sk[c], p, a->inner));
                for (int64_t j = 0; j < a->inner; j++) if (isfinite(p[j])) sum += p[j];
            }
            qr_dsacc_xsum_add(&a->ch_sum[c], sum);
        }
    }
    return QR_OK;
}

/* A candidate's geometry from the baseline value x (s->base[match]), as qr__dist_job and
 * qr_dist_compute choose it on one input; false: no distribution of it could be asked for with
 * these options (an axis outside its rank) or its values are not x's. */
static bool qr__dist_acc_cand_geo(QrDistAcc *acc, QrDistAcc1 *a, const QrTensor *x, int64_t n, QrStatus *st) {
    int ax = x->rank >= 2 ? 1 : -1;
    if (acc->have_axis) ax = acc->axis < 0 ? acc->axis + x->rank : acc->axis;
    if (ax < 0 && acc->have_axis) return false;
    if (ax >= x->rank) { if (acc->have_axis) return false; ax = -1; }
    int64_t nch = ax >= 0 ? x->dims[ax] : 1;
    *st = qr__dist_acc_geo(a, ax, (int)nch, x->rank, x->dims);
    return *st == QR_OK && a->numel == n;
}

static QrStatus qr_dist_acc_pair_all(QrDistAcc *acc, const QrSession *s, int match, const float *x, const float *y, int64_t n) {
    for (int i = 0; i < acc->n; i++) {
        QrDistAcc1 *a = &acc->a[i];
        if (a->match != match || a->geo) continue;
        const QrTensor *xt = &s->base[match];
        QrStatus st = QR_OK;
        if (xt->data != (const void *)x || !qr__dist_acc_cand_geo(acc, a, xt, n, &st)) a->match = -1;   /* dropped */
        QR_TRY(st);
    }
    return qr_dist_acc_pair(acc, match, x, y, n);
}

static int qr_dist_acc_take(QrDistAcc *want, QrDistAcc *all) {
    int pending = 0;
    for (int i = 0; i < want->n; i++) {
        QrDistAcc1 *w = &want->a[i];
        QrDistAcc1 *c = NULL;
        for (int j = 0; !w->filled && !c && j < all->n; j++) {
            QrDistAcc1 *x = &all->a[j];
            if (x->match == w->match && x->geo && x->n_bins == w->n_bins && x->lo == w->lo && x->hi == w->hi &&
                x->err_lo == w->err_lo && x->err_hi == w->err_hi && x->ch_axis == w->ch_axis && x->n_ch == w->n_ch &&
                x->inner == w->inner && x->numel == w->numel) c = x;
        }
        if (!c) { pending += !w->filled; continue; }
        QrDistAcc1 t = *w;           /* swap: the candidate's data into w, w's empty arrays freed with all */
        *w = *c;
        w->d = t.d;
        w->filled = true;
        *c = t;
        c->match = -1;
    }
    return pending;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI QrStatus qr_dist_acc_merge(QrDistAcc *a, const QrDistAcc *b) {
    if (a->n != b->n) return qr_errf(QR_ERR_INVALID, "distributions of %d and %d values cannot merge", a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        QrDistAcc1 *x = &a->a[i];
        const QrDistAcc1 *y = &b->a[i];
        if (x->match != y->match || x->n_bins != y->n_bins || x->n_ch != y->n_ch || x->lo != y->lo || x->hi != y->hi)
            return qr_errf(QR_ERR_INVALID, "distribution %d covers another value or other bins in the two parts", i);
        for (int k = 0; k < 3 * (x->n_bins + 2); k++) x->h[k] += y->h[k];
        x->n += y->n;
        x->n_nonfinite += y->n_nonfinite;
        x->absmax_base = QR_MAX(x->absmax_base, y->absmax_base);
        x->absmax_anal = QR_MAX(x->absmax_anal, y->absmax_anal);
        for (int c = 0; c < x->n_ch; c++) {
            QR_TRY(qr_sketch_merge(&x->sk[c], &y->sk[c]));
            qr_dsacc_xsum_merge(&x->ch_sum[c], &y->ch_sum[c]);
        }
    }
    a->n_samples += b->n_samples;
    return QR_OK;
}
#endif

static QrStatus qr_dist_acc_finish(const QrDistAcc *acc, QrDistSet *ds) {
    for (int i = 0; i < acc->n; i++) {
        const QrDistAcc1 *a = &acc->a[i];
        QrDist *d = &ds->d[a->d];
        int nb = a->n_bins;
        int64_t *h = qr_arena_array(&ds->arena, 3 * (size_t)nb + 1, sizeof(int64_t));
        QrChannelBox *ch = qr_arena_array(&ds->arena, (size_t)a->n_ch + 1, sizeof(QrChannelBox));
        double *am = malloc(((size_t)a->n_ch + 1) * sizeof(double) * 2);
        if (!h || !ch || !am) { free(am); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
        for (int p = 0; p < 3; p++) memcpy(h + p * nb, a->h + p * (nb + 2) + 1, (size_t)nb * sizeof *h);
        d->h_base = h;
        d->h_anal = h + nb;
        d->h_err = h + 2 * nb;
        d->n_bins = nb;
        d->lo = a->lo; d->hi = a->hi; d->err_lo = a->err_lo; d->err_hi = a->err_hi;
        d->n = a->n;
        d->n_nonfinite = a->n_nonfinite;
        d->absmax_base = a->absmax_base;
        d->absmax_anal = a->absmax_anal;
        d->n_below = a->h[0] + a->h[nb + 2];
        d->n_above = a->h[nb + 1] + a->h[2 * nb + 3];
        d->err_below = a->h[2 * (nb + 2)];
        d->err_above = a->h[3 * (nb + 2) - 1];
        d->n_samples = acc->n_samples;
        d->rank_err = 0;
        d->n_outlier = 0;
        static const double qs[3] = { 0.25, 0.5, 0.75 };
        for (int c = 0; c < a->n_ch; c++) {
            const QrSketch *sk = &a->sk[c];
            QrChannelBox *b = &ch[c];
            double v[3];
            QrStatus st = qr_sketch_quantiles(sk, qs, 3, v);
            if (st != QR_OK) { free(am); return st; }
            b->min = qr_sketch_min(sk);
            b->max = qr_sketch_max(sk);
            b->q1 = v[0]; b->median = v[1]; b->q3 = v[2];
            b->mean = sk->n ? (double)(qr_dsacc_xsum_value(&a->ch_sum[c]) / (long double)sk->n) : NAN;
            b->absmax = sk->n ? QR_MAX(fabs(b->min), fabs(b->max)) : 0;
            b->outlier = false;
            am[c] = b->absmax;
            if (sk->n && (double)sk->err / (double)sk->n > d->rank_err) d->rank_err = (double)sk->err / (double)sk->n;
        }
        if (a->n_ch > 1) {
            double *tmp = am + a->n_ch;
            memcpy(tmp, am, (size_t)a->n_ch * sizeof(double));
            double lim = qr_weights_outlier_limit(am, a->n_ch, qr_weights_median(tmp, a->n_ch), QR_OUTLIER_K);
            for (int c = 0; c < a->n_ch; c++)
                if (am[c] > lim) { ch[c].outlier = true; d->n_outlier++; }
        }
        free(am);
        d->ch = ch;
        d->n_ch = a->n_ch;
    }
    return QR_OK;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI QrStatus qr_dist_acc_put(const QrDistAcc *acc, uint8_t **buf, size_t *len, size_t *cap) {
    QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)acc->n, 8));
    QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)acc->n_samples, 8));
    for (int i = 0; i < acc->n; i++) {
        const QrDistAcc1 *a = &acc->a[i];
        uint64_t head[] = { (uint64_t)a->match, (uint64_t)a->n_bins, (uint64_t)a->n_ch, (uint64_t)a->n, (uint64_t)a->n_nonfinite };
        for (int k = 0; k < QR_ARRAY_LEN(head); k++) QR_TRY(qr_sketch_put_le(buf, len, cap, head[k], 8));
        double dv[] = { a->lo, a->hi, a->absmax_base, a->absmax_anal };
        for (int k = 0; k < QR_ARRAY_LEN(dv); k++) { uint64_t u; memcpy(&u, &dv[k], 8); QR_TRY(qr_sketch_put_le(buf, len, cap, u, 8)); }
        for (int k = 0; k < 3 * (a->n_bins + 2); k++) QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)a->h[k], 8));
        for (int c = 0; c < a->n_ch; c++) {
            QrXSum t = a->ch_sum[c];
            qr_dsacc_xsum_norm(&t);
            for (int l = 0; l < QR_XSUM_LIMBS; l++) QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)t.l[l], 8));
            uint64_t nf[3] = { (uint64_t)t.n_nan, (uint64_t)t.n_pinf, (uint64_t)t.n_ninf };
            for (int l = 0; l < 3; l++) QR_TRY(qr_sketch_put_le(buf, len, cap, nf[l], 8));
            QR_TRY(qr_sketch_write(&a->sk[c], buf, len, cap));
        }
    }
    return QR_OK;
}
#endif

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
/* Reads what qr_dist_acc_put wrote into acc, initialized for the same requests. */
QR_TESTAPI QrStatus qr_dist_acc_get(QrDistAcc *acc, const uint8_t *p, size_t avail, size_t *used) {
    size_t off = 0;
    bool bad = false;
    int n = (int)qr_sketch_get_le(p, avail, &off, 8, &bad);
    int64_t ns = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
    if (bad || n != acc->n || ns < 0 || ns > INT32_MAX) return qr_errf(QR_ERR_INVALID, "distributions: %d values in the part, %d expected", n, acc->n);
    acc->n_samples = (int)ns;
    for (int i = 0; i < acc->n && !bad; i++) {
        QrDistAcc1 *a = &acc->a[i];
        uint64_t head[5];
        for (int k = 0; k < 5; k++) head[k] = qr_sketch_get_le(p, avail, &off, 8, &bad);
        uint64_t dv[4];
        for (int k = 0; k < 4; k++) dv[k] = qr_sketch_get_le(p, avail, &off, 8, &bad);
        double lo, hi;
        memcpy(&lo, &dv[0], 8);
        memcpy(&hi, &dv[1], 8);
        if (bad || (int64_t)head[0] != a->match || (int)head[1] != a->n_bins || (int)head[2] != a->n_ch || lo != a->lo || hi != a->hi)
            return qr_errf(QR_ERR_INVALID, "distribution %d: another value or other bins in the part", i);
        a->n = (int64_t)head[3];
        a->n_nonfinite = (int64_t)head[4];
        memcpy(&a->absmax_base, &dv[2], 8);
        memcpy(&a->absmax_anal, &dv[3], 8);
        for (int k = 0; k < 3 * (a->n_bins + 2); k++) a->h[k] = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
        for (int c = 0; c < a->n_ch && !bad; c++) {
            QrXSum *t = &a->ch_sum[c];
            memset(t, 0, sizeof *t);
            for (int l = 0; l < QR_XSUM_LIMBS; l++) t->l[l] = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
            for (int l = 0; l + 1 < QR_XSUM_LIMBS; l++) if (t->l[l] < 0 || t->l[l] >= 4294967296LL) bad = true;
            t->n_nan = (int32_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
            t->n_pinf = (int32_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
            t->n_ninf = (int32_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
            if (bad) break;
            size_t u = 0;
            qr_sketch_free(&a->sk[c]);
            QR_TRY(qr_sketch_read(&a->sk[c], p + off, avail - off, &u));
            off += u;
        }
    }
    if (bad) return qr_errf(QR_ERR_INVALID, "distributions: malformed");
    *used = off;
    return QR_OK;
}
#endif
