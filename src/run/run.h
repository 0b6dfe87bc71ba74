/* run — shape inference and the graph executor.
 * The executor walks the topological order, allocates each output from the shape
 * its op computes, calls a tap for every produced value and frees values after
 * their last use. */
#ifndef QR_RUN_H
#define QR_RUN_H

/* Values whose element count is at most this are constant-folded during shape
 * inference when all their inputs are known (enough for shape arithmetic). */
#define QR_FOLD_MAX_ELEMS 4096

/* Binding nodes to operators (the op table of ops/): ir/ and onnx/ know no operators.
 * qr_run_bind sets every node's def (NULL for an operator qreport does not implement) and checks
 * a bound node's input / output counts (messages name g->path, the node and its operator).
 * qr_run_load = qr_onnx_read + qr_run_bind: what every command loads a model with; on success
 * *out owns everything (qr_graph_free + free), on failure *out is NULL.
 * qr_run_add_node = qr_graph_add_node for an operator qreport implements (an error otherwise),
 * bound (the graph passes: quant/twin, quant/lower, analysis/whatif). */
static QrStatus qr_run_bind(QrGraph *g);
static QrStatus qr_run_load(const char *path, QrGraph **out);
#ifdef QR_TESTING
/* Reads and binds a model from a buffer the caller keeps (tests, fuzz). */
QR_TESTAPI QrStatus qr_run_load_buffer(const char *path_for_messages, const char *dir, const unsigned char *buf,
                                       size_t len, QrGraph **out);
#endif
static QrStatus qr_run_add_node(QrGraph *g, const char *name, const char *op_type, const char *domain, int n_in,
                                const int *in, int n_out, const int *out, int n_attr, const QrAttr *attr, int *idx);
/* Lists every node whose operator is not implemented; returns the count. */
static int qr_run_unsupported(const QrGraph *g, char *buf, size_t n);

/* Checks that every operator is implemented (one error listing all of them). */
static QrStatus qr_run_check_supported(const QrGraph *g);

/* A symbolic dimension's value ("batch_size" = 1), given by the user (--dim NAME=N). */
typedef struct QrDimBind {
    const char *name;
    int64_t value;
} QrDimBind;
/* Resolves graph input shapes (no data in out[i]): given[i] (may be NULL) overrides input i's declared
 * shape; every dim must end up known. Symbolic dims are bound: an input not given gets each symbolic dim from
 * dims[] (the user's --dim), else from the same-named dim of an input given (its actual size;
 * names bound to different sizes by different inputs are not used), else from the builder's
 * relation total_sequence_length = past_sequence_length + sequence_length when two of the three
 * are bound. A dim still unbound is an error naming the input, the dim and the options that bind it. */
static QrStatus qr_run_input_shapes_bound(const QrGraph *g, const QrTensor *const *given, const QrDimBind *dims,
                                            int n_dims, QrTensor *out);
/* Shape inference from concrete input shapes. Inputs that carry data and are
 * small are treated as known values (shape tensors fed as graph inputs). */
static QrStatus qr_run_infer(QrGraph *g, const QrTensor *inputs);

/* Model warnings after qr_run_infer: what ONNX Runtime rejects but qreport runs
 * (block_size on QuantizeLinear/DequantizeLinear before opset 21; a value_info or graph
 * output dtype that inference contradicts). One message per finding, naming the node, to
 * emit; returns how many. */
static int qr_run_lint(const QrGraph *g, void (*emit)(void *user, const char *msg), void *user);
/* Validates a user tensor against graph input i (dtype, rank, static dims). */
static QrStatus qr_run_check_input(const QrGraph *g, int i, const QrTensor *t);

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
    /* Per value (optional): false = the tap does not need this value. NULL: every value
     * is tapped. A tapped value is always materialized; others may be fused away (see
     * qr_run). */
    const bool *tap_only;
    /* Optional: constant values kept between runs of the same graph (see QrRunCache). */
    struct QrRunCache *cache;
    /* Optional, per node: wall seconds of this run added (a fused chain's time goes to its
     * head node). For profiling without taps, which would keep every value materialized. */
    double *node_sec;
    /* Optional: values changed in place after their node ran, before any reader, tap or graph
     * output sees them (analysis/frag's rounding perturbations). edit_on (per value) picks them;
     * they are always materialized, never fused away, and never taken from or put into the
     * cache. edit gets the node's inputs as its readers see them (NULL for omitted ones) and may
     * change the elements of t, not its shape or dtype; a value whose node did not run this run
     * (overridden, skipped) is not edited. Return non-OK to abort the run. */
    QrStatus (*edit)(void *user, const QrGraph *g, int node, int value, QrTensor *t, const QrTensor *const *in);
    void *edit_user;
    const bool *edit_on;
    /* Every value is computed whole. Otherwise a value only some leading rows of which reach a
     * graph output (a Gather of a ViT's class token) may be computed on those rows alone, with the
     * bits the whole value would have there (see qr_run); a value tapped, edited, fed or
     * overridden is always whole. */
    bool no_row_cut;
} QrRunOpts;

/* Values of a graph that depend only on its initializers and constants (e.g. weights
 * through QuantizeLinear -> DequantizeLinear), computed by the first run that needs them
 * and reused by later runs given the same cache: their nodes are skipped (not counted in
 * n_exec; taps still see the values). A value is taken from or put into the cache only in
 * runs where nothing it depends on is overridden (alias, subst, feed), so overrides always
 * see freshly computed values. The cache belongs to one graph, whose initializers must not
 * change while it lives; it holds its values until freed. Runs may share it concurrently. */
typedef struct QrRunCache QrRunCache;
/* A new, empty cache for g (NULL when out of memory). Free with qr_run_cache_free. */
static QrRunCache *qr_run_cache_new(const QrGraph *g);
static void qr_run_cache_free(QrRunCache *c);
/* The cache also keeps what ops prepare from the constants (QrOpCtx.prep: convolutions' packed
 * weights, a copy of the weights they pack) — as a runtime's session prepacks its weights, for
 * `qreport run`. A new cache keeps none: the analyses' caches do not, so their peak stays. */
static void qr_run_cache_keep_prep(QrRunCache *c);
#ifdef QR_TESTING
/* Bytes of tensor data the cache holds. */
QR_TESTAPI size_t qr_run_cache_bytes(const QrRunCache *c);
#endif
/* Values a run cache never holds: the output of a DequantizeLinear (or qreport.int.BlockDequant,
 * the weight-only twin's) reading an initializer of more than QR_FOLD_MAX_ELEMS elements (a quantized weight's float copy: four times its bytes;
 * every run recomputes it, one pass over its integers). Callers keeping values between runs
 * skip them for the same reason (a re-run computes them again). */
static bool qr_run_uncached(const QrGraph *g, int v);
/* Per value of g into st (g->n_values bools): true when a run with options o computes it from
 * initializers and constants alone, with no override, feed or edit on the way, so that every such
 * run gives it the same bits (the values a constant cache may hold). */
static void qr_run_statics(const QrGraph *g, const QrRunOpts *o, bool *st);
/* The cached tensor of value v (owned by the cache), or NULL when it holds none. */
static const QrTensor *qr_run_cache_get(const QrRunCache *c, int v);

/* Bytes a constant cache of g that keeps prepared data (qr_run_cache_keep_prep) comes to hold
 * beyond its constant values: the packed weights of convolutions whose weights are constants of a
 * run without overrides and that the cache holds, from g's inferred shapes at the current kernel
 * level (quant/memest's share for `run`). */
static uint64_t qr_run_prep_bytes(const QrGraph *g);

/* Runs the graph on inputs (one per graph input, in order). outputs[i] receive
 * owned copies of the graph outputs (free with qr_tensor_free_data); outputs
 * may be NULL when only taps matter: then a node whose values reach only the graph
 * outputs (no tap, no reader that runs) does not run, like a dead node.
 *
 * Fusion: a float32 value read by exactly one node, and not a graph output, tapped,
 * fed, substituted or aliased, is not materialized when that reader is an elementwise
 * layer the kernels can apply on the fly (Relu, Clip, Add/Sub/Mul/Div by a per-channel
 * constant, Add of a tensor computed earlier, BatchNormalization, a QuantizeLinear ->
 * DequantizeLinear pair whose integer value is read only by the DequantizeLinear). Such
 * chains run with the layer that produces their first value: inside a convolution's
 * GEMM, or in one pass after any other layer; a Q -> DQ pair alone becomes one
 * fake-quant pass. A weight's DequantizeLinear whose output is read once, as B of a
 * MatMul or Gemm, and may stay unmaterialized by the same rule, is not run (only its shape
 * function, and it counts in n_exec): the GEMM dequantizes B's panels from the integers as it
 * packs them (run.c qr__run_plan_dq). Results are bit-identical to running the layers one by one (the
 * kernels that apply the steps are the ones the layers use on their own); every node
 * still counts in n_exec. Needs qr_run_infer's shapes (without them nothing is fused).
 *
 * Leading rows: a value whose readers need only its first rows — along its first axis longer
 * than 1, whose earlier axes are all 1, so a prefix of its memory — is computed on those rows
 * (at least 2) when it is not a graph output, tapped, edited, fed, overridden or a cached
 * constant: from a Gather of constant indices (a ViT's class token) back through the nodes that
 * compute rows from the same rows (elementwise with broadcast, per-tensor Q / DQ, LayerNorm and
 * Softmax over later axes, MatMul's and Gemm's A, Transpose, Reshape-like copies) until a value
 * some other reader needs whole; a reader of a whole value takes its first rows as a view. The
 * rows computed have the whole run's bits (run.c's section "leading rows"); every node still
 * counts in n_exec. opts->no_row_cut turns it off.
 *
 * Memory: node outputs come from a pool of buffers kept across runs and returned to it
 * after their last reader (qr_run_release frees the pool). */
static QrStatus qr_run(const QrGraph *g, const QrTensor *inputs, const QrRunOpts *opts, QrTensor *outputs);
#ifdef QR_TESTING
/* Test-only, process-wide: qr_run calls, those without any override (alias, subst, feed,
 * live: a model run whole on its inputs) and nodes executed (as n_exec counts them; atomic).
 * Tests and bench/run_count read it to count a command's model executions. active: qr_run
 * calls in progress; max_active: the most at once (tests reset it: --max-memory's one execution
 * at a time, tests/test_runall.c). */
typedef struct QrRunCount {
    int64_t graphs, plain, nodes;
    int64_t row_cut;                  /* nodes executed on their output's leading rows only */
    int64_t active, max_active;
} QrRunCount;
QR_TESTAPI extern QrRunCount qr_run_count;
/* Tests: fill the output buffers the executor does not zero with 0xff bytes (run.c). */
QR_TESTAPI extern bool qr_run_test_poison;
#endif
/* Frees the buffers qr_run keeps for later runs. No run may be in progress. */
static void qr_run_release(void);
/* Caps the bytes of idle buffers the executor keeps for reuse across runs (default 96 MiB);
 * 0 frees them and keeps none (--max-memory: the estimate then bounds the process). */
static void qr_run_pool_set_idle(size_t bytes);
/* Runs one node on the given inputs (NULL for omitted ones); outputs[k] receive
 * owned tensors. Used for shadow (local error) runs. */
static QrStatus qr_run_node(const QrGraph *g, int node, const QrTensor *const *inputs, QrTensor *outputs);

#endif
