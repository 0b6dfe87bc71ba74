/* analysis/demote — the int16 -> int8 direction (QuantAnalysis sensitivity's reserve): for a
 * model that already has 16-bit quantizers, the measured model-output cost of putting each
 * of them back on an 8-bit grid, ranked cheapest first (int16_demotion.txt/.csv/.json). */
#ifndef QR_DEMOTE_H
#define QR_DEMOTE_H

/* Demotion of one group of 16-bit quantizers (those sharing a scale or zero point go
 * together): 8-bit grid of the same signedness with the same clipping threshold,
 * scale' = scale · qmax16 / qmax8, zp' = round(zp · qmax8 / qmax16) (uint16 -> uint8 is
 * exact: scale·257, zp/257); integer weights re-quantized from the matched float weight;
 * every other quantizer as given (int32 biases keep their own scales). */
typedef struct QrDemoteRow {
    const char *name;        /* op_name: the owning node (analysis name), or the input's name */
    const char *node;        /* owning node ("" for a graph input) */
    const char *op_type;
    const char *kind;        /* "activation" / "weight" */
    const char *dtype, *to;  /* "int16" -> "int8", "uint16" -> "uint8" */
    const char *tensor;      /* the quantized tensor (weights: the baseline's float weight name when known) */
    const char *also;        /* tensors of the other quantizers demoted with it, or NULL */
    int n_q, q[8];           /* the group (session->qt) */
    QrMetrics m;             /* model output(s) with the group demoted */
} QrDemoteRow;

typedef struct QrDemotion {
    QrArena arena;
    QrMetricKind metric;     /* ranking key: least badness first */
    QrMetrics as_is;         /* the twin with every quantizer as given */
    int n_16;                /* 16-bit quantizers found (biases excluded) */
    int n;
    QrDemoteRow *rows;       /* cheapest first */
    int n_skipped;           /* groups that cannot be demoted (dynamic scale, QOperator form, shared with others) */
    char note[512];          /* the first reason */
} QrDemotion;

/* Runs one twin execution per group (in parallel; any thread count gives the same bits). A
 * model without 16-bit quantizers gives no rows. Fails on run errors / out of memory. */
static QrStatus qr_demote_run(QrSession *s, QrMetricKind metric, QrDemotion *out);
static void qr_demote_free(QrDemotion *d);
/* int16_demotion.txt/.csv/.json into dir (sensitive_ops' columns plus dtype, demoted_to, tensor). */
static QrStatus qr_demote_write(const QrSession *s, const QrDemotion *d, const char *dir);

#endif
