// Joining benchmarks (issue 13), one library per process:
//   node bench/cat_bench.mjs <weft-simd|weft-simd-threads|tfjs-wasm> [--threads N] [--reps N] [--clock wall|cpu]
// Workloads (float32, contiguous inputs):
//   cat4_dim0        cat of 4 x [1024, 1024] along dim 0
//   cat4_dim1        the same along dim 1 (1024 rows of 4 blocks)
//   stack8           stack of 8 x [512, 512] along dim 0
//   memcpy_16M       weft only: y.copy_(x) of the 16 MiB a cat4 writes (the same-run ceiling)
//   memcpy_8M        weft only: the same for the 8 MiB of stack8
// weft: wt.cat / wt.stack (a new output each run, as the peers); tfjs-wasm:
// tf.concat / tf.stack. GB/s counts the bytes read + written (2 x the
// output). Warm-up, an idle wait, then the median of --reps runs
// (bench/peer_util.mjs), by wall time or, with --clock cpu, by the
// process's CPU time (robust on a loaded machine; at 2 threads it counts
// both threads). Prints one JSON line per workload: name, build, threads (as
// the library reports them), ms, GB/s.
import { createRequire } from 'node:module';
import { benchArgs, benchMain, tfjsWasmBackend } from './peer_util.mjs';

const a = benchArgs();
const peerRequire = createRequire(new URL('./peers/package.json', import.meta.url));

const M = 1024 * 1024, S = 512 * 512;
const data = (n, seed) => new Float32Array(n).map((_, i) => ((i * 7919 + seed) % 1013) / 1013 - 0.5);
const BYTES = { cat4_dim0: 2 * 16 * M, cat4_dim1: 2 * 16 * M, stack8: 2 * 32 * S, memcpy_16M: 2 * 16 * M,
  memcpy_8M: 2 * 32 * S };

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(a.threads);
  a.threads = wt.getNumThreads();
  const four = [1, 2, 3, 4].map((s) => wt.tensor(data(M, s)).view([1024, 1024]));
  const eight = [1, 2, 3, 4, 5, 6, 7, 8].map((s) => wt.tensor(data(S, s)).view([512, 512]));
  const src16 = wt.tensor(data(4 * M, 9)), dst16 = wt.empty([4 * M]);
  const src8 = wt.tensor(data(8 * S, 9)), dst8 = wt.empty([8 * S]);
  const run = (f) => () => f().dispose();
  return {
    cat4_dim0: run(() => wt.cat(four, 0)),
    cat4_dim1: run(() => wt.cat(four, 1)),
    stack8: run(() => wt.stack(eight, 0)),
    memcpy_16M: () => { dst16.copy_(src16); },
    memcpy_8M: () => { dst8.copy_(src8); },
  };
}

async function tfjsWasm() {
  const w = await tfjsWasmBackend(peerRequire, a.threads);
  const tf = w.tf;
  a.threads = w.threads;
  const four = [1, 2, 3, 4].map((s) => tf.tensor2d(data(M, s), [1024, 1024]));
  const eight = [1, 2, 3, 4, 5, 6, 7, 8].map((s) => tf.tensor2d(data(S, s), [512, 512]));
  const run = (f) => () => {
    const r = f();
    r.dataSync(); // wait for the result
    r.dispose();
  };
  return {
    cat4_dim0: run(() => tf.concat(four, 0)),
    cat4_dim1: run(() => tf.concat(four, 1)),
    stack8: run(() => tf.stack(eight, 0)),
  };
}

const libs = { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads'), 'tfjs-wasm': tfjsWasm };
await benchMain('cat_bench.mjs', libs, a, (n, ms) => ({ 'GB/s': +(BYTES[n] / (ms * 1e6)).toFixed(2) }));
