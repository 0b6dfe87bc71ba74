#!/bin/sh
# tests/render_html.sh — renders an HTML page in headless Chromium, the way a user
# opens an unzipped bundle (file://), and fails on any console message (script
# errors, missing files) or when the page script did not run.
# usage: tests/render_html.sh PAGE.html SCREENSHOT.png [WIDTH,HEIGHT]
#        (QR_RENDER_DOM=FILE also keeps the DOM after the scripts ran)
# exit:  0 rendered cleanly (screenshot written), 1 a problem (reasons on stderr),
#        77 no Chromium installed (the caller skips).
set -u
page=${1:?usage: render_html.sh PAGE.html SCREENSHOT.png [WIDTH,HEIGHT]}
shot=${2:?usage: render_html.sh PAGE.html SCREENSHOT.png [WIDTH,HEIGHT]}
size=${3:-1280,2000}

browser=
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then echo "render_html: chromium not found; skipped" >&2; exit 77; fi
[ -f "$page" ] || { echo "render_html: $page: no such file" >&2; exit 1; }

url="file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
work=$(mktemp -d "${TMPDIR:-/tmp}/qr_render.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$(dirname "$shot")"
# A fresh profile per run; no sandbox (containers, root); logging to stderr so
# console messages show up as "INFO:CONSOLE" lines.
run() {
    timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --no-default-browser-check \
        --disable-extensions --disable-background-networking --user-data-dir="$work/profile" \
        --enable-logging=stderr --v=0 --virtual-time-budget=5000 "$@" "$url"
}

fail=0
run --dump-dom >"$work/dom.html" 2>"$work/dom.log" || { echo "render_html: chromium --dump-dom failed" >&2; fail=1; }
[ -n "${QR_RENDER_DOM:-}" ] && cp "$work/dom.html" "$QR_RENDER_DOM"
# The page script adds class qr-js to <body> once it has set up every table.
if ! grep -q '<body[^>]*class="[^"]*qr-js' "$work/dom.html"; then
    echo "render_html: the page script did not initialise (<body> lacks class qr-js)" >&2
    fail=1
fi
run --screenshot="$shot" --window-size="$size" --hide-scrollbars >"$work/shot.out" 2>"$work/shot.log" ||
    { echo "render_html: chromium --screenshot failed" >&2; fail=1; }
[ -s "$shot" ] || { echo "render_html: no screenshot at $shot" >&2; fail=1; }
if grep -h -E 'CONSOLE|Uncaught|ERR_FILE_NOT_FOUND' "$work/dom.log" "$work/shot.log" >"$work/console.txt"; then
    echo "render_html: console messages:" >&2
    cat "$work/console.txt" >&2
    fail=1
fi
[ "$fail" = 0 ] && echo "render_html: ok, screenshot $shot"
exit "$fail"
