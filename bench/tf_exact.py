#!/usr/bin/env python3
"""How far `qreport run` is from ONNX Runtime's bits on the transformer bench models, layer by layer
(issue 27, section 1).

Usage: /usr/bin/python3 bench/tf_exact.py [--qreport ./qreport] [--models bert_base,gpt2_small,vit_b16]
                                          [--modeldir bench/models] [--workdir bench/models/tf_exact]

For each model made by bench/make_transformers.py (base.onnx, the float model, and qat.onnx, its int8
QDQ twin run as the simulation) that exists under MODELDIR: a copy whose graph outputs are the model's
own outputs plus every LayerNormalization output (the layer boundaries, through Identity nodes named
ln_<k>), run by ONNX Runtime (node, tests/ort_run.js: optimizations 'disabled', one thread) and by
`qreport run` on the model's input.npy. The table gives, per exposed value, how many elements differ
from ORT's bits, the largest |difference| relative to the value's largest |value|, and the cosine.
Nothing is committed (bench/models/ is git-ignored).
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def expose(src, dst):
    m = onnx.load(src)
    g = m.graph
    names = [o.name for o in g.output]
    k = 0
    for n in list(g.node):
        if n.op_type != "LayerNormalization":
            continue
        out = f"ln_{k}"
        g.node.append(helper.make_node("Identity", [n.output[0]], [out], name=f"expose_{out}"))
        g.output.append(helper.make_empty_tensor_value_info(out))
        g.output[-1].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        names.append(out)
        k += 1
    onnx.save(m, dst)
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qreport", default=os.path.join(ROOT, "qreport"))
    ap.add_argument("--models", default="bert_base,gpt2_small,vit_b16")
    ap.add_argument("--modeldir", default=os.path.join(HERE, "models"))
    ap.add_argument("--workdir", default=os.path.join(HERE, "models", "tf_exact"))
    a = ap.parse_args()
    cpu, flags = "", set()
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name") and not cpu:
                cpu = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    isa = "AVX-512F" if "avx512f" in flags else "AVX2, no AVX-512F" if "avx2" in flags else "no AVX2"
    print(f"# CPU: {cpu} ({isa}); ORT 1.30 'disabled', 1 thread vs qreport run")
    for name in a.models.split(","):
        d = os.path.join(a.modeldir, name)
        if not os.path.exists(os.path.join(d, "base.onnx")):
            print(f"\n({name}: no {d}/base.onnx; make it with bench/make_transformers.py)")
            continue
        ip = os.path.join(d, "input.npy")
        for f, title in (("base.onnx", "float"), ("qat.onnx", "int8 QDQ twin (sim)")):
            w = os.path.join(a.workdir, name, f[:-5])
            os.makedirs(w, exist_ok=True)
            mp = os.path.join(w, "model.onnx")
            names = expose(os.path.join(d, f), mp)
            subprocess.run(["node", os.path.join(ROOT, "tests", "ort_run.js"), mp, os.path.join(w, "ort"), "disabled", ip],
                           check=True)
            subprocess.run([a.qreport, "run", mp, "-i", ip, "-o", os.path.join(w, "qr"), "--threads", "2", "--quiet"],
                           check=True)
            print(f"\n## {name}, {title}\n\n| value | elements differing from ORT | max abs diff / max abs value | cosine |")
            print("|---|---|---|---|")
            first = None
            for i, o in enumerate(names):
                r = np.load(os.path.join(w, "ort", f"output_{i}.npy")).ravel().astype(np.float64)
                q = np.load(os.path.join(w, "qr", f"{o}.npy")).ravel().astype(np.float64)
                nd = int(np.count_nonzero(r != q))
                rel = float(np.max(np.abs(r - q)) / max(np.max(np.abs(r)), 1e-30))
                cos = float(np.dot(r, q) / max(np.linalg.norm(r) * np.linalg.norm(q), 1e-30))
                if nd and first is None and o.startswith("ln_"):
                    first = o
                print(f"| {o} | {nd} of {r.size} | {rel:.3g} | {cos:.9f} |")
            print(f"\nfirst layer boundary that differs: {first or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
