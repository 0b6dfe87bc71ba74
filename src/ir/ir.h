/* ir — the in-memory graph: values, nodes, attributes, topological order and
 * shape inference (with constant folding of small shape computations).
 * A QrGraph owns everything through its arena; free it with qr_graph_free. */
#ifndef QR_IR_H
#define QR_IR_H

typedef enum QrAttrType {
    QR_ATTR_UNDEF = 0, QR_ATTR_FLOAT = 1, QR_ATTR_INT = 2, QR_ATTR_STRING = 3, QR_ATTR_TENSOR = 4,
    QR_ATTR_GRAPH = 5, QR_ATTR_FLOATS = 6, QR_ATTR_INTS = 7, QR_ATTR_STRINGS = 8, QR_ATTR_TENSORS = 9,
    QR_ATTR_GRAPHS = 10, QR_ATTR_SPARSE_TENSOR = 11, QR_ATTR_SPARSE_TENSORS = 12,
    QR_ATTR_TYPE_PROTO = 13, QR_ATTR_TYPE_PROTOS = 14,
} QrAttrType;

typedef struct QrAttr {
    const char *name;
    QrAttrType type;
    float f;
    int64_t i;
    const char *s;          /* STRING (NUL-terminated copy; s_len is the real length) */
    size_t s_len;
    QrTensor *t;            /* TENSOR */
    int n;                  /* element count of FLOATS/INTS/STRINGS/TENSORS/GRAPHS */
    float *floats;
    int64_t *ints;
    const char **strings;
    QrTensor *tensors;
} QrAttr;

struct QrOpDef;

typedef struct QrNode {
    const char *name;       /* never NULL; "<op_type>_<index>" when the model gives none */
    const char *op_type;
    const char *domain;     /* "" for the default ONNX domain */
    int64_t opset;          /* opset version imported for `domain` */
    const struct QrOpDef *def;   /* bound by run/ (qr_run_bind); NULL if qreport does not implement it */
    int n_in, n_out, n_attr;
    int *in, *out;          /* value indices; -1 for an omitted optional input/output */
    QrAttr *attr;
} QrNode;

typedef struct QrValue {
    const char *name;
    QrTensor t;             /* dtype/shape after inference; t.data != NULL for constants */
    int producer;           /* node index, or -1 for graph inputs and initializers */
    int n_uses;             /* number of node inputs + graph outputs reading it */
    bool is_input, is_output, is_init, is_folded;
    bool is_dynamic;        /* shape only known at run time (data-dependent) */
    bool is_const;          /* folded from initializers/constants/shapes only: independent of input data */
    bool has_decl;          /* declared type from input/output/value_info */
    QrDType decl_dtype;
    int decl_rank;
    int64_t decl_dims[QR_MAX_RANK];   /* -1 for a symbolic/unknown dim */
    const char *decl_dim_names[QR_MAX_RANK];
} QrValue;

/* One read of a value: node `node` reads it as input `input`. */
typedef struct QrUse { int node, input; } QrUse;

typedef struct QrGraph {
    QrArena arena;
    const char *path;       /* model file as given */
    const char *dir;        /* folder of the model, for external data */
    const char *name;
    const char *producer;
    int64_t ir_version;
    int64_t opset;          /* default domain */
    int64_t opset_ms;       /* com.microsoft, 0 if not imported */
    int n_values, cap_values;
    QrValue *values;
    int n_nodes, cap_nodes;  /* cap_nodes: room left by qr_graph_clone_values for added nodes */
    QrNode *nodes;
    int *order;             /* node indices in topological order */
    int n_inputs, n_outputs;
    int *inputs;            /* graph inputs that are not initializers */
    int *outputs;
    int max_io;             /* largest input or output count of any node (executor scratch size) */
    int *use_start;         /* readers of value v: uses[use_start[v] .. use_start[v+1]), topological order */
    QrUse *uses;
    QrStrMap names;         /* value name -> index */
    bool shapes_inferred;
} QrGraph;

static void qr_graph_free(QrGraph *g);
static int qr_graph_find(const QrGraph *g, const char *name);   /* value index or -1 */
/* Returns the index of the value called `name`, creating it if needed. */
static QrStatus qr_graph_value(QrGraph *g, const char *name, int *out);
/* Validates references, fills producers/uses and computes a topological order.
 * Fails on cycles, a value produced twice, or a value read but never produced. */
static QrStatus qr_graph_finalize(QrGraph *g);
/* The nodes reading value v (topological order); returns their count. */
static inline int qr_graph_readers(const QrGraph *g, int v, const QrUse **out) {
    *out = g->uses + g->use_start[v];
    return g->use_start[v + 1] - g->use_start[v];
}
/* The only node reading v (possibly through several of its inputs), or -1. */
static int qr_graph_single_reader(const QrGraph *g, int v);

/* Graph construction (rewrites such as quant/twin build new graphs from old ones).
 * qr_graph_clone_values copies src's values (names, flags, declared types, graph
 * inputs/outputs, metadata) into an empty dst so value indices stay the same;
 * initializer data is borrowed (src must outlive dst), no nodes are copied.
 * qr_graph_add_node appends a node (arrays and attributes copied into dst's
 * arena), not bound to an operator (run/'s qr_run_add_node appends and binds); call
 * qr_graph_finalize when done. */
static QrStatus qr_graph_clone_values(const QrGraph *src, QrGraph *dst, int node_capacity);
static QrStatus qr_graph_add_node(QrGraph *g, const char *name, const char *op_type, const char *domain, int n_in,
                                  const int *in, int n_out, const int *out, int n_attr, const QrAttr *attr, int *idx);
/* A value name not yet used in g: `base` itself or base + "#<k>". Arena copy. */
static const char *qr_graph_fresh_name(QrGraph *g, const char *base);

/* Attribute access with defaults. */
static const QrAttr *qr_node_attr(const QrNode *n, const char *name);
static int64_t qr_attr_int(const QrNode *n, const char *name, int64_t dflt);
static float qr_attr_float(const QrNode *n, const char *name, float dflt);
static const char *qr_attr_str(const QrNode *n, const char *name, const char *dflt);
/* INTS attribute: returns count (or -1 when absent) and the array in *out. */
static int qr_attr_ints(const QrNode *n, const char *name, const int64_t **out);
static int qr_attr_floats(const QrNode *n, const char *name, const float **out);

#endif
