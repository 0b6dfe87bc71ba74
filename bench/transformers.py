#!/usr/bin/python3
"""bench/transformers.py — issue 27's table on the transformer bench models (make_transformers.py).

Usage: /usr/bin/python3 bench/transformers.py [--models vit_b16,bert_base,gpt2_small] [--threads 2]
                                              [--procs 3] [--runs 5] [--runall-reps 1] [--no-runall]
                                              [--qreport ./qreport] [--out bench/RESULTS_TRANSFORMERS.md]

Per model (bench/models/<model>/{base.onnx,qat.onnx,input.npy}), side by side in one run:
  1. float latency: `qreport run base.onnx --repeat RUNS --threads T` and
     `node bench/ort_bench.js base.onnx input.npy T RUNS all`, alternating which goes first,
     PROCS processes each; the median of the process medians, their range and the ratio.
  2. the sim of the int8 twin against ONNX Runtime 'disabled' (one thread): `qreport run
     qat.onnx` (sim) and `node fixtures/ort_golden.js outputs qat.onnx ... disabled`, output
     cosine and max |diff|; for scale, the quantization itself (ORT float 'disabled' vs ORT twin
     'disabled') and qreport float vs ORT float 'disabled'.
  3. `/usr/bin/time -f "%e %M" qreport runall base.onnx qat.onnx -i input.npy --threads T`:
     wall seconds and peak RSS (median of RUNALL_REPS), manifest.json's per-stage seconds, and the
     bound 2 x (base.onnx + qat.onnx) + 200 MB.
Writes a markdown report (--out) with the CPU (/proc/cpuinfo's model name and whether it has
AVX-512), the load average at start and end, the versions and every command. numpy for the
cosines; node with onnxruntime-node from $ORT_NODE_MODULES (default /tmp/ort/node_modules).
Exit 0 when it ran, 2 when something it needs is missing, 1 when a command failed.
"""
import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mdout import prepend_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ('vit_b16', 'bert_base', 'gpt2_small')
TITLES = {'vit_b16': 'ViT-B/16', 'bert_base': 'BERT-base-like', 'gpt2_small': 'GPT-2-small-like'}
FLOAT_TARGET = {'vit_b16': 1.2, 'bert_base': 1.2}
RUNALL_TARGET_S = {'vit_b16': 15.0}
SLACK = 200 * 1024 * 1024


def run(cmd, ok=(0,)):
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in ok:
        tail = '\n'.join((p.stderr or p.stdout).strip().splitlines()[-8:])
        print(f'command failed (exit {p.returncode}): {shlex.join(cmd)}\n{tail}', file=sys.stderr)
        sys.exit(1)
    return p.stdout


def fields(prefix, text):
    for line in text.splitlines():
        if line.startswith(prefix):
            return dict(kv.split('=', 1) for kv in line[len(prefix):].split() if '=' in kv)
    raise SystemExit(f'no "{prefix}" line in:\n{text}')


def cos(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def cpu():
    name, avx512 = '?', False
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name') and name == '?':
                name = line.split(':', 1)[1].strip()
            if line.startswith('flags'):
                avx512 = 'avx512f' in line.split()
    return name, avx512


def loadavg():
    with open('/proc/loadavg') as f:
        return ' '.join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--models', default=','.join(MODELS))
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--procs', type=int, default=3)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--runall-reps', type=int, default=1)
    ap.add_argument('--no-runall', action='store_true')
    ap.add_argument('--no-latency', action='store_true')
    ap.add_argument('--qreport', default='./qreport')
    ap.add_argument('--models-dir', default=os.path.join(HERE, 'models'))
    ap.add_argument('--out', default=os.path.join(HERE, 'RESULTS_TRANSFORMERS.md'))
    a = ap.parse_args()
    models = a.models.split(',')
    node = os.environ.get('NODE', 'node')
    ortdir = os.environ.get('ORT_NODE_MODULES', '/tmp/ort/node_modules')
    if not os.path.isdir(os.path.join(ortdir, 'onnxruntime-node')):
        print(f'transformers.py: onnxruntime-node missing in {ortdir} (see bench/README.md)', file=sys.stderr)
        sys.exit(2)
    if not os.access(os.path.join(ROOT, a.qreport), os.X_OK) and not os.access(a.qreport, os.X_OK):
        print(f'transformers.py: {a.qreport} not built (make qreport)', file=sys.stderr)
        sys.exit(2)
    for m in models:
        for f in ('base.onnx', 'qat.onnx', 'input.npy'):
            if not os.path.exists(os.path.join(a.models_dir, m, f)):
                print(f'transformers.py: {m}/{f} missing: /usr/bin/python3 bench/make_transformers.py', file=sys.stderr)
                sys.exit(2)
    tmp = tempfile.mkdtemp(prefix='qr_tfbench_')
    T = a.threads
    mf = lambda m, f: os.path.relpath(os.path.join(a.models_dir, m, f), ROOT)  # noqa: E731
    t_start, load0 = datetime.datetime.utcnow(), loadavg()
    res = {m: {} for m in models}
    cmds = []

    def qr_run(m, which, runs=None, out=None, threads=T):
        c = [a.qreport, 'run', mf(m, which), '-i', mf(m, 'input.npy'), '-o', out or os.path.join(tmp, 'o'),
             '--threads', str(threads), '--quiet']
        return c + (['--repeat', str(runs)] if runs else [])

    def ort_bench(m, which, runs, level='all'):
        return [node, 'bench/ort_bench.js', mf(m, which), mf(m, 'input.npy'), str(T), str(runs), level]

    # 1. float latency
    if not a.no_latency:
        for m in models:
            d = res[m]
            d['qr'], d['ort'] = [], []
            for rep in range(a.procs):
                for e in (('qr', 'ort') if rep % 2 == 0 else ('ort', 'qr')):
                    if e == 'qr':
                        f = fields('bench:', run(qr_run(m, 'base.onnx', a.runs)))
                        d['qr'].append(float(f['median_ms']))
                        d['isa'] = f['isa']
                    else:
                        f = fields('ort:', run(ort_bench(m, 'base.onnx', a.runs)))
                        d['ort'].append(float(f['median_ms']))
                        d['ort_version'] = f['version']
                print(f'{m} float [{rep + 1}/{a.procs}]: qreport {d["qr"][-1]:.1f} ms, ORT all {d["ort"][-1]:.1f} ms',
                      flush=True)
        cmds += [('float latency, qreport', shlex.join(qr_run(models[0], 'base.onnx', a.runs))),
                 ('float latency, ORT', shlex.join(ort_bench(models[0], 'base.onnx', a.runs)))]

    # 2. sim vs ORT 'disabled'
    for m in models:
        d = res[m]
        outs = {}
        for key, which in (('qr_float', 'base.onnx'), ('qr_sim', 'qat.onnx')):
            od = os.path.join(tmp, m + key)
            run(qr_run(m, which, out=od, threads=1))
            outs[key] = np.load(os.path.join(od, 'output.npy'))
        for key, which in (('ort_float', 'base.onnx'), ('ort_sim', 'qat.onnx')):
            od = os.path.join(tmp, m + key)
            run([node, 'fixtures/ort_golden.js', 'outputs', mf(m, which), mf(m, 'input.npy'), od, 'disabled'])
            outs[key] = np.load(os.path.join(od, 'output_0.npy'))
        d['cos_sim'] = cos(outs['qr_sim'], outs['ort_sim'])
        d['diff_sim'] = float(np.abs(outs['qr_sim'] - outs['ort_sim']).max())
        d['cos_float'] = cos(outs['qr_float'], outs['ort_float'])
        d['cos_quant'] = cos(outs['ort_float'], outs['ort_sim'])
        print(f'{m} sim vs ORT disabled: cosine {d["cos_sim"]:.6f} (quantization {d["cos_quant"]:.6f}, '
              f'float {d["cos_float"]:.7f})', flush=True)
    cmds += [('sim output (qreport)', shlex.join(qr_run(models[0], 'qat.onnx', out='DIR', threads=1))),
             ('sim output (ORT disabled)', shlex.join([node, 'fixtures/ort_golden.js', 'outputs', mf(models[0], 'qat.onnx'),
                                                       mf(models[0], 'input.npy'), 'DIR', 'disabled']))]

    # 3. runall
    if not a.no_runall:
        for m in models:
            d = res[m]
            d['files'] = sum(os.path.getsize(os.path.join(a.models_dir, m, f)) for f in ('base.onnx', 'qat.onnx'))
            d['wall'], d['rss'], d['stages'] = [], [], {}
            for rep in range(a.runall_reps):
                z = os.path.join(tmp, 'r.zip')
                tf = os.path.join(tmp, 'time.txt')
                c = ['/usr/bin/time', '-f', '%e %M', '-o', tf, a.qreport, 'runall', mf(m, 'base.onnx'), mf(m, 'qat.onnx'),
                     '-i', mf(m, 'input.npy'), '-o', z, '--threads', str(T), '--quiet']
                run(c)
                with open(tf) as f:
                    e, k = f.read().split()[-2:]
                d['wall'].append(float(e))
                d['rss'].append(int(k) * 1024)
                with zipfile.ZipFile(z) as zf:
                    man = json.loads(zf.read('manifest.json'))
                for s in man.get('stages', []):
                    d['stages'].setdefault(s['name'], []).append(s['seconds'])
                print(f'{m} runall [{rep + 1}/{a.runall_reps}]: {e} s, peak RSS {int(k) / 1024:.0f} MB', flush=True)
            if m == models[0]:
                cmds.append(('runall', shlex.join(c[:4] + ['TIME.txt'] + c[5:-5] + ['-o', 'report.zip', '--threads', str(T), '--quiet'])))

    # report
    name, avx512 = cpu()
    t_end = datetime.datetime.utcnow()
    ver = run([a.qreport, '--version']).strip().splitlines()[0]
    try:
        commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, stdout=subprocess.PIPE,
                                text=True).stdout.strip()
    except OSError:
        commit = '?'
    med = statistics.median
    L = [f'# Transformer bench (bench/transformers.py)', '',
         f'- date: {t_start:%Y-%m-%d %H:%M}–{t_end:%H:%M} UTC, commit {commit}, {ver}',
         f'- CPU: "{name}" (/proc/cpuinfo model name), {"AVX-512" if avx512 else "AVX2, no AVX-512"}; '
         f'{os.cpu_count()} cores; load average at start {load0}, at end {loadavg()}',
         f'- ONNX Runtime {next((res[m].get("ort_version") for m in models if res[m].get("ort_version")), "?")} (node), '
         f'{T} threads (intra-op), sequential; qreport --threads {T}', '']
    hdr = '| | ' + ' | '.join(TITLES.get(m, m) for m in models) + ' |'
    L += [hdr, '|---' * (len(models) + 1) + '|']
    if not a.no_latency:
        row = []
        for m in models:
            d = res[m]
            q, o = med(d['qr']), med(d['ort'])
            tgt = FLOAT_TARGET.get(m)
            row.append(f'{q:.0f} vs {o:.0f} ms (**{q / o:.2f}x**{", target ≤ %.1fx" % tgt if tgt else ""}; '
                       f'ranges {min(d["qr"]):.0f}–{max(d["qr"]):.0f} / {min(d["ort"]):.0f}–{max(d["ort"]):.0f})')
        L.append(f'| float: qreport vs ORT \'all\' (median of {a.procs} processes x median of {a.runs} runs) | ' + ' | '.join(row) + ' |')
    L.append('| sim of the int8 twin vs ORT \'disabled\', output cosine (max abs diff) | '
             + ' | '.join(f'{res[m]["cos_sim"]:.5f} ({res[m]["diff_sim"]:.3g})' for m in models) + ' |')
    L.append('| for scale: quantization (ORT float vs ORT twin, both \'disabled\'), output cosine | '
             + ' | '.join(f'{res[m]["cos_quant"]:.5f}' for m in models) + ' |')
    L.append('| qreport float vs ORT float \'disabled\', output cosine | '
             + ' | '.join(f'{res[m]["cos_float"]:.7f}' for m in models) + ' |')
    if not a.no_runall:
        row, row2, row3 = [], [], []
        for m in models:
            d = res[m]
            bound = 2 * d['files'] + SLACK
            tgt = RUNALL_TARGET_S.get(m)
            row.append(f'{med(d["wall"]):.1f} s{" (target ≤ %.0f s)" % tgt if tgt else ""} / {med(d["rss"]) / 2**30:.2f} GB '
                       f'(bound {bound / 2**30:.2f} GB: **{med(d["rss"]) / bound:.2f}x**)')
            st = d['stages']
            top = sorted(st, key=lambda s: -med(st[s]))
            row2.append(' / '.join(f'{s} {med(st[s]):.1f}' for s in top[:4]))
            row3.append(f'{d["files"] / 2**20:.0f} MB')
        L.append(f'| runall wall / peak RSS (median of {a.runall_reps}) | ' + ' | '.join(row) + ' |')
        L.append('| of which (manifest.json stages, s, largest four) | ' + ' | '.join(row2) + ' |')
        L.append('| base.onnx + qat.onnx | ' + ' | '.join(row3) + ' |')
        L += ['', 'Every runall stage (manifest.json, seconds):', '',
              '| stage | ' + ' | '.join(TITLES.get(m, m) for m in models) + ' |', '|---' * (len(models) + 1) + '|']
        names = []
        for m in models:
            names += [n for n in res[m]['stages'] if n not in names]
        for n in names:
            L.append(f'| {n} | ' + ' | '.join(f'{med(res[m]["stages"][n]):.2f}' if n in res[m]['stages'] else '–'
                                              for m in models) + ' |')
    L += ['', 'Commands (first model shown):', '']
    L += [f'- {k}: `{c}`' for k, c in cmds]
    text = '\n'.join(L) + '\n'
    prepend_section(a.out, text, 'Run of ' + time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()) + ' (bench script output; say the load and the commit when you keep it)')
    print(text)


if __name__ == '__main__':
    main()
