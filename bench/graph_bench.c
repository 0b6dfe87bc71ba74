/* bench/graph_bench — the graph view's cost on generated transformer-like graphs (not part
 * of make test): layout time (qr_gl_layout, median of `reps`) and the size of the view's HTML
 * (qr_gl_html with 20 per-layer metrics, as runall writes it: the full drawing and, since these graphs open
 * collapsed, the overview, whose layout qr_gl_html makes: html_ms) per node, for 500 to 4,000 nodes.
 * Build: make build/graph_bench   Run: ./build/graph_bench [reps] */
#define QR_TESTING 1
#include "../qreport.c"
#include <time.h>

static double gb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int gb_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Blocks of 20 nodes named like an exported transformer ("/model/layers.K/self_attn/q_proj/MatMul"):
 * attention (q, k, v, scores, softmax, context, projection) and MLP with residual adds. */
static int gb_graph(int target, QrArena *a, const char ***names, const char ***ops, int **src, int **dst, int *ne) {
    int blocks = target / 20, n = blocks * 20, cap = blocks * 40;
    *names = qr_arena_array(a, (size_t)n, sizeof **names);
    *ops = qr_arena_array(a, (size_t)n, sizeof **ops);
    *src = qr_arena_array(a, (size_t)cap, sizeof **src);
    *dst = qr_arena_array(a, (size_t)cap, sizeof **dst);
    static const char *const part[20][2] = {
        { "input_layernorm", "LayerNormalization" }, { "self_attn/q_proj", "MatMul" }, { "self_attn/q_proj", "Add" },
        { "self_attn/k_proj", "MatMul" }, { "self_attn/k_proj", "Add" }, { "self_attn/v_proj", "MatMul" },
        { "self_attn/v_proj", "Add" }, { "self_attn", "MatMul" }, { "self_attn", "Softmax" }, { "self_attn", "MatMul_1" },
        { "self_attn/o_proj", "MatMul" }, { "self_attn/o_proj", "Add" }, { "", "Add" }, { "post_attention_layernorm", "LayerNormalization" },
        { "mlp/gate_proj", "MatMul" }, { "mlp/up_proj", "MatMul" }, { "mlp/act", "Sigmoid" }, { "mlp", "Mul" },
        { "mlp/down_proj", "MatMul" }, { "", "Add_1" } };
    static const int edges[][2] = { {0,1},{1,2},{0,3},{3,4},{0,5},{5,6},{2,7},{4,7},{7,8},{8,9},{6,9},{9,10},{10,11},{11,12},
                                    {12,13},{13,14},{13,15},{14,16},{16,17},{15,17},{17,18},{18,19},{12,19} };
    int e = 0, prev = -1;
    for (int b = 0; b < blocks; b++) {
        int o = b * 20;
        for (int k = 0; k < 20; k++) {
            (*names)[o + k] = part[k][0][0] ? qr_arena_printf(a, "/model/layers.%d/%s/%s", b, part[k][0], part[k][1])
                                            : qr_arena_printf(a, "/model/layers.%d/%s", b, part[k][1]);
            (*ops)[o + k] = part[k][1];
        }
        for (int k = 0; k < QR_ARRAY_LEN(edges); k++) { (*src)[e] = o + edges[k][0]; (*dst)[e++] = o + edges[k][1]; }
        if (prev >= 0) { (*src)[e] = prev; (*dst)[e++] = o; (*src)[e] = prev; (*dst)[e++] = o + 12; }
        prev = o + 19;
    }
    *ne = e;
    return n;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    printf("nodes  edges  groups  layout_ms(median of %d)  html_ms(incl. the overview's layout)  html_bytes  bytes/node\n", reps);
    int sizes[] = { 500, 1000, 2000, 4000 };
    for (int s = 0; s < QR_ARRAY_LEN(sizes); s++) {
        QrArena a = {0};
        const char **names, **ops;
        int *src, *dst, ne;
        int n = gb_graph(sizes[s], &a, &names, &ops, &src, &dst, &ne);
        /* groups: /model/layers.K, its self_attn and mlp, and their *_proj (the bundle's rule gives the same tree) */
        int G = 0, *ng = qr_arena_array(&a, (size_t)n, sizeof *ng), *gp = qr_arena_array(&a, (size_t)n, sizeof *gp);
        const char **gname = qr_arena_array(&a, (size_t)n, sizeof *gname);
        float *w = qr_arena_array(&a, (size_t)n, sizeof *w), *h = qr_arena_array(&a, (size_t)n, sizeof *h);
        QrGlViewNode *vn = qr_arena_array(&a, (size_t)n, sizeof *vn);
        for (int b = 0; b < n / 20; b++) {
            int gb = G++, ga = G++, gm = G++;
            int sub[4];
            gp[gb] = -1; gp[ga] = gb; gp[gm] = gb;
            gname[gb] = qr_arena_printf(&a, "/model/layers.%d", b);
            gname[ga] = qr_arena_printf(&a, "/model/layers.%d/self_attn", b);
            gname[gm] = qr_arena_printf(&a, "/model/layers.%d/mlp", b);
            for (int j = 0; j < 4; j++) { sub[j] = G++; gp[sub[j]] = ga; }
            gname[sub[0]] = "q_proj"; gname[sub[1]] = "k_proj"; gname[sub[2]] = "v_proj"; gname[sub[3]] = "o_proj";
            static const int grp[20] = { 0, 3, 3, 4, 4, 5, 5, 1, 1, 1, 6, 6, 0, 0, 2, 2, 2, 2, 2, 0 };
            for (int k = 0; k < 20; k++) {
                int i = b * 20 + k, g = grp[k];
                ng[i] = g == 0 ? gb : g == 1 ? ga : g == 2 ? gm : sub[g - 3];
            }
        }
        for (int i = 0; i < n; i++) {
            const char *sl = strrchr(names[i], '/');
            vn[i] = (QrGlViewNode){ .name = names[i], .label = sl + 1, .op_type = ops[i], .row = i, .quant = "out int8 \xc2\xb7 W int8" };
            qr_gl_box_size(vn[i].label, ops[i], &w[i], &h[i]);
        }
        QrGlInput in = { .n = n, .w = w, .h = h, .n_edges = ne, .src = src, .dst = dst, .n_groups = G, .node_group = ng,
                         .group_parent = gp };
        double t[64];
        QrGlLayout l;
        for (int r = 0; r < reps && r < 64; r++) {
            double t0 = gb_now();
            if (qr_gl_layout(&in, &l) != QR_OK) { fprintf(stderr, "layout: %s\n", qr_err_msg()); return 1; }
            t[r] = gb_now() - t0;
            if (r + 1 < reps) qr_gl_free(&l);
        }
        qsort(t, (size_t)QR_MIN(reps, 64), sizeof *t, gb_cmp);
        QrGlMetric m[20];
        double *vals = qr_arena_array(&a, (size_t)n, sizeof *vals);
        for (int i = 0; i < n; i++) vals[i] = 0.99 + 0.01 * sin((double)i);   /* 6 significant digits, like the table's */
        for (int k = 0; k < 20; k++) m[k] = (QrGlMetric){ "metric", vals, true };
        QrGlView v = { .nodes = vn, .group_name = gname, .n_rows = n, .metrics = m, .n_metrics = 20, .first_drop_row = -1,
                       .open_depth = -2, .table_id = "compare" };
        QrHtml hh;
        qr_html_init(&hh, "bench");
        qr_html_section(&hh, "graph", "Graph view");
        size_t before = hh.len;
        double h0 = gb_now();
        qr_gl_html(&hh, &l, &in, &v);
        double th = gb_now() - h0;
        size_t bytes = hh.len - before;
        printf("%5d  %5d  %6d  %10.1f  %10.1f  %10zu  %8.0f\n", n, ne, G, 1e3 * t[QR_MIN(reps, 64) / 2], 1e3 * th, bytes,
               (double)bytes / n);
        qr_html_free(&hh);
        qr_gl_free(&l);
        qr_arena_free(&a);
    }
    return 0;
}
