/* tests/runall — `qreport runall` on the fixture pairs: every file of docs/REPORT.md in
 * the bundle, every link and image of index.html present, JSON parses, CSV headers
 * as documented, byte-identical zips under SOURCE_DATE_EPOCH, the CI gate's exit
 * code, no bundle left behind on failure, and the page rendered in headless Chromium
 * (screenshot kept in build/artifacts/). */

static char *qt_ra_read(const char *path, size_t *len) {
    unsigned char *buf = NULL;
    size_t n = 0;
    if (qr_file_read(path, 0, &buf, &n) != QR_OK) { qr_err_clear(); return NULL; }
    char *s = realloc(buf, n + 1);
    if (!s) { free(buf); return NULL; }
    s[n] = 0;
    if (len) *len = n;
    return s;
}

/* Every href="..." / src="..." that is a relative path exists under dir. */
static int qt_ra_check_links(const char *dir, const char *html, char *bad, size_t cap) {
    int n = 0;
    for (const char *p = html; (p = strstr(p, "=\"")) != NULL; p += 2) {
        if (p < html + 4 || (strncmp(p - 4, "href", 4) && strncmp(p - 3, "src", 3))) continue;
        const char *s = p + 2, *e = strchr(s, '"');
        if (!e || e == s || *s == '#' || !strncmp(s, "http", 4) || !strncmp(s, "data:", 5) || !strncmp(s, "javascript", 10)) continue;
        char rel[1024], path[2048];
        size_t k = 0;
        for (const char *q = s; q < e && k + 1 < sizeof rel; q++) {      /* undo %-encoding */
            if (*q == '%' && q + 2 < e) { unsigned v; sscanf(q + 1, "%2x", &v); rel[k++] = (char)v; q += 2; }
            else rel[k++] = *q;
        }
        rel[k] = 0;
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        uint64_t sz;
        if (qr_file_size(path, &sz) != QR_OK) { qr_err_clear(); if (!n++) qt_fmt(bad, cap, "%s", rel); }
    }
    return n;
}

static void qt_runall_pair(const char *pair) {
    char name[128], dir[512], zip1[512], zip2[512], msg[1024] = "";
    snprintf(name, sizeof name, "runall/%s", pair);
    snprintf(dir, sizeof dir, "%s/ra_%s", qt_tmpdir(), pair);
    snprintf(zip1, sizeof zip1, "%s/ra_%s_1.zip", qt_tmpdir(), pair);
    snprintf(zip2, sizeof zip2, "%s/ra_%s_2.zip", qt_tmpdir(), pair);
    QtCli r;
    const char *m = "fixtures/qpairs";
    qt_cli(&r, "runall %s/%s/base.onnx %s/%s/analysis.onnx -i %s/%s/input.npy -o %s --keep-dir %s --quiet", m, pair, m, pair,
           m, pair, zip1, dir);
    bool ok = r.code == 0;
    if (!ok) qt_fmt(msg, sizeof msg, "exit %d: %s", r.code, r.err);
    /* every file of a default bundle (report/files.h's table; docs/REPORT.md describes each) */
    for (int i = 0; ok && i < QR_ARRAY_LEN(qr_bundle_files); i++) {
        if (!qr_bundle_files[i].always) continue;
        char p[1024];
        uint64_t sz = 0;
        snprintf(p, sizeof p, "%s/%s", dir, qr_bundle_files[i].name);
        if (qr_file_size(p, &sz) != QR_OK || sz == 0) { ok = false; snprintf(msg, sizeof msg, "%s missing", qr_bundle_files[i].name); qr_err_clear(); }
    }
    /* JSON parses; summary has the documented keys */
    const char *jsons[] = { "summary.json", "manifest.json", "sensitive_ops.json", "mixed_precision.json" };
    for (int i = 0; ok && i < 4; i++) {
        char p[1024];
        size_t len = 0;
        snprintf(p, sizeof p, "%s/%s", dir, jsons[i]);
        char *txt = qt_ra_read(p, &len);
        QrArena a = {0};
        QrJsonVal *v = NULL;
        if (!txt || qr_json_parse(&a, txt, len, &v) != QR_OK) { ok = false; snprintf(msg, sizeof msg, "%s: %s", jsons[i], qr_err_msg()); }
        else if (i == 0 && (!qr_json_get(v, "schema_version") || !qr_json_get(v, "verdict") || !qr_json_get(v, "layers") ||
                            !qr_json_get(v, "model_output") || !qr_json_get(v, "sensitivity"))) {
            ok = false;
            snprintf(msg, sizeof msg, "summary.json lacks a documented key");
        } else if (i == 1 && (!qr_json_get(v, "files") || !qr_json_get(v, "stages") || !qr_json_get(v, "command_line"))) {
            ok = false;
            snprintf(msg, sizeof msg, "manifest.json lacks a documented key");
        }
        qr_arena_free(&a);
        free(txt);
    }
    /* CSV headers (docs/REPORT.md) */
    struct { const char *file, *head; } csv[] = {
        { "compare_per_layer_out.csv", "Index,mod_name,base_op_type,analy_op_type,shape,quant_dtype,qscale,Cosine,MSE,L1,KL,SQNR," },
        { "sensitive_ops.csv", "op_name,sensitive_type,op_type,L1,Cosine,MSE,KL,SQNR" },
        { "accumulated_error.csv", "Index,mod_name,base_tensor,metric,weight_only,activation_only,full" },
    };
    for (int i = 0; ok && i < QR_ARRAY_LEN(csv); i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, csv[i].file);
        char *txt = qt_ra_read(p, NULL);
        if (!txt || strncmp(txt, csv[i].head, strlen(csv[i].head))) { ok = false; snprintf(msg, sizeof msg, "%s header", csv[i].file); }
        free(txt);
    }
    /* plots decode as PNG with the sizes the charts are drawn at */
    struct { const char *file; int w, h; } png[] = {
        { "plots/per_layer_metrics.png", 900, 700 }, { "plots/accumulated_error.png", 900, 500 },
        { "plots/sensitivity_topk.png", 900, -1 },    /* height follows the number of bars */
    };
    for (int i = 0; ok && i < QR_ARRAY_LEN(png); i++) {
        char p[1024];
        size_t len = 0;
        snprintf(p, sizeof p, "%s/%s", dir, png[i].file);
        char *data = qt_ra_read(p, &len);
        QtPng img = {0};
        const char *err = data ? qt_png_decode((const unsigned char *)data, len, &img) : "missing";
        if (err || img.w != png[i].w || (png[i].h > 0 ? img.h != png[i].h : img.h < 150)) {
            ok = false;
            snprintf(msg, sizeof msg, "%s: %s (%dx%d)", png[i].file, err ? err : "size", img.w, img.h);
        }
        free(img.px);
        free(data);
    }
    /* per-value plots: every distribution histogram (with its error panel) and box plot decodes at
     * its drawn size; there is at least one of each and index.html shows them */
    struct { const char *sub; int w, h; } per[] = { { "plots/distribution", 900, 700 }, { "plots/channelwise", 900, 500 } };
    for (int i = 0; ok && i < QR_ARRAY_LEN(per); i++) {
        char d[1024];
        snprintf(d, sizeof d, "%s/%s", dir, per[i].sub);
        DIR *dh = opendir(d);
        int n_png = 0;
        for (struct dirent *e; ok && dh && (e = readdir(dh));) {
            size_t nl = strlen(e->d_name);
            if (nl < 5 || strcmp(e->d_name + nl - 4, ".png")) continue;
            char p[2048];
            size_t len = 0;
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            char *data = qt_ra_read(p, &len);
            QtPng img = {0};
            const char *err = data ? qt_png_decode((const unsigned char *)data, len, &img) : "missing";
            if (err || img.w != per[i].w || img.h != per[i].h) {
                ok = false;
                snprintf(msg, sizeof msg, "%s/%s: %s (%dx%d)", per[i].sub, e->d_name, err ? err : "size", img.w, img.h);
            }
            n_png++;
            free(img.px);
            free(data);
        }
        if (dh) closedir(dh);
        char p[1024];
        snprintf(p, sizeof p, "%s/index.html", dir);
        char *html = qt_ra_read(p, NULL);
        if (ok && (!n_png || !html || !strstr(html, per[i].sub))) {
            ok = false;
            snprintf(msg, sizeof msg, "%s: %d PNGs, %s in index.html", per[i].sub, n_png, html && strstr(html, per[i].sub) ? "shown" : "not shown");
        }
        free(html);
    }
    /* index.html: every referenced file is in the bundle */
    if (ok) {
        char p[1024], bad[512] = "";
        snprintf(p, sizeof p, "%s/index.html", dir);
        char *html = qt_ra_read(p, NULL);
        int nbad = html ? qt_ra_check_links(dir, html, bad, sizeof bad) : -1;
        if (nbad) { ok = false; snprintf(msg, sizeof msg, "index.html references %d missing file(s), e.g. %s", nbad, bad); }
        free(html);
    }
    /* byte-identical with SOURCE_DATE_EPOCH */
    if (ok) {
        /* the same command twice (the command line is part of the manifest) */
        for (int k = 0; k < 2; k++) {
            qt_cli(&r, "runall %s/%s/base.onnx %s/%s/analysis.onnx -i %s/%s/input.npy -o %s --quiet", m, pair, m, pair, m,
                   pair, zip1);
            if (r.code) { ok = false; snprintf(msg, sizeof msg, "run %d exit %d", k, r.code); }
            if (!k && rename(zip1, zip2) != 0) { ok = false; snprintf(msg, sizeof msg, "rename: %s", strerror(errno)); }
        }
        size_t l1 = 0, l2 = 0;
        char *a = qt_ra_read(zip1, &l1), *b = qt_ra_read(zip2, &l2);
        if (ok && (!a || !b || l1 != l2 || memcmp(a, b, l1))) { ok = false; snprintf(msg, sizeof msg, "zips differ (%zu vs %zu bytes)", l1, l2); }
        free(a);
        free(b);
    }
    qt_record(name, ok, "%s", msg);
}

static void test_runall_gate_and_failure(void) {
    QtCli r;
    const char *m = "fixtures/qpairs/ort_qdq";
    char zip[512];
    snprintf(zip, sizeof zip, "%s/gate.zip", qt_tmpdir());
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s --quiet --fail-if-cosine-below 0.99999", m, m, m, zip);
    uint64_t sz = 0;
    QT_CHECKF(r.code == 10, "gate exit %d: %s", r.code, r.err);
    QT_CHECK(qr_file_size(zip, &sz) == QR_OK && sz > 0);          /* still written */
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s --quiet --fail-if-sqnr-below 10", m, m, m, zip);
    QT_CHECKF(r.code == 0, "sqnr gate met, exit %d", r.code);
    /* an unwritable destination: clear error, nothing left behind */
    char ro[512], out[600];
    snprintf(ro, sizeof ro, "%s/readonly", qt_tmpdir());
    QT_OK(qr_mkdir_p(ro));
    chmod(ro, 0555);
    snprintf(out, sizeof out, "%s/r.zip", ro);
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s --quiet", m, m, m, out);
    char listing[256] = "";
    int n = qt_bd_list_dir(ro, listing, sizeof listing);
    chmod(ro, 0755);
    if (getuid() != 0) {   /* root ignores directory permissions */
        QT_CHECKF(r.code == 1 && strstr(r.err, "readonly"), "exit %d: %s", r.code, r.err);
        QT_CHECKF(n == 0, "left behind: %s", listing);
    }
    /* a destination below a regular file, and an injected write failure in the middle
     * of the zip: exit 1 with the reason, no zip and no staging folder left behind */
    char file[512], bad[600], dir2[512];
    snprintf(file, sizeof file, "%s/plainfile", qt_tmpdir());
    QT_OK(qr_file_write_atomic(file, "x", 1));
    snprintf(bad, sizeof bad, "%s/sub/r.zip", file);
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s --quiet", m, m, m, bad);
    QT_CHECKF(r.code == 1 && strstr(r.err, "plainfile"), "exit %d: %s", r.code, r.err);
    snprintf(dir2, sizeof dir2, "%s/faulty", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir2));
    for (int nth = 1; nth <= 40; nth += 13) {
        const QrRunallFaults f = { .zip_fail_write = nth };
        qt_cli_faults(&r, &f, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s/r.zip --quiet", m, m, m, dir2);
        char listing2[256] = "";
        int n2 = qt_bd_list_dir(dir2, listing2, sizeof listing2);
        QT_CHECKF(r.code == 1 && n2 == 0, "fault at write %d: exit %d, left behind: %s (%s)", nth, r.code, listing2, r.err);
    }
    /* no input: random input with a visible warning, recorded in the manifest */
    snprintf(zip, sizeof zip, "%s/random.zip", qt_tmpdir());
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -o %s", m, m, zip);
    QT_CHECKF(r.code == 0 && strstr(r.err, "random"), "exit %d: %s", r.code, r.err);
}

/* A failing analysis: the bundle is still written and reports it (manifest, summary, HTML). */
static void test_runall_failed_stage(void) {
    QtCli r;
    const char *m = "fixtures/qpairs/ort_qdq";
    char zip[512], dir[512], p[600];
    snprintf(zip, sizeof zip, "%s/failstage.zip", qt_tmpdir());
    snprintf(dir, sizeof dir, "%s/failstage", qt_tmpdir());
    const QrRunallFaults f = { .fail_stage = "sensitivity" };
    qt_cli_faults(&r, &f, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s --keep-dir %s --quiet", m, m, m, zip,
                  dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    char *man = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/index.html", dir);
    char *html = qt_ra_read(p, NULL);
    snprintf(p, sizeof p, "%s/compare_per_layer_out.csv", dir);
    uint64_t sz = 0;
    bool others = qr_file_size(p, &sz) == QR_OK && sz > 0;
    bool ok = man && html && strstr(man, "\"analysis\": \"sensitivity\"") && strstr(man, "injected failure") &&
              strstr(html, "injected failure") && others;
    free(man);
    free(html);
    QT_CHECK(ok);
}

/* The real report renders in headless Chromium without console errors. */
static void test_runall_render(void) {
    char dir[512], shot[512];
    snprintf(dir, sizeof dir, "%s/ra_ort_qdq", qt_tmpdir());
    snprintf(shot, sizeof shot, "build/artifacts/runall_ort_qdq.png");
    int rc = qt_bd_sh("sh tests/render_html.sh '%s/index.html' '%s' 1280,2400 > '%s/ra_render.log' 2>&1", dir, shot, qt_tmpdir());
    if (rc == 77) QT_SKIP("chromium not found (install Debian 'chromium' to run it)");
    char p[600];
    snprintf(p, sizeof p, "%s/ra_render.log", qt_tmpdir());
    char *log = qt_ra_read(p, NULL);
    bool ok = rc == 0;
    QT_CHECKF(ok, "render_html.sh exit %d:\n%s", rc, log ? log : "");
    free(log);
}

/* The terminal summary on the planted-culprit pair (fixtures/make_culprit.py: channel 5 of
 * conv1 scaled far out of range): output metrics, the culprit as the top sensitive op, the
 * advisor's main finding naming the outlier channel with its fix, the recommended action and
 * the bundle path; progress lines on stderr without --quiet (stderr is not a terminal). */
static void test_runall_terminal_summary(void) {
    const char *m = "fixtures/qpairs/culprit";
    char zip[600];
    snprintf(zip, sizeof zip, "%s/culprit.zip", qt_tmpdir());
    QtCli r;
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s", m, m, m, zip);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    QT_CHECKF(strstr(r.out, "Model output Cosine ") && strstr(r.out, "SQNR "), "%s", r.out);
    QT_CHECKF(strstr(r.out, "sensitive 1: /conv1/Conv ") && strstr(r.out, "sensitive 5: "), "%s", r.out);
    QT_CHECKF(strstr(r.out, "outlier_channels") && strstr(r.out, "channel 5") && strstr(r.out, "  fix: "), "%s", r.out);
    QT_CHECKF(strstr(r.out, "Recommended action: ") && strstr(r.out, zip), "%s", r.out);
    QT_CHECKF(strstr(r.err, "sensitivity: done in ") && strstr(r.err, "zip: done in ") && !strchr(r.err, '\r'), "%s", r.err);
}

/* A one-input runall compares its input through --data's pass (qr__ra_one); should that pass fail,
 * the match stage compares it as before: the bundle is the same, byte for byte (manifest.json's
 * command line aside; SOURCE_DATE_EPOCH: no timings), in sim and both modes. */
static void test_runall_one_pass_fallback(void) {
    const char *m = "fixtures/qpairs/ort_qdq";
    const char *modes[] = { "sim", "both" };
    setenv("SOURCE_DATE_EPOCH", "1", 1);
    for (int i = 0; i < 2; i++) {
        char dir[2][512], cmd[4200];
        for (int v = 0; v < 2; v++) {
            QtCli r;
            snprintf(dir[v], sizeof dir[v], "%s/onepass_fb_%s_%d", qt_tmpdir(), modes[i], v);
            const QrRunallFaults f = { .fail_one_pass = true };
            qt_cli_faults(&r, v ? &f : NULL, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy --mode %s -o %s.zip --keep-dir "
                          "%s --quiet", m, m, m, modes[i], dir[v], dir[v]);
            QT_CHECKF(r.code == 0, "%s, variant %d: exit %d: %s", modes[i], v, r.code, r.err);
            snprintf(cmd, sizeof cmd, "grep -v command_line %s/manifest.json > %s.man && rm %s/manifest.json", dir[v], dir[v], dir[v]);
            QT_CHECK(system(cmd) == 0);
        }
        snprintf(cmd, sizeof cmd, "diff -r %s %s >/dev/null && cmp -s %s.man %s.man", dir[0], dir[1], dir[0], dir[1]);
        QT_CHECKF(system(cmd) == 0, "--mode %s: the bundle after a failed one-input pass differs (%s, %s)", modes[i], dir[0], dir[1]);
    }
    unsetenv("SOURCE_DATE_EPOCH");
}

/* runall's stage table (runall/runall.c qr__ra_stages) is what a bundle shows: manifest.json lists
 * the stages that ran, in the table's order, every stage without an `on` condition among them (but
 * the zip stage, which writes manifest.json before it ends);
 * every file a succeeded stage's row names is in the bundle; a stage whose `needs` failed fails
 * naming what it needs (mixed precision after an injected sensitivity failure). */
static void test_runall_stage_table(void) {
    const char *m = "fixtures/qpairs/ort_qdq";
    char dir[512], p[700];
    int bad = 0, seen = 0, always = 0, always_seen = 0;
    char msg[512] = "";
    for (int k = 0; k < QR_STAGE_N; k++) always += qr__ra_stages[k].on == NULL && k != QR_STAGE_ZIP;   /* (it writes the manifest) */
    for (int v = 0; v < 2; v++) {
        QtCli r;
        snprintf(dir, sizeof dir, "%s/stages_%d", qt_tmpdir(), v);
        const QrRunallFaults f = { .fail_stage = "sensitivity" };
        qt_cli_faults(&r, v ? &f : NULL, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s.zip --keep-dir %s "
                      "--demote-int16 --quiet", m, m, m, dir, dir);
        QT_CHECKF(r.code == 0, "variant %d: exit %d: %s", v, r.code, r.err);
        snprintf(p, sizeof p, "%s/manifest.json", dir);
        size_t len = 0;
        char *man = qt_ra_read(p, &len);
        QrArena a = { 0 };
        QrJsonVal *js = NULL;
        const QrJsonVal *stages = man && qr_json_parse(&a, man, len, &js) == QR_OK ? qr_json_get(js, "stages") : NULL;
        QT_CHECKF(stages && stages->type == QR_JSON_ARR, "variant %d: no stages in manifest.json", v);
        int pos = 0;
        for (int i = 0; i < stages->n; i++) {
            const QrJsonVal *nm = qr_json_get(qr_json_at(stages, i), "name"), *ok = qr_json_get(qr_json_at(stages, i), "ok");
            int k = pos;
            while (k < QR_STAGE_N && nm && strcmp(qr__ra_stages[k].name, nm->str)) k++;
            if (k == QR_STAGE_N) { if (!bad++) snprintf(msg, sizeof msg, "stage '%s' not in the table's order", nm ? nm->str : "?"); continue; }
            pos = k + 1;
            seen++;
            if (!v) always_seen += qr__ra_stages[k].on == NULL;
            for (const char *const *fl = qr__ra_stages[k].files; ok && ok->b && fl && *fl; fl++) {
                snprintf(p, sizeof p, "%s/%s", dir, *fl);
                if (access(p, F_OK) && !bad++) snprintf(msg, sizeof msg, "stage '%s' succeeded without its file %s", nm->str, *fl);
            }
            if (v && k == QR_STAGE_WHATIF && ok && ok->b && !bad++) snprintf(msg, sizeof msg, "mixed precision ran without its ranking");
        }
        qr_arena_free(&a);
        if (v) {
            bool named = man && strstr(man, "needs the sensitivity ranking, which failed");
            if (!named && !bad++) snprintf(msg, sizeof msg, "no 'needs the sensitivity ranking' failure in manifest.json");
        }
        free(man);
    }
    QT_CHECKF(bad == 0 && seen > 20 && always_seen == always, "%d bad (%d stages seen, %d of %d unconditional ones); first: %s",
              bad, seen, always_seen, always, msg);
}

static void qt_runall_all(void) {
    setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
    for (int i = 0; i < QR_ARRAY_LEN(qt_pairs); i++) qt_runall_pair(qt_pairs[i]);
    QT_RUN(test_runall_gate_and_failure);
    QT_RUN(test_runall_failed_stage);
    QT_RUN(test_runall_render);
    QT_RUN(test_runall_terminal_summary);
    QT_RUN(test_runall_stage_table);
    QT_RUN(test_runall_one_pass_fallback);
    unsetenv("SOURCE_DATE_EPOCH");
}
