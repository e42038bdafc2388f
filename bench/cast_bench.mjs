// Half-float casts (issue 26), one library per process:
//   node bench/cast_bench.mjs <weft-simd|weft-simd-threads> [--threads N] [--reps N] [--clock wall|cpu]
// 4,194,304 elements copied with copy_ into a preallocated tensor, as
// bench/workloads.c's cast_f32_f16 and PyTorch's y.copy_(x) in
// bench/torch_cast_bench.py: float32 -> float16 / bfloat16 and back.
// Warm-up, an idle wait, the median of --reps runs; one JSON line per
// workload: name, build, threads, ms, GB/s (bytes read + written / time).
import { benchArgs, benchMain } from './peer_util.mjs';

const a = benchArgs();
const N = 4194304;
const data = new Float32Array(N).map((_, i) => (i % 997) * 0.125);

async function weft(variant) {
  const { init } = await import('weft');
  const wt = await init({ variant });
  await wt.threadsReady(); // the pthread workers load after init()
  if (variant === 'simd-threads') wt.setNumThreads(a.threads);
  a.threads = wt.getNumThreads();
  const f = wt.tensor(data), g = wt.empty([N]);
  const h = wt.empty([N], { dtype: 'float16' }), b = wt.empty([N], { dtype: 'bfloat16' });
  h.copy_(f);
  b.copy_(f);
  return {
    f32_to_f16: () => h.copy_(f),
    f16_to_f32: () => g.copy_(h),
    f32_to_bf16: () => b.copy_(f),
    bf16_to_f32: () => g.copy_(b),
  };
}

await benchMain('cast_bench.mjs', { 'weft-simd': () => weft('simd'), 'weft-simd-threads': () => weft('simd-threads') },
  a, (n, ms) => ({ 'GB/s': +((6 * N) / (ms * 1e6)).toFixed(2) }));
