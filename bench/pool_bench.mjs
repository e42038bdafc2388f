// Pooling benchmarks (issue 12), one library per process:
//   node bench/pool_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm|onnxruntime-web> [--threads N] [--reps N]
// float32 x [8, 64, 56, 56]: maxPool2d 2x2 stride 2, avgPool2d 2x2 stride 2
// and global average pooling (adaptiveAvgPool2d to 1x1), each on NCHW and
// on channels_last (NHWC) memory. weft: wt.maxPool2d / avgPool2d /
// adaptiveAvgPool2d on a contiguous or a channels_last tensor; tfjs-wasm
// (NHWC only, so both rows run its NHWC op): maxPool / avgPool / mean over
// H and W; onnxruntime-web (NCHW only): MaxPool / AveragePool /
// GlobalAveragePool nodes built in memory. Warm-up, an idle wait, then the
// median of --reps runs. Prints one JSON line per workload: name, build,
// threads (as the library reports them), ms.
import { createRequire } from 'node:module';
import { libArgs, medianTimes, onnxModel, tfjsWasmBackend } from './peer_util.mjs';

const { lib, reps, idleMs } = libArgs();
let { threads } = libArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));

const N = 8, C = 64, H = 56, W = 56, NX = N * C * H * W;
const data = new Float32Array(NX).map((_, i) => ((i * 7919) % 1013) / 1013 - 0.5);

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(threads);
  threads = wt.getNumThreads();
  const x = wt.tensor(data).view([N, C, H, W]);
  const xc = x.contiguous({ memoryFormat: 'channels_last' });
  const run = (f) => () => f().dispose();
  return {
    maxpool2x2_nchw: run(() => wt.maxPool2d(x, 2)),
    maxpool2x2_nhwc: run(() => wt.maxPool2d(xc, 2)),
    avgpool2x2_nchw: run(() => wt.avgPool2d(x, 2)),
    avgpool2x2_nhwc: run(() => wt.avgPool2d(xc, 2)),
    gap_nchw: run(() => wt.adaptiveAvgPool2d(x, 1)),
    gap_nhwc: run(() => wt.adaptiveAvgPool2d(xc, 1)),
  };
}

async function tfjsWasm() {
  const w = await tfjsWasmBackend(peerRequire, threads);
  const tf = w.tf;
  threads = w.threads;
  const x = tf.tensor4d(data, [N, H, W, C]); // tfjs pools NHWC only
  const run = (f) => () => {
    const r = f();
    r.dataSync();
    r.dispose();
  };
  const maxp = run(() => tf.maxPool(x, 2, 2, 'valid'));
  const avgp = run(() => tf.avgPool(x, 2, 2, 'valid'));
  const gap = run(() => tf.mean(x, [1, 2], true));
  return { maxpool2x2_nchw: maxp, maxpool2x2_nhwc: maxp, avgpool2x2_nchw: avgp, avgpool2x2_nhwc: avgp, gap_nchw: gap,
    gap_nhwc: gap };
}

async function onnxruntimeWeb() {
  const ort = peerRequire('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  const F32 = 1, sx = [N, C, H, W];
  const pool = { kernel_shape: { ints: [2, 2] }, strides: { ints: [2, 2] } };
  const session = (op, outShape, attrs) => ort.InferenceSession.create(
    onnxModel(op, [['x', F32, sx]], ['y', F32, outShape], attrs), { executionProviders: ['wasm'] });
  const sMax = await session('MaxPool', [N, C, H / 2, W / 2], pool);
  const sAvg = await session('AveragePool', [N, C, H / 2, W / 2], pool);
  const sGap = await session('GlobalAveragePool', [N, C, 1, 1], {});
  const feeds = { x: new ort.Tensor('float32', data, sx) };
  const run = (s) => async () => {
    const r = await s.run(feeds);
    for (const t of Object.values(r)) t.dispose?.();
  };
  // NCHW only: the nhwc rows run the same NCHW op
  return { maxpool2x2_nchw: run(sMax), maxpool2x2_nhwc: run(sMax), avgpool2x2_nchw: run(sAvg),
    avgpool2x2_nhwc: run(sAvg), gap_nchw: run(sGap), gap_nhwc: run(sGap) };
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'), 'tfjs-wasm': tfjsWasm,
  'onnxruntime-web': onnxruntimeWeb };
if (!libs[lib]) {
  console.error(`usage: pool_bench.mjs <${Object.keys(libs).join('|')}> [--threads N] [--reps N]`);
  process.exit(2);
}
const want = threads;
const work = await libs[lib]();
if (threads !== want) {
  console.error(`pool_bench ${lib}: ${want} threads asked, it runs ${threads}; skipped`);
  process.exit(0);
}
const ms = await medianTimes(work, reps, idleMs);
const build = lib.startsWith('weft-') ? `wasm-${lib.slice(5)}` : lib;
for (const [n, m] of Object.entries(ms)) console.log(JSON.stringify({ name: n, build, threads, ms: +m.toFixed(4), reps }));
process.exit(0);
