/* deploy/hooks — the deployment kit's stages in `qreport runall` (called by runall/runall.c). See dump.h. */

static QrStatus qr_deploy_runall_early(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                       const QrTensor *inputs, const char *dir) {
    if (!o || !o->has_dump) return QR_OK;
    QrDumpOpts dopt = o->dump;
    dopt.int16_integer = se->int16_integer;
    QR_TRY(qr_dump_compare(se->a, inputs, se, &dopt, &d->dump));
    d->have_dump = true;
    return qr_dump_write(&d->dump, dir);
}

/* The worst layer by local error among verified pairs (all matched pairs when verification did
 * not run); -1 when none has local metrics. */
static int qr__hk_worst(const QrSession *se, const QrCompare *c) {
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
    int w = qr__hk_worst(se, c);
    if (w < 0) return QR_OK;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/" QR_BF_REPRO, dir);
    QR_TRY(qr_mkdir_p(sub));
    QrExtractOpts eo = { .node = se->b->nodes[se->m.m[c->rows[w].match].b_node].name, .radius = 0 };
    QrExtractInfo info;
    QR_TRY(qr_extract_write(se, c, &eo, sub, &info));
    d->have_repro = true;
    snprintf(d->repro_node, sizeof d->repro_node, "%s", info.b_node);
    d->repro_local = info.local;
    unsigned char *buf;
    size_t len;
    snprintf(sub, sizeof sub, "%s/" QR_BF_REPRO "/" QR_BF_REPRO_README, dir);
    if (qr_file_read(sub, 1 << 20, &buf, &len) == QR_OK) {
        d->repro_readme = malloc(len + 1);
        if (d->repro_readme) { memcpy(d->repro_readme, buf, len); d->repro_readme[len] = 0; }
        qr_aligned_free(buf);
    }
    return QR_OK;
}

static QrStatus qr_deploy_runall_emit(QrDeployRunall *d, const QrDeployRunallOpts *o, QrSession *se,
                                      const QrSensResult *sens, const QrWhatIf *wi) {
    if (!o || !o->emit_dir) return QR_OK;
    /* the recommendation: 16 bits when that meets the target, else float when that does, else the
     * best 16-bit step, else (no 16-bit step gains) the best float step; nothing to promote when the
     * model as is meets it */
    int rec = -1;
    bool to_float = false;
    if (wi->rec_int16 >= 0 && wi->rec_int16_meets) rec = wi->rec_int16;
    else if (wi->rec_fp >= 0 && wi->rec_fp_meets) { rec = wi->rec_fp; to_float = true; }
    else if (wi->rec_int16 >= 0) rec = wi->rec_int16;
    else if (wi->rec_fp >= 0) { rec = wi->rec_fp; to_float = true; }   /* no 16-bit step gains (weight-only nodes) */
    int k = rec >= 0 ? wi->steps[rec].k : 0;
    QrWiNode *rank = NULL;
    int nr = qr_whatif_rank(sens, &rank);
    if (nr < 0) return qr_errf(QR_ERR_NOMEM, "out of memory");
    if (k > nr) k = nr;
    struct stat sb;
    bool existed = stat(o->emit_dir, &sb) == 0;
    QrStatus st = qr_dump_outdir(o->emit_dir);
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof tmp, "%s.partial-XXXXXX", o->emit_dir);
    if (st == QR_OK && !mkdtemp(tmp)) st = qr_errf(QR_ERR_IO, "cannot create a folder next to %s: %s", o->emit_dir, strerror(errno));
    bool staged = st == QR_OK;
    QrPromoteResult r = { 0 };
    if (st == QR_OK && snprintf(path, sizeof path, "%s/analysis_promoted.onnx", tmp) >= (int)sizeof path)
        st = qr_errf(QR_ERR_IO, "%s: path too long", tmp);
    if (st == QR_OK) st = qr_promote_model_rank(se, rank, k, to_float, path, &r);
    if (st == QR_OK) st = qr_promote_write_lists(&r, tmp, "", "analysis_promoted.onnx");
    if (st == QR_OK && (rmdir(o->emit_dir) != 0 || rename(tmp, o->emit_dir) != 0))
        st = qr_errf(QR_ERR_IO, "cannot move the model into %s: %s", o->emit_dir, strerror(errno));
    if (st != QR_OK) {
        char msg[4096];
        snprintf(msg, sizeof msg, "--emit-model %s: %s", o->emit_dir, qr_err_msg());
        if (staged) qr_extract_rmtree(tmp);
        if (!existed) rmdir(o->emit_dir);
        else mkdir(o->emit_dir, 0777);
        st = qr_errf(st, "%s", msg);
    } else {
        d->have_emit = true;
        snprintf(d->emit_to, sizeof d->emit_to, "%s", to_float ? "float" : "int16");
        d->emit_k = k;
        d->emit_predicted = r.predicted;
    }
    qr_promote_free(&r);
    free(rank);
    return st;
}

static void qr_deploy_runall_json(QrJson *j, const QrDeployRunall *d) {
    if (d->have_dump) { qr_json_key(j, "dump"); qr_dump_json(j, &d->dump); }
    if (d->have_repro) {
        qr_json_key(j, "repro");
        qr_json_obj_begin(j);
        qr_json_kv_str(j, "node", d->repro_node);
        qr_json_kv_str(j, "folder", QR_BF_REPRO);
        qr_json_kv_num(j, "local_Cosine", d->repro_local.cosine);
        qr_json_kv_num(j, "local_SQNR", d->repro_local.sqnr);
        qr_json_obj_end(j);
    }
    if (d->have_emit) {
        qr_json_key(j, "emit_model");
        qr_json_obj_begin(j);
        qr_json_kv_str(j, "to", d->emit_to);
        qr_json_kv_int(j, "nodes", d->emit_k);
        qr_json_kv_num(j, "predicted_Cosine", d->emit_predicted.cosine);
        qr_json_kv_num(j, "predicted_SQNR", d->emit_predicted.sqnr);
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
        const char *files[] = { QR_BF_REPRO "/" QR_BF_REPRO_README, QR_BF_REPRO "/" QR_BF_REPRO_JSON, QR_BF_REPRO "/" QR_BF_REPRO_BASE,
                                QR_BF_REPRO "/" QR_BF_REPRO_ANAL };
        qr_html_files(h, files, 4);
    }
}

static void qr_deploy_runall_free(QrDeployRunall *d) {
    if (d->have_dump) qr_dump_free(&d->dump);
    free(d->repro_readme);
    memset(d, 0, sizeof *d);
}
