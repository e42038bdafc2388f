// Scans and two-result reductions (issue 11), weft wasm only, one variant per process:
//   node bench/scan_bench.mjs [simd|simd-threads] [--threads N] [--reps N]
// float32 cumsum of [512, 4096] along the inner dim (one sequential scan per
// row, rows split over threads) and along dim 0 (vectorized across the 4096
// kept columns), cumsum of [4096, 512] along dim 0, and max(x, 1) of
// [512, 1000] ({ values, indices }). Warm-up, an idle wait, then the median of
// --reps runs (bench/peer_util.mjs). Prints one JSON line per workload: name,
// build, threads, ms, GB/s (bytes read + written).
import { libArgs, medianTimes } from './peer_util.mjs';

const cli = libArgs();
const variant = cli.lib ?? 'simd-threads';
const reps = cli.reps;

const { init } = await import('weft');
const wt = await init({ variant });
await wt.threadsReady(); // the pthread workers load after init()
if (variant === 'simd-threads') wt.setNumThreads(cli.threads);
const threads = wt.getNumThreads();
const a = wt.rand([512, 4096]);
const b = wt.rand([4096, 512]);
const c = wt.rand([512, 1000]);
// name: [work, bytes moved]
const WORK = {
  cumsum_512x4096_dim1: [() => wt.cumsum(a, 1).dispose(), 2 * 4 * 512 * 4096],
  cumsum_512x4096_dim0: [() => wt.cumsum(a, 0).dispose(), 2 * 4 * 512 * 4096],
  cumsum_4096x512_dim0: [() => wt.cumsum(b, 0).dispose(), 2 * 4 * 512 * 4096],
  max_dim_512x1000: [() => { const r = wt.max(c, 1); r.values.dispose(); r.indices.dispose(); }, 4 * 512 * 1000],
};
const ms = await medianTimes(Object.fromEntries(Object.entries(WORK).map(([n, [f]]) => [n, f])), reps, 500);
for (const [name, [, bytes]] of Object.entries(WORK)) {
  const t = ms[name];
  console.log(JSON.stringify({ name, build: `wasm-${variant}`, threads, ms: +t.toFixed(3),
    'GB/s': +(bytes / t / 1e6).toFixed(2) }));
}
