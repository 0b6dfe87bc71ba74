/* report/table — a table of strings written as an aligned text grid (.txt) and
 * as RFC 4180 CSV (.csv) with the same columns. Every report table uses it. */
#ifndef QR_TABLE_H
#define QR_TABLE_H

typedef struct QrTable {
    QrArena arena;
    int n_cols, n_rows, cap_rows;
    const char **cols;
    const char ***rows;      /* rows[r][c]; NULL cell = empty */
} QrTable;

static QrStatus qr_table_init(QrTable *t, int n_cols, const char *const *cols);
/* Appends a row; returns its cells to fill with qr_table_set / qr_table_setf. */
static QrStatus qr_table_add_row(QrTable *t, int *row);
static QrStatus qr_table_set(QrTable *t, int row, int col, const char *s);
static QrStatus qr_table_setf(QrTable *t, int row, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void qr_table_free(QrTable *t);
/* Writes DIR/STEM.txt, DIR/STEM.csv and DIR/STEM.json (a table's two renderings and its JSON
 * form), each atomically, in that order; stops at the first failure. */
static QrStatus qr_table_write_trio(const char *dir, const char *stem, const char *txt, size_t tl, const char *csv,
                                    size_t cl, const char *js, size_t jl);
/* Appends the grid (with an optional title line) to a growing buffer. */
static QrStatus qr_table_render_txt(const QrTable *t, const char *title, const int *order, char **buf, size_t *len, size_t *cap);
static QrStatus qr_table_render_csv(const QrTable *t, const int *order, char **buf, size_t *len, size_t *cap);
/* Growable text buffer helper. */
static QrStatus qr_buf_printf(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
