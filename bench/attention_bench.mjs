// Fused attention (issue 24), weft wasm only, one variant per process:
//   node bench/attention_bench.mjs [weft-simd-threads|weft-simd] [--threads N] [--reps N] [--clock wall|cpu]
// Forward scaled_dot_product_attention of float32 q, k, v [1, 8, 1024, 64]
// (L = S = 1024, d = 64) through the fused kernel, causal and not, beside the
// composite it replaces (matmul -> softmax -> matmul, the [8, 1024, 1024]
// scores materialized; causal: + a -inf mask above the diagonal), and the decode path (1 or 4 query rows
// against 1024 or 4096 keys, 8 heads) beside the same composite. --breakdown adds the
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
const kt = k.transpose(-2, -1);
const scale = 1 / Math.sqrt(D);
const causal = wt.full([L, L], -Infinity).triu(1);
const composite = (x, mask, keysT = kt, values = v) => {
  const s = wt.matmul(x, keysT);
  s.mul_(scale);
  if (mask) s.add_(mask);
  const p = s.softmax(-1);
  const o = wt.matmul(p, values);
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
  ...(argv.includes('--breakdown') ? BREAKDOWN : {}),
};
// The decode rows (a few query rows against S keys, 8 heads) are timed one
// call at a time with the caches flushed before each (64 MB written, not
// timed), as a generation step finds its layer's K and V after the weights
// streamed by. Timed in one round with the rows above, whichever of a pair
// ran second found K and V warm from the first: the decode row read 0.73x
// its composite that way, 2.1x with the two swapped.
const flush = wt.zeros([16 << 20]);
async function coldTimes(work, reps) {
  const t = Object.fromEntries(Object.keys(work).map((n) => [n, []]));
  const now = clock === 'cpu' ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
    : () => performance.now();
  for (let r = 0; r < reps + 3; r++) {
    for (const [n, [f]] of Object.entries(work)) {
      flush.add_(1);
      const t0 = now();
      f();
      if (r >= 3) t[n].push(now() - t0); /* 3 warm-up rounds */
    }
  }
  return Object.fromEntries(Object.entries(t).map(([n, a]) => [n, a.sort((x, y) => x - y)[a.length >> 1]]));
}
const k4 = wt.randn([1, H, 4 * L, D]), v4 = wt.randn([1, H, 4 * L, D]), k4t = k4.transpose(-2, -1);
const DECODE = {};
for (const [rows, keys, kk, vv, kkt] of [[1, L, k, v, kt], [1, 4 * L, k4, v4, k4t], [4, L, k, v, kt]]) {
  const x = q.narrow(2, L - rows, rows);
  DECODE[`sdpa_decode_${rows}x${keys}_d64`] = [() => wt.scaledDotProductAttention(x, kk, vv).dispose(), rows, keys];
  DECODE[`sdpa_decode_composite_${rows}x${keys}_d64`] = [() => composite(x, null, kkt, vv), rows, keys];
}
const timed = async (work) => medianTimes(Object.fromEntries(Object.entries(work).map(([n, [f]]) => [n, f])),
  cli.reps, cli.idleMs, clock);
const ms = { ...(await timed(WORK)), ...(await coldTimes(DECODE, 4 * cli.reps)) };
for (const [name, [, rows, keys = L]] of Object.entries({ ...WORK, ...DECODE })) {
  const t = ms[name];
  console.log(JSON.stringify({ name, build: `wasm-${lib.slice(5)}`, threads, ms: +t.toFixed(3),
    'GFLOP/s': +((4 * H * rows * keys * D) / t / 1e6).toFixed(2) }));
}
process.exit(0);
