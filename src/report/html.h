/* report/html — builds the bundle's index.html: one self-contained page (inline
 * CSS, one small inline script for sortable/filterable tables, no network) with a
 * verdict box, sections listed in a table of contents, tables, plots and notices. */
#ifndef QR_HTML_H
#define QR_HTML_H

typedef enum QrHtmlLevel { QR_HTML_NONE = 0, QR_HTML_GOOD, QR_HTML_WARN, QR_HTML_BAD } QrHtmlLevel;

typedef struct QrHtmlTocItem { const char *id, *title; int level; /* 2 section, 3 subsection */ } QrHtmlTocItem;

/* The page is built in calls, in reading order:
 *   qr_html_init(&h, "title"); qr_html_subtitle(&h, "...");
 *   qr_html_verdict_begin(...); qr_html_metric(...)...; qr_html_para(...); qr_html_verdict_end(&h);
 *   qr_html_section(&h, "per-layer", "Per-layer comparison"); qr_html_table(...); qr_html_image(...); ...
 *   qr_html_finish(&h, &text, &len);
 * Text arguments are plain text: HTML-escaped, invalid UTF-8 shown as U+FFFD, control
 * characters other than tab/newline dropped. href/src arguments are relative paths
 * inside the bundle ("plots/a b.png"): they are percent-encoded (so '#', '?', '%',
 * spaces and non-ASCII names work from file://), which also means a URL with a scheme
 * cannot be smuggled in. Sections close themselves when the next one starts.
 * Errors are sticky (out of memory, misuse): calls after the first error do nothing
 * and qr_html_finish returns it. */
typedef struct QrHtml {
    QrArena arena;              /* titles, ids, toc */
    char *body;                 /* <main> content built so far */
    size_t len, cap;
    const char *title, *subtitle;
    QrHtmlTocItem *toc;
    int n_toc, cap_toc;
    QrStrMap ids;               /* ids in use, to keep anchors unique */
    int open_level;             /* 0 none, 1 verdict, 2 section, 3 subsection */
    bool in_metrics, in_gallery;
    int in_list;                /* 0 none, 1 <ul>, 2 <ol> */
    int n_tables;
    QrStatus err;
    const char *err_what;
} QrHtml;

static void qr_html_init(QrHtml *h, const char *title);
static void qr_html_free(QrHtml *h);
/* A line under the title (models compared, tool version, date...). */
static void qr_html_subtitle(QrHtml *h, const char *text);
/* Composes the page: header, table of contents (verdict, sections, subsections),
 * body, footer, script. Hands over malloc'd NUL-terminated text (caller frees) and
 * resets h; on failure returns the first error (call qr_html_free). */
static QrStatus qr_html_finish(QrHtml *h, char **out, size_t *len);

/* ---- verdict box (the top of the page) ---- */
/* Opens the verdict box: coloured by level, a badge (good / warning / bad) and a
 * headline ("Output cosine 0.91: 3 layers lose most of the accuracy"). Listed in the
 * table of contents as "Verdict". Metrics, paragraphs, lists and notices may follow. */
static void qr_html_verdict_begin(QrHtml *h, QrHtmlLevel level, const char *headline);
/* One metric tile: label, value (already formatted), colour by level, optional note. */
static void qr_html_metric(QrHtml *h, const char *label, const char *value, QrHtmlLevel level, const char *note);
static void qr_html_verdict_end(QrHtml *h);

/* ---- structure ---- */
/* A section (h2) with anchor `id` (NULL: derived from the title; made unique with
 * -2, -3... when taken) listed in the table of contents. */
static void qr_html_section(QrHtml *h, const char *id, const char *title);
#ifdef QR_TESTING
/* A subsection (h3) inside the current section, listed indented in the contents. */
QR_TESTAPI void qr_html_subsection(QrHtml *h, const char *id, const char *title);
#endif

/* ---- text ---- */
static void qr_html_para(QrHtml *h, const char *text);
static void qr_html_paraf(QrHtml *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Preformatted monospace text (command lines, messages). */
static void qr_html_pre(QrHtml *h, const char *text);
static void qr_html_list_begin(QrHtml *h, bool ordered);
static void qr_html_item(QrHtml *h, const char *text);
static void qr_html_itemf(QrHtml *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void qr_html_list_end(QrHtml *h);
#ifdef QR_TESTING
/* Key/value pairs (run information): qr_html_kv_begin, qr_html_kv..., qr_html_kv_end. */
QR_TESTAPI void qr_html_kv_begin(QrHtml *h);
QR_TESTAPI void qr_html_kv(QrHtml *h, const char *key, const char *value);
QR_TESTAPI void qr_html_kv_end(QrHtml *h);
#endif

/* ---- notices ---- */
/* A coloured box with a bold title and a message. */
static void qr_html_notice(QrHtml *h, QrHtmlLevel level, const char *title, const char *text);
/* The "failed analysis" box: "<analysis> failed" and the error message. */
static void qr_html_failed(QrHtml *h, const char *analysis, const char *message);

/* ---- tables, images, links ---- */
typedef struct QrHtmlTableOpts {
    const char *caption;        /* a line above the table, or NULL */
    const int *order;           /* rows in this order (t->n_rows indices), or NULL */
    int max_rows;               /* 0: every row; else the first max_rows, with a note */
    int filter_min_rows;        /* filter box when more rows than this; 0 = 10, -1 = never */
    /* Colour of one cell (bad metric values), or NULL. */
    QrHtmlLevel (*cell_level)(const QrTable *t, int row, int col, void *ctx);
    void *ctx;
    /* A small stacked bar after one cell's text (e.g. the parts of an error), or NULL: the
     * callback fills up to QR_HTML_BAR_MAX non-negative parts of that cell and returns how many
     * (0: no bar); they are drawn as shares of their sum, part k in colour k, with bar_labels[k]
     * and the share in the bar's tooltip. */
    int (*cell_bar)(const QrTable *t, int row, int col, void *ctx, double *parts);
    const char *const *bar_labels;
} QrHtmlTableOpts;
#define QR_HTML_BAR_MAX 4
/* Writes a QrTable (cells escaped, full text: long node names wrap, never cut).
 * Columns whose non-empty cells all parse as numbers (incl. inf/nan) are right-
 * aligned in tabular digits. Every table is sortable by clicking a header
 * (numeric-aware, empty cells last; again for descending); long ones get a filter
 * box (all space-separated words must occur in the row). opts may be NULL. */
static void qr_html_table(QrHtml *h, const QrTable *t, const QrHtmlTableOpts *opts);
/* Plots side by side (wrap qr_html_image calls). */
static void qr_html_gallery_begin(QrHtml *h);
static void qr_html_gallery_end(QrHtml *h);
/* A figure: the image (lazy-loaded, a link to the full-size file), alt text, an
 * optional caption; width/height in pixels when known (0 = unknown) so the page
 * does not jump while images load. */
static void qr_html_image(QrHtml *h, const char *src, const char *alt, const char *caption, int width, int height);
/* Markup written as given (the graph view's SVG and script: report/graph), and text escaped
 * like every text argument, both at the current position. */
static void qr_html_raw(QrHtml *h, const char *markup);
static void qr_html_text(QrHtml *h, const char *text);
/* "Raw files:" and one link per path. */
static void qr_html_files(QrHtml *h, const char *const *paths, int n);
/* An inline link inside a paragraph built with qr_html_raw, or on its own line. */
static void qr_html_link(QrHtml *h, const char *href, const char *text);

#endif
