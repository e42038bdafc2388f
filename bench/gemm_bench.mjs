// GEMM benchmarks (issue 12), one library per process:
//   node bench/gemm_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm|onnxruntime-web> [--threads N] [--reps N]
// float32 mm at 256^3, 512^3 and 1024^3, and x @ w.T with x [64, 784] and
// w [256, 784] (weft: wt.linear(x, w), which reads w transposed in place;
// tfjs: matMul(x, w, false, true); onnxruntime-web: one Gemm node with
// transB = 1). Warm-up, an idle wait for V8's background tier-up, then the
// median of --reps runs. Prints one JSON line per workload: name, build,
// threads (as the library reports them), ms, GFLOP/s = 2 M N K / time.
import { libraryArgs, onnxModel, runLibrary, tfjsWasmBackend } from './peer_util.mjs';

const { lib, reps, idleMs, peerRequire, threads: asked } = libraryArgs();
let threads = asked; // then what the library runs

// name: [M, N, K, w transposed]
const WORK = { mm_256: [256, 256, 256, false], mm_512: [512, 512, 512, false], mm_1024: [1024, 1024, 1024, false],
  linear_64x784x256: [64, 256, 784, true] };
const data = (n, seed) => new Float32Array(n).map((_, i) => ((i * 7919 + seed) % 1013) / 1013 - 0.5);

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  if (variant === 'simd-threads') wt.setNumThreads(threads);
  threads = wt.getNumThreads();
  const out = {};
  for (const [name, [m, n, k, wT]] of Object.entries(WORK)) {
    const a = wt.tensor(data(m * k, 1)).view([m, k]);
    const b = wt.tensor(data(k * n, 2)).view(wT ? [n, k] : [k, n]);
    out[name] = () => (wT ? wt.linear(a, b) : wt.mm(a, b)).dispose();
  }
  return out;
}

async function tfjsWasm() {
  const w = await tfjsWasmBackend(peerRequire, threads);
  const tf = w.tf;
  threads = w.threads;
  const out = {};
  for (const [name, [m, n, k, wT]] of Object.entries(WORK)) {
    const a = tf.tensor2d(data(m * k, 1), [m, k]);
    const b = tf.tensor2d(data(k * n, 2), wT ? [n, k] : [k, n]);
    out[name] = () => {
      const r = tf.matMul(a, b, false, wT);
      r.dataSync(); // wait for the result
      r.dispose();
    };
  }
  return out;
}

async function onnxruntimeWeb() {
  const ort = peerRequire('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  const F32 = 1;
  const out = {};
  for (const [name, [m, n, k, wT]] of Object.entries(WORK)) {
    const bShape = wT ? [n, k] : [k, n];
    const model = onnxModel('Gemm', [['a', F32, [m, k]], ['b', F32, bShape]], ['y', F32, [m, n]],
      wT ? { transB: { i: 1 } } : {});
    const s = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
    const feeds = { a: new ort.Tensor('float32', data(m * k, 1), [m, k]), b: new ort.Tensor('float32', data(k * n, 2), bShape) };
    out[name] = async () => {
      const r = await s.run(feeds);
      for (const t of Object.values(r)) t.dispose?.();
    };
  }
  return out;
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'), 'tfjs-wasm': tfjsWasm,
  'onnxruntime-web': onnxruntimeWeb };
await runLibrary({
  script: 'gemm_bench.mjs', libs, lib, want: threads, threadsNow: () => threads, reps, idleMs,
  row: (n, m, build) => {
    const [rows, cols, depth] = WORK[n];
    return { name: n, build, threads, ms: +m.toFixed(3), 'GFLOP/s': +((2 * rows * cols * depth) / (m * 1e6)).toFixed(2), reps };
  },
});
