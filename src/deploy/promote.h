/* deploy/promote — a repaired model: the analysis model with chosen nodes promoted as the
 * mixed-precision what-if does it (analysis/whatif.c: 16-bit Q/DQ on the promoted quantizers with
 * re-quantized weights, or their Q/DQ removed for float), written as ONNX, with promotion.json
 * (nodes, to, predicted: the what-if's output metrics) and the node list in the forms quantizers
 * take: ONNX Runtime's nodes_to_exclude (+ TensorQuantOverrides for int16), a TensorRT
 * Model Optimizer style exclusion config, a plain text list. The model written is the what-if's
 * graph itself (the twin, QOperator nodes in their DequantizeLinear -> op -> QuantizeLinear form),
 * so running it gives the predicted metrics bit for bit. */
#ifndef QR_PROMOTE_H
#define QR_PROMOTE_H

typedef struct QrPromoteResult {
    QrArena arena;
    bool to_float;
    int n_nodes;
    const char **nodes;          /* analysis node names */
    const char **base_nodes;     /* matched baseline node names (NULL: none) */
    QrMetrics predicted;         /* the what-if's model-output metrics of this promotion */
    QrMetrics as_is;             /* the model as it is */
    bool have_as_is;
    int n_promoted, n_also, n_not, n_not_disabled, n_ort;
    const char **promoted, **also, **not_promoted, **ort_overrides, **ort_types;
} QrPromoteResult;

/* Twin node indices of the names (analysis or baseline node names); fails naming the unknown one
 * with the closest names. */
static QrStatus qr_promote_nodes(const QrSession *s, const char *list, QrArena *a, int **out, int *n);
/* Predicts and writes onnx_path (the repaired model). s: session with the baseline run. */
static QrStatus qr_promote_model(QrSession *s, const int *twin_nodes, int n, bool to_float, const char *onnx_path,
                                 QrPromoteResult *r);
/* promotion.json, nodes_to_exclude.json (ONNX Runtime), modelopt_exclude.json, exclude_nodes.txt,
 * each file name prefixed with `prefix` ("" or "<model stem>."), into dir. model_file: the .onnx
 * written (named in promotion.json). */
static QrStatus qr_promote_write_lists(const QrPromoteResult *r, const char *dir, const char *prefix, const char *model_file);
static void qr_promote_free(QrPromoteResult *r);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static QrStatus qr_promote_model_rank(QrSession *s, QrWiNode *rank, int n, bool to_float, const char *onnx_path, QrPromoteResult *r);
#endif
