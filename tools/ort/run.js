#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime's CPU engine on .npy inputs and writes .npy outputs
// (or, with --bench, prints latency). kiln's tests and benchmarks use it as the reference peer.
//
// usage: node run.js MODEL.onnx --inputs DIR --outputs DIR [--threads N]
//        node run.js MODEL.onnx --inputs DIR --bench [--threads N] [--warmup N] [--repeat N] [--profile FILE]
// --profile writes ONNX Runtime's profiler trace of the bench runs (per-node times, Chrome trace
// JSON) to FILE; bench/layers.py reads it. The profiler adds its own cost to every node.
// Inputs are DIR/<name>.npy with every character outside [A-Za-z0-9._-] replaced by '_'.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kDtypes = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array], '<f2': ['float16', Uint16Array],
};

function sanitize(name) { return name.replace(/[^A-Za-z0-9._-]/g, '_'); }

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not an .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const [type, Ctor] = kDtypes[descr] || [];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr}`);
  const body = buf.subarray(start + headerLen);
  const data = new Ctor(body.buffer.slice(body.byteOffset, body.byteOffset + body.length));
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, shape);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(kDtypes).find(([, [t]]) => t === tensor.type);
  if (!entry) throw new Error(`output type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head);
  head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool' ? Uint8Array.from(tensor.data, v => (v ? 1 : 0)) : tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

function parseArgs(argv) {
  const args = { model: null, threads: 1, warmup: 5, repeat: 20 };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--bench') args.bench = true;
    else if (a.startsWith('--')) args[a.slice(2)] = argv[++i];
    else args.model = a;
  }
  if (!args.model || !args.inputs) throw new Error('usage: run.js MODEL.onnx --inputs DIR (--outputs DIR | --bench)');
  return args;
}

// Times session.run with the inputs wrapped once beforehand and the outputs preallocated, so
// that, like `kiln bench` (GraphExecutor::run on inputs set once), a timed call neither reads
// inputs nor allocates and copies outputs; what remains is the binding's fixed cost per call
// (argument conversion, one setImmediate, the promise), which bench/run.sh measures apart.
// One untimed run first learns the output shapes; it counts as a warm-up run.
async function bench(session, feeds, warmup, repeat) {
  const first = await session.run(feeds);
  const fetches = {};
  for (const name of session.outputNames) {
    const out = first[name];
    fetches[name] = new ort.Tensor(out.type, new out.data.constructor(out.data.length), out.dims);
  }
  for (let i = 1; i < warmup; ++i) await session.run(feeds, fetches);
  const times = [];
  for (let i = 0; i < repeat; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds, fetches);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  // The same median as kiln bench: the mean of the middle two of an even count.
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  console.log(`median_ms=${median.toFixed(4)} min_ms=${times[0].toFixed(4)}`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const threads = Number(args.threads);
  const options = {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
  };
  // ORT names the trace PREFIX_<date>.json; a fresh folder holds only ours.
  const traceDir = args.profile ? fs.mkdtempSync(path.join(path.dirname(path.resolve(args.profile)), '.ort-trace-')) : null;
  if (traceDir) Object.assign(options, { enableProfiling: true, profileFilePrefix: path.join(traceDir, 'trace') });
  const session = await ort.InferenceSession.create(args.model, options);
  const feeds = {};
  for (const name of session.inputNames) feeds[name] = readNpy(path.join(args.inputs, sanitize(name) + '.npy'));
  if (args.bench) {
    await bench(session, feeds, Number(args.warmup), Number(args.repeat));
    if (traceDir) {
      session.endProfiling();
      fs.renameSync(path.join(traceDir, fs.readdirSync(traceDir)[0]), args.profile);
      fs.rmdirSync(traceDir);
    }
    return;
  }
  const results = await session.run(feeds);
  fs.mkdirSync(args.outputs, { recursive: true });
  for (const name of session.outputNames) writeNpy(path.join(args.outputs, sanitize(name) + '.npy'), results[name]);
}

main().catch(e => { console.error(`ort: error: ${e.message}`); process.exit(1); });
