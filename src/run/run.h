/* run — shape inference and the graph executor.
 * The executor walks the topological order, allocates each output from the shape
 * its op computes, calls a tap for every produced value and frees values after
 * their last use. */
#ifndef QR_RUN_H
#define QR_RUN_H

/* Values whose element count is at most this are constant-folded during shape
 * inference when all their inputs are known (enough for shape arithmetic). */
#define QR_FOLD_MAX_ELEMS 4096

/* Checks that every operator is implemented (one error listing all of them). */
static QrStatus qr_graph_check_supported(const QrGraph *g);
/* Resolves graph input shapes: shapes[i] (may be NULL) overrides input i's
 * declared shape; every dim must end up known. Fills out[i] (no data). */
static QrStatus qr_graph_input_shapes(const QrGraph *g, const QrTensor *const *given, QrTensor *out);
/* Shape inference from concrete input shapes. Inputs that carry data and are
 * small are treated as known values (shape tensors fed as graph inputs). */
static QrStatus qr_graph_infer(QrGraph *g, const QrTensor *inputs);
/* Validates a user tensor against graph input i (dtype, rank, static dims). */
static QrStatus qr_graph_check_input(const QrGraph *g, int i, const QrTensor *t);

/* Called for every value a node produces (and for graph inputs, with node = -1).
 * The tensor is valid only during the call. Return non-OK to abort the run. */
typedef QrStatus (*QrTapFn)(void *user, const QrGraph *g, int node, int value, const QrTensor *t);

/* Value overrides let one graph run in many configurations without rewriting
 * it: a disabled quantizer aliases its DQ output to its Q input; a substituted
 * weight replaces a value with a tensor. Consumers read the override; a node
 * whose outputs are all overridden is skipped. */
typedef struct QrRunOpts {
    QrTapFn tap;
    void *tap_user;
    const int *alias;                 /* per value: -1, or the value whose data it takes */
    const QrTensor *const *subst;     /* per value: NULL, or the tensor it takes */
    /* Per value (optional): an aliased value is materialized as clamp(source, lo, hi)
     * when lo or hi is not NaN. Models an activation that a quantizer implemented
     * (ONNX Runtime removes Relu and lets the following Q/DQ clamp at zero). */
    const float *clamp_lo, *clamp_hi;
    /* Per value (optional): readers see this tensor, but the value itself is
     * still computed and tapped (shadow runs feed baseline values to layers). */
    const QrTensor *const *feed;
    /* Per node (optional): only nodes with live[n] run (incremental re-runs);
     * every value a live node or a graph output reads from a skipped node must
     * come from subst/feed, otherwise the run fails naming the value. */
    const bool *live;
    int64_t *n_exec;                  /* optional: incremented per node executed */
} QrRunOpts;

/* Runs the graph on inputs (one per graph input, in order). outputs[i] receive
 * owned copies of the graph outputs (free with qr_tensor_free_data); outputs
 * may be NULL when only taps matter. */
static QrStatus qr_run(const QrGraph *g, const QrTensor *inputs, const QrRunOpts *opts, QrTensor *outputs);
/* Runs one node on the given inputs (NULL for omitted ones); outputs[k] receive
 * owned tensors. Used for shadow (local error) runs. */
static QrStatus qr_run_node(const QrGraph *g, int node, const QrTensor *const *inputs, QrTensor *outputs);

#endif
