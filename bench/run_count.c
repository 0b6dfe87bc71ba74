/* bench/run_count — qreport's command line with its model executions counted (issue 30):
 * runs the command as qreport does, then prints to stderr the whole-graph runs (qr_run calls),
 * those without overrides (a model run whole on its inputs), the nodes executed (the test-only
 * counters of run/run.h) and the float GEMM drivers' multiply-adds (kern/gemm.c qr_kern_f32_macs:
 * dense convolutions, MatMul, Gemm on the x86-64 SIMD levels). Usage: build/run_count runall BASE ANALYSIS --data DIR ... */
#define QR_TESTING
#include "../qreport.c"

int main(int argc, char **argv) {
    int rc = qr_cli_main(argc, argv);
    fprintf(stderr, "run_count: graph_runs %lld whole_runs %lld node_executions %lld gemm_macs %lld\n",
            (long long)qr_run_count.graphs, (long long)qr_run_count.plain, (long long)qr_run_count.nodes,
            (long long)qr_kern_f32_macs);
    return rc;
}
