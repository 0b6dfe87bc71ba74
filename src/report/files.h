/* report/files — every file name of the runall bundle in one place (docs/REPORT.md
 * describes each file). The analyses that write them, runall/bundle (index.html, its
 * "Files" list, the plots), runall/ and the tests use these names. A name without an
 * extension is a stem: its writer adds .txt/.csv (and .json where REPORT.md says so). */
#ifndef QR_FILES_H
#define QR_FILES_H

#define QR_BF_INDEX          "index.html"
#define QR_BF_SUMMARY        "summary.json"
#define QR_BF_MANIFEST       "manifest.json"
#define QR_BF_CHECK          "model_check_result.txt"   /* analysis/check */
#define QR_BF_MATCH          "match_table"              /* .txt .csv  analysis/match */
#define QR_BF_STATISTIC      "statistic"                /* .txt .csv  analysis/stats (qreport profile: no prefix) */
#define QR_BF_PROFILE_BASE   "model0_"                  /* prefix of QR_BF_STATISTIC in the bundle: the baseline */
#define QR_BF_PROFILE_ANAL   "model1_"                  /* ... the analysis model */
#define QR_BF_COMPARE        "compare_per_layer_out"    /* .txt .csv  analysis/compare */
#define QR_BF_SENS           "sensitive_ops"            /* .txt .csv .json  analysis/sens */
#define QR_BF_ACCUM          "accumulated_error.csv"    /* analysis/sens */
#define QR_BF_BADCASE_STEM   "badcase"                  /* QR_BF_BADCASE_STEM "_<input>.npy" with several inputs */
#define QR_BF_BADCASE        QR_BF_BADCASE_STEM ".npy"
#define QR_BF_WEIGHTS        "weight_comparison"        /* .txt .csv  analysis/weights */
#define QR_BF_WEIGHT_BLOCKS  "weight_blocks"            /* .txt .csv  block-quantized weights only */
#define QR_BF_ADVISOR        "abnormal_layer_advisor.txt"   /* analysis/advisor */
#define QR_BF_WHATIF         "mixed_precision.json"     /* analysis/whatif */
#define QR_BF_BADCASE_LIST   "badcase_list"             /* .txt .csv  analysis/badcase (--data) */
#define QR_BF_DEMOTION       "int16_demotion"           /* .txt .csv .json  analysis/demote (--demote-int16) */
#define QR_BF_DATASET        "dataset"                  /* folder (--data): analysis/dataset */
#define QR_BF_DS_OUTPUTS     "compare_outputs"          /* .txt .csv in dataset/; one input: in the bundle / compare's DIR
                                                          * when an output is logits (analysis/tokens) */
#define QR_BF_DS_SAMPLES     "samples"                  /* .txt .csv in dataset/ */
#define QR_BF_GENERATION     "generation"               /* .txt .csv  analysis/generate (--generate N) */
#define QR_BF_GEN_DIV        "generation_divergence"    /* folder: the per-layer comparison at the first divergent
                                                          * step (QR_BF_COMPARE .txt .csv, <input>.npy) */
#define QR_BF_DS_PLOT_SAMPLES "plots/dataset_samples.png"          /* --data: analysis/dataset (qr_ds_runall_sens) */
#define QR_BF_DS_PLOT_ACCUM  "plots/dataset_accumulated_error.png" /* --data: the curves' mean and p05-p95 band */
#define QR_BF_FRAGILITY      "fragility"                /* .txt .csv  analysis/frag */
#define QR_BF_DUMP           "dump_compare"             /* .txt .csv  deploy/dump (--dump) */
#define QR_BF_REPRO          "repro"                    /* folder: deploy/extract (also qreport extract's DIR) */
#define QR_BF_REPRO_README   "README.txt"               /* in repro/ */
#define QR_BF_REPRO_JSON     "repro.json"
#define QR_BF_REPRO_BASE     "base_sub.onnx"
#define QR_BF_REPRO_ANAL     "analysis_sub.onnx"
#define QR_BF_REPRO_BASE_IN  "base_in_"                 /* + <k>.npy: the cut inputs */
#define QR_BF_REPRO_ANAL_IN  "analysis_in_"
#define QR_BF_REPRO_BASE_EXP "base_expected.npy"
#define QR_BF_REPRO_ANAL_EXP "analysis_expected.npy"
#define QR_BF_PLOTS          "plots"                    /* folder: runall/bundle */
#define QR_BF_PLOT_PER_LAYER "plots/per_layer_metrics.png"
#define QR_BF_PLOT_ACCUM     "plots/accumulated_error.png"
#define QR_BF_PLOT_SENS      "plots/sensitivity_topk.png"
#define QR_BF_PLOT_DIST      "plots/distribution"       /* /<tensor>_<i>.png */
#define QR_BF_PLOT_CHANNEL   "plots/channelwise"        /* /<tensor>_<i>.png */
#define QR_BF_GRAPH          "graph"                    /* folder: runall/bundle (graph overlays) */
#define QR_BF_GRAPH_ME       "graph/model_explorer.json"    /* Model Explorer node data: Cosine per node */
#define QR_BF_GRAPH_ME_STEM  "graph/model_explorer_"        /* + <metric>.json: the other metrics */
#define QR_BF_GRAPH_ONNX     "graph/annotated.onnx"         /* the analysis model with metrics on its nodes, no weights */
#define QR_BF_COMPARE_HTML   "compare_per_layer.html"   /* not in the bundle: qreport compare's page (runall/bundle) */

/* The bundle's top-level files in the order index.html's "Files" section lists them.
 * always: in every bundle of a default runall (tests/test_runall.c checks each);
 * listed: linked from the "Files" section when present. */
typedef struct QrBundleFile {
    const char *name;
    bool always, listed;
} QrBundleFile;

static const QrBundleFile qr_bundle_files[] = {
    { QR_BF_INDEX, true, false },
    { QR_BF_SUMMARY, true, true },
    { QR_BF_MANIFEST, true, true },
    { QR_BF_CHECK, true, true },
    { QR_BF_MATCH ".txt", true, true },
    { QR_BF_MATCH ".csv", true, true },
    { QR_BF_PROFILE_BASE QR_BF_STATISTIC ".txt", true, true },
    { QR_BF_PROFILE_BASE QR_BF_STATISTIC ".csv", true, true },
    { QR_BF_PROFILE_ANAL QR_BF_STATISTIC ".txt", true, true },
    { QR_BF_PROFILE_ANAL QR_BF_STATISTIC ".csv", true, true },
    { QR_BF_COMPARE ".txt", true, true },
    { QR_BF_COMPARE ".csv", true, true },
    { QR_BF_DS_OUTPUTS ".txt", false, true },
    { QR_BF_DS_OUTPUTS ".csv", false, true },
    { QR_BF_GENERATION ".txt", false, true },
    { QR_BF_GENERATION ".csv", false, true },
    { QR_BF_GEN_DIV "/" QR_BF_COMPARE ".txt", false, true },
    { QR_BF_GEN_DIV "/" QR_BF_COMPARE ".csv", false, true },
    { QR_BF_SENS ".txt", true, true },
    { QR_BF_SENS ".csv", true, true },
    { QR_BF_SENS ".json", true, true },
    { QR_BF_ACCUM, true, true },
    { QR_BF_BADCASE, true, true },
    { QR_BF_WEIGHTS ".txt", true, true },
    { QR_BF_WEIGHTS ".csv", true, true },
    { QR_BF_WEIGHT_BLOCKS ".txt", false, true },
    { QR_BF_WEIGHT_BLOCKS ".csv", false, true },
    { QR_BF_ADVISOR, true, true },
    { QR_BF_WHATIF, true, true },
    { QR_BF_FRAGILITY ".txt", true, true },
    { QR_BF_FRAGILITY ".csv", true, true },
    { QR_BF_BADCASE_LIST ".txt", false, true },
    { QR_BF_BADCASE_LIST ".csv", false, true },
    { QR_BF_DATASET "/" QR_BF_COMPARE ".txt", false, true },
    { QR_BF_DATASET "/" QR_BF_COMPARE ".csv", false, true },
    { QR_BF_DATASET "/" QR_BF_DS_OUTPUTS ".txt", false, true },
    { QR_BF_DATASET "/" QR_BF_DS_OUTPUTS ".csv", false, true },
    { QR_BF_DATASET "/" QR_BF_DS_SAMPLES ".txt", false, true },
    { QR_BF_DATASET "/" QR_BF_DS_SAMPLES ".csv", false, true },
    { QR_BF_DATASET "/" QR_BF_BADCASE, false, true },
    { QR_BF_DATASET "/" QR_BF_SENS ".txt", false, true },
    { QR_BF_DATASET "/" QR_BF_SENS ".csv", false, true },
    { QR_BF_DATASET "/" QR_BF_SENS ".json", false, true },
    { QR_BF_DATASET "/" QR_BF_ACCUM, false, true },
    { QR_BF_DEMOTION ".txt", false, true },
    { QR_BF_DEMOTION ".csv", false, true },
    { QR_BF_DEMOTION ".json", false, true },
    { QR_BF_GRAPH_ME, true, true },
    { QR_BF_GRAPH_ME_STEM "local_Cosine.json", true, true },
    { QR_BF_GRAPH_ME_STEM "SQNR.json", true, true },
    { QR_BF_GRAPH_ME_STEM "local_SQNR.json", true, true },
    { QR_BF_GRAPH_ME_STEM "sensitivity.json", true, true },
    { QR_BF_GRAPH_ME_STEM "pooled_Cosine.json", false, true },
    { QR_BF_GRAPH_ME_STEM "pooled_SQNR.json", false, true },
    { QR_BF_GRAPH_ONNX, true, true },
};

#endif
