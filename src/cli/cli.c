/* cli — argument parsing and subcommands. The only module that prints to the
 * terminal and decides exit codes: 0 success, 1 runtime failure (bad model or
 * input, I/O), 2 usage error. Three files, in this order: cli.c (the common parser, the
 * options, most commands), deploy.c (the deployment kit's commands and the options they add
 * to runall), main.c (runall, merge, badcase, ops and the dispatcher). */


enum { QR_EXIT_OK = 0, QR_EXIT_FAIL = 1, QR_EXIT_USAGE = 2 };

/* runall: the analysis model is parsed on a helper thread while the baseline loads and
 * prepares (qr__cli_begin starts it, qr__cli_load_second takes its result). */
typedef struct QrCliPreload {
    const char *path;
    QrGraph *g;
    QrStatus st;
    char msg[2048];
    pthread_t th;
    bool running;
} QrCliPreload;

typedef struct QrCliOpts {
    const char *model;
    const char *model2;          /* analysis model for two-model commands */
    bool single;                 /* runall ANALYSIS.onnx alone: the baseline is it with every quantizer disabled */
    const char *inputs[128];     /* "file" or "name=file" (an LLM has 2 + 2 x layers inputs) */
    /* Set by qr__cli_prepare as it reads them: input_sha[k] the sha256 (hex) of inputs[k]'s file from the
     * bytes it read ("" when not read: a folder, or not the baseline's command), input_dir: -i DIR
     * (DIR/<input name>.npy per input). runall's manifest takes them instead of reading the files again. */
    char input_sha[128][2 * QR_SHA256_LEN + 1];
    bool input_dir;
    int n_inputs;
    const char *shapes[16];      /* "name=1x3x224x224" */
    int n_shapes;
    QrDimBind dims[32];          /* --dim NAME=N: symbolic dims (batch_size, sequence_length, ...) */
    char dim_names[32][128];
    int n_dims;
    const char *out_dir;
    char out_dir_buf[4096];      /* out_dir without its trailing '/' (qr__cli_parse) */
    uint64_t seed;
    bool quiet;
    const char *mode;            /* sim | int | both */
    const char *metric;          /* L1 | Cosine | MSE | KL | SQNR */
    const char *sens_mode;       /* one-on | off-one */
    const char *topk_list;       /* "1,3,5,10" */
    double cos_threshold;
    bool reverse;
    bool all_rows;               /* --all-rows: sensitivity evaluates every row (no grouped ranking) */
    const char *keep_dir;
    double fail_cos, fail_sqnr;  /* NaN: no gate */
    const char *data_dir;        /* --data: bad-case search folder */
    int num_steps;
    int samples;                 /* --samples N: the first N samples of --data (0 = all) */
    bool skip_bad;               /* --skip-bad-samples: unreadable / mismatched samples are skipped and listed */
    const char *shard;           /* --shard K/N | auto: this process's share of --data, written as a .qrpart */
    int sens_samples;            /* --sens-samples K: sensitivity / cumulative error over the K worst samples (0: default) */
    const char *plot_nodes;      /* comma-separated */
    int threads;                 /* --threads: 0 = QR_THREADS or online CPUs */
    int64_t max_memory;          /* --max-memory in bytes; 0 = no limit */
    int repeat;                  /* run --repeat: timed executions (0 = one, untimed) */
    /* knobs of hmct-debugger / QuantAnalysis / ModelProfiler users (README "Coming from ...") */
    const char *quantize_nodes, *non_quantize_nodes;   /* 'A;A,B': cumulative-error node sets */
    const char *nodes;           /* --nodes: sensitivity rows of these nodes only */
    const char *node_type;       /* --node-type activation|weight|node */
    const char *rank_output;     /* --rank-output NAME */
    const char *prefixes, *types;    /* profile --prefixes / --types */
    bool have_channel_axis;
    int channel_axis;            /* --channel-axis */
    const char *save_values;     /* --save-values DIR */
    const char *from_values;     /* compare --from-values DIR */
    bool demote_int16;           /* sensitivity --demote-int16 */
    bool no_fragility;           /* runall --no-fragility */
    bool no_error_split;         /* runall --no-error-split */
    const char *labels;          /* --labels FILE: token ids for the logits outputs' NLL */
    int generate;                /* --generate N: greedy decoding of N tokens with both models */
    bool int16_integer;          /* --int16 integer: the int mode lowers 16-bit Q/DQ groups too */
    const char *kv_map[QR_GEN_MAX_KV_MAP];   /* --kv-map IN=OUT (repeatable): cache inputs fed from outputs */
    int n_kv_map;
    /* The command's run, not options: set by qr__cli_begin (data_first: its argument), read by
     * qr__cli_prepare, qr__cli_load_second and qr__cli_mem_check. */
    bool data_first;             /* data-set commands: --data's first sample is the input */
    char mem_cmd[32];            /* the command's name, from the usage text: "runall" */
    QrMemOpts mem_opts;          /* what the --max-memory check estimates (max_memory > 0) */
    QrCliPreload *pre;           /* runall's analysis model loading on a helper thread, or NULL */
    /* data_first with --data: the folder listed once (qr__cli_prepare, the first --samples N or
     * all), handed to the command by qr__cli_take_set, which owns it from then on. */
    bool have_ds;
    QrDsSet ds;
} QrCliOpts;

static void qr__cli_warn(const QrCliOpts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void qr__cli_warn(const QrCliOpts *o, const char *fmt, ...) {
    if (o->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "qreport: warning: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* A model warning (qr_run_lint) on stderr. */
static void qr__cli_lint_emit(void *user, const char *msg) {
    QR_UNUSED(user);
    fprintf(stderr, "qreport: warning: %s\n", msg);
}

static int qr__cli_fail(QrStatus st) {
    fprintf(stderr, "qreport: error: %s\n", qr_err_msg());
    return st == QR_OK ? QR_EXIT_OK : QR_EXIT_FAIL;
}

static const char *qr__cli_usage_run =
    "usage: qreport run MODEL.onnx [-i INPUT.npy|.pb ...] [-o DIR] [--mode sim|int] [--int16 float|integer] [--shape NAME=1x3x224x224] [--dim NAME=N] [--seed N]\n"
    "                  [--threads N] [--repeat N] [--quiet]\n"
    "  Runs the model and writes each graph output to DIR (default: .) as <output name>.npy.\n"
    "  -i FILE or -i NAME=FILE gives one input per graph input (.npy or ONNX TensorProto .pb);\n"
    "  without -i a deterministic random input of the declared shape is used (with a warning).\n"
    "  Symbolic dims (batch_size, sequence_length, ...) of an input not given are bound from the same-named\n"
    "  dims of the inputs given, --dim NAME=N, or total_sequence_length = past_sequence_length +\n"
    "  sequence_length (every command binds them so).\n"
    "  --mode sim (default) runs the model as given (Q/DQ in float); int runs its DQ->op->Q groups on\n"
    "  integer kernels, as compare --mode int does. --int16 float (default) keeps 16-bit Q/DQ groups in\n"
    "  float, as ONNX Runtime's CPU provider does; --int16 integer lowers them too, as an NPU runs them.\n"
    "  --repeat N: after one warm-up run, times N runs and prints (also with --quiet) one line\n"
    "  bench: runs=N median_ms=X min_ms=X mean_ms=X threads=T isa=ISA mode=sim|int load_ms=X\n"
    "  (load_ms: model parse, shape inference, inputs and lowering); the outputs written are the\n"
    "  warm-up run's.\n";
static const char *qr__cli_usage_match =
    "usage: qreport match BASE.onnx ANALYSIS.onnx [-i INPUT ...] [-o DIR] [--shape NAME=...] [--dim NAME=N] [--seed N] [--quiet]\n"
    "  Pairs every compute node output of the float baseline with the analysis (quantized) model's value\n"
    "  that its consumers see (after Q->DQ): by node name, tensor name, then graph structure. Writes\n"
    "  match_table.txt/.csv to DIR (default .) with the method of each pair and every unmatched value, and\n"
    "  checks equivalence: with every quantizer disabled the analysis model must reproduce the baseline.\n"
    "  Exit code 3 when the equivalence check fails (the models differ beyond quantization).\n";
static const char *qr__cli_usage_check =
    "usage: qreport check ANALYSIS.onnx [-i INPUT ...] [-o DIR] [--shape NAME=...] [--dim NAME=N] [--quiet]\n"
    "  Structure check of a quantized model, written to DIR/model_check_result.txt: fusable patterns left\n"
    "  unfused, shared weights/quantizers, each layer's output quantization, weight quantization and\n"
    "  anomalies (model output not high precision, clipping quantizers, mismatched Concat/Add input\n"
    "  scales, unnormalized input). Range checks need -i.\n";
static const char *qr__cli_usage_profile =
    "usage: qreport profile MODEL.onnx [-i INPUT.npy|.pb ... | --data DIR [--samples N]] [-o DIR] [--prefixes A,B]\n"
    "                       [--types Conv,Relu] [--shape NAME=...] [--dim NAME=N] [--seed N] [--quiet]\n"
    "  Runs the model once and writes ModelProfiler-style statistic.txt and statistic.csv to DIR:\n"
    "  per node, its inputs, weights, bias and outputs with dtype, min, max, mean, variance and shape,\n"
    "  then the same rows sorted by range (max - min). NaN/Inf are counted in their own columns.\n"
    "  --prefixes A,B: only nodes whose name starts with one of them (a leading '/' may be left out);\n"
    "  --types Conv,Relu: only nodes of these op types (ModelProfiler's table(prefixes, types)). An entry\n"
    "  that selects no node is an error naming it (exit 1). Index keeps the layer number in the model.\n"
    "  --data DIR (hmct layout: one sub-folder per input, or a flat folder of .npy for one input;\n"
    "  --samples N: the first N in natural name order): runs every sample and pools min, max, mean and\n"
    "  variance over all samples' elements (exact sums: the same bits in any sample order).\n";

static const char *qr__cli_usage_compare =
    "usage: qreport compare BASE.onnx ANALYSIS.onnx [-i INPUT ... | --data DIR [--samples N]] [-o DIR] [--mode sim|int|both]\n"
    "                       [--cos-threshold X] [--metric L1|Cosine|MSE|KL|SQNR] [--save-values DIR | --from-values DIR]\n"
    "                       [--labels FILE] [--generate N [--kv-map IN=OUT ...]]\n"
    "                       [--shard K/N|auto] [--shape NAME=...] [--dim NAME=N] [--seed N] [--quiet]\n"
    "  Per-layer comparison of the analysis (quantized) model with the float baseline on one input:\n"
    "  compare_per_layer_out.txt/.csv with Cosine, MSE, L1, KL, SQNR, Atol, Rtol, min/max/mean/var of both,\n"
    "  and the local (shadow) Cosine/SQNR of each layer re-run on the baseline's inputs.\n"
    "  --mode sim (default) runs Q/DQ in float (as ONNX Runtime without optimizations); int runs the\n"
    "  DQ->op->Q patterns on integer kernels (as ONNX Runtime with all optimizations); both compares sim\n"
    "  and adds per layer the int-vs-sim difference in LSB (lsb_max, lsb_diff, lsb_ties columns).\n"
    "  --int16 float|integer: 16-bit groups in float (default, as ONNX Runtime CPU) or on integer kernels.\n"
    "  --metric M (hmct spellings accepted: cosine-similarity, mse, ...): the summary gives the model output's\n"
    "  M and the 5 layers worst by M (the tables hold every metric).\n"
    "  Also writes abnormal_layer_advisor.txt (the advisor on this comparison) and compare_per_layer.html\n"
    "  (runall's per-layer section with plots/per_layer_metrics.png and the advisor's findings).\n"
    "  --save-values DIR: every compared value of both models as .npy (baseline, analysis, local re-run,\n"
    "  graph outputs, inputs) with DIR/index.tsv mapping each layer to its files (QuantAnalysis run()).\n"
    "  Logits outputs ([batch, sequence, vocab] or named logits) are judged per token in compare_outputs.txt/.csv:\n"
    "  tokens, top1_agree, top5_overlap, kld_mean/p90/p99/max (KL of the softmax over the vocabulary), dp_rms,\n"
    "  the worst tokens, and the NLL of both models with ln(PPL ratio) on --labels FILE (token ids, .npy) or,\n"
    "  without it, on the next-token shift of input_ids.\n"
    "  --from-values DIR: the tables, advisor and page recomputed from a saved run without running the\n"
    "  models (the models give the structure; QuantAnalysis set_model_profiler_dir). No -i, no --mode.\n"
    "  --data DIR compares over every sample of a data folder (hmct layout: one sub-folder per input with\n"
    "  the same file names, or a flat folder of .npy for one input; --samples N: the first N in natural\n"
    "  name order): the columns hold the pooled metrics (all samples' elements together), followed by\n"
    "  samples, mean_Cosine, worst_Cosine, worst_sample, p05_Cosine, mean_SQNR, p05_SQNR; also\n"
    "  compare_outputs.txt/.csv (one row per graph output, top-1/top-5 for [batch, classes]),\n"
    "  samples.txt/.csv (ranked worst first by --metric, default L1) and badcase.npy (the worst sample).\n"
    "  --shard K/N -o PART.qrpart (with --data): only the samples [K*n/N, (K+1)*n/N) of the n in the set,\n"
    "  written as a partial state for 'qreport merge'; --shard auto takes K and N from Slurm job arrays\n"
    "  (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) or Kubernetes Indexed Jobs\n"
    "  (JOB_COMPLETION_INDEX, with the count from --shard auto/N or QR_SHARD_COUNT).\n";
static const char *qr__cli_usage_runall =
    "usage: qreport runall [BASE.onnx] ANALYSIS.onnx [-i BADCASE.npy ... | --data DIR [--samples N] [--sens-samples K]\n"
    "                      [--shard K/N|auto]] [-o report.zip] [--labels FILE] [--generate N [--kv-map IN=OUT ...]]\n"
    "                      [--keep-dir DIR] [--plot-nodes NAME,NAME...] [--channel-axis N]\n"
    "                      [--metric L1|Cosine|MSE|KL|SQNR] [--reverse] [--sensitivity one-on|off-one] [--all-rows]\n"
    "                      [--nodes A,B] [--node-type activation|weight|node] [--rank-output NAME]\n"
    "                      [--quantize-nodes 'A;A,B'] [--non-quantize-nodes 'A;A,B'] [--demote-int16]\n"
    "                      [--topk-list 1,3,5,10] [--cos-threshold X] [--mode sim|int|both] [--fail-if-cosine-below X]\n"
    "                      [--int16 float|integer] [--fail-if-sqnr-below DB] [--shape NAME=...] [--dim NAME=N] [--seed N] [--quiet]\n"
    "                      [--dump DIR [--dump-map MAP.csv] [--dump-tolerance LSB]] [--no-repro] [--emit-model DIR]\n"
    "                      [--no-fragility] [--no-error-split]\n"
    "  Every analysis in one pass, written as one zip bundle (default qreport_report.zip): index.html,\n"
    "  (ANALYSIS.onnx alone: the baseline is the same graph with every quantizer disabled; the report says so.)\n"
    "  summary.json, manifest.json, structure check, match table, statistics of both models, per-layer\n"
    "  comparison with local error, sensitivity ranking, cumulative error, the bad-case input.\n"
    "  Without -i a deterministic random input is used (with a warning). The zip is written atomically\n"
    "  (a full or unwritable location: exit code 1, no partial zip, no temporary left behind); with\n"
    "  SOURCE_DATE_EPOCH set the same inputs give a byte-identical zip. --keep-dir DIR also leaves the\n"
    "  unzipped bundle in DIR, written after the zip and as atomically (an existing DIR is replaced only\n"
    "  when empty or an earlier bundle); when DIR cannot be written the exit code is 1, DIR is left as it\n"
    "  was and the zip, already complete, stays. Exit code 10 when a --fail-if-* gate is not met (the\n"
    "  bundle is still written).\n"
    "  --metric sorts the sensitivity and, when given, draws the cumulative-error curves (default Cosine).\n"
    "  --plot-nodes: a name that is no node or value of either model is an error (exit 1) naming it with\n"
    "  close names. --channel-axis N (hmct axis): the box plots' channel axis for every value (negative:\n"
    "  from the end). --nodes, --node-type, --rank-output, --quantize-nodes, --non-quantize-nodes: as for\n"
    "  qreport sensitivity (--rank-output also ranks the --data samples). --demote-int16: int16_demotion.*\n"
    "  and an HTML section, as qreport sensitivity --demote-int16. --all-rows: as for qreport sensitivity.\n"
    "  --dump DIR adds the device dump comparison of compare-dump (dump_compare.txt/.csv, an HTML section,\n"
    "  summary.json \"dump\"); a bad dump fails the run (exit 1, no bundle). The bundle's repro/ holds extract's\n"
    "  minimal repro of the worst verified layer by local error (summary.json \"repro\"); --no-repro leaves it out.\n"
    "  --emit-model DIR (new or empty) writes the what-if's recommended promotion applied, as promote does:\n"
    "  DIR/analysis_promoted.onnx, promotion.json, nodes_to_exclude.json, modelopt_exclude.json, exclude_nodes.txt;\n"
    "  exit 1 when it cannot be written.\n"
    "  Rounding fragility (fragility.txt/.csv, summary.json \"fragility\"): the simulation re-run with every\n"
    "  activation quantizer rounding 1 LSB otherwise (half away from zero at every tie; +-1 LSB at 1% of its\n"
    "  elements, 3 seeds): 5 extra model runs; --no-fragility leaves it out (and --dump's rounding column).\n"
    "  --no-error-split: no error split (the layers re-run with only their weight / input / output quantizers\n"
    "  on): the err_* .. dominant columns stay empty, summary.json's layers have no err_* keys, the advisor\n"
    "  names no cause from it (docs/REPORT.md \"Error split\").\n"
    "  --data DIR [--samples N]: one pass over the samples (each runs both models and the shadow run once, through\n"
    "  one prepared comparison) pools the per-layer comparison: dataset/compare_per_layer_out, compare_outputs,\n"
    "  samples (.txt/.csv), an HTML data-set section and summary.json \"dataset\" (see compare --data), and both\n"
    "  profiles (model0/1_statistic) over every sample; the other analyses run on the worst sample of that pass by\n"
    "  --metric (--rank-output: at that output), the verdict states the number of samples; the distributions of the\n"
    "  activations they choose are then accumulated over the set; sensitivity with the cumulative error over the\n"
    "  --sens-samples K worst (default 4; dataset/sensitive_ops.*, dataset/accumulated_error.csv, the p05-p95 band\n"
    "  plot; see sensitivity --data). --skip-bad-samples: a corrupt or mismatched sample is skipped and listed.\n"
    "  --shard K/N -o PART.qrpart: only shard K's comparison; 'qreport merge PARTS -o report.zip [--keep-dir DIR]\n"
    "  [--fail-if-*]' writes the bundle one process writes (docs/DATASET.md).\n";
static const char *qr__cli_usage_sensitivity =
    "usage: qreport sensitivity BASE.onnx ANALYSIS.onnx [-i INPUT ... | --data DIR [--samples N] [--sens-samples K]\n"
    "                           [--shard K/N|auto]] [-o DIR] [--metric L1|Cosine|MSE|KL|SQNR]\n"
    "                           [--reverse] [--sensitivity one-on|off-one] [--topk-list 1,3,5,10]\n"
    "                           [--nodes A,B] [--node-type activation|weight|node] [--rank-output NAME]\n"
    "                           [--quantize-nodes 'A;A,B'] [--non-quantize-nodes 'A;A,B'] [--demote-int16] [--all-rows]\n"
    "                           [--quiet]\n"
    "  Quantization sensitivity of every quantizer (activation, weight, both per node) measured at the\n"
    "  model output(s): sensitive_ops.txt/.csv/.json sorted worst first by --metric (default L1), and the\n"
    "  cumulative error along the graph (accumulated_error.csv) for weight-only, activation-only, full\n"
    "  quantization and all-but-top-k. one-on (default): only the row's quantizers on; off-one: all on but it.\n"
    "  --metric also picks the cumulative error's metric (default Cosine); hmct's spellings are accepted\n"
    "  (cosine-similarity, mse, ...).\n"
    "  --nodes A,B (hmct interested_nodes): only the rows of these nodes (compute node, Q/DQ node or value\n"
    "  names of either model). --node-type (hmct node_type): activation rows, weight rows, or one row per\n"
    "  node (node: its activation and weight quantizers together). --rank-output NAME (hmct output_node):\n"
    "  metrics at that graph output alone.\n"
    "  One-on from 100 rows on (a transformer), the ranking is grouped: groups of rows (a block's half, its thirds, a node) are\n"
    "  evaluated first and only the most sensitive are refined, until the top max(10, --topk-list) rows are\n"
    "  known in order; the other rows listed are those evaluated on the way (sensitive_ops.txt says how many\n"
    "  were not). --all-rows evaluates every row (not with --reverse, --data: those always do).\n"
    "  --demote-int16 (QuantAnalysis reserve): for a model with 16-bit quantizers, int16_demotion.txt/.csv/.json:\n"
    "  each 16-bit quantizer (with those sharing its scale) put on the 8-bit grid of the same range, the\n"
    "  measured output cost, cheapest first by --metric, with its dtype.\n"
    "  --quantize-nodes 'A;A,B' (hmct quantize_node=[['A'],['A','B']]): one more cumulative-error curve per\n"
    "  set (';' separates sets, ',' names) with only the set's quantizers on; --non-quantize-nodes: all on\n"
    "  but the set's. A node's quantizers are those of its outputs, weights and bias. Unknown names are an\n"
    "  error naming them with close names.\n"
    "  --data DIR (hmct calibration_data): the comparison runs over every sample, and sensitivity and the\n"
    "  cumulative error over the K worst by --metric (--sens-samples K, default 4): metrics pooled over them\n"
    "  (as if concatenated), each row's rank on every sample alone (rank_min/median/max, top5_samples), and\n"
    "  the curves' per-sample mean, p05 and p95 (accumulated_error.csv). --shard K/N -o PART.qrpart: only\n"
    "  the comparison of shard K; 'qreport merge' picks the K worst of the merged set and runs the rest\n"
    "  (docs/DATASET.md).\n";

static void qr__cli_print_usage(FILE *f) {
    fprintf(f,
            "qreport %s — quantization accuracy debugger for ONNX models\n\n"
            "usage: qreport COMMAND [options]\n\n"
            "commands:\n"
            "  run       run a model on an input and write its outputs as .npy\n"
            "  profile   per-node statistics of one model (statistic.txt/.csv)\n"
            "  match     pair baseline and analysis values (match_table.txt/.csv) + equivalence check\n"
            "  check     structure check of a quantized model (model_check_result.txt)\n"
            "  compare   per-layer comparison with local (shadow) error (compare_per_layer_out.txt/.csv)\n"
            "  sensitivity  quantizer sensitivity ranking and cumulative error (sensitive_ops.*, accumulated_error.csv)\n"
            "  runall    every analysis, one zip bundle with index.html (the report to attach to a bug)\n"
            "  find-bad-case  the worst input of a data folder (badcase.npy, badcase_list.txt/.csv)\n"
            "  compare-dump   device dumps vs the int-mode simulation: the first divergent layer (dump_compare.*)\n"
            "  extract   a minimal repro of one layer (sub-models, cut inputs, expected outputs, repro.json)\n"
            "  promote   a repaired model: nodes promoted to int16 or float as the what-if predicts (+ exclusion lists)\n"
            "  merge     merges the .qrpart files of a sharded compare / sensitivity --data run\n"
            "  ops       the operators qreport runs (domain, op type, inputs; optional inputs in brackets)\n\n"
            "options of every command: --threads N (default: QR_THREADS or the online CPUs; results are\n"
            "identical for any N), --max-memory SIZE, --quiet.\n"
            "--max-memory SIZE (512M, 2G): refuse up front (exit 1, nothing run or written) when the command's\n"
            "estimated peak memory is larger; the message gives the estimate and its parts. Estimated from the\n"
            "loaded models and the input shapes (declared, --shape or -i; find-bad-case and --data use the\n"
            "model's input shapes): initializers, every value's inferred size, what the command keeps alive at\n"
            "once (compare, sensitivity and runall cache a float32 copy of every baseline value, sensitivity and\n"
            "runall a copy of every analysis value), one execution's live values, plot and report buffers. Model\n"
            "files are checked by size before they are loaded. With a limit, large buffers go back to the system\n"
            "when freed, so the peak RSS follows the estimate.\n"
            "qreport COMMAND --help shows a command's options; qreport --version shows the build.\n",
            QR_VERSION);
}

/* A whole decimal integer in [lo, hi] -> *out; false when malformed or out of range. */
static bool qr__cli_int(const char *s, long lo, long hi, int *out) {
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || *end || n < lo || n > hi) return false;
    *out = (int)n;
    return true;
}

/* "512M", "2G", "1048576", "64k" -> bytes (binary units); false when malformed or <= 0. */
static bool qr__cli_size(const char *s, int64_t *out) {
    char *end;
    double v = strtod(s, &end);
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (end == s || *end || !(v > 0) || v * mul > 9.0e18) return false;
    *out = (int64_t)(v * mul);
    return true;
}

/* The options of issue 21's knobs: each command takes those its usage text names. */
static bool qr__cli_knob(const char *a) {
    static const char *const knobs[] = { "--quantize-nodes", "--non-quantize-nodes", "--nodes", "--node-type",
                                         "--rank-output", "--prefixes", "--types", "--channel-axis", "--save-values",
                                         "--from-values" };
    for (int k = 0; k < QR_ARRAY_LEN(knobs); k++) if (!strcmp(a, knobs[k])) return true;
    return false;
}

/* Whether usage names option a as a word ("--nodes" is not "--plot-nodes"). */
static bool qr__cli_usage_names(const char *usage, const char *a) {
    size_t n = strlen(a);
    for (const char *p = strstr(usage, a); p; p = strstr(p + 1, a))
        if ((p == usage || p[-1] == ' ' || p[-1] == '[') && (p[n] == ' ' || p[n] == ']' || p[n] == '\n')) return true;
    return false;
}

/* Sets knob A (qr__cli_knob) to V. QR_EXIT_OK, or QR_EXIT_USAGE after printing why. */
static int qr__cli_knob_set(QrCliOpts *o, const char *a, const char *v, const char *usage) {
    if (!strcmp(a, "--quantize-nodes")) o->quantize_nodes = v;
    else if (!strcmp(a, "--non-quantize-nodes")) o->non_quantize_nodes = v;
    else if (!strcmp(a, "--nodes")) o->nodes = v;
    else if (!strcmp(a, "--node-type")) o->node_type = v;
    else if (!strcmp(a, "--rank-output")) o->rank_output = v;
    else if (!strcmp(a, "--prefixes")) o->prefixes = v;
    else if (!strcmp(a, "--types")) o->types = v;
    else if (!strcmp(a, "--save-values")) o->save_values = v;
    else if (!strcmp(a, "--from-values")) o->from_values = v;
    else if (!strcmp(a, "--channel-axis")) {
        if (!qr__cli_int(v, -QR_MAX_RANK, QR_MAX_RANK - 1, &o->channel_axis)) {
            fprintf(stderr, "qreport: --channel-axis '%s': expected an axis %d..%d\n%s", v, -QR_MAX_RANK,
                    QR_MAX_RANK - 1, usage);
            return QR_EXIT_USAGE;
        }
        o->have_channel_axis = true;
    }
    return QR_EXIT_OK;
}

/* After the options: normalises the output folder, checks values and combinations, binds the
 * single-model form of runall. QR_EXIT_OK, or QR_EXIT_USAGE after printing why. */
static int qr__cli_finish(QrCliOpts *o, const char *usage, bool two_models) {
    if (o->out_dir) {                        /* "out/" -> "out" so joined paths read cleanly */
        size_t n = strlen(o->out_dir);
        while (n > 1 && o->out_dir[n - 1] == '/') n--;
        snprintf(o->out_dir_buf, sizeof o->out_dir_buf, "%.*s", (int)n, o->out_dir);
        o->out_dir = o->out_dir_buf;
    }
    if (o->mode && strcmp(o->mode, "sim") && strcmp(o->mode, "int") && strcmp(o->mode, "both")) {
        fprintf(stderr, "qreport: --mode must be sim, int or both\n%s", usage);
        return QR_EXIT_USAGE;
    }
    if (o->sens_mode && strcmp(o->sens_mode, "one-on") && strcmp(o->sens_mode, "off-one")) {
        fprintf(stderr, "qreport: --sensitivity must be one-on or off-one\n%s", usage);
        return QR_EXIT_USAGE;
    }
    QrNodeType nt;
    if (o->node_type && qr_sens_node_type_parse(o->node_type, &nt) != QR_OK) {
        fprintf(stderr, "qreport: %s\n%s", qr_err_msg(), usage);
        return QR_EXIT_USAGE;
    }
    QrMetricKind mk;
    if (o->metric && qr_metric_parse(o->metric, &mk) != QR_OK) {
        fprintf(stderr, "qreport: %s\n%s", qr_err_msg(), usage);
        return QR_EXIT_USAGE;
    }
    /* KLD (mean token KL at logits outputs) ranks one input's sensitivity rows */
    bool kld_cmd = !strncmp(usage, "usage: qreport sensitivity ", 27) || !strncmp(usage, "usage: qreport runall ", 22);
    if (o->metric && mk == QR_METRIC_KLD && (!kld_cmd || o->data_dir)) {
        fprintf(stderr, "qreport: --metric KLD ranks sensitivity by the mean token KL of one input (sensitivity, runall "
                "without --data); the per-token columns of compare and --data are in compare_outputs\n%s", usage);
        return QR_EXIT_USAGE;
    }
    bool gen_cmd = !strncmp(usage, "usage: qreport compare ", 23) || !strncmp(usage, "usage: qreport runall ", 22);
    if (o->labels && (!gen_cmd || o->data_dir || o->from_values)) {
        fprintf(stderr, "qreport: --labels FILE gives the token ids of one input (compare or runall with -i; with --data "
                "each sample's input_ids shifted are the labels)\n%s", usage);
        return QR_EXIT_USAGE;
    }
    if (o->n_kv_map && !o->generate) {
        fprintf(stderr, "qreport: --kv-map names the cache of --generate N (give --generate)\n%s", usage);
        return QR_EXIT_USAGE;
    }
    if (o->generate && (!gen_cmd || o->data_dir || o->from_values || o->shard)) {
        fprintf(stderr, "qreport: --generate N follows a generation from one prompt (compare or runall with -i, not --data, "
                "--from-values or --shard)\n%s", usage);
        return QR_EXIT_USAGE;
    }
    if (o->threads && qr_pool_init(o->threads) != QR_OK) { fprintf(stderr, "qreport: %s\n", qr_err_msg()); return QR_EXIT_USAGE; }
    if (!o->model) { fprintf(stderr, "qreport: missing MODEL.onnx\n%s", usage); return QR_EXIT_USAGE; }
    if (two_models && !o->model2 && !strncmp(usage, "usage: qreport runall [BASE.onnx] ", 34)) {
        o->model2 = o->model;                /* single-model form */
        o->single = true;
    }
    if (o->generate && o->single) {
        fprintf(stderr, "qreport: --generate needs BASE.onnx (the single-model form's baseline is not a separate model)\n%s",
                usage);
        return QR_EXIT_USAGE;
    }
    if (two_models && !o->model2) { fprintf(stderr, "qreport: missing ANALYSIS.onnx\n%s", usage); return QR_EXIT_USAGE; }
    return QR_EXIT_OK;
}

static int qr__cli_parse(int argc, char **argv, QrCliOpts *o, const char *usage, bool two_models) {
    memset(o, 0, sizeof *o);
    o->cos_threshold = 0.99;
    o->fail_cos = o->fail_sqnr = NAN;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
#define QR__CLI_NEXT(dst) do { if (!has_val) { fprintf(stderr, "qreport: %s needs a value\n%s", a, usage); return QR_EXIT_USAGE; } dst = argv[++i]; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage, stdout); return -1; }
        else if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
            if (o->n_inputs == QR_ARRAY_LEN(o->inputs)) { fprintf(stderr, "qreport: too many -i\n"); return QR_EXIT_USAGE; }
            QR__CLI_NEXT(o->inputs[o->n_inputs++]);
        } else if (!strcmp(a, "--shape")) {
            if (o->n_shapes == QR_ARRAY_LEN(o->shapes)) { fprintf(stderr, "qreport: too many --shape\n"); return QR_EXIT_USAGE; }
            QR__CLI_NEXT(o->shapes[o->n_shapes++]);
        } else if (!strcmp(a, "--dim")) {
            const char *v;
            QR__CLI_NEXT(v);
            const char *eq = strchr(v, '=');
            char *end = NULL;
            long long n = eq ? strtoll(eq + 1, &end, 10) : -1;
            if (!eq || eq == v || !end || end == eq + 1 || *end || n < 0 || n > ((long long)1 << 40)) {
                fprintf(stderr, "qreport: --dim %s: expected NAME=N (a symbolic dimension and its size, N >= 0)\n%s", v, usage);
                return QR_EXIT_USAGE;
            }
            if (o->n_dims == QR_ARRAY_LEN(o->dims)) { fprintf(stderr, "qreport: too many --dim\n"); return QR_EXIT_USAGE; }
            if ((size_t)(eq - v) >= sizeof o->dim_names[0]) { fprintf(stderr, "qreport: --dim %s: name too long\n", v); return QR_EXIT_USAGE; }
            snprintf(o->dim_names[o->n_dims], sizeof o->dim_names[0], "%.*s", (int)(eq - v), v);
            o->dims[o->n_dims] = (QrDimBind){ .name = o->dim_names[o->n_dims], .value = n };
            o->n_dims++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) QR__CLI_NEXT(o->out_dir);
        else if (!strcmp(a, "--seed")) { const char *s; QR__CLI_NEXT(s); o->seed = strtoull(s, NULL, 10); }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = true;
        else if (!strcmp(a, "--skip-bad-samples")) o->skip_bad = true;
        else if (!strcmp(a, "--mode")) QR__CLI_NEXT(o->mode);
        else if (!strcmp(a, "--int16")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (strcmp(v, "float") && strcmp(v, "integer")) {
                fprintf(stderr, "qreport: --int16 must be float or integer\n%s", usage);
                return QR_EXIT_USAGE;
            }
            o->int16_integer = !strcmp(v, "integer");
        }
        else if (!strcmp(a, "--metric")) QR__CLI_NEXT(o->metric);
        else if (!strcmp(a, "--sensitivity")) QR__CLI_NEXT(o->sens_mode);
        else if (!strcmp(a, "--topk-list")) QR__CLI_NEXT(o->topk_list);
        else if (!strcmp(a, "--cos-threshold")) { const char *v; QR__CLI_NEXT(v); o->cos_threshold = strtod(v, NULL); }
        else if (!strcmp(a, "--reverse")) o->reverse = true;
        else if (!strcmp(a, "--all-rows")) o->all_rows = true;
        else if (!strcmp(a, "--keep-dir")) QR__CLI_NEXT(o->keep_dir);
        else if (!strcmp(a, "--data")) QR__CLI_NEXT(o->data_dir);
        else if (!strcmp(a, "--labels")) QR__CLI_NEXT(o->labels);
        else if (!strcmp(a, "--generate")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr__cli_int(v, 1, 4096, &o->generate)) {
                fprintf(stderr, "qreport: --generate needs a token count in 1..4096, got '%s'\n%s", v, usage);
                return QR_EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--kv-map")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr_gen_kv_map_ok(v)) {
                fprintf(stderr, "qreport: --kv-map %s: expected IN=OUT, a cache input and the output fed back into it, '*' "
                        "in both or in neither (e.g. --kv-map 'past.*=present_out.*')\n%s", v, usage);
                return QR_EXIT_USAGE;
            }
            if (o->n_kv_map == QR_GEN_MAX_KV_MAP) { fprintf(stderr, "qreport: too many --kv-map\n"); return QR_EXIT_USAGE; }
            o->kv_map[o->n_kv_map++] = v;
        }
        else if (!strcmp(a, "--num-steps")) { const char *v; QR__CLI_NEXT(v); o->num_steps = atoi(v); }
        else if (!strcmp(a, "--shard")) QR__CLI_NEXT(o->shard);
        else if (!strcmp(a, "--sens-samples")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr__cli_int(v, 1, 256, &o->sens_samples)) {
                fprintf(stderr, "qreport: --sens-samples must be a count from 1 to 256\n%s", usage);
                return QR_EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--samples")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr__cli_int(v, 1, 100000000, &o->samples)) {
                fprintf(stderr, "qreport: --samples must be a positive count\n%s", usage);
                return QR_EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--plot-nodes")) QR__CLI_NEXT(o->plot_nodes);
        else if (!strcmp(a, "--fail-if-cosine-below")) { const char *v; QR__CLI_NEXT(v); o->fail_cos = strtod(v, NULL); }
        else if (!strcmp(a, "--fail-if-sqnr-below")) { const char *v; QR__CLI_NEXT(v); o->fail_sqnr = strtod(v, NULL); }
        else if (!strcmp(a, "--threads")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr__cli_int(v, 1, QR_POOL_MAX_THREADS, &o->threads)) {
                fprintf(stderr, "qreport: --threads must be 1..%d\n%s", QR_POOL_MAX_THREADS, usage);
                return QR_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--max-memory")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr__cli_size(v, &o->max_memory)) {
                fprintf(stderr, "qreport: --max-memory '%s': expected a size such as 512M or 2G\n%s", v, usage);
                return QR_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--repeat")) {
            const char *v;
            QR__CLI_NEXT(v);
            if (!qr__cli_int(v, 1, 100000, &o->repeat)) {
                fprintf(stderr, "qreport: --repeat must be 1..100000\n%s", usage);
                return QR_EXIT_USAGE;
            }
        }
        else if (!strcmp(a, "--no-fragility")) {
            if (!qr__cli_usage_names(usage, a)) { fprintf(stderr, "qreport: this command has no option '%s'\n%s", a, usage); return QR_EXIT_USAGE; }
            o->no_fragility = true;
        }
        else if (!strcmp(a, "--no-error-split")) {
            if (!qr__cli_usage_names(usage, a)) { fprintf(stderr, "qreport: this command has no option '%s'\n%s", a, usage); return QR_EXIT_USAGE; }
            o->no_error_split = true;
        }
        else if (!strcmp(a, "--demote-int16")) {
            if (!qr__cli_usage_names(usage, a)) { fprintf(stderr, "qreport: this command has no option '%s'\n%s", a, usage); return QR_EXIT_USAGE; }
            o->demote_int16 = true;
        }
        else if (qr__cli_knob(a)) {
            /* the newer options are taken only by the commands whose usage names them */
            if (!qr__cli_usage_names(usage, a)) { fprintf(stderr, "qreport: this command has no option '%s'\n%s", a, usage); return QR_EXIT_USAGE; }
            const char *v;
            QR__CLI_NEXT(v);
            int rc = qr__cli_knob_set(o, a, v, usage);
            if (rc != QR_EXIT_OK) return rc;
        }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "qreport: unknown option '%s'\n%s", a, usage); return QR_EXIT_USAGE; }
        else if (!o->model) o->model = a;
        else if (two_models && !o->model2) o->model2 = a;
        else { fprintf(stderr, "qreport: unexpected argument '%s'\n%s", a, usage); return QR_EXIT_USAGE; }
#undef QR__CLI_NEXT
    }
    return qr__cli_finish(o, usage, two_models);
}

/* Reads a tensor from .npy or TensorProto .pb (by extension, then by magic); sha_hex (optional,
 * 2 * QR_SHA256_LEN + 1 chars) receives the sha256 of the file's bytes as read. */
static QrStatus qr_cli_read_tensor(const char *path, QrTensor *t, char *sha_hex) {
    size_t n = strlen(path);
    uint8_t d[QR_SHA256_LEN];
    QrStatus st = n > 3 && !strcmp(path + n - 3, ".pb") ? qr_pb_read_sha(path, t, NULL, 0, sha_hex ? d : NULL)
                                                         : qr_npy_read_sha(path, t, sha_hex ? d : NULL);
    if (st == QR_OK && sha_hex) qr_sha256_hex(d, sha_hex);
    return st;
}

/* Loads the model and builds one input tensor per graph input: from files,
 * or random (deterministic in seed) when none are given. */
static QrStatus qr__cli_prepare(QrCliOpts *o, QrGraph **gout, QrTensor **inputs_out) {
    QrGraph *g = NULL;
    QR_TRY(qr_run_load(o->model, &g));
    if (!g->n_outputs) {
        QrStatus nst = qr_errf(QR_ERR_INVALID, "%s: the graph has no outputs (graph.output is empty): nothing to compute", o->model);
        qr_graph_free(g);
        free(g);
        return nst;
    }
    QrTensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    const QrTensor **given = calloc((size_t)g->n_inputs + 1, sizeof *given);
    QrTensor *shape_of = calloc((size_t)g->n_inputs + 1, sizeof *shape_of);
    QrStatus st = in && given && shape_of ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK && o->data_first && o->data_dir && !o->n_inputs) {
        QrDsSet *ds = &o->ds;
        st = qr_dsset_list(g, o->data_dir, o->samples, ds);
        o->have_ds = st == QR_OK;
        if (st == QR_OK) st = qr_dsset_read(ds, g, 0, NULL, in);
        if (st == QR_OK) ds->held = 0;
        /* --skip-bad-samples: the graphs are inferred on the first sample that reads */
        for (int k = 1; st != QR_OK && st != QR_ERR_NOMEM && o->skip_bad && ds->names && k < ds->n; k++) {
            qr_err_clear();
            st = qr_dsset_read(ds, g, k, NULL, in);
            if (st == QR_OK) ds->held = k;
        }
        for (int i = 0; st == QR_OK && i < g->n_inputs; i++) given[i] = &in[i];
        if (st != QR_OK) { qr_dsset_free(ds); o->have_ds = false; }   /* the listing is freed either way */
    }
    bool all_named = o->n_inputs > 0;     /* -i NAME=FILE for some inputs: the others are made (dims bound) */
    for (int k = 0; k < o->n_inputs; k++) all_named &= strchr(o->inputs[k], '=') != NULL;
    /* -i DIR: DIR/<input name>.npy (or .pb) for every graph input found there (an LLM's many inputs) */
    struct stat dst;
    bool in_dir = o->n_inputs == 1 && !strchr(o->inputs[0], '=') && stat(o->inputs[0], &dst) == 0 && S_ISDIR(dst.st_mode);
    o->input_dir = in_dir;
    for (int i = 0; st == QR_OK && in_dir && i < g->n_inputs; i++) {
        char p[4096];
        const char *name = g->values[g->inputs[i]].name;
        snprintf(p, sizeof p, "%s/%s.npy", o->inputs[0], name);
        if (access(p, R_OK) != 0) snprintf(p, sizeof p, "%s/%s.pb", o->inputs[0], name);
        if (access(p, R_OK) != 0) continue;
        st = qr_cli_read_tensor(p, &in[i], NULL);
        if (st == QR_OK) st = qr_run_check_input(g, i, &in[i]);
        if (st == QR_OK) given[i] = &in[i];
    }
    if (st == QR_OK && in_dir) {
        int found = 0;
        for (int i = 0; i < g->n_inputs; i++) found += given[i] != NULL;
        if (!found) st = qr_errf(QR_ERR_INVALID, "-i %s: the folder holds no <input name>.npy/.pb of %s (its first input: '%s')",
                                 o->inputs[0], o->model, g->values[g->inputs[0]].name);
    }
    if (st == QR_OK && o->n_inputs && !in_dir && o->n_inputs != g->n_inputs && !(all_named && o->n_inputs < g->n_inputs))
        st = qr_errf(QR_ERR_INVALID, "%s has %d input%s but %d -i file%s given", o->model, g->n_inputs,
                     g->n_inputs == 1 ? "" : "s", o->n_inputs, o->n_inputs == 1 ? " was" : "s were");
    for (int k = 0; st == QR_OK && !in_dir && k < o->n_inputs; k++) {
        const char *spec = o->inputs[k], *eq = strchr(spec, '=');
        int idx = k;
        if (eq) {
            char name[512];
            snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
            int v = qr_graph_find(g, name);
            idx = -1;
            for (int i = 0; i < g->n_inputs; i++) if (g->inputs[i] == v) idx = i;
            if (idx < 0) { st = qr_errf(QR_ERR_INVALID, "%s has no input called '%s'", o->model, name); break; }
            spec = eq + 1;
        }
        if (in[idx].data) { st = qr_errf(QR_ERR_INVALID, "input '%s' given twice", g->values[g->inputs[idx]].name); break; }
        st = qr_cli_read_tensor(spec, &in[idx], o->input_sha[k]);
        if (st == QR_OK) st = qr_run_check_input(g, idx, &in[idx]);
        if (st == QR_OK) given[idx] = &in[idx];
    }
    for (int k = 0; st == QR_OK && k < o->n_shapes; k++) {
        const char *spec = o->shapes[k], *eq = strchr(spec, '=');
        char name[512];
        int idx = -1;
        if (eq) snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
        else if (g->n_inputs == 1) idx = 0;
        if (eq) {
            int v = qr_graph_find(g, name);
            for (int i = 0; i < g->n_inputs; i++) if (g->inputs[i] == v) idx = i;
        }
        if (idx < 0) { st = qr_errf(QR_ERR_INVALID, "--shape %s: no such input", spec); break; }
        int rank = 0;
        int64_t dims[QR_MAX_RANK];
        st = qr_shape_parse(eq ? eq + 1 : spec, &rank, dims);
        const QrValue *v = &g->values[g->inputs[idx]];
        if (st == QR_OK && !given[idx])
            st = qr_tensor_set_shape(&shape_of[idx], v->has_decl ? v->decl_dtype : QR_DT_F32, rank, dims);
        if (st == QR_OK && !given[idx]) given[idx] = &shape_of[idx];
    }
    QrTensor *shapes = calloc((size_t)g->n_inputs + 1, sizeof *shapes);
    if (st == QR_OK && !shapes) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_run_input_shapes_bound(g, given, o->dims, o->n_dims, shapes);
    for (int i = 0; st == QR_OK && i < g->n_inputs; i++) {
        if (in[i].data) continue;
        uint64_t rng = o->seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
        st = qr_tensor_set_shape(&in[i], shapes[i].dtype, shapes[i].rank, shapes[i].dims);
        if (st == QR_OK) st = qr_tensor_alloc_data(&in[i]);
        if (st != QR_OK) break;
        char sh[128];
        if (!o->data_dir) qr__cli_warn(o, "no input file for '%s': using a deterministic random %s tensor of shape %s (seed %llu); "
                     "pass -i for meaningful results", g->values[g->inputs[i]].name, qr_dtype_name(in[i].dtype),
                     qr_shape_str_brackets(sh, sizeof sh, in[i].rank, in[i].dims), (unsigned long long)o->seed);
        for (int64_t e = 0; e < in[i].numel; e++) {
            if (qr_dtype_is_float(in[i].dtype)) qr_tensor_set_f64(&in[i], e, qr_rng_normal(&rng));
            else qr_tensor_set_i64(&in[i], e, (int64_t)(qr_rng_next(&rng) % 10));
        }
    }
    if (st == QR_OK) st = qr_run_infer(g, shapes);
    if (st == QR_OK && !o->quiet) qr_run_lint(g, qr__cli_lint_emit, NULL);
    for (int i = 0; st == QR_OK && i < g->n_inputs; i++) {
        QrStats s;
        qr_stats_init(&s);
        qr_stats_tensor(&s, &in[i]);
        if (s.n_nan || s.n_posinf || s.n_neginf)
            qr__cli_warn(o, "input '%s' contains %lld NaN and %lld Inf values", g->values[g->inputs[i]].name,
                         (long long)s.n_nan, (long long)(s.n_posinf + s.n_neginf));
    }
    free(shapes);
    free(given);
    free(shape_of);
    if (st != QR_OK) {
        if (in) for (int i = 0; i < g->n_inputs; i++) qr_tensor_free_data(&in[i]);
        free(in);
        qr_graph_free(g);
        free(g);
        return st;
    }
    *gout = g;
    *inputs_out = in;
    return QR_OK;
}

static void qr__cli_release(QrGraph *g, QrTensor *in) {
    for (int i = 0; i < g->n_inputs; i++) qr_tensor_free_data(&in[i]);
    free(in);
    qr_graph_free(g);
    free(g);
}

/* File name for a value: characters outside [A-Za-z0-9._-] become '_'. */

/* ---- --max-memory ---------------------------------------------------------------
 * Checked where models are loaded: before loading (from the file sizes), after a one-model
 * command's model and inputs are ready (qr__cli_begin) and after the second model of a
 * two-model command loads (qr__cli_load_second), before anything runs. With a limit, large
 * blocks are always mmap'd (glibc otherwise raises its mmap threshold after the first large
 * free and keeps freed tensors resident), so the peak RSS follows the estimate: a runall on
 * 2 MiB activations peaks at 40 MiB instead of 64 MiB (fresh pages cost a little time). */
#include <malloc.h>

/* runall: the analysis model is parsed on a helper thread while the baseline loads and
 * prepares (qr__cli_begin starts it, qr__cli_load_second takes its result). Not with
 * --max-memory, whose estimate must pass before anything loads. */

static void *qr__cli_preload_main(void *arg) {
    QrCliPreload *p = arg;
    p->st = qr_run_load(p->path, &p->g);
    if (p->st != QR_OK) { snprintf(p->msg, sizeof p->msg, "%s", qr_err_msg()); qr_err_clear(); }
    return NULL;
}

/* Waits for the preload; its graph (or NULL when it failed: *st and the message) goes to the caller. */
static QrGraph *qr__cli_preload_take(QrCliOpts *o, const char *path, QrStatus *st) {
    *st = QR_OK;
    QrCliPreload *p = o->pre;
    if (!p || strcmp(p->path, path)) return NULL;
    pthread_join(p->th, NULL);
    o->pre = NULL;
    QrGraph *g = p->g;
    if (p->st != QR_OK) *st = qr_errf(p->st, "%s", p->msg);
    free(p);
    return g;
}

static void qr__cli_preload_drop(QrCliOpts *o) {
    if (!o->pre) return;
    QrStatus st;
    QrGraph *g = qr__cli_preload_take(o, o->pre->path, &st);
    if (g) { qr_graph_free(g); free(g); }
    qr_err_clear();
}

/* The estimate of the command o runs on b (and a) against --max-memory. */
static QrStatus qr__cli_mem_check(const QrCliOpts *o, const QrGraph *b, const QrGraph *a, const QrTensor *in) {
    if (o->max_memory <= 0) return QR_OK;
    QrMemEstimate e;
    QR_TRY(qr_mem_estimate(b, a, in, &o->mem_opts, &e));
    return qr_mem_check(&e, o->mem_cmd, o->max_memory);
}

/* The data set of --data for b's inputs, the first max_samples (<= 0: all): the listing
 * qr__cli_prepare made (no second listing), else the folder listed now. The caller owns *ds
 * (qr_dsset_free) whatever the outcome. */
static QrStatus qr__cli_take_set(QrCliOpts *o, const QrGraph *b, int max_samples, QrDsSet *ds) {
    if (!o->have_ds) return qr_dsset_list(b, o->data_dir, max_samples, ds);   /* begin listed none (-i, or not data_first) */
    *ds = o->ds;
    o->have_ds = false;
    memset(&o->ds, 0, sizeof o->ds);
    if (max_samples > 0 && max_samples < ds->n) ds->n = max_samples;
    return QR_OK;
}

static void qr__cli_drop_set(QrCliOpts *o) {
    if (o->have_ds) qr_dsset_free(&o->ds);
    o->have_ds = false;
}

/* Common start of a one-model command: parse, load the model, build inputs (data_first: from
 * --data's first sample when no -i is given). Returns -1 when the command should go on, else the
 * exit code to return. */
static int qr__cli_begin(int argc, char **argv, const char *usage, bool two_models, bool data_first, QrCliOpts *o,
                         QrGraph **g, QrTensor **in) {
    int rc = qr__cli_parse(argc, argv, o, usage, two_models);
    if (rc) return rc < 0 ? 0 : rc;
    o->data_first = data_first;
    o->have_ds = false;
    /* --data is checked before any model loads: -i conflicts with it, and the folder must be one */
    if (data_first && o->data_dir && o->n_inputs) {
        fprintf(stderr, "qreport: -i and --data are exclusive\n%s", usage);
        return QR_EXIT_USAGE;
    }
    if (data_first && o->data_dir && !qr_dsset_is_dir(o->data_dir))
        return qr__cli_fail(qr_errf(QR_ERR_IO, "--data '%s' is not a folder", o->data_dir));
    static const struct { const char *name; QrMemCmd cmd; } cmds[] = {
        { "run", QR_MEM_RUN }, { "profile", QR_MEM_PROFILE }, { "check", QR_MEM_CHECK }, { "match", QR_MEM_MATCH },
        { "compare", QR_MEM_COMPARE }, { "sensitivity", QR_MEM_SENSITIVITY }, { "runall", QR_MEM_RUNALL },
        { "find-bad-case", QR_MEM_BADCASE },
    };
    const char *w = strstr(usage, "qreport ");
    snprintf(o->mem_cmd, sizeof o->mem_cmd, "%.*s", w ? (int)strcspn(w + 8, " ") : 7, w ? w + 8 : "qreport");
    o->mem_opts = (QrMemOpts){ .cmd = two_models ? QR_MEM_RUNALL : QR_MEM_RUN, .mode = o->mode,
                               .data_search = o->data_dir != NULL };
    for (int k = 0; k < QR_ARRAY_LEN(cmds); k++) if (!strcmp(o->mem_cmd, cmds[k].name)) o->mem_opts.cmd = cmds[k].cmd;
    o->mem_opts.no_exec = o->mem_opts.cmd == QR_MEM_CHECK && o->n_inputs == 0;
    if (o->max_memory > 0) {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
        qr_run_pool_set_idle(0);             /* no idle buffers beyond the live values the estimate counts */
        qr_blk_keep(false);                  /* nor kept blocks */
        const char *files[2] = { o->model, o->model2 };
        QrMemEstimate e;
        qr_mem_estimate_files(files, two_models ? 2 : 1, &e);
        QrStatus st = qr_mem_check(&e, o->mem_cmd, o->max_memory);
        if (st != QR_OK) return qr__cli_fail(st);
    }
    if (two_models && o->max_memory <= 0 && o->model2 && !strcmp(o->mem_cmd, "runall")) {
        QrCliPreload *p = calloc(1, sizeof *p);
        if (p) {
            p->path = o->model2;
            if (pthread_create(&p->th, NULL, qr__cli_preload_main, p) == 0) o->pre = p;
            else free(p);
        }
    }
    QrStatus st = qr__cli_prepare(o, g, in);
    if (st == QR_OK && !two_models) {
        st = qr__cli_mem_check(o, *g, NULL, *in);
        if (st != QR_OK) qr__cli_release(*g, *in);
    }
    if (st != QR_OK) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", qr_err_msg());   /* the baseline's error comes first */
        qr__cli_drop_set(o);
        qr__cli_preload_drop(o);
        st = qr_errf(st, "%s", msg);
    }
    return st == QR_OK ? -1 : qr__cli_fail(st);
}

static int qr__cli_bh_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `run`: one execution of the model (sim: as given; int: DQ->op->Q groups lowered onto integer
 * kernels exactly as `compare --mode int`), outputs written as .npy. With --repeat N, after one
 * warm-up run N more executions are timed (CLOCK_MONOTONIC) and one "bench:" line goes to stdout
 * (also under --quiet); the outputs written are the warm-up run's. */
static int qr_cli_run(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *g;
    QrTensor *in;
    double t_load = qr_time_now();
    int rc = qr__cli_parse(argc, argv, &o, qr__cli_usage_run, false);
    if (rc) return rc < 0 ? 0 : rc;
    bool int_mode = o.mode && !strcmp(o.mode, "int");
    if (o.mode && !int_mode && strcmp(o.mode, "sim")) {
        fprintf(stderr, "qreport: run --mode must be sim or int\n%s", qr__cli_usage_run);
        return QR_EXIT_USAGE;
    }
    rc = qr__cli_begin(argc, argv, qr__cli_usage_run, false, false, &o, &g, &in);   /* load + --max-memory check */
    if (rc >= 0) return rc;
    QrStatus st = QR_OK;
    const char *dir = o.out_dir ? o.out_dir : ".";
    QrQuantTable qt = {0};
    QrGraph low = {0};
    QrLowerInfo info = {0};
    const QrGraph *exe = g;
    if (int_mode) {
        st = qr_qtable_build(g, &qt);
        if (st == QR_OK) st = qr_lower_graph(g, &qt, o.int16_integer, &low, &info);
        if (st != QR_OK) st = qr_err_wrap(st, "--mode int: lowering %s to integer kernels", o.model);
        else exe = &low;
        if (st == QR_OK && !info.n_groups)
            qr__cli_warn(&o, "--mode int: %s has no DequantizeLinear -> op -> QuantizeLinear group to lower; it runs as in sim mode",
                         o.model);
        else if (st == QR_OK && !o.quiet)
            printf("int mode: %d group%s on integer kernels, %d candidate%s left in float\n", info.n_groups,
                   info.n_groups == 1 ? "" : "s", info.n_skipped, info.n_skipped == 1 ? "" : "s");
    }
    t_load = qr_time_now() - t_load;
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QrTensor *scratch = calloc((size_t)g->n_outputs + 1, sizeof *scratch);
    double *ms = calloc((size_t)o.repeat + 1, sizeof *ms);
    if (st == QR_OK && (!outs || !scratch || !ms)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_mkdir_p(dir);
    /* Constant subgraphs (weights through Q->DQ) are computed in the first run and kept,
     * as a runtime folds them when it loads the model. */
    QrRunCache *cache = st == QR_OK ? qr_run_cache_new(exe) : NULL;
    qr_run_cache_keep_prep(cache);   /* and convolutions' packed weights, as a runtime's session prepacks them */
    QrRunOpts ro = { .cache = cache };
    if (st == QR_OK) st = qr_run(exe, in, &ro, outs);
    for (int r = 0; st == QR_OK && r < o.repeat; r++) {
        double t0 = qr_time_now();
        st = qr_run(exe, in, &ro, scratch);
        ms[r] = 1e3 * (qr_time_now() - t0);
        for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&scratch[i]);
    }
    qr_run_cache_free(cache);
    if (st == QR_OK && o.repeat) {
        double sum = 0;
        for (int r = 0; r < o.repeat; r++) sum += ms[r];
        qsort(ms, (size_t)o.repeat, sizeof *ms, qr__cli_bh_cmp_double);
        double median = o.repeat % 2 ? ms[o.repeat / 2] : 0.5 * (ms[o.repeat / 2 - 1] + ms[o.repeat / 2]);
        printf("bench: runs=%d median_ms=%.3f min_ms=%.3f mean_ms=%.3f threads=%d isa=%s mode=%s load_ms=%.3f\n", o.repeat,
               median, ms[0], sum / o.repeat, qr_pool_threads(), qr_isa_name(qr_kern_isa()), int_mode ? "int" : "sim",
               1e3 * t_load);
        fflush(stdout);
    }
    for (int i = 0; st == QR_OK && i < g->n_outputs; i++) {
        char safe[256], path[4096];
        qr_safe_filename(safe, sizeof safe, g->values[g->outputs[i]].name);
        snprintf(path, sizeof path, "%s/%s.npy", dir, safe);
        if (qr_dtype_is_minifloat(outs[i].dtype) || outs[i].dtype == QR_DT_BF16) {   /* numpy has no float8/float4/bfloat16: widen */
            QrTensor wide;
            st = qr_tensor_to_f32(&outs[i], &wide);
            if (st == QR_OK) { qr_tensor_free_data(&outs[i]); outs[i] = wide; }
        }
        if (st == QR_OK) st = qr_npy_write(path, &outs[i]);
        if (st == QR_OK && !o.quiet) {
            char sh[128];
            printf("%s: %s %s -> %s\n", g->values[g->outputs[i]].name, qr_dtype_name(outs[i].dtype),
                   qr_shape_str_brackets(sh, sizeof sh, outs[i].rank, outs[i].dims), path);
        }
    }
    if (outs) for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
    free(outs);
    free(scratch);
    free(ms);
    qr_graph_free(&low);                  /* borrows from g: first */
    qr_lower_info_free(&info);
    qr_qtable_free(&qt);
    qr__cli_release(g, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

static int qr_cli_profile(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *g;
    QrTensor *in;
    int rc = qr__cli_begin(argc, argv, qr__cli_usage_profile, false, true, &o, &g, &in);
    if (rc >= 0) return rc;                  /* -i with --data: refused before loading (qr__cli_begin) */
    QrStatus st;
    const char *dir = o.out_dir ? o.out_dir : ".";
    int nonfinite = 0;
    QrProfileSel sel = { o.prefixes, o.types };
    QrDsSet ds = {0};
    if (o.data_dir) st = qr__cli_take_set(&o, g, o.samples, &ds);   /* listed while loading */
    else st = QR_OK;
    if (st == QR_OK) st = qr_profile_sel_check(g, &sel);
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK && o.data_dir) {
        QrProgress pg;
        qr_progress_init(&pg, stderr, o.quiet);
        QrStepHook hook = qr_progress_hook(&pg);
        if (st == QR_OK) qr_progress_begin(&pg, "samples", 0);
        if (st == QR_OK) { st = qr_dsstat_profile_data(g, &ds, &sel, dir, &hook, &nonfinite); qr_progress_end(&pg, st); }
    } else if (st == QR_OK) st = qr_profile_write_sel(g, in, NULL, NULL, dir, "", &sel, &nonfinite);
    qr_dsset_free(&ds);
    if (st == QR_OK && nonfinite) qr__cli_warn(&o, "%d rows contain NaN/Inf values (see the NaN and Inf columns)", nonfinite);
    if (st == QR_OK && !o.quiet) printf("wrote %s/" QR_BF_STATISTIC ".txt and %s/" QR_BF_STATISTIC ".csv\n", dir, dir);
    qr__cli_release(g, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

/* Loads the analysis model and prepares it for the baseline's inputs (o: the command's options
 * and run, from qr__cli_begin). */
static QrStatus qr__cli_load_second(QrCliOpts *o, const char *path, const QrGraph *base, const QrTensor *inputs,
                                    QrGraph **out) {
    QrStatus st;
    QrGraph *a = qr__cli_preload_take(o, path, &st);
    QR_TRY(st);
    if (!a) QR_TRY(qr_run_load(path, &a));
    if (!a->n_outputs)
        st = qr_errf(QR_ERR_INVALID, "%s: the graph has no outputs (graph.output is empty): nothing to compute", path);
    else if (a->n_inputs != base->n_inputs)
        st = qr_errf(QR_ERR_INVALID, "%s has %d inputs but the baseline %s has %d", path, a->n_inputs, base->path,
                     base->n_inputs);
    for (int i = 0; st == QR_OK && i < a->n_inputs; i++) st = qr_run_check_input(a, i, &inputs[i]);
    if (st == QR_OK) st = qr_run_infer(a, inputs);
    if (st == QR_OK && !o->quiet) qr_run_lint(a, qr__cli_lint_emit, NULL);
    if (st == QR_OK) st = qr__cli_mem_check(o, base, a, inputs);
    if (st != QR_OK) { qr_graph_free(a); free(a); return st; }
    *out = a;
    return QR_OK;
}

/* Opens the analysis session of b and a with the command's settings: --int16 (the int mode's
 * 16-bit groups), --no-error-split (runall --shard) and --max-memory (one execution at a time, no
 * all-on reference). */
static QrStatus qr__cli_session_open(const QrCliOpts *o, QrSession *se, const QrGraph *b, const QrGraph *a,
                                     const QrTensor *in) {
    QR_TRY(qr_session_open(se, b, a, in));
    se->int16_integer = o->int16_integer;
    se->no_error_split = o->no_error_split;
    if (o->max_memory > 0) qr_session_low_memory(se);
    return QR_OK;
}

static int qr_cli_match(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *b, *a = NULL;
    QrTensor *in;
    int rc = qr__cli_begin(argc, argv, qr__cli_usage_match, true, false, &o, &b, &in);
    if (rc >= 0) return rc;
    QrStatus st;
    const char *dir = o.out_dir ? o.out_dir : ".";
    QrSession se = {0};
    QrEquivResult eq = {0};
    bool have_eq = false;
    st = qr__cli_load_second(&o, o.model2, b, in, &a);
    if (st == QR_OK) st = qr__cli_session_open(&o, &se, b, a, in);
    if (st == QR_OK) {
        QrStatus es = qr_session_run_baseline(&se);      /* also proves every pair (equivalence verification) */
        if (es == QR_OK) es = qr_session_equivalence(&se, &eq);
        if (es == QR_OK) have_eq = true;
        else qr__cli_warn(&o, "equivalence check could not run: %s", qr_err_msg());
    }
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_match_write(b, a, &se.m, have_eq ? &eq : NULL, dir);
    int code = QR_EXIT_OK;
    if (st == QR_OK) {
        int unmatched = 0;
        for (int i = 0; i < se.m.n; i++) unmatched += se.m.m[i].a_node < 0;
        if (!o.quiet) {
            for (int i = 0; i < se.m.n; i++) {
                const QrMatch *m = &se.m.m[i];
                printf("%-40s -> %-50s %s%s%s%s\n", b->values[m->b_value].name,
                       m->a_node >= 0 ? a->values[m->a_value].name : "-", qr_match_method_name(m->method),
                       m->verify == QR_MV_UNVERIFIED ? "  UNVERIFIED" : "", m->note ? "  " : "", m->note ? m->note : "");
            }
            if (se.m.verified_run)
                printf("pairs verified: %d of %d (%d UNVERIFIED: not the same value with every quantizer off)\n",
                       se.m.n_verified, se.m.n_verified + se.m.n_unverified, se.m.n_unverified);
            printf("%d baseline values, %d matched, %d without counterpart; %d analysis values without counterpart\n",
                   se.m.n, se.m.n - unmatched, unmatched, se.m.n_unmatched_a);
            if (have_eq) printf("%s\n", qr_match_equiv_verdict(b, &se.m, &eq, &(QrVerdict){0}));
            printf("wrote %s/" QR_BF_MATCH ".txt and %s/" QR_BF_MATCH ".csv\n", dir, dir);
        }
        if (have_eq && !eq.equivalent && eq.worst_match >= 0) {
            fprintf(stderr, "qreport: warning: %s\n", qr_match_equiv_verdict(b, &se.m, &eq, &(QrVerdict){0}));
            code = 3;
        }
    }
    if (have_eq) qr_match_equiv_free(&eq);
    qr_session_close(&se);
    if (a) { qr_graph_free(a); free(a); }
    qr__cli_release(b, in);
    return st == QR_OK ? code : qr__cli_fail(st);
}

static int qr_cli_check(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *g;
    QrTensor *in;
    int rc = qr__cli_begin(argc, argv, qr__cli_usage_check, false, false, &o, &g, &in);
    if (rc >= 0) return rc;
    QrStatus st;
    const char *dir = o.out_dir ? o.out_dir : ".";
    QrQuantTable qt = {0};
    QrStats *stats = NULL;
    st = qr_qtable_build(g, &qt);
    if (st == QR_OK && o.n_inputs) {
        stats = calloc((size_t)g->n_values + 1, sizeof *stats);
        bool *seen = calloc((size_t)g->n_values + 1, sizeof *seen);
        st = stats && seen ? qr_stats_collect(g, in, stats, seen) : qr_errf(QR_ERR_NOMEM, "out of memory");
        free(seen);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/" QR_BF_CHECK, dir);
    QrCheck chk = { 0 };
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_check_write(g, &qt, stats, path, &chk);
    if (st == QR_OK && !o.quiet)
        printf("%d unfused patterns, %d shared weights/quantizers, %d anomalies; wrote %s\n", chk.sum.n_unfused,
               chk.sum.n_shared, chk.sum.n_anomalies, path);
    qr_check_free(&chk);
    free(stats);
    qr_qtable_free(&qt);
    qr__cli_release(g, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

/* Loads both models (the inputs from --data's first sample when no -i is given) and opens the
 * analysis session. */
static int qr__cli_pair(int argc, char **argv, const char *usage, QrCliOpts *o, QrGraph **b, QrGraph **a, QrTensor **in,
                        QrSession *se) {
    int rc = qr__cli_begin(argc, argv, usage, true, true, o, b, in);
    if (rc >= 0) return rc;
    QrStatus st = qr__cli_load_second(o, o->model2, *b, *in, a);
    if (st == QR_OK) st = qr__cli_session_open(o, se, *b, *a, *in);
    if (st == QR_OK && se->tw.n_kept)
        qr__cli_warn(o, "%d integer node%s cannot be toggled: %s", se->tw.n_kept, se->tw.n_kept == 1 ? "" : "s", se->tw.note);
    if (st == QR_OK && o->out_dir && !o->shard) st = qr_mkdir_p(o->out_dir);   /* --shard: -o is the part file */
    if (st == QR_OK) return -1;
    if (*a) { qr_graph_free(*a); free(*a); *a = NULL; }
    qr__cli_drop_set(o);
    qr__cli_release(*b, *in);
    return qr__cli_fail(st);
}

/* Every name of a list (names separated by any of seps) must be a node or value of b or a:
 * else the error names it with close names. */
static QrStatus qr__cli_names_check(const char *list, const char *seps, const QrGraph *b, const QrGraph *a, const char *opt) {
    char *buf = list ? strdup(list) : NULL;
    if (list && !buf) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = QR_OK;
    char *save = NULL;
    for (char *tok = buf ? strtok_r(buf, seps, &save) : NULL; st == QR_OK && tok; tok = strtok_r(NULL, seps, &save)) {
        while (*tok == ' ') tok++;
        if (!*tok || qr_select_name_known(b, a, tok)) continue;
        int n = 0;
        const char **names = qr_select_graph_names(b, a, &n);
        char sug[512];
        qr_str_suggest(tok, names, n, sug, sizeof sug);
        free(names);
        st = qr_errf(QR_ERR_INVALID, "%s: '%s' is no node or value of %s or %s%s", opt, tok, b->path ? b->path : "the baseline",
                     a && a->path ? a->path : "the analysis model", sug);
    }
    free(buf);
    return st;
}

/* The sensitivity knobs shared by sensitivity and runall (names checked against b and a). */
static QrStatus qr__cli_sens_knobs(const QrCliOpts *o, const QrGraph *b, const QrGraph *a, QrSensOpts *so) {
    so->nodes = o->nodes;
    so->rank_output = o->rank_output;
    if (o->node_type) QR_TRY(qr_sens_node_type_parse(o->node_type, &so->node_type));
    int idx;
    QR_TRY(qr_select_output(b, o->rank_output, &idx));
    QrMetricKind km = QR_METRIC_L1;
    if (o->metric) qr_metric_parse(o->metric, &km);
    if (km == QR_METRIC_KLD) {
        const QrValue *v = idx >= 0 ? &b->values[b->outputs[idx]] : NULL;
        if (v ? !qr_metric_is_logits(v->name, &v->t) : !qr_tok_any(b))
            return v ? qr_errf(QR_ERR_INVALID, "--metric KLD: graph output '%s' is no logits output ([batch, sequence, "
                               "vocab] or named logits)", v->name)
                     : qr_errf(QR_ERR_INVALID, "--metric KLD: the model has no logits output ([batch, sequence, vocab] or "
                               "named logits)");
    }
    QR_TRY(qr__cli_names_check(o->nodes, ",", b, a, "--nodes"));
    QR_TRY(qr__cli_names_check(o->quantize_nodes, ";,", b, a, "--quantize-nodes"));
    return qr__cli_names_check(o->non_quantize_nodes, ";,", b, a, "--non-quantize-nodes");
}

/* compare --metric: the model output's metric and the 5 layers worst by it. */
static void qr__cli_worst_layers(const QrSession *se, const QrCompare *c, const char *metric) {
    QrMetricKind mk = QR_METRIC_L1;
    qr_metric_parse(metric, &mk);
    printf("model output %s: %.6g; worst layers by %s:\n", qr_metric_name(mk), qr_metric_get(&c->out, mk), qr_metric_name(mk));
    int pick[5], np = 0;
    for (int r = 0; r < 5; r++) {
        int best = -1;
        for (int k = 0; k < c->n; k++) {
            if (!c->rows[k].has_m) continue;
            bool taken = false;
            for (int j = 0; j < np; j++) taken |= pick[j] == k;
            if (taken) continue;
            if (best < 0 || qr_metric_badness(&c->rows[k].m, mk) > qr_metric_badness(&c->rows[best].m, mk)) best = k;
        }
        if (best < 0) break;
        pick[np++] = best;
        printf("  %d. %-40s %s %.6g\n", r + 1, se->b->nodes[se->m.m[c->rows[best].match].b_node].name, qr_metric_name(mk),
               qr_metric_get(&c->rows[best].m, mk));
    }
}

/* compare --data: every sample of the set into the data-set accumulators, then the tables. */
static int qr__cli_compare_data(QrCliOpts *o, QrGraph *b, QrGraph *a, QrTensor *in, QrSession *se, const char *dir) {
    int code = QR_EXIT_OK;
    QrDsSet ds = {0};
    QrDsCompare dc = {0};
    QrMetricKind mk = QR_METRIC_L1;
    if (o->metric) qr_metric_parse(o->metric, &mk);
    QrStatus st = qr__cli_take_set(o, b, o->samples, &ds);   /* listed while loading (-i: refused there) */
    QrTensor *cur = calloc((size_t)b->n_inputs + 1, sizeof *cur);
    if (st != QR_OK) { code = qr__cli_fail(st); goto done; }
    int shard = 0, n_shards = 1, lo = 0, hi = 0;
    if (o->shard) {
        st = qr_dspart_shard_parse(o->shard, &shard, &n_shards);
        if (st == QR_OK && !o->out_dir) st = qr_errf(QR_ERR_INVALID, "--shard needs -o PART.qrpart");
        if (st != QR_OK) { code = qr__cli_fail(st); goto done; }
    }
    st = cur ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_ds_compare_init(&dc, se, ds.n, ds.names);
    dc.skip_bad = o->skip_bad;
    dc.part = o->shard != NULL;              /* a shard whose samples are all bad is no error: merge checks the set */
    /* the pass keeps the worst sample: badcase.npy is written from it, not read again */
    if (st == QR_OK && !o->shard) st = qr_ds_compare_keep(&dc, 1, mk);
    hi = ds.n;
    if (st == QR_OK && o->shard) qr_dspart_shard_range(ds.n, shard, n_shards, &lo, &hi);
    QrProgress pr;
    qr_progress_init(&pr, stderr, o->quiet);
    QrStepHook hook = qr_progress_hook(&pr);
    qr_progress_begin(&pr, "compare over the data set", 0);
    if (st == QR_OK) st = qr_ds_pass(&dc, se, &ds, o->mode, lo, hi, in, &hook);
    qr_progress_end(&pr, st);
    qr_session_next_inputs(se, in);
    if (st == QR_OK && o->shard) {
        char nbuf[32];
        snprintf(nbuf, sizeof nbuf, "%d", ds.n);
        const char *keys[] = { "command", "mode", "metric", "samples", "skip_bad_samples" };
        const char *vals[] = { "compare", o->mode ? o->mode : "sim", qr_metric_name(mk), nbuf, o->skip_bad ? "yes" : "no" };
        st = qr_dspart_write(o->out_dir, "compare", &dc, &ds, se, keys, vals, QR_ARRAY_LEN(keys), shard, n_shards, NULL, 0);
        if (st == QR_OK && !o->quiet)
            printf("shard %d/%d: samples %d..%d of %d; wrote %s\n", shard, n_shards, lo, hi - 1, ds.n, o->out_dir);
        if (st != QR_OK) code = qr__cli_fail(st);
        goto done;
    }
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_ds_compare_write(&dc, se, &ds, mk, dir);
    if (st == QR_OK && !o->quiet) {
        QrMetrics m;
        qr_ds_out_metrics(&dc.outs[0], &m);
        printf("%d samples; model output%s pooled: Cosine %.6f, SQNR %.2f dB (%d layers compared)\n", dc.n_done,
               dc.n_outs > 1 ? " 0" : "", m.cosine, m.sqnr, dc.n_rows);
        for (int k = 0; k < ds.n; k++)
            if (dc.skipped && dc.skipped[k]) printf("skipped (--skip-bad-samples): %s\n", dc.skip_why[k]);
        printf("wrote %s/" QR_BF_COMPARE ".txt, " QR_BF_DS_OUTPUTS ".txt, " QR_BF_DS_SAMPLES ".txt (and .csv), " QR_BF_BADCASE "\n",
               dir);
    }
    if (st != QR_OK) code = qr__cli_fail(st);
done:
    qr_ds_compare_free(&dc);
    qr_dsset_free(&ds);
    free(cur);
    qr_session_close(se);
    qr_graph_free(a);
    free(a);
    qr__cli_release(b, in);
    return code;
}

static int qr_cli_compare(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *b = NULL, *a = NULL;
    QrTensor *in = NULL;
    QrSession se = {0};
    /* --from-values DIR: the inputs are the ones saved there (as -i), the models only give the structure */
    int rc = qr__cli_parse(argc, argv, &o, qr__cli_usage_compare, true);
    if (rc) return rc < 0 ? 0 : rc;
    if (o.data_dir && (o.from_values || o.save_values)) {
        fprintf(stderr, "qreport: --data and --%s are exclusive\n%s", o.from_values ? "from-values" : "save-values", qr__cli_usage_compare);
        return QR_EXIT_USAGE;
    }
    QrArena ar = {0};
    char **av = argv;
    int ac = argc;
    if (o.from_values) {
        const char *why = o.n_inputs ? "takes the inputs saved in DIR (no -i)" : o.save_values ? "and --save-values are exclusive"
                        : o.mode && strcmp(o.mode, "sim") ? "recomputes the saved comparison (no --mode)" : NULL;
        if (why) { fprintf(stderr, "qreport: --from-values %s\n%s", why, qr__cli_usage_compare); return QR_EXIT_USAGE; }
        const char *paths[16];
        int np = 0;
        QrStatus st = qr_values_inputs(o.from_values, &ar, paths, 16, &np);
        av = st == QR_OK ? qr_arena_array(&ar, (size_t)(argc + 2 * np + 1), sizeof(char *)) : NULL;
        if (st == QR_OK && !av) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        if (st != QR_OK) { qr_arena_free(&ar); return qr__cli_fail(st); }
        for (int k = 0; k < argc; k++) av[k] = argv[k];
        for (int k = 0; k < np; k++) { av[argc + 2 * k] = "-i"; av[argc + 2 * k + 1] = (char *)paths[k]; }
        ac = argc + 2 * np;
    }
    rc = qr__cli_pair(ac, av, qr__cli_usage_compare, &o, &b, &a, &in, &se);
    if (rc >= 0) { qr_arena_free(&ar); return rc; }
    const char *dir = o.out_dir ? o.out_dir : ".";
    if (o.data_dir) { qr_arena_free(&ar); return qr__cli_compare_data(&o, b, a, in, &se, dir); }
    if (o.samples) qr__cli_warn(&o, "--samples has no effect without --data");
    QrStatus st = QR_OK;
    QrCompare c = {0};
    if (o.save_values) st = qr_values_keep(&se);
    /* logits outputs: the analysis model's outputs are kept for the per-token columns */
    QrTokAcc *tok = NULL;
    bool want_tok = qr_tok_any(b) && !o.from_values;
    if (st == QR_OK && want_tok) {
        tok = calloc((size_t)b->n_outputs + 1, sizeof *tok);
        if (!se.keep_outs) se.keep_outs = calloc((size_t)b->n_outputs + 1, sizeof(QrTensor));
        if (!tok || !se.keep_outs) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK) st = o.from_values ? qr_values_load_compare(&se, o.from_values, o.cos_threshold, &c)
                                        : qr_compare_mode(&se, o.mode, o.cos_threshold, &c);
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_compare_write(&se, &c, dir);
    if (st == QR_OK && want_tok) st = qr_tok_session(&se, se.keep_outs, o.labels, 0, tok);
    if (st == QR_OK && want_tok) st = qr_tok_session_write(&se, se.keep_outs, tok, dir);
    if (st == QR_OK && o.save_values) st = qr_values_save(&se, &c, o.save_values);
    /* Horizon's compare_per_layer also writes the advisor and a page */
    QrAdvice adv = {0};
    bool have_adv = false;
    char *adv_txt = NULL;
    if (st == QR_OK) {
        st = qr_advisor_run(&se, &c, NULL, NULL, NULL, &adv);
        have_adv = st == QR_OK;
    }
    if (st == QR_OK) st = qr_advisor_write(&se, &adv, dir);
    if (st == QR_OK) {
        unsigned char *t = NULL;
        size_t tl = 0;
        st = qr_file_read(qr_arena_printf(&ar, "%s/" QR_BF_ADVISOR, dir), 0, &t, &tl);
        adv_txt = st == QR_OK ? realloc(t, tl + 1) : NULL;
        if (st == QR_OK && !adv_txt) { free(t); st = qr_errf(QR_ERR_NOMEM, "out of memory"); }
        if (adv_txt) adv_txt[tl] = 0;
    }
    if (st == QR_OK) st = qr_bundle_compare_page(&se, &c, tok, adv_txt, dir);
    QrGenResult gr = { .first_divergence = -1 };
    if (st == QR_OK && o.generate) {          /* last: the decoding re-infers the graphs step by step (then back) */
        QrGenOpts go = { .n = o.generate, .kv_map = o.kv_map, .n_kv_map = o.n_kv_map, .mode = o.mode,
                         .cos_threshold = o.cos_threshold, .dir = dir };
        st = qr_gen_run(b, a, in, &go, &gr);
        if (st == QR_OK) st = qr_gen_write(&gr, dir);
    }
    if (st == QR_OK && !o.quiet) {
        printf("model output: Cosine %.6f, SQNR %.2f dB, L1 %.6g (%d layers compared%s)\n", c.out.cosine, c.out.sqnr,
               c.out.l1, c.n, o.from_values ? ", from saved values" : "");
        if (c.first_drop >= 0)
            printf("first layer below Cosine %.4g: %s (%.6f)\n", o.cos_threshold,
                   b->nodes[se.m.m[c.rows[c.first_drop].match].b_node].name, c.rows[c.first_drop].m.cosine);
        if (o.metric) qr__cli_worst_layers(&se, &c, o.metric);
        for (int j = 0; want_tok && j < b->n_outputs; j++) {
            if (!tok[j].vocab) continue;
            QrTokStats ts;
            qr_tok_stats(&tok[j], &ts);
            printf("%s per token: %lld tokens, top-1 agree %.4f, top-5 overlap %.4f, KL mean %.6g p99 %.6g max %.6g, "
                   "dp_rms %.6g", b->values[b->outputs[j]].name, (long long)ts.tokens, ts.top1_agree, ts.top5_overlap,
                   ts.kld_mean, ts.kld_p99, ts.kld_max, ts.dp_rms);
            if (ts.nll_tokens) printf("; NLL %.6g -> %.6g, ln(PPL ratio) %.6g over %lld labels", ts.nll_base,
                                      ts.nll_analysis, ts.ln_ppl_ratio, (long long)ts.nll_tokens);
            printf("\n");
        }
        if (have_adv) printf("advisor: %d finding%s\n", adv.n, adv.n == 1 ? "" : "s");
        if (o.generate) {
            printf("generation (%d tokens, %s):\n  baseline:", gr.n, gr.cached ? "past_key_values fed from present" : "full re-runs");
            for (int k = 0; k < gr.n; k++) printf(" %lld", (long long)gr.base_tok[k]);
            printf("\n  analysis:");
            for (int k = 0; k < gr.n; k++) printf(" %lld", (long long)gr.ana_tok[k]);
            if (gr.first_divergence >= 0) printf("\n  first divergence at generated token %d\n", gr.first_divergence);
            else printf("\n  the same tokens\n");
            if (gr.have_div)
                printf("  per-layer comparison at that step (%lld tokens of context): %s/" QR_BF_GEN_DIV "/" QR_BF_COMPARE
                       ".txt, lowest layer Cosine %.6f (%s)\n", (long long)gr.div_prefix, dir, gr.div_worst_cos, gr.div_worst);
            else if (gr.div_err[0]) printf("  no per-layer comparison at that step: %s\n", gr.div_err);
        }
        printf("wrote %s/" QR_BF_COMPARE ".txt and .csv, %s%s" QR_BF_ADVISOR ", " QR_BF_COMPARE_HTML "\n", dir,
               want_tok ? QR_BF_DS_OUTPUTS ".txt and .csv, " : "", o.generate ? QR_BF_GENERATION ".txt and .csv, " : "");
        if (o.save_values) printf("saved the compared values in %s (index.tsv)\n", o.save_values);
    }
    free(adv_txt);
    if (have_adv) qr_advice_free(&adv);
    qr_gen_free(&gr);
    for (int j = 0; tok && j < b->n_outputs; j++) qr_tok_free(&tok[j]);
    free(tok);
    qr_values_keep_free(&se);
    qr_compare_free(&c);
    qr_session_close(&se);
    qr_graph_free(a);
    free(a);
    qr__cli_release(b, in);
    qr_arena_free(&ar);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

/* "1,3,5,10" -> ints; false on a malformed list. */
static bool qr__cli_ints(const char *s, int *out, int cap, int *n) {
    *n = 0;
    while (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0 || v > 100000 || *n == cap) return false;
        out[(*n)++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return true;
}

/* ==== sensitivity over a data set (sensitivity --data, its shards, and merge) =============
 * Its options travel as strings (a part's options), so a merge rebuilds exactly what one
 * process would run: the comparison pass over the samples, the K worst by it, then sensitivity
 * and the cumulative error on them (analysis/sens qr_sens_set_run). */
typedef struct QrCliSensSpec {
    const char *metric, *sens_mode, *topk_list, *nodes, *node_type, *rank_output, *qn, *nqn, *reverse, *sens_samples;
} QrCliSensSpec;

static void qr__cli_sens_spec(const QrCliOpts *o, char *kbuf, size_t kn, QrCliSensSpec *sp) {
    snprintf(kbuf, kn, "%d", o->sens_samples);
    *sp = (QrCliSensSpec){ o->metric ? o->metric : "", o->sens_mode ? o->sens_mode : "one-on",
                           o->topk_list ? o->topk_list : "1,3,5,10", o->nodes ? o->nodes : "", o->node_type ? o->node_type : "",
                           o->rank_output ? o->rank_output : "", o->quantize_nodes ? o->quantize_nodes : "",
                           o->non_quantize_nodes ? o->non_quantize_nodes : "", o->reverse ? "1" : "0", kbuf };
}

/* The spec as part options (keys[], vals[]; returns the count, at most 16 with base). */
static int qr__cli_sens_spec_opts(const QrCliSensSpec *sp, const char **keys, const char **vals) {
    const char *k[] = { "metric_given", "sensitivity", "topk_list", "nodes", "node_type", "rank_output", "quantize_nodes",
                        "non_quantize_nodes", "reverse", "sens_samples" };
    const char *v[] = { sp->metric, sp->sens_mode, sp->topk_list, sp->nodes, sp->node_type, sp->rank_output, sp->qn, sp->nqn,
                        sp->reverse, sp->sens_samples };
    for (int i = 0; i < QR_ARRAY_LEN(k); i++) { keys[i] = k[i]; vals[i] = v[i]; }
    return QR_ARRAY_LEN(k);
}

static QrStatus qr__cli_sens_spec_from_part(const QrDsPart *p, QrCliSensSpec *sp) {
    const char *const k[] = { "metric_given", "sensitivity", "topk_list", "nodes", "node_type", "rank_output",
                              "quantize_nodes", "non_quantize_nodes", "reverse", "sens_samples" };
    const char **v[] = { &sp->metric, &sp->sens_mode, &sp->topk_list, &sp->nodes, &sp->node_type, &sp->rank_output, &sp->qn,
                         &sp->nqn, &sp->reverse, &sp->sens_samples };
    for (int i = 0; i < QR_ARRAY_LEN(k); i++) {
        *v[i] = qr_dspart_opt(p, k[i]);
        if (!*v[i]) return qr_errf(QR_ERR_INVALID, "part '%s' lacks the sensitivity option '%s'", p->path, k[i]);
    }
    return QR_OK;
}

/* Sensitivity and cumulative error over the K worst samples of dc (merged or single), written into dir. */
static QrStatus qr__cli_sens_over(QrSession *se, const QrDsSet *ds, const QrDsCompare *dc, const QrCliSensSpec *sp,
                                  bool quiet, const char *dir) {
    QrSensOpts so = { .off_one = !strcmp(sp->sens_mode, "off-one"), .metric = QR_METRIC_L1, .reverse = !strcmp(sp->reverse, "1"),
                      .nodes = *sp->nodes ? sp->nodes : NULL, .rank_output = *sp->rank_output ? sp->rank_output : NULL };
    if (*sp->metric) qr_metric_parse(sp->metric, &so.metric);
    QrStatus st = *sp->node_type ? qr_sens_node_type_parse(sp->node_type, &so.node_type) : QR_OK;
    int topk[12], nk = 0;
    if (st == QR_OK && !qr__cli_ints(sp->topk_list, topk, 12, &nk))
        st = qr_errf(QR_ERR_INVALID, "--topk-list '%s': expected positive integers separated by commas", sp->topk_list);
    QrAccSets sets = {0};
    if (st == QR_OK && *sp->qn) st = qr_select_acc_sets(se, sp->qn, true, &sets);
    if (st == QR_OK && *sp->nqn) st = qr_select_acc_sets(se, sp->nqn, false, &sets);
    int K = atoi(sp->sens_samples);
    if (K <= 0) K = QR_SENS_SAMPLES_DEFAULT;
    K = QR_MIN(K, dc->n_done);
    int *order = calloc((size_t)dc->n_samples + 1, sizeof *order);
    if (st == QR_OK && !order) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) qr_ds_rank_samples(dc, so.metric, order);
    QrSensSet ss = {0};
    QrProgress pr;
    qr_progress_init(&pr, stderr, quiet);
    se->progress = qr_progress_hook(&pr);
    qr_progress_begin(&pr, "sensitivity over the samples", 0);
    if (st == QR_OK)
        st = qr_sens_set_run(se, &so, ds, order, K, so.metric, topk, nk, &sets, *sp->metric ? so.metric : QR_METRIC_COSINE,
                             dc->kept, dc->n_kept, NULL, -1, &ss);
    qr_progress_end(&pr, st);
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_sens_set_write(se, &ss, dir);
    if (st == QR_OK && !quiet) {
        printf("%d sensitivity rows (%s) over the %d worst of %d samples, pooled, sorted by %s; %d of %d share the top 5\n",
               ss.r.n, so.off_one ? "off-one" : "one-on", K, dc->n_samples, qr_metric_name(so.metric), ss.n_top5_same, K);
        for (int k = 0; k < ss.r.n && k < 5; k++)
            printf("  %d. %-40s %-10s %s %.6g\n", k + 1, ss.r.rows[k].name, qr_sens_type_name(ss.r.rows[k].type),
                   qr_metric_name(so.metric), qr_metric_get(&ss.r.rows[k].m, so.metric));
        printf("wrote %s/" QR_BF_SENS ".txt/.csv/.json and %s/" QR_BF_ACCUM "\n", dir, dir);
    }
    qr_sens_set_free(&ss);
    qr_select_acc_sets_free(&sets);
    free(order);
    return st;
}

/* sensitivity --data: the comparison pass over the (shard's) samples, then a part, or the pass
 * over the K worst. */
static int qr__cli_sens_data(QrCliOpts *o, QrGraph *b, QrGraph *a, QrTensor *in, QrSession *se, const char *dir) {
    QrDsSet ds = {0};
    QrDsCompare dc = {0};
    int code = QR_EXIT_OK;
    QrStatus st = qr__cli_take_set(o, b, o->samples, &ds);   /* listed while loading (-i: refused there) */
    QrTensor *cur = calloc((size_t)b->n_inputs + 1, sizeof *cur);
    int shard = 0, n_shards = 1, lo = 0, hi = 0;
    if (st == QR_OK && o->shard) {
        st = qr_dspart_shard_parse(o->shard, &shard, &n_shards);
        if (st == QR_OK && !o->out_dir) st = qr_errf(QR_ERR_INVALID, "--shard needs -o PART.qrpart");
    }
    QrSensOpts knobs = {0};
    if (st == QR_OK) st = qr__cli_sens_knobs(o, b, a, &knobs);
    if (st == QR_OK && !cur) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_ds_compare_init(&dc, se, ds.n, ds.names);
    dc.skip_bad = o->skip_bad;
    dc.part = o->shard != NULL;              /* a shard whose samples are all bad is no error: merge checks the set */
    /* the pass keeps the K worst samples (qr__cli_sens_over's, ranked by its metric) with their
     * baseline outputs: the sensitivity takes them from there, not read or run again */
    QrMetricKind mk = QR_METRIC_L1;
    if (o->metric) qr_metric_parse(o->metric, &mk);
    if (st == QR_OK && !o->shard) st = qr_ds_compare_keep(&dc, o->sens_samples > 0 ? o->sens_samples : QR_SENS_SAMPLES_DEFAULT, mk);
    hi = ds.n;
    if (st == QR_OK && o->shard) qr_dspart_shard_range(ds.n, shard, n_shards, &lo, &hi);
    QrProgress pr;
    qr_progress_init(&pr, stderr, o->quiet);
    QrStepHook hook = qr_progress_hook(&pr);
    qr_progress_begin(&pr, "compare over the data set", 0);
    if (st == QR_OK) st = qr_ds_pass(&dc, se, &ds, "sim", lo, hi, in, &hook);
    qr_progress_end(&pr, st);
    qr_session_next_inputs(se, in);
    char kbuf[32], nbuf[32];
    QrCliSensSpec sp;
    qr__cli_sens_spec(o, kbuf, sizeof kbuf, &sp);
    if (st == QR_OK && o->shard) {
        snprintf(nbuf, sizeof nbuf, "%d", ds.n);
        const char *keys[16] = { "command", "mode", "samples", "skip_bad_samples" },
                   *vals[16] = { "sensitivity", "sim", nbuf, o->skip_bad ? "yes" : "no" };
        int n = 4 + qr__cli_sens_spec_opts(&sp, keys + 4, vals + 4);
        st = qr_dspart_write(o->out_dir, "sensitivity", &dc, &ds, se, keys, vals, n, shard, n_shards, NULL, 0);
        if (st == QR_OK && !o->quiet)
            printf("shard %d/%d: samples %d..%d of %d; wrote %s (qreport merge runs the sensitivity on the worst samples)\n",
                   shard, n_shards, lo, hi - 1, ds.n, o->out_dir);
    } else if (st == QR_OK) st = qr__cli_sens_over(se, &ds, &dc, &sp, o->quiet, dir);
    if (st != QR_OK) code = qr__cli_fail(st);
    qr_ds_compare_free(&dc);
    qr_dsset_free(&ds);
    free(cur);
    qr_session_close(se);
    qr_graph_free(a);
    free(a);
    qr__cli_release(b, in);
    return code;
}

static int qr_cli_sensitivity(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *b = NULL, *a = NULL;
    QrTensor *in = NULL;
    QrSession se = {0};
    int rc = qr__cli_pair(argc, argv, qr__cli_usage_sensitivity, &o, &b, &a, &in, &se);
    if (rc >= 0) return rc;
    const char *dir = o.out_dir ? o.out_dir : ".";
    if (o.data_dir) return qr__cli_sens_data(&o, b, a, in, &se, dir);
    if (o.sens_samples) qr__cli_warn(&o, "--sens-samples has no effect without --data");
    if (o.shard) {
        fprintf(stderr, "qreport: --shard needs --data\n%s", qr__cli_usage_sensitivity);
        qr_session_close(&se);
        qr_graph_free(a);
        free(a);
        qr__cli_release(b, in);
        return QR_EXIT_USAGE;
    }
    QrSensOpts so = { .off_one = o.sens_mode && !strcmp(o.sens_mode, "off-one"), .metric = QR_METRIC_L1, .reverse = o.reverse };
    if (o.metric) qr_metric_parse(o.metric, &so.metric);
    int topk[12], nk = 0;
    QrStatus st = qr__cli_ints(o.topk_list ? o.topk_list : "1,3,5,10", topk, 12, &nk) ? QR_OK
                : qr_errf(QR_ERR_INVALID, "--topk-list '%s': expected positive integers separated by commas", o.topk_list);
    if (st == QR_OK) st = qr__cli_sens_knobs(&o, b, a, &so);
    so.grouped = o.all_rows ? -1 : 0;
    for (int k = 0; k < nk; k++) so.group_top = QR_MAX(so.group_top, QR_MAX(topk[k], QR_SENS_GROUP_TOP));
    QrAccSets sets = {0};
    if (st == QR_OK && o.quantize_nodes) st = qr_select_acc_sets(&se, o.quantize_nodes, true, &sets);
    if (st == QR_OK && o.non_quantize_nodes) st = qr_select_acc_sets(&se, o.non_quantize_nodes, false, &sets);
    QrSensResult sr = {0};
    QrAccum acc = {0};
    QrProgress pr;
    qr_progress_init(&pr, stderr, o.quiet);
    se.progress = qr_progress_hook(&pr);
    qr_progress_begin(&pr, "sensitivity", 0);
    if (st == QR_OK) st = qr_sens_run(&se, &so, &sr);
    qr_progress_end(&pr, st);
    if (st == QR_OK) st = qr_sens_write(&se, &sr, dir);
    qr_progress_begin(&pr, "accumulated error", 0);
    if (st == QR_OK) st = qr_accum_run_sets(&se, &sr, topk, nk, &sets, o.metric && so.metric != QR_METRIC_KLD ? so.metric
                                                                                                   : QR_METRIC_COSINE, &acc);
    qr_progress_end(&pr, st);
    if (st == QR_OK) st = qr_accum_write(&se, &acc, dir);
    QrDemotion dm = {0};
    bool have_dm = false;
    if (st == QR_OK && o.demote_int16) {
        qr_progress_begin(&pr, "int16 demotion", 0);
        st = qr_demote_run(&se, so.metric, &dm);
        qr_progress_end(&pr, st);
        have_dm = st == QR_OK;
        if (st == QR_OK) st = qr_demote_write(&se, &dm, dir);
        if (st == QR_OK && !dm.n_16) qr__cli_warn(&o, "--demote-int16: %s has no 16-bit quantizer", o.model2);
    }
    if (st == QR_OK && !o.quiet && have_dm) {
        printf("int16 -> int8 demotion, cheapest first by %s (as given: %s %.6g):\n", qr_metric_name(so.metric),
               qr_metric_name(so.metric), qr_metric_get(&dm.as_is, so.metric));
        for (int k = 0; k < dm.n && k < 5; k++)
            printf("  %d. %-40s %-10s %s -> %s  %s %.6g\n", k + 1, dm.rows[k].name, dm.rows[k].kind, dm.rows[k].dtype,
                   dm.rows[k].to, qr_metric_name(so.metric), qr_metric_get(&dm.rows[k].m, so.metric));
    }
    if (have_dm) qr_demote_free(&dm);
    if (st == QR_OK && !o.quiet) {
        printf("%d sensitivity rows (%s), sorted by %s; node executions %lld vs %lld for full re-runs\n", sr.n,
               so.off_one ? "off-one" : "one-on", qr_metric_name(so.metric), (long long)sr.n_exec, (long long)sr.n_full);
        for (int k = 0; k < sr.n && k < 5; k++) {
            printf("  %d. %-40s %-10s %-12s %s %.6g", k + 1, sr.rows[k].name, qr_sens_type_name(sr.rows[k].type),
                   sr.rows[k].op_type, qr_metric_name(so.metric), qr_metric_get(&sr.rows[k].m, so.metric));
            if (so.off_one) printf(" (gain %.6g over all on)", qr_sens_gain(&sr, &sr.rows[k]));
            printf("\n");
        }
        printf("wrote %s/" QR_BF_SENS ".txt/.csv/.json and %s/" QR_BF_ACCUM "\n", dir, dir);
    }
    qr_accum_free(&acc);
    qr_select_acc_sets_free(&sets);
    qr_sens_free(&sr);
    qr_session_close(&se);
    qr_graph_free(a);
    free(a);
    qr__cli_release(b, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}
