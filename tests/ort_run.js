#!/usr/bin/env node
// tests/ort_run.js — runs an ONNX model with ONNX Runtime (development tool for tests/test_deploy.c:
// extracted and emitted models). Usage: node tests/ort_run.js MODEL.onnx OUT_DIR LEVEL IN0.npy [IN1.npy ...]
// Inputs: float32 .npy, one per graph input in order. Writes OUT_DIR/output_<i>.npy (float32 / integer types).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(process.env.ORT_NODE_MODULES ||
  [path.join(__dirname, '..', 'third_party', 'ort', 'node_modules'), '/tmp/ort/node_modules'].find(d => fs.existsSync(path.join(d, 'onnxruntime-node'))) ||
  '/tmp/ort/node_modules', 'onnxruntime-node'));
const DESCR = { float32: ['<f4', Float32Array], int8: ['|i1', Int8Array], uint8: ['|u1', Uint8Array],
  int16: ['<i2', Int16Array], uint16: ['<u2', Uint16Array], int32: ['<i4', Int32Array], int64: ['<i8', BigInt64Array] };
function readF32(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8), off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + hlen);
  if (!/'descr':\s*'<f4'/.test(header)) throw new Error(`${file}: only <f4`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  const body = buf.subarray(off + hlen);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = body.readFloatLE(i * 4);
  return new ort.Tensor('float32', data, shape);
}
function npy(t) {
  const d = DESCR[t.type];
  if (!d) throw new Error(`unsupported output type ${t.type}`);
  const dims = t.dims;
  const shapeStr = dims.length === 0 ? '()' : dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${d[0]}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]);
}
(async () => {
  const [model, outDir, level, ...inputs] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: level, intraOpNumThreads: 1,
    interOpNumThreads: 1, executionMode: 'sequential', executionProviders: ['cpu'] });
  if (inputs.length !== s.inputNames.length) throw new Error(`${model}: ${s.inputNames.length} inputs, ${inputs.length} given`);
  const feeds = {};
  s.inputNames.forEach((n, i) => { feeds[n] = readF32(inputs[i]); });
  const r = await s.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  s.outputNames.forEach((n, i) => fs.writeFileSync(path.join(outDir, `output_${i}.npy`), npy(r[n])));
})().catch(e => { console.error(String(e)); process.exit(1); });
