/* deploy/dump — implementation. See dump.h. */
#include <dirent.h>

/* ==== shared helpers ==================================================================== */

static int qr__dp_edit(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 200 || lb > 200) return (int)(la > lb ? la - lb : lb - la) + 200;
    int row[202];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int c = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            int best = QR_MIN(row[j] + 1, row[j - 1] + 1);
            row[j] = QR_MIN(best, diag + c);
            diag = up;
        }
    }
    return row[lb];
}

static const char *qr_dump_suggest(QrArena *a, const char *name, const char *const *names, int n) {
    int best[3] = { -1, -1, -1 }, bd[3] = { INT32_MAX, INT32_MAX, INT32_MAX };
    for (int i = 0; i < n; i++) {
        if (!names[i]) continue;
        bool dup = false;
        for (int k = 0; k < 3; k++) dup |= best[k] >= 0 && !strcmp(names[best[k]], names[i]);
        if (dup) continue;
        int d = qr__dp_edit(name, names[i]);
        if (strstr(names[i], name)) d = QR_MIN(d, 1 + (int)(strlen(names[i]) - strlen(name)) / 4);
        for (int k = 0; k < 3; k++)
            if (d < bd[k]) {
                for (int m = 2; m > k; m--) { bd[m] = bd[m - 1]; best[m] = best[m - 1]; }
                bd[k] = d;
                best[k] = i;
                break;
            }
    }
    if (best[0] < 0) return "";
    return qr_arena_printf(a, "; closest: '%s'%s%s%s%s%s", names[best[0]], best[1] >= 0 ? ", '" : "",
                           best[1] >= 0 ? names[best[1]] : "", best[1] >= 0 ? "'" : "", best[2] >= 0 ? ", '" : "",
                           best[2] >= 0 ? qr_arena_printf(a, "%s'", names[best[2]]) : "");
}

/* An output folder that must be missing or empty: checked without creating it. */
static QrStatus qr_dump_outdir_check(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return QR_OK;
        if (errno == ENOTDIR) return qr_errf(QR_ERR_INVALID, "output folder %s exists and is a file", dir);
        return qr_errf(QR_ERR_IO, "%s: %s", dir, strerror(errno));
    }
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) { empty = false; break; }
    closedir(d);
    if (!empty) return qr_errf(QR_ERR_INVALID, "output folder %s exists and is not empty; give a new or empty folder", dir);
    return QR_OK;
}

static QrStatus qr_dump_outdir(const char *dir) {
    QR_TRY(qr_dump_outdir_check(dir));
    return qr_mkdir_p(dir);
}

/* ==== names ============================================================================= */

/* Runtime file-name form: every character outside [A-Za-z0-9_] (e.g. / : . - and spaces) -> '_',
 * lower case, leading and trailing '_' dropped. */
static void qr__dp_sanitize(char *dst, size_t n, const char *s) {
    size_t k = 0;
    for (; *s && k + 1 < n; s++) dst[k++] = isalnum((unsigned char)*s) ? (char)tolower((unsigned char)*s) : '_';
    dst[k] = 0;
    while (k && dst[k - 1] == '_') dst[--k] = 0;
    size_t lead = strspn(dst, "_");
    memmove(dst, dst + lead, k - lead + 1);
}

/* Prefixes and suffixes deployment runtimes add to dump file names (sanitized form). */
static const char *const qr__dp_prefixes[] = { "dump_", "tensor_", "layer_", "output_", "out_", "blob_", "node_",
                                               "npu_", "rknn_", "layer_output_" };
static const char *const qr__dp_suffixes[] = { "_output", "_out", "_int8", "_uint8", "_int16", "_uint16", "_int32",
                                               "_fp32", "_float32", "_float", "_f32", "_nhwc", "_nchw", "_raw",
                                               "_dump", "_data", "_tensor" };

static bool qr__dp_strip_once_raw(char *s);
/* Strips one known prefix (or a leading "<digits>_" index), else one known suffix, then leading and
 * trailing '_'; false when none. */
static bool qr__dp_strip_once(char *s) {
    if (!qr__dp_strip_once_raw(s)) return false;
    size_t n = strlen(s), lead = strspn(s, "_");
    while (n > lead && s[n - 1] == '_') s[--n] = 0;
    memmove(s, s + lead, n - lead + 1);
    return true;
}

static bool qr__dp_strip_once_raw(char *s) {
    size_t n = strlen(s), d = strspn(s, "0123456789");
    if (d && d < n && s[d] == '_') { memmove(s, s + d + 1, n - d); return true; }
    for (int i = 0; i < QR_ARRAY_LEN(qr__dp_prefixes); i++) {
        size_t l = strlen(qr__dp_prefixes[i]);
        if (n > l && !strncmp(s, qr__dp_prefixes[i], l)) { memmove(s, s + l, n - l + 1); return true; }
    }
    for (int i = 0; i < QR_ARRAY_LEN(qr__dp_suffixes); i++) {
        size_t l = strlen(qr__dp_suffixes[i]);
        if (n > l && !strcmp(s + n - l, qr__dp_suffixes[i])) { s[n - l] = 0; return true; }
    }
    return false;
}

/* Values a dump file may hold: graph inputs and computed values (not weights or constants). */
static bool qr__dp_candidate(const QrGraph *g, int v) {
    const QrValue *x = &g->values[v];
    if (x->is_init || x->is_const) return false;
    return x->is_input || x->producer >= 0;
}

/* ==== the dump folder ===================================================================== */

typedef struct QrDpFile {
    const char *name;        /* file name */
    const char *stem;        /* without extension */
    bool npy;
    int v;                   /* matched value, -1 */
    const char *how;
    const char *layout;      /* from the map, or NULL */
    bool has_grid;           /* scale/zero point from the map */
    double scale;
    int64_t zp;
} QrDpFile;

static bool qr__dp_ext(const char *name, const char *ext) {
    size_t n = strlen(name), l = strlen(ext);
    return n > l && !strcasecmp(name + n - l, ext);
}

static int qr__dp_cmp_str(const void *a, const void *b) {
    return strcmp(((const QrDpFile *)a)->name, ((const QrDpFile *)b)->name);
}

static QrStatus qr__dp_list(QrArena *ar, const char *dir, QrDpFile **out, int *n_out) {
    DIR *d = opendir(dir);
    if (!d) return qr_errf(QR_ERR_IO, "dump folder %s: %s", dir, strerror(errno));
    int n = 0, cap = 64;
    QrDpFile *f = malloc((size_t)cap * sizeof *f);
    QrStatus st = f ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    struct dirent *e;
    while (st == QR_OK && (e = readdir(d))) {
        bool npy = qr__dp_ext(e->d_name, ".npy");
        if (!npy && !qr__dp_ext(e->d_name, ".bin") && !qr__dp_ext(e->d_name, ".raw")) continue;
        if (n == cap) {
            QrDpFile *g = realloc(f, (size_t)(cap *= 2) * sizeof *f);
            if (!g) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            f = g;
        }
        size_t l = strlen(e->d_name);
        f[n] = (QrDpFile){ .name = qr_arena_strdup(ar, e->d_name), .stem = qr_arena_strndup(ar, e->d_name, l - 4),
                           .npy = npy, .v = -1 };
        if (!f[n].name || !f[n].stem) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        n++;
    }
    closedir(d);
    if (st == QR_OK && !n) st = qr_errf(QR_ERR_INVALID, "dump folder %s holds no .npy, .bin or .raw file", dir);
    if (st != QR_OK) { free(f); return st; }
    qsort(f, (size_t)n, sizeof *f, qr__dp_cmp_str);
    QrDpFile *copy = qr_arena_array(ar, (size_t)n, sizeof *copy);
    if (!copy) { free(f); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    memcpy(copy, f, (size_t)n * sizeof *f);
    free(f);
    *out = copy;
    *n_out = n;
    return QR_OK;
}

static char *qr__dp_trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

/* --dump-map: file,value[,layout][,scale,zero_point] per line; a first line starting with "file" is a header. */
static QrStatus qr__dp_map(QrArena *ar, const char *path, const QrGraph *g, QrDpFile *f, int nf) {
    unsigned char *buf;
    size_t len;
    QR_TRY(qr_file_read(path, (size_t)64 << 20, &buf, &len));
    char *text = qr_arena_strndup(ar, (const char *)buf, len);
    qr_aligned_free(buf);
    if (!text) return qr_errf(QR_ERR_NOMEM, "out of memory");
    int line_no = 0;
    for (char *sv = NULL, *line = strtok_r(text, "\n", &sv); line; line = strtok_r(NULL, "\n", &sv)) {
        line_no++;
        line = qr__dp_trim(line);
        if (!*line || *line == '#') continue;
        char *fld[6];
        int nfld = 0;
        for (char *p = line; nfld < 6;) {
            char *c = strchr(p, ',');
            if (c) *c = 0;
            fld[nfld++] = qr__dp_trim(p);
            if (!c) break;
            p = c + 1;
        }
        if (line_no == 1 && !strcasecmp(fld[0], "file")) continue;
        if (nfld < 2 || nfld > 5)
            return qr_errf(QR_ERR_PARSE, "%s:%d: expected file,value[,layout][,scale,zero_point]", path, line_no);
        int k = -1;
        for (int i = 0; i < nf; i++) if (!strcmp(f[i].name, fld[0])) k = i;
        if (k < 0) return qr_errf(QR_ERR_INVALID, "%s:%d: no file '%s' (.npy/.bin/.raw) in the dump folder", path, line_no, fld[0]);
        int v = qr_graph_find(g, fld[1]);
        if (v < 0) {
            const char **names = qr_arena_array(ar, (size_t)g->n_values + 1, sizeof *names);
            if (!names) return qr_errf(QR_ERR_NOMEM, "out of memory");
            for (int i = 0; i < g->n_values; i++) names[i] = qr__dp_candidate(g, i) ? g->values[i].name : NULL;
            return qr_errf(QR_ERR_INVALID, "%s:%d: %s has no value '%s'%s", path, line_no, g->path, fld[1],
                           qr_dump_suggest(ar, fld[1], names, g->n_values));
        }
        f[k].v = v;
        f[k].how = "map";
        const char *lay = nfld == 3 || nfld == 5 ? fld[2] : "";
        if (*lay) {
            if (strcasecmp(lay, "NCHW") && strcasecmp(lay, "NHWC"))
                return qr_errf(QR_ERR_INVALID, "%s:%d: layout '%s': expected NCHW or NHWC", path, line_no, lay);
            f[k].layout = strcasecmp(lay, "NCHW") ? "NHWC" : "NCHW";
        }
        if (nfld >= 4) {
            char *e1, *e2;
            const char *ss = fld[nfld - 2], *zs = fld[nfld - 1];
            double s = strtod(ss, &e1);
            long long z = strtoll(zs, &e2, 10);
            if (e1 == ss || *e1 || !(s > 0) || !isfinite(s) || e2 == zs || *e2)
                return qr_errf(QR_ERR_INVALID, "%s:%d: scale '%s' / zero point '%s': expected a positive number and an integer",
                               path, line_no, ss, zs);
            f[k].has_grid = true;
            f[k].scale = s;
            f[k].zp = z;
        }
    }
    return QR_OK;
}

/* Name matching of the files the map did not place. */
static QrStatus qr__dp_match_names(QrArena *ar, const QrGraph *g, QrDpFile *f, int nf) {
    QrStrMap san;
    QR_TRY(qr_strmap_init(&san, ar, (uint32_t)g->n_values + 1));
    char buf[1024];
    for (int v = 0; v < g->n_values; v++) {
        if (!qr__dp_candidate(g, v)) continue;
        qr__dp_sanitize(buf, sizeof buf, g->values[v].name);
        int prev = qr_strmap_get(&san, buf);
        const char *key = prev == -1 ? qr_arena_strdup(ar, buf) : buf;   /* the map keeps the key */
        if (!key) return qr_errf(QR_ERR_NOMEM, "out of memory");
        QR_TRY(qr_strmap_put(&san, ar, key, prev == -1 ? v : -2));   /* -2: several values */
    }
    for (int i = 0; i < nf; i++) {
        if (f[i].v >= 0) continue;
        int v = qr_graph_find(g, f[i].stem);
        if (v >= 0 && qr__dp_candidate(g, v)) { f[i].v = v; f[i].how = "exact"; continue; }
        char s[1024];
        qr__dp_sanitize(s, sizeof s, f[i].stem);
        for (int stage = 0; stage < 8 && s[0]; stage++) {
            int hit = qr_strmap_get(&san, s);
            if (hit == -2) {                              /* ambiguous: list the candidates */
                char list[2048];
                size_t n = 0;
                list[0] = 0;
                for (int w = 0; w < g->n_values && n < sizeof list - 8; w++) {
                    if (!qr__dp_candidate(g, w)) continue;
                    qr__dp_sanitize(buf, sizeof buf, g->values[w].name);
                    if (!strcmp(buf, s)) n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", g->values[w].name);
                }
                return qr_errf(QR_ERR_INVALID, "dump file '%s' matches several values of %s: %s; name the one it holds "
                               "with --dump-map (file,value[,layout][,scale,zero_point])", f[i].name, g->path, list);
            }
            if (hit >= 0) { f[i].v = hit; f[i].how = stage ? "stripped" : "sanitized"; break; }
            if (!qr__dp_strip_once(s)) break;
        }
    }
    for (int i = 0; i < nf; i++)
        for (int k = i + 1; f[i].v >= 0 && k < nf; k++)
            if (f[k].v == f[i].v)
                return qr_errf(QR_ERR_INVALID, "dump files '%s' and '%s' both match value '%s'; keep one or name them "
                               "with --dump-map", f[i].name, f[k].name, g->values[f[i].v].name);
    return QR_OK;
}

/* ==== grids and layouts ===================================================================== */

typedef struct QrDpGrid { bool ok; double scale; int64_t zp; QrDType dt; int64_t lo, hi; } QrDpGrid;

static void qr__dp_range(QrDType dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case QR_DT_S8: *lo = -128; *hi = 127; break;
    case QR_DT_U8: *lo = 0; *hi = 255; break;
    case QR_DT_S16: *lo = -32768; *hi = 32767; break;
    case QR_DT_U16: *lo = 0; *hi = 65535; break;
    case QR_DT_S4: *lo = -8; *hi = 7; break;
    case QR_DT_U4: *lo = 0; *hi = 15; break;
    case QR_DT_S32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    default: *lo = INT64_MIN / 4; *hi = INT64_MAX / 4; break;
    }
}

/* The per-tensor grid of quantizer q (ok false for per-axis or non-constant scales). */
static QrDpGrid qr__dp_qgrid(const QrGraph *g, const QrQuantizer *q) {
    QrDpGrid r = { 0 };
    const QrTensor *s = q->scale_value >= 0 ? &g->values[q->scale_value].t : NULL;
    const QrTensor *z = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
    if (!s || !s->data || s->numel != 1 || (z && (!z->data || z->numel != 1))) return r;
    r.ok = true;
    r.scale = (double)(float)qr_tensor_get_f64(s, 0);
    r.zp = z ? qr_tensor_get_i64(z, 0) : 0;
    r.dt = q->dtype;
    qr__dp_range(r.dt, &r.lo, &r.hi);
    return r;
}

static int64_t qr__dp_quant(const QrDpGrid *gr, double x) {
    if (!(x == x)) return gr->zp;
    double t = rint(x / gr->scale) + (double)gr->zp;
    if (t < (double)gr->lo) return gr->lo;
    if (t > (double)gr->hi) return gr->hi;
    return (int64_t)t;
}

/* Model-order index i of a tensor with dims (rank >= 3) -> its offset in the channels-last file. */
static int64_t qr__dp_cl_index(const QrTensor *m, int64_t i) {
    int64_t C = m->dims[1], S = 1;
    for (int d = 2; d < m->rank; d++) S *= m->dims[d];
    int64_t n = i / (C * S), c = (i / S) % C, s = i % S;
    return (n * S + s) * C + c;
}

static bool qr__dp_perm_trivial(const QrTensor *m) {
    if (m->rank < 3) return true;
    int64_t S = 1;
    for (int d = 2; d < m->rank; d++) S *= m->dims[d];
    return m->dims[1] == 1 || S == 1;
}

/* An integer value without a quantizer of its own that an integer op computed from a quantized
 * value without changing the grid (QOperator models' MaxPool, Reshape, ...): that quantizer, else -1. */
static int qr_dump_inherited(const QrGraph *g, const QrQuantTable *qt, int v) {
    static const char *const keep[] = { "MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                                        "Identity", "Slice", "Gather", "Split", "DepthToSpace", "SpaceToDepth" };
    for (int hop = 0; hop < 64 && v >= 0; hop++) {
        if (!qr_dtype_is_int(g->values[v].t.dtype)) return -1;
        if (qt->by_value[v] >= 0) return qt->by_value[v];
        int p = g->values[v].producer;
        if (p < 0 || g->nodes[p].n_in < 1) return -1;
        bool ok = false;
        for (int k = 0; k < QR_ARRAY_LEN(keep); k++) ok |= !strcmp(g->nodes[p].op_type, keep[k]) && !g->nodes[p].domain[0];
        if (!ok) return -1;
        v = g->nodes[p].in[0];
    }
    return -1;
}

/* ==== runs ===================================================================================== */

typedef struct QrDpKeep { const bool *need; QrTensor *vals; int n_values; } QrDpKeep;

static QrStatus qr__dp_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g);
    QR_UNUSED(node);
    QrDpKeep *k = user;
    if (value < 0 || value >= k->n_values || !k->need[value] || k->vals[value].data || !t->data) return QR_OK;
    QrTensor *c = &k->vals[value];
    QR_TRY(qr_tensor_set_shape(c, t->dtype, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(c));
    memcpy(c->data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

static void qr__dp_keep_free(QrDpKeep *k) {
    if (k->vals) for (int i = 0; i < k->n_values; i++) qr_tensor_free_data(&k->vals[i]);
    free(k->vals);
    k->vals = NULL;
}

/* ==== comparison ================================================================================ */

static void qr__dp_hist_add(int64_t *h, int64_t d) {
    int b = d == 0 ? 0 : d == 1 ? 1 : d == 2 ? 2 : d == 3 ? 3 : d < 8 ? 4 : d < 16 ? 5 : d < 128 ? 6 : 7;
    h[b]++;
}

static const char *const qr__dp_hist_names[QR_DUMP_HIST] = { "0", "1", "2", "3", "4-7", "8-15", "16-127", ">=128" };

/* Integer view of a reference tensor on the grid (integers as they are, floats quantized). */
static QrStatus qr__dp_ints(const QrTensor *t, const QrDpGrid *gr, int64_t **out) {
    int64_t *x = malloc((size_t)t->numel * sizeof *x + 8);
    if (!x) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bool isf = qr_dtype_is_float(t->dtype);
    for (int64_t i = 0; i < t->numel; i++) x[i] = isf ? qr__dp_quant(gr, qr_tensor_get_f64(t, i)) : qr_tensor_get_i64(t, i);
    *out = x;
    return QR_OK;
}

static QrStatus qr__dp_floats(const QrTensor *t, const QrDpGrid *gr, float **out) {
    float *x = malloc((size_t)t->numel * sizeof *x + 8);
    if (!x) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bool isf = qr_dtype_is_float(t->dtype);
    for (int64_t i = 0; i < t->numel; i++)
        x[i] = isf || !gr->ok ? (float)qr_tensor_get_f64(t, i) : (float)((double)(qr_tensor_get_i64(t, i) - gr->zp) * gr->scale);
    *out = x;
    return QR_OK;
}

/* Device data in model order under a layout (nhwc: the file is channels-last). */
static void qr__dp_permute(const QrTensor *m, bool nhwc, const int64_t *fi, const float *ff, int64_t *oi, float *of) {
    for (int64_t i = 0; i < m->numel; i++) {
        int64_t j = nhwc ? qr__dp_cl_index(m, i) : i;
        if (oi) oi[i] = fi[j];
        of[i] = ff[j];
    }
}

/* Elements where device and reference disagree (for choosing a layout from the data). */
static int64_t qr__dp_mismatch(int64_t n, const int64_t *di, const int64_t *ri, const float *df, const float *rf, double atol) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += di ? di[i] != ri[i] : !(fabs((double)df[i] - (double)rf[i]) <= atol);
    return c;
}

static double qr__dp_absmax(const float *x, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) if (fabs((double)x[i]) > m) m = fabs((double)x[i]);
    return m;
}

typedef struct QrDpWork {
    const QrGraph *g;
    const QrQuantTable *qt;
    const QrDumpOpts *o;
    QrDpKeep *ki, *ks;
    QrSession *se;
} QrDpWork;

/* The device tensor of dump file f at path into dev (freed on failure): a .npy as written, a raw
 * file as float32 or as the quantizer's integers by its size (q: the value's quantizer, or NULL;
 * ms: the model's shape of the value). Integers need a grid (gr: its dtype and range are filled
 * in from the data when the quantizer gave none); the element count must be the value's. */
static QrStatus qr__dp_read_device(const QrDpFile *f, const QrValue *val, const QrQuantizer *q, const char *path,
                                   QrDpGrid *gr, QrTensor *dev) {
    const QrTensor *ms = &val->t;
    QrStatus st = QR_OK;
    if (f->npy) {
        st = qr_npy_read(path, dev);
        if (st != QR_OK) return qr_err_wrap(st, "dump file %s", path);
        if (!qr_dtype_is_float(dev->dtype) && !(qr_dtype_is_int(dev->dtype) && dev->dtype != QR_DT_BOOL)) {
            st = qr_errf(QR_ERR_UNSUPPORTED, "dump file %s: dtype %s cannot hold a tensor value (expected a float or "
                         "integer type)", path, qr_dtype_name(dev->dtype));
            qr_tensor_free_data(dev);
            return st;
        }
    } else {
        uint64_t size = 0;
        QR_TRY(qr_file_size(path, &size));
        QrDType qdt = q ? q->dtype : qr_dtype_is_int(ms->dtype) ? ms->dtype : QR_DT_UNDEF;
        if (f->has_grid && !q && qr_dtype_is_int(ms->dtype)) qdt = ms->dtype;
        uint64_t fsz = (uint64_t)ms->numel * 4, qsz = qdt ? (uint64_t)ms->numel * qr_dtype_size(qdt) : 0;
        QrDType dt = size == fsz ? QR_DT_F32 : qsz && size == qsz ? qdt : QR_DT_UNDEF;
        if (f->has_grid && !q && dt == QR_DT_UNDEF && size == (uint64_t)ms->numel) dt = QR_DT_S8;  /* map grid, 1 byte */
        char sh[128];
        qr_shape_str_brackets(sh, sizeof sh, ms->rank, ms->dims);
        if (dt == QR_DT_UNDEF) {
            if (qdt)
                return qr_errf(QR_ERR_SHAPE, "dump file %s has %llu bytes; value '%s' %s needs %llu (float32) or %llu (%s)",
                               path, (unsigned long long)size, val->name, sh, (unsigned long long)fsz,
                               (unsigned long long)qsz, qr_dtype_name(qdt));
            return qr_errf(QR_ERR_SHAPE, "dump file %s has %llu bytes; value '%s' %s needs %llu (float32)%s", path,
                           (unsigned long long)size, val->name, sh, (unsigned long long)fsz,
                           f->has_grid ? " or one byte per element" : "; an integer dump of a value without quantizer "
                           "needs scale and zero point in --dump-map");
        }
        st = qr_tensor_set_shape(dev, dt, 1, &ms->numel);
        if (st == QR_OK) st = qr_tensor_alloc_data(dev);
        if (st == QR_OK && size) st = qr_file_read_range(path, 0, size, dev->data);
        if (st != QR_OK) { qr_tensor_free_data(dev); return st; }
    }
    bool dev_int = !qr_dtype_is_float(dev->dtype);
    if (dev_int && !gr->ok) {
        qr_tensor_free_data(dev);
        return qr_errf(QR_ERR_INVALID, "dump file %s holds %s integers but value '%s' has no %squantizer to dequantize "
                       "them with; give scale and zero point in --dump-map (file,value,layout,scale,zero_point)", path,
                       qr_dtype_name(dev->dtype), val->name, q ? "per-tensor " : "");
    }
    if (dev_int && q && !f->has_grid && dev->dtype != q->dtype) {
        qr_tensor_free_data(dev);
        return qr_errf(QR_ERR_INVALID, "dump file %s holds %s but value '%s' is quantized to %s", path,
                       qr_dtype_name(dev->dtype), val->name, qr_dtype_name(q->dtype));
    }
    if (dev_int && !gr->dt) { gr->dt = dev->dtype; qr__dp_range(gr->dt, &gr->lo, &gr->hi); }
    if (gr->ok && !gr->dt) { gr->dt = QR_DT_S32; qr__dp_range(gr->dt, &gr->lo, &gr->hi); }
    if (dev->numel != ms->numel) {
        char a[128], b[128];
        st = qr_errf(QR_ERR_SHAPE, "dump file %s has shape %s (%lld elements); value '%s' has shape %s (%lld)", path,
                     qr_shape_str_brackets(a, sizeof a, dev->rank, dev->dims), (long long)dev->numel, val->name,
                     qr_shape_str_brackets(b, sizeof b, ms->rank, ms->dims), (long long)ms->numel);
        qr_tensor_free_data(dev);
        return st;
    }
    return QR_OK;
}

/* The device values df (n) against the baseline's value matched to the row's (its value or its
 * quantizer), when the session has baseline values: r->dev_base, r->has_base. */
static void qr__dp_vs_base(const QrDpWork *w, const QrDpFile *f, const float *df, int64_t n, QrDumpRow *r) {
    if (w->se && w->se->base) {
        const QrMatchResult *mr = &w->se->m;
        for (int i = 0; i < mr->n; i++) {
            const QrMatch *m = &mr->m[i];
            if (m->a_node < 0) continue;
            if (m->a_value != f->v && !(r->q >= 0 && m->a_quant == r->q)) continue;
            const QrTensor *bt = &w->se->base[i];
            if (!bt->data || bt->numel != n || bt->dtype != QR_DT_F32) continue;
            qr_metrics_compute_opts(bt->data, df, n, false, false, &r->dev_base);
            r->has_base = true;
            break;
        }
    }
}

/* Loads one device file and fills the row (everything but divergence). */
static QrStatus qr__dp_row(QrDpWork *w, QrArena *ar, const QrDpFile *f, QrDumpRow *r) {
    const QrGraph *g = w->g;
    const QrValue *val = &g->values[f->v];
    const QrTensor *ms = &val->t;               /* model shape */
    r->file = f->name;
    r->value = val->name;
    r->v = f->v;
    r->how = f->how;
    r->q = w->qt->by_value[f->v] >= 0 ? w->qt->by_value[f->v] : w->qt->by_float[f->v];
    const QrQuantizer *q = r->q >= 0 ? &w->qt->q[r->q] : NULL;
    int qin = qr_dump_inherited(g, w->qt, f->v);
    QrDpGrid gr = { 0 };
    if (f->has_grid) {
        gr.ok = true;
        gr.scale = f->scale;
        gr.zp = f->zp;
        gr.dt = q ? q->dtype : QR_DT_UNDEF;
    } else if (q) gr = qr__dp_qgrid(g, q);
    else if (qin >= 0) gr = qr__dp_qgrid(g, &w->qt->q[qin]);
    r->n = ms->numel;
    /* ---- the device tensor ---- */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", w->o->dir, f->name);
    QrTensor dev = { 0 };
    QR_TRY(qr__dp_read_device(f, val, q, path, &gr, &dev));
    r->dtype = dev.dtype;
    QrStatus st = QR_OK;
    /* ---- layout: from the shape, the map, or the data ---- */
    int lay = -1;                              /* 0 NCHW, 1 NHWC, -1 undecided */
    const char *lay_note = "";
    if (qr__dp_perm_trivial(ms)) { lay = 0; r->layout = "-"; }
    else if (f->layout) { lay = strcmp(f->layout, "NCHW") ? 1 : 0; lay_note = " (map)"; }
    else if (f->npy && dev.rank > 1) {
        bool same = dev.rank == ms->rank, cl = dev.rank == ms->rank;
        for (int d = 0; same && d < ms->rank; d++) same = dev.dims[d] == ms->dims[d];
        for (int d = 0; cl && d < ms->rank; d++)
            cl = dev.dims[d] == ms->dims[d == 0 ? 0 : d == ms->rank - 1 ? 1 : d + 1];
        if (!same && !cl) {
            char a[128], b[128];
            st = qr_errf(QR_ERR_SHAPE, "dump file %s has shape %s, which fits neither NCHW %s nor NHWC of value '%s'; "
                         "give the layout in --dump-map or write the tensor in one of them", path,
                         qr_shape_str_brackets(a, sizeof a, dev.rank, dev.dims),
                         qr_shape_str_brackets(b, sizeof b, ms->rank, ms->dims), val->name);
            qr_tensor_free_data(&dev);
            return st;
        }
        if (same != cl) { lay = cl; lay_note = " (shape)"; }
    }
    /* ---- references ---- */
    int ref_v = q && gr.ok && !f->has_grid ? q->int_value : f->v;
    const QrTensor *ri = &w->ki->vals[ref_v], *rs = &w->ks->vals[ref_v];
    if (!ri->data) { ri = rs; r->how = qr_arena_printf(ar, "%s (int run: sim value)", r->how); }
    if (!ri->data || !rs->data || ri->numel != ms->numel || rs->numel != ms->numel) {
        qr_tensor_free_data(&dev);
        return qr_errf(QR_ERR_INVALID, "value '%s' (dump file %s) is not computed by the simulation", val->name, path);
    }
    int64_t n = ms->numel;
    int64_t *fi = NULL, *di = NULL, *ii = NULL, *si = NULL;
    float *ff = NULL, *df = NULL, *iff = NULL, *sf = NULL;
    st = qr__dp_floats(&dev, &gr, &ff);
    if (st == QR_OK && gr.ok) st = qr__dp_ints(&dev, &gr, &fi);
    if (st == QR_OK && gr.ok) st = qr__dp_ints(ri, &gr, &ii);
    if (st == QR_OK && gr.ok) st = qr__dp_ints(rs, &gr, &si);
    if (st == QR_OK) st = qr__dp_floats(ri, &gr, &iff);
    if (st == QR_OK) st = qr__dp_floats(rs, &gr, &sf);
    if (st == QR_OK && !(df = malloc((size_t)n * sizeof *df + 8))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK && gr.ok && !(di = malloc((size_t)n * sizeof *di + 8))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    qr_tensor_free_data(&dev);
    double atol = w->o->float_rtol * qr__dp_absmax(iff ? iff : ff, st == QR_OK ? n : 0);
    if (st == QR_OK && lay < 0) {              /* the layout that agrees with the simulation */
        qr__dp_permute(ms, false, fi, ff, di, df);
        int64_t m0 = qr__dp_mismatch(n, di, ii, df, iff, atol);
        qr__dp_permute(ms, true, fi, ff, di, df);
        int64_t m1 = qr__dp_mismatch(n, di, ii, df, iff, atol);
        lay = m1 < m0;
        lay_note = m0 == m1 ? " (NCHW and NHWC fit the data equally)" : " (from data)";
    }
    if (st == QR_OK) {
        qr__dp_permute(ms, lay == 1, fi, ff, di, df);
        if (!r->layout) r->layout = qr_arena_printf(ar, "%s%s", lay == 1 ? "NHWC" : "NCHW", lay_note);
        r->lsb = gr.ok;
        r->scale = gr.scale;
        r->zp = gr.zp;
        if (gr.ok) {
            const QrTensor *pre = q && q->float_value >= 0 ? &w->ks->vals[q->float_value] : NULL;
            if (pre && (!pre->data || pre->numel != n || !qr_dtype_is_float(pre->dtype))) pre = NULL;
            double sq = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t d = di[i] - ii[i];
                if (d < 0) d = -d;
                sq += (double)d * (double)d;
                qr__dp_hist_add(r->hist, d);
                if (d) {
                    r->n_diff++;
                    if (d > r->lsb_max) r->lsb_max = d;
                    if (d == 1 && pre) {
                        double t = qr_tensor_get_f64(pre, i) / gr.scale;
                        if (fabs(t - floor(t) - 0.5) <= QR_LOWER_TIE_TOL) r->n_tie++;
                    }
                }
                int64_t ds = di[i] - si[i];
                if (ds < 0) ds = -ds;
                if (ds) { r->sim_n_diff++; if (ds > r->sim_lsb_max) r->sim_lsb_max = ds; }
            }
            r->mse_lsb = n ? sq / (double)n : 0;
        } else {
            for (int64_t i = 0; i < n; i++) {
                double d = fabs((double)df[i] - (double)iff[i]);
                if (!(d <= atol)) r->n_diff++;
                if (!(fabs((double)df[i] - (double)sf[i]) <= atol)) r->sim_n_diff++;
            }
        }
        qr_metrics_compute_opts(iff, df, n, false, false, &r->dev_int);
        qr_metrics_compute_opts(sf, df, n, false, false, &r->dev_sim);
        r->divergent = gr.ok ? (double)r->lsb_max > w->o->tol : (r->n_diff > 0);
    }
    if (st == QR_OK) qr__dp_vs_base(w, f, df, n, r);
    free(fi); free(di); free(ii); free(si); free(ff); free(df); free(iff); free(sf);
    return st;
}

static int qr__dp_row_cmp(const void *a, const void *b) {
    const QrDumpRow *x = a, *y = b;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return strcmp(x->file, y->file);
}

/* Some value upstream of row i's value (through the graph) is a row whose device data differs. */
static bool qr__dp_upstream_differs(const QrGraph *g, const bool *diff_v, int v, int *stack, int *stamp, int mark) {
    int sp = 0;
    const int p0 = g->values[v].producer;
    for (int k = 0; p0 >= 0 && k < g->nodes[p0].n_in; k++) {
        int u = g->nodes[p0].in[k];
        if (u >= 0 && stamp[u] != mark) { stamp[u] = mark; stack[sp++] = u; }
    }
    while (sp > 0) {
        int u = stack[--sp];
        if (diff_v[u]) return true;
        int p = g->values[u].producer;
        for (int k = 0; p >= 0 && k < g->nodes[p].n_in; k++) {
            int w = g->nodes[p].in[k];
            if (w >= 0 && stamp[w] != mark) { stamp[w] = mark; stack[sp++] = w; }
        }
    }
    return false;
}

/* Rows beyond tolerance whose difference is within the fragility spread at their value (mean
 * squared and largest |Δ| in LSB) and downstream of a value that already differs: rounding. A
 * difference that starts at a value whose every dumped ancestor agrees is never rounding that
 * spread (a device's own rounding moves an element by at most 1 LSB, which tolerance covers). */
static QrStatus qr__dp_classify(const QrGraph *g, const QrQuantTable *qt, const QrFragResult *fr, QrDumpResult *r) {
    bool *diff_v = calloc((size_t)g->n_values + 1, sizeof *diff_v);
    int *stack = malloc(((size_t)g->n_values + 1) * sizeof *stack), *stamp = calloc((size_t)g->n_values + 1, sizeof *stamp);
    if (!diff_v || !stack || !stamp) { free(diff_v); free(stack); free(stamp); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < r->n; i++) {
        QrDumpRow *x = &r->rows[i];
        if (x->n_diff > 0) diff_v[x->v] = true;
        if (x->q >= 0 && x->lsb) x->has_spread = qr_frag_spread(fr, qt->q[x->q].int_value, &x->spread);
    }
    for (int i = 0; i < r->n; i++) {
        QrDumpRow *x = &r->rows[i];
        if (!x->divergent || !x->has_spread) continue;
        if (x->mse_lsb > x->spread.mse_lsb || x->lsb_max > x->spread.lsb_max) continue;
        if (!qr__dp_upstream_differs(g, diff_v, x->v, stack, stamp, i + 1)) continue;
        x->divergent = false;
        x->rounding = true;
        r->n_rounding++;
    }
    free(diff_v);
    free(stack);
    free(stamp);
    return QR_OK;
}

static QrStatus qr_dump_compare(const QrGraph *a, const QrTensor *inputs, QrSession *se, const QrDumpOpts *o,
                                QrDumpResult *r) {
    memset(r, 0, sizeof *r);
    r->first_divergent = -1;
    r->tol = o->tol;
    r->float_rtol = o->float_rtol;
    QrArena *ar = &r->arena;
    QrDpFile *f = NULL;
    int nf = 0;
    QrQuantTable qt = { 0 };
    QrGraph low = { 0 };
    QrLowerInfo info = { 0 };
    QrDpKeep ki = { 0 }, ks = { 0 };
    bool *need = NULL;
    int *pos = NULL;
    QrStatus st = qr__dp_list(ar, o->dir, &f, &nf);
    if (st == QR_OK) st = qr_qtable_build(a, &qt);
    if (st == QR_OK && o->map) st = qr__dp_map(ar, o->map, a, f, nf);
    if (st == QR_OK) st = qr__dp_match_names(ar, a, f, nf);
    int n_matched = 0;
    for (int i = 0; st == QR_OK && i < nf; i++) n_matched += f[i].v >= 0;
    if (st == QR_OK && !n_matched)
        st = qr_errf(QR_ERR_INVALID, "no file of the dump folder %s matches a value of %s (%d file%s; e.g. '%s'); name "
                     "them with --dump-map", o->dir, a->path, nf, nf == 1 ? "" : "s", f[0].name);
    /* the runs: int mode (the reference) and sim mode, keeping only what the rows read */
    if (st == QR_OK && !(need = calloc((size_t)a->n_values + 1, sizeof *need))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < nf; i++) {
        if (f[i].v < 0) continue;
        need[f[i].v] = true;
        int q = qt.by_value[f[i].v] >= 0 ? qt.by_value[f[i].v] : qt.by_float[f[i].v];
        if (q >= 0) {
            need[qt.q[q].int_value] = true;
            if (qt.q[q].float_value >= 0) need[qt.q[q].float_value] = true;
        }
    }
    if (st == QR_OK) st = qr_lower_graph(a, &qt, o->int16_integer, &low, &info);
    if (st == QR_OK) {
        ki = (QrDpKeep){ need, calloc((size_t)a->n_values + 1, sizeof(QrTensor)), a->n_values };
        ks = (QrDpKeep){ need, calloc((size_t)a->n_values + 1, sizeof(QrTensor)), a->n_values };
        if (!ki.vals || !ks.vals) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK) {
        QrRunOpts ro = { .tap = qr__dp_tap, .tap_user = &ki };
        st = qr_run(&low, inputs, &ro, NULL);
        if (st != QR_OK) st = qr_err_wrap(st, "int-mode run of %s", a->path);
    }
    if (st == QR_OK) {
        QrRunOpts ro = { .tap = qr__dp_tap, .tap_user = &ks };
        st = qr_run(a, inputs, &ro, NULL);
        if (st != QR_OK) st = qr_err_wrap(st, "sim-mode run of %s", a->path);
    }
    if (st == QR_OK && se && !se->base) st = qr_session_run_baseline(se);
    r->have_base = se != NULL;
    /* rows */
    if (st == QR_OK && !(pos = malloc(((size_t)a->n_nodes + 1) * sizeof *pos))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < a->n_nodes; k++) pos[a->order[k]] = k;
    if (st == QR_OK) {
        r->rows = qr_arena_array(ar, (size_t)n_matched + 1, sizeof *r->rows);
        r->unmatched = qr_arena_array(ar, (size_t)nf + 1, sizeof *r->unmatched);
        if (!r->rows || !r->unmatched) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    QrDpWork w = { a, &qt, o, &ki, &ks, se };
    for (int i = 0; st == QR_OK && i < nf; i++) {
        if (f[i].v < 0) { r->unmatched[r->n_unmatched++] = f[i].name; continue; }
        QrDumpRow *row = &r->rows[r->n];
        st = qr__dp_row(&w, ar, &f[i], row);
        int p = a->values[f[i].v].producer;
        row->order = p >= 0 ? pos[p] : -1;
        r->n++;
    }
    if (st == QR_OK) qsort(r->rows, (size_t)r->n, sizeof *r->rows, qr__dp_row_cmp);
    if (st == QR_OK && !o->no_fragility) {     /* the rounding-fragility spread (analysis/frag): a few sim runs */
        QrFragOpts fo;
        qr_frag_opts_default(&fo);
        QrFragResult fr;
        st = qr_frag_run(a, &qt, inputs, se && se->base_out && !se->base_stale ? se->base_out : NULL, &fo, &fr);
        if (st == QR_OK) {
            r->have_frag = true;
            r->frag_verdict = qr_frag_verdict(ar, &fr);
            st = qr__dp_classify(a, &qt, &fr, r);
            qr_frag_free(&fr);
        }
    }
    if (st == QR_OK) {
        for (int i = 0; i < r->n; i++) {
            if (!r->rows[i].divergent) continue;
            r->n_divergent++;
            if (r->first_divergent < 0) r->first_divergent = i;
        }
    }
    free(pos);
    free(need);
    qr__dp_keep_free(&ki);
    qr__dp_keep_free(&ks);
    qr_graph_free(&low);
    qr_lower_info_free(&info);
    qr_qtable_free(&qt);
    if (st != QR_OK) qr_dump_free(r);
    return st;
}

static void qr_dump_free(QrDumpResult *r) {
    qr_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
    r->first_divergent = -1;
}

/* ==== output ======================================================================================= */

static const char *qr__dp_hist_str(QrArena *a, const QrDumpRow *r) {
    if (!r->lsb) return "";
    char buf[256];
    size_t n = 0;
    buf[0] = 0;
    for (int b = 0; b < QR_DUMP_HIST; b++)
        if (r->hist[b]) n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%lld", n ? " " : "", qr__dp_hist_names[b], (long long)r->hist[b]);
    return qr_arena_strdup(a, buf);
}

static const char *qr__dp_num(QrArena *a, double v, const char *fmt) {
    if (v != v) return "nan";
    if (isinf(v)) return v > 0 ? "inf" : "-inf";
    return qr_arena_printf(a, fmt, v);
}

static QrStatus qr__dp_table(const QrDumpResult *r, QrArena *a, QrTable *t) {
    static const char *const cols[] = { "value", "file", "matched_by", "layout", "dtype", "elements", "lsb_max",
                                        "differ_pct", "ties", "lsb_hist", "cosine", "sqnr", "max_abs", "sim_lsb_max",
                                        "sim_cosine", "base_cosine", "base_sqnr", "mse_lsb", "spread_mse_lsb",
                                        "spread_lsb_max", "verdict" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int i = 0; i < r->n; i++) {
        const QrDumpRow *x = &r->rows[i];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_set(t, row, 0, x->value);
        qr_table_set(t, row, 1, x->file);
        qr_table_set(t, row, 2, x->how);
        qr_table_set(t, row, 3, x->layout);
        qr_table_set(t, row, 4, qr_dtype_name(x->dtype));
        qr_table_setf(t, row, 5, "%lld", (long long)x->n);
        if (x->lsb) qr_table_setf(t, row, 6, "%lld", (long long)x->lsb_max);
        qr_table_setf(t, row, 7, "%.4f", x->n ? 100.0 * (double)x->n_diff / (double)x->n : 0.0);
        if (x->lsb) qr_table_setf(t, row, 8, "%lld", (long long)x->n_tie);
        qr_table_set(t, row, 9, qr__dp_hist_str(a, x));
        qr_table_set(t, row, 10, qr__dp_num(a, x->dev_int.cosine, "%.6f"));
        qr_table_set(t, row, 11, qr__dp_num(a, x->dev_int.sqnr, "%.2f"));
        qr_table_set(t, row, 12, qr__dp_num(a, x->dev_int.atol, "%.6g"));
        if (x->lsb) qr_table_setf(t, row, 13, "%lld", (long long)x->sim_lsb_max);
        qr_table_set(t, row, 14, qr__dp_num(a, x->dev_sim.cosine, "%.6f"));
        if (x->has_base) {
            qr_table_set(t, row, 15, qr__dp_num(a, x->dev_base.cosine, "%.6f"));
            qr_table_set(t, row, 16, qr__dp_num(a, x->dev_base.sqnr, "%.2f"));
        }
        if (x->lsb) qr_table_set(t, row, 17, qr__dp_num(a, x->mse_lsb, "%.4g"));
        if (x->has_spread) {
            qr_table_set(t, row, 18, qr__dp_num(a, x->spread.mse_lsb, "%.4g"));
            qr_table_setf(t, row, 19, "%lld", (long long)x->spread.lsb_max);
        }
        qr_table_set(t, row, 20, i == r->first_divergent ? "FIRST DIVERGENT" : x->divergent ? "diverges"
                                 : x->rounding ? "rounding" : "agrees");
    }
    return QR_OK;
}

static const char *qr_dump_verdict(QrArena *a, const QrDumpResult *r) {
    if (r->first_divergent < 0 && r->n_rounding)
        return qr_arena_printf(a, "no device problem: %d of %d matched value%s differ from the int-mode simulation beyond "
                               "%g LSB, all within the model's rounding-fragility spread downstream of a smaller "
                               "difference (a device that rounds otherwise); the rest agree", r->n_rounding, r->n,
                               r->n == 1 ? "" : "s", r->tol);
    if (r->first_divergent < 0)
        return qr_arena_printf(a, "the device agrees with the int-mode simulation on all %d matched value%s (tolerance "
                               "%g LSB)", r->n, r->n == 1 ? "" : "s", r->tol);
    const QrDumpRow *x = &r->rows[r->first_divergent];
    if (x->lsb)
        return qr_arena_printf(a, "the device leaves the simulation first at '%s' (file %s): max %lld LSB, %lld of %lld "
                               "elements differ (tolerance %g LSB%s); every value before it agrees%s; %d of %d matched "
                               "values diverge%s", x->value, x->file, (long long)x->lsb_max, (long long)x->n_diff,
                               (long long)x->n, r->tol, x->has_spread ? qr_arena_printf(a, ", rounding spread there: "
                               "%lld LSB, %.3g LSB² mean", (long long)x->spread.lsb_max, x->spread.mse_lsb) : "",
                               r->n_rounding ? " or differs by rounding" : "", r->n_divergent, r->n,
                               r->n_rounding ? qr_arena_printf(a, ", %d more differ by rounding", r->n_rounding) : "");
    return qr_arena_printf(a, "the device leaves the simulation first at '%s' (file %s): max |diff| %.6g, %lld of %lld "
                           "elements beyond %g of the value's range; every value before it agrees; %d of %d matched "
                           "values diverge", x->value, x->file, x->dev_int.atol, (long long)x->n_diff, (long long)x->n,
                           r->float_rtol, r->n_divergent, r->n);
}

static QrStatus qr_dump_write(const QrDumpResult *r, const char *dir) {
    QrArena a = { 0 };
    QrTable t = { 0 };
    char *txt = NULL, *csv = NULL;
    size_t tl = 0, tc = 0, cl = 0, cc = 0;
    QrStatus st = qr__dp_table(r, &a, &t);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tc, "Device dump vs simulation (int mode: integer kernels; sim: Q/DQ in float)%s\n"
                           "verdict: %s\n%s%s%s\n", r->have_base ? " and the float baseline" : "", qr_dump_verdict(&a, r),
                           r->have_frag ? "rounding fragility (the sim re-run with 1-LSB rounding perturbations): " : "",
                           r->frag_verdict ? r->frag_verdict : "", r->have_frag ? "\n" : "");
    if (st == QR_OK) st = qr_table_render_txt(&t, NULL, NULL, &txt, &tl, &tc);
    if (st == QR_OK && r->n_unmatched) {
        st = qr_buf_printf(&txt, &tl, &tc, "\n%d file%s matched no value (name them with --dump-map):\n", r->n_unmatched,
                           r->n_unmatched == 1 ? "" : "s");
        for (int i = 0; st == QR_OK && i < r->n_unmatched; i++) st = qr_buf_printf(&txt, &tl, &tc, "  %s\n", r->unmatched[i]);
    }
    if (st == QR_OK) st = qr_table_render_csv(&t, NULL, &csv, &cl, &cc);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_DUMP ".txt", dir), txt, tl);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_DUMP ".csv", dir), csv, cl);
    free(txt);
    free(csv);
    qr_table_free(&t);
    qr_arena_free(&a);
    return st;
}

static void qr_dump_html(QrHtml *h, const QrDumpResult *r) {
    QrArena a = { 0 };
    qr_html_section(h, "dump", "Device dump vs simulation");
    qr_html_paraf(h, "Per-layer tensors dumped by the deployment runtime, matched to the analysis model's values and "
                  "compared with qreport's int-mode run (integer kernels, as a deployment runtime) and its sim-mode run%s. "
                  "Integer values in LSB of their quantizer; a value diverges beyond %g LSB, unless the difference is "
                  "within the model's rounding-fragility spread at that value and downstream of a smaller difference "
                  "(then: rounding).%s%s", r->have_base ? ", and with the float baseline" : "", r->tol,
                  r->frag_verdict ? " Rounding fragility: " : "", r->frag_verdict ? r->frag_verdict : "");
    qr_html_notice(h, r->first_divergent < 0 ? QR_HTML_GOOD : QR_HTML_BAD,
                   r->first_divergent < 0 ? "Device agrees" : "First divergent value", qr_dump_verdict(&a, r));
    QrTable t = { 0 };
    if (qr__dp_table(r, &a, &t) == QR_OK) qr_html_table(h, &t, NULL);
    qr_table_free(&t);
    if (r->n_unmatched) {
        qr_html_paraf(h, "%d file%s matched no value:", r->n_unmatched, r->n_unmatched == 1 ? "" : "s");
        qr_html_list_begin(h, false);
        for (int i = 0; i < r->n_unmatched; i++) qr_html_item(h, r->unmatched[i]);
        qr_html_list_end(h);
    }
    const char *files[] = { QR_BF_DUMP ".txt", QR_BF_DUMP ".csv" };
    qr_html_files(h, files, 2);
    qr_arena_free(&a);
}

static void qr_dump_json(QrJson *j, const QrDumpResult *r) {
    qr_json_obj_begin(j);
    if (r->first_divergent >= 0) {
        qr_json_kv_str(j, "first_divergent", r->rows[r->first_divergent].value);
        qr_json_kv_str(j, "first_divergent_file", r->rows[r->first_divergent].file);
        qr_json_kv_int(j, "first_divergent_lsb_max", r->rows[r->first_divergent].lsb_max);
    } else qr_json_kv_null(j, "first_divergent");
    qr_json_kv_int(j, "matched", r->n);
    qr_json_kv_int(j, "divergent", r->n_divergent);
    qr_json_kv_int(j, "rounding", r->n_rounding);
    qr_json_kv_int(j, "unmatched_files", r->n_unmatched);
    qr_json_kv_num(j, "tolerance_lsb", r->tol);
    qr_json_obj_end(j);
}
