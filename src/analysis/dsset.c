/* analysis/dsset — implementation. See dsset.h. */
#include <dirent.h>
#include <sys/stat.h>

/* ==== sample files ========================================================================= */

static bool qr_dsset_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A sample file: .npy, or .pb (an ONNX TensorProto, as in ONNX's test data). */
static bool qr__dsset_is_sample(const char *f) {
    size_t l = strlen(f);
    return f[0] != '.' && ((l > 4 && !strcmp(f + l - 4, ".npy")) || (l > 3 && !strcmp(f + l - 3, ".pb")));
}

static QrStatus qr_dsset_sample_read(const char *path, QrTensor *t) {
    size_t l = strlen(path);
    if (l > 3 && !strcmp(path + l - 3, ".pb")) return qr_pb_read(path, t, NULL, 0);
    return qr_npy_read(path, t);
}

/* "12.npy" (or "12.pb") → 12; -1 when the stem is not a plain decimal number. */
static long long qr__dsset_numeric_stem(const char *f) {
    long long v = 0;
    const char *p = f;
    if (!isdigit((unsigned char)*p)) return -1;
    for (; isdigit((unsigned char)*p); p++) { v = v * 10 + (*p - '0'); if (v > (1LL << 50)) return -1; }
    return strcmp(p, ".npy") && strcmp(p, ".pb") ? -1 : v;
}

static int qr_dsset_file_cmp(const void *pa, const void *pb) {
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    long long x = qr__dsset_numeric_stem(a), y = qr__dsset_numeric_stem(b);
    if (x >= 0 && y >= 0) return x < y ? -1 : x > y;
    if (x >= 0 || y >= 0) return x >= 0 ? -1 : 1;
    return strcmp(a, b);
}

/* The regular *.npy and *.pb files of dir, sorted (names in a). */
static QrStatus qr_dsset_list_npy(QrArena *a, const char *dir, const char ***out, int *n_out) {
    DIR *d = opendir(dir);
    if (!d) return qr_errf(QR_ERR_IO, "cannot open data folder '%s': %s", dir, strerror(errno));
    int n = 0, cap = 0;
    const char **v = NULL;
    QrStatus st = QR_OK;
    for (struct dirent *e; st == QR_OK && (e = readdir(d));) {
        if (!qr__dsset_is_sample(e->d_name)) continue;
        char *path = qr_arena_printf(a, "%s/%s", dir, e->d_name);
        if (!path) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        if (qr_dsset_is_dir(path)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            const char **nv = qr_arena_array(a, (size_t)cap, sizeof *nv);
            if (!nv) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            if (n) memcpy(nv, v, (size_t)n * sizeof *nv);
            v = nv;
        }
        v[n] = qr_arena_strdup(a, e->d_name);
        if (!v[n]) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        n++;
    }
    closedir(d);
    QR_TRY(st);
    if (n) qsort(v, (size_t)n, sizeof *v, qr_dsset_file_cmp);
    *out = v;
    *n_out = n;
    return QR_OK;
}

/* ==== the set ======================================================================== */

static void qr_dsset_free(QrDsSet *ds) {
    qr_arena_free(&ds->arena);
    memset(ds, 0, sizeof *ds);
}

static QrStatus qr_dsset_list(const QrGraph *b, const char *dir, int max_samples, QrDsSet *out) {
    memset(out, 0, sizeof *out);
    QrArena *ar = &out->arena;
    int ni = b->n_inputs;
    if (!qr_dsset_is_dir(dir)) return qr_errf(QR_ERR_IO, "--data '%s' is not a folder", dir);
    out->dir = qr_arena_strdup(ar, dir);
    out->n_inputs = ni;
    out->input_names = qr_arena_array(ar, (size_t)ni + 1, sizeof(char *));
    out->folder = qr_arena_array(ar, (size_t)ni + 1, sizeof(char *));
    if (!out->dir || !out->input_names || !out->folder) { qr_dsset_free(out); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    int have = 0;
    for (int k = 0; k < ni; k++) {
        const char *name = b->values[b->inputs[k]].name;
        char safe[512];
        qr_safe_filename(safe, sizeof safe, name);
        out->input_names[k] = name;
        const char *p1 = qr_arena_printf(ar, "%s/%s", dir, name), *p2 = qr_arena_printf(ar, "%s/%s", dir, safe);
        out->folder[k] = p1 && qr_dsset_is_dir(p1) ? p1 : p2 && qr_dsset_is_dir(p2) ? p2 : NULL;
        have += out->folder[k] != NULL;
    }
    QrStatus st = QR_OK;
    out->folders = have > 0;
    if (have > 0 && have < ni) {
        for (int k = 0; k < ni; k++)
            if (!out->folder[k]) {
                st = qr_errf(QR_ERR_INVALID, "--data %s: no folder for model input '%s' (hmct layout: one folder per input, "
                             "named after it, holding the same file names)", dir, out->input_names[k]);
                break;
            }
    } else if (have == 0) {
        if (ni != 1)
            st = qr_errf(QR_ERR_INVALID, "--data %s: the model has %d inputs, so the folder needs one sub-folder per input "
                         "named after it (hmct layout: %s/%s/0.npy, ...)", dir, ni, dir, ni ? out->input_names[0] : "?");
        else out->folder[0] = out->dir;
    }
    const char **files = NULL;
    int nf = 0;
    if (st == QR_OK) st = qr_dsset_list_npy(ar, out->folder[0], &files, &nf);
    if (st == QR_OK && nf == 0) st = qr_errf(QR_ERR_INVALID, "--data %s: no .npy or .pb samples in '%s'", dir, out->folder[0]);
    /* every input folder holds the same file names */
    for (int k = 1; st == QR_OK && k < ni; k++) {
        const char **fk = NULL;
        int nk = 0;
        st = qr_dsset_list_npy(ar, out->folder[k], &fk, &nk);
        for (int i = 0, j = 0; st == QR_OK && (i < nf || j < nk);) {
            int c = i < nf && j < nk ? qr_dsset_file_cmp(&files[i], &fk[j]) : i < nf ? -1 : 1;
            if (c < 0) st = qr_errf(QR_ERR_INVALID, "--data %s: sample '%s' is in '%s' but not in '%s' (input '%s')", dir,
                                    files[i], out->folder[0], out->folder[k], out->input_names[k]);
            else if (c > 0) st = qr_errf(QR_ERR_INVALID, "--data %s: sample '%s' is in '%s' (input '%s') but not in '%s'", dir,
                                         fk[j], out->folder[k], out->input_names[k], out->folder[0]);
            i++, j++;
        }
    }
    if (st != QR_OK) { qr_dsset_free(out); return st; }
    out->n_found = nf;
    out->held = -1;
    out->n = max_samples > 0 ? QR_MIN(max_samples, nf) : nf;
    out->names = files;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI int64_t qr_dsset_reads;
#endif

static QrStatus qr_dsset_read(const QrDsSet *ds, const QrGraph *b, int k, const QrTensor *ref, QrTensor *in) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_dsset_reads, 1, __ATOMIC_RELAXED);
#endif
    QrStatus st = QR_OK;
    char path[4096];
    for (int i = 0; i < ds->n_inputs; i++) memset(&in[i], 0, sizeof in[i]);
    for (int i = 0; st == QR_OK && i < ds->n_inputs; i++) {
        snprintf(path, sizeof path, "%s/%s", ds->folder[i], ds->names[k]);
        st = qr_dsset_sample_read(path, &in[i]);
        if (st == QR_OK) st = qr_run_check_input(b, i, &in[i]);
        if (st == QR_OK && ref && (in[i].dtype != ref[i].dtype || !qr_tensor_same_shape(&in[i], &ref[i]))) {
            char s1[128], s2[128];
            st = qr_errf(QR_ERR_SHAPE, "input '%s' is %s %s but the first sample's is %s %s (every sample must have the same "
                         "dtype and shape)", ds->input_names[i], qr_dtype_name(in[i].dtype),
                         qr_shape_str_brackets(s1, sizeof s1, in[i].rank, in[i].dims), qr_dtype_name(ref[i].dtype),
                         qr_shape_str_brackets(s2, sizeof s2, ref[i].rank, ref[i].dims));
        }
        if (st != QR_OK) st = qr_err_wrap(st, "sample '%s' (%s)", ds->names[k], path);
    }
    if (st != QR_OK) for (int i = 0; i < ds->n_inputs; i++) qr_tensor_free_data(&in[i]);
    return st;
}
