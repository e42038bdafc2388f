// Fused attention (issue 24), weft wasm only, one variant per process:
//   node bench/attention_bench.mjs [weft-simd-threads|weft-simd] [--threads N] [--reps N]
// Forward scaled_dot_product_attention of float32 q, k, v [1, 8, 1024, 64]
// (L = S = 1024, d = 64) through the fused kernel, causal and not, beside the
// composite it replaces (matmul -> softmax -> matmul, the [8, 1024, 1024]
// scores materialized), and the decode path (one query row against 1024
// keys, 8 heads) beside the same composite. Prints one JSON line per
// workload: name, build, threads, ms, GFLOP/s (4 L S d per head: the two
// products).
import { libraryArgs, medianTimes } from './peer_util.mjs';

const cli = libraryArgs();
const lib = cli.lib ?? 'weft-simd-threads';
const { init } = await import('weft');
const wt = await init({ variant: lib.replace(/^weft-/, '') });
if (lib === 'weft-simd-threads') wt.setNumThreads(cli.threads);
const threads = wt.getNumThreads();
if (threads !== cli.threads) {
  console.error(`attention_bench ${lib}: ${cli.threads} threads asked, it runs ${threads}; skipped`);
  process.exit(0);
}

const H = 8, L = 1024, D = 64;
const q = wt.randn([1, H, L, D]), k = wt.randn([1, H, L, D]), v = wt.randn([1, H, L, D]);
const q1 = q.narrow(2, L - 1, 1);
const kt = k.transpose(-2, -1);
const scale = 1 / Math.sqrt(D);
const composite = (x) => {
  const s = wt.matmul(x, kt);
  s.mul_(scale);
  const p = s.softmax(-1);
  const o = wt.matmul(p, v);
  for (const t of [s, p, o]) t.dispose();
};
const WORK = {
  sdpa_fused_1024x1024_d64: [() => wt.scaledDotProductAttention(q, k, v).dispose(), L],
  sdpa_fused_causal_1024x1024_d64: [() => wt.scaledDotProductAttention(q, k, v, { isCausal: true }).dispose(), L / 2],
  sdpa_composite_1024x1024_d64: [() => composite(q), L],
  sdpa_decode_1x1024_d64: [() => wt.scaledDotProductAttention(q1, k, v).dispose(), 1],
  sdpa_decode_composite_1x1024_d64: [() => composite(q1), 1],
};
const ms = await medianTimes(Object.fromEntries(Object.entries(WORK).map(([n, [f]]) => [n, f])), cli.reps, cli.idleMs);
for (const [name, [, rows]] of Object.entries(WORK)) {
  const t = ms[name];
  console.log(JSON.stringify({ name, build: `wasm-${lib.slice(5)}`, threads, ms: +t.toFixed(3),
    'GFLOP/s': +((4 * H * rows * L * D) / t / 1e6).toFixed(2) }));
}
process.exit(0);
