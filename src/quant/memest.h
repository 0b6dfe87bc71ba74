/* quant/memest — an up-front estimate of a command's peak memory (--max-memory), from the
 * loaded, shape-inferred graphs: initializer bytes, every value's size from its inferred
 * shape and dtype, the executor's live set, and what each command keeps alive at once. */
#ifndef QR_MEMEST_H
#define QR_MEMEST_H

/* Values the distributions hold at once: analysis/dist's QR_DIST_TOPK weights and activations
 * plus one (dist.h checks the two agree; dist is above this estimate). */
#define QR_MEM_DIST_VALUES 6

/* The commands, for what each keeps alive (see memest.c for the phases of each). */
typedef enum QrMemCmd {
    QR_MEM_RUN, QR_MEM_PROFILE, QR_MEM_CHECK, QR_MEM_MATCH, QR_MEM_COMPARE, QR_MEM_SENSITIVITY, QR_MEM_RUNALL,
    QR_MEM_BADCASE,
} QrMemCmd;

/* The parts an estimate is made of; a phase's total is the sum of its parts. */
typedef enum QrMemPart {
    QR_MEM_P_RUNTIME,         /* program, thread stacks, per-thread kernel scratch (fixed) */
    QR_MEM_P_MODELS,          /* initializers, folded constants and graph structures (+ the float twin) */
    QR_MEM_P_TABLES,          /* per-value/per-node tables: statistics, match, overrides, executor slots */
    QR_MEM_P_INPUTS,          /* the input tensors */
    QR_MEM_P_LOADING,         /* the last model's file bytes and decoded protobuf while it loads */
    QR_MEM_P_BASE_VALUES,     /* the session's cache: float32 copy of every baseline node output */
    QR_MEM_P_BASE_COPY,       /* the equivalence check's second copy of the baseline values */
    QR_MEM_P_ANALYSIS_VALUES, /* the sensitivity reference run: a copy of every value of the analysis twin */
    QR_MEM_P_EXEC,            /* one execution: live values at their peak, op scratch, output copies, tap copies */
    QR_MEM_P_SAMPLES,         /* bad-case search: the sample being read and the worst one so far */
    QR_MEM_P_LOWERING,        /* --mode int/both: integer-lowered graph constants, int-vs-sim value copies */
    QR_MEM_P_WEIGHTS,         /* weight comparison / what-if: float and int16 copies of weights */
    QR_MEM_P_DIST,            /* distribution plots: captured values and per-channel buffers */
    QR_MEM_P_REPORT,          /* plot canvas, PNG encoding, HTML/JSON text, zip deflate state */
    QR_MEM_N_PARTS
} QrMemPart;

typedef struct QrMemEstimate {
    uint64_t total;                   /* the estimated peak: the largest phase */
    uint64_t part[QR_MEM_N_PARTS];    /* that phase's parts (they sum to total) */
    const char *phase;                /* its name: "loading", "sensitivity", "run", ... */
    uint64_t base_values, analysis_values;   /* those two parts whatever the peak phase (0 if unused) */
    int n_dynamic;                    /* values whose size is only known at run time: not counted */
} QrMemEstimate;

typedef struct QrMemOpts {
    QrMemCmd cmd;
    const char *mode;                 /* compare/runall: NULL or "sim", "int", "both" */
    bool data_search;                 /* runall --data: a bad-case search runs first */
    bool no_exec;                     /* check without -i: the model is not executed */
} QrMemOpts;

static const char *qr_mem_part_name(QrMemPart p);   /* "models", "baseline values", ... */

/* Estimates the peak memory of command o->cmd on b (the model of one-model commands, else
 * the baseline) and a (the analysis model, NULL for one-model commands), both loaded and
 * shape-inferred on `inputs` (one per graph input of b; shapes are what counts). For two
 * models the float twin is built (and freed) to size the values analyses keep. Values of
 * data-dependent shape count as 0 (e->n_dynamic). Fails only when out of memory. */
static QrStatus qr_mem_estimate(const QrGraph *b, const QrGraph *a, const QrTensor *inputs, const QrMemOpts *o,
                                QrMemEstimate *e);
/* Before anything is loaded: loading model files paths[0..n) in order needs at least this
 * (each file, its decoded protobuf and its initializers; earlier models stay loaded).
 * Unreadable files count as 0 (the loader reports them). */
static void qr_mem_estimate_files(const char *const *paths, int n, QrMemEstimate *e);

/* "812 MiB (models 90 MiB, baseline values 410 MiB, ...; peak during sensitivity)" into buf. */
static char *qr_mem_describe(const QrMemEstimate *e, char *buf, size_t n);
/* "512 MiB", "6.2 MiB", "900 KiB", "1.5 GiB". */
static char *qr_mem_size_str(char *buf, size_t n, uint64_t bytes);
/* QR_OK when limit <= 0 or e->total <= limit; else QR_ERR_NOMEM with "<what> needs an
 * estimated ... but --max-memory is ...". */
static QrStatus qr_mem_check(const QrMemEstimate *e, const char *what, int64_t limit);

#endif
