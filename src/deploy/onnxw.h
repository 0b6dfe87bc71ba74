/* deploy/onnxw — writing ONNX models: a ModelProto built with the same protobuf-c structures the
 * loader decodes (src/onnx/onnx.pb-c.c packs it) from nodes, initializers and graph inputs /
 * outputs taken from a loaded graph (extract's sub-models, promote's repaired model) or added. */
#ifndef QR_ONNXW_H
#define QR_ONNXW_H

typedef struct QrOxNode {
    const char *name, *op_type, *domain;
    int n_in, n_out, n_attr;
    const char **in, **out;      /* value names ("" = omitted optional input) */
    const QrAttr *attr;
} QrOxNode;

typedef struct QrOxTensor { const char *name; const QrTensor *t; } QrOxTensor;
typedef struct QrOxIo { const char *name; QrDType dt; int rank; int64_t dims[QR_MAX_RANK]; } QrOxIo;

typedef struct QrOnnxOut {
    QrArena arena;
    const QrGraph *g;            /* opsets, IR version, producer; initializers by name */
    const char *graph_name;
    int n_nodes, cap_nodes;
    QrOxNode *nodes;
    int n_inits, cap_inits;
    QrOxTensor *inits;
    QrStrMap init_names;
    int n_in, n_out;
    QrOxIo ins[64], outs[64];
} QrOnnxOut;

static QrStatus qr_onnxw_init(QrOnnxOut *x, const QrGraph *g, const char *graph_name);
static void qr_onnxw_free(QrOnnxOut *x);
/* Node k of g, its value names mapped through names (per value of g; NULL: g's names). */
static QrStatus qr_onnxw_node_from(QrOnnxOut *x, int k, const char *const *names);
static QrStatus qr_onnxw_node(QrOnnxOut *x, const char *name, const char *op_type, const char *domain, int n_in,
                           const char *const *in, int n_out, const char *const *out, int n_attr, const QrAttr *attr);
/* An initializer (the tensor is borrowed until qr_onnxw_write). A name given twice keeps the first. */
static QrStatus qr_onnxw_init_tensor(QrOnnxOut *x, const char *name, const QrTensor *t);
/* Every initializer of g that a node reads and that is not given yet. */
static QrStatus qr_onnxw_used_inits(QrOnnxOut *x);
static QrStatus qr_onnxw_input(QrOnnxOut *x, const char *name, QrDType dt, int rank, const int64_t *dims);
static QrStatus qr_onnxw_output(QrOnnxOut *x, const char *name, QrDType dt, int rank, const int64_t *dims);
/* Packs the ModelProto and writes it atomically. */
static QrStatus qr_onnxw_write(QrOnnxOut *x, const char *path);

/* Notes for qr_onnxw_annotate: the node named `node` gets doc_string `doc` and metadata_props keys[i] = vals[i]. */
typedef struct QrOxNote {
    const char *node, *doc;
    int n_kv;
    const char *const *keys, *const *vals;
} QrOxNote;

/* Writes the model file src to dst with notes on its nodes (matched by name; nameless nodes get
 * none): doc_string replaced, metadata_props (NodeProto field 9 of IR 10, written as that field
 * whatever the model's IR version) added; model_keys/vals appended to the model's metadata_props.
 * A field-by-field rewrite of the mapped file (nothing unpacked: memory stays the output's size);
 * every other byte is copied as it is.
 * No weight is copied: every initializer holding at least min_external bytes of raw_data becomes
 * external data at its offset in src, under the location ext_location (relative to dst's folder:
 * src's file name when dst is meant to sit next to it). Smaller and typed-field initializers
 * stay inline; initializers already external keep their entries. Fails naming src when it is
 * not a readable model. */
static QrStatus qr_onnxw_annotate(const char *src, const char *dst, const char *ext_location, size_t min_external,
                               const QrOxNote *notes, int n_notes, int n_model_kv, const char *const *model_keys,
                               const char *const *model_vals);

#endif
