/* analysis/select — the user's choice of what an analysis looks at: node names resolved to
 * quantizers (hmct-debugger's quantize_node / non_quantize_node / interested_nodes), the
 * sensitivity rows kept for --nodes / --node-type, and "did you mean" suggestions for a
 * name that is not in the models. */
#ifndef QR_SELECT_H
#define QR_SELECT_H

/* " (did you mean 'a', 'b'?)" for the (at most 3) candidates closest to name by edit
 * distance, or "" when none is close; written to out (cap bytes). cands may hold NULLs. */
static void qr_select_suggest(const char *name, const char *const *cands, int n, char *out, size_t cap);

/* Every node and value name of g1 and g2 (g2 may be NULL) in one malloc'd array (*n entries;
 * the strings are borrowed from the graphs). NULL when out of memory. */
static const char **qr_select_graph_names(const QrGraph *g1, const QrGraph *g2, int *n);

/* Whether name is a node or value name of g1 or g2 (g2 may be NULL). */
static bool qr_select_name_known(const QrGraph *g1, const QrGraph *g2, const char *name);

/* Marks in mask (s->qt.n entries, not cleared) the quantizers the user's name stands for:
 * a twin / analysis / baseline node's own quantizers (its output activations, weights and
 * bias), a QuantizeLinear / DequantizeLinear node's quantizer, or the quantizer of a value
 * (float input, integer or dequantized value; a graph input's name gives its quantizer).
 * Fails with the name and close names when it matches nothing that has a quantizer. */
static QrStatus qr_select_quantizers(const QrSession *s, const char *name, bool *mask);

/* One cumulative-error setting chosen by node names (--quantize-nodes / --non-quantize-nodes). */
typedef struct QrAccSet {
    const char *name;        /* column name: quantize_node[A;B] / non_quantize_node[A;B] */
    bool *mask;              /* per s->qt quantizer: enabled in this setting */
} QrAccSet;

typedef struct QrAccSets {
    QrArena arena;
    int n;
    QrAccSet set[16];
} QrAccSets;

/* Parses "A;A,B" (sets separated by ';', names by ',') into settings on s: quantize=true
 * enables exactly the named nodes' quantizers, false all but them. Appends to sets
 * (at most 16 in all). Fails on an unknown name (named, with suggestions) or an empty set. */
static QrStatus qr_select_acc_sets(const QrSession *s, const char *spec, bool quantize, QrAccSets *sets);
static void qr_select_acc_sets_free(QrAccSets *sets);

/* --node-type activation|weight|node (QrNodeType: sens.h). */
static QrStatus qr_node_type_parse(const char *s, QrNodeType *out);

/* Keeps the rows of r (before they run) that --nodes (o->nodes: comma-separated names, NULL =
 * all) and --node-type (o->node_type) select: a row is kept when one of its quantizers is one
 * a name stands for; activation / weight keep rows of that type, node one row per node (its
 * "both" row, else its only row). Fails on an unknown name. */
static QrStatus qr_select_sens_rows(const QrSession *s, const QrSensOpts *o, QrSensResult *r);

/* --rank-output NAME: index of the baseline's graph output called name (*out), or an error
 * listing the outputs. NULL name: *out = -1 (all outputs). */
static QrStatus qr_select_output(const QrGraph *b, const char *name, int *out);

#endif
