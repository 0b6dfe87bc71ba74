/* report/graph — implementation. See graph.h. Prefix qr__gl_. */

#define QR__GL_DUMMY_W 8.0f
#define QR__GL_MAX_SWEEPS 24

static void *qr__gl_zalloc(QrArena *a, size_t count, size_t elem) {
    void *p = qr_arena_array(a, count ? count : 1, elem);
    if (p) memset(p, 0, (count ? count : 1) * elem);
    return p;
}

#define QR__GL_NEW(a, ptr, count) \
    do { if (!((ptr) = qr__gl_zalloc((a), (size_t)(count), sizeof *(ptr)))) return qr_errf(QR_ERR_NOMEM, "graph layout: out of memory"); } while (0)

/* ==== one layered layout (a group's content) ============================================ */

typedef struct QrGlFlat {
    int n;                       /* items (boxes) */
    const float *w, *h;
    int ne;
    const int *src, *dst;        /* must be acyclic */
    float gap_x, gap_y;
    int sweeps;                  /* crossing-reduction sweeps, 0: none */
    int port_in, port_out;       /* a group's entry and exit points (zero-height items): the in-port on the top layer,
                                  * the out-port on the bottom one, -1 = none */
    /* results */
    float *cx, *top;             /* [n] centre x, top y */
    int *pt_off;                 /* [ne + 1] */
    float *pts;
    float width, height;
    int n_layers, n_dummy;
    int64_t crossings;
} QrGlFlat;

typedef struct QrGlKey { float key; int pos, id; } QrGlKey;

static int qr__gl_key_cmp(const void *a, const void *b) {
    const QrGlKey *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->pos - y->pos;
}

static int qr__gl_float_cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Crossings between layer l and l + 1 (Fenwick tree over the lower layer's positions). */
static int64_t qr__gl_cross_pair(const int *lnodes, int cnt, const int *pos, const int *doff, const int *dl, int cnt_next,
                                 int *bit, int *tmp) {
    memset(bit, 0, (size_t)(cnt_next + 1) * sizeof *bit);
    int64_t c = 0, inserted = 0;
    for (int i = 0; i < cnt; i++) {
        int v = lnodes[i], k = 0;
        for (int j = doff[v]; j < doff[v + 1]; j++) tmp[k++] = pos[dl[j]];
        for (int a = 1; a < k; a++) {   /* insertion sort: the few lower neighbours of one node */
            int x = tmp[a], b = a - 1;
            while (b >= 0 && tmp[b] > x) { tmp[b + 1] = tmp[b]; b--; }
            tmp[b + 1] = x;
        }
        for (int a = 0; a < k; a++) {
            int le = 0;
            for (int q = tmp[a] + 1; q > 0; q -= q & -q) le += bit[q];
            c += inserted - le;
        }
        for (int a = 0; a < k; a++) { for (int q = tmp[a] + 1; q <= cnt_next; q += q & -q) bit[q]++; inserted++; }
    }
    return c;
}

/* Weighted isotonic regression (pool adjacent violators): x[i] as close to d[i] as the
 * minimum separations sep[i] (between i and i + 1) allow, order kept. */
static void qr__gl_pav(int n, const float *d, const float *wt, const float *sep, float *x, double *bw, double *bs, int *bn) {
    int nb = 0;
    double c = 0;
    for (int i = 0; i < n; i++) {
        if (i) c += sep[i - 1];
        bw[nb] = wt[i];
        bs[nb] = wt[i] * (d[i] - c);
        bn[nb] = 1;
        nb++;
        while (nb > 1 && bs[nb - 2] / bw[nb - 2] > bs[nb - 1] / bw[nb - 1]) {
            bw[nb - 2] += bw[nb - 1]; bs[nb - 2] += bs[nb - 1]; bn[nb - 2] += bn[nb - 1];
            nb--;
        }
    }
    c = 0;
    int i = 0;
    for (int b = 0; b < nb; b++) {
        double z = bs[b] / bw[b];
        for (int k = 0; k < bn[b]; k++, i++) {
            if (i) c += sep[i - 1];
            x[i] = (float)(z + c);
        }
    }
}

/* One flat layout's extended graph: its items, then a dummy slot per layer an edge crosses. */
typedef struct QrGlExt {
    int n, N, L, nd;             /* items, items + dummies, layers, dummies */
    int *lay;                    /* [n] an item's layer */
    int *dfirst;                 /* [ne] an edge's first dummy */
    int *elay;                   /* [N] layer */
    float *ew, *eh;              /* [N] size */
    int *uo, *ul, *doff, *dl;    /* upper and lower neighbours (offsets [N + 1], lists) */
    int *lstart, *lnodes, *pos;  /* layers as position-ordered lists: [L + 1] starts, [N] slots, [N] positions */
    int maxcnt, maxdeg;          /* the widest layer, the most neighbours on one side */
} QrGlExt;

/* Layers of f's items (a cycle is an error): longest path from the sources, then every item
 * pulled down to just above its first reader; the out-port on the bottom layer. */
static QrStatus qr__gl_flat_layers(const QrGlFlat *f, QrArena *tmp, QrGlExt *x) {
    int n = f->n, ne = f->ne;
    int *so, *sl, *po, *pl, *indeg, *topo, *lay;
    QR__GL_NEW(tmp, so, n + 1); QR__GL_NEW(tmp, po, n + 1);
    QR__GL_NEW(tmp, sl, ne); QR__GL_NEW(tmp, pl, ne);
    QR__GL_NEW(tmp, indeg, n); QR__GL_NEW(tmp, topo, n); QR__GL_NEW(tmp, lay, n);
    for (int e = 0; e < ne; e++) if (f->src[e] != f->dst[e]) { so[f->src[e] + 1]++; po[f->dst[e] + 1]++; }
    for (int v = 0; v < n; v++) { so[v + 1] += so[v]; po[v + 1] += po[v]; }
    {
        int *fs, *fp;
        QR__GL_NEW(tmp, fs, n); QR__GL_NEW(tmp, fp, n);
        for (int e = 0; e < ne; e++) {
            int s = f->src[e], d = f->dst[e];
            if (s == d) continue;
            sl[so[s] + fs[s]++] = d;
            pl[po[d] + fp[d]++] = s;
        }
    }
    for (int v = 0; v < n; v++) indeg[v] = po[v + 1] - po[v];
    int nt = 0;
    for (int v = 0; v < n; v++) if (!indeg[v]) topo[nt++] = v;
    for (int i = 0; i < nt; i++)
        for (int j = so[topo[i]]; j < so[topo[i] + 1]; j++) if (!--indeg[sl[j]]) topo[nt++] = sl[j];
    if (nt < n) {
        for (int v = 0; v < n; v++) if (indeg[v]) return qr_errf(QR_ERR_INVALID, "graph layout: a cycle through box %d", v);
    }
    for (int i = 0; i < n; i++) {
        int v = topo[i];
        for (int j = po[v]; j < po[v + 1]; j++) lay[v] = QR_MAX(lay[v], lay[pl[j]] + 1);
    }
    for (int i = n - 1; i >= 0; i--) {
        int v = topo[i], m = INT32_MAX;
        if (v == f->port_in) continue;
        for (int j = so[v]; j < so[v + 1]; j++) m = QR_MIN(m, lay[sl[j]] - 1);
        if (m != INT32_MAX && m > lay[v]) lay[v] = m;
    }
    if (f->port_out >= 0) {   /* the exit on the bottom layer: the way down from it crosses no box */
        int deep = 0;
        for (int v = 0; v < n; v++) if (v != f->port_out) deep = QR_MAX(deep, lay[v]);
        lay[f->port_out] = QR_MAX(lay[f->port_out], deep);
    }
    int L = 0;
    for (int v = 0; v < n; v++) L = QR_MAX(L, lay[v] + 1);
    x->n = n;
    x->lay = lay;
    x->L = L;
    return QR_OK;
}

/* The extended graph over x's layers: a dummy slot per layer an edge crosses, every edge a
 * chain of one-layer steps; the upper and lower neighbours of every slot. */
static QrStatus qr__gl_flat_extend(const QrGlFlat *f, QrArena *tmp, QrGlExt *x) {
    int n = f->n, ne = f->ne, nd = 0;
    const int *lay = x->lay;
    int *dfirst;
    QR__GL_NEW(tmp, dfirst, ne);
    for (int e = 0; e < ne; e++) {
        int s = f->src[e], d = f->dst[e];
        dfirst[e] = n + nd;
        if (s != d) nd += lay[d] - lay[s] - 1;
    }
    int N = n + nd, NE = 0;
    int *elay, *eu, *ev;
    float *ew, *eh;
    QR__GL_NEW(tmp, elay, N); QR__GL_NEW(tmp, ew, N); QR__GL_NEW(tmp, eh, N);
    for (int v = 0; v < n; v++) { elay[v] = lay[v]; ew[v] = f->w[v]; eh[v] = f->h[v]; }
    for (int e = 0; e < ne; e++) if (f->src[e] != f->dst[e]) NE += lay[f->dst[e]] - lay[f->src[e]];
    QR__GL_NEW(tmp, eu, NE); QR__GL_NEW(tmp, ev, NE);
    NE = 0;
    for (int e = 0; e < ne; e++) {
        int s = f->src[e], d = f->dst[e];
        if (s == d) continue;
        int prev = s, span = lay[d] - lay[s];
        for (int k = 1; k < span; k++) {
            int id = dfirst[e] + k - 1;
            elay[id] = lay[s] + k;
            ew[id] = QR__GL_DUMMY_W;
            eh[id] = 0;
            eu[NE] = prev; ev[NE++] = id;
            prev = id;
        }
        eu[NE] = prev; ev[NE++] = d;
    }
    int *uo, *ul, *doff, *dl;
    QR__GL_NEW(tmp, uo, N + 1); QR__GL_NEW(tmp, doff, N + 1);
    QR__GL_NEW(tmp, ul, NE); QR__GL_NEW(tmp, dl, NE);
    for (int k = 0; k < NE; k++) { doff[eu[k] + 1]++; uo[ev[k] + 1]++; }
    for (int v = 0; v < N; v++) { doff[v + 1] += doff[v]; uo[v + 1] += uo[v]; }
    {
        int *fd, *fu;
        QR__GL_NEW(tmp, fd, N); QR__GL_NEW(tmp, fu, N);
        for (int k = 0; k < NE; k++) { dl[doff[eu[k]] + fd[eu[k]]++] = ev[k]; ul[uo[ev[k]] + fu[ev[k]]++] = eu[k]; }
    }
    x->N = N; x->nd = nd; x->dfirst = dfirst; x->elay = elay; x->ew = ew; x->eh = eh;
    x->uo = uo; x->ul = ul; x->doff = doff; x->dl = dl;
    return QR_OK;
}

/* Crossings of x's current order, every pair of adjacent layers. */
static int64_t qr__gl_crossings(const QrGlExt *x, int *bit, int *itmp) {
    int64_t c = 0;
    for (int l = 0; l + 1 < x->L; l++)
        c += qr__gl_cross_pair(x->lnodes + x->lstart[l], x->lstart[l + 1] - x->lstart[l], x->pos, x->doff, x->dl,
                               x->lstart[l + 2] - x->lstart[l + 1], bit, itmp);
    return c;
}

/* The order within each layer: by id first (the caller's order, dummies after), then barycenter
 * sweeps down and up while they help; the best order seen is kept (f->crossings). */
static QrStatus qr__gl_flat_order(QrGlFlat *f, QrArena *tmp, QrGlExt *x) {
    int N = x->N, L = x->L;
    const int *elay = x->elay, *uo = x->uo, *ul = x->ul, *doff = x->doff, *dl = x->dl;
    int *lstart, *lnodes, *pos, *best;
    QR__GL_NEW(tmp, lstart, L + 1); QR__GL_NEW(tmp, lnodes, N); QR__GL_NEW(tmp, pos, N); QR__GL_NEW(tmp, best, N);
    x->lstart = lstart; x->lnodes = lnodes; x->pos = pos;
    for (int v = 0; v < N; v++) lstart[elay[v] + 1]++;
    for (int l = 0; l < L; l++) lstart[l + 1] += lstart[l];
    {
        int *fill;
        QR__GL_NEW(tmp, fill, L);
        for (int v = 0; v < N; v++) { pos[v] = fill[elay[v]]++; lnodes[lstart[elay[v]] + pos[v]] = v; }
    }
    int maxcnt = 1, maxdeg = 1;
    for (int l = 0; l < L; l++) maxcnt = QR_MAX(maxcnt, lstart[l + 1] - lstart[l]);
    for (int v = 0; v < N; v++) maxdeg = QR_MAX(maxdeg, QR_MAX(doff[v + 1] - doff[v], uo[v + 1] - uo[v]));
    x->maxcnt = maxcnt; x->maxdeg = maxdeg;
    int *bit, *itmp;
    QrGlKey *keys;
    QR__GL_NEW(tmp, bit, maxcnt + 1); QR__GL_NEW(tmp, itmp, maxdeg); QR__GL_NEW(tmp, keys, maxcnt);
    int64_t cbest = qr__gl_crossings(x, bit, itmp);
    memcpy(best, pos, (size_t)N * sizeof *pos);
    for (int it = 0, stale = 0; it < f->sweeps && cbest > 0 && stale < 4; it++) {
        for (int pass = 0; pass < 2; pass++) {
            bool down = pass == 0;
            for (int step = 1; step < L; step++) {
                int l = down ? step : L - 1 - step;
                int cnt = lstart[l + 1] - lstart[l];
                int *ln = lnodes + lstart[l];
                for (int i = 0; i < cnt; i++) {
                    int v = ln[i];
                    const int *nb = down ? ul + uo[v] : dl + doff[v];
                    int k = down ? uo[v + 1] - uo[v] : doff[v + 1] - doff[v];
                    float s = 0;
                    for (int j = 0; j < k; j++) s += (float)pos[nb[j]];
                    keys[i] = (QrGlKey){ k ? s / (float)k : (float)pos[v], pos[v], v };
                }
                qsort(keys, (size_t)cnt, sizeof *keys, qr__gl_key_cmp);
                for (int i = 0; i < cnt; i++) { ln[i] = keys[i].id; pos[keys[i].id] = i; }
            }
        }
        int64_t c = qr__gl_crossings(x, bit, itmp);
        if (c < cbest) { cbest = c; memcpy(best, pos, (size_t)N * sizeof *pos); stale = 0; }
        else stale++;
    }
    memcpy(pos, best, (size_t)N * sizeof *pos);
    for (int v = 0; v < N; v++) lnodes[lstart[elay[v]] + pos[v]] = v;
    f->crossings = cbest;
    return QR_OK;
}

/* x of every slot (*cx_out, [N]; f->width): each layer in turn pulled towards the median of its
 * neighbours, order and spacing kept; the leftmost edge at 0. */
static QrStatus qr__gl_flat_x(QrGlFlat *f, QrArena *tmp, const QrGlExt *x, float **cx_out) {
    int n = x->n, N = x->N, L = x->L, maxcnt = x->maxcnt, maxdeg = x->maxdeg;
    const int *lstart = x->lstart, *lnodes = x->lnodes, *uo = x->uo, *ul = x->ul, *doff = x->doff, *dl = x->dl;
    const float *ew = x->ew;
    float *cx, *d, *wt, *sep, *nbx;
    double *bw, *bs;
    int *bn;
    QR__GL_NEW(tmp, cx, N); QR__GL_NEW(tmp, d, maxcnt); QR__GL_NEW(tmp, wt, maxcnt); QR__GL_NEW(tmp, sep, maxcnt);
    QR__GL_NEW(tmp, nbx, 2 * maxdeg); QR__GL_NEW(tmp, bw, maxcnt); QR__GL_NEW(tmp, bs, maxcnt); QR__GL_NEW(tmp, bn, maxcnt);
    for (int l = 0; l < L; l++) {
        float px = 0;
        for (int i = lstart[l]; i < lstart[l + 1]; i++) {
            int v = lnodes[i];
            if (i > lstart[l]) px += (ew[lnodes[i - 1]] + ew[v]) / 2 + (v < n && lnodes[i - 1] < n ? f->gap_x : f->gap_x / 2);
            cx[v] = px;
        }
    }
    for (int round = 0; round < 8; round++) {
        int mode = round < 6 ? round % 2 : 2;      /* 0 upper neighbours, 1 lower, 2 both */
        for (int step = 0; step < L; step++) {
            int l = mode == 1 ? L - 1 - step : step;
            int cnt = lstart[l + 1] - lstart[l];
            const int *ln = lnodes + lstart[l];
            for (int i = 0; i < cnt; i++) {
                int v = ln[i], k = 0;
                if (mode != 1) for (int j = uo[v]; j < uo[v + 1]; j++) nbx[k++] = cx[ul[j]];
                if (mode != 0) for (int j = doff[v]; j < doff[v + 1]; j++) nbx[k++] = cx[dl[j]];
                if (k) {
                    qsort(nbx, (size_t)k, sizeof *nbx, qr__gl_float_cmp);
                    d[i] = k % 2 ? nbx[k / 2] : (nbx[k / 2 - 1] + nbx[k / 2]) / 2;
                    wt[i] = v >= n ? 4.0f : 1.0f;   /* dummies pull hardest: long edges stay straight */
                } else {
                    d[i] = cx[v];
                    wt[i] = 0.05f;
                }
                if (i + 1 < cnt) sep[i] = (ew[v] + ew[ln[i + 1]]) / 2 + (v < n && ln[i + 1] < n ? f->gap_x : f->gap_x / 2);
            }
            qr__gl_pav(cnt, d, wt, sep, d, bw, bs, bn);
            for (int i = 0; i < cnt; i++) cx[ln[i]] = d[i];
        }
    }
    float minx = INFINITY, maxx = -INFINITY;
    for (int v = 0; v < N; v++) { minx = QR_MIN(minx, cx[v] - ew[v] / 2); maxx = QR_MAX(maxx, cx[v] + ew[v] / 2); }
    for (int v = 0; v < N; v++) cx[v] -= minx;
    f->width = maxx - minx;
    *cx_out = cx;
    return QR_OK;
}

/* y (one band per layer as tall as its tallest box; boxes at the top of their band: an edge leaves
 * a box straight down to its band's bottom, so it never runs diagonally past a taller neighbour)
 * and every edge's points: source bottom, its band's bottom, down through each dummy slot's band,
 * target top (the out-port: on to the content's bottom). f's results into out. */
static QrStatus qr__gl_flat_route(QrGlFlat *f, QrArena *out, QrArena *tmp, const QrGlExt *x, const float *cx) {
    int n = f->n, ne = f->ne, L = x->L;
    const int *lay = x->lay, *elay = x->elay, *dfirst = x->dfirst;
    float *ltop, *lh;
    QR__GL_NEW(tmp, ltop, L); QR__GL_NEW(tmp, lh, L);
    for (int v = 0; v < n; v++) lh[lay[v]] = QR_MAX(lh[lay[v]], x->eh[v]);
    float y = 0;
    for (int l = 0; l < L; l++) { ltop[l] = y; y += lh[l] + (l + 1 < L ? f->gap_y : 0); }
    f->height = y;
    for (int v = 0; v < n; v++) { f->cx[v] = cx[v]; f->top[v] = ltop[lay[v]]; }
    int np = 0;
    for (int e = 0; e < ne; e++) {
        f->pt_off[e] = np;
        int s = f->src[e], t = f->dst[e];
        if (s != t) np += 3 + 2 * (lay[t] - lay[s] - 1) + (t == f->port_out);
    }
    f->pt_off[ne] = np;
    QR__GL_NEW(out, f->pts, 2 * np);
    for (int e = 0; e < ne; e++) {
        int s = f->src[e], t = f->dst[e];
        if (s == t) continue;
        float *p = f->pts + 2 * f->pt_off[e];
        *p++ = f->cx[s]; *p++ = f->top[s] + f->h[s];
        *p++ = f->cx[s]; *p++ = ltop[lay[s]] + lh[lay[s]];
        for (int k = 1; k < lay[t] - lay[s]; k++) {
            int id = dfirst[e] + k - 1, l = elay[id];
            *p++ = cx[id]; *p++ = ltop[l];
            *p++ = cx[id]; *p++ = ltop[l] + lh[l];
        }
        *p++ = f->cx[t]; *p++ = f->top[t];
        if (t == f->port_out) { *p++ = f->cx[t]; *p++ = f->height; }
    }
    return QR_OK;
}

/* Lays out one flat DAG: layers, the extended graph, the order within layers, x, then y and the
 * edges. Results go to out (f's arrays); scratch to tmp (reset by the caller). */
static QrStatus qr__gl_flat(QrGlFlat *f, QrArena *out, QrArena *tmp) {
    QR__GL_NEW(out, f->cx, f->n);
    QR__GL_NEW(out, f->top, f->n);
    QR__GL_NEW(out, f->pt_off, f->ne + 1);
    if (f->n == 0) { f->pts = NULL; return QR_OK; }
    QrGlExt x = {0};
    float *cx = NULL;
    QR_TRY(qr__gl_flat_layers(f, tmp, &x));
    QR_TRY(qr__gl_flat_extend(f, tmp, &x));
    QR_TRY(qr__gl_flat_order(f, tmp, &x));
    QR_TRY(qr__gl_flat_x(f, tmp, &x, &cx));
    QR_TRY(qr__gl_flat_route(f, out, tmp, &x, cx));
    f->n_layers = x.L;
    f->n_dummy = x.nd;
    return QR_OK;
}

/* ==== nested groups ======================================================================= */

typedef struct QrGlPair { int a, b, e; } QrGlPair;

static int qr__gl_pair_cmp(const void *x, const void *y) {
    const QrGlPair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return p->e - q->e;
}

static void qr_gl_free(QrGlLayout *l) {
    qr_arena_free(&l->arena);
    memset(l, 0, sizeof *l);
}

/* An item of a group's layout: node v is -(v + 1), group g is g. */
#define QR__GL_ITEM_NODE(v) (-(v) - 1)

/* What qr__gl_layout's steps share: the group tree, the items of every group, every edge's
 * segments, and the per-item layouts as the groups are laid out deepest first. */
typedef struct QrGlNest {
    const QrGlInput *in;
    QrGlLayout *o;
    QrArena *tmp;
    int n, G, ne, R;                     /* nodes, groups, edges; R: the root's pseudo group */
    float gx, gy, pad, head;
    int *gpar, *ng, *depth;              /* [G + 1] parent (-1 at R), [n] a node's group, [G + 1] depth */
    int *ti, *key;                       /* [n] topological index, [G + 1] a group's smallest */
    int *lca, *ia, *ib;                  /* [ne] lowest common group, the items under it on either side */
    int *cnt, *istart, *items, *islot;   /* items per group, in order of their first node; islot: an item's index in
                                          * its group (nodes at [0, n), groups at n + g) */
    int nseg, *sg_off;                   /* every edge's segments [sg_off[e], sg_off[e + 1]) */
    int *sg_g, *sg_a, *sg_b;             /* group, source and target item slots in that group (port: cnt, cnt + 1) */
    bool *has_in, *has_out;              /* [G + 1] a group's ports in use */
    int *eoff, *elist, *seg_edge;        /* segments grouped by their group; the edge of each */
    int *gorder;                         /* groups deepest first, the root last */
    float *iw, *ih, *lcx, *ltop;         /* per item slot (nodes then groups): size, local centre x / top */
    float **spts;                        /* per segment: its points in its group's content coordinates */
    int *snp;
    float *ox, *oy;                      /* [G + 1] a group's content origin */
} QrGlNest;

/* An item slot (nodes [0, n), groups n + g) of an item id (node v is -(v + 1), group g is g). */
static int qr__gl_slot(const QrGlNest *c, int item) { return item < 0 ? -item - 1 : c->n + item; }

/* Checks the input; the group tree (parents, depths, every node's group). */
static QrStatus qr__gl_tree(QrGlNest *c) {
    const QrGlInput *in = c->in;
    int n = c->n, G = c->G, ne = c->ne, R = c->R;
    QrArena *tmp = c->tmp;
    QR__GL_NEW(tmp, c->gpar, G + 1); QR__GL_NEW(tmp, c->ng, n); QR__GL_NEW(tmp, c->depth, G + 1);
    int *gpar = c->gpar, *ng = c->ng, *depth = c->depth;
    for (int g = 0; g < G; g++) {
        int p = in->group_parent ? in->group_parent[g] : -1;
        if (p < -1 || p >= G || p == g) return qr_errf(QR_ERR_INVALID, "graph layout: group %d has a bad parent %d", g, p);
        gpar[g] = p < 0 ? R : p;
    }
    gpar[R] = -1;
    for (int g = 0; g < G; g++) {
        int d = 0, x = g;
        while (x != R && d <= G) { x = gpar[x]; d++; }
        if (d > G) return qr_errf(QR_ERR_INVALID, "graph layout: group %d is its own ancestor", g);
        depth[g] = d;
    }
    for (int v = 0; v < n; v++) {
        int g = in->node_group ? in->node_group[v] : -1;
        if (g < -1 || g >= G) return qr_errf(QR_ERR_INVALID, "graph layout: node %d is in a bad group %d", v, g);
        ng[v] = g < 0 ? R : g;
        if (!(in->w[v] >= 0) || !(in->h[v] >= 0)) return qr_errf(QR_ERR_INVALID, "graph layout: node %d has a bad size", v);
    }
    for (int e = 0; e < ne; e++)
        if (in->src[e] < 0 || in->src[e] >= n || in->dst[e] < 0 || in->dst[e] >= n)
            return qr_errf(QR_ERR_INVALID, "graph layout: edge %d has a bad end (%d -> %d)", e, in->src[e], in->dst[e]);
    return QR_OK;
}

/* The topological index of every node (a cycle is an error) and every group's smallest; every
 * edge's lowest common group and the items under it. */
static QrStatus qr__gl_topo(QrGlNest *c) {
    const QrGlInput *in = c->in;
    int n = c->n, G = c->G, ne = c->ne, R = c->R;
    QrArena *tmp = c->tmp;
    int *ti, *key;
    {
        int *so, *sl, *deg, *q;
        QR__GL_NEW(tmp, so, n + 1); QR__GL_NEW(tmp, sl, ne); QR__GL_NEW(tmp, deg, n); QR__GL_NEW(tmp, q, n);
        QR__GL_NEW(tmp, ti, n);
        for (int e = 0; e < ne; e++) if (in->src[e] != in->dst[e]) { so[in->src[e] + 1]++; deg[in->dst[e]]++; }
        for (int v = 0; v < n; v++) so[v + 1] += so[v];
        int *fill;
        QR__GL_NEW(tmp, fill, n);
        for (int e = 0; e < ne; e++) if (in->src[e] != in->dst[e]) sl[so[in->src[e]] + fill[in->src[e]]++] = in->dst[e];
        int nq = 0;
        for (int v = 0; v < n; v++) if (!deg[v]) q[nq++] = v;
        for (int i = 0; i < nq; i++) {
            ti[q[i]] = i;
            for (int j = so[q[i]]; j < so[q[i] + 1]; j++) if (!--deg[sl[j]]) q[nq++] = sl[j];
        }
        if (nq < n)
            for (int v = 0; v < n; v++) if (deg[v]) return qr_errf(QR_ERR_INVALID, "graph layout: the graph has a cycle through node %d", v);
    }
    const int *gpar = c->gpar, *ng = c->ng, *depth = c->depth;
    QR__GL_NEW(tmp, key, G + 1);
    for (int g = 0; g <= G; g++) key[g] = INT32_MAX;
    for (int v = 0; v < n; v++) for (int g = ng[v]; g >= 0; g = gpar[g]) { if (key[g] <= ti[v]) break; key[g] = ti[v]; }
    int *lca, *ia, *ib;
    QR__GL_NEW(tmp, lca, ne); QR__GL_NEW(tmp, ia, ne); QR__GL_NEW(tmp, ib, ne);
    for (int e = 0; e < ne; e++) {
        int u = in->src[e], v = in->dst[e];
        int cu = QR__GL_ITEM_NODE(u), cv = QR__GL_ITEM_NODE(v), gu = ng[u], gv = ng[v];
        while (depth[gu] > depth[gv]) { cu = gu; gu = gpar[gu]; }
        while (depth[gv] > depth[gu]) { cv = gv; gv = gpar[gv]; }
        while (gu != gv) { cu = gu; gu = gpar[gu]; cv = gv; gv = gpar[gv]; }
        lca[e] = gu; ia[e] = cu; ib[e] = cv;
        c->o->edge_group[e] = gu == R ? -1 : gu;
    }
    c->ti = ti; c->key = key; c->lca = lca; c->ia = ia; c->ib = ib;
    return QR_OK;
}

/* The items of every group, in order of their first node. */
static QrStatus qr__gl_items(QrGlNest *c) {
    int n = c->n, G = c->G;
    QrArena *tmp = c->tmp;
    const int *gpar = c->gpar, *ng = c->ng;
    int *cnt, *istart, *items, *islot;
    QR__GL_NEW(tmp, cnt, G + 1); QR__GL_NEW(tmp, istart, G + 2); QR__GL_NEW(tmp, items, n + G); QR__GL_NEW(tmp, islot, n + G);
    for (int v = 0; v < n; v++) cnt[ng[v]]++;
    for (int g = 0; g < G; g++) cnt[gpar[g]]++;
    for (int g = 0; g <= G; g++) istart[g + 1] = istart[g] + cnt[g];
    QrGlKey *tk;
    QR__GL_NEW(tmp, tk, n + G);
    int *fill;
    QR__GL_NEW(tmp, fill, G + 1);
    for (int v = 0; v < n; v++) { int g = ng[v]; tk[istart[g] + fill[g]++] = (QrGlKey){ (float)c->ti[v], v, QR__GL_ITEM_NODE(v) }; }
    for (int g = 0; g < G; g++) { int p = gpar[g]; tk[istart[p] + fill[p]++] = (QrGlKey){ (float)c->key[g], n + g, g }; }
    for (int g = 0; g <= G; g++) {
        qsort(tk + istart[g], (size_t)cnt[g], sizeof *tk, qr__gl_key_cmp);
        for (int i = 0; i < cnt[g]; i++) {
            int it = tk[istart[g] + i].id;
            items[istart[g] + i] = it;
            islot[qr__gl_slot(c, it)] = i;
        }
    }
    c->cnt = cnt; c->istart = istart; c->items = items; c->islot = islot;
    return QR_OK;
}

/* Every edge as segments, in drawing order: up from its source's group to the lowest common
 * group through each group's out-port, across that group, down to its target through each
 * group's in-port. A segment is an edge of one group's layout between two of its items. Then the
 * segments grouped by their group. */
static QrStatus qr__gl_segments(QrGlNest *c) {
    const QrGlInput *in = c->in;
    int n = c->n, G = c->G, ne = c->ne;
    QrArena *tmp = c->tmp;
    const int *gpar = c->gpar, *ng = c->ng, *lca = c->lca, *ia = c->ia, *ib = c->ib, *cnt = c->cnt, *islot = c->islot;
    int *sg_off, nseg = 0;
    QR__GL_NEW(tmp, sg_off, ne + 1);
    for (int e = 0; e < ne; e++) {
        sg_off[e] = nseg;
        if (ia[e] == ib[e]) continue;     /* a self-loop */
        nseg++;
        for (int x = ng[in->src[e]]; x != lca[e]; x = gpar[x]) nseg++;
        for (int x = ng[in->dst[e]]; x != lca[e]; x = gpar[x]) nseg++;
    }
    sg_off[ne] = nseg;
    int *sg_g, *sg_a, *sg_b;
    bool *has_in, *has_out;
    QR__GL_NEW(tmp, sg_g, nseg); QR__GL_NEW(tmp, sg_a, nseg); QR__GL_NEW(tmp, sg_b, nseg);
    QR__GL_NEW(tmp, has_in, G + 1); QR__GL_NEW(tmp, has_out, G + 1);
    for (int e = 0; e < ne; e++) {
        int k = sg_off[e];
        if (k == sg_off[e + 1]) continue;
        int u = in->src[e], v = in->dst[e], child = u;                         /* the item slot (nodes [0, n), groups n + g) below x on the way */
        for (int x = ng[u]; x != lca[e]; x = gpar[x]) {
            sg_g[k] = x; sg_a[k] = islot[child]; sg_b[k] = cnt[x] + 1; has_out[x] = true;
            k++;
            child = n + x;
        }
        sg_g[k] = lca[e]; sg_a[k] = islot[qr__gl_slot(c, ia[e])]; sg_b[k] = islot[qr__gl_slot(c, ib[e])];
        k++;
        int depth_in = 0;
        for (int x = ng[v]; x != lca[e]; x = gpar[x]) depth_in++;
        child = v;
        int j = 0;
        for (int x = ng[v]; x != lca[e]; x = gpar[x], j++) {   /* innermost last */
            int s = k + depth_in - 1 - j;
            sg_g[s] = x; sg_a[s] = cnt[x]; sg_b[s] = islot[child]; has_in[x] = true;
            child = n + x;
        }
    }
    c->nseg = nseg; c->sg_off = sg_off; c->sg_g = sg_g; c->sg_a = sg_a; c->sg_b = sg_b;
    c->has_in = has_in; c->has_out = has_out;
    return QR_OK;
}

/* The groups deepest first (the root last), the per-item and per-segment arrays, and the segments
 * grouped by their group. */
static QrStatus qr__gl_group_order(QrGlNest *c) {
    int n = c->n, G = c->G, ne = c->ne, nseg = c->nseg;
    QrArena *tmp = c->tmp;
    const int *sg_g = c->sg_g, *sg_off = c->sg_off;
    int *gorder;
    QR__GL_NEW(tmp, gorder, G + 1);
    {
        QrGlKey *tk;
        QR__GL_NEW(tmp, tk, G + 1);
        for (int g = 0; g <= G; g++) tk[g] = (QrGlKey){ (float)-c->depth[g], g, g };
        qsort(tk, (size_t)G + 1, sizeof *tk, qr__gl_key_cmp);
        for (int g = 0; g <= G; g++) gorder[g] = tk[g].id;
    }
    QR__GL_NEW(tmp, c->iw, n + G); QR__GL_NEW(tmp, c->ih, n + G); QR__GL_NEW(tmp, c->lcx, n + G); QR__GL_NEW(tmp, c->ltop, n + G);
    for (int v = 0; v < n; v++) { c->iw[v] = c->in->w[v]; c->ih[v] = c->in->h[v]; }
    QR__GL_NEW(tmp, c->spts, nseg); QR__GL_NEW(tmp, c->snp, nseg);
    int *eoff, *elist;
    QR__GL_NEW(tmp, eoff, G + 2); QR__GL_NEW(tmp, elist, nseg);
    for (int k = 0; k < nseg; k++) eoff[sg_g[k] + 1]++;
    for (int g = 0; g <= G; g++) eoff[g + 1] += eoff[g];
    {
        int *fill;
        QR__GL_NEW(tmp, fill, G + 1);
        for (int k = 0; k < nseg; k++) elist[eoff[sg_g[k]] + fill[sg_g[k]]++] = k;
    }
    int *seg_edge;
    QR__GL_NEW(tmp, seg_edge, nseg);
    for (int e = 0; e < ne; e++) for (int k = sg_off[e]; k < sg_off[e + 1]; k++) seg_edge[k] = e;
    c->gorder = gorder; c->eoff = eoff; c->elist = elist; c->seg_edge = seg_edge;
    return QR_OK;
}

/* Makes the m items' nu edges (usrc -> udst) acyclic: a cycle among the items (groups that are not
 * contiguous) is broken greedily, in item order — when no item is free, the first remaining one
 * takes its remaining inputs as reversed edges (urev; those edges are turned around). */
static QrStatus qr__gl_acyclic(QrArena *tmp, int m, int nu, int *usrc, int *udst, bool *urev) {
    int *deg, *io, *il, *ooff, *ol;
    bool *done;
    QR__GL_NEW(tmp, deg, m); QR__GL_NEW(tmp, done, m);
    QR__GL_NEW(tmp, io, m + 1); QR__GL_NEW(tmp, il, nu); QR__GL_NEW(tmp, ooff, m + 1); QR__GL_NEW(tmp, ol, nu);
    for (int j = 0; j < nu; j++) { io[udst[j] + 1]++; ooff[usrc[j] + 1]++; deg[udst[j]]++; }
    for (int i = 0; i < m; i++) { io[i + 1] += io[i]; ooff[i + 1] += ooff[i]; }
    int *fi, *fo;
    QR__GL_NEW(tmp, fi, m); QR__GL_NEW(tmp, fo, m);
    for (int j = 0; j < nu; j++) { il[io[udst[j]] + fi[udst[j]]++] = j; ol[ooff[usrc[j]] + fo[usrc[j]]++] = j; }
    /* a min-heap of free items by index (= item order) */
    int *heap, nh = 0, ndone = 0, scan = 0;
    QR__GL_NEW(tmp, heap, m);
    for (int i = 0; i < m; i++) if (!deg[i]) heap[nh++] = i;   /* ascending: already a heap */
    while (ndone < m) {
        int x;
        if (nh) {
            x = heap[0];
            heap[0] = heap[--nh];
            for (int p = 0;;) {
                int c = 2 * p + 1;
                if (c >= nh) break;
                if (c + 1 < nh && heap[c + 1] < heap[c]) c++;
                if (heap[p] <= heap[c]) break;
                int t = heap[p]; heap[p] = heap[c]; heap[c] = t; p = c;
            }
            if (done[x]) continue;
        } else {
            while (done[scan]) scan++;
            x = scan;
            for (int j = io[x]; j < io[x + 1]; j++) if (!done[usrc[il[j]]]) urev[il[j]] = true;
            deg[x] = 0;
        }
        done[x] = true;
        ndone++;
        for (int j = ooff[x]; j < ooff[x + 1]; j++) {
            int u = ol[j], t = udst[u];
            if (urev[u] || done[t]) continue;
            if (!--deg[t]) {
                int c = nh++;
                heap[c] = t;
                while (c && heap[(c - 1) / 2] > heap[c]) { int tt = heap[c]; heap[c] = heap[(c - 1) / 2]; heap[(c - 1) / 2] = tt; c = (c - 1) / 2; }
            }
        }
    }
    for (int j = 0; j < nu; j++) if (urev[j]) { int t = usrc[j]; usrc[j] = udst[j]; udst[j] = t; }
    return QR_OK;
}

/* Lays out group g's content (its items, its ports, its segments as one flat layout; one layout
 * edge per pair of items): the items' local positions, the segments' points, and the group's
 * size (or, for the root, the drawing's). */
static QrStatus qr__gl_group(QrGlNest *c, int g) {
    const QrGlInput *in = c->in;
    QrGlLayout *o = c->o;
    QrArena *tmp = c->tmp;
    int m0 = c->cnt[g], m = m0 + 2;
    const int *it = c->items + c->istart[g];
    float *w, *h;
    QR__GL_NEW(tmp, w, m); QR__GL_NEW(tmp, h, m);
    for (int i = 0; i < m0; i++) { int s = qr__gl_slot(c, it[i]); w[i] = c->iw[s]; h[i] = c->ih[s]; }
    int pin = c->has_in[g] ? m0 : -1, pout = c->has_out[g] ? m0 + c->has_in[g] : -1;   /* unused ports are left out */
    m = m0 + c->has_in[g] + c->has_out[g];
    for (int i = m0; i < m; i++) { w[i] = QR__GL_DUMMY_W; h[i] = 0; }
    int k = c->eoff[g + 1] - c->eoff[g];
    QrGlPair *pr;
    QR__GL_NEW(tmp, pr, k);
    int kk = 0;
    for (int j = 0; j < k; j++) {
        int sgi = c->elist[c->eoff[g] + j];
        int b = c->sg_b[sgi] == m0 + 1 ? pout : c->sg_b[sgi];
        pr[kk++] = (QrGlPair){ c->sg_a[sgi], b, sgi };
    }
    qsort(pr, (size_t)kk, sizeof *pr, qr__gl_pair_cmp);
    int nu = 0, *usrc, *udst, *umap;
    bool *urev;
    QR__GL_NEW(tmp, usrc, kk); QR__GL_NEW(tmp, udst, kk); QR__GL_NEW(tmp, umap, kk); QR__GL_NEW(tmp, urev, kk);
    for (int j = 0; j < kk; j++) {
        if (!j || pr[j].a != pr[j - 1].a || pr[j].b != pr[j - 1].b) { usrc[nu] = pr[j].a; udst[nu] = pr[j].b; nu++; }
        umap[j] = nu - 1;
    }
    QR_TRY(qr__gl_acyclic(tmp, m, nu, usrc, udst, urev));
    QrGlFlat f = { .n = m, .w = w, .h = h, .ne = nu, .src = usrc, .dst = udst, .gap_x = c->gx, .gap_y = c->gy, .port_in = pin,
                   .port_out = pout, .sweeps = in->sweeps < 0 ? 0 : in->sweeps > 0 ? in->sweeps : QR__GL_MAX_SWEEPS };
    QR_TRY(qr__gl_flat(&f, tmp, tmp));
    o->n_dummy += f.n_dummy;
    o->crossings += f.crossings;
    if (g == c->R) o->n_layers = f.n_layers;
    for (int i = 0; i < m0; i++) { int s = qr__gl_slot(c, it[i]); c->lcx[s] = f.cx[i]; c->ltop[s] = f.top[i]; }
    for (int j = 0; j < kk; j++) {
        int sgi = pr[j].e, u = umap[j], e = c->seg_edge[sgi];
        c->spts[sgi] = f.pts + 2 * f.pt_off[u];
        c->snp[sgi] = f.pt_off[u + 1] - f.pt_off[u];
        if (g == c->lca[e]) o->reversed[e] = urev[u];
    }
    if (g != c->R) {
        int n = c->n;
        float pad = c->pad;
        c->iw[n + g] = QR_MAX(f.width + 2 * pad, 80);
        c->ih[n + g] = f.height + 2 * pad + c->head;
        /* centre a content narrower than the minimum frame */
        float shift = (c->iw[n + g] - 2 * pad - f.width) / 2;
        for (int i = 0; i < m0; i++) c->lcx[qr__gl_slot(c, it[i])] += shift;
        for (int q = 0; q < f.pt_off[nu]; q++) f.pts[2 * q] += shift;
    } else {
        o->width = f.width;
        o->height = f.height;
    }
    return QR_OK;
}

/* Absolute coordinates, top-down: every group's frame and content origin, every node's box. */
static QrStatus qr__gl_place(QrGlNest *c) {
    const QrGlInput *in = c->in;
    QrGlLayout *o = c->o;
    int n = c->n, G = c->G;
    float *ox, *oy;
    QR__GL_NEW(c->tmp, ox, G + 1); QR__GL_NEW(c->tmp, oy, G + 1);
    for (int gi = G; gi >= 0; gi--) {
        int g = c->gorder[gi];
        if (g != c->R) {
            int p = c->gpar[g], s = n + g;
            o->gx[g] = ox[p] + c->lcx[s] - c->iw[s] / 2;
            o->gy[g] = oy[p] + c->ltop[s];
            o->gw[g] = c->iw[s];
            o->gh[g] = c->ih[s];
            ox[g] = o->gx[g] + c->pad;
            oy[g] = o->gy[g] + c->pad + c->head;
        }
    }
    for (int v = 0; v < n; v++) { o->x[v] = ox[c->ng[v]] + c->lcx[v] - in->w[v] / 2; o->y[v] = oy[c->ng[v]] + c->ltop[v]; }
    c->ox = ox; c->oy = oy;
    return QR_OK;
}

/* Every edge's polyline: its segments joined (a reversed one, drawn against its direction across
 * the lowest group, goes straight from its source to its target's group and back: no ports). */
static QrStatus qr__gl_polylines(QrGlNest *c) {
    const QrGlInput *in = c->in;
    QrGlLayout *o = c->o;
    int ne = c->ne;
    const int *sg_off = c->sg_off, *sg_g = c->sg_g, *lca = c->lca, *snp = c->snp;
    float *const *spts = c->spts;
    const float *ox = c->ox, *oy = c->oy;
    int np = 0;
    for (int e = 0; e < ne; e++) {
        o->pt_off[e] = np;
        if (sg_off[e + 1] == sg_off[e]) continue;
        np += 2;
        for (int k = sg_off[e]; k < sg_off[e + 1]; k++) np += snp[k];
    }
    QR__GL_NEW(&o->arena, o->pts, 2 * np + 2);
    np = 0;
    for (int e = 0; e < ne; e++) {
        int start = np;
        o->pt_off[e] = np;
        if (sg_off[e + 1] == sg_off[e]) continue;
        int u = in->src[e], v = in->dst[e];
        float *P = o->pts;
#define QR__GL_PT(X, Y) do { float px_ = (X), py_ = (Y); \
        if (np == start || fabsf(P[2 * np - 2] - px_) > 0.01f || fabsf(P[2 * np - 1] - py_) > 0.01f) { P[2 * np] = px_; P[2 * np + 1] = py_; np++; } } while (0)
        QR__GL_PT(o->x[u] + in->w[u] / 2, o->y[u] + in->h[u]);
        if (o->reversed[e]) {
            int k = sg_off[e];
            while (sg_g[k] != lca[e]) k++;
            for (int q = snp[k] - 1; q >= 0; q--) QR__GL_PT(ox[lca[e]] + spts[k][2 * q], oy[lca[e]] + spts[k][2 * q + 1]);
        } else {
            for (int k = sg_off[e]; k < sg_off[e + 1]; k++)
                for (int q = 0; q < snp[k]; q++) QR__GL_PT(ox[sg_g[k]] + spts[k][2 * q], oy[sg_g[k]] + spts[k][2 * q + 1]);
        }
        QR__GL_PT(o->x[v] + in->w[v] / 2, o->y[v]);
        if (np - start < 2) { P[2 * np] = P[2 * start]; P[2 * np + 1] = P[2 * start + 1]; np++; }   /* a drawn edge has two points */
#undef QR__GL_PT
    }
    o->pt_off[ne] = np;
    return QR_OK;
}

/* The nested layout: checks and the group tree, items, segments, every group laid out deepest
 * first (a group's size is known before its parent's layout), then absolute coordinates and
 * polylines. Results to o's arena; scratch to tmp. */
static QrStatus qr__gl_layout(const QrGlInput *in, QrGlLayout *o, QrArena *tmp) {
    QrGlNest c = { .in = in, .o = o, .tmp = tmp, .n = in->n, .G = in->n_groups, .ne = in->n_edges, .R = in->n_groups };
    c.gx = in->gap_x > 0 ? in->gap_x : 24;
    c.gy = in->gap_y > 0 ? in->gap_y : 36;
    c.pad = in->pad > 0 ? in->pad : 10;
    c.head = in->head > 0 ? in->head : 20;
    int n = c.n, G = c.G, ne = c.ne;
    o->n = n; o->n_groups = G; o->n_edges = ne;
    QrArena *A = &o->arena;
    QR__GL_NEW(A, o->x, n); QR__GL_NEW(A, o->y, n);
    QR__GL_NEW(A, o->gx, G); QR__GL_NEW(A, o->gy, G); QR__GL_NEW(A, o->gw, G); QR__GL_NEW(A, o->gh, G);
    QR__GL_NEW(A, o->pt_off, ne + 1); QR__GL_NEW(A, o->reversed, ne); QR__GL_NEW(A, o->edge_group, ne);
    QR_TRY(qr__gl_tree(&c));
    QR_TRY(qr__gl_topo(&c));
    QR_TRY(qr__gl_items(&c));
    QR_TRY(qr__gl_segments(&c));
    QR_TRY(qr__gl_group_order(&c));
    for (int gi = 0; gi <= G; gi++) QR_TRY(qr__gl_group(&c, c.gorder[gi]));
    QR_TRY(qr__gl_place(&c));
    return qr__gl_polylines(&c);
}

static QrStatus qr_gl_layout(const QrGlInput *in, QrGlLayout *out) {
    memset(out, 0, sizeof *out);
    QrArena tmp = {0};
    QrStatus st = qr__gl_layout(in, out, &tmp);
    qr_arena_free(&tmp);
    if (st != QR_OK) qr_gl_free(out);
    return st;
}

/* ==== the collapsed overview ================================================================ */

static QrStatus qr_gl_overview(const QrGlInput *in, int open_depth, const float *tile_w, const float *tile_h, QrArena *a,
                               QrGlOverview *out) {
    memset(out, 0, sizeof *out);
    int n = in->n, G = in->n_groups;
    int *depth, *top, *onew, *bnode, *bgroup, *rep, *gof;
    QR__GL_NEW(a, depth, G); QR__GL_NEW(a, top, G); QR__GL_NEW(a, onew, G);
    QR__GL_NEW(a, bnode, n + G); QR__GL_NEW(a, bgroup, n + G); QR__GL_NEW(a, rep, n); QR__GL_NEW(a, gof, G);
    /* depth (1 = top level) and the outermost collapsed ancestor of every group (-1: open) */
    for (int g = 0; g < G; g++) {
        int d = 0, t = -1;
        for (int x = g; x >= 0; x = in->group_parent[x]) d++;
        depth[g] = d;
        for (int x = g; x >= 0; x = in->group_parent[x]) {
            int dx = 0;
            for (int y = x; y >= 0; y = in->group_parent[y]) dx++;
            if (dx > open_depth) t = x;
        }
        top[g] = t;
    }
    int ng = 0, nb = 0;
    for (int g = 0; g < G; g++) { onew[g] = depth[g] <= open_depth ? ng : -1; if (depth[g] <= open_depth) gof[ng++] = g; }
    int *tile_box;
    QR__GL_NEW(a, tile_box, G);
    for (int g = 0; g < G; g++) tile_box[g] = -1;
    for (int v = 0; v < n; v++) {
        int g = in->node_group ? in->node_group[v] : -1, t = g >= 0 ? top[g] : -1;
        if (t < 0) { bnode[nb] = v; bgroup[nb] = -1; rep[v] = nb++; continue; }
        if (tile_box[t] < 0) { tile_box[t] = nb; bnode[nb] = -1; bgroup[nb] = t; nb++; }
        rep[v] = tile_box[t];
    }
    float *w, *h;
    int *bg, *gp, *src, *dst, ne = 0;
    QR__GL_NEW(a, w, nb); QR__GL_NEW(a, h, nb); QR__GL_NEW(a, bg, nb); QR__GL_NEW(a, gp, ng);
    QR__GL_NEW(a, src, in->n_edges); QR__GL_NEW(a, dst, in->n_edges);
    for (int b = 0; b < nb; b++) {
        if (bnode[b] >= 0) {
            int v = bnode[b], g = in->node_group ? in->node_group[v] : -1;
            w[b] = in->w[v]; h[b] = in->h[v]; bg[b] = g >= 0 ? onew[g] : -1;
        } else {
            int t = bgroup[b], p = in->group_parent[t];
            w[b] = tile_w[t]; h[b] = tile_h[t]; bg[b] = p >= 0 ? onew[p] : -1;
        }
    }
    for (int o = 0; o < ng; o++) { int p = in->group_parent[gof[o]]; gp[o] = p >= 0 ? onew[p] : -1; }
    /* edges between boxes, each pair once (a hash of the pairs would do; sorting is enough here) */
    QrGlPair *pr;
    QR__GL_NEW(a, pr, in->n_edges);
    int np = 0;
    for (int e = 0; e < in->n_edges; e++) {
        int s = rep[in->src[e]], d = rep[in->dst[e]];
        if (s != d) pr[np++] = (QrGlPair){ s, d, e };
    }
    qsort(pr, (size_t)np, sizeof *pr, qr__gl_pair_cmp);
    for (int k = 0; k < np; k++)
        if (!k || pr[k].a != pr[k - 1].a || pr[k].b != pr[k - 1].b) { src[ne] = pr[k].a; dst[ne++] = pr[k].b; }
    out->in = (QrGlInput){ .n = nb, .w = w, .h = h, .n_edges = ne, .src = src, .dst = dst, .n_groups = ng, .node_group = bg,
                           .group_parent = gp, .gap_x = in->gap_x, .gap_y = in->gap_y, .pad = in->pad, .head = in->head,
                           .sweeps = in->sweeps };
    out->box_node = bnode;
    out->box_group = bgroup;
    out->group_of = gof;
    return QR_OK;
}

/* ==== the HTML section ===================================================================== */

static const char qr__gl_css[] =
".qg-bar{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:8px 0;font-size:14px}\n"
".qg-bar select,.qg-bar input[type=search]{font:inherit;padding:4px 8px;border:1px solid #cbd5e1;border-radius:6px;"
"background:#fff}\n"
".qg-bar button{font:inherit;font-size:13px;padding:4px 10px;border:1px solid #cbd5e1;border-radius:6px;"
"background:#f8fafc;cursor:pointer}\n"
".qg-found{color:var(--muted);font-size:13px}\n"
".qg-legend{display:flex;gap:8px;align-items:center;font-size:13px;color:var(--muted);flex-wrap:wrap}\n"
".qg-grad{display:inline-block;width:160px;height:12px;border-radius:3px;"
"background:linear-gradient(90deg,hsl(0,70%,72%),hsl(60,70%,76%),hsl(120,70%,80%))}\n"
".qg-grey{display:inline-block;width:14px;height:12px;border-radius:3px;background:#e5e7eb;border:1px solid #94a3b8}\n"
".qg-view{height:72vh;border:1px solid var(--line);border-radius:8px;margin:8px 0;background:#fff;overflow:hidden}\n"
".qg-svg{width:100%;height:100%;cursor:grab;touch-action:none;font:11px system-ui,-apple-system,\"Segoe UI\",Roboto,"
"\"DejaVu Sans\",Arial,sans-serif;user-select:none}\n"
".qg-e,.qg-qe{fill:none;stroke:#94a3b8;stroke-width:1.2}.qg-e.qg-back,.qg-qe.qg-back{stroke-dasharray:5 3}\n"
".qg-n.qg-qn rect{fill:#ede9fe;stroke:#7c3aed}.qg-n.qg-qn text.qg-o{fill:#6d28d9}\n"
".qg-n{cursor:pointer}.qg-n rect{fill:#e5e7eb;stroke:#475569;stroke-width:1}\n"
".qg-n text{fill:#0f172a}.qg-n text.qg-o{fill:#475569;font-size:10px}\n"
".qg-q{display:none}.qg-showqs .qg-q{display:inline}.qg-n text.qg-q{fill:#6d28d9;font-size:10px}\n"
".qg-worst rect{stroke:#b91c1c;stroke-width:2;stroke-dasharray:4 2}\n"
".qg-first rect{stroke:#b91c1c;stroke-width:3.5;stroke-dasharray:none}\n"
".qg-n text.qg-b{font-weight:700;fill:#9a3412}\n"
".qg-n rect.qg-sb0{fill:#4c78a8}.qg-n rect.qg-sb1{fill:#f58518}.qg-n rect.qg-sb2{fill:#54a24b}.qg-n rect.qg-sb3{fill:#e45756}"
".qg-n .qg-sb rect{stroke:none}\n"
".qg-hit rect{stroke:#2563eb;stroke-width:3;stroke-dasharray:none}.qg-sel rect{stroke:#0f172a;stroke-width:3}\n"
".qg-fr rect{fill:rgba(148,163,184,.07);stroke:#cbd5e1;stroke-dasharray:3 3}\n"
".qg-fr text{fill:#64748b;cursor:pointer}\n"
".qg-ot{cursor:pointer}.qg-ot rect{fill:#e5e7eb;stroke:#475569;stroke-width:1.5}.qg-ot text{fill:#0f172a;font-weight:600}"
".qg-ot text.qg-o{font-weight:400;fill:#475569;font-size:10px}\n"
".qg-t{cursor:pointer}.qg-t rect{fill:#e5e7eb;stroke:#475569;stroke-width:1.5}"
".qg-t text{fill:#0f172a;font-size:13px;font-weight:600}\n"
".qg-panel{border:1px solid var(--line);border-radius:8px;padding:10px 14px;margin:8px 0;background:#f8fafc;"
"font-size:13px;overflow-wrap:anywhere}\n"
".qg-panel p{margin:4px 0}.qg-panel table{border-collapse:collapse;margin:6px 0}"
".qg-panel th,.qg-panel td{padding:1px 12px 1px 0;text-align:left;vertical-align:top}"
".qg-panel th{font-weight:400;color:var(--muted)}\n"
".qg-link{margin-left:4px}\n"
"@media print{.qg-bar,.qg-panel{display:none}.qg-view{height:auto}}\n";

static const char qr__gl_js[] =
"(function(){\"use strict\";\n"
"var root=document.getElementById(\"qg\");if(!root)return;\n"
"var D=JSON.parse(root.querySelector(\".qg-data\").textContent);\n"
"var svg=root.querySelector(\".qg-svg\"),W=+root.getAttribute(\"data-w\"),H=+root.getAttribute(\"data-h\");\n"
"var sel=root.querySelector(\".qg-metric\"),panel=root.querySelector(\".qg-panel\"),find=root.querySelector(\".qg-search\"),\n"
"found=root.querySelector(\".qg-found\"),lname=root.querySelector(\".qg-lname\"),lmin=root.querySelector(\".qg-lmin\"),\n"
"lmax=root.querySelector(\".qg-lmax\");\n"
"function all(s,r){return Array.prototype.slice.call((r||svg).querySelectorAll(s));}\n"
"var nodes=all(\".qg-n\"),edges=all(\".qg-e\"),frames=all(\".qg-main .qg-fr\"),tiles=all(\".qg-t\"),G=D.gp.length,col=[],memb=[],g,x,d;\n"
"var mainv=svg.querySelector(\".qg-main\"),qv=svg.querySelector(\".qg-qv\"),ov=svg.querySelector(\".qg-ov\"),W0=W,H0=H,qon=false,\n"
" cur=ov?\"ov\":\"main\",prev=cur,otiles=all(\".qg-ot\");\n"
"function live(n){var q=!!n.closest(\".qg-qv\"),o=!!n.closest(\".qg-ov\");return cur===\"qv\"?q:(!q&&!o);}\n"
"function mode(m){cur=m;mainv.style.display=m===\"main\"?\"\":\"none\";if(qv)qv.style.display=m===\"qv\"?\"\":\"none\";\n"
" if(ov)ov.style.display=m===\"ov\"?\"\":\"none\";var g=m===\"qv\"?qv:m===\"ov\"?ov:null;\n"
" W=g?+g.getAttribute(\"data-w\"):W0;H=g?+g.getAttribute(\"data-h\"):H0;start();}\n"
"function tomain(){if(cur===\"main\")return;if(qon){qon=false;root.querySelector(\".qg-showq\").checked=false;svg.classList.remove(\"qg-showqs\");}mode(\"main\");}\n"
"for(g=0;g<G;g++){for(d=0,x=g;x>=0;x=D.gp[x])d++;col.push(D.open>=0&&d>D.open);memb.push([]);}\n"
"nodes.forEach(function(n){for(var k=+n.getAttribute(\"data-g\");k>=0;k=D.gp[k])memb[k].push(n);});\n"
"function hid(k,self){for(var y=self?k:D.gp[k];y>=0;y=D.gp[y])if(col[y])return true;return false;}\n"
"function vis(){\n"
" nodes.forEach(function(n){var k=+n.getAttribute(\"data-g\");n.style.display=k>=0&&hid(k,true)?\"none\":\"\";});\n"
" edges.forEach(function(e){var k=+e.getAttribute(\"data-g\");e.style.display=k>=0&&hid(k,true)?\"none\":\"\";});\n"
" frames.forEach(function(f){f.style.display=hid(+f.getAttribute(\"data-g\"),true)?\"none\":\"\";});\n"
" tiles.forEach(function(t){var k=+t.getAttribute(\"data-g\");t.style.display=col[k]&&!hid(k,false)?\"\":\"none\";});}\n"
"function colour(t){return t===null?\"#e5e7eb\":\"hsl(\"+Math.round(120*t)+\",70%,\"+Math.round(72+8*t)+\"%)\";}\n"
"function fmt(v){return v===null||v===undefined?\"\":Math.abs(v)>=1e5||(Math.abs(v)<1e-3&&v!==0)?v.toExponential(3):String(+v.toPrecision(6));}\n"
"function metric(k){var m=D.m[k],lo=Infinity,hi=-Infinity;\n"
" m.v.forEach(function(v){if(v!==null&&isFinite(v)){if(v<lo)lo=v;if(v>hi)hi=v;}});\n"
" function t(r){var v=r>=0?m.v[r]:null;if(v===null||v===undefined||v!==v)return null;\n"
"  if(!isFinite(v))return (v>0)===!!m.hb?1:0;var u=hi>lo?(v-lo)/(hi-lo):1;return m.hb?u:1-u;}\n"
" nodes.forEach(function(n){if(n.classList.contains(\"qg-qn\"))return;var u=t(+n.getAttribute(\"data-row\"));n.querySelector(\"rect\").style.fill=colour(u);\n"
"  n.setAttribute(\"data-t\",u===null?\"\":u.toFixed(3));});\n"
" tiles.concat(otiles).forEach(function(tl){var w=null;memb[+tl.getAttribute(\"data-g\")].forEach(function(n){\n"
"  var u=t(+n.getAttribute(\"data-row\"));if(u!==null&&(w===null||u<w))w=u;});tl.querySelector(\"rect\").style.fill=colour(w);});\n"
" lname.textContent=m.n+\":\";var ok=lo<=hi;lmin.textContent=ok?\"worst \"+fmt(m.hb?lo:hi):\"no values\";\n"
" lmax.textContent=ok?\"best \"+fmt(m.hb?hi:lo):\"\";}\n"
"D.m.forEach(function(m,i){var o=document.createElement(\"option\");o.value=i;o.textContent=m.n;sel.appendChild(o);});\n"
"sel.value=String(D.d);sel.addEventListener(\"change\",function(){metric(+sel.value);});\n"
"var vb={x:0,y:0,w:W,h:H},RD=0.8;\n"
"function setvb(){svg.setAttribute(\"viewBox\",vb.x+\" \"+vb.y+\" \"+vb.w+\" \"+vb.h);}\n"
"function shown(n){var r=n.getBoundingClientRect();return r.width>0&&r.height>0;}\n"
"function mark(){var f=all(\".qg-first\").filter(function(n){return live(n)&&shown(n);})[0];if(f)return f;\n"
" var m=all(\".qg-main .qg-first\")[0],ts=cur===\"ov\"?otiles:cur===\"main\"?tiles:[];\n"
" for(var k=m?+m.getAttribute(\"data-g\"):-1;k>=0;k=D.gp[k]){var t=ts.filter(function(x){return +x.getAttribute(\"data-g\")===k&&shown(x);})[0];if(t)return t;}\n"
" var top=null,ty=Infinity;nodes.concat(tiles,otiles).forEach(function(n){if(!live(n)||!shown(n))return;var y=n.getBoundingClientRect().top;\n"
"  if(y<ty){ty=y;top=n;}});return top;}\n"
"function fit(){var r=svg.getBoundingClientRect();if(!(r.width>0&&r.height>0)){vb={x:0,y:0,w:W,h:H};setvb();return;}\n"
" var s=Math.min(r.width/W,r.height/H);if(s>=RD){s=Math.min(s,1);vb={x:(W-r.width/s)/2,y:0,w:r.width/s,h:r.height/s};setvb();return;}\n"
" s=Math.max(Math.min(r.width/W,1),RD);var w=r.width/s,h=r.height/s,x=(W-w)/2,y=0;\n"
" vb={x:0,y:0,w:W,h:H};setvb();var f=mark();\n"
" if(f){var b=f.getBoundingClientRect(),m=svg.getScreenCTM(),p=svg.createSVGPoint();p.x=b.left+b.width/2;p.y=b.top+b.height/2;\n"
"  if(m){p=p.matrixTransform(m.inverse());if(w<W)x=Math.min(Math.max(p.x-w/2,0),W-w);y=Math.min(Math.max(p.y-h/3,0),Math.max(H-h,0));}}\n"
" vb={x:x,y:y,w:w,h:h};setvb();}\n"
"function start(){fit();}\n"
"function pos(n){var m=n.transform.baseVal.consolidate().matrix;return{x:m.e,y:m.f};}\n"
"function focus(n){var p=pos(n),r=svg.getBoundingClientRect(),w=Math.min(Math.max(W,300),900),\n"
" h=r.width>0?w*r.height/r.width:w;vb={x:p.x-w/2+60,y:p.y-h/2,w:w,h:h};setvb();}\n"
"function pt(e){var p=svg.createSVGPoint(),m=svg.getScreenCTM();p.x=e.clientX;p.y=e.clientY;return m?p.matrixTransform(m.inverse()):p;}\n"
"svg.addEventListener(\"wheel\",function(e){e.preventDefault();var p=pt(e),k=e.deltaY<0?1/1.2:1.2;\n"
" vb.x=p.x-(p.x-vb.x)*k;vb.y=p.y-(p.y-vb.y)*k;vb.w*=k;vb.h*=k;setvb();},{passive:false});\n"
"var drag=null;\n"
"svg.addEventListener(\"pointerdown\",function(e){drag={x:e.clientX,y:e.clientY,vx:vb.x,vy:vb.y,moved:false};});\n"
"svg.addEventListener(\"pointermove\",function(e){if(!drag)return;var m=svg.getScreenCTM(),s=m&&m.a?m.a:1;\n"
" if(Math.abs(e.clientX-drag.x)+Math.abs(e.clientY-drag.y)>3)drag.moved=true;\n"
" vb.x=drag.vx-(e.clientX-drag.x)/s;vb.y=drag.vy-(e.clientY-drag.y)/s;setvb();});\n"
"window.addEventListener(\"pointerup\",function(){setTimeout(function(){drag=null;},0);});\n"
"function reveal(n){for(var k=+n.getAttribute(\"data-g\");k>=0;k=D.gp[k])col[k]=false;vis();}\n"
"var tbl=D.tid&&document.getElementById(D.tid);\n"
"tbl=tbl&&tbl.querySelector(\"table.qr-table\");\n"
"function rowOf(r){if(!tbl||r<0)return null;for(var i=0,b=tbl.tBodies[0].rows;i<b.length;i++)\n"
" if(b[i].cells[0]&&b[i].cells[0].textContent.trim()===String(r))return b[i];return null;}\n"
"function add(p,tag,text,cls){var e=document.createElement(tag);if(text!==undefined)e.textContent=text;if(cls)e.className=cls;p.appendChild(e);return e;}\n"
"function show(n){var r=+n.getAttribute(\"data-row\");panel.textContent=\"\";\n"
" nodes.forEach(function(o){o.classList.remove(\"qg-sel\");});n.classList.add(\"qg-sel\");\n"
" add(panel,\"strong\",n.getAttribute(\"data-node\"));add(panel,\"span\",\" \\u00b7 \"+n.querySelector(\".qg-o\").textContent);\n"
" var tr=rowOf(r);\n"
" if(tr){var th=tbl.tHead.rows[0].cells,t=add(panel,\"table\",\"\",\"qg-row\"),b=add(t,\"tbody\");\n"
"  for(var i=0;i<th.length&&i<tr.cells.length;i++){var v=tr.cells[i].textContent.replace(/ \\u2316$/,\"\");if(v===\"\")continue;\n"
"   var row=add(b,\"tr\");add(row,\"th\",th[i].textContent);add(row,\"td\",v);}\n"
"  var a=add(panel,\"a\",\"Go to the per-layer row\");a.href=\"#\"+D.tid;\n"
"  a.addEventListener(\"click\",function(){tr.scrollIntoView();tr.style.outline=\"2px solid #2563eb\";});}\n"
" else add(panel,\"p\",r>=0?\"Row \"+r+\" of the per-layer table.\":n.classList.contains(\"qg-qn\")?\"A quantizer node of the analysis model \"+\n"
"  \"(folded into the edges when Q/DQ nodes are off).\":\"No row in the per-layer table: this node has no matched analysis value.\");\n"
" var q=n.querySelector(\".qg-q\");if(q)add(panel,\"p\",\"Quantizers: \"+q.textContent);\n"
" var sb=tr&&tr.querySelector(\".qr-sbar\");if(sb){var sp=add(panel,\"p\",\"Own error split: \"+sb.title+\" \");sp.appendChild(sb.cloneNode(true));}\n"
" [[\"data-s\",\"One-on sensitivity rank: \"],[\"data-f\",\"Advisor: \"],[\"data-w\",\"What-if: \"]].forEach(function(k){\n"
"  var v=n.getAttribute(k[0]);if(v)v.split(\"\\n\").forEach(function(l){add(panel,\"p\",k[1]+l);});});\n"
" var pl=n.getAttribute(\"data-p\");if(pl){var pp=add(panel,\"p\",\"Plots: \");pl.split(\"\\n\").forEach(function(u){\n"
"  var a=add(pp,\"a\",u.replace(/^plots\\//,\"\"));a.href=u.split(\"/\").map(encodeURIComponent).join(\"/\");add(pp,\"span\",\" \");});}\n"
" panel.hidden=false;}\n"
"nodes.forEach(function(n){n.addEventListener(\"click\",function(){if(drag&&drag.moved)return;show(n);});});\n"
"tiles.forEach(function(t){t.addEventListener(\"click\",function(){if(drag&&drag.moved)return;col[+t.getAttribute(\"data-g\")]=false;vis();});});\n"
"frames.forEach(function(f){f.querySelector(\"text\").addEventListener(\"click\",function(){col[+f.getAttribute(\"data-g\")]=true;vis();});});\n"
"find.addEventListener(\"input\",function(){var q=find.value.trim().toLowerCase(),k=0;\n"
" nodes.forEach(function(n){var h=q!==\"\"&&n.getAttribute(\"data-node\").toLowerCase().indexOf(q)>=0;n.classList.toggle(\"qg-hit\",h);if(h&&live(n))k++;});\n"
" found.textContent=q?k+\" found (Enter: show the first)\":\"\";});\n"
"find.addEventListener(\"keydown\",function(e){if(e.key!==\"Enter\")return;if(cur===\"ov\")mode(\"main\");\n"
" var n=nodes.filter(function(o){return o.classList.contains(\"qg-hit\")&&live(o);})[0];if(n){reveal(n);focus(n);show(n);}});\n"
"root.querySelector(\".qg-showq\").addEventListener(\"change\",function(e){svg.classList.toggle(\"qg-showqs\",e.target.checked);\n"
" if(!qv)return;qon=e.target.checked;if(qon){prev=cur;mode(\"qv\");}else mode(prev);});\n"
"root.querySelector(\".qg-fit\").addEventListener(\"click\",fit);\n"
"root.querySelector(\".qg-expand\").addEventListener(\"click\",function(){tomain();for(var k=0;k<G;k++)col[k]=false;vis();});\n"
"root.querySelector(\".qg-collapse\").addEventListener(\"click\",function(){tomain();for(var k=0;k<G;k++)col[k]=true;vis();});\n"
"var ob=root.querySelector(\".qg-ovb\");if(ob)ob.addEventListener(\"click\",function(){tomain();mode(\"ov\");});\n"
"otiles.forEach(function(t){t.addEventListener(\"click\",function(){if(drag&&drag.moved)return;var k=+t.getAttribute(\"data-g\"),n=memb[k][0];\n"
" mode(\"main\");col[k]=false;if(n){reveal(n);focus(n);}else vis();});});\n"
"if(tbl){var byrow={},byrowq={};nodes.forEach(function(n){var r=n.getAttribute(\"data-row\"),m=n.closest(\".qg-qv\")?byrowq:byrow;if(+r>=0&&!m[r])m[r]=n;});\n"
" Array.prototype.forEach.call(tbl.tBodies[0].rows,function(tr){var k=tr.cells[0]&&tr.cells[0].textContent.trim(),n=k&&byrow[k];\n"
"  if(!n||!tr.cells[1])return;var a=add(tr.cells[1],\"a\",\" \\u2316\",\"qg-link\");a.href=\"#graph\";a.title=\"Show in the graph\";\n"
"  a.addEventListener(\"click\",function(){if(cur===\"ov\")mode(\"main\");var m=qon&&byrowq[k]?byrowq[k]:n;reveal(m);focus(m);show(m);});});}\n"
"vis();metric(D.d);mode(cur);root.classList.add(\"qg-ready\");})();\n";

static void qr__gl_printf(QrHtml *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void qr__gl_printf(QrHtml *h, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    qr_html_raw(h, buf);
}

/* Text cut to max characters (UTF-8 aware) with an ellipsis, escaped. */
static void qr__gl_text_cut(QrHtml *h, const char *s, int max) {
    int chars = 0;
    const char *p = s;
    while (*p && chars < max) { p++; while ((*p & 0xC0) == 0x80) p++; chars++; }
    if (!*p) { qr_html_text(h, s); return; }
    char buf[512];
    size_t n = QR_MIN((size_t)(p - s), sizeof buf - 4);
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;   /* not inside a character */
    memcpy(buf, s, n);
    memcpy(buf + n, "\xe2\x80\xa6", 4);
    qr_html_text(h, buf);
}

/* A JSON number for the page script: 6 significant digits; NaN is null, infinities overflow to ±Infinity. */
static void qr__gl_num(QrHtml *h, double v) {
    if (v != v) { qr_html_raw(h, "null"); return; }
    if (isinf(v)) { qr_html_raw(h, v > 0 ? "1e999" : "-1e999"); return; }
    qr__gl_printf(h, "%.6g", v);
}

/* A JSON string inside <script>: '<' as \u003c so no "</script>" can close it. */
static void qr__gl_jstr(QrHtml *h, const char *s) {
    char buf[8];
    qr_html_raw(h, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') { buf[0] = '\\'; buf[1] = (char)*p; buf[2] = 0; }
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') snprintf(buf, sizeof buf, "\\u%04x", *p);
        else { buf[0] = (char)*p; buf[1] = 0; }
        qr_html_raw(h, buf);
    }
    qr_html_raw(h, "\"");
}

/* The box of a node: wide enough for its label and op type (within limits). */
static void qr_gl_box_size(const char *label, const char *op, float *w, float *h) {
    size_t n = QR_MAX(strlen(label ? label : ""), strlen(op ? op : ""));
    *w = QR_MIN(QR_MAX(12.0f + 6.4f * (float)n, 96.0f), 236.0f);
    *h = 54.0f;
}

/* Groups deeper than the returned depth open collapsed: every group open while at most
 * 150 boxes show; else the deepest depth that keeps them under 150 (at least the top level). */
static int qr__gl_open_depth(const QrGlInput *in, const int *gdepth) {
    int maxd = 0;
    for (int g = 0; g < in->n_groups; g++) maxd = QR_MAX(maxd, gdepth[g]);
    for (int d = maxd; d >= 0; d--) {
        int shown = 0;
        for (int v = 0; v < in->n; v++) {
            int g = in->node_group ? in->node_group[v] : -1;
            shown += g < 0 || gdepth[g] <= d;
        }
        for (int g = 0; g < in->n_groups; g++) shown += gdepth[g] == d + 1;
        if (shown <= 150) return d == maxd ? -1 : d;
    }
    return 0;
}

/* One node box: <g class="qg-n" data-node data-row data-g ...> with its label, op type, quantizer line,
 * sensitivity badge and split bar; qgroup >= -1: the Q/DQ drawing's group (data-qg, frames carry it too),
 * -2: none. */
static void qr__gl_node(QrHtml *h, const QrGlViewNode *nd, float x, float y, float w, float hh, int group, int qgroup, bool first,
                        bool bad, bool quant) {
    qr__gl_printf(h, "<g class=\"qg-n%s%s%s\" data-node=\"", bad ? " qg-worst" : "", first ? " qg-first" : "", quant ? " qg-qn" : "");
    qr_html_text(h, nd->name);
    qr__gl_printf(h, "\" data-row=\"%d\" data-g=\"%d\"", nd->row, group);
    if (qgroup >= -1) qr__gl_printf(h, " data-qg=\"%d\"", qgroup);
    if (nd->sens_rank > 0) qr__gl_printf(h, " data-s=\"%d\"", nd->sens_rank);
    if (nd->find && *nd->find) { qr_html_raw(h, " data-f=\""); qr_html_text(h, nd->find); qr_html_raw(h, "\""); }
    if (nd->whatif && *nd->whatif) { qr_html_raw(h, " data-w=\""); qr_html_text(h, nd->whatif); qr_html_raw(h, "\""); }
    if (nd->plots && *nd->plots) { qr_html_raw(h, " data-p=\""); qr_html_text(h, nd->plots); qr_html_raw(h, "\""); }
    qr__gl_printf(h, " transform=\"translate(%.1f,%.1f)\"><title>", x, y);
    qr_html_text(h, nd->name);
    qr__gl_printf(h, "</title><rect width=\"%.1f\" height=\"%.1f\" rx=\"5\"/><text x=\"6\" y=\"15\">", w, hh);
    int fit = (int)((w - 12) / 6.4f);
    qr__gl_text_cut(h, nd->label ? nd->label : nd->name, nd->sens_rank > 0 && nd->sens_rank <= 9 ? fit - 3 : fit);
    qr_html_raw(h, "</text><text class=\"qg-o\" x=\"6\" y=\"30\">");
    qr__gl_text_cut(h, nd->op_type ? nd->op_type : "", fit);
    qr_html_raw(h, "</text>");
    if (nd->quant && *nd->quant) {
        qr_html_raw(h, "<text class=\"qg-q\" x=\"6\" y=\"44\">");
        qr__gl_text_cut(h, nd->quant, fit);
        qr_html_raw(h, "</text>");
    }
    if (nd->sens_rank > 0 && nd->sens_rank <= 9)
        qr__gl_printf(h, "<text class=\"qg-b\" x=\"%.1f\" y=\"15\" text-anchor=\"end\">S%d</text>", w - 5, nd->sens_rank);
    double sum = 0;
    for (int k = 0; nd->has_split && k < 4; k++) if (nd->split[k] > 0 && isfinite(nd->split[k])) sum += nd->split[k];
    if (sum > 0 && isfinite(sum)) {     /* the error split: weight, input, output rounding, output clipping */
        float bx = 6, span = w - 12;
        qr_html_raw(h, "<g class=\"qg-sb\">");
        for (int k = 0; k < 4; k++) {
            if (!(nd->split[k] > 0) || !isfinite(nd->split[k])) continue;
            float bw = (float)(span * (nd->split[k] / sum));
            qr__gl_printf(h, "<rect class=\"qg-sb%d\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"4\"/>", k, bx, hh - 7, bw);
            bx += bw;
        }
        qr_html_raw(h, "</g>");
    }
    qr_html_raw(h, "</g>\n");
}

/* An edge's path (consecutive equal points left out). */
static void qr__gl_edge(QrHtml *h, const QrGlLayout *l, int e, const char *cls) {
    int a = l->pt_off[e], b = l->pt_off[e + 1];
    if (b - a < 2) return;
    qr__gl_printf(h, "<path class=\"%s%s\" data-g=\"%d\" d=\"", cls, l->reversed[e] ? " qg-back" : "", l->edge_group[e]);
    for (int k = a; k < b; k++) {
        float x = l->pts[2 * k], y = l->pts[2 * k + 1];
        if (k > a && k + 1 < b && x == l->pts[2 * (k - 1)] && y == l->pts[2 * (k - 1) + 1]) continue;
        qr__gl_printf(h, "%s%.1f %.1f", k == a ? "M" : "L", x, y);
    }
    qr_html_raw(h, "\"/>\n");
}

/* The "Q/DQ nodes" drawing (v->alt): the analysis model with its quantizer nodes, static frames, its
 * edges, its boxes (worst[row]: a worst layer's box). */
static void qr__gl_html_alt(QrHtml *h, const QrGlView *v, const bool *worst) {
    const QrGlAlt *q = v->alt;
    const QrGlLayout *ql = q->l;
    qr__gl_printf(h, "<g class=\"qg-qv\" style=\"display:none\" data-w=\"%.0f\" data-h=\"%.0f\">\n<g class=\"qg-qframes\">\n",
                  QR_MAX(ql->width, 10) + 20, QR_MAX(ql->height, 10) + 20);
    for (int g = 0; g < ql->n_groups; g++) {
        qr__gl_printf(h, "<g class=\"qg-fr\" data-qg=\"%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                      "rx=\"8\"/><text x=\"%.1f\" y=\"%.1f\">", g, ql->gx[g], ql->gy[g], ql->gw[g], ql->gh[g], ql->gx[g] + 6,
                      ql->gy[g] + 14);
        const char *nm = q->group_name[g], *sl = strrchr(nm, '/');
        qr__gl_text_cut(h, sl && sl[1] ? sl + 1 : nm, (int)(ql->gw[g] / 6.5f) - 1);
        qr_html_raw(h, "<title>");
        qr_html_text(h, nm);
        qr_html_raw(h, "</title></text></g>\n");
    }
    qr_html_raw(h, "</g>\n<g class=\"qg-qedges\">\n");
    for (int e = 0; e < ql->n_edges; e++) qr__gl_edge(h, ql, e, "qg-qe");
    qr_html_raw(h, "</g>\n<g class=\"qg-qnodes\">\n");
    for (int i = 0; i < ql->n; i++) {
        const QrGlViewNode *nd = &q->nodes[i];
        bool first = nd->row >= 0 && nd->row == v->first_drop_row, bad = nd->row >= 0 && nd->row < v->n_rows && worst[nd->row];
        qr__gl_node(h, nd, ql->x[i], ql->y[i], q->in->w[i], q->in->h[i], -1, q->in->node_group ? q->in->node_group[i] : -1, first,
                    bad, q->is_quant[i]);
    }
    qr_html_raw(h, "</g>\n</g>\n");
}

static void qr_gl_html(QrHtml *h, const QrGlLayout *l, const QrGlInput *in, const QrGlView *v) {
    int G = l->n_groups;
    int *gdepth = calloc((size_t)G + 1, sizeof *gdepth), *gcount = calloc((size_t)G + 1, sizeof *gcount);
    bool *worst = calloc((size_t)v->n_rows + 1, sizeof *worst);
    if (!gdepth || !gcount || !worst) { free(gdepth); free(gcount); free(worst); qr_html_raw(h, ""); return; }
    for (int g = 0; g < G; g++) for (int x = g; x >= 0; x = in->group_parent[x]) gdepth[g]++;
    for (int i = 0; i < l->n; i++)
        for (int g = in->node_group ? in->node_group[i] : -1; g >= 0; g = in->group_parent[g]) gcount[g]++;
    for (int k = 0; k < v->n_worst; k++) if (v->worst_rows[k] >= 0 && v->worst_rows[k] < v->n_rows) worst[v->worst_rows[k]] = true;
    int open = v->open_depth == -2 ? qr__gl_open_depth(in, gdepth) : v->open_depth;
    /* a graph that opens collapsed opens in its overview: the collapsed groups as tiles the size of a box */
    QrArena oa = {0};
    QrGlOverview ovw;
    QrGlLayout ol = {0};
    bool ovok = false;
    if (open >= 0 && G > 0) {
        float *tw = qr_arena_array(&oa, (size_t)G, sizeof *tw), *th = qr_arena_array(&oa, (size_t)G, sizeof *th);
        for (int g = 0; tw && th && g < G; g++) {
            const char *nm = v->group_name[g], *sl = strrchr(nm, '/');
            char lab[96];
            snprintf(lab, sizeof lab, "\xe2\x96\xb8 %s", sl && sl[1] ? sl + 1 : nm);
            qr_gl_box_size(lab, "0000 nodes", &tw[g], &th[g]);
        }
        ovok = tw && th && qr_gl_overview(in, open, tw, th, &oa, &ovw) == QR_OK && qr_gl_layout(&ovw.in, &ol) == QR_OK;
        if (!ovok) qr_err_clear();
    }
    float W = QR_MAX(l->width, 10) + 20, H = QR_MAX(l->height, 10) + 20;
    qr_html_raw(h, "<style>\n");
    qr_html_raw(h, qr__gl_css);
    qr_html_raw(h, "</style>\n");
    qr__gl_printf(h, "<div class=\"qg\" id=\"qg\" data-w=\"%.0f\" data-h=\"%.0f\">\n", W, H);
    qr_html_raw(h, "<div class=\"qg-bar\"><label>Colour by <select class=\"qg-metric\"></select></label>"
                   "<input type=\"search\" class=\"qg-search\" placeholder=\"Find a node\xe2\x80\xa6\" aria-label=\"Find a node\">"
                   "<span class=\"qg-found\"></span>"
                   "<label><input type=\"checkbox\" class=\"qg-showq\"> ");
    qr_html_raw(h, v->alt ? "Q/DQ nodes" : "quantizers");
    qr_html_raw(h, "</label>"
                   "<button type=\"button\" class=\"qg-fit\" title=\"The whole drawing when it fits at a readable size (80% or more); "
                   "else its width, not below 80%, from the first drop (or the top): drag or scroll for the rest\">Fit</button>"
                   "<button type=\"button\" class=\"qg-expand\">Expand all</button>"
                   "<button type=\"button\" class=\"qg-collapse\">Collapse all</button>");
    if (ovok) qr_html_raw(h, "<button type=\"button\" class=\"qg-ovb\">Overview</button>");
    qr_html_raw(h, "</div>\n"
                   "<div class=\"qg-legend\"><span class=\"qg-lname\"></span><span class=\"qg-lmin\"></span>"
                   "<span class=\"qg-grad\"></span><span class=\"qg-lmax\"></span>"
                   "<span class=\"qg-grey\"></span><span>no row</span>"
                   "<span>\xc2\xb7 thick red outline: first drop \xc2\xb7 dashed red: worst layers \xc2\xb7 S1, S2\xe2\x80\xa6: "
                   "most sensitive quantizers \xc2\xb7 a grey tile: a collapsed group (coloured by its worst member)</span></div>\n");
    qr__gl_printf(h, "<div class=\"qg-view\"><svg class=\"qg-svg\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                  "preserveAspectRatio=\"xMidYMin meet\" role=\"img\" aria-label=\"Model graph\">\n"
                  "<g transform=\"translate(10,10)\">\n<g class=\"qg-main\"%s>\n<g class=\"qg-frames\">\n", W, H,
                  ovok ? " style=\"display:none\"" : "");
    for (int g = 0; g < G; g++) {
        qr__gl_printf(h, "<g class=\"qg-fr\" data-g=\"%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"8\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\">\xe2\x96\xbe ", g, l->gx[g], l->gy[g], l->gw[g], l->gh[g], l->gx[g] + 6, l->gy[g] + 14);
        const char *nm = v->group_name[g], *sl = strrchr(nm, '/');
        qr__gl_text_cut(h, sl && sl[1] ? sl + 1 : nm, (int)(l->gw[g] / 6.5f) - 3);
        qr_html_raw(h, "<title>");
        qr_html_text(h, nm);
        qr_html_raw(h, " (click to collapse)</title></text></g>\n");
    }
    qr_html_raw(h, "</g>\n<g class=\"qg-edges\">\n");
    for (int e = 0; e < l->n_edges; e++) qr__gl_edge(h, l, e, "qg-e");
    qr_html_raw(h, "</g>\n<g class=\"qg-nodes\">\n");
    for (int i = 0; i < l->n; i++) {
        const QrGlViewNode *nd = &v->nodes[i];
        bool first = nd->row >= 0 && nd->row == v->first_drop_row, bad = nd->row >= 0 && nd->row < v->n_rows && worst[nd->row];
        qr__gl_node(h, nd, l->x[i], l->y[i], in->w[i], in->h[i], in->node_group ? in->node_group[i] : -1, -2, first, bad, false);
    }
    qr_html_raw(h, "</g>\n<g class=\"qg-tiles\">\n");
    for (int g = 0; g < G; g++) {
        qr__gl_printf(h, "<g class=\"qg-t\" data-g=\"%d\" style=\"display:none\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                      "height=\"%.1f\" rx=\"8\"/><text x=\"%.1f\" y=\"%.1f\">\xe2\x96\xb8 ", g, l->gx[g], l->gy[g], l->gw[g],
                      l->gh[g], l->gx[g] + 8, l->gy[g] + 20);
        const char *nm = v->group_name[g], *sl = strrchr(nm, '/');
        qr__gl_text_cut(h, sl && sl[1] ? sl + 1 : nm, (int)(l->gw[g] / 8.0f) - 8);
        qr__gl_printf(h, " (%d)<title>", gcount[g]);
        qr_html_text(h, nm);
        qr__gl_printf(h, ": %d nodes (click to expand)</title></text></g>\n", gcount[g]);
    }
    qr_html_raw(h, "</g>\n</g>\n");
    if (ovok) {     /* the overview: open groups' frames, edges, node boxes and the collapsed groups' tiles */
        qr__gl_printf(h, "<g class=\"qg-ov\" data-w=\"%.0f\" data-h=\"%.0f\">\n<g class=\"qg-oframes\">\n",
                      QR_MAX(ol.width, 10) + 20, QR_MAX(ol.height, 10) + 20);
        for (int o = 0; o < ol.n_groups; o++) {
            const char *nm = v->group_name[ovw.group_of[o]], *sl = strrchr(nm, '/');
            qr__gl_printf(h, "<g class=\"qg-fr\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"8\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\">", ol.gx[o], ol.gy[o], ol.gw[o], ol.gh[o], ol.gx[o] + 6, ol.gy[o] + 14);
            qr__gl_text_cut(h, sl && sl[1] ? sl + 1 : nm, (int)(ol.gw[o] / 6.5f) - 1);
            qr_html_raw(h, "<title>");
            qr_html_text(h, nm);
            qr_html_raw(h, "</title></text></g>\n");
        }
        qr_html_raw(h, "</g>\n<g class=\"qg-oedges\">\n");
        for (int e = 0; e < ol.n_edges; e++) qr__gl_edge(h, &ol, e, "qg-qe");
        qr_html_raw(h, "</g>\n<g class=\"qg-onodes\">\n");
        for (int b = 0; b < ol.n; b++) {
            float bw = ovw.in.w[b], bh = ovw.in.h[b];
            int i = ovw.box_node[b];
            if (i >= 0) {
                const QrGlViewNode *nd = &v->nodes[i];
                bool first = nd->row >= 0 && nd->row == v->first_drop_row, bad = nd->row >= 0 && nd->row < v->n_rows && worst[nd->row];
                qr__gl_node(h, nd, ol.x[b], ol.y[b], bw, bh, -1, -2, first, bad, false);
                continue;
            }
            int g = ovw.box_group[b];
            const char *nm = v->group_name[g], *sl = strrchr(nm, '/');
            qr__gl_printf(h, "<g class=\"qg-ot\" data-g=\"%d\" transform=\"translate(%.1f,%.1f)\"><title>", g, ol.x[b], ol.y[b]);
            qr_html_text(h, nm);
            qr__gl_printf(h, ": %d nodes (click to open)</title><rect width=\"%.1f\" height=\"%.1f\" rx=\"5\"/><text x=\"6\" y=\"15\">"
                          "\xe2\x96\xb8 ", gcount[g], bw, bh);
            qr__gl_text_cut(h, sl && sl[1] ? sl + 1 : nm, (int)((bw - 12) / 6.4f) - 2);
            qr__gl_printf(h, "</text><text class=\"qg-o\" x=\"6\" y=\"30\">%d nodes</text></g>\n", gcount[g]);
        }
        qr_html_raw(h, "</g>\n</g>\n");
    }
    qr_gl_free(&ol);
    qr_arena_free(&oa);
    if (v->alt) qr__gl_html_alt(h, v, worst);
    qr_html_raw(h, "</g>\n</svg></div>\n<div class=\"qg-panel\" hidden></div>\n");
    /* the data: metrics per row, the group tree, the collapsed depth */
    qr_html_raw(h, "<script type=\"application/json\" class=\"qg-data\">{\"m\":[");
    for (int k = 0; k < v->n_metrics; k++) {
        const QrGlMetric *m = &v->metrics[k];
        qr_html_raw(h, k ? ",\n{\"n\":" : "\n{\"n\":");
        qr__gl_jstr(h, m->name);
        qr__gl_printf(h, ",\"hb\":%d,\"v\":[", m->higher_better ? 1 : 0);
        for (int r = 0; r < v->n_rows; r++) { if (r) qr_html_raw(h, ","); qr__gl_num(h, m->values[r]); }
        qr_html_raw(h, "]}");
    }
    qr__gl_printf(h, "],\n\"d\":%d,\"open\":%d,\"tid\":", v->default_metric, open);
    qr__gl_jstr(h, v->table_id ? v->table_id : "");
    qr_html_raw(h, ",\"gp\":[");
    for (int g = 0; g < G; g++) qr__gl_printf(h, "%s%d", g ? "," : "", in->group_parent[g]);
    qr_html_raw(h, "]}</script>\n<script>\n");
    qr_html_raw(h, qr__gl_js);
    qr_html_raw(h, "</script>\n</div>\n");
    free(gdepth);
    free(gcount);
    free(worst);
}
