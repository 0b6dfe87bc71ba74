/* tests/test_graph.c — report/graph: the layered layout (layering respects every edge, no two
 * boxes overlap, every edge drawn from its source's bottom to its target's top, groups nest
 * without overlapping) on a residual CNN and a transformer block (fixtures, boxes built here
 * from the ONNX graph independently of runall/bundle), a multi-output detection neck and a
 * generated 2,000-node graph; each check seen failing on a planted offence (an edge crossing with
 * crossing reduction off, a box on an edge, a target above its source, overlapping boxes); the
 * graph view of a real runall bundle in headless Chromium (Fit readable, Q/DQ boxes in their op's
 * group); the overlays as Netron and Model Explorer read them. */

/* ---- building layout inputs ---------------------------------------------------------------- */

typedef struct QtGlCase {
    int n, ne, ng;
    float *w, *h;
    int *src, *dst, *ngrp, *gpar;
    const char **names;
} QtGlCase;

static void qt_gl_case_free(QtGlCase *c) {
    free(c->w); free(c->h); free(c->src); free(c->dst); free(c->ngrp); free(c->gpar); free(c->names);
    memset(c, 0, sizeof *c);
}

static bool qt_gl_case_alloc(QtGlCase *c, int n, int ne, int ng) {
    memset(c, 0, sizeof *c);
    c->w = calloc((size_t)n + 1, sizeof *c->w); c->h = calloc((size_t)n + 1, sizeof *c->h);
    c->src = calloc((size_t)ne + 1, sizeof *c->src); c->dst = calloc((size_t)ne + 1, sizeof *c->dst);
    c->ngrp = calloc((size_t)n + 1, sizeof *c->ngrp); c->gpar = calloc((size_t)ng + 1, sizeof *c->gpar);
    c->names = calloc((size_t)n + 1, sizeof *c->names);
    for (int i = 0; i < n && c->ngrp; i++) c->ngrp[i] = -1;
    return c->w && c->h && c->src && c->dst && c->ngrp && c->gpar && c->names;
}

static void qt_gl_edge(QtGlCase *c, int s, int d) { c->src[c->ne] = s; c->dst[c->ne++] = d; }

/* An ONNX model as boxes: every node but the folded kinds; an edge wherever a box's input
 * comes (through folded nodes) from another box; one group per first name component "/a" of
 * two or more boxes. */
static bool qt_gl_folded(const char *op) {
    static const char *const f[] = { "Constant", "Identity", "QuantizeLinear", "DequantizeLinear", "Cast", "Shape", NULL };
    for (int i = 0; f[i]; i++) if (!strcmp(op, f[i])) return true;
    return false;
}

static QrStatus qt_gl_from_onnx(const char *path, QtGlCase *c) {
    QrGraph *g;
    QR_TRY(qr_run_load(path, &g));
    int nn = g->n_nodes, *box = malloc((size_t)nn * sizeof *box), n = 0;
    for (int v = 0; v < nn; v++) box[v] = qt_gl_folded(g->nodes[v].op_type) ? -1 : n++;
    if (!qt_gl_case_alloc(c, n, 4 * nn + 8, n)) { free(box); qr_graph_free(g); free(g); return QR_ERR_NOMEM; }
    for (int v = 0; v < nn; v++) {
        if (box[v] < 0) continue;
        int i = box[v];
        c->names[i] = g->nodes[v].name;
        c->w[i] = 60 + (float)(strlen(g->nodes[v].name) % 7) * 13;   /* varied widths */
        c->h[i] = 40;
        /* inputs traced back through folded producers (depth-first, small graphs) */
        int stack[256], sp = 0;
        for (int k = 0; k < g->nodes[v].n_in; k++) {
            int val = g->nodes[v].in[k];
            if (val >= 0 && g->values[val].producer >= 0 && sp < 256) stack[sp++] = g->values[val].producer;
        }
        while (sp) {
            int p = stack[--sp];
            if (box[p] >= 0) {
                bool dup = false;
                for (int e = 0; e < c->ne; e++) dup |= c->src[e] == box[p] && c->dst[e] == i;
                if (!dup) qt_gl_edge(c, box[p], i);
                continue;
            }
            for (int k = 0; k < g->nodes[p].n_in; k++) {
                int val = g->nodes[p].in[k];
                if (val >= 0 && g->values[val].producer >= 0 && sp < 256) stack[sp++] = g->values[val].producer;
            }
        }
    }
    /* groups: the first component ("/block1" of "/block1/dw/Conv"), when two or more boxes share it */
    for (int i = 0; i < n; i++) {
        const char *s = c->names[i][0] == '/' ? strchr(c->names[i] + 1, '/') : NULL;
        if (!s) continue;
        size_t len = (size_t)(s - c->names[i]);
        int same = 0, first = -1;
        for (int j = 0; j < n; j++) {
            const char *t = c->names[j][0] == '/' ? strchr(c->names[j] + 1, '/') : NULL;
            if (t && (size_t)(t - c->names[j]) == len && !strncmp(c->names[i], c->names[j], len)) { same++; if (first < 0) first = j; }
        }
        if (same < 2) continue;
        if (first == i) { c->gpar[c->ng] = -1; c->ngrp[i] = c->ng++; }
        else c->ngrp[i] = c->ngrp[first];
    }
    for (int i = 0; i < n; i++) c->names[i] = "";   /* the graph is freed: names are not used after this */
    c->n = n;
    free(box);
    qr_graph_free(g);
    free(g);
    return QR_OK;
}

/* An FPN-style detection neck: a backbone C2..C5, lateral 1x1 convs, a top-down path
 * (upsample + add), a bottom-up path (PAN), and a head on each of four levels, each with
 * a class and a box output (eight graph outputs). */
static bool qt_gl_neck(QtGlCase *c) {
    if (!qt_gl_case_alloc(c, 64, 128, 8)) return false;
    int n = 0;
#define QT_GL_NODE(var) int var = n++; c->w[var] = 90; c->h[var] = 40
    QT_GL_NODE(stem);
    int cin = stem, C[4], L[4], P[4], N[4];
    for (int k = 0; k < 4; k++) { QT_GL_NODE(a); QT_GL_NODE(b); qt_gl_edge(c, cin, a); qt_gl_edge(c, a, b); C[k] = b; cin = b; }
    for (int k = 0; k < 4; k++) { QT_GL_NODE(l); qt_gl_edge(c, C[k], l); L[k] = l; }
    P[3] = L[3];
    for (int k = 2; k >= 0; k--) {
        QT_GL_NODE(up); QT_GL_NODE(add);
        qt_gl_edge(c, P[k + 1], up); qt_gl_edge(c, up, add); qt_gl_edge(c, L[k], add);
        P[k] = add;
    }
    N[0] = P[0];
    for (int k = 1; k < 4; k++) {
        QT_GL_NODE(down); QT_GL_NODE(cat);
        qt_gl_edge(c, N[k - 1], down); qt_gl_edge(c, down, cat); qt_gl_edge(c, P[k], cat);
        N[k] = cat;
    }
    for (int k = 0; k < 4; k++) {
        QT_GL_NODE(h); QT_GL_NODE(cls); QT_GL_NODE(box);
        qt_gl_edge(c, N[k], h); qt_gl_edge(c, h, cls); qt_gl_edge(c, h, box);
        c->gpar[c->ng] = -1;
        c->ngrp[h] = c->ngrp[cls] = c->ngrp[box] = c->ng++;
    }
#undef QT_GL_NODE
    c->n = n;
    return true;
}

/* A generated transformer-like graph of about `target` boxes: blocks (a group each) holding an
 * attention sub-block (a nested group: q/k/v branches, matmuls, softmax) and an MLP sub-block,
 * residual edges around both, plus seeded random extra edges forward inside each block. */
static bool qt_gl_generated(QtGlCase *c, int target, uint32_t seed) {
    int blocks = target / 20 + 1;
    if (!qt_gl_case_alloc(c, blocks * 20 + 4, blocks * 60 + 8, blocks * 3 + 2)) return false;
    int n = 0, prev;
    c->w[n] = 100; c->h[n] = 40; prev = n++;
    for (int b = 0; b < blocks && n + 20 <= target; b++) {
        int gb = c->ng++, ga = c->ng++, gm = c->ng++;
        c->gpar[gb] = -1; c->gpar[ga] = gb; c->gpar[gm] = gb;
        int first = n;
        for (int k = 0; k < 20; k++) {
            c->w[n + k] = 70 + (float)((seed >> (k % 16)) & 7) * 10;
            c->h[n + k] = 40;
            c->ngrp[n + k] = k < 12 ? ga : k < 18 ? gm : gb;
        }
        int ln1 = n + 18, add1 = n + 19;
        c->ngrp[ln1] = gb; c->ngrp[add1] = gb;
        /* attention: ln1 -> q,k,v (3 x 2 nodes) -> qk matmul -> softmax -> av matmul -> proj */
        qt_gl_edge(c, prev, ln1);
        for (int j = 0; j < 3; j++) { qt_gl_edge(c, ln1, n + 2 * j); qt_gl_edge(c, n + 2 * j, n + 2 * j + 1); }
        qt_gl_edge(c, n + 1, n + 6); qt_gl_edge(c, n + 3, n + 6);       /* q k -> scores */
        qt_gl_edge(c, n + 6, n + 7);                                     /* softmax */
        qt_gl_edge(c, n + 7, n + 8); qt_gl_edge(c, n + 5, n + 8);       /* probs v -> context */
        qt_gl_edge(c, n + 8, n + 9); qt_gl_edge(c, n + 9, n + 10); qt_gl_edge(c, n + 10, n + 11);
        qt_gl_edge(c, n + 11, add1); qt_gl_edge(c, prev, add1);          /* residual */
        /* MLP: add1 -> 6 nodes in a chain -> next block's input, residual */
        qt_gl_edge(c, add1, n + 12);
        for (int k = 12; k < 17; k++) qt_gl_edge(c, n + k, n + k + 1);
        /* seeded extra forward edges inside the attention sub-block */
        for (int k = 0; k < 3; k++) {
            seed = seed * 1664525u + 1013904223u;
            int a = (int)(seed >> 8) % 11, bb = a + 1 + (int)(seed >> 20) % (11 - a);
            bool dup = false;
            for (int e = 0; e < c->ne; e++) dup |= c->src[e] == n + a && c->dst[e] == n + bb;
            if (!dup) qt_gl_edge(c, n + a, n + bb);
        }
        int add2 = n + 17;
        qt_gl_edge(c, add1, add2);
        prev = add2;
        n += 20;
        QR_UNUSED(first);
    }
    c->w[n] = 100; c->h[n] = 40;
    qt_gl_edge(c, prev, n++);
    c->n = n;
    return true;
}

/* ---- checks (from the definitions, not from the layout code) ----------------------------- */

static bool qt_gl_inside(float x, float y, float w, float h, float X, float Y, float W, float H) {
    return x >= X - 0.01f && y >= Y - 0.01f && x + w <= X + W + 0.01f && y + h <= Y + H + 0.01f;
}

static bool qt_gl_overlap(float x, float y, float w, float h, float X, float Y, float W, float H) {
    return x < X + W - 0.01f && X < x + w - 0.01f && y < Y + H - 0.01f && Y < y + h - 0.01f;
}

/* Whether segment (x0,y0)-(x1,y1) enters the inside of the box (shrunk by 0.5 px: touching is
 * not crossing), by clipping the segment against the box (Liang-Barsky). */
static bool qt_gl_seg_hits(float x0, float y0, float x1, float y1, float X, float Y, float W, float H) {
    double lo = 0, hi = 1, dx = x1 - x0, dy = y1 - y0;
    double p[4] = { -dx, dx, -dy, dy }, q[4] = { x0 - (X + 0.5), (X + W - 0.5) - x0, y0 - (Y + 0.5), (Y + H - 0.5) - y0 };
    if (W <= 1 || H <= 1) return false;
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0) { if (q[k] < 0) return false; continue; }
        double t = q[k] / p[k];
        if (p[k] < 0) { if (t > lo) lo = t; }
        else if (t < hi) hi = t;
        if (lo > hi) return false;
    }
    return hi - lo > 1e-9;
}

/* An edge's polyline crosses no node box but its ends' and no group frame that holds neither
 * end (it enters a group only through the frame of a group holding its target, and leaves
 * only one holding its source); returns the first offence or NULL. */
static const char *qt_gl_check_routes(const QtGlCase *c, const QrGlLayout *l) {
    static char msg[256];
    for (int e = 0; e < c->ne; e++) {
        int s = c->src[e], d = c->dst[e], a = l->pt_off[e], b = l->pt_off[e + 1];
        if (s == d || l->reversed[e]) continue;
        for (int k = a; k + 1 < b; k++) {
            float x0 = l->pts[2 * k], y0 = l->pts[2 * k + 1], x1 = l->pts[2 * k + 2], y1 = l->pts[2 * k + 3];
            for (int i = 0; i < c->n; i++)
                if (i != s && i != d && qt_gl_seg_hits(x0, y0, x1, y1, l->x[i], l->y[i], c->w[i], c->h[i])) {
                    snprintf(msg, sizeof msg, "edge %d (%d -> %d) crosses box %d", e, s, d, i);
                    return msg;
                }
            for (int g = 0; g < c->ng; g++) {
                bool holds = false;
                for (int x = c->ngrp[s]; x >= 0; x = c->gpar[x]) holds |= x == g;
                for (int x = c->ngrp[d]; x >= 0; x = c->gpar[x]) holds |= x == g;
                if (!holds && qt_gl_seg_hits(x0, y0, x1, y1, l->gx[g], l->gy[g], l->gw[g], l->gh[g])) {
                    snprintf(msg, sizeof msg, "edge %d (%d -> %d) crosses group %d that holds neither end", e, s, d, g);
                    return msg;
                }
            }
        }
    }
    return NULL;
}

/* Every property the view relies on; returns a message or NULL. */
static const char *qt_gl_check(const QtGlCase *c, const QrGlLayout *l, int *n_reversed) {
    static char msg[256];
    *n_reversed = 0;
    if (l->n != c->n || l->n_edges != c->ne) return "counts differ";
    int drawn = 0;
    for (int e = 0; e < c->ne; e++) {
        int s = c->src[e], d = c->dst[e], a = l->pt_off[e], b = l->pt_off[e + 1];
        if (s == d) continue;
        if (b - a < 2) { snprintf(msg, sizeof msg, "edge %d has %d points", e, b - a); return msg; }
        drawn++;
        if (l->reversed[e]) { (*n_reversed)++; continue; }
        if (l->y[d] < l->y[s] + c->h[s] - 0.01f) {
            snprintf(msg, sizeof msg, "edge %d (%d -> %d): target top %.1f above source bottom %.1f", e, s, d, l->y[d], l->y[s] + c->h[s]);
            return msg;
        }
        const float *p = l->pts + 2 * a, *q = l->pts + 2 * (b - 1);
        if (fabsf(p[0] - (l->x[s] + c->w[s] / 2)) > 0.01f || fabsf(p[1] - (l->y[s] + c->h[s])) > 0.01f ||
            fabsf(q[0] - (l->x[d] + c->w[d] / 2)) > 0.01f || fabsf(q[1] - l->y[d]) > 0.01f) {
            snprintf(msg, sizeof msg, "edge %d does not run from its source's bottom to its target's top", e);
            return msg;
        }
        for (int k = a; k + 1 < b; k++)   /* never upwards */
            if (l->pts[2 * (k + 1) + 1] < l->pts[2 * k + 1] - 0.01f) { snprintf(msg, sizeof msg, "edge %d goes up", e); return msg; }
    }
    int want = 0;
    for (int e = 0; e < c->ne; e++) want += c->src[e] != c->dst[e];
    if (drawn != want) return "not every edge drawn";
    for (int i = 0; i < c->n; i++)
        for (int j = i + 1; j < c->n; j++)
            if (qt_gl_overlap(l->x[i], l->y[i], c->w[i], c->h[i], l->x[j], l->y[j], c->w[j], c->h[j])) {
                snprintf(msg, sizeof msg, "boxes %d and %d overlap", i, j);
                return msg;
            }
    for (int i = 0; i < c->n; i++) {
        int g = c->ngrp[i];
        if (g >= 0 && !qt_gl_inside(l->x[i], l->y[i], c->w[i], c->h[i], l->gx[g], l->gy[g], l->gw[g], l->gh[g])) {
            snprintf(msg, sizeof msg, "box %d outside its group %d", i, g);
            return msg;
        }
        for (int h = 0; h < c->ng; h++) {   /* a box overlaps no group it is not in */
            bool member = false;
            for (int x = g; x >= 0; x = c->gpar[x]) member |= x == h;
            if (!member && qt_gl_overlap(l->x[i], l->y[i], c->w[i], c->h[i], l->gx[h], l->gy[h], l->gw[h], l->gh[h])) {
                snprintf(msg, sizeof msg, "box %d overlaps group %d it is not in", i, h);
                return msg;
            }
        }
        if (l->x[i] < -0.01f || l->y[i] < -0.01f || l->x[i] + c->w[i] > l->width + 0.01f || l->y[i] + c->h[i] > l->height + 0.01f)
            return "a box outside the drawing";
    }
    for (int g = 0; g < c->ng; g++) {
        int p = c->gpar[g];
        if (p >= 0 && !qt_gl_inside(l->gx[g], l->gy[g], l->gw[g], l->gh[g], l->gx[p], l->gy[p], l->gw[p], l->gh[p]))
            return "a group outside its parent";
        for (int h = g + 1; h < c->ng; h++) {
            bool nested = false;
            for (int x = g; x >= 0; x = c->gpar[x]) nested |= x == h;
            for (int x = h; x >= 0; x = c->gpar[x]) nested |= x == g;
            if (!nested && qt_gl_overlap(l->gx[g], l->gy[g], l->gw[g], l->gh[g], l->gx[h], l->gy[h], l->gw[h], l->gh[h])) {
                snprintf(msg, sizeof msg, "groups %d and %d overlap", g, h);
                return msg;
            }
        }
    }
    return NULL;
}

/* Edge crossings counted from the drawing: pairs of segments of two different edges that cross
 * in both segments' interiors (a shared end point or a common source's shared first piece is no
 * crossing). In a flat layout this is the sum over adjacent layers the layout reports. */
static int64_t qt_gl_geo_crossings(const QtGlCase *c, const QrGlLayout *l) {
    int64_t k = 0;
    for (int e = 0; e < c->ne; e++)
        for (int f = e + 1; f < c->ne; f++)
            for (int i = l->pt_off[e]; i + 1 < l->pt_off[e + 1]; i++)
                for (int j = l->pt_off[f]; j + 1 < l->pt_off[f + 1]; j++) {
                    const float *p = l->pts + 2 * i, *q = l->pts + 2 * j;
                    double ax = p[0], ay = p[1], bx = p[2], by = p[3], cx = q[0], cy = q[1], dx = q[2], dy = q[3];
                    if (QR_MAX(ay, by) <= QR_MIN(cy, dy) || QR_MAX(cy, dy) <= QR_MIN(ay, by)) continue;
                    double d1 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax), d2 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax);
                    double d3 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx), d4 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx);
                    if (((d1 > 1e-6 && d2 < -1e-6) || (d1 < -1e-6 && d2 > 1e-6)) && ((d3 > 1e-6 && d4 < -1e-6) || (d3 < -1e-6 && d4 > 1e-6)))
                        k++;
                }
    return k;
}

/* The drawing has at most max_cross edge crossings and the layout's own count agrees with the
 * drawing's; returns a message or NULL. */
static const char *qt_gl_check_crossings(const QtGlCase *c, const QrGlLayout *l, int64_t max_cross) {
    static char msg[160];
    int64_t geo = qt_gl_geo_crossings(c, l);
    if (geo != l->crossings)
        snprintf(msg, sizeof msg, "%lld crossings drawn, the layout counts %lld", (long long)geo, (long long)l->crossings);
    else if (geo > max_cross)
        snprintf(msg, sizeof msg, "%lld crossings drawn, at most %lld allowed", (long long)geo, (long long)max_cross);
    else
        return NULL;
    return msg;
}

static QrGlInput qt_gl_input(const QtGlCase *c, bool groups) {
    return (QrGlInput){ .n = c->n, .w = c->w, .h = c->h, .n_edges = c->ne, .src = c->src, .dst = c->dst,
                        .n_groups = groups ? c->ng : 0, .node_group = groups ? c->ngrp : NULL, .group_parent = c->gpar };
}

/* Lays c out flat and with its groups; checks both (no edge may be reversed). */
static void qt_gl_check_case(QtGlCase *c, const char *what) {
    for (int grp = 0; grp < 2; grp++) {
        QtGlCase flat = *c;
        if (!grp) flat.ng = 0;
        QrGlInput in = qt_gl_input(c, grp);
        QrGlLayout l;
        QT_OK(qr_gl_layout(&in, &l));
        int *save = NULL;
        if (!grp) {   /* the flat layout's checks see no groups */
            save = malloc((size_t)c->n * sizeof *save);
            memcpy(save, c->ngrp, (size_t)c->n * sizeof *save);
            for (int i = 0; i < c->n; i++) c->ngrp[i] = -1;
        }
        int rev;
        const char *err = qt_gl_check(grp ? c : &flat, &l, &rev);
        if (!err) err = qt_gl_check_routes(grp ? c : &flat, &l);
        if (save) { memcpy(c->ngrp, save, (size_t)c->n * sizeof *save); free(save); }
        qr_gl_free(&l);
        QT_CHECKF(!err, "%s (%s): %s", what, grp ? "grouped" : "flat", err);
        QT_CHECKF(rev == 0, "%s (%s): %d edges drawn upwards", what, grp ? "grouped" : "flat", rev);
    }
}

static void test_graph_residual(void) {
    QtGlCase c;
    QT_OK(qt_gl_from_onnx("fixtures/cnn_residual/model.onnx", &c));
    QT_CHECKF(c.n >= 20 && c.ng >= 2, "%d boxes, %d groups", c.n, c.ng);
    qt_gl_check_case(&c, "cnn_residual");
    qt_gl_case_free(&c);
}

static void test_graph_transformer(void) {
    QtGlCase c;
    QT_OK(qt_gl_from_onnx("fixtures/transformer/model.onnx", &c));
    QT_CHECKF(c.n >= 20 && c.ne >= c.n - 1, "%d boxes, %d edges", c.n, c.ne);
    qt_gl_check_case(&c, "transformer");
    qt_gl_case_free(&c);
}

static void test_graph_neck(void) {
    QtGlCase c;
    QT_CHECK(qt_gl_neck(&c));
    int sinks = 0;
    for (int i = 0; i < c.n; i++) {
        bool out = false;
        for (int e = 0; e < c.ne; e++) out |= c.src[e] == i;
        sinks += !out;
    }
    QT_CHECKF(sinks == 8, "%d outputs", sinks);
    qt_gl_check_case(&c, "neck");
    /* the same with duplicate edges and a self-loop: each edge keeps its own polyline */
    qt_gl_edge(&c, 1, 2);
    qt_gl_edge(&c, 3, 3);
    QrGlInput in = qt_gl_input(&c, true);
    QrGlLayout l;
    QT_OK(qr_gl_layout(&in, &l));
    int rev;
    const char *err = qt_gl_check(&c, &l, &rev);
    bool loop_empty = l.pt_off[c.ne] == l.pt_off[c.ne - 1];
    qr_gl_free(&l);
    QT_CHECKF(!err && loop_empty, "%s", err ? err : "the self-loop has points");
    qt_gl_case_free(&c);
}

static void test_graph_generated_2000(void) {
    QtGlCase c;
    QT_CHECK(qt_gl_generated(&c, 2000, 12345u));
    QT_CHECKF(c.n >= 1900 && c.n <= 2100, "%d boxes", c.n);
    qt_gl_check_case(&c, "generated");
    qt_gl_case_free(&c);
}

/* The collapsed overview of the generated 2,000-node graph (blocks with nested attention / MLP
 * groups): at depth 1 (blocks open, their sub-groups as tiles) and depth 0 (every block a tile).
 * Each box stands for one node outside the collapsed groups or one outermost collapsed group
 * (counted here from the group tree); the tiles have the size asked for (a box's, not their
 * expanded group's); the edges are the distinct pairs of boxes the graph's edges join (computed
 * here); and the layout passes every check of the full one. */
static void test_graph_overview(void) {
    QtGlCase c;
    QT_CHECK(qt_gl_generated(&c, 2000, 777u));
    for (int open = 0; open <= 1; open++) {
        QrArena a = {0};
        float *tw = calloc((size_t)c.ng + 1, sizeof *tw), *th = calloc((size_t)c.ng + 1, sizeof *th);
        for (int g = 0; g < c.ng; g++) { tw[g] = 120 + (float)(g % 3) * 10; th[g] = 54; }
        QrGlInput in = qt_gl_input(&c, true);
        QrGlOverview ov;
        QT_OK(qr_gl_overview(&in, open, tw, th, &a, &ov));
        /* the expected boxes: depth of each group, its outermost ancestor deeper than open */
        int *rep = malloc((size_t)c.n * sizeof *rep), *tile_of = malloc((size_t)c.ng * sizeof *tile_of), nb = 0, bad = 0;
        for (int g = 0; g < c.ng; g++) tile_of[g] = -1;
        for (int v = 0; v < c.n; v++) {
            int top = -1;
            for (int x = c.ngrp[v]; x >= 0; x = c.gpar[x]) {
                int d = 0;
                for (int y = x; y >= 0; y = c.gpar[y]) d++;
                if (d > open) top = x;
            }
            if (top < 0) { rep[v] = nb++; bad += ov.box_node[rep[v]] != v; continue; }
            if (tile_of[top] < 0) { tile_of[top] = nb++; bad += ov.box_group[tile_of[top]] != top; }
            rep[v] = tile_of[top];
            bad += ov.in.w[rep[v]] != tw[top] || ov.in.h[rep[v]] != th[top];
        }
        int want_e = 0;
        for (int e = 0; e < c.ne; e++) {
            int s1 = rep[c.src[e]], d1 = rep[c.dst[e]];
            bool first = s1 != d1;
            for (int f = 0; f < e && first; f++) first = !(rep[c.src[f]] == s1 && rep[c.dst[f]] == d1);
            want_e += first;
        }
        QT_CHECKF(ov.in.n == nb && ov.in.n_edges == want_e && bad == 0, "open %d: %d boxes (want %d), %d edges (want %d), %d wrong",
                  open, ov.in.n, nb, ov.in.n_edges, want_e, bad);
        /* the overview laid out: every layout check */
        QtGlCase o;
        QT_CHECK(qt_gl_case_alloc(&o, ov.in.n, ov.in.n_edges, ov.in.n_groups));
        o.n = ov.in.n; o.ne = ov.in.n_edges; o.ng = ov.in.n_groups;
        memcpy(o.w, ov.in.w, (size_t)o.n * sizeof *o.w); memcpy(o.h, ov.in.h, (size_t)o.n * sizeof *o.h);
        memcpy(o.src, ov.in.src, (size_t)o.ne * sizeof *o.src); memcpy(o.dst, ov.in.dst, (size_t)o.ne * sizeof *o.dst);
        memcpy(o.ngrp, ov.in.node_group, (size_t)o.n * sizeof *o.ngrp);
        if (o.ng) memcpy(o.gpar, ov.in.group_parent, (size_t)o.ng * sizeof *o.gpar);
        qt_gl_check_case(&o, open ? "overview depth 1" : "overview depth 0");
        qt_gl_case_free(&o);
        free(rep); free(tile_of); free(tw); free(th);
        qr_arena_free(&a);
    }
    qt_gl_case_free(&c);
}

/* A group that is not contiguous (a cycle between two groups) is drawn with a reversed edge;
 * a cycle among the nodes is an error that names a node. */
static void test_graph_cycles(void) {
    QtGlCase c;
    QT_CHECK(qt_gl_case_alloc(&c, 4, 4, 2));
    for (int i = 0; i < 4; i++) { c.w[i] = 50; c.h[i] = 30; }
    c.n = 4;
    qt_gl_edge(&c, 0, 1); qt_gl_edge(&c, 1, 2); qt_gl_edge(&c, 2, 3);
    c.ng = 2; c.gpar[0] = c.gpar[1] = -1;
    c.ngrp[0] = c.ngrp[2] = 0; c.ngrp[1] = c.ngrp[3] = 1;   /* A = {0, 2}, B = {1, 3}: A -> B -> A */
    QrGlInput in = qt_gl_input(&c, true);
    QrGlLayout l;
    QT_OK(qr_gl_layout(&in, &l));
    int rev;
    const char *err = qt_gl_check(&c, &l, &rev);
    qr_gl_free(&l);
    QT_CHECKF(!err && rev >= 1, "%s, %d reversed", err ? err : "ok", rev);
    qt_gl_edge(&c, 3, 0);   /* now a real cycle */
    in = qt_gl_input(&c, false);
    QrStatus st = qr_gl_layout(&in, &l);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "cycle"), "status %d: %s", st, qr_err_msg());
    qr_err_clear();
    in.src = c.src; c.src[0] = 7;
    st = qr_gl_layout(&in, &l);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "edge 0"), "status %d: %s", st, qr_err_msg());
    qr_err_clear();
    qt_gl_case_free(&c);
}

/* The checks fail when they should. Edge crossings: a 5-node graph whose first order crosses once
 * (s0's long edge to t passes a dummy slot drawn right of s1's reader) is flagged with crossing
 * reduction off (-1 sweeps) and passes with it on; on the fixtures the drawing's crossings equal the
 * layout's count with and without the reduction, and the reduction never adds any. Routes and boxes:
 * a box moved onto an edge's path, a target moved above its source, a box moved onto another box. */
static void test_graph_checks_fail(void) {
    QtGlCase c;
    QT_CHECK(qt_gl_case_alloc(&c, 5, 4, 0));
    c.n = 5;   /* 0 s0, 1 s1, 2 y, 3 x, 4 t */
    for (int i = 0; i < 5; i++) { c.w[i] = 60; c.h[i] = 30; }
    qt_gl_edge(&c, 0, 4); qt_gl_edge(&c, 0, 2); qt_gl_edge(&c, 1, 3); qt_gl_edge(&c, 3, 4);
    int64_t cr[2] = { -1, -1 };
    const char *err[2] = { NULL, NULL };
    for (int on = 0; on < 2; on++) {
        QrGlInput in = qt_gl_input(&c, false);
        in.sweeps = on ? 0 : -1;
        QrGlLayout l;
        QT_OK(qr_gl_layout(&in, &l));
        cr[on] = qt_gl_geo_crossings(&c, &l);
        err[on] = qt_gl_check_crossings(&c, &l, 0);
        int rev;
        QT_CHECKF(!qt_gl_check(&c, &l, &rev), "sweeps %d: %s", in.sweeps, qt_gl_check(&c, &l, &rev));
        qr_gl_free(&l);
    }
    QT_CHECKF(cr[0] == 1 && err[0] && strstr(err[0], "at most 0"), "reduction off: %lld crossings drawn, check says %s", (long long)cr[0],
              err[0] ? err[0] : "nothing");
    QT_CHECKF(cr[1] == 0 && !err[1], "reduction on: %lld crossings drawn, check says %s", (long long)cr[1], err[1] ? err[1] : "nothing");
    qt_gl_case_free(&c);
    /* the fixtures, flat: the count agrees with the drawing, the reduction only removes crossings */
    const char *const fx[] = { "fixtures/cnn_residual/model.onnx", "fixtures/transformer/model.onnx" };
    int64_t removed = 0;
    for (int k = 0; k < 2; k++) {
        QT_OK(qt_gl_from_onnx(fx[k], &c));
        int64_t got[2] = { -1, -1 };
        for (int on = 0; on < 2; on++) {
            QrGlInput in = qt_gl_input(&c, false);
            in.sweeps = on ? 0 : -1;
            QrGlLayout l;
            QT_OK(qr_gl_layout(&in, &l));
            const char *e = qt_gl_check_crossings(&c, &l, INT64_MAX);
            QT_CHECKF(!e, "%s (sweeps %d): %s", fx[k], in.sweeps, e);
            got[on] = l.crossings;
            qr_gl_free(&l);
        }
        QT_CHECKF(got[1] <= got[0], "%s: %lld crossings with the reduction, %lld without", fx[k], (long long)got[1], (long long)got[0]);
        removed += got[0] - got[1];
        qt_gl_case_free(&c);
    }
    QT_CHECKF(removed > 0, "the reduction removed no crossing on the fixtures (%lld)", (long long)removed);
    /* planted offences on the residual net's grouped layout */
    QT_OK(qt_gl_from_onnx("fixtures/cnn_residual/model.onnx", &c));
    QrGlInput in = qt_gl_input(&c, true);
    QrGlLayout l;
    QT_OK(qr_gl_layout(&in, &l));
    int rev;
    QT_CHECKF(!qt_gl_check(&c, &l, &rev) && !qt_gl_check_routes(&c, &l), "the unplanted layout fails");
    /* a box (of the edge's group, so no frame is in the way) centred on the middle of an edge's longest piece */
    int e = -1, seg = -1, mover = -1;
    float best = 0;
    for (int f = 0; f < c.ne; f++)
        for (int k = l.pt_off[f]; k + 1 < l.pt_off[f + 1]; k++) {
            float len = fabsf(l.pts[2 * k + 3] - l.pts[2 * k + 1]);
            if (len > best) { best = len; e = f; seg = k; }
        }
    for (int i = 0; e >= 0 && i < c.n && mover < 0; i++)
        if (i != c.src[e] && i != c.dst[e] && c.ngrp[i] == l.edge_group[e]) mover = i;
    QT_CHECKF(e >= 0 && mover >= 0, "no edge or box to plant (edge %d, box %d)", e, mover);
    if (e >= 0 && mover >= 0) {
        float ox = l.x[mover], oy = l.y[mover];
        l.x[mover] = (l.pts[2 * seg] + l.pts[2 * seg + 2]) / 2 - c.w[mover] / 2;
        l.y[mover] = (l.pts[2 * seg + 1] + l.pts[2 * seg + 3]) / 2 - c.h[mover] / 2;
        const char *r = qt_gl_check_routes(&c, &l);
        char want[64];
        snprintf(want, sizeof want, "crosses box %d", mover);
        QT_CHECKF(r && strstr(r, want), "a box on edge %d: the route check says %s", e, r ? r : "nothing");
        l.x[mover] = ox; l.y[mover] = oy;
    }
    /* an edge's target moved above its source */
    {
        int f = 0, s0 = c.src[f], d0 = c.dst[f];
        float oy = l.y[d0];
        l.y[d0] = l.y[s0] - c.h[d0] - 5;
        const char *r = qt_gl_check(&c, &l, &rev);
        QT_CHECKF(r && strstr(r, "above source"), "a target above its source: the check says %s", r ? r : "nothing");
        l.y[d0] = oy;
    }
    /* a box onto another of its group */
    {
        int a = -1, b = -1;
        for (int i = 0; i < c.n && b < 0; i++)
            for (int j = i + 1; j < c.n && b < 0; j++) if (c.ngrp[i] == c.ngrp[j]) { a = i; b = j; }
        QT_CHECK(b >= 0);
        if (b >= 0) {   /* with the edges left out of both, so the box check is the one that speaks */
            float ox = l.x[b], oy = l.y[b];
            int ne = c.ne;
            l.x[b] = l.x[a] + 3; l.y[b] = l.y[a] + 3;
            c.ne = l.n_edges = 0;
            const char *r = qt_gl_check(&c, &l, &rev);
            QT_CHECKF(r && strstr(r, "overlap"), "a box on a box: the check says %s", r ? r : "nothing");
            c.ne = l.n_edges = ne;
            l.x[b] = ox; l.y[b] = oy;
        }
    }
    qr_gl_free(&l);
    qt_gl_case_free(&c);
}

/* ---- the view in a real bundle ------------------------------------------------------------- */

/* runall on the transformer pair (groups /q, /k, /v...) into DIR; every mod_name of
 * compare_per_layer_out.csv is a box's data-node (read from the files, no browser). */
static bool qt_gl_bundle(char *dir, size_t n) {
    snprintf(dir, n, "%s/graph_tpair", qt_tmpdir());
    const char *m = "fixtures/tpairs/static_int8";
    QtCli r;
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s.zip --keep-dir %s --quiet", m, m, m, dir, dir);
    return r.code == 0;
}

static void test_graph_bundle_nodes(void) {
    char dir[512], p[600];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    char *csv = qt_ra_read(p, NULL);
    QT_CHECK(html && csv);
    int rows = 0, missing = 0;
    char want[700];
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *f = strchr(line + 1, ','), *e = f ? strchr(f + 1, ',') : NULL;   /* Index,mod_name,... */
        if (!f || !e) continue;
        int len = (int)(e - f - 1);
        char name[512];
        snprintf(name, sizeof name, "%.*s", len, f + 1);
        char *u = strstr(name, " [UNVERIFIED pair]");
        if (u) *u = 0;
        snprintf(want, sizeof want, "data-node=\"%s\" data-row=\"%d\"", name, rows);
        missing += !strstr(html, want);
        rows++;
    }
    bool linked = strstr(html, "href=\"#graph\"") != NULL;
    /* the plots a box links to (data-p, one path a line) exist in the bundle */
    int plots = 0, plots_missing = 0;
    for (const char *q = html; (q = strstr(q, " data-p=\"")) != NULL; q++) {
        const char *e = strchr(q + 9, '"');
        for (const char *s = q + 9; e && s < e;) {
            const char *nl = memchr(s, '\n', (size_t)(e - s));
            const char *end = nl ? nl : e;
            char f[700];
            uint64_t sz;
            snprintf(f, sizeof f, "%s/%.*s", dir, (int)(end - s), s);
            plots++;
            if (qr_file_size(f, &sz) != QR_OK) { plots_missing++; qr_err_clear(); }
            s = end + 1;
        }
    }
    free(html);
    free(csv);
    QT_CHECKF(rows >= 20 && missing == 0, "%d rows, %d without a box", rows, missing);
    QT_CHECK(linked);
    QT_CHECKF(plots >= 2 && plots_missing == 0, "%d plot links, %d missing", plots, plots_missing);
}

/* The marks of the folded drawing, from the bundle's own tables: the one box outlined as the first
 * drop is the first verified row (graph order) with Cosine below 0.99; the dashed worst boxes are
 * the (up to) five verified rows with the lowest Cosine below 0.99999; a box badged Sk is row k of
 * sensitive_ops.csv (by name; rows naming no box are skipped). */
static void test_graph_marks(void) {
    char dir[512], p[600];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    QtCsv c, so;
    bool have_c = qt_csv_load(p, &c);
    snprintf(p, sizeof p, "%s/sensitive_ops.csv", dir);
    bool have_s = qt_csv_load(p, &so);
    QT_CHECK(html && have_c && have_s);
    int cn = qt_csv_col(&c, "mod_name"), cc = qt_csv_col(&c, "Cosine"), sn = qt_csv_col(&so, "op_name");
    /* expected: first drop and the five worst, from the csv */
    int first = -1, worst[5], nw = 0;
    for (int r = 1; r < c.n_rows && cn >= 0 && cc >= 0; r++) {
        double cos = c.cell[r][cc] && *c.cell[r][cc] ? strtod(c.cell[r][cc], NULL) : NAN;
        bool ver = c.cell[r][cn] && !strstr(c.cell[r][cn], "[UNVERIFIED pair]");
        if (first < 0 && ver && cos < 0.99) first = r - 1;
    }
    for (int pick = 0; pick < 5; pick++) {
        int best = -1;
        double bc = 0;
        for (int r = 1; r < c.n_rows && cn >= 0 && cc >= 0; r++) {
            double cos = c.cell[r][cc] && *c.cell[r][cc] ? strtod(c.cell[r][cc], NULL) : NAN;
            bool used = false;
            for (int j = 0; j < nw; j++) used |= worst[j] == r - 1;
            if (used || !(cos < 0.99999) || strstr(c.cell[r][cn], "[UNVERIFIED pair]")) continue;
            if (best < 0 || cos < bc) { best = r - 1; bc = cos; }
        }
        if (best >= 0) worst[nw++] = best;
    }
    /* the boxes of the folded drawing */
    char *end = strstr(html, "class=\"qg-qv\"");
    if (!end) end = strstr(html, "</svg>");
    int n_first = 0, got_first = -1, n_worst = 0, worst_bad = 0, s_checked = 0, s_bad = 0;
    char msg[300] = "";
    for (char *q = strstr(html, "<g class=\"qg-main\""); q && (q = strstr(q, "<g class=\"qg-n")) != NULL && (!end || q < end); q++) {
        char cls[80] = "", name[300] = "";
        int row = -1, srank = 0;
        sscanf(q, "<g class=\"%79[^\"]\" data-node=\"%299[^\"]\" data-row=\"%d\"", cls, name, &row);
        const char *gt = strchr(q, '>'), *ds = strstr(q, " data-s=\"");
        if (ds && gt && ds < gt) srank = atoi(ds + 9);
        if (strstr(cls, "qg-first")) { n_first++; got_first = row; }
        if (strstr(cls, "qg-worst")) {
            n_worst++;
            bool in = false;
            for (int j = 0; j < nw; j++) in |= worst[j] == row;
            if (!in && !worst_bad++) snprintf(msg, sizeof msg, "row %d marked worst", row);
        }
        if (srank > 0 && srank < so.n_rows && sn >= 0) {
            s_checked++;
            if (strcmp(so.cell[srank][sn], name) && !s_bad++) qt_fmt(msg, sizeof msg, "S%d on %s, sensitive_ops row %s", srank, name, so.cell[srank][sn]);
        }
    }
    qt_csv_free(&c);
    qt_csv_free(&so);
    free(html);
    QT_CHECKF(first >= 0 && n_first == 1 && got_first == first, "first drop: row %d expected, %d boxes marked (row %d)", first, n_first,
              got_first);
    QT_CHECKF(nw >= 1 && n_worst == nw && worst_bad == 0, "worst: %d expected, %d marked; %s", nw, n_worst, msg);
    QT_CHECKF(s_checked >= 3 && s_bad == 0, "sensitivity badges: %d checked, %d wrong; %s", s_checked, s_bad, msg);
}

/* The Q/DQ drawing groups the quantizers like the folded one: every QuantizeLinear /
 * DequantizeLinear of the analysis model whose name has no prefix (a weight's DQ named after its
 * initializer) is drawn in the group (data-qg) of the boxes it feeds, read here from the analysis
 * model by the project's loader (through the nodes without a box) and from the page's boxes. */
static void test_graph_qdq_groups(void) {
    char dir[512], p[600];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL), *qv = html ? strstr(html, "class=\"qg-qv\"") : NULL;
    QrGraph *g = NULL;
    QT_OK(qr_run_load("fixtures/tpairs/static_int8/analysis.onnx", &g));
    QT_CHECK(qv && g);
    if (!qv || !g) { free(html); if (g) { qr_graph_free(g); free(g); } return; }
    int nn = g->n_nodes, *qg = malloc((size_t)nn * sizeof *qg);   /* the box's data-qg, INT32_MIN: no box */
    for (int v = 0; v < nn; v++) {
        char want[600];
        qt_fmt(want, sizeof want, "data-node=\"%s\" data-row=\"", g->nodes[v].name);
        const char *b = strstr(qv, want), *a = b ? strstr(b, " data-qg=\"") : NULL, *gt = b ? strchr(b, '>') : NULL;
        qg[v] = a && a < gt ? atoi(a + 10) : INT32_MIN;
    }
    int checked = 0, grouped = 0, bad = 0;
    char msg[300] = "";
    for (int v = 0; v < nn; v++) {
        const char *op = g->nodes[v].op_type;
        if ((strcmp(op, "QuantizeLinear") && strcmp(op, "DequantizeLinear")) || strchr(g->nodes[v].name, '/')) continue;
        /* the boxes it feeds: readers of its outputs, through nodes without a box */
        int stack[256], sp = 0, want = INT32_MIN, readers = 0;
        bool same = true;
        stack[sp++] = v;
        char *seen = calloc((size_t)nn, 1);
        while (sp) {
            int u = stack[--sp];
            for (int r = 0; r < nn; r++)
                for (int k = 0; k < g->nodes[r].n_in && !seen[r]; k++)
                    for (int o = 0; o < g->nodes[u].n_out; o++)
                        if (g->nodes[u].out[o] >= 0 && g->nodes[r].in[k] == g->nodes[u].out[o] && !seen[r]) {
                            seen[r] = 1;
                            if (qg[r] != INT32_MIN) { readers++; if (want == INT32_MIN) want = qg[r]; else same &= want == qg[r]; }
                            else if (sp < 256) stack[sp++] = r;
                        }
        }
        free(seen);
        if (!readers || !same || qg[v] == INT32_MIN) continue;
        checked++;
        grouped += want >= 0;
        if (qg[v] != want && !bad++) qt_fmt(msg, sizeof msg, "%s in group %d, the box it feeds in %d", g->nodes[v].name, qg[v], want);
    }
    free(qg);
    free(html);
    qr_graph_free(g);
    free(g);
    QT_CHECKF(checked >= 4 && grouped >= 4 && bad == 0, "%d prefix-less quantizer boxes checked (%d feeding a group), %d misplaced; %s",
              checked, grouped, bad, msg);
}

/* Headless Chromium: the page with a self-test appended — every per-layer row has its box, no
 * two visible boxes overlap (expanded and collapsed), every metric recolours, a click shows the
 * row; render_html.sh fails on any console message. */
static void test_graph_render(void) {
    char dir[512], p[600], self[600], dom[600], shot[600];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/index.html", dir);
    size_t len = 0;
    char *html = qt_ra_read(p, &len);
    char *end = html ? strstr(html, "</body>") : NULL;
    QT_CHECK(end);
    static const char selftest[] =
        "(function(){var out=[],root=document.getElementById(\"qg\");\n"
        "function vis(n){var r=n.getBoundingClientRect();return getComputedStyle(n).display!==\"none\"&&r.width>0&&r.height>0;}\n"
        "function boxes(){return [].filter.call(document.querySelectorAll(\".qg-n,.qg-t\"),vis).map(function(n){return n.querySelector(\"rect\").getBoundingClientRect();});}\n"
        "function overlaps(){var b=boxes(),k=0;for(var i=0;i<b.length;i++)for(var j=i+1;j<b.length;j++){\n"
        " var x=Math.min(b[i].right,b[j].right)-Math.max(b[i].left,b[j].left),y=Math.min(b[i].bottom,b[j].bottom)-Math.max(b[i].top,b[j].top);\n"
        " if(x>0.5&&y>0.5)k++;}return b.length+\"/\"+k;}\n"
        "out.push(root&&root.classList.contains(\"qg-ready\")?\"ready\":\"not-ready\");\n"
        "var rows=document.querySelectorAll(\"#compare table.qr-table tbody tr\"),miss=0;\n"
        "[].forEach.call(rows,function(r){var idx=r.cells[0].textContent.trim(),name=r.cells[1].textContent.replace(/ \\u2316$/,\"\").replace(/ \\[UNVERIFIED pair\\]$/,\"\");\n"
        " var n=document.querySelector('.qg-n[data-row=\"'+idx+'\"]');if(!n||n.getAttribute(\"data-node\")!==name)miss++;});\n"
        "out.push(\"rows \"+rows.length+\" missing \"+miss);\n"
        "root.querySelector(\".qg-expand\").click();out.push(\"expanded \"+overlaps());\n"
        "root.querySelector(\".qg-collapse\").click();out.push(\"collapsed \"+overlaps());\n"
        "root.querySelector(\".qg-expand\").click();\n"
        "var sel=root.querySelector(\".qg-metric\"),nodes=[].slice.call(document.querySelectorAll(\".qg-n\"));\n"
        "function fills(){return nodes.map(function(n){return n.querySelector(\"rect\").style.fill;}).join(\";\");}\n"
        "var names=[].map.call(sel.options,function(o){return o.textContent;}),a=fills(),changed=0;\n"
        "for(var i=0;i<sel.options.length;i++){sel.value=String(i);sel.dispatchEvent(new Event(\"change\"));if(fills()!==a)changed++;}\n"
        "out.push(\"metrics \"+names.length+\" changed \"+changed+\" has \"+[\"Cosine\",\"local_Cosine\",\"SQNR\",\"local_SQNR\"].filter(function(m){return names.indexOf(m)>=0;}).length\n"
        " +(names.some(function(m){return /sensitivity/.test(m);})?\" sens\":\" nosens\"));\n"
        "var t=document.querySelector(\".qg-n.qg-worst\")||document.querySelector('.qg-n:not([data-row=\"-1\"])'),r=t.getAttribute(\"data-row\"),tr=null;\n"
        "[].forEach.call(rows,function(x){if(x.cells[0].textContent.trim()===r)tr=x;});\n"
        "t.dispatchEvent(new MouseEvent(\"click\",{bubbles:true}));\n"
        "var p=root.querySelector(\".qg-panel\"),cos=tr?tr.cells[7].textContent:\"?\";\n"
        "out.push(\"panel \"+(!p.hidden&&p.textContent.indexOf(t.getAttribute(\"data-node\"))>=0&&p.textContent.indexOf(cos)>=0?\"ok\":\"bad:\"+p.textContent.slice(0,80)));\n"
        "var qb=root.querySelector(\".qg-showq\");qb.checked=true;qb.dispatchEvent(new Event(\"change\"));\n"
        "var qn=[].filter.call(document.querySelectorAll(\".qg-qv .qg-qn\"),vis).length,qmiss=0;\n"
        "[].forEach.call(rows,function(r){var n=[].filter.call(document.querySelectorAll('.qg-qv .qg-n[data-row=\"'+r.cells[0].textContent.trim()+'\"]'),vis);if(!n.length)qmiss++;});\n"
        "out.push(\"qview \"+overlaps()+\" q \"+qn+\" missing \"+qmiss);\n"
        "qb.checked=false;qb.dispatchEvent(new Event(\"change\"));out.push(\"back \"+overlaps());\n"
        "document.body.setAttribute(\"data-graphtest\",out.join(\"|\"));})();\n";
    snprintf(self, sizeof self, "%s/graph_self.html", dir);
    FILE *f = fopen(self, "wb");
    if (f) { fwrite(html, 1, (size_t)(end - html), f); fputs("<script>", f); fputs(selftest, f); fputs("</script>", f); fputs(end, f); fclose(f); }
    free(html);
    snprintf(dom, sizeof dom, "%s/graph_self.dom", qt_tmpdir());
    snprintf(shot, sizeof shot, "%s/graph_self.png", qt_tmpdir());
    int rc = qt_bd_sh("QR_RENDER_DOM='%s' sh tests/render_html.sh '%s' '%s' 1280,1600 > '%s/graph_render.log' 2>&1", dom, self, shot,
                      qt_tmpdir());
    if (rc == 77) QT_SKIP("chromium not found (install Debian 'chromium' to run it)");
    snprintf(p, sizeof p, "%s/graph_render.log", qt_tmpdir());
    char *log = qt_ra_read(p, NULL), *d = qt_ra_read(dom, NULL);
    const char *res = d ? strstr(d, "data-graphtest=\"") : NULL;
    char got[400] = "";
    if (res) { res += 16; snprintf(got, sizeof got, "%.*s", (int)(strchr(res, '"') ? strchr(res, '"') - res : 0), res); }
    bool clean = rc == 0;
    free(d);
    QT_CHECKF(clean, "render_html.sh exit %d:\n%s", rc, log ? log : "");
    free(log);
    /* the per-layer rows, counted from the csv */
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    char *csv = qt_ra_read(p, NULL);
    int rows = -1;
    for (char *c = csv; c && *c; c++) rows += *c == '\n';
    free(csv);
    char want[120];
    snprintf(want, sizeof want, "ready|rows %d missing 0|expanded %d/0|collapsed ", rows, rows);
    QT_CHECKF(!strncmp(got, want, strlen(want)), "self-test: %s (want %s...)", got, want);
    const char *col = strstr(got, "collapsed "), *met = strstr(got, "|metrics ");
    QT_CHECKF(col && strstr(col, "/0|"), "overlapping boxes when collapsed: %s", got);
    int nm = 0, changed = 0, core = 0;
    QT_CHECKF(met && sscanf(met, "|metrics %d changed %d has %d", &nm, &changed, &core) == 3 && core == 4 && changed >= 3 &&
              strstr(met, " sens|"), "metrics: %s", got);
    QT_CHECKF(strstr(got, "|panel ok"), "click: %s", got);
    /* the Q/DQ toggle: the analysis model's quantizer nodes as boxes, every row's box there, no overlap;
     * and back to the folded view */
    int qbox = 0, qover = -1, qn = 0, qmiss = -1, back = -1, back_over = -1;
    const char *qv = strstr(got, "|qview ");
    QT_CHECKF(qv && sscanf(qv, "|qview %d/%d q %d missing %d|back %d/%d", &qbox, &qover, &qn, &qmiss, &back, &back_over) == 6 &&
              qover == 0 && qn >= 10 && qbox >= rows + qn && qmiss == 0 && back == rows && back_over == 0, "Q/DQ view: %s", got);
}

/* Headless Chromium on the view of the generated 2,000-node graph (as qr_gl_html writes it for
 * a large model: it opens collapsed): the page opens in the overview, whose collapsed groups are
 * tiles of a box's height and coloured (their worst member), with no two visible boxes
 * overlapping; clicking a tile opens the full drawing with that group's boxes shown, still
 * without overlaps; no console message. */
static void test_graph_overview_render(void) {
    QtGlCase c;
    QT_CHECK(qt_gl_generated(&c, 2000, 4242u));
    for (int i = 0; i < c.n; i++) qr_gl_box_size("MatMul", "MatMul", &c.w[i], &c.h[i]);   /* the bundle's box sizes */
    QrGlInput in = qt_gl_input(&c, true);
    QrGlLayout l;
    QT_OK(qr_gl_layout(&in, &l));
    QrGlViewNode *nodes = calloc((size_t)c.n, sizeof *nodes);
    const char **gname = calloc((size_t)c.ng + 1, sizeof *gname);
    double *val = calloc((size_t)c.n, sizeof *val);
    char (*nm)[32] = calloc((size_t)c.n + (size_t)c.ng, sizeof *nm);
    for (int i = 0; i < c.n; i++) {
        snprintf(nm[i], sizeof nm[i], "/n%d", i);
        nodes[i] = (QrGlViewNode){ .name = nm[i], .op_type = "MatMul", .row = i };
        val[i] = 1 - 1e-4 * (double)(i % 97);
    }
    for (int g = 0; g < c.ng; g++) { snprintf(nm[c.n + g], sizeof nm[0], "/block/g%d", g); gname[g] = nm[c.n + g]; }
    QrGlMetric m = { "Cosine", val, true };
    int drop = c.n * 3 / 4;   /* a first drop deep down, in a collapsed group */
    QrGlView v = { .nodes = nodes, .group_name = gname, .n_rows = c.n, .metrics = &m, .n_metrics = 1, .first_drop_row = drop,
                   .open_depth = -2 };
    char anc[256] = "";   /* the drop's groups, as a JS array */
    for (int g = c.ngrp[drop], k = 0; g >= 0; g = c.gpar[g], k++) {
        size_t u = strlen(anc);
        qt_fmt(anc + u, sizeof anc - u, "%s%d", k ? "," : "", g);
    }
    QrHtml h;
    qr_html_init(&h, "overview");
    qr_html_section(&h, "graph", "Graph view");
    qr_gl_html(&h, &l, &in, &v);
    char *page = NULL;
    size_t len = 0;
    QrStatus st = qr_html_finish(&h, &page, &len);
    qr_html_free(&h);
    qr_gl_free(&l);
    QT_OK(st);
    static const char selftest[] =
        "<script>(function(){var out=[],root=document.getElementById(\"qg\");\n"
        "function vis(n){var r=n.getBoundingClientRect();return getComputedStyle(n).display!==\"none\"&&r.width>0&&r.height>0;}\n"
        "function rects(sel){return [].filter.call(document.querySelectorAll(sel),vis).map(function(n){return n.querySelector(\"rect\").getBoundingClientRect();});}\n"
        "function over(b){var k=0;for(var i=0;i<b.length;i++)for(var j=i+1;j<b.length;j++){\n"
        " var x=Math.min(b[i].right,b[j].right)-Math.max(b[i].left,b[j].left),y=Math.min(b[i].bottom,b[j].bottom)-Math.max(b[i].top,b[j].top);\n"
        " if(x>0.5&&y>0.5)k++;}return k;}\n"
        "var ov=document.querySelector(\".qg-ov\"),tl=[].filter.call(document.querySelectorAll(\".qg-ot\"),vis),nb=rects(\".qg-ov .qg-n\"),tb=rects(\".qg-ot\");\n"
        "var hn=nb.length?nb[0].height:0,same=tb.every(function(r){return Math.abs(r.height-hn)<0.5;}),\n"
        " coloured=tl.every(function(t){var f=t.querySelector(\"rect\").style.fill;return f&&f.indexOf(\"hsl\")>=0||f.indexOf(\"rgb\")>=0;});\n"
        "out.push(\"ov \"+(ov&&vis(ov)?\"shown\":\"hidden\")+\" tiles \"+tl.length+\" nodes \"+nb.length+\" over \"+over(nb.concat(tb))+\" same \"+same+\" col \"+coloured);\n"
        "if(tl.length){var k=tl[0].getAttribute(\"data-g\");tl[0].dispatchEvent(new MouseEvent(\"click\",{bubbles:true}));\n"
        " var mem=[].filter.call(document.querySelectorAll('.qg-main .qg-n[data-g=\"'+k+'\"]'),vis).length,all=rects(\".qg-main .qg-n,.qg-main .qg-t\");\n"
        " out.push(\"opened \"+mem+\" shown \"+all.length+\" over \"+over(all));}\n"
        "document.body.setAttribute(\"data-ovtest\",out.join(\"|\"));})();</script>";
    /* Fit in the overview: the boxes in view are drawn at a readable size (at least 40 px of a box's 54,
     * so its 11 px text is 8 px or more) and the first drop's tile (or box) is among them; "whole" is a box's
     * height with the whole overview in view */
    static const char fittest[] =
        "<script>(function(){var root=document.getElementById(\"qg\"),svg=root.querySelector(\".qg-svg\"),anc=[%s];\n"
        "var ov=svg.querySelector(\".qg-ov\"),v=svg.getBoundingClientRect(),n=0,minh=1e9,drop=0,\n"
        " whole=ov?54*Math.min(v.width/+ov.getAttribute(\"data-w\"),v.height/+ov.getAttribute(\"data-h\")):0;\n"
        "root.querySelector(\".qg-fit\").click();\n"
        "[].forEach.call(document.querySelectorAll(\".qg-ov .qg-n,.qg-ov .qg-ot\"),function(e){var r=e.querySelector(\"rect\").getBoundingClientRect();\n"
        " if(!(r.width>0)||r.right<v.left||r.left>v.right||r.bottom<v.top||r.top>v.bottom)return;n++;if(r.height<minh)minh=r.height;\n"
        " if(e.classList.contains(\"qg-first\")||anc.indexOf(+e.getAttribute(\"data-g\"))>=0&&e.classList.contains(\"qg-ot\"))drop++;});\n"
        "document.body.setAttribute(\"data-fittest\",\"fit \"+n+\" min \"+Math.round(minh)+\" drop \"+drop+\" whole \"+Math.round(whole));})();</script>";
    char p[600], dom[600], shot[600];
    snprintf(p, sizeof p, "%s/overview.html", qt_tmpdir());
    FILE *f = fopen(p, "wb");
    char *end = page ? strstr(page, "</body>") : NULL;
    if (f && end) { fwrite(page, 1, (size_t)(end - page), f); fprintf(f, fittest, anc); fputs(selftest, f); fputs(end, f); }
    if (f) fclose(f);
    free(page); free(nodes); free(gname); free(val); free(nm);
    qt_gl_case_free(&c);
    QT_CHECK(end);
    snprintf(dom, sizeof dom, "%s/overview.dom", qt_tmpdir());
    snprintf(shot, sizeof shot, "%s/overview.png", qt_tmpdir());
    int rc = qt_bd_sh("QR_RENDER_DOM='%s' sh tests/render_html.sh '%s' '%s' 1280,1000 > '%s/overview_render.log' 2>&1", dom, p, shot,
                      qt_tmpdir());
    if (rc == 77) QT_SKIP("chromium not found (install Debian 'chromium' to run it)");
    snprintf(p, sizeof p, "%s/overview_render.log", qt_tmpdir());
    char *log = qt_ra_read(p, NULL), *d = qt_ra_read(dom, NULL);
    const char *res = d ? strstr(d, "data-ovtest=\"") : NULL, *fr = d ? strstr(d, "data-fittest=\"") : NULL;
    char got[300] = "", fgot[100] = "";
    if (res) { res += 13; snprintf(got, sizeof got, "%.*s", (int)(strchr(res, '"') ? strchr(res, '"') - res : 0), res); }
    if (fr) { fr += 14; snprintf(fgot, sizeof fgot, "%.*s", (int)(strchr(fr, '"') ? strchr(fr, '"') - fr : 0), fr); }
    free(d);
    QT_CHECKF(rc == 0, "render_html.sh exit %d:\n%s", rc, log ? log : "");
    free(log);
    int tiles = 0, nb = 0, over = -1, opened = 0, shown = 0, over2 = -1;
    char same[8] = "", col[8] = "";
    QT_CHECKF(sscanf(got, "ov shown tiles %d nodes %d over %d same %7s col %7[a-z]|opened %d shown %d over %d", &tiles, &nb, &over, same,
                     col, &opened, &shown, &over2) == 8 && tiles >= 10 && over == 0 && !strcmp(same, "true") && !strcmp(col, "true") &&
              opened >= 2 && shown > tiles && over2 == 0, "overview self-test: %s", got);
    /* whole: a box's height were the whole overview fitted in the view (what Fit did before): under 40 px, so
     * this page is one where Fit has to do more than show everything */
    int fit_n = 0, fit_min = 0, fit_drop = 0, whole = -1;
    QT_CHECKF(sscanf(fgot, "fit %d min %d drop %d whole %d", &fit_n, &fit_min, &fit_drop, &whole) == 4 && fit_n >= 3 && fit_min >= 40 &&
              fit_drop >= 1 && whole >= 0 && whole < 40,
              "after Fit: %s (want 3+ boxes in view, each 40+ px tall, the first drop's among them; the whole drawing's box under 40 px)", fgot);
}

/* CSV field k of a line (no quoting in the fixture names), into dst. */
static bool qt_gl_csv_field(const char *line, int k, char *dst, size_t n) {
    const char *p = line;
    for (int i = 0; i < k; i++) { p = strchr(p, ','); if (!p) return false; p++; }
    size_t len = strcspn(p, ",\n");
    snprintf(dst, n, "%.*s", (int)len, p);
    return true;
}

/* graph/model_explorer.json (Cosine) and _local_Cosine.json parse and hold, for every per-layer
 * row with a value, that row's value under its mod_name; the gradient runs from stop 0 to 1. */
static void test_graph_overlay_model_explorer(void) {
    char dir[512], p[700];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    char *csv = qt_ra_read(p, NULL);
    QT_CHECK(csv);
    static const struct { const char *file; int col; } files[] = { { "model_explorer.json", 7 }, { "model_explorer_local_Cosine.json", 24 },
                                                                    { "model_explorer_SQNR.json", 11 } };
    for (int f = 0; f < QR_ARRAY_LEN(files); f++) {
        snprintf(p, sizeof p, "%s/graph/%s", dir, files[f].file);
        size_t len = 0;
        char *txt = qt_ra_read(p, &len);
        QrArena a = {0};
        QrJsonVal *v = NULL;
        QT_CHECKF(txt && qr_json_parse(&a, txt, len, &v) == QR_OK, "%s: %s", files[f].file, txt ? qr_err_msg() : "missing");
        const QrJsonVal *res = qr_json_get(v, "results"), *grad = qr_json_get(v, "gradient");
        const QrJsonVal *g0 = qr_json_at(grad, 0), *g2 = qr_json_at(grad, 2);
        QT_CHECKF(res && g0 && g2 && qr_json_get(g0, "stop")->num == 0 && qr_json_get(g2, "stop")->num == 1 &&
                  qr_json_get(g0, "bgColor"), "%s: no results or gradient", files[f].file);
        /* the form node_data_builder.py's GraphNodeData.to_json_string writes: its fields in declaration
         * order with the None one (hideAggregatedStats) left out; each result only {"value": number}
         * (bgColor/textColor None); each gradient item {stop, bgColor} with stops 0 and 1 present */
        static const char *const fields[] = { "results", "name", "thresholds", "gradient", "hideInAggregatedStatsTable",
                                              "hideInChildrenStatsTable", "showExpandedSummaryOnGroupNode",
                                              "showLabelCountColumnsInChildrenStatsTable" };
        bool form = v->type == QR_JSON_OBJ && v->n == QR_ARRAY_LEN(fields);
        for (int k = 0; form && k < v->n; k++) form = !strcmp(v->keys[k], fields[k]);
        form = form && res->type == QR_JSON_OBJ && qr_json_get(v, "name")->type == QR_JSON_STR &&
               qr_json_get(v, "thresholds")->type == QR_JSON_ARR && grad->type == QR_JSON_ARR;
        for (int k = 4; form && k < v->n; k++) form = v->items[k]->type == QR_JSON_BOOL && !v->items[k]->b;
        for (int k = 0; form && k < res->n; k++)
            form = res->items[k]->type == QR_JSON_OBJ && res->items[k]->n == 1 && !strcmp(res->items[k]->keys[0], "value") &&
                   res->items[k]->items[0]->type == QR_JSON_NUM;
        bool has0 = false, has1 = false;
        for (int k = 0; form && k < grad->n; k++) {
            const QrJsonVal *g = grad->items[k], *st = qr_json_get(g, "stop"), *bg = qr_json_get(g, "bgColor");
            form = g->n == 2 && st && st->type == QR_JSON_NUM && st->num >= 0 && st->num <= 1 && bg && bg->type == QR_JSON_STR &&
                   bg->str[0] == '#' && strlen(bg->str) == 7;
            has0 |= form && st->num == 0;
            has1 |= form && st->num == 1;
        }
        QT_CHECKF(form && has0 && has1, "%s: not in the form Model Explorer's node-data builder writes", files[f].file);
        int rows = 0, checked = 0, bad = 0;
        char name[512], val[64], first_bad[700] = "";
        for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
            rows++;
            if (!qt_gl_csv_field(line + 1, 1, name, sizeof name) || !qt_gl_csv_field(line + 1, files[f].col, val, sizeof val)) continue;
            char *u = strstr(name, " [UNVERIFIED pair]");
            if (u) *u = 0;
            double want = strtod(val, NULL);
            if (!*val || !isfinite(want)) continue;
            const QrJsonVal *e = qr_json_get(res, name), *x = e ? qr_json_get(e, "value") : NULL;
            checked++;
            if (!x || fabs(x->num - want) > 1e-6 * fmax(1, fabs(want))) {
                if (!bad++) snprintf(first_bad, sizeof first_bad, "%s: %s vs %.9g", name, val, x ? x->num : NAN);
            }
        }
        qr_arena_free(&a);
        free(txt);
        QT_CHECKF(checked >= rows / 2 && checked > 10 && bad == 0, "%s: %d rows, %d checked, %d differ (%s)", files[f].file, rows,
                  checked, bad, first_bad);
    }
    free(csv);
}

/* graph/annotated.onnx: no weight copied (every initializer of 1 KiB or more is external data in
 * the analysis model's file), each matched node's doc_string carries its row's Cosine; next to the original
 * it loads in qreport's loader with the same graph and ONNX Runtime gives bit-identical outputs. */
static void test_graph_overlay_annotated(void) {
    char dir[512], p[700], q[700];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    const char *m = "fixtures/tpairs/static_int8";
    snprintf(p, sizeof p, "%s/graph/annotated.onnx", dir);
    snprintf(q, sizeof q, "%s/analysis.onnx", m);
    /* the protobuf: external initializers, doc strings */
    unsigned char *buf = NULL;
    size_t len = 0;
    QT_OK(qt_bd_read(p, &buf, &len));
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    QT_CHECK(mp && mp->graph);
    int ext = 0, docs = 0, meta = 0;
    bool loc_ok = true;
    size_t inline_max = 0;
    for (size_t k = 0; k < mp->graph->n_initializer; k++) {
        const Onnx__TensorProto *t = mp->graph->initializer[k];
        if (t->has_raw_data) inline_max = QR_MAX(inline_max, t->raw_data.len);
        if (!t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) continue;
        ext++;
        loc_ok &= t->n_external_data == 3 && !strcmp(t->external_data[0]->value, "analysis.onnx");
    }
    snprintf(q, sizeof q, "%s/compare_per_layer_out.csv", dir);
    char *csv = qt_ra_read(q, NULL);
    char name[512], cos[64], want[128], first_bad[512] = "";
    int bad = 0;
    for (size_t k = 0; k < mp->graph->n_node; k++) {
        const Onnx__NodeProto *nd = mp->graph->node[k];
        if (!nd->doc_string || strncmp(nd->doc_string, "qreport (row ", 13)) continue;
        docs++;
        for (size_t u = 0; u < nd->base.n_unknown_fields; u++) meta += nd->base.unknown_fields[u].tag == 9;
        int row = atoi(nd->doc_string + 13);
        const char *line = csv;
        for (int r = 0; line && r <= row; r++) line = strchr(line + 1, '\n');
        if (!line || !qt_gl_csv_field(line + 1, 1, name, sizeof name) || !qt_gl_csv_field(line + 1, 7, cos, sizeof cos)) { bad++; continue; }
        if (!*cos) continue;
        snprintf(want, sizeof want, " Cosine %.6g;", strtod(cos, NULL));
        if (!strstr(nd->doc_string, want) && !bad++) snprintf(first_bad, sizeof first_bad, "%s: %s lacks%s", nd->name, nd->doc_string, want);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    free(csv);
    QT_CHECKF(ext >= 4 && loc_ok && inline_max < 1024, "%d external initializers (locations %s), largest inline %zu bytes", ext,
              loc_ok ? "ok" : "wrong", inline_max);
    QT_CHECKF(docs >= 10 && meta >= docs && bad == 0, "%d doc strings, %d metadata entries, %d wrong: %s", docs, meta, bad, first_bad);
    /* next to the original: qreport's loader, then ONNX Runtime */
    char side[600];
    snprintf(side, sizeof side, "%s/annot_side", qt_tmpdir());
    QT_CHECK(qt_bd_sh("rm -rf '%s' && mkdir -p '%s' && cp '%s' '%s/' && cp '%s/analysis.onnx' '%s/'", side, side, p, side, m, side) == 0);
    snprintf(p, sizeof p, "%s/annotated.onnx", side);
    QrGraph *ga = NULL, *go = NULL;
    QT_OK(qr_run_load(p, &ga));
    snprintf(q, sizeof q, "%s/analysis.onnx", m);
    QrStatus st = qr_run_load(q, &go);
    bool same = st == QR_OK && ga->n_nodes == go->n_nodes && ga->n_values == go->n_values;
    for (int v = 0; same && v < go->n_values; v++) {
        const QrTensor *x = &go->values[v].t, *y = &ga->values[v].t;
        if (!x->data) continue;
        same = y->data && x->dtype == y->dtype && x->numel == y->numel &&
               !memcmp(x->data, y->data, (size_t)x->numel * qr_dtype_size(x->dtype));
    }
    if (ga) { qr_graph_free(ga); free(ga); }
    if (go) { qr_graph_free(go); free(go); }
    QT_CHECKF(same, "the annotated model loads differently from the original");
    if (qt_bd_sh("node -e \"require(require('path').join(process.env.ORT_NODE_MODULES || '/tmp/ort/node_modules', "
                 "'onnxruntime-node'))\" >/dev/null 2>&1") != 0)
        QT_SKIP("node or onnxruntime-node missing: the ONNX Runtime half is not run");
    int rc = qt_bd_sh("node tests/ort_run.js '%s/annotated.onnx' '%s/oa' disabled '%s/input.npy' >/dev/null 2>&1 && "
                      "node tests/ort_run.js '%s/analysis.onnx' '%s/oo' disabled '%s/input.npy' >/dev/null 2>&1 && "
                      "cmp '%s/oa/output_0.npy' '%s/oo/output_0.npy'", side, side, m, m, side, m, side, side);
    QT_CHECKF(rc == 0, "ONNX Runtime: the annotated model's output differs or does not run (%d)", rc);
}

/* runall --data: the view colours by the pooled metrics by default, and each box's pooled
 * Cosine is its row's Cosine in dataset/compare_per_layer_out.csv (matched by name). */
static void test_graph_dataset_pooled(void) {
    char dir[512], p[700];
    snprintf(dir, sizeof dir, "%s/graph_data", qt_tmpdir());
    const char *m = "fixtures/qpairs/ort_qdq";
    QtCli r;
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s/data -o %s.zip --keep-dir %s --quiet", m, m, m, dir, dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/dataset/compare_per_layer_out.csv", dir);
    char *csv = qt_ra_read(p, NULL);
    QT_CHECK(html && csv);
    const char *js = strstr(html, "class=\"qg-data\">"), *je = js ? strstr(js, "</script>") : NULL;
    QrArena a = {0};
    QrJsonVal *v = NULL;
    bool parsed = js && je && qr_json_parse(&a, js + 16, (size_t)(je - js - 16), &v) == QR_OK;
    const QrJsonVal *ms = parsed ? qr_json_get(v, "m") : NULL, *d = parsed ? qr_json_get(v, "d") : NULL, *pooled = NULL;
    int def = d ? (int)d->num : -1, pk = -1;
    for (int k = 0; ms && qr_json_at(ms, k); k++) {
        const QrJsonVal *nm = qr_json_get(qr_json_at(ms, k), "n");
        if (nm && nm->type == QR_JSON_STR && !strcmp(nm->str, "pooled Cosine")) { pooled = qr_json_get(qr_json_at(ms, k), "v"); pk = k; }
    }
    int checked = 0, bad = 0;
    char first_bad[600] = "";
    for (const char *q = html; pooled && (q = strstr(q, "data-node=\"")) != NULL; q++) {
        char name[512];
        int row = -1;
        const char *e = strchr(q + 11, '"');
        if (!e || sscanf(e, "\" data-row=\"%d\"", &row) != 1 || row < 0) continue;
        snprintf(name, sizeof name, "%.*s", (int)(e - q - 11), q + 11);
        for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
            char nm[512], cos[64];
            if (!qt_gl_csv_field(line + 1, 1, nm, sizeof nm) || strcmp(nm, name) || !qt_gl_csv_field(line + 1, 7, cos, sizeof cos)) continue;
            const QrJsonVal *x = qr_json_at(pooled, row);
            double want = strtod(cos, NULL);
            checked++;
            if (!x || x->type != QR_JSON_NUM || fabs(x->num - want) > 1e-5 * fmax(1, fabs(want)))
                if (!bad++) qt_fmt(first_bad, sizeof first_bad, "%s: csv %s, view %.9g", name, cos, x ? x->num : NAN);
        }
    }
    qr_arena_free(&a);
    free(html);
    free(csv);
    QT_CHECKF(parsed && pk >= 0 && def == pk, "data %s, pooled Cosine at %d, default %d", parsed ? "parsed" : "unreadable", pk, def);
    QT_CHECKF(checked >= 5 && bad == 0, "%d boxes checked, %d differ (%s)", checked, bad, first_bad);
}

/* runall --mode both: the view can colour by the int-vs-sim LSB difference — its metrics hold, per
 * row, lsb_max and the share of differing elements (lsb_diff's a/b) of compare_per_layer_out.csv. */
static void test_graph_mode_both(void) {
    char dir[512], p[700];
    snprintf(dir, sizeof dir, "%s/graph_both", qt_tmpdir());
    const char *m = "fixtures/qpairs/qat_fakequant";
    QtCli r;
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy --mode both -o %s.zip --keep-dir %s --quiet", m, m, m, dir, dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    QtCsv c;
    bool have_csv = qt_csv_load(p, &c);
    QT_CHECK(html && have_csv);
    char *js = strstr(html, "class=\"qg-data\">"), *je = js ? strstr(js, "</script>") : NULL;
    /* the page writes +-Infinity (an exact layer's SQNR) as 1e999, which JSON.parse reads as Infinity and
     * qr_json_parse refuses: read it as 1e300 here (the LSB metrics checked are finite) */
    for (char *q = js; q && je && (q = strstr(q, "1e999")) != NULL && q < je; q++) memcpy(q, "1e300", 5);
    QrArena a = {0};
    QrJsonVal *v = NULL;
    bool parsed = js && je && qr_json_parse(&a, js + 16, (size_t)(je - js - 16), &v) == QR_OK;
    const QrJsonVal *ms = parsed ? qr_json_get(v, "m") : NULL, *vmax = NULL, *vshare = NULL;
    for (int k = 0; ms && qr_json_at(ms, k); k++) {
        const QrJsonVal *nm = qr_json_get(qr_json_at(ms, k), "n");
        if (nm && nm->type == QR_JSON_STR && !strcmp(nm->str, "lsb_max")) vmax = qr_json_get(qr_json_at(ms, k), "v");
        if (nm && nm->type == QR_JSON_STR && !strcmp(nm->str, "lsb_diff share")) vshare = qr_json_get(qr_json_at(ms, k), "v");
    }
    int cmax = qt_csv_col(&c, "lsb_max"), cdiff = qt_csv_col(&c, "lsb_diff"), checked = 0, bad = 0, nonzero = 0;
    char first_bad[300] = "";
    for (int row = 1; vmax && vshare && cmax >= 0 && cdiff >= 0 && row < c.n_rows; row++) {
        const char *smax = c.cell[row][cmax], *sdiff = c.cell[row][cdiff];
        const QrJsonVal *xm = qr_json_at(vmax, row - 1), *xs = qr_json_at(vshare, row - 1);
        long long d = 0, n = 0;
        if (!smax || !*smax || !sdiff || sscanf(sdiff, "%lld/%lld", &d, &n) != 2 || n <= 0) continue;
        checked++;
        nonzero += d > 0;
        if (!xm || !xs || xm->type != QR_JSON_NUM || xs->type != QR_JSON_NUM || xm->num != strtod(smax, NULL) ||
            fabs(xs->num - (double)d / (double)n) > 1e-5 * ((double)d / (double)n) + 1e-12)
            if (!bad++) snprintf(first_bad, sizeof first_bad, "row %d: csv %s, %s; view %g, %g", row - 1, smax, sdiff,
                                 xm ? xm->num : NAN, xs ? xs->num : NAN);
    }
    qr_arena_free(&a);
    qt_csv_free(&c);
    free(html);
    QT_CHECKF(parsed && vmax && vshare, "the view's metrics lack lsb_max or lsb_diff share");
    QT_CHECKF(checked >= 5 && nonzero > 0 && bad == 0, "%d rows checked (%d with differences), %d differ (%s)", checked, nonzero,
              bad, first_bad);
}

/* A "#rrggbb" colour as Model Explorer reads one (two hex digits per channel; not hex: 255). */
static void qt_gl_me_rgb(const char *c, int rgb[3]) {
    size_t n = c[0] == '#' ? strlen(c) : 0;
    for (int k = 0; k < 3; k++) {
        char h[3] = { 0 };
        if (n >= (size_t)(3 + 2 * k)) { h[0] = c[1 + 2 * k]; h[1] = c[2 + 2 * k]; }
        rgb[k] = isxdigit((unsigned char)h[0]) && isxdigit((unsigned char)h[1]) ? (int)strtol(h, NULL, 16) : 255;
    }
}

/* The overlays as the real viewers read them. Neither viewer runs here: Netron is not published on
 * the npm registry, and the registry this project reaches has no Model Explorer visualizer
 * package (both 404), so the rules below are the viewers' own reading, taken from their sources
 * (google-ai-edge/model-explorer node_data_provider_extension_service.ts with the ONNX adapter
 * model-explorer-onnx main.py; lutzroeder/netron source/onnx.js):
 * - Model Explorer takes a file whose top level has "results" without a "results" inside as the
 *   data of the open graph (so no node may be called "results"); the ONNX adapter's node id is the
 *   node name, so every row reaches the analysis model through a key that is one of its node
 *   names; a node's colour is the gradient at (value - min) / (max - min) over all numeric values,
 *   between the two stops around it (sorted by stop; none around it: transparent), channels read
 *   as two hex digits: every value must land between two stops, and the worst row (lowest
 *   Cosine / SQNR) must come out red, the best green.
 * - Netron shows a node's doc_string as its description and each metadata_props entry as a
 *   metadata row (except a list-valued "input_names", which it takes as input names); an external
 *   tensor's "location", "offset" and "length" are read with parseInt(…, 10), and a missing file
 *   only leaves that tensor empty: every annotated node's qreport.Cosine row equals its csv row,
 *   no entry is called input_names, every external offset and length is plain decimal and lies
 *   inside the analysis model's file. */
static void test_graph_overlay_viewers(void) {
    char dir[512], p[700];
    QT_CHECK(qt_gl_bundle(dir, sizeof dir));
    const char *m = "fixtures/tpairs/static_int8";
    snprintf(p, sizeof p, "%s/graph/annotated.onnx", dir);
    unsigned char *buf = NULL;
    size_t len = 0;
    QT_OK(qt_bd_read(p, &buf, &len));
    Onnx__ModelProto *mp = buf ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
    free(buf);
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    QtCsv c;
    bool have_c = qt_csv_load(p, &c);
    QT_CHECK(mp && mp->graph && have_c);
    if (!mp || !mp->graph || !have_c) { if (mp) onnx__model_proto__free_unpacked(mp, NULL); if (have_c) qt_csv_free(&c); return; }
    int cn = qt_csv_col(&c, "mod_name");
    /* ---- Model Explorer ---- */
    static const struct { const char *file, *col; } me[] = { { "model_explorer.json", "Cosine" }, { "model_explorer_SQNR.json", "SQNR" },
                                                              { "model_explorer_local_Cosine.json", "local_Cosine" } };
    for (int f = 0; f < QR_ARRAY_LEN(me); f++) {
        snprintf(p, sizeof p, "%s/graph/%s", dir, me[f].file);
        size_t tl = 0;
        char *txt = qt_ra_read(p, &tl);
        QrArena a = {0};
        QrJsonVal *v = NULL;
        bool parsed = txt && qr_json_parse(&a, txt, tl, &v) == QR_OK && v->type == QR_JSON_OBJ;
        QT_CHECKF(parsed && !strstr(txt, "NaN") && !strstr(txt, "Infinity"), "%s: not strict JSON", me[f].file);
        const QrJsonVal *res = parsed ? qr_json_get(v, "results") : NULL, *grad = parsed ? qr_json_get(v, "gradient") : NULL;
        bool single = res && res->type == QR_JSON_OBJ && !qr_json_get(res, "results");
        QT_CHECKF(single && grad && grad->type == QR_JSON_ARR && grad->n >= 2, "%s: not read as the open graph's node data", me[f].file);
        if (!single || !grad || grad->type != QR_JSON_ARR || grad->n < 2) { qr_arena_free(&a); free(txt); continue; }
        /* the stops, sorted */
        int ns = grad->n, (*rgb)[3] = calloc((size_t)ns, sizeof *rgb);
        double *stop = calloc((size_t)ns, sizeof *stop);
        for (int k = 0; k < ns; k++) {
            const QrJsonVal *st = qr_json_get(grad->items[k], "stop"), *bg = qr_json_get(grad->items[k], "bgColor");
            stop[k] = st && st->type == QR_JSON_NUM ? st->num : NAN;
            qt_gl_me_rgb(bg && bg->type == QR_JSON_STR ? bg->str : "", rgb[k]);
        }
        for (int i = 1; i < ns; i++)
            for (int j = i; j > 0 && stop[j] < stop[j - 1]; j--) {
                double t = stop[j]; stop[j] = stop[j - 1]; stop[j - 1] = t;
                for (int q = 0; q < 3; q++) { int u = rgb[j][q]; rgb[j][q] = rgb[j - 1][q]; rgb[j - 1][q] = u; }
            }
        double lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < res->n; k++) {
            const QrJsonVal *x = qr_json_get(res->items[k], "value");
            if (x && x->type == QR_JSON_NUM) { lo = fmin(lo, x->num); hi = fmax(hi, x->num); }
        }
        /* every key a node id of the analysis model or a row's baseline name; every value between two stops */
        int unknown = 0, transparent = 0, reach = 0, rows = 0, worst_rgb[3] = { 0 }, best_rgb[3] = { 0 };
        char msg[300] = "";
        for (int k = 0; k < res->n; k++) {
            const char *key = res->keys[k];
            bool node = false, row = false;
            for (size_t i = 0; i < mp->graph->n_node && !node; i++) node = mp->graph->node[i]->name && !strcmp(mp->graph->node[i]->name, key);
            for (int r = 1; r < c.n_rows && !row && cn >= 0; r++)
                row = c.cell[r][cn] && !strncmp(c.cell[r][cn], key, strlen(key)) && (!c.cell[r][cn][strlen(key)] || c.cell[r][cn][strlen(key)] == ' ');
            if (!node && !row && !unknown++) qt_fmt(msg, sizeof msg, "key %s names no node", key);
            const QrJsonVal *x = qr_json_get(res->items[k], "value");
            double t = x && x->type == QR_JSON_NUM && hi > lo ? (x->num - lo) / (hi - lo) : NAN;
            int seg = -1;
            for (int i = 0; i + 1 < ns && seg < 0; i++) if (t >= stop[i] && t <= stop[i + 1]) seg = i;
            if (seg < 0) { transparent++; continue; }
            int col[3];
            for (int q = 0; q < 3; q++)
                col[q] = (int)floor(rgb[seg][q] + (rgb[seg + 1][q] - rgb[seg][q]) * ((t - stop[seg]) / (stop[seg + 1] - stop[seg])));
            if (x->num == lo) memcpy(worst_rgb, col, sizeof col);
            if (x->num == hi) memcpy(best_rgb, col, sizeof col);
        }
        /* every csv row with a value reaches the analysis model through one of its keys */
        int ccol = qt_csv_col(&c, me[f].col);
        for (int r = 1; r < c.n_rows && ccol >= 0 && cn >= 0; r++) {
            if (!c.cell[r][ccol] || !*c.cell[r][ccol] || !isfinite(strtod(c.cell[r][ccol], NULL))) continue;
            rows++;
            char name[512];
            snprintf(name, sizeof name, "%s", c.cell[r][cn]);
            char *u = strstr(name, " [UNVERIFIED pair]");
            if (u) *u = 0;
            bool ok = false;
            double w = strtod(c.cell[r][ccol], NULL);
            char tag[600];
            qt_fmt(tag, sizeof tag, "baseline node %s):", name);
            for (int k = 0; k < res->n && !ok; k++) {
                const QrJsonVal *x = qr_json_get(res->items[k], "value");
                if (!x || x->type != QR_JSON_NUM || fabs(x->num - w) > 1e-6 * fmax(1, fabs(w))) continue;
                for (size_t i = 0; i < mp->graph->n_node && !ok; i++) {
                    const Onnx__NodeProto *nd = mp->graph->node[i];
                    if (!nd->name || strcmp(nd->name, res->keys[k])) continue;
                    /* the analysis node of this row: annotated with this row's baseline name */
                    ok = nd->doc_string && strstr(nd->doc_string, tag);
                }
            }
            reach += ok;
        }
        QT_CHECKF(unknown == 0 && transparent == 0 && hi > lo, "%s: %d keys naming no node, %d values the viewer leaves transparent "
                  "(min %g, max %g); %s", me[f].file, unknown, transparent, lo, hi, msg);
        QT_CHECKF(rows >= 10 && reach == rows, "%s: %d of %d csv rows reach an analysis node", me[f].file, reach, rows);
        QT_CHECKF(worst_rgb[0] > worst_rgb[1] + 60 && best_rgb[1] > best_rgb[0] + 60, "%s: worst drawn rgb(%d,%d,%d), best rgb(%d,%d,%d)",
                  me[f].file, worst_rgb[0], worst_rgb[1], worst_rgb[2], best_rgb[0], best_rgb[1], best_rgb[2]);
        free(rgb); free(stop);
        qr_arena_free(&a);
        free(txt);
    }
    /* ---- Netron ---- */
    int ccos = qt_csv_col(&c, "Cosine"), annotated = 0, shown = 0, bad = 0, named_inputs = 0;
    char msg[400] = "";
    for (size_t i = 0; i < mp->graph->n_node; i++) {
        const Onnx__NodeProto *nd = mp->graph->node[i];
        if (!nd->doc_string || strncmp(nd->doc_string, "qreport (row ", 13)) continue;
        annotated++;
        int row = atoi(nd->doc_string + 13);
        const char *want = row >= 0 && row + 1 < c.n_rows && ccos >= 0 ? c.cell[row + 1][ccos] : NULL;
        for (size_t u = 0; u < nd->base.n_unknown_fields; u++) {
            const ProtobufCMessageUnknownField *uf = &nd->base.unknown_fields[u];
            if (uf->tag != 9 || uf->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) continue;
            size_t at = 0;   /* protobuf-c keeps the field's length prefix in data */
            while (at < uf->len && (uf->data[at] & 0x80)) at++;
            Onnx__StringStringEntryProto *kv =
                at < uf->len ? onnx__string_string_entry_proto__unpack(NULL, uf->len - at - 1, uf->data + at + 1) : NULL;
            if (!kv) { if (!bad++) qt_fmt(msg, sizeof msg, "%s: a metadata_props entry does not decode", nd->name); continue; }
            named_inputs += kv->key && !strcmp(kv->key, "input_names");
            if (kv->key && !strcmp(kv->key, "qreport.Cosine") && want && *want) {
                char *end;
                double got = strtod(kv->value, &end), w = strtod(want, NULL);
                if (*end || fabs(got - w) > 1e-6 * fmax(1, fabs(w))) { if (!bad++) qt_fmt(msg, sizeof msg, "%s: qreport.Cosine %s, csv %s", nd->name, kv->value, want); }
                else shown++;
            }
            onnx__string_string_entry_proto__free_unpacked(kv, NULL);
        }
    }
    uint64_t asize = 0;
    snprintf(p, sizeof p, "%s/analysis.onnx", m);
    QT_OK(qr_file_size(p, &asize));
    int ext = 0, ext_bad = 0;
    for (size_t k = 0; k < mp->graph->n_initializer; k++) {
        const Onnx__TensorProto *t = mp->graph->initializer[k];
        if (!t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) continue;
        ext++;
        const char *loc = NULL;
        uint64_t off = 0, n = UINT64_MAX;
        bool digits = true;
        for (size_t e = 0; e < t->n_external_data; e++) {
            const char *key = t->external_data[e]->key, *val = t->external_data[e]->value;
            if (!strcmp(key, "location")) { loc = val; continue; }
            bool num = *val && strspn(val, "0123456789") == strlen(val);
            digits &= num;
            if (!strcmp(key, "offset")) off = strtoull(val, NULL, 10);
            if (!strcmp(key, "length")) n = strtoull(val, NULL, 10);
        }
        if (!loc || strcmp(loc, "analysis.onnx") || !digits || n == UINT64_MAX || off + n > asize) {
            if (!ext_bad++) qt_fmt(msg, sizeof msg, "initializer %s: location %s, offset %llu, length %llu (file %llu)", t->name, loc ? loc : "none",
                                   (unsigned long long)off, (unsigned long long)n, (unsigned long long)asize);
        }
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    qt_csv_free(&c);
    QT_CHECKF(annotated >= 10 && shown >= annotated / 2 && bad == 0 && named_inputs == 0,
              "Netron: %d annotated nodes, %d show a matching qreport.Cosine, %d wrong, %d input_names entries; %s", annotated, shown, bad,
              named_inputs, msg);
    QT_CHECKF(ext >= 4 && ext_bad == 0, "Netron: %d external tensors, %d unreadable; %s", ext, ext_bad, msg);
}

static void qt_graph_all(void) {
    QT_RUN(test_graph_residual);
    QT_RUN(test_graph_transformer);
    QT_RUN(test_graph_neck);
    QT_RUN(test_graph_generated_2000);
    QT_RUN(test_graph_overview);
    QT_RUN(test_graph_cycles);
    QT_RUN(test_graph_checks_fail);
    QT_RUN(test_graph_bundle_nodes);
    QT_RUN(test_graph_marks);
    QT_RUN(test_graph_qdq_groups);
    QT_RUN(test_graph_render);
    QT_RUN(test_graph_overview_render);
    QT_RUN(test_graph_overlay_model_explorer);
    QT_RUN(test_graph_overlay_annotated);
    QT_RUN(test_graph_overlay_viewers);
    QT_RUN(test_graph_dataset_pooled);
    QT_RUN(test_graph_mode_both);
}
