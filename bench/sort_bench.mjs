// Sorting benchmarks (issue 13), one library per process:
//   node bench/sort_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm> [--threads N] [--reps N]
// float32 x [512, 1000], along the last dim: topk k=5 (the target:
// ahead of tfjs-wasm), topk k=100, and a full sort (tfjs has no sort op: its
// topk with k=1000, sorted). weft: x.topk / x.sort; tfjs-wasm: tf.topk.
// Warm-up, an idle wait, then the median of --reps runs; one JSON line per
// workload: name, build, threads, ms.
import { createRequire } from 'node:module';
import { benchArgs, benchMain, tfjsInit } from './peer_util.mjs';

const a = benchArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));
const R = 512, C = 1000;
const data = new Float32Array(R * C).map((_, i) => ((i * 7919) % 100003) / 100003 - 0.5);

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(a.threads);
  a.threads = wt.getNumThreads();
  const x = wt.tensor(data).view([R, C]);
  const both = (f) => () => {
    const { values, indices } = f();
    values.dispose();
    indices.dispose();
  };
  return {
    topk5: both(() => x.topk(5)),
    topk100: both(() => x.topk(100)),
    sort: both(() => x.sort()),
  };
}

async function tfjsWasm() {
  const tf = await tfjsInit(peerRequire, a);
  const x = tf.tensor2d(data, [R, C]);
  const run = (k) => () => {
    const { values, indices } = tf.topk(x, k, true);
    values.dataSync();
    indices.dataSync();
    values.dispose();
    indices.dispose();
  };
  return { topk5: run(5), topk100: run(100), sort: run(C) };
}

await benchMain('sort_bench.mjs', { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'),
  'tfjs-wasm': tfjsWasm }, a, () => ({}));
