#!/usr/bin/env python3
"""The Python workflow runall replaces (issue 30 §3's yardstick), on the bench QAT models.

Usage: /usr/bin/python3 bench/pyflow.py MODEL_DIR OUT.zip [--data N] [--threads T] [--plots K]

MODEL_DIR is a bench/make_models.py folder of `resnet18` or `mobilenetv2` (it needs qat.pt, the
QAT module's state_dict). What it does is what a user of the seeds (QuantAnalysis, PyTorch
Numeric Suite) writes today to get the analyses of one `qreport runall` from the PyTorch QAT
module itself: forward hooks on every FakeQuantize (the values runall compares), fake-quant
toggling for the float run, sensitivity and accumulated error, matplotlib for the plots, zipfile
for the bundle. Inputs: input.npy (one sample), or with --data N the first N candidates of
make_models.py's seeded generator as one batch (a Python user batches; runall --data reads N
files one by one).

Analyses, each as runall does it (so the two do the same work):
  1. equivalence: the module with every quantizer disabled against the float twin (here the same
     module: one run) — the pair-proving run;
  2. per-layer comparison of every quantized value: Cosine, MSE, L1, KL, SQNR, Atol, and local
     metrics (the layer's module re-run on the float run's input with its quantizers on);
  3. statistics of every value in both runs (min, max, mean, var) and of every weight;
  4. sensitivity, one quantizer on at a time (activation and weight quantizers), output metrics;
  5. accumulated error: quantizers switched on in execution order, output metrics after each;
  6. what-if: the top 1..3 sensitive quantizers kept in float, output metrics;
  7. plots: per-layer metrics, accumulated error, top-10 sensitivity, and for K tensors (the
     worst layers and their weights) a histogram and a per-channel box plot — as many PNGs as
     runall writes for the model;
  8. text/CSV/JSON tables, an index.html, everything zipped.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as mm  # noqa: E402


def load_qat(model_dir):
    net = os.path.basename(os.path.normpath(model_dir))
    if net not in mm.MODELS:
        sys.exit(f"pyflow: {model_dir}: not one of {mm.MODELS}")
    pt = os.path.join(model_dir, "qat.pt")
    if not os.path.exists(pt):
        sys.exit(f"pyflow: {pt} missing (bench/make_models.py --force --models {net} writes it)")
    q = mm.build(net).eval()
    q.fuse_model(is_qat=False)
    act = tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                    dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False)
    q.qconfig = tq.QConfig(activation=act, weight=tq.default_per_channel_weight_fake_quant)
    q.train()
    tq.prepare_qat(q, inplace=True)
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


def stats(t):
    t = t.double()
    return {"min": float(t.min()), "max": float(t.max()), "mean": float(t.mean()), "var": float(t.var(unbiased=False))}


def set_fq(fqs, on):
    for _, m in fqs:
        if on:
            m.enable_fake_quant()
        else:
            m.disable_fake_quant()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--data", type=int, default=0, help="N seeded samples as one batch (default: input.npy)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--plots", type=int, default=10, help="tensors with histogram + box plot (runall: 10)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    lap_t = [t0]
    laps = {}

    def lap(what):
        now = time.time()
        laps[what] = now - lap_t[0]
        lap_t[0] = now

    q = load_qat(args.model_dir)
    if args.data:
        x, _ = mm.make_batch(np.random.default_rng(mm.CAND_SEED), args.data, mm.H_EXPORT)
    else:
        x = torch.from_numpy(np.load(os.path.join(args.model_dir, "input.npy")))
    mods = dict(q.named_modules())
    fqs = [(n, m) for n, m in q.named_modules() if isinstance(m, tq.FakeQuantize)]
    act_fq = [(n, m) for n, m in fqs if not n.endswith("weight_fake_quant")]
    w_fq = [(n, m) for n, m in fqs if n.endswith("weight_fake_quant")]
    lap("load")

    # Hooks: every activation quantizer's input is a compared value; its parent module's input
    # is kept for the local metrics.
    seen, order, parent_in = {}, [], {}

    def hook_fq(name):
        def f(_m, inp, _out):
            if name not in seen:
                order.append(name)
            seen[name] = inp[0].detach().clone()
        return f

    def hook_parent(name):
        def f(_m, inp, _out):
            parent_in[name] = tuple(t.detach().clone() for t in inp if isinstance(t, torch.Tensor))
        return f

    hs = [m.register_forward_hook(hook_fq(n)) for n, m in act_fq]
    parents = {}
    for n, _ in act_fq:
        p = n.rsplit(".", 1)[0] if "." in n else ""
        pm = mods.get(p)
        if p and isinstance(pm, torch.nn.Module) and not isinstance(pm, torch.ao.nn.quantized.FloatFunctional):
            parents[n] = p
            hs.append(pm.register_forward_hook(hook_parent(n)))

    def run(on, keep=False):
        set_fq(fqs, on)
        with torch.no_grad():
            y = q(x)
        return y, (dict(seen) if keep else None), (dict(parent_in) if keep else None)

    y_f, v_f, pin_f = run(False, keep=True)
    lap("float run")
    y_eq, _, _ = run(False)
    equiv = float((y_f - y_eq).abs().max())
    lap("equivalence run")
    y_q, v_q, _ = run(True, keep=True)
    lap("quantized run")
    for h in hs:
        h.remove()

    # 2. per-layer comparison with local metrics (the parent re-run on the float run's input).
    rows = []
    set_fq(fqs, True)
    for n in order:
        r = {"name": n, **metrics(v_f[n], v_q[n])}
        if n in parents and n in pin_f:
            pm = mods[parents[n]]
            with torch.no_grad():
                yl = pm(*pin_f[n])
            fq = mods[n]
            with torch.no_grad():
                fq.disable_fake_quant()
                yl_f = pm(*pin_f[n])
                fq.enable_fake_quant()
            loc = metrics(yl_f, yl)
            r.update({"local_Cosine": loc["Cosine"], "local_SQNR": loc["SQNR"]})
        rows.append(r)
    lap("per-layer compare + local")

    # 3. statistics.
    st_rows = [{"name": n, **{f"f_{k}": v for k, v in stats(v_f[n]).items()},
                **{f"q_{k}": v for k, v in stats(v_q[n]).items()}} for n in order]
    wrows = []
    for n, m in w_fq:
        w = mods[n.rsplit(".", 1)[0]].weight.detach()
        with torch.no_grad():
            wq = m(w)
        wrows.append({"name": n, **metrics(w, wq), **stats(w)})
    lap("statistics")

    # 4. sensitivity, one quantizer on at a time.
    sens = []
    for n, m in fqs:
        set_fq(fqs, False)
        m.enable_fake_quant()
        with torch.no_grad():
            y = q(x)
        sens.append({"name": n, **metrics(y_f, y)})
    sens.sort(key=lambda r: -r["L1"])
    lap("sensitivity")

    # 5. accumulated error: quantizers on in execution order (weights with their layer).
    acc = []
    set_fq(fqs, False)
    for n in order:
        mods[n].enable_fake_quant()
        p = n.rsplit(".", 1)[0]
        wn = p + ".weight_fake_quant"
        if wn in mods:
            mods[wn].enable_fake_quant()
        with torch.no_grad():
            y = q(x)
        acc.append({"name": n, **metrics(y_f, y)})
    lap("accumulated error")

    # 6. what-if: top 1..3 sensitive quantizers kept in float.
    whatif = []
    for k in (1, 2, 3):
        set_fq(fqs, True)
        for r in sens[:k]:
            mods[r["name"]].disable_fake_quant()
        with torch.no_grad():
            y = q(x)
        whatif.append({"float": [r["name"] for r in sens[:k]], **metrics(y_f, y)})
    lap("what-if")

    # 7. plots.
    pngs = {}

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
    ax.plot([r["Cosine"] for r in acc])
    save(fig, "plots/accumulated_error.png")
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.barh([r["name"] for r in sens[:10]], [r["L1"] for r in sens[:10]])
    save(fig, "plots/sensitivity_topk.png")
    worst = sorted(rows, key=lambda r: r["Cosine"])[: max(1, args.plots // 2)]
    tensors = []
    for r in worst:
        tensors.append((r["name"], v_f[r["name"]], v_q[r["name"]]))
        wn = r["name"].rsplit(".", 1)[0] + ".weight_fake_quant"
        if wn in mods and len(tensors) < args.plots:
            w = mods[wn.rsplit(".", 1)[0]].weight.detach()
            with torch.no_grad():
                tensors.append((wn, w, mods[wn](w)))
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
    lap("plots")

    # 8. tables and bundle.
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

    files = {}
    for name, rs in (("compare_per_layer_out", rows), ("model_statistic", st_rows), ("weight_comparison", wrows),
                     ("sensitive_ops", sens), ("accumulated_error", acc)):
        files[name + ".txt"], files[name + ".csv"] = table(rs)
    files["mixed_precision.json"] = json.dumps(whatif, indent=1)
    files["summary.json"] = json.dumps({"model_output": metrics(y_f, y_q), "equivalence_max_abs": equiv,
                                        "sensitivity_top": sens[:10], "laps": laps}, indent=1)
    files["index.html"] = "<html><body>" + "".join(f'<p><img src="{p}"></p>' for p in pngs) + "</body></html>"
    with zipfile.ZipFile(args.out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, s in files.items():
            z.writestr(n, s)
        for n, b in pngs.items():
            z.writestr(n, b)
    lap("tables + zip")
    total = time.time() - t0
    print(f"pyflow: {total:.2f} s ({len(fqs)} quantizers, {len(order)} values, {len(pngs)} PNGs, batch {x.shape[0]}; "
          + ", ".join(f"{k} {v:.2f}" for k, v in laps.items()) + f"; imports {t0 - T_IMPORT:.2f} s not counted)")


if __name__ == "__main__":
    main()
