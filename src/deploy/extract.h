/* deploy/extract — a minimal, self-contained reproduction of one layer for a bug report: the
 * baseline node and the analysis model's node with its Q/DQ (or QOperator) form, plus `radius`
 * upstream nodes, weights included, cut at matched values that become graph inputs; the cut
 * inputs (the baseline's values, and the analysis model's values as its consumers saw them),
 * the expected outputs of both, repro.json and README.txt. `qreport compare` on the extracted pair
 * with the baseline's cut inputs gives the node's local (shadow) metrics of the full run: the
 * layer computed from the baseline's inputs, as compare's local columns define it. */
#ifndef QR_EXTRACT_H
#define QR_EXTRACT_H

typedef struct QrExtractOpts {
    const char *node;            /* baseline or analysis node name */
    int radius;                  /* upstream nodes kept (0: the node alone) */
} QrExtractOpts;

typedef struct QrExtractInfo {
    int match;                   /* the row's match index */
    const char *b_node, *a_node; /* names (borrowed from the graphs) */
    QrMetrics local, m;          /* the full run's local and as-is metrics of the node */
    bool has_local, has_m;
    int n_cut;                   /* graph inputs of the extracted pair */
    int n_base_nodes, n_analysis_nodes;
} QrExtractInfo;

/* Writes the repro into dir, which must exist and be empty (the caller stages it). se: the session
 * (baseline run done), c: its per-layer comparison (sim mode). */
static QrStatus qr_extract_write(QrSession *se, const QrCompare *c, const QrExtractOpts *o, const char *dir,
                                 QrExtractInfo *info);
/* The match whose baseline or analysis node is called name (-1 with a message listing the
 * closest names when none). */
static int qr_extract_find(const QrSession *se, const char *name, QrArena *ar);
/* Writes into a new sibling folder and renames it to dir at the end (dir: missing or empty),
 * so a failure leaves nothing behind. */
static QrStatus qr_extract_to(QrSession *se, const QrCompare *c, const QrExtractOpts *o, const char *dir,
                              QrExtractInfo *info);

#endif
