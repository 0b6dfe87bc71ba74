#!/usr/bin/env python3
"""The Python workflow runall replaces (issue 30 §3's yardstick), on the bench QAT models.

Usage: /usr/bin/python3 bench/pyflow.py MODEL_DIR OUT.zip [--data N] [--threads T] [--plots K] [--sens-samples K]

MODEL_DIR is a bench/make_models.py folder of `resnet18` or `mobilenetv2` (it needs qat.pt, the
QAT module's state_dict, and base.onnx / qat.onnx, the pair runall reads). What it does is what a
user of the seeds (QuantAnalysis, PyTorch Numeric Suite, hmct-debugger) writes today to get the
analyses of one `qreport runall` from the PyTorch QAT module itself: forward hooks on every
FakeQuantize (the values runall compares), fake-quant toggling for the float run and the variants,
the onnx package for what runall reads from the ONNX pair (structure check, match table, repro,
annotated graph), matplotlib for the plots, zipfile for the bundle. Inputs: input.npy (one sample),
or with --data N the first N candidates of make_models.py's seeded generator as one batch (a Python
user batches; runall --data reads N files one by one).

Analyses, each as runall does it (so the two do the same work; runall's stage in brackets):
  1. equivalence: the module with every quantizer disabled against the float twin (here the same
     module: one run) [match]; the match table of the two ONNX graphs' values [match]; the
     structure check of the quantized ONNX graph: quantizers, fusable patterns left unfused,
     shared quantizers, merged constants [check];
  2. per-layer comparison of every quantized value: Cosine, MSE, L1, KL, SQNR, Atol, local metrics
     (the layer's module re-run on the float run's input with its quantizers on) and the error
     split (the module re-run with only its weight / its input / its output quantizer on; the
     output's rounding and clipping apart; the weight's worst channel) [compare];
  3. statistics of every value in both runs (min, max, mean, var) and of every weight [profile,
     weight comparison];
  4. sensitivity, one quantizer on at a time: activation, weight and node (both of a layer) rows,
     output metrics [sensitivity];
  5. accumulated error: quantizers switched on in execution order, output metrics after each
     [accumulated error];
  6. what-if: the top 1, 3, 5, 10 sensitive nodes promoted to int16 (16-bit grid, same clipping
     threshold, runall's rule) and kept in float, output metrics [mixed precision];
  7. rounding fragility: the quantized run once more unperturbed and with every activation
     quantizer rounding otherwise (half away from zero at ties; +-1 LSB at 1% of its elements,
     3 seeds), per quantizer the perturbation injected, arriving and grown [fragility];
  8. advice from the tables [advisor]; a minimal repro of the worst layer by local error: both
     ONNX subgraphs (onnx.utils.extract_model), inputs and expected outputs [repro];
  9. plots: per-layer metrics, accumulated error, top-10 sensitivity, and for K tensors (the
     worst layers and their weights) a histogram and a per-channel box plot [distributions, plots];
 10. graph overlays: the analysis graph annotated with the per-layer metrics (ONNX without its
     weights' data) and Model Explorer node-data files for 5 metrics [graph overlays];
 11. text/CSV/JSON tables, an index.html with the tables and plots, everything zipped [report, zip].
With --data N, as runall --data: the N samples run as one batch (pooled per-layer comparison,
per-sample output metrics and ranking, statistics and the plotted activations' distributions over
the set), the analyses 2-10 on the worst sample, and the sensitivity with the accumulated error
over the --sens-samples (4) worst samples as one batch (per-sample curves, their mean with the
p05-p95 band, the samples ranked: two more plots).
Prints "pyflow: N s" (wall, everything after the imports) and the time per stage.
"""
import argparse
import csv
import io
import json
import math
import os
import sys
import time
import zipfile

T_IMPORT = time.time()
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.ao.quantization as tq  # noqa: E402
import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import onnx  # noqa: E402
import onnx.utils  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as mm  # noqa: E402

METRICS = ("Cosine", "MSE", "L1", "KL", "SQNR", "Atol")


def load_qat(model_dir):
    net = os.path.basename(os.path.normpath(model_dir))
    if net not in mm.MODELS:
        sys.exit(f"pyflow: {model_dir}: not one of {mm.MODELS}")
    pt = os.path.join(model_dir, "qat.pt")
    if not os.path.exists(pt):
        sys.exit(f"pyflow: {pt} missing (bench/make_models.py --force --models {net} writes it)")
    q = mm.prepare_qat_folded(mm.build(net))
    q.load_state_dict(torch.load(pt))
    q.eval()
    q.apply(tq.disable_observer)
    return q


def metrics(a, b):
    a = a.double().flatten()
    b = b.double().flatten()
    d = a - b
    mse = float((d * d).mean())
    sig = float((a * a).mean())
    na, nb = float(a.norm()), float(b.norm())
    pa = torch.softmax(a, 0)
    pb = torch.softmax(b, 0)
    kl = float((pa * (torch.log(pa + 1e-30) - torch.log(pb + 1e-30))).sum())
    return {"Cosine": float(a @ b) / (na * nb) if na > 0 and nb > 0 else 1.0, "MSE": mse, "L1": float(d.abs().mean()),
            "KL": kl, "SQNR": 10 * math.log10(sig / mse) if mse > 0 and sig > 0 else float("inf"),
            "Atol": float(d.abs().max())}


def cosine(a, b):
    a = a.double().flatten()
    b = b.double().flatten()
    na, nb = float(a.norm()), float(b.norm())
    return float(a @ b) / (na * nb) if na > 0 and nb > 0 else 1.0


def mse(a, b):
    return float(((a.double() - b.double()) ** 2).mean())


def stats(t):
    t = t.double()
    return {"min": float(t.min()), "max": float(t.max()), "mean": float(t.mean()), "var": float(t.var(unbiased=False))}


def set_fq(fqs, on):
    for _, m in fqs:
        if on:
            m.enable_fake_quant()
        else:
            m.disable_fake_quant()


def fq_apply(m, x):
    """m's fake quantization of x, whatever m's switch says (over the range m.quant_min..quant_max,
    which promote16 keeps equal to its observer's, the range FakeQuantize.forward reads)."""
    if m.qscheme in (torch.per_channel_affine, torch.per_channel_symmetric):
        return torch.fake_quantize_per_channel_affine(x, m.scale, m.zero_point.to(torch.int32), m.ch_axis,
                                                      m.quant_min, m.quant_max)
    return torch.fake_quantize_per_tensor_affine(x, float(m.scale), int(m.zero_point), m.quant_min, m.quant_max)


def table(rs):
    keys = list(rs[0].keys())
    txt = io.StringIO()
    txt.write("  ".join(f"{k:>14}" for k in keys) + "\n")
    for r in rs:
        txt.write("  ".join(f"{v:>14.6g}" if isinstance(v, float) else f"{str(v):>14}" for v in r.values()) + "\n")
    c = io.StringIO()
    w = csv.DictWriter(c, fieldnames=keys)
    w.writeheader()
    w.writerows(rs)
    return txt.getvalue(), c.getvalue()


def html_table(rs, limit=None):
    if not rs:
        return "<p>(none)</p>"
    keys = list(rs[0].keys())
    out = ["<table><tr>" + "".join(f"<th>{k}</th>" for k in keys) + "</tr>"]
    for r in rs[:limit]:
        out.append("<tr>" + "".join(f"<td>{v:.6g}</td>" if isinstance(v, float) else f"<td>{v}</td>" for v in r.values())
                   + "</tr>")
    return "".join(out) + "</table>"


class Flow:
    """The QAT module, its quantizers and hooks, and the ONNX pair."""

    def __init__(self, model_dir):
        self.dir = model_dir
        self.q = load_qat(model_dir)
        self.mods = dict(self.q.named_modules())
        self.fqs = [(n, m) for n, m in self.q.named_modules() if isinstance(m, tq.FakeQuantize)]
        self.act_fq = [(n, m) for n, m in self.fqs if not n.endswith("weight_fake_quant")]
        self.w_fq = [(n, m) for n, m in self.fqs if n.endswith("weight_fake_quant")]
        # an activation quantizer's layer: the module holding it (not a FloatFunctional)
        self.parents = {}
        for n, _ in self.act_fq:
            p = n.rsplit(".", 1)[0] if "." in n else ""
            pm = self.mods.get(p)
            if p and isinstance(pm, torch.nn.Module) and not isinstance(pm, torch.ao.nn.quantized.FloatFunctional):
                self.parents[n] = p
        self.wq_of = {}          # layer -> its weight quantizer
        for n, _ in self.w_fq:
            self.wq_of[n.rsplit(".", 1)[0]] = n

    def run(self, x, on=None, keep=False):
        """One forward pass (on: which quantizers are on, None: as set); with keep the values at every
        activation quantizer's input and, unless keep == "seen", each layer's inputs and outputs and
        which quantizer produced each layer's input (by tensor identity in a run with the quantizers
        off)."""
        if on is not None:
            set_fq(self.fqs, on)
        seen, order, pin, pout, src = {}, [], {}, {}, {}
        hs = []
        if keep:
            made = {}

            def hook_fq(name):
                def f(_m, inp, out):
                    if name not in seen:
                        order.append(name)
                    seen[name] = inp[0].detach().clone()
                    made[out.data_ptr()] = name
                return f

            def hook_parent(name):
                def f(_m, inp, out):
                    ts = [t for t in inp if isinstance(t, torch.Tensor)]
                    pin[name] = tuple(t.detach().clone() for t in ts)
                    pout[name] = out.detach().clone()
                    src[name] = made.get(ts[0].data_ptr()) if ts else None
                return f

            hs = [m.register_forward_hook(hook_fq(n)) for n, m in self.act_fq]
            for n, p in self.parents.items() if keep != "seen" else ():
                hs.append(self.mods[p].register_forward_hook(hook_parent(n)))
        with torch.no_grad():
            y = self.q(x)
        for h in hs:
            h.remove()
        return y, {"seen": seen, "order": order, "pin": pin, "pout": pout, "src": src} if keep else None


def sample_of(v, i):
    """A kept run's values (Flow.run) of sample i of its batch alone."""
    def cut(d):
        return {k: t[i:i + 1] if isinstance(t, torch.Tensor) else tuple(u[i:i + 1] for u in t) for k, t in d.items()}
    return dict(v, seen=cut(v["seen"]), pin=cut(v["pin"]), pout=cut(v["pout"]))


def graph_maps(g):
    """An ONNX graph's value -> producing node, and value -> reading nodes."""
    prod = {o: n for n in g.node for o in n.output}
    cons = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    return prod, cons


def onnx_checks(flow, files):
    """The structure check of qat.onnx and the match table of base.onnx / qat.onnx (runall's check
    and match)."""
    base = onnx.load(os.path.join(flow.dir, "base.onnx"))
    qat = onnx.load(os.path.join(flow.dir, "qat.onnx"))
    g = qat.graph
    prod, cons = graph_maps(g)
    compute = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "Clip", "MaxPool", "GlobalAveragePool", "AveragePool",
               "Concat", "Flatten", "Reshape"}
    quants = [n for n in g.node if n.op_type == "QuantizeLinear"]
    lines = [f"Model check of {flow.dir}/qat.onnx", f"{len(g.node)} nodes, {len(quants)} quantizers", "",
             "1. Fusable patterns left unfused (a quantizer sits between ops a deployment compiler would fuse)"]
    for qn in quants:
        p = prod.get(qn.input[0])
        if not p or p.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        for dq in cons.get(qn.output[0], []):
            for c in cons.get(dq.output[0], []):
                if c.op_type in ("Add", "Relu", "Clip"):
                    lines.append(f"  {p.op_type} '{p.name}' -> [Q/DQ] -> {c.op_type} '{c.name}'")
    lines += ["", "2. Shared weights and quantizers (a weight or quantizer used by different compute nodes)"]
    for qn in quants:
        users = [c for dq in cons.get(qn.output[0], []) for c in cons.get(dq.output[0], []) if c.op_type in compute]
        if len(users) > 1:
            lines.append(f"  quantizer on '{qn.input[0]}' ({qn.name}) feeds {len(users)} compute nodes")
    inits = {i.name for i in g.initializer}
    zp_users = {}
    for qn in quants:
        if len(qn.input) > 2:
            src = qn.input[2]
            while src in prod and prod[src].op_type == "Identity":
                src = prod[src].input[0]
            zp_users.setdefault(src, []).append(qn.name)
    for z, us in zp_users.items():
        if len(us) > 1:
            lines.append(f"  zero point '{z}' ({'initializer' if z in inits else 'value'}) read by {len(us)} quantizers")
    lines += ["", "3. Unquantized compute nodes"]
    for n in g.node:
        if n.op_type in ("Conv", "Gemm", "MatMul") and not any(prod.get(i) is not None and
                                                              prod[i].op_type == "DequantizeLinear" for i in n.input):
            lines.append(f"  {n.op_type} '{n.name}' reads no dequantized input")
    files["model_check_result.txt"] = "\n".join(lines) + "\n"
    # match: base nodes to qat nodes of the same name and type; the qat value compared is the one
    # after its quantizer when it has one
    qn = {n.name: n for n in g.node}
    rows = []
    for n in base.graph.node:
        m = qn.get(n.name)
        if not m or m.op_type != n.op_type:
            continue
        out = m.output[0]
        for c in cons.get(out, []):
            if c.op_type == "QuantizeLinear":
                for dq in cons.get(c.output[0], []):
                    out = dq.output[0]
        rows.append({"base_node": n.name, "op_type": n.op_type, "base_value": n.output[0], "analysis_value": out,
                     "quantized": out != m.output[0]})
    files["match_table.txt"], files["match_table.csv"] = table(rows)
    return base, qat, rows


def error_split(flow, n, pin_f, pout_f, src_f):
    """The layer of quantizer n re-run on the float run's input with only its weight / input /
    output quantizer on; the output's rounding and clipping apart; the weight's worst channel."""
    p = flow.parents[n]
    pm = flow.mods[p]
    out = {"err_weight": 0.0, "err_input": 0.0, "err_output_round": 0.0, "err_output_clip": 0.0, "dominant": "",
           "weight_worst_channel": -1}
    if n not in pin_f:
        return out
    x = pin_f[n]
    y_f = pout_f[n]
    wn = flow.wq_of.get(p)
    with torch.no_grad():
        if wn:
            wq = flow.mods[wn]
            wq.enable_fake_quant()
            out["err_weight"] = mse(y_f, pm(*x))
            wq.disable_fake_quant()
            w = pm.weight.detach()
            d = (fq_apply(wq, w) - w).double() ** 2
            out["weight_worst_channel"] = int(d.reshape(d.shape[0], -1).mean(1).argmax())
        s = src_f.get(n)
        if s:
            xq = (fq_apply(flow.mods[s], x[0]),) + tuple(x[1:])
            out["err_input"] = mse(y_f, pm(*xq))
        oq = flow.mods[n]
        lo = (oq.quant_min - float(oq.zero_point)) * float(oq.scale)
        hi = (oq.quant_max - float(oq.zero_point)) * float(oq.scale)
        yc = y_f.clamp(lo, hi)
        out["err_output_clip"] = mse(y_f, yc)
        out["err_output_round"] = mse(yc, fq_apply(oq, y_f))
    parts = {k: out[k] for k in ("err_weight", "err_input", "err_output_round", "err_output_clip")}
    out["dominant"] = max(parts, key=parts.get).replace("err_", "") if max(parts.values()) > 0 else ""
    return out


def sensitivity_rows(flow, x, y_ref):
    """One quantizer on at a time (activation, weight), then each layer's two together (node rows)."""
    rows = []
    variants = [(n, "weight" if n.endswith("weight_fake_quant") else "activation", [n]) for n, _ in flow.fqs]
    # as runall's node rows: a node with two quantizers, its weight's and its own output's (a fused
    # ConvReLU's output quantizer sits on the Relu, another node)
    for n, p in flow.parents.items():
        if p in flow.wq_of and "ReLU" not in type(flow.mods[p]).__name__:
            variants.append((p, "both", [n, flow.wq_of[p]]))
    for name, kind, on in variants:
        set_fq(flow.fqs, False)
        for o in on:
            flow.mods[o].enable_fake_quant()
        with torch.no_grad():
            y = flow.q(x)
        rows.append({"name": name, "type": kind, **per_sample_mean(y_ref, y)})
    rows.sort(key=lambda r: -r["L1"])
    return rows


def per_sample_mean(a, b):
    """The output metrics of each sample of a batch, averaged (one sample: its metrics)."""
    ms = [metrics(a[i], b[i]) for i in range(a.shape[0])]
    return {k: float(np.mean([m[k] for m in ms])) for k in METRICS}


def node_ranking(flow, sens):
    """The sensitivity's nodes, most sensitive first (a layer's rows together)."""
    nodes = []
    for r in sens:
        layer = r["name"] if r["type"] == "both" else r["name"].rsplit(".", 1)[0]
        if layer not in nodes:
            nodes.append(layer)
    return nodes


def node_quantizers(flow, layer):
    qs = [n for n, p in flow.parents.items() if p == layer]
    if layer in flow.wq_of:
        qs.append(flow.wq_of[layer])
    if layer in flow.mods and isinstance(flow.mods[layer], tq.FakeQuantize):
        qs.append(layer)
    return qs


ACC_TOPK = (1, 3, 5, 10)


def accumulated(flow, x, seen_f, order, nodes):
    """The cumulative error along the graph (hmct-debugger's, runall's): for each configuration
    (weight quantizers only, activation quantizers only, all, all but the top 1/3/5/10 sensitive
    nodes) one run, Cosine against the float run at every compared value; per sample and over the
    batch (their mean, p05 and p95 for a data set)."""
    act = [n for n, _ in flow.act_fq]
    wts = [n for n, _ in flow.w_fq]
    configs = [("weight_only", set(wts)), ("activation_only", set(act)), ("full", set(act + wts))]
    for k in ACC_TOPK:
        off = {q for layer in nodes[:k] for q in node_quantizers(flow, layer)}
        configs.append((f"all_but_top{k}", set(act + wts) - off))
    rows = [{"name": n} for n in order]
    curves = {}
    for name, on in configs:
        for n, m in flow.fqs:
            m.enable_fake_quant() if n in on else m.disable_fake_quant()
        _, v = flow.run(x, keep="seen")
        per = []
        for r in rows:
            a, b = seen_f[r["name"]], v["seen"][r["name"]]
            r[name] = cosine(a, b)
            if x.shape[0] > 1:
                cs = [cosine(a[i], b[i]) for i in range(x.shape[0])]
                r[name + "_mean"] = float(np.mean(cs))
                r[name + "_p05"] = float(np.percentile(cs, 5))
                r[name + "_p95"] = float(np.percentile(cs, 95))
                per.append(cs)
        curves[name] = per
    return rows, curves


def promote16(m):
    """m on the 16-bit grid of the same signedness and clipping threshold (runall's int16 rule);
    returns what to restore."""
    ob = m.activation_post_process      # FakeQuantize.forward reads its observer's range
    old = (m.quant_min, m.quant_max, ob.quant_min, ob.quant_max, m.scale.clone(), m.zero_point.clone())
    signed = m.quant_min < 0
    qmax = m.quant_max
    qmin16, qmax16 = (-32768, 32767) if signed else (0, 65535)
    m.scale.mul_(qmax / qmax16 if qmax else 1.0)
    m.zero_point.copy_(torch.round(m.zero_point.double() * qmax16 / qmax).to(m.zero_point.dtype))
    m.quant_min, m.quant_max = ob.quant_min, ob.quant_max = qmin16, qmax16
    return old


def restore(m, old):
    ob = m.activation_post_process
    m.quant_min, m.quant_max, ob.quant_min, ob.quant_max = old[:4]
    m.scale.copy_(old[4])
    m.zero_point.copy_(old[5])


def whatif(flow, x, y_ref, sens):
    """The top 1, 3, 5, 10 sensitive nodes promoted to int16, and kept in float."""
    out = {"int16": [], "float": []}
    nodes = node_ranking(flow, sens)
    for k in ACC_TOPK:
        chosen = [q for layer in nodes[:k] for q in node_quantizers(flow, layer)]
        set_fq(flow.fqs, True)
        olds = [(flow.mods[q], promote16(flow.mods[q])) for q in chosen]
        with torch.no_grad():
            y = flow.q(x)
        for m, o in olds:
            restore(m, o)
        out["int16"].append({"k": k, "nodes": nodes[:k], "promoted": chosen, **metrics(y_ref, y)})
        set_fq(flow.fqs, True)
        for q in chosen:
            flow.mods[q].disable_fake_quant()
        with torch.no_grad():
            y = flow.q(x)
        out["float"].append({"k": k, "nodes": nodes[:k], **metrics(y_ref, y)})
    return out


def fragility(flow, x, y_f, y_q):
    """The quantized run once more unperturbed and once per variant with every activation
    quantizer's integers edited (half away from zero at ties; +-1 LSB at 1% of the elements, 3
    seeds); per quantizer the elements injected, arriving changed and changed, the largest change in
    LSB, the growth and the gain of relative perturbation over the quantizer before it."""
    names = [n for n, _ in flow.act_fq]
    state = {"mode": None, "gen": None, "ints0": {}, "acc": None}

    def hook(name):
        def f(m, inp, out):
            s, z = float(m.scale), int(m.zero_point)
            v = inp[0] / s
            mode = state["mode"]
            if mode == "half_away":
                r = torch.sign(v) * torch.floor(v.abs() + 0.5)
            else:
                r = torch.round(v)
            i0 = (r + z).clamp(m.quant_min, m.quant_max)
            i1 = i0
            if mode == "lsb":
                pick = torch.rand(v.shape, generator=state["gen"]) < 0.01
                sign = torch.where(torch.rand(v.shape, generator=state["gen"]) < 0.5, -1.0, 1.0)
                i1 = torch.where(pick, (i0 + sign).clamp(m.quant_min, m.quant_max), i0)
            if mode is None:
                state["ints0"][name] = i0.clone()
            else:
                base = state["ints0"][name]
                a = state["acc"].setdefault(name, {"n": i0.numel(), "inj": 0, "arr": 0, "tot": 0, "lsb_max": 0,
                                                   "rel": 0.0, "ties": 0})
                a["inj"] += int((i1 != i0).sum())
                a["arr"] += int((i0 != base).sum())
                a["tot"] += int((i1 != base).sum())
                a["lsb_max"] = max(a["lsb_max"], int((i1 - base).abs().max()))
                sig = float((base.double() - z).pow(2).mean()) or 1.0
                a["rel"] += float((i0 - base).double().pow(2).mean()) / sig
                if mode == "half_away":
                    a["ties"] += int(((v - torch.floor(v)) == 0.5).sum())
            return (i1 - z) * s
        return f

    hs = [flow.mods[n].register_forward_hook(hook(n)) for n in names]
    set_fq(flow.fqs, True)
    with torch.no_grad():
        y0 = flow.q(x)
    variants = [("half_away", None)] + [("lsb", seed) for seed in (1, 2, 3)]
    rows, layer_acc = [], {}
    q_mse = mse(y_f, y_q)
    for mode, seed in variants:
        state["mode"] = mode
        state["gen"] = torch.Generator().manual_seed(seed) if seed else None
        state["acc"] = layer_acc.setdefault(mode, {})
        with torch.no_grad():
            y = flow.q(x)
        m = metrics(y0, y)
        rows.append({"variant": mode if seed is None else f"lsb seed {seed}", "Cosine": m["Cosine"], "SQNR": m["SQNR"],
                     "mse_ratio": m["MSE"] / q_mse if q_mse > 0 else float("nan")})
    for h in hs:
        h.remove()
    layers, prev_rel, first = [], None, ""
    for n in names:
        a = layer_acc["lsb"].get(n)
        h = layer_acc["half_away"].get(n)
        if not a:
            continue
        rel = a["rel"] / 3
        gain = rel / prev_rel if prev_rel else float("nan")
        growth = a["tot"] / a["inj"] if a["inj"] else float("nan")
        if not first and prev_rel and gain >= 4 and a["arr"] >= 10:
            first = n
        layers.append({"quantizer": n, "elements": a["n"], "injected_pct": 100 * a["inj"] / (3 * a["n"]),
                       "arrived_pct": 100 * a["arr"] / (3 * a["n"]), "changed_pct": 100 * a["tot"] / (3 * a["n"]),
                       "lsb_max": a["lsb_max"], "growth": growth, "gain": gain, "half_away_ties": h["ties"] if h else 0,
                       "half_away_changed_pct": 100 * h["tot"] / h["n"] if h else 0.0,
                       "note": "FIRST GROWTH" if n == first else ""})
        prev_rel = rel if rel > 0 else prev_rel
    return rows, layers, first


def advisor(flow, rows, sens, split):
    """Findings from the tables: an 8-bit model output, layers whose local error stands out, weights
    whose channels' ranges differ by far, layers whose output clipping dominates."""
    out = []
    last = rows[-1]["name"] if rows else None
    if last:
        m = flow.mods[last]
        out.append(f"{last} output_not_high_precision: the model output is quantized to {m.dtype} "
                   f"(scale {float(m.scale):.6g}); keep the last layer's output unquantized or in int16")
    loc = [r["local_SQNR"] for r in rows if "local_SQNR" in r and math.isfinite(r["local_SQNR"])]
    if loc:
        med = float(np.median(loc))
        for r in rows:
            if r.get("local_SQNR", med) < med - 6:
                out.append(f"{r['name']} high_local_error: local SQNR {r['local_SQNR']:.2f} dB, median {med:.2f} dB")
    for n, _ in flow.w_fq:
        w = flow.mods[n.rsplit(".", 1)[0]].weight.detach()
        amax = w.abs().reshape(w.shape[0], -1).amax(1)
        if float(amax.min()) > 0 and float(amax.max() / amax.min()) > 100:
            out.append(f"{n} weight_range_spread: per-channel abs-max ratio {float(amax.max() / amax.min()):.1f}")
    for n, s in split.items():
        if s.get("dominant") == "output_clip":
            out.append(f"{n} output_clipping: clipping dominates the layer's error")
    if sens:
        out.append(f"most sensitive: {sens[0]['name']} ({sens[0]['type']}), L1 {sens[0]['L1']:.6g}")
    return out


def repro(flow, base, qat, rows, vf, vq, files):
    """The worst layer by local error: both ONNX subgraphs from its input to its output (cut from
    the loaded models by onnx.utils.Extractor and checked, as onnx.utils.extract_model does from
    files), its inputs and expected outputs as .npy."""
    cand = [r for r in rows if "local_Cosine" in r and r["name"] in flow.parents and r["name"] in vf["pin"]
            and flow.parents[r["name"]] in flow.wq_of]
    if not cand:
        return None
    r = min(cand, key=lambda r: r["local_Cosine"])
    layer = flow.parents[r["name"]]
    wname = layer + ".weight"
    out = {"layer": layer, "quantizer": r["name"], "local_Cosine": r["local_Cosine"]}
    for tag, model, v in (("base", base, vf), ("analysis", qat, vq)):
        prod, _ = graph_maps(model.graph)
        node = None
        for n in model.graph.node:
            if n.op_type not in ("Conv", "Gemm") or len(n.input) < 2:
                continue
            src = n.input[1]
            while src in prod and prod[src].op_type in ("DequantizeLinear", "QuantizeLinear"):
                src = prod[src].input[0]
            if src == wname:
                node = n
        if node is None:
            return None
        sub = onnx.utils.Extractor(model).extract_model([node.input[0]], [node.output[0]])
        onnx.checker.check_model(sub)
        files[f"repro/{tag}_sub.onnx"] = sub.SerializeToString()
        for name, t in ((f"repro/{tag}_in_0.npy", v["pin"][r["name"]][0]), (f"repro/{tag}_expected.npy", v["pout"][r["name"]])):
            b = io.BytesIO()
            np.save(b, t.numpy())
            files[name] = b.getvalue()
        out[tag + "_node"] = node.name
    files["repro/repro.json"] = json.dumps(out, indent=1)
    files["repro/README.txt"] = f"Minimal repro of {layer}: run {{base,analysis}}_sub.onnx on *_in_0.npy, compare with *_expected.npy\n"
    return out


def overlays(flow, qat, rows, sens, files):
    """The analysis graph annotated with the per-layer metrics (weights' data dropped), and Model
    Explorer node-data files for Cosine, SQNR, local Cosine, local SQNR, sensitivity."""
    g = onnx.GraphProto()
    g.CopyFrom(qat.graph)
    for t in g.initializer:
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.ClearField("int32_data")
        t.ClearField("int64_data")
    # the activation quantizers in the graph's (topological) order are the hooks' execution order
    inits = {t.name for t in qat.graph.initializer}
    q_nodes = [n.name for n in qat.graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in inits]
    row_of = dict(zip(q_nodes, rows)) if len(q_nodes) == len(rows) else {}
    for n in g.node:     # the metrics in the node's doc string (onnx 1.12's NodeProto has no metadata)
        r = row_of.get(n.name)
        if r:
            n.doc_string = json.dumps({k: r[k] for k in METRICS + ("local_Cosine", "local_SQNR") if k in r})
    m = onnx.helper.make_model(g, opset_imports=qat.opset_import)
    files["graph/annotated.onnx"] = m.SerializeToString()
    sens_of = {r["name"]: r["L1"] for r in sens}
    for key, suffix in (("Cosine", ""), ("SQNR", "_SQNR"), ("local_Cosine", "_local_Cosine"),
                        ("local_SQNR", "_local_SQNR"), ("sensitivity", "_sensitivity")):
        res = {}
        for nname, r in row_of.items():
            v = sens_of.get(r["name"]) if key == "sensitivity" else r.get(key)
            if v is not None and math.isfinite(v):
                res[nname] = {"value": v}
        files[f"graph/model_explorer{suffix}.json"] = json.dumps({"main_graph": {"results": res}})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--data", type=int, default=0, help="N seeded samples as one batch (default: input.npy)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--plots", type=int, default=10, help="tensors with histogram + box plot (runall: 10)")
    ap.add_argument("--sens-samples", type=int, default=4, help="--data: the worst samples the set's sensitivity runs on")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    lap_t = [t0]
    laps = {}

    def lap(what):
        now = time.time()
        laps[what] = laps.get(what, 0.0) + now - lap_t[0]
        lap_t[0] = now

    flow = Flow(args.model_dir)
    if args.data:
        x_all, _ = mm.make_batch(np.random.default_rng(mm.CAND_SEED), args.data, mm.H_EXPORT)
    else:
        x_all = torch.from_numpy(np.load(os.path.join(args.model_dir, "input.npy")))
    files, pngs = {}, {}
    lap("load")
    base, qat, _ = onnx_checks(flow, files)
    lap("check + match")

    # the pass: float, equivalence and quantized runs of every sample (one batch)
    y_f, vf = flow.run(x_all, False, keep=True)
    y_eq, _ = flow.run(x_all, False)
    equiv = float((y_f - y_eq).abs().max())
    y_q, vq = flow.run(x_all, True, keep=True)
    order = vf["order"]
    lap("pass")
    summary = {"model_output": metrics(y_f, y_q), "equivalence_max_abs": equiv}
    # the analyses' sample: the one input, or (--data) the worst of the set
    x, y_f1, y_q1, v1f, v1q = x_all, y_f, y_q, vf, vq
    ds_rows = []
    if args.data:
        # the pooled comparison over the set, each sample's output metrics, the ranking
        pooled = [{"name": n, **metrics(vf["seen"][n], vq["seen"][n])} for n in order]
        files["dataset/compare_per_layer_out.txt"], files["dataset/compare_per_layer_out.csv"] = table(pooled)
        ds_rows = [{"index": i, **metrics(y_f[i], y_q[i])} for i in range(x_all.shape[0])]
        ds_rows.sort(key=lambda r: -r["L1"])
        for k, r in enumerate(ds_rows):
            r["rank"] = k + 1
        files["dataset/samples.txt"], files["dataset/samples.csv"] = table(ds_rows)
        w = ds_rows[0]["index"]
        x, y_f1, y_q1 = x_all[w:w + 1], y_f[w:w + 1], y_q[w:w + 1]
        v1f, v1q = sample_of(vf, w), sample_of(vq, w)
        lap("data set")

    # per-layer comparison, local metrics, error split
    rows, split = [], {}
    set_fq(flow.fqs, True)
    for n in order:
        r = {"name": n, **metrics(v1f["seen"][n], v1q["seen"][n])}
        if n in flow.parents and n in v1f["pin"]:
            pm = flow.mods[flow.parents[n]]
            with torch.no_grad():
                yl = pm(*v1f["pin"][n])
                flow.mods[n].disable_fake_quant()
                yl_f = pm(*v1f["pin"][n])
                flow.mods[n].enable_fake_quant()
            loc = metrics(yl_f, yl)
            r.update({"local_Cosine": loc["Cosine"], "local_SQNR": loc["SQNR"]})
        rows.append(r)
    set_fq(flow.fqs, False)
    for r in rows:
        if r["name"] in flow.parents:
            split[r["name"]] = error_split(flow, r["name"], v1f["pin"], v1f["pout"], v1f["src"])
            r.update(split[r["name"]])
    lap("per-layer compare + local + split")

    # statistics of both runs (over the set with --data) and the weights
    st_rows = [{"name": n, **{f"f_{k}": v for k, v in stats(vf["seen"][n]).items()},
                **{f"q_{k}": v for k, v in stats(vq["seen"][n]).items()}} for n in order]
    wrows = []
    for n, m in flow.w_fq:
        w = flow.mods[n.rsplit(".", 1)[0]].weight.detach()
        with torch.no_grad():
            wq = fq_apply(m, w)
        wrows.append({"name": n, **metrics(w, wq), **stats(w)})
    lap("statistics")

    sens = sensitivity_rows(flow, x, y_f1)
    lap("sensitivity")
    acc, _ = accumulated(flow, x, v1f["seen"], order, node_ranking(flow, sens))
    lap("accumulated error")
    wi = whatif(flow, x, y_f1, sens)
    lap("what-if")
    frag_rows, frag_layers, frag_first = fragility(flow, x, y_f1, y_q1)
    files["fragility.txt"], files["fragility.csv"] = table(frag_layers)
    summary["fragility"] = {"variants": frag_rows, "first_growth": frag_first}
    lap("fragility")
    adv = advisor(flow, rows, sens, split)
    files["abnormal_layer_advisor.txt"] = "\n".join(adv) + "\n"
    rep = repro(flow, base, qat, rows, v1f, v1q, files)
    summary["repro"] = rep
    b = io.BytesIO()
    np.save(b, x.numpy())
    files["badcase.npy"] = b.getvalue()
    lap("advisor + repro")

    # the data set's sensitivity and accumulated error over the K worst samples (one batch)
    ds_sens = ds_acc = curves = None
    if args.data:
        idx = [r["index"] for r in ds_rows[:args.sens_samples]]
        xk, yk = x_all[idx], y_f[idx]
        ds_sens = sensitivity_rows(flow, xk, yk)
        ds_acc, curves = accumulated(flow, xk, {n: t[idx] for n, t in vf["seen"].items()}, order,
                                     node_ranking(flow, ds_sens))
        files["dataset/sensitive_ops.txt"], files["dataset/sensitive_ops.csv"] = table(ds_sens)
        files["dataset/sensitive_ops.json"] = json.dumps(ds_sens, indent=1)
        _, files["dataset/accumulated_error.csv"] = table(ds_acc)
        lap("data-set sensitivity")

    # plots
    def save(fig, name):
        b = io.BytesIO()
        fig.savefig(b, format="png", dpi=100)
        plt.close(fig)
        pngs[name] = b.getvalue()

    fig, ax = plt.subplots(figsize=(12, 4))
    ax.plot([r["Cosine"] for r in rows], label="Cosine")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["name"] for r in rows], rotation=90, fontsize=5)
    ax.legend()
    save(fig, "plots/per_layer_metrics.png")
    fig, ax = plt.subplots(figsize=(12, 4))
    for k in acc[0]:
        if k != "name":
            ax.plot([r[k] for r in acc], label=k)
    ax.legend(fontsize=6)
    save(fig, "plots/accumulated_error.png")
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.barh([r["name"] for r in sens[:10]], [r["L1"] for r in sens[:10]])
    save(fig, "plots/sensitivity_topk.png")
    # the worst layers and their weights; with --data an activation's distribution over the set
    by_cos = sorted(rows, key=lambda r: r["Cosine"])
    tensors = []
    for r in by_cos:
        if len(tensors) >= args.plots:
            break
        src = (vf, vq)
        tensors.append((r["name"], src[0]["seen"][r["name"]], src[1]["seen"][r["name"]]))
        wn = flow.wq_of.get(flow.parents.get(r["name"], ""))
        if wn and len(tensors) < args.plots:
            w = flow.mods[wn.rsplit(".", 1)[0]].weight.detach()
            with torch.no_grad():
                tensors.append((wn, w, fq_apply(flow.mods[wn], w)))
    for n, a, b in tensors[: args.plots]:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.hist(a.flatten().numpy(), bins=128, alpha=0.5, label="float")
        ax.hist(b.flatten().numpy(), bins=128, alpha=0.5, label="quantized")
        ax.legend()
        save(fig, f"plots/distribution/{n}.png")
        fig, ax = plt.subplots(figsize=(8, 4))
        c = a.transpose(0, 1).reshape(a.shape[1], -1) if a.dim() > 1 else a.reshape(1, -1)
        ax.boxplot([row.numpy() for row in c[:64]], showfliers=False)
        save(fig, f"plots/channelwise/{n}.png")
    if curves:
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.barh([str(r["index"]) for r in ds_rows[:40]], [r["L1"] for r in ds_rows[:40]])
        save(fig, "plots/dataset_samples.png")
        fig, ax = plt.subplots(figsize=(12, 4))
        for k in curves:
            ax.plot([r[k + "_mean"] for r in ds_acc], label=k)
            ax.fill_between(range(len(ds_acc)), [r[k + "_p05"] for r in ds_acc], [r[k + "_p95"] for r in ds_acc], alpha=0.2)
        ax.legend(fontsize=6)
        save(fig, "plots/dataset_accumulated_error.png")
    lap("plots")
    overlays(flow, qat, rows, sens, files)
    lap("graph overlays")

    # tables, summary, index.html, zip
    for name, rs in (("compare_per_layer_out", rows), ("model_statistic", st_rows), ("weight_comparison", wrows),
                     ("sensitive_ops", sens), ("accumulated_error", acc)):
        files[name + ".txt"], files[name + ".csv"] = table(rs)
    files["mixed_precision.json"] = json.dumps(wi, indent=1)
    summary.update({"sensitivity_top": sens[:10], "layers": rows, "what_if": wi, "laps": laps})
    files["summary.json"] = json.dumps(summary, indent=1)
    sections = [("Per-layer comparison", rows), ("Sensitivity", sens), ("Accumulated error", acc),
                ("Weights", wrows), ("What-if, int16", wi["int16"]), ("What-if, float", wi["float"])]
    if frag_layers:
        sections += [("Rounding fragility", frag_rows), ("Fragility per quantizer", frag_layers)]
    if ds_rows:
        sections += [("Samples", ds_rows)] + ([("Data-set sensitivity", ds_sens)] if ds_sens else [])
    files["index.html"] = ("<html><body>" + "".join(f"<h2>{t}</h2>{html_table(rs)}" for t, rs in sections)
                           + "".join(f"<p>{a}</p>" for a in adv)
                           + "".join(f'<p><img src="{p}"></p>' for p in pngs) + "</body></html>")
    with zipfile.ZipFile(args.out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, s in files.items():
            z.writestr(n, s)
        for n, b in pngs.items():
            z.writestr(n, b)
    lap("tables + zip")
    total = time.time() - t0
    print(f"pyflow: {total:.2f} s ({len(flow.fqs)} quantizers, {len(order)} values, {len(sens)} sensitivity rows, "
          f"{len(pngs)} PNGs, {len(files) + len(pngs)} files, batch {x_all.shape[0]}; "
          + ", ".join(f"{k} {v:.2f}" for k, v in laps.items()) + f"; imports {t0 - T_IMPORT:.2f} s not counted)")


if __name__ == "__main__":
    main()
