/* deploy/dump — device dumps against the simulation: a folder of per-layer tensors written by a
 * deployment runtime (.npy of any numeric dtype, raw .bin/.raw) is matched to the analysis
 * model's values (exact name, sanitized name, runtime prefixes/suffixes stripped, or a
 * --dump-map CSV), brought to the model's layout (NCHW or channels-last NHWC) and compared with
 * the int-mode run (integer kernels, as a deployment runtime), the sim-mode run and, when a
 * baseline is given, the float baseline. The verdict is the first value in graph order where
 * the device leaves the int-mode simulation by more than a tolerance in LSB — unless that
 * difference is within the model's rounding-fragility spread (analysis/frag: the sim re-run with
 * 1-LSB rounding perturbations) at that value and some value upstream of it already differs:
 * such a row is called rounding (a correct device that rounds otherwise), not divergent. */
#ifndef QR_DUMP_H
#define QR_DUMP_H

#define QR_DUMP_HIST 8           /* |Δ| LSB buckets: 0, 1, 2, 3, 4-7, 8-15, 16-127, >=128 */

typedef struct QrDumpOpts {
    const char *dir;             /* the dump folder */
    const char *map;             /* --dump-map CSV (file,value[,layout][,scale,zero_point]) or NULL */
    double tol;                  /* --dump-tolerance in LSB (default 1) */
    double float_rtol;           /* values without an integer grid: divergent when max |Δ| > float_rtol · max |ref| */
    bool no_fragility;           /* --no-fragility: no rounding-fragility runs, every row beyond tol diverges */
    bool int16_integer;          /* --int16 integer: the int-mode run lowers 16-bit groups too */
} QrDumpOpts;

typedef struct QrDumpRow {
    const char *file;            /* file name inside the dump folder */
    const char *value;           /* the analysis value it holds */
    int v;                       /* its index in the analysis graph */
    int q;                       /* quantizer of the value (analysis table), or -1 */
    const char *how;             /* "exact", "sanitized", "stripped", "map" */
    const char *layout;          /* "NCHW", "NHWC", "NHWC (from data)", "-" (rank < 3) ... */
    QrDType dtype;               /* dtype of the device's data */
    bool lsb;                    /* compared on an integer grid (quantizer or map scale) */
    double scale;                /* that grid */
    int64_t zp;
    int64_t n;                   /* elements */
    int64_t n_diff, n_tie;       /* elements differing from the int-mode simulation; at a rounding tie */
    int64_t lsb_max;             /* largest |Δ| in LSB (lsb) */
    int64_t hist[QR_DUMP_HIST];  /* |Δ| histogram (lsb) */
    int64_t sim_n_diff, sim_lsb_max;   /* device vs sim mode (lsb) */
    QrMetrics dev_int, dev_sim;  /* float metrics: int / sim mode (x) vs device (y) */
    QrMetrics dev_base;          /* baseline (x) vs device (y) */
    bool has_base;
    double mse_lsb;              /* mean squared |Δ| in LSB² against the int-mode simulation (lsb) */
    bool has_spread;             /* the rounding-fragility spread at this value is known (analysis/frag) */
    QrFragSpread spread;
    bool rounding;               /* beyond tol, but within the fragility spread and downstream of a differing
                                  * value: called rounding, not divergent */
    bool divergent;
    int order;                   /* position in the analysis graph's topological order (-1: graph input) */
} QrDumpRow;

typedef struct QrDumpResult {
    QrArena arena;
    double tol, float_rtol;
    int n;                       /* matched files, graph order */
    QrDumpRow *rows;
    int n_unmatched;             /* files no value matches */
    const char **unmatched;
    int n_divergent;
    int first_divergent;         /* row index, -1 when the device agrees everywhere (rows called rounding aside) */
    int n_rounding;              /* rows beyond tol called rounding */
    bool have_frag;              /* the fragility runs were made */
    const char *frag_verdict;    /* their verdict (arena), or NULL */
    bool have_base;
} QrDumpResult;

/* Matches, loads and compares the dump. a: the analysis model, shape-inferred on inputs. se (optional)
 * a session of the baseline with a (for the baseline columns). Every problem with the dump (wrong
 * size, unknown dtype, a layout fitting no permutation, a name matching several values, an integer
 * dump for a value without quantizer and no map scale) fails with a message naming the file; nothing
 * is written. */
static QrStatus qr_dump_compare(const QrGraph *a, const QrTensor *inputs, QrSession *se, const QrDumpOpts *o,
                                QrDumpResult *r);
static void qr_dump_free(QrDumpResult *r);
/* dump_compare.txt / dump_compare.csv into dir. */
static QrStatus qr_dump_write(const QrDumpResult *r, const char *dir);
/* The HTML section and the summary.json object "dump" ({first_divergent, matched, divergent, ...}). */
static void qr_dump_html(QrHtml *h, const QrDumpResult *r);
static void qr_dump_json(QrJson *j, const QrDumpResult *r);
/* One line: "device leaves the simulation first at V (...)" or "device agrees ...". Arena copy. */
static const char *qr_dump_verdict(QrArena *a, const QrDumpResult *r);

/* ---- shared by deploy's commands ---- */
/* "Did you mean: a, b, c?" — the (up to 3) names closest to `name` (edit distance), arena copy. */
static const char *qr_dump_suggest(QrArena *a, const char *name, const char *const *names, int n);
/* An output folder for a multi-file result: missing (created) or empty; else an error. */
static QrStatus qr_dump_outdir(const char *dir);
/* The same check without creating it. */
static QrStatus qr_dump_outdir_check(const char *dir);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static int qr_dump_inherited(const QrGraph *g, const QrQuantTable *qt, int v);
#endif
