#!/usr/bin/env python3
"""bench/workflow.py — runall against the Python workflow it replaces (issue 30 §3), side by side.

Usage: /usr/bin/python3 bench/workflow.py [--models resnet18,mobilenetv2] [--reps 5] [--data 8]
                                          [--models-dir bench/models] [--out bench/WORKFLOW.md]

Needs ./qreport, /usr/bin/python3 with torch + matplotlib (Debian python3-torch,
python3-matplotlib), and bench/make_models.py's folders with qat.pt (`make_models.py --force`
writes it). For each model, --reps rounds, each round alternating the two (order flips every
round), wall time of whole processes (start to exit, imports included: what a user waits for):
  1. one input: `qreport runall base.onnx qat.onnx -i input.npy --threads 2` vs
     `bench/pyflow.py DIR OUT --threads 2` (the same analyses on the QAT module, see pyflow.py);
  2. --data N: `qreport runall ... --data D` over N .npy samples vs `pyflow.py --data N` (the same
     N samples as one batch).
Medians, ranges, the ratio of medians (goal ≤ 0.10), the cost of each further sample
((data run − one-input run) / (N − 1), relative to the one-input run; goal ≤ 10%), the CPU and
load average. Writes the table to --out and prints it.
  --ab OLD NEW: instead of the Python workflow, two qreport binaries against each other (a change before
     and after): the same three runall commands with each, alternating, medians and ranges per binary and
     the cost of a sample beyond the sensitivity's 4; printed only (WORKFLOW.md is not written).
  --pyab OLD.py: two Python workflows against each other instead (OLD.py, e.g. an earlier pyflow.py
     from git, against bench/pyflow.py; run with bench/ on PYTHONPATH): one input and --data N each,
     alternating, medians and ranges; printed only.
  3. --data2 M (default 2N; 0: off): `qreport runall ... --data` over M samples (the N and M − N more),
     qreport only. The data-set sensitivity runs on the --sens-samples worst samples (4), so each of the
     first 4 samples brings a whole sensitivity and (T_N − T_1) / (N − 1) counts those; (T_M − T_N) /
     (M − N) is what a sample beyond them costs (the pass and the distributions' runs). Both are printed.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mdout import prepend_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def timed(cmd, env=None):
    t = time.time()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    dt = time.time() - t
    if r.returncode != 0:
        sys.exit(f"workflow.py: {' '.join(cmd)} failed ({r.returncode}): {r.stderr[-800:]}")
    return dt


def alternating(works, names, cmd, reps, env=None):
    """Times cmd(name, opt) for every work (label, opt) and name, reps rounds, the names' order
    flipped every round; {(label, name): [seconds]}."""
    times = {(w, b): [] for w, _ in works for b in names}
    for rep in range(reps):
        order = list(names) if rep % 2 == 0 else list(names)[::-1]
        for w, opt in works:
            for b in order:
                times[(w, b)].append(timed(cmd(b, opt), env))
    return times


def ab_rounds(name, bins, base, qat, inp, data, data2, n, n2, reps, tmp):
    """--ab: the three runall commands with each binary, alternating (order flips every round);
    prints a line per binary: medians [ranges] and a sample beyond the sensitivity's 4."""
    works = [("one input", ["-i", inp]), (f"--data {n}", ["--data", data])]
    if data2:
        works.append((f"--data {n2}", ["--data", data2]))
    times = alternating(works, bins, lambda b, opt: [bins[b], "runall", base, qat] + opt +
                        ["--threads", "2", "-q", "-o", os.path.join(tmp, "ab.zip")], reps)
    print(f"{name}: {cpu_name()}, {reps} rounds, load average {os.getloadavg()[0]:.2f}")
    for b in bins:
        med = {w: statistics.median(times[(w, b)]) for w, _ in works}
        cells = [f"{w} {med[w]:.3f} s [{min(times[(w, b)]):.2f}–{max(times[(w, b)]):.2f}]" for w, _ in works]
        if data2:
            beyond = (med[f"--data {n2}"] - med[f"--data {n}"]) / (n2 - n)
            cells.append(f"a sample beyond {1000 * beyond:.0f} ms = {100 * beyond / med['one input']:.1f}% of one input")
        print(f"  {b} ({bins[b]}): " + "; ".join(cells))


def py_rounds(name, scripts, d, n, reps, tmp):
    """--pyab: each Python workflow with one input and with --data n, alternating (order flips every
    round); prints a line per script: medians [ranges]."""
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    works = [("one input", []), (f"--data {n}", ["--data", str(n)])]
    times = alternating(works, scripts, lambda b, opt: [sys.executable, scripts[b], d, os.path.join(tmp, "py.zip"),
                                                        "--threads", "2"] + opt, reps, env)
    print(f"{name}: {cpu_name()}, {reps} rounds, load average {os.getloadavg()[0]:.2f}")
    for b in scripts:
        print(f"  {b} ({scripts[b]}): " + "; ".join(
            f"{w} {statistics.median(times[(w, b)]):.2f} s [{min(times[(w, b)]):.2f}–{max(times[(w, b)]):.2f}]"
            for w, _ in works))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,mobilenetv2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--data", type=int, default=8)
    ap.add_argument("--data2", type=int, default=-1, help="second set size for the marginal sample cost (default 2 x --data; 0: off)")
    ap.add_argument("--models-dir", default=os.path.join(HERE, "models"))
    ap.add_argument("--out", default=os.path.join(HERE, "WORKFLOW.md"))
    ap.add_argument("--ab", nargs=2, metavar=("OLD", "NEW"), help="two qreport binaries instead of qreport vs Python")
    ap.add_argument("--pyab", metavar="OLD.py", help="an earlier Python workflow against bench/pyflow.py instead")
    args = ap.parse_args()
    qr = os.path.join(ROOT, "qreport")
    bins = {"qreport": qr} if not args.ab else {"old": os.path.abspath(args.ab[0]), "new": os.path.abspath(args.ab[1])}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            sys.exit(f"workflow.py: {b} missing (make qreport)")
    import numpy as np
    import make_models as mm
    tmp = tempfile.mkdtemp(prefix="qr-workflow-")
    rows = []
    load0 = os.getloadavg()
    for name in args.models.split(","):
        d = os.path.join(args.models_dir, name)
        for f in ("base.onnx", "qat.onnx", "input.npy") + (() if args.ab else ("qat.pt",)):
            if not os.path.exists(os.path.join(d, f)):
                sys.exit(f"workflow.py: {d}/{f} missing (bench/make_models.py --force --models {name})")
        data = os.path.join(tmp, name + "_data")
        os.makedirs(data, exist_ok=True)
        x, _ = mm.make_batch(np.random.default_rng(mm.CAND_SEED), args.data, mm.H_EXPORT)
        for i in range(args.data):   # pyflow --data N draws the same N samples
            np.save(os.path.join(data, f"sample_{i:03d}.npy"), np.ascontiguousarray(x[i:i + 1].numpy()))
        n2 = 2 * args.data if args.data2 < 0 else args.data2
        data2 = os.path.join(tmp, name + "_data2")
        if n2 > args.data:           # the same N samples, then M - N more from the next seed
            os.makedirs(data2, exist_ok=True)
            x2, _ = mm.make_batch(np.random.default_rng(mm.CAND_SEED + 1), n2 - args.data, mm.H_EXPORT)
            for i in range(n2):
                xi = x[i:i + 1] if i < args.data else x2[i - args.data:i - args.data + 1]
                np.save(os.path.join(data2, f"sample_{i:03d}.npy"), np.ascontiguousarray(xi.numpy()))
        base, qat = os.path.join(d, "base.onnx"), os.path.join(d, "qat.onnx")
        if args.pyab:
            py_rounds(name, {"old": os.path.abspath(args.pyab), "new": os.path.join(HERE, "pyflow.py")}, d, args.data,
                      args.reps, tmp)
            continue
        if args.ab:
            ab_rounds(name, bins, base, qat, os.path.join(d, "input.npy"), data, data2 if n2 > args.data else None,
                      args.data, n2, args.reps, tmp)
            continue
        cmds = {
            ("one input", "qreport"): [qr, "runall", base, qat, "-i", os.path.join(d, "input.npy"), "--threads", "2",
                                       "-q", "-o", os.path.join(tmp, "q1.zip")],
            ("one input", "python"): [sys.executable, os.path.join(HERE, "pyflow.py"), d, os.path.join(tmp, "p1.zip"),
                                      "--threads", "2"],
            (f"--data {args.data}", "qreport"): [qr, "runall", base, qat, "--data", data, "--threads", "2", "-q", "-o",
                                                 os.path.join(tmp, "qd.zip")],
            (f"--data {args.data}", "python"): [sys.executable, os.path.join(HERE, "pyflow.py"), d,
                                                os.path.join(tmp, "pd.zip"), "--threads", "2", "--data", str(args.data)],
        }
        if n2 > args.data:
            cmds[(f"--data {n2}", "qreport")] = [qr, "runall", base, qat, "--data", data2, "--threads", "2", "-q", "-o",
                                                 os.path.join(tmp, "qd2.zip")]
        times = {k: [] for k in cmds}
        for rep in range(args.reps):
            for work in ("one input", f"--data {args.data}", f"--data {n2}"):
                order = ("qreport", "python") if rep % 2 == 0 else ("python", "qreport")
                for who in order:
                    if (work, who) in cmds:
                        times[(work, who)].append(timed(cmds[(work, who)]))
        for work in ("one input", f"--data {args.data}"):
            q, p = times[(work, "qreport")], times[(work, "python")]
            rows.append((name, work, statistics.median(q), min(q), max(q), statistics.median(p), min(p), max(p)))
        one = statistics.median(times[("one input", "qreport")])
        dat = statistics.median(times[(f"--data {args.data}", "qreport")])
        rows.append((name, "further sample", (dat - one) / (args.data - 1), one))
        if n2 > args.data:
            d2 = times[(f"--data {n2}", "qreport")]
            rows.append((name, "sample beyond", (statistics.median(d2) - dat) / (n2 - args.data), one, n2,
                         statistics.median(d2), min(d2), max(d2)))
    if args.ab or args.pyab:
        return
    load1 = os.getloadavg()
    lines = ["# runall vs the Python workflow (bench/workflow.py)", "",
             f"CPU: {cpu_name()}, {os.cpu_count()} logical CPUs; load average before {load0[0]:.2f}, after "
             f"{load1[0]:.2f}; {args.reps} rounds, alternating; wall time of whole processes; 2 threads each.", "",
             "| model | work | qreport runall (median, range) | Python workflow (median, range) | ratio | goal |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r[1] == "further sample":
            lines.append(f"| {r[0]} | each further sample, (T{args.data} − T1) / {args.data - 1} | {r[2]:.2f} s = "
                         f"{100 * r[2] / r[3]:.0f}% of one-input runall | | | ≤ 10% |")
        elif r[1] == "sample beyond":
            lines.append(f"| {r[0]} | --data {r[4]} | {r[5]:.2f} s ({r[6]:.2f}–{r[7]:.2f}) | | | |")
            lines.append(f"| {r[0]} | each sample beyond the sensitivity's 4, (T{r[4]} − T{args.data}) / {r[4] - args.data} | "
                         f"{r[2]:.2f} s = {100 * r[2] / r[3]:.0f}% of one-input runall | | | ≤ 10% |")
        else:
            lines.append(f"| {r[0]} | {r[1]} | {r[2]:.2f} s ({r[3]:.2f}–{r[4]:.2f}) | {r[5]:.2f} s ({r[6]:.2f}–{r[7]:.2f}) "
                         f"| {r[2] / r[5]:.3f} | ≤ 0.10 |")
    text = "\n".join(lines) + "\n"
    prepend_section(args.out, text, 'Run of ' + time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()) + ' (bench script output; say the load and the commit when you keep it)')
    print(text)


if __name__ == "__main__":
    main()
