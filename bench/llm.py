#!/usr/bin/python3
"""bench/llm.py — issue 26 section 5: runall --generate on the ~0.5B-parameter decoder.

Usage: /usr/bin/python3 bench/llm.py [--generate 16] [--threads 2] [--qreport ./qreport]
                                     [--out bench/RESULTS_LLM.md]

Needs bench/models/llm/{fp32,int4_sym}/model.onnx(+.data) and prompt/*.npy, made by
`/usr/bin/python3 fixtures/make_llm.py --bench` (seeded, git-ignored, never downloaded: 16 layers,
hidden 1536, 12 heads / 4 KV heads, MLP 4096, vocabulary 32000; the int4 twin is the builder's
default: MatMulNBits bits 4, block 32, symmetric). Runs once:

  /usr/bin/time -f "%e %M" qreport runall fp32/model.onnx int4_sym/model.onnx \\
      -i input_ids=prompt/input_ids.npy -i attention_mask=... -i past_key_values.N.key=... \\
      --generate G --threads T -o report.zip --quiet

and writes (markdown, --out) the wall seconds, the peak RSS against the bound, manifest.json's
stage seconds and summary.json's generation (both token lists, first divergence), with the CPU,
the load average before and after and the command. The bound: the int4 weights stay packed
(MatMulNBits dequantizes a block at a time, never the whole weight), so the process holds each
model once as it is on disk plus activations, KV caches and the analyses' buffers:
    bound = fp32 files + int4 files + 400 MB
(the fp32 model alone is ~2 GB: a copy of it, or a float copy of the int4 weights, breaks the
bound). Exit 0 when it ran, 2 when something is missing, 1 when runall failed.
"""
import argparse
import datetime
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import zipfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mdout import prepend_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SLACK = 400 * 1024 * 1024


def loadavg():
    with open('/proc/loadavg') as f:
        return ' '.join(f.read().split()[:3])


def cpu():
    name, avx512 = '?', False
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name') and name == '?':
                name = line.split(':', 1)[1].strip()
            if line.startswith('flags'):
                avx512 = 'avx512f' in line.split()
    return name, avx512


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--generate', type=int, default=16)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--qreport', default='./qreport')
    ap.add_argument('--models-dir', default=os.path.join(HERE, 'models', 'llm'))
    ap.add_argument('--out', default=os.path.join(HERE, 'RESULTS_LLM.md'))
    a = ap.parse_args()
    d = a.models_dir
    fp, q4, pr = os.path.join(d, 'fp32', 'model.onnx'), os.path.join(d, 'int4_sym', 'model.onnx'), os.path.join(d, 'prompt')
    if not (os.path.exists(fp) and os.path.exists(q4) and os.path.isdir(pr)):
        print(f'llm.py: {d} incomplete: /usr/bin/python3 fixtures/make_llm.py --bench', file=sys.stderr)
        sys.exit(2)
    if not os.access(a.qreport, os.X_OK) and not os.access(os.path.join(ROOT, a.qreport), os.X_OK):
        print(f'llm.py: {a.qreport} not built (make qreport)', file=sys.stderr)
        sys.exit(2)
    files = sum(os.path.getsize(f) for m in ('fp32', 'int4_sym') for f in glob.glob(os.path.join(d, m, 'model.onnx*')))
    ins = []
    for f in sorted(glob.glob(os.path.join(pr, '*.npy'))):
        ins += ['-i', f'{os.path.basename(f)[:-4]}={os.path.relpath(f, ROOT)}']
    tmp = tempfile.mkdtemp(prefix='qr_llmbench_')
    z, tf = os.path.join(tmp, 'r.zip'), os.path.join(tmp, 'time.txt')
    cmd = ['/usr/bin/time', '-f', '%e %M', '-o', tf, a.qreport, 'runall', os.path.relpath(fp, ROOT), os.path.relpath(q4, ROOT)] + ins + \
          ['--generate', str(a.generate), '--threads', str(a.threads), '-o', z, '--quiet']
    t0, load0 = datetime.datetime.utcnow(), loadavg()
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    load1 = loadavg()
    if p.returncode != 0:
        print(f'runall failed (exit {p.returncode}):\n{p.stderr[-2000:]}', file=sys.stderr)
        sys.exit(1)
    with open(tf) as f:
        e, k = f.read().split()[-2:]
    wall, rss = float(e), int(k) * 1024
    with zipfile.ZipFile(z) as zf:
        man = json.loads(zf.read('manifest.json'))
        summ = json.loads(zf.read('summary.json'))
    gen = summ.get('generation', {})
    name, avx512 = cpu()
    bound = files + SLACK
    L = ['# LLM bench (bench/llm.py)', '',
         f'- date: {t0:%Y-%m-%d %H:%M} UTC; CPU "{name}", {"AVX-512" if avx512 else "AVX2, no AVX-512"}, {os.cpu_count()} cores; '
         f'load average before {load0}, after {load1}',
         f'- models: {os.path.relpath(d, ROOT)} (fixtures/make_llm.py --bench), fp32 + int4_sym files {files / 2**30:.2f} GiB', '',
         '| runall --generate %d, %d threads | value |' % (a.generate, a.threads), '|---|---|',
         f'| wall | {wall:.1f} s |',
         f'| peak RSS | {rss / 2**30:.2f} GiB (bound: both models\' files + 400 MB = {bound / 2**30:.2f} GiB: '
         f'**{rss / bound:.2f}x**) |',
         f'| baseline tokens | {gen.get("baseline_tokens")} |',
         f'| analysis tokens | {gen.get("analysis_tokens")} |',
         f'| first divergence | {gen.get("first_divergence")} |', '',
         'Stages (manifest.json, seconds):', '', '| stage | s |', '|---|---|']
    L += [f'| {s["name"]} | {s["seconds"]:.1f} |' for s in man.get('stages', [])]
    L += ['', f'Command: `{shlex.join(cmd[5:]).replace(z, "report.zip")}` under `/usr/bin/time -f "%e %M"`']
    text = '\n'.join(L) + '\n'
    prepend_section(a.out, text, 'Run of ' + time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()) + ' (bench script output; say the load and the commit when you keep it)')
    print(text)


if __name__ == '__main__':
    main()
