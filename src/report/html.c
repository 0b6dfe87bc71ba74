/* report/html — implementation. See html.h. */

/* ==== page assets ================================================================ */

static const char qr__html_css[] =
":root{--bg:#f4f6f9;--card:#fff;--ink:#1e293b;--muted:#64748b;--line:#e2e8f0;--accent:#2563eb;"
"--good:#15803d;--good-bg:#e9f8ef;--good-line:#b7e4c7;--warn:#a16207;--warn-bg:#fdf6e3;--warn-line:#f3dfa2;"
"--bad:#b91c1c;--bad-bg:#fdeeee;--bad-line:#f5c2c2;"
"--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,\"DejaVu Sans Mono\",\"Liberation Mono\",monospace}\n"
"*{box-sizing:border-box}\n"
"html{-webkit-text-size-adjust:100%}\n"
"body{margin:0;background:var(--bg);color:var(--ink);"
"font:15px/1.55 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Noto Sans\",\"DejaVu Sans\",Arial,sans-serif}\n"
"a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}\n"
".qr-top{background:#0f172a;color:#f8fafc;padding:22px 32px 20px}\n"
".qr-top-in{max-width:1560px;margin:0 auto}\n"
".qr-top h1{margin:0;font-size:24px;font-weight:650;letter-spacing:-.01em}\n"
".qr-sub{margin:4px 0 0;color:#cbd5e1;font-size:14px}\n"
".qr-layout{display:grid;grid-template-columns:220px minmax(0,1fr);gap:28px;max-width:1560px;margin:0 auto;"
"padding:24px 32px 40px}\n"
".qr-toc{position:sticky;top:16px;align-self:start;max-height:calc(100vh - 32px);overflow:auto;font-size:14px}\n"
".qr-toc h2{font-size:12px;text-transform:uppercase;letter-spacing:.08em;color:var(--muted);margin:6px 10px 8px}\n"
".qr-toc ol{list-style:none;margin:0;padding:0}.qr-toc ol ol{padding-left:12px;font-size:13px}\n"
".qr-toc a{display:block;padding:4px 10px;border-radius:6px;color:var(--ink)}\n"
".qr-toc a:hover{background:#e6ebf3;text-decoration:none}\n"
"main{min-width:0}\n"
".qr-section,.qr-verdict{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:20px 24px;"
"margin:0 0 20px;box-shadow:0 1px 2px rgba(15,23,42,.05)}\n"
"h2{font-size:19px;line-height:1.3;margin:0 0 12px}h3{font-size:16px;margin:24px 0 8px}\n"
".qr-anchor{color:#94a3b8;margin-left:8px;font-weight:400;visibility:hidden}\n"
"h2:hover .qr-anchor,h3:hover .qr-anchor{visibility:visible}\n"
"p{margin:8px 0}ul,ol{margin:8px 0;padding-left:22px}li{margin:2px 0}\n"
".qr-verdict{border-left:6px solid #94a3b8}\n"
".qr-verdict.qr-good{border-left-color:var(--good)}.qr-verdict.qr-warn{border-left-color:#d97706}"
".qr-verdict.qr-bad{border-left-color:var(--bad)}\n"
".qr-verdict-head{display:flex;align-items:center;gap:12px;flex-wrap:wrap}.qr-verdict-head h2{margin:0}\n"
".qr-badge{font-size:12px;font-weight:700;letter-spacing:.06em;text-transform:uppercase;padding:3px 10px;"
"border-radius:999px;background:#eef2f7;color:var(--muted);white-space:nowrap}\n"
".qr-good .qr-badge{background:var(--good-bg);color:var(--good)}.qr-warn .qr-badge{background:var(--warn-bg);"
"color:var(--warn)}.qr-bad .qr-badge{background:var(--bad-bg);color:var(--bad)}\n"
".qr-metrics{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:12px;margin:16px 0}\n"
".qr-metric{border:1px solid var(--line);border-radius:10px;padding:10px 14px;background:#f8fafc}\n"
".qr-metric-label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}\n"
".qr-metric-value{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums;line-height:1.3;"
"overflow-wrap:anywhere}\n"
".qr-metric-note{font-size:12px;color:var(--muted)}\n"
".qr-metric.qr-good{background:var(--good-bg);border-color:var(--good-line)}.qr-metric.qr-good .qr-metric-value{color:var(--good)}\n"
".qr-metric.qr-warn{background:var(--warn-bg);border-color:var(--warn-line)}.qr-metric.qr-warn .qr-metric-value{color:var(--warn)}\n"
".qr-metric.qr-bad{background:var(--bad-bg);border-color:var(--bad-line)}.qr-metric.qr-bad .qr-metric-value{color:var(--bad)}\n"
".qr-notice{border:1px solid var(--line);border-left-width:4px;border-radius:8px;padding:10px 14px;margin:12px 0;"
"background:#f8fafc}\n"
".qr-notice strong{display:block}.qr-notice p{margin:4px 0 0}\n"
".qr-notice.qr-good{background:var(--good-bg);border-color:var(--good-line);border-left-color:var(--good)}\n"
".qr-notice.qr-warn{background:var(--warn-bg);border-color:var(--warn-line);border-left-color:#d97706}\n"
".qr-notice.qr-bad{background:var(--bad-bg);border-color:var(--bad-line);border-left-color:var(--bad)}\n"
".qr-notice pre{background:rgba(255,255,255,.6);margin:6px 0 0}\n"
".qr-caption{font-weight:600;margin:16px 0 6px}\n"
".qr-table-tools{display:none;align-items:center;gap:12px;margin:8px 0}.qr-js .qr-table-tools{display:flex}\n"
".qr-filter{font:inherit;font-size:14px;padding:6px 10px;border:1px solid #cbd5e1;border-radius:8px;width:300px;"
"max-width:100%;background:#fff}\n"
".qr-filter:focus{outline:2px solid #93c5fd;border-color:var(--accent)}\n"
".qr-count,.qr-more{color:var(--muted);font-size:13px}\n"
".qr-table-scroll{overflow:auto;max-height:72vh;border:1px solid var(--line);border-radius:8px;margin:6px 0 12px}\n"
"table.qr-table{border-collapse:separate;border-spacing:0;width:100%;font-size:13px}\n"
".qr-table th{position:sticky;top:0;z-index:1;background:#f1f5f9;text-align:left;font-weight:600;padding:7px 10px;"
"border-bottom:1px solid #d5dce6;white-space:nowrap}\n"
".qr-js .qr-table th{cursor:pointer;user-select:none}.qr-js .qr-table th:hover{background:#e6ebf3}\n"
".qr-table th[aria-sort]{color:var(--accent)}\n"
".qr-table th[aria-sort=ascending]::after{content:\" \\25B2\";font-size:10px}"
".qr-table th[aria-sort=descending]::after{content:\" \\25BC\";font-size:10px}\n"
".qr-table td{padding:5px 10px;border-bottom:1px solid #eef1f5;vertical-align:top;max-width:38em;"
"overflow-wrap:anywhere}\n"
".qr-table tbody tr:nth-child(even){background:#fafbfd}.qr-table tbody tr:hover{background:#eef4ff}\n"
".qr-table .num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\n"
".qr-table td.qr-wide{min-width:22em}\n"
".qr-table td.num{font-family:var(--mono);font-size:12px}\n"
".qr-table td.qr-c-good{color:var(--good)}.qr-table td.qr-c-warn{color:var(--warn);background:var(--warn-bg)}\n"
".qr-table td.qr-c-bad{color:var(--bad);background:var(--bad-bg);font-weight:600}\n"
".qr-sbar{display:flex;width:72px;height:8px;margin-top:3px;border-radius:2px;overflow:hidden;background:#eef1f5}\n"
".qr-sbar span{display:block;height:100%}.qr-sb0{background:#4c78a8}.qr-sb1{background:#f58518}\n"
".qr-sb2{background:#54a24b}.qr-sb3{background:#e45756}\n"
".qr-gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:16px;margin:12px 0}\n"
".qr-gallery .qr-figure{margin:0}\n"
".qr-figure{margin:12px 0;border:1px solid var(--line);border-radius:10px;padding:10px;background:#fff}\n"
".qr-figure img{display:block;max-width:100%;height:auto;margin:0 auto}\n"
".qr-figure figcaption{font-size:13px;color:var(--muted);margin-top:6px;text-align:center;overflow-wrap:anywhere}\n"
".qr-files{font-size:13px;color:var(--muted);margin:10px 0}\n"
".qr-files a{display:inline-block;margin:2px 6px 2px 0;padding:2px 8px;border:1px solid var(--line);"
"border-radius:6px;background:#f8fafc;font-family:var(--mono);font-size:12px}\n"
".qr-kv{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:4px 18px;margin:10px 0;font-size:14px}\n"
".qr-kv dt{color:var(--muted)}.qr-kv dd{margin:0;overflow-wrap:anywhere}\n"
"pre{font-family:var(--mono);font-size:12.5px;background:#f6f8fa;border:1px solid var(--line);border-radius:8px;"
"padding:10px 12px;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere}\n"
"footer{text-align:center;color:var(--muted);font-size:12px;padding:0 0 28px}\n"
"@media (max-width:1000px){.qr-layout{grid-template-columns:minmax(0,1fr);padding:16px}"
".qr-toc{position:static;max-height:none}.qr-gallery{grid-template-columns:minmax(0,1fr)}}\n"
"@media print{body{background:#fff;font-size:10.5pt}"
".qr-top{background:none;color:#000;padding:0 0 6px;border-bottom:2px solid #000}.qr-sub{color:#333}"
".qr-layout{display:block;padding:8px 0 0;max-width:none}"
".qr-toc,.qr-table-tools,.qr-js .qr-table-tools,.qr-anchor{display:none}"
"table.qr-table{font-size:7.5pt}.qr-table th,.qr-table td{padding:2px 5px}.qr-table td.num{font-size:7pt}"
".qr-table td.qr-wide{min-width:14em}"
".qr-section,.qr-verdict{box-shadow:none;border:0;border-radius:0;padding:0;margin:0 0 14px}"
".qr-verdict{border-left:6px solid #94a3b8;padding-left:12px}"
".qr-table-scroll{max-height:none;overflow:visible;border:0}.qr-table th{position:static}"
".qr-table tbody tr{break-inside:avoid}.qr-figure,.qr-metric,.qr-notice{break-inside:avoid}"
".qr-gallery{display:block}.qr-gallery .qr-figure{margin:8px 0}h2,h3{break-after:avoid}"
"*{-webkit-print-color-adjust:exact;print-color-adjust:exact}a{color:inherit}}\n";

/* Sortable headers, filter boxes; marks <body class="qr-js"> once set up (tests check it). */
static const char qr__html_js[] =
"(function(){\"use strict\";\n"
"function key(s){s=s.trim();if(s===\"\")return null;var m=/^([+-]?)inf(inity)?$/i.exec(s);"
"if(m)return m[1]===\"-\"?-Infinity:Infinity;var n=Number(s);return isNaN(n)?s.toLowerCase():n;}\n"
"function cmp(a,b){var na=typeof a===\"number\",nb=typeof b===\"number\";"
"if(na&&nb)return a<b?-1:a>b?1:0;if(na)return -1;if(nb)return 1;"
"return a.localeCompare(b,undefined,{numeric:true});}\n"
"function init(block){var table=block.querySelector(\"table\");if(!table||!table.tBodies.length)return;"
"var tbody=table.tBodies[0],orig=Array.prototype.slice.call(tbody.rows);"
"var ths=table.tHead?Array.prototype.slice.call(table.tHead.rows[0].cells):[];\n"
"ths.forEach(function(th,c){th.tabIndex=0;th.title=\"Sort\";\n"
" function sort(){var dir=th.getAttribute(\"aria-sort\")===\"ascending\"?-1:1;"
"ths.forEach(function(o){o.removeAttribute(\"aria-sort\");});"
"th.setAttribute(\"aria-sort\",dir>0?\"ascending\":\"descending\");\n"
"  var keyed=orig.map(function(r,i){var cell=r.cells[c];return{r:r,i:i,k:key(cell?cell.textContent:\"\")};});\n"
"  keyed.sort(function(x,y){if(x.k===null||y.k===null)return x.k===y.k?x.i-y.i:(x.k===null?1:-1);"
"return dir*cmp(x.k,y.k)||x.i-y.i;});\n"
"  var f=document.createDocumentFragment();keyed.forEach(function(o){f.appendChild(o.r);});tbody.appendChild(f);}\n"
" th.addEventListener(\"click\",sort);"
"th.addEventListener(\"keydown\",function(e){if(e.key===\"Enter\"||e.key===\" \"){e.preventDefault();sort();}});});\n"
"var input=block.querySelector(\".qr-filter\"),count=block.querySelector(\".qr-count\");if(!input)return;\n"
"var text=orig.map(function(r){return r.textContent.toLowerCase();});\n"
"input.addEventListener(\"input\",function(){var words=input.value.toLowerCase().split(/\\s+/).filter(Boolean),n=0;\n"
" orig.forEach(function(r,i){var show=words.every(function(w){return text[i].indexOf(w)>=0;});r.hidden=!show;"
"if(show)n++;});\n"
" if(count)count.textContent=words.length?n+\" of \"+orig.length+\" rows\":orig.length+\" rows\";});}\n"
"Array.prototype.forEach.call(document.querySelectorAll(\".qr-table-block\"),init);\n"
"document.body.classList.add(\"qr-js\");})();\n";

/* ==== buffer, errors, escaping =========================================================== */

static void qr_html_init(QrHtml *h, const char *title) {
    memset(h, 0, sizeof *h);
    h->title = qr_arena_strdup(&h->arena, title ? title : "qreport");
    if (!h->title || qr_strmap_init(&h->ids, &h->arena, 64) != QR_OK) { h->err = QR_ERR_NOMEM; h->err_what = "out of memory"; }
}

static void qr_html_free(QrHtml *h) {
    free(h->body);
    qr_arena_free(&h->arena);
    memset(h, 0, sizeof *h);
}

static void qr__html_fail(QrHtml *h, QrStatus st, const char *what) {
    if (h->err) return;
    h->err = st;
    h->err_what = what;
    qr_errf(st, "html: %s", what);
}

static void qr__html_put(QrHtml *h, const char *s, size_t n) {
    if (h->err) return;
    if (h->len + n + 1 > h->cap) {
        size_t nc = QR_MAX(h->cap * 2, h->len + n + 8192);
        char *nb = realloc(h->body, nc);
        if (!nb) { qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return; }
        h->body = nb;
        h->cap = nc;
    }
    memcpy(h->body + h->len, s, n);
    h->len += n;
    h->body[h->len] = 0;
}

static void qr__html_puts(QrHtml *h, const char *s) { qr__html_put(h, s, strlen(s)); }

/* Escaped text: & < > " ' as entities, invalid UTF-8 as U+FFFD, other control
 * characters than tab and newline dropped. */
static void qr__html_esc(QrHtml *h, const char *s) {
    if (!s) return;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), run = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        const char *rep = NULL;
        int ul = 1;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (c >= 0x80) { ul = qr_json_utf8_len(p + i, n - i); if (!ul) { rep = "\xef\xbf\xbd"; ul = 1; } }
            else if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) rep = "";
        }
        if (rep) { qr__html_put(h, s + run, i - run); qr__html_puts(h, rep); run = i + (size_t)ul; }
        i += (size_t)ul;
    }
    qr__html_put(h, s + run, n - run);
}

/* Escaped text with a line-break opportunity (<wbr>) after each '/' and '_' of a
 * long name, so node paths wrap at their separators instead of mid-word. */
static void qr__html_esc_breakable(QrHtml *h, const char *s) {
    if (!s) return;
    char piece[256];
    size_t o = 0;
    for (const char *p = s;; p++) {
        if (*p) piece[o++] = *p;
        if (!*p || *p == '/' || *p == '_' || o == sizeof piece - 8) {
            /* never cut a UTF-8 sequence: carry its continuation bytes */
            while (*p && o < sizeof piece - 1 && ((unsigned char)p[1] & 0xc0) == 0x80) piece[o++] = *++p;
            piece[o] = 0;
            qr__html_esc(h, piece);
            o = 0;
            if (!*p) break;
            if (*p == '/' || *p == '_') qr__html_puts(h, "<wbr>");
        }
    }
}

/* A relative path as a URL: every byte but [A-Za-z0-9-._~/] percent-encoded. */
static void qr__html_url(QrHtml *h, const char *path) {
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("-._~/", *p)) qr__html_put(h, (const char *)p, 1);
        else { char e[3] = { '%', hex[*p >> 4], hex[*p & 15] }; qr__html_put(h, e, 3); }
    }
}

static void qr__html_printf_esc(QrHtml *h, const char *fmt, va_list ap) {
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) { va_end(ap2); qr__html_fail(h, QR_ERR_INVALID, "format error"); return; }
    if ((size_t)n < sizeof small) { qr__html_esc(h, small); va_end(ap2); return; }
    char *big = malloc((size_t)n + 1);
    if (!big) { va_end(ap2); qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return; }
    vsnprintf(big, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    qr__html_esc(h, big);
    free(big);
}

static const char *qr__html_level_class(QrHtmlLevel l) {
    return l == QR_HTML_GOOD ? "qr-good" : l == QR_HTML_WARN ? "qr-warn" : l == QR_HTML_BAD ? "qr-bad" : "qr-none";
}

/* Closes the inline groups (metric tiles) before block content. */
static void qr__html_flow(QrHtml *h) {
    if (h->in_metrics) { qr__html_puts(h, "</div>\n"); h->in_metrics = false; }
}

/* ==== structure ============================================================================ */

/* Closes open sections down to (and including) `level`. */
static void qr__html_close_to(QrHtml *h, int level) {
    qr__html_flow(h);
    if (h->in_list) { qr__html_fail(h, QR_ERR_INVALID, "section started inside a list"); return; }
    if (h->in_gallery) { qr__html_fail(h, QR_ERR_INVALID, "section started inside a gallery"); return; }
    while (h->open_level >= level && h->open_level > 0) {
        if (h->open_level == 3) { qr__html_puts(h, "</div>\n"); h->open_level = 2; }
        else { qr__html_puts(h, "</section>\n"); h->open_level = 0; }
    }
}

/* Makes a unique anchor id from `id` or the title; stores it in the arena. */
static const char *qr__html_make_id(QrHtml *h, const char *id, const char *title) {
    const char *src = id && *id ? id : title ? title : "section";
    char base[80];
    size_t o = 0;
    bool dash = false;
    for (const unsigned char *p = (const unsigned char *)src; *p && o + 1 < sizeof base - 8; p++) {
        if (isalnum(*p) || *p == '_' || (*p == '-' && id)) { base[o++] = (char)(id ? *p : tolower(*p)); dash = false; }
        else if (!dash && o > 0) { base[o++] = '-'; dash = true; }
    }
    while (o > 0 && base[o - 1] == '-') o--;
    if (o == 0) { memcpy(base, "section", 7); o = 7; }
    base[o] = 0;
    char cand[96];
    snprintf(cand, sizeof cand, "%s", base);
    for (int k = 2; qr_strmap_get(&h->ids, cand) >= 0; k++) snprintf(cand, sizeof cand, "%s-%d", base, k);
    char *keep = qr_arena_strdup(&h->arena, cand);
    if (!keep || qr_strmap_put(&h->ids, &h->arena, keep, 1) != QR_OK) { qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return NULL; }
    return keep;
}

static void qr__html_toc_add(QrHtml *h, const char *id, const char *title, int level) {
    if (h->err) return;
    if (h->n_toc == h->cap_toc) {
        int cap = h->cap_toc ? h->cap_toc * 2 : 32;
        QrHtmlTocItem *nt = qr_arena_array(&h->arena, (size_t)cap, sizeof *nt);
        if (!nt) { qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return; }
        if (h->n_toc) memcpy(nt, h->toc, (size_t)h->n_toc * sizeof *nt);
        h->toc = nt;
        h->cap_toc = cap;
    }
    const char *t = qr_arena_strdup(&h->arena, title ? title : "");
    if (!t) { qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return; }
    h->toc[h->n_toc++] = (QrHtmlTocItem){ id, t, level };
}

static void qr__html_heading(QrHtml *h, int level, const char *id, const char *title) {
    qr__html_puts(h, level == 2 ? "<h2>" : "<h3>");
    qr__html_esc(h, title);
    qr__html_puts(h, "<a class=\"qr-anchor\" href=\"#");
    qr__html_esc(h, id);
    qr__html_puts(h, "\" aria-label=\"Link to this section\">#</a>");
    qr__html_puts(h, level == 2 ? "</h2>\n" : "</h3>\n");
}

static void qr_html_subtitle(QrHtml *h, const char *text) {
    if (h->err) return;
    h->subtitle = qr_arena_strdup(&h->arena, text ? text : "");
    if (!h->subtitle) qr__html_fail(h, QR_ERR_NOMEM, "out of memory");
}

static void qr_html_section(QrHtml *h, const char *id, const char *title) {
    qr__html_close_to(h, 1);
    const char *aid = qr__html_make_id(h, id, title);
    if (h->err) return;
    qr__html_puts(h, "<section class=\"qr-section\" id=\"");
    qr__html_esc(h, aid);
    qr__html_puts(h, "\">\n");
    qr__html_heading(h, 2, aid, title);
    qr__html_toc_add(h, aid, title, 2);
    h->open_level = 2;
}

#ifdef QR_TESTING
QR_TESTAPI void qr_html_subsection(QrHtml *h, const char *id, const char *title) {
    if (h->open_level < 2) { qr__html_fail(h, QR_ERR_INVALID, "subsection outside a section"); return; }
    qr__html_close_to(h, 3);
    const char *aid = qr__html_make_id(h, id, title);
    if (h->err) return;
    qr__html_puts(h, "<div class=\"qr-sub-section\" id=\"");
    qr__html_esc(h, aid);
    qr__html_puts(h, "\">\n");
    qr__html_heading(h, 3, aid, title);
    qr__html_toc_add(h, aid, title, 3);
    h->open_level = 3;
}
#endif

static void qr_html_verdict_begin(QrHtml *h, QrHtmlLevel level, const char *headline) {
    qr__html_close_to(h, 1);
    const char *aid = qr__html_make_id(h, "verdict", NULL);
    if (h->err) return;
    static const char *const badge[] = { "summary", "good", "warning", "bad" };
    qr__html_puts(h, "<section class=\"qr-verdict ");
    qr__html_puts(h, qr__html_level_class(level));
    qr__html_puts(h, "\" id=\"");
    qr__html_esc(h, aid);
    qr__html_puts(h, "\">\n<div class=\"qr-verdict-head\"><span class=\"qr-badge\">");
    qr__html_puts(h, badge[level >= QR_HTML_NONE && level <= QR_HTML_BAD ? level : 0]);
    qr__html_puts(h, "</span><h2>");
    qr__html_esc(h, headline);
    qr__html_puts(h, "</h2></div>\n");
    qr__html_toc_add(h, aid, "Verdict", 2);
    h->open_level = 1;
}

static void qr_html_metric(QrHtml *h, const char *label, const char *value, QrHtmlLevel level, const char *note) {
    if (h->err) return;
    if (!h->in_metrics) { qr__html_puts(h, "<div class=\"qr-metrics\">\n"); h->in_metrics = true; }
    qr__html_puts(h, "<div class=\"qr-metric ");
    qr__html_puts(h, qr__html_level_class(level));
    qr__html_puts(h, "\"><div class=\"qr-metric-label\">");
    qr__html_esc(h, label);
    qr__html_puts(h, "</div><div class=\"qr-metric-value\">");
    qr__html_esc(h, value);
    qr__html_puts(h, "</div>");
    if (note && *note) { qr__html_puts(h, "<div class=\"qr-metric-note\">"); qr__html_esc(h, note); qr__html_puts(h, "</div>"); }
    qr__html_puts(h, "</div>\n");
}

static void qr_html_verdict_end(QrHtml *h) {
    if (h->err) return;
    if (h->open_level != 1) { qr__html_fail(h, QR_ERR_INVALID, "verdict end without a verdict"); return; }
    qr__html_close_to(h, 1);
}

/* ==== text ================================================================================== */

static void qr_html_para(QrHtml *h, const char *text) {
    qr__html_flow(h);
    qr__html_puts(h, "<p>");
    qr__html_esc(h, text);
    qr__html_puts(h, "</p>\n");
}

static void qr_html_paraf(QrHtml *h, const char *fmt, ...) {
    qr__html_flow(h);
    qr__html_puts(h, "<p>");
    va_list ap;
    va_start(ap, fmt);
    qr__html_printf_esc(h, fmt, ap);
    va_end(ap);
    qr__html_puts(h, "</p>\n");
}

static void qr_html_pre(QrHtml *h, const char *text) {
    qr__html_flow(h);
    qr__html_puts(h, "<pre>");
    qr__html_esc(h, text);
    qr__html_puts(h, "</pre>\n");
}

static void qr_html_list_begin(QrHtml *h, bool ordered) {
    qr__html_flow(h);
    if (h->in_list) { qr__html_fail(h, QR_ERR_INVALID, "nested list"); return; }
    qr__html_puts(h, ordered ? "<ol>\n" : "<ul>\n");
    h->in_list = ordered ? 2 : 1;
}

static void qr_html_item(QrHtml *h, const char *text) {
    if (!h->in_list) { qr__html_fail(h, QR_ERR_INVALID, "list item outside a list"); return; }
    qr__html_puts(h, "<li>");
    qr__html_esc(h, text);
    qr__html_puts(h, "</li>\n");
}

static void qr_html_itemf(QrHtml *h, const char *fmt, ...) {
    if (!h->in_list) { qr__html_fail(h, QR_ERR_INVALID, "list item outside a list"); return; }
    qr__html_puts(h, "<li>");
    va_list ap;
    va_start(ap, fmt);
    qr__html_printf_esc(h, fmt, ap);
    va_end(ap);
    qr__html_puts(h, "</li>\n");
}

static void qr_html_list_end(QrHtml *h) {
    if (!h->in_list) { qr__html_fail(h, QR_ERR_INVALID, "list end without a list"); return; }
    qr__html_puts(h, h->in_list == 2 ? "</ol>\n" : "</ul>\n");
    h->in_list = 0;
}

#ifdef QR_TESTING
QR_TESTAPI void qr_html_kv_begin(QrHtml *h) { qr__html_flow(h); qr__html_puts(h, "<dl class=\"qr-kv\">\n"); }
QR_TESTAPI void qr_html_kv(QrHtml *h, const char *key, const char *value) {
    qr__html_puts(h, "<dt>");
    qr__html_esc(h, key);
    qr__html_puts(h, "</dt><dd>");
    qr__html_esc(h, value);
    qr__html_puts(h, "</dd>\n");
}
QR_TESTAPI void qr_html_kv_end(QrHtml *h) { qr__html_puts(h, "</dl>\n"); }
#endif

/* ==== notices ============================================================================== */

static void qr_html_notice(QrHtml *h, QrHtmlLevel level, const char *title, const char *text) {
    qr__html_flow(h);
    qr__html_puts(h, "<div class=\"qr-notice ");
    qr__html_puts(h, qr__html_level_class(level));
    qr__html_puts(h, level == QR_HTML_BAD ? "\" role=\"alert\">" : "\">");
    if (title && *title) { qr__html_puts(h, "<strong>"); qr__html_esc(h, title); qr__html_puts(h, "</strong>"); }
    if (text && *text) { qr__html_puts(h, "<p>"); qr__html_esc(h, text); qr__html_puts(h, "</p>"); }
    qr__html_puts(h, "</div>\n");
}

static void qr_html_failed(QrHtml *h, const char *analysis, const char *message) {
    qr__html_flow(h);
    qr__html_puts(h, "<div class=\"qr-notice qr-bad qr-failed\" role=\"alert\"><strong>");
    qr__html_esc(h, analysis);
    qr__html_puts(h, " failed</strong><p>The other analyses ran; this part of the report is missing. "
                        "Error:</p><pre>");
    qr__html_esc(h, message && *message ? message : "(no message)");
    qr__html_puts(h, "</pre></div>\n");
}

/* ==== tables, images, links ============================================================== */

/* Whether a cell reads as a number for alignment (the script's sort agrees). */
static bool qr__html_numeric(const char *s) {
    while (*s == ' ') s++;
    if (!*s) return false;
    const char *t = s + (*s == '+' || *s == '-');
    if (!strcasecmp(t, "inf") || !strcasecmp(t, "infinity") || !strcasecmp(t, "nan")) return true;
    char *end;
    strtod(s, &end);
    if (end == s) return false;
    while (*end == ' ') end++;
    return *end == 0 && !strchr(s, 'x') && !strchr(s, 'X');
}

/* The stacked bar of one cell (QrHtmlTableOpts.cell_bar): widths in percent of the parts' sum. */
static void qr__html_bar(QrHtml *h, const QrTable *t, int r, int c, const QrHtmlTableOpts *opts) {
    double v[QR_HTML_BAR_MAX] = {0}, sum = 0;
    int n = QR_MIN(opts->cell_bar(t, r, c, opts->ctx, v), QR_HTML_BAR_MAX);
    for (int k = 0; k < n; k++) if (v[k] > 0 && isfinite(v[k])) sum += v[k];
    if (n <= 0 || !(sum > 0) || !isfinite(sum)) return;
    char tip[256] = "";
    size_t o = 0;
    for (int k = 0; k < n && o < sizeof tip; k++)
        o += (size_t)snprintf(tip + o, sizeof tip - o, "%s%s %.0f%%", k ? ", " : "",
                              opts->bar_labels && opts->bar_labels[k] ? opts->bar_labels[k] : "?",
                              v[k] > 0 && isfinite(v[k]) ? 100 * v[k] / sum : 0.0);
    qr__html_puts(h, "<span class=\"qr-sbar\" role=\"img\" title=\"");
    qr__html_esc(h, tip);
    qr__html_puts(h, "\" aria-label=\"");
    qr__html_esc(h, tip);
    qr__html_puts(h, "\">");
    for (int k = 0; k < n; k++) {
        if (!(v[k] > 0) || !isfinite(v[k])) continue;
        char buf[80];
        snprintf(buf, sizeof buf, "<span class=\"qr-sb%d\" style=\"width:%.1f%%\"></span>", k, 100 * v[k] / sum);
        qr__html_puts(h, buf);
    }
    qr__html_puts(h, "</span>");
}

static void qr_html_table(QrHtml *h, const QrTable *t, const QrHtmlTableOpts *opts) {
    static const QrHtmlTableOpts defaults = {0};
    if (!opts) opts = &defaults;
    qr__html_flow(h);
    if (h->err) return;
    int shown = opts->max_rows > 0 ? QR_MIN(opts->max_rows, t->n_rows) : t->n_rows;
    int filter_min = opts->filter_min_rows == 0 ? 10 : opts->filter_min_rows;
    bool *num = calloc((size_t)QR_MAX(t->n_cols, 1), sizeof *num);
    if (!num) { qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return; }
    for (int c = 0; c < t->n_cols; c++) {
        bool any = false, all = true;
        for (int r = 0; r < t->n_rows && all; r++) {
            const char *v = t->rows[r][c];
            if (!v || !*v) continue;
            any = true;
            all = qr__html_numeric(v);
        }
        num[c] = any && all;
    }
    /* Columns with long text (node names) get a minimum width and break after '/' and '_'. */
    bool *wide = calloc((size_t)QR_MAX(t->n_cols, 1), sizeof *wide);
    if (!wide) { free(num); qr__html_fail(h, QR_ERR_NOMEM, "out of memory"); return; }
    for (int c = 0; c < t->n_cols; c++)
        for (int r = 0; r < t->n_rows && !num[c] && !wide[c]; r++)
            wide[c] = t->rows[r][c] && strlen(t->rows[r][c]) > 32;
    h->n_tables++;
    if (opts->caption) { qr__html_puts(h, "<div class=\"qr-caption\">"); qr__html_esc(h, opts->caption); qr__html_puts(h, "</div>\n"); }
    qr__html_puts(h, "<div class=\"qr-table-block\">\n");
    if (filter_min >= 0 && shown > filter_min) {
        char buf[160];
        snprintf(buf, sizeof buf, "<div class=\"qr-table-tools\"><input type=\"search\" class=\"qr-filter\" "
                 "placeholder=\"Filter %d rows\xe2\x80\xa6\" aria-label=\"Filter rows\">", shown);
        qr__html_puts(h, buf);
        snprintf(buf, sizeof buf, "<span class=\"qr-count\">%d rows</span></div>\n", shown);
        qr__html_puts(h, buf);
    }
    qr__html_puts(h, "<div class=\"qr-table-scroll\"><table class=\"qr-table\">\n<thead><tr>");
    for (int c = 0; c < t->n_cols; c++) {
        qr__html_puts(h, num[c] ? "<th scope=\"col\" class=\"num\">" : wide[c] ? "<th scope=\"col\" class=\"qr-wide\">" : "<th scope=\"col\">");
        qr__html_esc(h, t->cols[c]);
        qr__html_puts(h, "</th>");
    }
    qr__html_puts(h, "</tr></thead>\n<tbody>\n");
    for (int i = 0; i < shown && !h->err; i++) {
        int r = opts->order ? opts->order[i] : i;
        qr__html_puts(h, "<tr>");
        for (int c = 0; c < t->n_cols; c++) {
            QrHtmlLevel lv = opts->cell_level ? opts->cell_level(t, r, c, opts->ctx) : QR_HTML_NONE;
            const char *lvc = lv == QR_HTML_GOOD ? "qr-c-good" : lv == QR_HTML_WARN ? "qr-c-warn" : lv == QR_HTML_BAD ? "qr-c-bad" : NULL;
            char td[48];
            const char *kind = num[c] ? "num" : wide[c] ? "qr-wide" : NULL;
            if (kind && lvc) snprintf(td, sizeof td, "<td class=\"%s %s\">", kind, lvc);
            else if (kind || lvc) snprintf(td, sizeof td, "<td class=\"%s\">", kind ? kind : lvc);
            else snprintf(td, sizeof td, "<td>");
            qr__html_puts(h, td);
            if (wide[c]) qr__html_esc_breakable(h, t->rows[r][c]);
            else qr__html_esc(h, t->rows[r][c]);
            if (opts->cell_bar) qr__html_bar(h, t, r, c, opts);
            qr__html_puts(h, "</td>");
        }
        qr__html_puts(h, "</tr>\n");
    }
    qr__html_puts(h, "</tbody></table></div>\n");
    if (shown < t->n_rows) {
        char buf[128];
        snprintf(buf, sizeof buf, "<p class=\"qr-more\">First %d of %d rows shown.</p>\n", shown, t->n_rows);
        qr__html_puts(h, buf);
    }
    qr__html_puts(h, "</div>\n");
    free(num);
    free(wide);
}

static void qr_html_gallery_begin(QrHtml *h) {
    qr__html_flow(h);
    if (h->in_gallery) { qr__html_fail(h, QR_ERR_INVALID, "nested gallery"); return; }
    qr__html_puts(h, "<div class=\"qr-gallery\">\n");
    h->in_gallery = true;
}

static void qr_html_gallery_end(QrHtml *h) {
    if (!h->in_gallery) { qr__html_fail(h, QR_ERR_INVALID, "gallery end without a gallery"); return; }
    qr__html_puts(h, "</div>\n");
    h->in_gallery = false;
}

static void qr_html_image(QrHtml *h, const char *src, const char *alt, const char *caption, int width, int height) {
    qr__html_flow(h);
    qr__html_puts(h, "<figure class=\"qr-figure\"><a href=\"");
    qr__html_url(h, src);
    qr__html_puts(h, "\"><img src=\"");
    qr__html_url(h, src);
    qr__html_puts(h, "\" alt=\"");
    qr__html_esc(h, alt ? alt : "");
    qr__html_puts(h, "\" loading=\"lazy\" decoding=\"async\"");
    if (width > 0 && height > 0) {
        char buf[64];
        snprintf(buf, sizeof buf, " width=\"%d\" height=\"%d\"", width, height);
        qr__html_puts(h, buf);
    }
    qr__html_puts(h, "></a>");
    if (caption && *caption) { qr__html_puts(h, "<figcaption>"); qr__html_esc(h, caption); qr__html_puts(h, "</figcaption>"); }
    qr__html_puts(h, "</figure>\n");
}

static void qr_html_link(QrHtml *h, const char *href, const char *text) {
    qr__html_puts(h, "<a href=\"");
    qr__html_url(h, href);
    qr__html_puts(h, "\">");
    qr__html_esc(h, text && *text ? text : href);
    qr__html_puts(h, "</a>");
}

static void qr_html_raw(QrHtml *h, const char *markup) { qr__html_flow(h); qr__html_puts(h, markup); }
static void qr_html_text(QrHtml *h, const char *text) { qr__html_esc(h, text ? text : ""); }

static void qr_html_files(QrHtml *h, const char *const *paths, int n) {
    qr__html_flow(h);
    if (n <= 0) return;
    qr__html_puts(h, "<p class=\"qr-files\">Raw files: ");
    for (int i = 0; i < n; i++) { qr_html_link(h, paths[i], paths[i]); qr__html_puts(h, " "); }
    qr__html_puts(h, "</p>\n");
}

/* ==== composition ============================================================================ */

static QrStatus qr_html_finish(QrHtml *h, char **out, size_t *len) {
    qr__html_close_to(h, 1);
    if (!h->err && h->in_list) qr__html_fail(h, QR_ERR_INVALID, "unclosed list");
    if (!h->err && h->in_gallery) qr__html_fail(h, QR_ERR_INVALID, "unclosed gallery");
    if (h->err) return qr_errf(h->err, "html: %s", h->err_what);
    /* The page is assembled around the body: build it in a second QrHtml buffer. */
    QrHtml page = {0};
    qr__html_puts(&page, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                            "<meta name=\"generator\" content=\"qreport " QR_VERSION "\">\n<title>");
    qr__html_esc(&page, h->title);
    qr__html_puts(&page, "</title>\n<style>\n");
    qr__html_puts(&page, qr__html_css);
    qr__html_puts(&page, "</style>\n</head>\n<body>\n<header class=\"qr-top\"><div class=\"qr-top-in\"><h1>");
    qr__html_esc(&page, h->title);
    qr__html_puts(&page, "</h1>");
    if (h->subtitle && *h->subtitle) {
        qr__html_puts(&page, "<p class=\"qr-sub\">");
        qr__html_esc(&page, h->subtitle);
        qr__html_puts(&page, "</p>");
    }
    qr__html_puts(&page, "</div></header>\n<div class=\"qr-layout\">\n");
    qr__html_puts(&page, "<nav class=\"qr-toc\" aria-label=\"Contents\">\n<h2>Contents</h2>\n<ol>\n");
    for (int i = 0; i < h->n_toc; i++) {
        const QrHtmlTocItem *it = &h->toc[i];
        bool sub = it->level == 3;
        qr__html_puts(&page, "<li><a href=\"#");
        qr__html_esc(&page, it->id);
        qr__html_puts(&page, "\">");
        qr__html_esc(&page, it->title);
        qr__html_puts(&page, "</a>");
        bool next_sub = i + 1 < h->n_toc && h->toc[i + 1].level == 3;
        if (!sub && next_sub) qr__html_puts(&page, "\n<ol>\n");
        else qr__html_puts(&page, "</li>\n");
        if (sub && !next_sub) qr__html_puts(&page, "</ol></li>\n");
    }
    qr__html_puts(&page, "</ol>\n</nav>\n<main>\n");
    qr__html_put(&page, h->body ? h->body : "", h->len);
    qr__html_puts(&page, "</main>\n</div>\n<footer>Generated by qreport " QR_VERSION
                            " \xc2\xb7 a self-contained page: it works offline from the unzipped folder.</footer>\n"
                            "<script>\n");
    qr__html_puts(&page, qr__html_js);
    qr__html_puts(&page, "</script>\n</body>\n</html>\n");
    if (page.err) {
        QrStatus st = qr_errf(page.err, "html: %s", page.err_what);
        qr_html_free(&page);
        return st;
    }
    *out = page.body;
    if (len) *len = page.len;
    page.body = NULL;
    qr_html_free(&page);
    qr_html_free(h);
    return QR_OK;
}
