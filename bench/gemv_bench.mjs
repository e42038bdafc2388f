// Matrix-vector benchmarks (issue 24: a decode step's products), weft only, one process per thread count:
//   node bench/gemv_bench.mjs weft-simd-threads [--threads N] [--reps N] [--dist DIR]
// The llama2.c stories15M shapes (dim 288, hidden 768, vocab 32000), one input row, float32:
//   t_NxK   wt.linear(x [1, K], W [N, K])   x @ W^T, the weight read along its rows
//   n_NxK   wt.matmul(x [1, K], W [K, N])   x @ W, a pre-transposed weight
//   copy_NxK  y.copy_(W): the same-run ceiling, a memcpy of the weight
// GB/s = the weight's bytes / time (copy too: a copy of W's size); ratio = GB/s / copy's GB/s at
// the same shape = copy's time / this one's, so 1.0 reads the weight in the time a copy of it takes. A call is repeated until a
// timed sample is ~1 ms, and ms is per call: output allocation, dispatch and dispose included.
// --dist DIR loads weft from DIR/index.js (another build, e.g. the one before the GEMV path), and
// `node bench/run.mjs --only gemv --gemv-baseline DIR` sets its rows beside these.
import { pathToFileURL } from 'node:url';
import { benchArgs, benchMain } from './peer_util.mjs';

const cli = benchArgs();
const dist = (() => {
  const i = process.argv.indexOf('--dist');
  return i >= 0 ? process.argv[i + 1] : null;
})();
const SHAPES = [[288, 288], [768, 288], [288, 768], [32000, 288]];
const data = (n, seed) => new Float32Array(n).map((_, i) => ((i * 7919 + seed) % 1013) / 1013 - 0.5);
const repeat = (n, k) => Math.max(1, Math.round(1e6 / (n * k))); // calls per ~1 ms sample at ~4 GB/s
const BYTES = {};

async function weft() {
  const { init } = await import(dist ? pathToFileURL(`${dist}/index.js`).href : 'weft');
  const wt = await init({ variant: 'simd-threads' });
  await wt.threadsReady(); // the pthread workers load after init()
  wt.setNumThreads(cli.threads);
  cli.threads = wt.getNumThreads();
  const out = {};
  for (const [n, k] of SHAPES) {
    const x = wt.tensor(data(k, 1)).view([1, k]);
    const w = wt.tensor(data(n * k, 2)).view([n, k]);
    const wT = w.t().contiguous();
    const y = wt.empty([n, k]);
    const calls = repeat(n, k), tag = `${n}x${k}`;
    const loop = (f) => () => { for (let i = 0; i < calls; i++) f(); };
    out[`t_${tag}`] = loop(() => wt.linear(x, w).dispose());
    out[`n_${tag}`] = loop(() => wt.matmul(x, wT).dispose());
    out[`copy_${tag}`] = loop(() => { y.copy_(w); });
    for (const p of ['t', 'n', 'copy']) BYTES[`${p}_${tag}`] = [4 * n * k, calls];
  }
  return out;
}

await benchMain('gemv_bench.mjs', { 'weft-simd-threads': weft }, cli, (name, ms) => {
  const [bytes, calls] = BYTES[name];
  const per = ms / calls;
  return { ms_call: +per.toFixed(4), 'GB/s': +(bytes / (per * 1e6)).toFixed(2), ...(dist ? { dist } : {}) };
});
