#!/usr/bin/env python3
"""bench/errsplit_cost.py — what the error split (issue 29) costs runall, side by side.

Usage: /usr/bin/python3 bench/errsplit_cost.py [--models resnet18,mobilenetv2,transformer] [--reps 3]
                                               [--threads 2] [--models-dir bench/models]
                                               [--qreport ./qreport] [--out bench/RESULTS_ERRSPLIT.md]

Needs a built qreport and bench/make_models.py's folders (base.onnx, qat.onnx, input.npy; the
`transformer` folder is the tpairs fixture pair make_models.py copies there). For each model,
--reps rounds; each round runs
    qreport runall base.onnx qat.onnx -i input.npy -o OUT.zip --quiet --threads T
once as is (the split measured) and once with --no-error-split, the order flipping every round.
Each run is one whole process; its wall time (start to exit) and its user and system CPU seconds
and peak RSS (os.wait4's rusage of that child) are recorded. The table gives the medians, the
user-CPU ratio split / no split (the primary number: on a shared machine wall time mostly
measures the other jobs) and the wall ratio, with the CPU and the load average before and after
each model. Writes the table to --out and prints it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from workflow import cpu_name  # noqa: E402  (one reader of /proc/cpuinfo's model name for the bench scripts)


def run_once(cmd):
    """Wall seconds, user CPU s, system CPU s, peak RSS (MiB) of one process running cmd."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"errsplit_cost.py: {' '.join(cmd)} failed ({code}): {err.decode(errors='replace')[-800:]}")
    return wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024.0


def fmt_load(l):
    return "/".join(f"{x:.1f}" for x in l)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,mobilenetv2,transformer")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models-dir", default=os.path.join(HERE, "models"))
    ap.add_argument("--qreport", default=os.path.join(ROOT, "qreport"))
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_ERRSPLIT.md"))
    args = ap.parse_args()
    if args.reps < 3:
        sys.exit("errsplit_cost.py: --reps must be at least 3 (medians)")
    qr = args.qreport
    if not os.access(qr, os.X_OK):
        sys.exit(f"errsplit_cost.py: {qr} missing (make qreport)")
    tmp = tempfile.mkdtemp(prefix="qr-errsplit-")
    variants = (("split", []), ("no split", ["--no-error-split"]))
    rows = []
    for name in args.models.split(","):
        d = os.path.join(args.models_dir, name)
        for f in ("base.onnx", "qat.onnx", "input.npy"):
            if not os.path.exists(os.path.join(d, f)):
                sys.exit(f"errsplit_cost.py: {d}/{f} missing (bench/make_models.py --models {name})")
        base = [qr, "runall", os.path.join(d, "base.onnx"), os.path.join(d, "qat.onnx"), "-i", os.path.join(d, "input.npy"),
                "-o", os.path.join(tmp, name + ".zip"), "--quiet", "--threads", str(args.threads)]
        res = {v: [] for v, _ in variants}
        load0 = os.getloadavg()
        for r in range(args.reps):
            order = variants if r % 2 == 0 else variants[::-1]
            for v, extra in order:
                res[v].append(run_once(base + extra))
                print(f"{name} round {r + 1} {v}: wall {res[v][-1][0]:.2f} s, user {res[v][-1][1]:.2f} s, "
                      f"sys {res[v][-1][2]:.2f} s, load {fmt_load(os.getloadavg())}", file=sys.stderr, flush=True)
        load1 = os.getloadavg()
        med = {v: [statistics.median(x[k] for x in res[v]) for k in range(4)] for v in res}
        rows.append((name, res, med, load0, load1))
        try:
            os.remove(os.path.join(tmp, name + ".zip"))
        except OSError:
            pass
    os.rmdir(tmp)

    lines = []
    lines.append("# The error split's cost in runall (issue 29)\n")
    lines.append(f"`/usr/bin/python3 bench/errsplit_cost.py --models {args.models} --reps {args.reps} "
                 f"--threads {args.threads}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
                 f"CPU: {cpu_name()}, {os.cpu_count()} logical CPUs, **under load** (the machine is shared by "
                 "several jobs; load averages 1/5/15 min before → after each model below), so wall times "
                 "mostly measure the other jobs: the **user-CPU ratio** is the primary number. Each cell is "
                 f"the median of {args.reps} whole `qreport runall ... --threads {args.threads}` processes, "
                 "split and `--no-error-split` alternating (order flipped every round); CPU seconds and peak "
                 "RSS from os.wait4.\n")
    lines.append("| model | user CPU s split | no split | **user ratio** | wall s split | no split | wall ratio | "
                 "sys s split / no split | peak RSS MiB split / no split | load before → after |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, res, med, l0, l1 in rows:
        s, n = med["split"], med["no split"]
        lines.append(f"| {name} | {s[1]:.2f} | {n[1]:.2f} | **{s[1] / n[1]:.3f}** | {s[0]:.2f} | {n[0]:.2f} | "
                     f"{s[0] / n[0]:.3f} | {s[2]:.2f} / {n[2]:.2f} | {s[3]:.0f} / {n[3]:.0f} | "
                     f"{fmt_load(l0)} → {fmt_load(l1)} |")
    lines.append("")
    lines.append("Every run (wall s, user s):\n")
    for name, res, med, l0, l1 in rows:
        for v in res:
            lines.append(f"- {name}, {v}: " + ", ".join(f"({x[0]:.2f}, {x[1]:.2f})" for x in res[v]))
    lines.append("")
    text = "\n".join(lines)
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
