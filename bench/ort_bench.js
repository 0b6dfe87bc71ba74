#!/usr/bin/env node
// ONNX Runtime side of `make bench`: times one model the way `qreport run --repeat N` does.
//
// Usage: node bench/ort_bench.js MODEL.onnx INPUT.npy THREADS RUNS [LEVEL]
//
// Session: CPU EP, graphOptimizationLevel LEVEL (default 'all': QDQ groups fused into integer
// kernels, NCHWc layouts; 'disabled' is the configuration whose float bits qreport matches),
// intraOpNumThreads THREADS, interOpNumThreads 1, executionMode 'sequential'. After one
// warm-up run, RUNS runs are timed one by one (process.hrtime, monotonic) and one line goes
// to stdout:
//   ort: runs=N median_ms=X min_ms=X mean_ms=X threads=T version=V load_ms=X
// (load_ms: session creation, i.e. parse + graph optimization). ORT_NODES=1 adds a line per node
// (printNodes, below). Exit 2 when onnxruntime-node
// is missing, with the command that installs it.
// onnxruntime-node is loaded from $ORT_NODE_MODULES, else third_party/ort/node_modules (tests/tools.sh
// installs it there), else /tmp/ort/node_modules.
'use strict';
const fs = require('fs');
const path = require('path');

const INSTALL = 'tests/tools.sh   (as root; or: mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node@1.30.0)';
const ortDir = process.env.ORT_NODE_MODULES ||
  [path.join(__dirname, '..', 'third_party', 'ort', 'node_modules'), '/tmp/ort/node_modules'].find(d => fs.existsSync(path.join(d, 'onnxruntime-node'))) ||
  '/tmp/ort/node_modules';

function loadOrt() {
  try {
    return require(path.join(ortDir, 'onnxruntime-node'));
  } catch (e) {
    process.stderr.write(`ort_bench: cannot load onnxruntime-node from ${ortDir} (${e.message.split('\n')[0]}).\n` +
                         `Install it with:\n  ${INSTALL}\nor point ORT_NODE_MODULES at a node_modules folder that has it.\n`);
    process.exit(2);
  }
}

// Minimal .npy (v1-3) reader for little-endian float32, C order.
function readNpyF32(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (descr !== '<f4') throw new Error(`${file}: float32 input expected, got ${descr}`);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order not supported`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  const body = buf.subarray(off + hlen, off + hlen + 4 * n);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = body.readFloatLE(4 * i);
  return { data, dims };
}

function ms(t0, t1) { return Number(t1 - t0) / 1e6; }

async function main() {
  const [model, input, threadsArg, runsArg, levelArg] = process.argv.slice(2);
  if (!model || !input || !threadsArg || !runsArg) {
    process.stderr.write('usage: node ort_bench.js MODEL.onnx INPUT.npy THREADS RUNS [all|extended|basic|disabled]\n');
    process.exit(2);
  }
  const threads = parseInt(threadsArg, 10), runs = parseInt(runsArg, 10);
  if (!(threads >= 1) || !(runs >= 1)) throw new Error('THREADS and RUNS must be positive integers');
  const ort = loadOrt();
  const x = readNpyF32(input);
  const t0 = process.hrtime.bigint();
  const nodes = !!process.env.ORT_NODES;
  const prefix = path.join(require('os').tmpdir(), `ort_bench_prof_${process.pid}`);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: levelArg || 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    ...(nodes ? { enableProfiling: true, profileFilePrefix: prefix } : {}),
  });
  const load = ms(t0, process.hrtime.bigint());
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.dims) };
  await session.run(feeds);                                   // warm-up
  const times = [];
  for (let r = 0; r < runs; r++) {
    const a = process.hrtime.bigint();
    await session.run(feeds);
    times.push(ms(a, process.hrtime.bigint()));
  }
  const sorted = times.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  let version = 'unknown';
  try { version = require(path.join(ortDir, 'onnxruntime-node', 'package.json')).version; } catch (e) { /* keep */ }
  process.stdout.write(`ort: runs=${runs} median_ms=${median.toFixed(3)} min_ms=${sorted[0].toFixed(3)} ` +
                       `mean_ms=${mean.toFixed(3)} threads=${threads} version=${version} load_ms=${load.toFixed(3)}\n`);
  if (nodes) printNodes(session, prefix, runs);
}

// ORT_NODES=1: one line per node after the summary, `node <kernel time median us> <op> <node name>`,
// from ORT's own profiler (the 'Node' events' '<name>_kernel_time' durations of the timed runs; the
// warm-up's are dropped), in execution order; the profile file is removed. With graph optimization
// the nodes are ORT's: fused (Conv + activation, Conv + Add) and renamed (NCHWc's '<output>_nchwc'),
// so bench/node_compare.py pairs them with qreport's by operator and order, not by name.
function printNodes(session, prefix, runs) {
  session.endProfiling();
  const dir = path.dirname(prefix), base = path.basename(prefix);
  const files = fs.readdirSync(dir).filter(f => f.startsWith(base) && f.endsWith('.json')).map(f => path.join(dir, f));
  if (files.length !== 1) throw new Error(`ORT_NODES: ${files.length} profile files for ${prefix}*`);
  const events = JSON.parse(fs.readFileSync(files[0], 'utf8'));
  fs.unlinkSync(files[0]);
  const per = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!per.has(name)) per.set(name, { op: e.args && e.args.op_name || '?', us: [] });
    per.get(name).us.push(e.dur);
  }
  for (const [name, n] of per) {
    const us = n.us.slice(-runs).sort((a, b) => a - b);
    const mid = us.length >> 1, med = us.length % 2 ? us[mid] : 0.5 * (us[mid - 1] + us[mid]);
    process.stdout.write(`node ${med.toFixed(1)} ${n.op} ${name}\n`);
  }
}

main().catch(e => { process.stderr.write(`ort_bench: ${e.stack || e}\n`); process.exit(1); });
