/* deploy/runall — the deployment kit's part of `qreport runall`. See dump.h. */

static QrStatus qr_deploy_runall_early(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                       const QrTensor *inputs, const char *dir) {
    if (!o || !o->dump) return QR_OK;
    QR_TRY(qr_dump_compare(se->a, inputs, se, o->dump, &d->dump));
    d->have_dump = true;
    return qr_dump_write(&d->dump, dir);
}

static void qr_deploy_runall_json(QrJson *j, const QrDeployRunall *d) {
    if (d->have_dump) { qr_json_key(j, "dump"); qr_dump_json(j, &d->dump); }
}

static void qr_deploy_runall_html(QrHtml *h, const QrDeployRunall *d) {
    if (d->have_dump) qr_dump_html(h, &d->dump);
}

static void qr_deploy_runall_free(QrDeployRunall *d) {
    if (d->have_dump) qr_dump_free(&d->dump);
    d->have_dump = false;
}
