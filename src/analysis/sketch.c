/* analysis/sketch — implementation. See sketch.h.
 *
 * Map: levels and compaction · adding and merging · quantiles · byte form. */

/* ==== levels and compaction ========================================================== */

static void qr_sketch_init(QrSketch *s, int k) {
    memset(s, 0, sizeof *s);
    if (k <= 0) k = QR_SKETCH_K;
    if (k < 2) k = 2;
    s->k = k + (k & 1);
}

static void qr_sketch_free(QrSketch *s) {
    for (int h = 0; h < QR_SKETCH_MAX_LEVELS; h++) free(s->item[h]);
    int k = s->k;
    memset(s, 0, sizeof *s);
    s->k = k;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI size_t qr_sketch_bytes(const QrSketch *s) {
    size_t b = 0;
    for (int h = 0; h < s->n_levels; h++) b += (size_t)s->cap[h] * sizeof(uint32_t);
    return b;
}
#endif

/* Room for `more` items at level h. */
static QrStatus qr__sk_reserve(QrSketch *s, int h, int32_t more) {
    if (h >= QR_SKETCH_MAX_LEVELS) return qr_errf(QR_ERR_INVALID, "quantile sketch: more than %d levels", QR_SKETCH_MAX_LEVELS);
    int32_t need = s->len[h] + more;
    if (need > s->cap[h]) {
        int32_t c = s->cap[h] ? s->cap[h] : s->k;
        while (c < need) c *= 2;
        uint32_t *p = realloc(s->item[h], (size_t)c * sizeof *p);
        if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
        s->item[h] = p;
        s->cap[h] = c;
    }
    if (h >= s->n_levels) s->n_levels = h + 1;
    return QR_OK;
}

/* Sorts a[0..n) ascending (LSD radix, 4 passes of 8 bits; tmp has n entries). */
static void qr__sk_sort(uint32_t *a, uint32_t *tmp, int32_t n) {
    uint32_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        int32_t cnt[257] = {0};
        for (int32_t i = 0; i < n; i++) cnt[((src[i] >> shift) & 0xff) + 1]++;
        if (cnt[((src[0] >> shift) & 0xff) + 1] == n) continue;   /* every key shares this byte */
        for (int b = 0; b < 256; b++) cnt[b + 1] += cnt[b];
        for (int32_t i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
        uint32_t *t = src; src = dst; dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* Compacts level h (which holds >= k items), then the levels above while they are full. */
static QrStatus qr__sk_compact(QrSketch *s, int h) {
    while (h < s->n_levels && s->len[h] >= s->k) {
        int32_t c = s->len[h], m = c & ~1;
        uint32_t stack[1024], *tmp = c <= 1024 ? stack : malloc((size_t)c * sizeof *tmp);
        if (!tmp) return qr_errf(QR_ERR_NOMEM, "out of memory");
        uint32_t *a = s->item[h];
        qr__sk_sort(a, tmp, c);
        if (tmp != stack) free(tmp);
        QrStatus st = qr__sk_reserve(s, h + 1, m / 2);
        if (st != QR_OK) return st;
        a = s->item[h];
        uint32_t *up = s->item[h + 1] + s->len[h + 1];
        for (int32_t i = s->parity[h]; i < m; i += 2) *up++ = a[i];
        s->len[h + 1] += m / 2;
        if (c > m) a[0] = a[c - 1];           /* the odd largest item stays */
        s->len[h] = c - m;
        s->parity[h] ^= 1;
        s->err += (int64_t)1 << h;
        h++;
    }
    return QR_OK;
}

/* ==== adding and merging ============================================================== */

static QrStatus qr_sketch_add_f32(QrSketch *s, const float *v, int64_t n) {
    int64_t i = 0;
    while (i < n) {
        if (s->len[0] >= s->k) QR_TRY(qr__sk_compact(s, 0));
        QR_TRY(qr__sk_reserve(s, 0, s->k - s->len[0]));
        uint32_t *dst = s->item[0];
        int32_t len = s->len[0];
        for (; i < n && len < s->k; i++) {
            float f = v[i];
            if (f != f) { s->n_nan++; continue; }
            if (f == INFINITY) { s->n_pinf++; continue; }
            if (f == -INFINITY) { s->n_ninf++; continue; }
            uint32_t key = qr_sketch_key(f);
            if (!s->n || key < s->min_key) s->min_key = key;
            if (!s->n || key > s->max_key) s->max_key = key;
            s->n++;
            dst[len++] = key;
        }
        s->len[0] = len;
    }
    return QR_OK;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI QrStatus qr_sketch_merge(QrSketch *a, const QrSketch *b) {
    if (a->k != b->k) return qr_errf(QR_ERR_INVALID, "quantile sketches of capacities %d and %d cannot merge", a->k, b->k);
    for (int h = 0; h < b->n_levels; h++) {
        if (!b->len[h]) continue;
        QR_TRY(qr__sk_reserve(a, h, b->len[h]));
        memcpy(a->item[h] + a->len[h], b->item[h], (size_t)b->len[h] * sizeof(uint32_t));
        a->len[h] += b->len[h];
    }
    if (b->n) {
        if (!a->n || b->min_key < a->min_key) a->min_key = b->min_key;
        if (!a->n || b->max_key > a->max_key) a->max_key = b->max_key;
    }
    a->n += b->n;
    a->n_nan += b->n_nan;
    a->n_pinf += b->n_pinf;
    a->n_ninf += b->n_ninf;
    a->err += b->err;
    for (int h = 0; h < a->n_levels; h++)
        if (a->len[h] >= a->k) QR_TRY(qr__sk_compact(a, h));
    return QR_OK;
}
#endif

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI int64_t qr_sketch_bound_max(int64_t n, int k) {
    int64_t e = 0;
    for (int h = 0; h < 62 && ((int64_t)k << h) <= n; h++) e += n / ((int64_t)k << h) * ((int64_t)1 << h);
    return e;
}
#endif

/* ==== quantiles ====================================================================== */

static double qr_sketch_min(const QrSketch *s) { return s->n ? qr_sketch_unkey(s->min_key) : NAN; }
static double qr_sketch_max(const QrSketch *s) { return s->n ? qr_sketch_unkey(s->max_key) : NAN; }

static int qr__sk_cmp_u64(const void *pa, const void *pb) {
    uint64_t x = *(const uint64_t *)pa, y = *(const uint64_t *)pb;
    return (x > y) - (x < y);
}

/* The item at weighted rank j of the sorted (key << 8 | level) entries e[0..m). */
static double qr__sk_at(const uint64_t *e, int64_t m, int64_t j) {
    int64_t cum = 0;
    for (int64_t i = 0; i < m; i++) {
        cum += (int64_t)1 << (e[i] & 0xff);
        if (cum > j) return qr_sketch_unkey((uint32_t)(e[i] >> 8));
    }
    return qr_sketch_unkey((uint32_t)(e[m - 1] >> 8));
}

static QrStatus qr_sketch_quantiles(const QrSketch *s, const double *q, int nq, double *out) {
    if (!s->n) { for (int i = 0; i < nq; i++) out[i] = NAN; return QR_OK; }
    int64_t m = 0;
    for (int h = 0; h < s->n_levels; h++) m += s->len[h];
    uint64_t *e = malloc((size_t)m * sizeof *e + 1);
    if (!e) return qr_errf(QR_ERR_NOMEM, "out of memory");
    int64_t i = 0;
    for (int h = 0; h < s->n_levels; h++)
        for (int32_t j = 0; j < s->len[h]; j++) e[i++] = (uint64_t)s->item[h][j] << 8 | (uint64_t)h;
    qsort(e, (size_t)m, sizeof *e, qr__sk_cmp_u64);
    for (int k = 0; k < nq; k++) {
        double pos = q[k] * (double)(s->n - 1);
        if (!(q[k] > 0)) { out[k] = qr_sketch_min(s); continue; }
        int64_t r = (int64_t)floor(pos);
        if (r >= s->n - 1) { out[k] = qr_sketch_max(s); continue; }
        double a = qr__sk_at(e, m, r), b = qr__sk_at(e, m, r + 1);
        out[k] = a + (b - a) * (pos - (double)r);
    }
    free(e);
    return QR_OK;
}

/* ==== byte form ====================================================================== */

static QrStatus qr_sketch_put_le(uint8_t **buf, size_t *len, size_t *cap, uint64_t v, int nbytes) {
    if (*len + (size_t)nbytes > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + (size_t)nbytes) c *= 2;
        uint8_t *p = realloc(*buf, c);
        if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
        *buf = p;
        *cap = c;
    }
    for (int i = 0; i < nbytes; i++) (*buf)[(*len)++] = (uint8_t)(v >> (8 * i));
    return QR_OK;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI QrStatus qr_sketch_write(const QrSketch *s, uint8_t **buf, size_t *len, size_t *cap) {
    uint64_t head[] = { (uint64_t)s->k, (uint64_t)s->n_levels, (uint64_t)s->n, (uint64_t)s->n_nan, (uint64_t)s->n_pinf,
                        (uint64_t)s->n_ninf, s->min_key, s->max_key, (uint64_t)s->err };
    for (int i = 0; i < QR_ARRAY_LEN(head); i++) QR_TRY(qr_sketch_put_le(buf, len, cap, head[i], 8));
    for (int h = 0; h < s->n_levels; h++) {
        QR_TRY(qr_sketch_put_le(buf, len, cap, s->parity[h], 1));
        QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)s->len[h], 4));
        for (int32_t j = 0; j < s->len[h]; j++) QR_TRY(qr_sketch_put_le(buf, len, cap, s->item[h][j], 4));
    }
    return QR_OK;
}
#endif

static uint64_t qr_sketch_get_le(const uint8_t *p, size_t avail, size_t *off, int nbytes, bool *bad) {
    if (*bad || *off > avail || avail - *off < (size_t)nbytes) { *bad = true; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++) v |= (uint64_t)p[*off + (size_t)i] << (8 * i);
    *off += (size_t)nbytes;
    return v;
}

#ifdef QR_TESTING   /* release: once analysis/dspart's part sections call it */
QR_TESTAPI QrStatus qr_sketch_read(QrSketch *s, const uint8_t *p, size_t avail, size_t *used) {
    size_t off = 0;
    bool bad = false;
    uint64_t head[9];
    for (int i = 0; i < 9; i++) head[i] = qr_sketch_get_le(p, avail, &off, 8, &bad);
    if (bad || head[0] < 2 || head[0] > (1u << 24) || (head[0] & 1) || head[1] > QR_SKETCH_MAX_LEVELS ||
        head[2] > ((uint64_t)1 << 62) || head[3] > ((uint64_t)1 << 62) || head[4] > ((uint64_t)1 << 62) ||
        head[5] > ((uint64_t)1 << 62) || head[6] > UINT32_MAX || head[7] > UINT32_MAX || head[8] > ((uint64_t)1 << 62))
        return qr_errf(QR_ERR_INVALID, "quantile sketch: malformed header");
    qr_sketch_init(s, (int)head[0]);
    s->n = (int64_t)head[2];
    s->n_nan = (int64_t)head[3];
    s->n_pinf = (int64_t)head[4];
    s->n_ninf = (int64_t)head[5];
    s->min_key = (uint32_t)head[6];
    s->max_key = (uint32_t)head[7];
    s->err = (int64_t)head[8];
    int64_t weight = 0;
    QrStatus st = QR_OK;
    for (int h = 0; st == QR_OK && h < (int)head[1]; h++) {
        s->parity[h] = (uint8_t)qr_sketch_get_le(p, avail, &off, 1, &bad);
        uint64_t n = qr_sketch_get_le(p, avail, &off, 4, &bad);
        if (bad || s->parity[h] > 1 || n > (uint64_t)(avail - off) / 4) { bad = true; break; }
        s->n_levels = h + 1;
        if (n) st = qr__sk_reserve(s, h, (int32_t)n);
        for (uint64_t j = 0; st == QR_OK && j < n; j++) {
            uint32_t key = (uint32_t)qr_sketch_get_le(p, avail, &off, 4, &bad);
            float f = qr_sketch_unkey(key);
            if (!isfinite(f) || key < s->min_key || key > s->max_key) bad = true;
            s->item[h][s->len[h]++] = key;
        }
        weight += (int64_t)n << h;
    }
    if (st == QR_OK && (bad || weight != s->n || (s->n && s->min_key > s->max_key)))
        st = qr_errf(QR_ERR_INVALID, "quantile sketch: malformed items (their weight %lld, the header says %lld values)",
                     (long long)weight, (long long)s->n);
    if (st != QR_OK) { qr_sketch_free(s); return st; }
    *used = off;
    return QR_OK;
}
#endif
