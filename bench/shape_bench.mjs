// Shape ops (issue 13), weft wasm only, one variant per process:
//   node bench/shape_bench.mjs [simd | simd-threads | weft-simd-threads] [--threads N] [--reps N]
// float32 [1024, 1024]: clone (the copy ceiling of the same run), flip of
// both dims, roll along both dims, repeat [2, 1], tile, repeatInterleave(2)
// along dim 1, tril (a copy, then a zeroed triangle) and clamp(-0.5, 0.5).
// Warm-up, an idle wait, then the median of --reps runs (bench/peer_util.mjs).
// Prints one JSON line per workload: name, build, threads, ms, GB/s (bytes
// read + written) and vs_clone (its GB/s over clone's).
import { libArgs, medianTimes } from './peer_util.mjs';

const cli = libArgs();
const variant = (cli.lib ?? 'simd-threads').replace(/^weft-/, '');
const reps = cli.reps;

const { init } = await import('weft');
const wt = await init({ variant });
await wt.threadsReady(); // the pthread workers load after init()
if (variant === 'simd-threads') wt.setNumThreads(cli.threads);
const threads = wt.getNumThreads();
const x = wt.rand([1024, 1024]);
const MB = 4 * 1024 * 1024;
// name: [work, bytes moved]
const WORK = {
  clone: [() => x.clone().dispose(), 2 * MB],
  flip: [() => x.flip(0, 1).dispose(), 2 * MB],
  roll: [() => x.roll([3, -5], [0, 1]).dispose(), 2 * MB],
  repeat_2x1: [() => x.repeat(2, 1).dispose(), 3 * MB],
  tile_1x2: [() => x.tile([1, 2]).dispose(), 3 * MB],
  repeat_interleave_2: [() => x.repeatInterleave(2, { dim: 1 }).dispose(), 3 * MB],
  tril: [() => x.tril().dispose(), 2 * MB],
  clamp: [() => x.clamp(-0.5, 0.5).dispose(), 2 * MB],
};
const ms = await medianTimes(Object.fromEntries(Object.entries(WORK).map(([n, [f]]) => [n, f])), reps, 500);
const gbs = (name) => WORK[name][1] / ms[name] / 1e6;
for (const name of Object.keys(WORK)) {
  console.log(JSON.stringify({ name, build: `wasm-${variant}`, threads, ms: +ms[name].toFixed(3),
    'GB/s': +gbs(name).toFixed(2), vs_clone: +(gbs(name) / gbs('clone')).toFixed(2) }));
}
