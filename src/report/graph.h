/* report/graph — the graph view of index.html: a layered (Sugiyama-style) layout of a
 * directed graph with nested groups, and its rendering as inline SVG with the page's
 * script (colour by a metric, collapse groups, search, pan/zoom). The layout is a pure
 * library: boxes, edges and a group tree in, coordinates out; it knows nothing of models
 * or analyses (runall/bundle builds its input from the session). */
#ifndef QR_GRAPH_H
#define QR_GRAPH_H

/* ---- layout ----
 * Nodes are boxes (w x h); edges src -> dst. Groups nest (group_parent, -1 = the root) and
 * every node sits in one group (node_group, -1 = the root). Each group is laid out on its
 * own, bottom-up: its member nodes and child groups are the boxes of one layered layout
 * (layering by longest path, crossing reduction by barycenter sweeps that keep the order
 * with the fewest crossings, x by weighted isotonic regression towards the neighbours'
 * median, edges longer than one layer routed through dummy slots between the boxes); a
 * group's frame is its content plus padding and a title band. An edge between two groups
 * is laid out at their lowest common group. The graph should be acyclic; a cycle among
 * groups (a name prefix that is not contiguous in the graph) is broken by drawing the
 * fewest edges upwards (`reversed`). A cycle among the nodes themselves is an error. */
typedef struct QrGlInput {
    int n;                      /* nodes */
    const float *w, *h;         /* box sizes (px) */
    int n_edges;
    const int *src, *dst;       /* node indices; duplicate edges are drawn once each, self-loops get no points */
    int n_groups;               /* 0: a flat graph */
    const int *node_group;      /* [n] innermost group of each node, -1 = root (NULL: every node at the root) */
    const int *group_parent;    /* [n_groups] parent group, -1 = root */
    float gap_x, gap_y;         /* space between boxes in a layer / between layers (0: 24 / 36) */
    float pad, head;            /* a group frame's padding and title band (0: 10 / 20) */
    int sweeps;                 /* crossing reduction: at most this many down-and-up sweeps (0: 24; -1: none, every
                                 * layer in its first order — what the tests compare the reduction against) */
} QrGlInput;

typedef struct QrGlLayout {
    QrArena arena;
    int n, n_groups, n_edges;
    float *x, *y;               /* [n] top-left corner of each node box */
    float *gx, *gy, *gw, *gh;   /* [n_groups] group frames */
    int *pt_off;                /* [n_edges + 1]: edge e's points are pts[2*pt_off[e] .. 2*pt_off[e+1]) (x, y pairs) */
    float *pts;
    bool *reversed;             /* [n_edges]: laid out against its direction (a cycle among groups) */
    int *edge_group;            /* [n_edges]: the lowest group holding both ends (-1: the root) */
    float width, height;        /* the whole drawing */
    int n_layers;               /* layers of the root's layout */
    int n_dummy;                /* dummy slots of long edges, over every group */
    int64_t crossings;          /* crossings left between adjacent layers, summed over every group's layout */
} QrGlLayout;

/* Lays out in. On failure (a cycle among nodes, a bad index, out of memory) returns an error
 * naming the node or group and leaves out freed. Free with qr_gl_free. */
static QrStatus qr_gl_layout(const QrGlInput *in, QrGlLayout *out);
static void qr_gl_free(QrGlLayout *l);

/* ---- the HTML section ----
 * One node of the view: its label and what the page script needs. */
typedef struct QrGlViewNode {
    const char *name;           /* data-node (the per-layer row's mod_name) */
    const char *label;          /* the box's first line (the name below its group), NULL: name */
    const char *op_type;
    int row;                    /* row index in the per-layer table (data-row), -1: unmatched (grey) */
    const char *quant;          /* the analysis model's quantizers of this node ("Q int8 · W int8"), or NULL */
    const char *find;           /* advisor finding(s) of this node (plain text, one a line), or NULL */
    const char *whatif;         /* what the what-if measured for this node (plain text), or NULL */
    const char *plots;          /* bundle paths of this node's plots, one a line (shown as links), or NULL */
    int sens_rank;              /* 1-based one-on sensitivity rank, 0: none */
    bool has_split;             /* split: the row's error split (weight, input, output rounding, output clipping; MSE),
                                 * drawn as a stacked bar along the box's bottom */
    double split[4];
} QrGlViewNode;

/* A per-layer metric the reader can colour by: values[row] (NAN: none); higher_better says
 * which end of the scale is good. */
typedef struct QrGlMetric {
    const char *name;
    const double *values;       /* [n_rows] */
    bool higher_better;
} QrGlMetric;

/* The analysis model's own graph with its quantizer nodes (QuantizeLinear / DequantizeLinear as
 * boxes of their own), laid out on its own: the view the "Q/DQ nodes" toggle shows instead of
 * the folded one. Its boxes are clickable and coloured like the folded view's (by row); its
 * groups are drawn as frames (not collapsible); a box's and a frame's data-qg is its group (-1: none). */
typedef struct QrGlAlt {
    const QrGlLayout *l;
    const QrGlInput *in;
    const QrGlViewNode *nodes;      /* [l->n]: a row's compute node (row >= 0, name = the row's mod_name) or another
                                     * analysis node (row -1) */
    const bool *is_quant;           /* [l->n]: a quantizer node (drawn violet, never coloured by a metric) */
    const char *const *group_name;  /* [l->n_groups] */
} QrGlAlt;

typedef struct QrGlView {
    const QrGlViewNode *nodes;  /* [layout n] */
    const char *const *group_name;   /* [layout n_groups] full prefix ("/layer2/layer2.1") */
    int n_rows;
    const QrGlMetric *metrics;
    int n_metrics;
    int default_metric;
    int first_drop_row;         /* -1: none */
    const int *worst_rows;      /* the worst rows, marked */
    int n_worst;
    int open_depth;             /* groups deeper than this open collapsed (-1: all expanded, -2: chosen so that
                                 * at most 150 boxes show) */
    const char *table_id;       /* id of the section holding the per-layer table (rows shown on click), or NULL */
    const QrGlAlt *alt;         /* the quantizer-node view, or NULL (no toggle) */
} QrGlView;

/* The collapsed overview a large graph opens in: the nodes of the groups up to open_depth deep
 * (depth 1 = a top-level group) and one box per outermost group deeper than that (a tile of
 * tile_w[g] x tile_h[g]), laid out afresh so a tile takes a box's room, not its expanded
 * group's; edges go to the boxes that hold their ends (edges inside one tile and duplicates
 * dropped). box_node[b] = the node box b stands for, or -1; box_group[b] = the group of a tile
 * box, or -1; group_of[o] = the original group of overview group o. Arrays in a. */
typedef struct QrGlOverview {
    QrGlInput in;
    int *box_node, *box_group, *group_of;
} QrGlOverview;
static QrStatus qr_gl_overview(const QrGlInput *in, int open_depth, const float *tile_w, const float *tile_h, QrArena *a,
                               QrGlOverview *out);

/* A node box's size for its label and op type (qr_gl_html writes three lines and the split bar). */
static void qr_gl_box_size(const char *label, const char *op, float *w, float *h);
/* Writes the view (SVG, legend, controls, the node panel and its script) into the current
 * section of h. Sticky errors like every QrHtml call. */
static void qr_gl_html(QrHtml *h, const QrGlLayout *l, const QrGlInput *in, const QrGlView *v);

#endif
