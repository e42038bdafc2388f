// Fused attention (issue 24), weft wasm only, one variant per process:
//   node bench/attention_bench.mjs [weft-simd-threads|weft-simd] [--threads N] [--reps N] [--clock wall|cpu]
// Forward scaled_dot_product_attention of float32 q, k, v [1, 8, 1024, 64]
// (L = S = 1024, d = 64) through the fused kernel, causal and not, beside the
// composite it replaces (matmul -> softmax -> matmul, the [8, 1024, 1024]
// scores materialized; causal: + a -inf mask above the diagonal), and the decode path (one query row against 1024
// keys, 8 heads) beside the same composite. --breakdown adds the
// composite's parts timed alone (its two matmuls, its scale + softmax over
// the materialized scores): the fused kernel does the same two products, so
// composite / (its matmuls) bounds what fusing can win at equal GEMM speed.
// Prints one JSON line per
// workload: name, build, threads, ms, GFLOP/s (4 L S d per head: the two
// products).
import { libraryArgs, medianTimes } from './peer_util.mjs';

const cli = libraryArgs();
const argv = process.argv.slice(2);
const clock = argv.includes('--clock') ? argv[argv.indexOf('--clock') + 1] : 'wall';
const lib = cli.lib ?? 'weft-simd-threads';
const { init } = await import('weft');
const wt = await init({ variant: lib.replace(/^weft-/, '') });
await wt.threadsReady(); // the pthread workers load after init()
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
const causal = wt.full([L, L], -Infinity).triu(1);
const composite = (x, mask) => {
  const s = wt.matmul(x, kt);
  s.mul_(scale);
  if (mask) s.add_(mask);
  const p = s.softmax(-1);
  const o = wt.matmul(p, v);
  for (const t of [s, p, o]) t.dispose();
};
const s0 = wt.matmul(q, kt), p0 = s0.softmax(-1);
const BREAKDOWN = {
  sdpa_part_qk_matmul: [() => wt.matmul(q, kt).dispose(), L / 2],
  sdpa_part_scale_softmax: [() => { const s = s0.mul(scale), p = s.softmax(-1); s.dispose(); p.dispose(); }, 0],
  sdpa_part_pv_matmul: [() => wt.matmul(p0, v).dispose(), L / 2],
};
const WORK = {
  sdpa_fused_1024x1024_d64: [() => wt.scaledDotProductAttention(q, k, v).dispose(), L],
  sdpa_fused_causal_1024x1024_d64: [() => wt.scaledDotProductAttention(q, k, v, { isCausal: true }).dispose(), L / 2],
  sdpa_composite_1024x1024_d64: [() => composite(q), L],
  sdpa_composite_causal_1024x1024_d64: [() => composite(q, causal), L / 2],
  sdpa_decode_1x1024_d64: [() => wt.scaledDotProductAttention(q1, k, v).dispose(), 1],
  sdpa_decode_composite_1x1024_d64: [() => composite(q1), 1],
  ...(argv.includes('--breakdown') ? BREAKDOWN : {}),
};
const ms = await medianTimes(Object.fromEntries(Object.entries(WORK).map(([n, [f]]) => [n, f])), cli.reps, cli.idleMs, clock);
for (const [name, [, rows]] of Object.entries(WORK)) {
  const t = ms[name];
  console.log(JSON.stringify({ name, build: `wasm-${lib.slice(5)}`, threads, ms: +t.toFixed(3),
    'GFLOP/s': +((4 * H * rows * L * D) / t / 1e6).toFixed(2) }));
}
process.exit(0);
