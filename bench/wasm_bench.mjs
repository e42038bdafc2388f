// One wasm variant of the issue-5 benchmarks, in its own process:
//   node bench/wasm_bench.mjs <simd|simd-threads> [--threads 1,2] [--reps N]
// Loads the dist/ build the way js/index.js does, warms every workload up,
// waits for V8 to finish its background tier-up (it recompiles hot wasm for
// up to ~2 s and takes the second core meanwhile), then runs the reps
// round-robin over the workloads and prints one JSON line per workload and
// thread count: median ms, GB/s, the ratio to its ceiling from this run
// (of the medians) and ratio_paired (the median over rounds of the ratio
// within a round).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';

const args = process.argv.slice(2);
const variant = args[0];
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const reps = Math.max(1, Number(opt('--reps', '15')));
const threadList = opt('--threads', variant === 'simd' ? '1' : '1,2').split(',').map(Number);
const idleMs = Number(opt('--idle-ms', '2500'));
if (variant !== 'simd' && variant !== 'simd-threads') {
  console.error('usage: wasm_bench.mjs <simd|simd-threads> [--threads 1,2] [--reps N] [--idle-ms MS]');
  process.exit(2);
}

const dist = new URL('../dist/', import.meta.url);
const glue = new URL(`./node/weft-${variant}.js`, dist);
const wasm = new URL(`./weft-${variant}.wasm`, dist);
if (!existsSync(glue) || !existsSync(wasm)) {
  console.error(`wasm_bench: ${fileURLToPath(glue)} is not built (npm run build)`);
  process.exit(1);
}
const M = await createRequire(import.meta.url)(fileURLToPath(glue))({ wasmBinary: await readFile(wasm) });
if (M.PThread) for (const w of [...M.PThread.unusedWorkers, ...M.PThread.runningWorkers]) w.unref?.();

const fail = (what) => {
  const msg = M._weft_last_error ? M.UTF8ToString(M._weft_last_error()) : '';
  console.error(`wasm_bench ${variant}: ${what}${msg ? `: ${msg}` : ''}`);
  process.exit(1);
};
if (M._weft_wasm_bench_setup() !== 0) fail('setup');
const count = M._weft_wasm_bench_count();
const names = [...Array(count).keys()].map((w) => M.UTF8ToString(M._weft_wasm_bench_name(w)));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

for (const want of threadList) {
  const threads = M._weft_wasm_bench_set_threads(want);
  if (threads !== want) {
    console.error(`wasm_bench ${variant}: ${want} threads asked, the build gives ${threads}; skipped`);
    continue;
  }
  // warm up for at least a second (every workload several times), then let
  // the background compiler finish before timing anything
  const warmEnd = performance.now() + 1000;
  for (let r = 0; r < 3 || performance.now() < warmEnd; r++) {
    for (let w = 0; w < count; w++) if (M._weft_wasm_bench_run(w) !== 0) fail(`${names[w]}`);
  }
  await sleep(idleMs);
  const t = names.map(() => []);
  for (let r = 0; r < reps; r++) {
    for (let w = 0; w < count; w++) {
      const t0 = performance.now();
      M._weft_wasm_bench_run(w);
      t[w].push(performance.now() - t0);
    }
  }
  const bad = M._weft_wasm_bench_verify();
  if (bad !== 0) fail(`${names[bad - 1]} computed a wrong result`);
  const med = t.map(median);
  // the ratio within each round (the ceiling ran moments before), median
  // over rounds: steadier than the ratio of medians on a busy machine
  const paired = (w, c) => median(t[w].map((tw, r) => (M._weft_wasm_bench_bytes(w) / tw) / (M._weft_wasm_bench_bytes(c) / t[c][r])));
  for (let w = 0; w < count; w++) {
    const c = M._weft_wasm_bench_ceiling(w);
    const gbs = M._weft_wasm_bench_bytes(w) / (med[w] * 1e6);
    const cgbs = M._weft_wasm_bench_bytes(c) / (med[c] * 1e6);
    console.log(JSON.stringify({
      name: names[w], build: `wasm-${variant}`, threads, ms: +med[w].toFixed(3), 'GB/s': +gbs.toFixed(2),
      ratio: +(gbs / cgbs).toFixed(3), ratio_paired: +paired(w, c).toFixed(3), ceiling: names[c], reps,
    }));
  }
}
M._weft_wasm_bench_teardown();
