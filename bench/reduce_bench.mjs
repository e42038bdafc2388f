// Reduction benchmarks (issue 11), one library per process:
//   node bench/reduce_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm|onnxruntime-web> [--threads N] [--reps N]
// Workloads (float32):
//   sum_16M         sum of 16,777,216 values          GB/s of the bytes read
//   memcpy_16M      weft only: y.copy_(x) of the same  GB/s of bytes read + written (the same-run ceiling)
//   sum23_nchw      [32,64,56,56] summed over (2,3)    GB/s of the bytes read
//   sum23_nhwc      the same tensor channels_last (tfjs / onnxruntime-web: an NHWC tensor over (1,2))
//   softmax_512x1000, argmax_512x1000                  along the last dim, GB/s of the bytes read
// Warm-up, an idle wait for V8's background tier-up, then the median of
// --reps runs (bench/peer_util.mjs). Prints one JSON line per workload:
// name, build, threads (as the library reports them), ms, GB/s.
import { libraryArgs, onnxModel, runLibrary, tfjsWasmBackend } from './peer_util.mjs';

const { lib, reps, idleMs, peerRequire, threads: asked } = libraryArgs();
let threads = asked; // then what the library runs

const N16M = 16777216, N = 32, C = 64, H = 56, W = 56, R = 512, K = 1000;
const data = (n, seed) => new Float32Array(n).map((_, i) => ((i * 7919 + seed) % 1013) / 1013 - 0.5);
const BYTES = { sum_16M: 4 * N16M, memcpy_16M: 8 * N16M, sum23_nchw: 4 * N * C * H * W, sum23_nhwc: 4 * N * C * H * W,
  softmax_512x1000: 4 * R * K, argmax_512x1000: 4 * R * K };

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(threads);
  threads = wt.getNumThreads();
  const big = wt.tensor(data(N16M, 1));
  const copy = wt.empty([N16M]);
  const x4 = wt.tensor(data(N * C * H * W, 2)).view([N, C, H, W]);
  const x4cl = x4.contiguous({ memoryFormat: 'channels_last' });
  const m = wt.tensor(data(R * K, 3)).view([R, K]);
  const run = (f) => () => f().dispose();
  return {
    sum_16M: run(() => wt.sum(big)),
    memcpy_16M: () => { copy.copy_(big); },
    sum23_nchw: run(() => wt.sum(x4, [2, 3])),
    sum23_nhwc: run(() => wt.sum(x4cl, [2, 3])),
    softmax_512x1000: run(() => wt.softmax(m, 1)),
    argmax_512x1000: run(() => wt.argmax(m, 1)),
  };
}

async function tfjsWasm() {
  const w = await tfjsWasmBackend(peerRequire, threads);
  const tf = w.tf;
  threads = w.threads;
  const big = tf.tensor1d(data(N16M, 1));
  const x4 = tf.tensor4d(data(N * C * H * W, 2), [N, C, H, W]);
  const x4cl = tf.transpose(x4, [0, 2, 3, 1]);
  const m = tf.tensor2d(data(R * K, 3), [R, K]);
  const run = (f) => () => {
    const r = f();
    r.dataSync(); // wait for the result
    r.dispose();
  };
  return {
    sum_16M: run(() => tf.sum(big)),
    sum23_nchw: run(() => tf.sum(x4, [2, 3])),
    sum23_nhwc: run(() => tf.sum(x4cl, [1, 2])),
    softmax_512x1000: run(() => tf.softmax(m)),
    argmax_512x1000: run(() => tf.argMax(m, 1)),
  };
}

async function onnxruntimeWeb() {
  const ort = peerRequire('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  const F32 = 1, I64 = 7;
  const session = (model) => ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
  const t = (d, shape) => new ort.Tensor('float32', d, shape);
  const axes = (list) => new ort.Tensor('int64', BigInt64Array.from(list.map(BigInt)), [list.length]);
  // ReduceSum (opset 13) takes its axes as an input
  const reduceSum = (shape, outShape) => session(onnxModel('ReduceSum', [['x', F32, shape], ['axes', I64, [2]]],
    ['y', F32, outShape], { keepdims: { i: 0 } }));
  const sAll = await session(onnxModel('ReduceSum', [['x', F32, [N16M]]], ['y', F32, []], { keepdims: { i: 0 } }));
  const sNchw = await reduceSum([N, C, H, W], [N, C]);
  const sNhwc = await reduceSum([N, H, W, C], [N, C]);
  const sSoft = await session(onnxModel('Softmax', [['x', F32, [R, K]]], ['y', F32, [R, K]], { axis: { i: 1 } }));
  const sArg = await session(onnxModel('ArgMax', [['x', F32, [R, K]]], ['y', I64, [R]],
    { axis: { i: 1 }, keepdims: { i: 0 } }));
  const x4 = data(N * C * H * W, 2);
  const x4cl = new Float32Array(x4.length);
  for (let n = 0; n < N; n++) for (let c = 0; c < C; c++) for (let p = 0; p < H * W; p++) {
    x4cl[(n * H * W + p) * C + c] = x4[(n * C + c) * H * W + p];
  }
  const run = (s, feeds) => async () => {
    const out = await s.run(feeds);
    for (const v of Object.values(out)) v.dispose?.();
  };
  const m = t(data(R * K, 3), [R, K]);
  return {
    sum_16M: run(sAll, { x: t(data(N16M, 1), [N16M]) }),
    sum23_nchw: run(sNchw, { x: t(x4, [N, C, H, W]), axes: axes([2, 3]) }),
    sum23_nhwc: run(sNhwc, { x: t(x4cl, [N, H, W, C]), axes: axes([1, 2]) }),
    softmax_512x1000: run(sSoft, { x: m }),
    argmax_512x1000: run(sArg, { x: m }),
  };
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'), 'tfjs-wasm': tfjsWasm,
  'onnxruntime-web': onnxruntimeWeb };
await runLibrary({
  script: 'reduce_bench.mjs', libs, lib, want: threads, threadsNow: () => threads, reps, idleMs,
  row: (n, t, build) => ({ name: n, build, threads, ms: +t.toFixed(3), 'GB/s': +(BYTES[n] / (t * 1e6)).toFixed(2), reps }),
});
