"""bench/mdout.py — put a bench script's report at the top of a results file that keeps its history.

bench/RESULTS_TRANSFORMERS.md, bench/WORKFLOW.md and bench/RESULTS_LLM.md hold one section per
measurement (newest first, each saying its machine and load). A script's report (a '# Title' line,
then its body) becomes a new '## <heading>' section under the file's title; the older sections stay.
'## ' headings of the body outside code fences become '### ' so the sections stay one level.
"""
import os


def prepend_section(path, report, heading):
    """Writes `report` (text starting with '# Title') into `path` as the newest '## heading' section."""
    lines = report.rstrip('\n').split('\n')
    title = lines[0] if lines and lines[0].startswith('# ') else None
    body, fenced = [], False
    for ln in (lines[1:] if title else lines):
        if ln.startswith('```'):
            fenced = not fenced
        body.append('#' + ln if (not fenced and ln.startswith('## ')) else ln)
    while body and not body[0].strip():
        body.pop(0)
    old = ''
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    olines = old.split('\n') if old else []
    if olines and olines[0].startswith('# '):
        title, olines = olines[0], olines[1:]
    while olines and not olines[0].strip():
        olines.pop(0)
    out = [title or '# Results', '', f'## {heading}', ''] + body + ['']
    if olines:
        out += olines
    text = '\n'.join(out).rstrip('\n') + '\n'
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)
