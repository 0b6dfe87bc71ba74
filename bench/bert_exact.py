#!/usr/bin/env python3
"""How far qreport's float run is from ONNX Runtime's bits on a deep transformer (issue 27, section 1).

Usage: /usr/bin/python3 bench/bert_exact.py [--qreport ./qreport] [--outdir bench/models/bert_exact]
                                            [--layers 12] [--hidden 768] [--heads 12] [--seq 128] [--ffn 3072]

Builds (numpy seed 27, onnx.helper; not committed, bench/models/ is git-ignored) a BERT-base-like
encoder: the input is the embedding output [1, seq, hidden]; each of the `layers` post-norm layers
is Q/K/V MatMul + bias, 4-D batched Q·Kᵀ, scale, Softmax, ·V, output projection, residual Add,
LayerNorm, an FFN with the erf-form GELU, residual Add, LayerNorm. Every layer's output is also a
graph output. Two variants of the same weights:

  ln_op          LayerNorm as the LayerNormalization operator (opset 17), as torch exports it;
  ln_decomposed  LayerNorm written out: ReduceMean, Sub, Pow 2, ReduceMean, Add, Sqrt, Div, Mul, Add.

and of each its int8 QDQ twin (qdq_twin: uint8 per-tensor activations at every MatMul input,
calibrated on ORT's float values of this input; int8 per-channel weights). Each is run by ONNX Runtime (node, tests/ort_run.js: optimizations disabled, one thread) and by
`qreport run`; the table gives, per layer output, how many elements differ from ORT's bits, the
largest |difference| relative to the output's largest |value|, and the cosine similarity.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build(a, ln_op, rng_seed=27):
    rng = np.random.default_rng(rng_seed)
    S, D, H, F = a.seq, a.hidden, a.heads, a.ffn
    DH = D // H
    inits, nodes, outs = [], [], []

    def w(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, value, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    c("shape4", [1, S, H, DH], np.int64)
    c("shape3", [1, S, D], np.int64)
    c("scale", np.float32(np.sqrt(DH)))
    c("two", np.float32(2.0))
    c("eps", np.float32(1e-12))
    c("sqrt2", np.float32(np.sqrt(2.0)))
    c("one", np.float32(1.0))
    c("half", np.float32(0.5))

    def layernorm(x, p):
        g, b = w(p + ".g", [D], 0.05), w(p + ".b", [D], 0.05)
        inits[-2].CopyFrom(numpy_helper.from_array((1.0 + rng.standard_normal(D) * 0.05).astype(np.float32), g))
        if ln_op:
            return node("LayerNormalization", [x, g, b], p, axis=-1, epsilon=1e-12)
        mu = node("ReduceMean", [x], p + ".mean", axes=[-1], keepdims=1)
        d = node("Sub", [x, mu], p + ".sub")
        var = node("ReduceMean", [node("Pow", [d, "two"], p + ".pow")], p + ".var", axes=[-1], keepdims=1)
        sd = node("Sqrt", [node("Add", [var, "eps"], p + ".vareps")], p + ".sqrt")
        n = node("Div", [d, sd], p + ".div")
        return node("Add", [node("Mul", [n, g], p + ".mul"), b], p)

    x = "input"
    for L in range(a.layers):
        p = f"l{L}"

        def proj(tag, src, din, dout):
            m = node("MatMul", [src, w(f"{p}.{tag}.w", [din, dout], 0.02 * 1.6)], f"{p}.{tag}.mm")
            return node("Add", [m, w(f"{p}.{tag}.b", [dout], 0.02)], f"{p}.{tag}")

        q, k, v = proj("q", x, D, D), proj("k", x, D, D), proj("v", x, D, D)
        qh = node("Transpose", [node("Reshape", [q, "shape4"], p + ".q.r")], p + ".q.t", perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, "shape4"], p + ".k.r")], p + ".k.t", perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, "shape4"], p + ".v.r")], p + ".v.t", perm=[0, 2, 1, 3])
        sc = node("Div", [node("MatMul", [qh, kh], p + ".qk"), "scale"], p + ".qk.s")
        pr = node("Softmax", [sc], p + ".softmax", axis=-1)
        ctx = node("MatMul", [pr, vh], p + ".ctx")
        ctx = node("Reshape", [node("Transpose", [ctx], p + ".ctx.t", perm=[0, 2, 1, 3]), "shape3"], p + ".ctx.r")
        h = layernorm(node("Add", [x, proj("o", ctx, D, D)], p + ".res1"), p + ".ln1")
        f = proj("fc1", h, D, F)
        er = node("Erf", [node("Div", [f, "sqrt2"], p + ".gelu.div")], p + ".gelu.erf")
        ge = node("Mul", [node("Mul", [f, node("Add", [er, "one"], p + ".gelu.add")], p + ".gelu.mul"), "half"], p + ".gelu")
        x = layernorm(node("Add", [h, proj("fc2", ge, F, D)], p + ".res2"), p + ".out")
        outs.append(x)
    g = helper.make_graph(nodes, "bert_exact", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, S, D])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, S, D]) for o in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench/bert_exact.py")
    m.ir_version = 8
    return m, outs, (rng.standard_normal((1, S, D))).astype(np.float32)


def qdq_twin(model, calib):
    """The int8 twin the way ORT's quantize_static makes it: every MatMul input gets a
    QuantizeLinear -> DequantizeLinear pair, uint8 per-tensor for activations (scale and zero point
    from the min/max in `calib`, the float values ORT computed), int8 symmetric per output channel
    for weights (the initializer stored as int8 behind a DequantizeLinear)."""
    inits = {t.name: t for t in model.graph.initializer}
    new_nodes, new_inits, done = [], [], {}
    for n in model.graph.node:
        if n.op_type == "MatMul":
            ins = []
            for i, t in enumerate(n.input):
                if t in done:
                    ins.append(done[t])
                    continue
                if t in inits:
                    w = numpy_helper.to_array(inits[t])
                    sc = (np.maximum(np.abs(w).max(axis=0), 1e-8) / 127.0).astype(np.float32)
                    q = np.clip(np.rint(w / sc), -127, 127).astype(np.int8)
                    new_inits += [numpy_helper.from_array(q, t + ".q8"), numpy_helper.from_array(sc, t + ".scale"),
                                  numpy_helper.from_array(np.zeros(sc.shape, np.int8), t + ".zp")]
                    new_nodes.append(helper.make_node("DequantizeLinear", [t + ".q8", t + ".scale", t + ".zp"], [t + ".dq"],
                                                      name=t + ".dq", axis=1))
                else:
                    lo, hi = min(0.0, float(calib[t].min())), max(0.0, float(calib[t].max()))
                    sc = np.float32(max(hi - lo, 1e-8) / 255.0)
                    zp = np.uint8(np.clip(np.rint(-lo / sc), 0, 255))
                    new_inits += [numpy_helper.from_array(np.array(sc, np.float32), t + ".s"),
                                  numpy_helper.from_array(np.array(zp, np.uint8), t + ".z")]
                    new_nodes += [helper.make_node("QuantizeLinear", [t, t + ".s", t + ".z"], [t + ".q"], name=t + ".q"),
                                  helper.make_node("DequantizeLinear", [t + ".q", t + ".s", t + ".z"], [t + ".dq"], name=t + ".dq")]
                done[t] = t + ".dq"
                ins.append(t + ".dq")
            n = helper.make_node("MatMul", ins, list(n.output), name=n.name)
        new_nodes.append(n)
    # keep every float weight that is not only a MatMul weight (biases, gammas, constants)
    used = {i for n in new_nodes for i in n.input}
    keep = [t for t in model.graph.initializer if t.name in used]
    g = helper.make_graph(new_nodes, model.graph.name + "_qdq", list(model.graph.input), list(model.graph.output),
                          keep + new_inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench/bert_exact.py")
    m.ir_version = 8
    return m


def matmul_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return sorted({t for n in model.graph.node if n.op_type == "MatMul" for t in n.input if t not in inits})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qreport", default=os.path.join(ROOT, "qreport"))
    ap.add_argument("--outdir", default=os.path.join(HERE, "models", "bert_exact"))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--ffn", type=int, default=3072)
    ap.add_argument("--no-qdq", action="store_true", help="skip the int8 twin")
    a = ap.parse_args()
    cpu = ""
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    print(f"# {a.layers} layers, hidden {a.hidden}, {a.heads} heads, seq {a.seq}, ffn {a.ffn}; CPU: {cpu}; "
          f"ORT 1.30 'disabled', 1 thread vs qreport run")
    def compare(d, outs, title):
        print(f"\n## {title}\n\n| layer output | elements differing from ORT | max abs diff / max abs value | cosine |")
        print("|---|---|---|---|")
        for i, o in enumerate(outs):
            r = np.load(os.path.join(d, "ort", f"output_{i}.npy")).ravel().astype(np.float64)
            q = np.load(os.path.join(d, "qr", f"{o}.npy")).ravel().astype(np.float64)
            nd = int(np.count_nonzero(r != q))
            rel = float(np.max(np.abs(r - q)) / np.max(np.abs(r)))
            cos = float(np.dot(r, q) / (np.linalg.norm(r) * np.linalg.norm(q)))
            print(f"| {o} | {nd} of {r.size} | {rel:.3g} | {cos:.9f} |")

    def run_both(d, mp, ip):
        subprocess.run(["node", os.path.join(ROOT, "tests", "ort_run.js"), mp, os.path.join(d, "ort"), "disabled", ip],
                       check=True)
        subprocess.run([a.qreport, "run", mp, "-i", ip, "-o", os.path.join(d, "qr"), "--threads", "2", "--quiet"],
                       check=True)

    for variant in ("ln_op", "ln_decomposed"):
        d = os.path.join(a.outdir, variant)
        os.makedirs(d, exist_ok=True)
        model, outs, x = build(a, variant == "ln_op")
        mp, ip = os.path.join(d, "model.onnx"), os.path.join(d, "input.npy")
        onnx.save(model, mp)
        np.save(ip, x)
        run_both(d, mp, ip)
        compare(d, outs, f"{variant}, float")
        if a.no_qdq:
            continue
        # calibration: ORT's float values of every MatMul input, then the int8 twin, run the same way
        cal = onnx.ModelProto()
        cal.CopyFrom(model)
        names = matmul_inputs(model)
        cal.graph.output.extend([helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in names
                                 if t not in outs])
        cp = os.path.join(d, "calib.onnx")
        onnx.save(cal, cp)
        subprocess.run(["node", os.path.join(ROOT, "tests", "ort_run.js"), cp, os.path.join(d, "calib"), "disabled", ip],
                       check=True)
        allnames = [o.name for o in cal.graph.output]
        calib = {n: np.load(os.path.join(d, "calib", f"output_{i}.npy")) for i, n in enumerate(allnames)}
        qd = os.path.join(d, "qdq")
        os.makedirs(qd, exist_ok=True)
        qp = os.path.join(qd, "model.onnx")
        onnx.save(qdq_twin(model, calib), qp)
        run_both(qd, qp, ip)
        compare(qd, outs, f"{variant}, int8 QDQ twin (sim)")
        fo = np.load(os.path.join(d, "ort", f"output_{len(outs) - 1}.npy")).ravel().astype(np.float64)
        qo = np.load(os.path.join(qd, "ort", f"output_{len(outs) - 1}.npy")).ravel().astype(np.float64)
        print(f"\n(quantization itself, ORT float vs ORT int8 twin at the last layer: cosine "
              f"{np.dot(fo, qo) / (np.linalg.norm(fo) * np.linalg.norm(qo)):.6f})")


if __name__ == "__main__":
    sys.exit(main())
