/* tests/layers — the layering of qreport.c is the compiler's to check: every module's header
 * comes right before its source, lowest layer first, so a module cannot call one included
 * after it (docs/ARCHITECTURE.md, "Layers"). test_layers_order reads qreport.c's include list;
 * test_layers_plant copies qreport.c with calls planted after some modules' sources — calls up
 * (into a module included later: each must be refused, naming the function) and calls down
 * (into a module included earlier: none may be refused) — and compiles the copy once
 * (-fsyntax-only, the compiler the build uses). */

/* qreport.c's text (malloc'd, NUL-terminated), or NULL. */
static char *qt_ly_read(const char *path) {
    char *buf = NULL;
    size_t len = 0;
    if (qr_file_read(path, (size_t)1 << 24, (unsigned char **)&buf, &len) != QR_OK) { qr_err_clear(); return NULL; }
    char *s = malloc(len + 1);
    if (s) { memcpy(s, buf, len); s[len] = 0; }
    qr_aligned_free(buf);
    return s;
}

/* The "src/..." paths of qreport.c's #include lines, in order (pointers into text, which is
 * cut at each closing quote). */
static int qt_ly_includes(char *text, char **out, int cap) {
    int n = 0;
    for (char *p = text; (p = strstr(p, "\n#include \"src/")) && n < cap;) {
        p += strlen("\n#include \"");
        char *q = strchr(p, '"');
        if (!q) break;
        *q = 0;
        out[n++] = p;
        p = q + 1;
    }
    return n;
}

static bool qt_ly_ends(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Every header is included once, right before a source of its own folder (its own source,
 * or for kern/ and ops/ the family files it declares), except report/files.h (constants only,
 * no source); every module source with a header of the same name comes right after it. */
static void test_layers_order(void) {
    char *text = qt_ly_read("qreport.c");
    QT_CHECKF(text, "cannot read qreport.c (run from the repository root)");
    char *inc[512];
    int n = qt_ly_includes(text, inc, 512);
    int bad = 0, headers = 0;
    char why[2048] = "";
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        if (!qt_ly_ends(inc[i], ".h") || strstr(inc[i], ".pb-c.")) continue;
        headers++;
        for (int j = 0; j < i; j++)
            if (!strcmp(inc[j], inc[i]) && o < sizeof why) {
                o += (size_t)snprintf(why + o, sizeof why - o, " %s included twice;", inc[i]);
                bad++;
            }
        if (!strcmp(inc[i], "src/report/files.h")) continue;
        char own[512];
        snprintf(own, sizeof own, "%.*s.c", (int)(strlen(inc[i]) - 2), inc[i]);
        const char *next = i + 1 < n ? inc[i + 1] : "";
        const char *slash = strrchr(inc[i], '/');
        size_t dir = (size_t)(slash - inc[i]) + 1;
        bool same_dir = !strncmp(next, inc[i], dir) && qt_ly_ends(next, ".c");
        bool family = !strcmp(inc[i], "src/kern/kern.h") || !strcmp(inc[i], "src/ops/ops.h");
        if (!(same_dir && (!strcmp(next, own) || family)) && o < sizeof why) {
            o += (size_t)snprintf(why + o, sizeof why - o, " %s is followed by %s, not by its source;", inc[i],
                                  next[0] ? next : "nothing");
            bad++;
        }
    }
    for (int i = 0; i < n; i++) {       /* a source whose header exists comes right after it */
        if (!qt_ly_ends(inc[i], ".c") || strstr(inc[i], ".pb-c.")) continue;
        char h[512];
        snprintf(h, sizeof h, "%.*s.h", (int)(strlen(inc[i]) - 2), inc[i]);
        if (access(h, F_OK) != 0 || !strcmp(h, "src/kern/kern.h") || !strcmp(h, "src/ops/ops.h")) continue;   /* family headers */
        if ((i == 0 || strcmp(inc[i - 1], h)) && o < sizeof why) {
            o += (size_t)snprintf(why + o, sizeof why - o, " %s does not come right after %s;", inc[i], h);
            bad++;
        }
    }
    free(text);
    QT_CHECKF(headers > 40, "qreport.c includes only %d headers", headers);
    QT_CHECKF(bad == 0, "qreport.c:%s", why);
}

typedef struct QtLyPlant {
    const char *after;       /* the module source the call is planted after */
    const char *fn;          /* the function it calls */
    bool up;                 /* fn belongs to a module included later: must not compile */
} QtLyPlant;

static const QtLyPlant qt_ly_plants[] = {
    /* up: the calls issue 31 removed, and one per pair split or layer boundary */
    { "src/ir/ir.c", "qr_op_find", true },                     /* op binding is run/'s */
    { "src/onnx/onnx.c", "qr_run_bind", true },
    { "src/qarith/blocks.c", "qr_op_count", true },
    { "src/run/run.c", "qr_qtable_build", true },
    { "src/quant/twin_wq.c", "qr_twin_build", true },    /* the twin calls twin_wq, not back */
    { "src/quant/memest.c", "qr_table_init", true },
    { "src/report/html.c", "qr_session_open", true },
    { "src/analysis/match.c", "qr_session_equivalence", true },
    { "src/analysis/session.c", "qr_sens_reference_free", true },
    { "src/analysis/session.c", "qr_compare_write", true },
    { "src/analysis/sens.c", "qr_ds_rank_samples", true },
    { "src/analysis/dist.c", "qr_ds_compare_init", true },
    { "src/analysis/dsstat.c", "qr_dspart_read", true },
    { "src/analysis/advisor_tf.c", "qr_advisor_run", true },   /* the advisor calls advisor_tf, not back */
    { "src/deploy/hooks.c", "qr_bundle_write_manifest", true },
    { "src/runall/bundle.c", "qr_runall_run", true },
    { "src/cli/cli.c", "qr_cli_extract", true },               /* cli/main.c dispatches to cli/deploy.c */
    /* down: the same places call what is below them */
    { "src/onnx/onnx.c", "qr_graph_find", false },
    { "src/run/run.c", "qr_op_find", false },
    { "src/quant/twin.c", "qr_twq_rewrite", false },
    { "src/analysis/session.c", "qr_match_equiv_verdict", false },
    { "src/analysis/sens.c", "qr_dsset_read", false },
    { "src/analysis/advisor.c", "qr_advtf_transformer", false },
    { "src/runall/runall.c", "qr_bundle_write_manifest", false },
    { "src/cli/main.c", "qr_cli_extract", false },
};

static void test_layers_plant(void) {
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", cc);
    if (system(cmd) != 0) QT_SKIP("no C compiler '%s' (set CC)", cc);
    char *text = qt_ly_read("qreport.c");
    QT_CHECKF(text, "cannot read qreport.c (run from the repository root)");
    /* the copy: qreport.c with each plant's function after its module's #include line */
    size_t cap = strlen(text) + 64 * 1024, len = 0;
    char *out = malloc(cap);
    QT_CHECK(out);
    const char *p = text;
    int n_plants = QR_ARRAY_LEN(qt_ly_plants), placed = 0, line_no = 0;
    int at[QR_ARRAY_LEN(qt_ly_plants)] = {0};    /* the copy's line of each plant */
    while (*p) {
        line_no++;
        const char *eol = strchr(p, '\n');
        size_t l = eol ? (size_t)(eol - p) + 1 : strlen(p);
        memcpy(out + len, p, l);
        len += l;
        for (int k = 0; k < n_plants; k++) {
            char line[300];
            snprintf(line, sizeof line, "#include \"%s\"\n", qt_ly_plants[k].after);
            if (l != strlen(line) || strncmp(p, line, l)) continue;
            const QtLyPlant *pl = &qt_ly_plants[k];
            len += (size_t)snprintf(out + len, cap - len,
                                    pl->up ? "static void qt_ly_plant_%d(void) { (void)%s(0, 0); }\n"
                                           : "static void qt_ly_plant_%d(void) { (void)&%s; }\n", k, pl->fn);
            at[k] = ++line_no;
            placed++;
        }
        p += l;
    }
    out[len] = 0;
    free(text);
    for (int k = 0; k < n_plants; k++)      /* a compiler reports an implicit declaration once per name */
        for (int j = 0; j < k; j++)
            QT_CHECKF(!(qt_ly_plants[k].up && qt_ly_plants[j].up && !strcmp(qt_ly_plants[k].fn, qt_ly_plants[j].fn)),
                      "qt_ly_plants: %s is planted up twice (use another function of that module)", qt_ly_plants[k].fn);
    QT_CHECKF(placed == n_plants, "only %d of %d plant sites found in qreport.c (a module moved? update qt_ly_plants)",
              placed, n_plants);
    char src[512], err[512];
    snprintf(src, sizeof src, "%s/layers_plant.c", qt_tmpdir());
    snprintf(err, sizeof err, "%s/layers_plant.err", qt_tmpdir());
    QrStatus st = qr_file_write_atomic(src, out, len);
    free(out);
    QT_OK(st);
    qt_fmt(cmd, sizeof cmd, "'%s' -std=gnu11 -fsyntax-only -Werror=implicit-function-declaration -Ithird_party/include "
             "-I. '%s' 2>'%s'", cc, src, err);
    int rc = system(cmd);
    char *msg = qt_ly_read(err);
    QT_CHECKF(msg, "no compiler output");
    QT_CHECKF(rc != 0, "the copy with calls up compiled: the compiler does not enforce the layers");
    /* each call up is refused on its own line (gcc and clang: "FILE:LINE:COL: error: ..." naming fn) */
    int n_up = 0;
    for (int k = 0; k < n_plants; k++) {
        const QtLyPlant *pl = &qt_ly_plants[k];
        if (!pl->up) continue;
        n_up++;
        char tag[64];
        snprintf(tag, sizeof tag, "layers_plant.c:%d:", at[k]);
        bool refused = false;
        for (const char *e = msg; !refused && (e = strstr(e, tag)); e++) {
            const char *eol = strchr(e, '\n');
            const char *er = strstr(e, "error:"), *fn = strstr(e, pl->fn);
            refused = er && fn && (!eol || (er < eol && fn < eol));
        }
        QT_CHECKF(refused, "%s -> %s (line %d of the copy) compiled: a call up must not: %.600s", pl->after, pl->fn,
                  at[k], msg);
    }
    /* every error line names a function planted as a call up (the copy is otherwise qreport.c,
     * which compiles), none a call down */
    int stray = 0;
    char first[400] = "";
    for (const char *e = msg; (e = strstr(e, "error:")); e++) {
        const char *bol = e, *eol = strchr(e, '\n');
        while (bol > msg && bol[-1] != '\n') bol--;
        size_t l = eol ? (size_t)(eol - bol) : strlen(bol);
        char line[600];
        snprintf(line, sizeof line, "%.*s", (int)QR_MIN(l, sizeof line - 1), bol);
        bool up = false;
        for (int k = 0; k < n_plants && !up; k++) up = qt_ly_plants[k].up && strstr(line, qt_ly_plants[k].fn);
        if (!up && !stray++) qt_fmt(first, sizeof first, "%s", line);
    }
    QT_CHECKF(stray == 0, "%d compiler errors are not planted calls up (a call down refused, or qreport.c broken): %s",
              stray, first);
    QT_CHECKF(n_up >= 10, "only %d calls up planted", n_up);
    free(msg);
}

/* ==== function length ================================================================
 * Functions over QT_LY_MAX_LINES lines are split where the pieces have names (docs/ARCHITECTURE.md,
 * "Conventions"). A function starts at a line in column 0 whose signature (up to four lines)
 * ends in ") {" and ends at the next "}" in column 0; generated code (*.pb-c.c) is left out.
 * No function is exempt. */
#define QT_LY_MAX_LINES 150

/* Calls fn(name, lines, body, n_body, ctx) for each function of C text (modified: lines are cut;
 * body: the lines between the signature and the closing brace). Returns the count of functions seen. */
typedef void (*QtLyFnVisit)(const char *name, int lines, char *const *body, int n_body, void *ctx);
static int qt_ly_functions(char *text, QtLyFnVisit fn, void *ctx) {
    char *line[1 << 15];
    int n = 0, count = 0;
    for (char *p = text; p && *p && n < (int)QR_ARRAY_LEN(line);) {
        line[n++] = p;
        char *q = strchr(p, '\n');
        if (q) *q++ = 0;
        p = q;
    }
    for (int i = 0; i < n; i++) {
        const char *l = line[i];
        if (!l[0] || isspace((unsigned char)l[0]) || l[0] == '#' || l[0] == '/' || l[0] == '*' || l[0] == '}' ||
            !strchr(l, '(') || !strncmp(l, "typedef", 7) || !strncmp(l, "struct", 6) || !strncmp(l, "enum", 4))
            continue;
        int open = -1;                       /* the signature's last line, ending in ") {" */
        for (int k = i; k < n && k < i + 4; k++) {
            if (qt_ly_ends(line[k], ") {")) { open = k; break; }
            if (strchr(line[k], ';') || strchr(line[k], '{')) break;
        }
        if (open < 0) continue;
        int close = open + 1;
        while (close < n && strcmp(line[close], "}")) close++;
        if (close == n) break;
        char name[128] = "";                 /* the identifier before the first '(' */
        const char *par = strchr(l, '('), *b = par;
        while (b > l && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
        snprintf(name, sizeof name, "%.*s", (int)QR_MIN(par - b, 127), b);
        fn(name, close - i + 1, line + open + 1, close - open - 1, ctx);
        count++;
        i = close;
    }
    return count;
}

typedef struct QtLyLen { const char *file; char why[512]; int n_over, n_fn; int longest; } QtLyLen;

static void qt_ly_len_one(const char *name, int lines, char *const *body, int n_body, void *ctx) {
    QR_UNUSED(body);
    QR_UNUSED(n_body);
    QtLyLen *c = ctx;
    c->n_fn++;
    c->longest = QR_MAX(c->longest, lines);
    if (lines <= QT_LY_MAX_LINES) return;
    if (!c->n_over++)
        qt_fmt(c->why, sizeof c->why, "%s: %s is %d lines (at most %d: split it where the pieces have names)", c->file, name,
               lines, QT_LY_MAX_LINES);
}

static void test_layers_function_length(void) {
    /* the measure itself, on a known text: a 3-line function, a two-line signature, a table */
    char probe[] = "static int a(void) {\n    return 1;\n}\nstatic const int t[] = {\n    1,\n};\n"
                   "static QrStatus b(int x,\n                  int y) {\n    if (x) {\n        return y;\n    }\n"
                   "    return 0;\n}\n";
    QtLyLen pc = { .file = "probe" };
    QT_CHECKF(qt_ly_functions(probe, qt_ly_len_one, &pc) == 2 && pc.longest == 7, "measure: %d functions, longest %d "
              "(expected 2 and 7)", pc.n_fn, pc.longest);
    char *text = qt_ly_read("qreport.c");
    QT_CHECKF(text, "cannot read qreport.c (run from the repository root)");
    char *inc[512];
    int n = qt_ly_includes(text, inc, 512), files = 0, fns = 0, over = 0;
    char first[512] = "";
    for (int i = 0; i < n; i++) {
        if (!qt_ly_ends(inc[i], ".c") || strstr(inc[i], ".pb-c.")) continue;
        char *src = qt_ly_read(inc[i]);
        QT_CHECKF(src, "cannot read %s", inc[i]);
        QtLyLen c = { .file = inc[i] };
        qt_ly_functions(src, qt_ly_len_one, &c);
        free(src);
        files++;
        fns += c.n_fn;
        if (c.n_over && !over) qt_fmt(first, sizeof first, "%s", c.why);
        over += c.n_over;
    }
    free(text);
    QT_CHECKF(files > 40 && fns > 1000, "only %d files / %d functions measured", files, fns);
    QT_CHECKF(over == 0, "%d function%s too long; first: %s", over, over == 1 ? "" : "s", first);
}

/* ==== no state kept in functions =======================================================
 * A function keeps nothing between calls: a `static` declared inside a function body is a
 * constant, const at the top level (`static const double m[3]`, `static const char *const
 * names[]`) — never a buffer, a counter or a table of mutable pointers, _Thread_local or not.
 * Results go to the caller's memory, state to the caller's structs (docs/ARCHITECTURE.md,
 * "State"). The declaration is read on its first line: up to its first '=' or ';' outside braces
 * (a struct type's members are skipped); it must say const, and after its last '*' too. */
static bool qt_ly_static_const(const char *l) {
    char d[512];
    size_t n = 0;
    int depth = 0;
    for (const char *p = l + strlen("static"); *p && n + 1 < sizeof d; p++) {
        if (*p == '{') depth++;
        else if (*p == '}') depth--;
        else if (!depth && (*p == '=' || *p == ';')) break;
        else if (!depth) d[n++] = *p;
    }
    d[n] = 0;
    bool is_const = false;
    for (const char *p = d; (p = strstr(p, "const")); p += 5)
        if ((p == d || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) && !(isalnum((unsigned char)p[5]) || p[5] == '_'))
            is_const = true;
    const char *star = strrchr(d, '*');
    if (star) {
        star++;
        while (isspace((unsigned char)*star)) star++;
        if (strncmp(star, "const", 5) || isalnum((unsigned char)star[5]) || star[5] == '_') return false;
    }
    return is_const;
}

typedef struct QtLyStatic { const char *file; char why[512]; int n_bad; } QtLyStatic;

static void qt_ly_static_one(const char *name, int lines, char *const *body, int n_body, void *ctx) {
    QR_UNUSED(lines);
    QtLyStatic *c = ctx;
    for (int i = 0; i < n_body; i++) {
        const char *l = body[i];
        while (isspace((unsigned char)*l)) l++;
        if (strncmp(l, "static", 6) || !isspace((unsigned char)l[6]) || qt_ly_static_const(l)) continue;
        if (!c->n_bad++) snprintf(c->why, sizeof c->why, "%s: %s keeps state: %s", c->file, name, l);
    }
}

static void test_layers_statics(void) {
    /* the reader itself, on a known text: two mutable statics among constants */
    char probe[] = "static int f(int x) {\n    static const char *const ok[] = { \"a\" };\n"
                   "    static const struct { const char *n; int v; } t[] = { { \"x\", 1 } };\n    static const double m[3] = {1, 2, 5};\n"
                   "    static _Thread_local char buf[64];\n    static const char *names[] = { \"b\" };\n"
                   "    return x + ok[0][0] + t[0].v + (int)m[0] + buf[0] + names[0][0];\n}\n";
    QtLyStatic pc = { .file = "probe" };
    qt_ly_functions(probe, qt_ly_static_one, &pc);
    QT_CHECKF(pc.n_bad == 2, "probe: %d mutable statics found (expected 2: buf and names)", pc.n_bad);
    char *text = qt_ly_read("qreport.c");
    QT_CHECKF(text, "cannot read qreport.c (run from the repository root)");
    char *inc[512];
    int n = qt_ly_includes(text, inc, 512), files = 0, bad = 0;
    char first[512] = "";
    for (int i = 0; i < n; i++) {
        if (strstr(inc[i], ".pb-c.")) continue;
        char *src = qt_ly_read(inc[i]);
        QT_CHECKF(src, "cannot read %s", inc[i]);
        QtLyStatic c = { .file = inc[i] };
        qt_ly_functions(src, qt_ly_static_one, &c);
        free(src);
        files++;
        if (c.n_bad && !bad) qt_fmt(first, sizeof first, "%s", c.why);
        bad += c.n_bad;
    }
    free(text);
    QT_CHECKF(files > 80, "only %d files read", files);
    QT_CHECKF(bad == 0, "%d function-level static%s not constant; first: %s", bad, bad == 1 ? "" : "s", first);
}

static void qt_layers_all(void) {
    QT_RUN(test_layers_order);
    QT_RUN(test_layers_plant);
    QT_RUN(test_layers_function_length);
    QT_RUN(test_layers_statics);
}
