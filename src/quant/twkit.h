/* quant/twkit — the kit the float twin is built with (quant/twin_wq.c, quant/twin.c): the
 * rewriting context and the nodes, values and constants it adds to the twin graph. */
#ifndef QR_TWKIT_H
#define QR_TWKIT_H

/* Why a twin: a QOperator node carries its quantizers inside integer arithmetic,
 * so "disable this quantizer" has no meaning for it. Its twin does the same
 * computation on dequantized values in float and quantizes the result with the
 * node's own output scale; with every quantizer enabled it equals the integer
 * node up to rounding ties, and disabling a quantizer makes it the identity.
 * QDQ models have nothing to rewrite: their twin is a plain copy. */
typedef struct QrTwin {
    QrGraph g;               /* the twin graph; values of the source keep their indices */
    int *origin;             /* per twin node: the source node it stands for */
    int n_rewritten;         /* source nodes replaced by a float twin */
    int n_kept;              /* integer nodes kept as they are (no twin pattern) */
    char note[512];          /* the first reason a node was kept */
} QrTwin;

/* The rewriting of source graph s into the twin tw (quant/twin.c's qr_twin_build). */
typedef struct QrTwCtx {
    const QrGraph *s;
    QrTwin *tw;
    int cap_origin;
    int origin;              /* source node being rewritten */
    int *dq_cache;           /* per source value: twin DQ output already made for it, or -1 */
    int *dq_scale;           /* the scale value that DQ used */
    bool *consumed;          /* per source node: absorbed into a rewritten pattern */
} QrTwCtx;

static bool qr_twk_is(const QrNode *n, const char *op);
/* Appends a node (bound to its operator) to the twin, standing for source node cx->origin. */
static QrStatus qr_twk_add(QrTwCtx *cx, const char *name, const char *op, const char *domain, int n_in, const int *in,
                           int n_out, const int *out, int n_attr, const QrAttr *attr);
/* A new float value of the twin named after `base` + suffix. */
static QrStatus qr_twk_value(QrTwCtx *cx, const char *base, const char *suffix, int *v);
/* A new constant of the twin (takes ownership of t's data). */
static QrStatus qr_twk_const(QrTwCtx *cx, const char *base, QrTensor *t, int *v);

#endif
