#!/usr/bin/env python3
"""bench/run.py — the side-by-side harness of `make bench`: qreport against ONNX Runtime.

Usage: python3 bench/run.py [--models resnet18,mobilenetv2,transformer,transformer_int4] [--threads 1,2] [--procs 5] [--runs 20]
                            [--runall-reps 5] [--no-profile] [--out bench/RESULTS.md]

Needs: ./qreport (make qreport), the models of bench/make_models.py in bench/models/<model>/
(base.onnx, qat.onnx, input.npy; `make bench-models`), node with onnxruntime-node (from
$ORT_NODE_MODULES, default /tmp/ort/node_modules), /usr/bin/time, and perf for the profile
section (skipped with a note when missing). Python standard library only.

Measures, side by side in one run, interleaving qreport and ORT per configuration:
  1. inference latency per (model, threads, variant): variant float = base.onnx (qreport run vs
     ORT); sim = qat.onnx in qreport's sim mode vs ORT on qat.onnx; int = qat.onnx in qreport's
     int mode vs ORT on qat.onnx. Each process loads the model, runs once untimed, then times
     --runs runs and reports their median; --procs processes per engine and configuration (the
     order qreport/ORT alternates between repetitions); the table gives the median of the
     process medians and their range.
  2. `qreport runall base qat -i input.npy --threads 2` wall time (median of --runall-reps) and
     peak RSS (/usr/bin/time %M; manifest.json's peak_rss_bytes alongside), per-stage seconds
     from manifest.json.
  3. perf profile (perf record -g, self time per symbol) of run --repeat in every variant at 2
     threads and of runall, per model.
Compares with the targets of the issue and writes the report (bench/RESULTS.md) with the
machine, the versions and every command used. Exit 0 when the harness ran (targets missed or
not), 2 when something it needs is missing, 1 when a measured command failed.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORT_INSTALL = "mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node"
VARIANTS = ("float", "sim", "int")
# Targets of the issue (this 2-core machine, medians): (variant -> max qreport/ORT ratio, thread counts it binds)
LATENCY_TARGETS = {"float": (1.3, (1, 2)), "sim": (1.0, (2,)), "int": (1.0, (2,))}
RUNALL_TARGET_S = {"mobilenetv2": 1.5, "resnet18": 2.0}
RSS_SLACK_BYTES = 200 * 1024 * 1024


class BenchError(Exception):
    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


def rel(path):
    """path relative to the repository root when inside it (commands in the report read cleanly)."""
    r = os.path.relpath(path, ROOT)
    return path if r.startswith("..") else r if "/" in r else "./" + r


def run(cmd, env=None, ok_codes=(0,)):
    """Runs cmd (list) from the repository root; returns (stdout, stderr). Fails naming the command."""
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise BenchError(f"cannot run {shlex.join(cmd)}: {e}", 2)
    if p.returncode not in ok_codes:
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-8:])
        code = 2 if p.returncode == 2 and cmd[0] == "node" else 1
        raise BenchError(f"command failed (exit {p.returncode}): {shlex.join(cmd)}\n{tail}", code)
    return p.stdout, p.stderr


def fields(prefix, text):
    """key=value fields of the first line starting with prefix."""
    for line in text.splitlines():
        if line.startswith(prefix):
            return dict(kv.split("=", 1) for kv in line[len(prefix):].split() if "=" in kv)
    raise BenchError(f"no '{prefix}' line in output:\n{text.strip()}")


def verdict(value, limit):
    """PASS/MISS against an upper limit, with the margin."""
    if value <= limit:
        return f"PASS ({100 * (1 - value / limit):.0f}% under)"
    return f"MISS ({100 * (value / limit - 1):.0f}% over)"


def fmt_range(xs):
    return f"{min(xs):.2f}–{max(xs):.2f}"


class Harness:
    def __init__(self, args):
        self.a = args
        self.qreport = os.path.abspath(args.qreport)
        self.node = args.node
        self.ort_js = os.path.join(HERE, "ort_bench.js")
        self.tmp = tempfile.mkdtemp(prefix="qreport-bench-")
        self.commands = []          # (what, example command) for the report
        self.lat = {}               # (model, threads, variant) -> {"qr": [...], "ort": [...], ...}
        self.runall = {}            # model -> {...}
        self.profiles = []          # (title, [(pct, symbol)], command)
        self.ops = {}               # model -> op type -> variant -> (nodes, ms, %)
        self.notes = []

    # ---- preflight ------------------------------------------------------------------------
    def check(self):
        if not os.access(self.qreport, os.X_OK):
            raise BenchError(f"{self.qreport} not found: build it first (make qreport)", 2)
        if not shutil.which(self.node):
            raise BenchError(f"'{self.node}' not found: ONNX Runtime runs under node (apt-get install nodejs)", 2)
        ort_dir = os.environ.get("ORT_NODE_MODULES", "/tmp/ort/node_modules")
        pkg = os.path.join(ort_dir, "onnxruntime-node", "package.json")
        if not os.path.exists(pkg):
            raise BenchError(f"onnxruntime-node not found in {ort_dir}. Install it with:\n  {ORT_INSTALL}\n"
                             "or set ORT_NODE_MODULES to a node_modules folder that has it.", 2)
        with open(pkg) as f:
            self.ort_version = json.load(f).get("version", "unknown")
        if not os.access("/usr/bin/time", os.X_OK):
            raise BenchError("/usr/bin/time not found (apt-get install time): it measures runall's peak RSS", 2)
        for m in self.a.models:
            for f in ("base.onnx", "qat.onnx", "input.npy"):
                p = os.path.join(self.a.models_dir, m, f)
                if not os.path.exists(p):
                    raise BenchError(f"{p} missing: generate the models with `make bench-models` "
                                     f"(/usr/bin/python3 bench/make_models.py)", 2)
        for m in self.a.models:        # the pair must be equivalent with quantizers off (exit 3 otherwise)
            cmd = [rel(self.qreport), "match", self.model_file(m, "base.onnx"), self.model_file(m, "qat.onnx"), "-i",
                   self.model_file(m, "input.npy"), "-o", os.path.join(self.tmp, "match")]
            out, _ = run(cmd)
            eq = [line for line in out.splitlines() if line.startswith("Equivalence check")]
            self.notes.append(f"`{shlex.join(cmd[:5])}`: " + (eq[0].split(" — ")[0] if eq else "exit 0"))
        for m in self.a.models:        # the float baseline against ORT's (optimizations disabled, 1 thread), bitwise
            self.notes.append(self.exact_note(m))
        self.perf = shutil.which("perf") if self.a.profile else None
        if self.a.profile and not self.perf:
            self.notes.append("perf not found: no profile section (apt-get install linux-perf).")

    def exact_note(self, model):
        """Runs base.onnx in qreport and in ONNX Runtime (fixtures/ort_golden.js outputs, level
        'disabled', one thread) and counts output values whose float32 bits differ."""
        qd, od = os.path.join(self.tmp, "exact_qr_" + model), os.path.join(self.tmp, "exact_ort_" + model)
        qcmd = [rel(self.qreport), "run", self.model_file(model, "base.onnx"), "-i", self.model_file(model, "input.npy"),
                "-o", qd, "--quiet"]
        ocmd = [self.node, rel(os.path.join(ROOT, "fixtures", "ort_golden.js")), "outputs",
                self.model_file(model, "base.onnx"), self.model_file(model, "input.npy"), od, "disabled"]
        run(qcmd)
        run(ocmd)
        q = [f for f in sorted(os.listdir(qd)) if f.endswith(".npy")]
        o = [f for f in sorted(os.listdir(od)) if f.endswith(".npy")]
        if len(q) != 1 or len(o) != 1:
            return f"{model}: float output vs ONNX Runtime not compared ({len(q)} / {len(o)} output files)"

        def payload(path):
            with open(path, "rb") as f:
                b = f.read()
            hl = int.from_bytes(b[8:10], "little") if b[6] == 1 else int.from_bytes(b[8:12], "little")
            return b[(10 if b[6] == 1 else 12) + hl:]
        a, b = payload(os.path.join(qd, q[0])), payload(os.path.join(od, o[0]))
        n = min(len(a), len(b)) // 4
        diff = sum(1 for i in range(n) if a[4 * i:4 * i + 4] != b[4 * i:4 * i + 4]) + abs(len(a) - len(b)) // 4
        return (f"{model}: float output bits vs ONNX Runtime (optimizations disabled, 1 thread): {diff} of {n} values "
                f"differ (`{shlex.join(qcmd[:3])}` vs `fixtures/ort_golden.js outputs ... disabled`)")

    def model_file(self, model, name):
        return rel(os.path.join(self.a.models_dir, model, name))

    # ---- 1. latency -----------------------------------------------------------------------
    def qr_cmd(self, model, threads, variant, runs):
        onnx = self.model_file(model, "base.onnx" if variant == "float" else "qat.onnx")
        cmd = [rel(self.qreport), "run", onnx, "-i", self.model_file(model, "input.npy"), "-o",
               os.path.join(self.tmp, "out"), "--threads", str(threads), "--repeat", str(runs), "--quiet"]
        return cmd + (["--mode", "int"] if variant == "int" else ["--mode", "sim"] if variant == "sim" else [])

    def ort_cmd(self, model, threads, variant, runs):
        onnx = self.model_file(model, "base.onnx" if variant == "float" else "qat.onnx")
        return [self.node, rel(self.ort_js), onnx, self.model_file(model, "input.npy"), str(threads), str(runs)]

    def latency(self):
        configs = [(m, t, v) for m in self.a.models for t in self.a.threads for v in VARIANTS]
        for c in configs:
            self.lat[c] = {"qr": [], "ort": [], "qr_load": [], "ort_load": [], "isa": "?"}
        total = len(configs) * self.a.procs
        k = 0
        for rep in range(self.a.procs):
            for c in configs:
                k += 1
                m, t, v = c
                engines = ("qr", "ort") if rep % 2 == 0 else ("ort", "qr")
                for e in engines:
                    if e == "qr":
                        out, _ = run(self.qr_cmd(m, t, v, self.a.runs))
                        f = fields("bench:", out)
                        if int(f["threads"]) != t or f["mode"] != ("int" if v == "int" else "sim"):
                            raise BenchError(f"qreport reported {f} for {c}")
                        self.lat[c]["qr"].append(float(f["median_ms"]))
                        self.lat[c]["qr_load"].append(float(f["load_ms"]))
                        self.lat[c]["isa"] = f["isa"]
                    else:
                        out, _ = run(self.ort_cmd(m, t, v, self.a.runs))
                        f = fields("ort:", out)
                        self.lat[c]["ort"].append(float(f["median_ms"]))
                        self.lat[c]["ort_load"].append(float(f["load_ms"]))
                d = self.lat[c]
                print(f"[{k}/{total}] {m} {v} {t}T: qreport {d['qr'][-1]:.2f} ms, ORT {d['ort'][-1]:.2f} ms", flush=True)
        m0, t0 = self.a.models[0], self.a.threads[-1]
        for v in VARIANTS:
            self.commands.append((f"latency, {v} (qreport)", shlex.join(self.qr_cmd(m0, t0, v, self.a.runs))))
            self.commands.append((f"latency, {v} (ORT)", shlex.join(self.ort_cmd(m0, t0, v, self.a.runs))))

    def ort_disabled_note(self, procs=3):
        """Context for the float rows: ONNX Runtime with graph optimizations disabled (no NCHWc
        layouts or fusions: the configuration whose float bits qreport reproduces), median of
        `procs` processes per model and thread count, against qreport's float median above."""
        parts = []
        for m in self.a.models:
            for t in self.a.threads:
                qr = self.lat.get((m, t, "float"), {}).get("qr")
                if not qr:
                    continue
                ms = []
                for _ in range(procs):
                    out, _ = run(self.ort_cmd(m, t, "float", self.a.runs) + ["disabled"])
                    ms.append(float(fields("ort:", out)["median_ms"]))
                d, q = statistics.median(ms), statistics.median(qr)
                parts.append(f"{m} {t}T {d:.2f} ms (qreport float {q / d:.2f}x of it)")
        if parts:
            self.notes.append("context: ONNX Runtime float with graph optimizations disabled (the configuration whose "
                              "bits qreport's float run matches; the table's ORT column uses 'all', NCHWc kernels "
                              "that sum in another order), median of 3 processes: " + "; ".join(parts) + ". Sim mode "
                              "computes the QAT model's float fake-quant semantics (bit-exact with ORT 'disabled'), "
                              "so it costs what the float model costs; ORT 'all' runs the same model as int8 "
                              "kernels, hence the sim rows' ratio: the sim target is met only by int mode.")

    # ---- 2. runall ------------------------------------------------------------------------
    def runall_cmd(self, model, zip_path):
        return [rel(self.qreport), "runall", self.model_file(model, "base.onnx"), self.model_file(model, "qat.onnx"),
                "-i", self.model_file(model, "input.npy"), "-o", zip_path, "--threads", "2", "--quiet"]

    def runall_all(self):
        zip_path = os.path.join(self.tmp, "report.zip")
        tfile = os.path.join(self.tmp, "time.txt")
        for m in self.a.models:
            files = sum(os.path.getsize(os.path.join(self.a.models_dir, m, f)) for f in ("base.onnx", "qat.onnx"))
            self.runall[m] = {"wall": [], "rss": [], "manifest_rss": [], "stages": {}, "files": files}
        for rep in range(self.a.runall_reps):
            for m in (self.a.models if rep % 2 == 0 else self.a.models[::-1]):
                cmd = ["/usr/bin/time", "-f", "%M", "-o", tfile] + self.runall_cmd(m, zip_path)
                t0 = time.monotonic()
                run(cmd)
                wall = time.monotonic() - t0
                d = self.runall[m]
                d["wall"].append(wall)
                with open(tfile) as f:
                    d["rss"].append(1024 * int(f.read().strip().splitlines()[-1]))
                with zipfile.ZipFile(zip_path) as z:
                    man = json.loads(z.read("manifest.json"))
                if man.get("peak_rss_bytes"):
                    d["manifest_rss"].append(man["peak_rss_bytes"])
                for s in man.get("stages", []):
                    d["stages"].setdefault(s["name"], []).append(s["seconds"])
                print(f"runall {m} [{rep + 1}/{self.a.runall_reps}]: {wall:.2f} s, peak RSS {d['rss'][-1] / 2**20:.0f} MB",
                      flush=True)
        self.commands.append(("runall (wall time: around the process; peak RSS: /usr/bin/time %M)",
                              shlex.join(["/usr/bin/time", "-f", "%M", "-o", "TIME.txt"] +
                                         self.runall_cmd(self.a.models[0], "/tmp/x.zip"))))

    # ---- 3. profile -----------------------------------------------------------------------
    def perf_top(self, title, cmd, n=10):
        data = os.path.join(self.tmp, "perf.data")
        pcmd = [self.perf, "record", "-g", "-q", "-o", data, "--"] + cmd
        run(pcmd)
        out, _ = run([self.perf, "report", "-i", data, "--no-children", "--sort", "symbol", "--stdio", "-g", "none",
                      "--percent-limit", "0.5"])
        rows = []
        for line in out.splitlines():
            mm = re.match(r"\s*([\d.]+)%\s+\[(.)\]\s+(\S+)", line)       # IPC columns follow
            if mm:
                rows.append((float(mm.group(1)), ("[kernel] " if mm.group(2) == "k" else "") + mm.group(3)))
        self.profiles.append((title, rows[:n], shlex.join(pcmd[:5] + ["perf.data", "--"] + cmd)))
        print(f"profile {title}: " + ", ".join(f"{s} {p:.1f}%" for p, s in rows[:3]), flush=True)

    def op_breakdown(self):
        """Milliseconds per operator type (build/bench_kern --model: taps time each node; float and sim only)."""
        kb = os.path.join(ROOT, "build", "bench_kern")
        if not os.access(kb, os.X_OK) or os.path.getmtime(kb) < os.path.getmtime(self.qreport):
            self.notes.append("build/bench_kern missing or older than qreport (make build/bench_kern): no "
                              "per-operator breakdown.")
            return
        env = dict(os.environ, QR_THREADS="2")
        for m in self.a.models:
            for v, f in (("float", "base.onnx"), ("sim", "qat.onnx")):
                cmd = [rel(kb), "--model", self.model_file(m, f), self.model_file(m, "input.npy"), str(self.a.runs)]
                out, _ = run(cmd, env=env)
                for line in out.splitlines():
                    mm = re.match(r"\s+(\S+)\s+(\d+) nodes\s+([\d.]+) ms\s+([\d.]+)%", line)
                    if mm:
                        self.ops.setdefault(m, {}).setdefault(mm.group(1), {})[v] = (int(mm.group(2)), float(mm.group(3)),
                                                                                      float(mm.group(4)))
        self.commands.append(("per-operator breakdown (float and sim)", "QR_THREADS=2 " + shlex.join(cmd)))

    def profile(self):
        if not self.perf:
            return
        for m in self.a.models:
            for v in VARIANTS:
                self.perf_top(f"{m} run {v}, 2 threads, --repeat {self.a.runs}", self.qr_cmd(m, 2, v, self.a.runs))
            self.perf_top(f"{m} runall, 2 threads", self.runall_cmd(m, os.path.join(self.tmp, "report.zip")))
        self.commands.append(("profile: record (every variant and runall, per model)", self.profiles[0][2]))
        self.commands.append(("profile: self time per symbol", f"{self.perf} report -i perf.data --no-children "
                              "--sort symbol --stdio -g none --percent-limit 0.5"))

    # ---- report ---------------------------------------------------------------------------
    def machine(self):
        cpu = "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        cpu = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        try:
            commit = run(["git", "rev-parse", "HEAD"])[0].strip()
            dirty = run(["git", "status", "--porcelain", "--untracked-files=no"])[0].strip()
            commit += " (with uncommitted changes)" if dirty else ""
        except BenchError:
            commit = "unknown (not a git checkout)"
        version = run([self.qreport, "--version"])[0].strip()
        node_v = run([self.node, "--version"])[0].strip()
        return cpu, commit, version, node_v

    def write(self, t_start, load_start):
        cpu, commit, version, node_v = self.machine()
        load_end = os.getloadavg()
        L = []
        L.append("<!-- Generated by bench/run.py (make bench); regenerate with `make bench`. -->")
        L.append("# qreport benchmark results\n")
        L.append(f"- date: {t_start.strftime('%Y-%m-%d %H:%M UTC')}, harness wall time {time.time() - t_start.timestamp():.0f} s")
        L.append(f"- qreport commit: {commit}")
        L.append(f"- CPU: {cpu}, {os.cpu_count()} online CPUs")
        L.append("- `./qreport --version`: " + " / ".join(x.strip() for x in version.splitlines()))
        L.append(f"- ONNX Runtime: onnxruntime-node {self.ort_version} (node {node_v}), CPU EP, graphOptimizationLevel "
                 "'all', intraOpNumThreads = threads, interOpNumThreads 1, sequential")
        L.append(f"- load average (1/5/15 min) at start {' '.join(f'{x:.2f}' for x in load_start)}, at end "
                 f"{' '.join(f'{x:.2f}' for x in load_end)}: other work on the machine makes the numbers noisy; "
                 "the ranges below show the spread between processes.")
        L.append(f"- method: per configuration {self.a.procs} processes per engine, interleaved (qreport, ORT, then "
                 f"ORT, qreport, ...); each loads the model, runs once untimed, times {self.a.runs} runs and reports "
                 "their median; the table gives the median of the process medians [range of process medians]; "
                 "best / best is the ratio of the fastest process medians (less sensitive to other load); the "
                 "verdict uses the median ratio.")
        for n in self.notes:
            L.append(f"- note: {n}")
        L.append("")
        # models
        L.append("## Models\n")
        L.append("| model | base.onnx | qat.onnx | how it was made |")
        L.append("|---|---|---|---|")
        for m in self.a.models:
            info = ""
            p = os.path.join(self.a.models_dir, m, "info.txt")
            if os.path.exists(p):
                with open(p) as f:
                    info = f.read().strip().split(": ", 1)[-1]
            sz = [os.path.getsize(os.path.join(self.a.models_dir, m, f)) / 2**20 for f in ("base.onnx", "qat.onnx")]
            L.append(f"| {m} | {sz[0]:.1f} MB | {sz[1]:.1f} MB | {info} |")
        L.append("")
        # latency
        if self.lat:
            L.append("## Inference latency (ms per run, batch 1, 1x3x224x224)\n")
            L.append("| model | variant | threads | qreport | ONNX Runtime | qreport / ORT | best / best | target | verdict |")
            L.append("|---|---|---|---|---|---|---|---|---|")
            for (m, t, v), d in self.lat.items():
                q, o = statistics.median(d["qr"]), statistics.median(d["ort"])
                ratio = q / o
                lim, binds = LATENCY_TARGETS[v]
                tgt = f"≤ {lim:.1f}×" if t in binds else f"(≤ {lim:.1f}× at {'/'.join(map(str, binds))}T)"
                ver = verdict(ratio, lim) if t in binds else "–"
                what = {"float": "float (base.onnx)", "sim": "QAT, sim mode (qat.onnx)",
                        "int": "QAT, int mode (qat.onnx)"}[v]
                L.append(f"| {m} | {what} | {t} | {q:.2f} [{fmt_range(d['qr'])}] | {o:.2f} [{fmt_range(d['ort'])}] "
                         f"| {ratio:.2f} | {min(d['qr']) / min(d['ort']):.2f} | {tgt} | {ver} |")
            L.append("")
            L.append("Load time (ms, median): qreport `load_ms` = parse, shape inference, input, lowering (int); "
                     "ORT = session creation incl. graph optimization.\n")
            L.append("| model | variant | threads | qreport load | ORT session |")
            L.append("|---|---|---|---|---|")
            for (m, t, v), d in self.lat.items():
                L.append(f"| {m} | {v} | {t} | {statistics.median(d['qr_load']):.1f} | "
                         f"{statistics.median(d['ort_load']):.1f} |")
            L.append("")
        # runall
        if self.runall:
            L.append(f"## runall (2 threads, median of {self.a.runall_reps})\n")
            L.append("| model | wall time | target | verdict | peak RSS | manifest peak RSS | RSS target "
                     "(2 × files + 200 MB) | verdict |")
            L.append("|---|---|---|---|---|---|---|---|")
            for m, d in self.runall.items():
                wall = statistics.median(d["wall"])
                rss = statistics.median(d["rss"])
                mrss = f"{statistics.median(d['manifest_rss']) / 2**20:.0f} MB" if d["manifest_rss"] else "–"
                rss_lim = 2 * d["files"] + RSS_SLACK_BYTES
                tl = RUNALL_TARGET_S.get(m)
                L.append(f"| {m} | {wall:.2f} s [{fmt_range(d['wall'])}] | {'≤ %.1f s' % tl if tl else '–'} | "
                         f"{verdict(wall, tl) if tl else '–'} | {rss / 2**20:.0f} MB | {mrss} | "
                         f"≤ {rss_lim / 2**20:.0f} MB | {verdict(rss, rss_lim)} |")
            L.append("")
            L.append("Where runall's time goes (manifest.json stages, seconds, median):\n")
            names = []
            for d in self.runall.values():
                names += [n for n in d["stages"] if n not in names]
            L.append("| stage | " + " | ".join(self.runall) + " |")
            L.append("|---|" + "---|" * len(self.runall))
            for n in names:
                L.append(f"| {n} | " + " | ".join(f"{statistics.median(d['stages'][n]):.3f}" if n in d["stages"] else "–"
                                                  for d in self.runall.values()) + " |")
            L.append("")
        # profile
        if self.ops or self.profiles:
            L.append("## Profile\n")
        if self.ops:
            L.append("Milliseconds per run by operator type, 2 threads (`build/bench_kern --model`, median of "
                     f"{self.a.runs} runs; time between the executor's taps, so a node's time includes freeing and "
                     "allocating its values). float = base.onnx, sim = qat.onnx as given.\n")
            for m, ops in self.ops.items():
                L.append(f"| {m}: op type | nodes | float ms (%) | sim ms (%) |")
                L.append("|---|---|---|---|")
                order = sorted(ops, key=lambda o: -max(x[1] for x in ops[o].values()))
                for o in order:
                    cell = {v: (f"{ops[o][v][1]:.2f} ({ops[o][v][2]:.0f}%)" if v in ops[o] else "–") for v in ("float", "sim")}
                    n = max(x[0] for x in ops[o].values())
                    L.append(f"| {o} | {n} | {cell['float']} | {cell['sim']} |")
                L.append("")
        if self.profiles:
            L.append("`perf record -g` (cpu-clock sampling), self time per symbol (`--no-children`), top 10; the run "
                     "profiles include model loading. Symbols of the static binary; `[kernel]` = kernel time.\n")
            for title, rows, cmd in self.profiles:
                L.append(f"**{title}**: " + ", ".join(f"`{s}` {p:.1f}%" for p, s in rows) + "\n")
        # commands
        L.append("## Commands\n")
        L.append("Run from the repository root; `make bench` runs all of this "
                 f"(`{shlex.join(['/usr/bin/python3', 'bench/run.py'] + self.argv)}`).\n")
        L.append("```")
        for what, cmd in self.commands:
            L.append(f"# {what}")
            L.append(cmd.replace(self.tmp, "/tmp/qreport-bench"))
        L.append("```")
        L.append("Latency commands are shown for one model and thread count; the others differ only in the model "
                 "folder and `--threads` / the THREADS argument.")
        with open(self.a.out, "w") as f:
            f.write("\n".join(L) + "\n")
        print(f"wrote {rel(self.a.out)}")


def main():
    ap = argparse.ArgumentParser(description="qreport vs ONNX Runtime benchmark (make bench)")
    # transformer: the static int8 QDQ transformer pair; transformer_int4: its int4 MatMulNBits weight-only
    # twin (fixtures/tpairs/, copied by make_models.py). The preflight requires both to pass the equivalence check.
    ap.add_argument("--models", default="resnet18,mobilenetv2,transformer,transformer_int4")
    ap.add_argument("--models-dir", default=os.path.join(HERE, "models"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--procs", type=int, default=5, help="processes per engine and configuration (>= 5 for medians)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per process")
    ap.add_argument("--runall-reps", type=int, default=5)
    ap.add_argument("--no-latency", dest="latency", action="store_false")
    ap.add_argument("--no-runall", dest="runall", action="store_false")
    ap.add_argument("--no-profile", dest="profile", action="store_false")
    ap.add_argument("--qreport", default=os.path.join(ROOT, "qreport"))
    ap.add_argument("--node", default=os.environ.get("NODE", "node"))
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    argv = sys.argv[1:]
    a = ap.parse_args(argv)
    a.models = [m for m in a.models.split(",") if m]
    a.threads = [int(t) for t in a.threads.split(",") if t]
    if a.procs < 1 or a.runs < 1 or a.runall_reps < 1 or not a.models or not a.threads:
        ap.error("--procs, --runs, --runall-reps must be >= 1; --models and --threads non-empty")
    h = Harness(a)
    h.argv = argv
    t_start = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()
    try:
        h.check()
        if a.latency:
            h.latency()
            h.ort_disabled_note()
        if a.runall:
            h.runall_all()
        if a.profile:
            h.op_breakdown()
            h.profile()
        h.write(t_start, load_start)
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        return e.code
    finally:
        shutil.rmtree(h.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
