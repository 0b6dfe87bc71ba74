/* report/table — implementation. See table.h. */

static QrStatus qr_buf_printf(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) { va_end(ap2); return qr_errf(QR_ERR_INVALID, "format error"); }
    if (*len + (size_t)n + 1 > *cap) {
        size_t nc = QR_MAX(*cap * 2, *len + (size_t)n + 4096);
        char *nb = realloc(*buf, nc);
        if (!nb) { va_end(ap2); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
        *buf = nb;
        *cap = nc;
    }
    vsnprintf(*buf + *len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    *len += (size_t)n;
    return QR_OK;
}

static QrStatus qr_table_init(QrTable *t, int n_cols, const char *const *cols) {
    memset(t, 0, sizeof *t);
    t->n_cols = n_cols;
    t->cols = qr_arena_array(&t->arena, (size_t)n_cols, sizeof(char *));
    if (!t->cols) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int c = 0; c < n_cols; c++) t->cols[c] = cols[c];
    return QR_OK;
}

static QrStatus qr_table_add_row(QrTable *t, int *row) {
    if (t->n_rows == t->cap_rows) {
        int cap = t->cap_rows ? t->cap_rows * 2 : 64;
        const char ***nr = qr_arena_array(&t->arena, (size_t)cap, sizeof *nr);
        if (!nr) return qr_errf(QR_ERR_NOMEM, "out of memory");
        if (t->n_rows) memcpy(nr, t->rows, (size_t)t->n_rows * sizeof *nr);
        t->rows = nr;
        t->cap_rows = cap;
    }
    const char **cells = qr_arena_array(&t->arena, (size_t)t->n_cols, sizeof(char *));
    if (!cells) return qr_errf(QR_ERR_NOMEM, "out of memory");
    t->rows[t->n_rows] = cells;
    *row = t->n_rows++;
    return QR_OK;
}

static QrStatus qr_table_set(QrTable *t, int row, int col, const char *s) {
    t->rows[row][col] = s ? qr_arena_strdup(&t->arena, s) : NULL;
    if (s && !t->rows[row][col]) return qr_errf(QR_ERR_NOMEM, "out of memory");
    return QR_OK;
}

static QrStatus qr_table_setf(QrTable *t, int row, int col, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return qr_table_set(t, row, col, tmp);
}

static void qr_table_free(QrTable *t) { qr_arena_free(&t->arena); memset(t, 0, sizeof *t); }

/* Display width of a UTF-8 string in code points. */
static size_t qr__tab_utf8_width(const char *s) {
    size_t w = 0;
    for (; *s; s++) if (((unsigned char)*s & 0xc0) != 0x80) w++;
    return w;
}

static QrStatus qr_table_render_txt(const QrTable *t, const char *title, const int *order, char **buf, size_t *len,
                                    size_t *cap) {
    size_t *w = calloc((size_t)t->n_cols, sizeof *w);
    if (!w) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int c = 0; c < t->n_cols; c++) {
        w[c] = qr__tab_utf8_width(t->cols[c]);
        for (int r = 0; r < t->n_rows; r++)
            if (t->rows[r][c]) w[c] = QR_MAX(w[c], qr__tab_utf8_width(t->rows[r][c]));
    }
    QrStatus st = QR_OK;
    if (title) st = qr_buf_printf(buf, len, cap, "%s\n", title);
    for (int line = -3; st == QR_OK && line <= t->n_rows; line++) {
        /* -3: top rule, -2: header, -1: header rule, 0..n-1: rows, n: bottom rule */
        bool rule = line == -3 || line == -1 || line == t->n_rows;
        for (int c = 0; st == QR_OK && c < t->n_cols; c++) {
            if (rule) {
                st = qr_buf_printf(buf, len, cap, "%s", c == 0 ? (line == -1 ? "|" : "+") : (line == -1 ? "+" : "+"));
                for (size_t k = 0; st == QR_OK && k < w[c] + 2; k++) st = qr_buf_printf(buf, len, cap, "-");
            } else {
                const char *s = line == -2 ? t->cols[c] : t->rows[order ? order[line] : line][c];
                if (!s) s = "";
                st = qr_buf_printf(buf, len, cap, "| %s%*s ", s, (int)(w[c] - qr__tab_utf8_width(s)), "");
            }
        }
        if (st == QR_OK) st = qr_buf_printf(buf, len, cap, rule ? (line == -1 ? "|\n" : "+\n") : "|\n");
    }
    free(w);
    return st;
}

static QrStatus qr_table_render_csv(const QrTable *t, const int *order, char **buf, size_t *len, size_t *cap) {
    QrStatus st = QR_OK;
    for (int line = -1; st == QR_OK && line < t->n_rows; line++) {
        for (int c = 0; st == QR_OK && c < t->n_cols; c++) {
            const char *s = line < 0 ? t->cols[c] : t->rows[order ? order[line] : line][c];
            if (!s) s = "";
            if (c) st = qr_buf_printf(buf, len, cap, ",");
            if (st != QR_OK) break;
            if (strpbrk(s, ",\"\n\r")) {
                st = qr_buf_printf(buf, len, cap, "\"");
                for (const char *p = s; st == QR_OK && *p; p++)
                    st = qr_buf_printf(buf, len, cap, *p == '"' ? "\"\"" : "%c", *p);
                if (st == QR_OK) st = qr_buf_printf(buf, len, cap, "\"");
            } else {
                st = qr_buf_printf(buf, len, cap, "%s", s);
            }
        }
        if (st == QR_OK) st = qr_buf_printf(buf, len, cap, "\n");
    }
    return st;
}

static QrStatus qr_table_write_trio(const char *dir, const char *stem, const char *txt, size_t tl, const char *csv,
                                    size_t cl, const char *js, size_t jl) {
    QrArena a = {0};
    QrStatus st = qr_file_write_atomic(qr_arena_printf(&a, "%s/%s.txt", dir, stem), txt, tl);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/%s.csv", dir, stem), csv, cl);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/%s.json", dir, stem), js, jl);
    qr_arena_free(&a);
    return st;
}
