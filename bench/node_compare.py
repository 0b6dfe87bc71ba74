#!/usr/bin/env python3
"""bench/node_compare.py — qreport's per-node times beside ONNX Runtime's, node by node.

Usage:
  QR_THREADS=1 BENCH_PREP=1 BENCH_NODES=1 build/bench_kern --model M.onnx IN.npy 50 > q.txt
  ORT_NODES=1 node bench/ort_bench.js M.onnx IN.npy 1 50 > o.txt
  /usr/bin/python3 bench/node_compare.py M.onnx q.txt o.txt [--min-us 20]

q.txt: bench_kern's lines `  node NAME OP  X ms` (a fused chain counted at its head, the rest 0).
o.txt: ort_bench.js's lines `node US OP NAME` (ORT's profiler, kernel time medians). ORT's graph
optimization fuses and renames nodes (Conv + Relu/Clip/Add as one Conv named after its output,
NCHWc's `<output>_nchwc`), so each ORT node is paired through the model: its name, else the value
it is named after (`_nchwc` dropped), whose producer is followed back through activations and
Adds (an Add: the first input that leads to a node not paired yet) to a node of qreport's list.
Prints the pairs in ORT's order with qreport/ORT ratios, the totals of the pairs, and what stayed
unpaired (ORT's layout reorders; qreport nodes that took time). Needs python3-onnx.
"""
import argparse
import sys

import onnx

FOLLOW = {'Relu', 'Clip', 'Add', 'Sum', 'LeakyRelu', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Mul', 'Identity'}


def read_q(path):
    out = {}
    for line in open(path):
        if line.startswith('  node '):
            f = line.split()
            out[f[1]] = (f[2], float(f[-2]) * 1000.0)
    return out


def read_o(path):
    out = []
    for line in open(path):
        if line.startswith('node '):
            f = line.split(maxsplit=3)
            out.append((f[3].strip(), f[2], float(f[1])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('model')
    ap.add_argument('qreport_nodes')
    ap.add_argument('ort_nodes')
    ap.add_argument('--min-us', type=float, default=0.0, help='list only pairs where either side takes this long')
    a = ap.parse_args()
    g = onnx.load(a.model, load_external_data=False).graph
    producer = {}
    for n in g.node:
        for o in n.output:
            producer[o] = n
    q, o = read_q(a.qreport_nodes), read_o(a.ort_nodes)
    paired = set()

    def resolve(name):
        if name in q and name not in paired:
            return name
        value = name[:-len('_nchwc')] if name.endswith('_nchwc') else name
        todo = [producer.get(value)]
        while todo:
            n = todo.pop(0)
            if n is None:
                continue
            if n.name in q and n.name not in paired and n.op_type not in FOLLOW:
                return n.name
            if n.op_type in FOLLOW:
                todo.extend(producer.get(i) for i in n.input)
        return None

    rows, ort_only = [], []
    for name, op, us in o:
        m = resolve(name)
        if m is None:
            ort_only.append((name, op, us))
            continue
        paired.add(m)
        rows.append((m, q[m][0], q[m][1], us))
    tq = sum(r[2] for r in rows)
    to = sum(r[3] for r in rows)
    print('%9s %9s %6s  %-12s %s' % ('qreport', 'ORT', 'ratio', 'op', 'node (qreport\'s name)'))
    for m, op, qu, ou in rows:
        if max(qu, ou) >= a.min_us:
            print('%9.1f %9.1f %6s  %-12s %s' % (qu, ou, '%.2f' % (qu / ou) if ou > 0 else '-', op, m))
    print('%9.1f %9.1f %6s  %d pairs' % (tq, to, '%.3f' % (tq / to) if to > 0 else '-', len(rows)))
    for name, op, us in ort_only:
        print('ORT only: %9.1f us  %s %s' % (us, op, name))
    for m, (op, qu) in q.items():
        if m not in paired and qu > 0:
            print('qreport only: %9.1f us  %s %s' % (qu, op, m))
    return 0


if __name__ == '__main__':
    sys.exit(main())
