/* analysis/weights — implementation. See weights.h.
 *
 * Map: shared fake-quant helpers (parameter index, channel axis, numbers) · per-weight
 * comparison · weight_comparison.txt/.csv. */

/* ==== shared helpers (weights, dist, advisor, what-if) ============================== */

static int64_t qr_weights_param_index(int rank, const int64_t *dims, int axis, int block_size, int64_t n_params, int64_t i) {
    if (n_params <= 1 || rank == 0) return 0;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return 0;
    int64_t inner = 1;
    for (int d = axis + 1; d < rank; d++) inner *= dims[d];
    int64_t len = dims[axis], k = (i / inner) % len;
    if (block_size <= 0) return k;
    int64_t nblk = 1 + (len - 1) / block_size, o = i / (inner * len), n = i % inner;
    return o * nblk * inner + (k / block_size) * inner + n;
}

static int qr_weight_channel_axis(const QrGraph *g, const QrQuantizer *q, int rank) {
    if (rank <= 1) return 0;
    if (q->n_scales > 1) {
        int a = q->axis < 0 ? q->axis + rank : q->axis;
        return a >= 0 && a < rank ? a : 0;
    }
    if (q->owner >= 0 && rank == 2) {
        const QrNode *n = &g->nodes[q->owner];
        if (!strcmp(n->op_type, "MatMul") && q->owner_input == 1) return 1;
        if (!strcmp(n->op_type, "Gemm") && q->owner_input == 1 && !qr_attr_int(n, "transB", 0)) return 1;
    }
    return 0;
}

static int qr__wt_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Median of v[0..n) (sorts v in place); NAN for n = 0. */
static double qr_weights_median(double *v, int64_t n) {
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, qr__wt_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Outlier limit for channel abs-maxima: k × median, or k × mean when the median is 0. */
static double qr_weights_outlier_limit(const double *absmax, int64_t n, double median, double k) {
    if (median > 0) return k * median;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += absmax[i];
    return n ? k * s / (double)n : INFINITY;
}

/* %.7f in .txt, %.9g in .csv (docs/REPORT.md); nan / inf / -inf spelled out. */
static QrStatus qr_weights_num(QrTable *t, int row, int col, double v, bool csv) {
    if (v != v) return qr_table_set(t, row, col, "nan");
    if (isinf(v)) return qr_table_set(t, row, col, v > 0 ? "inf" : "-inf");
    return csv ? qr_table_setf(t, row, col, "%.9g", v) : qr_table_setf(t, row, col, "%.7f", v);
}

/* Writes dir/<stem>.txt and dir/<stem>.csv from two tables with the same columns. */
static QrStatus qr_weights_write_tables(const QrTable *txt_t, const QrTable *csv_t, const char *header, const char *footer,
                                   const char *dir, const char *stem) {
    char *txt = NULL, *csv = NULL;
    size_t tl = 0, tc = 0, cl = 0, cc = 0;
    QrStatus st = header ? qr_buf_printf(&txt, &tl, &tc, "%s", header) : QR_OK;
    if (st == QR_OK) st = qr_table_render_txt(txt_t, NULL, NULL, &txt, &tl, &tc);
    if (st == QR_OK && footer) st = qr_buf_printf(&txt, &tl, &tc, "%s", footer);
    if (st == QR_OK) st = qr_table_render_csv(csv_t, NULL, &csv, &cl, &cc);
    if (st == QR_OK) {
        QrArena a = {0};
        st = qr_file_write_atomic(qr_arena_printf(&a, "%s/%s.txt", dir, stem), txt, tl);
        if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/%s.csv", dir, stem), csv, cl);
        qr_arena_free(&a);
    }
    free(txt);
    free(csv);
    return st;
}

/* ==== per-weight comparison ======================================================== */

/* Name of the baseline value whose tensor is t (NULL if t is not a baseline value). */
static const char *qr_weights_base_name(const QrGraph *b, const QrTensor *t) {
    for (int v = 0; v < b->n_values; v++)
        if (&b->values[v].t == t) return b->values[v].name;
    return NULL;
}

/* The real range a quantizer's grid covers, scale·(qmin−zp) .. scale·(qmax−zp), widest
 * over its channels; NAN when the scale is not constant or the dtype has no integer range. */
static void qr_weights_clip_range(const QrGraph *g, const QrQuantizer *q, double *lo_out, double *hi_out) {
    const QrTensor *sc = q->scale_value >= 0 ? &g->values[q->scale_value].t : NULL;
    const QrTensor *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    QrQuantRange range;
    *lo_out = *hi_out = NAN;
    if (!sc || !sc->data || !qr_quant_range(q->dtype, &range)) return;
    for (int64_t p = 0; p < sc->numel; p++) {
        double s1 = qr_tensor_get_f64(sc, p), z = zp && zp->data ? (double)qr_tensor_get_i64(zp, zp->numel > 1 ? p : 0) : 0;
        double lo = s1 * (range.lo - z), hi = s1 * (range.hi - z);
        if (!(lo >= *lo_out)) *lo_out = lo;   /* also replaces the initial NAN */
        if (!(hi <= *hi_out)) *hi_out = hi;
    }
}

static void qr_weights_wdata_free(QrWtData *d) {
    if (!d->x_borrowed) free(d->x);
    free(d->y);
    free(d->ps);
    free(d->pz);
    d->x = d->y = d->ps = NULL;
    d->pz = NULL;
    d->x_borrowed = false;
}

/* Elements [i0, i0 + n) of d, element i on parameter (ps[i * pstep], pz[i * pstep]): one parameter
 * for the run (pstep 0), or one per element (pstep 1: a row of a weight quantized along its last
 * axis, the channels in order — a transformer's MatMul weights, where a call per element and its
 * parameter index took most of the weight comparison). d->x holds the float weight when there is
 * one; fills d->y (and d->x without a float weight) and the counts. */
static void qr__wt_wdata_run1(QrWtData *d, int64_t i0, int64_t n, const float *ps, const int32_t *pz, int64_t pstep,
                              QrQuantRange range) {
    float *x = d->x + i0, *y = d->y + (i0 - d->y0);
    const QrTensor *iw = d->iw;
    const bool nbits = d->iw_nbits;
    const int8_t *i8 = iw && !nbits && iw->dtype == QR_DT_S8 ? (const int8_t *)iw->data + i0 : NULL;
    const uint8_t *u8 = iw && !nbits && iw->dtype == QR_DT_U8 ? (const uint8_t *)iw->data + i0 : NULL;
    const float lo = (float)range.lo, hi = (float)range.hi;
    int64_t n_sat = 0, n_sat_far = 0, n_zero = 0, n_nonfinite = 0, n_diff = 0;
    for (int64_t i = 0; i < n; i++) {
        const float s1 = ps[i * pstep];
        const int32_t z = pz[i * pstep];
        const float fz = (float)z;
        int32_t qv = 0;
        if (d->w) {
            float xv = x[i], dv = xv / s1;
            if (!isfinite(xv) || !isfinite(dv)) n_nonfinite++;
            else {
                float rd = rintf(dv);
                if (rd + fz < lo || rd + fz > hi) n_sat++;
                if (dv + fz < lo - 1.0f || dv + fz > hi + 1.0f) n_sat_far++;
            }
            qv = qr_quant_saturate_round(dv, z, range);   /* = qr_quant_quantize_f32(xv, s1, z, range) */
            if (xv != 0 && qv == z) n_zero++;
        }
        if (iw) {
            int32_t stored = i8 ? i8[i] : u8 ? u8[i] : nbits ? qr_qtable_nbits_code(iw, i0 + i) : (int32_t)qr_tensor_get_i64(iw, i0 + i);
            if (d->w && stored != qv) n_diff++;
            qv = stored;
        }
        y[i] = (float)(qv - z) * s1;
        if (!d->w) x[i] = y[i];
    }
    d->n_sat += n_sat;
    d->n_sat_far += n_sat_far;
    d->n_zero += n_zero;
    d->n_nonfinite += n_nonfinite;
    d->n_requant_diff += n_diff;
}

/* Four lanes of GCC's vector extension (an SSE2 register on x86-64, NEON on aarch64): the same IEEE
 * operations lane by lane as the scalar code, so the same bits. */
typedef float QrWtV4f __attribute__((vector_size(16)));
typedef int32_t QrWtV4i __attribute__((vector_size(16)));
typedef int8_t QrWtV4s8 __attribute__((vector_size(4)));
typedef uint8_t QrWtV4u8 __attribute__((vector_size(4)));

static inline QrWtV4i qr__wt_bits4(QrWtV4f v) { QrWtV4i b; memcpy(&b, &v, sizeof b); return b; }
static inline QrWtV4f qr__wt_sel4(QrWtV4i m, QrWtV4f a, QrWtV4f b) {   /* m ? a : b, lane by lane (m: -1 or 0) */
    QrWtV4i r = (qr__wt_bits4(a) & m) | (qr__wt_bits4(b) & ~m);
    QrWtV4f f;
    memcpy(&f, &r, sizeof f);
    return f;
}
/* rintf lane by lane (round to nearest, ties to even, the default mode qreport never changes): below
 * 2^23 in magnitude (|v| + 2^23) - 2^23 with v's sign, which rounds exactly as rintf; from 2^23 on v
 * is an integer already. NaN and infinities: not used (the callers mask those lanes). */
static inline QrWtV4f qr__wt_rint4(QrWtV4f v) {
    const QrWtV4i sign = (QrWtV4i){0} + (int32_t)0x80000000, absm = ~sign;
    QrWtV4i b = qr__wt_bits4(v);
    QrWtV4i ab = b & absm;
    QrWtV4f a;
    memcpy(&a, &ab, sizeof a);
    const QrWtV4f big = (QrWtV4f){0} + 8388608.0f;
    QrWtV4f r = (a + big) - big;
    QrWtV4i rb = qr__wt_bits4(r) | (b & sign);
    QrWtV4f rs;
    memcpy(&rs, &rb, sizeof rs);
    return qr__wt_sel4(a < big, rs, v);
}
/* -1 where v is finite. */
static inline QrWtV4i qr__wt_finite4(QrWtV4f v) {
    return (qr__wt_bits4(v) & 0x7fffffff) < 0x7f800000;
}
static inline int64_t qr__wt_lanes(QrWtV4i c) {
    int64_t t = 0;
    for (int k = 0; k < 4; k++) t += c[k];
    return t;
}

/* qr__wt_wdata_run1 for 8-bit stored integers (or none) through the level's kernel (qr_kern.f32_wquant,
 * AVX-512), else four elements at a time here (the avx2 and neon levels): every lane's arithmetic is the
 * scalar loop's (a true division, rintf, the saturation of qr_quant_saturate_round,
 * (float)(q - z) * s), the counts added up as integers; the last n % 4 elements by qr__wt_wdata_run1. */
static void qr__wt_wdata_run(QrWtData *d, int64_t i0, int64_t n, const float *ps, const int32_t *pz, int64_t pstep,
                             QrQuantRange range) {
    const QrTensor *iw = d->iw;
    const bool s8 = iw && !d->iw_nbits && iw->dtype == QR_DT_S8, u8 = iw && !d->iw_nbits && iw->dtype == QR_DT_U8;
    float *x = d->x + i0, *y = d->y + (i0 - d->y0);
    if (qr_kern.f32_wquant && (!iw || s8 || u8)) {     /* the level's kernel (AVX-512), the same bits and counts */
        QrWqCounts c = {0};
        qr_kern.f32_wquant(d->w ? x : NULL, iw ? (const uint8_t *)iw->data + i0 : NULL, s8, ps, pz, pstep, range.lo, range.hi,
                           n, y, &c);
        if (!d->w) memcpy(x, y, (size_t)n * sizeof *x);
        d->n_sat += c.sat;
        d->n_sat_far += c.far;
        d->n_zero += c.zero;
        d->n_nonfinite += c.nonfinite;
        d->n_requant_diff += c.diff;
        return;
    }
    int64_t nv = iw && !s8 && !u8 ? 0 : n / 4 * 4;
    const QrWtV4f lo = (QrWtV4f){0} + (float)range.lo, hi = (QrWtV4f){0} + (float)range.hi, one = (QrWtV4f){0} + 1.0f;
    const QrWtV4i rlo = (QrWtV4i){0} + range.lo, rhi = (QrWtV4i){0} + range.hi;
    QrWtV4i c_sat = {0}, c_far = {0}, c_zero = {0}, c_nf = {0}, c_diff = {0};
    for (int64_t i = 0; i < nv; i += 4) {
        QrWtV4f s1;
        QrWtV4i z, qv = {0};
        if (pstep) { memcpy(&s1, ps + i, sizeof s1); memcpy(&z, pz + i, sizeof z); }
        else { s1 = (QrWtV4f){0} + ps[0]; z = (QrWtV4i){0} + pz[0]; }
        const QrWtV4f fz = __builtin_convertvector(z, QrWtV4f);
        if (d->w) {
            QrWtV4f xv, dv;
            memcpy(&xv, x + i, sizeof xv);
            dv = xv / s1;
            QrWtV4i fin = qr__wt_finite4(xv) & qr__wt_finite4(dv);
            c_nf -= ~fin;
            QrWtV4f a = qr__wt_rint4(dv) + fz, b = dv + fz;
            c_sat -= fin & ((a < lo) | (a > hi));
            c_far -= fin & ((b < lo - one) | (b > hi + one));
            QrWtV4f vlo = __builtin_convertvector(rlo - z, QrWtV4f), vhi = __builtin_convertvector(rhi - z, QrWtV4f);
            QrWtV4f v = qr__wt_sel4(dv >= vlo, dv, vlo);
            v = qr__wt_sel4(v > vhi, vhi, v);
            qv = __builtin_convertvector(qr__wt_rint4(v), QrWtV4i) + z;
            c_zero -= (xv != 0) & (qv == z);
        }
        if (iw) {
            QrWtV4i st;
            if (s8) { QrWtV4s8 q; memcpy(&q, (const int8_t *)iw->data + i0 + i, sizeof q); st = __builtin_convertvector(q, QrWtV4i); }
            else { QrWtV4u8 q; memcpy(&q, (const uint8_t *)iw->data + i0 + i, sizeof q); st = __builtin_convertvector(q, QrWtV4i); }
            if (d->w) c_diff -= st != qv;
            qv = st;
        }
        QrWtV4f yv = __builtin_convertvector(qv - z, QrWtV4f) * s1;
        memcpy(y + i, &yv, sizeof yv);
        if (!d->w) memcpy(x + i, &yv, sizeof yv);
        if ((i & ((1 << 24) - 4)) == (1 << 24) - 4) {   /* lanes count at most 2^22 before they are added up */
            d->n_sat += qr__wt_lanes(c_sat); d->n_sat_far += qr__wt_lanes(c_far); d->n_zero += qr__wt_lanes(c_zero);
            d->n_nonfinite += qr__wt_lanes(c_nf); d->n_requant_diff += qr__wt_lanes(c_diff);
            c_sat = c_far = c_zero = c_nf = c_diff = (QrWtV4i){0};
        }
    }
    d->n_sat += qr__wt_lanes(c_sat);
    d->n_sat_far += qr__wt_lanes(c_far);
    d->n_zero += qr__wt_lanes(c_zero);
    d->n_nonfinite += qr__wt_lanes(c_nf);
    d->n_requant_diff += qr__wt_lanes(c_diff);
    if (nv < n) qr__wt_wdata_run1(d, i0 + nv, n - nv, pstep ? ps + nv : ps, pstep ? pz + nv : pz, pstep, range);
}

/* A qreport.int.BlockDequant weight (quant/twin_wq.c): y[i] the node's own dequantized value
 * (qr_blk_value: the table, or ORT's one- or two-rounding formula) on scale ps[map[i]];
 * without a table the counts as for a DequantizeLinear (the zero point rounded to the grid);
 * the grid's range over every block. */
static void qr__wt_wdata_map(QrWtData *d, int64_t i0, int64_t len) {
    const QrGraph *g = d->g;
    const QrQuantizer *q = d->q;
    const float *ps = d->ps;
    const QrQuantRange range = d->range;
    const QrNode *dq = &g->nodes[q->dq_nodes[0]];
    const QrTensor *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    const QrTensor *tab = dq->n_in > 4 && dq->in[4] >= 0 ? &g->values[dq->in[4]].t : NULL;
    const uint8_t *zu = zp && zp->dtype == QR_DT_U8 ? zp->data : NULL;
    const float *zf = zp && zp->dtype == QR_DT_F32 ? zp->data : NULL, *table = tab ? tab->data : NULL;
    const int32_t *map = d->map;
    const QrTensor *iw = d->iw;
    for (int64_t i = i0; i < i0 + len; i++) {
        int64_t p = map[i];
        float s1 = ps[p], y = iw ? qr_blk_value((int32_t)qr_tensor_get_i64(iw, i), s1, zu, zf, p, table) : 0.0f;
        float zv = zu ? (float)zu[p] : zf ? zf[p] : 0.0f, lo, hi;
        if (table) {
            lo = hi = 0.0f;
            for (int c = 0; c < 16; c++) { lo = fminf(lo, table[c] * s1); hi = fmaxf(hi, table[c] * s1); }
        } else {
            lo = qr_blk_value((int32_t)range.lo, s1, zu, zf, p, NULL);
            hi = qr_blk_value((int32_t)range.hi, s1, zu, zf, p, NULL);
        }
        if (!(lo >= d->clip_lo)) d->clip_lo = lo;
        if (!(hi <= d->clip_hi)) d->clip_hi = hi;
        if (d->w) {
            float xv = d->x[i], dv = xv / s1;
            if (!isfinite(xv) || !isfinite(dv)) d->n_nonfinite++;
            else if (!table) {
                int32_t z = (int32_t)rintf(zv), qv = qr_quant_saturate_round(dv, z, range);
                float rd = rintf(dv);
                if (rd + (float)z < (float)range.lo || rd + (float)z > (float)range.hi) d->n_sat++;
                if (dv + (float)z < (float)range.lo - 1.0f || dv + (float)z > (float)range.hi + 1.0f) d->n_sat_far++;
                if (xv != 0 && qv == z) d->n_zero++;
                if (iw && qv != (int32_t)qr_tensor_get_i64(iw, i)) d->n_requant_diff++;
            }
        }
        d->y[i - d->y0] = y;
        if (!d->w) d->x[i] = y;
    }
}

static void qr_weights_wdata_fill(QrWtData *d, int64_t i0, int64_t len) {
    d->y0 = i0;
    if (d->map) {
        qr__wt_wdata_map(d, i0, len);
        return;
    }
    const QrTensor *sh = d->shape;
    int ax = d->q->axis < 0 ? d->q->axis + sh->rank : d->q->axis;
    if (d->np > 1 && d->q->block_size <= 0 && d->run == 1 && ax >= 0 && ax < sh->rank && sh->dims[ax] == d->np) {
        /* quantized along the last axis: the parameter of element i is i % np (qr_weights_param_index),
         * rows of np elements, cut at the panel's ends */
        for (int64_t i = i0, end = i0 + len; i < end;) {
            int64_t c = i % d->np, l = QR_MIN(d->np - c, end - i);
            qr__wt_wdata_run(d, i, l, d->ps + c, d->pz + c, 1, d->range);
            i += l;
        }
        return;
    }
    for (int64_t i = i0, end = i0 + len; i < end;) {   /* runs of one parameter, cut at the panel's ends */
        int64_t l = QR_MIN(d->run - i % d->run, end - i);
        int64_t p = qr_weights_param_index(sh->rank, sh->dims, d->q->axis, d->q->block_size, d->np, i);
        qr__wt_wdata_run(d, i, l, d->ps + p, d->pz + p, 0, d->range);
        i += l;
    }
}

#ifdef QR_TESTING
static int64_t qr__wt_y_peak;   /* the most elements any y held (tests: a panel, not the whole weight) */
#endif

static QrStatus qr_weights_wdata_panel(const QrSession *s, int qi, int64_t panel, QrWtData *d) {
    const QrGraph *g = &s->tw.g;
    const QrQuantizer *q = &s->qt.q[qi];
    memset(d, 0, sizeof *d);
    d->clip_lo = d->clip_hi = NAN;
    d->g = g;
    d->q = q;
    const QrTensor *sc = q->scale_value >= 0 ? &g->values[q->scale_value].t : NULL;
    const QrTensor *zp = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    if (s->fw && s->fw[qi]) { d->w = s->fw[qi]; d->src = QR_FW_BASELINE; }
    else if (q->float_value >= 0 && g->values[q->float_value].t.data && qr_dtype_is_float(g->values[q->float_value].t.dtype)) {
        d->w = &g->values[q->float_value].t;
        d->src = QR_FW_QAT;
    }
    if (q->int_value >= 0 && q->form != QR_QF_QDQ && g->values[q->int_value].t.data &&
        !qr_dtype_is_float(g->values[q->int_value].t.dtype))
        d->iw = &g->values[q->int_value].t;
    d->iw_nbits = d->iw && q->nbits_k && q->map_value < 0;   /* a MatMulNBits' B, read in place (quant/twin_wq.c) */
    if (d->iw_nbits) qr_qtable_codes_shape(g, q, &d->shape_own);
    d->shape = d->w ? d->w : d->iw == NULL ? NULL : d->iw_nbits ? &d->shape_own : d->iw;
    if (!d->shape) return QR_OK;
    d->n = d->shape->numel;
    QrQuantRange range;
    const int64_t iw_n = d->iw ? (d->iw_nbits ? d->shape_own.numel : d->iw->numel) : 0;
    if (!sc || !sc->data || sc->numel < 1 || !qr_quant_range(q->dtype, &range) || (d->iw && iw_n != d->n) || !d->n)
        return QR_OK;
    int64_t np = sc->numel, n = d->n;
    /* a float32 weight is read where it is (for an LLM's 49M-element lm_head a copy is 196 MB more); without a
     * float weight x is the dequantized weight, so y is whole */
    d->x_borrowed = d->w && d->w->dtype == QR_DT_F32;
    d->ny = d->w && panel > 0 && panel < n ? panel : n;
    d->x = d->x_borrowed ? (float *)d->w->data : malloc((size_t)n * sizeof(float) + 1);
    d->y = malloc((size_t)d->ny * sizeof(float) + 1);
    d->ps = malloc((size_t)np * sizeof(float) + 1);
    d->pz = malloc((size_t)np * sizeof(int32_t) + 1);
    if (!d->x || !d->y || !d->ps || !d->pz) {
        qr_weights_wdata_free(d);
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
#ifdef QR_TESTING
    if (d->ny > qr__wt_y_peak) qr__wt_y_peak = d->ny;
#endif
    if (q->map_value < 0) qr_weights_clip_range(g, q, &d->clip_lo, &d->clip_hi);
    for (int64_t p = 0; p < np; p++) {
        d->ps[p] = (float)qr_tensor_get_f64(sc, p);
        d->pz[p] = zp && zp->data ? (int32_t)qr_tensor_get_i64(zp, zp->numel > 1 ? p : 0) : 0;
    }
    if (d->w && !d->x_borrowed) for (int64_t i = 0; i < n; i++) d->x[i] = (float)qr_tensor_get_f64(d->w, i);
    d->np = np;
    d->range = range;
    /* the weight as qreport.int.BlockDequant computes it, scale map[i] */
    if (q->map_value >= 0) d->map = g->values[q->map_value].t.data;
    const QrTensor *sh = d->shape;
    d->run = 1;   /* consecutive elements on one parameter (blocked quantizers: 1) */
    if (np <= 1 || sh->rank == 0) {
        d->run = n;
    } else if (q->block_size <= 0) {
        int ax = q->axis < 0 ? q->axis + sh->rank : q->axis;
        for (int k = ax + 1; ax >= 0 && ax < sh->rank && k < sh->rank; k++) d->run *= sh->dims[k];
    }
    d->run = QR_MAX(d->run, 1);
    if (d->ny == n) qr_weights_wdata_fill(d, 0, n);
    d->ok = true;
    return QR_OK;
}

/* The largest finite |x| of each channel c of x[0..n) (element i on channel (i / inner) % nch) as the bits
 * of a float: for finite non-negative floats the integer order of the bits is the order of the values,
 * so the largest bits of |x| (a NaN or infinity counted as 0) are the largest finite magnitude's, +0 for
 * none. Four lanes at a time, channels side by side when they alternate element by element (inner 1:
 * a MatMul weight quantized along its last axis). amb: nch zeros on entry. */
static void qr__wt_spread_bits(const float *x, int64_t n, int64_t nch, int64_t inner, int32_t *amb) {
    for (int64_t i = 0; i < n;)
        for (int64_t c = 0; c < nch && i < n; c++) {
            if (inner == 1 && c == 0 && i + nch <= n) {   /* a whole row of channels */
                int64_t k = 0;
                for (; k + 4 <= nch; k += 4) {
                    QrWtV4f v;
                    QrWtV4i m;
                    memcpy(&v, x + i + k, sizeof v);
                    memcpy(&m, amb + k, sizeof m);
                    QrWtV4i b = qr__wt_bits4(v) & 0x7fffffff;
                    b &= b < 0x7f800000;
                    QrWtV4i gt = b > m;
                    m = (b & gt) | (m & ~gt);
                    memcpy(amb + k, &m, sizeof m);
                }
                for (; k < nch; k++) {
                    int32_t b;
                    memcpy(&b, x + i + k, sizeof b);
                    b &= 0x7fffffff;
                    if (b < 0x7f800000 && b > amb[k]) amb[k] = b;
                }
                i += nch;
                break;
            }
            int64_t e = QR_MIN(n, i + inner);
            QrWtV4i m = {0};
            for (; i + 4 <= e; i += 4) {
                QrWtV4f v;
                memcpy(&v, x + i, sizeof v);
                QrWtV4i b = qr__wt_bits4(v) & 0x7fffffff;
                b &= b < 0x7f800000;
                QrWtV4i gt = b > m;
                m = (b & gt) | (m & ~gt);
            }
            int32_t mc = amb[c];
            for (int k = 0; k < 4; k++) if (m[k] > mc) mc = m[k];
            for (; i < e; i++) {
                int32_t b;
                memcpy(&b, x + i, sizeof b);
                b &= 0x7fffffff;
                if (b < 0x7f800000 && b > mc) mc = b;
            }
            amb[c] = mc;
        }
}

/* Channel abs-maxima of x (rank/dims, along axis): largest, median, worst channel and
 * the outliers above k × median. absmax (optional, n_ch entries) receives them. */
static QrStatus qr_weights_spread(const float *x, int rank, const int64_t *dims, int axis, double k, double *absmax_out,
                              QrWtSpread *sp) {
    int64_t n = 1, inner = 1, nch = rank ? dims[axis] : 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    for (int d = axis + 1; d < rank; d++) inner *= dims[d];
    memset(sp, 0, sizeof *sp);
    sp->worst = -1;
    sp->max = sp->median = NAN;
    if (nch <= 0 || n <= 0) return QR_OK;
    double *am = calloc((size_t)nch + 1, sizeof(double)), *tmp = malloc(((size_t)nch + 1) * sizeof(double));
    int32_t *amb = calloc((size_t)nch + 1, sizeof *amb);
    if (!am || !tmp || !amb) { free(am); free(tmp); free(amb); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    qr__wt_spread_bits(x, n, nch, inner, amb);
    for (int64_t c = 0; c < nch; c++) {
        float f;
        memcpy(&f, &amb[c], sizeof f);
        am[c] = f;
    }
    free(amb);
    sp->n_ch = (int)nch;
    sp->max = 0;
    for (int64_t c = 0; c < nch; c++) {
        tmp[c] = am[c];
        if (sp->worst < 0 || am[c] > sp->max) { sp->max = am[c]; sp->worst = (int)c; }
    }
    sp->median = qr_weights_median(tmp, nch);
    double lim = qr_weights_outlier_limit(am, nch, sp->median, k);
    for (int64_t c = 0; c < nch && nch > 1; c++) if (am[c] > lim) sp->n_outlier++;
    if (absmax_out) memcpy(absmax_out, am, (size_t)nch * sizeof(double));
    free(am);
    free(tmp);
    return QR_OK;
}

/* Error energy sum (x - y)^2 of x[0..n) quantized min/max asymmetric with 2^bits levels (the range
 * widened to include 0, zero point round(-lo / scale), round half to even, float32 as ORT's
 * quantizers compute it); *sx receives sum x^2. */
static double qr__wt_requant_err(const float *x, int64_t n, int bits, double *sx) {
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; i++) { lo = fminf(lo, x[i]); hi = fmaxf(hi, x[i]); }
    float qmax = (float)((1 << bits) - 1), sc = (hi - lo) / qmax;
    if (!(sc > 0)) sc = 1.0f;
    float zp = fminf(fmaxf(rintf(-lo / sc), 0.0f), qmax);
    double e = 0;
    *sx = 0;
    for (int64_t i = 0; i < n; i++) {
        float q = fminf(fmaxf(rintf(x[i] / sc) + zp, 0.0f), qmax), y = (q - zp) * sc;
        e += ((double)x[i] - y) * ((double)x[i] - y);
        *sx += (double)x[i] * x[i];
    }
    return e;
}

static double qr__wt_sqnr(double sx, double se) {
    return se > 0 ? (sx > 0 ? 10.0 * log10(sx / se) : -INFINITY) : INFINITY;
}

/* The blocks carrying the most error energy (r->dom_*), and the what-ifs on the largest (its float
 * elements in the weight's order: the halves are its first and second half along the blocked axis). */
static QrStatus qr__wt_blocks_dom(const QrWtData *d, const QrQuantizer *q, QrWeightRow *r, const double *sx,
                                  const double *se) {
    int64_t nb = r->n_blocks;
    double *t = malloc((size_t)nb * sizeof *t);
    if (!t) return qr_errf(QR_ERR_NOMEM, "out of memory");
    double total = 0, sxt = 0;
    for (int64_t p = 0; p < nb; p++) { t[p] = se[p]; total += se[p]; sxt += sx[p]; }
    qsort(t, (size_t)nb, sizeof *t, qr__wt_cmp_double);
    r->blk_err_total = total;
    r->blk_err_median = nb % 2 ? t[nb / 2] : 0.5 * (t[nb / 2 - 1] + t[nb / 2]);
    free(t);
    r->n_dom = 0;
    for (int64_t p = 0; p < nb; p++) {   /* largest first; ties keep the lower index */
        int at = r->n_dom;
        while (at > 0 && se[p] > r->dom_err[at - 1]) at--;
        if (at >= QR_WEIGHT_WORST_BLOCKS) continue;
        for (int k = QR_MIN(r->n_dom, QR_WEIGHT_WORST_BLOCKS - 1); k > at; k--) {
            r->dom_err[k] = r->dom_err[k - 1];
            r->dom_sqnr[k] = r->dom_sqnr[k - 1];
            r->dom_blk[k] = r->dom_blk[k - 1];
        }
        r->dom_err[at] = se[p];
        r->dom_sqnr[at] = qr__wt_sqnr(sx[p], se[p]);
        r->dom_blk[at] = p;
        if (r->n_dom < QR_WEIGHT_WORST_BLOCKS) r->n_dom++;
    }
    r->dom_lo = r->dom_hi = r->dom_half_sqnr = r->dom_8bit_sqnr = r->half_layer_sqnr = NAN;
    int bits = q->dtype == QR_DT_U2 || q->dtype == QR_DT_S2 ? 2 : q->dtype == QR_DT_U4 || q->dtype == QR_DT_S4 ? 4 : 8;
    if (!r->n_dom || !(total > 0)) return QR_OK;
    const int64_t best = r->dom_blk[0];
    float *x = malloc((size_t)q->block_size * sizeof *x);
    if (!x) return qr_errf(QR_ERR_NOMEM, "out of memory");
    int64_t m = 0;
    for (int64_t i = 0; i < d->n && m < q->block_size; i++)
        if ((d->map ? d->map[i] : qr_weights_param_index(r->rank, r->dims, q->axis, q->block_size, nb, i)) == best)
            x[m++] = d->x[i];
    if (m > 1) {
        double s1, s2, s8;
        double e_half = qr__wt_requant_err(x, m / 2, bits, &s1) + qr__wt_requant_err(x + m / 2, m - m / 2, bits, &s2);
        double e8 = qr__wt_requant_err(x, m, 8, &s8);
        r->dom_half_sqnr = qr__wt_sqnr(s1 + s2, e_half);
        r->dom_8bit_sqnr = qr__wt_sqnr(s8, e8);
        r->half_layer_sqnr = qr__wt_sqnr(sxt, total - se[best] + e_half);
        r->dom_lo = r->dom_hi = x[0];
        for (int64_t i = 1; i < m; i++) { r->dom_lo = fmin(r->dom_lo, x[i]); r->dom_hi = fmax(r->dom_hi, x[i]); }
    }
    free(x);
    return QR_OK;
}

/* Block p of r listed (weight_blocks): its numbers from the per-block sums. */
static QrWtBlk qr__wt_blk(const QrWtData *d, int64_t p, const double *cp, double cp_total, const double *se, double se_total,
                          const double *sx, const double *mx, const int64_t *am, double sigma) {
    QrWtBlk b = { .p = p, .set_by = am[p] };
    b.out_share = cp && cp_total > 0 ? cp[p] / cp_total : NAN;
    b.err_share = se_total > 0 ? se[p] / se_total : NAN;
    b.sqnr = qr__wt_sqnr(sx[p], se[p]);
    b.max_err = mx[p];
    b.set_val = am[p] >= 0 ? d->x[am[p]] : NAN;
    b.set_sigma = sigma > 0 ? fabs(b.set_val) / sigma : NAN;
    return b;
}

/* The per-block sums of qr__wt_blocks, added up panel by panel (qr__wt_blk_add) in element order. */
typedef struct QrWtBlkAcc {
    double *sx, *se, *mx, *cp;   /* per block: sum x^2, sum e^2, max |e|, sum E[x_k^2] e^2 (e = x - y) */
    int64_t *am;                 /* per block: the element of the largest |x| (-1: none) */
    double s1, s2;               /* sum x, sum x^2 over the finite x */
    int64_t cnt, nb;
    const double *ek;            /* E[x_k^2] per input row k = (i / kdiv) % kmod, or NULL */
    int64_t kdiv, kmod;
} QrWtBlkAcc;

static void qr__wt_blk_acc_free(QrWtBlkAcc *a) {
    free(a->sx); free(a->se); free(a->mx); free(a->cp); free(a->am);
    memset(a, 0, sizeof *a);
}

static QrStatus qr__wt_blk_acc_init(QrWtBlkAcc *a, int64_t nb, const double *ek, int64_t kdiv, int64_t kmod) {
    memset(a, 0, sizeof *a);
    a->sx = calloc((size_t)nb, sizeof(double));
    a->se = calloc((size_t)nb, sizeof(double));
    a->mx = calloc((size_t)nb, sizeof(double));
    a->cp = calloc((size_t)nb, sizeof(double));
    a->am = malloc((size_t)nb * sizeof(int64_t) + 1);
    if (!a->sx || !a->se || !a->mx || !a->cp || !a->am) {
        qr__wt_blk_acc_free(a);
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    for (int64_t p = 0; p < nb; p++) a->am[p] = -1;
    a->nb = nb;
    a->ek = ek;
    a->kdiv = kdiv;
    a->kmod = kmod;
    return QR_OK;
}

/* Elements [i0, i0 + len) of d (y: the panel d->y filled from i0) into the block sums. */
static void qr__wt_blk_add(QrWtBlkAcc *a, const QrWtData *d, const QrQuantizer *q, const QrWeightRow *r, int64_t i0,
                           int64_t len) {
    const int64_t nb = a->nb;
    for (int64_t i = i0; i < i0 + len; i++) {
        int64_t p = d->map ? d->map[i] : qr_weights_param_index(r->rank, r->dims, q->axis, q->block_size, nb, i);
        double x = d->x[i], e = x - (double)d->y[i - d->y0];
        if (isfinite(x)) { a->s1 += x; a->s2 += x * x; a->cnt++; }
        if (p < 0 || p >= nb || !isfinite(e)) continue;
        a->sx[p] += x * x;
        a->se[p] += e * e;
        if (a->ek) a->cp[p] += a->ek[(i / a->kdiv) % a->kmod] * e * e;
        if (fabs(e) > a->mx[p]) a->mx[p] = fabs(e);
        if (a->am[p] < 0 || fabs(x) > fabs(d->x[a->am[p]])) a->am[p] = i;
    }
}

/* Per block of a blocked weight (the elements sharing one scale), from the sums acc holds (freed here):
 * SQNR = 10 log10(sum x^2 / sum (x - y)^2) of the float weight x against its quantized value y, and the
 * largest |x - y|; keeps the QR_WEIGHT_WORST_BLOCKS lowest (a block with no error has +inf, a zero block
 * with error -inf). Ties keep the lower block index. acc->ek (optional): E[x_k^2] of the input activations
 * per input row k: each block's share of the output error. */
static QrStatus qr__wt_blocks(const QrWtData *d, const QrQuantizer *q, QrWtBlkAcc *acc, QrWeightRow *r) {
    int64_t nb = acc->nb;
    double *sx = acc->sx, *se = acc->se, *mx = acc->mx, *cp = acc->cp, s1 = acc->s1, s2 = acc->s2;
    int64_t *am = acc->am, cnt = acc->cnt;
    const double *ek = acc->ek;
    double mean = cnt ? s1 / (double)cnt : 0;
    r->sigma = cnt > 1 ? sqrt(fmax(0.0, s2 / (double)cnt - mean * mean)) : NAN;
    r->has_act = ek != NULL;
    r->n_blocks = nb;
    r->n_worst = 0;
    for (int64_t p = 0; p < nb; p++) {
        double v = se[p] > 0 ? (sx[p] > 0 ? 10.0 * log10(sx[p] / se[p]) : -INFINITY) : INFINITY;
        int at = r->n_worst;
        while (at > 0 && v < r->worst_sqnr[at - 1]) at--;
        if (at >= QR_WEIGHT_WORST_BLOCKS) continue;
        int last = QR_MIN(r->n_worst, QR_WEIGHT_WORST_BLOCKS - 1);
        for (int k = last; k > at; k--) {
            r->worst_sqnr[k] = r->worst_sqnr[k - 1];
            r->worst_err[k] = r->worst_err[k - 1];
            r->worst_blk[k] = r->worst_blk[k - 1];
        }
        r->worst_sqnr[at] = v;
        r->worst_err[at] = mx[p];
        r->worst_blk[at] = p;
        if (r->n_worst < QR_WEIGHT_WORST_BLOCKS) r->n_worst++;
    }
    QrStatus st = qr__wt_blocks_dom(d, q, r, sx, se);
    /* the listed blocks: the largest by output-error share (error energy without activations), then the
     * lowest SQNR ones not among them; largest share first (ties: lower block index) */
    const double *key = ek ? cp : se;
    double cp_total = 0, se_total = 0;
    for (int64_t p = 0; p < nb; p++) { cp_total += cp[p]; se_total += se[p]; }
    int64_t top[QR_WEIGHT_WORST_BLOCKS];
    int nt = 0;
    for (int64_t p = 0; p < nb; p++) {
        int at = nt;
        while (at > 0 && key[p] > key[top[at - 1]]) at--;
        if (at >= QR_WEIGHT_WORST_BLOCKS) continue;
        for (int k = QR_MIN(nt, QR_WEIGHT_WORST_BLOCKS - 1); k > at; k--) top[k] = top[k - 1];
        top[at] = p;
        if (nt < QR_WEIGHT_WORST_BLOCKS) nt++;
    }
    r->n_blk = 0;
    for (int k = 0; k < nt; k++) r->blk[r->n_blk++] = qr__wt_blk(d, top[k], ek ? cp : NULL, cp_total, se, se_total, sx, mx, am, r->sigma);
    for (int k = 0; k < r->n_worst; k++) {
        bool dup = false;
        for (int j = 0; j < nt; j++) dup |= top[j] == r->worst_blk[k];
        if (!dup) r->blk[r->n_blk++] = qr__wt_blk(d, r->worst_blk[k], ek ? cp : NULL, cp_total, se, se_total, sx, mx, am, r->sigma);
    }
    for (int i = 1; i < r->n_blk; i++)   /* stable: by share, largest first */
        for (int j = i; j > 0; j--) {
            double a = ek ? r->blk[j].out_share : r->blk[j].err_share, b = ek ? r->blk[j - 1].out_share : r->blk[j - 1].err_share;
            if (!(a > b)) break;
            QrWtBlk t = r->blk[j];
            r->blk[j] = r->blk[j - 1];
            r->blk[j - 1] = t;
        }
    /* the outlier blocks (largest |w| above QR_WEIGHT_OUTLIER_SIGMA sigma): the one with the largest share */
    int64_t ob = -1;
    r->n_outlier_blk = 0;
    for (int64_t p = 0; p < nb; p++) {
        if (am[p] < 0 || !(r->sigma > 0) || !(fabs(d->x[am[p]]) > QR_WEIGHT_OUTLIER_SIGMA * r->sigma)) continue;
        r->n_outlier_blk++;
        if (ob < 0 || key[p] > key[ob]) ob = p;
    }
    r->outlier_rank = r->outlier_sqnr_rank = -1;
    if (ob >= 0) {
        r->outlier = qr__wt_blk(d, ob, ek ? cp : NULL, cp_total, se, se_total, sx, mx, am, r->sigma);
        r->outlier_rank = r->outlier_sqnr_rank = 0;
        double so = qr__wt_sqnr(sx[ob], se[ob]);
        for (int64_t p = 0; p < nb; p++) {
            r->outlier_rank += key[p] > key[ob] || (key[p] == key[ob] && p < ob);
            double sp = qr__wt_sqnr(sx[p], se[p]);
            r->outlier_sqnr_rank += sp < so || (sp == so && p < ob);
        }
    }
    qr__wt_blk_acc_free(acc);
    return st;
}

/* E[x_k^2] per input row k of the weight of quantizer qi, from the baseline run's values: the weight feeds
 * a MatMul (as its [K, N] right operand: element i on row i / N) or a Gemm (transB: [N, K], row i % K) of the
 * twin, and the baseline's matching MatMul / Gemm reads an activation whose last dim is K (a node output
 * the session keeps, or a graph input). Returns a malloc'd [K] array, or NULL (not known). */
static double *qr__wt_act_energy(const QrSession *s, int qi, const QrWeightRow *r, int64_t *kdiv, int64_t *kmod) {
    const QrQuantizer *q = &s->qt.q[qi];
    const QrGraph *g = &s->tw.g;
    if (!s->base || s->base_stale || !s->fw_src || s->fw_src[qi] < 0 || r->rank != 2 || q->out_value < 0) return NULL;
    int64_t K = -1;
    for (int n = 0; n < g->n_nodes && K < 0; n++) {
        const QrNode *nd = &g->nodes[n];
        if (nd->n_in < 2 || nd->in[1] != q->out_value || strcmp(nd->domain, "")) continue;
        if (!strcmp(nd->op_type, "MatMul")) { K = r->dims[0]; *kdiv = r->dims[1]; *kmod = K; }
        else if (!strcmp(nd->op_type, "Gemm")) {
            const QrAttr *tb = qr_node_attr(nd, "transB");
            bool t = tb && tb->i;
            K = t ? r->dims[1] : r->dims[0];
            *kdiv = t ? 1 : r->dims[1];
            *kmod = K;
        }
    }
    if (K <= 0) return NULL;
    const QrGraph *b = s->b;
    int va = -1;
    for (int n = 0; n < b->n_nodes && va < 0; n++) {
        const QrNode *nd = &b->nodes[n];
        if (nd->n_in >= 2 && nd->in[1] == s->fw_src[qi] && (!strcmp(nd->op_type, "MatMul") || !strcmp(nd->op_type, "Gemm")))
            va = nd->in[0];
    }
    if (va < 0) return NULL;
    const QrTensor *x = NULL;
    for (int i = 0; i < s->m.n && !x; i++) if (s->m.m[i].b_value == va && s->base[i].data) x = &s->base[i];
    for (int j = 0; j < b->n_inputs && !x && s->inputs; j++) if (b->inputs[j] == va) x = &s->inputs[j];
    if (!x || !x->data || x->dtype != QR_DT_F32 || x->rank < 1 || x->dims[x->rank - 1] != K || x->numel < K) return NULL;
    double *e = calloc((size_t)K, sizeof *e);
    if (!e) return NULL;
    const float *xv = x->data;
    int64_t rows = x->numel / K;
    for (int64_t t = 0; t < rows; t++)
        for (int64_t k = 0; k < K; k++) e[k] += (double)xv[t * K + k] * xv[t * K + k];
    for (int64_t k = 0; k < K; k++) e[k] /= (double)rows;
    return e;
}

/* Elements of y a weight's comparison holds at once (a multiple of QR_KERN_STATS_BLOCK: qr_metric_stream_add);
 * tests set it smaller, 0: the whole weight. */
static int64_t qr__wt_panel = 16 * QR_KERN_STATS_BLOCK;

/* Fills everything but the identification fields of row r for quantizer qi. The dequantized weight is
 * computed a panel at a time (qr__wt_panel elements) and every sum taken in element order, so the row is
 * the one the whole weight gives, bit for bit. */
static QrStatus qr__wt_weight_row(const QrSession *s, int qi, QrWeightRow *r) {
    const QrQuantizer *q = &s->qt.q[qi];
    QrWtData d;
    r->scale_min = q->scale_min;
    r->scale_max = q->scale_max;
    r->ch_worst = -1;
    r->ch_absmax_max = r->ch_absmax_median = NAN;
    QR_TRY(qr_weights_wdata_panel(s, qi, qr__wt_panel, &d));
    r->src = d.src;
    if (d.shape) {
        r->rank = d.shape->rank;
        memcpy(r->dims, d.shape->dims, sizeof r->dims);
        r->n = d.n;
    }
    if (!d.ok) return QR_OK;
    r->map = d.map;
    r->ch_axis = qr_weight_channel_axis(&s->tw.g, q, r->rank);
    QrWtSpread sp;
    QrStatus st = qr_weights_spread(d.x, r->rank, r->dims, r->ch_axis, QR_OUTLIER_K, NULL, &sp);
    r->n_ch = sp.n_ch;
    r->ch_absmax_max = sp.max;
    r->ch_absmax_median = sp.median;
    r->ch_worst = sp.worst;
    r->n_outlier_ch = sp.n_outlier;
    const bool blocks = st == QR_OK && d.w && q->block_size > 0 && q->n_scales > 1;
    int64_t kdiv = 1, kmod = 1;
    double *ek = blocks ? qr__wt_act_energy(s, qi, r, &kdiv, &kmod) : NULL;
    QrWtBlkAcc acc = {0};
    if (blocks) st = qr__wt_blk_acc_init(&acc, q->n_scales, ek, kdiv, kmod);
    QrMetricStream ms;
    qr_metric_stream_init(&ms);
    for (int64_t i0 = 0; st == QR_OK && i0 < d.n; i0 += d.ny) {   /* one pass when y is whole */
        int64_t len = QR_MIN(d.ny, d.n - i0);
        if (d.ny < d.n) qr_weights_wdata_fill(&d, i0, len);
        if (d.w) qr_metric_stream_add(&ms, d.x + i0, d.y, len);
        if (blocks) qr__wt_blk_add(&acc, &d, q, r, i0, len);
    }
    r->n_sat = d.n_sat;
    r->n_sat_far = d.n_sat_far;
    r->n_zero = d.n_zero;
    r->n_nonfinite = d.n_nonfinite;
    r->n_requant_diff = d.n_requant_diff;
    /* KL and Rtol are not reported for weights (and KL costs two exp per element) */
    if (st == QR_OK && d.w && !qr_metric_stream_finish(&ms, &r->m)) {   /* a pair not finite: the whole arrays */
        QrWtData t = d;
        t.y = d.ny < d.n ? malloc((size_t)d.n * sizeof(float)) : d.y;
        if (!t.y) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        else {
            if (t.y != d.y) qr_weights_wdata_fill(&t, 0, d.n);   /* on a copy: d's counts stay */
            qr_metrics_compute_opts(d.x, t.y, d.n, false, false, &r->m);
            if (t.y != d.y) free(t.y);
        }
    }
    r->has_m = st == QR_OK && d.w;
    if (blocks && st == QR_OK) st = qr__wt_blocks(&d, q, &acc, r);
    qr__wt_blk_acc_free(&acc);
    free(ek);
    qr_weights_wdata_free(&d);
    return st;
}

typedef struct QrWtJob { const QrSession *s; QrWeightCmp *out; } QrWtJob;

static QrStatus qr__wt_weight_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrWtJob *j = ctx;
    QrWeightRow *r = &j->out->rows[k];
    return qr__wt_weight_row(j->s, r->q, r);
}

static QrStatus qr_weights_compare(const QrSession *s, QrWeightCmp *out) {
    memset(out, 0, sizeof *out);
    const QrGraph *g = &s->tw.g;
    int cnt = 0;
    for (int i = 0; i < s->qt.n; i++) cnt += s->qt.q[i].kind == QR_QK_WEIGHT;
    out->rows = qr_arena_array(&out->arena, (size_t)cnt + 1, sizeof *out->rows);
    if (!out->rows) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->qt.n; i++) {
        const QrQuantizer *q = &s->qt.q[i];
        if (q->kind != QR_QK_WEIGHT) continue;
        QrWeightRow *r = &out->rows[out->n++];
        r->q = i;
        r->dtype = q->dtype;
        r->axis = q->n_scales > 1 ? q->axis : -1;
        r->block_size = q->block_size;
        int src = q->owner >= 0 ? s->tw.origin[q->owner] : -1;
        r->node = src >= 0 ? s->a->nodes[src].name : q->owner >= 0 ? g->nodes[q->owner].name : "";
        r->op_type = src >= 0 ? s->a->nodes[src].op_type : q->owner >= 0 ? g->nodes[q->owner].op_type : "";
    }
    /* the weights are independent: one job each */
    QrWtJob job = { s, out };
    QrStatus st = qr_session_jobs(s, out->n, qr__wt_weight_job, &job, NULL);
    if (st != QR_OK) { qr_weights_free(out); return qr_err_wrap(st, "weight comparison"); }
    for (int k = 0; k < out->n; k++) {
        QrWeightRow *r = &out->rows[k];
        const QrQuantizer *q = &s->qt.q[r->q];
        if (r->axis < 0 && q->n_scales > 1 && r->rank) r->axis += r->rank;
        const char *nm = NULL;
        if (r->src == QR_FW_BASELINE) nm = qr_weights_base_name(s->b, s->fw[r->q]);
        else if (r->src == QR_FW_QAT) nm = g->values[q->float_value].name;
        if (!nm && q->int_value >= 0) nm = g->values[q->int_value].name;
        r->name = nm ? nm : "?";
    }
    return QR_OK;
}

static void qr_weights_free(QrWeightCmp *w) {
    qr_arena_free(&w->arena);
    memset(w, 0, sizeof *w);
}

/* ==== weight_comparison.txt / .csv ================================================= */

static const char *qr__wt_src_name(QrFloatSrc s) {
    return s == QR_FW_BASELINE ? "baseline" : s == QR_FW_QAT ? "qat" : "none";
}

static QrStatus qr__wt_weights_table(const QrWeightCmp *w, bool csv, QrTable *t) {
    static const char *const cols[] = { "Index", "weight", "node", "op_type", "shape", "dtype", "axis", "SQNR", "Cosine",
                                        "max_abs_err", "L1", "scale_min", "scale_max", "saturated", "rounded_to_zero",
                                        "ch_absmax_ratio", "outlier_channels", "float_weight" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int k = 0; k < w->n; k++) {
        const QrWeightRow *r = &w->rows[k];
        int row;
        char shape[128];
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_setf(t, row, 0, "%d", k);
        qr_table_set(t, row, 1, r->name);
        qr_table_set(t, row, 2, r->node);
        qr_table_set(t, row, 3, r->op_type);
        qr_table_set(t, row, 4, r->rank ? qr_shape_str(shape, sizeof shape, r->rank, r->dims) : "");
        qr_table_set(t, row, 5, qr_dtype_name(r->dtype));
        if (r->block_size) qr_table_setf(t, row, 6, "%d (block %d)", r->axis, r->block_size);
        else qr_table_setf(t, row, 6, "%d", r->axis);
        if (r->has_m) {
            qr_weights_num(t, row, 7, r->m.sqnr, csv);
            qr_weights_num(t, row, 8, r->m.cosine, csv);
            qr_weights_num(t, row, 9, r->m.atol, csv);
            qr_weights_num(t, row, 10, r->m.l1, csv);
        }
        qr_weights_num(t, row, 11, r->scale_min, csv);
        qr_weights_num(t, row, 12, r->scale_max, csv);
        if (r->has_m && r->n) {
            qr_weights_num(t, row, 13, (double)r->n_sat / (double)r->n, csv);
            qr_weights_num(t, row, 14, (double)r->n_zero / (double)r->n, csv);
        }
        if (r->n_ch > 0) {
            qr_weights_num(t, row, 15, r->ch_absmax_median > 0 ? r->ch_absmax_max / r->ch_absmax_median : NAN, csv);
            qr_table_setf(t, row, 16, "%d", r->n_outlier_ch);
        }
        qr_table_set(t, row, 17, qr__wt_src_name(r->src));
    }
    return QR_OK;
}

/* "[k0, k1) x [3]": the elements of block p of a weight of dims blocked along axis (the block's
 * range along the axis, the fixed index along every other dim). */
static void qr_weights_block_where(const QrWeightRow *r, int axis, int64_t p, char *buf, size_t n) {
    if (r->map && r->rank == 2) {   /* elements on scale p: their rows and columns (g_idx: rows apart) */
        int64_t k0 = -1, k1 = -1, c0 = -1, c1 = -1, cnt = 0;
        for (int64_t i = 0; i < r->n; i++) {
            if (r->map[i] != p) continue;
            int64_t k = i / r->dims[1], c = i % r->dims[1];
            if (!cnt++) { k0 = k1 = k; c0 = c1 = c; }
            k0 = QR_MIN(k0, k); k1 = QR_MAX(k1, k); c0 = QR_MIN(c0, c); c1 = QR_MAX(c1, c);
        }
        if (cnt && cnt == (k1 - k0 + 1) * (c1 - c0 + 1) && c0 == c1)
            snprintf(buf, n, "[%lld:%lld] x [%lld]", (long long)k0, (long long)(k1 + 1), (long long)c0);
        else if (cnt && c0 == c1)
            snprintf(buf, n, "%lld rows in [%lld:%lld] (g_idx) x [%lld]", (long long)cnt, (long long)k0, (long long)(k1 + 1),
                     (long long)c0);
        else if (cnt)
            snprintf(buf, n, "%lld elements in [%lld:%lld] x [%lld:%lld]", (long long)cnt, (long long)k0, (long long)(k1 + 1),
                     (long long)c0, (long long)(c1 + 1));
        return;
    }
    int64_t nblk = 1 + (r->dims[axis] - 1) / r->block_size, pd[QR_MAX_RANK], rem = p;
    for (int d = r->rank - 1; d >= 0; d--) {
        int64_t len = d == axis ? nblk : r->dims[d];
        pd[d] = rem % len;
        rem /= len;
    }
    size_t o = 0;
    for (int d = 0; d < r->rank && o < n; d++) {
        if (d == axis) {
            int64_t k0 = pd[d] * r->block_size, k1 = QR_MIN(r->dims[d], k0 + r->block_size);
            o += (size_t)snprintf(buf + o, n - o, "%s[%lld:%lld]", d ? " x " : "", (long long)k0, (long long)k1);
        } else {
            o += (size_t)snprintf(buf + o, n - o, "%s[%lld]", d ? " x " : "", (long long)pd[d]);
        }
    }
}

/* "[5, 3] = 0.6": element i of r's float weight by its index along every dim, and its value. */
static void qr__wt_elem_str(const QrWeightRow *r, int64_t i, double v, char *buf, size_t n) {
    int64_t idx[QR_MAX_RANK], rem = i;
    for (int d = r->rank - 1; d >= 0; d--) { idx[d] = r->dims[d] > 0 ? rem % r->dims[d] : 0; rem = r->dims[d] > 0 ? rem / r->dims[d] : 0; }
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < r->rank && o < n; d++) o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (o < n) snprintf(buf + o, n - o, "] = %.6g", v);
}

/* weight_blocks.txt/.csv: per blocked weight (int4 weight-only layers), weight order, the blocks with the
 * largest share of the layer's output error (of the weight's error energy when the input activations are
 * not known) and the lowest-SQNR ones, largest share first. Written only when there is a blocked weight. */
static QrStatus qr__wt_blocks_write(const QrSession *s, const QrWeightCmp *w, const char *dir) {
    int n = 0;
    for (int k = 0; k < w->n; k++) n += w->rows[k].n_blk;
    if (n == 0) return QR_OK;
    static const char *const cols[] = { "Index", "weight", "node", "op_type", "blocks", "block", "elements",
                                        "output_error_share", "error_share", "SQNR", "max_abs_err", "scale", "scale_set_by",
                                        "set_by_sigma" };
    QrTable tt = {0}, tc = {0};
    QrStatus st = qr_table_init(&tt, QR_ARRAY_LEN(cols), cols);
    if (st == QR_OK) st = qr_table_init(&tc, QR_ARRAY_LEN(cols), cols);
    int idx = 0;
    for (int k = 0; st == QR_OK && k < w->n; k++) {
        const QrWeightRow *r = &w->rows[k];
        const QrQuantizer *q = &s->qt.q[r->q];
        for (int b = 0; st == QR_OK && b < r->n_blk; b++, idx++) {
            const QrWtBlk *bl = &r->blk[b];
            char where[256] = "", set[160] = "";
            int axis = q->axis < 0 ? q->axis + r->rank : q->axis;
            if (axis >= 0 && axis < r->rank) qr_weights_block_where(r, axis, bl->p, where, sizeof where);
            if (bl->set_by >= 0) qr__wt_elem_str(r, bl->set_by, bl->set_val, set, sizeof set);
            double scale = q->scale_value >= 0 && s->tw.g.values[q->scale_value].t.data
                               ? qr_tensor_get_f64(&s->tw.g.values[q->scale_value].t, bl->p) : NAN;
            for (int t = 0; st == QR_OK && t < 2; t++) {
                QrTable *tb = t ? &tc : &tt;
                int row;
                st = qr_table_add_row(tb, &row);
                if (st != QR_OK) break;
                qr_table_setf(tb, row, 0, "%d", idx);
                qr_table_set(tb, row, 1, r->name);
                qr_table_set(tb, row, 2, r->node);
                qr_table_set(tb, row, 3, r->op_type);
                qr_table_setf(tb, row, 4, "%lld", (long long)r->n_blocks);
                qr_table_setf(tb, row, 5, "%lld", (long long)bl->p);
                qr_table_set(tb, row, 6, where);
                if (r->has_act) qr_weights_num(tb, row, 7, bl->out_share, t == 1);
                qr_weights_num(tb, row, 8, bl->err_share, t == 1);
                qr_weights_num(tb, row, 9, bl->sqnr, t == 1);
                qr_weights_num(tb, row, 10, bl->max_err, t == 1);
                qr_weights_num(tb, row, 11, scale, t == 1);
                qr_table_set(tb, row, 12, set);
                qr_weights_num(tb, row, 13, bl->set_sigma, t == 1);
            }
        }
    }
    char head[2048];
    snprintf(head, sizeof head,
             "Blocks of the block-quantized weights of %s (weight-only int4/int8 layers: MatMulNBits, "
             "GatherBlockQuantized, blocked DequantizeLinear): per weight, the %d blocks with the largest share of the "
             "layer's output error and the %d lowest-SQNR blocks, largest share first.\n"
             "output_error_share = c_block / sum over the weight's blocks, c_block = sum over the block's elements of "
             "E[x_k^2] (w - w_q)^2, x_k the layer's input on the element's row k (from the baseline run; empty when the "
             "weight does not feed a MatMul / Gemm whose input the run kept: then the list is by error_share); "
             "error_share = the block's share of sum (w - w_q)^2 over the weight.\n"
             "scale_set_by = the block's largest |w| (it sets the block's scale): its index in the float weight and value; "
             "set_by_sigma = |that value| / the standard deviation of the whole float weight (above %.0f: an outlier "
             "that coarsens every other weight of the block).\n"
             "block = index of the block's scale; elements = the block's range along the blocked axis x its index "
             "along the others (in the float weight's layout).\n\n", s->a->path ? s->a->path : "", QR_WEIGHT_WORST_BLOCKS,
             QR_WEIGHT_WORST_BLOCKS, QR_WEIGHT_OUTLIER_SIGMA);
    if (st == QR_OK) st = qr_weights_write_tables(&tt, &tc, head, NULL, dir, QR_BF_WEIGHT_BLOCKS);
    qr_table_free(&tt);
    qr_table_free(&tc);
    return st;
}

static QrStatus qr_weights_write(const QrSession *s, const QrWeightCmp *w, const char *dir) {
    QrTable tt = {0}, tc = {0};
    char head[2048];
    snprintf(head, sizeof head,
             "Weight comparison: float weight vs its quantized value, per quantized weight of %s\n"
             "(float weight: the matched baseline weight of %s, or the float initializer a QuantizeLinear reads)\n"
             "saturated = share of weights clipped at qmin/qmax; rounded_to_zero = share of non-zero weights that "
             "quantize to the zero point;\nch_absmax_ratio = largest / median channel abs-max; outlier_channels = "
             "channels above %.0f x the median.\n\n", s->a->path ? s->a->path : "", s->b->path ? s->b->path : "",
             QR_OUTLIER_K);
    QrStatus st = qr__wt_weights_table(w, false, &tt);
    if (st == QR_OK) st = qr__wt_weights_table(w, true, &tc);
    if (st == QR_OK) st = qr_weights_write_tables(&tt, &tc, head, NULL, dir, QR_BF_WEIGHTS);
    if (st == QR_OK) st = qr__wt_blocks_write(s, w, dir);
    qr_table_free(&tt);
    qr_table_free(&tc);
    return st;
}
