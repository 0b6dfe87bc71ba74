/* tests/test_main — the whole suite in one binary (a unity build over qreport.c).
 * usage: test_main [--verbose] [--only SUBSTRING] [--conformance-only FILTER] */
#define QR_TESTING 1
#include "../qreport.c"
#include "harness.h"
#include <fcntl.h>
#include <unistd.h>
#include "model_builder.c"
#include "test_base.c"
#include "test_onnx.c"
#include "test_conformance.c"
#include "test_quant.c"
#include "test_golden.c"
#include "test_run.c"
#include "test_cli.c"
#include "test_match.c"
#include "test_harden.c"
#include "test_kern.c"
#include "test_kern_f32.c"
#include "test_int.c"
#include "test_harden_geom.c"
#include "test_plot.c"
#include "test_bundle.c"
#include "test_analysis.c"
#include "test_runall.c"
#include "test_analysis_extra.c"
#include "test_trust.c"
#include "test_bench_cli.c"
#include "test_slurm.c"
#include "test_incr.c"
#include "test_run_order.c"
#include "test_cli_edge.c"
#include "test_tpairs.c"
#include "test_exact.c"
#include "test_contrib.c"
#include "test_llm_ops.c"
#include "test_llm.c"
#include "test_deploy.c"
#include "test_analysis_knobs.c"
#include "test_dataset.c"
#include "test_sketch.c"
#include "test_dsstat.c"
#include "test_dataset_sens.c"
#include "test_errsplit.c"
#include "test_graph.c"
#include "test_layers.c"
#include "test_frag.c"
#include "test_sens.c"
#include "test_stats.c"

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* a test that times out (harness.h) loses no earlier line */
    const char *conf_filter = NULL;
    bool only_conf = false;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) qt_verbose = true;
        else if (!strcmp(argv[i], "--conformance-only") && i + 1 < argc) { only_conf = true; conf_filter = argv[++i]; }
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];   /* e.g. kern, plot */
    }
    qr_kern_init();
    /* ONNX Runtime for node, as tests/tools.sh installs it (third_party/ort), unless the caller
     * names another: every test and every node script it starts finds it through this variable. */
    if (!getenv("ORT_NODE_MODULES") && access("third_party/ort/node_modules/onnxruntime-node", F_OK) == 0) {
        char cwd[PATH_MAX], dir[PATH_MAX + 64];
        if (getcwd(cwd, sizeof cwd)) {
            snprintf(dir, sizeof dir, "%s/third_party/ort/node_modules", cwd);
            setenv("ORT_NODE_MODULES", dir, 1);
        }
    }
    /* --only NAME runs the modules whose name contains NAME (no conformance). */
#define QT_MODULE(name) if (!only_conf && (!only || strstr(#name, only))) qt_##name##_all()
    QT_MODULE(base);
    QT_MODULE(quant);
    QT_MODULE(onnx);
    QT_MODULE(run);
    QT_MODULE(golden);
    QT_MODULE(cli);
    QT_MODULE(match);
    QT_MODULE(harden);
    QT_MODULE(kern);
    QT_MODULE(kern_f32);
    QT_MODULE(int);
    QT_MODULE(harden_geom);
    QT_MODULE(plot);
    QT_MODULE(bundle);
    QT_MODULE(analysis);
    QT_MODULE(runall);
    QT_MODULE(analysis_extra);
    QT_MODULE(trust);
    QT_MODULE(bench_cli);
    QT_MODULE(slurm);
    QT_MODULE(incr);
    QT_MODULE(run_order);
    QT_MODULE(cli_edge);
    QT_MODULE(tpairs);
    QT_MODULE(exact);
    QT_MODULE(contrib);
    QT_MODULE(llm_ops);
    QT_MODULE(llm);
    QT_MODULE(deploy);
    QT_MODULE(analysis_knobs);
    QT_MODULE(dataset);
    QT_MODULE(sketch);
    QT_MODULE(dsstat);
    QT_MODULE(dataset_sens);
    QT_MODULE(errsplit);
    QT_MODULE(graph);
    QT_MODULE(layers);
    QT_MODULE(frag);
    QT_MODULE(sens);
    QT_MODULE(stats);
#undef QT_MODULE
    if (!only) qt_conformance_all(conf_filter);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", qt_tmpdir());
    if (system(rm) != 0) printf("warning: could not remove %s\n", qt_tmpdir());
    /* The fuzz smoke run of `make test` (the Makefile passes its outcome). */
    const char *fuzz = getenv("QT_FUZZ_SMOKE");
    if (fuzz && *fuzz && !only && !only_conf) {
        if (!strncmp(fuzz, "skipped: ", 9)) qt_record_skip("fuzz smoke", "%s", fuzz + 9);
        else qt_record("fuzz smoke", !strcmp(fuzz, "passed"), "%s", fuzz);
    }
    printf("%d passed, %d failed, %d skipped\n", qt_passed, qt_failed, qt_skipped);
    return qt_failed ? 1 : 0;
}
