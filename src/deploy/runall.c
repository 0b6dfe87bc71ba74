/* deploy/runall — the deployment kit's part of `qreport runall`. See dump.h. */

static QrStatus qr_deploy_runall_early(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                       const QrTensor *inputs, const char *dir) {
    if (!o || !o->dump) return QR_OK;
    QR_TRY(qr_dump_compare(se->a, inputs, se, o->dump, &d->dump));
    d->have_dump = true;
    return qr_dump_write(&d->dump, dir);
}

/* The worst layer by local error among verified pairs (all matched pairs when verification did
 * not run); -1 when none has local metrics. */
static int qr__dr_worst(const QrSession *se, const QrCompare *c) {
    int worst = -1;
    for (int k = 0; k < c->n; k++) {
        const QrLayerRow *r = &c->rows[k];
        const QrMatch *m = &se->m.m[r->match];
        if (!r->has_local || m->a_node < 0 || (se->m.verified_run && !qr_match_verified(m))) continue;
        if (!(r->local.cosine == r->local.cosine)) continue;
        if (worst < 0 || r->local.cosine < c->rows[worst].local.cosine) worst = k;
    }
    return worst;
}

static QrStatus qr_deploy_runall_repro(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                       const QrCompare *c, const char *dir) {
    if (o && o->no_repro) return QR_OK;
    int w = qr__dr_worst(se, c);
    if (w < 0) return QR_OK;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/repro", dir);
    QR_TRY(qr_mkdir_p(sub));
    QrExtractOpts eo = { .node = se->b->nodes[se->m.m[c->rows[w].match].b_node].name, .radius = 0 };
    QrExtractInfo info;
    QR_TRY(qr_extract_write(se, c, &eo, sub, &info));
    d->have_repro = true;
    snprintf(d->repro_node, sizeof d->repro_node, "%s", info.b_node);
    d->repro_local = info.local;
    unsigned char *buf;
    size_t len;
    snprintf(sub, sizeof sub, "%s/repro/README.txt", dir);
    if (qr_file_read(sub, 1 << 20, &buf, &len) == QR_OK) {
        d->repro_readme = malloc(len + 1);
        if (d->repro_readme) { memcpy(d->repro_readme, buf, len); d->repro_readme[len] = 0; }
        qr_aligned_free(buf);
    }
    return QR_OK;
}

static void qr_deploy_runall_json(QrJson *j, const QrDeployRunall *d) {
    if (d->have_dump) { qr_json_key(j, "dump"); qr_dump_json(j, &d->dump); }
    if (d->have_repro) {
        qr_json_key(j, "repro");
        qr_json_obj_begin(j);
        qr_json_kv_str(j, "node", d->repro_node);
        qr_json_kv_str(j, "folder", "repro");
        qr_json_kv_num(j, "local_Cosine", d->repro_local.cosine);
        qr_json_kv_num(j, "local_SQNR", d->repro_local.sqnr);
        qr_json_obj_end(j);
    }
}

static void qr_deploy_runall_html(QrHtml *h, const QrDeployRunall *d) {
    if (d->have_dump) qr_dump_html(h, &d->dump);
    if (d->have_repro) {
        qr_html_section(h, "repro", "Minimal repro of the worst layer");
        qr_html_paraf(h, "repro/ holds '%s' — the layer with the largest local error among verified pairs — extracted from "
                      "both models with its inputs and expected outputs, so this bundle alone is enough for a vendor "
                      "(qreport extract makes one for any node).", d->repro_node);
        if (d->repro_readme) qr_html_pre(h, d->repro_readme);
        const char *files[] = { "repro/README.txt", "repro/repro.json", "repro/base_sub.onnx", "repro/analysis_sub.onnx" };
        qr_html_files(h, files, 4);
    }
}

static void qr_deploy_runall_free(QrDeployRunall *d) {
    if (d->have_dump) qr_dump_free(&d->dump);
    free(d->repro_readme);
    memset(d, 0, sizeof *d);
}
