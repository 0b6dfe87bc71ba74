/* bench/kern_bench — micro-benchmark of the GEMM kernels (not part of make test).
 * Prints GFLOP/s (float32) and GOP/s (8-/16-bit integer, 2 ops per multiply-add) per
 * kernel level and thread count at ResNet-like sizes, median of `reps` runs (wall, and per CPU
 * second of the process: other load on the machine disturbs that less).
 * Build: make build/bench_kern   Run: ./build/bench_kern [reps] [filter] (BENCH_SHAPE=word: shapes named so)
 * Model mode: ./build/bench_kern --model M.onnx INPUT.npy [reps] prints the median time of
 * a whole run (qr_run, after loading) and where it goes by operator type; BENCH_INT=1 runs the
 * int-mode lowering first (as `qreport run --mode int`, constants cached) and lists what stays
 * float, BENCH_NODES=1 adds a line per node (timed by QrRunOpts.node_sec: a fused chain counts
 * at its head; BENCH_TAP=1 times through a tap on every value instead, without fusion);
 * BENCH_PREP=1 gives the float run a constant cache that keeps packed convolution weights, as
 * `qreport run`'s does (default: none, the weights packed per call as in runall's analyses).
 * Depthwise mode: ./build/bench_kern --dw [reps] [level] times MobileNetV2's depthwise layers
 * per kernel level, one thread, or only the named level (avx512, ...): as ops/nn.c calls them,
 * f32_conv_m1_act (no steps) over the planes of one task at a time where the level has it,
 * else f32_conv_m1 plane by plane.
 * Convolution mode: ./build/bench_kern --conv C M H [KS [S]] [reps] [cold] times one float
 * convolution (C -> M channels, an H x H input, a KS x KS window of stride S, padding KS / 2,
 * bias and Clip(0, 6) fused) on the best level and QR_THREADS threads (default 1), its weights
 * packed as `qreport run` packs them (when the level's coc path takes them; else the GEMM path
 * reads them in place); cold 1 (default): before every call a read of twice the last-level
 * cache empties the caches and the input and output are touched again, so only the weights
 * come from memory, as in a model run; 0: hot. Median and minimum µs, GFLOP/s.
 * Cold B: BENCH_COLD=1 gives each float run its own copy of B, in rotation among copies that
 * together exceed the last-level cache by a quarter (from sysfs; 32 MB when unknown), so B
 * comes from memory as a model's weights do in a whole run, while A and C stay cached. */
#define QR_TESTING 1
#include "../qreport.c"

typedef struct { const char *name; int64_t M, N, K; } BenchShape;

/* (M = output channels, N = output pixels, K = C_in * kh * kw) of ResNet-18 convs at 224x224. */
static const BenchShape bench_shapes[] = {
    { "conv1 7x7/2", 64, 12544, 147 },  { "l1 3x3", 64, 3136, 576 },     { "l2 3x3", 128, 784, 1152 },
    { "l3 3x3", 256, 196, 2304 },       { "l4 3x3", 512, 49, 4608 },     { "l2 1x1 down", 128, 784, 64 },
    { "fc", 1, 1000, 512 },
    /* MobileNetV2 pointwise convs (1x1, N = H*W) */
    { "mbv2 pw 96<-16 112x112", 96, 12544, 16 }, { "mbv2 pw 16<-32 112x112", 16, 12544, 32 },
    { "mbv2 pw 24<-144 56x56", 24, 3136, 144 }, { "mbv2 pw 144<-24 56x56", 144, 3136, 24 },
    { "mbv2 pw 192<-32 28x28", 192, 784, 32 },  { "mbv2 pw 64<-384 14x14", 64, 196, 384 },
    { "mbv2 pw 960<-160 7x7", 960, 49, 160 },   { "mbv2 pw 160<-960 7x7", 160, 49, 960 },
    { "mbv2 pw 320<-960 7x7", 320, 49, 960 },   { "mbv2 pw 1280<-320 7x7", 1280, 49, 320 },
    /* transformer Linear layers (M = tokens, N = out features, K = in features): ViT-B/16, BERT-base at 128 */
    { "vit qkv", 197, 2304, 768 }, { "vit proj", 197, 768, 768 }, { "vit fc1", 197, 3072, 768 },
    { "vit fc2", 197, 768, 3072 }, { "bert proj", 128, 768, 768 }, { "bert fc1", 128, 3072, 768 },
    { "bert fc2", 128, 768, 3072 },
};

static int bench_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double bench_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

typedef enum { BENCH_F32, BENCH_Q8, BENCH_Q16 } BenchKind;

/* Cold B (BENCH_COLD): n copies of B, stride bytes apart; n = 0: B itself every run. */
typedef struct { unsigned char *copies; size_t stride; int64_t n; } BenchCold;

/* The last-level cache's bytes (sysfs), 32 MB when it cannot be read. */
static int64_t bench_llc_bytes(void) {
    int64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *fp = fopen(path, "r");
        if (!fp) continue;
        long long v = 0;
        char unit = 0;
        if (fscanf(fp, "%lld%c", &v, &unit) >= 1) {
            int64_t b = (int64_t)v * (unit == 'K' ? 1024 : unit == 'M' ? 1 << 20 : 1);
            best = QR_MAX(best, b);
        }
        fclose(fp);
    }
    return best > 0 ? best : (int64_t)32 << 20;
}

/* Copies of B (bytes long) that together exceed the LLC by a quarter; n = 0 when BENCH_COLD
 * is not set or they cannot be allocated. */
static BenchCold bench_cold_make(const void *B, size_t bytes) {
    BenchCold c = { NULL, qr__k_rup64(bytes), 0 };
    if (!getenv("BENCH_COLD")) return c;
    const int64_t n = QR_MAX((int64_t)2, qr__k_cdiv(bench_llc_bytes() * 5 / 4, (int64_t)c.stride));
    c.copies = qr_aligned_alloc(c.stride * (size_t)n);
    if (!c.copies) return c;
    for (int64_t i = 0; i < n; i++) memcpy(c.copies + (size_t)i * c.stride, B, bytes);
    c.n = n;
    return c;
}

static double bench_cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Median wall seconds of one GEMM of `kind` with table k; *cpu gets the median process CPU
 * seconds (all threads), which other load on the machine disturbs less. */
static double bench_run(const QrKernels *k, BenchKind kind, const BenchShape *s, int reps, void *A, void *B, void *C,
                        double *cpu, const BenchCold *cold) {
    double t[64], tc[64];
    reps = QR_MIN(reps, 64);
    /* the convolution orientation: A = int8 weights (zero point 0), B = uint8 activations
     * (zero point 3); B int8 for 16 bits */
    QrQOperand qa = { A, s->K, true, NULL, 0, NULL }, qb = { B, s->N, kind == BENCH_Q16, NULL, 0, NULL };
    int32_t zb = 3;
    qb.zp = &zb;
    for (int r = -1; r < reps; r++) {   /* r = -1: warm-up */
        double t0 = qr_time_now(), c0 = bench_cpu_now();
        if (kind == BENCH_F32 && cold->n > 0) {   /* a different copy of B every run */
            const float *b = (const float *)(cold->copies + (size_t)((r + 1) % cold->n) * cold->stride);
            k->f32_gemm(s->M, s->N, s->K, A, s->K, b, s->N, C, s->N, false);
        } else if (kind == BENCH_F32) {
            k->f32_gemm(s->M, s->N, s->K, A, s->K, B, s->N, C, s->N, false);
        }
        else if (kind == BENCH_Q8) k->q8_gemm(s->M, s->N, s->K, &qa, &qb, C, s->N, false);
        else k->q16_gemm(s->M, s->N, s->K, &qa, &qb, C, s->N, false);
        if (r >= 0) { t[r] = qr_time_now() - t0; tc[r] = bench_cpu_now() - c0; }
    }
    *cpu = bench_median(tc, reps);
    return bench_median(t, reps);
}

/* ---- model mode ---- */

typedef struct { double last; double *by_node; } BenchTap;

static QrStatus bench_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g); QR_UNUSED(value); QR_UNUSED(t);
    BenchTap *b = user;
    double now = qr_time_now();
    if (node >= 0) b->by_node[node] += now - b->last;
    b->last = qr_time_now();
    return QR_OK;
}

static int bench_model(const char *path, const char *input, int reps) {
    QrGraph *g = NULL;
    QrTensor x = {0}, shapes[1];
    memset(shapes, 0, sizeof shapes);
    QrStatus st = qr_run_load(path, &g);
    if (st == QR_OK) st = qr_npy_read(input, &x);
    const QrTensor *given[1] = { &x };
    if (st == QR_OK) st = qr_run_input_shapes_bound(g, given, NULL, 0, shapes);
    if (st == QR_OK) st = qr_run_infer(g, shapes);
    if (st != QR_OK) { fprintf(stderr, "%s\n", qr_err_msg()); return 1; }
    /* BENCH_INT=1: int mode (the lowered graph, as `run --mode int`), constants cached. */
    QrQuantTable qt = {0};
    QrGraph low = {0};
    QrLowerInfo info = {0};
    QrRunCache *cache = NULL;
    if (getenv("BENCH_INT")) {
        st = qr_qtable_build(g, &qt);
        if (st == QR_OK) st = qr_lower_graph(g, &qt, false, &low, &info);
        if (st != QR_OK) { fprintf(stderr, "%s\n", qr_err_msg()); return 1; }
        for (int i = 0; i < info.n_skipped; i++)
            printf("left in float: %s (%s): %s\n", info.skipped[i].name, info.skipped[i].op_type, info.skipped[i].why);
        g = &low;
        cache = qr_run_cache_new(g);
    }
    /* BENCH_PREP=1: a constant cache that keeps prepared data (packed convolution weights), as
     * `qreport run` has; default: none in float mode (weights packed per call, as runall) */
    if (getenv("BENCH_PREP")) {
        if (!cache) cache = qr_run_cache_new(g);
        qr_run_cache_keep_prep(cache);
    }
    double *by_node = calloc((size_t)g->n_nodes, sizeof(double)), t[64], tc[64];
    BenchTap bt = { 0, by_node };
    /* BENCH_TAP=1: time nodes through a tap on every value (every value materialized, no
     * fusion); default: QrRunOpts.node_sec, the run as `qreport run` does it */
    QrRunOpts opts = { .cache = cache };
    if (getenv("BENCH_TAP")) { opts.tap = bench_tap; opts.tap_user = &bt; }
    else opts.node_sec = by_node;
    reps = QR_MAX(1, QR_MIN(reps, 64));
    for (int r = -1; r < reps; r++) {
        QrTensor out[8];
        memset(out, 0, sizeof out);
        if (r == 0) memset(by_node, 0, (size_t)g->n_nodes * sizeof(double));
        double t0 = qr_time_now(), c0 = bench_cpu_now();
        bt.last = t0;
        st = qr_run(g, &x, &opts, out);
        if (r >= 0) { t[r] = qr_time_now() - t0; tc[r] = bench_cpu_now() - c0; }
        for (int i = 0; i < g->n_outputs && i < 8; i++) qr_tensor_free_data(&out[i]);
        if (st != QR_OK) { fprintf(stderr, "%s\n", qr_err_msg()); return 1; }
    }
    double total = 0;
    for (int i = 0; i < g->n_nodes; i++) total += by_node[i];
    printf("%s: %d threads, level %s: median %.2f ms per run, %.2f ms CPU (%d runs)\n", path, qr_pool_threads(),
           qr_isa_name(qr_kern.isa), bench_median(t, reps) * 1e3, bench_median(tc, reps) * 1e3, reps);
    if (getenv("BENCH_NODES"))
        for (int i = 0; i < g->n_nodes; i++)
            printf("  node %-40s %-8s %8.3f ms\n", g->nodes[i].name, g->nodes[i].op_type, by_node[i] * 1e3 / reps);
    for (int i = 0; i < g->n_nodes; i++) {   /* per op type, in order of first appearance */
        const char *op = g->nodes[i].op_type;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(g->nodes[j].op_type, op);
        if (seen) continue;
        double s = 0;
        int cnt = 0;
        for (int j = i; j < g->n_nodes; j++) if (!strcmp(g->nodes[j].op_type, op)) { s += by_node[j]; cnt++; }
        printf("  %-22s %4d nodes %8.2f ms %5.1f%%\n", op, cnt, s * 1e3 / reps, 100 * s / total);
    }
    free(by_node);
    qr_run_cache_free(cache);
    qr_graph_free(&low);   /* borrows from the loaded graph */
    qr_lower_info_free(&info);
    qr_qtable_free(&qt);
    return 0;
}

/* ---- depthwise mode: the 3x3 depthwise layers of MobileNetV2 at 224x224 ---- */

/* Per level, the median over reps of the time of every channel of each layer through
 * qr_kern.f32_conv_m1 on one thread (the executor runs channels as pool tasks). */
static int bench_dw(int reps, const char *only) {
    static const struct { int64_t C, H, s; } layers[] = {
        { 32, 112, 1 }, { 96, 112, 2 }, { 144, 56, 1 }, { 144, 56, 2 }, { 192, 28, 1 }, { 192, 28, 1 },
        { 192, 28, 2 }, { 384, 14, 1 }, { 384, 14, 1 }, { 384, 14, 1 }, { 384, 14, 1 }, { 576, 14, 1 },
        { 576, 14, 1 }, { 576, 14, 2 }, { 960, 7, 1 }, { 960, 7, 1 }, { 960, 7, 1 },
    };
    static const QrIsa levels[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_NEON, QR_ISA_DOT };
    uint64_t rng = 5;
    reps = QR_MAX(1, QR_MIN(reps, 64));
    printf("depthwise 3x3 (MobileNetV2 at 224x224), median of %d runs, microseconds per layer, 1 thread\n%-14s", reps, "layer");
    for (int l = 0; l < QR_ARRAY_LEN(levels); l++) {
        QrKernels k;
        if (qr_kern_table(levels[l], &k) == QR_OK) printf(" %9s", qr_isa_name(levels[l]));
    }
    printf("\n");
    double total[QR_ARRAY_LEN(levels)] = {0};
    for (int li = 0; li < QR_ARRAY_LEN(layers); li++) {
        const int64_t C = layers[li].C, H = layers[li].H, s = layers[li].s, OH = (H + 2 - 3) / s + 1;
        float *x = qr_aligned_alloc((size_t)(C * H * H) * sizeof(float)), *w = qr_aligned_alloc((size_t)(C * 9) * sizeof(float));
        float *y = qr_aligned_alloc((size_t)(C * OH * OH) * sizeof(float));
        for (int64_t i = 0; i < C * H * H; i++) x[i] = qr_rng_normal(&rng);
        for (int64_t i = 0; i < C * 9; i++) w[i] = qr_rng_normal(&rng);
        float *bias = qr_aligned_alloc((size_t)C * sizeof(float));
        for (int64_t i = 0; i < C; i++) bias[i] = 0.5f;
        printf("%4lld x %3lld s%lld", (long long)C, (long long)H, (long long)s);
        for (int l = 0; l < QR_ARRAY_LEN(levels); l++) {
            QrKernels k;
            if (qr_kern_table(levels[l], &k) != QR_OK) continue;
            if (only && strcmp(only, qr_isa_name(levels[l]))) {
                printf(" %9s", "-");
                continue;
            }
            double t[64];
            for (int r = 0; r < reps; r++) {
                double t0 = qr_time_now();
                /* ops/nn.c's task size: planes of at most 16K multiply-adds */
                const int64_t per = QR_MAX(1, (1 << 14) / (OH * OH * 9));
                for (int64_t c = 0; c < C; c += per) {
                    QrF32ConvB b = { x + c * H * H, 1, H, H, 3, 3, s, s, 1, 1, 1, 1, OH, OH };
                    const int64_t n = QR_MIN(per, C - c);
                    if (k.f32_conv_m1_act && k.f32_conv_m1_act(&b, n, H * H, w + c * 9, 9, bias + c, y + c * OH * OH,
                                                               OH * OH, NULL, 0) >= 0)
                        continue;
                    for (int64_t p = 0; p < n; p++) {
                        b.x = x + (c + p) * H * H;
                        k.f32_conv_m1(&b, w + (c + p) * 9, bias[c + p], y + (c + p) * OH * OH);
                    }
                }
                t[r] = qr_time_now() - t0;
            }
            double m = bench_median(t, reps);
            total[l] += m;
            printf(" %9.1f", m * 1e6);
        }
        printf("\n");
        qr_aligned_free(x);
        qr_aligned_free(w);
        qr_aligned_free(y);
        qr_aligned_free(bias);
    }
    printf("%-14s", "total");
    for (int l = 0; l < QR_ARRAY_LEN(levels); l++) {
        QrKernels k;
        if (qr_kern_table(levels[l], &k) == QR_OK) printf(" %9.1f", total[l] * 1e6);
    }
    printf("\n");
    return 0;
}

/* --conv (see the top of the file). */
static int bench_conv(int argc, char **argv) {
    const int64_t C = atoll(argv[2]), M = atoll(argv[3]), H = atoll(argv[4]);
    const int64_t KS = argc > 5 ? atoll(argv[5]) : 1, S = argc > 6 ? atoll(argv[6]) : 1;
    const int reps = argc > 7 ? atoi(argv[7]) : 200, cold = argc > 8 ? atoi(argv[8]) : 1;
    if (C < 1 || M < 1 || H < 1 || KS < 1 || S < 1 || reps < 1 || KS > H) {
        fprintf(stderr, "bench_kern --conv: bad sizes\n");
        return 2;
    }
    const char *th = getenv("QR_THREADS");
    if (qr_pool_init(th ? atoi(th) : 1) != QR_OK) return 1;
    const int64_t P = KS / 2, OH = (H + 2 * P - KS) / S + 1, K = C * KS * KS;
    const size_t xb = (size_t)(C * H * H) * sizeof(float), yb = (size_t)(M * OH * OH) * sizeof(float);
    const size_t flush_b = (size_t)bench_llc_bytes() * 2;
    float *x = qr_aligned_alloc(xb), *y = qr_aligned_alloc(yb), *w = qr_aligned_alloc((size_t)(M * K) * sizeof(float));
    float *bias = qr_aligned_alloc((size_t)M * sizeof(float));
    unsigned char *flush = malloc(flush_b);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!x || !y || !w || !bias || !flush || !t) return 1;
    for (int64_t i = 0; i < C * H * H; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
    for (int64_t i = 0; i < M * K; i++) w[i] = (float)((i * 104729) % 2001 - 1000) / 100000.0f;
    for (int64_t i = 0; i < M; i++) bias[i] = 0.01f * (float)i;
    memset(y, 0, yb);
    memset(flush, 1, flush_b);
    QrF32ConvB cb = { x, C, H, H, KS, KS, S, S, 1, 1, P, P, OH, OH };
    const size_t pb = qr_kern.f32_conv_pack_bytes(M, &cb);
    float *pk = pb ? qr_aligned_alloc(pb) : NULL;
    if (pk) qr_kern.f32_conv_pack(M, w, K, &cb, pk);
    QrF32Fused f = { .ep = { bias, 0.0f, 6.0f }, .a_pack = pk };
    volatile unsigned char sink = 0;
    for (int r = -10; r < reps; r++) {   /* r < 0: warm-up */
        if (cold) {
            for (size_t i = 0; i < flush_b; i += 64) sink += flush[i];
            for (size_t i = 0; i < xb; i += 64) sink += ((volatile unsigned char *)x)[i];
            for (size_t i = 0; i < yb; i += 64) sink += ((volatile unsigned char *)y)[i];
        }
        const double t0 = qr_time_now();
        qr_kern.f32_conv_gemm_fused(M, w, K, &cb, y, OH * OH, &f);
        if (r >= 0) t[r] = qr_time_now() - t0;
    }
    const double med = bench_median(t, reps), flop = 2.0 * (double)M * (double)K * (double)(OH * OH);
    const double lo = t[0];   /* bench_median sorted t */
    printf("conv C=%lld M=%lld %lldx%lld k%lld s%lld, level %s, weights %s (%zu packed bytes), %s: median %.1f us "
           "(%.0f GFLOP/s), min %.1f us\n", (long long)C, (long long)M, (long long)H, (long long)H, (long long)KS,
           (long long)S, qr_isa_name(qr_kern.isa), pk ? "packed" : "in place", pb, cold ? "weights cold" : "hot",
           med * 1e6, flop / med * 1e-9, lo * 1e6);
    qr_aligned_free(x);
    qr_aligned_free(y);
    qr_aligned_free(w);
    qr_aligned_free(bias);
    qr_aligned_free(pk);
    free(flush);
    free(t);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--dw")) {
        qr_kern_init();
        return bench_dw(argc > 2 ? atoi(argv[2]) : 15, argc > 3 ? argv[3] : NULL);
    }
    if (argc > 4 && !strcmp(argv[1], "--conv")) {
        qr_kern_init();
        return bench_conv(argc, argv);
    }
    if (argc > 3 && !strcmp(argv[1], "--model")) {
        qr_kern_init();
        return bench_model(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 7);
    }
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    const char *filter = argc > 2 ? argv[2] : "";
    if (reps < 1) reps = 1;
    qr_kern_init();
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    printf("cpus %d, best level %s, median of %d runs%s\n", cpu.n_cpus, qr_isa_name(qr_kern.isa), reps,
           getenv("BENCH_COLD") ? ", float B cold (copies in rotation past the last-level cache)" : "");
    static const QrIsa levels[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI };
    static const char *kinds[] = { "f32", "q8", "q16" };
    uint64_t rng = 1;
    for (int kind = 0; kind < 3; kind++) {
        if (*filter && !strstr(kinds[kind], filter)) continue;
        printf("\n%-4s %-12s %5s %6s %5s  %-7s %8s %8s %9s %9s\n", kinds[kind], "shape", "M", "N", "K", "level", "1 thr", "2 thr",
               "1 thr/cpu", "2 thr/cpu");
        for (int si = 0; si < QR_ARRAY_LEN(bench_shapes); si++) {
            const BenchShape *s = &bench_shapes[si];
            if (getenv("BENCH_SHAPE") && !strstr(s->name, getenv("BENCH_SHAPE"))) continue;   /* e.g. "vit" */
            size_t el = kind == BENCH_F32 ? 4 : kind == BENCH_Q8 ? 1 : 2;
            unsigned char *A = qr_aligned_alloc((size_t)(s->M * s->K) * el), *B = qr_aligned_alloc((size_t)(s->K * s->N) * el);
            void *C = qr_aligned_alloc((size_t)(s->M * s->N) * 8);
            for (int64_t i = 0; i < s->M * s->K * (int64_t)el; i++) A[i] = (unsigned char)qr_rng_next(&rng);
            for (int64_t i = 0; i < s->K * s->N * (int64_t)el; i++) B[i] = (unsigned char)qr_rng_next(&rng);
            if (kind == BENCH_F32) {
                float *a = (float *)A, *b = (float *)B;
                for (int64_t i = 0; i < s->M * s->K; i++) a[i] = qr_rng_normal(&rng);
                for (int64_t i = 0; i < s->K * s->N; i++) b[i] = qr_rng_normal(&rng);
            }
            double ops = 2.0 * (double)s->M * (double)s->N * (double)s->K;
            BenchCold cold = { NULL, 0, 0 };
            if (kind == BENCH_F32) cold = bench_cold_make(B, (size_t)(s->K * s->N) * el);
            const char *only = getenv("BENCH_LEVEL");   /* one level (for perf stat A/B runs) */
            for (int l = 0; l < QR_ARRAY_LEN(levels); l++) {
                QrKernels k;
                if (only && strcmp(only, qr_isa_name(levels[l]))) continue;
                if (qr_kern_table(levels[l], &k) != QR_OK) continue;
                double g[2], cpu[2];
                for (int th = 1; th <= 2; th++) {
                    qr_pool_init(th);
                    int r = levels[l] == QR_ISA_REF ? QR_MAX(5, reps / 3) : reps;
                    g[th - 1] = ops / bench_run(&k, (BenchKind)kind, s, r, A, B, C, &cpu[th - 1], &cold) * 1e-9;
                }
                printf("%-4s %-12s %5lld %6lld %5lld  %-7s %8.1f %8.1f %9.1f %9.1f\n", kinds[kind], s->name, (long long)s->M,
                       (long long)s->N, (long long)s->K, qr_isa_name(levels[l]), g[0], g[1], ops / cpu[0] * 1e-9,
                       ops / cpu[1] * 1e-9);
            }
            qr_aligned_free(cold.copies);
            qr_aligned_free(A);
            qr_aligned_free(B);
            qr_aligned_free(C);
        }
    }
    return 0;
}
