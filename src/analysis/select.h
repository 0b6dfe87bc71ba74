/* analysis/select — the user's choice of what an analysis looks at: node names resolved to
 * quantizers (hmct-debugger's quantize_node / non_quantize_node / interested_nodes), the
 * cumulative error's node sets and --rank-output ("did you mean": base's qr_str_suggest; the
 * sensitivity rows --nodes / --node-type keep: analysis/sens). */
#ifndef QR_SELECT_H
#define QR_SELECT_H

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

/* --rank-output NAME: index of the baseline's graph output called name (*out), or an error
 * listing the outputs. NULL name: *out = -1 (all outputs). */
static QrStatus qr_select_output(const QrGraph *b, const char *name, int *out);

#endif
