/* deploy/hooks — the deployment kit's stages in the runall bundle (--dump, repro/, --emit-model):
 * runall/runall.c calls them, runall/bundle.c renders their sections. */
#ifndef QR_HOOKS_H
#define QR_HOOKS_H

typedef struct QrDeployRunallOpts {
    bool has_dump;               /* --dump DIR given: dump holds its options */
    QrDumpOpts dump;
    bool no_repro;               /* --no-repro: no repro/ of the worst layer */
    const char *emit_dir;        /* --emit-model DIR (new or empty), or NULL */
} QrDeployRunallOpts;

typedef struct QrDeployRunall {
    QrDumpResult dump;
    bool have_dump;
    bool have_repro;             /* repro/ written */
    char repro_node[512];        /* its baseline node */
    QrMetrics repro_local;
    char *repro_readme;          /* repro/README.txt (malloc'd) */
    bool have_emit;              /* --emit-model written */
    char emit_to[8];             /* "int16" / "float" */
    int emit_k;                  /* nodes promoted */
    QrMetrics emit_predicted;
} QrDeployRunall;

/* Right after the baseline run: the device dump comparison. A bad dump fails runall (no bundle). */
static QrStatus qr_deploy_runall_early(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                       const QrTensor *inputs, const char *dir);
/* After the per-layer comparison: repro/ of the worst verified layer by local error (extract). */
static QrStatus qr_deploy_runall_repro(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                       const QrCompare *c, const char *dir);
/* After the what-if: --emit-model DIR, the what-if's recommended promotion applied (promote). */
static QrStatus qr_deploy_runall_emit(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                      const QrSensResult *sens, const QrWhatIf *wi);
static void qr_deploy_runall_json(QrJson *j, const QrDeployRunall *d);   /* summary.json members */
static void qr_deploy_runall_html(QrHtml *h, const QrDeployRunall *d);   /* sections */
static void qr_deploy_runall_free(QrDeployRunall *d);

#endif
