// Shared by the peer benchmarks (bench/peers.mjs, bench/gemm_bench.mjs,
// bench/conv_bench.mjs): the hand-encoded one-node ONNX model, the timing
// loop, and the command line and main of a one-library script.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { tfjsWasmThreaded } from './tfjs_threads.mjs';

// The command line of a one-library benchmark script:
//   <lib> [--threads N] [--reps N] [--idle-ms N]
export function libArgs(argv = process.argv.slice(2)) {
  const a = benchArgs(argv);
  delete a.clock;
  return a;
}

// Warms every workload up (3 rounds and at least a second), waits idleMs for
// V8's background tier-up, then runs reps rounds over the workloads; returns
// each workload's median ms. A workload may be async (awaited). clock
// 'cpu': the process's CPU time (all its threads) instead of the wall
// clock, which a loaded machine inflates; at one thread the two agree on
// an idle one.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
export async function medianTimes(work, reps, idleMs, clock = 'wall') {
  const now = clock === 'cpu' ? cpuMs : () => performance.now();
  const names = Object.keys(work);
  const warmEnd = performance.now() + 1000;
  for (let r = 0; r < 3 || performance.now() < warmEnd; r++) for (const n of names) await work[n]();
  await sleep(idleMs);
  const t = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < reps; r++) {
    for (const n of names) {
      const t0 = now();
      await work[n]();
      t[n].push(now() - t0);
    }
  }
  return Object.fromEntries(names.map((n) => [n, [...t[n]].sort((p, q) => p - q)[reps >> 1]]));
}

// A one-node ONNX model, protobuf-encoded by hand (onnx.proto field numbers).
// inputs: [name, elemType, shape] graph inputs, or [name, 1 (float), shape,
// Float32Array] initializers (constant weights, which a runtime may prepack).
export function onnxModel(opType, inputs, output, attrs) {
  const varint = (v) => {
    const out = [];
    let n = BigInt(v);
    do {
      let byte = Number(n & 0x7fn);
      n >>= 7n;
      if (n) byte |= 0x80;
      out.push(byte);
    } while (n);
    return out;
  };
  const key = (field, wire) => varint((field << 3) | wire);
  const bytes = (field, data) => [...key(field, 2), ...varint(data.length), ...data];
  const str = (field, s) => bytes(field, [...Buffer.from(s)]);
  const int = (field, v) => [...key(field, 0), ...varint(v)];
  const valueInfo = (name, elemType, shape) =>
    [...str(1, name), ...bytes(2, bytes(1, [...int(1, elemType), ...bytes(2, shape.flatMap((d) => bytes(1, int(1, d))))]))];
  const attr = (name, a) => bytes(5, [...str(1, name),
    ...(a.ints ? [...a.ints.flatMap((v) => int(8, v)), ...int(20, 7)] : [...int(3, a.i), ...int(20, 2)])]);
  const node = bytes(1, [...inputs.flatMap(([n]) => str(1, n)), ...str(2, output[0]), ...str(4, opType),
    ...Object.entries(attrs).flatMap(([k, v]) => attr(k, v))]);
  const tensorProto = (name, t, shape, v) => [...shape.flatMap((d) => int(1, d)), ...int(2, t), ...str(8, name),
    ...bytes(9, [...new Uint8Array(v.buffer, v.byteOffset, v.byteLength)])];
  const graph = [...node, ...str(2, 'g'),
    ...inputs.filter((i) => i[3]).flatMap(([n, t, s, v]) => bytes(5, tensorProto(n, t, s, v))),
    ...inputs.filter((i) => !i[3]).flatMap(([n, t, s]) => bytes(11, valueInfo(n, t, s))),
    ...bytes(12, valueInfo(...output))];
  return Uint8Array.from([...int(1, 8), ...bytes(8, [...str(1, ''), ...int(2, 13)]), ...bytes(7, graph)]);
}

// The command line of a one-library benchmark: <lib> [--threads N] [--reps N] [--idle-ms N] [--clock wall|cpu].
export function benchArgs(argv = process.argv.slice(2)) {
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
  };
  return { lib: argv[0], reps: Math.max(1, Number(opt('--reps', '15'))), threads: Number(opt('--threads', '1')),
    idleMs: Number(opt('--idle-ms', '2500')), clock: opt('--clock', 'wall') };
}

// Sets up libs[a.lib] (which sets a.threads to the count the library really
// runs), times its workloads and prints one JSON line per workload: name,
// build, threads, ms, reps and the fields of figures(name, ms); then exits.
export async function benchMain(script, libs, a, figures) {
  if (!libs[a.lib]) {
    console.error(`usage: ${script} <${Object.keys(libs).join('|')}> [--threads N] [--reps N]`);
    process.exit(2);
  }
  const want = a.threads;
  const work = await libs[a.lib]();
  if (a.threads !== want) { // the library runs another count here
    console.error(`${script} ${a.lib}: ${want} threads asked, it runs ${a.threads}; skipped`);
    process.exit(0);
  }
  const ms = await medianTimes(work, a.reps, a.idleMs, a.clock);
  const build = a.lib.startsWith('weft-') ? `wasm-${a.lib.slice(5)}` : a.lib;
  for (const [n, m] of Object.entries(ms)) {
    console.log(JSON.stringify({ name: n, build, threads: a.threads, ms: +m.toFixed(3), ...figures(n, m), reps: a.reps,
      ...(a.clock === 'cpu' ? { clock: 'cpu' } : {}) }));
  }
  process.exit(0);
}

// onnxruntime-web (from the peers' node_modules) on `threads` threads with SIMD.
export function ortInit(peerRequire, threads) {
  const ort = peerRequire('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  return ort;
}

// A workload: one run of a session of `model` (bytes) on `feeds`.
export async function ortWorkload(ort, model, feeds) {
  const s = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
  return async () => {
    const r = await s.run(feeds);
    for (const t of Object.values(r)) t.dispose?.();
  };
}

// weft's `variant` from dist/, on cli.threads threads when it has threads;
// cli.threads becomes the count it runs.
export async function weftInit(variant, cli) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(cli.threads);
  cli.threads = wt.getNumThreads();
  return wt;
}

// tfjs with its wasm backend on cli.threads threads (its threaded build
// in Node through bench/tfjs_threads.mjs); cli.threads becomes the count it runs.
export async function tfjsInit(peerRequire, cli) {
  const { tf, threads } = await tfjsWasmThreaded(peerRequire, cli.threads);
  cli.threads = threads;
  return tf;
}

// A one-library bench script's command line: <lib> [--threads N] [--reps N]
// [--idle-ms MS], and a require() that finds the peers in bench/peers/.
export function libraryArgs() {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
  };
  return {
    lib: args[0], reps: Math.max(1, Number(opt('--reps', '15'))), threads: Number(opt('--threads', '1')),
    idleMs: Number(opt('--idle-ms', '2500')), peerRequire: createRequire(new URL('./peers/package.json', import.meta.url)),
  };
}

// tfjs-core on its wasm backend with `threads` threads asked; { tf, threads }
// with the count it runs.
export const tfjsWasmBackend = tfjsWasmThreaded;

// A one-library bench script's main step: makes lib's workloads (libs[lib]()),
// skips the run when the library does not run the thread count asked
// (threadsNow() after its init: tfjs-wasm in Node runs one), times them and
// prints row(name, median ms, build) as one JSON line each; then exits.
export async function runLibrary({ script, libs, lib, want, threadsNow, reps, idleMs, row }) {
  if (!libs[lib]) {
    console.error(`usage: ${script} <${Object.keys(libs).join('|')}> [--threads N] [--reps N]`);
    process.exit(2);
  }
  const work = await libs[lib]();
  if (threadsNow() !== want) {
    console.error(`${script} ${lib}: ${want} threads asked, it runs ${threadsNow()}; skipped`);
    process.exit(0);
  }
  const ms = await medianTimes(work, reps, idleMs);
  const build = lib.startsWith('weft-') ? `wasm-${lib.slice(5)}` : lib;
  for (const [n, m] of Object.entries(ms)) console.log(JSON.stringify(row(n, m, build)));
  process.exit(0);
}
