/* analysis/check — structure check of an analysis (quantized) model, the
 * counterpart of check_qat_model: unfused patterns, shared weights/quantizers,
 * per-layer output quantization, weight quantization and anomalies, written as
 * model_check_result.txt. Value ranges come from one run on the given input. */
#ifndef QR_CHECK_H
#define QR_CHECK_H

typedef struct QrCheckSummary {
    int n_unfused, n_shared, n_anomalies;
} QrCheckSummary;

/* What one line of the check found. Sections: 1 QR_CHK_UNFUSED; 2 QR_CHK_SHARED_* (sharing)
 * and QR_CHK_MERGED_* (identical constants an exporter stored once, listed apart: not
 * sharing); 5 the anomalies QR_CHK_OUTPUT_LOW_PRECISION .. QR_CHK_INPUT_NOT_NORMALIZED. */
typedef enum QrCheckKind {
    QR_CHK_UNFUSED,               /* node -> [Q/DQ] -> node2 (-> [Q/DQ] -> node3): q1, q2 */
    QR_CHK_SHARED_SCALE,          /* scale initializer value read by count quantizers (list: every quantizer reading it) */
    QR_CHK_SHARED_WEIGHT,         /* weight value read by count compute nodes (list) */
    QR_CHK_SHARED_QUANTIZER,      /* activation quantizer quant feeds count compute nodes */
    QR_CHK_MERGED_ZERO_POINT,     /* zero point value read by count quantizers; constant: all elements equal */
    QR_CHK_MERGED_CONSTANT,       /* constant value (every element x[0]) read by count compute nodes */
    QR_CHK_MERGED_DEDUP,          /* value read by count compute nodes (list), count - n_direct through an Identity */
    QR_CHK_OUTPUT_LOW_PRECISION,  /* graph output value quantized to dtype before the output */
    QR_CHK_CLIPPED,               /* quantizer quant on value: grid [x0, x1] vs observed range [x2, x3] */
    QR_CHK_SCALE_GAP,             /* Concat/Add node: input scales x0 .. x1 */
    QR_CHK_INPUT_NOT_NORMALIZED,  /* graph input value: min x0, max x1, mean x2, std x3 */
} QrCheckKind;

typedef struct QrCheckFinding {
    QrCheckKind kind;
    int value, node, node2, node3, quant;   /* indices into the graph / quantizer table, -1: none */
    bool q1, q2, constant;
    int count, n_direct;
    const int *list;                        /* n_list nodes or quantizers (see the kind), in the check's arena */
    int n_list;
    double x[4];
    QrDType dtype;
} QrCheckFinding;

/* The check's findings, computed once (qr_check_run) and then formatted
 * (qr_check_format): model_check_result.txt, index.html's section. Points into g and qt,
 * which must outlive it. */
typedef struct QrCheck {
    const QrGraph *g;
    const QrQuantTable *qt;
    bool have_stats;                         /* false: the range checks were skipped */
    QrCheckFinding *f;                       /* in section order */
    int n;
    int *layers, n_layers;                   /* section 3: the nodes listed, in graph order */
    int *weights, n_weights;                 /* section 4: the weight quantizers */
    int *wonly, n_wonly;                     /* section 4: weight-only nodes (com.microsoft MatMulNBits, MatMulBnb4,
                                              * GatherBlockQuantized with a constant weight): each the quantizer
                                              * of its weight, as the analyses treat it (quant/twin_wq.c) */
    QrCheckSummary sum;
    QrArena arena;
} QrCheck;

/* Runs every check. stats: per value statistics from a run (NULL: range-based checks are
 * skipped). Fails only when out of memory; free with qr_check_free (also after a failure). */
static QrStatus qr_check_run(const QrGraph *g, const QrQuantTable *qt, const QrStats *stats, QrCheck *c);
/* model_check_result.txt's text (malloc'ed, *txt not NUL-terminated beyond *len). */
static QrStatus qr_check_format(const QrCheck *c, char **txt, size_t *len);
static void qr_check_free(QrCheck *c);
/* qr_check_run, qr_check_format and the atomic write of path; c keeps the findings (free
 * it with qr_check_free whatever this returns). */
static QrStatus qr_check_write(const QrGraph *g, const QrQuantTable *qt, const QrStats *stats, const char *path,
                               QrCheck *c);

#endif
