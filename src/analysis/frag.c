/* analysis/frag — implementation. See frag.h. */

static void qr_frag_opts_default(QrFragOpts *o) {
    memset(o, 0, sizeof *o);
    o->share = 0.01;
    o->n_seeds = 3;
    o->seed = 1;
}

/* The grid of a perturbed quantizer: per-channel scales and zero points (constants), the
 * channel of element i = (i / inner) % C (C = 1: per tensor), the integer range. */
typedef struct QrFrGrid {
    const QrTensor *scale, *zp;
    int64_t C, inner;
    QrQuantRange rg;
    float s0;                /* per tensor (C = 1): the scale and zero point */
    int32_t z0;
} QrFrGrid;

static float qr__fr_scale(const QrFrGrid *p, int64_t c) { return p->C == 1 ? p->s0 : (float)qr_tensor_get_f64(p->scale, c); }
static int32_t qr__fr_zp(const QrFrGrid *p, int64_t c) {
    return p->C == 1 ? p->z0 : p->zp ? (int32_t)qr_tensor_get_i64(p->zp, c) : 0;
}
static int64_t qr__fr_chan(const QrFrGrid *p, int64_t i) { return p->C > 1 ? (i / p->inner) % p->C : 0; }

/* A small, seedable generator (splitmix64): the same seed gives the same choices everywhere. */
static uint64_t qr__fr_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ±1 LSB at exactly llround(share · n) elements of the integer tensor t, chosen by the seed
 * (selection sampling: every element in one pass, each subset of that size equally likely); the
 * direction is drawn per element, and an element at the edge of [lo, hi] moves inward. With a
 * grid (optional), *inj (optional) receives Σ (Δ · scale)². Returns the elements changed. */
static int64_t qr__fr_inject(QrTensor *t, double share, uint64_t seed, QrQuantRange rg, const QrFrGrid *p, double *inj) {
    const int64_t n = t->numel;
    int64_t k = share > 0 ? (int64_t)floor(share * (double)n + 0.5) : 0;
    if (k > n) k = n;
    uint64_t s = seed;
    int64_t done = 0;
    double sum = 0;
    /* rem = n - i and need = k - done as doubles (exact below 2^53), kept instead of converted
     * every element: the same comparison */
    double rem = (double)n, need = (double)k;
    for (int64_t i = 0; i < n && done < k; i++, rem -= 1.0) {
        double u = (double)(int64_t)(qr__fr_next(&s) >> 11) * 0x1.0p-53;
        if (u * rem >= need) continue;
        int32_t q = qr_quant_geti(t, i);
        int32_t d = (qr__fr_next(&s) >> 63) ? 1 : -1;
        if (q + d > rg.hi || q + d < rg.lo) d = -d;
        if (q + d > rg.hi || q + d < rg.lo) continue;   /* a one-value range: nothing to move to */
        qr_quant_seti(t, i, q + d);
        done++;
        need = (double)(k - done);
        if (p) {
            double sc = qr__fr_scale(p, qr__fr_chan(p, i));
            sum += sc * sc;
        }
    }
    if (inj) *inj += sum;
    return done;
}

/* The value QuantizeLinear's half-to-even rounding gives x / scale, and what half-away-from-zero
 * gives, both saturated as the operator saturates (qr_quant_saturate_round). */
static void qr__fr_round2(float x, float scale, int32_t zp, QrQuantRange rg, int32_t *even, int32_t *away) {
    float v = x / scale;
    float lo = (float)(rg.lo - zp), hi = (float)(rg.hi - zp);
    if (!(v >= lo)) v = lo;
    if (v > hi) v = hi;
    float e = rintf(v);
    *even = (int32_t)e + zp;
    /* the two roundings differ only at a tie; elsewhere both give the nearest integer */
    *away = fabsf(v - e) == 0.5f ? (int32_t)roundf(v) + zp : *even;
}

/* The first element from i0 on of a block of 16 that may be at a tie on scale sc with the saturation
 * bounds lo, hi of qr__fr_round2 (|lo|, |hi| < 2^22): qr_kern.f32_tie_scan over the whole blocks
 * left, so an element where the two roundings differ is always in a block it stops at; the tail's
 * first element when none is (fewer than 16 left: the caller visits every one). */
static int64_t qr__fr_next_tie(const float *x, int64_t i0, int64_t n, float sc, float lo, float hi) {
    const int64_t nb = (n - i0) / 16;
    return nb > 0 ? i0 + 16 * qr_kern.f32_tie_scan(x + i0, nb, sc, lo, hi) : i0;
}

/* Whether qr__fr_next_tie applies to grid p: one scale and zero point, saturation bounds below 2^22. */
static bool qr__fr_tie_ok(const QrFrGrid *p, float *lo, float *hi) {
    *lo = (float)(p->rg.lo - p->z0);
    *hi = (float)(p->rg.hi - p->z0);
    return p->C == 1 && fabsf(*lo) < 0x1p22f && fabsf(*hi) < 0x1p22f;
}

/* Half away from zero instead of half to even at every tie of QuantizeLinear(x) whose output t
 * holds (grid p): the tie's element moves by one LSB away from zero. *inj (optional) receives
 * Σ (Δ · scale)². Returns the elements changed. Blocks of 16 without a tie (qr__fr_next_tie) are
 * skipped: the others go through the same per-element steps, in element order. */
static int64_t qr__fr_half_away(QrTensor *t, const float *x, const QrFrGrid *p, double *inj) {
    int64_t k = 0;
    double sum = 0;
    float lo, hi;
    const bool fast = qr__fr_tie_ok(p, &lo, &hi);
    const int64_t n = t->numel;
    for (int64_t i0 = 0; i0 < n;) {
        if (fast && (i0 = qr__fr_next_tie(x, i0, n, p->s0, lo, hi)) >= n) break;
        const int64_t i1 = QR_MIN(n, i0 + 16);
        for (int64_t i = i0; i < i1; i++) {
            int64_t c = qr__fr_chan(p, i);
            float sc = qr__fr_scale(p, c);
            int32_t e, a;
            qr__fr_round2(x[i], sc, qr__fr_zp(p, c), p->rg, &e, &a);
            if (e == a) continue;
            qr_quant_seti(t, i, qr_quant_geti(t, i) + (a - e));
            k++;
            sum += (double)sc * sc;
        }
        i0 = i1;
    }
    if (inj) *inj += sum;
    return k;
}

/* The unperturbed run's sums of value t (grid p, the QuantizeLinear's float input x or NULL):
 * *sig = Σ ((q - zp) · scale)² in element order, *ties += the elements at a tie where the two
 * roundings differ (qr__fr_round2). 8-bit values on one scale in a loop of their own, the ties
 * looked for only in the blocks qr__fr_next_tie finds: the same sum and count. */
static void qr__fr_sig_ties(const QrTensor *t, const float *x, const QrFrGrid *p, double *sig, int64_t *ties) {
    const int64_t n = t->numel;
    float lo, hi;
    double s = 0;
    int64_t nt = 0;
    if (qr__fr_tie_ok(p, &lo, &hi) && (t->dtype == QR_DT_U8 || t->dtype == QR_DT_S8)) {
        const double sc = qr__fr_scale(p, 0);
        const int32_t zp = p->z0;
        const uint8_t *tu = t->data;
        const int8_t *ts = t->data;
        if (t->dtype == QR_DT_U8)
            for (int64_t i = 0; i < n; i++) { double d = (double)((int32_t)tu[i] - zp) * sc; s += d * d; }
        else
            for (int64_t i = 0; i < n; i++) { double d = (double)((int32_t)ts[i] - zp) * sc; s += d * d; }
        for (int64_t i0 = 0; x && (i0 = qr__fr_next_tie(x, i0, n, p->s0, lo, hi)) < n;) {
            const int64_t i1 = QR_MIN(n, i0 + 16);
            for (int64_t i = i0; i < i1; i++) {
                int32_t e, a;
                qr__fr_round2(x[i], (float)sc, zp, p->rg, &e, &a);
                nt += e != a;
            }
            i0 = i1;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            int64_t c = qr__fr_chan(p, i);
            double sc = qr__fr_scale(p, c), d = (double)(qr_quant_geti(t, i) - qr__fr_zp(p, c)) * sc;
            s += d * d;
            if (x) {
                int32_t e, a;
                qr__fr_round2(x[i], (float)sc, qr__fr_zp(p, c), p->rg, &e, &a);
                nt += e != a;
            }
        }
    }
    *sig = s;
    *ties += nt;
}

/* A run's state: the mode (record the unperturbed values, half-away, ±1 LSB) and where it adds up. */
typedef struct QrFrRun {
    QrFragResult *r;
    QrFrGrid *grid;          /* per layer */
    QrTensor *sim;           /* per layer: the unperturbed integer value */
    int mode;                /* 0 record, 1 half-away, 2 ±1 LSB */
    uint64_t seed;
    int64_t n_changed;
    struct QrFrRec *rec;     /* side by side: what the run records instead of adding up (NULL: adds up) */
} QrFrRun;

/* A variant run's record when the variants run side by side (qr__fr_side): per layer the integer
 * value as it arrived (before the injection) and as it left, and the injection's count and Σ; put
 * into the layers' sums afterwards in the variants' order (qr__fr_replay_task), which gives the sums of
 * the runs one after another, bit for bit (each Σ over a run's injections starts from 0 either way;
 * the arriving and total sums continue from the earlier runs' in element order). */
typedef struct QrFrRec {
    QrTensor *pre, *post;
    int64_t *n_inj;
    double *inj;
} QrFrRec;

/* The half-away variant applies to a QuantizeLinear of a float32 input (the op whose rounding it
 * changes); other quantizers (QOperator outputs) are left as they are. */
static const float *qr__fr_q_input(const QrGraph *g, int node, const QrTensor *const *in) {
    const QrNode *n = &g->nodes[node];
    if (strcmp(n->op_type, "QuantizeLinear") || (n->domain[0] && strcmp(n->domain, "com.microsoft"))) return NULL;
    if (qr_attr_int(n, "block_size", 0) != 0 || n->n_in < 2 || !in[0] || in[0]->dtype != QR_DT_F32) return NULL;
    return in[0]->data;
}

/* The 8-bit, one-scale case of qr__fr_arrived / qr__fr_total: only the elements that differ are
 * visited, in element order, each adding what the plain loop adds; the plain loop's other elements
 * add +0.0 to a sum that is never -0.0, which leaves it unchanged. A block of 64 elements gives a
 * mask of its differing bytes (qr__fr_ne8 on eight words), whose set bits are then taken lowest
 * first: a quarter to a half of a transformer's elements differ, scattered, and a loop per word
 * mispredicted its end once a word. The sums of the plain loops, bit for bit (tests/test_frag.c
 * test_frag_fast_sums). Σd² and the count are integers, exact either way. *a and *l2 (optional)
 * add on, *k counts, *mx the largest |d|. */
typedef struct QrFrSum8 {
    double acc;
    int64_t cnt, sq;
    int32_t m;
} QrFrSum8;

static inline void qr__fr_sum8_at(QrFrSum8 *u, bool sg, const uint8_t *tu, const uint8_t *su, int64_t i, double sc) {
    int32_t d = sg ? (int32_t)(int8_t)tu[i] - (int32_t)(int8_t)su[i] : (int32_t)tu[i] - (int32_t)su[i];
    u->acc += (double)d * d * sc * sc;
    u->cnt++;
    u->sq += d * d;
    int32_t ad = d < 0 ? -d : d;
    u->m = ad > u->m ? ad : u->m;
}

/* Bit j set when byte j (the j-th in memory, little-endian) of x is not zero: the high bit of each
 * byte of (x & 0x7f..) + 0x7f.. | x, gathered into the low 8 bits by one multiply. */
static inline uint64_t qr__fr_ne8(uint64_t x) {
    uint64_t y = (((x & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | x) & 0x8080808080808080ull;
    return (y >> 7) * 0x0102040810204080ull >> 56;
}

static void qr__fr_sum8(const QrTensor *t, const QrTensor *s, double sc, int64_t *k, double *a, double *l2, int64_t *mx) {
    const int64_t n = t->numel;
    const bool sg = t->dtype == QR_DT_S8;
    const uint8_t *tu = t->data, *su = s->data;
    QrFrSum8 u = { *a, 0, 0, (int32_t)*mx };
    int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 64 <= n; i += 64) {
        uint64_t m = 0;
        for (int w = 0; w < 8; w++) {
            uint64_t wt, ws;
            memcpy(&wt, tu + i + 8 * w, sizeof wt);
            memcpy(&ws, su + i + 8 * w, sizeof ws);
            m |= qr__fr_ne8(wt ^ ws) << (8 * w);
        }
        for (; m; m &= m - 1) qr__fr_sum8_at(&u, sg, tu, su, i + __builtin_ctzll(m), sc);
    }
#endif
    for (; i < n; i++)
        if (tu[i] != su[i]) qr__fr_sum8_at(&u, sg, tu, su, i, sc);
    *k += u.cnt;
    *a = u.acc;
    if (l2) *l2 = (double)u.sq;
    *mx = u.m;
}

/* Whether qr__fr_sum8 applies: 8-bit values of one dtype on one finite scale. */
static bool qr__fr_sum8_ok(const QrTensor *t, const QrTensor *s, const QrFrGrid *p) {
    return p->C == 1 && t->dtype == s->dtype && (t->dtype == QR_DT_U8 || t->dtype == QR_DT_S8) && isfinite(p->s0) &&
           t->numel == s->numel && t->numel < ((int64_t)1 << 36);
}

/* The elements where the integer tensors t and s (the unperturbed value, grid p) differ by d:
 * *n_arr counts them, *arr adds (d · scale)² in element order. 8-bit values on one scale (every
 * activation quantizer of an int8 QDQ model) in a loop of their own: the per-element type switch
 * and the sums kept in memory made these loops most of a ViT-B/16's fragility stage; the same
 * sums in the same order either way. */
static void qr__fr_arrived(const QrTensor *t, const QrTensor *s, const QrFrGrid *p, int64_t *n_arr, double *arr) {
    const int64_t n = t->numel;
    int64_t k = *n_arr;
    double a = *arr;
    if (qr__fr_sum8_ok(t, s, p)) {
        int64_t mx = 0;
        qr__fr_sum8(t, s, qr__fr_scale(p, 0), &k, &a, NULL, &mx);
    } else {
        for (int64_t i = 0; i < n; i++) {
            int32_t d = qr_quant_geti(t, i) - qr_quant_geti(s, i);
            if (!d) continue;
            double sc = qr__fr_scale(p, qr__fr_chan(p, i));
            k++;
            a += (double)d * d * sc * sc;
        }
    }
    *n_arr = k;
    *arr = a;
}

/* The same after the injection: *n_tot counts the differing elements (from 0), *tot adds
 * (d · scale)², *lsb2 d² (from 0), *lsb_max the largest |d|. */
static void qr__fr_total(const QrTensor *t, const QrTensor *s, const QrFrGrid *p, int64_t *n_tot, double *tot, double *lsb2,
                         int64_t *lsb_max) {
    const int64_t n = t->numel;
    int64_t k = 0, mx = *lsb_max;
    double a = *tot, l2 = 0;
    if (qr__fr_sum8_ok(t, s, p) && mx < INT32_MAX) {
        qr__fr_sum8(t, s, qr__fr_scale(p, 0), &k, &a, &l2, &mx);
        *n_tot = k;
        *tot = a;
        *lsb2 = l2;
        *lsb_max = mx;
        return;
    }
    const bool fast = p->C == 1 && t->dtype == s->dtype && (t->dtype == QR_DT_U8 || t->dtype == QR_DT_S8);
    const bool sg = t->dtype == QR_DT_S8;
    const int8_t *ts = t->data, *ss = s->data;
    const uint8_t *tu = t->data, *su = s->data;
    const double sc0 = qr__fr_scale(p, 0);
    for (int64_t i = 0; i < n; i++) {
        int32_t d = !fast ? qr_quant_geti(t, i) - qr_quant_geti(s, i)
                  : sg ? (int32_t)ts[i] - (int32_t)ss[i] : (int32_t)tu[i] - (int32_t)su[i];
        if (!d) continue;
        double sc = fast ? sc0 : qr__fr_scale(p, qr__fr_chan(p, i));
        k++;
        a += (double)d * d * sc * sc;
        l2 += (double)d * d;
        int64_t ad = d < 0 ? -(int64_t)d : d;
        if (ad > mx) mx = ad;
    }
    *n_tot = k;
    *tot = a;
    *lsb2 = l2;
    *lsb_max = mx;
}

/* The total against the unperturbed value s of a run's value t (grid p), added to acc. */
static void qr__fr_total_add(QrFragAcc *acc, const QrTensor *t, const QrTensor *s, const QrFrGrid *p) {
    int64_t n_tot = 0;
    double lsb2 = 0;
    qr__fr_total(t, s, p, &n_tot, &acc->tot, &lsb2, &acc->lsb_max);
    acc->n_tot += n_tot;
    acc->tot_lsb2 += lsb2;
    if (n_tot > acc->n_tot_max) acc->n_tot_max = n_tot;
    if (lsb2 > acc->lsb2_max) acc->lsb2_max = lsb2;
}

static QrStatus qr__fr_keep(QrTensor *dst, const QrTensor *t) {
    QR_TRY(qr_tensor_set_shape(dst, t->dtype, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(dst));
    memcpy(dst->data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

/* A perturbed run's edit of layer l side by side: the value kept as it arrived, perturbed as the
 * run's mode says, kept as it leaves. */
static QrStatus qr__fr_record(const QrFrRun *ru, int l, QrTensor *t, const float *x) {
    const QrFragResult *r = ru->r;
    const QrFrGrid *p = &ru->grid[l];
    QrFrRec *rec = ru->rec;
    QR_TRY(qr__fr_keep(&rec->pre[l], t));
    if (ru->mode == 1 && x) {
        rec->n_inj[l] += qr__fr_half_away(t, x, p, &rec->inj[l]);
    } else if (ru->mode == 2) {
        uint64_t sd = ru->seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(r->layers[l].q + 1) * 0xD1B54A32D192ED03ull);
        rec->n_inj[l] += qr__fr_inject(t, r->opts.share, sd, p->rg, p, &rec->inj[l]);
    }
    return qr__fr_keep(&rec->post[l], t);
}

static QrStatus qr__fr_edit(void *user, const QrGraph *g, int node, int value, QrTensor *t, const QrTensor *const *in) {
    QrFrRun *ru = user;
    QrFragResult *r = ru->r;
    int l = r->by_value[value];
    if (l < 0) return QR_OK;
    QrFragLayer *ly = &r->layers[l];
    const QrFrGrid *p = &ru->grid[l];
    const int64_t n = t->numel;
    if (n != ly->n || !qr_dtype_is_int(t->dtype))
        return qr_errf(QR_ERR_INVALID, "fragility: value '%s' has %lld elements of %s, expected %lld integers", g->values[value].name,
                       (long long)n, qr_dtype_name(t->dtype), (long long)ly->n);
    const float *x = qr__fr_q_input(g, node, in);
    if (ru->mode == 0) {             /* the unperturbed run: keep the value, its signal and its ties */
        QrTensor *s = &ru->sim[l];
        QR_TRY(qr_tensor_set_shape(s, t->dtype, t->rank, t->dims));
        QR_TRY(qr_tensor_alloc_data(s));
        memcpy(s->data, t->data, qr_tensor_nbytes(t));
        double sig = 0;
        qr__fr_sig_ties(t, x, p, &sig, &r->n_ties);
        ly->sig = sig;
        return QR_OK;
    }
    const QrTensor *s = &ru->sim[l];
    if (!s->data) return qr_errf(QR_ERR_INVALID, "fragility: value '%s' was not computed by the unperturbed run", g->values[value].name);
    if (ru->rec) return qr__fr_record(ru, l, t, x);
    QrFragAcc *acc = ru->mode == 1 ? &ly->ha : &ly->lsb;
    qr__fr_arrived(t, s, p, &acc->n_arr, &acc->arr);   /* what arrives from upstream */
    if (ru->mode == 1 && x) {                  /* half away from zero at the ties */
        acc->n_inj += qr__fr_half_away(t, x, p, &acc->inj);
    } else if (ru->mode == 2) {                /* the seed of a layer depends on the run's seed and the quantizer */
        uint64_t sd = ru->seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(ly->q + 1) * 0xD1B54A32D192ED03ull);
        acc->n_inj += qr__fr_inject(t, r->opts.share, sd, p->rg, p, &acc->inj);
    }
    qr__fr_total_add(acc, t, s, p);   /* the total against the unperturbed value */
    return QR_OK;
}

/* The grid of quantizer q on graph g, false when it has none to perturb on (no constant scale,
 * blocked, no integer range, a per-axis scale that does not fit the value). */
static bool qr__fr_grid(const QrGraph *g, const QrQuantizer *q, QrFrGrid *p) {
    memset(p, 0, sizeof *p);
    if (!qr_quant_range(q->dtype, &p->rg) || q->block_size || q->scale_value < 0) return false;
    const QrValue *sv = &g->values[q->scale_value];
    if (!sv->t.data || !(sv->is_init || sv->is_const) || sv->t.numel < 1) return false;
    p->scale = &sv->t;
    if (q->zp_value >= 0) {
        const QrValue *zv = &g->values[q->zp_value];
        if (!zv->t.data || !(zv->is_init || zv->is_const) || zv->t.numel != sv->t.numel) return false;
        p->zp = &zv->t;
    }
    const QrTensor *y = &g->values[q->int_value].t;
    p->C = 1;
    p->inner = 1;
    if (sv->t.numel > 1) {
        int ax = q->axis < 0 ? q->axis + y->rank : q->axis;
        if (ax < 0 || ax >= y->rank || y->dims[ax] != sv->t.numel) return false;
        p->C = sv->t.numel;
        for (int d = ax + 1; d < y->rank; d++) p->inner *= y->dims[d];
    }
    p->s0 = (float)qr_tensor_get_f64(p->scale, 0);
    p->z0 = p->zp ? (int32_t)qr_tensor_get_i64(p->zp, 0) : 0;
    return true;
}

/* The perturbed quantizers each layer reads first upstream (through any nodes that are not one). */
static QrStatus qr__fr_upstream(QrFragResult *r, const QrGraph *g, const QrQuantTable *qt, const int *val_layer) {
    int *stack = malloc(((size_t)g->n_values + 1) * sizeof *stack);
    int *stamp = calloc((size_t)g->n_values + 1, sizeof *stamp);
    int *seen = calloc((size_t)r->n_layers + 1, sizeof *seen);
    int *ups = malloc(((size_t)r->n_layers + 1) * sizeof *ups);
    QrStatus st = stack && stamp && seen && ups ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int l = 0; st == QR_OK && l < r->n_layers; l++) {
        QrFragLayer *ly = &r->layers[l];
        const QrNode *nd = &g->nodes[ly->node];
        int sp = 0, nu = 0;
        bool is_q = !strcmp(nd->op_type, "QuantizeLinear");
        for (int k = 0; k < (is_q ? 1 : nd->n_in); k++)
            if (nd->in[k] >= 0 && stamp[nd->in[k]] != l + 1) { stamp[nd->in[k]] = l + 1; stack[sp++] = nd->in[k]; }
        while (sp > 0) {
            int v = stack[--sp];
            int u = val_layer[v];
            if (u >= 0 && u != l) {
                if (seen[u] != l + 1) { seen[u] = l + 1; ups[nu++] = u; }
                continue;
            }
            int pn = g->values[v].producer;
            if (pn < 0 || g->values[v].is_const) continue;
            const QrNode *pd = &g->nodes[pn];
            for (int k = 0; k < pd->n_in; k++)
                if (pd->in[k] >= 0 && stamp[pd->in[k]] != l + 1) { stamp[pd->in[k]] = l + 1; stack[sp++] = pd->in[k]; }
        }
        ly->n_up = nu;
        ly->up = nu ? qr_arena_array(&r->arena, (size_t)nu, sizeof *ly->up) : NULL;
        if (nu && !ly->up) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        else if (nu) memcpy(ly->up, ups, (size_t)nu * sizeof *ups);
    }
    QR_UNUSED(qt);
    free(stack);
    free(stamp);
    free(seen);
    free(ups);
    return st;
}

/* Metrics of every float32 output pair (x reference, y other), pooled. */
static void qr__fr_out_metrics(const QrGraph *g, const QrTensor *x, const QrTensor *y, QrMetrics *m) {
    QrMetricAcc acc;
    qr_metric_acc_init_opts(&acc, false, false);
    for (int i = 0; i < g->n_outputs; i++)
        if (x[i].data && y[i].data && x[i].dtype == QR_DT_F32 && y[i].dtype == QR_DT_F32 && x[i].numel == y[i].numel)
            qr_metric_acc_add(&acc, x[i].data, y[i].data, x[i].numel);
    qr_metric_acc_finish(&acc, m);
}

static void qr__fr_outs_free(const QrGraph *g, QrTensor *o) {
    for (int i = 0; o && i < g->n_outputs; i++) qr_tensor_free_data(&o[i]);
}

/* The layer amplifies perturbations: gain at least QR_FRAG_GROW_GAIN, measured on enough elements. */
static bool qr__fr_grows(const QrFragResult *r, const QrFragLayer *ly) {
    return ly->gain >= QR_FRAG_GROW_GAIN && r->opts.n_seeds > 0 &&
           (double)ly->lsb.n_arr >= (double)QR_FRAG_GROW_MIN * (double)r->opts.n_seeds;
}

/* Variant k's kind and seed into va; returns its run mode (1 half-away, 2 ±1 LSB). */
static int qr__fr_variant_spec(const QrFragResult *r, int k, QrFragVariant *va) {
    bool ha = !r->opts.no_half_away && k == 0;
    va->kind = ha ? QR_FRAG_HALF_AWAY : QR_FRAG_LSB;
    va->seed = ha ? 0 : r->opts.seed + (uint64_t)(k - (r->opts.no_half_away ? 0 : 1));
    return ha ? 1 : 2;
}

/* A variant's output metrics against the unperturbed sim and its ratio to the quantization error. */
static void qr__fr_variant_done(const QrFragResult *r, const QrGraph *g, QrFragVariant *va, const QrTensor *sim_out,
                                const QrTensor *outs) {
    qr__fr_out_metrics(g, sim_out, outs, &va->out);
    va->ratio = r->quant_mse == r->quant_mse ? (r->quant_mse > 0 ? va->out.mse / r->quant_mse
                                                                   : va->out.mse > 0 ? INFINITY : 0.0) : NAN;
}

/* ==== the variants side by side ================================================================== */

/* Bytes the side-by-side records may take (QR_FRAG_SIDE_MAX; tests set it smaller). */
static double qr__fr_side_max = (double)QR_FRAG_SIDE_MAX;

/* Whether variant k adds up into the layers' sums as it runs side by side in the group of variants
 * [k0, k): no earlier variant of the group is of its kind (the sums of a kind are the ±1 LSB seeds'
 * or the half-away run's; an earlier group's are complete before this one starts). The others record. */
static bool qr__fr_direct(const QrFragResult *r, int k0, int k) {
    QrFragVariant a, b;
    qr__fr_variant_spec(r, k, &a);
    for (int j = k0; j < k; j++)
        if (qr__fr_variant_spec(r, j, &b), b.kind == a.kind) return false;
    return true;
}

/* How many variants run side by side at a time (0: one after another): all of them, else groups of
 * the pool's threads, when more than one runs and the records of the group that records the most
 * (two copies of every perturbed value for each variant that does not add up as it runs) fit
 * qr__fr_side_max, which also keeps the runs side by side to models whose values are small. */
static int qr__fr_side_group(const QrFragResult *r, const QrGraph *g, int n_var) {
    const int nt = qr_pool_threads();
    if (r->opts.serial || n_var < 2 || nt < 2) return 0;
    double bytes = 0;
    for (int l = 0; l < r->n_layers; l++)
        bytes += 2.0 * (double)r->layers[l].n * (double)qr_dtype_size(g->values[r->layers[l].value].t.dtype);
    for (int gs = n_var; gs >= 2; gs = gs > nt ? nt : 1) {
        int most = 0;
        for (int k0 = 0; k0 < n_var; k0 += gs) {
            int rec = 0;
            for (int k = k0; k < QR_MIN(n_var, k0 + gs); k++) rec += !qr__fr_direct(r, k0, k);
            most = QR_MAX(most, rec);
        }
        if ((double)most * bytes <= qr__fr_side_max) return gs;
    }
    return 0;
}

typedef struct QrFrSide {
    const QrGraph *g;
    const QrTensor *inputs;
    const QrRunOpts *ro;
    QrFrRun *ru;             /* per variant */
    QrTensor *outs;          /* per variant, g->n_outputs each */
    QrStatus *st;
    char **msg;              /* malloc'd */
} QrFrSide;

static void qr__fr_side_task(void *ctx, int64_t k, int tid) {
    QR_UNUSED(tid);
    QrFrSide *c = ctx;
    QrRunOpts ro = *c->ro;
    ro.edit_user = &c->ru[k];
    c->st[k] = qr_run(c->g, c->inputs, &ro, c->outs + k * c->g->n_outputs);
    if (c->st[k] != QR_OK) {
        c->msg[k] = strdup(qr_err_msg());
        qr_err_clear();
    }
}

/* The records of the variants [k0, k1) (those with one, ru[k].rec) into layer l's sums, in the
 * variants' order, as their edits would have added them one run after another (qr__fr_edit's
 * order: arriving, injected, total). A layer's sums are its own: the layers go over the pool. */
typedef struct QrFrReplay {
    QrFragResult *r;
    const QrFrGrid *grid;
    const QrTensor *sim;
    const QrFrRun *ru;
    int k0, k1;
} QrFrReplay;

static void qr__fr_replay_task(void *ctx, int64_t l, int tid) {
    QR_UNUSED(tid);
    const QrFrReplay *c = ctx;
    for (int k = c->k0; k < c->k1; k++) {
        const QrFrRec *rec = c->ru[k].rec;
        if (!rec || !rec->pre[l].data || !rec->post[l].data) continue;
        QrFragAcc *acc = c->ru[k].mode == 1 ? &c->r->layers[l].ha : &c->r->layers[l].lsb;
        qr__fr_arrived(&rec->pre[l], &c->sim[l], &c->grid[l], &acc->n_arr, &acc->arr);
        acc->n_inj += rec->n_inj[l];
        acc->inj += rec->inj[l];
        qr__fr_total_add(acc, &rec->post[l], &c->sim[l], &c->grid[l]);
    }
}

static void qr__fr_rec_free(QrFrRec *rec, int n_layers) {
    for (int l = 0; l < n_layers; l++) {
        if (rec->pre) qr_tensor_free_data(&rec->pre[l]);
        if (rec->post) qr_tensor_free_data(&rec->post[l]);
    }
    free(rec->pre);
    free(rec->post);
    free(rec->n_inj);
    free(rec->inj);
    memset(rec, 0, sizeof *rec);
}

/* The sums of kind `mode` (1 half-away, 2 ±1 LSB) injected so far, over the layers. */
static int64_t qr__fr_n_inj(const QrFragResult *r, int mode) {
    int64_t n = 0;
    for (int l = 0; l < r->n_layers; l++) n += mode == 1 ? r->layers[l].ha.n_inj : r->layers[l].lsb.n_inj;
    return n;
}

/* The variants' runs side by side, gs at a time (qr__fr_side_group), one per pool task (a run's
 * values do not depend on the threads its kernels get): in a group, the first variant of each kind
 * adds up into the layers' sums as it runs (qr__fr_direct), the others record; after the group, in the
 * variants' order, the records replayed into the sums and the outputs compared: the results of the
 * serial loop in qr_frag_run, bit for bit (tests/test_frag.c test_frag_side). */
static QrStatus qr__fr_side(QrFragResult *r, const QrGraph *g, const QrTensor *inputs, const QrRunOpts *ro, QrFrGrid *grid,
                            QrTensor *sim, const QrTensor *sim_out, int n_var, int gs) {
    const int nl = r->n_layers, no = g->n_outputs;
    QrFrRun *ru = calloc((size_t)n_var, sizeof *ru);
    QrFrRec *rec = calloc((size_t)n_var, sizeof *rec);
    QrTensor *outs = calloc((size_t)n_var * (size_t)no + 1, sizeof *outs);
    QrStatus *sts = calloc((size_t)n_var, sizeof *sts);
    char **msg = calloc((size_t)n_var, sizeof *msg);
    int64_t before[2] = { 0, 0 };
    QrStatus st = ru && rec && outs && sts && msg ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k0 = 0; st == QR_OK && k0 < n_var; k0 += gs) {
        const int k1 = QR_MIN(n_var, k0 + gs);
        for (int k = k0; st == QR_OK && k < k1; k++) {
            int mode = qr__fr_variant_spec(r, k, &r->var[k]);
            ru[k] = (QrFrRun){ r, grid, sim, mode, r->var[k].seed, 0, NULL };
            if (qr__fr_direct(r, k0, k)) {
                before[mode - 1] = qr__fr_n_inj(r, mode);
                continue;
            }
            rec[k] = (QrFrRec){ calloc((size_t)nl + 1, sizeof(QrTensor)), calloc((size_t)nl + 1, sizeof(QrTensor)),
                                calloc((size_t)nl + 1, sizeof(int64_t)), calloc((size_t)nl + 1, sizeof(double)) };
            if (!rec[k].pre || !rec[k].post || !rec[k].n_inj || !rec[k].inj) st = qr_errf(QR_ERR_NOMEM, "out of memory");
            ru[k].rec = &rec[k];
        }
        if (st != QR_OK) break;
        QrFrSide c = { g, inputs, ro, ru + k0, outs + (size_t)k0 * (size_t)no, sts + k0, msg + k0 };
        const int n_direct0 = r->n_direct;
        qr_pool_for(k1 - k0, qr__fr_side_task, &c);
        r->n_side += k1 - k0;
        for (int k = k0; st == QR_OK && k < k1; k++) {
            r->n_runs++;
            if (sts[k] != QR_OK) {
                st = qr_errf(sts[k], "%s", msg[k] ? msg[k] : "out of memory");
                st = qr_err_wrap(st, "fragility: variant %d of %s", k, g->path ? g->path : "the model");
            }
        }
        if (st != QR_OK) break;
        for (int k = k0; k < k1; k++) {          /* before the records go into the sums */
            if (ru[k].rec) continue;
            r->var[k].n_changed = qr__fr_n_inj(r, ru[k].mode) - before[ru[k].mode - 1];
            r->n_direct++;
        }
        QrFrReplay rp = { r, grid, sim, ru, k0, k1 };
        if (k1 - k0 > r->n_direct - n_direct0) qr_pool_for(nl, qr__fr_replay_task, &rp);
        for (int k = k0; k < k1; k++) {
            if (ru[k].rec) {
                int64_t ni = 0;
                for (int l = 0; l < nl; l++) if (rec[k].pre[l].data && rec[k].post[l].data) ni += rec[k].n_inj[l];
                r->var[k].n_changed = ni;
            }
            qr__fr_variant_done(r, g, &r->var[k], sim_out, outs + (size_t)k * (size_t)no);
            r->n_var++;
        }
        for (int k = k0; k < k1; k++) {
            if (rec) qr__fr_rec_free(&rec[k], nl);
            if (outs) qr__fr_outs_free(g, outs + (size_t)k * (size_t)no);
        }
    }
    for (int k = 0; k < n_var; k++) {
        if (rec) qr__fr_rec_free(&rec[k], nl);
        if (outs) qr__fr_outs_free(g, outs + (size_t)k * (size_t)no);
        if (msg) free(msg[k]);
    }
    free(ru);
    free(rec);
    free(outs);
    free(sts);
    free(msg);
    return st;
}

/* What qr_frag_begin prepares and qr_frag_end uses (frag.h): the layers' grids, the unperturbed run's
 * edit (mode 0) and what it keeps, the constants cache of the variant runs. */
struct QrFragRide {
    const QrGraph *g;
    QrFrGrid *grid;
    bool *on;                /* per value: perturbed (edit_on) */
    QrTensor *sim;           /* per layer: the unperturbed integer value */
    QrFrRun ru;
    QrRunCache *cache;
};

static void qr_frag_ride_free(QrFragRide *f) {
    if (!f) return;
    if (f->cache) qr_run_cache_free(f->cache);
    for (int l = 0; f->sim && f->ru.r && l < f->ru.r->n_layers; l++) qr_tensor_free_data(&f->sim[l]);
    free(f->sim);
    free(f->on);
    free(f->grid);
    free(f);
}

/* The perturbed quantizers of g (every activation quantizer with a computed integer value and a grid),
 * in the topological order of their nodes, into r->layers, their grids into grid. */
static QrStatus qr__fr_layers(QrFragResult *r, const QrGraph *g, const QrQuantTable *qt, QrFrGrid *grid) {
    int *val_layer = malloc(((size_t)g->n_values + 1) * sizeof *val_layer);
    r->by_value = qr_arena_array(&r->arena, (size_t)g->n_values + 1, sizeof *r->by_value);
    r->layers = qr_arena_array(&r->arena, (size_t)qt->n + 1, sizeof *r->layers);
    QrStatus st = val_layer && r->by_value && r->layers ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; st == QR_OK && v < g->n_values; v++) r->by_value[v] = val_layer[v] = -1;
    for (int k = 0; st == QR_OK && k < g->n_nodes; k++) {
        const QrNode *nd = &g->nodes[g->order[k]];
        for (int j = 0; j < nd->n_out; j++) {
            int v = nd->out[j];
            int qi = v >= 0 ? qt->by_value[v] : -1;
            if (qi < 0 || qt->q[qi].int_value != v) continue;
            const QrQuantizer *q = &qt->q[qi];
            if (q->kind != QR_QK_ACTIVATION) continue;
            r->n_act++;
            if (!qr_dtype_is_int(g->values[v].t.dtype) || g->values[v].is_const) continue;
            if (!qr__fr_grid(g, q, &grid[r->n_layers])) continue;
            QrFragLayer *ly = &r->layers[r->n_layers];
            ly->q = qi;
            ly->value = v;
            ly->node = g->order[k];
            ly->n = g->values[v].t.numel;
            ly->growth = ly->gain = NAN;
            r->by_value[v] = val_layer[v] = r->n_layers;
            for (int d = 0; d < q->n_dq; d++) {
                const QrNode *dq = &g->nodes[q->dq_nodes[d]];
                for (int m = 0; m < dq->n_out; m++) if (dq->out[m] >= 0) val_layer[dq->out[m]] = r->n_layers;
            }
            r->n_layers++;
        }
    }
    if (st == QR_OK) st = qr__fr_upstream(r, g, qt, val_layer);
    free(val_layer);
    return st;
}

static QrStatus qr_frag_begin(const QrGraph *g, const QrQuantTable *qt, const QrFragOpts *o, QrFragResult *r, QrFragRide **out) {
    *out = NULL;
    memset(r, 0, sizeof *r);
    if (o) r->opts = *o;
    else qr_frag_opts_default(&r->opts);
    if (r->opts.n_seeds > QR_FRAG_MAX_SEEDS) r->opts.n_seeds = QR_FRAG_MAX_SEEDS;
    if (r->opts.n_seeds < 0) r->opts.n_seeds = 0;
    if (!(r->opts.share >= 0 && r->opts.share <= 1))
        return qr_errf(QR_ERR_INVALID, "fragility: the share of elements to perturb must be in [0, 1], not %g", r->opts.share);
    r->g = g;
    r->worst = -1;
    r->first_growth = -1;
    r->quant_mse = NAN;
    r->ratio_lsb = NAN;
    QrFragRide *f = calloc(1, sizeof *f);
    if (!f) return qr_errf(QR_ERR_NOMEM, "out of memory");
    f->g = g;
    f->grid = calloc((size_t)qt->n + 1, sizeof *f->grid);
    QrStatus st = f->grid ? qr__fr_layers(r, g, qt, f->grid) : qr_errf(QR_ERR_NOMEM, "out of memory");
    f->on = calloc((size_t)g->n_values + 1, sizeof *f->on);
    f->sim = calloc((size_t)r->n_layers + 1, sizeof *f->sim);
    if (st == QR_OK && (!f->on || !f->sim)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int l = 0; st == QR_OK && l < r->n_layers; l++) f->on[r->layers[l].value] = true;
    f->ru = (QrFrRun){ r, f->grid, f->sim, 0, 0, 0, NULL };
    /* The constants (weights through DequantizeLinear) once for every run: the edited values and
     * everything after them are never cached (run.h). */
    f->cache = st == QR_OK ? qr_run_cache_new(g) : NULL;
    if (st == QR_OK && !f->cache) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st != QR_OK) {
        qr_frag_ride_free(f);
        qr_frag_free(r);
        return st;
    }
    *out = f;
    return QR_OK;
}

static void qr_frag_ride_opts(QrFragRide *f, QrRunOpts *ro) {
    f->ru.mode = 0;
    ro->edit = qr__fr_edit;
    ro->edit_user = &f->ru;
    ro->edit_on = f->on;
}

/* Per layer: growth and gain over the ±1 LSB seeds; then the worst variant and the verdict. */
static void qr__fr_summarize(QrFragResult *r) {
    const int ns = r->opts.n_seeds;
    for (int l = 0; l < r->n_layers; l++) {
        QrFragLayer *ly = &r->layers[l];
        if (ly->lsb.inj > 0) ly->growth = ly->lsb.tot / ly->lsb.inj;
        if (!ns || !(ly->sig > 0) || !ly->n_up) continue;
        double in_max = 0;
        for (int u = 0; u < ly->n_up; u++) {
            const QrFragLayer *up = &r->layers[ly->up[u]];
            if (up->sig > 0 && up->lsb.tot / up->sig > in_max) in_max = up->lsb.tot / up->sig;
        }
        if (in_max > 0) ly->gain = (ly->lsb.arr / ly->sig) / in_max;
        if (r->first_growth < 0 && qr__fr_grows(r, ly)) r->first_growth = l;
    }
    for (int k = 0; k < r->n_var; k++) {
        if (r->worst < 0 || qr_metric_badness(&r->var[k].out, QR_METRIC_COSINE) > qr_metric_badness(&r->var[r->worst].out, QR_METRIC_COSINE))
            r->worst = k;
        if (r->var[k].kind == QR_FRAG_LSB && r->var[k].ratio == r->var[k].ratio && !(r->var[k].ratio <= r->ratio_lsb))
            r->ratio_lsb = r->var[k].ratio;
    }
    r->fragile = r->ratio_lsb == r->ratio_lsb && r->ratio_lsb >= QR_FRAG_FRAGILE_RATIO;
    for (int k = 0; k < r->n_var; k++)
        if (r->var[k].ratio == r->var[k].ratio && r->var[k].ratio >= QR_FRAG_FRAGILE_RATIO) r->fragile = true;
}

/* The variants one after another (qr_frag_run's serial loop). */
static QrStatus qr__fr_serial(QrFragResult *r, const QrGraph *g, const QrTensor *inputs, const QrRunOpts *ro, QrFrRun *ru,
                              const QrTensor *sim_out, int n_var) {
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QrStatus st = outs ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < n_var; k++) {
        QrFragVariant *va = &r->var[r->n_var];
        bool ha = qr__fr_variant_spec(r, k, va) == 1;
        ru->mode = ha ? 1 : 2;
        ru->seed = va->seed;
        int64_t before = 0;
        for (int l = 0; l < r->n_layers; l++) before += ha ? r->layers[l].ha.n_inj : r->layers[l].lsb.n_inj;
        st = qr_run(g, inputs, ro, outs);
        r->n_runs++;
        if (st != QR_OK) { st = qr_err_wrap(st, "fragility: variant %d of %s", k, g->path ? g->path : "the model"); break; }
        int64_t after = 0;
        for (int l = 0; l < r->n_layers; l++) after += ha ? r->layers[l].ha.n_inj : r->layers[l].lsb.n_inj;
        va->n_changed = after - before;
        qr__fr_variant_done(r, g, va, sim_out, outs);
        qr__fr_outs_free(g, outs);
        r->n_var++;
    }
    qr__fr_outs_free(g, outs);
    free(outs);
    return st;
}

static QrStatus qr_frag_end(QrFragRide *f, const QrTensor *inputs, const QrTensor *base_out, const QrTensor *sim_out,
                            QrFragResult *r) {
    const QrGraph *g = f->g;
    QrStatus st = QR_OK;
    r->n_runs++;             /* the unperturbed run (the caller's) */
    if (base_out) {
        qr__fr_out_metrics(g, base_out, sim_out, &r->quant);
        r->quant_mse = r->quant.mse;
    }
    QrRunOpts ro = { .edit = qr__fr_edit, .edit_user = &f->ru, .edit_on = f->on, .cache = f->cache };
    int n_var = (r->opts.no_half_away ? 0 : 1) + r->opts.n_seeds;
    const int gs = r->n_layers ? qr__fr_side_group(r, g, n_var) : 0;
    if (gs) st = qr__fr_side(r, g, inputs, &ro, f->grid, f->sim, sim_out, n_var, gs);
    else if (r->n_layers) st = qr__fr_serial(r, g, inputs, &ro, &f->ru, sim_out, n_var);
    if (st == QR_OK) qr__fr_summarize(r);
    qr_frag_ride_free(f);
    if (st != QR_OK) qr_frag_free(r);
    return st;
}

static QrStatus qr_frag_run(const QrGraph *g, const QrQuantTable *qt, const QrTensor *inputs, const QrTensor *base_out,
                            const QrFragOpts *o, QrFragResult *r) {
    QrFragRide *f = NULL;
    QR_TRY(qr_frag_begin(g, qt, o, r, &f));
    QrTensor *sim_out = calloc((size_t)g->n_outputs + 1, sizeof *sim_out);
    QrStatus st = sim_out ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    QrRunOpts ro = { .cache = f->cache };
    qr_frag_ride_opts(f, &ro);
    if (st == QR_OK) {
        st = qr_run(g, inputs, &ro, sim_out);
        if (st != QR_OK) st = qr_err_wrap(st, "fragility: the unperturbed run of %s", g->path ? g->path : "the model");
    }
    if (st == QR_OK) st = qr_frag_end(f, inputs, base_out, sim_out, r);
    else {
        r->n_runs++;
        qr_frag_ride_free(f);
        qr_frag_free(r);
    }
    qr__fr_outs_free(g, sim_out);
    free(sim_out);
    return st;
}

static void qr_frag_free(QrFragResult *r) {
    qr_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
    r->worst = r->first_growth = -1;
}

static bool qr_frag_spread(const QrFragResult *r, int v, QrFragSpread *s) {
    memset(s, 0, sizeof *s);
    if (!r || !r->by_value || !r->g || v < 0 || v >= r->g->n_values || r->by_value[v] < 0) return false;
    const QrFragLayer *ly = &r->layers[r->by_value[v]];
    if (ly->n <= 0) return false;
    const int ns = r->opts.n_seeds;
    if (ns > 0) {       /* the ±1 LSB variants: the largest over the seeds */
        s->mse_lsb = ly->lsb.lsb2_max / (double)ly->n;
        s->changed = (double)ly->lsb.n_tot_max / (double)ly->n;
        s->lsb_max = ly->lsb.lsb_max;
    }
    if (!r->opts.no_half_away) {
        double m = ly->ha.lsb2_max / (double)ly->n, c = (double)ly->ha.n_tot_max / (double)ly->n;
        if (m > s->mse_lsb) s->mse_lsb = m;
        if (c > s->changed) s->changed = c;
        if (ly->ha.lsb_max > s->lsb_max) s->lsb_max = ly->ha.lsb_max;
    }
    return true;
}

/* ==== output ======================================================================================= */

static const char *qr__fr_num(QrArena *a, double v, const char *fmt) {
    if (v != v) return "nan";
    if (isinf(v)) return v > 0 ? "inf" : "-inf";
    return qr_arena_printf(a, fmt, v);
}

static const char *qr__fr_var_name(QrArena *a, const QrFragResult *r, const QrFragVariant *va) {
    if (va->kind == QR_FRAG_HALF_AWAY) return "half-away-from-zero at every tie";
    return qr_arena_printf(a, "±1 LSB at %g%% of elements, seed %llu", 100.0 * r->opts.share, (unsigned long long)va->seed);
}

/* The worst ±1 LSB variant (lowest output Cosine), -1 without one. */
static int qr__fr_worst_lsb(const QrFragResult *r) {
    int w = -1;
    for (int k = 0; k < r->n_var; k++)
        if (r->var[k].kind == QR_FRAG_LSB &&
            (w < 0 || qr_metric_badness(&r->var[k].out, QR_METRIC_COSINE) > qr_metric_badness(&r->var[w].out, QR_METRIC_COSINE)))
            w = k;
    return w;
}

static const char *qr_frag_verdict(QrArena *a, const QrFragResult *r) {
    if (!r->n_layers)
        return qr_arena_printf(a, "not measured: none of the %d activation quantizer%s has a computed integer output to "
                               "perturb", r->n_act, r->n_act == 1 ? "" : "s");
    int w = qr__fr_worst_lsb(r);
    const char *growth = r->first_growth >= 0
        ? qr_arena_printf(a, "; perturbations first grow at '%s' (%s, gain %.3g)", r->g->values[r->layers[r->first_growth].value].name,
                          r->g->nodes[r->layers[r->first_growth].node].name, r->layers[r->first_growth].gain)
        : "; no layer amplifies them";
    if (w < 0) return qr_arena_printf(a, "only the half-away variant ran: output Cosine %.6f against the simulation%s",
                                      r->n_var ? r->var[0].out.cosine : NAN, growth);
    const QrFragVariant *v = &r->var[w];
    const char *share = qr_arena_printf(a, "rounding 1 LSB differently at %g%% of the elements of every activation quantizer",
                                        100.0 * r->opts.share);
    if (r->quant_mse != r->quant_mse)
        return qr_arena_printf(a, "spread measured, no baseline to compare it with: %s moves the output to Cosine %.6f "
                               "(SQNR %.2f dB) against this simulation%s", share, v->out.cosine, v->out.sqnr, growth);
    if (r->fragile)
        return qr_arena_printf(a, "ROUNDING-FRAGILE: a device %s may differ from this simulation by output Cosine %.6f "
                               "(SQNR %.2f dB), %.3g times the quantization error's MSE%s; differences of that size "
                               "between a device and this simulation can be rounding, not a device bug", share,
                               v->out.cosine, v->out.sqnr, r->ratio_lsb, growth);
    return qr_arena_printf(a, "not rounding-fragile: a device %s differs from this simulation by output Cosine %.6f (SQNR "
                           "%.2f dB), %.3g of the quantization error's MSE (fragile from %g)%s; a device further from "
                           "the simulation than that has more than rounding differences", share, v->out.cosine,
                           v->out.sqnr, r->ratio_lsb, QR_FRAG_FRAGILE_RATIO, growth);
}

static QrStatus qr__fr_var_table(const QrFragResult *r, QrArena *a, QrTable *t) {
    static const char *const cols[] = { "variant", "elements_changed", "output_cosine", "output_sqnr", "output_mse",
                                        "share_of_quant_error" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int k = 0; k < r->n_var; k++) {
        const QrFragVariant *v = &r->var[k];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_set(t, row, 0, qr__fr_var_name(a, r, v));
        qr_table_setf(t, row, 1, "%lld", (long long)v->n_changed);
        qr_table_set(t, row, 2, qr__fr_num(a, v->out.cosine, "%.6f"));
        qr_table_set(t, row, 3, qr__fr_num(a, v->out.sqnr, "%.2f"));
        qr_table_set(t, row, 4, qr__fr_num(a, v->out.mse, "%.6g"));
        qr_table_set(t, row, 5, qr__fr_num(a, v->ratio, "%.4g"));
    }
    return QR_OK;
}

static QrStatus qr__fr_layer_table(const QrFragResult *r, QrArena *a, QrTable *t) {
    static const char *const cols[] = { "index", "value", "node", "op", "elements", "injected_pct", "arrived_pct",
                                        "changed_pct", "lsb_max", "growth", "gain", "half_away_ties", "half_away_changed_pct",
                                        "note" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    const double ns = r->opts.n_seeds > 0 ? (double)r->opts.n_seeds : NAN;
    for (int l = 0; l < r->n_layers; l++) {
        const QrFragLayer *ly = &r->layers[l];
        const QrNode *nd = &r->g->nodes[ly->node];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        const double n = (double)ly->n;
        qr_table_setf(t, row, 0, "%d", l);
        qr_table_set(t, row, 1, r->g->values[ly->value].name);
        qr_table_set(t, row, 2, nd->name);
        qr_table_set(t, row, 3, nd->op_type);
        qr_table_setf(t, row, 4, "%lld", (long long)ly->n);
        qr_table_set(t, row, 5, qr__fr_num(a, 100.0 * (double)ly->lsb.n_inj / ns / n, "%.4f"));
        qr_table_set(t, row, 6, qr__fr_num(a, 100.0 * (double)ly->lsb.n_arr / ns / n, "%.4f"));
        qr_table_set(t, row, 7, qr__fr_num(a, 100.0 * (double)ly->lsb.n_tot / ns / n, "%.4f"));
        qr_table_setf(t, row, 8, "%lld", (long long)ly->lsb.lsb_max);
        qr_table_set(t, row, 9, qr__fr_num(a, ly->growth, "%.4g"));
        qr_table_set(t, row, 10, qr__fr_num(a, ly->gain, "%.4g"));
        if (!r->opts.no_half_away) {
            qr_table_setf(t, row, 11, "%lld", (long long)ly->ha.n_inj);
            qr_table_set(t, row, 12, qr__fr_num(a, 100.0 * (double)ly->ha.n_tot / n, "%.4f"));
        }
        qr_table_set(t, row, 13, l == r->first_growth ? "FIRST GROWTH" : qr__fr_grows(r, ly) ? "grows" : "");
    }
    return QR_OK;
}

static QrStatus qr_frag_write(const QrFragResult *r, const char *dir) {
    QrArena a = { 0 };
    QrTable tv = { 0 }, tl = { 0 };
    char *txt = NULL, *csv = NULL;
    size_t xl = 0, xc = 0, cl = 0, cc = 0;
    QrStatus st = qr__fr_var_table(r, &a, &tv);
    if (st == QR_OK) st = qr__fr_layer_table(r, &a, &tl);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &xl, &xc,
                           "Rounding fragility: the simulation (Q/DQ in float) re-run with 1-LSB rounding perturbations at "
                           "its activation quantizers\nverdict: %s\n\n"
                           "perturbed: %d of %d activation quantizers; %lld elements at a tie half away rounds otherwise (unperturbed run)\n"
                           "cost: %d model runs (1 unperturbed + %d variants; manifest.json's stage 'fragility' has the time)\n"
                           "quantization error (baseline vs simulation, output MSE): %s\n\n",
                           qr_frag_verdict(&a, r), r->n_layers, r->n_act, (long long)r->n_ties, r->n_runs, r->n_var,
                           qr__fr_num(&a, r->quant_mse, "%.6g"));
    if (st == QR_OK) st = qr_table_render_txt(&tv, "Variants (output against the unperturbed simulation)", NULL, &txt, &xl, &xc);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &xl, &xc, "\nPer quantizer, in graph order (±1 LSB variants, mean over %d seed%s): "
                           "injected / arrived (changed before its own injection) / changed %% of elements; growth = "
                           "total squared change over the injected one; gain = relative perturbation arriving over that "
                           "of the noisiest quantizer it reads (grows from %g, over at least %d changed elements a run)\n",
                           r->opts.n_seeds, r->opts.n_seeds == 1 ? "" : "s", QR_FRAG_GROW_GAIN, QR_FRAG_GROW_MIN);
    if (st == QR_OK) st = qr_table_render_txt(&tl, NULL, NULL, &txt, &xl, &xc);
    if (st == QR_OK) st = qr_table_render_csv(&tl, NULL, &csv, &cl, &cc);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_FRAGILITY ".txt", dir), txt, xl);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_FRAGILITY ".csv", dir), csv, cl);
    free(txt);
    free(csv);
    qr_table_free(&tv);
    qr_table_free(&tl);
    qr_arena_free(&a);
    return st;
}

static void qr_frag_json(QrJson *j, const QrFragResult *r) {
    QrArena a = { 0 };
    qr_json_obj_begin(j);
    qr_json_kv_str(j, "verdict", qr_frag_verdict(&a, r));
    if (r->n_layers && r->quant_mse == r->quant_mse) qr_json_kv_bool(j, "fragile", r->fragile);
    else qr_json_kv_null(j, "fragile");
    qr_json_kv_num(j, "fragile_from_ratio", QR_FRAG_FRAGILE_RATIO);
    qr_json_kv_num(j, "share", r->opts.share);
    qr_json_kv_int(j, "seeds", r->opts.n_seeds);
    qr_json_kv_int(j, "perturbed_quantizers", r->n_layers);
    qr_json_kv_int(j, "activation_quantizers", r->n_act);
    qr_json_kv_int(j, "ties", r->n_ties);
    qr_json_kv_int(j, "runs", r->n_runs);
    qr_json_kv_num(j, "quant_error_mse", r->quant_mse);
    qr_json_kv_num(j, "ratio", r->ratio_lsb);
    if (r->first_growth >= 0) {
        qr_json_kv_str(j, "first_growth", r->g->values[r->layers[r->first_growth].value].name);
        qr_json_kv_str(j, "first_growth_node", r->g->nodes[r->layers[r->first_growth].node].name);
        qr_json_kv_num(j, "first_growth_gain", r->layers[r->first_growth].gain);
    } else qr_json_kv_null(j, "first_growth");
    qr_json_key(j, "variants");
    qr_json_arr_begin(j);
    for (int k = 0; k < r->n_var; k++) {
        const QrFragVariant *v = &r->var[k];
        qr_json_obj_begin_compact(j);
        qr_json_kv_str(j, "variant", v->kind == QR_FRAG_HALF_AWAY ? "half_away" : "lsb");
        if (v->kind == QR_FRAG_LSB) qr_json_kv_int(j, "seed", (int64_t)v->seed);
        qr_json_kv_int(j, "changed", v->n_changed);
        qr_json_kv_num(j, "Cosine", v->out.cosine);
        qr_json_kv_num(j, "SQNR", v->out.sqnr);
        qr_json_kv_num(j, "MSE", v->out.mse);
        qr_json_kv_num(j, "ratio", v->ratio);
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
    qr_json_obj_end(j);
    qr_arena_free(&a);
}

static void qr_frag_html(QrHtml *h, const QrFragResult *r) {
    QrArena a = { 0 };
    qr_html_section(h, "fragility", "Rounding fragility");
    qr_html_paraf(h, "The simulation re-run with every activation quantizer rounding differently by one LSB, as a device that "
                  "is correct but rounds otherwise would: half away from zero instead of half to even at every tie, and "
                  "±1 LSB at %g%% of the elements of every activation quantizer (%d seed%s). %d model runs.",
                  100.0 * r->opts.share, r->opts.n_seeds, r->opts.n_seeds == 1 ? "" : "s", r->n_runs);
    QrHtmlLevel lv = !r->n_layers || r->quant_mse != r->quant_mse ? QR_HTML_WARN : r->fragile ? QR_HTML_BAD : QR_HTML_GOOD;
    qr_html_notice(h, lv, r->fragile ? "Rounding-fragile" : "Rounding fragility", qr_frag_verdict(&a, r));
    QrTable t = { 0 };
    if (qr__fr_var_table(r, &a, &t) == QR_OK) qr_html_table(h, &t, NULL);
    qr_table_free(&t);
    memset(&t, 0, sizeof t);
    QrHtmlTableOpts to = { .caption = "Per activation quantizer, in graph order: where the perturbations arrive and grow "
                                      "(gain: relative perturbation arriving over that of the noisiest quantizer it reads)",
                           .max_rows = 48 };
    if (r->n_layers && qr__fr_layer_table(r, &a, &t) == QR_OK) qr_html_table(h, &t, &to);
    qr_table_free(&t);
    const char *files[] = { QR_BF_FRAGILITY ".txt", QR_BF_FRAGILITY ".csv" };
    qr_html_files(h, files, 2);
    qr_arena_free(&a);
}
