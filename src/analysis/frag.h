/* analysis/frag — rounding fragility: how far the model output moves when the activation
 * quantizers round differently by one LSB, as a device that is correct but rounds otherwise
 * would. The sim (Q/DQ in float) runs once as is and once per variant, each variant changing the
 * integer output of every activation quantizer in place (run.h's edit hook): half-away-from-zero
 * instead of half-to-even at the ties of every QuantizeLinear, and ±1 LSB at a seeded share of the
 * elements of every activation quantizer (a few seeds). Reported: per variant the output
 * Cosine/SQNR against the unperturbed sim and the ratio of that MSE to the quantization error
 * (baseline vs sim output MSE); per quantizer the perturbation arriving from upstream, its growth
 * over the injected one and the layer's gain of relative perturbation; the first quantizer where
 * perturbations grow; a verdict. deploy/dump uses the per-value spread to call a device's
 * differences rounding or a device problem. docs/REPORT.md "Rounding fragility". */
#ifndef QR_FRAG_H
#define QR_FRAG_H

#define QR_FRAG_MAX_SEEDS 8
/* Fragile when the seeded ±1 LSB variants move the output by at least this share of the
 * quantization error (output MSE ratio; docs/REPORT.md justifies it). */
#define QR_FRAG_FRAGILE_RATIO 0.5
/* A quantizer where perturbations grow: the relative perturbation arriving at it (MSE over the
 * signal's mean square) is at least this many times that of the noisiest quantizer it reads, over
 * at least QR_FRAG_GROW_MIN changed elements a run (fewer are too few to measure a ratio on). */
#define QR_FRAG_GROW_GAIN 4.0
#define QR_FRAG_GROW_MIN 10

typedef struct QrFragOpts {
    double share;            /* ±1 LSB variants: share of every quantizer's elements touched (0.01) */
    int n_seeds;             /* ±1 LSB variants run (3; at most QR_FRAG_MAX_SEEDS) */
    uint64_t seed;           /* the first seed (1); variant k uses seed + k */
    bool no_half_away;       /* leave out the half-away-from-zero variant */
    bool serial;             /* the variants one after another; else side by side on the thread pool, all at once
                                or in groups of the pool's threads, when their records fit QR_FRAG_SIDE_MAX (the
                                same results, bit for bit) */
} QrFragOpts;

/* Bytes the variants run side by side may keep (two copies of every perturbed value for each variant
 * that does not add up into the sums as it runs: in a group, the first of each kind does). */
#define QR_FRAG_SIDE_MAX ((size_t)64 << 20)

typedef enum QrFragKind { QR_FRAG_HALF_AWAY, QR_FRAG_LSB } QrFragKind;

/* A layer's sums over the variants of one kind (QrFragLayer.lsb, .ha). */
typedef struct QrFragAcc {
    int64_t n_inj, n_arr, n_tot;   /* injected elements; elements changed before / after the injection */
    double inj, arr, tot;          /* Σ squared change: injected; arriving from upstream; total */
    double tot_lsb2;               /* Σ squared total change in LSB² */
    double lsb2_max;               /* the largest of one run's Σ squared total change in LSB² */
    int64_t n_tot_max;             /* the largest of one run's elements changed */
    int64_t lsb_max;               /* largest |Δ| in LSB after the injection */
} QrFragAcc;

/* One perturbed activation quantizer (topological order of its node). Sums over the ±1 LSB seeds
 * (lsb) and of the half-away run (ha), in float units (Δ integer × its scale). */
typedef struct QrFragLayer {
    int q;                   /* quantizer (the table given to qr_frag_run) */
    int value;               /* its integer value (edited) */
    int node;                /* the node producing it */
    int64_t n;               /* elements */
    double sig;              /* Σ of the dequantized unperturbed value squared */
    QrFragAcc lsb, ha;
    int n_up;                /* perturbed quantizers it reads (nearest upstream) */
    int *up;                 /* their layer indices */
    double growth;           /* lsb.tot / lsb.inj: total perturbation over the injected one (NaN if none injected) */
    double gain;             /* arriving relative perturbation over the largest of its inputs' (NaN without inputs) */
} QrFragLayer;

typedef struct QrFragVariant {
    QrFragKind kind;
    uint64_t seed;           /* QR_FRAG_LSB */
    int64_t n_changed;       /* elements the variant changed where it injects (ties; seeded elements) */
    QrMetrics out;           /* unperturbed sim outputs (x) vs this variant's (y), all float outputs */
    double ratio;            /* out.mse / quantization error MSE (NaN without a baseline) */
} QrFragVariant;

typedef struct QrFragResult {
    QrArena arena;
    QrFragOpts opts;
    int n_act;               /* activation quantizers of the model */
    int n_layers;            /* of them perturbed (computed integer output of a QuantizeLinear / QOperator node) */
    QrFragLayer *layers;
    int *by_value;           /* per graph value: layer whose integer value it is, or -1 */
    QrFragVariant var[QR_FRAG_MAX_SEEDS + 1];
    int n_var;
    int worst;               /* variant with the lowest output Cosine (-1: none) */
    double quant_mse;        /* baseline vs sim output MSE (NaN: no baseline given) */
    QrMetrics quant;         /* baseline (x) vs sim (y) outputs */
    double ratio_lsb;        /* largest ratio of the ±1 LSB variants */
    int first_growth;        /* first layer that grows (QR_FRAG_GROW_GAIN, QR_FRAG_GROW_MIN), -1 */
    bool fragile;
    int n_runs;              /* model runs made (unperturbed + variants) */
    int n_side;              /* of the variants, run side by side (QrFragOpts.serial) */
    int n_direct;            /* of those, added up into the sums as they ran (the others recorded, then replayed) */
    int64_t n_ties;          /* elements at a tie that half to even and half away round differently, over every
                              * perturbed QuantizeLinear (unperturbed run) */
    const QrGraph *g;        /* the graph run (names) */
} QrFragResult;

static void qr_frag_opts_default(QrFragOpts *o);
/* Runs the sim of g (shape-inferred on inputs; qt its quantizer table) unperturbed and under every
 * variant. base_out (optional, g->n_outputs float32 tensors, e.g. a session's baseline outputs)
 * gives the quantization error the spread is compared with. Memory beyond one model run: one copy
 * of every perturbed quantizer's integer value (1-2 bytes an element) and a run cache of g's
 * constants (QrRunCache), freed on return. */
static QrStatus qr_frag_run(const QrGraph *g, const QrQuantTable *qt, const QrTensor *inputs, const QrTensor *base_out,
                            const QrFragOpts *o, QrFragResult *r);
static void qr_frag_free(QrFragResult *r);
/* qr_frag_run in two halves, so that its unperturbed run can be a run made for something else (runall:
 * the what-if's all-on reference run, qr_session_ref_ride): qr_frag_begin sets up r (the layers; NULL
 * o: the defaults) and *ride (malloc'd); qr_frag_ride_opts puts the unperturbed run's edit into ro
 * (edit, edit_user, edit_on: it keeps every perturbed value, its signal and its ties, changing
 * nothing); the caller makes that run of g with no overrides, once, and gives its outputs (sim_out)
 * to qr_frag_end, which runs the variants and frees ride (on failure too, r then freed). The results
 * are qr_frag_run's, bit for bit, and n_runs counts the unperturbed run (tests/test_frag.c
 * test_frag_ride). qr_frag_ride_free frees a ride that will not reach qr_frag_end. */
typedef struct QrFragRide QrFragRide;
static QrStatus qr_frag_begin(const QrGraph *g, const QrQuantTable *qt, const QrFragOpts *o, QrFragResult *r, QrFragRide **ride);
static void qr_frag_ride_opts(QrFragRide *ride, QrRunOpts *ro);
static QrStatus qr_frag_end(QrFragRide *ride, const QrTensor *inputs, const QrTensor *base_out, const QrTensor *sim_out,
                            QrFragResult *r);
static void qr_frag_ride_free(QrFragRide *ride);
/* One sentence: fragile or not, and by how much a device may differ (arena copy). */
static const char *qr_frag_verdict(QrArena *a, const QrFragResult *r);
/* fragility.txt / fragility.csv into dir. */
static QrStatus qr_frag_write(const QrFragResult *r, const char *dir);
static void qr_frag_json(QrJson *j, const QrFragResult *r);   /* summary.json "fragility" object */
static void qr_frag_html(QrHtml *h, const QrFragResult *r);   /* index.html section */

/* The spread at the integer value v (a perturbed quantizer's), the largest over the variants: the
 * mean squared change in LSB² per element, the share of elements changed and |Δ| in LSB. False
 * when v is not a perturbed quantizer's value. */
typedef struct QrFragSpread {
    double mse_lsb;
    int64_t lsb_max;
    double changed;
} QrFragSpread;
static bool qr_frag_spread(const QrFragResult *r, int v, QrFragSpread *s);


#endif
